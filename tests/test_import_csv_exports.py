"""CSV exports of databases and reference managers (EBSCOhost, PubMed, Scopus, Zotero, ...), read field by field as
`sitegen import` files them.

The files in tests/fixtures/spreadsheet are excerpts of real exports of asreview/citation-file-formatting (CC0): see
tests/fixtures/README.md."""

from __future__ import annotations

import csv
import io

import pytest
from conftest import FIXTURES
from test_import import new_review, prisma

from sitegen.references import read_references
from sitegen.references.records import entry_record
from sitegen.references.table import counted_pages, exported_authors, nlm_citation, written_date


def records(name: str) -> list:
    return [entry_record(entry) for entry in read_references(FIXTURES / name)]


def people(record) -> list[tuple[str | None, str | None]]:
    return [(name.family, name.given) for name in record.author]


def test_an_ebscohost_csv_export_is_read_with_its_forced_text_cells(sitegen, tmp_path):
    # EBSCOhost writes every ISSN and date as forced text (="19326203", ="4/3/2024"): each row was refused as holding
    # a spreadsheet formula, and without a year column or a known header the file was "no ID column".
    pone, tracks, plumage = records("spreadsheet/ebscohost_aph.csv")
    assert (pone.issued.date_parts[0], pone.volume, pone.issue, pone.page, pone.DOI) == (
        [2024, 4, 3], "19", "4", "1-60", "10.1371/journal.pone.0298242")
    assert (tracks.issued.date_parts[0], tracks.page, tracks.container_title) == ([2023, 6], "924-934",
                                                                                  "Historical Biology")
    assert plumage.issued.date_parts[0] == [2023]
    assert people(tracks)[-1] == ("Sander", "P. Martin")
    # authors in capitals, some given name first ("CAIZHI SHEN"): no word of 3+ letters is initials, and where no
    # comma says which word is the family name, the name is kept as written ("SHEN" and "LÜ" were read as initials)
    assert [name.literal or (name.family, name.given) for name in plumage.author] == [
        ("CROUDACE", "ANGUS D."), "CAIZHI SHEN", "JUNCHANG LÜ", ("BRUSATTE", "STEPHEN L."), ("VINTHER", "JAKOB")]
    # the label saying whose the abstract is and the copyright statement after it are EBSCOhost's, not the abstract's
    assert tracks.abstract == "The identification of presumed tetrapod tracks is not always unequivocal."
    # the database is the one each record's address names (db=aph), and it is a database in PRISMA
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "spreadsheet" / "ebscohost_aph.csv", "--at",
                             "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert "counted as a database (Academic Search Premier)" in out
    assert prisma(sitegen, review)["identified_by_source"] == {"Academic Search Premier": 3}


def test_an_ebscohost_csv_record_from_medline_has_its_accession_number_as_pmid():
    header = "Article Title,Author,Journal Title,Publication Date,Accession Number,PLink\n"
    row = 'A trial,"Smith, Ann",J Med,="2019",31234567,"https://search.ebscohost.com/login.aspx?direct=true&db=cmedm&AN=31234567"\n'
    [entry] = read_references(header + row, "csv")
    assert (entry.get("database"), entry.get("pmid"), entry.get("year")) == ("MEDLINE", "31234567", "2019")


@pytest.mark.parametrize(("written", "read"), [
    ("4/3/2024", {"year": "2024", "date": "2024-04-03"}), ("12/31/2023", {"year": "2023", "date": "2023-12-31"}),
    ("Jun2023", {"year": "2023", "month": "Jun"}), ("Jun/Jul2023", {"year": "2023", "month": "Jun"}),
    ("Spring2023", {"year": "2023", "month": "Spring"}), ("2023", {"year": "2023"}),
    ("31/12/2023", {"year": "2023", "date": "2023"}), ("soon", {}), ("", {}),  # no 31st month: the year alone
])
def test_ebscohost_dates_are_read_as_it_writes_them(written, read):
    assert written_date(written) == read


@pytest.mark.parametrize(("first", "count", "pages"), [
    ("924", "11", "924-934"), ("1", "60", "1-60"), ("213", "1", "213"), ("e123", "5", "e123"), ("12", "", "12"),
])
def test_pages_from_a_first_page_and_a_count(first, count, pages):
    assert counted_pages(first, count) == pages


def test_a_spreadsheets_forced_text_is_its_string():
    header = "ID,title,doi\n"
    [entry] = read_references(header + 'a,"=""Quoted """"text"""" title""","=""10.1000/x"""\n', "csv")
    assert (entry.get("title"), entry.get("doi")) == ('Quoted "text" title', "10.1000/x")


def test_a_pubmed_csv_export_gives_volume_issue_pages_and_date_from_its_citation():
    # PubMed's CSV writes them only in its Citation ("Biol Rev Camb Philos Soc. 2011 Feb;86(1):117-55. doi: ..."): all
    # four were left empty, and the last author's initials kept the full stop closing the list ("O'Connor", "RE.").
    genomics, beetles, spinosaurus, sauropods, pterosaurs = records("spreadsheet/pubmed.csv")
    assert (genomics.volume, genomics.issue, genomics.page, genomics.issued.date_parts[0]) == (
        "63", "2", "103640", [2020, 2])
    assert people(genomics) == [("Griffin", "DK"), ("Larkin", "DM"), ("O'Connor", "RE")]
    assert (beetles.page, beetles.issued.date_parts[0], people(beetles)[-1]) == (
        "e2217872120", [2023, 4, 25], ("Pérez-de la Fuente", "R"))
    assert (spinosaurus.volume, spinosaurus.issue, spinosaurus.page) == ("11", None, "e80092")
    assert sauropods.page == "117-155"  # MEDLINE's shortened range, in full
    assert (pterosaurs.volume, pterosaurs.issue, pterosaurs.page, pterosaurs.PMCID) == (
        "604", "7907", "684-688", "PMC9046085")


@pytest.mark.parametrize(("citation", "year", "read"), [
    ("Nature. 2022 Apr;604(7907):684-688. doi: 10.1038/x. Epub 2022 Apr 20.", "2022",
     {"volume": "604", "number": "7907", "pages": "684-688", "month": "Apr", "date": "2022-04"}),
    ("Elife. 2022 Nov 30;11:e80092. doi: 10.7554/eLife.80092.", "2022",
     {"volume": "11", "pages": "e80092", "month": "Nov", "date": "2022-11-30"}),
    ("J Foo. 2020 Winter;12(3):1-9.", "2020", {"volume": "12", "number": "3", "pages": "1-9"}),
    ("Nature. 2022 Apr;604(7907):684-688.", "2021", {}),  # not the entry's year: another work's citation
    ("In: Adam MP, editors. GeneReviews. Seattle (WA): University of Washington; 1993.", "1993", {}),
])
def test_an_nlm_citation_gives_what_it_holds(citation, year, read):
    assert nlm_citation(citation, year) == read


@pytest.mark.parametrize(("written", "names"), [
    ("Griffin DK, Larkin DM, O'Connor RE.", "Griffin, DK and Larkin, DM and O'Connor, RE"),
    ("Brownstein CD.", "Brownstein, CD"),
    ("Wilson L.N.; Organ C.L.", "Wilson, L.N. and Organ, C.L."),  # stops of initials, not a list's
    ("Smolen J.A.", "Smolen, J.A."),
])
def test_a_full_stop_closing_a_name_list_is_the_lists(written, names):
    assert exported_authors(written) == names


@pytest.mark.parametrize(("written", "names"), [
    # EBSCOhost's capitals, given names first: "SHEN" was read as initials ("CAIZHI, SHEN")
    ("CROUDACE, ANGUS D.; CAIZHI SHEN; JUNCHANG LÜ", "CROUDACE, ANGUS D. and CAIZHI SHEN and JUNCHANG LÜ"),
    ("SMITH JOHN; WANG LI", "SMITH JOHN and WANG LI"),  # either order: as written
    # in capitals the initials are one or two letters, or dotted, after the last word of the family name
    ("SMITH JM, LI XM, VAN DER BERG J", "SMITH, JM and LI, XM and VAN DER BERG, J"),
    ("SMITH R. P. F.; JONES AB", "SMITH, R. P. F. and JONES, AB"),
    ("Campos HBN, Krab LC", "Campos, HBN and Krab, LC"),  # in mixed case, as before: MEDLINE's three initials
])
def test_a_name_in_capitals_is_family_initials_only_where_its_initials_are_initials(written, names):
    assert exported_authors(written) == names


def test_a_zotero_csv_export_is_read():
    # Zotero's CSV was refused: "no ID column"
    blomberg, strojan, kamusheva, doesschate = records("spreadsheet/zotero.csv")
    assert (blomberg.DOI, blomberg.container_title, blomberg.volume, blomberg.issue, blomberg.page) == (
        "10.1007/s11307-012-0572-0", "Molecular imaging and biology", "15", "1", "97-105")
    assert (blomberg.issued.date_parts[0], blomberg.type, blomberg.URL) == (
        [2012, 7, 3], "article-journal", "https://lens.org/000-463-679-101-319")
    assert blomberg.abstract.startswith("This systematic review and meta-analysis aimed")
    assert people(blomberg)[:2] == [("Blomberg", "Björn A."), ("Moghbel", "Mateen")]
    assert people(strojan)[6] == ("de Bree", "Remco")
    assert kamusheva.page == "636959"
    assert people(doesschate)[1:3] == [("van der Vaart", "T.W."), ("Damen", "Johanna A A G")]


def test_zoteros_extra_field_gives_the_pmid_and_pmcid():
    header = '"Key","Item Type","Title","Publication Title","Abstract Note","Extra"\n'
    row = '"AB12CD34","journalArticle","A trial","J Med","","PMID: 31234567\nPMCID: PMC6543210\nPlace: UK"\n'
    [record] = [entry_record(entry) for entry in read_references(header + row, "csv")]
    assert (record.PMID, record.PMCID) == ("31234567", "PMC6543210")


def test_a_scopus_csv_export_gives_full_names_without_the_author_ids(sitegen, tmp_path):
    # Scopus's Authors has initials ("Wilson L.N."); its Author full names has the names, each with its Scopus author
    # id in brackets, which is no part of it
    anatomy, latitudes = records("spreadsheet/scopus.csv")[::-1]
    assert people(latitudes)[:2] == [("Wilson", "Lauren N."), ("Gardner", "Jacob D.")]
    assert people(anatomy)[0] == ("Aureliano", "Tito")
    assert (latitudes.page, latitudes.PMID, latitudes.abstract) == (
        "2864", "38580657", "Global climate patterns fundamentally shape the distribution of species and ecosystems.")
    assert (anatomy.page, anatomy.volume, anatomy.issue) == ("1084-1092", "307", "4")
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "spreadsheet" / "scopus.csv", "--at", "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert prisma(sitegen, review)["identified_by_source"] == {"Scopus": 2}


@pytest.mark.parametrize(("written", "names"), [
    ("Wilson, Lauren N. (58975547800); Organ, Chris L. (11438961200)", "Wilson, Lauren N. and Organ, Chris L."),
    ("Smith, J. (Jr); Lee, A", "Smith, J. (Jr) and Lee, A"),  # brackets that are no id stay
])
def test_an_author_id_after_a_name_is_no_part_of_it(written, names):
    assert exported_authors(written) == names


def test_an_openalex_csv_export_is_read_with_its_identifiers_written_as_addresses(sitegen, tmp_path):
    # OpenAlex's CSV was "no ID column"; its ids are addresses, its names parted by "|", its `type` OpenAlex's
    # ("article", a journal article, where CSL's "article" is a preprint)
    [charophytes] = records("spreadsheet/openalex.csv")
    assert (charophytes.DOI, charophytes.custom.openalex, charophytes.type) == (
        "10.1016/j.cretres.2023.105752", "W4387881419", "article-journal")
    assert people(charophytes)[:2] == [("Vicente", "Alba"), ("Sanjuan", "Josep")]
    assert (charophytes.container_title, charophytes.volume, charophytes.page, charophytes.issued.date_parts[0]) == (
        "Cretaceous Research", "154", "105752", [2024, 2, 1])
    assert charophytes.abstract.startswith("A comprehensive bibliographic compilation")
    # a PMID written as PubMed's address, and a retracted work's flag
    names, cells = csv.reader(io.StringIO((FIXTURES / "spreadsheet" / "openalex.csv").read_text(encoding="utf-8")))
    cells[names.index("ids.pmid")] = "https://pubmed.ncbi.nlm.nih.gov/36448670"
    cells[names.index("is_retracted")] = "True"
    written = io.StringIO()
    csv.writer(written).writerows([names, cells])
    [flagged] = [entry_record(entry) for entry in read_references(written.getvalue(), "csv")]
    assert (flagged.PMID, flagged.custom.retracted) == ("36448670", True)
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "spreadsheet" / "openalex.csv", "--at", "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert prisma(sitegen, review)["identified_by_source"] == {"openalex": 1}


def test_a_google_scholar_csv_export_is_read_by_its_header():
    # Google Scholar's CSV was "no ID column": it has no identifier, and its names end in "; "
    flowers, macroevolution, ontogeny, saurornithoides = records("spreadsheet/google_scholar.csv")
    assert people(flowers) == [("Barrett", "Paul M"), ("Willis", "Katherine J")]
    assert (flowers.container_title, flowers.volume, flowers.issue, flowers.page, flowers.issued.date_parts[0]) == (
        "Biological Reviews", "76", "3", "411-447", [2001])
    assert macroevolution.container_title == "Annual Review of Ecology, Evolution, and Systematics"
    assert (ontogeny.page, saurornithoides.volume, saurornithoides.issue) == ("20150947", "2009", "3654")
    assert all(record.id.startswith("ref:") for record in (flowers, macroevolution, ontogeny, saurornithoides))


def test_covidences_published_month_is_the_months():
    header = ("Title,Authors,Abstract,Published Year,Published Month,Journal,Volume,Issue,Pages,Accession Number,DOI,"
              "Ref,Covidence #,Study,Notes,Tags\n")
    [record] = [entry_record(entry) for entry in read_references(
        header + 'A trial,"Smith, A.",,2024,March,J Med,1,2,3-4,,,,#1,Smith 2024,"",""\n', "csv")]
    assert record.issued.date_parts[0] == [2024, 3]


def test_the_lens_tab_separated_export_is_read_with_its_quoted_cells(sitegen, tmp_path):
    # The Lens's tab-separated file was "unrecognised format"; it quotes a cell holding a ";", where Web of Science's
    # quotes none
    radiology, carbapenem = records("spreadsheet/lens.tsv")
    assert (radiology.DOI, radiology.PMID, radiology.PMCID, radiology.page, radiology.issued.date_parts[0]) == (
        "10.1007/s11307-012-0572-0", "22752652", "PMC3553406", "97-105", [2012, 7, 3])
    assert people(radiology)[:2] == [("Blomberg", "Björn A."), ("Moghbel", "Mateen")]
    assert people(carbapenem)[:2] == [("ten Doesschate", "T."), ("van der Vaart", "T.W.")]
    assert (carbapenem.type, carbapenem.container_title, carbapenem.abstract) == (
        "article-journal", "The Journal of infection", None)
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / "spreadsheet" / "lens.tsv", "--at", "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert prisma(sitegen, review)["identified_by_source"] == {"The Lens": 2}


def test_a_refworks_tab_delimited_export_from_citavi_is_read():
    # Citavi's export in RefWorks' tab-delimited layout was "unrecognised format": every empty cell a space, no cell
    # quoted (a '"' in an abstract is a character), the article number in "Other Pages", the month and day apart
    radiology, stroke, ptsd = records("spreadsheet/citavi_refworks.tsv")
    assert people(radiology)[:2] == [("van den Hoven", None), ("Smits", "Maarten L. J.")]
    assert (radiology.volume, radiology.issue, radiology.page, radiology.DOI, radiology.PMID) == (
        "25", "3", "S105", "10.1016/j.jvir.2013.12.293", None)
    assert radiology.URL == "https://www.sciencedirect.com/science/article/pii/S1051044313020757"
    assert (stroke.page, stroke.issue, stroke.issued.date_parts[0], stroke.PMID) == (
        "69-79", None, [2020, 3, 30], "32240769")
    assert stroke.abstract.startswith("Objectives The objective")
    assert (ptsd.page, ptsd.issued.date_parts[0]) == ("113438", [2020, 8, 31])
    assert 'measures as "social distancing", forcing' in ptsd.abstract


def test_an_export_saved_with_semicolons_after_its_preamble_names_its_header_and_separator(sitegen, tmp_path):
    # Embase.com's CSV opened and saved again by Excel in European settings: ';' between cells, and its preamble
    # ("SEARCH QUERY;dinosaur:ti;;;") before its header. It was "unrecognised format".
    excel = FIXTURES / "spreadsheet" / "embase_excel_semicolons.csv"
    with pytest.raises(ValueError, match=r"line 1: line 4 is the header of an Embase CSV export separated by ';'.*"
                                         "save it as CSV with commas"):
        read_references(excel)
    review = new_review(sitegen, tmp_path)
    before = (review / "records.jsonl").read_bytes()
    code, _, err = sitegen("import", review, excel, "--at", "2026-06-01T00:00:00Z")
    assert code != 0 and "line 4 is the header of an Embase CSV export" in err
    assert (review / "records.jsonl").read_bytes() == before
    # saved again with commas, its blank line is a row of empty cells (",,,"): the preamble still ends there
    rows = list(csv.reader(io.StringIO(excel.read_text(encoding="utf-8")), delimiter=";"))
    commas = io.StringIO()
    csv.writer(commas, lineterminator="\r\n").writerows(rows)
    assert commas.getvalue().splitlines()[2] == "," * 48
    warnings: list[str] = []
    [bird] = [entry_record(entry) for entry in read_references(commas.getvalue(), "csv", warnings=warnings)]
    assert (bird.DOI, bird.PMID, bird.page, people(bird)) == (
        "10.1186/s12862-024-02216-3", "38481151", "32", [("Brownstein", "C.D.")])
    assert any("lines 1-3" in warning for warning in warnings)


def test_an_abstrackr_export_is_read_with_its_heading_and_its_short_rows():
    # abstrackr's export was refused: "column 'labeled_at' appears twice" (one for each reviewer, no field read
    # from it); its unlabelled citations come after a heading of one cell and end at their authors
    duckbill, erratum, bird, haplocanthosaurus = records("spreadsheet/abstrackr.csv")
    assert people(duckbill) == [("Longrich", "N.R."), ("Pereda-Suberbiola", "X."), ("Bardet", "N."),
                                ("Jalil", "N.-E.")]
    assert (duckbill.container_title, duckbill.abstract, duckbill.PMID) == (
        "Sci Rep", "In the Late Cretaceous, northern and southern hemispheres evolved distinct dinosaurian faunas.", None)
    assert erratum.abstract is None and people(bird) == [("Brownstein", "C.D.")]
    assert haplocanthosaurus.title == "Description of a new specimen of Haplocanthosaurus from the Dry Mesa Dinosaur Quarry"
    assert [entry.line for entry in read_references(FIXTURES / "spreadsheet" / "abstrackr.csv")] == [2, 8, 14, 16]


def test_a_column_read_and_named_twice_is_still_refused_in_a_known_export():
    header = "(internal) id,(source) id,pubmed id,title,title,consensus\n"
    with pytest.raises(ValueError, match="line 1: column 'title' appears twice"):
        read_references(header + "1,2,0,A,B,o\n", "csv")
