"""The shared pager and value helpers of sitegen.sources.base, on their own (each provider's tests
exercise them on real recorded responses)."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES

from sitegen.records.model import Record
from sitegen.sources import openalex
from sitegen.sources.base import (
    Items,
    Malformed,
    Pager,
    Trace,
    date_from_parts,
    parse_date,
    to_records,
    whole_number,
)
from sitegen.sources.http import Provider, Secrets
from sitegen.sources.openalex import work_to_record

WORKS = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
ITEMS = Items("work", "no identifier")
WORKS_ITEMS = openalex.WORKS  # OpenAlex's own: items told apart by their W id


def trace() -> Trace:
    return Trace("openalex", None, Provider("Test", frozenset(), 0.0), Secrets())


def pager(limit: int = 100, page_size: int = 10, **options) -> Pager:
    return Pager("Test", ITEMS, limit, page_size, **options)


def read(p: Pager, pages: list[tuple[int, list, str | None]]) -> int:
    """Feed pages (total, items, next cursor) while the pager asks for them; how many it asked for."""
    cursor, asked = "*", 0
    for total, items, following in pages:
        if not p.proceed(cursor):
            break
        asked += 1
        p.add(total, items, work_to_record, dict)
        cursor = following
    return asked


def test_a_complete_read():
    p = pager()
    assert read(p, [(25, WORKS[:10], "a"), (25, WORKS[10:20], "b"), (25, WORKS[20:], None)]) == 3
    outcome = p.outcome(trace())
    assert outcome.status == "ok" and outcome.complete and len(outcome.records) == 25 and outcome.warnings == []


@pytest.mark.parametrize("total", [-1, "25", 2.5, True, None])
def test_a_total_that_is_not_a_whole_number_is_malformed(total):
    with pytest.raises(Malformed, match="not a whole number"):
        pager().add(total, WORKS[:1], work_to_record)


@pytest.mark.parametrize("total", [10**12, 10**40, 10**4000])
def test_a_total_more_than_any_index_holds_is_malformed_not_a_truncated_read(total):
    # taken for a count, a read of the first works was "truncated", and told to raise SITEGEN_MAX_RECORDS
    with pytest.raises(Malformed, match="more matches than any index holds"):
        pager().add(total, WORKS[:1], work_to_record)
    p = pager()
    p.add(10**12 - 1, WORKS[:1], work_to_record)
    assert p.total == 10**12 - 1


def test_the_first_total_stands():
    p = pager()
    p.add(25, WORKS[:10], work_to_record)
    with pytest.raises(Malformed, match=r"the count changed between pages \(25, then 24\)"):
        p.add(24, WORKS[10:20], work_to_record)


def test_a_cursor_used_on_any_earlier_page_ends_paging():
    p = pager()
    pages = [(1000, WORKS[:5], "a"), (1000, WORKS[5:10], "b"), (1000, WORKS[10:15], "*"), (1000, WORKS[15:20], "c")]
    assert read(p, pages) == 3  # "*" was the first page's cursor
    with pytest.raises(Malformed, match=r"returned 15 of the first 100 \(the next page's cursor was one already used\)"):
        p.outcome(trace())


def test_a_provider_that_repeats_cursors_is_stopped_by_pages_with_nothing_new():
    p = pager(cursors_repeat=True)
    assert read(p, [(1000, WORKS[:10], "same"), (1000, WORKS[10:20], "same"), (1000, WORKS[10:20], "same"),
                    (1000, WORKS[20:], "same")]) == 3
    assert len(p.records) == 20 and p.repeated == 10
    with pytest.raises(Malformed, match="a page brought nothing new"):
        p.outcome(trace())


def test_duplicates_inside_pages_do_not_count():
    p = pager()
    read(p, [(12, WORKS[:10] + WORKS[:2], None)])
    with pytest.raises(Malformed, match="reported 12 matches but returned 10"):
        p.outcome(trace())


def test_the_page_limit_is_the_backstop():
    # one new work per page of ten, each under a fresh cursor: never short of progress, never finished
    p = pager(limit=20, page_size=10)
    pages = [(1000, [work], str(i)) for i, work in enumerate(WORKS)]
    assert read(p, pages) == 5  # twice the two pages a full read needs, plus one
    with pytest.raises(Malformed, match="gave up after 5 pages"):
        p.outcome(trace())


def test_skipped_items_count_once_each():
    unidentified = {key: value for key, value in WORKS[0].items() if key not in ("id", "ids", "doi")}
    also = dict(unidentified, title="another work without identifiers")
    p = pager()
    read(p, [(3, [WORKS[1], unidentified, unidentified, also], None)])
    outcome = p.outcome(trace())
    assert outcome.complete and len(outcome.records) == 1
    assert outcome.warnings == ["2 Test works had no identifier and were skipped",
                                "Test sent 1 item more than once; each was kept once"]


@pytest.mark.parametrize("item", [None, 7, "x", [], True])
def test_an_item_that_is_not_a_work_makes_the_read_incomplete(item):
    """Anything but an object in a list of works is a malformed answer, not a work without identifiers."""
    p = pager()
    read(p, [(2, [WORKS[1], item], None)])
    outcome = p.outcome(trace())
    assert outcome.dropped == 1 and not outcome.complete and "not a dict" in outcome.warnings[0]


def test_a_work_sent_again_with_other_identifiers_counts_once():
    """Distinct items are counted by the provider's own id: a repeat cannot stand in for a missing work."""
    works = WORKS[:4]
    stripped = {key: value for key, value in works[1].items() if key not in ("doi",)}
    stripped["ids"] = {"openalex": works[1]["id"]}
    p = Pager("Test", WORKS_ITEMS, 100, 10)
    read(p, [(4, [works[0], works[1], stripped, works[2]], None)])
    with pytest.raises(Malformed, match="reported 4 matches but returned 3"):
        p.outcome(trace())


def test_an_identified_work_the_provider_gives_no_title_is_left_out_by_name():
    untitled = {key: value for key, value in WORKS[0].items() if key not in ("title", "display_name")}
    p = pager()
    read(p, [(2, [WORKS[1], untitled], None)])
    outcome = p.outcome(trace())
    assert outcome.complete and len(outcome.records) == 1
    assert outcome.warnings == [f"1 Test work had no title and was left out: {work_to_record(WORKS[0]).id}"]


@pytest.mark.parametrize("title", [123, ["a list"], {"text": "x"}, True])
def test_a_title_that_is_not_text_makes_the_read_incomplete(title):
    malformed = dict(WORKS[0], title=title, display_name=None)
    p = pager()
    read(p, [(2, [WORKS[1], malformed], None)])
    outcome = p.outcome(trace())
    assert outcome.status == "ok" and outcome.dropped == 1 and not outcome.complete
    assert len(outcome.records) == 1
    assert "has a title that is not text" in outcome.warnings[0] and "incomplete" in outcome.warnings[0]


@pytest.mark.parametrize("next_cursor", ["more", None])
def test_more_items_than_the_reported_count_is_not_a_whole_answer(next_cursor):
    """A count lower than the results (while a next page is still offered, or not) cannot be trusted."""
    p = pager()
    read(p, [(2, WORKS[:4], next_cursor), (2, WORKS[4:8], None)])
    with pytest.raises(Malformed, match="reported 2 matches but sent 4 different items"):
        p.outcome(trace())


def test_truncation_by_max_records_and_by_the_provider_ceiling():
    p = pager(limit=10)
    read(p, [(25, WORKS[:10], "a")])
    outcome = p.outcome(trace())
    assert outcome.status == "ok" and outcome.truncated and not outcome.complete and len(outcome.records) == 10
    assert outcome.warnings == ["Test reported 25 matches: only the first 10 of 25 were read; "
                                "raise SITEGEN_MAX_RECORDS (now 10) or narrow the query to read them all"]
    p = pager(limit=100, ceiling=10)
    read(p, [(25, WORKS[:10], "a")])
    outcome = p.outcome(trace())
    assert outcome.truncated and "Test serves at most 10 per query, so narrow the query" in outcome.warnings[0]


def test_more_items_than_asked_for_are_cut_at_the_cap():
    p = pager(limit=5)
    read(p, [(25, WORKS[:10], "a")])
    assert len(p.outcome(trace()).records) == 5


def test_a_known_total_of_zero_asks_for_nothing():
    p = pager()
    p.count(0)
    assert not p.proceed("0") and p.outcome(trace()).complete


def test_a_converter_failure_skips_that_item_only():
    def convert(item: dict) -> Record | None:
        if item is WORKS[1]:
            raise KeyError("surprise")
        return work_to_record(item)

    converted = to_records(WORKS[:3], convert, dict)
    assert len(converted.records) == 2 and converted.unreadable == [WORKS[1]] and converted.reasons == ["KeyError"]
    p = pager()
    p.add(3, WORKS[:3], convert, dict)
    outcome = p.outcome(trace())
    assert len(outcome.records) == 2 and outcome.dropped == 1 and not outcome.complete
    assert outcome.warnings == ["1 Test work could not be read (KeyError); it is missing from this run, "
                                "which is therefore incomplete"]


def test_programming_errors_are_not_swallowed():
    def convert(item):
        raise ZeroDivisionError
    with pytest.raises(ZeroDivisionError):
        to_records([{}], convert)


@pytest.mark.parametrize(("values", "expected"), [
    (("2020-05-17",), [2020, 5, 17]),
    (("2016-05-26T17:59:46Z",), [2016, 5, 26]),
    (("2020-²",), [2020]),
    (("2020-13-01",), [2020]),
    (("2020-02-32",), [2020, 2]),
    (("1999",), [1999]),
    (("²⁰²⁰", "٢٠٢٠", "2021"), [2021]),
    ((None, 2019), [2019]),
    ((True, "0000", "20201", [2020], {"year": 2020}), None),
    (("",), None),
])
def test_dates_are_read_from_ascii_digits_only(values, expected):
    date = parse_date(*values)
    assert (date.date_parts[0] if date else None) == expected


def test_date_parts_stop_at_the_first_unusable_part():
    assert date_from_parts([2012, 5, 23]).date_parts == [[2012, 5, 23]]
    assert date_from_parts([2012, None, 23]).date_parts == [[2012]]
    assert date_from_parts([None]) is None and date_from_parts([]) is None and date_from_parts([True]) is None


@pytest.mark.parametrize(("text", "expected"), [("42", 42), (" 7 ", 7), ("²", None), ("٢", None), ("-1", None),
                                                ("1" * 13, None), (None, None), (5, None)])
def test_whole_numbers_are_ascii_digits(text, expected):
    assert whole_number(text) == expected
