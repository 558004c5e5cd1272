#!/usr/bin/env python3
"""Relevance at review scale: the time to rank every screening batch and build every weekly digest.

    python bench/relevance_scale.py DIR [--grow N] [--batches 50] [--repeat 1]

DIR is a review folder (for example one made by bench/make_review.py). It is loaded, then ranked the
way the site does it: every batch and the records imported outside one (`rank_batches`), then every
week's digest as Markdown (`weekly_digests`, reusing the batch rankings). With --grow, N synthetic records are first added in
memory across --batches weekly batches, screened by two reviewers (bench/records_pages_bench.py's
`grow`; nothing is written), so the weeks have a prior of included records to judge novelty against.
Loading is timed apart and is not part of the figure. With --repeat, the ranking is timed that many times
afresh and the quickest is reported (a shared machine is noisy). Reads DIR only.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from records_pages_bench import grow

from sitegen.living.facts import ReviewFacts
from sitegen.screening.digest import Relevance, digest_markdown, rank_batches, weekly_digests
from sitegen.workspace import inspect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--grow", type=int, default=0, help="synthetic records to add in memory first")
    parser.add_argument("--batches", type=int, default=50, help="weekly batches the added records arrive in")
    parser.add_argument("--repeat", type=int, default=1, help="time the ranking this many times, report the quickest")
    args = parser.parse_args()

    started = time.perf_counter()
    workspace, problems = inspect(args.directory)
    if workspace is None:
        sys.exit(f"{args.directory}: not a review folder ({len(problems)} problem(s))")
    review = workspace.review
    if args.grow:
        grow(review, args.grow, args.batches, random.Random(1))
    facts = ReviewFacts(review)
    screening = facts.screening
    loaded = time.perf_counter() - started
    batched = sum(len(batch.record_ids) for batch in screening.batches if batch.number is not None)
    print(f"{len(review.records)} records, {batched} in {sum(b.number is not None for b in screening.batches)} "
          f"batches; loaded in {loaded:.2f} s" + (f" ({len(problems)} problem(s) found, ignored)" if problems else ""))

    ranked = float("inf")
    for _ in range(max(args.repeat, 1)):
        started = time.perf_counter()
        rankings = rank_batches(Relevance(review, screening))
        ranked = min(ranked, time.perf_counter() - started)
    started = time.perf_counter() - ranked
    digests = {week: digest_markdown(review, digest)
               for week, digest in weekly_digests(Relevance(review, screening, ranked=rankings)).items()}
    total = time.perf_counter() - started
    print(f"ranked {len(rankings)} batches in {ranked:.2f} s; {len(digests)} weekly digests in {total - ranked:.2f} s; "
          f"total {total:.2f} s ({1e6 * total / max(batched, 1):.0f} µs per batched record)")


if __name__ == "__main__":
    main()
