"""Problems found in a review folder, and the three ways `sitegen check` prints them."""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

from sitegen.errors import shown_path
from sitegen.text import counted


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one file, at a 1-based line and column where known."""

    path: str  # relative to the review folder, with forward slashes
    line: int | None
    column: int | None
    code: str  # short stable identifier, e.g. "yaml-syntax", "unknown-record"
    message: str

    def where(self, root: str = "") -> str:
        shown = shown_path(self.full_path(root))
        if self.line is not None:
            shown += f":{self.line}"
            if self.column is not None:
                shown += f":{self.column}"
        return shown

    def full_path(self, root: str = "") -> str:
        return str(PurePosixPath(root) / self.path) if root else self.path


# A message quotes what a file holds: a 10 MB cell quoted whole made a 10 MB line of output (and annotation).
MAX_MESSAGE = 2000


def _shown(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    return f"{message[:MAX_MESSAGE]}… ({len(message) - MAX_MESSAGE:,} more characters not shown)"


def format_human(problems: list[Problem], root: str) -> str:
    lines = [f"{p.where(root)}: error: {_shown(p.message)} [{p.code}]" for p in problems]
    lines.append(_count(problems))
    return "\n".join(lines)


def _count(problems: list[Problem]) -> str:
    return f"{counted(len(problems), 'problem')} found" if problems else "no problems found"


def _github_escape(text: str, *, prop: bool) -> str:
    # GitHub's workflow-command escaping: %, CR and LF always; ':' and ',' in properties.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def repository_path(root: str, rel: str, base: str | None) -> str:
    """Where a file of the review is in its repository, as GitHub places annotations: relative to the checkout
    (`base`, `repository_base(root)`), whichever folder sitegen was run from and however the review folder was
    named (`.`, an absolute path, `reviews/../reviews/x`); else as given."""
    # The folder resolved, not the file: a problem about a symbolic link is about the link, not where it points.
    folder, name = os.path.split(os.path.join(root, rel))
    target = os.path.join(os.path.realpath(folder), name)
    if base and (target + os.sep).startswith(base + os.sep):
        return PurePosixPath(Path(os.path.relpath(target, base))).as_posix()
    return str(PurePosixPath(root) / rel)


def repository_base(root: str) -> str | None:
    """The checkout the review is in, resolved: GITHUB_WORKSPACE, else the folder holding .git above the review."""
    base = os.environ.get("GITHUB_WORKSPACE") or _checkout(os.path.realpath(root))
    return os.path.realpath(base) if base else None


def _checkout(folder: str) -> str | None:
    """The nearest folder at or above `folder` holding .git (a folder, or a worktree's file)."""
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def format_github(problems: list[Problem], root: str) -> str:
    out = []
    base = repository_base(root)  # once: every problem is of one review
    for p in problems:
        # The file as the repository names it, so that GitHub places the annotation on it: its own escaping, not
        # shown_path's quotes, keeps the property one line. A byte that is not UTF-8 cannot be written to the
        # runner's log, which reads UTF-8: it is U+FFFD, as the runner would show it.
        file = _LONE_SURROGATE.sub("\ufffd", repository_path(root, p.path, base))
        props = [f"file={_github_escape(file, prop=True)}"]
        if p.line is not None:
            props.append(f"line={p.line}")
            if p.column is not None:
                props.append(f"col={p.column}")
        props.append(f"title={_github_escape('sitegen ' + p.code, prop=True)}")
        out.append(f"::error {','.join(props)}::{_github_escape(_shown(p.message), prop=False)}")
    # A plain line the log shows as it is: a workflow checking several reviews says which each result is of (a clean
    # one printed an empty line).
    out.append(f"{shown_path(root)}: {_count(problems)}")
    return "\n".join(out)


def format_json(problems: list[Problem], root: str) -> str:
    # The path as it is, for a program to open: JSON escapes what a line could not hold, and a byte that is not UTF-8
    # (a lone surrogate, as Python reads one in a file name) is written as its \u escape, which Python reads back.
    items = [{**asdict(p), "path": p.full_path(root), "message": _shown(p.message)} for p in problems]
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}",
                               json.dumps({"ok": not problems, "problems": items}, indent=2, ensure_ascii=False))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


FORMATTERS = {"human": format_human, "github": format_github, "json": format_json}
