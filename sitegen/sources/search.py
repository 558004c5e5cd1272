"""One query, several providers: compile or pass through, run each, deduplicate.

`run_strategy` runs one query against one provider and always returns an
outcome (a query a provider cannot express is an `unsupported` outcome, not an
error). `search` does that for several providers, merges what came back by
identity and orders it by reciprocal rank fusion of the providers' own orders
(`sitegen.records.fusion`, rrf-60-v1), each hit keeping the lanes and ranks
that found it. A query that breaks the grammar is the caller's mistake and
raises `QuerySyntaxError` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from sitegen.errors import OptionInvalid, SitegenError
from sitegen.records.citations import CitationQueryError, parse_citation_query
from sitegen.records.fusion import RANKING_VERSION, Hit, Lane, fuse
from sitegen.records.model import Record
from sitegen.records.providers import Source, label
from sitegen.sources import arxiv, crossref, europepmc, openalex, pubmed, query
from sitegen.sources.base import about, pages_before
from sitegen.sources.http import Fetcher
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings, unset_key_note
from sitegen.sources.snapshots import MODES, SnapshotStore
from sitegen.text import counted

# Each provider's search: (fetcher, settings, the query as it takes it, since=...) -> outcome.
PROVIDERS: dict[str, Callable[..., SourceOutcome]] = {
    "openalex": openalex.search, "europepmc": europepmc.search, "pubmed": pubmed.search,
    "crossref": crossref.search, "arxiv": arxiv.search,
}


def relevance_ranked(source: str, sent: Any) -> bool:
    """Whether `source` orders what it returns for `sent` (the query as it takes it) by relevance, which is what
    reciprocal rank fusion needs of a lane. The requests are not changed to ask for relevance order, so that
    recorded snapshots of saved searches keep replaying: arXiv's is sorted by submission date, PubMed's esearch
    is not asked for relevance order, and OpenAlex orders by relevance only when there is a `search` text
    (a filter-only query has no relevance score). Europe PMC and Crossref sort text queries by relevance."""
    if source == "openalex":
        return "search" in sent
    return source in ("europepmc", "crossref")


def open_fetcher(mode: str, snapshots: Path | None, session: str = "",
                 transport: httpx.BaseTransport | None = None) -> Fetcher:
    """A fetcher in live, record or replay mode; the last two use a review's snapshots/ folder."""
    if mode not in MODES:
        raise SitegenError(f"snapshot mode {mode!r} is not one of {', '.join(MODES)}")
    if mode == "live":
        return Fetcher("live", transport=transport)
    if snapshots is None:
        raise OptionInvalid("--snapshots", f"{mode} needs a review folder (--review DIR) whose snapshots/ it uses")
    return Fetcher(mode, SnapshotStore(snapshots), session, transport=transport)


def check_query(text: str, native: bool, given_as: str = "QUERY") -> None:
    """Raise OptionInvalid, naming what the query was `given_as` on the command line, that shows where a query
    breaks the grammar, or (native, sent as written) holds an invisible character the provider would search for:
    wrong in itself, whatever the review."""
    try:
        query.check_verbatim(text) if native else query.parse_query(text)
    except query.QuerySyntaxError as exc:
        said = str(exc) if given_as == "QUERY" else query.native_said(str(exc), "--syntax native")  # monitor add's
        raise OptionInvalid(given_as, f"query {said}\n  {text}\n  {' ' * (exc.position - 1)}"
                                      f"{'^' * max(1, exc.end - exc.position)}") from None


def check_strategy(source: Source, text: str, *, native: bool, method: str = "database") -> None:
    """Raise OptionInvalid (--strategy, --citations) when a strategy could never be sent to its provider,
    before it is saved."""
    if method == "citations":
        try:
            parse_citation_query(text)
        except CitationQueryError as exc:
            raise OptionInvalid("--citations", f"{text!r}: {exc}; nothing was saved") from None
        return
    check_query(text, native, "--strategy")
    try:
        query.provider_query(source, text, native=native)
    except query.UnsupportedQuery as exc:
        raise OptionInvalid("--strategy", f"{label(source)} cannot run this strategy ({exc}); nothing was "
                                          "saved") from None


def run_strategy(fetcher: Fetcher, settings: SourceSettings, source: Source, text: str, *, native: bool,
                 since: int | None = None, method: str = "database") -> SourceOutcome:
    """One saved strategy's outcome: a database searched with its query, or (method "citations") the citation
    graph followed from seed works, which only OpenAlex's graph serves and which no date limit narrows."""
    if method == "citations":
        return openalex.citation_search(fetcher, settings, parse_citation_query(text))
    try:
        sent = query.provider_query(source, text, native=native)
    except query.UnsupportedQuery as exc:
        return SourceOutcome(source=source, status="unsupported",
                             warnings=[f"{label(source)} cannot run this query: {exc}"])
    return PROVIDERS[source](fetcher, settings, sent, since=since)


SEMANTIC_LANE = "openalex-semantic"


@dataclass
class SearchResult:
    hits: list[Hit]  # fused order, best first
    outcomes: list[SourceOutcome]  # the database searches, one per provider
    retrieved: int  # records the database searches returned
    shortlist: SourceOutcome | None = None  # the opt-in OpenAlex semantic lane: candidates, not a database search
    unranked: list[str] = field(default_factory=list)  # lanes whose order is not by relevance (no RRF score)

    @property
    def records(self) -> list[Record]:
        return [hit.record for hit in self.hits]

    @property
    def complete(self) -> bool:
        return all(outcome.complete for outcome in self.lanes)

    @property
    def lanes(self) -> list[SourceOutcome]:
        return self.outcomes + ([self.shortlist] if self.shortlist is not None else [])

    def unreached(self) -> list[str]:
        """Sentences naming every lane whose slice of this search is unknown: the command's warnings, said once."""
        return [about(label(outcome.source), describe(outcome)) for outcome in self.outcomes if not outcome.complete] \
            + ([f"{SEMANTIC_LANE}: {describe(self.shortlist)}"] if self.shortlist and not self.shortlist.complete
               else [])

    def report(self) -> dict[str, Any]:
        """The shape `sitegen search --json` prints. The providers' totals are in `outcomes`, one per
        provider: they count different things and are never added up."""
        return {
            "ranking_version": RANKING_VERSION,
            "unranked_lanes": self.unranked,
            "records": [{**hit.record.model_dump(mode="json", by_alias=True, exclude_none=True),
                         "score": hit.score, "reasons": [reason.report() for reason in hit.reasons]}
                        for hit in self.hits],
            "warnings": [warning for outcome in self.lanes for warning in outcome.warnings],
            "sources": [outcome.source for outcome in self.outcomes if outcome.complete],
            "counts": {"retrieved": self.retrieved, "deduplicated": len(self.hits),
                       "duplicates_removed": self.retrieved + self.shortlisted - len(self.hits),
                       **({"shortlisted": self.shortlisted} if self.shortlist is not None else {})},
            "outcomes": [outcome.model_dump(mode="json", exclude={"records"}) for outcome in self.outcomes],
            **({"shortlist": {"lane": SEMANTIC_LANE, "candidate_limit": openalex.SEMANTIC_CANDIDATES,
                              **self.shortlist.model_dump(mode="json", exclude={"records"})}}
               if self.shortlist is not None else {}),
        }

    @property
    def shortlisted(self) -> int:
        return len(self.shortlist.records) if self.shortlist is not None else 0

    def summary(self) -> str:
        """The closing line of `sitegen search`: counts, and how the order was made."""
        shortlisted = f", {self.shortlisted} shortlisted by {SEMANTIC_LANE}" if self.shortlist is not None else ""
        unranked = (f"; {', '.join(self.unranked)} {'does' if len(self.unranked) == 1 else 'do'} not rank by "
                    "relevance, so adds no score, and what only they found comes last, by id") if self.unranked else ""
        return (f"{self.retrieved} retrieved by the database searches{shortlisted}, {len(self.hits)} after removing "
                f"duplicates, in fused order ({RANKING_VERSION}: the sum of 1/(60 + rank) over the relevance-ranked "
                f"lanes that found each{unranked})")


def check_sources(sources: list[str]) -> None:
    """OptionInvalid (--sources), before any request, unless every source is a provider sitegen searches."""
    unknown = [name for name in sources if name not in PROVIDERS]
    if unknown or not sources:
        raise OptionInvalid("--sources", f"unknown source(s) {', '.join(unknown) or '(none given)'}; choose from "
                                         f"{', '.join(PROVIDERS)}")


def search(fetcher: Fetcher, text: str, sources: list[str], *, native: bool = False, since: int | None = None,
           settings: SourceSettings | None = None, semantic: bool = False,
           progress: Callable[[str], None] = lambda message: None) -> SearchResult:
    """`text` run on every source, fused (rrf-60-v1); with `semantic`, OpenAlex's semantic shortlist (at
    most 50 works, sent the query's words without its grammar, and `since`) is one more lane, labelled as a shortlist throughout."""
    check_sources(sources)
    sources = list(dict.fromkeys(sources))  # a source named twice is searched once: it is one lane
    if settings is None:
        settings = SourceSettings.from_environment()
    check_query(text, native)  # a grammar error, or an invisible character, stops the search before any request
    if note := unset_key_note(sources + ["openalex"] * semantic, settings, fetcher.mode):
        progress(note)
    outcomes = []
    for source in sources:
        progress(f"searching {label(source)}...")
        outcome = run_strategy(fetcher, settings, source, text, native=native, since=since)
        progress(answered(label(source), outcome))
        outcomes.append(outcome)
    lanes = [Lane(outcome.source, outcome.records, ranked=_lane_ranked(outcome.source, text, native))
             for outcome in outcomes]
    shortlist = None
    if semantic:
        progress("asking OpenAlex for a semantic shortlist...")
        shortlist = openalex.semantic_shortlist(fetcher, settings, text if native else query.positive_words(text),
                                                since=since, ignored=[] if native else query.negative_terms(text))
        progress(f"{answered(SEMANTIC_LANE, shortlist)} (a shortlist, not a database search)")
        lanes.append(Lane(SEMANTIC_LANE, shortlist.records, shortlist=True))
    return SearchResult(fuse(lanes), outcomes, sum(len(outcome.records) for outcome in outcomes), shortlist,
                        [lane.name for lane in lanes if not lane.ranked and lane.records])


def _lane_ranked(source: str, text: str, native: bool) -> bool:
    try:
        return relevance_ranked(source, query.provider_query(source, text, native=native))
    except query.UnsupportedQuery:
        return False  # nothing was sent, so the lane is empty


def answered(name: str, outcome: SourceOutcome) -> str:
    """The progress line as a source answers: what it returned, when that is all of its answer; otherwise only how
    it fell short, since the command's warning says the rest where its results end (a warning is said once)."""
    if outcome.complete:
        return about(name, describe(outcome))
    status = "incomplete" if outcome.status == "ok" else outcome.status.replace("_", " ")
    return f"{name}: {status} (the warning below says more)"


def describe(outcome: SourceOutcome) -> str:
    """One line a person can act on: what the source said, or why its slice is not known this run."""
    name = label(outcome.source)
    if outcome.status == "ok":
        records = counted(len(outcome.records), "record")
        total = f" of {outcome.total} reported" if outcome.total is not None and outcome.total != len(outcome.records) \
            else ""
        if outcome.truncated:
            # What was read was capped either by SITEGEN_MAX_RECORDS or by the provider's own ceiling (PubMed's
            # 9,999, arXiv's 30,000), which no setting raises: the outcome's warnings say which, and how to read more.
            how = "; ".join(outcome.warnings) or "narrow the query to read them all"
            return (f"{records}{total}: not every {name} match was read, so new {name} records "
                    f"may be missing ({how})")
        if outcome.doubt:
            return f"{records}{total}, but {outcome.doubt}; new {name} records may be missing"
        if outcome.dropped:
            return (f"{records}{total}, but {counted(outcome.dropped, f'more {name} record')} could not "
                    "be read, so this slice is incomplete: " + "; ".join(outcome.warnings))
        return f"{records}{total}"
    if outcome.status == "unsupported":
        why = f" ({outcome.warnings[-1]})" if outcome.warnings else ""
        return f"not searched: the query cannot be expressed for this source{why}"
    why = f": {outcome.cause}" if outcome.cause is not None else ""
    if outcome.status == "auth_error":  # reached, but it refused the key: no waiting will change that
        return f"{name} refused access this run, so it was asked nothing more; new {name} records may be missing{why}"
    if pages := pages_before(outcome.executed_query):  # it answered, then failed part-way: not "not reached"
        return (f"{name} stopped on page {pages + 1} of its answer this run ({outcome.status.replace('_', ' ')}); "
                f"new {name} records may be missing{why}")
    return (f"{name} was not reached this run ({outcome.status.replace('_', ' ')}); "
            f"new {name} records may be missing{why}")
