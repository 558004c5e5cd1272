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
Memory: the largest process's peak RSS, and the peak summed PSS of all the command's processes (a
build forks one renderer per processor), sampled every few seconds.
Also the files of the site and how many pages each build rendered. Parses are kept between commands
(`sitegen.review.kept`) in a folder of the bench's own, empty at first: the cold build reads every file
afresh and keeps its parse of records.jsonl, which the later steps (records.jsonl unchanged) read instead.
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

from installed import as_installed

SITEGEN = [sys.executable, "-m", "sitegen"]
# Reading a process's PSS walks its page tables (about 80 ms for a 2 GB process, slowing it meanwhile):
# it is sampled seldom, so as to change the times it is measured with as little as possible.
SAMPLE_SECONDS = 3.0


def timed(command: list[str]) -> tuple[float, float, float, str]:
    """Seconds, peak memory and output of one command. Memory twice, in MB: the peak resident size of its
    largest process, and the largest sum, over the command's process and the processes it forks to
    render pages, of each one's proportional set size (PSS: its own pages and its share of the pages it
    shares), sampled every SAMPLE_SECONDS."""
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
        pss, sampled = 0, started
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - sampled >= SAMPLE_SECONDS:
                pss, sampled = max(pss, _tree_pss(process.pid)), time.perf_counter()
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        said = out.read()
    if process.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({process.returncode}):\n{said[-4000:]}")
    return seconds, usage.ru_maxrss / 1024, pss / 1024, said.strip()


def _tree_pss(root: int) -> int:
    """The PSS (kB) of process `root` and of every process under it."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    tree, grew = {root}, True
    while grew:
        below = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= below
        grew = bool(below)
    total = 0
    for pid in tree:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)
    return total


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
    as_installed()
    with tempfile.TemporaryDirectory(prefix="sitegen-bench-", dir=Path.cwd()) as folder:
        work = Path(folder)
        review, site = work / "review", work / "site"
        os.environ["SITEGEN_CACHE_DIR"] = str(work / "kept")  # nothing kept before the cold build
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
            figures.append((label, *timed([*SITEGEN, "build", str(review), "--out", str(site)])))
        figures.append(("check", *timed([*SITEGEN, "check", str(review)])))
        files = sum(1 for path in site.rglob("*") if path.is_file())
        size = sum(path.stat().st_size for path in site.rglob("*") if path.is_file()) / 1e6
        base = floor(review, site, work / "floor")
        print(f"site: {files} files, {size:.0f} MB; floor (read the review, write the site's bytes): {base:.1f} s")
        print("| step | seconds | peak RSS MB, largest process | peak PSS MB, all its processes | sitegen said |")
        print("|---|---|---|---|---|")
        for label, seconds, rss, pss, said in figures:
            ratio = f" ({seconds / base:.1f}x floor)" if label == "cold build" else ""
            sampled = f"{pss:.0f}" if pss else "(ended before a sample)"
            print(f"| {label} | {seconds:.1f}{ratio} | {rss:.0f} | {sampled} | {said.splitlines()[-1][:90]} |")


if __name__ == "__main__":
    main()
