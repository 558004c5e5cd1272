"""The site's versions: a page per published version (`v/<N>/`), the list of them with their
changelogs (`versions.html`), the Atom feed, and the home page's "what's new" block.

Each version's page is rebuilt from its file and the ledger up to its head (see
`living.versions`): its own title and question, counts and diagram, included studies
and changelog, however the review has changed since. The root of the site is always
the review as it stands, and says whether that is its latest version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

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


@dataclass
class ChangelogView:
    """A changelog with each record it names resolved to its view (title, authors, page), and the
    outcomes of the snapshot it leads to (what its new records were decided)."""

    log: Changelog
    outcomes: dict[str, dict[str, Outcome]]
    new_records: list[Named]
    decisions: list[tuple[DecisionChange, Named]]
    studies_added: list[Named]
    studies_removed: list[Named]
    evidence_changed: list[Named]  # included before and after, with evidence added, changed or removed
    # Each record whose confirmation as a duplicate changed, the record it duplicated before and the one it does now
    duplicates_changed: list[tuple[Named, Named | None, Named | None]]
    verifications: list[tuple[VerificationPayload, Named]]
    reasons: dict[str, str] | None  # exclusion reason labels of the protocol the snapshot was published under


def _by_title(views: list[Named]) -> list[Named]:
    return sorted(views, key=lambda view: (view.record.title.casefold(), view.record.id))


def changelog_view(log: Changelog, after: Snapshot, views: dict[str, Named]) -> ChangelogView:
    decisions = sorted(((change, views[change.record_id]) for change in log.decisions),
                       key=lambda pair: (pair[0].stage != "title-abstract", pair[1].record.title.casefold(),
                                         pair[1].record.id))
    # The outcomes of its new records only (all the changelog shows): a snapshot's are every record's.
    outcomes = {stage: {rid: decided[rid] for rid in log.new_records if rid in decided}
                for stage, decided in after.outcomes.items()}
    return ChangelogView(log, outcomes, _by_title([views[rid] for rid in log.new_records]), decisions,
                         _by_title([views[rid] for rid in log.studies_added]),
                         _by_title([views[rid] for rid in log.studies_removed]),
                         _by_title([views[rid] for rid in log.evidence_changed]),
                         [(views[rid], was and views[was], now and views[now])
                          for rid, was, now in log.duplicates_changed],
                         [(payload, views[payload.record_id]) for _, payload in log.verifications],
                         after.reasons)


def whats_new(site: Site) -> tuple[Snapshot | None, ChangelogView]:
    """What the home page shows as new: the changes since the latest version when the review has
    changed since, else what its latest version changed (and the version before it)."""
    history, views = site.history, NamedViews(site.views_by_id)
    if history.unpublished:
        return history.latest, changelog_view(history.since_latest, history.current, views)
    before = history.versions[-2] if len(history.versions) > 1 else None
    return before, changelog_view(history.changelogs[-1], history.versions[-1], views)


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
                   "studies": _by_title([views[rid] for rid in version.included]),
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
