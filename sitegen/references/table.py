"""Records CSV in the benchmark's columns (ID, ENTRYTYPE, author, title, year, journal, volume,
number, pages, doi, abstract; any but ID may be missing; "issue" and "booktitle" are read as
"number" and "journal")."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterator

from sitegen.records.entry import ALIASES, Entry
from sitegen.references.problems import UNRECOGNISED, ReferenceProblem, checked

csv.field_size_limit(sys.maxsize)


def read_csv(text: str) -> list[Entry]:
    """The rows of a records CSV; ReferenceProblem names the line of the first malformed one (1 is the header)."""
    return list(checked(_rows(text)))


def _rows(text: str) -> Iterator[Entry]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise ReferenceProblem(1, "the file is empty; it needs a header row with an ID column") from None
    except csv.Error as error:
        raise _syntax_problem(text, 1, reader.line_num, error) from None
    names = [name.strip().lstrip("\ufeff") for name in header]
    if "ID" not in names:
        if len(names) < 2:  # one column and no ID: a MEDLINE (.nbib) or other text file, not a table
            raise ReferenceProblem(1, UNRECOGNISED)
        raise ReferenceProblem(1, f"no ID column (columns: {', '.join(names)})")
    if len(set(names)) != len(names):
        raise ReferenceProblem(1, f"column {next(n for n in names if names.count(n) > 1)!r} appears twice")
    while True:
        # A quoted field can hold line breaks: a row's problems are reported on its first line.
        line = reader.line_num + 1
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise _syntax_problem(text, line, reader.line_num, error) from None
        if not any(value.strip() for value in values):
            continue
        if len(values) != len(names):
            raise ReferenceProblem(line, f"{len(values)} fields where the header has {len(names)}")
        fields: dict[str, str] = {}
        for name, value in zip(names, values, strict=True):
            fields[ALIASES.get(name, name)] = fields.get(ALIASES.get(name, name)) or value
        yield Entry(fields["ID"].strip(), fields, line)


def _syntax_problem(text: str, start: int, at: int, error: csv.Error) -> ReferenceProblem:
    """The problem of a row starting on line `start` that the csv module refused on line `at`: a quote
    that never closes is reported where it opens (the module only notices at the end of the file)."""
    lines = io.StringIO(text, newline="").readlines()[start - 1:]
    opened = None
    for number, content in enumerate(lines, start=start):
        for char in content:
            if char == '"':  # an escaped quote ("") closes and reopens: the state stays right
                opened = None if opened else number
    if opened:
        return ReferenceProblem(opened, "not valid CSV: a quoted field opens on this line and is never closed "
                                       "(a closing '\"' is missing)")
    where = "" if at == start else f" on line {at}"
    return ReferenceProblem(start, f"not valid CSV ({error}){where}")
