#!/usr/bin/env python3
"""Page faults and CPU of writing a large review's record pages, forked renderers against one process.

    SITEGEN_CACHE_DIR=... python bench/render_faults.py REVIEW_DIR [--pages 30000] [--runs 2] [--batch 5000]

Writes the first --pages pages of the records group (record_pages: the records lists, then a page per
record) with `write_site` into a fresh folder, as a build does (made as they are written, a batch of
RENDER_BATCH at a time), once as the build renders them ("forked": one renderer forked per processor,
each batch) and once in this process alone ("one"), alternated --runs times. Printed per run: wall
seconds, user and system CPU of this process and of its renderers, and their minor page faults.

Minor faults are the figure to read on a shared machine: they vary by a few per cent between runs where
system CPU varies twofold. A forked renderer shares the build's memory copy-on-write, and CPython writes
the reference count of every object it reads, so each record page rendered while another process shares
the memory copies the pages of memory its record's objects lie in (about 7 a record page, 2026-12-06);
rendered in one process, a record page faults none.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import shutil
import tempfile
import time
from pathlib import Path

from sitegen.review.folder import cycle_collection_paused
from sitegen.site import output
from sitegen.site import pages as P
from sitegen.site.records import record_pages
from sitegen.workspace import open_review


def usage() -> tuple[float, ...]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime, own.ru_stime, children.ru_utime, children.ru_stime, own.ru_minflt, children.ru_minflt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("review", type=Path)
    parser.add_argument("--pages", type=int, default=30000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=output.RENDER_BATCH)
    options = parser.parse_args()
    output.RENDER_BATCH = options.batch
    forked_processes = output.render_processes
    with cycle_collection_paused(), tempfile.TemporaryDirectory() as scratch:
        workspace = open_review(options.review)
        site = P.Site(P.shown_as_verified(workspace.review, workspace.facts.verdicts), workspace.facts, None)
        print("| run | mode | wall s | user s | system s | renderers' user s | renderers' system s | "
              "faults | renderers' faults |")
        print("|---|---|---|---|---|---|---|---|---|")
        for run, mode in itertools.product(range(1, options.runs + 1), ("forked", "one")):
            output.render_processes = forked_processes if mode == "forked" else (lambda: 1)
            out = Path(scratch) / "site"
            started, before = time.perf_counter(), usage()
            output.write_site(out, itertools.islice(record_pages(site), options.pages))
            after = usage()
            spent = [later - earlier for earlier, later in zip(before, after, strict=True)]
            print(f"| {run} | {mode} | {time.perf_counter() - started:.1f} | "
                  + " | ".join(f"{value:.2f}" for value in spent[:4]) + f" | {spent[4]:,.0f} | {spent[5]:,.0f} |",
                  flush=True)
            shutil.rmtree(out)
            for spare in Path(scratch).iterdir():
                shutil.rmtree(spare)
        output.render_processes = forked_processes


if __name__ == "__main__":
    main()
