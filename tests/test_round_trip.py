"""`sitegen export` -> `sitegen import` into a fresh review -> `sitegen export`: the same file, but for what the
format or an import cannot carry (listed in each test); and the reader rules that make it so, which hold
for reference managers' files too."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from conftest import EXAMPLE, FIXTURES, tree_bytes
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sitegen.records.entry import NO_VALUE_IN, Entry
from sitegen.records.markup import plain_text
from sitegen.records.model import (
    CslName,
    NoticeOf,
    Record,
    RecordMeta,
    Reinstatement,
    StatedVersion,
    Update,
    visible_text,
)
from sitegen.records.notices import notice_kind
from sitegen.records.pages import as_range
from sitegen.references import read_references
from sitegen.references.fields import iso_date
from sitegen.references.records import CSL_TYPE_NAMES, entry_record
from sitegen.site.exports import records_bibtex, records_csl_json, records_csv, records_ris
from sitegen.sources import arxiv, crossref, europepmc, pubmed
from sitegen.sources.base import parse_xml

LOCKED, IMPORTED = "2023-01-01T00:00:00Z", "2023-02-01T00:00:00Z"
# Screening outcomes are the review's decisions, not the records': a fresh review has made none.
CSV_DECISIONS = ("title_abstract", "full_text")
# Where sitegen found a record and what the registries said of it are the review's provenance, which only
# CSL-JSON writes (under `custom`); an import names its own source instead.
PROVENANCE = ("sources", "publication_types", "open_access", "license", "fulltext_url")


def exported(sitegen, review: Path, format: str, out: Path) -> Path:
    code, _, err = sitegen("export", review, "--format", format, "--records", "all", "--out", out)
    assert code == 0, err
    return out


def review_of(sitegen, review: Path, export: Path, format: str) -> Path:
    """A new review, its protocol locked, that imported `export`."""
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", LOCKED)
    code, _, err = sitegen("import", review, export, "--format", format, "--at", IMPORTED)
    assert code == 0, err
    return review


def without(text: str, format: str) -> object:
    """The export without what its round trip cannot carry (see CSV_DECISIONS, PROVENANCE)."""
    if format == "csv":
        return [{column: cell for column, cell in row.items() if column not in CSV_DECISIONS}
                for row in csv.DictReader(io.StringIO(text))]
    if format == "csl-json":
        items = json.loads(text)
        for item in items:
            item["custom"] = {key: value for key, value in item["custom"].items() if key not in PROVENANCE}
        return items
    return text


@pytest.mark.parametrize("format", ["ris", "bibtex", "csl-json", "csv"])
def test_an_export_imported_into_a_fresh_review_exports_the_same(sitegen, example_copy, tmp_path, format):
    """RIS and BibTeX come back byte for byte; CSL-JSON but for the review's provenance, CSV but for its
    screening decisions. (prisma2020-csv is a flow diagram's counts, not references: nothing to import.)
    A retracted record is among them: each format says so, and the import reads it back."""
    records = (example_copy / "records.jsonl").read_text(encoding="utf-8").splitlines()
    retracted = json.loads(records[3])
    retracted["custom"]["retracted"] = True
    records[3] = json.dumps(retracted, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    (example_copy / "records.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    first = exported(sitegen, example_copy, format, tmp_path / f"first.{format}")
    review = review_of(sitegen, tmp_path / "fresh", first, format)
    second = exported(sitegen, review, format, tmp_path / f"second.{format}").read_text(encoding="utf-8")
    if format in ("ris", "bibtex"):
        assert second == first.read_text(encoding="utf-8")
    assert without(second, format) == without(first.read_text(encoding="utf-8"), format)


def test_update_refuses_a_time_not_after_the_latest_import(sitegen, example_copy, tmp_path):
    """An update at the time of an import (or before it) would be one run with it in PRISMA."""
    export = exported(sitegen, EXAMPLE, "ris", tmp_path / "included.ris")
    code, _, err = sitegen("import", example_copy, export, "--at", "2023-05-01T00:00:00Z")
    assert code == 0, err
    before = tree_bytes(example_copy)
    code, _, err = sitegen("update", example_copy, "--at", "2023-05-01T00:00:00Z", "--snapshots", "replay")
    assert code == 1 and "is not after the latest search run or import (2023-05-01T00:00:00Z)" in err
    # before it (and after the example's last run, 2023-04-17): the ledger keeps time order
    code, _, err = sitegen("update", example_copy, "--at", "2023-04-20T00:00:00Z", "--snapshots", "replay")
    assert code == 1 and "earlier than the latest ledger event (2023-05-01T00:00:00Z)" in err
    assert tree_bytes(example_copy) == before


# --------------------------------------------------------------------------- RIS

RIS = "TY  - JOUR\nTI  - A title\nAU  - Smith, Jo\n{tags}ER  - \n"


@pytest.mark.parametrize(("tags", "date", "url", "arxiv", "openalex"), [
    ("PY  - 2008\nDA  - 2008/07/16/\n", "2008-07-16", "", "", ""),
    ("PY  - 2008///\n", "2008", "", "", ""),
    ("PY  - 2008/07//\n", "2008-07", "", "", ""),
    ("PY  - 2008\nDA  - 2010/07/16/\n", "2008", "", "", ""),  # a DA of another year is no date of the record
    ("PY  - 2008\nDA  - 2008/13/40/\n", "2008", "", "", ""),  # nor a month past December
    ("PY  - 2008\nUR  - https://arxiv.org/abs/2101.00001\nUR  - https://openalex.org/W123\nUR  - https://a.org/1\n",
     "2008", "https://a.org/1", "https://arxiv.org/abs/2101.00001", "https://openalex.org/W123"),
    ("PY  - 2008\nUR  - https://a.org/1\nL2  - https://b.org/2\n", "2008", "https://a.org/1", "", ""),
])
def test_ris_dates_and_addresses(tags, date, url, arxiv, openalex):
    (entry,) = read_references(RIS.format(tags=tags), "ris")
    assert (entry.get("date"), entry.get("url"), entry.get("arxiv"), entry.get("openalex")) == \
        (date, url, arxiv, openalex)


def test_a_ris_export_of_sitegens_names_the_pmid_as_zotero_does_and_a_bare_accession_number_is_no_pmid():
    record = Record(id="pmid:18632543", PMID="18632543", title="A title", issued={"date-parts": [[2008, 7, 16]]})
    text = records_ris([record])
    assert "AN  - 18632543\n" in text and "N1  - PMID: 18632543\n" in text  # EndNote's place, and Zotero's
    assert entry_record(read_references(text, "ris")[0]) == record
    # the accession number alone, from an export that names no database, may be Embase's or CINAHL's
    (entry,) = read_references(text.replace("N1  - PMID: 18632543\n", ""), "ris")
    assert entry.get("pmid") == ""


@pytest.mark.parametrize(("author", "names"), [
    ("Bill and Melinda Gates Foundation", [CslName(literal="Bill and Melinda Gates Foundation")]),
    ("Anderson, Sandra", [CslName(family="Anderson", given="Sandra")]),  # "and" inside a word splits nothing
])
def test_a_ris_organisation_named_with_and_stays_one_author(author, names):
    (entry,) = read_references(RIS.format(tags="").replace("Smith, Jo", author), "ris")
    assert entry_record(entry).author == names


# --------------------------------------------------------------------------- dates and CSL-JSON


@pytest.mark.parametrize(("parts", "date"), [
    (["2008", "07", "16"], "2008-07-16"), ([2008, 7], "2008-07"), (["2008", "", "16"], "2008"),
    (["08", "07"], ""), (["2008", "00"], "2008"), (["2008", "2", "30x"], "2008-02"), ([], ""),
])
def test_iso_date(parts, date):
    assert iso_date(parts) == date


@pytest.mark.parametrize(("fields", "issued"), [
    ({"year": "2008", "date": "2008-07-16", "month": "jul"}, [2008, 7, 16]),
    ({"year": "2008", "date": "2009-07-16"}, [2008]),  # a date of another year than the entry's is not taken
    ({"year": "2008", "month": "Jul"}, [2008, 7]),
    ({"year": "2008", "date": "2008", "month": "Jul"}, [2008, 7]),  # a date of the year alone, and the month apart
    ({"date": "2008-07-16"}, None),  # nor one without a year to agree with
])
def test_entry_record_takes_the_full_date(fields, issued):
    record = entry_record(Entry("x", {"ENTRYTYPE": "article", "title": "A title", **fields}, 1))
    assert (record.issued.date_parts[0] if record.issued else None) == issued


def test_csl_json_reads_sitegens_custom_ids_and_the_full_date():
    text = json.dumps([{"id": "a", "type": "article-journal", "title": "A title", "issued": {"date-parts": [[2021, 3, 9]]},
                        "custom": {"openalex": "W1234567890", "arxiv": "2101.00001", "sources": ["openalex"]}}])
    (entry,) = read_references(text, "csl-json")
    assert (entry.get("openalex"), entry.get("arxiv"), entry.get("date")) == ("W1234567890", "2101.00001", "2021-03-09")
    record = entry_record(entry)
    assert record.identifiers() == {"openalex": "W1234567890", "arxiv": "2101.00001"}
    assert record.custom.sources == []  # where the file's writer found it is not the import's provenance


# --------------------------------------------------------------------------- sitegen's CSV


def test_sitegens_records_csv_is_read_by_its_header():
    record = Record(id="10.1234/a", DOI="10.1234/a", title="=SUM(A1) is no formula",
                    author=[CslName(literal="Bill and Melinda Gates Foundation"), CslName(family="Smith", given="Jo")],
                    issued={"date-parts": [[2021]]}, issue="3", abstract="-1 line\n+2 lines")
    text = records_csv([record], {})
    assert "\"'=SUM(A1)" in text  # guarded for spreadsheets
    (entry,) = read_references(text)
    assert (entry.id, entry.get("number"), entry.get("title")) == ("10.1234/a", "3", record.title)
    again = entry_record(entry)
    assert (again.author, again.abstract, again.id) == (record.author, record.abstract, record.id)


def test_another_csv_with_an_id_column_is_read_as_written():
    (entry,) = read_references("ID,title,authors\n1,'=x,A and B\n")
    assert (entry.get("title"), entry.get("authors")) == ("'=x", "A and B")


def test_a_retraction_said_by_medline_or_scopus_is_read():
    # PubMed types a retracted article "Retracted Publication" (a retraction notice is "Retraction of
    # Publication": no retracted work); Scopus gives it the document type "Retracted".
    medline = ("PMID- 123456\nTI  - A retracted study of rats.\nFAU - Doe, Jane\nDP  - 2019\nJT  - Hippocampus\n"
               "PT  - Journal Article\nPT  - {}\n")
    retracted = entry_record(read_references(medline.format("Retracted Publication"), "medline")[0])
    notice = entry_record(read_references(medline.format("Retraction of Publication"), "medline")[0])
    assert (retracted.custom.retracted, notice.custom.retracted) == (True, False)
    scopus = ('Authors,Title,Year,Source title,DOI,Document Type,EID\n"Doe J.",A study,2019,Hippocampus,'
              '10.1234/x,{},2-s2.0-1\n')
    assert [entry_record(read_references(scopus.format(kind), "csv")[0]).custom.retracted
            for kind in ("Retracted", "Article")] == [True, False]


def test_the_notices_a_medline_record_lists_against_its_article_are_read():
    """PubMed's MEDLINE format names the notices against an article as PubMed's XML does (its CommentsCorrections):
    "RIN - <the retraction's citation>. PMID: 24990753". An imported record left them out: its erratum and
    expression of concern were said nowhere, and a retraction told only so was no retraction."""
    medline = ("PMID- 123456\nTI  - A study of rats.\nFAU - Doe, Jane\nDP  - 2019\nJT  - Hippocampus\n"
               "PT  - Journal Article\nEIN - Hippocampus. 2020 Jan;30(1):90. doi: 10.1002/hipo.1. PMID:\n"
               "      31111111.\nECI - Hippocampus. 2021;31:1. PMID: 32222222\nEIN - Hippocampus. 2020;30:91.\n"
               "CIN - Hippocampus. 2020;30:92. PMID: 33333333\n")
    record = entry_record(read_references(medline, "medline")[0])
    assert not record.custom.retracted and record.custom.updates == [
        Update(kind="correction", pmid="31111111"), Update(kind="correction"),
        Update(kind="expression-of-concern", pmid="32222222")]
    for tag in ("RIN", "RRI"):
        retracted = entry_record(read_references(medline + f"{tag} - Hippocampus. 2022;32:1. PMID: 34444444\n",
                                                 "medline")[0])
        assert retracted.custom.retracted
        assert Update(kind="retraction", pmid="34444444") in retracted.custom.updates


def test_the_work_a_medline_notice_is_about_is_read_and_marked():
    """MEDLINE names the work a notice is about as PubMed's XML does: "EFR - <its citation>. PMID: 39293462" (Erratum
    For; ROF Retraction Of, ECF Expression of Concern For), the citation holding the work's DOI or not. An imported
    notice left it out, so the work it corrects or retracts was never marked."""
    from sitegen.records.identity import deduplicate

    medline = ("PMID- 39709208\nTI  - Department of Error.\nDP  - 2025 Dec\nJT  - Lancet (London, England)\n"
               "LID - 10.1016/S0140-6736(24)02716-8 [doi]\nPT  - Journal Article\nPT  - Published Erratum\n"
               "EFR - Lancet. 2024 Sep 28;404(10459):1227-1239. doi: 10.1016/S0140-6736(24)01653-2. PMID:\n"
               "      39293462.\nROF - Hippocampus. 2019;29:1. PMID: 31111111\nECF - Hippocampus. 2019;29:2.\n"
               "CON - Hippocampus. 2019;29:3. PMID: 31111113\n")
    notice = entry_record(read_references(medline, "medline")[0])
    assert notice.custom.notice_of == [NoticeOf(kind="retraction", pmid="31111111"),
                                       NoticeOf(kind="correction", doi="10.1016/s0140-6736(24)01653-2",
                                                pmid="39293462")]
    assert not notice.custom.retracted and notice.custom.updates == []
    work = Record(id="pmid:31111111", title="A study of rats", PMID="31111111", custom=RecordMeta(sources=["pubmed"]))
    marked = next(r for r in deduplicate([work, notice]).records if r.id == work.id)
    assert marked.custom.retracted and marked.custom.updates == [
        Update(kind="retraction", doi="10.1016/s0140-6736(24)02716-8", pmid="39709208")]


@pytest.mark.parametrize("format", ["ris", "bibtex", "csv", "csl-json"])
def test_a_notice_naming_its_work_by_pmid_is_written_and_read_back_by_every_export(format):
    """A notice naming its work by PMID alone (PubMed's "Erratum for") is written "Correction notice for:
    PMID:39293462" and read back so; one naming it by DOI and PMID, both. Before, every export needed its DOI."""
    _, work = notice_and_work()
    notice = Record(id="pmid:39709208", title="Department of Error.", PMID="39709208", custom=RecordMeta(
        publication_types=["Published Erratum"], notice_of=[
            NoticeOf(kind="correction", pmid="39293462", date=[2024, 12, 20]),
            NoticeOf(kind="retraction", doi=work.DOI, pmid="39293463")]))
    written = WRITERS[format]([notice])
    if format != "csl-json":
        assert "Correction notice for: PMID:39293462 (2024-12-20)" in written
        assert f"Retraction notice for: doi:{work.DOI} PMID:39293463" in written
    [again] = [entry_record(entry) for entry in read_references(written, format)]
    assert again.PMID == "39709208" and again.custom.notice_of == notice.custom.notice_of
    assert WRITERS[format]([again]) == written or format == "csv"


TYPES = ("article", "book", "webpage", "dataset", "manuscript", "software", "patent", "standard")
WRITERS = {"ris": records_ris, "bibtex": records_bibtex, "csv": lambda records: records_csv(records, {}),
           "csl-json": records_csl_json}


@pytest.mark.parametrize("format", WRITERS)
def test_a_record_of_any_type_comes_back_as_that_type(format):
    # Each format writes each record's type so that the reader reads it back: a preprint, a book, a web page or a
    # dataset without any identifier comes back as itself, with the same content key (its id), not as an article
    # with another.
    written = [Record(id="ref:0000000000000000", type=kind, title=f"A {kind} about rats", container_title="Rats",
                      issued={"date-parts": [[2020]]}, author=[CslName(family="Doe", given="Jane")],
                      custom={"ref": "0000000000000000"}) for kind in TYPES]
    records = [entry_record(entry) for entry in read_references(records_csl_json(written), "csl-json")]
    again = [entry_record(entry) for entry in read_references(WRITERS[format](records), format)]
    assert [record.type for record in again] == list(TYPES)
    assert again == records


# The CSL types RIS or BibTeX have no type of their own for, and the closest type each is written as and read back
# as (README: export); every other type sitegen reads comes back as itself, and every type through CSV and CSL-JSON.
NAMED_BY_NEITHER = ("bill", "broadcast", "classic", "collection", "document", "event", "figure", "graphic", "hearing",
                    "interview", "legislation", "map", "pamphlet", "performance", "periodical", "regulation", "song",
                    "speech", "treaty")
LOSSY_TYPES = {
    "ris": {"entry": "entry-encyclopedia", "post": "webpage", "review": "article-journal",
            "review-book": "article-journal", "preprint": "article", **dict.fromkeys(NAMED_BY_NEITHER, "article")},
    "bibtex": {"entry": "entry-encyclopedia", "entry-dictionary": "entry-encyclopedia", "post": "webpage",
               "post-weblog": "webpage", "article-magazine": "article-journal", "article-newspaper": "article-journal",
               "review": "article-journal", "review-book": "article-journal", "musical_score": "article",
               "personal_communication": "article", "preprint": "article",
               **dict.fromkeys(NAMED_BY_NEITHER, "article")},
    "csv": {},
    "csl-json": {},
}
CSL_SCHEMA_TYPES = json.loads((FIXTURES / "csl" / "csl-data.json").read_text())["items"]["properties"]["type"]["enum"]


@pytest.mark.parametrize("container", ["Rats", None], ids=["in-a-container", "alone"])
@pytest.mark.parametrize("format", LOSSY_TYPES)
def test_each_csl_type_comes_back_as_itself_or_through_ris_and_bibtex_the_closest_type(format, container):
    # An encyclopedia's or dictionary's entry, a blog post, a magazine or newspaper article, a film, a legal case
    # (Zotero's CSL-JSON gives each so) went out as RIS's GEN or a @misc and came back as an article, with another
    # content key: RIS names each (ENCYC, DICT, BLOG, MGZN, NEWS, MPCT, CASE, PCOMM, MUSIC) and biblatex some.
    # A peer review (Crossref's "review"), a map or a document came back from CSV and CSL-JSON as a journal
    # article (or, alone, an article): their type was read only from a file that could not mean another sense.
    kinds = sorted({*CSL_SCHEMA_TYPES, *CSL_TYPE_NAMES})  # every type CSL names, and those sitegen reads besides
    written = [Record(id=f"ref:{number:016x}", type=kind, title=f"A {kind} about rats", container_title=container,
                      issued={"date-parts": [[2020]]}, custom={"ref": f"{number:016x}"})
               for number, kind in enumerate(kinds)]
    again = [entry_record(entry) for entry in read_references(WRITERS[format](written), format)]
    assert {kind: record.type for kind, record in zip(kinds, again, strict=True)} == \
        {kind: LOSSY_TYPES[format].get(kind, kind) for kind in kinds}
    if container:
        assert [record.container_title for record in again] == [container] * len(kinds)


@pytest.mark.parametrize("kind", ["Review", "Document", "Event"])
def test_another_csvs_type_column_is_read_as_a_csl_type_only_where_it_can_mean_nothing_else(kind):
    # A CSV of another tool with a `type` column: "Review" there is a review article, no peer review (CSL's
    # "review"); a CSL type that names one thing only ("article-newspaper") is read as that.
    text = f"ID,title,journal,type\n1,Rats in context,Hippocampus,{kind}\n2,Rats in print,The Times,article-newspaper\n"
    assert [entry_record(entry).type for entry in read_references(text, "csv")] == \
        ["article-journal", "article-newspaper"]


ARXIV_FEED = FIXTURES / "arxiv" / "q_testing_s0_m10_bc5a6c384fe9.atom.xml"


@pytest.mark.parametrize(("format", "preprint", "web_page"), [("ris", "TY  - UNPB", "TY  - ELEC"),
                                                               ("bibtex", "@misc{", "@online{")])
def test_preprints_and_web_pages_are_written_as_reference_managers_read_them(format, preprint, web_page):
    # RIS's unpublished work and web page (EndNote's and Zotero's), BibTeX's @misc for a preprint (as arXiv writes
    # one) and biblatex's @online: neither a generic entry nor a journal article.
    preprints = [arxiv.entry_to_record(entry) for entry in
                 parse_xml(ARXIV_FEED.read_bytes()).findall("atom:entry", arxiv.NS)]
    page = Record(id="ref:0000000000000000", type="webpage", title="Rat care guidelines", URL="https://example.org/rats",
                  issued={"date-parts": [[2021]]}, custom={"ref": "0000000000000000"})
    text = WRITERS[format]([*preprints, page])
    assert text.count(preprint) == len(preprints) and text.count(web_page) == 1
    again = [entry_record(entry) for entry in read_references(text, format)]
    assert [record.type for record in again] == [*(["article"] * len(preprints)), "webpage"]
    assert [record.id for record in again[:-1]] == [record.id for record in preprints]


def test_a_records_csv_written_before_the_type_or_date_column_or_with_a_column_added_is_still_sitegens():
    from sitegen.references.table import ADDED_COLUMNS, SITEGEN_COLUMNS, is_sitegens_header
    assert SITEGEN_COLUMNS[-len(ADDED_COLUMNS):] == list(ADDED_COLUMNS)
    assert ADDED_COLUMNS == ("type", "date", "publication_types", "updates", "notice_of")
    every = range(len(ADDED_COLUMNS) + 1)
    assert all(is_sitegens_header(SITEGEN_COLUMNS[:len(SITEGEN_COLUMNS) - added]) for added in every)
    assert all(is_sitegens_header([*SITEGEN_COLUMNS[:len(SITEGEN_COLUMNS) - added], "my notes"]) for added in every)
    assert not is_sitegens_header(SITEGEN_COLUMNS[1:])


@pytest.mark.parametrize("added_since", ["date", "type"], ids=["before-date", "before-type-and-date"])
def test_a_persons_own_column_named_as_a_later_sitegen_column_is_theirs_not_read(added_since):
    # An export written before sitegen wrote `date` (or `type`), with a column of the reviewer's own named `date`
    # (when they screened it, say) added after: refused as "no ID column" since the date column came; now read by
    # the export's own columns, the reviewer's column left unread rather than taken for the record's date.
    from sitegen.references.table import SITEGEN_COLUMNS
    preprints = [arxiv.entry_to_record(entry) for entry in
                 parse_xml(ARXIV_FEED.read_bytes()).findall("atom:entry", arxiv.NS)]
    rows = list(csv.reader(io.StringIO(records_csv(preprints, {}))))
    kept = SITEGEN_COLUMNS.index(added_since)
    assert rows[0] == SITEGEN_COLUMNS
    older = [[*row[:kept], "1999-12-31"] for row in rows[1:]]
    written = io.StringIO()
    csv.writer(written, lineterminator="\n").writerows([[*SITEGEN_COLUMNS[:kept], "date"], *older])
    again = [entry_record(entry) for entry in read_references(written.getvalue(), "csv")]
    assert [record.id for record in again] == [record.id for record in preprints]
    assert [record.issued.year for record in again] == [record.issued.year for record in preprints]
    assert all(len(record.issued.date_parts[0]) == 1 for record in again)  # the year column's, not 1999-12-31


def test_the_records_csv_keeps_the_full_date_beside_the_year():
    # Real arXiv preprints, each dated to the day: the date comes back whole, not as its year alone.
    preprints = [arxiv.entry_to_record(entry) for entry in
                 parse_xml(ARXIV_FEED.read_bytes()).findall("atom:entry", arxiv.NS)]
    assert all(len(record.issued.date_parts[0]) == 3 for record in preprints)
    text = records_csv(preprints, {})
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [row["year"] for row in rows] == [str(record.year) for record in preprints]  # for spreadsheets, as it was
    again = [entry_record(entry) for entry in read_references(text, "csv")]
    assert [record.issued for record in again] == [record.issued for record in preprints]


@pytest.mark.parametrize("format", ["ris", "bibtex", "csl-json", "csv"])
def test_imported_references_without_identifiers_keep_their_ids_through_an_export(sitegen, tmp_path, format):
    # Real exports, some of their references with no identifier (a content key id) and an ISSN a record does
    # not hold: exported and imported into a fresh review, each record keeps its id, so the export is the same.
    first_review = tmp_path / "first"
    sitegen("init", first_review)
    sitegen("protocol", "lock", first_review, "--at", LOCKED)
    sources = sorted((FIXTURES / "ris").glob("*.ris"))
    for day, source in enumerate(sources, start=1):
        code, _, err = sitegen("import", first_review, source, "--at", f"2023-02-{day:02d}T00:00:00Z")
        assert code == 0, err
    refs = [line for line in (first_review / "records.jsonl").read_text().splitlines() if '"id":"ref:' in line]
    assert refs, "the fixtures hold references without identifiers"
    first = exported(sitegen, first_review, format, tmp_path / f"first.{format}")
    second_review = review_of(sitegen, tmp_path / "second", first, format)
    ids = [json.loads(line)["id"] for line in (first_review / "records.jsonl").read_text().splitlines()]
    assert [json.loads(line)["id"] for line in (second_review / "records.jsonl").read_text().splitlines()] == ids
    second = exported(sitegen, second_review, format, tmp_path / f"second.{format}").read_text(encoding="utf-8")
    assert without(second, format) == without(first.read_text(encoding="utf-8"), format)


# --------------------------------------------------------------------------- names


FAMILY_ALONE = [CslName(family="van der Berg"), CslName(family="Garcia Marquez"), CslName(family="Smith"),
                CslName(literal="World Health Organization"), CslName(family="van der Berg", given="Jan"),
                CslName(family="Ortega y Gasset", given="José")]


@pytest.mark.parametrize("format", WRITERS)
def test_a_family_name_without_given_names_comes_back_whole(format):
    # A real record given family names with no given names, as providers give some (PubMed's LastName alone,
    # Crossref's family alone): "van der Berg" was read back as the given name "van" and the family name "der Berg".
    first = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    record = first.model_copy(update={"author": FAMILY_ALONE})
    [again] = [entry_record(entry) for entry in read_references(WRITERS[format]([record]), format)]
    assert again.author == FAMILY_ALONE


@pytest.mark.parametrize(("format", "text"), [
    ("csl-json", '[{"id": "a", "title": "T", "author": [{"family": "van der Berg"}, {"family": "Garcia Marquez"}]}]'),
    ("bibtex", "@article{a, title = {T}, author = {van der Berg and {Garcia Marquez}}}"),
    ("ris", "TY  - JOUR\nTI  - T\nAU  - van der Berg,\nAU  - Garcia Marquez,\nER  - \n"),
])
def test_a_file_naming_a_family_name_alone_is_read_so(format, text):
    # CSL-JSON's family without given, BibTeX's last name without first names (a von part, or braced whole),
    # RIS's "Family," with nothing after the comma (EndNote's way to keep a name whole)
    [entry] = read_references(text, format)
    assert entry_record(entry).author == [CslName(family="van der Berg"), CslName(family="Garcia Marquez")]


def test_a_bibtex_name_braced_whole_with_a_comma_stays_one_name_as_written():
    # BibTeX never splits a name braced whole: "{Doe, Jane}" is one name. Written "Family," for the family name
    # alone, it became "Doe, Jane,", a literal with a stray comma, which every export then wrote.
    [entry] = read_references("@article{a, title = {T}, author = {{Doe, Jane} and {Garcia Marquez}}}", "bibtex")
    assert entry_record(entry).author == [CslName(literal="Doe, Jane"), CslName(family="Garcia Marquez")]


@pytest.mark.parametrize("format", WRITERS)
@pytest.mark.parametrize("stray", ["Smith {Jr", "Smith}", "{Smith", "Sm}i{th"])
def test_a_brace_no_other_pairs_with_in_a_name_keeps_the_names_after_it_apart(format, stray):
    # An unclosed "{" in one author's name (a stray one a database wrote, escaped by BibTeX's export) was read as
    # opening a group to the end of the list: the co-authors after it came back as one name with it.
    record = Record(id="10.1000/brace", DOI="10.1000/brace", title="T", author=[
        CslName(family=stray, given="Ann"), CslName(family="Doe", given="John"), CslName(literal="Rat Group")])
    [again] = [entry_record(entry) for entry in read_references(WRITERS[format]([record]), format)]
    assert [name.display() for name in again.author] == [name.display() for name in record.author]
    assert again.author[1:] == record.author[1:]


@pytest.mark.parametrize("format", WRITERS)
def test_a_name_a_source_gave_as_one_field_comes_back_whole(format):
    # A real Crossref record whose organisations are one-field names: "HEC Montréal" reads like a person's name,
    # and RIS, BibTeX and the CSV wrote it split ("Montréal, HEC"), read back as the given name "HEC" and the family
    # name "Montréal". RIS, BibTeX and CSV have no literal: a one-field name comes back whole as a family name alone.
    item = json.loads((FIXTURES / "crossref" / "10.17705_1cais.04607.json").read_bytes())["message"]
    record = crossref.work_to_record(item)
    organisations = [name.literal for name in record.author if name.literal]
    assert "HEC Montréal" in organisations
    [again] = [entry_record(entry) for entry in read_references(WRITERS[format]([record]), format)]
    assert [name.display() for name in again.author] == [name.display() for name in record.author]
    assert all(name.given is None for name in again.author if name.display() in organisations)
    if format == "csl-json":
        assert again.author == record.author
    # and the same key; CSL-JSON but for its provenance, which an import does not carry
    assert without(WRITERS[format]([again]), format) == without(WRITERS[format]([record]), format)


@pytest.mark.parametrize("format", WRITERS)
def test_a_name_holding_the_lists_separator_comes_back_as_one_name(format):
    # One organisation's name holding ";" (a source's literal "Group A; Group B") was read back from sitegen's RIS
    # and CSV as two authors: RIS's readers split an AU at ";", the CSV's cell is ";"-separated.
    names = [CslName(family="Doe", given="Jane"), CslName(literal="Group A; Group B"),
             CslName(literal="Rat Study Group and Mouse Study Group; Frog Study Group"), CslName(literal="WHO")]
    record = Record(id="10.1000/semicolon", DOI="10.1000/semicolon", title="T", author=names)
    [again] = [entry_record(entry) for entry in read_references(WRITERS[format]([record]), format)]
    assert again.author == names


@pytest.mark.parametrize(("text", "names"), [
    # other tools' exports read as before: one AU of several names, a CSV cell of several
    ("TY  - JOUR\nTI  - T\nAU  - Jones, A.; Brown, B.\nER  - \n", ["Jones, A.", "Brown, B."]),
    ("ID,title,author\n1,T,\"Jones, A.; Brown, B.\"\n", ["Jones, A.", "Brown, B."]),
])
def test_other_tools_names_separated_by_semicolons_are_several(text, names):
    [entry] = read_references(text, "ris" if text.startswith("TY") else "csv")
    assert [name.display() for name in entry_record(entry).author] == names


def test_an_organisation_written_as_endnote_writes_one_is_read_without_its_comma():
    [entry] = read_references("TY  - RPRT\nTI  - T\nAU  - World Health Organization,\nER  - \n", "ris")
    assert entry_record(entry).author == [CslName(literal="World Health Organization")]


# --------------------------------------------------------------------------- pages


@pytest.mark.parametrize("format", WRITERS)
def test_a_page_range_comes_back_as_it_was_imported(format):
    # Real rows of bib-dedupe's exports: "S77-S77" (a range of one page, a record with no identifier) and "47--65"
    # (BibTeX's dash). RIS writes the two ends in SP and EP and BibTeX joins them with "--", and their readers
    # read "S77" and "47-65": the first came back with another content key, so another id.
    rows = {"stroke": "id_0000667", "special_cases": "id_0000007"}
    entries = [entry for name, row in rows.items() for entry in read_references(
        FIXTURES / "dedupe" / name / "records_pre_merged.csv") if entry.id == row]
    records = [entry_record(entry) for entry in entries]
    assert [record.page for record in records] == ["S77", "47-65"]
    again = [entry_record(entry) for entry in read_references(WRITERS[format](records), format)]
    assert [(record.page, record.id) for record in again] == [(record.page, record.id) for record in records]


@pytest.mark.parametrize("format", WRITERS)
def test_an_issue_not_yet_numbered_comes_back_through_every_format(format):
    # Real Europe PMC records of the Deutsches Ärzteblatt, whose issue is "Forthcoming" (Crossref keeps such words
    # too): a provider's record keeps it, every export writes it, and the import read it as no issue.
    results = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_bytes())["resultList"]["result"]
    records = [record for result in results if (record := europepmc.result_to_record(result))
               and record.issue == "Forthcoming"]
    assert records
    again = [entry_record(entry) for entry in read_references(WRITERS[format](records), format)]
    assert [(record.issue, record.volume) for record in again] == [(record.issue, record.volume) for record in records]
    # a word for no value at all in another tool's CSV is none, as before ("NA" in R's CSVs)
    (entry,) = read_references("ID,title,number,volume\na,T,NA,n/a\n", "csv")
    assert (entry_record(entry).issue, entry_record(entry).volume) == (None, None)


PLACEHOLDERS = ("NA", "na", "n/a", "n.d.", "nd", "In press", "Forthcoming", "no pagination specified")


@pytest.mark.parametrize("format", WRITERS)
@pytest.mark.parametrize("word", PLACEHOLDERS)
def test_a_field_that_says_a_word_for_nothing_comes_back_as_it_says(format, word):
    # A record titled "NA" (a spreadsheet's word for an empty cell) was refused on import of sitegen's own export
    # ("the entry has no title"), and a journal, volume or issue "n.d." came back empty. A field is what its
    # source says: only another tool's CSV cells (where R writes "NA" for nothing) and a year, a date or Embase's
    # pages read such words as nothing.
    record = Record(id="10.1000/x", DOI="10.1000/x", title=word, container_title=word, volume=word, issue=word,
                    abstract=word)
    [again] = [entry_record(entry) for entry in read_references(WRITERS[format]([record]), format)]
    assert (again.title, again.container_title, again.volume, again.issue, again.abstract) == (word,) * 5


@pytest.mark.parametrize(("format", "text"), [
    ("csv", "ID,title,journal,year,pages\na,T,NA,n.d.,NA\n"),
    ("ris", "TY  - JOUR\nTI  - T\nPY  - n.d.\nSP  - no pagination specified\nER  - \n"),
    ("bibtex", "@article{a, title = {T}, year = {n.d.}, pages = {no pagination specified}}"),
])
def test_words_for_no_value_are_none_where_they_can_mean_nothing_else(format, text):
    # another tool's CSV cell; a year (never a word); Embase's pages
    (entry,) = read_references(text, format)
    record = entry_record(entry)
    assert (record.title, record.container_title, record.issued, record.page) == ("T", None, None, None)


# --------------------------------------------------------------------------- addresses


def test_a_url_that_is_an_ids_address_comes_back_through_ris():
    # Real arXiv preprints, whose URL is their abstract page: RIS writes the URL, then the arXiv id's address (the
    # same), and the reader took both for the id, so the URL was lost; a URL that is the arXiv DOI's address was
    # taken for the id and the id's address for the URL.
    preprints = [arxiv.entry_to_record(entry) for entry in
                 parse_xml(ARXIV_FEED.read_bytes()).findall("atom:entry", arxiv.NS)]
    assert all(record.URL == f"https://arxiv.org/abs/{record.custom.arxiv}" for record in preprints)
    doi = preprints[0].model_copy(update={"URL": f"https://doi.org/10.48550/arXiv.{preprints[0].custom.arxiv}"})
    records = [*preprints, doi]
    again = [entry_record(entry) for entry in read_references(records_ris(records), "ris")]
    assert [(record.URL, record.custom.arxiv) for record in again] == \
        [(record.URL, record.custom.arxiv) for record in records]


# --------------------------------------------------------------------------- BibTeX text


def test_quotes_written_as_latex_writes_them_come_back_through_bibtex():
    # A real arXiv abstract quoting ``Holy Trinity'' (as TeX writers do): BibTeX readers set `` and '' as curly
    # quotes, and sitegen's read it back so. ?` and !` are LaTeX's ¿ and ¡.
    feed = FIXTURES / "arxiv" / "q_testing_s10_m10_34e56e15aaac.atom.xml"
    records = [arxiv.entry_to_record(entry) for entry in parse_xml(feed.read_bytes()).findall("atom:entry", arxiv.NS)]
    quoting = [record for record in records if "``" in (record.abstract or "")]
    assert quoting
    quoting.append(Record(id="arxiv:2401.00001", custom={"arxiv": "2401.00001"},
                          title="Why?` Because!` It's ''so'' -- and --- ``so''"))
    again = [entry_record(entry) for entry in read_references(records_bibtex(quoting), "bibtex")]
    assert [(record.title, record.abstract) for record in again] == [(record.title, record.abstract)
                                                                      for record in quoting]


@pytest.mark.parametrize("format", ["csv", "csl-json"])
def test_a_csl_type_named_unmistakably_comes_back_through_csv_and_csl_json(format):
    # Zotero's CSL-JSON types a newspaper or magazine article so (grey literature a review may include); they came
    # back as journal articles. A plain word ("review", "map") stays unread: another CSV's type column may say it.
    kinds = ["article-newspaper", "article-magazine", "review-book", "personal_communication", "motion_picture"]
    written = [Record(id="ref:0000000000000000", type=kind, title=f"A {kind} about rats", container_title="Rats",
                      issued={"date-parts": [[2020]]}, custom={"ref": "0000000000000000"}) for kind in kinds]
    records = [entry_record(entry) for entry in read_references(records_csl_json(written), "csl-json")]
    again = [entry_record(entry) for entry in read_references(WRITERS[format](records), format)]
    assert [record.type for record in records] == [record.type for record in again] == kinds


def test_notices_against_a_record_come_back_through_csl_json():
    # A real PLOS Biology record that Crossref lists a correction against (updated-by): CSL-JSON wrote the notice
    # under custom.updates, and the import left it out. A notice named by its PMID alone, by both ids or by neither
    # comes back too; one that is none is left out with a note.
    plos = json.loads((FIXTURES / "crossref" / "crossref_prefix_10.1371_works_with_update-to_updated-by.json")
                      .read_bytes())["message"]["items"]
    corrected = [record for item in plos if (record := crossref.work_to_record(item)) and record.custom.updates]
    assert corrected
    retracted = corrected[0].model_copy(update={"id": "10.1371/x", "DOI": "10.1371/x", "custom": RecordMeta(
        retracted=True, updates=[Update(kind="retraction", pmid="123"), Update(kind="expression-of-concern"),
                                 Update(kind="retraction", doi="10.1002/(sici)1;2-n", pmid="456")])})
    records = [*corrected, retracted]
    again = [entry_record(entry) for entry in read_references(records_csl_json(records), "csl-json")]
    assert [record.custom.updates for record in again] == [record.custom.updates for record in records]
    text = records_csl_json([retracted]).replace('"expression-of-concern"', '"withdrawal"')
    notes: list[str] = []
    [entry] = read_references(text, "csl-json")
    assert entry_record(entry, warnings=notes).custom.updates == [retracted.custom.updates[0],
                                                                   retracted.custom.updates[2]]
    assert notes == ["updates: 'withdrawal' is not a notice sitegen knows (retraction, correction, "
                     "expression-of-concern); left out"]


def test_the_works_a_notice_is_about_come_back_through_csl_json():
    # A Crossref retraction notice names the article it retracts (custom.notice_of), which deduplication marks
    # retracted with it: CSL-JSON wrote the link and the import left it out. A work named by no DOI, or of a kind
    # sitegen does not know, is left out with a note.
    article = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    notice = crossref.work_to_record({**json.loads((FIXTURES / "crossref" / "crossref_work_10.1038_srep16696.json")
                                                   .read_bytes())["message"],
                                      "update-to": [{"DOI": article.DOI.upper(), "type": "retraction",
                                                     "updated": {"date-parts": [[2020, 1, 1]]}}]})
    assert notice.custom.notice_of == [NoticeOf(kind="retraction", doi=article.DOI, date=[2020, 1, 1])]
    [again] = [entry_record(entry) for entry in read_references(records_csl_json([notice]), "csl-json")]
    assert again.custom.notice_of == notice.custom.notice_of
    assert again.custom.publication_types == notice.custom.publication_types
    text = records_csl_json([notice]).replace('"notice_of": [', '"notice_of": [{"kind": "retraction", "doi": "x"}, '
                                              '{"kind": "reinstated", "doi": "10.1/y"}, '
                                              '{"kind": "reinstatement", "doi": "10.1234/z", "date": [2021, 6, 30]}, ')
    notes: list[str] = []
    [entry] = read_references(text, "csl-json")
    assert entry_record(entry, warnings=notes).custom.notice_of == [
        NoticeOf(kind="reinstatement", doi="10.1234/z", date=[2021, 6, 30]), *notice.custom.notice_of]
    assert notes == ["notice_of: 'reinstated' is not a notice sitegen knows (retraction, correction, "
                     "expression-of-concern, reinstatement); left out",
                     "notice_of: the retraction notice's work 'x' is not a valid DOI; left out"]


def test_a_works_reinstatements_and_a_notices_date_come_back_through_csl_json():
    """A reinstated article keeps its reinstatements, and a retraction notice its date: read back from sitegen's
    CSL-JSON (a fresh review importing an export), deduplicating the two leaves the article reinstated, as before
    the export. A date that is none, or a DOI that is none, is left out with a note; the rest is kept."""
    from sitegen.records.identity import deduplicate

    article = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    article = article.model_copy(update={"custom": article.custom.model_copy(update={
        "reinstatements": [Reinstatement(doi="10.9999/reinstated", date=[2021, 6, 30])]})})
    notice = crossref.work_to_record({**json.loads((FIXTURES / "crossref" / "crossref_work_10.1038_srep16696.json")
                                                   .read_bytes())["message"],
                                      "update-to": [{"DOI": article.DOI, "type": "retraction",
                                                     "updated": {"date-parts": [[2019, 3, 1]]}}]})
    again = [entry_record(entry) for entry in read_references(records_csl_json([article, notice]), "csl-json")]
    assert again[0].custom.reinstatements == article.custom.reinstatements
    assert again[1].custom.notice_of == notice.custom.notice_of
    kept = {record.DOI: record for record in deduplicate(again).records}[article.DOI]
    assert not kept.custom.retracted and kept.custom.reinstatements == [
        Reinstatement(doi="10.9999/reinstated", date=[2021, 6, 30], retracted_on=[2019, 3, 1])]
    [written] = json.loads(records_csl_json([article]))
    written["custom"]["reinstatements"] = [{"doi": "x", "date": [2021, 2, 30]}]
    notes: list[str] = []
    [entry] = read_references(json.dumps([written]), "csl-json")
    assert entry_record(entry, warnings=notes).custom.reinstatements == [Reinstatement()]
    assert notes == ["reinstatements: the DOI 'x' is not a valid DOI; left out",
                     "reinstatements: a date [2021, 2, 30] is not a date ([year, month, day]); left out"]


def test_a_pmid_written_as_a_number_is_read_alike_in_every_list_of_notices():
    """A hand-edited CSL-JSON may write a PMID as a JSON number, as it may a record's own PMID (read as its digits):
    a notice against the work and the work a notice is about kept it, a reinstatement left it out as "not a valid
    PMID". All three read it alike now, through one reader of a notice's identifiers."""
    article = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    [written] = json.loads(records_csl_json([article]))
    written["PMID"] = 31000003
    written["custom"].update(updates=[{"kind": "retraction", "pmid": 31000001, "date": [2019, 3, 1]}],
                             notice_of=[{"kind": "correction", "pmid": 31000004}],
                             reinstatements=[{"pmid": 31000002, "date": [2021, 6, 30]}])
    notes: list[str] = []
    [entry] = read_references(json.dumps([written]), "csl-json")
    record = entry_record(entry, warnings=notes)
    assert notes == []
    assert record.PMID == "31000003"
    assert record.custom.updates == [Update(kind="retraction", pmid="31000001", date=[2019, 3, 1])]
    assert record.custom.notice_of == [NoticeOf(kind="correction", pmid="31000004")]
    assert record.custom.reinstatements == [Reinstatement(pmid="31000002", date=[2021, 6, 30])]


def notice_and_work() -> tuple[Record, Record]:
    """A real Crossref work made a retraction notice of the exports' first record, which lists it, a correction
    named by PMID alone and an expression of concern with no identifier, as deduplication marks it."""
    work = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    notice = crossref.work_to_record({**json.loads((FIXTURES / "crossref" / "crossref_work_10.1038_srep16696.json")
                                                   .read_bytes())["message"],
                                      "update-to": [{"DOI": work.DOI, "type": "retraction"}]})
    work = work.model_copy(update={"custom": work.custom.model_copy(update={"retracted": True, "updates": [
        Update(kind="retraction", doi=notice.DOI), Update(kind="correction", pmid="123"),
        Update(kind="expression-of-concern"), Update(kind="correction", doi="10.1002/(sici)1;2-n")]})})
    return notice, work


@pytest.mark.parametrize("format", ["ris", "bibtex", "csv"])
def test_a_notice_and_a_retracted_work_say_so_in_every_export_and_come_back(format):
    # RIS, BibTeX and CSV wrote only `retracted`: a retraction notice was a study there, and a work's notices (with
    # their DOIs) and the work a notice is about were lost. Each now says them where its readers look (RIS: the
    # notice's types as M3, a note per notice; BibTeX: the note; CSV: columns), and sitegen reads them back.
    notice, work = notice_and_work()
    written = WRITERS[format]([notice, work])
    assert "Retraction notice for: doi:" + work.DOI in written and "Retraction notice: doi:" + notice.DOI in written
    assert "retraction-notice" in written
    again_notice, again_work = (entry_record(entry) for entry in read_references(written, format))
    assert again_notice.custom.notice_of == notice.custom.notice_of
    assert notice_kind("", again_notice.custom.publication_types) == "retraction"
    assert again_work.custom.retracted and again_work.custom.updates == work.custom.updates
    assert WRITERS[format]([again_notice, again_work]) == written or format == "csv"  # CSV: the work's types too
    # A note of the user's own that only begins like one of sitegen's says nothing of the record's standing.
    if format != "csv":
        mine = written.replace("Retraction notice for: doi:" + work.DOI, "Retraction notice for the old version")
        assert not entry_record(read_references(mine, format)[0]).custom.notice_of


def test_an_abstracts_paragraphs_come_back_through_csl_json():
    # A records CSV keeps an abstract's line breaks in its cell, and import keeps them; CSL-JSON, which carries
    # them too, gave them back as spaces. (RIS and BibTeX write every value on one line.)
    first = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    record = first.model_copy(update={"abstract": "Background: rats.\nMethods: mazes.\n\nResults:  none."})
    [from_csv] = [entry_record(entry) for entry in read_references(records_csv([record], {}), "csv")]
    [again] = [entry_record(entry) for entry in read_references(records_csl_json([from_csv]), "csl-json")]
    assert from_csv.abstract == again.abstract == record.abstract


@pytest.mark.parametrize("format", ["ris", "bibtex", "csv"])
def test_a_reinstatement_notice_is_written_and_read_back_by_every_export(format):
    """A reinstatement notice names its work as a retraction notice does (`notice_of`): RIS, BibTeX and CSV looked
    its kind up among the labels and failed on it; now "Reinstatement notice for: doi:…" is written and read back."""
    work = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    notice = crossref.work_to_record({**json.loads((FIXTURES / "crossref" / "crossref_work_10.1038_srep16696.json")
                                                   .read_bytes())["message"],
                                      "update-to": [{"DOI": work.DOI, "type": "reinstatement"}]})
    written = WRITERS[format]([notice])
    assert "Reinstatement notice for: doi:" + work.DOI in written
    [again] = [entry_record(entry) for entry in read_references(written, format)]
    assert again.custom.notice_of == [NoticeOf(kind="reinstatement", doi=work.DOI)]


@pytest.mark.parametrize("format", ["ris", "bibtex", "csv"])
def test_a_reinstated_work_and_its_notices_come_back_with_their_dates_from_every_export(format):
    """An article, a retraction notice dated 2019 and a reinstatement notice dated 2021: deduplicated, the article
    is reinstated. RIS, BibTeX and CSV wrote neither a notice's date nor the article's reinstatements, so read back
    and deduplicated again the retraction stood and the article came back retracted. Now each notice says its date
    ("… (2019-03-01)") and the article its reinstatement with the retraction it lifted; all of it is read back."""
    from sitegen.records.identity import deduplicate

    article = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])

    def notice(name: str, kind: str, date: list[int]) -> Record:
        return crossref.work_to_record({**json.loads((FIXTURES / "crossref" / name).read_bytes())["message"],
                                        "update-to": [{"DOI": article.DOI, "type": kind,
                                                       "updated": {"date-parts": [date]}}]})

    retraction = notice("crossref_work_10.1038_srep16696.json", "retraction", [2019, 3, 1])
    reinstatement = notice("crossref_work_10.1371_journal.pone.0033693.json", "reinstatement", [2021, 6, 30])
    records = deduplicate([article, retraction, reinstatement]).records
    work = {record.DOI: record for record in records}[article.DOI]
    assert not work.custom.retracted and work.custom.reinstatements == [
        Reinstatement(doi=reinstatement.DOI, date=[2021, 6, 30], retracted_on=[2019, 3, 1])]
    written = WRITERS[format](records)
    assert f"Retraction notice for: doi:{article.DOI} (2019-03-01)" in written
    assert f"Reinstatement notice for: doi:{article.DOI} (2021-06-30)" in written
    assert f"Reinstatement notice: doi:{reinstatement.DOI} (2021-06-30, lifting a retraction of 2019-03-01)" in written
    again = {record.DOI: record for record in (entry_record(entry) for entry in read_references(written, format))}
    assert again[article.DOI].custom.reinstatements == work.custom.reinstatements
    assert again[retraction.DOI].custom.notice_of == retraction.custom.notice_of
    assert again[reinstatement.DOI].custom.notice_of == reinstatement.custom.notice_of
    kept = {record.DOI: record for record in deduplicate(list(again.values())).records}[article.DOI]
    assert not kept.custom.retracted and kept.custom.updates == []
    assert kept.custom.reinstatements == work.custom.reinstatements


@pytest.mark.parametrize("format", ["ris", "bibtex", "csv"])
def test_a_works_dated_notices_and_reinstatements_come_back_from_every_export_as_far_as_known(format):
    """A retraction the work lists with its date, one after its reinstatement (retracted again), a reinstatement
    without a notice of its own, and one whose date is unknown but whose lifted retraction's is: each is written
    with what is known of it and read back so; a date that is none is left out with a note."""
    article = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    custom = article.custom.model_copy(update={
        "retracted": True, "updates": [Update(kind="retraction", doi="10.9999/again", date=[2023, 1]),
                                       Update(kind="correction", pmid="123", date=[2020])],
        "reinstatements": [Reinstatement(date=[2021, 6, 30], retracted_on=[2019, 3, 1]),
                           Reinstatement(doi="10.9999/r", retracted_on=[2019])]})
    article = article.model_copy(update={"custom": custom})
    written = WRITERS[format]([article])
    assert "Retraction notice: doi:10.9999/again (2023-01)" in written and "Correction notice: PMID:123 (2020)" in written
    assert "Reinstatement notice (2021-06-30, lifting a retraction of 2019-03-01)" in written
    [again] = [entry_record(entry) for entry in read_references(written, format)]
    assert again.custom.retracted
    assert (again.custom.updates, again.custom.reinstatements) == (custom.updates, custom.reinstatements)
    notes: list[str] = []
    [entry] = read_references(written.replace("(2023-01)", "(2023-13)"), format)
    assert entry_record(entry, warnings=notes).custom.updates[0] == Update(kind="retraction", doi="10.9999/again")
    assert notes == ["updates: the retraction's date [2023, 13] is not a date ([year, month, day]); left out"]


@pytest.mark.parametrize("format", WRITERS)
def test_the_other_versions_a_source_states_come_back_from_every_export(format):
    """eLife's article, which PubMed says updates its medRxiv preprint (custom.stated_versions): every export wrote
    its notices and left the preprint out, so a review importing the download no longer linked the two. Each export
    now carries it as it carries the notices (CSL-JSON under custom, the others "Other version: doi:… PMID:…"), beside
    a retraction, and a version named by its PMID alone; all of it is read back."""
    [article] = parse_xml((FIXTURES / "pubmed" / "pubmed-39737640-excerpt.xml").read_bytes()).findall("PubmedArticle")
    record = pubmed.article_to_record(article)
    assert record.custom.stated_versions == [StatedVersion(doi="10.1101/2024.06.13.24308783", pmid="38946973")]
    custom = record.custom.model_copy(update={
        "updates": [Update(kind="retraction", doi="10.9999/r", date=[2025, 1])],
        "stated_versions": [*record.custom.stated_versions, StatedVersion(pmid="38000001")]})
    record = record.model_copy(update={"custom": custom})
    written = WRITERS[format]([record])
    if format != "csl-json":
        assert "Other version: doi:10.1101/2024.06.13.24308783 PMID:38946973" in written
    [again] = [entry_record(entry) for entry in read_references(written, format)]
    assert again.custom.stated_versions == custom.stated_versions and again.custom.updates == custom.updates
    assert WRITERS[format]([again]) == written or format in ("csv", "csl-json")  # which sources: the review's own


def test_a_stated_version_that_is_none_is_left_out_of_a_csl_json_import_with_a_note():
    article = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    [written] = json.loads(records_csl_json([article]))
    written["custom"]["stated_versions"] = [{"doi": "x", "pmid": 38946973}, {"doi": "10.1101/y"}, {},
                                            {"doi": "10.1101/Y"}, {"doi": article.DOI}]
    notes: list[str] = []
    [entry] = read_references(json.dumps([written]), "csl-json")
    assert entry_record(entry, warnings=notes).custom.stated_versions == [StatedVersion(pmid="38946973"),
                                                                          StatedVersion(doi="10.1101/y")]
    assert notes == ["stated_versions: the DOI 'x' is not a valid DOI; left out",
                     "stated_versions: a version names no DOI or PMID; left out"]
    written["custom"]["stated_versions"] = {"doi": "10.1101/y"}
    notes.clear()
    [entry] = read_references(json.dumps([written]), "csl-json")
    assert entry_record(entry, warnings=notes).custom.stated_versions == []
    assert notes == ["stated_versions '{\"doi\": \"10.1101/y\"}' is not a list of versions; left out"]


# --------------------------------------------------------------------------- any record


def held(text: str) -> bool:
    """Whether an import holds `text` as it is: one space between words, no markup (records hold none)."""
    return text == " ".join(text.split()) and plain_text(text) == text


# Words of the texts records hold: words for nothing, dashes, the formats' own syntax (RIS tags, BibTeX's "and",
# braces and LaTeX's specials, a spreadsheet's formula start), quotes, letters beyond ASCII, pages.
WORDS = ["NA", "na", "n/a", "n.d.", "nd", "In press", "Forthcoming", "no pagination specified", "-", "--", "---",
         "–", "—", "and", "AND", "{", "}", "{}", "\\", "$", "%", "&", "#", "_", "^", "~", "@", "=1+1", "+", "'", '"',
         "``", "''", ",", ";", ":", "/", "?", "!", "(", ")", "[", "]", "É", "ß", "İ", "ﬁ", "Ⅰ", "NF1", "mGluR5",
         "O'Brien", "x", "Word", "TI  - x", "ER  -", "@article{", "10.1000/y", "S77", "47", "e123", "iv", "2020"]
TEXTS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).flatmap(
    lambda words: st.sampled_from([" ", ""]).map(lambda join: join.join(words))).filter(held)
PAGE_NUMBERS = st.sampled_from(["1", "47", "65", "S77", "e123", "R45a", "iv", "xii", "1234"])
# as an import holds a page: a range with one hyphen, of two pages (`as_range`), never Embase's word for none
PAGES = (st.builds(lambda first, last: f"{first}-{last}", PAGE_NUMBERS, PAGE_NUMBERS) | PAGE_NUMBERS | TEXTS).filter(
    lambda page: as_range(page) == page and page.lower() not in NO_VALUE_IN["pages"])
NAME_WORDS = st.sampled_from(["Doe", "Jane", "van der Berg", "O'Brien", "Müller", "NA", "n.d.", "Ortega y Gasset",
                              "J.", "Anne-Marie", "Li", "İnce"])
# A suffix beside given names or without them (a family name and a suffix alone came back as one literal name).
PEOPLE = st.builds(lambda family, given, suffix: CslName(family=family, given=given, suffix=suffix),
                   NAME_WORDS, NAME_WORDS | st.none(), st.sampled_from([None, "Jr.", "III"]))
RECORDS = st.builds(
    lambda title, container, volume, issue, page, abstract, author, year: Record(
        id="10.1000/x", DOI="10.1000/x", type="article-journal", title=title, container_title=container,
        volume=volume, issue=issue, page=page, abstract=abstract, author=author,
        issued={"date-parts": [[year]]} if year else None),
    TEXTS.filter(visible_text), TEXTS | st.none(), TEXTS | st.none(), TEXTS | st.none(), PAGES | st.none(),
    TEXTS | st.none(), st.lists(PEOPLE, max_size=3), st.sampled_from([None, 1999, 2024]))
CARRIED = ("title", "container_title", "volume", "issue", "page", "abstract", "author", "issued", "DOI", "type")


@pytest.mark.parametrize("format", WRITERS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(record=RECORDS)
@example(record=Record(id="10.1000/x", DOI="10.1000/x", title="NA", container_title="n.d.", volume="na",
                       issue="Forthcoming", page="-2", abstract="n/a"))
@example(record=Record(id="10.1000/x", DOI="10.1000/x", title="T", page="trailing -"))
@example(record=Record(id="10.1000/x", DOI="10.1000/x", title="T", page="ENEURO.0284--16"))
@example(record=Record(id="10.1000/x", DOI="10.1000/x", title="T",
                       author=[CslName(family="van der Berg", suffix="Jr."), CslName(family="Doe", suffix="III")]))
def test_any_record_comes_back_from_every_export_as_it_was(format, record):
    # Every text a record holds as an import holds it (a title or a volume "NA", a page "-2", a BibTeX or RIS
    # token, a dash run), through each export and back, is the text it was, on every field the format carries.
    [entry] = read_references(WRITERS[format]([record]), format)
    again = entry_record(entry)
    assert {name: getattr(again, name) for name in CARRIED} == {name: getattr(record, name) for name in CARRIED}


@pytest.mark.parametrize("format", WRITERS)
def test_a_reinstatement_notice_known_by_pmid_alone_is_named_by_it_and_comes_back_from_every_export(format):
    """A reinstatement notice PubMed alone holds (a PMID, no DOI) lifted the work's retraction, but the work's
    reinstatement kept no identifier: the page said it was reinstated "according to" the work's own sources, as of a
    publisher's mark on the work, and no export named the notice. Now it is named by its PMID, written and read back
    so; a line written before (no PMID) still reads."""
    from sitegen.records.identity import deduplicate
    from sitegen.site.studies import retraction_sentence

    article = Record.model_validate_json((FIXTURES / "exports" / "records.jsonl").read_text().splitlines()[0])
    article = article.model_copy(update={"custom": article.custom.model_copy(update={
        "retracted": True, "updates": [Update(kind="retraction", doi="10.9999/retraction", date=[2019, 3, 1])]})})
    notice = Record(id="pmid:40000005", title="Reinstatement notice", PMID="40000005", custom=RecordMeta(
        sources=["pubmed"], notice_of=[NoticeOf(kind="reinstatement", doi=article.DOI, date=[2021, 6, 30])]))
    records = deduplicate([article, notice]).records
    work = {record.DOI: record for record in records}[article.DOI]
    reinstated = [Reinstatement(pmid="40000005", date=[2021, 6, 30], retracted_on=[2019, 3, 1])]
    assert not work.custom.retracted and work.custom.reinstatements == reinstated
    assert "(reinstatement notice PMID 40000005)" in retraction_sentence(work)
    written = WRITERS[format]([work])
    again = [entry_record(entry) for entry in read_references(written, format)]
    assert [record.custom.reinstatements for record in again] == [reinstated]
    assert Reinstatement.model_validate_json('{"doi": "10.9999/r", "date": [2021]}').pmid is None
