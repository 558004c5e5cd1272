"""Retiring a saved search (`sitegen monitor retire`) and bringing it back (`sitegen monitor reinstate`): `update`
no longer runs it, and says so once; its file, seen_ids, runs and manifests stay, so `check`, PRISMA and the
searches page are as they were but for saying it is retired; a reinstated search reports only what it never saw.
Real OpenAlex and Europe PMC records (tests/fixtures), providers answered by a mock transport."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from conftest import tree_bytes
from test_update import CORE, FIRST, SECOND, SETTINGS, THIRD, Providers, ledger, new_review, no_waiting  # noqa: F401
from test_update_over_time import FOURTH, served_by, work

from sitegen.commands import add_monitor
from sitegen.living.ledger import append
from sitegen.review.folder import load_review
from sitegen.review.models import ReinstatementPayload, Strategy
from sitegen.review.transaction import Transaction

REASON = "Europe PMC's strategy is covered by the broader OpenAlex search"


def two_searches(sitegen, tmp_path: Path) -> tuple[Path, Providers]:
    """A review whose searches `watch` (OpenAlex) and `other` (Europe PMC) both ran at FIRST."""
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0), work(1)], CORE[:2])
    transport = httpx.MockTransport(providers)
    add_monitor(review, "watch", [Strategy(source="openalex", query="object context")], FIRST, "live",
                settings=SETTINGS, transport=transport)
    add_monitor(review, "other", [Strategy(source="europepmc", query="cancer")], "2026-01-05T07:00:00Z", "live",
                settings=SETTINGS, transport=transport)
    return review, providers


def test_a_retired_search_is_not_run_and_the_first_run_after_says_so(sitegen, tmp_path, monkeypatch):
    review, providers = two_searches(sitegen, tmp_path)
    saved = (review / "searches" / "other.json").read_bytes()
    prisma = sitegen("prisma", review, "--json")[1]
    code, out, err = sitegen("monitor", "retire", review, "--id", "other", "--at", SECOND, "--reason", f"  {REASON} ")
    assert code == 0 and "retired" in out, out + err
    assert ledger(review)[-1]["type"] == "retirement"
    assert ledger(review)[-1]["payload"] == {"monitor_id": "other", "reason": REASON}  # without the spaces around
    assert sitegen("check", review)[0] == 0
    assert sitegen("prisma", review, "--json")[1] == prisma  # its records stay identified, counted as before
    code, out, _ = sitegen("monitor", "status", review)
    assert f"other: run 1 time, last 2026-01-05T07:00:00Z, 2 ids seen; retired at {SECOND}, no longer run (why: “{REASON}”)" in out
    # The next run runs `watch` alone, and names `other` as retired (on stderr, in --json and in the report).
    providers.results = CORE[:4]  # what `other` would find new, were it run
    served_by(providers, monkeypatch)
    code, out, err = sitegen("update", review, "--at", THIRD, "--json", "--report", tmp_path / "report.md")
    assert code == 0, out + err
    summary = json.loads(out)
    assert [search["monitor_id"] for search in summary["searches"]] == ["watch"]
    assert summary["retired"] == [{"monitor_id": "other", "at": SECOND, "reason": REASON}]
    assert f"note: other: the saved search was retired at {SECOND} (why: “{REASON}”) and was not run" in err, err
    assert "### Retired saved searches" in (tmp_path / "report.md").read_text()
    assert not any(e["type"] == "retrieval" and e["payload"]["monitor_id"] == "other" and e["ts"] == THIRD
                   for e in ledger(review))
    assert (review / "searches" / "other.json").read_bytes() == saved  # its seen_ids, last_run and run_count
    assert sitegen("check", review)[0] == 0
    # Said once: the run after says nothing of it.
    code, out, err = sitegen("update", review, "--at", FOURTH, "--json")
    assert code == 0 and json.loads(out)["retired"] == [] and "retired" not in err, out + err


def test_a_reinstated_search_reports_only_records_it_never_saw(sitegen, tmp_path, monkeypatch):
    review, providers = two_searches(sitegen, tmp_path)
    assert sitegen("monitor", "retire", review, "--id", "other", "--at", SECOND, "--reason", REASON)[0] == 0
    # Added again under its id, it is refused, and told how to bring it back with what it has seen.
    code, _, err = sitegen("monitor", "add", review, "--id", "other", "--strategy", "europepmc", "cancer",
                           "--at", THIRD)
    assert code != 0 and f"retired at {SECOND}" in err and "sitegen monitor reinstate" in err, err
    code, out, err = sitegen("monitor", "reinstate", review, "--id", "other", "--at", THIRD)
    assert code == 0 and "reinstated" in out, out + err
    assert sitegen("check", review)[0] == 0
    providers.results = CORE[:3]  # the two it saw before its retirement, and one more
    served_by(providers, monkeypatch)
    code, out, err = sitegen("update", review, "--at", FOURTH, "--json")
    assert code == 0, out + err
    other = next(search for search in json.loads(out)["searches"] if search["monitor_id"] == "other")
    assert len(other["new_ids"]) == 1 and json.loads(out)["retired"] == []
    assert sitegen("check", review)[0] == 0


def test_every_bad_retirement_is_refused_and_writes_nothing(sitegen, tmp_path, monkeypatch):
    review, providers = two_searches(sitegen, tmp_path)
    refused = [
        (("retire", "--id", "nope", "--at", SECOND, "--reason", REASON), "no saved search 'nope'"),
        (("retire", "--id", "other", "--at", "2026-01-05T06:30:00Z", "--reason", REASON),
         "earlier than the latest ledger event"),
        (("retire", "--id", "other", "--at", SECOND, "--reason", "covered\u200b elsewhere"), "U+200B"),
        (("retire", "--id", "other", "--at", SECOND, "--reason", " \u00a0 "), "visible text"),
        (("retire", "--id", "Other!", "--at", SECOND, "--reason", REASON), "a saved search's id"),
        (("reinstate", "--id", "other", "--at", SECOND), "is not retired"),
    ]
    before = tree_bytes(review)
    for args, said in refused:
        code, out, err = sitegen("monitor", args[0], review, *args[1:])
        assert code != 0 and said in err, (args, out, err)
        assert tree_bytes(review) == before, args
    assert sitegen("monitor", "retire", review, "--id", "other", "--at", SECOND, "--reason", REASON)[0] == 0
    before = tree_bytes(review)
    code, _, err = sitegen("monitor", "retire", review, "--id", "other", "--at", THIRD, "--reason", REASON)
    assert code != 0 and f"already retired at {SECOND}" in err, err
    assert sitegen("monitor", "retire", review, "--id", "watch", "--at", THIRD, "--reason", REASON)[0] == 0
    before = tree_bytes(review)
    served_by(providers, monkeypatch)
    code, _, err = sitegen("update", review, "--at", FOURTH)  # nothing left to run
    assert code != 0 and "every saved search" in err and "is retired" in err, err
    assert tree_bytes(review) == before


def test_check_names_a_retired_search_deleted_and_a_reinstatement_of_a_search_never_retired(sitegen, tmp_path):
    review, _ = two_searches(sitegen, tmp_path)
    # A reinstatement written by other means than `sitegen monitor reinstate` (which refuses it).
    loaded, problems = load_review(review)
    assert loaded is not None and not problems
    transaction = Transaction(review)
    append(transaction, loaded, SECOND, [ReinstatementPayload(monitor_id="watch")])
    transaction.commit()
    code, out, _ = sitegen("check", review)
    assert code == 1 and "[retirement-trail]" in out and "which was not retired" in out, out
    review, _ = two_searches(sitegen, tmp_path / "second")
    assert sitegen("monitor", "retire", review, "--id", "other", "--at", SECOND, "--reason", REASON)[0] == 0
    (review / "searches" / "other.json").unlink()  # retired is not deleted: its seen_ids are kept
    code, out, _ = sitegen("check", review)
    assert code == 1 and "[search-missing]" in out and "retirement event" in out, out


def test_the_searches_page_and_the_changelog_say_when_and_why_a_search_was_retired(sitegen, example_copy, tmp_path):
    at = "2026-11-01T00:00:00Z"
    assert sitegen("monitor", "retire", example_copy, "--id", "object-in-context", "--at", at,
                   "--reason", "Replaced by a <broader> search")[0] == 0
    code, out, err = sitegen("publish", example_copy, "--out", tmp_path / "site")
    assert code == 0 and "1 saved search retired" in out, out + err
    page = (tmp_path / "site" / "searches.html").read_text()
    assert "(retired)</h2>" in page and f'<time datetime="{at}">' in page
    assert "Why: Replaced by a &lt;broader&gt; search" in page
    assert "saved search object-in-context retired: Replaced by a &lt;broader&gt; search" in \
        (tmp_path / "site" / "versions.html").read_text()


def test_a_retirement_reason_is_quoted_as_text_not_as_python(sitegen, tmp_path):
    """The reason was shown by repr: in "…" when it held an apostrophe, in '…' when not, a backslash doubled."""
    review, _ = two_searches(sitegen, tmp_path)
    reason = r"PubMed's strategy replaced by C:\searches\new"
    assert sitegen("monitor", "retire", review, "--id", "other", "--at", SECOND, "--reason", reason)[0] == 0
    code, out, _ = sitegen("monitor", "status", review)
    assert code == 0 and f"(why: “{reason}”)" in out, out


def test_the_searches_page_keeps_a_retirement_and_the_reinstatement_after_it(sitegen, example_copy, tmp_path):
    # Reinstated, the search is no longer retired; its history still says when and why it was not run.
    retired, reinstated = "2026-11-01T00:00:00Z", "2026-11-15T00:00:00Z"
    assert sitegen("monitor", "retire", example_copy, "--id", "object-in-context", "--at", retired,
                   "--reason", "Replaced by a <broader> search")[0] == 0
    assert sitegen("monitor", "reinstate", example_copy, "--id", "object-in-context", "--at", reinstated,
                   "--reason", "The <broader> search missed studies")[0] == 0
    code, out, err = sitegen("publish", example_copy, "--out", tmp_path / "site")
    assert code == 0, out + err
    page = (tmp_path / "site" / "searches.html").read_text()
    assert "(retired)</h2>" not in page
    history = page[page.index('<ul class="search-history">'):]
    history = history[:history.index("</ul>")]
    assert f'<time datetime="{retired}">' in history and "retired <span" in history
    assert "why: Replaced by a &lt;broader&gt; search" in history
    assert f'<time datetime="{reinstated}">' in history and "reinstated <span" in history
    assert "why: The &lt;broader&gt; search missed studies" in history
    assert history.index(retired) < history.index(reinstated)
