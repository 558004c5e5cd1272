"""The record downloads' page keys: a download is rendered again exactly when what it shows changed. The four
formats of a set share one digest of its records and citation keys, and the CSV alone adds the screening
outcomes it shows (see `sitegen.site.downloads.record_downloads`)."""

from __future__ import annotations

import dataclasses

from conftest import EXAMPLE

from sitegen.site import exports
from sitegen.site.downloads import record_downloads
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
