#!/usr/bin/env python3
"""Time the site's record downloads, as issue 14 measures them.

    python bench/exports_scale.py REVIEW_DIR

REVIEW_DIR is a review made by bench/make_review.py (read, never changed). Printed: the
seconds `record_writers` takes to set up (first-seen order, citation keys, screening outcomes),
then, for every record of the review, each format's writer's seconds and microseconds per record.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sitegen.site.downloads import record_writers, selected
from sitegen.workspace import open_review


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("review", type=Path)
    root = parser.parse_args().review
    started = time.perf_counter()
    workspace = open_review(root)
    print(f"open_review: {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    writers = record_writers(workspace.review, workspace.facts)
    print(f"record_writers setup: {time.perf_counter() - started:.2f} s")
    records = selected(workspace.review, workspace.facts, "all")
    for extension, write in writers.items():
        started = time.perf_counter()
        text = write(records)
        seconds = time.perf_counter() - started
        print(f"records.{extension}: {seconds:.2f} s, {seconds / len(records) * 1e6:.1f} µs/record "
              f"({len(records)} records, {len(text.encode()) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
