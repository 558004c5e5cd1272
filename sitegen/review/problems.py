"""Problems found in a review folder, and the three ways `sitegen check` prints them."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one file, at a 1-based line and column where known."""

    path: str  # relative to the review folder, with forward slashes
    line: int | None
    column: int | None
    code: str  # short stable identifier, e.g. "yaml-syntax", "unknown-record"
    message: str

    def where(self, root: str = "") -> str:
        shown = str(PurePosixPath(root) / self.path) if root else self.path
        if self.line is not None:
            shown += f":{self.line}"
            if self.column is not None:
                shown += f":{self.column}"
        return shown


def format_human(problems: list[Problem], root: str) -> str:
    lines = [f"{p.where(root)}: error: {p.message} [{p.code}]" for p in problems]
    noun = "problem" if len(problems) == 1 else "problems"
    lines.append(f"{len(problems)} {noun} found" if problems else "no problems found")
    return "\n".join(lines)


def _github_escape(text: str, *, prop: bool) -> str:
    # GitHub's workflow-command escaping: %, CR and LF always; ':' and ',' in properties.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def format_github(problems: list[Problem], root: str) -> str:
    out = []
    for p in problems:
        props = [f"file={_github_escape(str(PurePosixPath(root) / p.path), prop=True)}"]
        if p.line is not None:
            props.append(f"line={p.line}")
            if p.column is not None:
                props.append(f"col={p.column}")
        props.append(f"title={_github_escape('sitegen ' + p.code, prop=True)}")
        out.append(f"::error {','.join(props)}::{_github_escape(p.message, prop=False)}")
    return "\n".join(out)


def format_json(problems: list[Problem], root: str) -> str:
    items = [{**asdict(p), "path": str(PurePosixPath(root) / p.path)} for p in problems]
    return json.dumps({"ok": not problems, "problems": items}, indent=2, ensure_ascii=False)


FORMATTERS = {"human": format_human, "github": format_github, "json": format_json}
