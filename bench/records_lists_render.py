#!/usr/bin/env python3
"""The CPU time of rendering every records list page of a review (records.html and records/list/), in one process,
and the SHA-256 of their bytes: what a cold build renders in the building process alone (`Page.alone`).

    SITEGEN_CACHE_DIR=/tmp/kept python bench/records_lists_render.py REVIEW [--runs 2]

Compare two checkouts by running each (interleaved, several times) on a copy of the same review: the digests
must be equal. The figures are process time, so other processes on the machine count less than in wall time.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path

from sitegen.review.folder import cycle_collection_paused
from sitegen.site import pages
from sitegen.site.records import record_pages
from sitegen.workspace import open_review


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("review", type=Path)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with cycle_collection_paused():
        workspace = open_review(args.review)
        site = pages.Site(pages.shown_as_verified(workspace.review, workspace.facts.verdicts), workspace.facts, None)
        for _ in range(args.runs):
            lists = [page for page in record_pages(site) if page.path.startswith(("records.html", "records/list/"))]
            start = time.process_time()
            rendered = [page.render() for page in lists]
            # As the build writes them: text is encoded (a list page is rendered as UTF-8 already).
            written = [content.encode("utf-8") if isinstance(content, str) else content for content in rendered]
            seconds = time.process_time() - start
            digest = hashlib.sha256()
            for page, content in zip(lists, written, strict=True):
                digest.update(f"{page.path}\0{len(content)}\0".encode())
                digest.update(content)
            print(f"{len(lists)} list pages, {sum(map(len, written)) / 1e6:.1f} MB: {seconds:.3f} s CPU, "
                  f"sha256 {digest.hexdigest()}")
            del lists, rendered, written


if __name__ == "__main__":
    main()
