"""Reference files read as entries: records CSV (the benchmark's columns), RIS and BibTeX.

Above `sitegen.records` (entries are `sitegen.records.entry.Entry`) and below everything that
reads a user's reference files (`sitegen dedupe`, and `sitegen import` to come). Every reader
raises the one `ReferenceProblem`, with the line, and IDs are unique within a file.

Text is read as UTF-8 (a byte-order mark is skipped; CRLF and CR line ends are read as LF). A
file in another encoding is reported, with the line of the first byte that is not UTF-8, rather
than guessed at: Latin-1 and Windows-1252 decode any bytes at all, so a wrong guess would put
wrong letters into titles and authors without a word.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Literal

from sitegen.records.entry import Entry
from sitegen.references.bibtex import read_bibtex
from sitegen.references.problems import UNRECOGNISED, ReferenceProblem
from sitegen.references.ris import BETWEEN_RECORDS, read_ris
from sitegen.references.table import read_csv

Format = Literal["csv", "ris", "bibtex"]
SUFFIXES: dict[str, Format] = {".csv": "csv", ".ris": "ris", ".bib": "bibtex", ".bibtex": "bibtex"}

__all__ = ["Entry", "Format", "ReferenceProblem", "decode", "read_references", "sniff"]


def read_references(source: Path | str, format: Format | None = None,
                    warnings: list[str] | None = None) -> list[Entry]:
    """The entries of a reference file (a Path) or of its text (a str), in `format` or else the one
    its suffix names (.csv, .ris, .bib) or else the one its content shows (see `sniff`).

    ReferenceProblem names the line of the first problem; OSError if the file cannot be read. What
    the reader changed and the user should know (RIS IDs replaced by positions) is appended to
    `warnings`, for the caller to show."""
    if isinstance(source, Path):
        text = decode(source.read_bytes())
        format = format or SUFFIXES.get(source.suffix.lower())
    else:
        text = source.removeprefix("\ufeff")
    format = format or sniff(text)
    if format is None:
        raise ReferenceProblem(1, UNRECOGNISED if text.strip() else "the file is empty")
    if format == "ris":
        return read_ris(text, warnings)
    return read_bibtex(text) if format == "bibtex" else read_csv(text)


def decode(data: bytes) -> str:
    """UTF-8 text without its byte-order mark; ReferenceProblem on the line of the first other byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise ReferenceProblem(line, f"not UTF-8 text (byte 0x{data[error.start]:02X}); save or convert the "
                                     "file as UTF-8 (for example iconv -f latin1 -t utf-8)") from None


def sniff(text: str) -> Format | None:
    """RIS when a line starts a RIS record ("TY  - ") before any line that is neither blank nor an
    export header; BibTeX when the first such line starts with "@" or a "%" comment; CSV when it is
    a header row with an ID column; None (not a format sitegen reads: MEDLINE, JSON, a list of
    citations) otherwise."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or BETWEEN_RECORDS.fullmatch(stripped):
            continue
        if line.startswith("TY  -"):
            return "ris"
        if stripped.startswith(("@", "%")):
            return "bibtex"
        return "csv" if "ID" in (name.strip() for name in next(csv.reader([line]))) else None
    return None
