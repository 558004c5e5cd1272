#!/usr/bin/env python3
"""The retrieval metrics of `sitegen evaluate` on real labels: the example review's recorded search order
scored against the SYNERGY Sep_2021 inclusion labels.

The run is the order in which the example's second recorded run (reviews/object-in-context/runs/
20230417T000000Z-*, all 271 works) received the works: the records in its snapshot pages, page after page.
That run was recorded against a simulated OpenAlex server answering with the SYNERGY works in the
dataset's own order (see the example's README), so this measures that order, not OpenAlex's relevance
ranking. The judgments are labels.csv: included = grade 1, excluded = grade 0, every record judged; the
known items are the included studies. A random order (mean over 20 seeds) is printed beside it as the
floor any ranking should beat.

    python bench/search_metrics.py [--labels ../shared/realdata/topic/synergy_Sep_2021/labels.csv]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitegen.commands import evaluate  # noqa: E402
from sitegen.records.ids import normalise_openalex  # noqa: E402
from sitegen.records.metrics import Judgments, KnownItems, Report, Runs  # noqa: E402
from sitegen.records.metrics import evaluate as score  # noqa: E402

EXAMPLE = ROOT / "reviews" / "object-in-context"
LABELS = ROOT.parent / "shared" / "realdata" / "topic" / "synergy_Sep_2021" / "labels.csv"
KS = [10, 25, 50, 100, 200]
QUERY = "object-in-context"
SEEDS = 20


def recorded_order(review: Path) -> list[str]:
    """OpenAlex ids in the order the latest recorded run's pages listed them."""
    [manifest] = sorted((review / "runs").glob("*.json"))[-1:]
    order: list[str] = []
    for source in json.loads(manifest.read_text())["sources"]:
        for digest in source["snapshot_hashes"]:
            body = (review / "snapshots" / digest[:2] / digest).read_bytes()
            assert hashlib.sha256(body).hexdigest() == digest, f"snapshot {digest} was edited"
            order += [normalise_openalex(work["id"]) for work in json.loads(body)["results"]]
    return order


def labels(path: Path) -> dict[str, int]:
    with path.open(newline="") as handle:
        return {normalise_openalex(row["openalex_id"]): int(row["label_included"]) for row in csv.DictReader(handle)}


METRICS = (("P", "precision"), ("nDCG", "ndcg"), ("R", "recall"))


def figures(reports: list[Report]) -> dict[str, dict[str, float]]:
    """Each metric's mean at each k, averaged over the reports (one query each, every window judged)."""
    return {metric: {str(k): sum(getattr(report, metric).value[str(k)] for report in reports) / len(reports)
                     for k in KS} for _, metric in METRICS}


def line(name: str, values: dict[str, dict[str, float]]) -> str:
    return f"{name:17} " + " | ".join(" ".join(f"{short}@{k}={values[metric][str(k)]:.3f}" for k in KS)
                                      for short, metric in METRICS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    args = parser.parse_args()
    if not args.labels.is_file():  # the default is where the shared data sits beside this clone, not everywhere
        parser.error(f"no labels file at {args.labels}: pass --labels PATH to SYNERGY Sep_2021's labels.csv")
    grades = labels(args.labels)
    order = recorded_order(EXAMPLE)
    included = sorted(record_id for record_id, grade in grades.items() if grade)
    unlabelled = [record_id for record_id in order if record_id not in grades]
    print(f"{len(order)} records in the recorded order, {len(grades)} labelled, {len(included)} included, "
          f"{len(unlabelled)} recorded but unlabelled (their windows are unjudged)")
    with tempfile.TemporaryDirectory() as folder:  # through the command's own file reading
        files = {name: Path(folder) / f"{name}.json" for name in ("runs", "judgments", "known")}
        for name, data in (("runs", {QUERY: order}), ("judgments", {QUERY: grades}), ("known", {QUERY: included})):
            files[name].write_text(json.dumps(data))
        recorded = evaluate(files["runs"], files["judgments"], files["known"], KS, Path(folder) / "report.json")
    print(line("recorded order", figures([recorded])))
    shuffled = []
    for seed in range(SEEDS):
        random_order = list(order)
        random.Random(seed).shuffle(random_order)
        shuffled.append(score(Runs({QUERY: random_order}), Judgments({QUERY: grades}),
                              KnownItems({QUERY: included}), KS))
    print(line(f"random ({SEEDS} seeds)", figures(shuffled)))

if __name__ == "__main__":
    main()
