"""The manuscript evidence loop (`sitegen loop`, seed 001): the claim check, rounds, confirmation, replay.

Providers are mocked with real recorded bodies: Crossref works (tests/fixtures/crossref) and its real
404 answer for a DOI that resolves nowhere, and OpenAlex's real title-search list. Citation verification
is a small stand-in built on those Crossref answers until `sitegen.verify.identity` lands (same interface).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from conftest import ROOT

from sitegen import commands
from sitegen.cli import cli
from sitegen.errors import EXIT_INCOMPLETE, SitegenError
from sitegen.manuscript import claims
from sitegen.manuscript.loop import topic_slug
from sitegen.review.models import REFUSAL_GRADE, SourceAnswer, VerificationPayload
from sitegen.sources import crossref

FIXTURES = ROOT / "tests" / "fixtures"
TOPIC = "Artificial intelligence in literature reviews"
CROSSREF = {"10.1177/02683962211048201": "10.1177_02683962211048201.json",
            "10.17705/1cais.04607": "10.17705_1cais.04607.json"}
RATE_LIMITED = "10.2196/22081"


class Verdicts:
    def __init__(self, identity, status, rate_limited, resolved=None, refused_access=()):
        self.identity, self.status, self.rate_limited, self.resolved = identity, status, rate_limited, resolved
        self.refused_access = list(refused_access)


def crossref_verifier(fetcher, settings, record):
    """Stand-in for sitegen.verify.identity.verify_citation: Crossref only, titles compared exactly."""
    outcome = crossref.lookup(fetcher, settings, record.DOI)
    detail = None
    if outcome.status == "rate_limited":
        answer, verdict = "rate-limited", "inconclusive"
    elif outcome.status != "ok":
        answer, verdict, detail = "no-answer", "inconclusive", "; ".join(outcome.warnings)
    elif not outcome.records:
        answer, verdict = "not-found", "unresolvable"
    elif outcome.records[0].title.casefold() == record.title.casefold():
        answer, verdict = "found", "verified"
    else:
        answer, verdict = "different-work", "mismatch"
    identity = VerificationPayload(record_id=record.id, axis="identity", verdict=verdict,
                                   refusal_grade=verdict in REFUSAL_GRADE,
                                   answers=[SourceAnswer(source="crossref", answer=answer, asked=record.DOI,
                                                         detail=detail)])
    status = VerificationPayload(record_id=record.id, axis="status", refusal_grade=False,
                                 verdict="current" if answer == "found" else "inconclusive")
    return Verdicts(identity, status, answer == "rate-limited",
                    outcome.records[0] if answer == "different-work" else None,
                    ["crossref"] if outcome.status == "auth_error" else [])


class Providers:
    """Routes requests to real recorded bodies and keeps every request."""

    def __init__(self):
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path
        if request.url.host == "api.crossref.org":
            doi = path.removeprefix("/works/")
            if doi == RATE_LIMITED:
                return httpx.Response(429, headers={"retry-after": "3600"}, text="rate limited")
            if doi in CROSSREF:
                return httpx.Response(200, content=(FIXTURES / "crossref" / CROSSREF[doi]).read_bytes(),
                                      headers={"content-type": "application/json"})
            return httpx.Response(404, content=(FIXTURES / "crossref" / "crossref_work_404.txt").read_bytes(),
                                  headers={"content-type": "text/plain"})
        if request.url.host == "api.openalex.org" and path == "/works":
            body = (FIXTURES / "openalex" / "openalex_works_list_title_search_paperqa.json").read_bytes()
            return httpx.Response(200, content=body, headers={"content-type": "application/json"})
        return httpx.Response(500, text=f"unexpected {request.url}")


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    """The fetcher's pauses between requests to one provider, skipped: the providers here are mocks."""
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)


@pytest.fixture
def manuscript(tmp_path: Path) -> Path:
    folder = tmp_path / "paper"
    shutil.copytree(FIXTURES / "manuscript", folder)
    return folder


def run(folder: Path, providers: Providers | None = None, **options):
    providers = providers or Providers()
    options.setdefault("mode", "live")
    return commands.loop(folder, TOPIC, sources=["openalex"], verify=crossref_verifier,
                         transport=httpx.MockTransport(providers), **options)


def problems(folder: Path, number: int) -> list[dict]:
    return json.loads((folder / "output" / "evidence-loop" / topic_slug(TOPIC) / str(number) /
                       "problems.json").read_text())


def round_dir(folder: Path, number: int) -> Path:
    return folder / "output" / "evidence-loop" / topic_slug(TOPIC) / str(number)


# --------------------------------------------------------------------------- slug


@pytest.mark.parametrize("topic", ["artificial intelligence in literature reviews",
                                   "  Artificial   Intelligence\tin\nliterature REVIEWS ",
                                   "Ａｒｔｉｆｉｃｉａｌ　ｉｎｔｅｌｌｉｇｅｎｃｅ　ｉｎ　ｌｉｔｅｒａｔｕｒｅ　ｒｅｖｉｅｗｓ"])
def test_slug_is_the_sha1_of_the_normalised_topic(topic):
    # sha1("artificial intelligence in literature reviews") = 8044ef2e… (computed by hand with hashlib)
    assert topic_slug(topic) == "8044ef2e"


def test_slug_of_full_width_letters_and_mixed_whitespace():
    assert topic_slug("ＡＩ \u3000\t Reviews") == "825d5e38"  # sha1("ai reviews")
    with pytest.raises(SitegenError, match="empty"):
        topic_slug(" \u3000 ")


# --------------------------------------------------------------------------- claim check


def test_citations_in_pandoc_and_latex_forms():
    assert claims.cited_keys("As shown [see @a, p. 3; -@b:c] and @d said, \\citep[p. 2]{e, f}.") == \
        ("a", "b:c", "d", "e", "f")
    assert claims.cited_keys("Write to jane@example.org or see `@code`.") == ()


def test_sentences_skip_code_quotes_tables_and_the_reference_list():
    text = ("# Intro\n\nFirst sentence, e.g. with an abbreviation. Second one\nspans two lines [@k].\n\n"
            "> Quoted 50% more than before.\n\n| a | 50% |\n\n```\nx = 90%\n```\n\n"
            "## References\n\nSmith et al. found 50% more.\n\n### Extra\n\nStill the list, 2.5-fold.\n\n"
            "# Discussion\n\nMore sentences here now.\n")
    read = claims.sentences(text)
    assert [(s.location, s.line) for s in read] == [
        ("Intro / paragraph 1 / sentence 1", 3), ("Intro / paragraph 1 / sentence 2", 3),
        ("Discussion / paragraph 1 / sentence 1", 24)]
    second = read[1]
    assert second.keys == ("k",) and text[second.span[0]:second.span[1]] == "Second one\nspans two lines [@k]."


def test_claim_rules_are_general_and_spare_the_authors_own_work():
    def rules(text):
        return claims.claim_rules(claims.sentences(text)[0])
    assert "a percentage" in rules("Adherence rose to 45% in the second year.")
    assert "a comparison" in rules("Manual screening is slower than automated ranking.")
    assert "a report of research" in rules("It has been shown that reminders matter for adherence.")
    assert "an effect or association" in rules("Smoking is associated with lower bone density in women.")
    assert rules("We found a 45% increase in recall.") == ()  # the authors' own result
    assert rules("Does screening reduce the workload?") == ()  # a question
    assert rules("The review follows the PRISMA statement.") == ()


def test_check_lists_missing_entries_unsupported_claims_and_uncited_entries():
    review = claims.check("Tools help [@a; @ghost].\n\nStudies have shown that tools help.\n", ["a", "b"])
    assert [(f.kind, f.key) for f in review.findings] == [
        ("citation with no entry", "ghost"), ("unsupported claim", None), ("uncited entry", "b")]


# --------------------------------------------------------------------------- round 1


def test_round_one_finds_the_fabricated_citation_and_the_unsupported_claim(manuscript):
    draft, bib = (manuscript / "draft.md").read_bytes(), (manuscript / "references.bib").read_bytes()
    providers = Providers()
    result = run(manuscript, providers)
    assert result.round == 1 and result.left == 2
    folder = round_dir(manuscript, 1)
    assert sorted(p.name for p in folder.iterdir()) == [
        "candidates.json", "citation-review.json", "claim-review.json", "problems.json", "problems.md",
        "queries.md", "revision-suggestions.md", "suggestions.json"]
    assert (folder.parent / "final-summary.md").is_file()
    found = problems(manuscript, 1)
    assert [(p["type"], p.get("key")) for p in found] == [("no match", "smith2022fabricated"),
                                                         ("unsupported claim", None)]
    assert found[1]["location"] == "Introduction / paragraph 2 / sentence 1 (line 13)"
    # the rate-limited entry is apart, "re-check later", and never searched
    text = (folder / "problems.md").read_text()
    assert "## Re-check later (rate-limited, not searched)" in text and "grenier2020teleconsultation" in text
    searched = [r.url.params.get("search") for r in providers.requests if r.url.host == "api.openalex.org"]
    assert searched == ["language models systematic summaries Smith",
                        "automated screening workload abstract"]
    queries = (folder / "queries.md").read_text()
    assert [line for line in queries.splitlines() if line.startswith("- ")] == [
        "- P1 (no match): `language models systematic summaries Smith`",
        "- P2 (unsupported claim): `automated screening workload abstract`"]
    assert "Rate-limited entries are not searched: grenier2020teleconsultation" in queries
    candidates = json.loads((folder / "candidates.json").read_text())
    assert [(c["problem"], c["status"], len(c["records"])) for c in candidates] == [("P1", "ok", 1), ("P2", "ok", 1)]
    suggestions = (folder / "revision-suggestions.md").read_text()
    assert "**[to confirm]**" in suggestions and "PaperQA" in suggestions
    # nothing changed without confirmation
    assert (manuscript / "draft.md").read_bytes() == draft and (manuscript / "references.bib").read_bytes() == bib


def test_a_failed_search_is_recorded_as_failed_never_as_no_literature(manuscript):
    class Down(Providers):
        def __call__(self, request):
            if request.url.host == "api.openalex.org":
                self.requests.append(request)
                return httpx.Response(503, text="down")
            return super().__call__(request)
    run(manuscript, Down())
    candidates = json.loads((round_dir(manuscript, 1) / "candidates.json").read_text())
    assert all(c["status"].startswith("failed: openalex") and not c["records"] for c in candidates)
    assert "says nothing about whether literature exists" in (round_dir(manuscript, 1) /
                                                              "revision-suggestions.md").read_text()


def test_a_round_no_index_answered_is_not_counted_and_says_to_run_again(manuscript):
    # Offline, a round's every lookup and search failed, yet it was counted as one of the two rounds, with
    # advice ("run the round again later") the loop then refused (it waited for a confirmation); exit 1, not 3.
    from sitegen.errors import EXIT_INCOMPLETE

    class Down(Providers):
        def __call__(self, request):
            self.requests.append(request)
            return httpx.Response(503, text="down")
    with pytest.raises(SitegenError, match="no index answered this round") as refused:
        run(manuscript, Down())
    assert refused.value.exit_code == EXIT_INCOMPLETE
    assert not round_dir(manuscript, 1).joinpath("problems.md").exists()
    run(manuscript)  # online again: this is round 1
    assert (round_dir(manuscript, 1) / "problems.md").is_file()


def test_a_round_one_of_whose_sources_answered_is_a_round():
    # A search is "ok" only when every source answered: with one of two down, the round reached an index.
    from types import SimpleNamespace

    from sitegen.manuscript.loop import _nothing_reached, _search
    from sitegen.sources.settings import SourceSettings

    def searched(*statuses: str) -> tuple:
        outcomes = [SimpleNamespace(source=source, status=status, warnings=[])
                    for source, status in zip(("openalex", "crossref"), statuses, strict=False)]
        return _search(lambda *args, **kwargs: SimpleNamespace(outcomes=outcomes, records=[]), None,
                       SourceSettings(), ["openalex", "crossref"], 1, "q")

    one_down = searched("ok", "unavailable")
    assert one_down[0].status == "failed: crossref unavailable" and one_down[1]
    assert not _nothing_reached([], [one_down[1]])
    assert _nothing_reached([], [searched("unavailable", "rate_limited")[1]])
    assert not _nothing_reached([], [])  # nothing asked: nothing to say


# --------------------------------------------------------------------------- confirmation and rounds


def test_round_two_waits_for_a_confirmation_then_marks_what_is_left_and_a_third_is_refused(manuscript):
    run(manuscript)
    with pytest.raises(SitegenError, match="waiting for your decisions.*confirm.yaml"):
        run(manuscript)
    (round_dir(manuscript, 1) / "confirm.yaml").write_text("accept: []\n")
    draft = (manuscript / "draft.md").read_bytes()
    result = run(manuscript)
    assert result.round == 2 and (manuscript / "draft.md").read_bytes() == draft
    assert all(p["carried"] for p in problems(manuscript, 2))
    assert "left from the last round" in (round_dir(manuscript, 2) / "problems.md").read_text()
    summary = (round_dir(manuscript, 1).parent / "final-summary.md").read_text()
    assert "Rounds run: 2 of at most 2." in summary and "[to check by hand]" in summary
    assert "Re-check later (rate-limited, never searched): grenier2020teleconsultation" in summary
    (round_dir(manuscript, 2) / "confirm.yaml").write_text("accept: []\n")
    with pytest.raises(SitegenError, match="2 rounds have been run"):
        run(manuscript)


def test_round_two_keeps_every_artefact_and_earlier_candidates_but_suggests_only_its_own_hits(manuscript):
    # Seed 001, between rounds: candidates.json accumulates, yet a round's suggestions cite only the hits
    # of that round's searches ("old evidence for new use" would blur where a citation came from). Round 2's
    # searches fail here, so round 1's PaperQA hit is on disk but must not be offered again.
    class SearchDown(Providers):
        def __call__(self, request):
            if request.url.host == "api.openalex.org":
                self.requests.append(request)
                return httpx.Response(503, text="down")
            return super().__call__(request)
    run(manuscript)
    (round_dir(manuscript, 1) / "confirm.yaml").write_text("accept: []\n")
    providers = SearchDown()
    run(manuscript, providers)
    folder = round_dir(manuscript, 2)
    assert {"citation-review.json", "claim-review.json", "problems.md", "queries.md", "candidates.json",
            "revision-suggestions.md"} <= {p.name for p in folder.iterdir()}
    assert "Round 1: 2 problems; round 2: 2." in (folder / "problems.md").read_text()
    candidates = json.loads((folder / "candidates.json").read_text())
    assert [(c["round"], c["problem"], c["status"]) for c in candidates] == [
        (1, "P1", "ok"), (1, "P2", "ok"), (2, "P1", "failed: openalex unavailable"),
        (2, "P2", "failed: openalex unavailable")]
    offered = json.loads((folder / "suggestions.json").read_text())
    assert not [s for s in offered if s.get("record")]
    assert "PaperQA" not in (folder / "revision-suggestions.md").read_text()
    # round 2 verified the .bib again and again kept the rate-limited entry out of the searches
    assert sum(r.url.path.endswith(RATE_LIMITED) for r in providers.requests) >= 1
    assert {r.url.params.get("search") for r in providers.requests if r.url.host == "api.openalex.org"} == {
        "language models systematic summaries Smith", "automated screening workload abstract"}  # a 503 is retried


def test_round_two_verifies_the_draft_as_it_is_now_not_round_ones_conclusions(manuscript):
    # Seed 001: round 2 takes the revised draft and .bib as its input. A problem fixed by hand between the
    # rounds (here the fabricated entry and its citation, taken out without any suggestion accepted) is gone,
    # not carried over from round 1's problems.
    run(manuscript)
    (round_dir(manuscript, 1) / "confirm.yaml").write_text("accept: []\n")
    draft, bib = manuscript / "draft.md", manuscript / "references.bib"
    draft.write_text(draft.read_text().replace(" [@smith2022fabricated]", ""))
    bib.write_text(re.sub(r"@article\{smith2022fabricated,.*?\n\}\n", "", bib.read_text(), flags=re.S))
    providers = Providers()
    run(manuscript, providers)
    assert [(p["type"], p.get("key"), p["carried"]) for p in problems(manuscript, 2)] == [
        ("unsupported claim", None, True)]
    assert not [r for r in providers.requests if "fabricated" in r.url.path]


def test_a_confirmation_applies_exactly_the_accepted_suggestion(manuscript):
    run(manuscript)
    folder = round_dir(manuscript, 1)
    offered = json.loads((folder / "suggestions.json").read_text())
    [cite] = [s for s in offered if s["problem"] == "P2"]
    assert cite["action"] == "cite-candidate" and cite["to_confirm"]
    draft = (manuscript / "draft.md").read_text()
    bib = (manuscript / "references.bib").read_text()
    (folder / "confirm.yaml").write_text(f"accept:\n  - {cite['id']}\n")
    result = run(manuscript, apply=True)
    assert result.applied.accepted == [cite["id"]]
    key = cite["new_key"]
    assert (manuscript / "draft.md").read_text() == draft.replace(
        "by more\nthan half.", f"by more\nthan half [@{key}].")
    new_bib = (manuscript / "references.bib").read_text()
    assert new_bib.startswith(bib) and f"{{{key},\n" in new_bib[len(bib):] and "PaperQA" in new_bib[len(bib):]
    with pytest.raises(SitegenError, match="applied already"):
        run(manuscript, apply=True)
    # Round 2 re-verifies the revised draft and .bib: the claim now cites a source and the fabricated entry
    # is left from round 1. The new entry is verified afresh too; this Crossref-only stand-in cannot find
    # its arXiv (DataCite) DOI, which Crossref really answers 404 for, so it is a new problem, not carried.
    run(manuscript)
    assert [(p["type"], p.get("key"), p["carried"]) for p in problems(manuscript, 2)] == [
        ("no match", "smith2022fabricated", True), ("no match", key, False)]


def test_removing_a_fabricated_entry_takes_its_citations_out_of_the_draft(manuscript):
    run(manuscript)
    folder = round_dir(manuscript, 1)
    [remove] = [s for s in json.loads((folder / "suggestions.json").read_text()) if s["action"] == "remove-entry"]
    (folder / "confirm.yaml").write_text(f"accept: [{remove['id']}]\n")
    run(manuscript, apply=True)
    assert "smith2022fabricated" not in (manuscript / "references.bib").read_text()
    assert "draft summaries of\nincluded studies." in (manuscript / "draft.md").read_text()
    assert (manuscript / "references.bib").read_text().count("@article") == 3


def test_a_worded_sentence_that_still_cites_a_removed_entry_is_named_as_such(manuscript):
    # The refusal said the draft cited the removed entry "on line 13, outside the sentences the loop edits" while
    # line 13 was the very sentence confirm.yaml worded.
    run(manuscript)
    folder = round_dir(manuscript, 1)
    suggestions = json.loads((folder / "suggestions.json").read_text())
    [remove] = [s for s in suggestions if s["action"] == "remove-entry"]
    [cite] = [s for s in suggestions if s["action"] == "cite-candidate"]
    (folder / "confirm.yaml").write_text(
        f"accept:\n  - {remove['id']}\n  - id: {cite['id']}\n    sentence: \"Tools help [@{cite['new_key']}; "
        f"@{remove['key']}].\"\n")
    draft = (manuscript / "draft.md").read_bytes()
    with pytest.raises(SitegenError, match=rf"the sentence {cite['id']} gives \(line 3\) still cites "
                                           rf"@{remove['key']}, whose entry this removes"):
        run(manuscript, apply=True)
    assert (manuscript / "draft.md").read_bytes() == draft


def test_after_applying_a_confirmation_the_next_step_is_the_next_round(manuscript):
    # It said "accept suggestions in .../1/confirm.yaml, then run again": that confirmation had just been applied.
    run(manuscript)
    (round_dir(manuscript, 1) / "confirm.yaml").write_text("accept: []\n")
    result = CliRunner().invoke(cli, ["loop", str(manuscript), "--topic", TOPIC, "--apply"])
    assert "applied no suggestion" in result.output and "run the loop again for round 2" in result.output
    assert "accept suggestions in" not in result.output


@pytest.mark.parametrize(("confirm", "message"), [
    ("accept:\n  - S1\n  - S99\n", r"confirm.yaml:3: 'S99' is not a suggestion of this round"),
    ("accept: [S1\n", r"confirm.yaml:2: YAML syntax error"),
    ("accepted: [S1]\n", r"confirm.yaml:1: .*accept"),
    ("accept:\n  - id: S1\n    sentence: ''\n", r"confirm.yaml:3: accept.0.sentence"),
])
def test_a_bad_confirmation_is_refused_naming_file_and_line_and_nothing_changes(manuscript, confirm, message):
    run(manuscript)
    (round_dir(manuscript, 1) / "confirm.yaml").write_text(confirm)
    draft, bib = (manuscript / "draft.md").read_bytes(), (manuscript / "references.bib").read_bytes()
    result = CliRunner().invoke(cli, ["loop", str(manuscript), "--topic", TOPIC, "--apply"])
    assert result.exit_code == 1
    assert "confirm.yaml" in result.output and "Traceback" not in result.output
    import re
    assert re.search(message, result.output), result.output
    assert (manuscript / "draft.md").read_bytes() == draft and (manuscript / "references.bib").read_bytes() == bib
    assert not (round_dir(manuscript, 1) / "applied.json").exists()


# --------------------------------------------------------------------------- snapshots and the command line


def test_a_recorded_loop_replays_offline(manuscript, tmp_path):
    run(manuscript, mode="record")
    recorded = problems(manuscript, 1)
    shutil.rmtree(round_dir(manuscript, 1))

    class Offline(Providers):
        def __call__(self, request):
            raise AssertionError(f"replay reached the network: {request.url}")
    run(manuscript, Offline(), mode="replay")
    assert problems(manuscript, 1) == recorded



def test_a_replay_whose_recorded_response_was_edited_refuses_naming_the_entry_file_and_line(manuscript):
    run(manuscript, mode="record")
    shutil.rmtree(round_dir(manuscript, 1))
    snapshots = round_dir(manuscript, 1).parent / "snapshots"
    index = (snapshots / "index.jsonl").read_text().splitlines()
    line, digest = next((number, json.loads(row)["sha256"]) for number, row in enumerate(index, start=1)
                        if json.loads(row)["url"].endswith("/10.1177/02683962211048201"))
    body = snapshots / digest[:2] / digest
    body.write_bytes(body.read_bytes().replace(b"Artificial", b"Natural", 1))
    with pytest.raises(SitegenError) as refused:
        run(manuscript, mode="replay")
    assert str(refused.value).startswith(f"{manuscript / 'references.bib'}:1: wagner2021ai: "
                                         f"{snapshots / 'index.jsonl'}:{line}: snapshot body {body} ")
    assert "does not match its hash" in str(refused.value)
    assert not round_dir(manuscript, 1).exists()


def test_an_entry_with_an_identifier_sitegen_cannot_read_is_never_verified_as_cited(manuscript):
    bib = manuscript / "references.bib"
    text = bib.read_text(encoding="utf-8")
    bib.write_text(text.replace("  doi = {10.1177/02683962211048201},\n",
                                "  doi = {10.1177/02683962211048201},\n  pmid = {34567890, 34567891},\n", 1),
                   encoding="utf-8")
    run(manuscript)
    checks = {check["key"]: check for check in
              json.loads((round_dir(manuscript, 1) / "citation-review.json").read_text(encoding="utf-8"))}
    identity = checks["wagner2021ai"]["identity"]  # Crossref holds it under its DOI, but the PMID was never checked
    assert identity["verdict"] == "inconclusive"
    assert identity["reasons"][0].startswith("the entry's pmid '34567890, 34567891' is not a valid PMID")
    assert checks["schryen2021knowledge"]["identity"]["verdict"] == "verified"

def test_the_command_line_exit_statuses(manuscript):
    runner = CliRunner()
    assert runner.invoke(cli, ["loop", str(manuscript)]).exit_code == 2  # no --topic: a usage error
    (manuscript / "second.md").write_text("# Another draft\n")
    result = runner.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC])
    assert result.exit_code == 1 and "2 .md files" in result.output and "--draft" in result.output
    assert not (manuscript / "output").exists()


def test_a_doi_of_another_work_is_a_conflicting_citation_with_the_correct_metadata(manuscript):
    bib = manuscript / "references.bib"
    # the Wagner et al. entry given the DOI of Schryen et al.'s paper (both real Crossref records)
    bib.write_text(bib.read_text().replace("doi = {10.1177/02683962211048201}", "doi = {10.17705/1cais.04607}"))
    providers = Providers()
    run(manuscript, providers)
    [conflict] = [p for p in problems(manuscript, 1) if p["type"] == "conflicting citation"]
    assert conflict["key"] == "wagner2021ai" and "different-work" in conflict["evidence"]
    assert conflict["query"] == "development perspective literature validation Schryen"
    folder = round_dir(manuscript, 1)
    [replace] = [s for s in json.loads((folder / "suggestions.json").read_text()) if s["problem"] == conflict["id"]]
    assert replace["action"] == "replace-entry" and replace["record"]["DOI"] == "10.17705/1cais.04607"
    text = (folder / "revision-suggestions.md").read_text()
    assert "title: 'Artificial intelligence and the conduct of literature reviews' → 'A Knowledge Development" in text
    (folder / "confirm.yaml").write_text(f"accept: [{replace['id']}]\n")
    before = bib.read_text()
    run(manuscript, apply=True)
    after = bib.read_text()
    start = before.index("@article{wagner2021ai,")
    assert after[:start] == before[:start] and after[start:].startswith("@article{wagner2021ai,\n")
    assert "Knowledge Development Perspective" in after.split("@article{schryen")[0]
    assert after.endswith(before[before.index("\n\n@article{schryen2021knowledge"):])


def test_the_loop_with_the_real_citation_verifier(tmp_path):
    """sitegen.verify.identity.verify_citation itself (Crossref and OpenAlex asked by DOI), on real records."""
    folder = tmp_path / "enzymes"
    folder.mkdir()
    (folder / "paper.md").write_text(
        "# Peroxidases\n\nIodide is oxidised by horseradish peroxidase [@adak2001essential]. Arginine in the active "
        "site binds iodide [@ghost2019]. The enzyme was first purified from roots [@fake2020].\n\nMutating the distal histidine reduces the rate of iodide oxidation.\n")
    (folder / "paper.bib").write_text(
        "@article{adak2001essential,\n  author = {Adak, Subrata and Bandyopadhyay, Debashis and Bandyopadhyay, "
        "Uday and Banerjee, Ranajit K.},\n  title = {An essential role of active site arginine residue in iodide "
        "binding and histidine residue in electron transfer for iodide oxidation by horseradish peroxidase},\n"
        "  journal = {Molecular and Cellular Biochemistry},\n  year = {2001},\n  doi = {10.1023/A:1007154515475},\n}\n\n"
        "@article{fake2020,\n  author = {Doe, Jane},\n  title = {Peroxidase from horseradish roots},\n"
        "  journal = {Journal of Imaginary Results},\n  year = {2020},\n  doi = {10.5555/fabricated.2020.7},\n}\n")

    class Indexes(Providers):
        def __call__(self, request):
            self.requests.append(request)
            path = request.url.path
            if request.url.host == "api.crossref.org" and "1007154515475" in path:
                body = (FIXTURES / "crossref" / "crossref_work_10.1023_a_1007154515475.json").read_bytes()
                return httpx.Response(200, content=body, headers={"content-type": "application/json"})
            if request.url.host == "api.openalex.org" and path.startswith("/works/"):
                if "1007154515475" in path:
                    body = (FIXTURES / "openalex" / "openalex_work_doi_10.1023_a_1007154515475.json").read_bytes()
                    return httpx.Response(200, content=body, headers={"content-type": "application/json"})
                return httpx.Response(404, content=(FIXTURES / "openalex" / "openalex_work_404.json").read_bytes(),
                                      headers={"content-type": "text/html"})
            return super().__call__(request)
    result = commands.loop(folder, "iodide oxidation", sources=["openalex"], mode="live",
                           transport=httpx.MockTransport(Indexes()))
    found = json.loads((folder / "output" / "evidence-loop" / topic_slug("iodide oxidation") / "1" /
                        "problems.json").read_text())
    assert [(p["type"], p.get("key")) for p in found] == [
        ("no match", "fake2020"), ("citation with no entry", "ghost2019"), ("unsupported claim", None)]
    # an "@word" may be a handle rather than a citation: the action says how to keep it as text
    assert "write it \\@ghost2019 if it is no citation" in found[1]["action"]
    review = json.loads((folder / "output" / "evidence-loop" / topic_slug("iodide oxidation") / "1" /
                         "citation-review.json").read_text())
    assert [(c["key"], c["identity"]["verdict"]) for c in review] == [("adak2001essential", "verified"),
                                                                      ("fake2020", "unresolvable")]
    assert result.left == 3


@pytest.fixture
def cli_with_mocks(monkeypatch):
    """`sitegen loop` on the command line, its providers the recorded ones and its verifier the stand-in."""
    import functools

    monkeypatch.setattr(commands, "loop", functools.partial(commands.loop, verify=crossref_verifier,
                                                            transport=httpx.MockTransport(Providers())))
    return CliRunner()


def short_manuscript(tmp_path: Path) -> Path:
    """A draft citing two real works, with a .bib of their entries alone: nothing to find."""
    folder = tmp_path / "short"
    folder.mkdir()
    (folder / "draft.md").write_text("# Reviews\n\nTools now assist literature reviews [@wagner2021ai]. A "
                                     "typology of reviews exists [@schryen2021knowledge].\n")
    bib = (FIXTURES / "manuscript" / "references.bib").read_text().split("\n\n")
    (folder / "refs.bib").write_text(bib[0] + "\n\n" + bib[1] + "\n")
    return folder


def test_a_draft_without_problems_converges_with_exit_status_zero(tmp_path, cli_with_mocks):
    folder = short_manuscript(tmp_path)
    result = cli_with_mocks.invoke(cli, ["loop", str(folder), "--topic", "reviews"])
    assert result.exit_code == 0, result.output
    assert "converged in round 1" in result.output
    summary = (folder / "output" / "evidence-loop" / topic_slug("reviews") / "final-summary.md").read_text()
    assert "Converged" in summary
    again = cli_with_mocks.invoke(cli, ["loop", str(folder), "--topic", "reviews"])
    assert again.exit_code == 0 and "converged in round 1" in again.output
    assert not (folder / "output" / "evidence-loop" / topic_slug("reviews") / "2").exists()


def test_problems_left_exit_one_and_say_what_to_do(manuscript, cli_with_mocks):
    result = cli_with_mocks.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC])
    assert result.exit_code == 1
    assert "round 1: 2 problems" in result.output and "confirm.yaml" in result.output


@pytest.mark.parametrize(("change", "message", "status"), [
    (lambda folder: (folder / "references.bib").write_text("@article{broken,\n  title = {Unclosed\n"),
     r"references.bib:1: ", 1),
    (lambda folder: None, r"Invalid value for '--sources': unknown source\(s\) scholar", 2),  # the command line's fault
])
def test_bad_input_stops_before_anything_is_written(manuscript, cli_with_mocks, change, message, status):
    import re
    change(manuscript)
    sources = "scholar" if "source" in message else "openalex"
    result = cli_with_mocks.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC, "--sources", sources])
    assert result.exit_code == status and re.search(message, result.output), result.output
    assert not (manuscript / "output").exists()


def test_a_draft_that_cannot_be_read_stops_the_round_before_any_entry_is_verified(manuscript, cli_with_mocks,
                                                                                monkeypatch):
    # Its encoding was found after every .bib entry had been looked up (minutes of requests online).
    import sitegen.manuscript.loop as loop_module

    monkeypatch.setattr(loop_module, "verify_entries", lambda *args: pytest.fail("an entry was verified"))
    draft = manuscript / "draft.md"
    draft.write_bytes(draft.read_bytes().replace(b"than half", b"than h\xe9lf", 1))
    result = cli_with_mocks.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC, "--sources", "openalex"])
    assert result.exit_code == 1 and "draft.md:" in result.output and "not UTF-8" in result.output, result.output
    assert not (manuscript / "output").exists()


def test_text_from_the_draft_is_escaped_in_the_round_files(manuscript):
    draft = manuscript / "draft.md"
    draft.write_text(draft.read_text().replace("by more\nthan half.", "by more\nthan half <img src=x onerror=alert(1)> | x."))
    run(manuscript)
    for name in ("problems.md", "revision-suggestions.md"):
        text = (round_dir(manuscript, 1) / name).read_text()
        assert "<img" not in text and "&lt;img src=x onerror=alert(1)> \\| x." in text


def test_each_verdict_becomes_the_seeds_problem_type():
    from sitegen.manuscript.loop import CitationCheck, problems_of
    from sitegen.references import read_references
    from sitegen.references.records import entry_record

    records = {entry.id: entry_record(entry) for entry in read_references(FIXTURES / "manuscript" / "references.bib")}

    def check(key, identity, status="current", rate_limited=False, notice=None):
        record = records[key]
        return CitationCheck(key=key, line=1, record=record, rate_limited=rate_limited,
                             identity=VerificationPayload(record_id=record.id, axis="identity", verdict=identity,
                                                          refusal_grade=identity in REFUSAL_GRADE),
                             status=VerificationPayload(record_id=record.id, axis="status", verdict=status,
                                                        refusal_grade=status in REFUSAL_GRADE, notice=notice))
    checks = [check("wagner2021ai", "mismatch"), check("schryen2021knowledge", "verified", "retracted",
                                                       notice="10.1000/notice"),
              check("grenier2020teleconsultation", "inconclusive"), check("smith2022fabricated", "inconclusive",
                                                                          "inconclusive", rate_limited=True)]
    review = claims.check("Tools [@wagner2021ai; @schryen2021knowledge; @grenier2020teleconsultation; "
                          "@smith2022fabricated].\n", list(records))
    rows, apart = problems_of(checks, review)
    assert [(row.type, row.key) for row in rows] == [
        ("conflicting citation", "wagner2021ai"), ("retracted citation", "schryen2021knowledge"),
        ("to check by hand", "grenier2020teleconsultation")]
    assert "notice 10.1000/notice" in rows[1].evidence and "(untitled) / paragraph 1 / sentence 1" in rows[1].evidence
    assert [check.key for check in apart] == ["smith2022fabricated"]


def test_out_puts_the_rounds_elsewhere_and_the_manuscript_folder_stays_as_it_was(manuscript, tmp_path):
    before = sorted(p.name for p in manuscript.iterdir())
    run(manuscript, out=tmp_path / "loops")
    assert (tmp_path / "loops" / topic_slug(TOPIC) / "1" / "problems.md").is_file()
    assert sorted(p.name for p in manuscript.iterdir()) == before


def test_an_index_refusing_access_stops_for_the_round_and_its_entries_are_kept_apart(tmp_path, monkeypatch):
    """Seed 001: rate_limited / auth_error → pause, re-verify later. A 401 (a missing or wrong key) was an index
    "not answering": asked again for every entry, and each entry a problem "to check by hand". Now the index is
    asked once, its entries are kept apart as rate-limited ones are, and the loop pauses (exit 3) naming it and
    the likely cause."""
    import functools

    class CrossrefRefuses(Providers):
        def __call__(self, request):
            if request.url.host == "api.crossref.org":
                self.requests.append(request)
                return httpx.Response(401, json={"message": "Invalid token"})
            return super().__call__(request)

    providers = CrossrefRefuses()
    monkeypatch.setattr(commands, "loop", functools.partial(commands.loop, verify=crossref_verifier,
                                                            transport=httpx.MockTransport(providers)))
    folder = short_manuscript(tmp_path)
    result = CliRunner().invoke(cli, ["loop", str(folder), "--topic", "reviews"])
    assert result.exit_code == EXIT_INCOMPLETE, result.output
    assert [r.url.host for r in providers.requests] == ["api.crossref.org"]  # asked once, then nothing more
    assert ("warning: Crossref refused access in round 1, so it was asked nothing more: answered HTTP 401, most "
            "likely for missing or wrong credentials (or an allowance used up): Invalid token; fix that, then run "
            "the loop again to check what it could not") in result.stderr
    assert "re-check later (rate-limited or refused access, not searched): wagner2021ai, schryen2021knowledge" \
        in result.stdout
    assert "paused after round 1: 2 entries could not be checked" in result.stdout
    base = folder / "output" / "evidence-loop" / topic_slug("reviews")
    assert "## Re-check later (refused access, not searched)" in (base / "1" / "problems.md").read_text()
    summary = (base / "final-summary.md").read_text()
    assert "Paused: the last round found no problem, but could not check every entry (an index refused access)" \
        in summary
    assert "Re-check later (refused access, never searched): wagner2021ai, schryen2021knowledge." in summary
    assert "Crossref refused access in the last round, so it was asked nothing more: answered HTTP 401" in summary
