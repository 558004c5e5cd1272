"""The one error every reference reader raises, and the checks all formats share.

A reader turns each record of its file into an `Entry` or, when that record is malformed, a
`ReferenceProblem`, and hands them to `checked`: it raises the first problem or, when the caller
passed a `skipped` list (`sitegen import --skip-bad`), lists every bad record there with its line
and returns the good ones. A file whose structure is broken beyond one record (a BibTeX block that
does not parse is one record; a CSV quote that never closes is not) raises in either mode.

The line-based formats (RIS, MEDLINE, Web of Science) read a file's lines as they come (`lines_of`): a reader
keeps what each record makes, never the file's text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from sitegen.records.entry import MISSING, Entry
from sitegen.records.model import FOUR_DIGITS

FORMATS_READ = ("a records CSV with an ID column, RIS, EndNote XML, BibTeX, MEDLINE, Web of Science plain text or "
                "CSL-JSON")
UNRECOGNISED = f"unrecognised format (expected {FORMATS_READ})"

Skipped = list[tuple[int, str]]  # (line, why) of each record left out
Record = TypeVar("Record")
# Fields that say which work an entry is; an entry with none of them (only a type, a language or a
# database name) cannot be matched, kept or shown.
CONTENT = ("title", "author", "abstract", "journal", "doi", "pmid", "pmcid", "arxiv", "openalex", "url")


class ReferenceProblem(ValueError):
    """Malformed input, with the line it is on (1 is the first line of the file)."""

    def __init__(self, line: int, message: str):
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


# A year as reference files write one is FOUR_DIGITS, not part of a longer number ("Spring 2020", "2019-2020",
# "2020/03/01", "c2019", "2020a", "2019May" hold one; "20x1" does not), as RIS and MEDLINE always read it.
# Words for "no year yet" beyond those every field knows (records.entry.MISSING): Latin "sine dato" and variants.
_NO_YEAR = {"n.d", "s.d.", "s.d", "in-press", "inpress", "not yet published", "accepted", "submitted"}


def lines_of(text: str | Iterable[str]) -> Iterator[str]:
    """The lines of a text, given whole or in pieces (as a file is decoded), with CRLF and CR read as LF: the
    lines of `text.split("\\n")` once its line ends are LF, the last one "" when the text ends with one."""
    pieces = iter([text] if isinstance(text, str) else text)
    line: list[str] = []  # the pieces of the line not yet ended
    for piece in pieces:
        if "\n" not in piece and "\r" not in piece:
            line.append(piece)
            continue
        joined = "".join(line) + piece
        ends = len(joined) - joined.endswith("\r")  # a CR last may be the first half of a CRLF
        *ended, rest = joined[:ends].replace("\r\n", "\n").replace("\r", "\n").split("\n")
        yield from ended
        line = [rest, joined[ends:]]
    yield from "".join(line).replace("\r\n", "\n").replace("\r", "\n").split("\n")


def written_year(value: str, line: int, field: str = "year") -> str:
    """The year a date field holds, by one rule for every format: its first four-digit year, or "" when the
    field is empty or a word for "not yet" ("in press", "forthcoming", "n.d.": common in real exports, and no
    reason to refuse a file); ReferenceProblem on `line` otherwise."""
    text = value.strip()
    if {text.lower(), text.lower().rstrip(".")} & (MISSING | _NO_YEAR):
        return ""
    found = FOUR_DIGITS.search(text)
    if found is None:
        raise ReferenceProblem(line, f"{field} {text!r} holds no four-digit year")
    return found.group()


def each(build: Callable[[Record], Entry], records: Iterable[Record | ReferenceProblem]) -> Iterator[Entry | ReferenceProblem]:
    """`build` of each record, or the problem it raised (a problem among the records passes through)."""
    for record in records:
        if isinstance(record, ReferenceProblem):
            yield record
            continue
        try:
            yield build(record)
        except ReferenceProblem as problem:
            yield problem


def named(items: list[Entry | ReferenceProblem], given: list[tuple[str, int]], prefix: str,
          warnings: list[str] | None) -> list[Entry | ReferenceProblem]:
    """The entries with the IDs their file gives (`given`: the ID and its line, per item, "" for
    none), an entry without one named "{prefix}-N" by its position N in the file. When given IDs
    repeat, as in exports joined one after another (each numbering its records from 1), every entry
    is named by position instead, and a warning naming the first repeat says so: mixing given IDs
    with positions could collide."""
    seen: dict[str, int] = {}
    repeat = None
    for item, (value, line) in zip(items, given, strict=True):
        if isinstance(item, Entry) and value:
            if value in seen:
                repeat = f"ID {value!r} on line {line} was already used on line {seen[value]}"
                break
            seen[value] = line
    if repeat and warnings is not None:
        warnings.append(f"{repeat}; every record is named by its position instead ({prefix}-1 to "
                        f"{prefix}-{len(items)})")
    return [_renamed(item, "" if repeat else value, f"{prefix}-{position}")
            for position, (item, (value, _)) in enumerate(zip(items, given, strict=True), start=1)]


def _renamed(item: Entry | ReferenceProblem, value: str, by_position: str) -> Entry | ReferenceProblem:
    if isinstance(item, ReferenceProblem):
        return item
    name = value or by_position
    return dataclasses.replace(item, id=name, fields={**item.fields, "ID": name})


def checked(items: Iterable[Entry | ReferenceProblem], skipped: Skipped | None = None) -> list[Entry]:
    """The entries, in order. The first problem (one among the items, or an entry with an empty or
    already used ID, a year that is not four digits or no field at all) raises ReferenceProblem on
    its line; with `skipped`, each is appended there as (line, why) and its entry left out."""
    seen: dict[str, int] = {}
    entries = []
    for item in items:
        problem = item if isinstance(item, ReferenceProblem) else _problem(item, seen)
        if problem is None:
            seen[item.id] = item.line
            entries.append(item)
        elif skipped is None:
            raise problem
        else:
            skipped.append((problem.line, problem.message))
    return entries


def _problem(entry: Entry, seen: dict[str, int]) -> ReferenceProblem | None:
    if not entry.id:
        return ReferenceProblem(entry.line, "the ID is empty")
    if entry.id in seen:
        return ReferenceProblem(entry.line, f"ID {entry.id!r} was already used on line {seen[entry.id]}")
    if not any(entry.get(name) for name in CONTENT):
        return ReferenceProblem(entry.line, f"entry {entry.id!r} has no field: no title, author, abstract, journal, "
                                            f"identifier or URL")
    try:
        written_year(entry.get("year"), entry.line)
    except ReferenceProblem as problem:
        return problem
    return None
