"""`sitegen init`: a new review folder that passes `check` and builds."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import yaml
from pydantic import ValidationError

from sitegen.errors import SitegenError
from sitegen.review.models import REVIEW_SCHEMA_VERSION, ReviewConfig
from sitegen.review.write import keep_folder_identity

PROTOCOL = """\
---
# Front matter: sitegen reads these fields. Once screening starts the protocol
# is locked on the ledger; change it afterwards only by amendment.
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
---

# Protocol

Write the protocol here in Markdown: background, objectives, the search
strategy for each database, screening and extraction methods.
"""

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


def init_review(directory: Path, title: str) -> list[str]:
    """Create the folder's files; refuse to touch a folder that already has content."""
    if directory.is_symlink() or directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise SitegenError(f"refusing to initialise {directory}: it exists and is not empty (nothing was written)")
    text = review_yaml(title)
    try:
        ReviewConfig.model_validate(yaml.safe_load(text))
    except ValidationError as exc:
        reason = exc.errors(include_url=False)[0]["msg"]
        raise SitegenError(f"--title: {reason} (nothing was written)") from None
    directory.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{directory.name}.init-"
    for leftover in directory.parent.glob(f"{prefix}*"):  # what a killed `init` of this folder left behind
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=directory.parent))
    try:
        (staging / "review.yaml").write_text(text, encoding="utf-8")
        (staging / "protocol.md").write_text(PROTOCOL, encoding="utf-8")
        (staging / "records.jsonl").write_text("", encoding="utf-8")
        (staging / "ledger.jsonl").write_text("", encoding="utf-8")
        for folder in FOLDERS:
            (staging / folder).mkdir(parents=True)
            (staging / folder / ".gitkeep").write_text("", encoding="utf-8")
        # mkdtemp makes a private folder: give it what mkdir would have, or what the empty folder had.
        staging.chmod(0o777 & ~_umask())
        keep_folder_identity(directory, staging)
        os.replace(staging, directory)  # an existing empty folder is replaced in one step
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())
