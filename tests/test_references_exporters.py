"""Reference files as other tools export them, read as those tools mean them: the kind of work (a journal
article is no preprint; an erratum or a retraction notice is told by its document type), full author names
in the file's order, article numbers as pages, identifiers where each exporter writes them; and files that are
no reference file of any kind refused by name."""

from __future__ import annotations

import hashlib

import pytest

from sitegen.records.notices import notice_kind
from sitegen.references import ReferenceProblem, read_references
from sitegen.references.records import entry_record

WOS_COLUMNS = ["PT", "AU", "AF", "TI", "SO", "DT", "PD", "PY", "VL", "IS", "BP", "EP", "AR", "DI", "UT"]


def records(text: str, name: str, tmp_path, data: bytes | None = None, **options):
    path = tmp_path / name
    path.write_bytes(data if data is not None else text.encode("utf-8"))
    return [entry_record(entry) for entry in read_references(path, **options)]


def wos_row(**cells: str) -> str:
    return "\t".join(cells.get(column, "") for column in WOS_COLUMNS) + "\t"


def test_web_of_science_tab_delimited_reads_kinds_full_names_and_article_numbers(tmp_path):
    text = "\n".join(["\t".join(WOS_COLUMNS), wos_row(
        PT="J", AU="Garcia-Lopez, MJ; O'Brien, S", AF="Garcia-Lopez, Maria Jose; O'Brien, Sean",
        TI="Object recognition in context", SO="JOURNAL OF NEUROSCIENCE", DT="Article", PD="SEP 25", PY="2019",
        VL="39",
        AR="e55555", UT="WOS:000000000000001"), wos_row(
        PT="J", AU="Smith, J", TI="Place cells revisited", SO="HIPPOCAMPUS", DT="Correction", PD="SPR", PY="2020",
        BP="10", EP="12", UT="WOS:000000000000002"), wos_row(
        PT="J", AU="Doe, A", TI="A withdrawn study", SO="NEURON", DT="Article; Retracted Publication", PY="2018",
        UT="WOS:000000000000003"), wos_row(
        PT="C", AU="Roe, B", TI="A meeting paper", SO="PROC SOC", DT="Proceedings Paper", PY="2017",
        UT="WOS:000000000000004")]) + "\n"
    article, correction, retracted, meeting = records(text, "savedrecs.txt", tmp_path, format="csv")
    assert article.type == "article-journal"  # not CSL's "article", a preprint's: exported as @misc / TY UNPB
    assert [(name.family, name.given) for name in article.author] == [("Garcia-Lopez", "Maria Jose"),
                                                                     ("O'Brien", "Sean")]
    assert article.page == "e55555"
    assert article.issued.date_parts == [[2019, 9]]  # PD, the publication date, as the plain-text export's
    assert correction.issued.date_parts == [[2020]]  # a season is no month
    assert correction.page == "10-12" and notice_kind(correction.title, correction.custom.publication_types)
    assert retracted.custom.retracted and not notice_kind(retracted.title, retracted.custom.publication_types)
    assert meeting.type == "paper-conference"


def test_web_of_science_plain_text_keeps_document_types(tmp_path):
    text = ("FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU Smith, J\nTI Place cells revisited\n"
            "SO HIPPOCAMPUS\nDT Correction\nPY 2020\nUT WOS:000000000000002\nER\n\nEF\n")
    (record,) = records(text, "savedrecs.ciw", tmp_path)
    assert record.custom.publication_types == ["Correction"] and notice_kind(record.title, ["Correction"])


@pytest.mark.parametrize(("header", "row", "options"), [
    ("PMID,Title,Authors,Citation,Journal/Book,Publication Year", '1,Place cells,"Smith J, Doe A",x,Neuron,2019', {}),
    ("Title,Authors,Covidence #,Journal,Published Year", "Place cells,Smith J,#1,Neuron,2019", {}),
    ("Key,Title,Author,Publication Title", 'k1,Place cells,"Smith, John; Doe, Ann",Neuron',
     {"columns": {"ID": "Key", "title": "Title", "author": "Author", "journal": "Publication Title"}}),
])
def test_a_csv_row_naming_a_journal_is_a_journal_article(tmp_path, header, row, options):
    (record,) = records(f"{header}\n{row}\n", "export.csv", tmp_path, **options)
    assert record.type == "article-journal"
    (untyped,) = records("ID,title\nx1,A working paper\n", "plain.csv", tmp_path)
    assert untyped.type == "article"  # no journal: nothing says it was published in one


def test_a_mapped_csv_splits_its_author_list_as_exporters_write_it(tmp_path):
    (record,) = records('Key,Title,Author\nk1,Place cells,"Garcia-Lopez, Maria Jose; O\'Brien, Sean"\n', "z.csv",
                        tmp_path, columns={"ID": "Key", "title": "Title", "author": "Author"})
    assert [(name.family, name.given) for name in record.author] == [("Garcia-Lopez", "Maria Jose"),
                                                                    ("O'Brien", "Sean")]


def test_medline_keeps_publication_types_and_the_order_of_group_authors(tmp_path):
    text = ("PMID- 30000001\nTI  - Place cells revisited.\nFAU - Smith, John\nAU  - Smith J\n"
            "CN  - Rodent Memory Consortium\nFAU - Doe, Ann\nAU  - Doe A\nPT  - Journal Article\n"
            "PT  - Published Erratum\nDP  - 2020\nJT  - Hippocampus\n")
    (record,) = records(text, "pubmed.nbib", tmp_path)
    assert record.custom.publication_types == ["Journal Article", "Published Erratum"]
    assert notice_kind(record.title, record.custom.publication_types) == "erratum"
    assert [name.display() for name in record.author] == ["Smith, John", "Rodent Memory Consortium", "Doe, Ann"]


def test_scopus_ris_pmid_article_number_and_type_of_work(tmp_path):
    text = ("TY  - JOUR\nAU  - Smith, J.\nTI  - Place cells revisited\nT2  - Hippocampus\nPY  - 2020\n"
            "C7  - e12345\nC2  - 30000001\nM3  - Erratum\nDB  - Scopus\nER  - \n\n"
            "TY  - JOUR\nTI  - Another\nT2  - Neuron\nPY  - 2020\nM3  - doi:10.1011/hea0004444\nC2  - 30000002\n"
            "ER  - \n")
    scopus, other = records(text, "scopus.ris", tmp_path)
    assert scopus.PMID == "30000001" and scopus.page == "e12345"
    assert notice_kind(scopus.title, scopus.custom.publication_types) == "erratum"
    assert other.custom.publication_types == [] and other.PMID is None  # a DOI is no type; C2 is Scopus's PMID


def test_ris_authors_keep_the_file_order_across_au_and_a1(tmp_path):
    text = ("TY  - JOUR\nAU  - Müller, Anna\nAU  - O'Brien, Sean\nA1  - van der Berg, Jan\nAU  - Smith, John\n"
            "TI  - Place cells\nER  - \n")
    (record,) = records(text, "mixed.ris", tmp_path)
    assert [name.family for name in record.author] == ["Müller", "O'Brien", "van der Berg", "Smith"]


def test_a_latin1_file_with_windows_quotes_is_read_as_windows_1252(tmp_path):
    data = "TY  - JOUR\nAU  - O’Brien, Sean\nTI  - Place cells – revisited\nER  - \n".encode("cp1252")
    (record,) = records("", "windows.ris", tmp_path, data=data, encoding="latin-1")
    assert record.author[0].family == "O’Brien" and record.title == "Place cells – revisited"


@pytest.mark.parametrize(("name", "data", "said"), [
    ("header.csv", b"ID,title\n", "no record: the file has a header row and no row under it"),
    ("endnote.enw", b"%0 Journal Article\n%A Smith, John\n%T Title\n%D 2019\n", "EndNote's tagged format (.enw)"),
    ("picture.ris", bytes(range(256)) * 8, "a binary file, not text"),
])
def test_files_that_hold_no_reference_are_refused_by_what_they_are(tmp_path, sitegen, example_copy, name, data, said):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ReferenceProblem, match=said.replace("(", r"\(").replace(")", r"\)")):
        read_references(path)
    before = {p.relative_to(example_copy): hashlib.sha256(p.read_bytes()).digest()
              for p in example_copy.rglob("*") if p.is_file()}
    code, _, err = sitegen("import", example_copy, path, "--at", "2026-06-01T00:00:00Z")
    assert code == 1 and said in err and name in err
    assert before == {p.relative_to(example_copy): hashlib.sha256(p.read_bytes()).digest()
                      for p in example_copy.rglob("*") if p.is_file()}



def test_ris_authors_glued_in_one_tag_are_each_an_author(tmp_path):
    text = ("TY  - JOUR\nAU  - Jones, A.; Brown, B.\nAU  - Department of Neuroscience; University of Nowhere\n"
            "TI  - Place cells\nER  - \n")
    (record,) = records(text, "glued.ris", tmp_path)
    assert [name.display() for name in record.author] == ["Jones, A.", "Brown, B.",
                                                          "Department of Neuroscience; University of Nowhere"]


def test_latin1_bytes_windows_1252_has_no_letter_for_stay_latin1(tmp_path):
    data = "TY  - JOUR\nTI  - Caf\xe9 \x81 \x96 x\nER  - \n".encode("latin-1")
    (record,) = records("", "mixed.ris", tmp_path, data=data, encoding="latin-1")
    assert record.title.startswith("Café") and "\u2013" in record.title  # 0x96 Windows' dash; 0x81 no error


@pytest.mark.parametrize(("name", "text"), [
    # Web of Science's "Tab-delimited (Mac)" export, as litsearchr's inst/extdata/borealis/WoS_*.txt store it
    ("savedrecs.txt", "\t".join(WOS_COLUMNS) + "\r" + wos_row(
        PT="J", AU="Roach, MC", AF="Roach, Melissa C.", TI="Effects of pine-oak woodland restoration",
        SO="FOREST ECOLOGY AND MANAGEMENT", PY="2019", BP="443", EP="459", UT="WOS:000461270600041") + "\r"),
    # Scopus's CSV saved again by Excel for Mac as "CSV (Macintosh)"
    ("scopus.csv", "Authors,Title,Year,Source title,Page start,Page end,DOI,EID\r"
                   '"Roach M.C.",Effects of pine-oak woodland restoration,2019,Forest Ecology and Management,443,459,'
                   ",2-s2.0-85059000000\r"),
])
def test_a_known_export_with_old_mac_line_ends_is_read_by_its_header(tmp_path, name, text):
    (record,) = records(text, name, tmp_path)
    assert (record.title, record.page, record.author[0].family) == (
        "Effects of pine-oak woodland restoration", "443-459", "Roach")


def test_web_of_science_page_span_is_read_where_begin_and_end_pages_are_missing(tmp_path):
    # Web of Science's databases besides the Core Collection (Zoological Record, BIOSIS, MEDLINE) write the
    # pages whole in PS, as litsearchr's inst/extdata/zoorec.txt and borealis/WoS_*.txt exports have them.
    plain = ("FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAN ZOOR15508049637\nDT Article\n"
             "TI Predictors of habitat use and nesting success for two sympatric species\n"
             "   of boreal woodpeckers in an unburned, managed forest landscape.\nAU Craig, Catherine\n"
             "SO Forest Ecology and Management\nVL 438\nPS 134-141\nPD Apr 15 2019\nPY 2019\n"
             "UT ZOOREC:ZOOR15508049637\nDA 2020-01-11\nER\n\nEF\n")
    assert records(plain, "zoorec.txt", tmp_path, format="wos")[0].page == "134-141"
    columns = ["PT", "UT", "TI", "AU", "SO", "PY", "VL", "IS", "PS", "BP", "EP", "DI"]
    rows = [["J", "BIOSIS:PREV201800928319", "The persistence of Black-backed Woodpeckers", "Tarbill, Gina L.",
             "Avian Conservation and Ecology", "2018", "13", "1", "Article No.: 16", "", "", ""],
            ["J", "MEDLINE:24340177", "Ensemble modeling to predict habitat suitability", "Latif, Quresh S",
             "Ecology and evolution", "2013", "3", "13", "4348-64", "", "", "10.1002/ece3.790"]]
    text = "\n".join("\t".join(row) + "\t" for row in [columns, *rows]) + "\n"
    assert [record.page for record in records(text, "savedrecs.txt", tmp_path)] == ["16", "4348-64"]


def test_an_authors_email_address_after_the_name_is_no_part_of_it(tmp_path):
    # BIOSIS and Zoological Record (Web of Science) write the corresponding author's address after the name, as
    # litsearchr's inst/extdata/zoorec.txt and borealis/WoS_biosis.txt exports have them.
    plain = ("FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nTI Nest site selection and nest survival\n"
             "AU Stillman, Andrew N. (andrew.stillman@uconn.edu) \n   Siegel, Rodney B.\nSO Condor\nPY 2019\n"
             "UT ZOOREC:ZOOR15512090342\nER\n\nEF\n")
    tabbed = ("PT\tUT\tTI\tAU\tSO\tPY\nJ\tBIOSIS:PREV201800796061\tCross-scale occupancy dynamics\t"
              "Tingley, Morgan W. (morgan.tingley@uconn.edu) ; Stillman, Andrew N.\tJournal of Animal Ecology\t2018\n")
    zoorec, = records(plain, "zoorec.txt", tmp_path, format="wos")
    biosis, = records(tabbed, "savedrecs.txt", tmp_path)
    assert [(name.family, name.given) for name in [*zoorec.author, *biosis.author]] == [
        ("Stillman", "Andrew N."), ("Siegel", "Rodney B."), ("Tingley", "Morgan W."), ("Stillman", "Andrew N.")]


def test_a_web_of_science_medline_records_accession_number_is_its_pmid(tmp_path):
    # Web of Science's MEDLINE database names a record by its PMID ("UT MEDLINE:24340177") and writes no PM, as
    # litsearchr's inst/extdata/borealis/WoS_medline.txt (tab-delimited) has it.
    plain = ("FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nTI Ensemble modeling to predict habitat "
             "suitability.\nAU Latif, Quresh S\nSO Ecology and evolution\nPY 2013\nUT MEDLINE:24340177\nER\n\nEF\n")
    tabbed = ("PT\tAN\tTI\tAU\tSO\tPY\tUT\nJ\t25567923\tDo male and female black-backed woodpeckers respond "
              "differently?\tPierson, Jennifer C\tEvolutionary applications\t2010\tMEDLINE:25567923\n"
              "J\t\tCross-scale occupancy dynamics\tTingley, Morgan W.\tJournal of Animal Ecology\t2018\t"
              "BIOSIS:PREV201800796061\n")
    (plain_record,) = records(plain, "medline.txt", tmp_path, format="wos")
    medline, biosis = records(tabbed, "savedrecs.txt", tmp_path)
    assert (plain_record.PMID, medline.PMID, biosis.PMID) == ("24340177", "25567923", None)
    assert medline.id == "pmid:25567923"
