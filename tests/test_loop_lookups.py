"""`sitegen loop`'s bound on the .bib entries one round verifies (`--max-lookups`): a thesis's .bib holds thousands, and
every entry was verified every round. The entries over the bound are not verified (said, kept apart, never counted as
checked, never a problem found); the next round, or a repeat of a paused one, verifies them first, and a repeat keeps
the answers it had in full for the entries unchanged since."""

from __future__ import annotations

import json

import httpx
import test_loop
from click.testing import CliRunner
from test_loop import crossref_verifier, problems, round_dir, run, short_manuscript
from test_loop_fixes import Answering, accept

from sitegen import commands
from sitegen.cli import cli
from sitegen.errors import EXIT_INCOMPLETE
from sitegen.manuscript import loop as loop_module
from sitegen.manuscript.loop import MAX_LOOKUPS, topic_slug

no_waiting, manuscript = test_loop.no_waiting, test_loop.manuscript
KEYS = ["wagner2021ai", "schryen2021knowledge", "grenier2020teleconsultation", "smith2022fabricated"]  # the .bib's order


def lookups(providers) -> list[str]:
    return [request.url.path.removeprefix("/works/") for request in providers.requests
            if request.url.host == "api.crossref.org"]


def checks(folder, number: int) -> dict[str, dict]:
    return {check["key"]: check for check in json.loads((round_dir(folder, number) / "citation-review.json").read_text())}


def test_a_round_verifies_at_most_its_limit_of_entries_and_never_counts_the_others_as_checked(manuscript):
    providers = Answering()
    providers.answering = True
    result = run(manuscript, providers, max_lookups=2)
    assert len(lookups(providers)) == 2  # it was one lookup per entry, however many
    first = checks(manuscript, 1)
    assert [key for key in KEYS if "identity" in first[key]] == KEYS[:2]
    over = "over round 1's limit of 2 lookups (--max-lookups)"
    assert all(first[key]["not_verified"] == over and "identity" not in first[key] for key in KEYS[2:])
    assert result.unverified == KEYS[2:] and not result.recheck
    # smith2022fabricated resolves nowhere: not asked, so no "no match", and nothing about it is searched
    assert not any(row.get("key") == "smith2022fabricated" and row["type"] != "uncited entry"
                   for row in problems(manuscript, 1))
    folder = round_dir(manuscript, 1)
    text = (folder / "problems.md").read_text()
    assert "## Re-check later (not verified, over the limit of lookups, not searched)" in text
    assert f"- smith2022fabricated (line {first['smith2022fabricated']['line']}): {over}" in text
    summary = (folder.parent / "final-summary.md").read_text()
    assert "Re-check later (not verified, over the limit of lookups, never searched): grenier2020teleconsultation, " \
           "smith2022fabricated" in summary

    accept(manuscript, [])  # round 2 verifies first what round 1 did not
    providers.requests.clear()
    second = run(manuscript, providers, max_lookups=2)
    assert [key for key in KEYS if "identity" in checks(manuscript, 2)[key]] == KEYS[2:]
    assert any(row["type"] == "no match" and row["key"] == "smith2022fabricated" for row in problems(manuscript, 2))
    # the last round left entries unverified: paused, as when an index did not answer it in full
    assert second.paused and second.unverified == KEYS[:2]

    (manuscript / "references.bib").write_text((manuscript / "references.bib").read_text().replace(
        "Teleconsultation", "Teleconsultations", 1))  # changed since: asked again, not kept
    providers.requests.clear()
    third = run(manuscript, providers, max_lookups=3)  # round 2 again: the answers it had in full are kept
    assert not (round_dir(manuscript, 1).parent / "3").exists()
    again = checks(manuscript, 2)
    assert again["smith2022fabricated"]["kept"] and not again["grenier2020teleconsultation"]["kept"]
    assert sorted(lookups(providers)) == sorted(first[key]["record"]["DOI"] for key in
                                                 ("wagner2021ai", "schryen2021knowledge", "grenier2020teleconsultation"))
    assert not third.unverified and not third.paused
    assert "1 entry answered in full by the earlier run of round 2 and unchanged since kept that answer (not asked " \
           "again): smith2022fabricated" in " ".join((round_dir(manuscript, 2) / "problems.md").read_text().split())


def test_a_round_without_problems_with_entries_over_its_limit_pauses_and_never_converges(tmp_path, monkeypatch):
    folder = short_manuscript(tmp_path)
    providers = Answering()
    monkeypatch.setattr(commands, "loop", lambda *a, **k: loop_module.step(
        *a, **k, verify=crossref_verifier, transport=httpx.MockTransport(providers)))

    def loop(limit: int):
        return CliRunner().invoke(cli, ["loop", str(folder), "--topic", "reviews", "--max-lookups", str(limit)])

    first = loop(1)
    assert first.exit_code == EXIT_INCOMPLETE, first.output  # was 0, "converged", with one entry never asked
    assert "not verified in round 1 (over its limit of lookups, --max-lookups, not searched): schryen2021knowledge" \
        in first.output and "paused after round 1: 1 entry could not be checked" in first.output
    assert "converged" not in first.output
    summary = folder / "output" / "evidence-loop" / topic_slug("reviews") / "final-summary.md"
    assert "Paused" in summary.read_text() and "Converged" not in summary.read_text()
    asked = len(providers.requests)
    done = loop(1)  # round 1 again: wagner2021ai's answer kept, schryen2021knowledge verified
    assert done.exit_code == 0 and "converged in round 1" in done.output, done.output
    assert len(providers.requests) == asked + 1


def test_the_limit_of_lookups_is_an_option_with_a_default_shown_in_help():
    shown = " ".join(CliRunner().invoke(cli, ["loop", "--help"]).output.split())
    assert "--max-lookups" in shown and f"default: {MAX_LOOKUPS}" in shown
