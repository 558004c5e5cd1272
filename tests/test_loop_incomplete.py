"""`sitegen loop` when an index does not answer a round in full: the round says which index and what it left,
its files are kept, and the exit status is the one for an incomplete source (3) when no later round would
check or search what it could not; a rerun repeats that round, never counting a third."""

from __future__ import annotations

import json

import httpx
import test_loop
from click.testing import CliRunner
from test_loop import TOPIC, crossref_verifier, round_dir, run
from test_loop_fixes import Answering, accept

from sitegen import commands
from sitegen.cli import cli
from sitegen.errors import EXIT_INCOMPLETE
from sitegen.manuscript import loop as loop_module

no_waiting, manuscript = test_loop.no_waiting, test_loop.manuscript


class SearchLimited(Answering):
    """The recorded providers (Crossref answering for every entry), with OpenAlex rate limited while `limited`."""

    answering = True
    limited = False

    def __call__(self, request):
        if self.limited and request.url.host == "api.openalex.org":
            self.requests.append(request)
            return httpx.Response(429, headers={"retry-after": "3600"}, text="slow down")
        return super().__call__(request)


def round_files(folder) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_last_round_an_index_did_not_answer_in_full_exits_3_names_it_keeps_it_and_is_repeated(manuscript,
                                                                                                 monkeypatch):
    providers = SearchLimited()
    monkeypatch.setattr(commands, "loop", lambda *a, **k: loop_module.step(
        *a, **k, verify=crossref_verifier, transport=httpx.MockTransport(providers)))
    runner = CliRunner()

    def loop():
        return runner.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC])

    assert loop().exit_code == 1  # round 1 with problems: round 2 searches again once it is confirmed
    accept(manuscript, [])
    providers.limited = True
    second = loop()
    assert second.exit_code == EXIT_INCOMPLETE, second.output  # was 1, as for problems a complete round left
    assert "round 2 is incomplete: OpenAlex rate-limited (the search for P1" in second.output
    assert "run the loop again later to repeat round 2" in second.output
    summary = round_dir(manuscript, 1).parent / "final-summary.md"
    assert "Incomplete sources in round 2: OpenAlex rate-limited (the search for P1" in summary.read_text()
    assert (round_dir(manuscript, 2) / "problems.md").is_file()
    round_one = round_files(round_dir(manuscript, 1))  # its confirmation applied

    still = loop()  # still rate limited: round 2 again, not a third round, and round 1 as it was
    assert still.exit_code == EXIT_INCOMPLETE and "round 2:" in still.output, still.output
    assert not (round_dir(manuscript, 1).parent / "3").exists() and round_files(round_dir(manuscript, 1)) == round_one

    providers.limited = False
    done = loop()  # answered in full: round 2 is complete, with its hits, and the loop stops as it does
    assert done.exit_code == 1 and "the loop stops after 2 rounds" in done.output, done.output
    searches = [s for s in json.loads((round_dir(manuscript, 2) / "candidates.json").read_text()) if s["round"] == 2]
    assert searches and all(s["status"] == "ok" for s in searches)
    assert "incomplete" not in done.output and "Incomplete" not in summary.read_text()
    assert "2 rounds have been run" in loop().output


def paused_in_round_2(manuscript, monkeypatch) -> tuple[CliRunner, SearchLimited]:
    """Round 1 run and confirmed, then round 2 run with OpenAlex rate limited: the loop paused (exit 3)."""
    providers = SearchLimited()
    monkeypatch.setattr(commands, "loop", lambda *a, **k: loop_module.step(
        *a, **k, verify=crossref_verifier, transport=httpx.MockTransport(providers)))
    runner = CliRunner()
    runner.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC])
    accept(manuscript, [])
    providers.limited = True
    assert runner.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC]).exit_code == EXIT_INCOMPLETE
    return runner, providers


def test_an_incomplete_last_round_the_user_settled_for_is_not_repeated(manuscript, monkeypatch):
    runner, providers = paused_in_round_2(manuscript, monkeypatch)
    accept(manuscript, [], number=2)  # the user's decisions on what round 2 found: never deleted by a repeat
    providers.limited = False
    again = runner.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC])
    assert again.exit_code == 1 and "2 rounds have been run" in again.output, again.output
    assert (round_dir(manuscript, 2) / "confirm.yaml").read_text() == "accept: []\n"


def test_a_repeated_last_round_keeps_the_searches_it_answered_and_asks_only_the_others(manuscript):
    class FirstAnswered(SearchLimited):
        """OpenAlex answers its first `answers` searches, then is rate limited."""

        answers = 0

        def __call__(self, request):
            if request.url.host == "api.openalex.org":
                self.limited = self.answers <= 0
                self.answers -= 1
            return super().__call__(request)

    providers = FirstAnswered()
    providers.answers = 10
    run(manuscript, providers)
    accept(manuscript, [])
    providers.answers = 1  # round 2: the first problem's search is answered, the other's rate limited
    run(manuscript, providers)
    searches = [s for s in json.loads((round_dir(manuscript, 2) / "candidates.json").read_text()) if s["round"] == 2]
    assert searches[0]["status"] == "ok" and searches[0]["records"]
    assert {s["status"] for s in searches[1:]} == {"failed: openalex rate_limited"}
    first = searches[0]
    asked = len(providers.requests)
    providers.answers = 0  # the repeat: OpenAlex answers nothing now
    result = run(manuscript, providers)
    assert result.paused and result.rounds == 2
    again = [s for s in json.loads((round_dir(manuscript, 2) / "candidates.json").read_text()) if s["round"] == 2]
    assert again[0] == first  # kept, with its hits, not lost to the source failing this time
    openalex = [r for r in providers.requests[asked:] if r.url.host == "api.openalex.org"]
    assert openalex and not any(first["query"] in " ".join(r.url.params.values()) for r in openalex)


def test_a_query_a_source_cannot_run_is_no_incomplete_source_to_wait_for():
    # "unsupported" fails again whenever it is asked: waiting for it would pause the last round for ever
    from sitegen.manuscript.loop import CandidateSearch, incomplete_sources

    def search(status: str) -> CandidateSearch:
        return CandidateSearch(round=2, problem="P1", query="q", source="openalex,crossref", status=status)

    assert incomplete_sources([], [search("failed: openalex unsupported")]) == []
    assert incomplete_sources([], [search("failed: openalex unsupported, crossref timeout")]) == [
        "Crossref timed out (the search for P1)"]


def test_the_advice_for_a_settled_last_round_no_longer_says_a_run_repeats_it(manuscript, monkeypatch):
    # "or run it again later: … it repeats round 2" stayed in the summary once round 2's confirm.yaml was written, when
    # a run repeats nothing and only refuses ("2 rounds have been run").
    runner, _ = paused_in_round_2(manuscript, monkeypatch)
    summary = round_dir(manuscript, 1).parent / "final-summary.md"
    assert "until round 2's confirm.yaml is written, it repeats round 2" in summary.read_text()  # paused: true
    accept(manuscript, [], number=2)
    refused = runner.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC])
    assert refused.exit_code == 1 and "2 rounds have been run" in refused.output, refused.output
    for step in ([], ["--apply"]):
        if step:
            applied = runner.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC, *step])
            assert applied.exit_code == 1 and "applied no suggestion" in applied.output, applied.output
        text = summary.read_text()
        assert "check by hand: the loop runs no round after round 2." in text and "repeats round 2" not in text
