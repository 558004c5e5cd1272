"""Records CSV in the benchmark's columns (ID, ENTRYTYPE, author, title, year, journal, volume,
number, pages, doi, abstract; any but ID may be missing; "issue" and "booktitle" are read as
"number" and "journal"), or any CSV with a column mapping: `columns` names, for an entry field, the
column it is read from ({"title": "Article Title", "ID": "key"}); other columns are read under their
own names. With a mapping and no ID column, rows are named "csv-N" by their position N.

sitegen's own records CSV (the site's download and `sitegen export --format csv`) is known by its
header and read without a mapping: its "id" is the ID, its "authors" ("Family, Given; Family2,
Given2") the author list, and a cell's leading "'" that keeps a spreadsheet from reading a formula
is dropped again.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Iterator

from sitegen.records.entry import ALIASES, Entry
from sitegen.references.fields import RAYYAN_INCLUSION, author_list
from sitegen.references.problems import UNRECOGNISED, ReferenceProblem, Skipped, checked

csv.field_size_limit(sys.maxsize)

SITEGEN_COLUMNS = ["id", "title", "authors", "year", "journal", "volume", "issue", "pages", "doi", "pmid", "pmcid",
                   "openalex", "arxiv", "url", "retracted", "title_abstract", "full_text", "abstract", "citation_key"]
SITEGEN_MAPPING = {"ID": "id", "author": "authors"}
# What sitegen's CSV writer puts before a line of a cell that a spreadsheet would run as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "|", "%")
LINE_BREAK = "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # every character str.splitlines breaks on
_FORMULA_GUARD = re.compile(f"(?:^|(?<=[{LINE_BREAK}]))'(?=[{re.escape(''.join(FORMULA_STARTS))}])")


def read_csv(text: str, warnings: list[str] | None = None, skipped: Skipped | None = None,
             columns: dict[str, str] | None = None) -> list[Entry]:
    """The rows of a records CSV; ReferenceProblem names the line of the first malformed one (1 is the
    header; with `skipped`, each malformed row is listed there instead). `warnings` is unused: IDs
    are the ID column's, and a repeated one is a problem."""
    return checked(_rows(text, columns or {}), skipped)


def _rows(text: str, columns: dict[str, str]) -> Iterator[Entry | ReferenceProblem]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise ReferenceProblem(1, "the file is empty; it needs a header row with an ID column") from None
    except csv.Error as error:
        raise _syntax_problem(text, 1, reader.line_num, error) from None
    written = [name.strip().lstrip("\ufeff") for name in header]
    sitegens = not columns and written == SITEGEN_COLUMNS
    columns = SITEGEN_MAPPING if sitegens else columns
    if missing := [column for column in columns.values() if column not in written]:
        raise ReferenceProblem(1, f"no column {missing[0]!r} (columns: {', '.join(written)})")
    field_of = {column: name for name, column in columns.items()}
    names = [field_of.get(name) or (f"column {name}" if name in columns else name) for name in written]
    if "ID" not in names and not columns:
        if len(names) < 2:  # one column and no ID: a MEDLINE (.nbib) or other text file, not a table
            raise ReferenceProblem(1, UNRECOGNISED)
        raise ReferenceProblem(1, f"no ID column (columns: {', '.join(names)})")
    if len(set(written)) != len(written):
        raise ReferenceProblem(1, f"column {next(n for n in written if written.count(n) > 1)!r} appears twice")
    position = 0
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
        position += 1
        if len(values) != len(names):
            yield ReferenceProblem(line, f"{len(values)} fields where the header has {len(names)}")
            continue
        fields: dict[str, str] = {}
        if sitegens:
            values = [_FORMULA_GUARD.sub("", value) for value in values]
            values[written.index("authors")] = author_list(values[written.index("authors")].split(";"))
        for name, value in zip(names, values, strict=True):
            fields[ALIASES.get(name, name)] = fields.get(ALIASES.get(name, name)) or value
        fields["ID"] = fields["ID"].strip() if "ID" in fields else f"csv-{position}"
        if not fields.get("label") and (found := RAYYAN_INCLUSION.search(fields.get("note", ""))):
            fields["label"] = found.group(1)
        yield Entry(fields["ID"], fields, line)


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
