#!/usr/bin/env python3
"""The rerun diff: 100,000 current ids against 1,000,000 seen ids (target: under 1 s).

    python bench/diff_bench.py [--current 100000] [--seen 1000000]
"""

from __future__ import annotations

import argparse
import random
import time

from sitegen.living.update import new_ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--current", type=int, default=100_000)
    parser.add_argument("--seen", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = random.Random(1)
    seen = [f"10.{1000 + n % 9000}/seen.{n}" for n in range(args.seen)]
    # Most of a rerun's results were seen before; about 2% are new.
    current = [rng.choice(seen) if rng.random() < 0.98 else f"10.5555/new.{n}" for n in range(args.current)]
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        fresh = new_ids(current, seen)
        best = min(best, time.perf_counter() - started)
    print(f"seen ids:     {len(seen):,}")
    print(f"current ids:  {len(current):,}")
    print(f"new ids:      {len(fresh):,}")
    print(f"diff time:    {best * 1000:.0f} ms, best of 5 (target < 1000 ms)")


if __name__ == "__main__":
    main()
