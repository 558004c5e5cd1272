"""`sitegen verify` on a copy of the example review: verdicts recorded on the ledger with their responses, a
replay that reproduces them and writes nothing, exit status 6 for a refusal-grade verdict, failures that are
never negatives, a .bib checked beside the review, and faithfulness against licensed full text."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import sitegen.verify.run as run_module
from sitegen.cli import cli
from sitegen.errors import SitegenError
from sitegen.records.model import Record
from sitegen.review.models import Evidence, VerificationPayload
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import fingerprint
from sitegen.verify.faithfulness import faithfulness_verdict, open_text
from sitegen.workspace import open_review
from tests.conftest import run_cli, tree_bytes
from tests.http_mocks import fetcher

FIXTURES = Path(__file__).parent / "fixtures"
AT = "2023-05-01T00:00:00Z"


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch):
    """The fetcher's pauses between requests and before retries, skipped: the indexes here are mocks."""
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)


def recorded_works(review: Path) -> dict[str, dict]:
    """The real OpenAlex Work objects the example's recorded search pages hold, by OpenAlex id."""
    works = {}
    for line in (review / "snapshots" / "index.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if entry["url"] == "https://api.openalex.org/works" and entry.get("sha256"):
            page = json.loads((review / "snapshots" / entry["sha256"][:2] / entry["sha256"]).read_bytes())
            for work in page["results"]:
                works[work["id"].rsplit("/", 1)[1]] = work
                if work.get("doi"):
                    works["doi:" + work["doi"].removeprefix("https://doi.org/").lower()] = work
    return works


def indexes(review: Path, retracted: str | None = None, openalex_down: bool = False):
    """OpenAlex answers with the real works; Crossref knows none of them (404); PubMed returns no article."""
    works = recorded_works(review)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            if openalex_down:
                return httpx.Response(503)
            work = dict(works.get(request.url.path.removeprefix("/works/")) or {})
            if not work:  # OpenAlex's own answer for a work it does not have, as recorded
                return httpx.Response(404, content=(FIXTURES / "openalex" / "openalex_work_404.json").read_bytes(),
                                      headers={"content-type": "text/html; charset=utf-8"})
            work["is_retracted"] = work["id"].endswith(f"/{retracted}")
            return httpx.Response(200, json=work)
        if request.url.host == "api.crossref.org":
            return httpx.Response(404, text="Resource not found.")
        if request.url.host == "eutils.ncbi.nlm.nih.gov":
            return httpx.Response(200, text="<PubmedArticleSet></PubmedArticleSet>",
                                  headers={"content-type": "text/xml"})
        raise AssertionError(f"unexpected request {request.url}")
    return httpx.MockTransport(handler)


def verify(review: Path, *args: str, transport: httpx.BaseTransport | None = None):
    from sitegen import commands

    mode = args[args.index("--snapshots") + 1] if "--snapshots" in args else "live"
    at = args[args.index("--at") + 1] if "--at" in args else None
    return commands.verify(review, at, mode, settings=SourceSettings(), transport=transport)


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".lock" not in path.name:
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()


def test_a_recorded_run_puts_three_axes_on_the_ledger_and_replays(example_copy):
    result = verify(example_copy, "--at", AT, "--snapshots", "record", transport=indexes(example_copy))
    review = open_review(example_copy)
    included = review.facts.included
    assert result.recorded and set(result.studies) == set(included)
    events = [p for e, p in zip(review.review.ledger, review.review.payloads, strict=True)
              if isinstance(p, VerificationPayload) and e.ts == AT]
    with_evidence = {item.evidence.record_id for item in review.review.evidence}
    assert len(events) == 2 * len(included) + len(with_evidence)
    by_axis = {(p.record_id, p.axis): p for p in events}
    first = included[0]
    # Crossref does not know the DOI and PubMed holds no article: only OpenAlex holds the paper
    assert by_axis[(first, "identity")].verdict == "inconclusive"
    assert {a.source: a.answer for a in by_axis[(first, "identity")].answers} == {
        "crossref": "not-found", "openalex": "found", **({"pubmed": "not-found"}
                                                         if review.review.records[first].PMID else {})}
    # OpenAlex alone holds it and lists nothing: another index's retraction could be missed
    assert by_axis[(first, "status")].verdict == "inconclusive"
    assert all(by_axis[(rid, "faithfulness")].verdict == "verified" for rid in with_evidence)
    # every verdict names recorded responses, and the review is valid with them
    assert all(p.snapshot_hashes for p in events if p.axis != "faithfulness")
    code, out, err = run_cli("check", example_copy)
    assert code == 0, err
    before = tree_digest(example_copy)
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    assert code == 0, err
    assert "open item: identity inconclusive" in out and "0 refusal grade" in out
    assert tree_digest(example_copy) == before  # a replay writes nothing


def test_a_retracted_included_study_fails_with_exit_6(example_copy, monkeypatch):
    included = open_review(example_copy).facts.included
    record = open_review(example_copy).review.records[included[0]]
    result = verify(example_copy, "--at", AT, transport=indexes(example_copy, retracted=record.custom.openalex))
    assert [p.record_id for p in result.refusals] == [record.id]
    assert result.refusals[0].verdict == "retracted"
    # the same through the command line: exit status 6, the refusal named
    copy_two = example_copy.parent / "again"
    shutil.copytree(example_copy, copy_two)
    original = run_module.open_fetcher
    monkeypatch.setattr(run_module, "open_fetcher", lambda mode, snapshots, session="", transport=None: original(
        mode, snapshots, session, indexes(copy_two, retracted=record.custom.openalex)))
    outcome = CliRunner().invoke(cli, ["verify", str(copy_two), "--at", "2023-05-02T00:00:00Z"])
    assert outcome.exit_code == 6, outcome.output
    assert f"REFUSAL: {record.id} status: retracted" in outcome.output
    # ...and its responses were kept without being asked (the default mode records): a pull request's check
    # replays the run offline and gets the same verdicts
    replayed = CliRunner().invoke(cli, ["verify", str(copy_two), "--snapshots", "replay"])
    assert replayed.exit_code == 6 and "replay differs" not in replayed.output, replayed.output
    # A pull request that excludes the retracted study passes: the replay still reproduces its verdicts (a
    # forged one would differ), but a study no longer included is no refusal of the review.
    full_text = copy_two / "screening" / "full-text" / "reviewer-a.csv"
    full_text.write_text(full_text.read_text().replace(f"{record.id},include,,", f"{record.id},exclude,non-rodent,"))
    for evidence in (copy_two / "evidence").glob("*.yaml"):
        if f"record_id: {record.id}" in evidence.read_text():
            evidence.unlink()
    assert run_cli("check", copy_two)[0] == 0
    replayed = CliRunner().invoke(cli, ["verify", str(copy_two), "--snapshots", "replay"])
    assert replayed.exit_code == 0 and "REFUSAL" not in replayed.output, replayed.output
    assert "1 study the run verified no longer included" in replayed.output


def test_an_outage_is_an_open_item_never_a_refusal(example_copy):
    result = verify(example_copy, "--at", AT, transport=indexes(example_copy, openalex_down=True))
    assert not result.refusals
    identity = [p for p in result.payloads() if p.axis == "identity"]
    assert {p.verdict for p in identity} == {"inconclusive"}
    assert all("never a negative" in " ".join(p.reasons) for p in identity)


def test_a_run_an_index_did_not_answer_exits_incomplete(example_copy, monkeypatch):
    # DESIGN: a downed source is no negative, and the exit status says so (a scheduled job asks again later)
    from sitegen import commands

    asked = commands.verify
    monkeypatch.setattr(commands, "verify", lambda *args, **options: asked(
        *args, **options, transport=indexes(example_copy, openalex_down=True)))
    code, out, err = run_cli("verify", example_copy, "--at", AT)
    assert code == 3 and "REFUSAL" not in out, out + err
    assert "rest on an index that did not answer (rate limited, unreachable or refusing access: a key?)" in err
    monkeypatch.setattr(commands, "verify", lambda *args, **options: asked(
        *args, **options, transport=indexes(example_copy)))
    code, out, err = run_cli("verify", example_copy, "--at", "2023-05-02T00:00:00Z")
    assert code == 0 and "did not answer" not in err, out + err  # every index answered


def test_a_time_before_the_latest_event_writes_nothing(example_copy):
    before = tree_digest(example_copy)
    code, out, err = run_cli("verify", example_copy, "--at", "2020-01-01T00:00:00Z")
    assert code == 1 and "earlier than the latest ledger event" in err
    assert tree_digest(example_copy) == before


def test_replay_without_a_recorded_run_says_how(example_copy):
    import dataclasses

    workspace = open_review(example_copy)
    kept = [(e, p) for e, p in zip(workspace.review.ledger, workspace.review.payloads, strict=True)
            if not isinstance(p, VerificationPayload)]
    never = dataclasses.replace(workspace.review, ledger=[e for e, _ in kept], payloads=[p for _, p in kept])
    with pytest.raises(SitegenError, match="holds no verification run to replay"):
        run_module.verify_review(never, workspace.facts, None, "replay")
    # a time at which no verification was recorded: the replay says so, writes nothing
    before = tree_digest(example_copy)
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay", "--at", "2023-04-10T00:00:00Z")
    assert code == 1 and "holds no verification run at 2023-04-10T00:00:00Z" in err
    # which times it could name, and the command that replays the latest with this folder, ready to paste
    assert ("give the time of a recorded run (recorded: 2023-04-17T00:00:00Z), or run "
            f"`sitegen verify {example_copy} --snapshots replay` alone to replay the latest") in err, err
    assert tree_digest(example_copy) == before


def test_a_run_recorded_by_a_sitegen_that_asked_differently_is_not_replayed_and_says_why(example_copy):
    # An earlier sitegen asked OpenAlex for its works with other parameters (a `select=`): no recorded response
    # answers this sitegen's request, and none must stand in for it (another response, another verdict).
    verify(example_copy, "--at", AT, "--snapshots", "record", transport=indexes(example_copy))
    index = example_copy / "snapshots" / "index.jsonl"
    entries = [json.loads(line) for line in index.read_text().splitlines()]
    for entry in entries:
        if entry["url"].startswith("https://api.openalex.org/works/") and entry["session"] == AT:
            entry["params"] = [["select", "id,doi,title"]]
            entry["fingerprint"] = fingerprint(entry["method"], entry["url"], entry["params"])
    index.write_text("".join(json.dumps(entry, sort_keys=True) + "\n" for entry in entries))
    before = tree_digest(example_copy)
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    first = open_review(example_copy).facts.included[0]
    assert code == 1 and f"{first}: replay: no recorded response for GET https://api.openalex.org/works/" in err
    assert "recorded this address only with other parameters" in err and "select=id%2Cdoi%2Ctitle" in err
    assert "differing in select:" in err
    assert "no recording matches this request" in err and "record a new run" in err
    assert "verified" not in out  # no verdict made from another request's response
    assert tree_digest(example_copy) == before


def test_a_replay_compares_what_verdicts_rest_on_not_their_wording(example_copy):
    result = verify(example_copy, "--at", AT, "--snapshots", "record", transport=indexes(example_copy))
    review = open_review(example_copy).review
    payloads = result.payloads()
    assert run_module.replay_differences(review, AT, payloads) == []
    reworded = [p.model_copy(update={"reasons": ["put another way"]}) for p in payloads]
    assert run_module.replay_differences(review, AT, reworded) == []
    changed = [payloads[0].model_copy(update={"verdict": "unresolvable", "refusal_grade": True})] + payloads[1:]
    [difference] = run_module.replay_differences(review, AT, changed)
    assert f"{payloads[0].record_id} (identity): recorded inconclusive, recomputed unresolvable" == difference
    assert run_module.replay_differences(review, "2023-06-01T00:00:00Z", payloads) == [
        "the ledger holds no verification run at 2023-06-01T00:00:00Z: nothing to compare the replay with"]


def test_bib_entries_are_verified_and_a_bad_bib_names_its_line(example_copy, tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{good,\n  title = {Effect of Simvastatin on Cognitive Functioning in Children With "
                   "Neurofibromatosis Type 1},\n  author = {Krab, Lianne C.},\n  year = {2008},\n"
                   "  doi = {10.1001/jama.300.3.287}\n}\n")
    result = verify_with_bib(example_copy, bib)
    [item] = result.references
    assert (item.entry.line, item.entry.key) == (1, "good")
    assert item.verdicts.identity.verdict == "inconclusive"  # OpenAlex alone holds it here
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay", "--bib", bib)
    assert code == 1 and "no recorded response" in err  # the .bib entry was never recorded: nothing invented
    bad = tmp_path / "bad.bib"
    bad.write_text("@article{a,\n  title = {One},\n}\n@article{b,\n  author = {Nobody}\n}\n")
    before = tree_digest(example_copy)
    code, out, err = run_cli("verify", example_copy, "--at", AT, "--bib", bad)
    assert code == 1 and f"{bad}:4" in err
    assert tree_digest(example_copy) == before


def verify_with_bib(review: Path, bib: Path):
    from sitegen import commands

    return commands.verify(review, AT, "live", bib, settings=SourceSettings(), transport=indexes(review))


# --------------------------------------------------------------------------- faithfulness against full text


def fulltext_fetcher(name: str, pmcid: str):
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith(f"/{pmcid}/fullTextXML"), request.url
        return httpx.Response(200, content=(FIXTURES / "europepmc" / name).read_bytes(),
                              headers={"content-type": "application/xml"})
    return fetcher(handler)[0]


def study(pmcid: str, passages: list[tuple[str, str]]) -> tuple[Record, Evidence]:
    record = Record(id="10.1186/1472-6831-8-11", DOI="10.1186/1472-6831-8-11",
                    PMCID=pmcid, title="A study", abstract="An abstract that quotes nothing.")
    evidence = Evidence.model_validate({"record_id": record.id, "findings": [
        {"finding": "A finding.", "passage": {"text": text, "source": source,
                                              **({"location": "page 3"} if source == "external" else {})}}
        for source, text in passages]})
    return record, evidence


def bmc_paragraph() -> str:
    from sitegen.sources.europepmc import parse_article

    article = parse_article((FIXTURES / "europepmc" / "1472-6831-8-11.nxml").read_bytes(), "PMC2329613")
    return next(p.text for p in article["paragraphs"] if len(p.text) > 200 and p.section
                and not p.section.startswith("Abstract"))


def words_of(text: str) -> str:
    """A run of whole words from the middle of `text`, as a reviewer would quote it."""
    return " ".join(text.split()[3:28])


def test_a_passage_in_a_cc_by_full_text_is_verified_with_its_section_licence_and_link():
    paragraph = bmc_paragraph()
    record, evidence = study("PMC2329613", [("fulltext", words_of(paragraph))])
    text = open_text(fulltext_fetcher("1472-6831-8-11.nxml", "PMC2329613"), SourceSettings(), record)
    verdict = faithfulness_verdict(record, evidence, text)
    assert verdict.verdict == "verified" and not verdict.refusal_grade
    [check] = verdict.passages
    assert check.found_in == "fulltext" and check.section and check.url == "https://europepmc.org/articles/PMC2329613"
    assert "creativecommons.org/licenses/by/2.0" in (check.licence or "") or "Creative Commons" in (check.licence or "")


def test_a_passage_absent_from_the_full_text_is_an_open_item_never_a_refusal():
    # sitegen does not read tables, figures, footnotes or back matter: absent from what it reads is not absent
    record, evidence = study("PMC2329613", [("fulltext", "Rats remembered every object in every context.")])
    text = open_text(fulltext_fetcher("1472-6831-8-11.nxml", "PMC2329613"), SourceSettings(), record)
    verdict = faithfulness_verdict(record, evidence, text)
    assert verdict.verdict == "not-found" and not verdict.refusal_grade
    assert "tables, figures, footnotes and back matter are not read" in verdict.reasons[0]


def test_a_passage_past_where_sitegen_stops_reading_says_the_text_is_longer_than_it_reads(monkeypatch):
    # A bounded reading view says it is bounded (seed 004, known risk 18): a passage beyond the paragraphs
    # sitegen reads is an open item whose reason names the cut, not a passage the article lacks.
    from sitegen.sources import jats

    paragraph = bmc_paragraph()
    monkeypatch.setattr(jats, "MAX_PARAGRAPHS", 3)  # the real article, read as if it were longer than sitegen reads
    record, evidence = study("PMC2329613", [("fulltext", words_of(paragraph))])
    text = open_text(fulltext_fetcher("1472-6831-8-11.nxml", "PMC2329613"), SourceSettings(), record)
    assert text.fulltext is not None and text.fulltext.truncated
    verdict = faithfulness_verdict(record, evidence, text)
    assert verdict.verdict == "not-found" and not verdict.refusal_grade
    assert "which is longer than sitegen reads" in verdict.reasons[0]


def test_a_passage_copied_with_ligatures_soft_hyphens_and_curly_quotes_is_found():
    paragraph = bmc_paragraph()
    words = words_of(paragraph)
    typed = words.replace("fi", "\ufb01").replace("-", "\u2013").replace("'", "\u2019")
    typed = typed.replace("tion", "ti\u00adon", 1)
    record, evidence = study("PMC2329613", [("fulltext", typed)])
    text = open_text(fulltext_fetcher("1472-6831-8-11.nxml", "PMC2329613"), SourceSettings(), record)
    assert faithfulness_verdict(record, evidence, text).verdict == "verified"


def test_a_passage_copied_from_a_page_with_words_broken_at_line_ends_is_no_contradiction():
    # Copied from a typeset page, "assessment" comes as "assess-\nment" (YAML folds the break to a space) and
    # "well-known" as "well-\nknown": the same words as the abstract, which must not be called contradicted
    record = Record(id="10.1234/x", DOI="10.1234/x", title="A study",
                    abstract="Risk-of-bias assessment was done by two well-known reviewers in 10-20 min.")
    typed = "Risk-of-bias assess-\nment was done by two well-\n   known reviewers in 10-20 min."
    evidence = Evidence.model_validate({"record_id": record.id, "findings": [
        {"finding": "A finding.", "passage": {"text": typed, "source": "abstract"}}]})
    verdict = faithfulness_verdict(record, evidence, None)
    assert verdict.verdict == "verified" and not verdict.refusal_grade
    from sitegen.text import comparable_passage, holds_passage

    # a hyphen between digits is a range, not a broken word: "10-20" is not "1020"
    assert not holds_passage(comparable_passage(record.abstract), comparable_passage("reviewers in 1020 min"))


def test_a_tilde_typed_as_the_source_sets_it_or_not_is_the_same_tilde():
    from sitegen.text import comparable_passage, holds_passage

    # "∼" (the tilde operator) is how publishers set "about" in abstracts; a reviewer types "~"
    source = comparable_passage("Rats explored for \u223c10 min and mice for \u301c5 min.")
    assert holds_passage(source, comparable_passage("explored for ~10 min and mice for ~5 min"))
    assert not holds_passage(source, comparable_passage("explored for -10 min"))


def _comparable_as_first_written(text: str) -> str:
    """`comparable_passage` as it was first written (each table applied to every text, a regex at every
    character): what the quicker one must give, character for character."""
    import re
    import unicodedata

    from sitegen.text import _BEFORE_NFKC, _HYPHEN_BETWEEN_LETTERS, _INVISIBLE_AND_TYPOGRAPHY

    marked = text.translate(_BEFORE_NFKC.table)
    nfkc = unicodedata.normalize("NFKC", marked).translate(_INVISIBLE_AND_TYPOGRAPHY.table)
    plain = re.sub(r"\s+", " ", unicodedata.normalize("NFC", nfkc)).strip()
    greek = dict(zip("alpha beta gamma delta epsilon zeta theta kappa lambda mu sigma tau phi psi omega".split(),
                     "αβγδεζθκλμστφψω", strict=True))
    plain = re.sub(rf"(?<![^\W\d_])(?:{'|'.join(greek)})(?![^\W\d_])", lambda name: greek[name.group().lower()], plain,
                   flags=re.IGNORECASE)  # a Greek letter's name as a word: the letter
    plain = re.sub(r"(?<=\d)( ?)(?:u|mc)(?=(?:g|L|l|M|m|mol)(?![^\W\d_]))", "\\1\u03bc", plain)  # "5 ug": "5 μg"
    plain = re.sub(r'(?<!\d)"', "'", plain)  # a double quotation mark as a single one, not an inch's sign
    plain = re.sub(r" ?([=<>+/~%°×-]) ?", r"\1", plain)  # no space beside a sign
    assert _HYPHEN_BETWEEN_LETTERS.pattern == r"-(?<=[^\W\d_]-)(?=[^\W\d_])"
    return re.sub(r"(?<=[^\W\d_])-(?=[^\W\d_])", "", plain)


# Every character comparable_passage maps, and letters, digits, hyphens and every kind of whitespace beside them.
_PASSAGE_CHARACTERS = ("ab1- \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2028\u3000é\u0301ﬁ１²₃ⁿ\u00ad\u200b\u200c\u200d"
                       "\u2060\ufeff\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u201f\u2033\u2010\u2011\u2012"
                       "\u2013\u2014\u2015\u2212\u223c\u301c\u02dcβ=<>+/~%°×±≤≥\u00b4\u02bc")


@given(st.text(alphabet=st.sampled_from(_PASSAGE_CHARACTERS) | st.characters(), max_size=40))
def test_a_passage_is_compared_as_first_written(text):
    from sitegen.text import comparable_passage

    assert comparable_passage(text) == _comparable_as_first_written(text)


def test_the_example_reviews_abstracts_are_compared_as_first_written():
    from sitegen.text import comparable_passage

    abstracts = [json.loads(line).get("abstract") or "" for line in
                 (Path(__file__).parent.parent / "reviews/object-in-context/records.jsonl").open(encoding="utf-8")]
    assert sum(map(bool, abstracts)) > 200
    assert [comparable_passage(text) for text in abstracts] == [_comparable_as_first_written(text) for text in abstracts]


def test_a_passage_running_on_into_the_next_paragraph_is_found():
    from sitegen.sources.jats import Paragraph, find_passage

    paragraphs = [Paragraph(id="p1", section="Methods", text="Rats were housed in pairs."),
                  Paragraph(id="p2", section="Methods", text="Testing began at dawn.")]
    assert find_passage("in pairs. Testing began", paragraphs).id == "p1"
    assert find_passage("Testing began at dawn", paragraphs).id == "p2"
    assert find_passage("in pairs. Testing ended", paragraphs) is None


def test_an_external_passage_not_in_the_full_text_is_an_open_item():
    record, evidence = study("PMC2329613", [("external", "A sentence from page 3 of the PDF.")])
    text = open_text(fulltext_fetcher("1472-6831-8-11.nxml", "PMC2329613"), SourceSettings(), record)
    verdict = faithfulness_verdict(record, evidence, text)
    assert verdict.verdict == "not-found" and not verdict.refusal_grade


def test_a_non_cc_full_text_is_refused_by_the_gate_and_the_passage_is_insufficient():
    record, evidence = study("PMC12458764", [("fulltext", "Any sentence at all.")])
    text = open_text(fulltext_fetcher("10_1136_jitc-2024-010530.xml", "PMC12458764"), SourceSettings(), record)
    assert text.fulltext is None and "licence" in (text.why_none or "")
    verdict = faithfulness_verdict(record, evidence, text)
    assert verdict.verdict == "insufficient-passage" and not verdict.refusal_grade
    assert verdict.passages[0].result == "unchecked"


def test_an_abstract_passage_missing_from_the_abstract_is_contradicted():
    record, evidence = study("PMC2329613", [("abstract", "Words the abstract never says.")])
    verdict = faithfulness_verdict(record, evidence, None)
    assert verdict.verdict == "contradicted"



@pytest.mark.parametrize(("passage", "verdict"), [
    ("participants rated the task as 'very easy' (n = 12)", "verified"),  # the reviewer's single quotes
    ("participants rated the task as \u2018very easy\u2019 (n = 12)", "verified"),
    ('the probe was 5" long', "contradicted"),  # a unit's sign: inches are not the source's feet
    ("in the 'group 2' arm", "verified"),  # the closing mark after a digit closes a quotation: no unit's sign
])
def test_a_passage_quoting_in_single_quotes_what_the_abstract_quotes_in_double_ones_is_no_contradiction(
        passage, verdict):
    record, evidence = study("PMC2329613", [("abstract", passage)])
    record = record.model_copy(update={"abstract": "Most participants rated the task as \u201cvery easy\u201d (n = 12). "
                                                   "In the second session the probe was 5' long, in the \u201cgroup 2\u201d arm."})
    assert faithfulness_verdict(record, evidence, None).verdict == verdict

VERIFIED_GATE = "every included study has been checked for identity and status, and its evidence as it stands"


def test_publishing_asks_for_verdicts_and_no_refusal(example_copy):
    from sitegen.living.state import gates

    def published_gates() -> dict[str, bool]:
        workspace = open_review(example_copy)
        return {gate.check.split(" (")[0]: gate.ok for gate in gates(workspace.review, workspace.facts, "published")}
    if not any(isinstance(p, VerificationPayload) for p in open_review(example_copy).review.payloads):
        assert published_gates()[VERIFIED_GATE] is False
    verify(example_copy, "--at", AT, transport=indexes(example_copy))
    assert published_gates()[VERIFIED_GATE] is True
    workspace = open_review(example_copy)
    [checked] = [g for g in gates(workspace.review, workspace.facts, "published") if g.check.startswith(VERIFIED_GATE)]
    assert "76 open items on 38 studies, for a human" in checked.detail  # passing, but never silently
    assert published_gates()["no included study has a refusal-grade verdict"] is True
    first = open_review(example_copy).facts.included[0]
    openalex = open_review(example_copy).review.records[first].custom.openalex
    verify(example_copy, "--at", "2023-05-02T00:00:00Z", transport=indexes(example_copy, retracted=openalex))
    assert published_gates()["no included study has a refusal-grade verdict"] is False


def test_a_faithfulness_verdict_on_evidence_edited_since_no_longer_stands(example_copy):
    from sitegen.living.state import gates
    from sitegen.verify.report import latest_verdicts

    verify(example_copy, "--at", AT, transport=indexes(example_copy))
    evidence = next((example_copy / "evidence").glob("*.yaml"))
    record_id = open_review(example_copy).review.evidence[0].evidence.record_id
    assert "faithfulness" in latest_verdicts(open_review(example_copy).review)[record_id]
    text = evidence.read_text()
    evidence.write_text(text.replace("findings:\n", "findings:\n", 1) + "\n")  # re-formatting changes nothing
    assert "faithfulness" in latest_verdicts(open_review(example_copy).review)[
        open_review(example_copy).review.evidence[0].evidence.record_id]
    changed = text.replace("finding: >-\n", "finding: >-\n      Edited after verification.\n", 1)
    assert changed != text
    evidence.write_text(changed)
    workspace = open_review(example_copy)
    edited = next(i.evidence.record_id for i in workspace.review.evidence if i.path.endswith(evidence.name))
    assert "faithfulness" not in latest_verdicts(workspace.review)[edited]
    published = {gate.check: gate for gate in gates(workspace.review, workspace.facts, "published")}
    gate = next(g for check, g in published.items() if check.startswith(VERIFIED_GATE))
    assert not gate.ok and edited in gate.detail


def test_bib_entries_are_printed_with_their_line_and_key(example_copy, tmp_path, monkeypatch):
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{krab2008,\n  title = {Effect of Simvastatin on Cognitive Functioning in Children "
                   "With Neurofibromatosis Type 1},\n  author = {Krab, Lianne C.},\n  year = {2008},\n"
                   "  doi = {10.1001/jama.300.3.287}\n}\n\n@article{made-up,\n  title = {A study nobody wrote},\n"
                   "  author = {Nobody, N.},\n  year = {2020},\n  doi = {10.9999/made-up}\n}\n")
    original = run_module.open_fetcher
    monkeypatch.setattr(run_module, "open_fetcher", lambda mode, snapshots, session="", transport=None: original(
        mode, snapshots, session, indexes(example_copy)))
    code, out, err = run_cli("verify", example_copy, "--at", AT, "--bib", bib)
    assert code == 6  # the made-up entry is unresolvable: no index knows its DOI
    assert f"{bib}:1: krab2008: open item: identity inconclusive, status inconclusive" in out
    assert f"{bib}:8: made-up: REFUSAL: identity unresolvable" in out


@pytest.mark.parametrize("passage, abstract, found", [
    # A source's <sup> and <sub> are dropped by the record and the JATS reading ("10<sup>5</sup>" reads "105"), so
    # a superscript in the passage may be the source's plain digits; a superscript the source holds is never the
    # passage's plain digits: magnitudes differ.
    ("10⁵ cells", "We injected 105 cells.", True),
    ("105 cells", "We injected 10⁵ cells.", False),
    ("10⁵ cells", "We injected 10⁵ cells.", True),
    ("by 2", "fell by 25% in rats", False),  # whole words only
    ("by 25%", "fell by 25% in rats", True),
    ("\u00ad", "anything", False),  # nothing visible is found nowhere
    ("H₂O", "in H2O", True),
    ("H2O", "in H₂O", False),
    ("e\ufb03cacy", "the efficacy of", True),  # a ligature reads as its letters
])
def test_passages_compare_as_whole_words_keeping_superscripts(passage, abstract, found):
    from sitegen.text import comparable_passage, holds_passage

    assert holds_passage(comparable_passage(abstract), comparable_passage(passage)) is found


def test_a_passage_with_no_visible_text_is_a_check_problem(example_copy):
    evidence = next((example_copy / "evidence").glob("*.yaml"))
    lines = evidence.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip() == "text: >-")
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("        "))
    lines[at:end] = ['      text: "\\u00ad"\n']
    evidence.write_text("".join(lines))
    code, out, err = run_cli("check", example_copy)
    assert code == 1 and "passage-empty" in out + err and f"{evidence.name}:{at + 1}" in out + err


def test_a_replay_after_the_evidence_was_edited_differs(example_copy):
    verify(example_copy, "--at", AT, "--snapshots", "record", transport=indexes(example_copy))
    evidence = next((example_copy / "evidence").glob("*.yaml"))
    evidence.write_text(evidence.read_text().replace("finding: >-\n", "finding: >-\n      Edited.\n", 1))
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    assert code == 1 and "replay differs" in err and "(faithfulness)" in err
    # It said "recorded verified, recomputed verified (on other answers or responses)": the file and the way on.
    assert f"its evidence (evidence/{evidence.name}) changed since that run; record a new verification run" in err


def test_the_pull_request_check_replays_the_example_verification(tmp_path):
    """The check workflow's verify step, run as the workflow runs it, on a copy of the repository's reviews."""
    import os
    import subprocess
    import sys

    import yaml

    workflow = yaml.safe_load((Path(__file__).parent.parent / ".github/workflows/check.yml").read_text())
    [step] = [s for s in workflow["jobs"]["check"]["steps"] if s.get("name", "").startswith("sitegen verify")]
    shutil.copytree(Path(__file__).parent.parent / "reviews", tmp_path / "reviews")
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=environment,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 refusal grade" in result.stdout


def test_verify_without_its_time_is_a_usage_error(example_copy):
    # A missing argument is exit 2, as for any command; nothing is asked of any index.
    outcome = CliRunner().invoke(cli, ["verify", str(example_copy)])
    assert outcome.exit_code == 2 and "--at is required" in outcome.output


def test_verify_records_its_time_in_utc_and_a_replay_finds_a_run_by_its_instant(example_copy, monkeypatch):
    # --at was kept as written ("05:30:00+05:30") where every other command records UTC, and a replay named
    # the run's instant in another form did not find it; a replay's --at that is no time was a traceback.
    original = run_module.open_fetcher
    monkeypatch.setattr(run_module, "open_fetcher", lambda mode, snapshots, session="", transport=None: original(
        mode, snapshots, session, indexes(example_copy)))
    code, _, err = run_cli("verify", example_copy, "--at", "2026-01-01T05:30:00+05:30", "--snapshots", "record")
    assert code in (0, 6), err
    times = {json.loads(line)["ts"] for line in (example_copy / "ledger.jsonl").read_text().splitlines()
             if json.loads(line)["type"] == "verification"}
    assert "2026-01-01T00:00:00Z" in times and not any("+05:30" in time for time in times)
    monkeypatch.setattr(run_module, "open_fetcher", original)
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay", "--at", "2026-01-01T05:30:00+05:30")
    assert code in (0, 6) and "no verification run" not in err, out + err
    # Recorded again at that instant (a retry after a kill): refused, nothing written (it appended every verdict twice).
    ledger = (example_copy / "ledger.jsonl").read_bytes()
    code, _, err = run_cli("verify", example_copy, "--at", "2026-01-01T00:00:00Z", "--snapshots", "record")
    assert code == 1 and "already holds a verification run at 2026-01-01T00:00:00Z" in err
    assert (example_copy / "ledger.jsonl").read_bytes() == ledger
    code, _, err = run_cli("verify", example_copy, "--snapshots", "replay", "--at", "yesterday")
    assert code == 2 and "Invalid value for '--at': 'yesterday' is not an RFC 3339 timestamp" in err


def test_a_bib_file_in_another_encoding_is_read_with_the_option_its_message_names(example_copy, tmp_path):
    # The message named --encoding, an option verify did not have.
    bib = tmp_path / "latin.bib"
    bib.write_bytes("@article{cafe,\n  title = {Caf\u00e9 society and memory},\n  year = {2020}\n}\n".encode("latin-1"))
    code, _, err = run_cli("verify", example_copy, "--snapshots", "replay", "--bib", bib)
    assert code == 1 and f"{bib}:2: not UTF-8 text" in err and "--encoding latin-1" in err
    [entry] = run_module.bib_records(bib, "latin-1")
    assert entry.record.title == "Caf\u00e9 society and memory"
    code, _, err = run_cli("verify", example_copy, "--snapshots", "replay", "--bib", bib, "--encoding", "klingon")
    assert code == 2 and "Invalid value for '--encoding': 'klingon' is not a text encoding Python knows" in err
    code, _, err = run_cli("verify", example_copy, "--snapshots", "replay", "--encoding", "latin-1")
    assert code == 2 and "give --bib too" in err  # an option that would do nothing is not taken silently


def test_a_replay_recomputes_the_run_it_replays_not_the_studies_included_now(example_copy):
    # A pull request that excludes a verified study (or includes a new one) is a normal screening change: the
    # recorded run is replayed as it was, and a study it never verified is named, never "replay differs".
    full_text = example_copy / "screening" / "full-text" / "reviewer-a.csv"
    lines = full_text.read_text().splitlines(keepends=True)
    excluded = lines[1].split(",")[0]
    lines[1] = f"{excluded},exclude,non-rodent,\n"
    full_text.write_text("".join(lines))
    (example_copy / "evidence" / f"{excluded.replace('/', '-').replace('.', '-')}.yaml").unlink(missing_ok=True)
    assert run_cli("check", example_copy)[0] == 0
    before = tree_digest(example_copy)
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    assert code == 0 and "replay differs" not in err, out + err
    assert "warning" not in err
    assert tree_digest(example_copy) == before

    import dataclasses

    workspace = open_review(example_copy)
    at = run_module.latest_verification_time(workspace.review)
    later = run_module.recorded_studies(workspace.review, at)[-1]  # as if included after the run
    kept = [(e, p) for e, p in zip(workspace.review.ledger, workspace.review.payloads, strict=True)
            if not (isinstance(p, VerificationPayload) and p.record_id == later)]
    review = dataclasses.replace(workspace.review, ledger=[e for e, _ in kept], payloads=[p for _, p in kept])
    result = run_module.verify_review(review, workspace.facts, None, "replay")
    assert result.differences == [] and result.not_in_run == [later] and later not in result.studies


def test_a_replay_names_the_studies_it_never_verified_and_the_command_for_this_folder(example_copy):
    # The example's second batch has two reports awaiting full text: a pull request includes them. The replay
    # passes, and its warning says how to verify them in this very folder, not with a DIRECTORY to fill in.
    from sitegen.workspace import open_review as opened

    facts = opened(example_copy).facts
    awaiting = sorted(rid for rid, where in facts.standings.items()
                      if where.kind == "awaiting" and where.stage == "full-text")
    [conflict] = facts.conflicts  # settled first: full text follows a settled batch
    with (example_copy / "screening" / "title-abstract" / "adjudication.csv").open("a") as handle:
        handle.write(f"{conflict.record_id},exclude,,\n")
    with (example_copy / "screening" / "full-text" / "reviewer-a.csv").open("a") as handle:
        handle.writelines(f"{record_id},include,,\n" for record_id in awaiting)
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    assert code == 0, out + err
    assert "included studies were not verified by the run replayed (2023-04-17T00:00:00Z)" in err
    assert f"verify them with `sitegen verify {example_copy} --at TIME` where the indexes can be reached" in err
    assert "DIRECTORY" not in err
    assert "38 included studies and 0 .bib entries checked: 4 verdicts pass, 76 open items, 0 refusal grade" in out


def test_a_replay_after_a_study_with_evidence_was_excluded_passes(example_copy):
    # check asks that an excluded study's evidence file go with it; the replay cannot check its passages again,
    # and that is no difference from the recorded run.
    evidence = next(path for path in sorted((example_copy / "evidence").glob("*.yaml")))
    study = next(line.split(":", 1)[1].strip() for line in evidence.read_text().splitlines()
                 if line.startswith("record_id:"))
    full_text = example_copy / "screening" / "full-text" / "reviewer-a.csv"
    assert f"{study},include,," in full_text.read_text()
    full_text.write_text(full_text.read_text().replace(f"{study},include,,", f"{study},exclude,non-rodent,"))
    evidence.unlink()
    assert run_cli("check", example_copy)[0] == 0
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    assert code == 0 and "replay differs" not in err, out + err
    assert "no longer included" in err


def test_a_study_verification_found_retracted_is_retracted_in_every_download_and_page(example_copy, tmp_path):
    # The provider's metadata said not retracted when the record was read; the verification found it retracted:
    # the study page flagged it, but the downloads said retracted=no and the record page said nothing.
    from lxml import html as lxml_html

    from sitegen.commands import build
    from sitegen.site.pages import page_slug

    workspace = open_review(example_copy)
    record = workspace.review.records[workspace.facts.included[0]]
    assert not record.custom.retracted
    site = tmp_path / "site"
    verify(example_copy, "--at", AT, transport=indexes(example_copy))  # nothing retracted yet
    build(example_copy, site, environ={}, now="2023-06-01T00:00:00Z")  # a site built before: rebuilt in place
    verify(example_copy, "--at", "2023-05-02T00:00:00Z", transport=indexes(example_copy,
                                                                          retracted=record.custom.openalex))
    lines_before = (example_copy / "records.jsonl").read_bytes()
    build(example_copy, site, environ={}, now="2023-06-01T00:00:00Z")
    fresh = tmp_path / "fresh"
    build(example_copy, fresh, environ={}, now="2023-06-01T00:00:00Z")
    assert tree_bytes(site) == tree_bytes(fresh)  # the rebuild kept no page of the record as it was
    assert (example_copy / "records.jsonl").read_bytes() == lines_before  # what the sources gave is kept
    downloads = site / "downloads"
    for name in ("included", "records"):
        rows = {row["id"]: row for row in csv.DictReader(io.StringIO((downloads / f"{name}.csv").read_text()))}
        assert rows[record.id]["retracted"] == "yes"
        assert sum(row["retracted"] == "yes" for row in rows.values()) == 1
        items = {item["id"]: item for item in json.loads((downloads / f"{name}.json").read_text())}
        assert items[record.id]["custom"]["retracted"] is True
        ris = (downloads / f"{name}.ris").read_text()
        entry = ris[ris.index(f"DO  - {record.DOI}"):]
        assert "N1  - RETRACTED" in entry[:entry.index("ER  - ")]
    page = lxml_html.fromstring((site / "records" / f"{page_slug(record.id)}.html").read_bytes())
    assert page.xpath("//p[@class='retracted-notice']")


def test_an_open_item_with_several_reasons_is_listed_with_all_of_them():
    # Two passages of one study not found: the command printed "finding 3" and never "finding 4".
    from sitegen.verify.run import grouped_open_items

    reasons = ["finding 3: the passage does not occur", "finding 4: the passage does not occur"]
    items = [VerificationPayload(record_id=f"10.1000/{n}", axis="faithfulness", verdict="not-found",
                                 refusal_grade=False, reasons=reasons) for n in (1, 2)]
    items.append(VerificationPayload(record_id="10.1000/3", axis="faithfulness", verdict="not-found",
                                     refusal_grade=False, reasons=reasons[:1]))
    assert grouped_open_items(items) == [("faithfulness", "not-found", "; ".join(reasons), ["10.1000/1", "10.1000/2"]),
                                         ("faithfulness", "not-found", reasons[0], ["10.1000/3"])]


@pytest.mark.parametrize("damage", ["edited", "truncated", "emptied"])
def test_a_replay_whose_recorded_response_was_damaged_refuses_naming_the_study_file_and_line(example_copy, damage):
    review = open_review(example_copy).review
    payload = next(p for p in review.payloads if isinstance(p, VerificationPayload) and p.snapshot_hashes)
    digest = payload.snapshot_hashes[0]
    body = example_copy / "snapshots" / digest[:2] / digest
    data = body.read_bytes()
    body.write_bytes({"edited": data.replace(b"a", b"b", 1), "truncated": data[:len(data) // 2], "emptied": b""}[damage])
    index = (example_copy / "snapshots" / "index.jsonl").read_text().splitlines()
    line = next(number for number, row in enumerate(index, start=1) if json.loads(row).get("sha256") == digest)
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    assert code == 1 and "verified" not in out
    assert f"{payload.record_id}: {example_copy}/snapshots/index.jsonl:{line}: snapshot body {body}" in err
    assert "does not match its hash: it was edited, truncated or corrupted" in err


def test_a_replay_whose_index_records_another_response_to_a_request_refuses_naming_the_line(example_copy):
    index = example_copy / "snapshots" / "index.jsonl"
    text = index.read_text()
    rows = [json.loads(line) for line in text.splitlines()]
    run_rows = [(number, row) for number, row in enumerate(rows, start=1) if row.get("sha256")
                and row["session"] == "2023-04-17T00:00:00Z"]
    (line, first), (_, other) = run_rows[0], run_rows[1]
    index.write_text(text + json.dumps({**first, "sha256": other["sha256"]}, sort_keys=True) + "\n")
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    assert code == 1 and "verified" not in out
    assert (f"{example_copy}/snapshots/index.jsonl:{len(rows) + 1}: error: it records another response to GET "
            f"{first['url']}") in err and f"than line {line} does" in err and "[duplicate-snapshot]" in err


def test_a_replay_reading_another_recorded_body_for_a_request_says_which(example_copy):
    # Two of the index's lines for requests of the run swap their bodies (a hand edit): each body matches its hash and
    # every body the ledger names is still recorded, but each verdict rests on a response the run never got for it.
    index = example_copy / "snapshots" / "index.jsonl"
    rows = [json.loads(line) for line in index.read_text().splitlines()]
    run_rows = [row for row in rows if row.get("sha256") and row["session"] == "2023-04-17T00:00:00Z"
                and row["url"].startswith("https://api.openalex.org/works/")]
    first, other = run_rows[0], run_rows[1]
    was = first["sha256"]
    first["sha256"], other["sha256"] = other["sha256"], was
    index.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))
    code, out, err = run_cli("verify", example_copy, "--snapshots", "replay")
    assert code == 1 and "replay differs" in err
    assert (f"it rests on other responses than that run's verdict (recorded, not read now: {was}; read now, not "
            f"recorded: {first['sha256']}): snapshots/index.jsonl was edited since") in err, err
