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


def test_a_download_in_keyed_parts_is_the_file_sitegen_export_writes(monkeypatch):
    from sitegen.site import downloads

    monkeypatch.setattr(downloads, "PART_RECORDS", 7)
    monkeypatch.setattr(downloads, "MOST_PART_RECORDS", 20)
    example = open_review(EXAMPLE)
    site = Site(example.review, example.facts, None)
    writers = downloads.record_writers(site.review, site.facts)
    pages = {page.path: page for page in record_downloads(site) if isinstance(page, Page)}
    for name, records in downloads.record_sets(site).items():
        for form in downloads.FORMATS:
            parts = list(pages[downloads.download_path(name, form)].render())
            assert len(parts) > 2 and all(isinstance(part, downloads.Part) for part in parts)
            assert len({part.key for part in parts}) == len(parts)  # each part its own key
            assert "".join(part.render() for part in parts) == writers.write(form.extension, records), (name, form)


def test_a_records_part_ends_where_its_digest_says_so_an_added_record_moves_no_other_end():
    from sitegen.site import downloads

    lines = [bytes([n % 256, n // 256]) + b"\0\0" for n in range(3000)]  # as digests: spread, some multiples of 200
    ends = downloads._part_ends(lines)
    assert ends[-1] == 3000 and all(0 < b - a <= downloads.MOST_PART_RECORDS for a, b in zip([0, *ends], ends, strict=False))
    added = [*lines[:1000], b"\x01\x02\x03\x04", *lines[1000:]]  # one record more, mid-file (not a part's end)
    assert downloads._part_ends(added) == [end + (end > 1000) for end in ends]


def test_a_decision_renders_one_part_of_the_records_csv_again(example_copy, tmp_path, monkeypatch):
    import json

    from sitegen.commands import build
    from sitegen.site import downloads

    monkeypatch.setattr(downloads, "PART_RECORDS", 7)
    out = tmp_path / "site"
    build(example_copy, out, environ={})
    layout = json.loads((out / ".sitegen-manifest.json").read_text())["parts"]["downloads/records.csv"]
    assert len(layout) > 10
    rendered = []
    real = downloads.RecordWriters.write
    monkeypatch.setattr(downloads.RecordWriters, "write",
                        lambda self, extension, records, span=exports.WHOLE: rendered.append(extension)
                        or real(self, extension, records, span))
    decisions = example_copy / "screening" / "title-abstract" / "adjudication.csv"
    lines = decisions.read_text(encoding="utf-8").splitlines(keepends=True)
    flipped = next(index for index, line in enumerate(lines) if ",exclude," in line)
    lines[flipped] = lines[flipped].replace(",exclude,", ",include,", 1)
    decisions.write_text("".join(lines), encoding="utf-8")
    build(example_copy, out, environ={})
    assert rendered == ["csv"]  # one part of the CSV, and of no other download
    fresh = tmp_path / "fresh"
    build(example_copy, fresh, environ={})
    assert (out / "downloads" / "records.csv").read_bytes() == (fresh / "downloads" / "records.csv").read_bytes()
