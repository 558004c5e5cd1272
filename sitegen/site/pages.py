"""Render a loaded review into the site's files, in memory, without writing anything.

The site is a list of page groups (home, protocol, records, screening, ...); each
yields its own files from one `Site` (the review, its derived facts and the
template environment), and no two groups may claim one path. A group yields a
file as (path, content), or, where a review has thousands of them (record, list,
study and batch pages), as a keyed `Page` rendered only when its key differs
from the current site's (`Site.keyed`, `sitegen.site.keys`). Pages are pure: the
same review and build time give the same bytes. Writing them safely, and
rendering only what changed, is `sitegen.site.output`'s job.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from markupsafe import Markup, escape

from sitegen.living.duplicates import matched_within
from sitegen.living.facts import LatestVerdict, ReviewFacts
from sitegen.living.prisma import other_descriptions, previous_labels
from sitegen.living.versions import version_history
from sitegen.records.model import Record, identifier_keys
from sitegen.review.folder import Review
from sitegen.review.models import Evidence
from sitegen.review.write import pretty_json
from sitegen.screening.digest import (
    Digest,
    Relevance,
    digest_markdown,
    rank_batches,
    thresholds_note,
    weekly_digests,
)
from sitegen.screening.outcomes import Outcome
from sitegen.screening.relevance import Ranking
from sitegen.site import charts, prisma_csv, prisma_svg, records, searches, studies, verification, versions
from sitegen.site.downloads import listing as downloads_listing
from sitegen.site.downloads import record_downloads
from sitegen.site.keys import Keys, code_digest, digested_once
from sitegen.site.output import Page
from sitegen.site.record_page import RankedRecords, batch_page, digest_content, ranked_row
from sitegen.site.templates import environment, markdown_plain, templates_dir
from sitegen.site.theme import readable_accent

# Markers Site.framed replaces: text no template, title or path holds (review text never holds a NUL).
FRAME_TITLE, FRAME_PATH, FRAME_CONTENT = "\x00title\x00", "\x00path\x00", "\x00content\x00"
FRAME_SLOTS = re.compile("(\x00(?:title|path|content)\x00)")  # split at them, a frame's odd parts are its slots
ROWS = "\x00rows\x00"  # where `Site.page_in_parts` writes a long table's rows
ROWS_PER_PART = 500
# The page a static host serves for an address the site does not hold (GitHub Pages' own name for it).
NOT_FOUND_PATH = "404.html"
# A batch's ranking (20,000 scored records for a large batch) is on its batch page and on both pages of its
# week's digest (the Markdown and the HTML): digested once in a build, not written out for each key.
digested_once(Ranking)
# Old versions would answer searches with outdated numbers; lists and digests repeat what the
# record and study pages say. Search finds the pages that are the current review's own.
# A record's own page is not indexed either: at review scale (100,000 records) no search index
# stays small and quick enough to build; records are found through the records lists, and the
# included studies, whose pages are indexed, through search. The home and screening pages are
# counts and links to the pages that say the same in full: left out, a decision does not make the
# index be built again.
UNSEARCHED_PREFIXES = ("v/", "records.html", "records/", "batches/", "digests/", "search.html", "index.html",
                       "screening.html", NOT_FOUND_PATH)


UNREADABLE = re.compile(r"[^a-z0-9.]+")  # what a page's file name writes as one "-" (compiled once: 100,000 ids)


def page_slug(record_id: str, whole: bool = False) -> str:
    """A file name for a record's page, readable and safe on every file system: the id's first 60 letters,
    digits and dots, and 8 hex digits of its SHA-1 (its whole SHA-256 when `whole`). Pages' addresses: what
    it gives an id must never change."""
    readable = UNREADABLE.sub("-", record_id.lower()).strip("-.")[:60]
    data = record_id.encode("utf-8")
    return f"{readable}-{hashlib.sha256(data).hexdigest() if whole else hashlib.sha1(data).hexdigest()[:8]}"


def page_slugs(record_ids: Iterable[str]) -> dict[str, str]:
    """Each record's page name, unique. The short name (32 bits of digest) stays wherever no other record of
    the review has it, so addresses stay as published; ids sharing one (two DOIs alike for 60 characters can
    be made to in a second) each get a whole SHA-256 instead: neither page takes the other's address."""
    short = {record_id: page_slug(record_id) for record_id in record_ids}
    if len(set(short.values())) == len(short):  # as in nearly every review: no name shared, none to count
        return short
    taken = Counter(short.values())
    return {record_id: slug if taken[slug] == 1 else page_slug(record_id, whole=True) for record_id, slug in short.items()}


@dataclass(slots=True)
class RecordView:
    record: Record
    slug: str
    title_abstract: Outcome | None
    full_text: Outcome | None
    evidence: Evidence | None

    @property
    def authors_short(self) -> str:
        """Its first three authors' names, as a list row and a changelog show them: written when a page asks, not
        for every record of the review as its views are made (100,000, of which a rebuild shows a few). Of the
        record alone, so not a field: a key holding the view holds the record, which stands for its authors."""
        return _authors_short(self.record)


def _authors_short(record: Record) -> str:
    authors = record.author
    named = "; ".join([name.display() for name in authors[:3]])
    return named + " et al." if len(authors) > 3 else named


def record_views(review: Review, outcomes: dict[str, dict[str, Outcome]]) -> list[RecordView]:
    # Each record's, so 100,000 at review scale: the lookups are bound once, not once per record.
    title_abstract, full_text = outcomes["title-abstract"].get, outcomes["full-text"].get
    evidence = {item.evidence.record_id: item.evidence for item in review.evidence}.get
    slugs = page_slugs(review.records)
    return [RecordView(record, slugs[record_id], title_abstract(record_id), full_text(record_id), evidence(record_id))
            for record_id, record in review.records.items()]


@dataclass(frozen=True)
class Published:
    number: int
    published_at: str


@dataclass(frozen=True)
class Edition:
    """What every page's footer says of the review's versions: the latest, and whether it changed since."""

    latest: Published | None
    unpublished: bool
    versions: bool  # any published


class Site:
    """What every page group reads: the review, its facts, and the derived views pages share."""

    def __init__(self, review: Review, facts: ReviewFacts, built_at: str | None):
        self.review = review
        self.facts = facts
        self.built_at = built_at  # the home page and the feed say it; no other page does, so they need not change
        self.env = environment()
        self.reasons = facts.reason_labels
        self.history = version_history(review, facts)
        latest = self.history.latest
        edition = Edition(Published(latest.number, latest.published_at) if latest else None, self.history.unpublished,
                          bool(self.history.versions))  # every page says which version it shows
        self.common = {"review": review.config, "reasons": self.reasons,
                       "accent": readable_accent(review.config.site.theme.accent_color), "edition": edition}
        self.keys = Keys(review.records, review.record_digests,
                         Keys(review.records, {}, code_digest(templates_dir())).of(self.common))

    def page(self, path: str, template: str, **context: object) -> str:
        """A page rendered with links relative to its own folder, so the site works under any address (unless
        the context gives its `root`: see `not_found`)."""
        context.setdefault("root", "../" * path.count("/"))
        context.setdefault("searchable", self.searchable(path))
        return self.env.get_template(template).render(path=path, **self.common, **context)

    def page_in_parts(self, path: str, template: str, rows: Iterable[str], **context: object) -> Iterator[str]:
        """A page of a table with rows by the ten thousand (a screening batch's): the template rendered
        around a marker, then written in parts, its rows a few hundred at a time, so that no process
        holds the whole page (44 MB for a batch of 20,000 records, and four times that while joined)."""
        head, tail = self.page(path, template, rows_html=Markup(ROWS), **context).split(ROWS)
        yield head
        rows = iter(rows)
        separator = ""  # the rows are one per line, as "\n".join would write them
        while part := list(itertools.islice(rows, ROWS_PER_PART)):
            yield separator + "\n".join(part)
            separator = "\n"
        yield tail

    @functools.cache  # noqa: B019 (a Site lives for one build)
    def _frame(self, root: str, searchable: bool) -> str:
        return self.env.get_template("frame.html").render(
            root=root, path=FRAME_PATH, searchable=searchable, frame_title=FRAME_TITLE,
            frame_content=Markup(FRAME_CONTENT), **self.common)

    @functools.cache  # noqa: B019 (a Site lives for one build)
    def _frame_parts(self, root: str, searchable: bool) -> list[str]:
        """The frame split at its slots, its text at even places, a slot at odd ones: a page is filled in by one
        join, not by three replacements that each copy the whole page (100,000 record pages at review scale)."""
        return FRAME_SLOTS.split(self._frame(root, searchable))

    def framed(self, path: str, title: str, content: Callable[..., str], common: tuple[str, ...] = (),
               **context: object) -> Page:
        """A page whose content a Python function writes (`content(**context)`), in the frame every page
        has; keyed like a template's page. `common` names what the content reads of the context every page shares
        (`self.common`): given to it too, and not written out in the page's key, which holds it already."""
        def render() -> str:
            root, searchable = "../" * path.count("/"), self.searchable(path)
            shared = {name: self.common[name] for name in common}
            if "\x00" in title or "\x00" in path:  # a slot's text in the title or path is filled in too, as it always was
                return (self._frame(root, searchable).replace(FRAME_TITLE, str(escape(title)))
                        .replace(FRAME_PATH, str(escape(path))).replace(FRAME_CONTENT, content(**shared, **context)))
            slots = {FRAME_TITLE: str(escape(title)), FRAME_PATH: str(escape(path)),
                     FRAME_CONTENT: content(**shared, **context)}
            parts = self._frame_parts(root, searchable).copy()
            parts[1::2] = [slots[slot] for slot in parts[1::2]]
            return "".join(parts)
        return Page(path, render, self.keys.of(content.__module__, content.__qualname__, path, title, context))

    def keyed(self, path: str, template: str, **context: object) -> Page:
        """A page rendered only when its key (its template, path and context) differs from the current site's."""
        return Page(path, lambda: self.page(path, template, **context), self.keys.of(template, path, context))

    def searchable(self, path: str) -> bool:
        """Whether site search indexes the page: the current review's pages, not old versions or lists."""
        return self.review.config.site.search and not path.startswith(UNSEARCHED_PREFIXES)

    @cached_property
    def plain_title(self) -> str:
        """The review's title as a page's <title> says it (`markdown_plain`): parsed once, not per record page."""
        return markdown_plain(self.review.config.title)

    @cached_property
    def views(self) -> list[RecordView]:
        return record_views(self.review, self.facts.outcomes)

    @cached_property
    def studies(self) -> list[studies.Study]:
        """The included studies, as their pages, the evidence table and the verification page show them."""
        return studies.included_studies(self.review, self.facts, self.views)

    @cached_property
    def views_by_id(self) -> dict[str, RecordView]:
        return {view.record.id: view for view in self.views}

    @cached_property
    def held_works(self) -> frozenset[tuple[str, str]]:
        """The DOIs and PMIDs (namespace, value) of the review's records: what a stated version is looked for by.
        Made only when a record's page names one (most reviews: none)."""
        return frozenset(key for view in self.views for key in identifier_keys(view.record.DOI, view.record.PMID))

    @cached_property
    def rankings(self) -> dict[int | None, Ranking]:
        """Each batch ranked by relevance, as its batch page and its records' pages show it (None: the records
        imported outside a batch, as one group)."""
        return rank_batches(Relevance(self.review, self.facts.screening))

    @cached_property
    def digests(self) -> dict[str, Digest]:
        """Each week's digest, oldest week first; a week of one batch reuses that batch's ranking."""
        return weekly_digests(Relevance(self.review, self.facts.screening, ranked=self.rankings))


Files = Iterator[tuple[str, str | bytes] | Page]  # (path in the site, content), or a page rendered when asked


def home(site: Site) -> Files:
    counts = site.facts.prisma
    columns = prisma_svg.columns(counts)
    standing_counts = Counter(standing.kind for standing in site.facts.standings.values())
    yield "index.html", site.page(
        "index.html", "index.html", counts=counts, standing_counts=standing_counts,
        standing_labels=records.STANDING_LABELS, prisma=prisma_svg.render(counts, site.reasons),
        prisma_table=prisma_svg.table(counts, site.reasons),
        prisma_notes=[*prisma_svg.arm_notes(counts, columns), *prisma_svg.availability_notes(counts, columns)],
        previous_studies=previous_labels(counts)[2], with_evidence=len({item.evidence.record_id for item in site.review.evidence} & set(site.facts.included)),
        searches=list(site.review.searches.values()), runs=site.facts.runs, latest_digest=max(site.digests, default=None),
        state=site.review.state, phase=site.facts.phase[0], whats_new=versions.whats_new(site),
        whats_new_listed=versions.WHATS_NEW_LISTED,
        history=site.history, built_at=site.built_at,
        charts=charts.home_charts(site), record_downloads=downloads_listing(site))


def protocol(site: Site) -> Files:
    yield "protocol.html", site.page("protocol.html", "protocol.html", protocol=site.review.protocol,
                                     trail=site.facts.protocol_trail)


def screening(site: Site) -> Files:
    per_batch, overall = site.facts.screening_status
    yield "screening.html", site.page(
        "screening.html", "screening.html", batches=per_batch, overall=overall, conflicts=len(site.facts.conflicts),
        digests=sorted(site.digests, reverse=True))
    for item in per_batch:
        path = batch_page(item.batch.number)
        ranking = site.rankings[item.batch.number]
        ranked = RankedRecords.of(site.views_by_id, ranking.decisions)
        # The page shows the batch and its records' title-and-abstract outcomes, not its stages' counts: a decision at
        # full text leaves it as it was. The records imported outside a batch are ranked under the current protocol
        # (`rank_batches`): their page names its version. A batch's names the version it is screened under, its own.
        thresholds = site.review.state.thresholds  # as the ranking was made with: said when not seed 002's
        context = {"batch": item.batch, "duplicates": item.duplicates, "calibration": ranking.calibration,
                   "matched_within": len(matched_within(item.batch.record_ids, item.batch.matched,
                                                        site.facts.canonicals)),
                   "thresholds_note": "" if thresholds.seed_defaults else thresholds_note(thresholds)}
        if item.batch.number is None:
            context["current_protocol"] = site.review.protocol.meta.version
        yield Page(path, lambda path=path, ranking=ranking, ranked=ranked, context=context: site.page_in_parts(
            path, "batch.html", _ranked_rows(site, ranking, ranked), **context),
            site.keys.of("batch.html", path, ranking, ranked, context))


def _ranked_rows(site: Site, ranking: Ranking, ranked: RankedRecords) -> Iterator[str]:
    """A batch page's rows, one per record ranked, best first."""
    for rank, (scored, slug, title, title_abstract) in enumerate(zip(ranking.decisions, *ranked, strict=True), start=1):
        yield ranked_row(rank, scored, slug, title, title_abstract, site.reasons)


def digests(site: Site) -> Files:
    for week, digest in site.digests.items():
        titles = {scored.id: site.review.records[scored.id].title for scored in digest.ranking.decisions}
        # Written when the writer asks, maybe by another process: a week's digest of a large batch is megabytes.
        # Keyed by all it reads: the digest and its records' titles.
        markdown = f"downloads/digest-{week}.md"
        yield Page(markdown, lambda digest=digest: digest_markdown(site.review, digest),
                   site.keys.of(digest_markdown.__module__, digest_markdown.__qualname__, markdown, digest, titles))
        yield site.framed(f"digests/{week}.html", f"Digest {week} · {site.plain_title}", digest_content,
                          digest=digest, titles=titles)


def downloads(site: Site) -> Files:
    counts = site.facts.prisma
    yield "downloads/prisma.svg", str(prisma_svg.render(counts, site.reasons, standalone=True))
    yield "downloads/prisma.json", pretty_json(counts.model_dump())
    yield "downloads/prisma2020.csv", prisma_csv.prisma2020_csv(counts, site.reasons, other_descriptions(site.review))


def search(site: Site) -> Files:
    if site.review.config.site.search:
        yield "search.html", site.page("search.html", "search.html")


def not_found(site: Site) -> Files:
    """404.html, which GitHub Pages serves for a missing address at any depth (/a/b/c): a relative link would
    start from the address asked for, so its links start from the review's base_url. With none, they are
    relative, as every page's are: right where the host serves the site from its top folder's level (a page
    missing there, the file opened from disk), and the page still says what happened wherever it is served. Its
    stylesheet is written into it, so that it is styled wherever it is served or opened (base_url's address may
    not be reachable from where it is read)."""
    root = site.review.config.site.base_url or ""
    stylesheet = (templates_dir() / "assets" / "style.css").read_text(encoding="utf-8")  # sitegen's own, not the review's
    yield Page(NOT_FOUND_PATH, lambda: site.page(NOT_FOUND_PATH, "404.html", root=root, stylesheet=Markup(stylesheet)),
               site.keys.of("404.html", NOT_FOUND_PATH, root, stylesheet))


def assets(site: Site) -> Files:
    folder = templates_dir() / "assets"
    for asset in sorted(folder.rglob("*")):
        if asset.is_file():
            yield f"assets/{asset.relative_to(folder).as_posix()}", asset.read_bytes()


PAGE_GROUPS: tuple[Callable[[Site], Files], ...] = (home, protocol, records.record_pages, studies.study_pages,
                                                     verification.verification_pages, screening, digests,
                                                     searches.searches_pages, versions.version_pages, downloads, record_downloads,
                                                     search, not_found, assets)


def shown_as_verified(review: Review, verdicts: dict[str, dict[str, LatestVerdict]]) -> Review:
    """The review as the site shows it: a record whose latest verification found it retracted is marked
    retracted everywhere (its pages, the lists, the evidence table, every download), whatever the provider's
    metadata said when the record was read. records.jsonl is left as the sources gave it."""
    retracted = [record_id for record_id, axes in verdicts.items()
                 if (status := axes.get("status")) is not None and status.payload.verdict == "retracted"
                 and record_id in review.records and not review.records[record_id].custom.retracted]
    if not retracted:
        return review
    records, digests = dict(review.records), dict(review.record_digests)
    for record_id in retracted:
        record = records[record_id]
        records[record_id] = record.model_copy(update={"custom": record.custom.model_copy(update={"retracted": True})})
        # Page keys count a record by its line's digest: the record shown is no longer the line, so neither is
        # its digest (a rebuild kept every page of the record as it was before the retraction).
        digests[record_id] = hashlib.blake2b(digests.get(record_id, b"") + b"\0retracted by verification",
                                             digest_size=16).digest()
    return dataclasses.replace(review, records=records, record_digests=digests)


def site_pages(review: Review, facts: ReviewFacts, built_at: str | None) -> Iterator[Page]:
    """Every file of the site, group by group, each rendered when the writer asks for it."""
    site = Site(shown_as_verified(review, facts.verdicts), facts, built_at)
    for group in PAGE_GROUPS:
        for item in group(site):
            yield item if isinstance(item, Page) else Page(item[0], lambda content=item[1]: content)
