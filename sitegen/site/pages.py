"""Render a loaded review into the site's files, in memory, without writing anything.

`render_site` is pure: the same review and build time give the same bytes.
The site is a list of page groups (home, protocol, records, screening, ...);
each renders its own files from one `Site` (the review, its derived facts and
the template environment), and no two groups may claim one path. Writing the
result safely is `sitegen.site.output`'s job.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from sitegen.errors import BuildError
from sitegen.living.facts import ReviewFacts
from sitegen.living.versions import version_history
from sitegen.records.model import Record
from sitegen.review.folder import Review
from sitegen.review.models import Evidence
from sitegen.review.write import pretty_json
from sitegen.screening.digest import digest_markdown, rank_batch, weekly, weeks
from sitegen.screening.outcomes import Outcome
from sitegen.screening.relevance import Ranking
from sitegen.site import charts, prisma_csv, prisma_svg, records, searches, studies, verification, versions
from sitegen.site.downloads import listing as downloads_listing
from sitegen.site.downloads import record_downloads
from sitegen.site.templates import environment, templates_dir

# Old versions would answer searches with outdated numbers; lists and digests repeat what the
# record and study pages say. Search finds the pages that are the current review's own.
UNSEARCHED_PREFIXES = ("v/", "records.html", "records/list", "batches/", "digests/", "search.html")
SITE_MARKER = ".sitegen-site"  # marks a folder sitegen built, so only such a folder is ever replaced


def page_slug(record_id: str) -> str:
    """A file name for a record's page: readable, safe on every file system, unique."""
    readable = re.sub(r"[^a-z0-9.]+", "-", record_id.lower()).strip("-.")[:60]
    digest = hashlib.sha1(record_id.encode("utf-8")).hexdigest()[:8]
    return f"{readable}-{digest}"


@dataclass
class RecordView:
    record: Record
    slug: str
    authors_short: str
    title_abstract: Outcome | None
    full_text: Outcome | None
    evidence: Evidence | None


def _authors_short(record: Record) -> str:
    names = [name.display() for name in record.author]
    return "; ".join(names[:3]) + (" et al." if len(names) > 3 else "")


def record_views(review: Review, outcomes: dict[str, dict[str, Outcome]]) -> list[RecordView]:
    title_abstract, full_text = outcomes["title-abstract"], outcomes["full-text"]
    evidence = {item.evidence.record_id: item for item in review.evidence}
    return [RecordView(record, page_slug(record.id), _authors_short(record), title_abstract.get(record.id),
                       full_text.get(record.id), evidence[record.id].evidence if record.id in evidence else None)
            for record in review.records.values()]


class Site:
    """What every page group reads: the review, its facts, and the derived views pages share."""

    def __init__(self, review: Review, facts: ReviewFacts, built_at: str | None):
        self.review = review
        self.facts = facts
        self.env = environment()
        self.reasons = facts.reason_labels
        self.history = version_history(review, facts)  # every page says which version it shows
        self.common = {"review": review.config, "built_at": built_at, "reasons": self.reasons,
                       "accent": review.config.site.theme.accent_color, "history": self.history}

    def page(self, path: str, template: str, **context: object) -> str:
        """A page rendered with links relative to its own folder, so the site works under any address."""
        root = "../" * path.count("/")
        context.setdefault("searchable", self.searchable(path))
        return self.env.get_template(template).render(root=root, path=path, **self.common, **context)

    def searchable(self, path: str) -> bool:
        """Whether site search indexes the page: the current review's pages, not old versions or lists."""
        return self.review.config.site.search and not path.startswith(UNSEARCHED_PREFIXES)

    @cached_property
    def views(self) -> list[RecordView]:
        return record_views(self.review, self.facts.outcomes)

    @cached_property
    def views_by_id(self) -> dict[str, RecordView]:
        return {view.record.id: view for view in self.views}

    @cached_property
    def rankings(self) -> dict[int, Ranking]:
        """Each numbered batch ranked by relevance, as its batch page and its records' pages show it."""
        return {batch.number: rank_batch(self.review, self.facts.screening, batch)
                for batch in self.facts.screening.batches if batch.number is not None}

    @cached_property
    def digests(self) -> dict[str, str]:
        """Each week's digest as Markdown, oldest week first."""
        review, screening = self.review, self.facts.screening
        return {week: digest_markdown(review, weekly(review, screening, week)) for week in weeks(screening)}


Files = Iterator[tuple[str, str | bytes]]  # (path in the site, content)


def home(site: Site) -> Files:
    counts = site.facts.prisma
    standing_counts = Counter(standing.kind for standing in site.facts.standings.values())
    yield "index.html", site.page(
        "index.html", "index.html", counts=counts, standing_counts=standing_counts,
        standing_labels=records.STANDING_LABELS, prisma=prisma_svg.render(counts, site.reasons),
        prisma_table=prisma_svg.table(counts, site.reasons),
        searches=list(site.review.searches.values()), runs=site.facts.runs, latest_digest=max(site.digests, default=None),
        state=site.review.state, phase=site.facts.phase[0], whats_new=versions.whats_new(site),
        charts=charts.home_charts(site), record_downloads=downloads_listing(site))


def protocol(site: Site) -> Files:
    yield "protocol.html", site.page("protocol.html", "protocol.html", protocol=site.review.protocol,
                                     trail=site.facts.protocol_trail)


def screening(site: Site) -> Files:
    per_batch, overall = site.facts.screening_status
    yield "screening.html", site.page(
        "screening.html", "screening.html", batches=per_batch, overall=overall, conflicts=len(site.facts.conflicts),
        digests=sorted(site.digests, reverse=True))
    by_id = {v.record.id: v for v in site.views}
    for item in per_batch:
        if item.batch.number is not None:
            path = f"batches/{item.batch.number}.html"
            yield path, site.page(path, "batch.html", item=item, by_id=by_id, ranking=site.rankings[item.batch.number])


def digests(site: Site) -> Files:
    for week, text in site.digests.items():
        yield f"downloads/digest-{week}.md", text
        yield f"digests/{week}.html", site.page(f"digests/{week}.html", "digest.html", week=week, text=text)


def downloads(site: Site) -> Files:
    counts = site.facts.prisma
    yield "downloads/prisma.svg", str(prisma_svg.render(counts, site.reasons, standalone=True))
    yield "downloads/prisma.json", pretty_json(counts.model_dump())
    yield "downloads/prisma2020.csv", prisma_csv.prisma2020_csv(counts, site.reasons)
    yield SITE_MARKER, "This folder was built by sitegen; `sitegen build` replaces it as a whole.\n"


def search(site: Site) -> Files:
    if site.review.config.site.search:
        yield "search.html", site.page("search.html", "search.html")


def assets(site: Site) -> Files:
    folder = templates_dir() / "assets"
    for asset in sorted(folder.rglob("*")):
        if asset.is_file():
            yield f"assets/{asset.relative_to(folder).as_posix()}", asset.read_bytes()


PAGE_GROUPS: tuple[Callable[[Site], Files], ...] = (home, protocol, records.record_pages, studies.study_pages,
                                                     verification.verification_pages, screening, digests,
                                                     searches.searches_pages, versions.version_pages, downloads, record_downloads,
                                                     search, assets)


def render_site(review: Review, facts: ReviewFacts, built_at: str | None) -> dict[str, bytes]:
    """Every file of the site, keyed by its path relative to the site root."""
    site = Site(review, facts, built_at)
    files: dict[str, bytes] = {}
    for group in PAGE_GROUPS:
        for path, content in group(site):
            if path in files:  # two pages claiming one path: one would silently replace the other
                raise BuildError(f"two pages would both be {path}")
            files[path] = content.encode("utf-8") if isinstance(content, str) else content
    return files


def output_paths_are_safe(files: dict[str, bytes]) -> bool:
    return all(not Path(p).is_absolute() and ".." not in Path(p).parts for p in files)
