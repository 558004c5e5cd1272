"""One fact, one number, wherever the site shows it (from an attack that cross-checked every page after a
reviewer's edits): a confirmed duplicate is counted as PRISMA counts it (identified, then removed before
screening) on the screening page, a batch's page, the changelog and the home page's chart; and a reviewer
who makes a newer record the one that stands for an included study has changed no study."""

from __future__ import annotations

import csv
import json

from lxml import html as lxml_html

from sitegen.living.facts import ReviewFacts
from sitegen.living.versions import version_history
from sitegen.review.folder import load_review

IMPORTED_AT = "2023-05-01T00:00:00Z"


def ris_copy(record: dict) -> str:
    """The record as another database exports it: the same work without its DOI (matched by its metadata)."""
    pages = (record.get("page") or "").replace("–", "-").split("-")
    lines = ["TY  - JOUR", f"TI  - {record['title']}",
             *(f"AU  - {name.get('family', name.get('literal'))}, {name.get('given', '')}" for name in record["author"]),
             f"PY  - {record['issued']['date-parts'][0][0]}", f"JO  - {record['container-title']}",
             f"VL  - {record.get('volume', '')}", f"SP  - {pages[0]}", f"EP  - {pages[-1]}", "ER  - ", ""]
    return "\n".join(lines)


def a_record(review, standing: str) -> dict:
    """A record of the example standing so ("included", "excluded-title-abstract") with what the matcher needs to
    know it again (a journal, volume, pages)."""
    facts = ReviewFacts(load_review(review)[0])
    for line in (review / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if facts.standings[record["id"]].kind == standing and record.get("DOI") and record.get("volume") \
                and record.get("page") and record.get("author") and record.get("container-title"):
            return record
    raise AssertionError(f"the example has no {standing} record to copy")


def imported_copy(sitegen, review, tmp_path, standing: str) -> tuple[str, str]:
    """(the copy's id, the id of the record it copies), imported as from Embase and matched by sitegen."""
    original = a_record(review, standing)
    ris = tmp_path / "embase.ris"
    ris.write_text(ris_copy(original), encoding="utf-8")
    code, out, err = sitegen("import", review, ris, "--at", IMPORTED_AT, "--source", "Embase", "--json")
    assert code == 0, err
    matched = json.loads(out)["matched"]
    assert [row["duplicate_of"] for row in matched] == [original["id"]]
    return matched[0]["record_id"], original["id"]


def tallies(page) -> dict[str, tuple[str, int]]:
    """Batch label -> (its Records cell, the records its title-and-abstract tally counts)."""
    rows = {}
    for row in page.xpath("//table[contains(@class, 'batches')]/tbody/tr"):
        label = row.xpath("./td[@data-label='Batch']")[0].text_content().strip()
        records = row.xpath("./td[@data-label='Records']")[0].text_content().strip()
        rows[label] = (records, int(row.xpath("./td[@data-stage='title-abstract']")[0].get("data-records")))
    return rows


def test_a_confirmed_duplicate_is_counted_as_prisma_counts_it_on_every_page(sitegen, example_copy, tmp_path):
    copy, original = imported_copy(sitegen, example_copy, tmp_path, "excluded-title-abstract")
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 0, err
    site = tmp_path / "site"
    screening = tallies(lxml_html.fromstring((site / "screening.html").read_bytes()))
    # The import's record is identified, then removed as a duplicate: the row says so beside its count.
    assert screening["Imported records"] == ("1 (1 confirmed duplicate of other records, not screened)", 0)
    home = lxml_html.fromstring((site / "index.html").read_bytes())
    summary = home.xpath("//p[@class='changelog-summary']")[0].text_content()
    assert "1 new duplicate of a record found before, removed" in summary and "new record," not in summary
    assert copy not in {a.get("href", "").split("/")[-1].removesuffix(".html")
                        for a in home.xpath("//dl[@class='changelog']//a")}
    chart = home.get_element_by_id("chart-runs")
    assert "2 search runs and 1 import from 2023-04-10 to 2023-05-01" in chart.find("desc").text
    assert "the last import identified 1, 0 of them new" in chart.find("desc").text  # matched: not new
    # The import is listed among what changed, and on the searches page, as PRISMA's diagram draws it.
    assert "1 import of records" in summary
    imported = " ".join(home.xpath("//dl[@class='changelog']")[0].text_content().split())
    assert "Records imported (1)" in imported and "from Embase: 1 record read from embase.ris, 0 new" in imported
    searches = " ".join(lxml_html.fromstring((site / "searches.html").read_bytes()).text_content().split())
    assert "Records imported" in searches and "from Embase: 1 record read from embase.ris" in searches

    # The other way round: the record of batch 1 is the duplicate, the imported copy stands for the work.
    (example_copy / "duplicates.csv").write_text(
        f"record_id,duplicate_of,decision,reviewer,note\n{original},{copy},same,reviewer-a,\n", encoding="utf-8")
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 0, err
    screening = tallies(lxml_html.fromstring((site / "screening.html").read_bytes()))
    batch = next(label for label in screening if label.startswith("Batch 1"))
    records, screened = screening[batch]
    assert records.startswith(f"{screened + 1} (1 confirmed duplicate")
    page = (site / "batches" / "1.html").read_text(encoding="utf-8")
    ranked = lxml_html.fromstring(page).xpath("//table[contains(@class, 'ranked')]/tbody/tr")
    assert "1 of them is a duplicate of other records confirmed in" in page and f"so {screened} are." in page
    assert len(ranked) == screened


def test_a_newer_record_standing_for_an_included_study_changes_no_study(sitegen, example_copy, tmp_path):
    copy, original = imported_copy(sitegen, example_copy, tmp_path, "included")
    (example_copy / "duplicates.csv").write_text(
        f"record_id,duplicate_of,decision,reviewer,note\n{original},{copy},same,reviewer-a,\n", encoding="utf-8")
    for stage, reviewers in (("title-abstract", ("reviewer-a", "reviewer-b")), ("full-text", ("reviewer-a",))):
        for reviewer in reviewers:
            path = example_copy / "screening" / stage / f"{reviewer}.csv"
            with path.open("a", encoding="utf-8", newline="") as file:
                csv.writer(file, lineterminator="\n").writerow([copy, "include", "", ""])
    code, out, err = sitegen("check", example_copy)
    assert code == 0, out + err
    review, problems = load_review(example_copy)
    assert not problems
    facts = ReviewFacts(review)
    history = version_history(review, facts)
    assert copy in facts.included and original not in facts.included
    log = history.since_latest
    assert log.studies_added == [] and log.studies_removed == []
    assert original not in {change.record_id for change in log.decisions}
    assert log.new_duplicates == [] and log.new_records == [copy]


def test_a_report_not_retrieved_is_not_retrieved_in_the_records_download():
    # The lists and PRISMA say it was not assessed (not excluded); the CSV download said "exclude".
    from types import SimpleNamespace

    from conftest import EXAMPLE

    from sitegen.screening.outcomes import Outcome
    from sitegen.site.downloads import record_writers
    from sitegen.workspace import open_review

    review = open_review(EXAMPLE).review
    first, second = list(review.records)[:2]
    outcomes = {"title-abstract": {first: Outcome("include", "", ("a",)), second: Outcome("include", "", ("a",))},
                "full-text": {first: Outcome("exclude", "not-retrieved", ("a",)),
                              second: Outcome("exclude", "other", ("a",))}}
    writers = record_writers(review, SimpleNamespace(outcomes=outcomes))
    rows = {row["id"]: row for row in csv.DictReader(writers.write("csv", [review.records[first],
                                                                           review.records[second]]).splitlines())}
    assert (rows[first]["full_text"], rows[second]["full_text"]) == ("not-retrieved", "exclude")


def test_a_match_is_added_under_duplicates_csv_own_header(sitegen, example_copy, tmp_path):
    # duplicates.csv with its columns in another order (check reads them by name): the pair was written turned
    # round, the screened record made the duplicate of the new one.
    (example_copy / "duplicates.csv").write_text("duplicate_of,record_id,decision,reviewer,note\n", encoding="utf-8")
    copy, original = imported_copy(sitegen, example_copy, tmp_path, "included")
    rows = list(csv.DictReader((example_copy / "duplicates.csv").open(encoding="utf-8")))
    assert [(row["record_id"], row["duplicate_of"]) for row in rows] == [(copy, original)]
    assert sitegen("check", example_copy)[0] == 0


def test_a_match_is_added_to_a_duplicates_csv_without_a_note_column_and_keeps_its_line_ends(sitegen, example_copy,
                                                                                            tmp_path):
    # check accepts a file without the optional note column, then every update or import that matched a record
    # failed on it; and a file written on Windows was rewritten with LF line ends and no byte-order mark.
    (example_copy / "duplicates.csv").write_bytes(b"\xef\xbb\xbfrecord_id,duplicate_of,decision,reviewer\r\n")
    copy, original = imported_copy(sitegen, example_copy, tmp_path, "included")
    data = (example_copy / "duplicates.csv").read_bytes()
    assert data == f"\ufeffrecord_id,duplicate_of,decision,reviewer\r\n{copy},{original},same,sitegen\r\n".encode()
    assert sitegen("check", example_copy)[0] == 0


def test_a_study_made_a_duplicate_of_another_study_already_included_is_removed():
    # Both were included: one study fewer, as PRISMA counts it; the changelog said nothing was removed. (Two
    # included records the matcher can join are rare: here the latest version and the review are given them.)
    import dataclasses

    from conftest import EXAMPLE

    from sitegen.living.versions import changelog

    review, _ = load_review(EXAMPLE)
    history = version_history(review, ReviewFacts(review))
    before, after = history.latest, history.current
    first, second = after.included[:2]
    assert first in before.included and second in before.included
    after = dataclasses.replace(after, duplicates={second: first})
    after.__dict__["included"] = [rid for rid in after.included if rid != second]
    log = changelog(before, after)
    assert log.studies_removed == [second] and log.studies_added == []
