"""`sitegen export`: the site's downloads written on their own (the same bytes), every identifier a record
holds where that format's readers take it from, and exports that read back through sitegen's readers and
`entry_record` and then export again unchanged."""

from __future__ import annotations

import csv
import io
import json

import pytest
import rispy
from conftest import EXAMPLE, tree_bytes

from sitegen.records.entry import Entry
from sitegen.records.model import CslName, Record, RecordMeta
from sitegen.references import read_references
from sitegen.references.records import entry_record
from sitegen.site.exports import one_line, page_range, records_bibtex, records_csl_json, records_csv, records_ris

EXAMPLE_RECORDS = [Record.model_validate_json(line) for line in (EXAMPLE / "records.jsonl").read_text().splitlines()]
WRITERS = {"ris": records_ris, "bibtex": records_bibtex, "csl-json": records_csl_json}
# What an import takes from no file, whatever the format: where sitegen found a record and what the registries
# said of it (sources, publication types, open access, licence, full-text address) are the review's own
# provenance; an import names its own source.
PROVENANCE = ("sources", "publication_types", "open_access", "license", "fulltext_url")


def prisma_json(sitegen) -> dict:
    code, out, err = sitegen("prisma", EXAMPLE, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize(("format", "records", "download"), [
    ("ris", "all", "records.ris"), ("ris", "included", "included.ris"),
    ("bibtex", "all", "records.bib"), ("bibtex", "included", "included.bib"),
    ("csl-json", "all", "records.json"), ("csl-json", "included", "included.json"),
    ("csv", "all", "records.csv"), ("csv", "included", "included.csv"),
    ("prisma2020-csv", None, "prisma2020.csv"),
])
def test_export_writes_the_sites_download(example_site, sitegen, format, records, download):
    code, out, err = sitegen("export", EXAMPLE, "--format", format, *(["--records", records] if records else []))
    assert code == 0, err
    assert out == (example_site / "downloads" / download).read_text(encoding="utf-8")


def test_export_gives_the_included_studies_unless_told(example_site, sitegen):
    code, out, err = sitegen("export", EXAMPLE, "--format", "ris")
    assert code == 0, err
    assert out == (example_site / "downloads" / "included.ris").read_text(encoding="utf-8")


@pytest.mark.parametrize(("records", "count"), [
    ("screened-in", lambda counts: counts["reports_sought"] + counts["other_reports_sought"]),
    ("included", lambda counts: counts["reports_included"]),
    ("all", lambda counts: len(EXAMPLE_RECORDS)),
])
def test_each_set_holds_the_records_prisma_counts(sitegen, records, count):
    code, out, err = sitegen("export", EXAMPLE, "--format", "csv", "--records", records)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == count(prisma_json(sitegen))
    if records == "screened-in":  # sent on to full text: included or maybe at title and abstract
        assert {row["title_abstract"] for row in rows} <= {"include", "maybe"}


def test_out_writes_the_file_and_refuses_to_replace_it_unless_forced(sitegen, tmp_path):
    out = tmp_path / "included.bib"
    code, stdout, err = sitegen("export", EXAMPLE, "--format", "bibtex", "--out", out)
    assert code == 0, err
    assert stdout == "" and f"wrote {out} (38 records)" in err
    written = out.read_bytes()
    assert written.startswith(b"@article{")

    out.write_text("mine\n")
    code, _, err = sitegen("export", EXAMPLE, "--format", "bibtex", "--out", out)
    assert code != 0 and "already exists; give --force" in err
    assert out.read_text() == "mine\n"

    code, _, err = sitegen("export", EXAMPLE, "--format", "bibtex", "--out", out, "--force")
    assert code == 0, err
    assert out.read_bytes() == written
    assert [path.name for path in tmp_path.iterdir()] == ["included.bib"]  # no temporary file left


@pytest.mark.parametrize(("arguments", "message"), [
    (["--format", "ris", "--out", "{review}/records.jsonl", "--force"], "is inside the review folder"),
    (["--format", "ris", "--out", "{review}/exports/included.ris"], "is inside the review folder"),
    (["--format", "ris", "--out", "{tmp}/missing/included.ris"], "its folder"),
    (["--format", "ris", "--out", "{tmp}"], "is a folder, not a file"),
    (["--format", "prisma2020-csv", "--records", "all"], "'--records': does not apply to prisma2020-csv"),
    (["--format", "medline"], "Invalid value for '--format'"),
])
def test_a_refused_export_writes_nothing(sitegen, example_copy, tmp_path, arguments, message):
    before = tree_bytes(tmp_path)
    arguments = [a.format(review=example_copy, tmp=tmp_path) for a in arguments]
    code, stdout, err = sitegen("export", example_copy, *arguments)
    assert code != 0 and message in err
    assert stdout == ""
    assert tree_bytes(tmp_path) == before


def test_an_invalid_review_is_reported_and_nothing_written(sitegen, example_copy, tmp_path):
    (example_copy / "review.yaml").write_text("title: [unclosed\n")
    out = tmp_path / "out.ris"
    code, stdout, err = sitegen("export", example_copy, "--format", "ris", "--out", out)
    assert code != 0 and "review.yaml:2" in err
    assert stdout == "" and not out.exists()


# --------------------------------------------------------------------------- what each format carries

UNUSUAL = Record(
    id="10.1234/unusual", DOI="10.1234/unusual", PMID="12345678", PMCID="PMC1234567",
    title='Costs & "benefits": 50% of $x_1 ~ # \\ in Zürich\nsecond line',
    author=[CslName(literal="World Health Organization"), CslName(family="van der Berg", given="Jan"),
            CslName(family="Ortega y Gasset", given="José")],
    **{"container-title": "Revue d'Économie & Santé"}, issued={"date-parts": [[2021, 3, 9]]},
    volume="12", issue="3", page="e0123\u2013e0130",
    abstract="Line one,\r\nline two\u2028ER  - injected\nTY  - JOUR\n\"quoted\", and =SUM(A1)",
    custom=RecordMeta(openalex="W1234567890", arxiv="2101.00001", sources=["openalex"]))


def test_ris_carries_every_identifier_where_endnote_and_zotero_read_it():
    (entry,) = rispy.loads(records_ris([UNUSUAL]))
    assert entry["doi"] == "10.1234/unusual"
    assert entry["accession_number"] == "12345678"  # AN: EndNote's PubMed import
    assert entry["custom2"] == "PMC1234567"  # C2: EndNote's PMCID
    assert entry["urls"] == ["https://arxiv.org/abs/2101.00001", "https://openalex.org/W1234567890"]
    assert entry["authors"] == ["World Health Organization", "van der Berg, Jan", "Ortega y Gasset, José"]
    assert (entry["start_page"], entry["end_page"]) == ("e0123", "e0130")  # an en-dash range split too


def test_bibtex_writes_a_page_range_the_same_whatever_its_dash():
    hyphen = Record(**{**UNUSUAL.model_dump(by_alias=True), "page": "e0123-e0130"})
    assert "pages = {e0123--e0130}" in records_bibtex([UNUSUAL])
    assert records_bibtex([UNUSUAL]) == records_bibtex([hyphen])


@pytest.mark.parametrize(("page", "first", "last"), [
    ("123-130", "123", "130"), ("123\u201330", "123", "30"), ("S12 - S15", "S12", "S15"), ("iv-xii", "iv", "xii"),
    ("237--49", "237", "49"), ("e0123456", "e0123456", ""),
    # A dash before or after one page ends no range it names: the page is the text the source wrote.
    ("12-", "12-", ""), ("-2", "-2", ""), ("trailing -", "trailing -", ""), ("1--2--3", "1--2--3", ""),
    # An article number with a dash in it is one page, not a range (RIS wrote SP ENEURO.0284, EP 16.2016).
    ("ENEURO.0284-16.2016", "ENEURO.0284-16.2016", ""), ("1234-1238.e5", "1234-1238.e5", ""),
])
def test_a_page_range_is_split_and_an_article_number_kept_whole(page, first, last):
    record = Record(**{**UNUSUAL.model_dump(by_alias=True), "page": page})
    (entry,) = rispy.loads(records_ris([record]))
    assert (entry.get("start_page"), entry.get("end_page", "")) == (first, last)
    for format in sorted(WRITERS):  # and every format reads it back as one page or the same range
        (again,) = read_references(WRITERS[format]([record]), format)
        assert page_range(entry_record(again)) == (first, last), format


@pytest.mark.parametrize("format", sorted(WRITERS))
def test_every_identifier_reads_back(format):
    (entry,) = read_references(WRITERS[format]([UNUSUAL]), format)
    record = entry_record(entry)
    # A journal article's arXiv id names its preprint, another record of the study: an import leaves it out (with a
    # note), so that the two are linked as versions, never merged. A preprint's own arXiv id reads back.
    assert record.identifiers() == {name: value for name, value in UNUSUAL.identifiers().items() if name != "arxiv"}
    assert record.URL == UNUSUAL.URL
    preprint = UNUSUAL.model_copy(update={"id": "10.48550/arxiv.2101.00001", "DOI": "10.48550/arxiv.2101.00001"})
    (entry,) = read_references(WRITERS[format]([preprint]), format)
    assert entry_record(entry).identifiers() == preprint.identifiers() and "arxiv" in preprint.identifiers()


@pytest.mark.parametrize("format", sorted(WRITERS))
def test_braces_and_carets_read_back(format):
    title = "The {braces} of a^b"
    (entry,) = read_references(WRITERS[format]([Record(**{**UNUSUAL.model_dump(by_alias=True), "title": title})]),
                               format)
    assert entry.get("title") == title


@pytest.mark.parametrize("format", sorted(WRITERS))
def test_an_organisation_named_with_and_stays_one_author(format):
    gates = CslName(literal="Bill and Melinda Gates Foundation")
    (entry,) = read_references(WRITERS[format]([Record(**{**UNUSUAL.model_dump(by_alias=True), "author": [gates]})]),
                               format)
    assert entry_record(entry).author == [gates]


def csv_of(records: list[Record]) -> str:
    return records_csv(records, {})


@pytest.mark.parametrize("format", [*sorted(WRITERS), "csv"])
@pytest.mark.parametrize("name", [CslName(literal="Department of Health and Social Care, UK"),
                                  CslName(family="Smith and Wesson", given="Jane")])
def test_a_name_holding_and_and_a_comma_stays_one_author(format, name):
    # Names are read into one "and"-joined list; only a name with no comma was braced against a split there, so
    # an organisation with a comma (or a family name with "and" in it) came back as two authors, one made up.
    writer = {**WRITERS, "csv": csv_of}[format]
    (entry,) = read_references(writer([Record(**{**UNUSUAL.model_dump(by_alias=True), "author": [name]})]), format)
    assert [author.display() for author in entry_record(entry).author] == [name.display()]


@pytest.mark.parametrize("format", ["ris", "bibtex"])
def test_unusual_content_reads_back(format):
    """TeX specials, line breaks, quotes, non-ASCII and an organisation author survive a write and a read."""
    (entry,) = read_references(WRITERS[format]([UNUSUAL]), format)
    assert entry.get("title") == one_line(UNUSUAL.title)
    assert entry.get("journal") == "Revue d'Économie & Santé"
    assert entry.get("year") == "2021"
    assert entry.get("doi") == "10.1234/unusual"
    assert entry.get("abstract") == one_line(UNUSUAL.abstract)
    record = entry_record(entry)
    assert record.DOI == UNUSUAL.DOI and record.title == one_line(UNUSUAL.title)
    assert record.author[0] == CslName(literal="World Health Organization")
    assert record.author[1:] == [CslName(family="van der Berg", given="Jan"),
                                 CslName(family="Ortega y Gasset", given="José")]


@pytest.mark.parametrize("text", ["'-omics' approaches to memory", "'@home' study", "''=x", "line\n'+one"])
def test_a_cells_own_apostrophe_before_a_formula_character_reads_back(text):
    # The reader takes off the apostrophe the writer puts before a formula; a cell's own was taken off with it.
    record = Record(**{**UNUSUAL.model_dump(by_alias=True), "title": text.replace("\n", " "), "abstract": text})
    (entry,) = read_references(csv_of([record]), "csv")
    assert (entry_record(entry).title, entry_record(entry).abstract) == (record.title, text)


def test_a_dataset_exported_as_ris_reads_back_as_a_dataset():
    # The RIS export writes a dataset's type as DATA (as Zotero does), which the reader took for an unknown type.
    dataset = Record(**{**UNUSUAL.model_dump(by_alias=True), "type": "dataset"})
    assert "TY  - DATA" in records_ris([dataset])
    (entry,) = read_references(records_ris([dataset]), "ris")
    assert entry_record(entry).type == "dataset"


def test_csv_keeps_quotes_and_line_breaks_in_their_cells():
    (row,) = csv.DictReader(io.StringIO(records_csv([UNUSUAL], {})))
    assert row["title"] == UNUSUAL.title and row["abstract"] == UNUSUAL.abstract
    assert (row["doi"], row["pmid"], row["pmcid"], row["openalex"], row["arxiv"]) == \
        ("10.1234/unusual", "12345678", "PMC1234567", "W1234567890", "2101.00001")
    assert row["authors"] == "World Health Organization; van der Berg, Jan; Ortega y Gasset, José"


def test_csl_json_carries_every_identifier_and_the_names_as_held():
    (item,) = json.loads(records_csl_json([UNUSUAL]))
    assert (item["DOI"], item["PMID"], item["PMCID"]) == ("10.1234/unusual", "12345678", "PMC1234567")
    assert (item["custom"]["openalex"], item["custom"]["arxiv"]) == ("W1234567890", "2101.00001")
    assert item["author"][:2] == [{"literal": "World Health Organization"}, {"family": "van der Berg", "given": "Jan"}]


# --------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("format", sorted(WRITERS))
def test_an_export_of_the_example_reads_back_as_the_same_export(format):
    """export -> read -> records -> export gives the same bytes (but for the review's own provenance, which
    only CSL-JSON writes)."""
    records = [Record(**{**record.model_dump(by_alias=True), "custom": record.custom.model_dump(exclude=PROVENANCE)})
               for record in EXAMPLE_RECORDS]
    first = WRITERS[format](records)
    assert WRITERS[format](EXAMPLE_RECORDS) == first or format == "csl-json"
    assert WRITERS[format]([entry_record(entry) for entry in read_references(first, format)]) == first


@pytest.mark.parametrize("format", sorted(WRITERS))
def test_the_example_reads_back_and_exports_again_unchanged(format):
    """export -> read -> records -> export -> read -> records -> export: the second and third exports are the
    same bytes, and every title, author list, year, journal and DOI of the review survives the first read."""
    write = WRITERS[format]
    first = write(EXAMPLE_RECORDS)
    entries = read_references(first, format)
    assert len(entries) == len(EXAMPLE_RECORDS)
    for record, entry in zip(EXAMPLE_RECORDS, entries, strict=True):
        again = entry_record(entry)
        assert again.title == one_line(record.title), entry.line
        assert again.year == record.year and again.container_title == record.container_title, entry.line
        assert again.DOI == record.DOI, entry.line
        assert again.issued == record.issued, entry.line  # the whole date: every format holds one
        assert [name.display() for name in again.author] == [name.display() for name in record.author], entry.line
    second = write([entry_record(entry) for entry in entries])
    third = write([entry_record(entry) for entry in read_references(second, format)])
    assert second == third


def test_the_command_line_offers_every_format_and_set():
    """cli.py lists them itself so that starting it loads no site code; they must stay the commands' own."""
    from typing import get_args

    from sitegen.cli import cli
    from sitegen.commands import EXPORT_FORMATS
    from sitegen.site.downloads import Selection

    options = {option.name: option.type.choices for option in cli.commands["export"].params
               if option.name in ("format", "selection")}
    assert tuple(options["format"]) == EXPORT_FORMATS
    assert sorted(options["selection"]) == sorted(get_args(Selection))


@pytest.mark.parametrize("format", sorted(WRITERS))
def test_a_record_without_identifiers_reads_back_as_itself(format):
    """An imported reference with no published identifier is known by its content key; its export read
    back gives the same key, so importing the export again finds the same record."""
    record = entry_record(Entry("x", {"ENTRYTYPE": "article", "title": UNUSUAL.title, "year": "2021",
                                      "author": "{World Health Organization} and van der Berg, Jan",
                                      "journal": "Revue d'Économie & Santé", "pages": "e0123-e0130"}, 1))
    assert record.id.startswith("ref:")
    (entry,) = read_references(WRITERS[format]([record]), format)
    assert entry_record(entry).id == record.id


@pytest.mark.parametrize("kind", ["phdthesis", "techreport", "misc", "book"])
def test_a_record_without_identifiers_keeps_its_id_through_bibtex_whatever_its_type(kind):
    # The export writes the container of a thesis or report in `howpublished`, a book's in `series`: read back
    # for them too (only @misc's was), so the record's content id is the same and a re-import adds nothing.
    field = "series" if kind == "book" else "howpublished"
    written = f"@{kind}{{k,\n  title = {{Sleep and memory in rats}},\n  author = {{Smith, Jane}},\n" \
              f"  {field} = {{Series on Memory}},\n  year = {{2019}}\n}}\n"
    record = entry_record(read_references(written, "bibtex")[0])
    assert record.id.startswith("ref:") and record.container_title == "Series on Memory"
    (again,) = read_references(records_bibtex([record]), "bibtex")
    assert (entry_record(again).id, entry_record(again).container_title) == (record.id, "Series on Memory")


def test_a_notice_exported_as_csl_json_and_imported_again_is_still_a_notice():
    # An erratum's publication type keeps it from being merged with its article: CSL-JSON read it back as []
    # (sitegen keeps it in `custom`, which the reader passed over). RIS and BibTeX have no field for it.
    erratum = Record(**{**UNUSUAL.model_dump(by_alias=True), "title": "Erratum to: Sleep and memory in rats",
                        "custom": {**UNUSUAL.custom.model_dump(), "publication_types": ["erratum"]}})
    (entry,) = read_references(WRITERS["csl-json"]([erratum]), "csl-json")
    assert entry_record(entry).custom.publication_types == ["erratum"]
    # Every type as the sources gave it: PubMed's "Retraction of Publication" beside "Review" was lost.
    for types in (["Review", "Retraction of Publication"], ["retraction-notice"], ["preprint"], []):
        record = Record(**{**erratum.model_dump(by_alias=True), "custom": {**erratum.custom.model_dump(),
                                                                           "publication_types": types}})
        (entry,) = read_references(WRITERS["csl-json"]([record]), "csl-json")
        assert entry_record(entry).custom.publication_types == types


def test_what_sources_said_of_access_survives_csl_json_and_only_as_a_web_address():
    # Open access, licence and full-text address are kept in sitegen's custom: read back (a fresh review importing
    # an export lost them for every record), the address only when it is a web address.
    again = [entry_record(entry) for entry in read_references(records_csl_json(EXAMPLE_RECORDS), "csl-json")]
    for record, back in zip(EXAMPLE_RECORDS, again, strict=True):
        assert (back.custom.open_access, back.custom.license, back.custom.fulltext_url,
                back.custom.publication_types) == (record.custom.open_access, record.custom.license,
                                                   record.custom.fulltext_url, record.custom.publication_types), record.id
    assert any(record.custom.fulltext_url for record in again) and any(record.custom.license for record in again)
    hostile = json.dumps([{"id": "a", "title": "T", "custom": {"fulltext_url": "javascript:alert(1)",
                                                               "license": "cc-by", "open_access": True}}])
    warnings: list[str] = []
    record = entry_record(read_references(hostile, "csl-json")[0], warnings=warnings)
    assert (record.custom.fulltext_url, record.custom.license, record.custom.open_access) == (None, "cc-by", True)
    assert any("fulltext_url 'javascript:alert(1)' is not a web address" in warning for warning in warnings)
