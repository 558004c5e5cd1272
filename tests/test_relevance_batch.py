"""A batch assessed at once finds what each paper assessed alone finds: the terms of many papers searched in
one string, and many titles compared with the prior a block at a time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz
from test_relevance_scale import TERMS, WORDS, reference_find

from sitegen.records.model import Record, RecordMeta
from sitegen.screening import relevance
from sitegen.screening.relevance import TITLE_MATCH_ABOVE, TermMatcher, Text, Texts, prior_index


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TERMS), min_size=1, max_size=6),
       st.lists(st.tuples(st.lists(st.sampled_from(WORDS), max_size=8), st.lists(st.sampled_from(WORDS), max_size=20)),
                max_size=6),
       st.sampled_from([" ", "\n", "-", "", "\x00"]))
def test_a_batch_of_papers_gets_the_terms_each_paper_alone_gets(terms, papers, gap):
    """Also where a paper's text holds the character the batch's keys are joined by, or is empty."""
    texts = [(gap.join(title), gap.join(abstract)) for title, abstract in papers]
    found = TermMatcher(terms).find_all(Texts([Text.of(title, abstract) for title, abstract in texts]))
    assert found == [reference_find(terms, title, abstract) for title, abstract in texts]


def _record(n: int, title: str) -> Record:
    return Record(id=f"10.1000/{n}", DOI=f"10.1000/{n}", title=title, custom=RecordMeta(sources=["openalex"]))


def _pairwise(title: str, prior: list[Record]) -> list[relevance.Prior]:
    entries = sorted(relevance.Prior(r.id, relevance.folded(r.title), False) for r in prior)
    scored = [(fuzz.ratio(title, e.title, score_cutoff=TITLE_MATCH_ABOVE), e) for e in entries if e.title]
    return [e for ratio, e in sorted(scored, key=lambda pair: -pair[0]) if ratio > TITLE_MATCH_ABOVE] if title else []


def test_many_titles_of_one_length_compared_in_blocks_find_what_each_alone_finds():
    """More titles of one length than a block holds, near copies of prior titles at every distance."""
    base = "object in context recognition in rats"
    prior = [_record(n, base[:n % len(base)] + "x" * (n % 7) + base[n % len(base):]) for n in range(60)]
    titles = [base[:k] + chr(97 + (k * 7 + n) % 26) + base[k + 1:] for n in range(3) for k in range(len(base))]
    titles = [relevance.folded(title) for title in titles * (relevance._BLOCK // len(titles) + 2)] + ["", base]
    found = relevance._similar_all(titles, prior_index(prior))
    assert found == [_pairwise(title, prior) for title in titles]
    assert sum(map(bool, found)) > relevance._BLOCK


def test_titles_too_long_for_16_bit_sums_are_compared_exactly():
    """A record's title is at most 5,000 characters, but folding spells Greek letters out ("γ" is " gamma ")."""
    long = "a" * 20000 + " memory"
    prior = [_record(n, "title").model_copy(update={"title": title}) for n, title in enumerate([long, long + " in mice", "b" * 20000])]
    titles = [long, long[:-3], "a" * 19000]
    assert relevance._similar_all(titles, prior_index(prior)) == [_pairwise(title, prior) for title in titles]
