"""The record downloads' page keys: a download is rendered again exactly when what it shows changed. The four
formats of a set share one digest of its records and citation keys, and the CSV alone adds the screening
outcomes it shows (see `sitegen.site.downloads.record_downloads`)."""

from __future__ import annotations

import dataclasses

from conftest import EXAMPLE

from sitegen.screening.outcomes import NOT_RETRIEVED, Outcome
from sitegen.site import exports
from sitegen.site.downloads import citation_keys, first_seen, record_downloads
from sitegen.site.output import Page
from sitegen.site.pages import Site
from sitegen.workspace import open_review


def download_keys(review, facts) -> dict[str, str | None]:
    return {page.path: page.key for page in record_downloads(Site(review, facts, None)) if isinstance(page, Page)}


def changed(before: dict[str, str | None], after: dict[str, str | None]) -> set[str]:
    assert before.keys() == after.keys()
    return {path for path in before if before[path] != after[path]}


ALL_RECORDS = {"downloads/records.ris", "downloads/records.bib", "downloads/records.json", "downloads/records.csv"}


def test_a_decision_changes_the_key_of_the_csv_that_shows_it_alone():
    example = open_review(EXAMPLE)
    before = download_keys(example.review, example.facts)
    assert download_keys(example.review, example.facts) == before  # the same review, the same keys
    title_abstract = example.facts.outcomes["title-abstract"]
    record_id = next(rid for rid in example.review.records if rid in title_abstract and rid not in example.facts.included)
    outcome = title_abstract[record_id]
    title_abstract[record_id] = dataclasses.replace(outcome, decision="maybe" if outcome.decision != "maybe" else "exclude")
    assert changed(before, download_keys(example.review, example.facts)) == {"downloads/records.csv"}


def test_a_changed_citation_key_changes_every_format_of_its_set(monkeypatch):
    # No format's key may stand for the records alone: every format writes the citation keys, which depend
    # on the other records and the order the ledger first saw them in.
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")  # the keys made by the function patched, not kept ones
    example = open_review(EXAMPLE)
    before = download_keys(example.review, example.facts)
    record_id = next(iter(example.review.records))
    citation_keys = exports.citation_keys
    monkeypatch.setattr(exports, "citation_keys", lambda records: {**citation_keys(records), record_id: "another"})
    assert changed(before, download_keys(example.review, example.facts)) == ALL_RECORDS


def test_a_changed_record_changes_every_format_of_its_set():
    example = open_review(EXAMPLE)
    review = example.review
    before = download_keys(review, example.facts)
    record_id = next(rid for rid in review.records if rid not in example.facts.included)
    records, digests = dict(review.records), dict(review.record_digests)
    records[record_id] = records[record_id].model_copy(update={"volume": "999"})
    digests[record_id] = b"another line"
    after = download_keys(dataclasses.replace(review, records=records, record_digests=digests), example.facts)
    assert changed(before, after) == ALL_RECORDS


def test_a_changed_record_without_a_line_still_changes_every_format_of_its_set():
    # A set's records stand in its keys as their lines' digests (`Keys.as_lines`) only when each has one and is the
    # review's own: a record the review holds no line for is counted field by field, so a change to it still counts.
    example = open_review(EXAMPLE)
    review = example.review
    record_id = next(rid for rid in review.records if rid not in example.facts.included)
    digests = {rid: digest for rid, digest in review.record_digests.items() if rid != record_id}
    unlined = dataclasses.replace(review, record_digests=digests)
    before = download_keys(unlined, example.facts)
    assert download_keys(unlined, example.facts) == before
    records = dict(review.records)
    records[record_id] = records[record_id].model_copy(update={"volume": "999"})
    assert changed(before, download_keys(dataclasses.replace(unlined, records=records), example.facts)) == ALL_RECORDS


def test_records_stand_as_their_lines_only_when_each_is_the_reviews_own_with_a_line():
    example = open_review(EXAMPLE)
    review = example.review
    keys = Site(review, example.facts, None).keys
    records = list(review.records.values())
    assert keys.as_lines(records) == [review.record_digests[record.id] for record in records]
    copied = [*records[:-1], records[-1].model_copy()]
    assert keys.as_lines(copied) is copied  # a copy is not the line's record: counted as itself
    unlined = Site(dataclasses.replace(review, record_digests={}), example.facts, None).keys
    assert unlined.as_lines(records) is records


def test_the_csv_key_counts_the_outcomes_as_the_csv_shows_them():
    # The CSV shows a title-and-abstract decision and a full-text one, `not-retrieved` for a report not retrieved:
    # a reason it does not show leaves its key, an outcome of the same values but another object too.
    example = open_review(EXAMPLE)
    full_text = example.facts.outcomes["full-text"]
    record_id = next(rid for rid in example.review.records if rid not in full_text and rid not in example.facts.duplicates)
    full_text[record_id] = Outcome("exclude", "wrong-population", ("a",))
    before = download_keys(example.review, example.facts)
    full_text[record_id] = Outcome("exclude", "wrong-outcome", ("a", "b"))
    assert changed(before, download_keys(example.review, example.facts)) == set()
    full_text[record_id] = Outcome("exclude", NOT_RETRIEVED, ("a",))
    assert changed(before, download_keys(example.review, example.facts)) == {"downloads/records.csv"}
    full_text[record_id] = Outcome("exclude", "wrong-population", ("a",))
    assert download_keys(example.review, example.facts) == before


def test_citation_keys_are_kept_by_the_lines_of_the_records_in_the_order_first_seen(tmp_path, monkeypatch):
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(tmp_path / "kept"))
    review = open_review(EXAMPLE).review
    made = []
    make = exports.citation_keys
    monkeypatch.setattr(exports, "citation_keys", lambda records: made.append(1) or make(records))
    keys = citation_keys(review)
    assert keys == make(first_seen(review)) and len(made) == 1
    assert citation_keys(review) == keys and len(made) == 1  # kept: the same records, the same keys
    record_id = next(iter(review.records))
    records, digests = dict(review.records), dict(review.record_digests)
    records[record_id] = records[record_id].model_copy(update={"title": "Zebrafish everywhere"})
    digests[record_id] = b"another line"
    retitled = dataclasses.replace(review, records=records, record_digests=digests)
    assert citation_keys(retitled)[record_id].endswith("zebrafish") and len(made) == 2  # another line: made again
    assert citation_keys(retitled) == make(first_seen(retitled)) and len(made) == 2
