"""Downloads: CSV cells cannot start formulas, RIS fields cannot smuggle in tags."""

from __future__ import annotations

import csv
import io

import rispy

from sitegen.records.model import CslName, Record, RecordMeta
from sitegen.site.exports import records_csv, records_json, records_ris, safe_cell


def record(**fields) -> Record:
    base = {"id": "10.1234/abcd", "DOI": "10.1234/abcd", "title": "A title", "custom": RecordMeta(sources=["openalex"])}
    return Record(**{**base, **fields})


def test_formula_cells_are_neutralised():
    for hostile in ("=HYPERLINK(\"http://evil\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "|calc"):
        assert safe_cell(hostile).startswith("'")
    assert safe_cell("Normal title") == "Normal title"
    rows = list(csv.reader(io.StringIO(records_csv([record(title="=cmd|' /C calc'!A0")], {}))))
    assert rows[0][0] == "id"
    assert rows[1][1] == "'=cmd|' /C calc'!A0"


def test_csv_keeps_newlines_inside_quoted_cells():
    text = records_csv([record(title="line one\nline two")], {"10.1234/abcd": ("include", "")})
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 2
    assert rows[1][1] == "line one\nline two"
    assert rows[1][15] == "include"


def test_ris_title_with_newline_cannot_inject_fields():
    hostile = record(title="Harmless\nER  - \nTY  - JOUR\nTI  - Injected record", abstract="Abstract\r\nAU  - Fake Author",
                     author=[CslName(family="Doe", given="Jane\nKW  - injected")])
    entries = rispy.loads(records_ris([hostile]))
    assert len(entries) == 1
    [entry] = entries
    assert entry["title"] == "Harmless ER - TY - JOUR TI - Injected record"
    assert entry["authors"] == ["Doe, Jane KW - injected"]
    assert "keywords" not in entry


def test_ris_round_trip_keeps_identifiers_and_retraction():
    original = record(author=[CslName(literal="Ann Author")], container_title="Journal", page="10-20",
                      custom=RecordMeta(retracted=True), URL="https://doi.org/10.1234/abcd")
    [entry] = rispy.loads(records_ris([original]))
    assert entry["doi"] == "10.1234/abcd"
    assert entry["start_page"] == "10" and entry["end_page"] == "20"
    assert entry["notes"] == ["RETRACTED"]
    assert entry["urls"] == ["https://doi.org/10.1234/abcd"]
    assert not records_ris([]).strip()


def test_csl_json_export_is_valid_csl_keys():
    text = records_json([record(container_title="J")])
    assert '"container-title": "J"' in text
