"""`sitegen build`: gather and check everything, render in memory, then swap the site in."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sitegen.errors import OptionInvalid, OutputRefused, SitegenError
from sitegen.living.facts import ReviewFacts
from sitegen.review.folder import Review, cycle_collection_paused
from sitegen.review.models import parse_timestamp
from sitegen.site.keys import code_digest
from sitegen.site.output import Stamp, refuse_unsafe_output, site_is_intact, site_manifest, site_stamp, write_site
from sitegen.site.pages import site_pages
from sitegen.site.search import index_pages
from sitegen.site.sitemap import finish_with_sitemap
from sitegen.site.templates import markdown_plain, templates_dir

MAX_EPOCH = 32503680000  # 3000-01-01
# The libraries whose versions could change a page's bytes.


@dataclass
class BuildResult:
    out: Path
    files: int
    records: int
    built_at: str | None
    rendered: int  # pages rendered; the others were unchanged since the current site and kept
    changed: bool  # False: the site was already up to date, and was left as it was
    replaced: str | None = None  # the title of another folder's review whose site this build replaced


def given_now(now: str) -> datetime:
    """--now parsed: a real RFC 3339 time from 1970 to the year 3000, as SOURCE_DATE_EPOCH is (the site's files
    are dated by it); OptionInvalid otherwise, whatever the review."""
    try:
        moment = parse_timestamp(now)
    except ValueError as exc:
        raise OptionInvalid("--now", str(exc)) from None
    if not 0 <= moment.timestamp() < MAX_EPOCH:
        raise OptionInvalid("--now", f"{now!r} is not a time from 1970 to the year 3000 (UTC)")
    return moment


def build_time(review: Review, now: str | None, environ: dict[str, str]) -> str | None:
    """When the site says it was last updated: --now, SOURCE_DATE_EPOCH, or the ledger. Never the clock."""
    latest = max((event.ts for event in review.ledger), key=parse_timestamp, default=None)
    if now is not None:
        moment = given_now(now)
        if latest is not None and moment < parse_timestamp(latest):  # "last updated" before what the site shows
            raise SitegenError(f"--now {now} is earlier than the latest ledger event ({latest}): the site would say "
                               "it was last updated before it")
        return now
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        if not re.fullmatch(r"[0-9]{1,11}", epoch) or int(epoch) >= MAX_EPOCH:
            raise SitegenError(f"SOURCE_DATE_EPOCH={epoch!r} is not a whole number of seconds since 1970 "
                               "(before the year 3000)")
        moment = datetime.fromtimestamp(int(epoch), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        # Set for a whole environment (Nix sets 1980), it may be earlier than what the site shows: the latest
        # ledger event is the time then (reproducible builds clamp times so), never "updated" before it.
        return moment if latest is None else max(moment, latest, key=parse_timestamp)
    return latest


def inputs_digest(root: Path, now: str | None, environ: dict[str, str]) -> str:
    """The digest of everything a build reads: every file of the review folder, sitegen's code and
    templates, the libraries that render (`code_digest`), and the build time asked for. Recorded snapshot bodies
    are named by their own SHA-256, so their names and sizes stand for them."""
    digest = hashlib.sha256(code_digest(templates_dir()).encode())  # the libraries that render included
    digest.update(repr((now, environ.get("SOURCE_DATE_EPOCH"))).encode())
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        digest.update(b"\0" + os.fsencode(rel) + b"\0")  # a name need not be UTF-8: its bytes, as the disk has them
        if path.is_symlink():
            digest.update(b"link:" + os.fsencode(path.readlink()))
        elif path.is_file() and rel.startswith("snapshots/") and rel != "snapshots/index.jsonl":
            digest.update(str(path.stat().st_size).encode())
        elif path.is_file():
            with path.open("rb") as file:
                digest.update(hashlib.file_digest(file, "sha256").digest())
    return digest.hexdigest()


def current_site(root: Path, out: Path, inputs: str) -> BuildResult | None:
    """The site at `out` when it was built from exactly the review's files as they are now (`inputs`,
    their `inputs_digest`: by this sitegen, at the same build time), so building again would give the
    same bytes; else None."""
    try:
        refuse_unsafe_output(root, out)
    except OutputRefused:
        return None  # the build says why, after the review's own problems
    stamp = site_stamp(out)  # alone first: a site built from other inputs needs no more reading
    if stamp is None or stamp.inputs != inputs:
        return None
    manifest = site_manifest(out)
    stamp = manifest.stamp
    if stamp is None or stamp.inputs != inputs or not site_is_intact(out, manifest):
        return None
    return BuildResult(out, len(manifest.files), stamp.records, stamp.built_at, rendered=0, changed=False)


def build_site(review: Review, facts: ReviewFacts, out: Path, now: str | None,
               environ: dict[str, str], inputs: str | None = None) -> BuildResult:
    """Render a valid review into `out`, replacing the previous site only once the new one is whole;
    pages whose key has not changed since the current site are kept, not rendered again. `inputs` is
    the review's `inputs_digest` when the caller has it (hashed under the same lock)."""
    refuse_unsafe_output(review.root, out)
    built_at = build_time(review, now, environ)
    inputs = inputs if inputs is not None else inputs_digest(review.root, now, environ)
    stamp = Stamp(inputs=inputs, records=len(review.records), built_at=built_at,
                  review=review.ledger[0].hash if review.ledger else None,
                  title=markdown_plain(review.config.title))  # as the warning says it: plain, as a <title> is
    dated = int(parse_timestamp(built_at).timestamp()) * 10**9 if built_at else 0
    with cycle_collection_paused():  # a build makes views of every record that live as long as it does
        finish = finish_with_sitemap(review.config.site.base_url, index_pages if review.config.site.search else None)
        written = write_site(out, site_pages(review, facts, built_at), finish=finish, stamp=stamp, dated=dated)
    # The site is derived, so another review's is replaced (its folder builds it again), but never unsaid: two
    # reviews built into one --out (the default ./site) would otherwise take turns at it unnoticed.
    before = written.before
    replaced = before.title if before is not None and another_review(before, stamp) else None
    return BuildResult(out, written.files, len(review.records), built_at, written.rendered, written.changed,
                       replaced)


def another_review(before: Stamp, now: Stamp) -> bool:
    """Whether the site stamped `before` was built from another review than the one stamped `now`: told by their
    ledgers' first events; by their titles while either ledger is empty (a fresh review, not yet locked, renamed
    and built again is taken for another; a site built by a sitegen that did not stamp the title, for none)."""
    if before.title is None:
        return False
    if before.review is not None and now.review is not None:
        return before.review != now.review
    return before.title != now.title
