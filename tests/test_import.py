"""`sitegen import`: reference files into a review's records, by identity as `update` folds a run in; one
ledger event per file; nothing written on a bad file; and the `ref` content key the ground floor gives a
reference without identifiers."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from conftest import EXAMPLE, FIXTURES, tree_bytes

from sitegen.living.merge import integrate
from sitegen.records.entry import Entry
from sitegen.records.identity import deduplicate
from sitegen.records.ids import NAMESPACES, content_ref, parse_record_id, record_id, record_id_problem
from sitegen.records.model import CslName, Record
from sitegen.records.providers import kind, label
from sitegen.references import read_references
from sitegen.references.records import entry_record
from sitegen.review.folder import Review, load_review

LOCKED, FIRST, SECOND = "2023-01-01T00:00:00Z", "2023-02-01T00:00:00Z", "2023-03-01T00:00:00Z"
SPECIAL = FIXTURES / "dedupe" / "special_cases" / "records_pre_merged.csv"
SCOPUS = FIXTURES / "bibtex" / "scopus_bib.bib"
PSYCINFO = FIXTURES / "ris" / "psycinfo_ris.ris"
CITATION = FIXTURES / "prisma" / "citation.ris"  # a real RIS export, not anonymised
COLUMNS = ["ID", "ENTRYTYPE", "author", "title", "year", "journal", "volume", "number", "pages", "doi", "abstract"]


def entry(line: int = 1, **fields: str) -> Entry:
    return Entry(fields.get("ID", "e1"), fields, line)


def held(root: Path) -> Review:
    review, problems = load_review(root)
    assert review is not None and not problems
    return review


def new_review(sitegen, tmp_path: Path) -> Path:
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", LOCKED)
    return review


def import_json(sitegen, review: Path, *args) -> dict:
    code, out, err = sitegen("import", review, *args, "--json")
    assert code == 0, err
    assert sitegen("check", review)[0] == 0
    return json.loads(out)


def prisma(sitegen, review: Path) -> dict:
    return json.loads(sitegen("prisma", review, "--json")[1])


def imports(review: Path) -> list[dict]:
    return [event["payload"] for line in (review / "ledger.jsonl").read_text().splitlines()
            if (event := json.loads(line))["type"] == "import"]


def export(records: list[Record], with_identifiers: bool, database: str | None = None) -> str:
    """One database's export of these (real) records as a records CSV, with or without their DOIs, naming the
    database in a column when given."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS + ["database"] * bool(database))
    for n, record in enumerate(records, start=1):
        writer.writerow([f"r{n}", "article", " and ".join(name.display() for name in record.author), record.title,
                         record.year or "", record.container_title or "", record.volume or "", record.issue or "",
                         record.page or "", record.DOI if with_identifiers else "", record.abstract or ""]
                        + [database] * bool(database))
    return out.getvalue()


# --------------------------------------------------------------------------- the ground floor


def test_ref_is_a_namespace_of_last_priority_and_a_valid_record_id():
    assert NAMESPACES[-1] == "ref"
    assert record_id({"ref": "0123456789abcdef", "pmid": "12"}) == "pmid:12"
    assert record_id({"ref": "0123456789abcdef"}) == "ref:0123456789abcdef"
    assert parse_record_id("ref:0123456789abcdef") == ("ref", "0123456789abcdef")
    assert record_id_problem("ref:0123456789abcdef") is None
    assert "ref:<16 hex digits>" in record_id_problem("ref:xyz")
    assert record_id_problem("ref:0123456789ABCDEF") is not None  # not in normalised form


def test_content_ref_ignores_case_accents_punctuation_and_markup_but_not_content():
    ref = content_ref("Object-in-context <i>memory</i>.", 2020, ["Müller, A."], "J. Neurosci.", pages="12")
    assert ref == content_ref("OBJECT IN CONTEXT MEMORY", "2020", ["muller a"], "j neurosci", pages="12")
    assert ref != content_ref("Object-in-context memory", 2021, ["Müller, A."], "J. Neurosci.", pages="12")
    assert ref != content_ref("Object-in-context memory", 2020, ["Müller, A."], "J. Neurosci.", pages="13")
    assert ref != content_ref("Object-in-context memory", 2020, ["Müller, B."], "J. Neurosci.", pages="12")


def test_entry_record_normalises_identifiers_and_splits_authors():
    record = entry_record(entry(ENTRYTYPE="inproceedings", title="A title", year="2019", doi="https://doi.org/10.1234/ABC",
                                pmid="PMID: 123", author="van der Berg, Anna and {World Health Organization} and Li Wei",
                                journal="Proc", pages="73-6"), "pubmed")
    assert (record.id, record.DOI, record.PMID, record.type, record.year) == (
        "10.1234/abc", "10.1234/abc", "123", "paper-conference", 2019)
    assert record.model_dump(exclude_none=True)["author"] == [
        {"family": "van der Berg", "given": "Anna"}, {"literal": "World Health Organization"},
        {"family": "Wei", "given": "Li"}]
    assert record.custom.sources == ["pubmed"] and record.custom.ref is None


def test_an_organisation_in_braces_stays_one_author_and_a_month_is_kept():
    record = entry_record(entry(title="T", year="2008", month="Jul.",
                                author="{Bill and Melinda Gates Foundation} and Gates, Melinda"))
    assert record.author == [CslName(literal="Bill and Melinda Gates Foundation"),
                             CslName(family="Gates", given="Melinda")]
    assert record.issued.date_parts == [[2008, 7]]
    assert [entry_record(entry(title="T", year="2008", month=month)).issued.date_parts for month in ("12", "13", "x")] \
        == [[[2008, 12]], [[2008]], [[2008]]]


def test_entry_record_without_identifiers_gets_a_stable_ref_and_reports_what_it_left_out():
    warnings: list[str] = []
    first = entry_record(entry(title="Memory for objects", year="2001", author="Smith, J.", doi="not a doi",
                               journal="Brain", pages="5-9"), warnings=warnings)
    again = entry_record(entry(title="MEMORY FOR OBJECTS.", year="2001", author="Smith, J", journal="brain",
                               pages="5-9"))
    assert first.id.startswith("ref:") and first.id == again.id == f"ref:{first.custom.ref}"
    # Anything else it says of itself gives another record (the matcher then compares them): another author,
    # other pages, another issue, another abstract.
    for change in ({"author": "Smith, John"}, {"pages": "5-19"}, {"number": "2"}, {"abstract": "Rats."}):
        other = entry_record(entry(**{"title": "Memory for objects", "year": "2001", "author": "Smith, J.",
                                      "journal": "Brain", "pages": "5-9", **change}))
        assert other.id != first.id
    assert warnings == ["doi 'not a doi' is not a valid DOI; left out"]
    assert entry_record(entry(title="T", doi="arXiv:2101.00001v2")).id == "arxiv:2101.00001"
    # a DOI written only as the address is the DOI, and an arXiv DOI names its arXiv id
    arxiv = entry_record(entry(title="T", url="https://doi.org/10.48550/arXiv.2101.00001"))
    assert (arxiv.id, arxiv.custom.arxiv) == ("10.48550/arxiv.2101.00001", "2101.00001")
    with pytest.raises(ValueError, match="no title"):
        entry_record(entry(title="  ", doi="10.1234/x"))


JOURNAL_WITH_EPRINT = """@article{smith2020,
  title = {Object recognition in the perirhinal cortex of rats},
  author = {Smith, John and Doe, Jane},
  journal = {Journal of Neuroscience}, year = {2020}, volume = {40}, pages = {100--110},
  doi = {10.1523/JNEUROSCI.1234-19.2020}, pmid = {31234567}, openalex = {W2000000001},
  eprint = {1912.01234}, archivePrefix = {arXiv}
}
"""
PREPRINT = """@misc{smith2019,
  title = {Object recognition in the perirhinal cortex of rats},
  author = {Smith, John and Doe, Jane}, year = {2019},
  eprint = {1912.01234}, archivePrefix = {arXiv}
}
"""


@pytest.mark.parametrize("order", [(JOURNAL_WITH_EPRINT, PREPRINT), (PREPRINT, JOURNAL_WITH_EPRINT)],
                         ids=["journal first", "preprint first"])
def test_a_journal_article_naming_its_arxiv_preprint_is_linked_to_it_never_merged(sitegen, tmp_path, order):
    """An ADS or INSPIRE export gives a journal article its preprint's arXiv id (eprint): taken as the article's own
    identifier, the preprint imported before or after merged with it, the journal article then typed and dated as
    the preprint (or never counted as new). Its id is its DOI, first of its DOI, OpenAlex id, arXiv id and PMID; the
    arXiv id is left out with a note, and the two are linked as versions of one study."""
    warnings: list[str] = []
    [journal] = [entry_record(e, warnings=warnings) for e in read_references(JOURNAL_WITH_EPRINT, "bibtex")]
    assert journal.id == "10.1523/jneurosci.1234-19.2020" and journal.custom.arxiv is None
    assert (journal.PMID, journal.custom.openalex) == ("31234567", "W2000000001")
    assert warnings == ["arXiv id 1912.01234 names the preprint of the journal article 10.1523/jneurosci.1234-19.2020, "
                        "another record of the study; left out, so that the two are linked as versions, never merged"]
    review = new_review(sitegen, tmp_path)
    for n, text in enumerate(order):
        (tmp_path / f"{n}.bib").write_text(text, encoding="utf-8")
        assert import_json(sitegen, review, tmp_path / f"{n}.bib", "--at", (FIRST, SECOND)[n])["files"][0]["new"] == 1
    records = held(review).records
    assert sorted(records) == ["10.1523/jneurosci.1234-19.2020", "arxiv:1912.01234"]
    article = records["10.1523/jneurosci.1234-19.2020"]
    assert (article.type, article.year, article.container_title) == ("article-journal", 2020, "Journal of Neuroscience")
    assert records["arxiv:1912.01234"].custom.other_versions == [article.id]


def test_records_sharing_a_ref_are_one_work_and_the_matcher_never_sees_a_ref():
    one = entry_record(entry(title="Memory for objects", year="2001", author="Smith, J."))
    merged = deduplicate([one, one.model_copy(update={"abstract": "Longer."})])
    assert [record.id for record in merged.records] == [one.id] and merged.records[0].abstract == "Longer."
    assert one.identifiers() == {} and one.identity_keys() == {"ref": one.custom.ref}


# --------------------------------------------------------------------------- the command


def test_real_files_import_into_a_fresh_review_and_again_add_nothing(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    result = import_json(sitegen, review, SCOPUS, PSYCINFO, SPECIAL, CITATION, "--at", FIRST)
    counts = [(f["name"], f["format"], f["entries"], f["skipped"], f["new"], f["already"]) for f in result["files"]]
    assert counts == [("scopus_bib.bib", "bibtex", 11, 0, 11, 0), ("psycinfo_ris.ris", "ris", 1, 0, 1, 0),
                      ("records_pre_merged.csv", "csv", 12, 0, 9, 3), ("citation.ris", "ris", 1, 0, 1, 0)]
    events = imports(review)
    assert [event["file"]["name"] for event in events] == ["scopus_bib.bib", "psycinfo_ris.ris",
                                                            "records_pre_merged.csv", "citation.ris"]
    assert (events[0]["source"], events[0]["method"]) == ("Scopus", "database")  # the export names it
    assert (events[2]["source"], events[2]["method"]) == ("records_pre_merged.csv", "other")  # no database named
    assert events[2]["file"]["sha256"] == hashlib.sha256(SPECIAL.read_bytes()).hexdigest()
    records = held(review).records
    assert len(records) == 25 and all(event["record_ids"] for event in events)
    paper = records["10.1002/cl2.1230"]
    assert (paper.author[0].family, paper.author[0].given, paper.container_title, paper.year, paper.page) == (
        "Haddaway", "Neal R.", "Campbell Systematic Reviews", 2022, "e1230")
    assert any(record_id.startswith("ref:") for record_id in records)
    before = tree_bytes(review)
    again = import_json(sitegen, review, SPECIAL, "--at", SECOND)
    assert (again["files"][0]["new"], again["files"][0]["already"], again["matched"]) == (0, 12, [])
    after = tree_bytes(review)
    assert after["records.jsonl"] == before["records.jsonl"] and after.get("duplicates.csv") == before.get(
        "duplicates.csv")
    assert imports(review)[-1]["record_ids"] == events[2]["record_ids"]  # the same ids: identity, not luck


def test_medline_exports_import_under_their_pmids(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    result = import_json(sitegen, review, FIXTURES / "medline" / "pubmed_result1.txt", "--at", FIRST)
    assert result["files"][0]["format"] == "medline" and result["files"][0]["new_ids"] == ["pmid:12230038"]
    assert held(review).records["pmid:12230038"].PMID == "12230038"


def test_a_search_exported_by_two_databases_merges_and_matches_as_update_would(sitegen, tmp_path):
    records = list(held(EXAMPLE).records.values())[:40]
    with_dois, without = tmp_path / "embase.csv", tmp_path / "scopus.csv"
    with_dois.write_text(export(records, True), encoding="utf-8")
    without.write_text(export(records, False), encoding="utf-8")
    review = new_review(sitegen, tmp_path)
    first = import_json(sitegen, review, with_dois, "--at", FIRST, "--source", "Embase", "--method", "database")
    assert first["files"][0]["new"] == 40 and set(first["files"][0]["new_ids"]) == {r.id for r in records if r.DOI}
    second = import_json(sitegen, review, without, "--at", SECOND, "--source", "Scopus", "--method", "database")
    # what `update` would do with the same records: the same integration, the same verdicts
    after = held(review)
    expected = integrate({i: r for i, r in after.records.items() if not i.startswith("ref:")},
                         [entry_record(e) for e in read_references(without)])
    assert [(m["record_id"], m["duplicate_of"]) for m in second["matched"]] == [(a, b) for a, b, _ in expected.matched]
    assert len(second["matched"]) >= 30  # most of the works are recognised without their DOIs
    assert sorted(after.records) == sorted(expected.records)
    rows = list(csv.DictReader((review / "duplicates.csv").open(encoding="utf-8")))
    assert {(row["record_id"], row["duplicate_of"], row["decision"], row["reviewer"]) for row in rows} == {
        (new, canonical, "same", "sitegen") for new, canonical, _ in expected.matched}
    counts = prisma(sitegen, review)
    assert counts["identified_by_source"] == {"Embase": 40, "Scopus": 40}
    assert counts["identified_other_methods"] == 0
    assert counts["duplicates_removed"] == len(second["matched"])


def test_files_imported_together_count_new_records_as_if_imported_one_after_another(sitegen, tmp_path):
    # One work in two files (one with DOIs, one without): new in the file given first, already in the other,
    # in either order, as two imports would count them (a file without DOIs given first had 0 new of 40 in an
    # empty review, as its records were made the duplicates of the other's).
    records = list(held(EXAMPLE).records.values())[:40]
    with_dois, without = tmp_path / "embase.csv", tmp_path / "scopus.csv"
    with_dois.write_text(export(records, True), encoding="utf-8")
    without.write_text(export(records, False), encoding="utf-8")
    for order in ([with_dois, without], [without, with_dois]):
        folder = tmp_path / order[0].stem
        folder.mkdir()
        apart = new_review(sitegen, folder / "apart")
        each = [import_json(sitegen, apart, path, "--at", at)["files"][0] for path, at in zip(order, (FIRST, SECOND), strict=True)]
        together = import_json(sitegen, new_review(sitegen, folder / "together"), *order, "--at", FIRST)["files"]
        assert [(f["new"], f["already"]) for f in together] == [(f["new"], f["already"]) for f in each]
        assert together[0]["new"] == len({r.id for r in records}) and together[1]["new"] < 10


def test_a_work_twice_in_one_file_is_a_duplicate_of_a_record_new_in_it_not_one_the_review_held(sitegen, tmp_path):
    # A database export holds one work twice, once with its DOI and once without (as Embase's did): on a first
    # import the second is matched to the first, which is new; "already in it" would say the empty review held it.
    records = list(held(EXAMPLE).records.values())[:40]
    export_file = tmp_path / "embase.csv"
    with_dois, without = export(records, True), export(records, False)
    export_file.write_text(with_dois + re.sub(r"(?m)^r(\d+),", r"s\1,", without.split("\n", 1)[1]), encoding="utf-8")
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, export_file, "--at", FIRST, "--source", "Embase")
    (tmp_path / "again").mkdir()
    report = import_json(sitegen, new_review(sitegen, tmp_path / "again"), export_file, "--at", FIRST, "--source",
                         "Embase")["files"][0]
    assert code == 0, err
    matched = report["duplicates_of_new"]
    assert matched >= 30 and report["already"] == matched
    assert (f"{report['new']} records new to the review, 0 already in it, {matched} duplicates of records new in "
            "this file;") in out
    # The same file imported again: every record is one the review holds now.
    code, out, err = sitegen("import", review, export_file, "--at", SECOND, "--source", "Embase")
    assert code == 0 and f"0 records new to the review, {report['new'] + matched} already in it;" in out, out


def test_a_source_outside_the_registry_is_shown_by_its_name_and_counted_as_a_database():
    assert (label("Embase"), kind("Embase")) == ("Embase", "database")
    assert (label("pubmed"), kind("pubmed")) == ("PubMed", "database")


def test_an_import_counts_as_other_methods_unless_a_database(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    import_json(sitegen, review, PSYCINFO, "--at", FIRST, "--source", "Citation searching")
    import_json(sitegen, review, SCOPUS, "--at", SECOND, "--source", "PubMed")
    named = tmp_path / "named.csv"
    named.write_text(export(list(held(EXAMPLE).records.values())[:3], True, "Embase"), encoding="utf-8")
    import_json(sitegen, review, named, "--at", "2023-04-01T00:00:00Z")
    counts = prisma(sitegen, review)
    assert counts["identified_other_by_source"] == {"Citation searching": 1}
    assert counts["identified_by_source"] == {"Embase": 3, "pubmed": 11} and counts["identified_databases"] == 14
    assert [(event["source"], event["method"]) for event in imports(review)] == [
        ("Citation searching", "other"), ("pubmed", "database"), ("Embase", "database")]
    assert all(record.custom.sources == ["pubmed"] for record in held(review).records.values()
               if record.id in imports(review)[1]["record_ids"])
    # A bibliographic database given by name is one (`--source Embase` counted under other methods).
    again = new_review(sitegen, tmp_path / "again")
    import_json(sitegen, again, SCOPUS, "--at", FIRST, "--source", "embase")
    import_json(sitegen, again, PSYCINFO, "--at", SECOND, "--source", "Ovid MEDLINE(R) ALL")
    assert [(event["source"], event["method"]) for event in imports(again)] == [("embase", "database"),
                                                                                ("Ovid MEDLINE(R) ALL", "database")]
    from sitegen.living.imports import DATABASE_NAMES, OTHER_ROUTES

    def a_database(name: str) -> bool:
        return bool(DATABASE_NAMES.search(name)) and not OTHER_ROUTES.search(name)
    assert all(map(a_database, ["Embase (Ovid)", "CINAHL Complete", "CENTRAL", "The Cochrane Library"]))
    # A route by other methods naming the database it went through stays one (the ledger keeps it for good).
    assert not any(map(a_database, ["Citation searching (Scopus)", "Forward citation search in Web of Science",
                                    "Reference lists of Cochrane reviews", "Hand searching"]))


def test_a_source_spelled_otherwise_in_case_or_spacing_is_counted_as_an_earlier_import_names_it(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    import_json(sitegen, review, PSYCINFO, "--at", FIRST, "--source", "Embase")
    later = import_json(sitegen, review, SCOPUS, "--at", SECOND, "--source", " EMBASE ")["files"][0]
    assert later["source"] == "Embase" and "counted as 'Embase'" in " ".join(later["warnings"])
    assert [event["source"] for event in imports(review)] == ["Embase", "Embase"]
    assert list(prisma(sitegen, review)["identified_by_source"]) == ["Embase"]  # one box, not two


def test_one_command_gives_each_file_its_own_source_and_method_in_one_run(sitegen, tmp_path):
    # Embase and MEDLINE searched the same day, plus citation searching: exports that do not name their database,
    # each given its source in the order of the files. One time, so one run; each file its own event and box.
    records = list(held(EXAMPLE).records.values())
    files = [tmp_path / "embase.csv", tmp_path / "medline.csv", tmp_path / "citations.csv"]
    for file, chunk in zip(files, (records[:4], records[2:7], records[10:12]), strict=True):
        file.write_text(export(chunk, True), encoding="utf-8")
    review = new_review(sitegen, tmp_path)
    result = import_json(sitegen, review, *files, "--at", FIRST, "--source", "Embase", "--source", "MEDLINE",
                         "--source", "Citation searching")
    assert [(item["source"], item["method"]) for item in result["files"]] == [
        ("Embase", "database"), ("MEDLINE", "database"), ("Citation searching", "other")]
    assert [(event["source"], event["method"], event["file"]["name"]) for event in imports(review)] == [
        ("Embase", "database", "embase.csv"), ("MEDLINE", "database", "medline.csv"),
        ("Citation searching", "other", "citations.csv")]
    counts = prisma(sitegen, review)
    (run,) = counts["runs"]  # one time, one run
    assert run["returned_by_source"] == {"Embase": 4, "MEDLINE": 5}
    assert run["identified_by_source"] == {"Embase": 4, "MEDLINE": 5}
    assert run["identified_other_by_source"] == {"Citation searching": 2}
    assert counts["identified_by_source"] == {"Embase": 4, "MEDLINE": 5} and counts["identified_databases"] == 9
    assert counts["duplicates_removed"] == 2  # the two works both databases hold, counted once


def two_exports(tmp_path: Path, sizes: tuple[int, int]) -> tuple[Path, Path]:
    """Two CSV exports of the example's first records, `sizes` of them each, with their identifiers."""
    records = list(held(EXAMPLE).records.values())
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(export(records[:sizes[0]], True), encoding="utf-8")
    second.write_text(export(records[sizes[0]:sum(sizes)], True), encoding="utf-8")
    return first, second


def test_a_source_per_file_spelled_as_one_before_it_is_counted_as_that_one(sitegen, tmp_path):
    first, second = two_exports(tmp_path, (2, 2))
    review = new_review(sitegen, tmp_path)
    result = import_json(sitegen, review, first, second, "--at", FIRST, "--source", "Embase", "--source", "EMBASE")
    assert [item["source"] for item in result["files"]] == ["Embase", "Embase"]
    assert "--source 'EMBASE' is counted as 'Embase'" in " ".join(result["files"][1]["warnings"])
    assert not result["files"][0]["warnings"]
    assert prisma(sitegen, review)["identified_by_source"] == {"Embase": 4}  # one box, not two


@pytest.mark.parametrize("sources", [2, 4])
def test_sources_neither_once_nor_one_per_file_are_refused_with_nothing_written(sitegen, tmp_path, sources):
    records = list(held(EXAMPLE).records.values())
    files = [tmp_path / f"export{n}.csv" for n in range(3)]
    for n, file in enumerate(files):
        file.write_text(export(records[n:n + 1], True), encoding="utf-8")
    review = new_review(sitegen, tmp_path)
    before = tree_bytes(review)
    code, out, err = sitegen("import", review, *files, "--at", FIRST,
                             *(arg for n in range(sources) for arg in ("--source", f"Database {n}")))
    assert code == 2 and out == ""
    assert f"'--source': is given {sources} times for 3 files" in err and "once per file" in err
    assert "nothing was read or written" in err
    assert tree_bytes(review) == before


def test_a_source_given_once_is_every_files_source(sitegen, tmp_path):
    first, second = two_exports(tmp_path, (2, 3))
    review = new_review(sitegen, tmp_path)
    result = import_json(sitegen, review, first, second, "--at", FIRST, "--source", "Scopus")
    assert [(item["source"], item["method"]) for item in result["files"]] == [("Scopus", "database")] * 2
    assert prisma(sitegen, review)["identified_by_source"] == {"Scopus": 5}


def test_a_file_given_twice_with_two_sources_is_imported_once_under_the_first(sitegen, tmp_path):
    file = tmp_path / "a.csv"
    file.write_text(export(list(held(EXAMPLE).records.values())[:2], True), encoding="utf-8")
    review = new_review(sitegen, tmp_path)
    result = import_json(sitegen, review, file, file, "--at", FIRST, "--source", "Embase", "--source", "MEDLINE")
    assert [item["source"] for item in result["files"]] == ["Embase"]
    assert "imported once, under 'Embase', the source given with it first" in result["repeated_files"][0]


def test_into_the_example_review_marking_its_saved_search_seen(sitegen, example_copy, tmp_path):
    records = list(held(EXAMPLE).records.values())[:25]
    export_file = tmp_path / "export.csv"
    export_file.write_text(export(records, False), encoding="utf-8")
    search = example_copy / "searches" / "object-in-context.json"
    seen_before = json.loads(search.read_text())["seen_ids"]
    result = import_json(sitegen, example_copy, export_file, "--at", "2024-01-01T00:00:00Z",
                         "--seen", "object-in-context")
    ids = imports(example_copy)[-1]["record_ids"]
    seen = json.loads(search.read_text())["seen_ids"]
    assert seen[:len(seen_before)] == seen_before and seen[len(seen_before):] == [i for i in ids if i not in seen_before]
    assert result["seen"] == {"monitor_id": "object-in-context", "added": len(seen) - len(seen_before)}
    assert len(result["matched"]) >= 20
    # The import event names the search it marked, so taking those ids out of seen_ids again is found
    assert imports(example_copy)[-1]["seen"] == "object-in-context"
    added = [i for i in ids if i not in seen_before]
    assert added
    search.write_text(json.dumps({**json.loads(search.read_text()), "seen_ids": seen_before}, indent=2))
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "seen_ids lacks record(s) the import at ledger line" in out and added[0] in out


def test_a_malformed_file_names_its_line_and_writes_nothing(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    broken = tmp_path / "broken.ris"  # a real record without its ER line, then another real record
    broken.write_text(PSYCINFO.read_text(encoding="utf-8").replace("ER  -", "N1  - no end") + "\n"
                      + CITATION.read_text(encoding="utf-8"), encoding="utf-8")
    empty = tmp_path / "empty.ris"
    empty.write_text("", encoding="utf-8")
    before = tree_bytes(review)
    code, _, err = sitegen("import", review, SCOPUS, broken, "--at", FIRST)
    assert code == 1 and re.search(rf"{re.escape(str(broken))}:\d+: .*ER.*; nothing was imported", err)
    assert tree_bytes(review) == before
    code, _, err = sitegen("import", review, empty, "--at", FIRST)
    assert code == 1 and f"{empty}:1: no RIS record" in err and tree_bytes(review) == before
    result = import_json(sitegen, review, SCOPUS, broken, empty, "--at", FIRST, "--skip-bad")
    assert [(f["name"], f["entries"], f["skipped"], f["new"]) for f in result["files"]] == [
        ("scopus_bib.bib", 11, 0, 11), ("broken.ris", 2, 1, 1)]
    (skipped,) = result["files"][1]["skipped_entries"]
    assert skipped["line"] >= 1 and "ER" in skipped["reason"]
    assert result["files"][1]["new_ids"] == ["10.1002/cl2.1230"]
    assert [(f["file"], f["line"]) for f in result["skipped_files"]] == [(str(empty), 1)]


def test_an_entry_without_a_title_stops_the_import_or_is_skipped_and_listed(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    lines = SPECIAL.read_text(encoding="utf-8").splitlines(keepends=True)
    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    rows[2]["title"] = ""
    bad = tmp_path / "bad.csv"
    with bad.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    before = tree_bytes(review)
    code, _, err = sitegen("import", review, bad, "--at", FIRST)
    assert code == 1 and f"{bad}:4: entry '{rows[2]['ID']}': the entry has no title" in err
    assert tree_bytes(review) == before
    code, out, _ = sitegen("import", review, bad, "--at", FIRST, "--skip-bad")
    assert code == 0 and f"skipped line 4 (entry {rows[2]['ID']}): the entry has no title" in out
    assert re.search(rf"{re.escape(str(bad))}: 12 entries read \(csv\), 1 skipped, (\d+) records new to the review, "
                     r"(\d+) already in it, (\d+) duplicates", out).groups() == ("8", "0", "3")  # matched by metadata
    review = new_review(sitegen, tmp_path / "again")
    result = import_json(sitegen, review, bad, "--at", FIRST, "--skip-bad")
    assert result["files"][0]["skipped_entries"] == [{"line": 4, "id": rows[2]["ID"], "reason": "the entry has no title"}]
    assert (result["files"][0]["entries"], result["files"][0]["skipped"]) == (12, 1)
    assert imports(review)[0]["file"]["skipped"] == 1
    # An entry that could not be read has no id to name: the line alone is given ("(entry )" was shown).
    broken = tmp_path / "broken.bib"
    broken.write_text("@article{a, title={One}, year={2020}}\n@article{b, title={Two}, year={2020}\n"
                      "@article{c, title={Three}, year={2021}}\n")
    code, out, _ = sitegen("import", new_review(sitegen, tmp_path / "third"), broken, "--at", FIRST, "--skip-bad")
    assert code == 0 and "  - skipped line 2: not valid BibTeX" in out and "(entry )" not in out


def test_refused_before_anything_is_read(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    import_json(sitegen, review, PSYCINFO, "--at", SECOND)
    before = tree_bytes(review)
    code, _, err = sitegen("import", review, SCOPUS, "--at", SECOND)
    assert code == 1 and "not after the latest search run or import" in err
    code, _, err = sitegen("import", review, SCOPUS, "--at", "2023-04-01T00:00:00Z", "--seen", "nope")
    assert code == 1 and "no saved search" in err
    unlocked = tmp_path / "unlocked"
    sitegen("init", unlocked)
    code, _, err = sitegen("import", unlocked, SCOPUS, "--at", FIRST)
    assert code == 1 and "not locked" in err
    assert tree_bytes(review) == before


def test_a_file_in_another_encoding_is_named_or_reported(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    latin = tmp_path / "latin.ris"  # the real export, saved by a tool that writes Latin-1
    latin.write_bytes(CITATION.read_text(encoding="utf-8").replace("Haddaway", "Hädda").encode("latin-1"))
    before = tree_bytes(review)
    code, _, err = sitegen("import", review, latin, "--at", FIRST)
    assert code == 1 and f"{latin}:" in err and "UTF-8" in err and tree_bytes(review) == before
    code, _, err = sitegen("import", review, latin, "--at", FIRST, "--encoding", "no-such-encoding")
    assert code == 2 and "'--encoding': 'no-such-encoding'" in err and tree_bytes(review) == before
    import_json(sitegen, review, latin, "--at", FIRST, "--encoding", "latin-1")
    assert held(review).records["10.1002/cl2.1230"].author[0].family == "Hädda"


def test_a_year_sitegen_cannot_take_is_left_out_and_said():
    for written in ("1066", "3000", "9999", "0000", "MMXX"):
        warnings: list[str] = []
        record = entry_record(entry(title="T", year=written), warnings=warnings)
        assert record.issued is None
        assert warnings == [f"year {written!r} is not a year from 1450 to 2100; left out"]
    warnings = []
    assert entry_record(entry(title="T", year="2020a"), warnings=warnings).year == 2020 and warnings == []


def test_skip_bad_with_nothing_left_to_import_fails_and_writes_nothing(sitegen, tmp_path):
    # --skip-bad imports the rest: when every file and entry was skipped there is no rest, and a scheduled
    # job must not read "nothing was wrong" in a zero exit.
    review = new_review(sitegen, tmp_path)
    empty = tmp_path / "empty.ris"
    empty.write_text("", encoding="utf-8")
    untitled = tmp_path / "untitled.ris"
    untitled.write_text("TY  - JOUR\nAU  - Smith, J.\nPY  - 2020\nER  - \n", encoding="utf-8")
    before = tree_bytes(review)
    for files in ([empty], [untitled], [empty, untitled]):
        code, out, err = sitegen("import", review, *files, "--at", FIRST, "--skip-bad")
        assert code == 1 and "nothing was imported: every file and entry given was skipped" in err, out + err
        assert f"{files[0]}:1: " in err and "Traceback" not in err
        assert tree_bytes(review) == before


def test_one_work_written_with_its_identifiers_in_other_forms_is_one_record(sitegen, tmp_path):
    # An arXiv paper by the address of its PDF and of its abstract page; a PMID zero-padded and as a
    # spreadsheet's number: each pair is one work, never a work and its "other version".
    review = new_review(sitegen, tmp_path)
    ris = "TY  - JOUR\nTI  - Deep context models\nAU  - Doe, Jane\nPY  - 2021\nUR  - {}\nER  - \n"
    pdf, abstract = tmp_path / "pdf.ris", tmp_path / "abs.ris"
    pdf.write_text(ris.format("http://arxiv.org/pdf/2101.00001v3.pdf"), encoding="utf-8")
    abstract.write_text(ris.format("https://arxiv.org/abs/2101.00001v1"), encoding="utf-8")
    table = tmp_path / "pmids.csv"
    table.write_text("ID,title,author,year,pmid\na,A study of rats,\"Roe, Ann\",2019,0018632543\n"
                     "b,A study of rats,\"Roe, Ann\",2019,18632543.0\n", encoding="utf-8")
    for day, path in enumerate((pdf, abstract, table), start=1):
        import_json(sitegen, review, path, "--at", f"2023-03-0{day}T00:00:00Z")
    ids = [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()]
    assert ids == ["arxiv:2101.00001", "pmid:18632543"]


@pytest.mark.parametrize("address", ["javascript:alert(54)", "www.sciencedirect.com/science/article/pii/X"])
def test_an_address_that_is_no_web_address_is_left_out_with_a_note(sitegen, tmp_path, address):
    review = new_review(sitegen, tmp_path)
    ris = tmp_path / "one.ris"
    ris.write_text(f"TY  - JOUR\nTI  - A study of rats\nAU  - Doe, Jane\nPY  - 2021\nDO  - 10.1234/rats\n"
                   f"UR  - {address}\nER  - \n", encoding="utf-8")
    result = import_json(sitegen, review, ris, "--at", FIRST)
    assert any("is not a web address" in warning for warning in result["files"][0]["warnings"])
    (record,) = [json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()]
    assert "URL" not in record and address not in (review / "records.jsonl").read_text()


def test_a_run_never_shows_more_new_records_than_its_source_returned(sitegen, tmp_path):
    # A file holding one entry twice: both are identifications (one a duplicate removed), and the run's
    # line counts what the source returned in the same unit, so "returned" is never below "new".
    review = new_review(sitegen, tmp_path)
    entry = "TY  - JOUR\nTI  - A study of rats number {0}\nAU  - Doe, Jane\nPY  - 2021\nDO  - 10.1234/rats.{0}\nER  - \n"
    ris = tmp_path / "twice.ris"
    ris.write_text(entry.format(1) + entry.format(1) + entry.format(2), encoding="utf-8")
    import_json(sitegen, review, ris, "--at", FIRST, "--source", "Embase", "--method", "other")
    code, out, _ = sitegen("prisma", review, "--json")
    (run,) = json.loads(out)["runs"]
    # Embase by other methods (as --method says): its own arm's line
    assert run["returned_by_source"] == {} and run["other_returned_by_source"] == {"Embase": 3}
    assert run["identified_other_by_source"] == {"Embase": 3} and run["records"] == 2
    code, out, _ = sitegen("prisma", review)
    assert "Embase (other methods) returned 3, 3 new" in out


@pytest.mark.parametrize("second_title, second_page", [
    ("Sleep duration and atrial fibrillation in women in the UK Biobank", "124"),  # a supplement's next abstract
    ("Sleep duration and atrial fibrillation in the UK Biobank: part 2", "123"),  # the next part of a series
])
def test_works_that_share_a_doi_are_kept_apart_by_import_as_by_dedupe(sitegen, tmp_path, second_title, second_page):
    # Every abstract of a conference supplement carries its DOI: an import must not fold two of them into one
    # record (a study lost from screening) where `sitegen dedupe` keeps them apart.
    entry = ("TY  - JOUR\nTI  - {}\nAU  - Ahmed, K\nAU  - Olsen, P\nPY  - 2019\nT2  - European Heart Journal\n"
             "VL  - 40\nIS  - Supplement_1\nSP  - {}\nDO  - 10.1093/eurheartj/ehz745\nER  - \n")
    first_title = "Sleep duration and atrial fibrillation in the UK Biobank" + (": part 1" if "part" in second_title else "")
    ris = tmp_path / "supplement.ris"
    ris.write_text(entry.format(first_title, "123") + entry.format(second_title, second_page), encoding="utf-8")
    review = new_review(sitegen, tmp_path)
    import_json(sitegen, review, ris, "--at", FIRST)
    titles = sorted(json.loads(line)["title"] for line in (review / "records.jsonl").read_text().splitlines())
    assert titles == sorted([first_title, second_title])
    code, _, _ = sitegen("dedupe", ris, "--out", tmp_path / "sets.csv")
    assert code == 0 and (tmp_path / "sets.csv").read_text().splitlines() == ["merged_ids"]


@pytest.mark.parametrize(("fmt", "text"), [
    ("ris", "TY  - JOUR\nTI  - {title}\nPY  - {year}\nER  - \n"),
    ("bibtex", "@article{{a,\n  title={{{title}}},\n  year={{{year}}}\n}}\n"),
    ("csv", "ID,title,year\na,{title},{year}\n"),
    ("medline", "PMID- 1\nTI  - {title}\nDP  - {year}\n"),
])
@pytest.mark.parametrize(("written", "year"), [("In press", None), ("in press.", None), ("Forthcoming", None),
                                               ("n.d.", None), ("Spring 2020", 2020), ("2019-2020", 2019),
                                               ("2019--2020", 2019), ("2020a", 2020), ("c2019", 2019),
                                               ("2019May", 2019), ("n.d", None), ("s.d.", None)])
def test_every_format_reads_a_year_by_one_rule(fmt, text, written, year):
    # RIS refused a whole file for "In press", CSV for "Spring 2020", BibTeX for "2019--2020".
    from sitegen.references import read_references

    [entry] = read_references(text.format(title="A study of sleep", year=written), fmt)
    assert entry_record(entry).year == year


@pytest.mark.parametrize(("parts", "kept"), [([2023, 2, 30], [2023, 2]), ([2021, 4, 31], [2021, 4]),
                                             ([2024, 2, 29], [2024, 2, 29]), ([1, 1, 1], None), ([9999, 12, 31], None)])
def test_a_date_no_calendar_has_keeps_what_is_real(parts, kept):
    # 30 February was stored and exported ("DA  - 2023/02/30/"); a provider's year 1 exported as "PY  - 1"
    # could not be imported again.
    from sitegen.references.fields import iso_date
    from sitegen.sources.base import date_from_parts

    date = date_from_parts(parts)
    assert (date.date_parts[0] if date else None) == kept
    assert iso_date([str(part) for part in parts]) == ("-".join(f"{p:0{4 if i == 0 else 2}d}" for i, p in
                                                             enumerate(kept)) if kept else "")


def test_what_exports_write_for_no_value_is_no_value_and_their_kinds_and_particles_are_kept(tmp_path):
    # Scopus writes "[No abstract available]" and "[No author name available]" where it has none (they were
    # kept as an abstract and an author; "[No title available]" stays a title, which a record needs), and says
    # what a record is in BibTeX's document_type (an erratum was not told from its article); CSL's dropping
    # particle ("Ludwig van Beethoven") was dropped.
    scopus = tmp_path / "scopus.csv"
    scopus.write_text("Authors,Title,Year,Source title,Abstract,Document Type,EID\n"
                      "[No author name available],A trial,2020,Lancet,[No abstract available],Article,2-s2.0-1\n"
                      "Smith J.,[No title available],2020,Lancet,An abstract,Article,2-s2.0-2\n", encoding="utf-8")
    first, untitled = read_references(scopus)
    record = entry_record(first)
    assert (record.author, record.abstract, record.title) == ([], None, "A trial")
    assert entry_record(untitled).title == "[No title available]"  # a record needs a title: these words say why
    bibtex = ("@article{a, title={Erratum: A trial}, author={Doe, Jane}, year={2020}, document_type={Erratum}}\n"
              "@article{b, title={A trial}, author={Doe, Jane}, year={2020}, document_type={Article}}\n")
    assert [entry_record(e).custom.publication_types for e in read_references(bibtex, "bibtex")] == [["erratum"], []]
    csl = json.dumps([{"id": "x", "type": "book", "title": "Letters", "author": [
        {"given": "Ludwig", "dropping-particle": "van", "family": "Beethoven"}]}])
    assert entry_record(read_references(csl, "csl-json")[0]).author == [CslName(family="Beethoven", given="Ludwig van")]


@pytest.mark.parametrize("edit", ["drop-one-record-id", "count-off-by-one"])
def test_an_import_event_whose_counts_and_ids_disagree_is_named(sitegen, tmp_path, edit):
    # PRISMA counts identifications from file.entry_ids, screening takes record_ids: an event (edited and chained
    # again) naming a record only one of them names passed check, counted and never screened, or the reverse.
    from sitegen.living.ledger import event_line, next_event
    from sitegen.review.models import LedgerEvent

    review = new_review(sitegen, tmp_path)
    ris = tmp_path / "two.ris"
    ris.write_text("".join(f"TY  - JOUR\nTI  - A study of rats number {n}\nPY  - 2021\nDO  - 10.1234/rats.{n}\nER  - \n"
                           for n in (1, 2)), encoding="utf-8")
    import_json(sitegen, review, ris, "--at", FIRST)
    ledger = review / "ledger.jsonl"
    lines = ledger.read_text().splitlines()
    before, last = LedgerEvent.model_validate_json(lines[-2]), json.loads(lines[-1])
    payload = last["payload"]
    if edit == "drop-one-record-id":
        payload["record_ids"] = payload["record_ids"][:1]
        payload["file"]["new"] -= 1
    else:
        payload["file"]["already"] += 1
    lines[-1] = event_line(next_event(before, last["type"], last["ts"], payload))
    ledger.write_text("\n".join(lines) + "\n")
    state = review / "state.json"  # the tail anchor names the last event's hash: re-anchored as the edit would be
    state.write_text(re.sub(r'"hash": "[0-9a-f]{64}"', f'"hash": "{json.loads(lines[-1])["hash"]}"',
                            state.read_text(), count=1))
    code, out, _ = sitegen("check", review)
    assert code == 1 and f"ledger.jsonl:{len(lines)}" in out
    assert ("name different records" if edit == "drop-one-record-id" else "do not add up") in out, out
    # An import event written before `sitegen import` existed (no file) is read as it is, repeats and all.
    from sitegen.review.models import ImportPayload

    legacy = ImportPayload.model_validate({"source": "openalex", "description": "x", "record_ids": ["10.1234/a"] * 2})
    assert legacy.record_ids == ["10.1234/a", "10.1234/a"]


def test_a_web_of_science_bibtex_export_of_isi_accession_numbers_counts_as_that_database(sitegen, tmp_path):
    # Web of Science's BibTeX export named its records "ISI:…" before "WOS:…", as litsearchr's
    # inst/extdata/borealis/final_search/bibs/WoS_corecollection_final_1.bib has them (fields shortened).
    exported = tmp_path / "savedrecs.bib"
    exported.write_text("\n@article{ ISI:000458747000001,\nAuthor = {Maphisa, David H. and Altwegg, Res},\n"
                        "Title = {{Dynamic multi-species occupancy models reveal individualistic habitat\n"
                        "   preferences in a high-altitude grassland bird community}},\nJournal = {{PEERJ}},\n"
                        "Year = {{2019}},\nVolume = {{7}},\nDOI = {{10.7717/peerj.6276}},\n"
                        "Unique-ID = {{ISI:000458747000001}},\n}\n", encoding="utf-8")
    review = new_review(sitegen, tmp_path)
    import_json(sitegen, review, exported, "--at", FIRST)
    assert [(event["source"], event["method"]) for event in imports(review)] == [("Web of Science", "database")]


def test_the_import_names_each_file_as_every_message_shows_a_path(sitegen, tmp_path):
    # A file name holding a newline is shown in double quotes with it escaped (errors.shown_path), in the
    # report's lines and in the error when nothing is left to import, so that each stays one line.
    review = new_review(sitegen, tmp_path)
    readable = tmp_path / "psyc\ninfo.ris"
    readable.write_bytes(PSYCINFO.read_bytes())
    broken = tmp_path / "broken\n.ris"
    broken.write_text("", encoding="utf-8")
    code, out, err = sitegen("import", review, broken, "--at", FIRST, "--skip-bad")
    assert code == 1 and f'the first, "{tmp_path}/broken\\n.ris":1: ' in err, err
    code, out, err = sitegen("import", review, readable, broken, "--at", FIRST, "--skip-bad")
    assert code == 0, err
    assert f'- "{tmp_path}/psyc\\ninfo.ris": ' in out and f'- "{tmp_path}/broken\\n.ris":1: skipped' in out, out


def test_one_entry_and_the_records_imported_outside_a_batch_are_named_as_such(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    one = tmp_path / "one.bib"
    one.write_text("@" + SCOPUS.read_text(encoding="utf-8").split("\n@")[1], encoding="utf-8")  # its first entry
    code, out, err = sitegen("import", review, one, "--at", FIRST)
    assert code == 0, err
    assert f"{one}: 1 entry read (bibtex), 0 skipped, 1 record new to the review, 0 already in it" in out
    code, out, err = sitegen("import", review, SCOPUS, "--at", "2024-02-01T00:00:00Z")
    assert code == 0, err
    ids = [json.loads(line)["id"] for line in (review / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    for reviewer, decisions in (("reviewer-a", "include"), ("reviewer-b", "exclude")):
        rows = "".join(f"{record_id},{decisions if n % 2 else 'include'},,\n" for n, record_id in enumerate(ids))
        (review / "screening" / "title-abstract" / f"{reviewer}.csv").write_text(
            "record_id,decision,reason,note\n" + rows, encoding="utf-8")
    code, out, err = sitegen("screen", "kappa", review)
    assert code == 0, err
    assert "imported outside a batch, title-abstract: reviewer-a × reviewer-b" in out and "batch -" not in out


def test_an_address_hiding_where_it_leads_reaches_no_page_or_download(sitegen, tmp_path):
    # https://www.nature.com@evil.example/ leads to evil.example, and https://reader:secret@host/ would publish a
    # password: each is left out with a note. A host in look-alike letters (a Cyrillic а in "nature") is kept as
    # the xn-- name a browser goes to, in the record and so in every download.
    review = new_review(sitegen, tmp_path)
    items = [{"id": "a", "type": "article-journal", "title": "A study of rats", "DOI": "10.1234/rats",
              "URL": "https://www.nature.com@evil.example/rats",
              "custom": {"fulltext_url": "https://reader:secret@europepmc.org/rats"}},
             {"id": "b", "type": "article-journal", "title": "A study of mice", "DOI": "10.1234/mice",
              "URL": "https://www.n\u0430ture.com/mice", "custom": {"fulltext_url": "https://example.org/\u200bmice"}}]
    (tmp_path / "items.json").write_text(json.dumps(items), encoding="utf-8")
    warnings = import_json(sitegen, review, tmp_path / "items.json", "--at", FIRST)["files"][0]["warnings"]
    assert sum("names a user or a password before its host" in warning for warning in warnings) == 2
    assert sum("invisible character" in warning for warning in warnings) == 1
    records = {json.loads(line)["id"]: json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()}
    assert records["10.1234/mice"]["URL"] == "https://www.xn--nture-4ve.com/mice"
    assert "URL" not in records["10.1234/rats"] and "fulltext_url" not in records["10.1234/rats"]["custom"]
    code, _, err = sitegen("build", review, "--out", tmp_path / "site")
    assert code == 0, err
    site = tree_bytes(tmp_path / "site")
    for hidden in ("evil.example", "secret", "n\u0430ture", "\u200b"):
        assert not [path for path, content in site.items() if hidden.encode() in content], hidden
    for download in ("records.ris", "records.bib", "records.csv", "records.json"):
        assert b"https://www.xn--nture-4ve.com/mice" in site[f"downloads/{download}"], download


def test_a_record_garbled_by_a_spreadsheet_is_imported_as_exported_with_a_warning_at_its_line(sitegen, tmp_path):
    # An export opened in Excel as Windows-1252 and saved again: the database's text is the record's, so it is kept,
    # but said, with the line and the text meant, where it was published garbled without a word.
    review = new_review(sitegen, tmp_path)
    ris = tmp_path / "garbled.ris"
    ris.write_text("TY  - JOUR\nTI  - Objects in context\nDO  - 10.1000/one\nER  - \n\n"
                   "TY  - JOUR\nTI  - Mice donâ€™t forget the cafÃ©\nDO  - 10.1000/two\nER  - \n", encoding="utf-8")
    result = import_json(sitegen, review, ris, "--at", FIRST, "--source", "Embase")
    [warning] = result["files"][0]["warnings"]
    assert warning.startswith("line 6: entry") and "its title holds 'donâ€™t' at character 6, which is 'don’t' " \
        "garbled: kept as exported" in warning
    titles = [json.loads(line)["title"] for line in (review / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert "Mice donâ€™t forget the cafÃ©" in titles
