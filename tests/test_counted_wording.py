"""A count a reader sees agrees with its noun and verb: "1 entry names", "2 entries name" (`counted`)."""

from __future__ import annotations

from sitegen.records.model import Record, RecordMeta
from sitegen.references import read_references
from sitegen.site.charts import years_chart


def test_one_untitled_entry_and_one_short_row_are_said_in_the_singular():
    warnings: list[str] = []
    read_references('[{"id": "a", "DOI": "10.1000/1"}, {"id": "b", "title": "Two"}]', warnings=warnings)
    assert warnings == ["1 of 2 entries has no title (line 1)"]
    skipped: list[tuple[int, str]] = []
    read_references("ID,title,year\na,One,2001\nb\n", "csv", skipped=skipped)
    assert [why for _, why in skipped] == ["1 field where the header has 3"]


def test_one_included_study_without_a_year_is_said_in_the_singular():
    meta = RecordMeta(sources=["openalex"])
    included = [Record(id="10.1234/a", DOI="10.1234/a", title="Dated", issued={"date-parts": [[2020]]}, custom=meta),
                Record(id="10.1234/b", DOI="10.1234/b", title="Undated", custom=meta)]
    assert years_chart(included, 2).summary.endswith(" 1 has no publication year and is not drawn.")


def test_one_entry_naming_no_database_among_others_is_said_in_the_singular(sitegen, tmp_path):
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    source = tmp_path / "mixed.ris"
    entry = "TY  - JOUR\nTI  - {title}\nAU  - Smith, J\nPY  - 2020\n{db}ER  - \n"
    source.write_text(entry.format(title="Memory in rats", db="DB  - Embase\n")
                      + entry.format(title="Sleep in mice", db=""), encoding="utf-8")
    code, out, err = sitegen("import", review, source, "--at", "2026-02-01T00:00:00Z")
    assert code == 0, out + err
    assert "1 entry names no database while others do" in out
