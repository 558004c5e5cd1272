"""Render a loaded review into the site's files, in memory, without writing anything.

`render_site` is pure: the same review and build time give the same bytes.
Writing the result safely is `sitegen.site.output`'s job.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from sitegen.living.prisma import derive
from sitegen.living.protocol import locks
from sitegen.living.state import current_phase
from sitegen.records.model import Record
from sitegen.review.folder import Review
from sitegen.review.models import Evidence
from sitegen.review.write import pretty_json
from sitegen.screening.digest import digest_markdown, rank_batch, weekly, weeks
from sitegen.screening.outcomes import Outcome, review_outcomes
from sitegen.screening.status import conflicts, status
from sitegen.site import exports, prisma_svg
from sitegen.site.templates import environment, templates_dir

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


def record_views(review: Review) -> list[RecordView]:
    title_abstract = review_outcomes(review, "title-abstract")
    full_text = review_outcomes(review, "full-text")
    evidence = {item.evidence.record_id: item for item in review.evidence}
    return [RecordView(record, page_slug(record.id), _authors_short(record), title_abstract.get(record.id),
                       full_text.get(record.id), evidence[record.id].evidence if record.id in evidence else None)
            for record in review.records.values()]


def render_site(review: Review, built_at: str | None) -> dict[str, bytes]:
    """Every file of the site, keyed by its path relative to the site root."""
    env = environment()
    views = record_views(review)
    included = [v for v in views if v.full_text and v.full_text.decision == "include"]
    reasons = {r.code: r.label for r in review.protocol.meta.exclusion_reasons} if review.protocol else {}
    common = {"review": review.config, "built_at": built_at, "reasons": reasons,
              "accent": review.config.site.theme.accent_color}
    pages: dict[str, str] = {}

    def page(path: str, template: str, **context: object) -> None:
        root = "../" * path.count("/")
        pages[path] = env.get_template(template).render(root=root, path=path, **common, **context)

    digests = {week: digest_markdown(review, weekly(review, week)) for week in weeks(review)}
    for week, text in digests.items():
        pages[f"downloads/digest-{week}.md"] = text
        page(f"digests/{week}.html", "digest.html", week=week, text=text)

    counts = derive(review)
    diagram = prisma_svg.render(counts, reasons)
    page("index.html", "index.html", counts=counts, prisma=diagram,
         searches=list(review.searches.values()), latest_digest=max(digests, default=None),
         state=review.state, phase=current_phase(review)[0])
    page("protocol.html", "protocol.html", protocol=review.protocol, trail=locks(review))
    page("records.html", "records.html", views=views)
    page("included.html", "included.html", views=included)

    per_batch, overall = status(review)
    by_id = {v.record.id: v for v in views}
    page("screening.html", "screening.html", batches=per_batch, overall=overall, conflicts=len(conflicts(review)),
         digests=sorted(digests, reverse=True))
    for item in per_batch:
        if item.batch.number is not None:
            page(f"batches/{item.batch.number}.html", "batch.html", item=item, by_id=by_id,
                 ranking=rank_batch(review, item.batch))
    for view in views:
        page(f"records/{view.slug}.html", "record.html", view=view)

    outcomes = {v.record.id: (v.title_abstract.decision if v.title_abstract else "",
                              v.full_text.decision if v.full_text else "") for v in views}
    records = [v.record for v in views]
    pages["downloads/records.csv"] = exports.records_csv(records, outcomes)
    pages["downloads/records.ris"] = exports.records_ris(records)
    pages["downloads/records.json"] = exports.records_json(records)
    pages["downloads/prisma.svg"] = str(prisma_svg.render(counts, reasons, standalone=True))
    pages["downloads/prisma.json"] = pretty_json(counts.model_dump())
    pages[SITE_MARKER] = "This folder was built by sitegen; `sitegen build` replaces it as a whole.\n"
    files = {path: text.encode("utf-8") for path, text in pages.items()}
    assets = templates_dir() / "assets"
    for asset in sorted(assets.rglob("*")):
        if asset.is_file():
            files[f"assets/{asset.relative_to(assets).as_posix()}"] = asset.read_bytes()
    return files


def output_paths_are_safe(files: dict[str, bytes]) -> bool:
    return all(not Path(p).is_absolute() and ".." not in Path(p).parts for p in files)
