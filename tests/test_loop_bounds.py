"""`sitegen loop`'s bound on the searches one round sends (`--max-searches`): a long draft has one problem per
unsupported sentence, and a round sent one request per problem, thousands for a long draft. The problems over the
bound are said to be not searched (why, and how many), never dropped, and the next round searches them first."""

from __future__ import annotations

import json
import shutil

import httpx
import pytest
import test_loop
from click.testing import CliRunner
from test_loop import Providers, problems, round_dir, run
from test_loop_fixes import Answering, accept

from sitegen import commands
from sitegen.cli import cli
from sitegen.errors import EXIT_INCOMPLETE, SitegenError
from sitegen.manuscript import loop as loop_module
from sitegen.manuscript.loop import MAX_SEARCHES

no_waiting, manuscript, cli_with_mocks = test_loop.no_waiting, test_loop.manuscript, test_loop.cli_with_mocks

TOOLS = ["ranking", "clustering", "summarising", "extraction", "deduplication", "translation"]


def long_draft(folder) -> None:
    """The fixture draft with one unsupported claim more per tool, each searched with other words."""
    draft = folder / "draft.md"
    claims_ = "\n\n".join(f"Automated {tool} reduces the reviewers' workload by {10 + n}% in published trials."
                          for n, tool in enumerate(TOOLS))
    draft.write_text(draft.read_text().replace("## Background", f"{claims_}\n\n## Background"))


def searches(providers: Providers) -> list[str]:
    return [request.url.params.get("search", "") or str(request.url) for request in providers.requests
            if request.url.host == "api.openalex.org"]


def test_a_round_sends_at_most_its_limit_of_searches_and_says_which_problems_it_did_not_search(manuscript):
    long_draft(manuscript)
    providers = Providers()
    run(manuscript, providers, max_searches=3)
    rows = problems(manuscript, 1)
    queried = [row for row in rows if row.get("query")]
    assert len(queried) > 3 and len(searches(providers)) == 3
    unsearched = [row["id"] for row in queried if row.get("not_searched")]
    assert len(unsearched) == len(queried) - 3
    folder = round_dir(manuscript, 1)
    queries = (folder / "queries.md").read_text()
    assert queries.count("not searched, over round 1's limit of 3 searches (--max-searches)") == len(unsearched)
    sections = {part.split(":")[0]: part for part in (folder / "revision-suggestions.md").read_text().split("\n## ")}
    for id_ in unsearched:  # a search not sent found nothing, nor "nothing to suggest"
        assert "was not sent, over round 1's limit of 3 searches (--max-searches): this" in sections[id_]
        assert "found nothing" not in sections[id_]
    summary = (folder.parent / "final-summary.md").read_text()
    assert f"Not searched in round 1: {len(unsearched)} problems ({', '.join(unsearched)}), over round 1's limit" in summary
    assert f"| 1 | {len(rows)} | {len(unsearched)} |" in summary
    assert json.loads((folder / "candidates.json").read_text()).__len__() == 3

    # round 2 searches first what round 1 did not, then the others, up to its own limit
    accept(manuscript, [])
    unsent = {row["query"] for row in queried if row.get("not_searched")}
    providers = Providers()
    run(manuscript, providers, max_searches=len(unsent))
    second = [s["query"] for s in json.loads((round_dir(manuscript, 2) / "candidates.json").read_text())
              if s["round"] == 2]
    assert set(second) == unsent and len(searches(providers)) == len(unsent)


def test_the_limit_is_an_option_with_a_default_shown_in_help(manuscript, cli_with_mocks):
    shown = CliRunner().invoke(cli, ["loop", "--help"]).output
    assert "--max-searches" in shown and f"default: {MAX_SEARCHES}" in " ".join(shown.split())
    long_draft(manuscript)
    result = CliRunner().invoke(cli, ["loop", str(manuscript), "--topic", test_loop.TOPIC, "--max-searches", "1"])
    assert result.exit_code == 1, result.output
    assert "not searched in round 1 (over its limit of searches, --max-searches): P" in result.output
    bad = CliRunner().invoke(cli, ["loop", str(manuscript), "--topic", test_loop.TOPIC, "--max-searches", "-1"])
    assert bad.exit_code == 2 and "--max-searches" in bad.output


def test_a_query_two_problems_ask_is_sent_once_a_round_counts_once_and_answers_both(manuscript):
    draft = manuscript / "draft.md"
    claim = "Automated ranking reduces the reviewers' workload by 40% in published trials."
    draft.write_text(draft.read_text().replace("## Background", f"{claim}\n\n{claim.replace('40', '45')}\n\n## Background"))
    providers = Providers()
    run(manuscript, Providers())
    rows = [row for row in problems(manuscript, 1) if row.get("query")]
    distinct = list(dict.fromkeys(row["query"] for row in rows))
    twice = [row["id"] for row in rows if "Automated ranking" in row["evidence"]]
    queries = {row["id"]: row["query"] for row in rows}
    assert len(twice) == 2 and queries[twice[0]] == queries[twice[1]] and len(distinct) < len(rows)

    again = manuscript.parent / "again"  # the same draft once more, with a limit of one search per distinct query
    shutil.copytree(manuscript, again, ignore=shutil.ignore_patterns("output"))
    run(again, providers, max_searches=len(distinct))
    sent = searches(providers)
    assert len(sent) == len(distinct) and len(set(sent)) == len(sent)  # each query once, within the limit
    rows = problems(again, 1)
    assert not any(row.get("not_searched") for row in rows)  # each counted once: all of them fit
    answered = {s["problem"]: s for s in json.loads((round_dir(again, 1) / "candidates.json").read_text())}
    assert answered[twice[0]]["records"] and answered[twice[0]]["records"] == answered[twice[1]]["records"]
    assert {row["id"] for row in rows if row.get("query")} == set(answered)  # every problem listed with its search


def test_a_last_round_over_its_limit_pauses_until_a_repeat_searches_the_rest_or_its_confirmation_settles(
        manuscript, monkeypatch):
    # round 2's problems over its limit were "to search by hand" and the loop stopped: no run ever searched them
    long_draft(manuscript)
    providers = Answering()
    providers.answering = True  # every index answers: the limit alone leaves work undone
    run(manuscript, providers)
    accept(manuscript, [])
    monkeypatch.setattr(commands, "loop", lambda *a, **k: loop_module.step(
        *a, **k, verify=test_loop.crossref_verifier, transport=httpx.MockTransport(providers)))

    def loop(limit: int):
        return CliRunner().invoke(cli, ["loop", str(manuscript), "--topic", test_loop.TOPIC, "--max-searches", str(limit)])

    second = loop(2)
    assert second.exit_code == EXIT_INCOMPLETE, second.output  # was 1: stopped with them unsearched
    assert "not searched in round 2" in second.output and "run the loop again to repeat round 2" in second.output
    kept = [s for s in json.loads((round_dir(manuscript, 2) / "candidates.json").read_text()) if s["round"] == 2]
    summary = (round_dir(manuscript, 2).parent / "final-summary.md").read_text()
    assert "until round 2's confirm.yaml is written, it repeats round 2" in summary

    before = len(searches(providers))
    done = loop(MAX_SEARCHES)  # round 2 again, not a third: it searches only what it left, keeping what it answered
    assert done.exit_code == 1 and "the loop stops after 2 rounds" in done.output, done.output
    assert not (round_dir(manuscript, 2).parent / "3").exists()
    rows = problems(manuscript, 2)
    assert not any(row.get("not_searched") for row in rows)
    sent = searches(providers)[before:]
    assert not {s["query"] for s in kept} & set(sent) and len(set(sent)) == len(sent)
    assert "2 rounds have been run" in loop(MAX_SEARCHES).output


def test_a_last_round_over_its_limit_that_the_user_settled_for_is_not_repeated(manuscript):
    long_draft(manuscript)
    providers = Answering()
    providers.answering = True
    run(manuscript, providers)
    accept(manuscript, [])
    assert run(manuscript, providers, max_searches=1).paused
    accept(manuscript, [], 2)  # settles for it: what is left is to check by hand
    with pytest.raises(SitegenError, match="2 rounds have been run"):
        run(manuscript, providers)
    summary = (round_dir(manuscript, 2).parent / "final-summary.md").read_text()
    assert "check by hand: the loop runs no round after round 2" in summary and "repeats round 2" not in summary
