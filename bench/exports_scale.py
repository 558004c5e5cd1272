#!/usr/bin/env python3
"""Time the site's record downloads, as issue 14 measures them.

    python bench/exports_scale.py REVIEW_DIR [--repeat 3]

REVIEW_DIR is a review made by bench/make_review.py (`python bench/make_review.py 20000 --out DIR`), read as
`sitegen build` reads it and never changed. Printed: the seconds `record_writers` takes to set up (first-seen
order, citation keys, screening outcomes), then, for each set the site offers (every record, the included
studies), each format's writer's seconds and microseconds per record, in wall-clock and in CPU time (steadier
on a shared machine): the best of --repeat runs, as the machine's other work only ever slows a run down.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sitegen.site.downloads import FORMATS, SELECTIONS, record_writers, selected
from sitegen.workspace import open_review


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("review", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each writer; the best is printed")
    arguments = parser.parse_args()
    started = time.perf_counter()
    workspace = open_review(arguments.review)
    print(f"open_review: {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    writers = record_writers(workspace.review, workspace.facts)
    print(f"record_writers setup: {time.perf_counter() - started:.2f} s")
    for set_name, selection in SELECTIONS.items():
        records = selected(workspace.review, workspace.facts, selection)
        for form in FORMATS:
            best, best_cpu, size = float("inf"), float("inf"), 0
            for _ in range(arguments.repeat):
                started, started_cpu = time.perf_counter(), time.process_time()
                size = sum(len(part) for part in writers.parts(form.extension, records))  # as the site writes it
                best = min(best, time.perf_counter() - started)
                best_cpu = min(best_cpu, time.process_time() - started_cpu)
            count = max(len(records), 1)
            print(f"{set_name}.{form.extension}: {best:.2f} s, {best / count * 1e6:.1f} µs/record; "
                  f"CPU {best_cpu:.2f} s, {best_cpu / count * 1e6:.1f} µs/record "
                  f"({len(records)} records, {size / 1e6:.1f} M characters)")


if __name__ == "__main__":
    main()
