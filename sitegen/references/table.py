"""Records CSV in the benchmark's columns (ID, ENTRYTYPE, author, title, year, journal, volume,
number, pages, doi, abstract; any but ID may be missing; "issue" and "booktitle" are read as
"number" and "journal")."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterator

from sitegen.records.entry import ALIASES, Entry
from sitegen.references.problems import ReferenceProblem, checked

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
        raise ReferenceProblem(1, f"not valid CSV ({error})") from None
    names = [name.strip().lstrip("\ufeff") for name in header]
    if "ID" not in names:
        raise ReferenceProblem(1, f"no ID column (columns: {', '.join(names) or 'none'})")
    if len(set(names)) != len(names):
        raise ReferenceProblem(1, f"column {next(n for n in names if names.count(n) > 1)!r} appears twice")
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise ReferenceProblem(reader.line_num, f"not valid CSV ({error})") from None
        line = reader.line_num
        if not any(value.strip() for value in values):
            continue
        if len(values) != len(names):
            raise ReferenceProblem(line, f"{len(values)} fields where the header has {len(names)}")
        fields: dict[str, str] = {}
        for name, value in zip(names, values, strict=True):
            fields[ALIASES.get(name, name)] = fields.get(ALIASES.get(name, name)) or value
        yield Entry(fields["ID"].strip(), fields, line)
