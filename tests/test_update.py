"""`sitegen monitor add` and `sitegen update`: only never-seen records, honest about outages,
all-or-nothing writes."""

from __future__ import annotations

import json
import re
import shutil
import threading
from pathlib import Path

import httpx
import pytest
from conftest import EXAMPLE, FIXTURES, tree_bytes
from http_mocks import json_response
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.commands import add_monitor, update
from sitegen.errors import LockHeld, SitegenError
from sitegen.living.update import collapse_doubted, markdown_report, new_ids
from sitegen.records.model import Record
from sitegen.review.models import RetrievalPayload, Strategy
from sitegen.review.transaction import review_lock
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings
from sitegen.workspace import inspect

SYNERGY = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
CORE = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_text())["resultList"]["result"]
SETTINGS = SourceSettings(max_records=1000)
QUERY = '"object-in-context" OR "object in context" OR "object-context recognition"'
FIRST, SECOND, THIRD = "2026-01-05T06:00:00Z", "2026-01-12T06:00:00Z", "2026-01-19T06:00:00Z"
STRATEGIES = [Strategy(source="openalex", query="object context"), Strategy(source="europepmc", query="cancer")]


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    """Retries and rate limits wait for real; these tests count the waits instead of sleeping."""
    waits: list[float] = []
    monkeypatch.setattr("sitegen.sources.http.pause", waits.append)
    return waits


def new_review(sitegen, tmp_path: Path, locked_at: str = "2023-01-01T00:00:00Z") -> Path:
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", locked_at)
    return review


class Providers:
    """OpenAlex and Europe PMC answering with real records; what each returns can change between runs."""

    def __init__(self, works: list[dict], results: list[dict]):
        self.works, self.results, self.europepmc_status = works, results, 200

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps({"meta": {"count": len(self.works), "next_cursor": None},
                                             "results": self.works}))
        if self.europepmc_status == "timeout":
            raise httpx.ReadTimeout("slow", request=request)
        if self.europepmc_status != 200:
            return httpx.Response(self.europepmc_status, headers={"retry-after": "1"})
        return json_response(json.dumps({"hitCount": len(self.results), "nextCursorMark": "end",
                                         "resultList": {"result": self.results}}))


def run(review, at, providers, add=False):
    transport = httpx.MockTransport(providers)
    if add:
        return add_monitor(review, "watch", STRATEGIES, at, "live", settings=SETTINGS, transport=transport)
    return update(review, at, "live", settings=SETTINGS, transport=transport)


def state(review: Path) -> dict:
    return json.loads((review / "searches" / "watch.json").read_text())


def ledger(review: Path) -> list[dict]:
    return [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]


# --------------------------------------------------------------------------- the recorded example


def test_replaying_the_example_runs_reproduces_them(sitegen, tmp_path):
    """A first run, then a second whose responses include new records: exactly those are reported."""
    review = new_review(sitegen, tmp_path)
    shutil.rmtree(review / "snapshots")
    shutil.copytree(EXAMPLE / "snapshots", review / "snapshots")
    strategy = Strategy(source="openalex", label="openalex-main", query=QUERY)
    first = add_monitor(review, "object-in-context", [strategy], "2023-04-10T00:00:00Z", "replay", settings=SETTINGS)
    second = update(review, "2023-04-17T00:00:00Z", "replay", settings=SETTINGS)
    assert first.complete and second.complete
    example_events = [e for e in ledger(EXAMPLE) if e["type"] in ("retrieval", "screening")]
    replayed = [e for e in ledger(review) if e["type"] in ("retrieval", "screening")]
    # The example's second batch is screened under the amended protocol (version 2); here there is none.
    # Its manifests say the responses were recorded, these that they were replayed: their hashes differ.
    for event in example_events + replayed:
        event["payload"].pop("protocol_version", None)
        event["payload"].pop("manifest", None)
    assert [e["payload"] for e in replayed] == [e["payload"] for e in example_events]
    assert (review / "records.jsonl").read_bytes() == (EXAMPLE / "records.jsonl").read_bytes()
    assert len(first.searches[0].new) == 260
    new = second.searches[0].new
    assert len(new) == 11
    years = {json.loads(line)["id"]: json.loads(line)["issued"]["date-parts"][0][0]
             for line in (review / "records.jsonl").read_text().splitlines()}
    assert all(years[i] >= 2020 for i in new) and all(years[i] <= 2019 for i in first.searches[0].new)
    saved = json.loads((review / "searches" / "object-in-context.json").read_text())
    assert saved["seen_ids"] == first.searches[0].new + new
    assert saved["run_count"] == 2 and saved["last_run"] == "2023-04-17T00:00:00Z"


def test_a_second_run_at_the_time_of_the_last_is_refused(sitegen, tmp_path):
    """Replaying the example's last run at its own time would be a second run at one time: the ledger's
    runs (events sharing a time) would merge and PRISMA would count its records twice."""
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    before = tree_bytes(review)
    prisma = sitegen("prisma", review, "--json")[1]
    for at in ("2023-04-17T00:00:00Z", "2023-04-17T00:00:00+00:00"):
        code, _, err = sitegen("update", review, "--at", at, "--snapshots", "replay")
        assert code == 1 and "is not after the latest search run or import" in err
        assert "files imported together, in one command, are one run" in err
    assert tree_bytes(review) == before and sitegen("prisma", review, "--json")[1] == prisma


def test_a_repeated_run_in_the_ledger_is_named(sitegen, tmp_path):
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    lines = (review / "ledger.jsonl").read_text().splitlines()
    retrieval = next(n for n, line in enumerate(lines) if json.loads(line)["type"] == "retrieval")
    from sitegen.living.ledger import event_line, next_event
    from sitegen.review.models import LedgerEvent

    events = [LedgerEvent.model_validate(json.loads(line)) for line in lines]
    events.insert(retrieval + 1, events[retrieval])
    rechained, previous = [], None
    for event in events:
        previous = next_event(previous, event.type, event.ts, event.payload)
        rechained.append(event_line(previous))
    (review / "ledger.jsonl").write_text("\n".join(rechained) + "\n")
    code, out, _ = sitegen("check", review)
    assert code == 1 and "[run-repeated]" in out and f"ledger.jsonl:{retrieval + 2}" in out


def state_of(review: Path) -> dict:
    return json.loads((review / "searches" / "object-in-context.json").read_text())


# --------------------------------------------------------------------------- new records and outages


def test_first_run_is_the_opening_batch(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    result = run(review, FIRST, Providers(SYNERGY[:5], CORE[:3]), add=True)
    assert result.complete
    saved = state(review)
    assert saved["run_count"] == 1 and saved["last_run"] == FIRST
    assert saved["seen_ids"] == result.searches[0].new and len(saved["seen_ids"]) == 8
    types = [e["type"] for e in ledger(review)]
    assert types == ["protocol_lock", "retrieval", "retrieval", "screening"]
    assert ledger(review)[3]["payload"]["record_ids"] == saved["seen_ids"]
    assert inspect(review)[1] == []


def test_second_run_reports_only_new_records_in_order(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:5], CORE[:3])
    run(review, FIRST, providers, add=True)
    first_seen = state(review)["seen_ids"]
    providers.works = [SYNERGY[7], *SYNERGY[:5], SYNERGY[6]]
    result = run(review, SECOND, providers)
    expected = [w["doi"].removeprefix("https://doi.org/").lower() for w in (SYNERGY[7], SYNERGY[6])]
    assert result.searches[0].new == expected
    assert state(review)["seen_ids"] == first_seen + expected
    assert ledger(review)[-1]["payload"] == {"batch": 2, "monitor_id": "watch", "protocol_version": 1,
                                             "record_ids": expected}


@pytest.mark.parametrize("failure", [503, 429, "timeout"])
def test_a_downed_source_is_incomplete_not_empty(sitegen, tmp_path, failure):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    seen = state(review)["seen_ids"]
    providers.europepmc_status = failure
    providers.results = CORE[:4]  # two new Europe PMC records that this run cannot see
    result = run(review, SECOND, providers)
    assert not result.complete
    assert result.searches[0].new == []
    assert state(review)["seen_ids"] == seen  # nothing gained from the downed source
    report = markdown_report(result)
    assert "**Incomplete:**" in report
    assert "Europe PMC was not reached this run" in report and "new Europe PMC records may be missing" in report
    assert "the others are unknown this run, not empty" in report
    retrieval = [e for e in ledger(review) if e["type"] == "retrieval"][-1]
    assert retrieval["payload"]["source"] == "europepmc" and retrieval["payload"]["complete"] is False
    # The next complete run picks up what the outage hid.
    providers.europepmc_status = 200
    result = run(review, THIRD, providers)
    assert result.complete and len(result.searches[0].new) == 2
    assert state(review)["seen_ids"][-2:] == result.searches[0].new


def test_a_run_no_source_answered_says_so_and_claims_no_new_records_anywhere(sitegen, tmp_path, monkeypatch):
    """With every source down there are no "sources that answered": the run says none did (exit 3), and
    nothing is lost."""
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    seen = state(review)["seen_ids"]

    def every_source_down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503)

    import sitegen.living.update as update_module

    real_open = update_module.open_fetcher
    monkeypatch.setattr(update_module, "open_fetcher", lambda mode, snapshots, session="", transport=None:
                        real_open("live", None, transport=httpx.MockTransport(every_source_down)))
    code, out, err = sitegen("update", review, "--at", SECOND, "--report", tmp_path / "report.md")
    assert code == 3, err
    assert out == "watch: no source answered in full; new records are unknown this run\n"
    report = (tmp_path / "report.md").read_text()
    assert "No source answered in full: new records are unknown this run, not none." in report
    assert "No new records" not in report
    assert state(review)["seen_ids"] == seen and state(review)["run_count"] == 2
    assert sitegen("ledger", "verify", review)[0] == 0


def test_zero_new_records_is_said_differently_from_an_outage(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    result = run(review, SECOND, providers)
    assert result.complete and result.searches[0].new == []
    assert "No new records since the last run: every source answered" in markdown_report(result)
    assert ledger(review)[-1]["type"] == "retrieval"  # no empty batch is written


def test_cli_exit_status_json_and_reports(sitegen, tmp_path, monkeypatch):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    providers.europepmc_status = 503
    import sitegen.living.update as update_module

    real_open = update_module.open_fetcher
    monkeypatch.setattr(update_module, "open_fetcher",
                        lambda mode, snapshots, session="", transport=None:
                        real_open("live", None, transport=httpx.MockTransport(providers)))
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, err = sitegen("update", review, "--at", SECOND, "--json", "--report", tmp_path / "report.md")
    assert code == 3
    report = json.loads(out)
    assert report["complete"] is False
    assert [s["status"] for s in report["searches"][0]["strategies"]] == ["ok", "unavailable"]
    assert (tmp_path / "report.md").read_text() == summary.read_text()
    assert "searching Europe PMC" in err
    assert "warning: " in err and "Europe PMC" in err.split("warning: ", 1)[1]  # said with --json too, on stderr
    # Said once: the progress line said "Europe PMC was not reached…" too, word for word, before the warning did.
    assert sum("Europe PMC was not reached" in line for line in err.splitlines()) == 1, err
    assert "watch: Europe PMC: unavailable (the warning below says more)" in err.splitlines()


def test_a_report_that_cannot_be_written_does_not_hide_the_recorded_run(sitegen, tmp_path, monkeypatch):
    # A full disk (or an unwritable folder) for --report and the job summary, after the run was recorded.
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    providers.works, providers.results = SYNERGY[:5], CORE[:3]
    import errno

    import sitegen.living.update as update_module
    from sitegen import cli as cli_module

    def full_disk(path, data, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(cli_module, "atomic_write", full_disk)

    real_open = update_module.open_fetcher
    monkeypatch.setattr(update_module, "open_fetcher",
                        lambda mode, snapshots, session="", transport=None:
                        real_open("live", None, transport=httpx.MockTransport(providers)))
    unwritable = tmp_path / "unwritable"
    unwritable.mkdir()
    (unwritable / "summary.md").mkdir()  # appending to a folder fails, as a full disk would
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(unwritable / "summary.md"))
    events = len(ledger(review))
    code, out, err = sitegen("update", review, "--at", SECOND, "--report", tmp_path / "report.md")
    assert code == 1 and "Traceback" not in err
    assert "new records (screening batch" in out  # what the run found, printed before the report failed
    assert f"warning: the run report could not be added to the job summary {unwritable / 'summary.md'}" in err
    assert f"the run at {SECOND} was recorded in the review (above), but its report could not be written" in err
    assert f"{tmp_path / 'report.md'} (No space left on device)" in err
    assert len(ledger(review)) > events


def test_update_needs_a_valid_review_and_a_sane_time(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, SECOND, providers, add=True)
    before = tree_bytes(review)
    code, _, err = sitegen("update", review, "--at", FIRST)
    assert code == 1 and "earlier than the latest ledger event" in err
    code, _, err = sitegen("update", review, "--at", "next tuesday")  # no time at all: the command line is wrong
    assert code == 2 and "Invalid value for '--at': 'next tuesday' is not an RFC 3339 timestamp" in err
    (review / "protocol.md").write_text("broken")
    code, _, err = sitegen("update", review, "--at", THIRD)
    assert code == 1 and "front matter" in err
    (review / "protocol.md").write_bytes(before["protocol.md"])
    assert tree_bytes(review) == before


@pytest.mark.parametrize(("command", "options"), [
    (["update"], []), (["monitor", "add"], ["--id", "watch", "--strategy", "openalex", "object context"]),
    (["protocol", "lock"], []), (["protocol", "amend"], ["--reason", "a wider population"]),
    (["state", "advance"], [])])
def test_a_command_that_records_a_time_is_given_it_never_reads_the_clock(sitegen, tmp_path, command, options):
    """last_run and every event's time are the caller's (a rerun replayed later records the same times): without
    --at the command is refused as a usage error and writes nothing, rather than taking the time from the clock."""
    review = tmp_path / "review"
    sitegen("init", review)
    before = tree_bytes(review)
    code, _, err = sitegen(*command, review, *options)
    assert code == 2 and "Missing option '--at'" in err
    assert tree_bytes(review) == before


def test_second_writer_is_refused(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    with review_lock(review):
        errors = []
        thread = threading.Thread(target=lambda: errors.append(_try_update(review)))
        thread.start()
        thread.join()
        assert isinstance(errors[0], LockHeld)
        code, _, err = sitegen("build", review, "--out", tmp_path / "site")
    assert code == 5 and "another sitegen process" in err


def _try_update(review):
    try:
        update(review, FIRST, "live", settings=SETTINGS)
    except LockHeld as exc:
        return exc


# --------------------------------------------------------------------------- the diff, as properties


ids = st.lists(st.sampled_from([f"10.1000/{n}" for n in range(30)]), max_size=25)


@settings(max_examples=300)
@given(st.lists(ids, min_size=1, max_size=6))
def test_seen_ids_only_grow_in_order(runs):
    seen: list[str] = []
    for current in runs:
        before = list(seen)
        fresh = new_ids(current, seen)
        seen = seen + fresh
        assert seen[: len(before)] == before  # never shrinks or reorders
        assert len(seen) == len(set(seen))
        assert set(fresh).isdisjoint(before)
        assert fresh == [i for i in dict.fromkeys(current) if i not in before]  # order-stable


def test_diff_of_one_million_seen_is_linear():
    seen = [f"10.1000/{n}" for n in range(1_000_000)]
    current = [f"10.1000/{n}" for n in range(999_990, 1_000_010)]
    assert new_ids(current, seen) == [f"10.1000/{n}" for n in range(1_000_000, 1_000_010)]


# --------------------------------------------------------------------------- all-or-nothing


def test_a_failure_between_any_two_writes_leaves_a_consistent_folder(sitegen, tmp_path, monkeypatch):
    import os

    from sitegen.review.transaction import recover

    original = new_review(sitegen, tmp_path / "a")
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(original, FIRST, providers, add=True)
    providers.works = SYNERGY[:6]
    before = tree_bytes(original)
    reference = tmp_path / "reference"
    shutil.copytree(original, reference)
    run(reference, SECOND, providers)
    after = tree_bytes(reference)
    assert after != before

    real_replace = os.replace
    step = 0
    while True:
        step += 1
        attempt = tmp_path / f"attempt-{step}"
        shutil.copytree(original, attempt)
        calls = {"n": 0}

        def failing(src, dst, calls=calls, step=step):
            calls["n"] += 1
            if calls["n"] == step:
                raise OSError(5, "injected failure")
            return real_replace(src, dst)

        monkeypatch.setattr(os, "replace", failing)
        try:
            run(attempt, SECOND, providers)
            finished = True
        except (OSError, SitegenError):  # a failed rename after the commit point is said as such
            finished = False
        monkeypatch.setattr(os, "replace", real_replace)
        if finished:
            break  # every write point has been interrupted once
        recover(attempt)  # what the next sitegen command does first
        result = tree_bytes(attempt)
        assert result in (before, after), f"inconsistent folder after a failure at write {step}"
        assert inspect(attempt)[1] == []
    assert step > 4  # the three new files, the journal, and the renames were all exercised


def test_check_reports_an_interrupted_update(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    (review / ".sitegen-transaction.json").write_text('["ledger.jsonl"]\n')
    code, out, _ = sitegen("check", review)
    assert code == 1 and "an interrupted write was found" in out


def test_ledger_verify_names_an_edited_event(sitegen, tmp_path):
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    code, out, _ = sitegen("ledger", "verify", review)
    lines = (review / "ledger.jsonl").read_text().splitlines()
    assert code == 0 and f"ledger intact: {len(lines)} events" in out
    index = next(n for n, text in enumerate(lines) if json.loads(text)["type"] == "retrieval")
    event = json.loads(lines[index])
    event["payload"]["record_ids"] = event["payload"]["record_ids"][:-1]
    lines[index] = json.dumps(event, sort_keys=True, separators=(",", ":"))
    (review / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    code, out, _ = sitegen("ledger", "verify", review)
    assert code == 1
    assert f"{review}/ledger.jsonl:{index + 1}: error: event {index + 1} was edited after it was written" in out
    del lines[index]
    (review / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    code, out, _ = sitegen("ledger", "verify", review)
    assert code == 1 and "was deleted, inserted or moved" in out


def test_a_truncated_source_is_incomplete_and_says_why(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:6], CORE[:2])
    run(review, FIRST, providers, add=True)
    small = SourceSettings(max_records=3)
    result = update(review, SECOND, "live", settings=small, transport=httpx.MockTransport(providers))
    assert not result.complete
    report = markdown_report(result)
    assert "not every OpenAlex match was read" in report and r"raise SITEGEN\_MAX\_RECORDS \(now 3\)" in report
    retrieval = [e for e in ledger(review) if e["type"] == "retrieval"][-2]
    assert retrieval["payload"]["source"] == "openalex" and retrieval["payload"]["complete"] is False


def test_monitor_commands_from_the_command_line(sitegen, tmp_path, monkeypatch):
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    code, out, _ = sitegen("monitor", "status", review, "--json")
    assert code == 0
    [saved] = json.loads(out)
    assert saved["monitor_id"] == "object-in-context" and saved["run_count"] == 2
    # A second watch on the same review, seeded with what is already screened: every record of the
    # example has been screened by someone, so its baseline finds nothing new. OpenAlex answers as it
    # did in the example's last run (its recorded responses), a day later.
    import sitegen.living.update as update_module

    real_open = update_module.open_fetcher
    monkeypatch.setattr(update_module, "open_fetcher", lambda mode, snapshots, session="", transport=None:
                        real_open("replay", snapshots, session="2023-04-17T00:00:00Z"))
    code, out, err = sitegen("monitor", "add", review, "--id", "second-watch", "--strategy", "openalex:again", QUERY,
                             "--seed-from-review", "--at", "2023-04-18T00:00:00Z", "--snapshots", "replay", "--json")
    assert code == 0, err
    report = json.loads(out)
    [search] = report["searches"]
    screened = {line.split(",")[0] for path in (review / "screening").rglob("*.csv")
                for line in path.read_text().splitlines()[1:]}
    assert search["new_ids"] == [] and search["complete"]
    code, out, _ = sitegen("monitor", "status", review, "--id", "second-watch", "--json")
    assert set(json.loads(out)[0]["seen_ids"]) == screened
    code, _, err = sitegen("monitor", "add", review, "--id", "second-watch", "--strategy", "openalex", "x",
                           "--at", "2023-04-19T00:00:00Z", "--snapshots", "replay")
    assert code == 1 and "already exists" in err
    code, _, err = sitegen("monitor", "status", review, "--id", "nope")
    assert code == 1 and "no saved search 'nope'" in err


def test_update_refuses_an_unsupported_schema_with_status_4(sitegen, tmp_path):
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    path = review / "searches" / "object-in-context.json"
    path.write_text(path.read_text().replace('"schema_version": "1.0"', '"schema_version": "2.0"'))
    before = tree_bytes(review)
    code, _, err = sitegen("update", review, "--at", "2024-01-01T00:00:00Z", "--snapshots", "replay")
    assert code == 4 and "is not supported" in err
    assert tree_bytes(review) == before


def test_searching_needs_a_locked_protocol(sitegen, tmp_path):
    review = tmp_path / "review"
    sitegen("init", review)
    with pytest.raises(Exception, match="the protocol is not locked"):
        run(review, FIRST, Providers(SYNERGY[:3], CORE[:2]), add=True)
    code, _, err = sitegen("monitor", "add", review, "--id", "main", "--strategy", "openalex", "x", "--at", FIRST)
    assert code == 1 and "not locked" in err


def test_a_record_found_by_two_searches_is_screened_once(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:4], CORE[:2])
    run(review, FIRST, providers, add=True)
    transport = httpx.MockTransport(providers)
    second = add_monitor(review, "second", [Strategy(source="openalex", query="other words")], SECOND, "live",
                         settings=SETTINGS, transport=transport)
    # The second search sees the same four OpenAlex records: new to it, but already in batch 1.
    assert second.searches[0].new == []
    saved = json.loads((review / "searches" / "second.json").read_text())
    assert len(saved["seen_ids"]) == 4
    assert inspect(review)[1] == []
    code, out, _ = sitegen("digest", review, "--week", "2026-W03")
    assert code == 0



def test_a_search_whose_unseen_records_were_in_the_review_already_says_so_and_its_counts_match_the_ledger(sitegen,
                                                                                                         tmp_path):
    """A search's diff is what its seen_ids gain. Two searches find one new work in one run: the first (by id)
    batches it, the other had not seen it either. The other's report said "nothing was unseen" and its --json had
    no count of what its seen_ids gained; seed 000's counts (retrieved, deduplicated, duplicates_removed) were
    missing from the run report."""
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:2], CORE[:1])
    run(review, FIRST, providers, add=True)
    transport = httpx.MockTransport(providers)
    add_monitor(review, "another", [Strategy(source="openalex", query="other words")], "2026-01-05T07:00:00Z", "live",
                settings=SETTINGS, transport=transport)
    seen = state(review)["seen_ids"]
    providers.works = SYNERGY[:3]
    result = update(review, SECOND, "live", settings=SETTINGS, transport=transport)
    another, watch = result.summary()["searches"]
    added = state(review)["seen_ids"][len(seen):]
    assert another["new_ids"] == added == watch["unseen_ids"] and watch["new_ids"] == []
    events = [event["payload"] for event in ledger(review) if event["ts"] == SECOND and event["type"] == "retrieval"]
    for search in (another, watch):
        returned = [payload["record_ids"] for payload in events if payload["monitor_id"] == search["monitor_id"]]
        retrieved, distinct = sum(map(len, returned)), len({i for ids in returned for i in ids})
        assert search["counts"] == {"retrieved": retrieved, "deduplicated": distinct,
                                    "duplicates_removed": retrieved - distinct, "unseen": 1,
                                    "new": len(search["new_ids"])}
        manifest = json.loads((review / search["manifest"]).read_text())["counts"]
        assert (manifest["retrieved"], manifest["distinct"]) == (retrieved, distinct)
    report = markdown_report(result)
    watch_part = report.split("### Saved search `watch`")[1]
    assert "nothing was unseen" not in watch_part
    assert "1 record this search had not seen was in the review already" in watch_part

def test_an_id_removed_from_seen_ids_is_caught_though_another_search_batched_it(sitegen, tmp_path):
    """seen_ids only grows: an id a run returned stays seen by its search, even when it went into another search's
    batch (with it gone, the search's next run would report the record as new again)."""
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:4], CORE[:2])
    run(review, FIRST, providers, add=True)
    add_monitor(review, "second", [Strategy(source="openalex", query="other words")], SECOND, "live",
                settings=SETTINGS, transport=httpx.MockTransport(providers))
    path = review / "searches" / "second.json"
    saved = json.loads(path.read_text())
    removed = saved["seen_ids"].pop(1)
    path.write_text(json.dumps(saved, indent=2))
    code, out, _ = sitegen("check", review)
    assert code == 1 and "searches/second.json" in out and "seen_ids lacks" in out and removed in out


def test_deleting_the_last_run_from_the_ledger_is_caught(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    providers.works = SYNERGY[:5]
    run(review, SECOND, providers)
    lines = (review / "ledger.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["ts"] != SECOND]
    (review / "ledger.jsonl").write_text("\n".join(kept) + "\n")
    code, out, _ = sitegen("check", review)
    assert code == 1 and "ledger's latest run of this search is" in out


def test_monitor_add_refuses_a_bad_id_without_a_traceback(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    code, _, err = sitegen("monitor", "add", review, "--id", "W_1", "--strategy", "openalex", "x", "--at", FIRST)
    assert code == 2 and "Invalid value for '--id': 'W_1': a saved search's id is 1 to 80 lower-case letters" in err \
        and "Traceback" not in err
    # A query of spaces alone was saved and sent ("search=+++"); "" was refused.
    before = tree_bytes(review)
    code, _, err = sitegen("monitor", "add", review, "--id", "w", "--strategy", "openalex", "   ", "--at", FIRST)
    assert code == 2 and "holds no visible text" in err and tree_bytes(review) == before


def _hitcount_below_results(results: list[dict]) -> dict:
    return {"hitCount": 1, "nextCursorMark": "page-2", "resultList": {"result": results}}


def _valid_looking_zero(results: list[dict]) -> dict:
    return {"hitCount": 0, "nextCursorMark": "*", "resultList": {"result": []}}


def _one_record_malformed(results: list[dict]) -> dict:
    return {"hitCount": len(results), "nextCursorMark": "end",
            "resultList": {"result": [dict(results[0], title={"oops": 1}), *results[1:]]}}


def _no_item_usable(results: list[dict]) -> dict:
    """What a renamed field looks like: the count holds, and no item has a title."""
    return {"hitCount": len(results), "nextCursorMark": "end",
            "resultList": {"result": [{key: value for key, value in result.items() if key != "title"}
                                      for result in results]}}


@pytest.mark.parametrize("fault, named", [
    (_hitcount_below_results, "reported 1 match but sent 4 different items"),
    (_valid_looking_zero, "reported 0 matches where this strategy's last complete run had 2"),
    (_one_record_malformed, "could not be read"),
    (_no_item_usable, "none of the 4 Europe PMC"),
], ids=["count-below-results", "zero-after-records", "malformed-record", "no-item-usable"])
def test_a_valid_looking_short_answer_is_incomplete_never_no_new_records(sitegen, tmp_path, monkeypatch, fault, named):
    """Faults that once exited 0 with fewer records: each is an incomplete run (exit 3), named in the report."""
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    seen = state(review)["seen_ids"]

    def faulty(request: httpx.Request) -> httpx.Response:
        if request.url.host == "www.ebi.ac.uk":
            return json_response(json.dumps(fault(CORE[:4])))
        return providers(request)

    import sitegen.living.update as update_module

    real_open = update_module.open_fetcher
    monkeypatch.setattr(update_module, "open_fetcher", lambda mode, snapshots, session="", transport=None:
                        real_open("live", None, transport=httpx.MockTransport(faulty)))
    code, out, err = sitegen("update", review, "--at", SECOND, "--report", tmp_path / "report.md")
    assert code == 3, (out, err)
    report = (tmp_path / "report.md").read_text()
    assert "**Incomplete:**" in report and "every source answered" not in report
    assert named in report and named in err
    assert "no new records (every source answered)" not in out
    europepmc_run = [e for e in ledger(review) if e["type"] == "retrieval"][-1]["payload"]
    assert europepmc_run["source"] == "europepmc" and europepmc_run["complete"] is False
    assert set(seen) <= set(state(review)["seen_ids"])


def test_a_work_without_a_title_is_named_in_a_complete_run(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    untitled = {key: value for key, value in SYNERGY[3].items() if key not in ("title", "display_name")}
    result = run(review, FIRST, Providers([*SYNERGY[:3], untitled], CORE[:2]), add=True)
    assert result.complete
    report = markdown_report(result)
    assert "Notes:" in report and "1 OpenAlex work had no title and was left out" in report
    assert "10\\.1002/hipo\\.22095" in report  # its DOI, Markdown-escaped


def test_a_work_whose_own_id_cannot_be_read_leaves_the_run_incomplete_and_counts_nothing_of_it(sitegen, tmp_path):
    # a real work, its OpenAlex id (and so its every identifier) written in a form sitegen cannot read: OpenAlex sent a
    # work the run lost, which is never a complete run, and no record of it is counted as retrieved or to screen
    review = new_review(sitegen, tmp_path)
    unread = {key: value for key, value in SYNERGY[3].items() if key not in ("doi", "ids")}
    unread["id"] = "https://openalex.org/X2610559583"
    result = run(review, FIRST, Providers([*SYNERGY[:3], unread], CORE[:2]), add=True)
    assert not result.complete
    report = markdown_report(result)
    assert "1 OpenAlex work could not be read \\(an unreadable OpenAlex id\\)" in report  # Markdown-escaped
    assert "3 records of 4 reported, but 1 more OpenAlex record could not be read" in report and "X2610559583" in report
    openalex_run = next(e["payload"] for e in ledger(review) if e["type"] == "retrieval"
                        and e["payload"]["source"] == "openalex")
    assert openalex_run["complete"] is False and len(openalex_run["record_ids"]) == 3


def test_the_site_shows_an_incomplete_run_and_names_the_unreached_source(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    providers.europepmc_status = 503
    run(review, SECOND, providers)
    code, _, err = sitegen("build", review, "--out", tmp_path / "site")
    assert code == 0, err
    for page in ("index.html", "searches.html"):  # home says so in brief, the searches page in full
        text = (tmp_path / "site" / page).read_text()
        notice = text[text.index('class="notice run-incomplete"'):]
        notice = notice[:notice.index("</p>")]
        assert "was incomplete" in notice and "Europe PMC" in notice and "OpenAlex" not in notice, page
        assert 'not evidence of "no new records"' in notice
    searches = (tmp_path / "site" / "searches.html").read_text()
    runs = searches[searches.index('<table class="runs'):searches.index("</table>", searches.index('<table class="runs'))]
    assert runs.count('<tr class="incomplete">') == 1 and runs.count('<tr class="complete">') == 1
    assert SECOND in runs.split('<tr class="incomplete">')[1].split("</tr>")[0]
    # A later complete run clears the notice but the history keeps the incomplete one.
    providers.europepmc_status = 200
    run(review, THIRD, providers)
    sitegen("build", review, "--out", tmp_path / "site")
    home, searches = ((tmp_path / "site" / page).read_text() for page in ("index.html", "searches.html"))
    assert "run-incomplete" not in home + searches and searches.count('<tr class="incomplete">') == 1


def test_runs_are_in_time_order_whatever_the_timestamps_spelling(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, "2026-02-01T00:00:00Z", providers, add=True)
    providers.europepmc_status = 503
    run(review, "2026-02-01T00:00:00.5Z", providers)  # later, though it sorts first as text
    assert sitegen("build", review, "--out", tmp_path / "site")[0] == 0
    searches = (tmp_path / "site" / "searches.html").read_text()
    assert "The latest run was incomplete" in searches
    rows = searches[searches.index('<table class="runs'):].split("<tr class=")[1:3]
    assert rows[0].startswith('"incomplete"') and "00:00:00.5Z" in rows[0]


HOSTILE_DOI = "10.1234/a`@octocat[Click_here](https://evil.example/)![t](https://evil.example/p.png)`"


def test_a_hostile_doi_stays_text_in_the_run_report_and_the_digest(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    work = dict(SYNERGY[0], doi="https://doi.org/" + HOSTILE_DOI, publication_date="2026-01-05")
    result = run(review, FIRST, Providers([work], CORE[:1]), add=True)
    report = markdown_report(result)
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark", {"html": False}).render(report)
    assert "evil.example" in rendered and "<a " not in rendered and "<img" not in rendered
    assert "@octocat" not in re.sub(r"<code>.*?</code>", "", rendered)  # a mention only inside code, inert
    assert sitegen("build", review, "--out", tmp_path / "site")[0] == 0
    for page in (tmp_path / "site" / "digests").glob("*.html"):
        html = page.read_text()
        assert "evil.example" in html and 'href="https://evil.example' not in html and "<img" not in html


def test_a_lone_surrogate_from_a_provider_does_not_block_the_run(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    broken = dict(SYNERGY[0], authorships=[{"author": {"display_name": "PLACEHOLDER"}}])
    body = json.dumps({"meta": {"count": 1, "next_cursor": None}, "results": [broken]})
    body = body.replace("PLACEHOLDER", "X \\udfff")  # the escape as a provider sends it
    result = add_monitor(review, "watch", [STRATEGIES[0]], FIRST, "live", settings=SETTINGS,
                         transport=httpx.MockTransport(lambda request: json_response(body)))
    assert result.complete
    records = [json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()]
    assert records[0]["author"] == [{"literal": "X \ufffd"}]
    assert sitegen("check", review)[0] == 0


def test_a_result_sharing_only_an_existing_records_identifier_is_filed_under_its_content(sitegen, tmp_path):
    """A supplement-style DOI on an unrelated work: deduplication keeps the two apart, and the new one, with
    no identifier of its own left, is filed under a key of its own content (a ref): screened like any other
    record, never hidden inside the record holding the DOI."""
    review = new_review(sitegen, tmp_path)
    doi = "10.1234/abc"
    work = dict(SYNERGY[0], doi=f"https://doi.org/{doi}",
                title="Hippocampal lesions impair object recognition memory in rats")
    crossref_item = {"DOI": doi, "title": ["Quantum chromodynamics of heavy quarks at finite temperature"]}
    state = {"crossref": []}

    def providers(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps({"meta": {"count": 1, "next_cursor": None}, "results": [work]}))
        items = state["crossref"]
        return json_response(json.dumps({"status": "ok", "message-type": "work-list", "message": {
            "total-results": len(items), "items": items, "next-cursor": "c"}}))

    strategies = [Strategy(source="openalex", query="x"), Strategy(source="crossref", query="x")]
    add_monitor(review, "watch", strategies, FIRST, "live", settings=SETTINGS,
                transport=httpx.MockTransport(providers))
    state["crossref"] = [crossref_item]
    result = update(review, SECOND, "live", settings=SETTINGS, transport=httpx.MockTransport(providers))
    [new] = result.searches[0].new
    assert result.complete and new.startswith("ref:")
    records = {row["id"]: row for row in map(json.loads, (review / "records.jsonl").read_text().splitlines())}
    assert records[doi]["title"] == work["title"]  # the existing record's metadata is not mixed with the other's
    assert records[new]["title"].startswith("Quantum chromodynamics") and records[new]["DOI"] == doi
    assert any("content key (ref)" in note for note in records[new]["custom"]["conflicts"])
    assert not any("content key" in note for note in records[doi]["custom"]["conflicts"])  # it keeps its DOI
    assert sitegen("check", review)[0] == 0


def test_a_run_that_fails_records_no_snapshot(sitegen, tmp_path, monkeypatch):
    """Recorded responses are written with the run's other files, in its transaction: none if it fails."""
    import sitegen.living.update as update_module

    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    add_monitor(review, "watch", STRATEGIES, FIRST, "record", settings=SETTINGS,
                transport=httpx.MockTransport(providers))
    recorded = sorted(p.name for p in (review / "snapshots").rglob("*") if p.is_file())
    assert "index.jsonl" in recorded and len(recorded) > 2  # the baseline was recorded, bodies and index
    before = tree_bytes(review)

    def failing(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(update_module, "integrate", failing)
    providers.works = SYNERGY[:6]
    with pytest.raises(OSError):
        update(review, SECOND, "record", settings=SETTINGS, transport=httpx.MockTransport(providers))
    assert tree_bytes(review) == before


def test_a_second_saved_search_at_the_time_of_another_run_is_refused(sitegen, tmp_path):
    """Recorded responses are filed by run time: a second search recorded at that time would replace the
    first's evidence (and the ledger's runs would merge)."""
    review = new_review(sitegen, tmp_path)
    add_monitor(review, "first", [STRATEGIES[0]], FIRST, "record", settings=SETTINGS,
                transport=httpx.MockTransport(Providers(SYNERGY[:3], CORE[:2])))
    before = tree_bytes(review)
    with pytest.raises(SitegenError, match="is not after the latest search run or import"):
        add_monitor(review, "second", [STRATEGIES[0]], FIRST, "record", settings=SETTINGS,
                    transport=httpx.MockTransport(Providers(SYNERGY[3:6], CORE[:2])))
    assert tree_bytes(review) == before


def test_the_snapshot_store_never_replaces_another_runs_response(tmp_path):
    from sitegen.review.models import SnapshotEntry
    from sitegen.sources.snapshots import SnapshotStore

    entry = SnapshotEntry(fingerprint="0" * 64, session=FIRST, url="https://api.openalex.org/works", status=200)
    store = SnapshotStore(tmp_path / "snapshots")
    store.add(entry, b"first")
    store.add(entry, b"first, asked again")  # the same run may re-record its own request
    store.save()
    with pytest.raises(SitegenError, match="already recorded for the run at"):
        SnapshotStore(tmp_path / "snapshots").add(entry, b"another run's answer")


def test_control_characters_from_a_provider_never_reach_a_record(sitegen, tmp_path):
    """A terminal would obey them, XML cannot hold them: provider text has them replaced by spaces."""
    review = new_review(sitegen, tmp_path)
    work = dict(SYNERGY[0], title="PLACEHOLDER")
    body = json.dumps({"meta": {"count": 1, "next_cursor": None}, "results": [work]})
    body = body.replace("PLACEHOLDER", "T\\u001b]0;owned\\u0007\\u0000itle\u009b2J")
    result = add_monitor(review, "watch", [STRATEGIES[0]], FIRST, "live", settings=SETTINGS,
                         transport=httpx.MockTransport(lambda request: json_response(body)))
    assert result.complete
    [record] = [json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()]
    assert record["title"] == "T ]0;owned itle 2J"  # spaces, then whitespace collapsed as in any title
    assert sitegen("check", review)[0] == 0


def test_an_existing_records_title_and_abstract_stay_as_reviewers_saw_them(sitegen, tmp_path):
    """Evidence quotes the abstract and decisions were made on both: a source's new wording never
    replaces them underneath (it only fills an abstract that was missing)."""
    review = new_review(sitegen, tmp_path)
    work = dict(SYNERGY[0])
    providers = Providers([work], CORE[:1])
    run(review, FIRST, providers, add=True)
    before = {r["id"]: r for r in map(json.loads, (review / "records.jsonl").read_text().splitlines())}
    longer = dict(work, title=work["title"] + " (corrected)",
                  abstract_inverted_index={**work["abstract_inverted_index"], "Entirely": [10_000], "new": [10_001]})
    providers.works = [longer]
    assert run(review, SECOND, providers).complete
    after = {r["id"]: r for r in map(json.loads, (review / "records.jsonl").read_text().splitlines())}
    for record_id, record in before.items():
        assert after[record_id]["title"] == record["title"] and after[record_id].get("abstract") == record.get("abstract")


def test_usable_records_that_collapse_while_the_count_holds_are_doubted():
    # The provider's count is as before, but it sends records sitegen can use for a tenth of them at most.
    before = RetrievalPayload(monitor_id="m", source="europepmc", query="q", record_ids=[f"pmid:{n}" for n in range(1, 41)],
                              total=40)
    records = [Record(id=f"pmid:{n}", title="A study", PMID=str(n)) for n in range(1, 4)]
    doubted = collapse_doubted(SourceOutcome(source="europepmc", status="ok", records=records, total=40), before)
    assert not doubted.complete and "sent 3 usable records where this strategy's last complete run had 40" in doubted.doubt
    fewer_before = before.model_copy(update={"record_ids": before.record_ids[:6]})
    assert collapse_doubted(SourceOutcome(source="europepmc", status="ok", records=records, total=40), fewer_before).complete


def test_screening_does_not_start_on_a_search_no_source_answered(sitegen, tmp_path):
    # A first run that reached no source found nothing for certain: the gate to screening waits for a run
    # some source answered in full (or for imported records), and says why.
    review = new_review(sitegen, tmp_path)
    result = add_monitor(review, "watch", STRATEGIES, FIRST, "live", settings=SETTINGS,
                         transport=httpx.MockTransport(lambda request: httpx.Response(503)))
    assert not result.complete
    assert sitegen("state", "advance", review, "--at", "2026-01-06T00:00:00Z")[0] == 0  # to searching
    code, _, err = sitegen("state", "advance", review, "--at", SECOND)  # to screening: refused
    assert code == 1 and "every run so far was incomplete" in err
    run(review, THIRD, Providers(SYNERGY[:3], CORE[:2]))
    code, _, err = sitegen("state", "advance", review, "--at", "2026-04-01T00:00:00Z")
    assert code == 0, err


def test_two_strategies_of_one_source_without_labels_each_show_their_own_last_run(sitegen, tmp_path):
    # Runs were known by (source, label): of two OpenAlex strategies with no label, the one whose source failed
    # showed the other's complete run (a downed source looking complete), or both showed the failure.
    review = new_review(sitegen, tmp_path)
    strategies = [Strategy(source="openalex", query="object context"), Strategy(source="openalex", query="recognition")]

    def answer(request: httpx.Request) -> httpx.Response:
        if "recognition" in str(request.url):
            return httpx.Response(503)
        return httpx.Response(200, json={"meta": {"count": 0, "next_cursor": None}, "results": []})
    add_monitor(review, "watch", strategies, FIRST, "live", settings=SETTINGS, transport=httpx.MockTransport(answer))
    code, out, _ = sitegen("monitor", "status", review)
    lines = {line.split(": ", 1)[1].split("  [")[0]: line for line in out.splitlines() if line.startswith("  openalex")}
    assert "incomplete" in lines["recognition"] and "incomplete" not in lines["object context"], out
    # Two strategies of one source under one label cannot be told apart: refused before anything is saved,
    # and named by check in a saved search edited so.
    labelled = [s.model_copy(update={"label": "main"}) for s in strategies]
    with pytest.raises(SitegenError, match="two openalex strategies have the label 'main'"):
        add_monitor(review, "other", labelled, SECOND, "live", settings=SETTINGS,
                    transport=httpx.MockTransport(answer))
    saved = review / "searches" / "watch.json"
    data = json.loads(saved.read_text())
    for strategy in data["strategies"]:
        strategy["label"] = "main"
    saved.write_text(json.dumps(data, indent=2))
    code, out, _ = sitegen("check", review)
    assert code == 1 and "[label-repeated]" in out and "strategies[1] has the label 'main' of strategies[0]" in out


def test_the_one_unlabelled_strategy_of_a_source_edited_since_it_ran_is_known_by_its_run(sitegen, tmp_path):
    # Known by query, an edited unlabelled strategy read as never run ("not run yet"), and the site could not say
    # it changed since its last run; the one unlabelled strategy of its source is known by its source.
    from sitegen.living.manifests import strategy_runs
    from sitegen.review.folder import load_review

    review = new_review(sitegen, tmp_path)
    add_monitor(review, "watch", [Strategy(source="openalex", query="object context")], FIRST, "live",
                settings=SETTINGS, transport=httpx.MockTransport(lambda request: httpx.Response(503)))
    saved = review / "searches" / "watch.json"
    saved.write_text(saved.read_text().replace('"object context"', '"object AND context"'))
    loaded, _ = load_review(review)
    [last] = strategy_runs(loaded, loaded.searches["watch"])
    assert last is not None and last.query == "object context" and not last.complete
    code, out, _ = sitegen("monitor", "status", review)
    assert f"incomplete at its last run ({FIRST})" in out
    # Run under its new query, then edited again: its latest run (there are two under its source now).
    update(review, SECOND, "live", settings=SETTINGS, transport=httpx.MockTransport(lambda request: httpx.Response(503)))
    saved.write_text(saved.read_text().replace('"object AND context"', '"object OR context"'))
    loaded, _ = load_review(review)
    [last] = strategy_runs(loaded, loaded.searches["watch"])
    assert last is not None and last.query == "object AND context" and last.at == SECOND


def test_monitor_status_says_which_strategies_last_ran_incomplete(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    code, out, _ = sitegen("monitor", "status", review)
    assert code == 0 and "has no saved search yet" in out
    add_monitor(review, "watch", STRATEGIES, FIRST, "live", settings=SETTINGS,
                transport=httpx.MockTransport(lambda request: httpx.Response(503)))
    code, out, _ = sitegen("monitor", "status", review)
    assert code == 0 and out.count(f"incomplete at its last run ({FIRST})") == len(STRATEGIES), out
    run(review, SECOND, Providers(SYNERGY[:3], CORE[:2]))
    code, out, _ = sitegen("monitor", "status", review)
    assert code == 0 and "incomplete" not in out, out


def test_a_weeks_digest_says_when_a_source_did_not_answer_a_run_of_that_week(sitegen, tmp_path):
    """The digest lists the week's new records: with a source down, not all of them, and it says so."""
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    run(review, FIRST, providers, add=True)
    providers.europepmc_status = 503
    providers.works = [*SYNERGY[:3], SYNERGY[5]]  # OpenAlex answers with one new record: a batch this week
    result = run(review, SECOND, providers)
    assert not result.complete and result.searches[0].new
    code, out, err = sitegen("digest", review, "--week", "2026-W03")
    assert code == 0, err
    assert "Not every source answered in full this week (Europe PMC in the run of watch on 2026-01-12)" in out
    code, out, err = sitegen("digest", review, "--week", "2026-W02")  # the first run's week: all answered
    assert code == 0 and "Not every source answered" not in out, out + err
