"""Times as the review's files hold them: one instant is one day and one ISO week wherever it is shown,
whatever offset it was written with; a time before any review could exist is refused."""

from __future__ import annotations

import json

import pytest

from sitegen.review.models import SnapshotEntry, parse_timestamp, utc_day, utc_text
from sitegen.screening.digest import iso_week
from sitegen.sources.snapshots import SnapshotStore


@pytest.mark.parametrize(("written", "day", "week", "utc"), [
    ("2024-12-30T03:00:00+05:30", "2024-12-29", "2024-W52", "2024-12-29T21:30:00Z"),
    ("2024-12-29T21:30:00Z", "2024-12-29", "2024-W52", "2024-12-29T21:30:00Z"),
    ("2021-01-03T23:30:00-01:00", "2021-01-04", "2021-W01", "2021-01-04T00:30:00Z"),
    ("2024-06-01T06:00:00.500+00:00", "2024-06-01", "2024-W22", "2024-06-01T06:00:00.5Z"),
])
def test_one_instant_is_one_day_and_one_week_whatever_its_offset(written, day, week, utc):
    assert (utc_day(written), iso_week(written), utc_text(parse_timestamp(written))) == (day, week, utc)


def test_at_and_now_are_recorded_in_utc(sitegen, tmp_path):
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    code, _, err = sitegen("protocol", "lock", review, "--at", "2024-12-30T03:00:00+05:30")
    assert code == 0, err
    events = [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]
    assert events[-1]["ts"] == "2024-12-29T21:30:00Z"


@pytest.mark.parametrize("at", ["1024-01-02T00:00:00Z", "0224-01-02T00:00:00Z", "1969-12-31T23:59:59Z"])
def test_a_time_before_1970_is_refused_before_anything_is_recorded(sitegen, tmp_path, at):
    # A typo in the year was recorded for good (the ledger is append-only), and build then failed on it.
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    before = (review / "ledger.jsonl").read_bytes() if (review / "ledger.jsonl").exists() else None
    code, _, err = sitegen("protocol", "lock", review, "--at", at)
    assert code == 2 and "Invalid value for '--at'" in err and "is before 1970" in err and "Traceback" not in err
    after = (review / "ledger.jsonl").read_bytes() if (review / "ledger.jsonl").exists() else None
    assert after == before


def test_the_latest_recorded_run_is_the_latest_instant_not_the_latest_text(tmp_path):
    store = SnapshotStore(tmp_path / "snapshots")
    sessions = ["2024-06-01T06:00:00Z", "2024-06-01T09:00:00+09:00", "2024-06-01T05:00:00.5Z"]  # 06:00, 00:00, 05:00
    for session in sessions:
        store.add(SnapshotEntry(fingerprint="a" * 64, session=session, url="https://api.openalex.org/works",
                                status=200), None)
    assert store.lookup("a" * 64, None).session == "2024-06-01T06:00:00Z"


def test_a_run_recorded_with_an_offset_replays_at_the_same_instant_in_utc(tmp_path):
    # --at is now converted to UTC before it names the session, so a run an earlier sitegen recorded as
    # 09:00:00+02:00 must be found as 07:00:00Z.
    store = SnapshotStore(tmp_path / "snapshots")
    store.add(SnapshotEntry(fingerprint="b" * 64, session="2024-06-01T09:00:00+02:00",
                            url="https://api.openalex.org/works", status=200), None)
    assert store.lookup("b" * 64, "2024-06-01T07:00:00Z").session == "2024-06-01T09:00:00+02:00"
    assert store.lookup("b" * 64, "2024-06-01T08:00:00Z") is None


@pytest.mark.parametrize("written", ["2026-06-01T00:00:00.9999999999Z", "2026-06-01T00:00:00.0000001+02:00",
                                     "2026-06-01T00:00:00.000000\u0663Z", "2026-06-01T00:00:0\u0661Z"])
def test_a_time_finer_than_a_microsecond_or_in_other_digits_is_refused_not_cut(written):
    # fromisoformat keeps six digits of a fraction and drops the rest (of any script's digits) without a word
    with pytest.raises(ValueError, match="finer than a microsecond|not an RFC 3339 timestamp"):
        parse_timestamp(written)
    assert utc_text(parse_timestamp("2026-06-01T00:00:00.1000000Z")) == "2026-06-01T00:00:00.1Z"  # zeros lose nothing


def test_an_at_finer_than_a_microsecond_is_a_usage_error_that_records_nothing(sitegen, tmp_path):
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    before = (review / "ledger.jsonl").read_bytes() if (review / "ledger.jsonl").exists() else None
    code, _, err = sitegen("protocol", "lock", review, "--at", "2026-06-01T00:00:00.9999999999Z")
    assert code == 2 and "Invalid value for '--at'" in err and "finer than a microsecond" in err
    assert ((review / "ledger.jsonl").read_bytes() if (review / "ledger.jsonl").exists() else None) == before


def test_a_ledger_time_finer_than_a_microsecond_is_a_problem_at_its_line(sitegen, example_copy):
    ledger = example_copy / "ledger.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    event = json.loads(lines[0])
    lines[0] = lines[0].replace(json.dumps(event["ts"]), json.dumps(event["ts"].replace("Z", ".0000001Z")), 1)
    assert lines[0] != ledger.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    ledger.write_text("".join(lines), encoding="utf-8")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and any(row.startswith(f"{ledger}:1:") and "finer than a microsecond" in row
                             for row in out.splitlines()), out
