"""The searches page: each saved search with its strategies verbatim, its run history, and every
run's manifest as a download.

A run's manifest is served byte for byte as its run wrote it (runs/ in the review).
A run recorded before sitegen wrote manifests gets one derived from the ledger,
which says so (`origin: ledger`) and is labelled on the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sitegen.living.manifests import RunRecord, compiled_query, run_records
from sitegen.review.models import SavedSearch, Strategy

if TYPE_CHECKING:
    from sitegen.site.pages import Files, Site


@dataclass(frozen=True)
class StrategyView:
    strategy: Strategy
    # What the provider receives, for a strategy in sitegen's grammar (a native one is sent as saved).
    compiled: str | dict[str, str] | None


@dataclass(frozen=True)
class SearchView:
    search: SavedSearch
    strategies: list[StrategyView]
    runs: list[RunRecord]  # newest first

    @property
    def latest(self) -> RunRecord | None:
        return self.runs[0] if self.runs else None


def download_path(record: RunRecord) -> str:
    """Where the site serves a run's manifest: downloads/runs/<the file's name in the review>."""
    return f"downloads/{record.path}"


def search_views(site: Site) -> list[SearchView]:
    records = run_records(site.review, site.facts.runs)
    return [SearchView(search,
                       [StrategyView(s, compiled_query(s) if s.syntax == "sitegen" else None) for s in search.strategies],
                       [record for record in reversed(records) if record.run.monitor_id == monitor_id])
            for monitor_id, search in site.review.searches.items()]


def searches_pages(site: Site) -> Files:
    views = search_views(site)
    yield "searches.html", site.page("searches.html", "searches.html", searches=views,
                                     download_path=download_path)
    for view in views:
        for record in view.runs:
            yield download_path(record), record.data
