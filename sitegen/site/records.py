"""The records lists and a page per record.

Every identified record is listed with its identifiers, sources, batch, outcome
at each stage and relevance score, in pages of `PAGE_SIZE`: the whole list,
and one list per filter (where a record stands in screening, each full-text
exclusion reason, each batch). Every page is a complete HTML page that works
without JavaScript and from disk; `assets/records-filter.js` only adds a quick
text filter within a page. A record is on exactly one page of each list it
belongs to (the whole list, its standing, its reason, its batch), so the lists
grow in step with the review and no page grows with it: at 100,000 records no
page holds more than `PAGE_SIZE` rows, and each page's navigation is bounded too.

Lists run newest batch first (what arrived last is what a reader looks for),
then by title, then by id, so the order never depends on the order of the files.

A record's own page tells its whole story: identifiers, every source and run
that returned it (from the ledger), its batch and relevance score, each
reviewer's decision at each stage and the outcome, and its study page once it
is included; or, for a confirmed duplicate, the record it duplicates, which
lists its duplicates in turn.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markupsafe import Markup

from sitegen.living.duplicates import duplicates_of
from sitegen.living.sightings import Sighting
from sitegen.records.titles import title_key
from sitegen.review.models import utc_day
from sitegen.screening.outcomes import NOT_RETRIEVED, Outcome
from sitegen.screening.relevance import Scored
from sitegen.screening.standing import STANDINGS, StageHistory, Standing, StandingKind
from sitegen.screening.status import Batch
from sitegen.site.keys import digested_once
from sitegen.site.output import Page
from sitegen.site.record_page import RecordRows, record_content
from sitegen.site.studies import notices

if TYPE_CHECKING:  # pages.py lists this module's page group, so it cannot be imported from here at run time
    from sitegen.site.pages import Files, RecordView, Site

PAGE_SIZE = 250
NEAR_PAGES = 2  # page links shown on each side of the current page, besides the first and the last
RECENT_BATCHES = 12  # batch filters on each list page; records.html lists them all
ALL = "all"
IMPORTED = "imported"  # the records that came in outside any screening batch
ROWS_SLOT = "\x00rows\x00"  # where a list page's rows go (`list_page`): no review's text is expected to hold it

STANDING_LABELS: dict[StandingKind, str] = {
    "included": "Included",
    "excluded-title-abstract": "Excluded at title and abstract",
    "excluded-full-text": "Excluded at full text",
    "not-retrieved": "Full text not retrieved, not assessed",
    "conflict": "Reviewers disagree, awaiting adjudication",
    "awaiting": "Awaiting a decision",
    "duplicate": "Duplicates of other records, not screened",
}


# A stage's history is shared by the records decided alike there (`screening_histories`): digested once, a record's
# page key holds its digest, not the reviewers' decisions, its outcome and itself written out for each record.
digested_once(StageHistory)
# Outcomes and standings are shared too (`outcomes._outcome`, `standing._standing`), a few for 100,000 records: digested
# once, an entry's digest holds theirs, not each one's fields written out for each record.
digested_once(Outcome)
digested_once(Standing)


@digested_once
class Sightings(tuple[Sighting, ...]):
    """A record's sightings, as its page and its rows show them: one value, digested once, shared by the records the
    same runs returned, as the runs' sightings are (`living.sightings`); not a list of four written out in each."""

    __slots__ = ()


def shared_sightings(sightings: dict[str, list[Sighting]]) -> dict[str, Sightings]:
    """Record id -> its sightings, one `Sightings` for the records that hold the very same sightings."""
    shared: dict[tuple[int, ...], Sightings] = {}
    found: dict[str, Sightings] = {}
    for record_id, seen in sightings.items():
        key = tuple(map(id, seen))
        value = shared.get(key)
        if value is None:
            value = shared[key] = Sightings(seen)
        found[record_id] = value
    return found


NO_SIGHTINGS = Sightings()


@digested_once  # on the record's page and on every list page holding it
@dataclass(frozen=True, slots=True)
class Entry:
    """One record as the lists and its page show it."""

    view: RecordView
    batch: Batch  # records that came in outside a screening batch are in the loose group, numbered None
    standing: Standing
    relevance: Scored | None  # None for a confirmed duplicate: not screened, so not ranked
    sightings: Sightings
    notices: list[str]  # what the sources say of its standing (`studies.notices`): on its page and on its row

    @property
    def sources(self) -> list[str]:
        """The providers that returned the record, in the order they first did."""
        return list(dict.fromkeys(sighting.source for sighting in self.sightings))


def list_path(key: str, number: int) -> str:
    # The whole list's first page is records.html, the page the site's navigation links.
    return "records.html" if key == ALL and number == 1 else f"records/list/{key}/{number}.html"


@dataclass(frozen=True)
class Filter:
    """One list as every list page's filters show it: its name, how many records it holds, its pages."""

    key: str  # the folder of its pages: "all", a standing, "reason-<code>", "batch-<n>", "imported"
    label: str  # as the page's heading says it
    count: int | None  # None in the filters of a list page: a decision changes counts, and should not change every page
    pages: int
    link_text: str = ""  # as the filter's link says it, where shorter than the label

    @property
    def name(self) -> str:
        return self.link_text or self.label

    def path(self, number: int) -> str:
        return list_path(self.key, number)


@dataclass(frozen=True, eq=False)  # compared by identity: two filters may hold the same records
class Listing:
    """One filter of the records list, with the records it holds, in list order."""

    key: str
    label: str
    entries: list[Entry]
    link_text: str = ""

    @property
    def pages(self) -> int:
        # The whole list has a first page even with no records (it says so); a filter without
        # records has no pages and is shown without a link.
        return max(1, math.ceil(len(self.entries) / PAGE_SIZE)) if self.key == ALL or self.entries else 0

    def path(self, number: int) -> str:
        return list_path(self.key, number)

    def page_entries(self, number: int) -> list[Entry]:
        return self.entries[(number - 1) * PAGE_SIZE:number * PAGE_SIZE]

    def filter(self, counted: bool = True) -> Filter:
        return Filter(self.key, self.label, len(self.entries) if counted else None, self.pages, self.link_text)


@dataclass(frozen=True)
class Filters:
    """Every list: the whole one, by standing (with full-text reasons under their standing), by batch."""

    all: Listing
    standings: list[Listing]
    reasons: list[Listing]
    batches: list[Listing]  # newest first

    @property
    def listings(self) -> list[Listing]:
        return [self.all, *self.standings, *self.reasons, *self.batches]


@dataclass(frozen=True)
class Navigation:
    """The filters as a list page shows them (names, counts, links): what its key depends on, not the
    records of every list."""

    all: Filter
    standings: list[Filter]
    reasons: list[Filter]
    batches: list[Filter]


def list_page(site: Site, path: str, context: dict, entries: list[Entry], rows: RecordRows,
              shown_filters: dict[tuple[bool, str], Markup]) -> bytes:
    """A list page, as the UTF-8 the build writes: the template rendered around a slot for the rows, which are
    joined in as bytes (a page is a quarter of a megabyte of rows; its template, a few kilobytes).

    Its filters are written once for every page of its list (`shown_filters`, the list's): each shows them alike
    (the same filters, batches and current list, from the same folder), but records.html, which counts them."""
    root = "../" * path.count("/")
    filters_key = (path == "records.html", root)
    filters_html = shown_filters.get(filters_key)
    if filters_html is None:
        filters_html = shown_filters[filters_key] = Markup(site.env.get_template("_record_filters.html").render(
            root=root, listing=context["listing"], filters=context["filters"], shown_batches=context["shown_batches"]))
    context = {**context, "filters_html": filters_html}
    written = rows.encoded(entries, root)
    if written:  # with no rows, the template writes none (it says there are none)
        parts = site.page(path, "records.html", rows=len(entries), rows_html=Markup(ROWS_SLOT), **context).split(ROWS_SLOT)
        if len(parts) == 2:
            # One join makes the page: the head joined to the first row, the tail to the last, the rows one a line.
            written = [parts[0].encode("utf-8") + written[0], *written[1:]]
            written[-1] += parts[1].encode("utf-8")
            return b"\n".join(written)
    # No rows, or the slot's text in the review's own too (a reason's label): the page is rendered with its rows in
    # place, as it always was, and no text of the review's is taken for the slot.
    return site.page(path, "records.html", rows=len(entries), rows_html=Markup(b"\n".join(written).decode("utf-8")),
                     **context).encode("utf-8")


def list_order(entry: Entry) -> tuple:
    # The title's key spread into the tuple, not nested in it: the same order, each comparison one tuple's.
    return (-(entry.batch.number or 0), *title_key(entry.view.record.title), entry.view.record.id)


def page_window(current: int, total: int) -> list[int | None]:
    """The page numbers to link from page `current` of `total`: the first, the last and those near the
    current one, with None where numbers are left out. Bounded, however many pages there are."""
    shown = sorted({1, total, *range(max(1, current - NEAR_PAGES), min(total, current + NEAR_PAGES) + 1)})
    window: list[int | None] = []
    for number in shown:
        previous = window[-1] if window else number
        if number - previous == 2:  # a gap of one page: its number takes no more room than the gap
            window.append(number - 1)
        elif number - previous > 2:
            window.append(None)
        window.append(number)
    return window


def batch_label(batch: Batch) -> str:
    if batch.number is None:
        return "Imported outside a batch"
    return f"Batch {batch.number}" + (f" ({utc_day(batch.created)})" if batch.created else "")


def entries(site: Site) -> list[Entry]:
    """Every record, in list order."""
    facts = site.facts
    batch_of: dict[str, Batch] = {}
    for batch in facts.screening.batches:
        for record_id in batch.record_ids:
            batch_of.setdefault(record_id, batch)
    relevance = {scored.id: scored for ranking in site.rankings.values() for scored in ranking.decisions}
    sighted = shared_sightings(facts.sightings)
    found = [Entry(view, batch_of[view.record.id], facts.standings[view.record.id], relevance.get(view.record.id),
                   sighted.get(view.record.id, NO_SIGHTINGS), notices(view.record, "record")) for view in site.views]
    return sorted(found, key=list_order)


def filters(site: Site, listed: list[Entry]) -> Filters:
    by_standing: dict[StandingKind, list[Entry]] = {kind: [] for kind in STANDINGS}
    for entry in listed:  # one pass, in list order
        by_standing[entry.standing.kind].append(entry)
    excluded = by_standing["excluded-full-text"]
    # Every reason the protocol defines is a filter (an empty one shows its 0); a code the protocol no
    # longer defines still lists the records excluded with it. Reports not retrieved have their own filter.
    codes = list(dict.fromkeys([*(code for code in site.reasons if code != NOT_RETRIEVED),
                                *sorted(e.standing.reason for e in excluded)]))
    reasons = [Listing(f"reason-{code}", f"Excluded at full text: {site.reasons.get(code, code)}",
                       [e for e in excluded if e.standing.reason == code], site.reasons.get(code, code))
               for code in codes]
    in_batch: dict[int | None, list[Entry]] = {}
    for entry in listed:
        in_batch.setdefault(entry.batch.number, []).append(entry)
    batches = sorted(site.facts.screening.batches, key=lambda b: -1 if b.number is None else b.number, reverse=True)
    by_batch = [Listing(IMPORTED if b.number is None else f"batch-{b.number}", batch_label(b), in_batch.get(b.number, []))
                for b in batches]
    return Filters(Listing(ALL, "All records", listed),
                   [Listing(kind, STANDING_LABELS[kind], by_standing[kind]) for kind in STANDINGS], reasons, by_batch)


def record_pages(site: Site) -> Files:
    """records.html and the other pages of every list, and a page per record."""
    listed = entries(site)
    lists = filters(site, listed)
    # Every list's count is on records.html; the other pages name the filters without counts, so that a
    # decision changes the pages of the lists it moves a record between, not every page of every list.
    counted, uncounted = (Navigation(lists.all.filter(counted), [item.filter(counted) for item in lists.standings],
                                     [item.filter(counted) for item in lists.reasons],
                                     [item.filter(counted) for item in lists.batches]) for counted in (True, False))
    # The whole list says how many of its records are confirmed duplicates, which PRISMA does not count.
    duplicates = next(len(item.entries) for item in lists.standings if item.key == "duplicate")
    rows = RecordRows(site.reasons)  # each record's row, written once for every list holding it
    # A list page's key holds its records' entries as their digests, each made once and read here by the page's
    # 250 (each entry is on three or four lists' pages), not asked of the keys by each page for each of its entries.
    digests = {id(entry): site.keys.digest(entry) for entry in listed}
    for listing in lists.listings:
        shown_filters: dict[tuple[bool, str], Markup] = {}  # its pages' filters, written once for them (`list_page`)
        for number in range(1, listing.pages + 1):
            path = listing.path(number)
            navigation = counted if path == "records.html" else uncounted
            shown_list = listing.filter(path == "records.html")
            shown_batches = navigation.batches if path == "records.html" else navigation.batches[:RECENT_BATCHES]
            if shown_list in navigation.batches and shown_list not in shown_batches:  # the current batch is always shown
                shown_batches = [*shown_batches, shown_list]
            context = {"listing": shown_list, "total": len(listing.entries), "number": number, "filters": navigation,
                       "duplicates": duplicates if listing is lists.all else 0,
                       "shown_batches": shown_batches,
                       "window": page_window(number, listing.pages), "first_row": (number - 1) * PAGE_SIZE + 1,
                       "rows_per_page": PAGE_SIZE}
            page_entries = listing.page_entries(number)
            yield Page(path, functools.partial(list_page, site, path, context, page_entries, rows, shown_filters),
                       site.keys.of("records.html", path, context, [digests[id(entry)] for entry in page_entries]),
                       alone=True)
    # The lists together read every record: they are rendered by the building process alone (see `Page.alone`),
    # which writes each row once. The rows are held by the list pages alone from here on, and freed with them once
    # they are written (at 100,000 records, 70 MB the process and every one forked after it would hold to the end).
    del rows
    confirmed = site.facts.duplicates
    canonical_of = duplicates_of(confirmed)
    for entry in listed:
        path = f"records/{entry.view.slug}.html"
        record_id = entry.view.record.id
        duplicate = confirmed.get(record_id)
        # Titles repeat (errata, editorials, a preprint and its article; the study page of the same record): its
        # kind and id make the page's <title> its own in a tab, a bookmark and a search engine's results.
        yield site.framed(path, f"{entry.view.record.title} · Record {record_id} · {site.plain_title}", record_content,
                          entry=entry,
                          histories=site.facts.histories.get(record_id, []), duplicate=duplicate,
                          canonical=site.views_by_id[duplicate.canonical] if duplicate else None,
                          duplicates=[site.views_by_id[other] for other in canonical_of.get(record_id, [])],
                          other_versions=[site.views_by_id[other] for other in entry.view.record.custom.other_versions
                                          if other in site.views_by_id],
                          # the other versions its sources state that the review does not hold: none to look for on
                          # most records, and the review's identifiers gathered only for those that have one
                          unheld_versions=[version for version in entry.view.record.custom.stated_versions
                                           if not site.held_works.intersection(version.work_keys())],
                          common=("reasons",))  # the labels of the reasons, in every page's key already
