"""Downloads offered on the site: records as CSV, RIS and CSL-JSON.

Exports are read by spreadsheets and reference managers, so they are hardened:
no line of a CSV cell can start a formula, no CSV cell can break a row, and no
RIS field can carry a line break that would smuggle in a tag of its own.
"""

from __future__ import annotations

import csv
import io
import re

import rispy

from sitegen.records.model import Record, model_data
from sitegen.review.write import pretty_json

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "|", "%")
CSV_COLUMNS = ["id", "title", "authors", "year", "journal", "volume", "issue", "pages", "doi", "pmid", "pmcid",
               "openalex", "arxiv", "url", "retracted", "title_abstract", "full_text", "abstract"]
# Every character str.splitlines breaks on: some spreadsheet or other honours each of them.
_LINE_BREAK = "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAKS = re.compile(f"[{_LINE_BREAK}]+")
# The start of the cell and of every line inside it, where that line starts a formula.
_FORMULA_LINE_START = re.compile(f"(?:^|(?<=[{_LINE_BREAK}]))(?=[{re.escape(''.join(FORMULA_STARTS))}])")


def safe_cell(value: str) -> str:
    """Neutralise every line of a cell a spreadsheet would evaluate (OWASP CSV injection guidance).

    A spreadsheet that splits a cell at a line break reads each line as a cell of its own,
    so the prefix goes before each line that starts a formula, not only the first.
    """
    return _FORMULA_LINE_START.sub("'", value)


def write_csv(header: list[str], rows: list[list[str]]) -> str:
    """CSV for spreadsheets: every cell neutralised and quoted.

    Quoting every cell keeps each line break inside its cell, whatever the break: the csv
    module quotes only the ones it writes itself, so a lone CR or U+2028 would start a row.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerows([safe_cell(cell) for cell in row] for row in [header, *rows])
    return buffer.getvalue()


def one_line(value: str) -> str:
    return re.sub(r"\s+", " ", _LINE_BREAKS.sub(" ", value)).strip()


def authors_text(record: Record) -> str:
    return "; ".join(name.display() for name in record.author)


def records_csv(records: list[Record], status: dict[str, tuple[str, str]]) -> str:
    """`status` maps record id to (title/abstract outcome, full-text outcome)."""
    rows = []
    for record in records:
        ids = record.identifiers()
        title_abstract, full_text = status.get(record.id, ("", ""))
        rows.append([record.id, record.title, authors_text(record), str(record.year or ""),
                     record.container_title or "", record.volume or "", record.issue or "", record.page or "",
                     ids.get("doi", ""), ids.get("pmid", ""), ids.get("pmcid", ""), ids.get("openalex", ""),
                     ids.get("arxiv", ""), record.URL or "", "yes" if record.custom.retracted else "no",
                     title_abstract, full_text, record.abstract or ""])
    return write_csv(CSV_COLUMNS, rows)


RIS_TYPES = {"article-journal": "JOUR", "chapter": "CHAP", "book": "BOOK", "thesis": "THES",
             "paper-conference": "CPAPER", "report": "RPRT", "dataset": "DATA", "article": "GEN"}


class _PlainRisWriter(rispy.RisWriter):
    """rispy's writer without its "1." line before each record, which some reference managers reject."""

    def set_header(self, count: int) -> str:
        return ""


def records_ris(records: list[Record]) -> str:
    entries = []
    for record in records:
        first_page, _, last_page = (record.page or "").partition("-")
        entry: dict[str, object] = {"type_of_reference": RIS_TYPES.get(record.type, "GEN"),
                                    "id": record.id, "title": record.title}
        if record.author:
            entry["authors"] = [name.display() for name in record.author]
        optional = {"year": str(record.year) if record.year else None,
                    "journal_name": record.container_title, "volume": record.volume, "number": record.issue,
                    "start_page": first_page, "end_page": last_page, "doi": record.DOI, "abstract": record.abstract}
        entry.update({key: value for key, value in optional.items() if value})
        if record.URL:
            entry["urls"] = [record.URL]
        if record.custom.retracted:
            entry["notes"] = ["RETRACTED"]
        entries.append(_ris_safe(entry))
    return rispy.dumps(entries, implementation=_PlainRisWriter) if entries else ""


def _ris_safe(entry: dict[str, object]) -> dict[str, object]:
    # RIS is line-based: a line break inside a value would start a new tag (e.g. "ER  -").
    return {key: [one_line(v) for v in value] if isinstance(value, list) else one_line(str(value))
            for key, value in entry.items()}


def records_json(records: list[Record]) -> str:
    return pretty_json([model_data(record) for record in records])
