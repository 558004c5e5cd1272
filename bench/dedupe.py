#!/usr/bin/env python3
"""`sitegen dedupe`'s engine on real review searches (bib-dedupe's benchmark data), scored by the shared scorer.

For every dataset folder (records_pre_merged.csv, merged_record_ids.csv) it runs the engine
(identity graph, then the metadata matcher) and scores, with ../shared/bench/score_dedupe.py's
per-record counting (bib-dedupe's), two results: the automatic merges alone, and the merges
with every probable pair accepted (what a reviewer confirming all suggestions would get).
It prints TP, FP, FN, TN, sensitivity, specificity and seconds (engine only) per dataset and pooled.

    python bench/dedupe.py [--data ../shared/realdata/dedupe] [--scorer ../shared/bench/score_dedupe.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

from sitegen.records.dedupe import dedupe_rows, read_rows

COUNTS = ("TP", "FP", "FN", "TN")


def load_scorer(path: Path):
    spec = importlib.util.spec_from_file_location("score_dedupe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def with_pairs(sets: list[list[str]], pairs: list[tuple[str, str, float]]) -> list[list[str]]:
    """The sets joined by every pair (union-find over IDs)."""
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
    for first, second, _ in pairs:
        parent[find(second)] = find(first)
    groups: dict[str, list[str]] = {}
    for item in list(parent):
        groups.setdefault(find(item), []).append(item)
    return [sorted(members) for members in groups.values() if len(members) > 1]


def rates(counts: dict[str, int]) -> tuple[float, float]:
    tp, fp, fn, tn = (counts[name] for name in COUNTS)
    return tp / (tp + fn) if tp + fn else 0.0, tn / (tn + fp) if tn + fp else 0.0


def line(name: str, method: str, counts: dict[str, int], seconds: float) -> str:
    sensitivity, specificity = rates(counts)
    return (f"{name:20} {method:18} " + " ".join(f"{counts[c]:6}" for c in COUNTS)
            + f" {sensitivity:7.4f} {specificity:7.4f} {seconds:6.2f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/realdata/dedupe"))
    parser.add_argument("--scorer", type=Path, default=Path("../shared/bench/score_dedupe.py"))
    args = parser.parse_args()
    scorer = load_scorer(args.scorer)
    print(f"{'dataset':20} {'method':18} " + " ".join(f"{c:>6}" for c in COUNTS) + "   sens.   spec.    time")
    pooled = {method: dict.fromkeys(COUNTS, 0) for method in ("merges", "+ probable")}
    total = 0.0
    for dataset in sorted(p for p in args.data.iterdir() if (p / "records_pre_merged.csv").exists()):
        rows = read_rows((dataset / "records_pre_merged.csv").read_text(encoding="utf-8"))
        started = time.perf_counter()
        matches = dedupe_rows(rows)
        seconds = time.perf_counter() - started
        total += seconds
        all_ids = scorer.read_col(dataset / "records_pre_merged.csv", "ID")
        true_sets = [s.split(";") for s in scorer.read_col(dataset / "merged_record_ids.csv", "merged_ids")]
        for method, sets in (("merges", matches.sets), ("+ probable", with_pairs(matches.sets, matches.probable))):
            in_pred = {x for s in sets for x in s}
            kept = [x for x in all_ids if x not in in_pred] + [s[0] for s in sets]
            counts = scorer.per_record(all_ids, true_sets, kept)
            for name in COUNTS:
                pooled[method][name] += counts[name]
            print(line(dataset.name, method, counts, seconds))
    for method, counts in pooled.items():
        print(line("pooled", method, counts, total))


if __name__ == "__main__":
    main()
