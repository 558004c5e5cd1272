"""The searches page: each saved search with its strategies verbatim, its run history, every
run's manifest as a download, and its latest validation (relative recall against the studies
known to be relevant, `sitegen monitor validate`), missed studies linked to their pages.

A run's manifest is served byte for byte as its run wrote it (runs/ in the review).
A run recorded before sitegen wrote manifests gets one derived from the ledger,
which says so (`origin: ledger`) and is labelled on the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from sitegen.living.manifests import LastRun, RunRecord, compiled_query, run_records, strategy_runs
from sitegen.living.retirement import Retirement, SearchChange, retired_searches, search_histories
from sitegen.living.validation import latest_validations, percent
from sitegen.records.citations import MODES, Seed, parse_citation_query
from sitegen.review.models import ImportPayload, SavedSearch, Strategy, ValidationPayload

if TYPE_CHECKING:
    from sitegen.site.pages import Files, Site


@dataclass(frozen=True)
class SeedView:
    """One seed of a citation search: as written, and where to read about it (its record page when the review
    holds the work, else OpenAlex or the DOI resolver)."""

    seed: Seed
    page: str | None  # the record's page, from the site's root, when the review holds the work
    title: str | None  # that record's title
    url: str  # the work at OpenAlex (or its DOI)


@dataclass(frozen=True)
class CitationView:
    mode: str
    meaning: str  # what the mode finds
    seeds: list[SeedView]


@dataclass(frozen=True)
class StrategyView:
    strategy: Strategy
    # What the provider receives, for a strategy in sitegen's grammar (a native one is sent as saved).
    compiled: str | dict[str, str] | None
    citation: CitationView | None = None  # for a citation search
    # Its latest run, None when it never ran: a strategy saved or edited since is shown as such, never as
    # what the runs beside it sent.
    last_run: LastRun | None = None


@dataclass(frozen=True)
class ValidationView:
    """A saved search's latest validation as the ledger recorded it, with the pages of the studies it names."""

    at: str
    payload: ValidationPayload
    pages: dict[str, str]  # study id -> its record's page from the site's root, for the studies the review holds
    titles: dict[str, str]  # study id -> its record's title


@dataclass(frozen=True)
class SearchView:
    search: SavedSearch
    strategies: list[StrategyView]
    runs: list[RunRecord]  # newest first
    validation: ValidationView | None = None
    retired: Retirement | None = None  # when and why, for a search `update` no longer runs
    history: tuple[SearchChange, ...] = ()  # every retirement and reinstatement, oldest first

    @property
    def latest(self) -> RunRecord | None:
        return self.runs[0] if self.runs else None


def download_path(record: RunRecord) -> str:
    """Where the site serves a run's manifest: downloads/runs/<the file's name in the review>."""
    return f"downloads/{record.path}"


def citation_view(site: Site, strategy: Strategy) -> CitationView:
    """A citation search's mode and seeds, each seed linked to its record's page when the review holds the work."""
    query = parse_citation_query(strategy.query)
    held = {key: view for view in site.views for key in (view.record.custom.openalex, view.record.DOI) if key}
    seeds = []
    for seed in query.seeds:
        view = held.get(seed.openalex or seed.doi or "")
        url = f"https://openalex.org/{seed.openalex}" if seed.openalex \
            else f"https://doi.org/{quote(seed.doi or '', safe='/')}"
        seeds.append(SeedView(seed, f"records/{view.slug}.html" if view else None,
                              view.record.title if view else None, url))
    return CitationView(query.mode, MODES[query.mode], seeds)


def strategy_view(site: Site, strategy: Strategy, last_run: LastRun | None) -> StrategyView:
    if strategy.method == "citations":
        return StrategyView(strategy, None, citation_view(site, strategy), last_run)
    return StrategyView(strategy, compiled_query(strategy) if strategy.syntax == "sitegen" else None, None, last_run)


def validation_view(site: Site, monitor_id: str) -> ValidationView | None:
    latest = latest_validations(site.review).get(monitor_id)
    if latest is None:
        return None
    event, payload = latest
    held = [site.views_by_id[study] for study in payload.known if study in site.views_by_id]
    return ValidationView(event.ts, payload, {view.record.id: f"records/{view.slug}.html" for view in held},
                          {view.record.id: view.record.title for view in held})


def search_views(site: Site) -> list[SearchView]:
    records = run_records(site.review, site.facts.runs)
    retired, histories = retired_searches(site.review), search_histories(site.review)
    return [SearchView(search, [strategy_view(site, strategy, last) for strategy, last in
                                zip(search.strategies, strategy_runs(site.review, search), strict=True)],
                       [record for record in reversed(records) if record.run.monitor_id == monitor_id],
                       validation_view(site, monitor_id), retired.get(monitor_id),
                       tuple(histories.get(monitor_id, ())))
            for monitor_id, search in site.review.searches.items()]


def searches_pages(site: Site) -> Files:
    views = search_views(site)
    imports = [(event, payload) for event, payload in zip(site.review.ledger, site.review.payloads, strict=True)
               if isinstance(payload, ImportPayload)]
    yield "searches.html", site.page("searches.html", "searches.html", searches=views, imports=imports,
                                     download_path=download_path, percent=percent)
    for view in views:
        for record in view.runs:
            yield download_path(record), record.data
