#!/usr/bin/env python3
"""kill -9 trials: `sitegen update` and `sitegen build` killed at every write, and at random times.

    python bench/kill_trials.py [--random 50] [--every 1] [--seed 1]

The long campaign of the harness tests/test_resilience.py runs on a few seeds
in CI (tests/kill_harness.py, the one home of the trials and their checks; it
lives with the tests because CI is what must keep passing it). Here every write
is targeted, before and after it (every `--every`-th for the build, which writes
one file per page), plus `--random` kills per command at a random time within
one unkilled run. Printed: trials per command, the states the kills left and
every violation (the target is none).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from kill_harness import Child, build_trials, make_baseline, measure, update_trials  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--random", type=int, default=50, help="random-time kills per command")
    parser.add_argument("--every", type=int, default=1, help="target every N-th write of the build")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        child = Child.write(scratch)
        base = make_baseline(scratch)
        runs = measure(scratch, child, base)
        steps = {"update": 1, "build": args.every}
        trials = {command: [(k, when) for k in range(1, writes + 1, steps[command]) for when in ("before", "after")]
                  for command, (writes, _) in runs.items()}
        delays = {command: [rng.uniform(0, seconds) for _ in range(args.random)]
                  for command, (_, seconds) in runs.items()}
        campaigns = {"update": update_trials(scratch, child, base, trials["update"], delays["update"]),
                     "build": build_trials(scratch, child, base, trials["build"], delays["build"])}
    print("; ".join(f"{command}: {writes} writes per run ({seconds:.2f} s)"
                    for command, (writes, seconds) in runs.items()))
    total = 0
    for command, campaign in campaigns.items():
        total += len(campaign.violations)
        shown = ", ".join(f"{name} {n}" for name, n in sorted(campaign.states.items()))
        print(f"{command}: {campaign.trials} trials; state right after the kill: {shown}; "
              f"violations: {len(campaign.violations)}")
        for line in campaign.violations[:20]:
            print(f"  {line}")
    print(f"total violations: {total} (target 0)")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
