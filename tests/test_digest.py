"""Ranked batches, the weekly digest, and what the site shows of screening."""

from __future__ import annotations

import json
import os
from datetime import timedelta

import pytest
from conftest import EXAMPLE, FIXTURES, tree_bytes

from sitegen.commands import build
from sitegen.site.output import MANIFEST
from sitegen.site.pages import page_slug
from sitegen.text import counted


def test_rank_prints_the_screening_order(sitegen):
    # `screen rank` is the screening order now (tests/test_ranking.py); the seed-002 shape is the digest's.
    code, out, _ = sitegen("screen", "rank", EXAMPLE, "--batch", "2", "--json")
    assert code == 0
    order = json.loads(out)
    assert set(order) == {"method", "learned", "includes", "excludes", "rows"}
    assert order["rows"] == [] and order["learned"]  # every record of the example has its decision


def test_ranking_never_writes_a_decision(sitegen, tmp_path):
    import shutil

    from conftest import tree_bytes

    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    before = tree_bytes(review)
    sitegen("screen", "rank", review, "--batch", "1")
    sitegen("digest", review, "--week", "2023-W16")
    assert tree_bytes(review) == before


def test_weekly_digest_sections(sitegen, tmp_path):
    code, out, _ = sitegen("digest", EXAMPLE, "--week", "2023-W16", "--out", tmp_path / "digest.md")
    assert code == 0
    text = (tmp_path / "digest.md").read_text()
    for heading in ("# Weekly digest 2023-W16", "## Keep", "## Review", "## Dropped", "## Already covered",
                    "## Calibration"):
        assert heading in text
    assert "screening batch 2" in text
    code, out, _ = sitegen("digest", EXAMPLE, "--week", "2023-W02")
    assert code == 0 and "0 new records" in out
    code, _, err = sitegen("digest", EXAMPLE, "--week", "last week")
    assert code == 2 and "Invalid value for '--week': 'last week' is not an ISO week" in err


def test_the_site_shows_screening_batches_and_digests(tmp_path):
    site = tmp_path / "site"
    build(EXAMPLE, site, environ={})
    home = (site / "index.html").read_text()
    assert 'href="digests/2023-W16.html"' in home and 'href="screening.html"' in home
    screening = (site / "screening.html").read_text()
    assert "Kappa (95% CI)" in screening and "0.90 (0.83 to 0.97)" in screening
    assert "1 conflict</strong> awaits adjudication" in screening
    batch = (site / "batches" / "2.html").read_text()
    assert "screened under protocol version 2" in batch and "The ranking decides nothing" in batch
    assert (site / "digests" / "2023-W16.html").is_file() and (site / "downloads" / "digest-2023-W16.md").is_file()
    protocol = (site / "protocol.html").read_text()
    assert "Lock and amendments" in protocol and "Genetically modified rodents" in protocol


@pytest.mark.parametrize("week", ["2026-02", "2026-13-1", "26-W02", "2026-W54"])
def test_a_week_that_is_no_iso_week_is_refused(week):
    # "2026-02" reads as February as much as week 2: only YYYY-Www (or ISO's basic YYYYWww) is a week.
    from sitegen.errors import SitegenError
    from sitegen.screening.digest import week_start
    with pytest.raises(SitegenError, match="is not an ISO week such as 2026-W23"):
        week_start(week)
    assert week_start("2026W02") == week_start("2026-W02")


@pytest.mark.parametrize(("week", "why"), [
    ("2025-W53", "2025 has weeks W01 to W52"),  # 2025 began on a Wednesday: 52 weeks
    ("2026-W00", "2026 has weeks W01 to W53"),  # there is no week 0
    ("2026-W54", "2026 has weeks W01 to W53"),
    ("0000-W01", ""),  # no year 0: refused as no week, not a crash working out its weeks
])
def test_a_week_number_the_year_has_not_says_which_it_has(sitegen, week, why):
    code, out, err = sitegen("digest", EXAMPLE, "--week", week)
    assert code == 2 and out == ""
    assert f"'--week': '{week}' is not an ISO week such as 2026-W23{': ' + why if why else ''}" in err


@pytest.mark.parametrize(("week", "monday"), [
    ("2026-W53", "2026-12-28"),  # 2026 began on a Thursday: it has a week 53, ending on 3 January 2027
    ("2020-W53", "2020-12-28"),  # 2020 began on a Wednesday and was a leap year: a week 53 too
    ("2025-W01", "2024-12-30"),  # week 01 holds the year's first Thursday: it may start in December before
    ("2027-W01", "2027-01-04"),
])
def test_iso_weeks_at_the_turn_of_the_year(week, monday):
    from sitegen.screening.digest import iso_week, week_start
    start = week_start(week)
    assert start.isoformat() == monday
    # Every day of the week, and an instant late on its Sunday at UTC, falls in it and in no other.
    assert iso_week(f"{monday}T00:00:00Z") == week
    sunday = start + timedelta(days=6)
    assert iso_week(f"{sunday.isoformat()}T23:59:59Z") == week
    assert iso_week(f"{(sunday + timedelta(days=1)).isoformat()}T00:00:00Z") != week


# --------------------------------------------------------------------------- records imported outside a batch

CITATION = FIXTURES / "prisma" / "citation.ris"  # a real RIS export (Haddaway et al. 2022)
MEDLINE = FIXTURES / "medline" / "pubmed_result3.txt"  # a real PubMed MEDLINE export
# Wednesdays of 2023-W18 and 2023-W19, after the example's last event; its batches arrived in 2023-W02 and W16.
FIRST_IMPORT, SECOND_IMPORT = "2023-05-03T09:00:00Z", "2023-05-10T09:00:00Z"


def _imported(sitegen, review, *args) -> list[str]:
    """The ids an import made new to the review."""
    code, out, err = sitegen("import", review, *args, "--json")
    assert code == 0, err
    return [i for item in json.loads(out)["files"] for i in item["new_ids"]]


def _import_twice(sitegen, review) -> tuple[list[str], list[str]]:
    """A RIS export imported in one week; the next week, that export again and a MEDLINE export."""
    first = _imported(sitegen, review, CITATION, "--at", FIRST_IMPORT)
    second = _imported(sitegen, review, CITATION, MEDLINE, "--at", SECOND_IMPORT)
    assert first and second and not set(first) & set(second)
    return first, second


def test_records_imported_outside_a_batch_are_ranked_and_in_the_digest_of_their_week(sitegen, example_copy):
    before = {week: sitegen("digest", example_copy, "--week", week)[1] for week in ("2023-W02", "2023-W16")}
    first, second = _import_twice(sitegen, example_copy)

    code, out, _ = sitegen("screen", "rank", example_copy, "--imported", "--json")
    assert code == 0
    assert sorted(row["id"] for row in json.loads(out)["rows"]) == sorted(first + second)
    code, out, _ = sitegen("screen", "rank", example_copy, "--imported")
    assert code == 0 and out.startswith("imported outside a batch: 2 records still to screen")
    code, _, err = sitegen("screen", "rank", example_copy, "--batch", "3")
    assert code == 1 and "there is no screening batch 3; rank the records imported outside a batch with --imported" \
        in err
    code, _, err = sitegen("screen", "rank", example_copy)
    assert code == 2 and "give either --batch N or --imported" in err

    # Each row names its record's title, so a screener can read the order; the method is said once, at the top.
    rows = json.loads(sitegen("screen", "rank", example_copy, "--imported", "--json")[1])["rows"]
    assert all(row["title"] for row in rows)
    lines = out.splitlines()
    assert [lines[2 + 3 * n].strip() for n in range(len(rows))] == [" ".join(row["title"].split()) for row in rows]
    method = lines[0].split("ordered by ", 1)[1]
    assert sum(method in line for line in lines) == 1

    # A week's new records are those first imported that week: the RIS export imported again is not new again.
    for week, new, old in (("2023-W18", first, second), ("2023-W19", second, first)):
        code, out, _ = sitegen("digest", example_copy, "--week", week)
        assert code == 0
        assert f"{counted(len(new), 'new record')} ({len(new)} imported outside a batch)" in out
        assert all(f"`{i}`" in out for i in new) and not any(f"`{i}`" in out for i in old)
    # The batches, their weeks and their rankings are as they were.
    assert {week: sitegen("digest", example_copy, "--week", week)[1] for week in before} == before
    code, out, _ = sitegen("screen", "status", example_copy)
    assert "imported outside a batch (`screen rank --imported`): 2 records" in out


def test_the_site_ranks_the_imported_records_and_digests_their_week(sitegen, example_copy, tmp_path):
    first, second = _import_twice(sitegen, example_copy)
    out = tmp_path / "site"
    build(example_copy, out, SECOND_IMPORT, {})
    screening = (out / "screening.html").read_text()
    assert '<a href="batches/imported.html">Imported records</a>' in screening
    assert 'href="digests/2023-W18.html"' in screening and 'href="digests/2023-W19.html"' in screening
    imported = (out / "batches" / "imported.html").read_text()
    assert "<h1>Records imported outside a batch</h1>" in imported
    assert "under the protocol as it stands (version 2)" in imported
    assert imported.count('<td data-label="Rank">') == len(first + second)
    digest = (out / "digests" / "2023-W18.html").read_text()
    assert f"{counted(len(first), 'new record')} ({len(first)} imported outside a batch)" in digest
    assert all(f"<code>{i}</code>" in digest for i in first)
    for record_id in first + second:
        page = (out / "records" / f"{page_slug(record_id)}.html").read_text()
        assert "Relevance score" in page and 'href="../batches/imported.html"' in page

    # A decision on an imported record renders the imported records' ranking again, and not the batches'.
    batch_pages = {name: os.stat(out / "batches" / name).st_ino for name in ("1.html", "2.html")}
    with (example_copy / "screening" / "title-abstract" / "reviewer-a.csv").open("a", encoding="utf-8") as file:
        file.write(f"{first[0]},include,,\n")
    build(example_copy, out, SECOND_IMPORT, {})
    assert {name: os.stat(out / "batches" / name).st_ino for name in batch_pages} == batch_pages
    assert (out / "batches" / "imported.html").read_text() != imported
    fresh = tmp_path / "fresh"
    build(example_copy, fresh, SECOND_IMPORT, {})
    assert {path: data for path, data in tree_bytes(out).items() if path != MANIFEST} == \
        {path: data for path, data in tree_bytes(fresh).items() if path != MANIFEST}


# --------------------------------------------------------------------------- the prior: the four weeks before


def _with_batches(review, batches: list[tuple[str, list[str]]]):
    """The review with screening batches appended, each (time, record ids) numbered on from its last batch."""
    from sitegen.review.models import BatchPayload, LedgerEvent

    number = max(p.batch for p in review.payloads if isinstance(p, BatchPayload))
    seq = review.ledger[-1].seq
    for at, ids in batches:
        number, seq = number + 1, seq + 1
        review.ledger.append(LedgerEvent.model_construct(seq=seq, type="screening", ts=at, payload={}, prev="0" * 64,
                                                         hash="0" * 64))
        review.payloads.append(BatchPayload.model_construct(batch=number, monitor_id="object-in-context",
                                                            protocol_version=2, record_ids=ids))
    return review


def test_the_prior_window_counts_a_batch_by_its_utc_day_as_its_week_does():
    # 01:00 on Monday 2023-04-24 at +02:00 is 23:00 on Sunday the 23rd in UTC: the batch is in 2023-W16 (its page
    # and digest say so), and the next week's digest (W17, from Monday the 24th) must know its includes as covered.
    from sitegen.living.facts import ReviewFacts
    from sitegen.review.folder import DecisionRow, load_review
    from sitegen.review.models import Decision
    from sitegen.screening.digest import weekly

    review, _ = load_review(EXAMPLE)
    template = min(review.records.values(), key=lambda record: record.id)
    record = template.model_copy(update={"id": "10.9999/covered", "DOI": "10.9999/covered", "PMID": None,
                                         "PMCID": None})
    review.records[record.id] = record
    for reviewer in ("reviewer-a", "reviewer-b"):
        review.decisions.append(DecisionRow("title-abstract", reviewer, "", 0, {}, Decision(
            record_id=record.id, decision="include", reason="", note="")))
    _with_batches(review, [("2023-04-24T01:00:00+02:00", [record.id]), ("2023-04-25T09:00:00Z", [record.id])])
    screening = ReviewFacts(review).screening
    assert weekly(review, screening, "2023-W16").batches[-1] == 3
    [again] = weekly(review, screening, "2023-W17").ranking.decisions
    assert (again.id, again.decision) == (record.id, "DROP") and "already-covered" in again.tags


def test_a_week_without_new_records_has_an_empty_digest_saying_so():
    from sitegen.living.facts import ReviewFacts
    from sitegen.review.folder import load_review
    from sitegen.screening.digest import digest_markdown, weekly

    review, _ = load_review(EXAMPLE)
    digest = weekly(review, ReviewFacts(review).screening, "2023-W20")  # after the example's last batch (W16)
    text = digest_markdown(review, digest)
    assert digest.ranking.decisions == []
    assert "0 new records: no screening batch arrived and no record was first imported this week.\n" in text
    assert "batch none" not in text and "ranked by" not in text
    for heading in ("Keep", "Review", "Dropped", "Already covered"):
        assert f"## {heading} (0)\n\nNo record this week.\n" in text
    assert ("Kept 0, review 0, dropped 0; force-dropped as already covered 0; demoted to review for the cap 0; "
            "stricter criteria pass applied: no.") in text


def test_an_imported_record_reviewers_included_is_in_the_next_weeks_prior():
    # Seed 002's prior is what the last four digests covered; an imported record is among its week's new records, so
    # once included it was covered: the next week's journal version of it is one, and the same id again is covered.
    from sitegen.living.facts import ReviewFacts
    from sitegen.review.folder import DecisionRow, load_review
    from sitegen.review.models import Decision, ImportPayload, LedgerEvent
    from sitegen.screening.digest import weekly

    review, _ = load_review(EXAMPLE)
    template = min(review.records.values(), key=lambda record: record.id)
    title = "Hippocampal lesions spare object-in-context memory in aged rats"

    def added(record_id: str, doi: str, title: str, types: list[str]):
        record = template.model_copy(update={"id": record_id, "DOI": doi, "PMID": None, "PMCID": None, "title": title,
                                             "custom": template.custom.model_copy(update={"publication_types": types})})
        review.records[record_id] = record
        return record

    preprint = added("10.1101/2023.05.01.540001", "10.1101/2023.05.01.540001", title, ["posted-content"])
    journal = added("10.9999/journal.1", "10.9999/journal.1", title + ".", ["journal-article"])
    for reviewer in ("reviewer-a", "reviewer-b"):
        review.decisions.append(DecisionRow("title-abstract", reviewer, "", 0, {}, Decision(
            record_id=preprint.id, decision="include", reason="", note="")))
    seq = review.ledger[-1].seq + 1
    review.ledger.append(LedgerEvent.model_construct(seq=seq, type="import", ts="2023-05-03T09:00:00Z", payload={},
                                                     prev="0" * 64, hash="0" * 64))
    review.payloads.append(ImportPayload.model_construct(source="Embase", method="database", description="export",
                                                         record_ids=[preprint.id], file=None, seen=None))
    _with_batches(review, [("2023-05-10T09:00:00Z", [journal.id])])
    screening = ReviewFacts(review).screening
    assert [d.id for d in weekly(review, screening, "2023-W18").ranking.decisions] == [preprint.id]
    [scored] = weekly(review, screening, "2023-W19").ranking.decisions
    assert (scored.id, scored.axes.novelty, scored.tags[-1]) == (journal.id, 0.5, f"journal-version-of:{preprint.id}")
    assert "covered 2023-W18" in scored.rationale


def test_thresholds_set_in_state_json_decide_every_weeks_digest_and_are_said(sitegen, example_copy, tmp_path):
    """keep_from and review_from decide every week's digest, an earlier week's too, as the cap does: the rationales
    name them, and the calibration says they are not seed 002's and that earlier weeks are ranked with them now."""
    code, default, _ = sitegen("digest", example_copy, "--week", "2023-W16")
    assert code == 0 and "Thresholds:" not in default and "≥ 70" in default and "≥ 60" not in default
    assert sitegen("state", "set", example_copy, "review_from", "40")[0] == 0
    assert sitegen("state", "set", example_copy, "keep_from", "60")[0] == 0
    note = ("Thresholds: KEEP from 60, REVIEW from 40 (state.json's keep_from and review_from, in place of seed 002's "
            "70 and 50); every batch and week, earlier ones too, is ranked with the thresholds and cap state.json "
            "holds now.")
    for week in ("2023-W15", "2023-W16"):
        code, text, _ = sitegen("digest", example_copy, "--week", week)
        calibration = text.split("## Calibration")[1]
        assert code == 0 and note in calibration and "≥ 70" not in text and "in 50\\-69" not in text
    assert "KEEP: score 69 ≥ 60" in text  # REVIEW by seed 002's thresholds
    site = tmp_path / "site"
    build(example_copy, site, environ={})
    shown = note.replace("'", "&#39;")
    assert shown in (site / "digests" / "2023-W16.html").read_text()
    assert note in (site / "downloads" / "digest-2023-W16.md").read_text()
    batch = (site / "batches" / "2.html").read_text()
    assert shown in batch.split('class="calibration"')[1] and "≥ 60" in batch and "≥ 70" not in batch


def test_the_digest_help_says_the_default_thresholds_and_where_they_are_set(sitegen):
    from sitegen.review.models import KEEP_FROM, REVIEW_FROM, ReviewState

    code, out, _ = sitegen("digest", "--help")
    said = " ".join(out.split())
    assert code == 0 and f"seed 002's {KEEP_FROM} where it sets none" in said and f"review_from ({REVIEW_FROM})" in said
    assert f"max_kept ({ReviewState.model_fields['max_kept'].default})" in said


def _append_batch(review, at: str, record_ids: list[str]) -> int:
    """A screening batch appended to the review folder's ledger as a run would write it (chained, state.json's
    ledger_head moved to it); the ledger line it is on."""
    from sitegen.living.ledger import anchor, event_line, next_event
    from sitegen.review.models import LedgerEvent

    ledger = review / "ledger.jsonl"
    lines = ledger.read_text().splitlines()
    event = next_event(LedgerEvent.model_validate_json(lines[-1]), "screening", at, {
        "batch": 3, "monitor_id": "object-in-context", "protocol_version": 2, "record_ids": record_ids})
    ledger.write_text("\n".join([*lines, event_line(event)]) + "\n")
    state = json.loads((review / "state.json").read_text())
    (review / "state.json").write_text(json.dumps({**state, "ledger_head": anchor(event).model_dump()}, indent=2) + "\n")
    return len(lines) + 1


def test_a_batch_naming_a_record_twice_is_refused_at_its_ledger_line(sitegen, example_copy):
    # A ranking shows every record once; a batch naming one twice would be ranked with it twice (or not at all).
    first = _imported(sitegen, example_copy, CITATION, "--at", FIRST_IMPORT)
    line = _append_batch(example_copy, "2023-05-04T09:00:00Z", [first[0], *first])
    for command in (("check", example_copy), ("screen", "rank", example_copy, "--batch", "3"),
                    ("digest", example_copy, "--week", "2023-W18")):
        code, out, err = sitegen(*command)
        assert code == 1 and f"ledger.jsonl:{line}: error: batch 3 names {first[0]} more than once" in out + err
