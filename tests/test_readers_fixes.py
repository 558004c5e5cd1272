"""Reader fixes from reviewer C's attack on issue 11: a PMID only from the record's own fields, MEDLINE
records joined without a blank line, a BibTeX entry that lost its "@", repeated author names, titles
kept as written, CSL name suffixes, citation keys that do not depend on a file's order, UTF-16 without
a byte-order mark, overlong abstracts, and CSV exports of other tools (by header, or --columns)."""

from __future__ import annotations

import codecs
import re

import pytest
from conftest import tree_bytes

from sitegen.records.model import ABSTRACT_LIMIT
from sitegen.references import ReferenceProblem, decode, read_references, sniff
from sitegen.references.records import entry_record

LOCKED, FIRST = "2023-01-01T00:00:00Z", "2023-02-01T00:00:00Z"


def ris(*records: str) -> str:
    return "".join(f"TY  - JOUR\n{body}ER  - \n\n" for body in records)


# --------------------------------------------------------------------------- RIS: PMID from notes


def test_a_pmid_named_inside_a_note_is_another_articles_not_the_records():
    # A PubMed export's comment note names the commented-on article's PMID; the record's own is its AN.
    text = ris("TI  - Statins for stroke: a trial\nAN  - 31111111\nDB  - PubMed\n"
               "N1  - Comment in: Lancet. 2020;395(10220):e5. PMID: 32222222\n",
               "TI  - Statins: caution needed\nAN  - 32222222\nDB  - PubMed\n")
    assert [entry.get("pmid") for entry in read_references(text, "ris")] == ["31111111", "32222222"]
    (alone,) = read_references(ris("TI  - A trial\nN1  - Comment in: Lancet. 2020. PMID: 32222222\n"), "ris")
    assert alone.get("pmid") == ""


@pytest.mark.parametrize(("tags", "pmid"), [
    ("N1  - PMID: 29618526\n", "29618526"),  # Zotero's Extra field, and sitegen's own writer
    ("N1  - Some remark\nN1  - PMID: 29618526\n", "29618526"),  # one note line of several
    ("AN  - 31111111\nDB  - PubMed\nN1  - PMID: 29618526\n", "31111111"),  # the accession number comes first
    ("C2  - PMID: 29618526 PMCID: PMC5938574\n", "29618526"),  # an identifier field holds identifiers only
])
def test_a_note_gives_a_pmid_only_as_a_whole_line_and_never_over_the_accession_number(tags, pmid):
    assert read_references(ris(f"TI  - A trial\n{tags}"), "ris")[0].get("pmid") == pmid


# --------------------------------------------------------------------------- MEDLINE joined without blank lines


def test_medline_records_joined_without_a_blank_line_are_separate_records():
    text = ("PMID- 111\nTI  - First title\nFAU - Smith, John\nDP  - 2020\n   \n"
            "PMID- 222\nTI  - Second title\nFAU - Jones, Ann\nDP  - 2021\n"
            "PMID- 333\nTI  - Third title\nFAU - Brown, Bob\nDP  - 2022\n")
    entries = read_references(text, "medline")
    assert [(entry.id, entry.line, entry.get("title"), entry.get("year")) for entry in entries] == [
        ("111", 1, "First title", "2020"), ("222", 6, "Second title", "2021"), ("333", 10, "Third title", "2022")]


# --------------------------------------------------------------------------- BibTeX without "@"

BIBTEX_WITHOUT_AT = ("@article{one,\n  title = {First study},\n  year = {2020}\n}\n\n"
                     "article{two,\n  title = {Second study},\n  year = {2020}\n}\n\n"
                     "@article{three,\n  title = {Third study},\n  year = {2021}\n}\n")


def test_a_bibtex_entry_without_its_at_sign_is_a_problem_on_its_line():
    with pytest.raises(ReferenceProblem, match=r"entry that looks like one \('article\{two,'\): an entry starts "
                                               r"with '@'") as caught:
        read_references(BIBTEX_WITHOUT_AT, "bibtex")
    assert caught.value.line == 6
    skipped: list[tuple[int, str]] = []
    assert [entry.id for entry in read_references(BIBTEX_WITHOUT_AT, "bibtex", skipped=skipped)] == ["one", "three"]
    assert [line for line, _ in skipped] == [6]


def test_prose_between_bibtex_entries_stays_a_comment():
    text = "This file was exported on Monday (by hand).\n\n@article{one, title = {A}}\nEnd of file, thanks.\n"
    assert [entry.id for entry in read_references(text, "bibtex")] == ["one"]


def test_a_field_line_outside_any_entry_is_a_problem_too():
    with pytest.raises(ReferenceProblem, match="looks like one") as caught:
        read_references("@article{one, title = {A}}\n  title = {Lost},\n", "bibtex")
    assert caught.value.line == 2


# --------------------------------------------------------------------------- authors, titles, suffixes


def test_two_coauthors_written_alike_are_two_authors():
    (entry,) = read_references(ris("TI  - T\nAU  - Wang, Y.\nAU  - Wang, Y.\nAU  - Li, X.\n"), "ris")
    assert entry.get("author") == "Wang, Y. and Wang, Y. and Li, X."
    assert len(entry_record(entry).author) == 3


def test_one_author_list_written_under_both_au_and_a1_is_one_list():
    (entry,) = read_references(ris("TI  - T\nAU  - Wang, Y.\nAU  - Li, X.\nA1  - Wang, Y.\nA1  - Li, X.\n"), "ris")
    assert entry.get("author") == "Wang, Y. and Li, X."


def test_bibtex_dashes_in_a_title_stay_as_written_and_page_ranges_normalise():
    text = '@article{a, title = {HbA1c--a marker of \\"{u}ber---risk}, pages = {10--12}}'
    (entry,) = read_references(text, "bibtex")
    assert entry.get("title") == "HbA1c--a marker of über---risk"
    # the hyphen every other source writes, so a record exported as BibTeX and read back has its pages as they were
    assert entry.get("pages") == "10-12"
    (spaced,) = read_references('@article{a, title = {T}, pages = {e1 -- e5}}', "bibtex")
    assert spaced.get("pages") == "e1-e5"


@pytest.mark.parametrize("written, doi", [
    ("doi = {10.1016/j.jclinepi.\n         2020.01.001}", "10.1016/j.jclinepi.2020.01.001"),
    ("doi = {10.1016/S0895-\n  4356(20)30001-2}", "10.1016/s0895-4356(20)30001-2"),
    ("url = {https://doi.org/10.1000/\n  xyz123}", "10.1000/xyz123"),
    ("doi = {10.1000/a\n  10.1000/b}", None),  # two DOIs on two lines: which is the work's cannot be told
])
def test_a_bibtex_doi_wrapped_over_two_lines_is_that_doi(written, doi):
    # BibTeX reads the line break as a space, which no DOI holds: the DOI was left out, so `verify --bib` and
    # the loop looked the entry up by its title and never by the identifier it cites
    (entry,) = read_references(f"@article{{a, title = {{T}}, author = {{Smith, J}}, year = {{2020}},\n {written}}}",
                               "bibtex")
    assert entry_record(entry).DOI == doi


def test_a_bibtex_journal_naming_an_arxiv_preprint_gives_its_arxiv_id():
    # Google Scholar's BibTeX for a preprint, and DBLP's (journal CoRR, volume abs/<id>)
    text = ("@article{vaswani2017attention, title={Attention is all you need}, author={Vaswani, Ashish}, "
            "journal={arXiv preprint arXiv:1706.03762}, year={2017}}\n"
            "@article{DBLP:journals/corr/Vaswani17, title={Attention Is All You Need}, author={Ashish Vaswani}, "
            "journal={CoRR}, volume={abs/1706.03762v5}, year={2017}}\n"
            "@article{j, title={Attention in journals}, author={Doe, Jane}, journal={Journal of arXiv Studies}, "
            "year={2019}}\n")
    scholar, dblp, journal = (entry_record(entry) for entry in read_references(text, "bibtex"))
    for preprint in (scholar, dblp):
        assert (preprint.id, preprint.type, preprint.container_title) == ("arxiv:1706.03762", "article", "arXiv")
    assert journal.id.startswith("ref:") and journal.type == "article-journal"


def test_an_entry_known_only_by_its_pubmed_or_pmc_address_has_that_identifier():
    # a PubMed-based export's UR line, a screening tool's url column
    addresses = {"https://pubmed.ncbi.nlm.nih.gov/27753457/": "pmid:27753457",
                 "https://www.ncbi.nlm.nih.gov/pubmed/12345678?dopt=Abstract": "pmid:12345678",
                 "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC5000000/": "pmcid:PMC5000000",
                 "https://pmc.ncbi.nlm.nih.gov/articles/PMC5000001": "pmcid:PMC5000001"}
    text = "".join(f"TY  - JOUR\nTI  - Record {n}\nAU  - Smith, J\nPY  - 2020\nUR  - {url}\nER  - \n\n"
                   for n, url in enumerate([*addresses, "https://example.org/pubmed/12345"]))
    *known, elsewhere = (entry_record(entry) for entry in read_references(text, "ris"))
    assert [record.id for record in known] == list(addresses.values())
    assert all(record.URL for record in known) and elsewhere.id.startswith("ref:")  # another site's page: no PMID


def test_a_csl_name_suffix_is_kept():
    text = '[{"id": "a", "title": "T", "author": [{"family": "King", "given": "Martin", "suffix": "Jr."}]}]'
    (entry,) = read_references(text, "csl-json")
    assert entry.get("author") == "King, Jr., Martin"
    assert entry_record(entry).author[0].suffix == "Jr."


def test_citation_keys_do_not_depend_on_the_order_of_an_imported_file(sitegen, tmp_path):
    # Two records whose keys share a base ("smith2020statins"): which gets "-2" must not follow file order.
    records = ["TI  - Statins in the old\nAU  - Smith, John\nPY  - 2020\nDO  - 10.1000/a\n",
               "TI  - Statins in the young\nAU  - Smith, Jane\nPY  - 2020\nDO  - 10.1000/b\n"]
    keys = []
    for name, order in (("forward", records), ("backward", records[::-1])):
        review = tmp_path / name
        sitegen("init", review)
        sitegen("protocol", "lock", review, "--at", LOCKED)
        (tmp_path / f"{name}.ris").write_text(ris(*order), encoding="utf-8")
        assert sitegen("import", review, tmp_path / f"{name}.ris", "--at", FIRST)[0] == 0
        code, out, err = sitegen("export", review, "--format", "bibtex", "--records", "all")
        assert code == 0, err
        keys.append(sorted(re.findall(r"@\w+\{([^,]+),\n(?:.*\n)*?  doi = \{([^}]+)\}", out)))
    assert keys[0] == keys[1]
    assert {key for key, _ in keys[0]} == {"smith2020statins", "smith2020statins-2"}


# --------------------------------------------------------------------------- encodings, limits


@pytest.mark.parametrize("order", ["le", "be"])
def test_utf16_without_a_byte_order_mark_names_the_encoding_to_give(order):
    data = ris("TI  - Caf\u00e9 study\n").encode(f"utf-16-{order}")
    with pytest.raises(ReferenceProblem, match=f"UTF-16 text without a byte-order mark .*--encoding utf-16-{order}"):
        decode(data)
    assert decode(data, f"utf-16-{order}").startswith("TY  - JOUR\nTI  - Caf\u00e9 study")
    assert decode(codecs.BOM_UTF16_LE + ris("TI  - A\n").encode("utf-16-le")).startswith("TY  - JOUR")


def test_an_abstract_longer_than_a_record_holds_is_left_out_with_a_warning(sitegen, tmp_path):
    # Left out, not cut: a cut abstract would be taken for the whole one, and a passage quoted from its missing
    # end for one the record contradicts. As a provider's (test_faults).
    (entry,) = read_references(ris(f"TI  - Long\nAB  - {'word ' * (ABSTRACT_LIMIT // 4)}\n"), "ris")
    notes: list[str] = []
    record = entry_record(entry, None, notes)
    assert record.abstract is None and record.title == "Long"
    assert notes == [f"the abstract of the entry is {len(entry.get('abstract')):,} characters long, more than an "
                     "abstract can be (200,000); the record is kept without it"]
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", LOCKED)
    (tmp_path / "long.ris").write_text(ris(f"TI  - Long\nAB  - {'word ' * (ABSTRACT_LIMIT // 4)}\n"),
                                       encoding="utf-8")
    code, out, err = sitegen("import", review, tmp_path / "long.ris", "--at", FIRST)
    assert code == 0, err
    assert "line 1: entry 'ris-1': the abstract of the entry is" in out + err


# --------------------------------------------------------------------------- CSV exports of other tools

# Headers as the vendors document them and public importers of their files write them (CoLRev's PubMed
# heuristic, Scopus parsers): no real export with a licence to copy was found, so the rows are written
# for the test, the headers are the vendors'.
PUBMED_CSV = ("PMID,Title,Authors,Citation,First Author,Journal/Book,Publication Year,Create Date,PMCID,NIHMS ID,DOI\n"
              '30000011,"Seed oil of chayote cultivars","Lira R, de Oliveira Filho ASB, Cruz A.",'
              '"Econ Bot. 2021 Mar;75(2):101-110.","Lira R","Econ Bot","2021","2021/01/04","PMC123","","10.1000/eb.21"\n')
SCOPUS_CSV = ('\ufeff"Authors","Author full names","Author(s) ID","Title","Year","Source title","Volume","Issue",'
              '"Art. No.","Page start","Page end","Page count","Cited by","DOI","Link","Abstract","PubMed ID","ISSN",'
              '"Language of Original Document","Document Type","EID"\n'
              '"Smolen J.; Landew\u00e9 R.B.M.","Smolen, Josef (1); Landew\u00e9, Robert (2)","1;2","EULAR recs",'
              '"2020","Ann Rheum Dis","79","6","","685","699","15","3","10.1136/x","https://www.scopus.com/x",'
              '"An abstract","32000001","00034967","English","Article","2-s2.0-85000000001"\n')
WOS_TAB = ("PT\tAU\tAF\tTI\tSO\tLA\tDT\tDE\tAB\tSN\tPY\tVL\tIS\tBP\tEP\tDI\tPM\tUT\t\n"
           'J\tSmith, J; Jones, A\tSmith, John; Jones, Ann\tA "quoted" title\tJ TEST\tEnglish\tArticle\ta; b\t'
           "Abstract\t1234-5678\t2020\t3\t2\t10\t19\t10.1/x\t123\tWOS:000000000000001\t\n")
COVIDENCE_CSV = ("Title,Authors,Abstract,Published Year,Published Month,Journal,Volume,Issue,Pages,Accession Number,"
                 "DOI,Ref,Covidence #,Study,Notes,Tags\n"
                 '"A trial","Smith AB, Jones C","Abs",2019,,"J Med",4,1,1-9,,10.1/cov,,#12,"Smith 2019",,\n')
RAYYAN_CSV = ("key,title,authors,journal,issn,volume,issue,pages,year,publisher,url,abstract,notes,doi,keywords\n"
              'rayyan-1,"A trial","Smith, J and Jones, A","J Med",,4,1,1-9,2019,,,"Abs",'
              '"RAYYAN-INCLUSION: {""Kofi""=>""Included""}",10.1/ray,\n')


@pytest.mark.parametrize(("text", "expected"), [
    (PUBMED_CSV, {"ID": "30000011", "pmid": "30000011", "pmcid": "PMC123", "doi": "10.1000/eb.21", "year": "2021",
                  "author": "Lira, R and de Oliveira Filho, ASB and Cruz, A", "journal": "Econ Bot",
                  "database": "PubMed"}),
    (SCOPUS_CSV, {"ID": "2-s2.0-85000000001", "author": "Smolen, Josef and Landew\u00e9, Robert",  # full names
                  "pages": "685-699",
                  "journal": "Ann Rheum Dis", "number": "6", "pmid": "32000001", "language": "English",
                  "database": "Scopus", "url": "https://www.scopus.com/x"}),
    (WOS_TAB, {"ID": "WOS:000000000000001", "title": 'A "quoted" title', "author": "Smith, John and Jones, Ann",  # AF, the full names
               "pages": "10-19", "doi": "10.1/x", "pmid": "123", "journal": "J TEST"}),
    (COVIDENCE_CSV, {"ID": "#12", "author": "Smith, AB and Jones, C", "year": "2019", "doi": "10.1/cov"}),
    (RAYYAN_CSV, {"ID": "rayyan-1", "author": "Smith, J and Jones, A", "label": '{"Kofi"=>"Included"}',
                  "number": "1"}),
])
def test_known_csv_exports_are_read_by_their_header(text, expected, tmp_path):
    assert sniff(text.removeprefix("\ufeff")) == "csv"
    path = tmp_path / "export.txt"  # by content, not suffix: Web of Science names its file savedrecs.txt
    path.write_text(text, encoding="utf-8")
    (entry,) = read_references(path)
    assert {name: entry.get(name) for name in expected} == expected


@pytest.mark.parametrize(("accession", "pmid"), [
    ("31234567", "31234567"),  # a reference Covidence imported from PubMed
    ("", ""),
    ("2014704374", ""),  # Embase's accession number: ten digits
    ("L604093718", ""),  # Embase's, as Embase.com writes it
    ("107853421", ""),  # CINAHL's: nine digits
    ("2015-12345-001", ""),  # PsycINFO's
    ("WOS:000311971500044", ""),
])
def test_covidences_accession_number_is_the_pmid_only_when_it_is_one(accession, pmid, tmp_path):
    path = tmp_path / "covidence.csv"
    path.write_text(COVIDENCE_CSV.replace(",1-9,,10.1/cov,", f",1-9,{accession},10.1/cov,"), encoding="utf-8")
    (entry,) = read_references(path)
    assert entry.get("pmid") == pmid and entry.get("doi") == "10.1/cov"


MAPPED = "key,Article Title,Year,Writers\nk1,Statins in the old,2020,\"Smith, John\"\nk2,Statins in the young,2021,\n"


def test_columns_maps_a_csv_for_dedupe_and_import(sitegen, tmp_path):
    source = tmp_path / "mapped.csv"
    source.write_text(MAPPED, encoding="utf-8")
    code, _, err = sitegen("dedupe", source, "--out", tmp_path / "out.csv", "--columns",
                           "ID=key, title=Article Title, author=Writers")
    assert code == 0, err
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", LOCKED)
    code, out, err = sitegen("import", review, source, "--at", FIRST, "--columns", "title=Article Title,ID=key")
    assert code == 0, err
    assert "2" in out


@pytest.mark.parametrize(("columns", "message"), [
    ("titel=Article Title", "'titel' is not an entry field"),
    ("title", "'title' is not FIELD=COLUMN"),
    ("title=A,title=B", "'title' is given twice"),
])
def test_a_bad_column_mapping_is_refused_and_nothing_is_written(sitegen, tmp_path, columns, message):
    source = tmp_path / "mapped.csv"
    source.write_text(MAPPED, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = sitegen("dedupe", source, "--out", out / "o.csv", "--columns", columns)
    assert code == 2 and message in err
    assert tree_bytes(out) == {}


def test_a_mapped_column_the_file_lacks_is_named_with_the_files_columns(sitegen, tmp_path):
    source = tmp_path / "mapped.csv"
    source.write_text(MAPPED, encoding="utf-8")
    code, _, err = sitegen("dedupe", source, "--out", tmp_path / "o.csv", "--columns", "title=Name")
    assert code != 0 and f"{source}:1: no column 'Name' (columns: key, Article Title, Year, Writers)" in err
    assert not (tmp_path / "o.csv").exists()


def test_a_header_with_only_some_of_a_known_exports_columns_is_not_taken_for_it():
    assert sniff("Title,Authors\nA,B\n") is None
    assert sniff("PMID,Title\n1,A\n") is None


def test_a_column_mapping_with_another_format_is_refused():
    from sitegen.references import ReferenceProblem, read_references
    with pytest.raises(ReferenceProblem, match="a column mapping is for CSV files, and this one is read as ris"):
        read_references("TY  - JOUR\nTI  - One\nER  - \n", "ris", columns={"title": "Title"})


def test_scopus_document_types_become_types_a_notice_is_told_by():
    from sitegen.records.dedupe import to_work
    from sitegen.references import read_references
    from sitegen.references.records import entry_record
    header = '"Authors","Title","Year","Source title","Volume","Issue","Page start","Page end","DOI","Document Type","EID"\n'
    text = header + ('"Smith J.","Stroke units in rural hospitals",2020,"Stroke",51,2,10,15,,"Conference Paper","2-s2.0-1"\n'
                     '"Smith J.","Stroke units in rural hospitals",2020,"Stroke",51,2,10,15,,"Erratum","2-s2.0-2"\n')
    paper, erratum = read_references(text, "csv")
    assert entry_record(paper).type == "paper-conference"
    assert entry_record(erratum).custom.publication_types == ["erratum"]
    assert to_work(erratum).kind == "erratum" and to_work(paper).meeting


def test_content_keys_tell_apart_what_differs_only_in_its_address_and_agree_across_markup():
    from sitegen.references import read_references
    from sitegen.references.records import entry_record
    one = "TY  - JOUR\nTI  - Correction\nJO  - Stroke\nPY  - 2021\nUR  - https://example.org/{n}\nER  - \n"
    first, second = (entry_record(entry) for entry in read_references(one.format(n=1) + one.format(n=2), "ris"))
    assert first.id != second.id  # two notices alike but for their address: two records
    tex = read_references("@article{a, title = {Effects of CO$_2$ on $\\beta$-amyloid}, year = {2020},"
                          " journal = {Brain {\\&} Research}}", "bibtex")[0]
    ris = read_references("TY  - JOUR\nTI  - Effects of CO2 on β-amyloid\nPY  - 2020\nJO  - Brain &amp; Research\n"
                          "ER  - \n", "ris")[0]
    assert entry_record(tex).id == entry_record(ris).id


def test_a_known_export_missing_a_usual_column_is_said():
    from sitegen.references import read_references
    warnings: list[str] = []
    header = "Authors,Title,Publication Year,Source title,Digital Object Identifier,EID\n"
    read_references(header + '"Smith J.",A trial,2020,Lancet,10.1/x,2-s2.0-1\n', "csv", warnings)
    assert any("'Year'" in warning and "'DOI'" in warning and "--columns" in warning for warning in warnings)
