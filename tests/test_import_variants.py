"""Reference exports as reference managers and databases write them in the wild, each a small variant of a real
export among the fixtures: every record read as it is meant, or a problem naming the line, never a wrong field."""

from __future__ import annotations

import csv
import json
import re

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


# --------------------------------------------------------------------------- RIS: tags as files misspell them


def _lower_tags(text: str, *tags: str) -> str:
    return "\n".join(line[:2].lower() + line[2:] if line[:2] in tags else line for line in text.split("\n"))


def test_ris_tags_in_lower_case_are_read_as_the_tags():
    """A file converted or typed by hand may write its tags in lower case: each is the tag. Inside a record it was
    read as text continuing the field above, so the IEEE export's DOI went into its record's year and its first
    author into the abstract, without a word."""
    text = (FIXTURES / "ris" / "ieee_ris.ris").read_text(encoding="utf-8")
    expected = [entry.fields for entry in read_references(text, "ris")]
    assert [entry.fields for entry in read_references(_lower_tags(text, "DO", "AU"), "ris")] == expected
    every_tag = "\n".join(line[:2].lower() + line[2:] if line[2:6] == "  - " else line for line in text.split("\n"))
    assert [entry.fields for entry in read_references(every_tag, "ris")] == expected


@pytest.mark.parametrize(("written", "line"), [
    ("DO\t- ", 12), ("DO -\t", 12), ("DO\t-\t", 12), ("DO \xa0- ", 12), ("au\t- ", 6), ("M4\t- ", 12),
])
def test_a_ris_tag_spaced_by_a_tab_or_a_no_break_space_is_a_problem_on_its_line(written, line):
    """A tag line spaced by a tab (a file typed in a spreadsheet or an editor) was read as text continuing the field
    above: the DOI glued to the journal's name, an unknown tag to the year. A tab is never in the prose a line
    continues, so such a line is a broken tag line, as one spaced by one space is."""
    text = (FIXTURES / "ris" / "ieee_ris.ris").read_text(encoding="utf-8")
    assert text.split("\n")[line - 1][:6] in ("DO  - ", "AU  - ")
    broken = "\n".join(written + row[6:] if number == line else row
                       for number, row in enumerate(text.split("\n"), start=1))
    with pytest.raises(ValueError, match=rf"line {line}: not a RIS tag line: a tag is two capitals, two spaces"):
        read_references(broken, "ris")


@pytest.mark.parametrize("written", ["TY\t- JOUR", "TY - JOUR", "TY -JOUR"])
def test_a_first_tag_misspaced_says_so_not_that_it_stands_outside_a_record(written):
    """'TY - JOUR' on line 1 was "TY outside a record: a record starts with a 'TY  - ' line", and with a tab "text
    outside a record": neither names what is wrong."""
    text = (FIXTURES / "ris" / "ieee_ris.ris").read_text(encoding="utf-8").replace("TY  - CONF", written, 1)
    with pytest.raises(ValueError, match="line 1: not a RIS tag line: a tag is two capitals, two spaces"):
        read_references(text, "ris")


# --------------------------------------------------------------------------- authors


@pytest.mark.parametrize("left_out", ["others", "Others", "et al.", "et al"])
def test_bibtexs_and_others_is_no_author(left_out):
    """"and others" is BibTeX's "et al.": it was turned into the name "others," (a family name alone), which the
    record then kept as an author named "others"; "et al." became the name "al., et"."""
    text = (FIXTURES / "bibtex" / "book.bib").read_text(encoding="utf-8")
    text = text.replace("Hassager, O.}", f"Hassager, O. and {left_out}}}")
    [entry] = read_references(text, "bibtex")
    assert [(name.family, name.given) for name in entry_record(entry).author] == [
        ("Bird", "R.B."), ("Armstrong", "R.C."), ("Hassager", "O.")]


@pytest.mark.parametrize("written", ["Lindgren A, Marx KH, van der Berg JP", "Lindgren A; Marx KH; van der Berg JP",
                                     "Lindgren, A.; Marx, K. H.; van der Berg, J.-P."])
def test_several_authors_in_one_ris_author_line_are_each_an_author(written):
    """A RIS author line holding a Vancouver list ("Lindgren A, Marx KH", as copied from PubMed's citation) was read
    as one author "Lindgren A" with the given names "Marx KH"; separated by semicolons, as one organisation."""
    text = EXAMPLE_FULL.replace("A1  - Marx, Karl\nA1  - Lindgren, Astrid\n", f"A1  - {written}\n", 1)
    first = entry_record(read_references(text, "ris")[0])
    assert [name.family for name in first.author] == ["Lindgren", "Marx", "van der Berg"]


@pytest.mark.parametrize("written", ["World Health Organization", "Smith, John", "Department of Health; Social Care",
                                     "Smith, John, Jr."])
def test_a_ris_author_line_that_is_one_name_stays_one(written):
    text = EXAMPLE_FULL.replace("A1  - Marx, Karl\nA1  - Lindgren, Astrid\n", f"A1  - {written}\n", 1)
    assert len(entry_record(read_references(text, "ris")[0]).author) == 1


# --------------------------------------------------------------------------- MEDLINE


PUBMED = (FIXTURES / "medline" / "pubmed_result3.txt").read_text(encoding="utf-8")


def test_a_medline_author_without_a_full_name_is_kept_in_its_place():
    """A record giving the full name (FAU) of some authors only: the others were left out, as only FAU lines were
    read once a record had one. Each is read from its short name (AU) where it stands."""
    [entry] = read_references(PUBMED.replace("FAU - Shen, Guofeng\n", ""), "medline")
    assert [(name.family, name.given) for name in entry_record(entry).author] == [
        ("Qiao", "Shan"), ("Shen", "G"), ("Bai", "Jingfeng"), ("Chen", "Yazhu")]
    grouped = re_grouped(PUBMED)  # every FAU, then every AU, as some converters write them
    [entry] = read_references(grouped, "medline")
    assert [name.family for name in entry_record(entry).author] == ["Qiao", "Shen", "Bai", "Chen"]


def re_grouped(text: str) -> str:
    lines = text.split("\n")
    full = [line for line in lines if line.startswith("FAU - ")]
    short = [line for line in lines if line.startswith("AU  - ")]
    rest = [line for line in lines if line not in full and line not in short]
    at = rest.index(next(line for line in rest if line.startswith("LA  - ")))
    return "\n".join(rest[:at] + full + short + rest[at:])


def test_a_medline_record_dated_only_electronically_has_that_year():
    """Without DP, the electronic date (DEP, "20121015") gives the year and month: it was refused as "DP
    '20121015' holds no four-digit year", naming a tag the record does not have."""
    [entry] = read_references(PUBMED.replace("DP  - 2012 Oct\n", "DEP - 20121015\n"), "medline")
    assert entry_record(entry).issued.date_parts[0] == [2012, 10]


# --------------------------------------------------------------------------- CSV exports


COVIDENCE = ("Title,Authors,Abstract,Published Year,Published Month,Journal,Volume,Issue,Pages,Accession Number,"
             "DOI,Ref,Covidence #,Study,Notes,Tags\n"
             '"A trial","Smith AB, Jones C","Abs",2019,,"J Med",4,1,1-9,,10.1000/cov,,#12,"Smith 2019",,\n'
             '"Another trial","Lee D","Abs",2020,,"J Med",5,2,3-8,,10.1000/cov2,,#13,"Lee 2020",,\n')
STROKE = FIXTURES / "dedupe" / "stroke" / "records_pre_merged.csv"


@pytest.mark.parametrize(("column", "formula"), [
    ("Title", '"=HYPERLINK(""https://doi.org/10.1000/cov"",""A trial"")"'),
    ("DOI", '"=HYPERLINK(""https://doi.org/10.1000/cov"")"'),
    ("DOI", '"=""10.1000/"" & A2"'),  # forced text joined to another cell's value
    ("Published Year", "= YEAR(TODAY())"),
])
def test_a_csv_cell_holding_a_spreadsheet_formula_is_a_problem_on_its_row(tmp_path, column, formula):
    """A formula's value is not in the file: read as written, the formula was the record's title, or its DOI was
    left out with a warning that it is no DOI."""
    header, row, rest = COVIDENCE.split("\n", 2)
    cells = next(csv.reader([row]))
    cells[header.split(",").index(column)] = "\x00"
    written = ",".join('"' + cell + '"' if "," in cell else cell for cell in cells).replace("\x00", formula)
    path = tmp_path / "covidence.csv"
    path.write_text(f"{header}\n{written}\n{rest}", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"line 2: column '{column}' holds a spreadsheet formula .* save it as CSV"):
        read_references(path)
    skipped: list[tuple[int, str]] = []
    assert [entry.id for entry in read_references(path, skipped=skipped)] == ["#13"]
    assert [line for line, _ in skipped] == [2]


def test_a_cell_starting_with_an_equals_sign_that_is_no_formula_is_read():
    text = STROKE.read_text(encoding="utf-8").split("\n")
    header, first = text[0], next(csv.reader([text[1]]))
    title = next(csv.reader([header])).index("title")
    first[title] = "= versus < : comparing thresholds"
    row = ",".join('"' + cell.replace('"', '""') + '"' for cell in first)
    [entry] = read_references(f"{header}\n{row}\n", "csv")
    assert entry.get("title") == "= versus < : comparing thresholds"


@pytest.mark.parametrize(("separator", "named"), [
    (";", "';' (as spreadsheets in German or French settings save)"), ("\t", "tabs")])
def test_a_known_export_saved_with_another_separator_says_so(tmp_path, separator, named):
    """Covidence's CSV saved again by a spreadsheet in German settings, or as Excel's "Unicode text" (UTF-16, tab
    separated): it was "unrecognised format", saying nothing of the separator."""
    rows = [next(csv.reader([line])) for line in COVIDENCE.strip().split("\n")]
    text = "\n".join(separator.join(row) for row in rows) + "\n"
    path = tmp_path / "covidence.csv"
    path.write_bytes(text.encode("utf-16") if separator == "\t" else text.encode("utf-8"))
    with pytest.raises(ValueError, match=rf"line 1: a Covidence CSV export separated by {re.escape(named)}, not commas"):
        read_references(path)
    path.with_suffix(".txt").write_bytes(path.read_bytes())  # known by its content, not its suffix, the same
    with pytest.raises(ValueError, match="a Covidence CSV export separated by"):
        read_references(path.with_suffix(".txt"))
