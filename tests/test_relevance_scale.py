"""Relevance at review scale: each paper assessed once, with the same rankings and digests as scoring
every batch and every week on its own (the straightforward reading of seed 002, kept here as the reference)."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, timedelta

import pytest
from conftest import EXAMPLE, FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from sitegen.living.facts import ReviewFacts
from sitegen.records.model import Record, RecordMeta
from sitegen.references import read_references
from sitegen.references.records import entry_record
from sitegen.review.folder import DecisionRow, load_review, parse_protocol
from sitegen.review.models import (
    BatchPayload,
    Decision,
    ImportPayload,
    LedgerEvent,
    ProtocolLockPayload,
    parse_timestamp,
)
from sitegen.screening import relevance
from sitegen.screening.digest import Digest, digest_markdown, iso_week, week_start, weeks
from sitegen.screening.relevance import (
    ASCII_LOOKALIKES,
    TITLE_MATCH_ABOVE,
    Scored,
    TermHits,
    TermMatcher,
    Text,
    distinct_terms,
    fold,
    prefilter_key,
    prior_index,
    score_batch,
)
from sitegen.site.pages import Site

CITATION = FIXTURES / "prisma" / "citation.ris"  # a real RIS export
MEDLINE = FIXTURES / "medline" / "pubmed_result3.txt"  # a real PubMed MEDLINE export

# --------------------------------------------------------------------------- the reference


UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI", "LAO", "MYANMAR", "KHMER")


def reference_find(terms: list[str], title: str, abstract: str) -> list[TermHits]:
    """One regex per term, compiled for each paper, run on the whole title and abstract; no word boundary is
    asked for beside a character of a script written without spaces."""
    title, abstract = fold(title), fold(abstract)
    hits = []
    for term in distinct_terms(terms):
        body = r"\s+".join(re.escape(word) for word in fold(term).split())
        before, after = ("" if unicodedata.name(char, "").startswith(UNSPACED_SCRIPTS) else boundary
                         for char, boundary in ((term.strip()[0], r"(?<!\w)"), (term.strip()[-1], r"(?!\w)")))
        pattern = re.compile(rf"{before}{body}{after}", re.IGNORECASE)
        found = TermHits(term, len(pattern.findall(title)), len(pattern.findall(abstract)))
        if found.title or found.abstract:
            hits.append(found)
    return hits


def reference_site(review, screening) -> tuple[dict, dict[str, str]]:
    """Every numbered batch and every week scored on its own, each with its prior and protocol derived anew."""
    included = {i for i, o in screening.outcomes["title-abstract"].items() if o.decision == "include"}

    def prior(start) -> dict[str, str]:
        """The included records of the four weeks before `start`, each with the earliest week it arrived in."""
        earliest = start - timedelta(weeks=4)
        covered: dict[str, str] = {}
        for batch in screening.batches:
            if batch.created and earliest <= parse_timestamp(batch.created).astimezone(UTC).date() < start:
                for i in batch.record_ids:
                    if i in included:
                        covered[i] = min(covered.get(i, iso_week(batch.created)), iso_week(batch.created))
        return covered

    def score(ids, version, start):
        covered = prior(start) if start else {}
        return score_batch([review.records[i] for i in ids], protocol(version),
                           [review.records[i] for i in covered], review.state.max_kept, covered)

    def protocol(version):
        for payload in review.payloads:
            if isinstance(payload, ProtocolLockPayload) and payload.version == version and payload.text:
                parsed, _ = parse_protocol(payload.text)
                if parsed is not None:
                    return parsed.meta
        return review.protocol.meta

    # The records imported outside any batch (ranked as one group, numbered None), each with the time of its
    # first import and the protocol version in force then: a new record of that week's digest.
    rankings = {batch.number: score(screening.to_screen(batch.record_ids), batch.protocol_version,
                                    week_start(iso_week(batch.created)) if batch.created else None)
                for batch in screening.batches}
    batched = {i for batch in screening.batches if batch.number is not None for i in batch.record_ids}
    first_imported: dict[str, tuple[str, int | None]] = {}
    in_force = None
    for event, payload in zip(review.ledger, review.payloads, strict=True):
        if isinstance(payload, ProtocolLockPayload):
            in_force = payload.version
        elif isinstance(payload, ImportPayload):
            for i in payload.record_ids:
                if i not in batched:
                    first_imported.setdefault(i, (event.ts, in_force))
    digests = {}
    for week in weeks(screening):
        start = week_start(week)
        chosen = [b for b in screening.batches if b.created and iso_week(b.created) == week]
        imported = [i for i, (at, _) in first_imported.items() if iso_week(at) == week]
        versions = [b.protocol_version or 0 for b in chosen] + [first_imported[i][1] or 0 for i in imported]
        imported = screening.to_screen(imported)
        ids = dict.fromkeys([*(i for batch in chosen for i in screening.to_screen(batch.record_ids)), *imported])
        ranking = score(ids, max(versions), start)
        digest = Digest(week=week, batches=[b.number for b in chosen if b.number], imported=len(imported),
                        ranking=ranking)
        digests[week] = digest_markdown(review, digest)
    return rankings, digests


# --------------------------------------------------------------------------- a review grown in memory


def grown_example(max_kept: int):
    """The example with 7 more batches over 5 weeks: two weeks of two batches (one of them under the
    amended protocol, one under the first, the second listing a paper of the first again), reviewers'
    includes making every later week's prior, a paper included weeks before arriving again (already
    covered), titles copied from earlier papers (similar), preprints, and text written with dashes and
    letters `re` folds onto ASCII ones."""
    review, problems = load_review(EXAMPLE)
    assert not problems
    review.state = review.state.model_copy(update={"max_kept": max_kept})
    templates = sorted(review.records.values(), key=lambda record: record.id)
    start = parse_timestamp(review.ledger[-1].ts)
    seq = review.ledger[-1].seq
    number = max(p.batch for p in review.payloads if isinstance(p, BatchPayload))
    serial = 0
    included: list[str] = []
    ids_by_serial: dict[int, str] = {}
    for week, versions in enumerate([(2,), (2, 1), (2,), (1, 2), (2,)]):
        week_ids: list[str] = []
        for version in versions:
            number += 1
            ids = [included[0], week_ids[0]] if week_ids else []
            for _ in range(30):
                serial += 1
                template = templates[(serial * 7) % len(templates)]
                title, abstract = template.title, template.abstract
                if serial % 5 == 0:
                    title = title.replace("object", "\u0131bject").replace("-", "\u2010")
                if serial % 6 == 0:
                    abstract = None
                if serial % 4 == 0 and serial > 30:  # nearly identical to a paper of the batch before
                    title = review.records[ids_by_serial[serial - 30]].title + "."
                doi = f"10.1101/2024.01.01.{serial:06d}" if serial % 9 == 0 else f"10.9999/grown.{serial}"
                record_id = doi
                review.records[record_id] = template.model_copy(update={
                    "id": record_id, "DOI": doi, "PMID": None, "PMCID": None, "title": title, "abstract": abstract})
                ids.append(record_id)
                week_ids.append(record_id)
                ids_by_serial[serial] = record_id
                verdict = "include" if serial % 3 == 0 else "exclude"
                included += [record_id] if verdict == "include" else []
                for reviewer in ("reviewer-a", "reviewer-b"):
                    review.decisions.append(DecisionRow("title-abstract", reviewer, "", 0, {}, Decision(
                        record_id=record_id, decision=verdict, reason="", note="")))
            seq += 1
            at = (start + timedelta(weeks=week + 1, days=len(ids) % 3)).strftime("%Y-%m-%dT%H:%M:%SZ")
            review.ledger.append(LedgerEvent.model_construct(seq=seq, type="screening", ts=at, payload={},
                                                             prev="0" * 64, hash="0" * 64))
            review.payloads.append(BatchPayload.model_construct(batch=number, monitor_id="object-in-context",
                                                                protocol_version=version, record_ids=ids))
    return review


def with_imports(review):
    """The review with records imported outside a batch (real records from a RIS and a MEDLINE export): in the
    week of its last batch, in a week of its own, and, in that week, one imported again (no new record) and a
    batch's record imported (none either)."""
    last = max(((event, payload) for event, payload in zip(review.ledger, review.payloads, strict=True)
                if isinstance(payload, BatchPayload)), key=lambda pair: parse_timestamp(pair[0].ts))
    exports = [entry_record(entry, None, []) for path, kind in ((CITATION, "ris"), (MEDLINE, "medline"))
               for entry in read_references(path.read_text(encoding="utf-8"), kind, [])]
    for record in exports:
        review.records[record.id] = record
    seq = review.ledger[-1].seq
    same_week = parse_timestamp(last[0].ts) + timedelta(hours=1)
    for at, ids in ((same_week, [exports[0].id]),
                    (same_week + timedelta(weeks=2), [exports[0].id, exports[1].id, last[1].record_ids[0]])):
        seq += 1
        review.ledger.append(LedgerEvent.model_construct(seq=seq, type="import", ts=at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                                         payload={}, prev="0" * 64, hash="0" * 64))
        review.payloads.append(ImportPayload.model_construct(source="test", method="database", description="test",
                                                             record_ids=ids, file=None, seen=None))
    return review


@pytest.mark.parametrize("review", [
    pytest.param(lambda: load_review(EXAMPLE)[0], id="example"),
    pytest.param(lambda: grown_example(max_kept=25), id="grown"),
    pytest.param(lambda: grown_example(max_kept=2), id="grown-capped"),
    pytest.param(lambda: with_imports(grown_example(max_kept=25)), id="grown-with-imports"),
])
def test_the_site_ranks_and_digests_as_scoring_each_on_its_own_does(review):
    review = review()
    facts = ReviewFacts(review)
    site = Site(review, facts, None)
    rankings, digests = reference_site(review, facts.screening)
    assert site.rankings == rankings
    assert {week: digest_markdown(review, digest) for week, digest in site.digests.items()} == digests


def test_papers_scored_share_one_set_of_fields_given_that_nothing_changes():
    review = load_review(EXAMPLE)[0]
    decisions = [scored for ranking in Site(review, ReviewFacts(review), None).rankings.values()
                 for scored in ranking.decisions]
    every = set(relevance.Scored.model_fields)
    assert len(decisions) > 100 and all(scored.model_fields_set == every for scored in decisions)
    first, second = decisions[0], decisions[1]
    assert first.model_fields_set is second.model_fields_set  # shared...
    first.score = 1  # ...and a field set names what the set holds already
    copied = second.model_copy(update={"score": 2})
    assert copied.model_fields_set is not second.model_fields_set
    assert relevance.EVERY_SCORED_FIELD == every == second.model_fields_set


def test_the_grown_review_reaches_every_novelty_case_and_the_cap():
    review = grown_example(max_kept=2)
    digests = Site(review, ReviewFacts(review), None).digests
    text = "".join(digest_markdown(review, digest) for digest in digests.values())
    for reached in ("already covered: kept in a prior digest", "title nearly identical to prior", "journal version of",
                    "under the stricter pass", "demoted to REVIEW", "abstract missing", "screening batch 4, 5"):
        assert reached in text
    # the week the preprint was covered in, which the digest's prior knows (seed 002: "covered YYYY-WW")
    assert re.search(r"journal version of preprint \S+ covered \d{4}\\?-W\d{2}", text)


def test_each_paper_is_assessed_once_for_the_batches_and_digests_of_the_example(monkeypatch):
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")  # made here, not read as kept (SITEGEN_TEST_CACHE_DIR)
    review, _ = load_review(EXAMPLE)
    assessed = []
    assess_all = relevance.Scorer.assess_all
    monkeypatch.setattr(relevance.Scorer, "assess_all", lambda self, records, prior: assessed.extend(
        record.id for record in records) or assess_all(self, records, prior))
    site = Site(review, ReviewFacts(review), None)
    site.rankings, site.digests  # noqa: B018 - computing them is the test
    batched = [i for batch in site.facts.screening.batches if batch.number for i in batch.record_ids]
    assert sorted(assessed) == sorted(batched)  # a week of one batch is that batch's ranking


# --------------------------------------------------------------------------- the matcher and the prefilter


def test_the_prefilter_key_holds_every_character_re_matches_to_an_ascii_one():
    """Every code point that re.IGNORECASE matches to a printable ASCII character keys to that character
    lowercased, so a text lacking a term's ASCII run in its key cannot match the term's pattern."""
    ascii_chars = [chr(code) for code in range(0x21, 0x7F)]
    any_ascii = re.compile("|".join(re.escape(c) for c in ascii_chars), re.IGNORECASE)
    lookalikes = []
    for code in range(0x110000):
        char = chr(code)
        if any_ascii.fullmatch(char):
            matched = [c for c in ascii_chars if re.fullmatch(re.escape(c), char, re.IGNORECASE)]
            assert [prefilter_key(char)] == list({c.lower() for c in matched}), (hex(code), matched)
            lookalikes += [char] if not char.isascii() else []
    assert sorted(lookalikes) == sorted(ASCII_LOOKALIKES)


WORDS = ["object", "in", "context", "OBJECT", "Object-in-context", "ob\u0131ect", "obj\u017fct", "\u212aey", "key",
         "\u0130n", "obj\u2010in\u2011context", "µ-opioid", "\u00b5-opioid", "context-recognition", "xobject", "s",
         "蛋白质语言模型", "语言模型的", "模型", "言語モデルを", "모델을"]
TERMS = ["object-in-context", "object in context", "context", "in", "key", "µ-opioid", "object", "Context Recognition",
         "s", "ıbject", "语言模型", "言語モデル", "모델", "object 模型"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TERMS), min_size=1, max_size=6),
       st.lists(st.sampled_from(WORDS), max_size=12), st.lists(st.sampled_from(WORDS), max_size=30),
       st.sampled_from([" ", "\n", "  ", "-", "", ", "]))
def test_the_matcher_finds_what_one_regex_per_term_finds(terms, title_words, abstract_words, gap):
    title, abstract = gap.join(title_words), gap.join(abstract_words)
    assert TermMatcher(terms).find(Text.of(title, abstract)) == reference_find(terms, title, abstract)


def test_a_term_inside_a_longer_one_found_at_once_counts_as_one_keyword():
    matcher = TermMatcher(["object-context", "object-context recognition", "context"])
    hits = matcher.find(Text.of("Object-context recognition in rats", "object-context recognition, context"))
    # "context" is named once more on its own in the abstract: a keyword found in its own right
    assert [hit.term for hit in matcher.outermost(hits)] == ["object-context recognition", "context"]


TITLE_CHARS = "ab cé1ß"  # a few of each kind the index counts: letters, digits, spaces, and all others


@settings(max_examples=120, deadline=None)
@given(st.lists(st.text(TITLE_CHARS, min_size=8, max_size=40), max_size=12), st.text(TITLE_CHARS, max_size=40),
       st.lists(st.tuples(st.integers(0, 11), st.integers(0, 39), st.sampled_from(TITLE_CHARS)), max_size=3))
def test_similar_titles_are_those_and_in_the_order_pairwise_ratios_give(titles, title, edits):
    """Titles at every distance around the cutoff: the index skips only titles that cannot be similar."""
    prior = [Record(id=f"10.1000/{n}", DOI=f"10.1000/{n}", title=text, custom=RecordMeta(sources=["openalex"]))
             for n, text in enumerate(titles) if text.strip()]
    entries = sorted(relevance.Prior(r.id, relevance.folded(r.title), False) for r in prior)
    for at, position, char in edits:  # near copies of a prior title: ratios just above and below 90
        if at < len(entries):
            title = entries[at].title[:position] + char + entries[at].title[position + 1:]
    scored = [(fuzz.ratio(title, e.title, score_cutoff=TITLE_MATCH_ABOVE), e) for e in entries if e.title]
    expected = [e for ratio, e in sorted(scored, key=lambda pair: -pair[0]) if ratio > TITLE_MATCH_ABOVE] if title else []
    assert relevance._similar(title, prior_index(prior)) == expected


def test_scored_papers_are_what_validating_them_gives():
    review = grown_example(max_kept=2)
    for ranking in Site(review, ReviewFacts(review), None).rankings.values():
        for scored in ranking.decisions:
            validated = Scored.model_validate(scored.model_dump())
            assert validated == scored and validated.model_fields_set == scored.model_fields_set
            assert validated.axes.model_fields_set == scored.axes.model_fields_set
