"""`sitegen build`: gather and check everything, render in memory, then swap the site in."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sitegen.errors import BuildError, SitegenError
from sitegen.living.facts import ReviewFacts
from sitegen.review.folder import Review
from sitegen.review.models import parse_timestamp
from sitegen.site.output import refuse_unsafe_output, write_site
from sitegen.site.pages import output_paths_are_safe, render_site
from sitegen.site.search import search_index

MAX_EPOCH = 32503680000  # 3000-01-01


@dataclass
class BuildResult:
    out: Path
    files: int
    records: int
    built_at: str | None


def build_time(review: Review, now: str | None, environ: dict[str, str]) -> str | None:
    """When the site says it was last updated: --now, SOURCE_DATE_EPOCH, or the ledger. Never the clock."""
    if now is not None:
        try:
            parse_timestamp(now)
        except ValueError as exc:
            raise SitegenError(f"--now {exc}") from None
        return now
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        if not re.fullmatch(r"[0-9]{1,11}", epoch) or int(epoch) >= MAX_EPOCH:
            raise SitegenError(f"SOURCE_DATE_EPOCH={epoch!r} is not a whole number of seconds since 1970 "
                               "(before the year 3000)")
        return datetime.fromtimestamp(int(epoch), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return max((event.ts for event in review.ledger), key=parse_timestamp, default=None)


def build_site(review: Review, facts: ReviewFacts, out: Path, now: str | None,
               environ: dict[str, str]) -> BuildResult:
    """Render a valid review into `out`, replacing the previous site only once the new one is whole."""
    refuse_unsafe_output(review.root, out)
    built_at = build_time(review, now, environ)
    files = render_site(review, facts, built_at)
    if review.config.site.search:
        index = search_index(files)
        if clash := sorted(index.keys() & files.keys()):
            raise BuildError(f"the search index would replace the page {clash[0]}")
        files.update(index)
    if not output_paths_are_safe(files):
        raise BuildError("a rendered file would land outside the output folder")
    write_site(out, files)
    return BuildResult(out, len(files), len(review.records), built_at)
