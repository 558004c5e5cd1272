"""Relevance scoring of a screening batch: KEEP, REVIEW or DROP, a 0-100 score and a one-line rationale.

This follows the paper-relevance-filter specification (seed 002) with no model
call: every axis is a rule over the protocol's own words, so a reviewer can
audit each decision from its rationale.

1. Match: protocol watchlist terms (whole words or phrases, any case) in the
   title and abstract, on the seed's ladder (0 / 0.5 / 0.7 / 1.0), times the
   largest weight among the terms found.
2. Criteria fit: the seed's qualitative axis, anchored only to the protocol's
   relevance terms and publication types (never to a model's judgement).
3. Novelty: against the records kept in recent digests (`prior`): an exact id
   is already covered (forced DROP); the journal version of a covered preprint
   (by its title, or the link between the versions) scores 0.5; another linked
   version or a near-identical title 0.0; anything else 1.0.

score = 100 * (0.45 * match + 0.45 * criteria + 0.10 * novelty), KEEP from 70,
REVIEW from 50 (seed 002's defaults; state.json's keep_from and review_from
override them: `Thresholds`), DROP below, but only for a paper an exclusion fired on (a
look-alike trap or an excluded publication type): a paper scoring low for want
of mentions (a term once in the abstract, an out-of-scope term in passing, a
title like a prior one) is REVIEW, so the digest never buries a paper naming the
task. A missing abstract (or a placeholder for one) or criteria that say nothing about a paper mean REVIEW
whatever the score. When more papers are kept than
`max_kept`, they are re-scored with the stricter criteria pass, then the
lowest KEEPs are demoted to REVIEW, never DROP: nothing that scored from
keep_from is dropped. The watchlist is only read.
Scores only order the batch: reviewers decide.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from itertools import accumulate
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz

from sitegen.records import preprints
from sitegen.records.model import Record
from sitegen.records.titles import folded
from sitegen.review.folder import cycle_collection_paused
from sitegen.review.models import ProtocolMeta, RelevanceTerms, Thresholds, WatchTerm
from sitegen.text import counted

Decision = Literal["KEEP", "REVIEW", "DROP"]

SEED_THRESHOLDS = Thresholds()  # KEEP from KEEP_FROM, REVIEW from REVIEW_FROM: seed 002's defaults
# Decimal weights, so a score is computed exactly and rounded half up: 32.5 is 33 whatever the
# float representation of the axes.
MATCH_WEIGHT = Decimal("0.45")
CRITERIA_WEIGHT = Decimal("0.45")
NOVELTY_WEIGHT = Decimal("0.10")
# An out-of-scope subject found only in the abstract makes a look-alike when it is named at least this
# often: a subject named once in passing ("unlike fear conditioning, ...") is not what a paper is about.
TRAP_MENTIONS = 2
# The seed's "Levenshtein ratio > 0.9" on normalised titles, as a rapidfuzz ratio (0-100).
TITLE_MATCH_ABOVE = 90.0

FitKind = Literal["fit", "borderline", "partial", "aside", "silent", "out"]
IN_SCOPE_KINDS: frozenset[FitKind] = frozenset({"fit", "borderline", "partial"})  # an in-scope term found
# Criteria value of each kind of fit: (usual pass, stricter pass). The stricter pass, the first
# tie-breaker, lowers review-type papers and partial fits only: the seed's 0.7 and 0.4 rungs.
CRITERIA_VALUES: dict[FitKind, tuple[Decimal, Decimal]] = {
    "fit": (Decimal("1.0"), Decimal("1.0")),
    "borderline": (Decimal("0.7"), Decimal("0.4")),
    "partial": (Decimal("0.4"), Decimal("0.2")),
    # No in-scope term; an out-of-scope one named in passing (too little to call a look-alike). On the
    # partial rung, and no better a fit than a partial one: tightened alike, or under the cap it would
    # outrank (and keep its place over) a paper that does name something in scope.
    "aside": (Decimal("0.4"), Decimal("0.2")),
    "silent": (Decimal("0.7"), Decimal("0.7")),
    "out": (Decimal("0.0"), Decimal("0.0")),
}


class Axes(BaseModel):
    model_config = ConfigDict(extra="forbid")

    match: float
    criteria: float
    novelty: float


class Scored(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    decision: Decision
    score: int
    axes: Axes
    rationale: str
    tags: list[str]


class Calibration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kept: int
    review: int
    dropped: int
    force_dropped_already_covered: int
    demoted_for_cap: int
    stricter_pass_applied: bool
    # Seed 002 guardrail 5: criteria pulling in papers the watchlist does not anticipate are surfaced here, never
    # added to the watchlist (the user owns it): the papers the criteria find in scope that name no watchlist term.
    # Omitted when there are none, so a calibration with nothing to surface has the seed's six fields exactly.
    in_scope_without_watchlist_term: int = Field(default=0, exclude_if=lambda count: not count)


class Ranking(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decisions: list[Scored]  # by score, highest first, then by id
    calibration: Calibration


# --------------------------------------------------------------------------- term matching


@dataclass(frozen=True)
class TermHits:
    term: str  # as the protocol spells it
    title: int  # occurrences in the title
    abstract: int  # occurrences in the abstract


# Scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, Japanese kana, Chinese characters) and
# Hangul, whose words carry their particles ("모델을"): there no word boundary stands beside a term's word.
_UNSPACED = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                       "\uac00-\ud7af\uf900-\ufaff]")


def term_pattern(term: str) -> re.Pattern[str]:
    """A whole word or phrase in any case: "object-in-context" is not found inside "object-in-contexts"
    or "nonobject-in-context". Any run of whitespace stands for a space, as line breaks fall anywhere. A term
    beginning or ending in a script written without spaces (`_UNSPACED`) is found beside other letters on that
    side: "语言模型" in "蛋白质语言模型的设计", where no word boundary is."""
    body = r"\s+".join(re.escape(word) for word in term.split())
    if not body:  # a term of whitespace alone (protocol terms never are): found wherever no word is
        return re.compile(r"(?<!\w)(?!\w)")
    after = "" if _UNSPACED.match(term.rstrip()[-1]) else r"(?!\w)"
    if _UNSPACED.match(term.lstrip()[0]):
        return re.compile(body + after, re.IGNORECASE)
    # "No word character before the first one", asserted once the first character is matched: the same
    # test as a leading (?<!\w), but a pattern led by a literal lets `re` skip to where that character is.
    first = re.escape(term.split()[0][0])
    return re.compile(rf"{first}(?<!\w(?s:.)){body[len(first):]}{after}", re.IGNORECASE)


def _term_key(term: str) -> str:
    return " ".join(term.casefold().split())


def distinct_terms(terms: list[str]) -> list[str]:
    """Terms differing only in case or spacing are one keyword, spelt as first listed."""
    first: dict[str, str] = {}
    for term in terms:
        first.setdefault(_term_key(term), term)
    return list(first.values())


# Hyphens and dashes sources write in place of "-" (U+2010 to U+2015, U+2212 minus, U+FE63, U+FF0D):
# "object‐in‐context" in a title is the protocol's "object-in-context".
_DASHES = re.compile("[\u2010-\u2015\u2212\ufe63\uff0d]")


def fold(text: str) -> str:
    """Text as the matcher compares it: Unicode-normalised (NFKC), every dash a plain hyphen."""
    if text.isascii():  # already NFKC, and without a dash to replace
        return text
    return _DASHES.sub("-", unicodedata.normalize("NFKC", text))


# Every character that re.IGNORECASE matches to an ASCII character, beside that character's own
# cases: with these mapped, the lowercased text holds the lowercased term's ASCII runs wherever the
# term's pattern matches (tests/test_relevance_scale.py checks every code point against `re`).
ASCII_LOOKALIKES = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}


def prefilter_key(text: str) -> str:
    """Text as the prefilter searches it: what any case-insensitive match of an ASCII run contains."""
    if not text.isascii():
        for lookalike, ascii_letter in ASCII_LOOKALIKES.items():  # str.replace: far quicker than str.translate
            text = text.replace(lookalike, ascii_letter)
    return text.lower()


@dataclass(frozen=True)
class Text:
    """A paper's title and abstract folded once, with the keys the term prefilter searches."""

    title: str
    abstract: str
    title_key: str
    abstract_key: str

    @classmethod
    def of(cls, title: str, abstract: str) -> Text:
        title, abstract = fold(title), fold(abstract)
        return cls(title, abstract, prefilter_key(title), prefilter_key(abstract))


class Texts:
    """A batch's titles and abstracts (`Text`), their prefilter keys joined once: a term's ASCII run is
    looked for in one string, not in every paper's, and the papers holding it are found by offset."""

    def __init__(self, texts: list[Text]):
        self.texts = texts
        keys = [key for text in texts for key in (text.title_key, text.abstract_key)]  # paper i's at 2i and 2i + 1
        # Joined by a character no needle holds (needles are printable ASCII): no needle is found across two keys.
        self.corpus = "\x00".join(keys)
        self.starts = list(accumulate((len(key) + 1 for key in keys[:-1]), initial=0)) if keys else []
        self._holding: dict[str, list[int]] = {}
        self._counts: dict[str, dict[int, list[int]]] = {}

    def counts(self, term: _Term) -> dict[int, list[int]]:
        """The papers naming `term`, each with its [title, abstract] counts, in order. A term in both the
        watchlist and the relevance terms is counted once: terms alike in pattern are found alike."""
        if term.pattern.pattern not in self._counts:
            counts: dict[int, list[int]] = {}
            for key in self.holding(term.needle):
                paper, in_abstract = divmod(key, 2)
                text = self.texts[paper]
                count = (term.count(text.abstract, text.abstract_key) if in_abstract
                         else term.count(text.title, text.title_key))
                if count:
                    counts.setdefault(paper, [0, 0])[in_abstract] = count
            self._counts[term.pattern.pattern] = counts
        return self._counts[term.pattern.pattern]

    def holding(self, needle: str) -> list[int]:
        """The keys holding `needle` (paper i's title key is 2i, its abstract key 2i + 1), in order; every key
        holds "". Shared by every matcher of the batch: watchlist and relevance terms share needles."""
        if needle not in self._holding:
            if not needle:
                self._holding[needle] = list(range(len(self.starts)))
                return self._holding[needle]
            found: list[int] = []
            corpus, starts, last = self.corpus, self.starts, len(self.starts) - 1
            at = corpus.find(needle)
            while at >= 0:
                key = bisect_right(starts, at) - 1
                found.append(key)
                at = corpus.find(needle, starts[key + 1]) if key < last else -1  # on from the next key
            self._holding[needle] = found
        return self._holding[needle]


@dataclass(frozen=True)
class _Term:
    spelt: str  # as the protocol spells it
    pattern: re.Pattern[str]
    # The longest run of ASCII characters of the folded term, lowercased: a text whose key lacks it
    # cannot match the pattern, so the regex runs only on texts holding it ("" where the term has none).
    needle: str
    ascii_pattern: re.Pattern[str] | None  # `pattern` for ASCII text lowercased (its key); None for a non-ASCII term

    def count(self, text: str, key: str) -> int:
        if self.needle not in key:
            return 0
        if self.ascii_pattern is not None and text.isascii():
            return len(self.ascii_pattern.findall(key))
        return len(self.pattern.findall(text))


def _needle(folded_term: str) -> str:
    runs = re.findall(r"[\x21-\x7e]+", folded_term)  # printable ASCII; whitespace is the pattern's \s+
    return max(runs, key=len, default="").lower()


def _ascii_pattern(folded_term: str) -> re.Pattern[str] | None:
    """The term's pattern for lowercased ASCII text, where re.IGNORECASE finds exactly what a lowercase
    pattern does (no ASCII character has a case-insensitive match but its own other case). Led by the whole
    first word, with "no word character before it" asserted after it, so `re` searches for the word as a
    literal prefix rather than trying every position."""
    words = folded_term.lower().split()
    if not words or not folded_term.isascii():
        return None
    first = re.escape(words[0])
    body = r"\s+".join(re.escape(word) for word in words)
    return re.compile(rf"{first}(?<!\w(?s:.){{{len(words[0])}}}){body[len(first):]}(?!\w)")


class TermMatcher:
    """A list of terms folded, compiled and deduplicated once, to find them in any number of papers."""

    def __init__(self, terms: list[str]):
        self.terms = [_Term(term, term_pattern(fold(term)), _needle(fold(term)), _ascii_pattern(fold(term)))
                      for term in distinct_terms(terms)]
        # (shorter, longer): the first term is found within the second ("object-context" within
        # "object-context recognition"), so a hit of both may be one keyword found, not two.
        self.within = frozenset((short.spelt, long.spelt) for short in self.terms for long in self.terms
                                if short is not long and short.pattern.search(fold(long.spelt)) is not None)

    def find(self, text: Text) -> list[TermHits]:
        """The terms found in the title or abstract, with their counts, in the order given."""
        return self.find_all(Texts([text]))[0]

    def find_all(self, texts: Texts) -> list[list[TermHits]]:
        """`find` for every paper of a batch: each term's pattern runs only on the titles and abstracts whose
        key holds its needle (most papers name most terms nowhere), found in one search of the batch."""
        hits: list[list[TermHits]] = [[] for _ in texts.texts]
        for term in self.terms:
            for paper, (title, abstract) in texts.counts(term).items():
                hits[paper].append(TermHits(term.spelt, title, abstract))
        return hits

    def outermost(self, hits: list[TermHits]) -> list[TermHits]:
        """Hits without those found only inside a longer term's matches: "object-context" inside
        "object-context recognition" is one keyword found, not two distinct ones."""
        def inside(short: TermHits, long: TermHits) -> bool:
            return ((short.term, long.term) in self.within and short.title <= long.title
                    and short.abstract <= long.abstract)
        if len(hits) < 2 or not self.within:
            return hits
        return [hit for hit in hits if not any(inside(hit, other) for other in hits)]


def _places(hit: TermHits) -> str:
    places = [f"{where} ×{count}" for where, count in (("title", hit.title), ("abstract", hit.abstract)) if count]
    return f"'{hit.term}' in {' and '.join(places)}"


def _number(value: Decimal) -> str:
    return f"{value.normalize():f}"


# --------------------------------------------------------------------------- axis 1: match


class Watchlist:
    """The protocol's watchlist, compiled once: its terms and each keyword's largest weight."""

    def __init__(self, watchlist: list[WatchTerm]):
        self.matcher = TermMatcher([item.term for item in watchlist])
        self.weights: dict[str, Decimal] = {}
        for item in watchlist:
            key = _term_key(item.term)
            self.weights[key] = max(self.weights.get(key, Decimal(0)), Decimal(str(item.weight)))


def match_axis(watchlist: Watchlist, found: list[TermHits]) -> tuple[Decimal, str]:
    """The seed's match ladder times the largest weight among the terms found (`watchlist.matcher.find`), with
    its rationale."""
    hits = watchlist.matcher.outermost(found)
    if not hits:
        return Decimal("0.0"), "watchlist: no term in title or abstract (match 0)"
    only = hits[0]
    if len(hits) > 1 or (only.title and only.abstract):
        ladder = Decimal("1.0")
    elif only.title or only.abstract > 1:
        ladder = Decimal("0.7")
    else:
        ladder = Decimal("0.5")
    # WatchTerm weights are at most 1.0, so the product never exceeds the seed's cap of 1.0.
    weight = max(watchlist.weights[_term_key(hit.term)] for hit in hits)
    value = ladder * weight
    found = ", ".join(_places(hit) for hit in hits)
    return value, f"watchlist: {found} (match {_number(value)}, weight {_number(weight)})"


# --------------------------------------------------------------------------- axis 2: criteria fit


@dataclass(frozen=True)
class Fit:
    kind: FitKind
    note: str  # which criteria fired, for the rationale
    tags: tuple[str, ...]


class Criteria:
    """The protocol's relevance terms compiled once, and its publication types as compared."""

    def __init__(self, relevance: RelevanceTerms):
        self.in_scope = TermMatcher(relevance.in_scope_terms)
        self.out_of_scope = TermMatcher(relevance.out_of_scope_terms)
        self.excluded_types = {_term_key(name) for name in relevance.excluded_publication_types}
        self.borderline_types = {_term_key(name) for name in relevance.borderline_publication_types}


def _types_in(types: list[str], wanted: set[str]) -> list[str]:
    return sorted({name for name in types if _term_key(name) in wanted})


def criteria_fit(criteria: Criteria, in_scope: list[TermHits], out_of_scope: list[TermHits], types: list[str]) -> Fit:
    """How the paper fits the protocol's relevance terms and publication types (kinds in CRITERIA_VALUES), from
    the terms `criteria.in_scope` and `criteria.out_of_scope` find in it."""
    # A look-alike: the keywords let it through, but the paper is about an out-of-scope subject only: an
    # out-of-scope term leads the title or recurs in the abstract, and no in-scope term is anywhere. A paper
    # naming anything in scope, even once and beside a look-alike term ("odour-free boxes" in an object-in-
    # context study), is never a trap: a term count cannot tell what it is about, a reviewer can.
    traps = [hit for hit in out_of_scope if not in_scope and (hit.title or hit.abstract >= TRAP_MENTIONS)]
    excluded = _types_in(types, criteria.excluded_types)
    if traps or excluded:
        fired = []
        if traps:
            # Where each term was found is said once (its places); why that makes a trap is said once for all.
            fired.append("look-alike trap: out-of-scope " + ", ".join(_places(hit) for hit in traps)
                         + f" (in the title, or at least {TRAP_MENTIONS} times in the abstract), and no in-scope "
                         "term anywhere")
        fired += [f"excluded publication type '{name}' fails a required minimum" for name in excluded]
        return Fit("out", "; ".join(fired), ("look-alike-trap",) if traps else ())
    if not in_scope and not out_of_scope:
        if not criteria.in_scope.terms and not criteria.out_of_scope.terms:
            # Not the paper's silence but the protocol's: say where the terms go, or every paper reads as off topic.
            return Fit("silent", "criteria silent: protocol.md names no relevance terms (relevance.in_scope_terms, "
                       "relevance.out_of_scope_terms) to look for", ("criteria-silent",))
        return Fit("silent", "criteria silent: no in-scope or out-of-scope term in title or abstract",
                   ("criteria-silent",))
    if not in_scope:
        return Fit("aside", "no in-scope term; out-of-scope " + ", ".join(_places(hit) for hit in out_of_scope)
                   + f", named fewer than {TRAP_MENTIONS} times: in passing, not a look-alike", ())
    # Without a trap, an out-of-scope term found means an in-scope term was found too.
    found = ", ".join(_places(hit) for hit in in_scope)
    if out_of_scope:
        found += " (out-of-scope " + ", ".join(_places(hit) for hit in out_of_scope) + " too)"
    leading = [hit for hit in out_of_scope if hit.title and not any(h.title for h in in_scope)]
    if leading or any(hit.abstract >= TRAP_MENTIONS and hit.abstract > max(h.abstract for h in in_scope)
                      for hit in out_of_scope):
        # it may be a look-alike, but it names something in scope: borderline, for a reviewer, never dropped
        return Fit("borderline", f"in scope in part: {found}; an out-of-scope subject leads", ("borderline",))
    if not any(hit.title or hit.abstract > 1 for hit in in_scope):
        return Fit("partial", f"partially in scope: {found}, no in-scope term in the title or twice in the abstract",
                   ())
    borderline = _types_in(types, criteria.borderline_types)
    if borderline:
        names = ", ".join(f"'{name}'" for name in borderline)
        return Fit("borderline", f"in scope: {found}, but borderline publication type {names}", ("borderline",))
    return Fit("fit", f"in scope: {found}", ())


# --------------------------------------------------------------------------- axis 3: novelty


@dataclass(frozen=True, order=True)
class Prior:
    id: str
    title: str  # normalised
    preprint: bool
    week: str | None = None  # the ISO week (YYYY-Www) of the digest it was covered in, where known


@dataclass(frozen=True)
class Novelty:
    value: Decimal
    note: str
    tags: tuple[str, ...]
    covered: bool  # the exact id was kept before: forced DROP


def is_preprint(record: Record) -> bool:
    return preprints.is_preprint(record.DOI, record.custom.publication_types, title=record.title)


@dataclass(frozen=True)
class PriorIndex:
    """The prior records to compare against, indexed once for every paper of a batch."""

    ids: frozenset[str]
    by_id: dict[str, Prior]  # each prior record's entry (the earliest week's, for one in the prior of several)
    titled: list[Prior]  # those with a normalised title, sorted, so the first match never depends on input order
    titles: list[str]  # their titles, in the same order
    by_length: np.ndarray  # their positions, shortest title first
    lengths: np.ndarray  # their lengths, shortest first
    columns: np.ndarray  # their character counts (`_char_counts`), shortest first: a row per character


def prior_entry(record: Record, week: str | None = None) -> Prior:
    return Prior(record.id, folded(record.title), is_preprint(record), week)


def prior_index(prior: list[Record], covered_in: Mapping[str, str] | None = None) -> PriorIndex:
    """The prior records indexed, each with the week it was covered in (`covered_in`, by id) where known."""
    covered_in = covered_in or {}
    return index_priors([prior_entry(record, covered_in.get(record.id)) for record in prior])


def index_priors(entries: list[Prior]) -> PriorIndex:
    """The prior (`prior_entry` of each record) indexed; a record in the prior of several weeks is made an
    entry once."""
    by_id: dict[str, Prior] = {}
    for entry in sorted(entries, key=lambda entry: (entry.id, entry.week is None, entry.week or "")):
        by_id.setdefault(entry.id, entry)  # the earliest week known
    entries = sorted(entries)
    titled = [entry for entry in entries if entry.title]
    titles = [entry.title for entry in titled]
    lengths = np.array([len(title) for title in titles], dtype=np.int64)
    by_length = np.argsort(lengths, kind="stable")
    return PriorIndex(frozenset(by_id), by_id, titled, titles, by_length, lengths[by_length],
                      np.ascontiguousarray(_char_counts(titles)[by_length].T))


# Normalised titles are mostly letters, digits and spaces: each has its own count, every other character
# shares one (merging counts only lowers their differences, so the bound below still holds).
_BUCKET = np.full(128, 36, dtype=np.intp)
for _bucket, _char in enumerate("abcdefghijklmnopqrstuvwxyz0123456789 "):
    _BUCKET[ord(_char)] = _bucket


def _char_counts(titles: list[str]) -> np.ndarray:
    """Each title's count of every letter, digit and space, and of all other characters (a row per title),
    at most 32767: a count capped differs from another no more than before. All titles in one pass."""
    lengths = np.array([len(title) for title in titles], dtype=np.int64)
    codes = np.frombuffer("".join(titles).encode("utf-32-le"), dtype=np.uint32)
    rows = np.repeat(np.arange(len(titles), dtype=np.int64), lengths)
    counts = np.bincount(rows * 38 + _BUCKET[np.minimum(codes, 127)], minlength=len(titles) * 38)
    return np.minimum(counts, 32767).astype(np.int16).reshape(len(titles), 38)


def _similar(title: str, prior: PriorIndex) -> list[Prior]:
    """Prior records whose normalised title is nearly this one, most similar first (ties by id)."""
    return _similar_all([title], prior)[0]


def _similar_all(titles: list[str], prior: PriorIndex) -> list[list[Prior]]:
    """`_similar` for each title of a batch. Titles of one length share their window of prior titles, so
    each window is compared with all of its titles at once."""
    similar: list[list[Prior]] = [[] for _ in titles]
    if not prior.titles or not titles:
        return similar
    lengths = np.array([len(title) for title in titles], dtype=np.int64)
    counts = _char_counts(titles)
    by_length = np.argsort(lengths, kind="stable")
    # A title of punctuation alone normalises to nothing, and "" would match "".
    by_length = by_length[lengths[by_length] > 0]
    groups = np.flatnonzero(np.diff(lengths[by_length], prepend=-1, append=-1))
    for first, stop in zip(groups[:-1].tolist(), groups[1:].tolist(), strict=True):
        for rows, pairs in _near_pairs(by_length[first:stop], int(lengths[by_length[first]]), counts, prior):
            for row, near in zip(rows, pairs, strict=True):
                title = titles[row]
                scored = [(fuzz.ratio(title, prior.titles[index], score_cutoff=TITLE_MATCH_ABOVE), index)
                          for index in near]
                similar[row] = [prior.titled[index] for ratio, index in sorted(scored, key=lambda pair: (-pair[0],
                                                                                                          pair[1]))
                                if ratio > TITLE_MATCH_ABOVE]
    return similar


# Titles of one length compared with their window at once, this many at a time (a row of sums each).
_BLOCK = 256


def _near_pairs(rows: np.ndarray, length: int, counts: np.ndarray, prior: PriorIndex):
    """For titles (`rows` of `counts`) all `length` long: the prior titles (positions in `prior.titles`) whose
    length and character counts leave them possibly similar, as `_similar`'s bound defines it, for each title
    with any; yielded as (rows, positions) a block at a time."""
    # An insertion or deletion changes one character's count by one, so the summed count differences (and the
    # difference of lengths) are at most the InDel distance the ratio is made of: titles they put past the
    # cutoff cannot be similar, and only the others are compared (the extra 1 leaves room for rounding).
    slack = 1 - TITLE_MATCH_ABOVE / 100
    first = int(np.searchsorted(prior.lengths, ((1 - slack) * length - 1) / (1 + slack) - 1, side="left"))
    last = int(np.searchsorted(prior.lengths, ((1 + slack) * length + 1) / (1 - slack) + 1, side="right"))
    if last <= first:
        return
    bound = slack * (prior.lengths[first:last] + length) + 1  # the summed count differences allowed
    # Summed a character at a time over a block of titles and the whole window: a few whole-array operations
    # per character rather than one pass per title. A sum is at most the two lengths (counts are capped below
    # them), so 16 bits hold it but for titles of thousands of characters.
    summed_type = np.int16 if length + int(prior.lengths[last - 1]) <= np.iinfo(np.int16).max else np.int64
    window = prior.columns[:, first:last].astype(summed_type)
    for start in range(0, len(rows), _BLOCK):
        block = rows[start:start + _BLOCK]
        queries = counts[block].astype(summed_type)
        summed = np.zeros((len(block), last - first), dtype=summed_type)
        for column, values in enumerate(window):
            difference = values[None, :] - queries[:, column][:, None]
            summed += np.abs(difference, out=difference)
        row_at, column_at = np.nonzero(summed <= bound)
        if not len(row_at):
            continue
        positions = prior.by_length[first + column_at]
        splits = np.flatnonzero(np.diff(row_at)) + 1
        yield block[row_at[np.r_[0, splits]]].tolist(), [part.tolist() for part in np.split(positions, splits)]


COVERED = Novelty(Decimal("0.0"), "already covered: kept in a prior digest (novelty 0)", ("already-covered",), True)
NOVEL = Novelty(Decimal("1.0"), "novel: id and title not in prior digests (novelty 1)", (), False)


def novelty_axes(records: list[Record], prior: PriorIndex) -> list[Novelty]:
    """The novelty of each paper of a batch against the prior; the titles of those not already covered are
    compared at once."""
    uncovered = [n for n, record in enumerate(records) if record.id not in prior.ids]
    novelties = [COVERED] * len(records)
    # Without a prior title nothing can be similar: the batch's titles are not even normalised.
    titles = [folded(records[n].title) for n in uncovered] if prior.titles else [""] * len(uncovered)
    for n, similar in zip(uncovered, _similar_all(titles, prior), strict=True):
        linked = sorted(prior.by_id[other] for other in set(records[n].custom.other_versions) if other in prior.by_id)
        novelties[n] = _novelty(records[n], similar, linked)
    return novelties


def _novelty(record: Record, similar: list[Prior], linked: list[Prior]) -> Novelty:
    """`similar`: prior records whose title is nearly this one's; `linked`: those the matcher linked to it as
    versions of one study (`custom.other_versions`), whose titles may differ more: a journal often retitles a
    preprint, and the seed's rule is that "a prior preprint version exists", however it is titled."""
    preprints = [entry for entry in [*linked, *similar] if entry.preprint]
    if preprints and not is_preprint(record):
        source = preprints[0]
        # The seed's "journal version of preprint covered YYYY-WW": the week tells the reader which digest showed
        # it. The tag names the preprint itself: a week holds many papers, an id one.
        covered = f"covered {source.week}" if source.week else "covered in a prior digest"
        return Novelty(Decimal("0.5"), f"journal version of preprint {source.id} {covered} (novelty 0.5)",
                       (f"journal-version-of:{source.id}",), False)
    if linked:
        return Novelty(Decimal("0.0"), f"another version of prior {linked[0].id}, linked as one study (novelty 0)",
                       (f"version-of:{linked[0].id}",), False)
    if similar:
        return Novelty(Decimal("0.0"), f"title nearly identical to prior {similar[0].id} (novelty 0)",
                       (f"similar-to:{similar[0].id}",), False)
    return NOVEL


# --------------------------------------------------------------------------- combining


@dataclass(frozen=True)
class Assessment:
    """Everything about one paper that does not depend on which criteria pass is used."""

    id: str
    match: Decimal
    match_note: str
    fit: Fit
    novelty: Novelty
    has_abstract: bool


class Scorer:
    """A protocol's watchlist and criteria compiled once, to assess any number of papers with it."""

    def __init__(self, protocol: ProtocolMeta):
        self.watchlist = Watchlist(protocol.watchlist)
        self.criteria = Criteria(protocol.relevance)

    def assess_all(self, records: list[Record], prior: PriorIndex) -> list[Assessment]:
        """Each paper of a batch assessed: the terms of every paper found at once (`Texts`), and each axis
        worked out once for the papers sharing what it depends on (the same terms found, the same types)."""
        with cycle_collection_paused():  # what a batch's ranking makes holds no reference cycle
            return self._assess_all(records, prior)

    def _assess_all(self, records: list[Record], prior: PriorIndex) -> list[Assessment]:
        abstracts = [abstract_text(record.abstract, record.title) for record in records]
        texts = Texts([Text.of(record.title, abstract) for record, abstract in zip(records, abstracts, strict=True)])
        watched = self.watchlist.matcher.find_all(texts)
        in_scope, out_of_scope = self.criteria.in_scope.find_all(texts), self.criteria.out_of_scope.find_all(texts)
        matches: dict[tuple[TermHits, ...], tuple[Decimal, str]] = {}
        fits: dict[tuple[tuple[TermHits, ...], tuple[TermHits, ...], tuple[str, ...]], Fit] = {}
        assessments = []
        for record, abstract, found, inside, outside, novelty in zip(
                records, abstracts, watched, in_scope, out_of_scope, novelty_axes(records, prior), strict=True):
            found_key = tuple(found)
            if found_key not in matches:
                matches[found_key] = match_axis(self.watchlist, found)
            fit_key = (tuple(inside), tuple(outside), tuple(record.custom.publication_types))
            if fit_key not in fits:
                fits[fit_key] = criteria_fit(self.criteria, inside, outside, record.custom.publication_types)
            match, match_note = matches[found_key]
            assessments.append(Assessment(record.id, match, match_note, fits[fit_key], novelty, bool(abstract)))
        return assessments


# What sources and exports write in an abstract's place. Seed 002 guardrail 2: "an empty abstract is a signal something
# went wrong upstream, not a green light", and these are empty abstracts in words; so is one without a letter or digit.
ABSTRACT_PLACEHOLDERS = frozenset({"", "no abstract", "no abstract available", "abstract not available",
                                   "abstract unavailable", "no abstract provided", "not available", "abstract",
                                   "n a", "na", "none", "null", "no abstract available for this article"})
_PLACEHOLDER_WITHIN = 60  # characters: longer text is no placeholder, and is not folded to be compared


def abstract_text(abstract: str | None, title: str = "") -> str:
    """The abstract as scored: "" where there is none, only a placeholder for one (`ABSTRACT_PLACEHOLDERS`), or only
    the title again (as some sources fill the field): a title said twice is still a title alone, which guardrail 1
    never lets decide, and would count as a term "in the title AND abstract"."""
    abstract = (abstract or "").strip()
    if len(abstract) <= _PLACEHOLDER_WITHIN and folded(abstract) in ABSTRACT_PLACEHOLDERS:
        return ""
    if len(abstract) <= 2 * len(title) and folded(abstract) == folded(title):  # longer text cannot fold to the title
        return ""
    return abstract


def combined_score(match: Decimal, criteria: Decimal, novelty: Decimal) -> int:
    exact = 100 * (MATCH_WEIGHT * match + CRITERIA_WEIGHT * criteria + NOVELTY_WEIGHT * novelty)
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def decide(score: int, assessment: Assessment, thresholds: Thresholds = SEED_THRESHOLDS) -> tuple[Decision, str]:
    """The decision, with why; the guardrails come before the thresholds, which the rationale names as they are."""
    if assessment.novelty.covered:
        # Seed 002 forces DROP at novelty 0.0 "already in a prior digest": the exact id kept before. A title nearly
        # like a prior one under another id scores novelty 0 too but is not forced: the caller has deduplicated
        # (seed guardrail 6), so another id is another work (a reply, a series' next part, an erratum).
        return "DROP", "DROP forced: already covered"
    if not assessment.has_abstract:
        return "REVIEW", "REVIEW: abstract missing, and a title alone never decides KEEP or DROP"
    if assessment.fit.kind == "silent":
        return "REVIEW", "REVIEW: criteria silent, a reviewer decides"
    keep_from, review_from = thresholds.keep_from, thresholds.review_from
    if score >= keep_from:
        return "KEEP", f"KEEP: score {score} ≥ {keep_from}"
    if score >= review_from:
        return "REVIEW", f"REVIEW: score {score} in {review_from}-{keep_from - 1}"
    if assessment.fit.kind != "out":
        # Below the threshold for want of mentions, not because anything excludes it: a paper naming
        # the task once is still a paper on the task. A term count cannot bury it; a reviewer decides.
        return "REVIEW", (f"REVIEW: score {score} < {review_from}, but no exclusion fired (no look-alike trap, "
                          "no excluded publication type): only an exclusion drops a paper")
    return "DROP", f"DROP: score {score} < {review_from}, and an exclusion fired"


def score_one(assessment: Assessment, stricter: bool,
              alike: dict[tuple, tuple[Decision, int, Axes, str, tuple[str, ...]]],
              thresholds: Thresholds = SEED_THRESHOLDS) -> Scored:
    """The paper scored and decided. `alike` holds what papers assessed alike (in all but their id) scored
    in this ranking, under its one `thresholds`: many papers name the same terms, so their scores and
    rationales are worked out once."""
    key = (assessment.match, assessment.match_note, assessment.fit, assessment.novelty, assessment.has_abstract,
           stricter)
    if key not in alike:
        alike[key] = _scoring(assessment, stricter, thresholds)
    decision, score, axes, rationale, tags = alike[key]
    # Every value is already of its field's type (tests/test_relevance_scale.py compares with validated
    # models): validating one model per paper of a 100,000-record review would only copy them. Papers scored
    # alike share their Axes, as a model_copy would; each has its own list of tags. Every field is given, so
    # each shares the one set naming them all (a set each was 50 MB at 100,000 records): a field set later
    # adds a name the set holds already, and a copy gets a set of its own.
    return Scored.model_construct(_fields_set=EVERY_SCORED_FIELD, id=assessment.id, decision=decision, score=score,
                                  axes=axes, rationale=rationale, tags=list(tags))


EVERY_SCORED_FIELD = set(Scored.model_fields)


def _scoring(assessment: Assessment, stricter: bool,
             thresholds: Thresholds) -> tuple[Decision, int, Axes, str, tuple[str, ...]]:
    usual, strict = CRITERIA_VALUES[assessment.fit.kind]
    criteria = strict if stricter else usual
    score = combined_score(assessment.match, criteria, assessment.novelty.value)
    decision, why = decide(score, assessment, thresholds)
    tightened = " under the stricter pass" if criteria != usual else ""
    notes = [assessment.match_note, f"criteria: {assessment.fit.note} (criteria {_number(criteria)}{tightened})",
             assessment.novelty.note]
    tags = [*assessment.fit.tags, *assessment.novelty.tags]
    if not assessment.has_abstract:
        notes.append("abstract missing: scored on the title alone")
        tags.append("no-abstract")
    # One line whatever the protocol's terms hold: the rationale is read in tables and logs.
    rationale = " ".join("; ".join([*notes, why]).split())
    axes = Axes.model_construct(match=float(assessment.match), criteria=float(criteria),
                                novelty=float(assessment.novelty.value))
    return decision, score, axes, rationale, tuple(tags)


def _kept(decisions: list[Scored]) -> list[Scored]:
    return [scored for scored in decisions if scored.decision == "KEEP"]


def _demote(scored: Scored, kept: list[Scored], max_kept: int) -> Scored:
    # Good enough to keep, only over the cap: a reviewer may still take it, so REVIEW, not DROP.
    note = f"; demoted to REVIEW: {counted(len(kept), 'paper')} scored KEEP, over the cap of {max_kept}"
    last = kept[max_kept - 1] if max_kept else None
    if last is not None and last.score == scored.score:
        # A score alike that of a paper kept: the rationale says what chose between them, not only the cap.
        note += f"; tied on score {scored.score} with {last.id}, kept: a tie goes to the lower id"
    return scored.model_copy(update={"decision": "REVIEW", "rationale": scored.rationale + note,
                                     "tags": [*scored.tags, "demoted-for-cap"]})


def score_batch(records: list[Record], protocol: ProtocolMeta, prior: list[Record], max_kept: int = 25,
                covered_in: Mapping[str, str] | None = None, thresholds: Thresholds = SEED_THRESHOLDS) -> Ranking:
    """Score and decide a batch of deduplicated records against the records kept in recent digests (`prior`),
    with the ISO week each was covered in (`covered_in`, by id) where known, under `thresholds`.

    The same records in any order, with `prior` in any order, give the same Ranking.
    """
    return rank(Scorer(protocol).assess_all(records, prior_index(prior, covered_in)), max_kept, thresholds)


def rank(assessments: list[Assessment], max_kept: int, thresholds: Thresholds = SEED_THRESHOLDS) -> Ranking:
    """Decide a batch of deduplicated papers from their assessments (`Scorer.assess_all`, under one protocol and
    one prior), with the cap and the thresholds: a Ranking depends on nothing else, so papers assessed once can be
    ranked in any grouping."""
    if max_kept < 0:
        raise ValueError(f"max_kept must be 0 or more, not {max_kept}")
    if not 0 <= thresholds.review_from <= thresholds.keep_from <= 100:
        raise ValueError(f"thresholds must be 0 <= review_from <= keep_from <= 100, not {thresholds}")
    with cycle_collection_paused():  # what a batch's ranking makes holds no reference cycle
        return _rank(assessments, max_kept, thresholds)


def _rank(assessments: list[Assessment], max_kept: int, thresholds: Thresholds) -> Ranking:
    repeated = sorted(key for key, count in Counter(assessment.id for assessment in assessments).items() if count > 1)
    if repeated:
        # Deduplication is the caller's (seed guardrail 6); two records under one id could not be ordered.
        raise ValueError(f"records must be deduplicated first; repeated id(s): {', '.join(repeated)}")
    alike: dict[tuple, tuple[Decision, int, Axes, str, tuple[str, ...]]] = {}
    decisions = [score_one(assessment, False, alike, thresholds) for assessment in assessments]
    stricter = len(_kept(decisions)) > max_kept
    if stricter:
        # Only the KEEPs are re-scored: the cap tightens the digest, and must not turn another
        # paper's REVIEW into a DROP because others filled it. Their rationale names the pass.
        decisions = [score_one(assessment, True, alike, thresholds) if scored.decision == "KEEP" else scored
                     for assessment, scored in zip(assessments, decisions, strict=True)]
    decisions.sort(key=lambda scored: (-scored.score, scored.id))
    kept = _kept(decisions)
    over = {scored.id for scored in kept[max_kept:]}  # decisions are by score, then id: the lowest KEEPs
    decisions = [_demote(scored, kept, max_kept) if scored.id in over else scored for scored in decisions]
    return Ranking(decisions=decisions, calibration=Calibration(
        kept=sum(scored.decision == "KEEP" for scored in decisions),
        review=sum(scored.decision == "REVIEW" for scored in decisions),
        dropped=sum(scored.decision == "DROP" for scored in decisions),
        force_dropped_already_covered=sum(a.novelty.covered for a in assessments),
        demoted_for_cap=len(over),
        stricter_pass_applied=stricter,
        in_scope_without_watchlist_term=sum(not a.match and a.fit.kind in IN_SCOPE_KINDS for a in assessments),
    ))
