"""The one error every reference reader raises, and the checks all formats share."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from sitegen.records.entry import MISSING, Entry

UNRECOGNISED = "unrecognised format (expected a records CSV with an ID column, RIS or BibTeX)"


class ReferenceProblem(ValueError):
    """Malformed input, with the line it is on (1 is the first line of the file)."""

    def __init__(self, line: int, message: str):
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


def four_digit_year(value: str, line: int) -> str:
    """`value` if it is a four-digit year (or empty, or a word for "no year"); ReferenceProblem on `line` otherwise."""
    value = "" if value.strip().lower() in MISSING else value.strip()
    if value and not re.fullmatch(r"\d{4}", value):
        raise ReferenceProblem(line, f"year {value!r} is not a four-digit year")
    return value


def checked(entries: Iterable[Entry]) -> Iterator[Entry]:
    """The entries, in order; the first with an empty or already used ID, or a year that is not four
    digits, raises ReferenceProblem on its line."""
    seen: dict[str, int] = {}
    for entry in entries:
        if not entry.id:
            raise ReferenceProblem(entry.line, "the ID is empty")
        if entry.id in seen:
            raise ReferenceProblem(entry.line, f"ID {entry.id!r} was already used on line {seen[entry.id]}")
        seen[entry.id] = entry.line
        four_digit_year(entry.get("year"), entry.line)
        yield entry
