"""`sitegen init`: a new review folder that passes `check` and builds."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import yaml
from pydantic import ValidationError

from sitegen.errors import OptionInvalid, OutputRefused, shown_path, symbolic_link
from sitegen.review.models import REVIEW_SCHEMA_VERSION, ReviewConfig
from sitegen.review.write import interrupts_held, keep_folder_identity, named_as, written

PROTOCOL = """\
---
# Front matter: sitegen reads these fields. Lock the protocol on the ledger
# (`sitegen protocol lock`) once it says what the review is, before searching
# or importing; change it afterwards only by amendment (`sitegen protocol amend`).
version: 1
eligibility:
  in_scope:
    - Describe the population, intervention or exposure the review is about
  out_of_scope:
    - Describe look-alike topics that should be excluded
  required_minimums:
    - Primary research reporting empirical results
exclusion_reasons:
  - code: wrong-population
    label: Population not in scope
  - code: wrong-design
    label: Not primary research
watchlist:
  - term: replace with a keyword
    weight: 1.0
# The words the screening order and the weekly digest look for in titles and
# abstracts (the eligibility prose above is for people), for example:
# relevance:
#   in_scope_terms: [object-in-context, rodent]
#   out_of_scope_terms: [odour]
---

# Protocol

Write the protocol here in Markdown: background, objectives, the search
strategy for each database, screening and extraction methods.
"""

# The text `init` writes for the reviewer to replace, by file: `protocol lock` names each one still there, by line,
# since the protocol it locks changes afterwards only by amendment (test_protocol_placeholders keeps these in step
# with the template above and review_yaml below).
PLACEHOLDERS = {
    "review.yaml": ("State the review question here.", "Your Name"),
    "protocol.md": ("Describe the population, intervention or exposure the review is about",
                    "Describe look-alike topics that should be excluded", "replace with a keyword",
                    "Write the protocol here in Markdown"),
}


def placeholders_left(root: Path) -> list[tuple[str, int, str]]:
    """(file, line, placeholder) for each of init's placeholders still in the review's files, in file and line order."""
    found = []
    for name, placeholders in PLACEHOLDERS.items():
        try:
            text = (root / name).read_text(encoding="utf-8-sig", errors="replace")
        except OSError:
            continue  # a file that cannot be read is `check`'s to report, not this reminder's
        for number, line in enumerate(text.splitlines(), start=1):
            found += [(name, number, placeholder) for placeholder in placeholders if placeholder in line]
    return found


FOLDERS = ["searches", "snapshots", "screening/title-abstract", "screening/full-text", "evidence"]


def review_yaml(title: str) -> str:
    config = {
        "schema_version": REVIEW_SCHEMA_VERSION,
        "title": title,
        "question": "State the review question here.",
        "authors": [{"name": "Your Name"}],
        "licence": "CC-BY-4.0",
        "sources": ["openalex", "europepmc", "pubmed"],
        "site": {"base_url": None, "theme": {"accent_color": "#1f5f8b"}},
    }
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# The entries `init` writes at the top of the folder; review.yaml is moved into an existing folder last.
ENTRIES = ("review.yaml", "protocol.md", "records.jsonl", "ledger.jsonl", "searches", "snapshots", "screening",
           "evidence")
STAGING = ".sitegen-init-"  # where `init` writes the files it then moves into an existing empty folder


def init_review(directory: Path, title: str) -> list[str]:
    """Create the folder's files; refuse to touch a folder that already has content."""
    text = review_yaml(title)
    try:
        ReviewConfig.model_validate(yaml.safe_load(text))
    except ValidationError as exc:  # only the title is not sitegen's own
        reason = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
        raise OptionInvalid("--title", f"{reason} (nothing was written)") from None
    if directory.is_symlink():  # as `build --out` refuses one: the files would be written where it leads
        raise OutputRefused(f"refusing to initialise {shown_path(directory)}: it is {symbolic_link(directory)} (nothing was "
                            "written); give the real folder")
    if directory.exists() and (not directory.is_dir() or _has_content(directory)):
        # A folder sitegen will not write into, as `build` will not replace an --out folder it did not build: exit 1, not
        # a usage error (no option makes it write there; a file that is there is replaced with --force, exit 2)
        raise OutputRefused(f"refusing to initialise {shown_path(directory)}: it exists and is not empty (nothing was "
                            "written); give a new or empty folder")
    if directory.is_dir():
        _fill(directory, text)
    else:
        _create(directory, text)
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def _write(folder: Path, text: str) -> None:
    (folder / "review.yaml").write_text(text, encoding="utf-8")
    (folder / "protocol.md").write_text(PROTOCOL, encoding="utf-8")
    (folder / "records.jsonl").write_text("", encoding="utf-8")
    (folder / "ledger.jsonl").write_text("", encoding="utf-8")
    for name in FOLDERS:
        (folder / name).mkdir(parents=True)
        (folder / name / ".gitkeep").write_text("", encoding="utf-8")


def _create(directory: Path, text: str) -> None:
    """A new folder, written beside it and renamed into place whole."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{directory.name}.init-"
    for leftover in directory.parent.glob(f"{prefix}*"):  # what a killed `init` of this folder left behind
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover)
    with named_as(directory):
        staging = Path(tempfile.mkdtemp(prefix=prefix, dir=directory.parent))
    try:
        _write(staging, text)
        # mkdtemp makes a private folder: give it what mkdir would have.
        staging.chmod(0o777 & ~_umask())
        keep_folder_identity(directory, staging)
        with interrupts_held():  # Ctrl-C between the rename and its note would say nothing was written
            os.replace(staging, directory)
            written.append(directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _fill(directory: Path, text: str) -> None:
    """An existing empty folder, filled where it is: it cannot be replaced by a rename when it is the working
    folder (`sitegen init .`), a mount point (a container's volume) or in a folder the user may not write. The
    files are written in a folder inside it, then moved out, review.yaml last: a folder an `init` was killed
    in has no review.yaml, and the next `init` clears what it left (`_has_content`)."""
    _clear_leftover(directory)
    staging = Path(tempfile.mkdtemp(prefix=STAGING, dir=directory))
    moved: list[Path] = []
    try:
        _write(staging, text)
        for name in sorted(ENTRIES, key=lambda name: name == "review.yaml"):
            with interrupts_held():  # a file moved in is known as moved, so that Ctrl-C takes it out again
                os.replace(staging / name, directory / name)
                moved.append(directory / name)
        staging.rmdir()
        written.append(directory)
    except BaseException:
        for path in [*moved, staging]:
            _remove(path)
        raise


def _leftover(directory: Path) -> list[Path]:
    """What an `init` killed while filling `directory` left: its staging folder and the entries it had moved out
    of it (never review.yaml, moved last); empty when the folder holds anything else."""
    entries = list(directory.iterdir())
    if not any(entry.name.startswith(STAGING) for entry in entries):
        return []
    if all(entry.name.startswith(STAGING) or entry.name in ENTRIES and entry.name != "review.yaml"
           for entry in entries):
        return entries
    return []


def _has_content(directory: Path) -> bool:
    return any(directory.iterdir()) and not _leftover(directory)


def _clear_leftover(directory: Path) -> None:
    for path in _leftover(directory):
        _remove(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
