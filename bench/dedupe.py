#!/usr/bin/env python3
"""`sitegen dedupe` on real review searches (bib-dedupe's benchmark data), scored by the shared scorer.

For every dataset folder (records_pre_merged.csv, merged_record_ids.csv) it runs the command
`sitegen dedupe records_pre_merged.csv --out predicted.csv` in a subprocess and scores what it wrote with ../shared/bench/score_dedupe.py's
per-record counting (bib-dedupe's):

- "merges": the automatic merges alone (predicted.csv);
- "+ confirmed": the merges plus the probable pairs a reviewer confirms (predicted-probable.csv,
  pairs of one true set accepted, the others rejected): what the review gets once every listed pair
  is decided.

It also prints the pairs a reviewer is asked about (and how many are true), "false pairs": record
pairs joined by a predicted set that the truth keeps apart (the per-record counts cannot see a set that
joins two true duplicate sets; this can), and two times: the command's wall clock, start-up included,
and the engine's alone (reading the file and deduplicating, in this process, as bib-dedupe's published
times are taken).

    python bench/dedupe.py [--data ../shared/realdata/dedupe] [--scorer ../shared/bench/score_dedupe.py]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sitegen.records.dedupe import dedupe_rows
from sitegen.references import read_references

COUNTS = ("TP", "FP", "FN", "TN")


def load_scorer(path: Path):
    spec = importlib.util.spec_from_file_location("score_dedupe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def joined(sets: list[list[str]], pairs: list[tuple[str, str]]) -> list[list[str]]:
    """The sets joined by the pairs (union-find over IDs)."""
    parent: dict[str, str] = {}

    def find(item: str) -> str:
        parent.setdefault(item, item)
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for members in sets:
        for other in members[1:]:
            parent[find(other)] = find(members[0])
    for first, second in pairs:
        parent[find(second)] = find(first)
    groups: dict[str, list[str]] = {}
    for item in list(parent):
        groups.setdefault(find(item), []).append(item)
    return [sorted(members) for members in groups.values() if len(members) > 1]


def rates(counts: dict[str, int]) -> tuple[float, float]:
    tp, fp, fn, tn = (counts[name] for name in COUNTS)
    return tp / (tp + fn) if tp + fn else 0.0, tn / (tn + fp) if tn + fp else 0.0


def line(name: str, method: str, counts: dict[str, int], extra: str) -> str:
    sensitivity, specificity = rates(counts)
    return (f"{name:20} {method:12} " + " ".join(f"{counts[c]:6}" for c in COUNTS)
            + f" {sensitivity:7.4f} {specificity:7.4f} {counts['false pairs']:6} {extra}")


def engine_seconds(source: Path) -> float:
    started = time.perf_counter()
    dedupe_rows(read_references(source))
    return time.perf_counter() - started


def run_dedupe(source: Path, folder: Path) -> tuple[list[list[str]], list[tuple[str, str]], float]:
    out = folder / "predicted.csv"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sitegen", "dedupe", str(source), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    with open(out, newline="", encoding="utf-8") as handle:
        sets = [row["merged_ids"].split(";") for row in csv.DictReader(handle)]
    with open(folder / "predicted-probable.csv", newline="", encoding="utf-8") as handle:
        pairs = [(row["first"], row["second"]) for row in csv.DictReader(handle)]
    return sets, pairs, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/realdata/dedupe"))
    parser.add_argument("--scorer", type=Path, default=Path("../shared/bench/score_dedupe.py"))
    args = parser.parse_args()
    scorer = load_scorer(args.scorer)
    print(f"{'dataset':20} {'method':12} " + " ".join(f"{c:>6}" for c in COUNTS)
          + "   sens.   spec. f.pair  command, engine / pairs asked (true)")
    methods = ("merges", "+ confirmed")
    pooled = {method: dict.fromkeys((*COUNTS, "false pairs"), 0) for method in methods}
    total_seconds, total_engine, total_asked, total_true = 0.0, 0.0, 0, 0
    for dataset in sorted(p for p in args.data.iterdir() if (p / "records_pre_merged.csv").exists()):
        with tempfile.TemporaryDirectory() as scratch:
            sets, pairs, seconds = run_dedupe(dataset / "records_pre_merged.csv", Path(scratch))
        engine = engine_seconds(dataset / "records_pre_merged.csv")
        total_seconds, total_engine = total_seconds + seconds, total_engine + engine
        all_ids = scorer.read_col(dataset / "records_pre_merged.csv", "ID")
        true_sets = [s.split(";") for s in scorer.read_col(dataset / "merged_record_ids.csv", "merged_ids")]
        true_of = {key: n for n, members in enumerate(true_sets) for key in members}
        confirmed = [(a, b) for a, b in pairs if true_of.get(a, a) == true_of.get(b, b)]
        total_asked, total_true = total_asked + len(pairs), total_true + len(confirmed)
        for method, predicted in (("merges", sets), ("+ confirmed", joined(sets, confirmed))):
            in_predicted = {key for members in predicted for key in members}
            kept = [key for key in all_ids if key not in in_predicted] + [members[0] for members in predicted]
            counts = scorer.per_record(all_ids, true_sets, kept)
            counts["false pairs"] = scorer.pairwise(true_sets, predicted)["pair_FP"]
            for name in pooled[method]:
                pooled[method][name] += counts[name]
            extra = f"{seconds:6.2f}s, {engine:5.2f}s" if method == "merges" else f"{len(pairs)} ({len(confirmed)})"
            print(line(dataset.name, method, counts, extra))
    print(line("pooled", "merges", pooled["merges"], f"{total_seconds:6.2f}s, {total_engine:5.2f}s"))
    print(line("pooled", "+ confirmed", pooled["+ confirmed"], f"{total_asked} ({total_true})"))


if __name__ == "__main__":
    main()
