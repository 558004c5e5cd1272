"""Exports of the bibliographic databases a systematic review searches beyond PubMed (EBSCOhost's CINAHL and
MEDLINE, Cochrane CENTRAL, Ovid), read field by field as `sitegen import` files them.

The files in tests/fixtures are written for these tests in each exporter's layout (its tags, header lines and
quirks), with a few records each: see tests/fixtures/README.md."""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from test_import import imports, new_review, prisma

from sitegen.references import ReferenceProblem, read_references
from sitegen.references.fields import accession_pmid
from sitegen.references.records import entry_record


def records(name: str) -> list:
    return [entry_record(entry) for entry in read_references(FIXTURES / name)]


def test_ebscohost_ris_authors_without_the_credentials_cinahl_writes_after_them():
    first, second = records("ris/ebsco_cinahl.ris")
    assert [(name.family, name.given) for name in first.author] == [("Hall", "Joanne M."), ("Fields", "Becky")]
    assert (first.title, first.container_title, first.volume, first.issue, first.page) == (
        "Continuing the conversation in nursing on race and racism.", "Nursing Outlook", "61", "3", "164-172")
    assert (first.DOI, first.issued.date_parts[0]) == ("10.1016/j.outlook.2012.11.006", [2013, 5])
    assert [(name.family, name.given) for name in second.author] == [("Smith", "Anne"), ("Jones", "Barry")]


def test_ebscohost_ris_pmids_of_cinahl_notes_and_of_medline_accession_numbers():
    cinahl, medline = records("ris/ebsco_cinahl.ris")
    assert cinahl.PMID == "23809603"  # "PMID: NLM23809603." in the note; its accession number is CINAHL's own
    assert medline.PMID == "30765433"  # DB cmedm: EBSCOhost's MEDLINE, whose accession number is the PMID


def test_ebscohost_ris_publication_types_from_the_labelled_field_of_its_note():
    # CINAHL gives a record's publication types only there; they were lost (a CINAHL record had none).
    cinahl, medline = records("ris/ebsco_cinahl.ris")
    assert cinahl.custom.publication_types == ["Journal Article", "research"]
    assert medline.custom.publication_types == ["Article", "Journal Article", "Randomized Controlled Trial"]  # M3 too


@pytest.mark.parametrize(("note", "types"), [
    ("Language: English. Publication Type: Journal Article; Research; Tables/Charts. Journal Subset: Nursing.",
     ["Journal Article", "Research", "Tables/Charts"]),
    ("Publication Type: Editorial", ["Editorial"]),
    ("Comment on the publication type: review. Publication Types: Review.", []),  # no field labelled so
    ("Said to be a Publication Type: Review by its authors.", []),  # words of a note, not its field
])
def test_only_the_labelled_publication_type_of_a_note_is_read(note, types):
    entry = read_references(f"TY  - JOUR\nTI  - A trial\nN1  - {note}\nER  - \n", "ris")[0]
    assert entry_record(entry).custom.publication_types == types


def test_ebscohost_database_codes_are_imported_under_the_database_names(sitegen, tmp_path):
    # EBSCOhost's RIS names each record's database by its code (DB  - ccm, cmedm): the import counted its records
    # under "ccm" and "cmedm", on the report, in PRISMA and on the searches page.
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "ris" / "ebsco_cinahl.ris", "--at", "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert "counted as a database (CINAHL, MEDLINE)" in out
    assert imports(review)[0]["file"]["entry_ids"].keys() == {"CINAHL", "MEDLINE"}
    assert prisma(sitegen, review)["identified_by_source"] == {"CINAHL": 1, "MEDLINE": 1}


@pytest.mark.parametrize(("written", "named"), [
    ("psyh", "APA PsycInfo"), ("ERIC", "ERIC"), ("a9h", "Academic Search Complete"),
    ("bth", "Business Source Premier"), ("rzh", "CINAHL"), ("mnh", "MEDLINE"),
    ("Embase", "Embase"), ("xyz", "xyz"),  # a name, and a code of no database known here: as written
])
def test_an_ebscohost_database_code_reads_as_the_database(written, named):
    entry = read_references(f"TY  - JOUR\nTI  - A trial\nDP  - EBSCOhost\nDB  - {written}\nER  - \n", "ris")[0]
    assert entry.get("database") == named


def test_cochrane_library_ris_with_its_header_is_read():
    entries = read_references(FIXTURES / "ris" / "cochrane_central.ris")
    assert [entry.id for entry in entries] == ["CN-01646457", "CN-02012345"]
    first = entry_record(entries[0])
    assert [(name.family, name.given) for name in first.author] == [("van der Vaart", "T"), ("Plasschaert", "E")]
    assert (first.container_title, first.volume, first.issue, first.page, first.DOI) == (
        "Lancet neurology", "12", "11", "1076-1083", "10.1016/s1474-4422(13)70227-8")
    assert first.URL == "https://www.cochranelibrary.com/central/doi/10.1002/central/CN-01646457/full"


def test_a_cochrane_library_export_is_counted_as_central_a_database_without_source(sitegen, tmp_path):
    # The Cochrane Library's RIS names no database (no DB tag): its CN- accession numbers and its addresses say the
    # records are CENTRAL's, so PRISMA counts them under databases, not other methods, with no --source given.
    entry = read_references(FIXTURES / "ris" / "cochrane_central.ris")[0]
    assert entry.get("database") == "Cochrane CENTRAL"
    by_address = read_references("TY  - JOUR\nTI  - A trial\nUR  - https://www.cochranelibrary.com/central/doi/10.1002/"
                                 "central/CN-00000001/full\nER  - \n", "ris")[0]
    assert by_address.get("database") == "Cochrane CENTRAL"
    # Neither: no database named, as before (a number like another's, or an address elsewhere, says nothing).
    for written in ("ID  - CN-123", "ID  - XCN-01646457", "UR  - https://example.org/central/CN-01646457"):
        assert not read_references(f"TY  - JOUR\nTI  - A trial\n{written}\nER  - \n", "ris")[0].get("database")
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", str(review), str(FIXTURES / "ris" / "cochrane_central.ris"), "--at",
                             "2024-03-01T00:00:00Z")
    assert code == 0, err
    assert [(event["source"], event["method"]) for event in imports(review)] == [("Cochrane CENTRAL", "database")]
    assert prisma(sitegen, review)["identified_by_source"] == {"Cochrane CENTRAL": 2}


# Ovid's "EndNote" export, as Ovid writes it (a .cgi file), and the Cochrane Library's plain text: formats sitegen
# does not read, refused by name with the export it reads.
OVID_TAGGED = """<1. >
VN  - Ovid Technologies
DB  - Embase
UI  - 621381829
TI  - Quality of life in patients with primary ciliary dyskinesia: A systematic review.
AU  - Behan L.
YR  - 2018

"""
COCHRANE_TEXT = """Record #1 of 2
ID: CN-01646457
AU: van der Vaart T
TI: Simvastatin for cognitive deficits in neurofibromatosis type 1 (NF1-SIMCODA): a randomised trial
SO: Lancet neurology
YR: 2013
"""


@pytest.mark.parametrize(("name", "text", "named", "way_out"), [
    ("Embase.cgi", OVID_TAGGED, "Ovid's tagged format", "from Ovid again choosing the RIS format"),
    ("central.txt", COCHRANE_TEXT, "the Cochrane Library's plain-text export", "choosing RIS"),
])
def test_exports_sitegen_does_not_read_are_named_with_the_way_out(tmp_path, sitegen, name, text, named, way_out):
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    with pytest.raises(ReferenceProblem) as error:
        read_references(source)
    assert error.value.line == 1 and named in error.value.message and way_out in error.value.message
    assert "sitegen reads a records CSV with an ID column, RIS, EndNote XML, BibTeX, MEDLINE" in error.value.message
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    assert sitegen("protocol", "lock", review, "--at", "2026-05-01T00:00:00Z")[0] == 0
    before = (review / "records.jsonl").read_bytes() if (review / "records.jsonl").exists() else None
    code, _, err = sitegen("import", review, source, "--at", "2026-06-01T00:00:00Z")
    assert code != 0 and f"{name}:1: {named}" in err
    assert ((review / "records.jsonl").read_bytes() if (review / "records.jsonl").exists() else None) == before


# Real exports of asreview/citation-file-formatting (see tests/fixtures/README.md): Embase.com, Ovid (ERIC, APA
# PsycInfo) and Web of Science RIS.

def test_an_embase_com_export_is_embase_and_its_c5_the_pmid():
    # Embase.com's DB tags the sources indexing a record ("Embase", "Medline"): a MEDLINE-only record was counted
    # under "Medline", a database the review never searched, and the PMID Embase.com writes in C5 was lost.
    entries = read_references(FIXTURES / "ris" / "embase_com.ris")
    assert [entry.get("database") for entry in entries] == ["Embase", "Embase", "Embase"]
    assert [entry.get("pmid") for entry in entries] == ["38773066", "38906957", "37584310"]
    first = entry_record(entries[0])
    assert [(name.family, name.given) for name in first.author][:2] == [("Yang", "Z."), ("Jiang", "B.")]
    assert (first.container_title, first.volume, first.issue, first.DOI) == (
        "Nature Communications", "15", "1", "10.1038/s41467-024-48400-3")
    # C5 of an export that is not Embase.com's says nothing of a PMID
    assert not read_references("TY  - JOUR\nTI  - A trial\nC5  - 38773066\nER  - \n", "ris")[0].get("pmid")


def test_ovid_database_names_lose_the_segment_searched(sitegen, tmp_path):
    # Ovid writes the segment after the name ("ERIC <1992 to June 2024>"): one ERIC export was counted as two
    # databases in PRISMA, "ERIC" and "ERIC <1992 to June 2024>".
    assert {entry.get("database") for entry in read_references(FIXTURES / "ris" / "ovid_eric.ris")} == {"ERIC"}
    assert {entry.get("database") for entry in read_references(FIXTURES / "ris" / "ovid_psycinfo.ris")} == {
        "APA PsycInfo"}
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "ris" / "ovid_eric.ris", "--at", "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert prisma(sitegen, review)["identified_by_source"] == {"ERIC": 5}


def test_ovid_eric_doi_written_as_its_address_in_l1():
    records_ = records("ris/ovid_eric.ris")
    assert [record.DOI for record in records_] == [
        None, "10.1080/21548455.2016.1200155", None, "10.1186/s40594-016-0044-1", None]
    stokes = records_[0]
    assert ([(name.family, name.given) for name in stokes.author], stokes.container_title, stokes.volume,
            stokes.issue, stokes.page, stokes.issued.date_parts[0]) == (
        [("Stokes", "William Lee")], "Journal of Geological Education", "37", "1", "24-26", [1989])
    # an L1 that is a file, not a DOI's address, is no DOI
    assert not read_references("TY  - JOUR\nTI  - A\nL1  - file:///a/10.1/b.pdf\nER  - \n", "ris")[0].get("doi")


def test_a_web_of_science_ris_export_is_web_of_science_by_its_accession_numbers(sitegen, tmp_path):
    # Web of Science's RIS has no DB tag: the import counted it under other methods, by the file's name.
    entries = read_references(FIXTURES / "ris" / "webofscience.ris")
    assert [entry.get("database") for entry in entries] == ["Web of Science", "Web of Science"]
    first = entry_record(entries[0])
    assert (first.container_title, first.page, first.DOI, first.issued.date_parts[0]) == (
        "PLOS ONE", "e12292", "10.1371/journal.pone.0012292", [2010, 9, 22])
    assert not read_references("TY  - JOUR\nTI  - A\nAN  - 123WOS:1\nER  - \n", "ris")[0].get("database")
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "ris" / "webofscience.ris", "--at", "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert "counted as a database (Web of Science)" in out
    assert prisma(sitegen, review)["identified_by_source"] == {"Web of Science": 2}


@pytest.mark.parametrize(("da", "parts"), [
    ("SEP 22", [2010, 9, 22]), ("SEP", [2010, 9]), ("MAR-APR 15", [2010, 3]), ("FEB 30", [2010, 2]),
    ("Summer 12", [2010]),
])
def test_a_web_of_science_ris_date_keeps_its_day(da, parts):
    # "DA  - SEP 22" beside "PY  - 2010" was read 2010-09: the day was lost.
    entry = read_references(f"TY  - JOUR\nTI  - A\nDA  - {da}\nPY  - 2010\nER  - \n", "ris")[0]
    assert entry_record(entry).issued.date_parts[0] == parts


def test_an_ovid_editors_role_after_the_given_names_is_no_part_of_the_name():
    # Ovid's ERIC writes "A1  - Hern, Matt, Ed": read as the literal author "Hern, Matt, Ed".
    hern = records("ris/ovid_eric.ris")[-1]
    assert [(name.family, name.given) for name in hern.author] == [("Hern", "Matt")]
    written = "TY  - BOOK\nTI  - A\nA1  - Smith, Ed\nA1  - Jones, Ann, Eds.\nA1  - Brown, Bo (Ed.)\nER  - \n"
    assert [(name.family, name.given) for name in entry_record(read_references(written, "ris")[0]).author] == [
        ("Smith", "Ed"), ("Jones", "Ann"), ("Brown", "Bo")]


def test_ovid_publication_types_are_its_pt_not_psycinfos_classification_in_m3():
    # Ovid's APA PsycInfo writes the subject classification in M3 ("Cognitive Therapy [3311]"), which was read as
    # the publication type; the types are in PT ("Journal, Peer Reviewed Journal"), ERIC's too.
    assert [entry.get("publication_types") for entry in read_references(FIXTURES / "ris" / "ovid_psycinfo.ris")] == [
        "Journal; Peer Reviewed Journal"] * 2
    eric = read_references(FIXTURES / "ris" / "ovid_eric.ris")
    assert [entry.get("publication_types") for entry in eric][:2] == [
        "Journal Articles; Reports - Descriptive", "Journal Articles; Reports - Research"]
    # another export's PT is not read as Ovid's; its M3 type still is, a classification never
    assert read_references("TY  - JOUR\nTI  - A\nM3  - Article\nPT  - J\nER  - \n", "ris")[0].get(
        "publication_types") == "Article"
    assert not read_references("TY  - JOUR\nTI  - A\nM3  - Cognitive Therapy [3311]\nER  - \n", "ris")[0].get(
        "publication_types")


def test_a_cochrane_library_csv_export_is_read_as_central_with_its_labelled_pmids(sitegen, tmp_path):
    # The Cochrane Library's CSV was refused ("no ID column"); its PubMed ID column labels the PMID
    # ("PUBMED 21314913") and its page ranges use U+2010 hyphens.
    first, second, _ = records("spreadsheet/cochrane_central.csv")
    assert [(name.family, name.given) for name in first.author][:2] == [("Bywater", "T"), ("Hutchings", "J")]
    assert (first.container_title, first.volume, first.page, first.DOI, first.PMID, first.issued.date_parts[0]) == (
        "Trials", "12", "39", "10.1186/1745-6215-12-39", "21314913", [2011])
    assert (second.issue, second.page, second.PMID) == ("7", "1279-1297", "38407106")
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "spreadsheet" / "cochrane_central.csv", "--at",
                             "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert prisma(sitegen, review)["identified_by_source"] == {"Cochrane CENTRAL": 3}


@pytest.mark.parametrize(("written", "pmid"), [
    ("PUBMED 21314913", "21314913"), ("PMID: 21314913", "21314913"), ("21314913", "21314913"),
    ("EMBASE 643589775", ""), ("PUBMED", ""),
])
def test_an_accession_number_labelled_pubmeds_is_the_pmid(written, pmid):
    assert accession_pmid(written) == pmid


def test_an_embase_com_csv_export_is_read_past_its_search_preamble_as_embase(sitegen, tmp_path):
    # Embase.com's CSV opens with its search ('"SEARCH QUERY","dinosaur:ti"'), a line of dashes and a blank line:
    # it was refused ("FILE:1: no ID column"). Its authors are "Yang Z., Jiang B.", its pages two columns.
    warnings: list[str] = []
    entries = read_references(FIXTURES / "spreadsheet" / "embase_com.csv", warnings=warnings)
    assert [entry.line for entry in entries] == [5, 6, 7]  # the file's own lines
    assert warnings == ["lines 1-3, before the header on line 4, were skipped as the export's preamble, not records "
                        """(line 1: '"SEARCH QUERY","dinosaur:ti"')"""]
    first, erratum, pol = (entry_record(entry) for entry in entries)
    assert [(name.family, name.given) for name in first.author] == [
        ("Yang", "Z."), ("Jiang", "B."), ("Xu", "J."), ("McNamara", "M.E.")]
    assert (first.container_title, first.volume, first.issue, first.PMID, first.DOI, first.issued.date_parts[0]) == (
        "Nature Communications", "15", "1", "38773066", "10.1038/s41467-024-48400-3", [2024, 12, 1])
    assert (pol.page, erratum.page, [name.family for name in pol.author][2]) == ("307-356", "14316", "Černý")
    assert [entry.get("publication_types") for entry in entries] == ["Article", "Erratum", "Article"]
    assert {entry.get("database") for entry in entries} == {"Embase"}
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "spreadsheet" / "embase_com.csv", "--at",
                             "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert "preamble" in out + err
    assert prisma(sitegen, review)["identified_by_source"] == {"Embase": 3}


@pytest.mark.parametrize("preamble", [
    '"SEARCH QUERY","dinosaur:ti"\n',  # no blank line before the header: the row may be data
    '"SEARCH QUERY","dinosaur\n\n',  # a quote that does not close on its line: not a row of its own
])
def test_lines_before_a_known_header_are_skipped_only_as_a_preamble(preamble):
    header = '"Title","Author Names","Source title","Embase Accession ID","PUI"\n"A trial","Yang Z.","J",,L1\n'
    with pytest.raises(ReferenceProblem):  # refused, as before, rather than read past lines that may be records
        read_references(preamble + header, "csv")
    assert [entry.get("title") for entry in read_references(header, "csv")] == ["A trial"]


def test_an_embase_com_csv_gives_the_article_number_of_its_source_and_its_date_of_publication():
    # Embase.com writes an article's number only in its Source cell ("Nature Communications (2024) 15:1 Article
    # Number: 4063. Date of Publication: 1 Dec 2024") and its full date in a column that was not read: the article
    # had no pages and every record the year alone
    first, erratum, pol = records("spreadsheet/embase_com.csv")
    assert (first.page, erratum.page, pol.page) == ("4063", "14316", "307-356")
    assert [record.issued.date_parts[0] for record in (first, erratum, pol)] == [[2024, 12, 1], [2024, 6, 21],
                                                                                [2024, 6, 1]]

    def read(source: str, date: str, year: str = "2024") -> tuple[str | None, list[int]]:
        text = ('"Title","Author Names","Source title","Embase Accession ID","PUI","Source","Publication Year",'
                f'"Date of Publication"\n"A trial","Yang Z.","J",,L1,"{source}",{year},"{date}"\n')
        [record] = [entry_record(entry) for entry in read_references(text, "csv")]
        return record.page, record.issued.date_parts[0]

    assert read("J (2024) 1:2 Article Number: e0191645.", "Dec 2024") == ("e0191645", [2024, 12])
    # only what is one: two labelled numbers, none, a season, a span of dates, a date of another year
    assert read("J (2024) 1:2 Article Number: 12. Article Number: 13.", "Winter 2024") == (None, [2024])
    assert read("J (2024) 1:2 (12-19).", "1 Dec 2024 - 31 Jan 2025") == (None, [2024])
    assert read("J (2023) 1:2", "1 Dec 2023", "2024") == (None, [2024])
