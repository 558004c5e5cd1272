#!/usr/bin/env python3
"""Build and check figures for a large review, as issue 14 measures them.

    python bench/build_scale.py REVIEW_DIR [--out SITE_DIR]

REVIEW_DIR is a review made by bench/make_review.py (it is copied; the copy is changed, never
the original). Printed, each as wall-clock seconds and peak memory of one `sitegen` process:
- the floor: reading the review's files and writing the bytes of the built site again;
- a cold `sitegen build` (no site yet), and its ratio to the floor;
- a rebuild with nothing changed;
- a rebuild after one full-text decision changed (a study excluded), and after a second one
  (the first change also makes the review differ from its latest version, which every page says);
- `sitegen check`.
Also the files of the site and how many pages each build rendered.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SITEGEN = [sys.executable, "-m", "sitegen"]
# Runs one command and reports its peak memory on its last line of standard error.
PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(code)")


def timed(command: list[str]) -> tuple[float, float, str]:
    """Seconds, peak RSS (MB) and output of one command."""
    started = time.perf_counter()
    finished = subprocess.run([sys.executable, "-c", PEAK, *command], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if finished.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({finished.returncode}):\n{finished.stdout[-2000:]}{finished.stderr[-2000:]}")
    return seconds, int(finished.stderr.strip().splitlines()[-1]) / 1024, finished.stdout.strip()


def floor(review: Path, site: Path, scratch: Path) -> float:
    """Reading every file of the review, and writing every file of the site again, elsewhere."""
    started = time.perf_counter()
    for path in review.rglob("*"):
        if path.is_file():
            path.read_bytes()
    for path in site.rglob("*"):
        if path.is_file():
            target = scratch / path.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return time.perf_counter() - started


def change_one_decision(review: Path) -> str:
    """Exclude one included study at full text (both reviewers), as a reviewer's pull request would."""
    for name in ("reviewer-a.csv", "reviewer-b.csv"):
        path = review / "screening" / "full-text" / name
        rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
        changed = next(i for i, row in enumerate(rows) if row[1:3] == ["include", ""])
        rows[changed][1:3] = ["exclude", "non-rodent"]
        with path.open("w", encoding="utf-8", newline="") as file:
            csv.writer(file, lineterminator="\n").writerows(rows)
        (review / "evidence" / f"{re.sub('[/.]', '-', rows[changed][0])}.yaml").unlink(missing_ok=True)
    return rows[changed][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("review", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sitegen-bench-", dir=Path.cwd()) as folder:
        work = Path(folder)
        review, site = work / "review", work / "site"
        shutil.copytree(args.review, review)
        records = sum(1 for _ in (review / "records.jsonl").open(encoding="utf-8"))
        print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
              f"{platform.system()} {platform.release()}")
        print(f"review: {records} records")
        figures = []
        for label, prepare in (("cold build", None), ("rebuild, nothing changed", None),
                               ("rebuild, one decision changed", change_one_decision),
                               ("rebuild, another decision changed", change_one_decision)):
            if prepare:
                prepare(review)
            seconds, peak, said = timed([*SITEGEN, "build", str(review), "--out", str(site)])
            figures.append((label, seconds, peak, said))
        seconds, peak, said = timed([*SITEGEN, "check", str(review)])
        figures.append(("check", seconds, peak, said))
        files = sum(1 for path in site.rglob("*") if path.is_file())
        size = sum(path.stat().st_size for path in site.rglob("*") if path.is_file()) / 1e6
        base = floor(review, site, work / "floor")
        print(f"site: {files} files, {size:.0f} MB; floor (read the review, write the site's bytes): {base:.1f} s")
        print("| step | seconds | peak MB | sitegen said |")
        print("|---|---|---|---|")
        for label, seconds, peak, said in figures:
            ratio = f" ({seconds / base:.1f}x floor)" if label == "cold build" else ""
            print(f"| {label} | {seconds:.1f}{ratio} | {peak:.0f} | {said.splitlines()[-1][:90]} |")


if __name__ == "__main__":
    main()
