"""Deduplicating a search export: records CSV in, duplicate sets and probable pairs out.

The CSV has the benchmark's columns (ID, ENTRYTYPE, author, title, year, journal,
volume, number, pages, doi, abstract; any but ID may be missing; "issue" and
"booktitle" are read as "number" and "journal"). Authors are BibTeX-style:
"Family, Given and Family2, Given2". RIS and BibTeX input are not read yet.

Rows with a DOI become sitegen Records for the identity graph (a record's id must
be one of its identifiers, so rows without one cannot be Records); every row then
goes to the metadata matcher (`sitegen.records.matching`).
"""

from __future__ import annotations

import csv
import io
import re
import sys
from dataclasses import dataclass

from sitegen.records.identity import deduplicate
from sitegen.records.ids import normalise_doi
from sitegen.records.matching import Matches, Work, find_duplicates, work
from sitegen.records.model import Record

csv.field_size_limit(sys.maxsize)

MISSING = {"", "na", "n/a", "nd", "n.d.", "no pagination specified"}
ALIASES = {"issue": "number", "booktitle": "journal"}


class CsvProblem(ValueError):
    """Malformed input, with the line it is on (1 is the header)."""

    def __init__(self, line: int, message: str):
        self.line = line
        super().__init__(f"line {line}: {message}")


@dataclass(frozen=True)
class Row:
    id: str
    fields: dict[str, str]
    line: int

    def get(self, name: str) -> str:
        value = self.fields.get(name, "").strip()
        return "" if value.lower() in MISSING else value


def read_rows(text: str) -> list[Row]:
    """The rows of a records CSV; CsvProblem names the line of the first malformed one."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise CsvProblem(1, "the file is empty; it needs a header row with an ID column") from None
    except csv.Error as error:
        raise CsvProblem(1, f"not valid CSV ({error})") from None
    names = [name.strip().lstrip("\ufeff") for name in header]
    if "ID" not in names:
        raise CsvProblem(1, f"no ID column (columns: {', '.join(names) or 'none'})")
    if len(set(names)) != len(names):
        raise CsvProblem(1, f"column {next(n for n in names if names.count(n) > 1)!r} appears twice")
    rows: list[Row] = []
    seen: dict[str, int] = {}
    while True:
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise CsvProblem(reader.line_num, f"not valid CSV ({error})") from None
        line = reader.line_num
        if not any(value.strip() for value in values):
            continue
        if len(values) != len(names):
            raise CsvProblem(line, f"{len(values)} fields where the header has {len(names)}")
        fields = {}
        for name, value in zip(names, values, strict=True):
            fields[ALIASES.get(name, name)] = fields.get(ALIASES.get(name, name)) or value
        key = fields["ID"].strip()
        if not key:
            raise CsvProblem(line, "the ID is empty")
        if key in seen:
            raise CsvProblem(line, f"ID {key!r} was already used on line {seen[key]}")
        seen[key] = line
        row = Row(key, fields, line)
        year = row.get("year")
        if year and not re.fullmatch(r"\d{4}", year):
            raise CsvProblem(line, f"year {year!r} is not a four-digit year")
        rows.append(row)
    return rows


def to_work(row: Row) -> Work:
    authors = [name for name in re.split(r"\s+and\s+", row.get("author")) if name.strip()]
    year = row.get("year")
    return work(row.id, row.get("title"), authors, int(year) if year else None, row.get("journal"),
                row.get("volume"), row.get("number"), row.get("pages"), normalise_doi(row.get("doi")) or None,
                row.get("abstract"))


def identity_sets(rows: list[Row]) -> list[list[str]]:
    """Sets of row IDs the identity graph joins (rows sharing a DOI, unless their titles are unrelated)."""
    with_doi = [(row.id, doi, row.get("title")) for row in rows if (doi := normalise_doi(row.get("doi")))]
    records = [Record(id=doi, DOI=doi, title=title or "untitled") for _, doi, title in with_doi]
    return [sorted(with_doi[i][0] for i in members) for members in deduplicate(records).members.values()
            if len(members) > 1]


def dedupe_rows(rows: list[Row]) -> Matches:
    return find_duplicates([to_work(row) for row in rows], identity_sets(rows))
