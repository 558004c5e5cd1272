#!/usr/bin/env python3
"""`sitegen check` at review scale: wall clock, peak memory, and the time of each stage.

    python bench/check_scale.py DIR [--repeat 3]

DIR is a review folder, for example one made by `bench/make_review.py N`. Printed are:

- start-up: `sitegen --help` in a subprocess (Python start-up and sitegen's imports, no review read);
- check: `sitegen check DIR` in a subprocess, the whole command as a user runs it, with its peak
  resident memory and how many problems it reported: first with nothing kept (the first command to read
  the review's records.jsonl as it is, which keeps its parse, `sitegen.review.kept`), then with the parse
  kept (any later command reading the same records.jsonl: after a build, after a decision changed). The
  parses are kept in a folder of the bench's own, removed at the end;
- the stages inside one process, the parse kept: load (`review.folder.load_review`: every file read, parsed and
  validated), facts (the `ReviewFacts` the checks read: confirmed duplicates and screening outcomes)
  and inspect (every domain's checks, as `workspace.inspect` applies them).

Each figure is the best of `--repeat` runs (the machine is shared). It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import as_installed

ROOT = Path(__file__).resolve().parent.parent
SITEGEN = [sys.executable, "-m", "sitegen"]


def timed_subprocess(arguments: list[str]) -> tuple[float, str]:
    """(wall-clock seconds, last line of output) of one run of a command."""
    start = time.perf_counter()
    output = subprocess.run(arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT).stdout
    elapsed = time.perf_counter() - start
    lines = output.decode("utf-8", "replace").strip().splitlines()
    return elapsed, lines[-1] if lines else ""


def children_peak_mb() -> float:
    """The peak resident memory of the largest child process so far (ru_maxrss is in kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def stages(root: Path) -> dict[str, float]:
    """Seconds of each stage of `workspace.inspect`, in this process."""
    from sitegen.living.checks import living_problems
    from sitegen.living.duplicates import duplicate_problems
    from sitegen.living.facts import ReviewFacts
    from sitegen.review.folder import load_review
    from sitegen.screening.checks import screening_problems
    from sitegen.verify.passages import evidence_problems

    start = time.perf_counter()
    review, _ = load_review(root)
    loaded = time.perf_counter()
    if review is None:
        return {"load": loaded - start}
    facts = ReviewFacts(review)
    outcomes, duplicates = facts.outcomes, facts.duplicates
    derived = time.perf_counter()
    (screening_problems(review, outcomes, duplicates) + living_problems(review) + duplicate_problems(review)
     + evidence_problems(review, outcomes))
    checked = time.perf_counter()
    return {"load": loaded - start, "facts": derived - loaded, "inspect": checked - derived}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    as_installed()
    root = args.directory.resolve()
    records = sum(1 for _ in (root / "records.jsonl").open("rb")) if (root / "records.jsonl").exists() else 0
    print(f"review {root}: {records} records, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")

    startup = min(timed_subprocess([*SITEGEN, "--help"])[0] for _ in range(args.repeat))
    print(f"start-up (sitegen --help): {startup:.2f} s")

    with tempfile.TemporaryDirectory(prefix="sitegen-bench-kept-") as kept:
        os.environ["SITEGEN_CACHE_DIR"] = kept
        wall, last = timed_subprocess([*SITEGEN, "check", str(root)])
        print(f"sitegen check, nothing kept: {wall:.2f} s wall clock ({last})")
        wall, last = min(timed_subprocess([*SITEGEN, "check", str(root)]) for _ in range(args.repeat))
        # The check's peak: start-up alone never holds more than the check does.
        print(f"sitegen check, parse kept: {wall:.2f} s wall clock, peak RSS {children_peak_mb():.0f} MB ({last})")
        stage_figures(root, args.repeat)


def stage_figures(root: Path, repeat: int) -> None:
    best: dict[str, float] = {}
    for _ in range(repeat):
        for stage, seconds in stages(root).items():
            best[stage] = min(best.get(stage, seconds), seconds)
    print("stages (in one process): " + ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in best.items()))


if __name__ == "__main__":
    main()
