"""The site's versions: a page per published version (`v/<N>/`), the list of them with their
changelogs (`versions.html`), the Atom feed, and the home page's "what's new" block.

Each version's page is rebuilt from its file and the ledger up to its head (see
`living.versions`): its own title and question, counts and diagram, included studies
and changelog, however the review has changed since. The root of the site is always
the review as it stands, and says whether that is its latest version.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from sitegen.living.prisma import PrismaCounts
from sitegen.living.versions import Changelog, DecisionChange, Snapshot
from sitegen.records.model import Record
from sitegen.review.models import VerificationPayload
from sitegen.review.write import pretty_json
from sitegen.screening.outcomes import Outcome
from sitegen.site import prisma_svg
from sitegen.site.feed import FEED_PATH, atom_feed
from sitegen.site.output import Page
from sitegen.site.records import page_window

if TYPE_CHECKING:  # pages.py lists this module's page group, so it cannot be imported from here at run time
    from sitegen.site.pages import Files, RecordView, Site

LISTED = 20  # changes listed by name in a list of versions; each version's own page lists them all
WHATS_NEW_LISTED = 10  # changes listed by name on the home page
VERSIONS_PER_PAGE = 10  # versions on each page of the list, newest first: a review published weekly for years has hundreds


@dataclass(frozen=True, slots=True)
class Named:
    """A record as a changelog names it: its title, authors and page; not its outcomes now, so that a page naming
    it (each version's, a page of the list of versions) keeps its key when a decision on it changes later."""

    record: Record
    slug: str
    authors_short: str


class NamedViews(dict[str, Named]):
    """Each record's `Named`, by id, made as a changelog first names it."""

    def __init__(self, views: dict[str, RecordView]):
        super().__init__()
        self.views = views

    def __missing__(self, record_id: str) -> Named:
        view = self.views[record_id]
        self[record_id] = named = Named(view.record, view.slug, view.authors_short)
        return named

    def by_title(self, record_id: str) -> tuple[str, str]:
        """Where a changelog lists a record: by title, then id. The id makes the order total, so that the first
        few by `heapq.nsmallest` are the first few of the whole list sorted."""
        return self.places([record_id])[0]

    def places(self, record_ids: list[str]) -> list[tuple[str, str]]:
        """Each record's place (`by_title`), made in one comprehension, not a call per record: the home page names
        10 of 100,000 new records."""
        views = self.views
        return [(views[record_id].record.title.casefold(), record_id) for record_id in record_ids]


T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class Leading(Generic[T]):
    """The first items of a list, in its order, and how many it has: a changelog a page shows cut short (the home
    page names 10 of 100,000 new records) holds these, not every item. Its length is the whole list's; only a
    slice of the items held can be read, so a page asking for more fails at once instead of showing fewer."""

    items: list[T]
    total: int

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, index: slice) -> list[T]:
        held = len(self.items)
        if (not isinstance(index, slice) or index.start or index.step not in (None, 1) or index.stop is None
                or index.stop < 0 or (index.stop > held and held < self.total)):
            raise IndexError(f"only the first {held} of {self.total} items are held, not [{index!r}]")
        return self.items[index]

    def map(self, function: Callable[[T], U]) -> Leading[U]:
        return Leading([function(item) for item in self.items], self.total)


@dataclass
class ChangelogView:
    """A changelog with each record it names resolved to its view (title, authors, page), and the
    outcomes of the snapshot it leads to (what its new records were decided)."""

    # Each list whole, or (a changelog made with a limit) its first items and its length.
    log: Changelog
    outcomes: dict[str, dict[str, Outcome]]
    new_records: list[Named] | Leading[Named]
    decisions: list[tuple[DecisionChange, Named]] | Leading[tuple[DecisionChange, Named]]
    studies_added: list[Named] | Leading[Named]
    studies_removed: list[Named] | Leading[Named]
    evidence_changed: list[Named] | Leading[Named]  # included before and after, with evidence added, changed or removed
    # Each record whose confirmation as a duplicate changed, the record it duplicated before and the one it does now
    duplicates_changed: (list[tuple[Named, Named | None, Named | None]]
                         | Leading[tuple[Named, Named | None, Named | None]])
    verifications: list[tuple[VerificationPayload, Named]] | Leading[tuple[VerificationPayload, Named]]
    reasons: dict[str, str] | None  # exclusion reason labels of the protocol the snapshot was published under


def _first(items: list[T], limit: int | None, key: Callable[[T], object] | None = None) -> list[T] | Leading[T]:
    """`items` (sorted by `key` when given), or the first `limit` of them and how many there are: as a sort cut
    short, `heapq.nsmallest` gives the same first ones (for equal keys too: both keep the items' order)."""
    if limit is None:
        return items if key is None else sorted(items, key=key)
    return Leading(items[:limit] if key is None else heapq.nsmallest(limit, items, key=key), len(items))


def _each(items: list[T] | Leading[T], function: Callable[[T], U]) -> list[U] | Leading[U]:
    return [function(item) for item in items] if isinstance(items, list) else items.map(function)


def _by_title(record_ids: list[str], views: NamedViews, limit: int | None = None) -> list[Named] | Leading[Named]:
    # Sorted by place (`NamedViews.places`), as `_first` sorts by a key: the places are unlike (the id is in each), so
    # the order, and the smallest few, are the same.
    places = views.places(record_ids)
    first = sorted(places) if limit is None else Leading(heapq.nsmallest(limit, places), len(places))
    return _each(first, lambda place: views[place[1]])


def changelog_view(log: Changelog, after: Snapshot, views: NamedViews, limit: int | None = None) -> ChangelogView:
    """`log` as a page names its records; with a `limit`, only each list's first `limit` (the home page's names
    10, and sorting 100,000 new records by title to name those took longer than the rest of the page)."""
    decisions = _first(log.decisions, limit, lambda change: (change.stage != "title-abstract",
                                                             *views.by_title(change.record_id)))
    new_records = _by_title(log.new_records, views, limit)
    shown = log.new_records if limit is None else [view.record.id for view in new_records[:limit]]
    # The outcomes of its new records shown only (all the changelog shows): a snapshot's are every record's.
    outcomes = {stage: {rid: decided[rid] for rid in shown if rid in decided}
                for stage, decided in after.outcomes.items()}

    def decision(change: DecisionChange) -> tuple[DecisionChange, Named]:
        return change, views[change.record_id]

    def duplicate(change: tuple[str, str | None, str | None]) -> tuple[Named, Named | None, Named | None]:
        rid, was, now = change
        return views[rid], was and views[was], now and views[now]

    def verification(event: tuple[object, VerificationPayload]) -> tuple[VerificationPayload, Named]:
        return event[1], views[event[1].record_id]

    return ChangelogView(log, outcomes, new_records, _each(decisions, decision),
                         _by_title(log.studies_added, views, limit), _by_title(log.studies_removed, views, limit),
                         _by_title(log.evidence_changed, views, limit),
                         _each(_first(log.duplicates_changed, limit), duplicate),
                         _each(_first(log.verifications, limit), verification), after.reasons)


def whats_new(site: Site) -> tuple[Snapshot | None, ChangelogView]:
    """What the home page shows as new: the changes since the latest version when the review has
    changed since, else what its latest version changed (and the version before it). Its lists hold the first
    `WHATS_NEW_LISTED` the page names, and their lengths."""
    history, views = site.history, NamedViews(site.views_by_id)
    if history.unpublished:
        return history.latest, changelog_view(history.since_latest, history.current, views, WHATS_NEW_LISTED)
    before = history.versions[-2] if len(history.versions) > 1 else None
    return before, changelog_view(history.changelogs[-1], history.versions[-1], views, WHATS_NEW_LISTED)


@dataclass(frozen=True)
class Listed:
    """A version as its page and the list of versions show it (not its snapshot, which holds the review as it
    stood: a page's key is made of what it shows)."""

    number: int
    published_at: str
    title: str
    question: str
    counts: PrismaCounts
    protocol_version: int

    @classmethod
    def of(cls, version: Snapshot) -> Listed:
        assert version.number is not None and version.published_at is not None  # a published version
        return cls(version.number, version.published_at, version.title, version.question, version.counts,
                   version.protocol_version)


def list_path(number: int) -> str:
    """The list of versions' page `number`: the first is versions.html, the page every footer links."""
    return "versions.html" if number == 1 else f"versions/{number}.html"


def list_pages(site: Site, entries: list[tuple[Snapshot, ChangelogView]]) -> Files:
    """The list of versions, newest first, `VERSIONS_PER_PAGE` to a page, each page keyed by what it shows."""
    history = site.history
    newest = [(Listed.of(version), changes) for version, changes in entries[::-1]]
    pages = max(1, math.ceil(len(newest) / VERSIONS_PER_PAGE))
    # Said on the first page alone: a page further on changes only when the versions on it do.
    unpublished = (history.latest.number, history.since_latest.summary()) if history.latest and history.unpublished else None
    for number in range(1, pages + 1):
        path = list_path(number)
        context = {"entries": newest[(number - 1) * VERSIONS_PER_PAGE:number * VERSIONS_PER_PAGE], "listed": LISTED,
                   "number": number, "pages": pages, "total": len(newest),
                   "window": [(n, list_path(n)) if n else None for n in page_window(number, pages)],
                   "previous": list_path(number - 1) if number > 1 else None,
                   "next": list_path(number + 1) if number < pages else None,
                   "unpublished": unpublished if number == 1 else None}
        yield site.keyed(path, "versions.html", **context)


def version_pages(site: Site) -> Files:
    history, views = site.history, NamedViews(site.views_by_id)
    entries = [(version, changelog_view(log, version, views))
               for version, log in zip(history.versions, history.changelogs, strict=True)]
    yield from list_pages(site, entries)
    for version, log in entries:
        folder = f"v/{version.number}"
        path = f"{folder}/index.html"
        latest = version is history.latest
        context = {"version": Listed.of(version), "changes": log,
                   "studies": _by_title(version.included, views),
                   "standing": "earlier" if not latest else "changed since" if history.unpublished else "latest",
                   "records_edited": version.records_digest is not None
                   and version.records_digest != history.current.records_digest}
        reasons = site.reasons if version.reasons is None else version.reasons
        # Keyed: a review published weekly for years has hundreds of these, each unchanged by the next version.
        yield Page(path, lambda path=path, context=context, counts=version.counts, reasons=reasons: site.page(
            path, "version.html", prisma=prisma_svg.render(counts, reasons), **context),
            site.keys.of("version.html", path, context, reasons))
        yield f"{folder}/prisma.json", pretty_json(version.counts.model_dump())
    if history.versions:
        yield FEED_PATH, atom_feed(history, site.review.config, site.views_by_id)
