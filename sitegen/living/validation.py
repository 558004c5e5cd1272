"""Search validation: do the saved searches retrieve the studies already known to be relevant?

Reviewers validate a search strategy by relative recall: of a set of studies known to be
relevant (here the review's included studies, plus any the protocol names in validation.csv),
the share the strategies retrieved. This module derives it from what the ledger recorded:
every `retrieval` event of a saved search, per strategy and over the strategies the search holds now
and their runs (`validate`, pure; earlier wordings are measured for information, never judged), and
records the check as a `validation` event (`record_validation`). A strategy that has not run, or none
of whose runs got the source's answer in full, is not measured: its gaps are no misses, and the
search's recall is then a lower bound that is never judged below the threshold.

A study counts as retrieved when a run returned its record, a record confirmed as its duplicate
(duplicates.csv), or a record carrying one of its identifiers. For each strategy that missed one,
the reasons that can be told from the review's own files are given; sitegen cannot ask an index
whether it holds a work (the check is offline, over recorded runs), so it never says "not indexed":
it says the source never returned the study in any run, which is what it knows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qsl

from sitegen.living.facts import ReviewFacts, Run
from sitegen.living.ledger import append, given_time
from sitegen.records.ids import record_id
from sitegen.records.model import Record
from sitegen.records.providers import label as provider_label
from sitegen.records.titles import folded, unmarked
from sitegen.review.folder import Review
from sitegen.review.models import (
    LedgerEvent,
    MissedStudy,
    MissReason,
    RetrievalPayload,
    SavedSearch,
    StrategyRecall,
    ValidationPayload,
    parse_timestamp,
)
from sitegen.review.transaction import Transaction
from sitegen.sources.query import And, Node, Or, Term, parse_query
from sitegen.text import counted

# A work's identifiers that say a source holds it: its own id there. Crossref is not listed: DataCite and other
# agencies register DOIs too, so a DOI tells nothing of Crossref, and a Crossref miss is never "never returned".
SOURCE_IDENTIFIERS = {"openalex": ("openalex",), "pubmed": ("pmid",), "europepmc": ("pmid", "pmcid"),
                      "arxiv": ("arxiv",)}

# Publication-date limits a native strategy can state, per source: (pattern, what its years are). A limit is
# claimed only when it binds every record the strategy can return (`date_limits`); a year that is searched for,
# negated, or one alternative of an OR, limits nothing and is no reason for a miss.
# "from"/"to" take one year, "range" two, "exact" one for both ends, "after"/"before" exclude the year given.
_Y = r"([12][0-9]{3})"
_PUBMED_DATE = r"(?:dp|pdat|date - publication)"
# OpenAlex and Crossref: one filter of the `filter` parameter (filters are comma-separated and all apply), whole.
FILTER_LIMITS: dict[str, list[tuple[re.Pattern[str], str]]] = {
    "openalex": [(re.compile(rf"from_publication_date:{_Y}(?:-[0-9]{{2}}){{0,2}}"), "from"),
                 (re.compile(rf"to_publication_date:{_Y}(?:-[0-9]{{2}}){{0,2}}"), "to"),
                 (re.compile(rf"publication_year:{_Y}-{_Y}"), "range"),
                 (re.compile(rf"publication_year:>{_Y}"), "after"),
                 (re.compile(rf"publication_year:<{_Y}"), "before"),
                 (re.compile(rf"publication_year:{_Y}"), "exact")],
    "crossref": [(re.compile(rf"from-pub-date:{_Y}(?:-[0-9]{{2}}){{0,2}}"), "from"),
                 (re.compile(rf"until-pub-date:{_Y}(?:-[0-9]{{2}}){{0,2}}"), "to")],
}
# PubMed, Europe PMC and arXiv: a date clause of a Boolean query.
BOOLEAN_LIMITS: dict[str, list[tuple[re.Pattern[str], str]]] = {
    "pubmed": [(re.compile(rf'"?{_Y}(?:/[0-9]{{1,2}}){{0,2}}"?\s*(?:\[{_PUBMED_DATE}\])?\s*:\s*"?{_Y}'
                           rf'(?:/[0-9]{{1,2}}){{0,2}}"?\s*\[{_PUBMED_DATE}\]', re.IGNORECASE), "range")],
    "europepmc": [(re.compile(rf"(?:PUB_YEAR|FIRST_PDATE|P_PDATE_D)\s*:\s*\[\s*{_Y}\S*\s+TO\s+{_Y}\S*\s*\]",
                              re.IGNORECASE), "range"),
                  (re.compile(rf"PUB_YEAR\s*:\s*{_Y}(?![0-9])", re.IGNORECASE), "exact")],
    "arxiv": [(re.compile(rf"submittedDate:\[{_Y}[0-9]*\s+TO\s+{_Y}[0-9]*\]"), "range")],
}
# What decides whether a date clause binds: quoted text and bracketed field tags skipped whole, then brackets and
# the Boolean operators (upper case, as PubMed, Europe PMC and arXiv read them).
_BOOLEAN_TOKEN = re.compile(r'"[^"]*"|\[[^\]]*\]|[()]|\b(?:AND|OR|NOT|ANDNOT)\b')
_NEGATED = re.compile(r"(?:\bNOT|\bANDNOT|(?<![\w:])-)\s*$")


def _top_level_or(text: str) -> tuple[bool, int]:
    """Whether `text` has an OR outside brackets, and its bracket depth at the end."""
    depth, has_or = 0, False
    for token in _BOOLEAN_TOKEN.finditer(text):
        depth += {"(": 1, ")": -1}.get(token.group(), 0)
        has_or |= depth == 0 and token.group() == "OR"
    return has_or, depth


def _years(kind: str, years: list[int]) -> tuple[int | None, int | None]:
    low = {"from": years[0], "range": years[0], "exact": years[0], "after": years[0] + 1}.get(kind)
    high = {"to": years[0], "range": years[-1], "exact": years[0], "before": years[0] - 1}.get(kind)
    return low, high


def _filter_limits(source: str, query: str) -> list[tuple[int | None, int | None]]:
    """The limits of the whole filters of an OpenAlex or Crossref query's `filter` parameter (a value with `|`
    is an OR, one starting `!` a NOT: neither limits)."""
    filters = [value for key, value in parse_qsl(query.lstrip("?")) if key == "filter"]
    limits = []
    for clause in (part.strip() for value in filters for part in value.split(",")):
        for pattern, kind in FILTER_LIMITS[source]:
            found = pattern.fullmatch(clause)
            if found:
                limits.append(_years(kind, [int(year) for year in found.groups()]))
                break
    return limits


def _boolean_limits(source: str, query: str) -> list[tuple[int | None, int | None]]:
    """The limit of a Boolean query's one date clause when it is ANDed at the top level: outside brackets, not
    negated, and no top-level OR makes it one alternative. More than one date clause: none (ambiguous)."""
    clauses = [(found, kind) for pattern, kind in BOOLEAN_LIMITS[source] for found in pattern.finditer(query)]
    if len(clauses) != 1:
        return []
    found, kind = clauses[0]
    before, after = query[:found.start()], query[found.end():]
    while re.search(r"\(\s*$", before) and re.match(r"\s*\)", after):  # brackets around the clause alone
        before, after = re.sub(r"\(\s*$", "", before), re.sub(r"^\s*\)", "", after)
    or_before, depth = _top_level_or(before)
    or_after, _ = _top_level_or(after)
    if depth != 0 or or_before or or_after or _NEGATED.search(before):
        return []
    return [_years(kind, [int(year) for year in found.groups()])]


def date_limits(source: str, query: str) -> tuple[int | None, int | None]:
    """The first and last publication year a native strategy's own filters bind every result to (None: no
    limit it states unambiguously)."""
    limits = (_filter_limits(source, query) if source in FILTER_LIMITS
              else _boolean_limits(source, query) if source in BOOLEAN_LIMITS else [])
    first = max((low for low, _ in limits if low is not None), default=None)
    last = min((high for _, high in limits if high is not None), default=None)
    return first, last


def _limits(first: int | None, last: int | None) -> str:
    if first == last:
        return str(first)
    return f"from {first}" if last is None else f"up to {last}" if first is None else f"{first}–{last}"


def _searched_terms(node: Node) -> Iterator[Term]:
    """The terms a record must hold some of to match (none under a NOT; author names are no title words)."""
    if isinstance(node, Term):
        if node.field != "author":
            yield node
    elif isinstance(node, And | Or):
        for child in node.children:
            yield from _searched_terms(child)
    # a Not's terms are what a match must lack


# Endings providers' stemming and plural handling ignore ("rat" finds "rats", "infection" "infected"), longest
# first; a stem keeps at least three letters so that short words are compared whole.
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s", "y", "e")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def _holds(text: str, term: str) -> bool:
    """Whether the folded `text` holds the folded `term`'s words in order, each word compared by its stem."""
    words, wanted = [_stem(word) for word in text.split()], [_stem(word) for word in term.split()]
    return bool(wanted) and any(words[at:at + len(wanted)] == wanted for at in range(len(words) - len(wanted) + 1))


def missing_terms(query: str, record: Record) -> list[str] | None:
    """The terms of a strategy in sitegen's grammar when it has title or abstract terms and none of them is in the
    record's title or abstract (as each term's field says: title:, abstract:, or either), compared as folded
    words allowing for endings (plurals, -ing, -ed, …); None when one is, or when it has no such term."""
    terms = [term for term in dict.fromkeys(_searched_terms(parse_query(query))) if folded(term.text)]
    title, abstract = folded(unmarked(record.title)), folded(unmarked(record.abstract or ""))
    where = {"title": (title,), "abstract": (abstract,), None: (title, abstract)}
    if not terms or any(_holds(text, folded(term.text)) for term in terms for text in where.get(term.field, ())):
        return None
    return [term.text for term in terms]


def _where(query: str) -> str:
    """Where a strategy's terms were looked for, in words: its fields when every term names the same one."""
    fields = {term.field for term in _searched_terms(parse_query(query))}
    return {frozenset({"title"}): "title", frozenset({"abstract"}): "abstract"}.get(frozenset(fields),
                                                                                  "title or abstract")


@dataclass(frozen=True)
class Known:
    """The known-relevant studies, by record id, and how every identifier the review's records carry maps
    to the study it belongs to."""

    studies: list[str]
    listed: list[str]  # named by validation.csv
    study_of: dict[str, str]  # any record id or identifier (as a record id) -> the canonical record's id


def known_relevant(review: Review, facts: ReviewFacts) -> Known:
    duplicates = facts.duplicates
    study_of: dict[str, str] = {}
    for record in review.records.values():
        canonical = duplicates[record.id].canonical if record.id in duplicates else record.id
        study_of[record.id] = canonical
        for namespace, value in record.identity_keys().items():
            study_of.setdefault(record_id({namespace: value}) or record.id, canonical)
    listed = [study_of.get(row.study.record_id, row.study.record_id) for row in review.validation]
    included = [study_of.get(rid, rid) for rid in facts.included]
    return Known(sorted(set(included) | set(listed)), sorted(set(listed)), study_of)


@dataclass
class _Strategy:
    source: str
    query: str
    method: str
    label: str | None
    syntax: str | None  # known for the saved search's current strategies
    current: bool
    runs: list[RetrievalPayload]


def _strategies(search: SavedSearch, runs: list[Run]) -> list[_Strategy]:
    """The search's current strategies, then any earlier wording its runs recorded, each with its runs."""
    found: dict[tuple[str, str, str], _Strategy] = {}
    for strategy in search.strategies:
        method = "other" if strategy.method == "citations" else "database"
        found.setdefault((strategy.source, strategy.query, method), _Strategy(
            strategy.source, strategy.query, method, strategy.label, strategy.syntax, True, []))
    for run in runs:
        for payload in run.strategies:
            key = (payload.source, payload.query, payload.method)
            found.setdefault(key, _Strategy(payload.source, payload.query, payload.method, payload.label, None,
                                            False, [])).runs.append(payload)
    return list(found.values())


def _reasons(strategy: _Strategy, study: str, review: Review, facts: ReviewFacts) -> list[MissReason]:
    record = review.records.get(study)
    if record is None:
        return [MissReason(code="not-in-records", detail="no run of any search or import retrieved it: no record "
                                                         "of the review carries this identifier")]
    name = provider_label(strategy.source)
    reasons = []
    first, last = date_limits(strategy.source, strategy.query) if strategy.syntax != "sitegen" else (None, None)
    if record.year is not None and ((first is not None and record.year < first)
                                    or (last is not None and record.year > last)):
        reasons.append(MissReason(code="outside-dates", detail=f"published in {record.year}, outside the "
                                                               f"strategy's date limits ({_limits(first, last)})"))
    if strategy.syntax == "sitegen" and strategy.method == "database":
        terms = missing_terms(strategy.query, record)
        if terms is not None:
            reasons.append(MissReason(code="no-term", detail=f"none of the strategy's words ({', '.join(terms)}) "
                                      f"appear in its {_where(strategy.query)} as sitegen reads them"))
    returned = any(sighting.source == strategy.source for sighting in facts.sightings.get(study, []))
    holds = strategy.source in record.custom.sources or any(
        namespace in record.identifiers() for namespace in SOURCE_IDENTIFIERS.get(strategy.source, ()))
    if strategy.source in SOURCE_IDENTIFIERS and not returned and not holds:
        reasons.append(MissReason(code="never-returned", detail=f"not retrieved from {name}, which never "
                                                                f"returned it in any run"))
    incomplete = sum(not payload.complete for payload in strategy.runs)
    if incomplete:
        reasons.append(MissReason(code="incomplete-runs", detail=f"{incomplete} of its "
                                  f"{counted(len(strategy.runs), 'run')} did not get {name}'s answer in full"))
    return reasons or [MissReason(code="unknown", detail="not retrieved (reason unknown)")]


def _not_measured(strategy: _Strategy) -> str | None:
    """Why a strategy's recall cannot be measured, when it cannot: a run that did not get the source's answer
    in full (an error, a timeout, a rate limit) says nothing of what the source holds."""
    if not strategy.runs:
        return "it has not run"
    if all(not payload.complete for payload in strategy.runs):
        return (f"none of its {counted(len(strategy.runs), 'run')} got {provider_label(strategy.source)}'s answer in full")
    return None


def validate_search(review: Review, facts: ReviewFacts, search: SavedSearch, known: Known) -> ValidationPayload:
    """The saved search's recall is judged on the strategies it holds now; earlier wordings that ran are
    measured too, for information."""
    runs = [run for run in facts.runs if run.monitor_id == search.monitor_id]
    strategies = []
    retrieved_now: set[str] = set()
    for strategy in _strategies(search, runs):
        retrieved = {known.study_of.get(rid, rid) for payload in strategy.runs for rid in payload.record_ids}
        if strategy.current:
            retrieved_now |= retrieved
        not_measured = _not_measured(strategy)
        missed = [] if not_measured else [MissedStudy(study=study, reasons=_reasons(strategy, study, review, facts))
                                          for study in known.studies if study not in retrieved]
        strategies.append(StrategyRecall(
            source=strategy.source, label=strategy.label, query=strategy.query, method=strategy.method,
            current=strategy.current, runs=len(strategy.runs),
            incomplete_runs=sum(not payload.complete for payload in strategy.runs),
            found=sum(study in retrieved for study in known.studies), not_measured=not_measured, missed=missed))
    missed = [study for study in known.studies if study not in retrieved_now]
    return ValidationPayload(monitor_id=search.monitor_id, threshold=review.protocol.meta.validation_recall,
                             known=known.studies, listed=known.listed, found=len(known.studies) - len(missed),
                             strategies=strategies, missed=missed)


def validate(review: Review, facts: ReviewFacts, monitor_id: str | None = None) -> list[ValidationPayload]:
    """One validation per saved search (or only `monitor_id`'s), from the runs the ledger recorded."""
    known = known_relevant(review, facts)
    return [validate_search(review, facts, search, known) for search in review.searches.values()
            if monitor_id is None or search.monitor_id == monitor_id]


def record_validation(review: Review, payloads: list[ValidationPayload], at: str) -> list[LedgerEvent]:
    """Append one `validation` event per saved search, dated `at`, in one transaction; a validation the ledger
    already holds at that instant (the command run again) is not recorded twice."""
    latest = latest_validations(review)
    instant = given_time(at)
    new = [payload for payload in payloads if not (
        (held := latest.get(payload.monitor_id)) and parse_timestamp(held[0].ts) == instant and held[1] == payload)]
    if not new:
        return []
    transaction = Transaction(review.root)
    events = append(transaction, review, at, new)
    transaction.commit()
    return events


def latest_validations(review: Review) -> dict[str, tuple[LedgerEvent, ValidationPayload]]:
    """Saved search id -> its latest `validation` event and payload."""
    return {payload.monitor_id: (event, payload) for event, payload in zip(review.ledger, review.payloads, strict=True)
            if isinstance(payload, ValidationPayload)}


def percent(found: int, known: int) -> str:
    """A share to one decimal, rounded down, so that it never reads as reaching a threshold it falls short of
    (35 of 39 is "89.7%", not "90%")."""
    return f"{math.floor(1000 * found / known) / 10:.1f}%" if known else "n/a"


def summary_lines(payload: ValidationPayload) -> list[str]:
    """The validation in words, for the command line."""
    known = len(payload.known)
    if not known:
        return [f"{payload.monitor_id}: no study is known to be relevant yet (no included study, no validation.csv): "
                "recall cannot be measured"]
    bound = "at least " if payload.not_measured else ""
    lines = [f"{payload.monitor_id}: relative recall {bound}{payload.found}/{known} ({bound}"
             f"{percent(payload.found, known)}) of the known-relevant studies (the included studies and "
             f"{len(payload.listed)} listed in validation.csv) by its current strategies; threshold "
             f"{percent(round(1000 * payload.threshold), 1000)}"]
    lines += [f"  not measured: {provider_label(strategy.source)}: {strategy.not_measured}; the recall is a lower "
              "bound and is not judged against the threshold" for strategy in payload.not_measured]
    for strategy in payload.strategies:
        name = provider_label(strategy.source) + (f" ({strategy.label})" if strategy.label else "")
        state = "" if strategy.current else ", an earlier wording (for information: not judged)"
        measured = f"not measured: {strategy.not_measured}; " if strategy.not_measured else ""
        lines.append(f"  {name}{state}: {measured}{strategy.found}/{known} ({percent(strategy.found, known)}) over "
                     f"{counted(strategy.runs, 'run')}")
        for miss in strategy.missed:
            lines.append(f"    missed {miss.study}: {'; '.join(reason.detail for reason in miss.reasons)}")
    return lines
