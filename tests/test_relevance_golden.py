"""Relevance rankings pinned on real data: every batch ranking and weekly digest of the example review, of
the example grown in memory (novelty cases, two protocol versions, the cap), and the example's records
scored as one batch against a prior, must stay byte for byte what the straightforward implementation gave
(tests/fixtures/relevance/, provenance in tests/fixtures/README.md). A faster scorer must change nothing."""

from __future__ import annotations

import gzip
import hashlib
import json

from conftest import EXAMPLE, FIXTURES
from test_relevance_scale import grown_example

from sitegen.living.facts import ReviewFacts
from sitegen.review.folder import load_review
from sitegen.review.models import RelevanceTerms, WatchTerm
from sitegen.screening.digest import Relevance, digest_markdown, rank_batches, weekly_digests
from sitegen.screening.relevance import Ranking, score_batch

GOLDEN = FIXTURES / "relevance" / "rankings.txt.gz"


def _ranking_lines(name: str, ranking: Ranking) -> list[str]:
    # One line per paper, so a difference names the paper; JSON floats are the shortest round-trip form.
    return ([f"{name} calibration {ranking.calibration.model_dump_json()}"]
            + [f"{name} {scored.model_dump_json()}" for scored in ranking.decisions])


def _review_lines(name: str, review) -> list[str]:
    facts = ReviewFacts(review)
    rankings = rank_batches(Relevance(review, facts.screening))
    lines = [line for number, ranking in rankings.items() for line in _ranking_lines(f"{name} batch {number}", ranking)]
    for week, digest in weekly_digests(Relevance(review, facts.screening, ranked=rankings)).items():
        lines += _ranking_lines(f"{name} week {week}", digest.ranking)
        lines += [f"{name} digest {week} {line}" for line in digest_markdown(review, digest).splitlines()]
    return lines


def inputs_digest() -> str:
    """What the golden file was computed from: the example's records and protocol."""
    return hashlib.sha256(b"".join((EXAMPLE / name).read_bytes() for name in ("records.jsonl", "protocol.md",
                                                                                 "ledger.jsonl"))).hexdigest()


def _wider(protocol):
    """The example's protocol with common words for terms, so papers name many terms, in and out of scope,
    one inside another, in any case, one of them not ASCII."""
    relevance = protocol.relevance
    return protocol.model_copy(update={
        "relevance": RelevanceTerms(
            in_scope_terms=[*relevance.in_scope_terms, "memory", "recognition", "Object", "µ-opioid"],
            out_of_scope_terms=[*relevance.out_of_scope_terms, "rats", "mice", "fear", "hippocampus"],
            excluded_publication_types=relevance.excluded_publication_types,
            borderline_publication_types=relevance.borderline_publication_types),
        "watchlist": [*protocol.watchlist, WatchTerm(term="memory", weight=0.4), WatchTerm(term="MEMORY", weight=0.7),
                      WatchTerm(term="object recognition", weight=0.8), WatchTerm(term="recognition", weight=0.3)]})


def _retyped(record, n: int):
    """Every 7th record a review (borderline), every 11th an editorial (excluded), every 13th a preprint."""
    kinds = {0: ["review"]} if n % 7 == 0 else {0: ["editorial"]} if n % 11 == 0 else {0: ["posted-content"]} \
        if n % 13 == 0 else {}
    if not kinds:
        return record
    return record.model_copy(update={"custom": record.custom.model_copy(update={"publication_types": kinds[0]})})


def current_lines() -> list[str]:
    example, problems = load_review(EXAMPLE)
    assert not problems
    records = [_retyped(record, n) for n, record in
               enumerate(sorted(example.records.values(), key=lambda record: record.id))]
    prior = records[::3]  # a third kept before: those are already covered, their titles make the others' novelty
    one_batch = [_ranking_lines(f"one batch {name} max_kept={cap}", score_batch(records, protocol, prior, cap))
                 for name, protocol in (("example", example.protocol.meta), ("wider", _wider(example.protocol.meta)))
                 for cap in (25, 3)]
    return [f"inputs {inputs_digest()}", *_review_lines("example", example),
            *_review_lines("grown", grown_example(max_kept=25)), *_review_lines("grown-capped", grown_example(max_kept=2)),
            *(line for lines in one_batch for line in lines)]


def test_rankings_are_byte_for_byte_those_the_golden_file_holds():
    expected = gzip.decompress(GOLDEN.read_bytes()).decode().splitlines()
    actual = current_lines()
    assert actual[0] == expected[0], "the example review changed: the golden rankings were computed from other inputs"
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual, strict=True):
        assert got == want


def test_the_golden_file_reaches_every_decision_and_novelty_case():
    text = gzip.decompress(GOLDEN.read_bytes()).decode()
    for reached in ('"decision":"KEEP"', '"decision":"DROP"', "already covered", "title nearly identical",
                    "journal version of", "under the stricter pass", "demoted to REVIEW", "abstract missing",
                    "look-alike trap", "criteria silent", "borderline"):
        assert reached in text, reached
    second = text.splitlines()[1]
    assert json.loads(second[second.index("{"):])["kept"] >= 0  # lines hold JSON
