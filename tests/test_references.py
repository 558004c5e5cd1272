"""Reading reference files (records CSV, RIS, BibTeX): real exports, malformed input with its line,
encodings, and `sitegen dedupe` on each format."""

from __future__ import annotations

import csv

import bibtexparser
import pytest
import rispy
from bibtexparser.model import Entry as BibEntry
from bibtexparser.model import Field
from conftest import FIXTURES

from sitegen.records.dedupe import dedupe_rows
from sitegen.references import ReferenceProblem, read_references, sniff
from sitegen.references.bibtex import read_bibtex
from sitegen.references.ris import read_ris
from sitegen.text import counted

# --------------------------------------------------------------------------- real exports


@pytest.mark.parametrize(("name", "count", "index", "expected"), [
    ("ris/ieee_ris.ris", 2, 0, {"ID": "ris-1", "ENTRYTYPE": "inproceedings", "title": "Title of a conference paper",
                                "pages": "183-186", "year": "2020", "doi": "10.1234/Random-name55555.2020.00050",
                                "journal": "Secondary Title (booktitle title, if applicable)"}),
    ("ris/jstor_ris.ris", 4, 1, {"ID": "ris-2", "author": "First-Author, Tim and Second-Author, James A.",
                                 "year": "2014", "volume": "4", "number": "4", "pages": "80-87",
                                 "doi": "10.1111/something.2014.3.4.56", "abstract": "This is another abstract."}),
    ("ris/jstor_ris.ris", 4, 2, {"ENTRYTYPE": "incollection", "title": "This title is of type CHAP"}),
    ("ris/psycinfo_ris.ris", 1, 0, {"ID": "2020-55555-005", "title": "Primary Title", "year": "2020",
                                    "journal": "Journal/Periodical name: full format", "pages": "1023-1095",
                                    "doi": "10.1011/hea0004444"}),
    ("ris/example_utf_chars.ris", 1, 0, {"author": "Dobrokhotova, Yu E. and Yusupova, R. O. and Ozerova, R. I. and "
                                                   "Fayzullin, L. Z. and Karnaukhov, V. N.",
                                         "journal": "Gynecology, Obstetrics and Perinatology", "volume": "8",
                                         "pages": "52-57", "year": "2009"}),
    ("prisma/citation.ris", 1, 0, {"author": "Haddaway, Neal R. and Page, Matthew J. and Pritchard, Chris C. and "
                                             "McGuinness, Luke A.", "year": "2022", "volume": "18", "number": "2",
                                   "journal": "Campbell Systematic Reviews", "pages": "e1230",
                                   "doi": "https://doi.org/10.1002/cl2.1230"}),
    ("bibtex/article.bib", 1, 0, {"ID": "Cesar2013", "author": "César, Jean", "title": "An amazing title",
                                  "journal": "Nice Journal", "pages": "12-23"}),
    ("bibtex/book.bib", 1, 0, {"ENTRYTYPE": "book", "author": "Bird, R.B. and Armstrong, R.C. and Hassager, O."}),
    ("bibtex/crossref_feed.bib", 3, 0, {"ID": "00001", "doi": "10.25300/MISQ/2022/15252", "number": "2",
                                        "title": "Product Meaning in Digital Product Innovation"}),
    ("bibtex/encoding.bib", 1, 0, {"title": "An amazing title: à", "journal": "Elémentaire"}),
    ("bibtex/europe_pmc_bib.bib", 2, 1, {"ID": "PPR:PPR666666", "ENTRYTYPE": "misc", "author": "Miscwriter, Chris",
                                         "doi": "10.55555/rs.1.rs-1777777/v99"}),
    ("bibtex/multiple_entries_and_comments.bib", 3, 1, {"ID": "Wigner1938", "year": "1938",
                                                        "doi": "10.1039/TF9383400029"}),
    ("bibtex/scopus_bib.bib", 11, 0, {"author": "Firstwriter, Z. and Secondwriter, T. and Thirdwriter, L.",
                                      "doi": "10.1111/88888888.2022.7777777"}),
    ("bibtex/traps.bib", 1, 0, {"title": "An amazing title"}),
    ("bibtex/web_of_science_bib.bib", 2, 0, {"ID": "WOS:000223334444221", "ENTRYTYPE": "inproceedings",
                                             "journal": "A BOOKTITLE", "doi": "10.1007/999-9-999-99999-9_3",
                                             "database": "Web of Science"}),
])
def test_real_exports_read(name, count, index, expected):
    entries = read_references(FIXTURES / name)
    assert len(entries) == count
    assert {key: entries[index].fields[key] for key in expected} == expected


def test_continuation_lines_belong_to_the_field_above():
    entry = read_ris("TY  - JOUR\nAB  - Serum\nCA-125 levels\nUS - based cohort\nPMID  - 123\n456\nER  - \n")[0]
    assert entry.get("abstract") == "Serum CA-125 levels US - based cohort"  # PMID is no RIS tag: left out


def test_bibtex_authors_in_either_order_and_names_bibtex_cannot_split():
    entry = read_bibtex("@article{a, author={Jean Laid{\\'e} and de la Fontaine, Jr, Jean and Smith, Maria,},"
                        " issue={3}, booktitle={Proc. X}}")[0]
    assert entry.get("author") == "Laidé, Jean and de la Fontaine, Jr, Jean and Smith, Maria,"
    assert entry.get("number") == "3" and entry.get("journal") == "Proc. X"


def test_real_export_details():
    entries = read_references(FIXTURES / "ris" / "jstor_ris.ris")
    assert [entry.line for entry in entries] == [6, 32, 60, 86]  # headers between records are skipped
    # a field's second line (EndNote writes the translated title on its own line) belongs to it
    assert read_references(FIXTURES / "ris" / "example_utf_chars.ris")[0].get("abstract").endswith(
        "estrogen metabolism in endometrial hyperplasia in the late reproductive period")
    # a bare % is text, not a LaTeX comment that would cut the abstract short
    crossref = read_references(FIXTURES / "bibtex" / "crossref_feed.bib")
    assert "by 4.609% for each unit increase" in crossref[2].get("abstract")
    assert crossref[2].get("year") == ""  # "forthcoming"
    assert read_references(FIXTURES / "bibtex" / "web_of_science_bib.bib")[1].get("title") == \
        "A dummy title&apos;s"
    assert [entry.line for entry in read_references(FIXTURES / "bibtex" / "scopus_bib.bib")][:3] == [2, 14, 29]


def test_a_real_ris_file_with_a_repeated_id_names_every_record_by_position():
    warnings: list[str] = []
    entries = read_references(FIXTURES / "ris" / "example_full.ris", warnings=warnings)
    assert [entry.id for entry in entries] == [f"ris-{n}" for n in range(1, len(entries) + 1)]
    assert warnings == [f"ID '12345' on line 28 was already used on line 3; every record is named by its "
                        f"position instead (ris-1 to ris-{len(entries)})"]


def issns_and_links_read_whole() -> tuple[str, list[str]]:
    """A record with print and online ISSNs and two links (as Zotero writes attachments): each read, none said."""
    warnings: list[str] = []
    (entry,) = read_ris("TY  - JOUR\nTI  - T\nSN  - 1234-5678\nSN  - 8765-4321\nL2  - https://a.org/x\n"
                        "L2  - https://b.org/y\nPY  - 2020\nER  - \n", warnings)
    return entry.get("issn"), warnings


def test_an_abstract_in_paragraphs_is_read_whole_and_a_second_value_left_out_is_said():
    # AB lines one after another are paragraphs of one abstract (the second was dropped); a second DO or VL
    # with another value is one RIS cannot hold: the first is read and the reader is told, with the line.
    text = ("TY  - JOUR\nTI  - A title\nTI  - A title\nAB  - Paragraph one.\nAB  - Paragraph two.\n"
            "DO  - 10.1000/a\nDO  - 10.1000/b\nVL  - 3\nVL  - 4\nKW  - one\nKW  - two\nPY  - 2020\nER  - \n")
    warnings: list[str] = []
    (entry,) = read_ris(text, warnings)
    assert entry.get("abstract") == "Paragraph one. Paragraph two."
    assert (entry.get("doi"), entry.get("volume"), entry.get("title")) == ("10.1000/a", "3", "A title")
    assert issns_and_links_read_whole() == ("1234-5678; 8765-4321", [])
    assert warnings == ["line 7: a second DO ('10.1000/b') was left out: the record's first DO ('10.1000/a') is "
                        "read, as RIS gives a record one",
                        "line 9: a second VL ('4') was left out: the record's first VL ('3') is read, as RIS gives "
                        "a record one"]


# --------------------------------------------------------------------------- malformed input, with its line

RECORD = "TY  - JOUR\nTI  - A title\nAU  - Smith, Jo\nPY  - 2001\nER  - \n"


@pytest.mark.parametrize(("text", "line", "message"), [
    ("TY  - JOUR\nTI  - A title\nAU - Smith, Jo\nER  - \n", 3, "not a RIS tag line"),
    ("TY  - JOUR\nTI  - A title\nAU  -Smith, Jo\nER  - \n", 3, "not a RIS tag line"),
    ("TY  - JOUR\nTI  - A title\n\nTY  - JOUR\nTI  - Another\nER  - \n", 1, "no ER line before the next TY"),
    (RECORD + "TY  - JOUR\nTI  - Last\n", 6, "no ER line before the end of the file"),
    (RECORD + "TI  - A title\nER  - \n", 6, "TI outside a record"),
    (RECORD + "Smith J (2001) A title\n", 6, "text outside a record"),
    (RECORD + "https://doi.org/10.1000/x\n", 6, "text outside a record"),  # an address is no export header
    (RECORD + "TY  - \nTI  - x\nER  - \n", 6, "no reference type"),
    ("TY  - JOUR\nTI  - A title\nPY  - in the spring\nER  - \n", 3, "PY 'in the spring' holds no four-digit year"),
    # an entry without an ID tag is "ris-N" by position: a tag spelling out that name collides with it
    ("TY  - JOUR\nID  - ris-2\nTI  - One\nER  - \nTY  - JOUR\nTI  - Two\nER  - \n", 5,
     "ID 'ris-2' was already used on line 1"),
    ("Provider: nobody\n\n", 1, "no RIS record"),
])
def test_malformed_ris_names_the_line(text, line, message):
    with pytest.raises(ReferenceProblem, match=message) as error:
        read_ris(text)
    assert error.value.line == line


@pytest.mark.parametrize(("text", "line", "message"), [
    ("@article{a, title={One}}\n\n@article{b, title={unclosed\n\n@book{c, title={ok}}\n", 3, "not valid BibTeX"),
    ("@article{a, title={One}}\n@article{b, title={Two}}\n@article{a, title={Three}}\n", 3,
     "ID 'a' was already used on line 1"),
    ("@article{a,\n  title={One},\n  year={20x1}\n}\n", 3, "year '20x1' holds no four-digit year"),
    ("% nothing but a comment\n", 1, "no BibTeX entry"),
    # A comma missing between two fields: the next field would be read into this one (a journal "Lancet doi =
    # 10.1000/xyz" and no DOI, an author "year = 2020, A, B"), whatever the value's form.
    ("@article{a,\n  title = {One},\n  journal = {Lancet}\n  doi = {10.1000/xyz},\n  year = {2020}\n}\n", 3,
     "followed by 'doi = {10.1000/xyz}', which is not part of it: a comma is missing"),
    ("@article{a,\n  title = {One},\n  author = \"Smith, A and Jones, B\"\n  year = 2020\n}\n", 3,
     "followed by 'year = 2020'"),
    ("@article{a,\n  title = {One},\n  year = 2019\n  volume = {3}\n}\n", 3, "followed by 'volume = \\{3}'"),
])
def test_malformed_bibtex_names_the_line(text, line, message):
    with pytest.raises(ReferenceProblem, match=message) as error:
        read_bibtex(text)
    assert error.value.line == line


def test_a_bibtex_value_in_another_form_is_kept_as_written_not_called_a_missing_comma():
    # Only the next field's "name =" after a value is a comma missing; other forms BibTeX would not read either
    # stay as written, as they did (the first version of the rule refused their whole file).
    [entry] = read_bibtex("@article{a, title = {T}, pages = 1 - 10, author = Smith and Jones, year = {2020}}\n")
    # (the bare words are read, each a family name given alone: "Family,")
    assert (entry.get("pages"), entry.get("author")) == ("1 - 10", "Smith, and Jones,")



def test_a_file_not_in_utf8_names_the_line(tmp_path):
    source = tmp_path / "latin1.ris"
    source.write_bytes((RECORD + "TY  - JOUR\nTI  - Caf\u00e9\nER  - \n").encode("latin-1"))
    with pytest.raises(ReferenceProblem, match="not UTF-8 text") as error:
        read_references(source)
    assert error.value.line == 7


@pytest.mark.parametrize(("name", "text"), [
    ("refs.ris", "Provider: X\n\n" + RECORD + "TY  - JOUR\nTI  - Caf\u00e9 au lait\nER  - \n"),
    ("refs.bib", "@article{one, title={A title}, author={Smith, Jo}, year=2001}\n"
                 "@article{two, title={Caf{\\'e} au lait}}\n"),
    ("refs.csv", "ID,title,author,year\nris-1,A title,\"Smith, Jo\",2001\ntwo,Café au lait,,\n"),
])
def test_bom_and_crlf_are_read(tmp_path, name, text):
    source = tmp_path / name
    source.write_bytes(("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8"))
    entries = read_references(source)
    assert [entry.get("title") for entry in entries] == ["A title", "Café au lait"]
    assert entries[0].get("author") == "Smith, Jo" and entries[0].get("year") == "2001"


def test_format_by_suffix_then_content():
    assert sniff("Provider: JSTOR\n\n1.\nTY  - JOUR\n") == "ris"
    assert sniff("% exported\n@article{a,\n") == "bibtex"
    assert sniff("ID,title\n") == "csv"
    assert [entry.id for entry in read_references(RECORD)] == ["ris-1"]  # text: by content


# --------------------------------------------------------------------------- the same sets from every format


def _stroke_head(count: int = 60) -> list[dict[str, str]]:
    with open(FIXTURES / "dedupe" / "stroke" / "records_pre_merged.csv", newline="", encoding="utf-8") as handle:
        return [row for _, row in zip(range(count), csv.DictReader(handle), strict=False)]


def _as_ris(rows: list[dict[str, str]]) -> str:
    def record(row: dict[str, str]) -> dict:
        first, _, last = row.get("pages", "").partition("-")
        fields = {"type_of_reference": "JOUR", "id": row["ID"], "title": row.get("title", ""),
                  "authors": [name for name in row.get("author", "").split(" and ") if name],
                  "year": row.get("year", ""), "journal_name": row.get("journal", ""),
                  "volume": row.get("volume", ""), "number": row.get("number", ""), "start_page": first,
                  "end_page": last, "doi": row.get("doi", ""), "abstract": row.get("abstract", "")}
        return {key: value for key, value in fields.items() if value}

    return rispy.dumps([record(row) for row in rows])


def _as_bibtex(rows: list[dict[str, str]]) -> str:
    library = bibtexparser.Library()
    for row in rows:
        fields = [Field(name, value) for name, value in row.items() if name not in ("ID", "ENTRYTYPE") and value]
        library.add(BibEntry(row.get("ENTRYTYPE") or "article", row["ID"], fields))
    return bibtexparser.write_string(library)


def test_ris_and_bibtex_give_the_csv_sets(tmp_path):
    rows = _stroke_head()
    header = list(rows[0])
    with open(tmp_path / "head.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, header)
        writer.writeheader()
        writer.writerows(rows)
    (tmp_path / "head.ris").write_text(_as_ris(rows), encoding="utf-8")
    (tmp_path / "head.bib").write_text(_as_bibtex(rows), encoding="utf-8")
    expected = dedupe_rows(read_references(tmp_path / "head.csv")).sets
    assert expected, "the head of the stroke search holds duplicates"
    for name in ("head.ris", "head.bib"):
        entries = read_references(tmp_path / name)
        assert [entry.id for entry in entries] == [row["ID"] for row in rows]
        assert dedupe_rows(entries).sets == expected, name


# --------------------------------------------------------------------------- `sitegen dedupe`


@pytest.mark.parametrize("name", ["prisma/citation.ris", "bibtex/scopus_bib.bib"])
def test_command_reads_ris_and_bibtex(tmp_path, sitegen, name):
    out = tmp_path / "predicted.csv"
    code, stdout, err = sitegen("dedupe", FIXTURES / name, "--out", out)
    assert code == 0, err
    assert out.read_text(encoding="utf-8").startswith("merged_ids")
    assert (tmp_path / "predicted-probable.csv").is_file()
    assert stdout.startswith(counted(len(read_references(FIXTURES / name)), "record"))


def test_command_format_option_overrides_the_suffix(tmp_path, sitegen):
    source = tmp_path / "export.txt"
    source.write_text(RECORD + RECORD.replace("TY  - JOUR", "TY  - JOUR\nID  - second"), encoding="utf-8")
    code, stdout, _ = sitegen("dedupe", source, "--out", tmp_path / "p.csv")
    assert code == 0 and stdout.startswith("2 records:")  # a .txt file: RIS by its content
    pairs = (tmp_path / "p-probable.csv").read_text(encoding="utf-8").splitlines()
    assert pairs[1].startswith("ris-1,second,")  # title, author and year alone: a pair for a reviewer
    code, _, err = sitegen("dedupe", source, "--format", "bibtex", "--out", tmp_path / "q.csv")
    assert code == 1 and f"{source}:1: no BibTeX entry" in err


@pytest.mark.parametrize(("name", "text", "where"), [
    ("bad.ris", RECORD + "TY  - JOUR\nTI  - Last\n", ":6: the record starting here has no ER line"),
    ("bad.bib", "@article{a, title={One}}\n@article{a, title={Two}}\n", ":2: ID 'a' was already used on line 1"),
])
def test_command_reports_file_and_line_and_writes_nothing(tmp_path, sitegen, name, text, where):
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    code, _, err = sitegen("dedupe", source, "--out", tmp_path / "predicted.csv")
    assert code == 1 and f"{source}{where}" in err
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]
