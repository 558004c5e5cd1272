"""Reference exports as reference managers and databases write them in the wild, each a small variant of a real
export among the fixtures: every record read as it is meant, or a problem naming the line, never a wrong field."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, review_of_ris

from sitegen.references import read_references
from sitegen.references.records import entry_record

EXAMPLE_FULL = (FIXTURES / "ris" / "example_full.ris").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- RIS: a date without a year


@pytest.mark.parametrize("written", ["Y1  - //", "Y1  - ///", "Y1  - ", "Y1  - /05/14/", "Y1  - \nDA  - //"])
def test_a_ris_record_whose_dates_hold_no_year_is_read_without_one(written):
    """RIS writes a date as "YYYY/MM/DD/other", each part it does not know left empty: EndNote and Zotero export a
    record without a year as "//" or "///". Such a record is read without a year, as one without a date tag is; it
    was refused whole ("Y1 '//' holds no four-digit year")."""
    first, second = read_references(EXAMPLE_FULL.replace("Y1  - 2014//", written, 1), "ris")
    assert first.get("title") == "Title of reference" and first.get("year") == first.get("date") == ""
    assert entry_record(first).issued is None
    assert second.get("year") == "2006"


def test_a_yearless_ris_date_gives_way_to_a_later_date_tag_holding_the_year():
    """An empty PY ("PY  - ///") before a DA with the date: the record's year and date are DA's."""
    [entry] = read_references("TY  - JOUR\nTI  - A title\nPY  - ///\nDA  - 2020/03/01/\nER  - \n", "ris")
    assert (entry.get("year"), entry.get("date")) == ("2020", "2020-03-01")


def test_a_ris_date_of_words_without_a_year_is_still_refused_on_its_line():
    with pytest.raises(ValueError, match="line 3: PY 'in the spring' holds no four-digit year"):
        read_references("TY  - JOUR\nTI  - A title\nPY  - in the spring\nDA  - 2020//\nER  - \n", "ris")


def test_a_ris_export_with_a_yearless_record_is_imported(tmp_path):
    review, (code, _, err) = review_of_ris(tmp_path, EXAMPLE_FULL.replace("Y1  - 2014//", "Y1  - ///", 1))
    assert code == 0, err
    records = [json.loads(line) for line in (review / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(bool(record.get("issued")) for record in records) == [False, True]
