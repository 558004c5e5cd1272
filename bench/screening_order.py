#!/usr/bin/env python3
"""Screening order, simulated on every SYNERGY-labelled dataset available offline with texts.

For each dataset and each seed: start from one include and one exclude chosen by the seed, then
repeatedly screen the top-ranked record still unscreened, reveal its label and retrain (the
active-learning loop of ASReview's simulation mode). The two starting records count as screened.
Printed per order, as mean (sd) over the seeds:

- WSS@95: (N - records screened to 95% recall) / N - 0.05;
- records screened to 95% and to 100% recall;
- recall after 10% and 25% of the records.

Orders compared: sitegen's ranker (sitegen.screening.ranking: each model it offers, each with three
class-balance choices), the seed-002 formula (scored once, no learning: relevance.score_batch with the
example review's protocol, as `sitegen digest` scores a batch) and random order. It also prints
the share of the dataset's includes the seed-002 digest marks DROP.

Datasets: ../shared/realdata/topic/synergy_Sep_2021 (271 OpenAlex works with abstracts, read with
sitegen's OpenAlex parser, and labels.csv). ../shared/realdata/synergy/Donners_2021 holds ids only
(no titles or abstracts offline), so it is skipped: a text ranker has nothing to read.

    .venv/bin/python bench/screening_order.py [--seeds 20] [--realdata ../shared/realdata]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sklearn

from sitegen.records.model import Record
from sitegen.review.folder import parse_protocol
from sitegen.review.models import ProtocolMeta
from sitegen.screening.ranking import (
    DEFAULT_MODEL,
    INCLUDE_WEIGHT,
    MODEL_LABELS,
    MODELS,
    content_key,
    fit_model,
    model_scores,
    text_of,
    vectorizer,
)
from sitegen.screening.relevance import score_batch
from sitegen.sources.openalex import work_to_record

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_PROTOCOL = ROOT / "reviews" / "object-in-context" / "protocol.md"
# Class balance: the includes' total weight over the excludes' (ranking.sample_weights).
WEIGHTS = {INCLUDE_WEIGHT: f"includes weigh {INCLUDE_WEIGHT}x", 1.0: "classes weigh the same", None: "unweighted"}


@dataclass(frozen=True)
class Dataset:
    name: str
    records: list[Record]  # in canonical order (content, then id)
    labels: np.ndarray  # 1 include, 0 exclude, aligned with records


def load_synergy_topic(folder: Path) -> Dataset:
    labels: dict[str, int] = {}
    with (folder / "labels.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            labels[row["openalex_id"].rsplit("/", 1)[-1]] = int(row["label_included"])
    records = []
    for path in sorted((folder / "works_1").glob("works_*.json")):
        for work in json.loads(path.read_text(encoding="utf-8")):
            record = work_to_record(work)
            if record is not None and record.custom.openalex in labels:
                records.append(record)
    records.sort(key=content_key)
    return Dataset(folder.name, records, np.array([labels[record.custom.openalex] for record in records]))


def starting_pair(labels: np.ndarray, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.choice(np.flatnonzero(labels == 1).tolist()), rng.choice(np.flatnonzero(labels == 0).tolist())]


def active_learning(dataset: Dataset, matrix, model: str, include_weight: float | None, seed: int) -> list[int]:
    """The order in which records are screened: query the top-scored unscreened record, retrain."""
    screened = starting_pair(dataset.labels, seed)
    remaining = sorted(set(range(len(dataset.records))) - set(screened))
    includes_left = int(dataset.labels[remaining].sum())
    keys = [content_key(record) for record in dataset.records]
    while remaining and includes_left:
        estimator = fit_model(matrix[screened], dataset.labels[screened], model, include_weight)
        scores = model_scores(estimator, matrix[remaining])
        best = min(range(len(remaining)), key=lambda i: (-scores[i], keys[remaining[i]]))
        chosen = remaining.pop(best)
        screened.append(chosen)
        includes_left -= int(dataset.labels[chosen])
    return screened + remaining  # once every include is found the rest changes no figure


def fixed_order(first: list[int], order: list[int]) -> list[int]:
    return first + [i for i in order if i not in first]


@dataclass(frozen=True)
class Figures:
    wss95: float
    to95: int
    to100: int
    recall10: float
    recall25: float


def figures(order: list[int], labels: np.ndarray) -> Figures:
    total, n = int(labels.sum()), len(labels)
    found = np.cumsum(labels[order])
    to95 = int(np.argmax(found >= math.ceil(0.95 * total))) + 1
    to100 = int(np.argmax(found >= total)) + 1
    return Figures(wss95=(n - to95) / n - 0.05, to95=to95, to100=to100,
                   recall10=found[math.ceil(0.10 * n) - 1] / total, recall25=found[math.ceil(0.25 * n) - 1] / total)


def summary(runs: list[Figures]) -> str:
    def cell(values: list[float], digits: int) -> str:
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):.{digits}f} ({sd:.{digits}f})"
    return " | ".join([cell([r.wss95 for r in runs], 3), cell([r.to95 for r in runs], 1),
                       cell([r.to100 for r in runs], 1), cell([r.recall10 for r in runs], 3),
                       cell([r.recall25 for r in runs], 3)])


def seed002_order(dataset: Dataset, protocol: ProtocolMeta) -> tuple[list[int], int]:
    """The records in seed-002 order (score, then id, as shipped) and how many includes are DROP."""
    ranking = score_batch(dataset.records, protocol, [], max_kept=len(dataset.records))
    position = {record.id: i for i, record in enumerate(dataset.records)}
    dropped = sum(int(dataset.labels[position[scored.id]]) for scored in ranking.decisions if scored.decision == "DROP")
    return [position[scored.id] for scored in ranking.decisions], dropped


def run(dataset: Dataset, seeds: int, protocol: ProtocolMeta, out: Callable[[str], None]) -> None:
    n, total = len(dataset.records), int(dataset.labels.sum())
    out(f"\n## {dataset.name}: {n} records, {total} includes, {seeds} seeds\n")
    out("| order | WSS@95 | screened to 95% | screened to 100% | recall@10% | recall@25% | seconds |")
    out("| --- | --- | --- | --- | --- | --- | --- |")
    started = time.perf_counter()
    matrix = vectorizer().fit_transform([text_of(record) for record in dataset.records]).tocsr()
    features_time = time.perf_counter() - started
    for model in MODELS:
        for include_weight in WEIGHTS:
            started = time.perf_counter()
            runs = [figures(active_learning(dataset, matrix, model, include_weight, seed), dataset.labels)
                    for seed in range(seeds)]
            seconds = time.perf_counter() - started + features_time
            default = " (default)" if (model, include_weight) == (DEFAULT_MODEL, INCLUDE_WEIGHT) else ""
            name = f"sitegen: {MODEL_LABELS[model]}, {WEIGHTS[include_weight]}{default}"
            out(f"| {name} | {summary(runs)} | {seconds:.1f} |")
    started = time.perf_counter()
    order, dropped = seed002_order(dataset, protocol)
    runs = [figures(fixed_order(starting_pair(dataset.labels, seed), order), dataset.labels) for seed in range(seeds)]
    out(f"| seed-002 formula (scored once) | {summary(runs)} | {time.perf_counter() - started:.1f} |")
    started = time.perf_counter()
    runs = []
    for seed in range(seeds):
        shuffled = list(range(n))
        random.Random(seed).shuffle(shuffled)
        runs.append(figures(fixed_order(starting_pair(dataset.labels, seed), shuffled), dataset.labels))
    out(f"| random order | {summary(runs)} | {time.perf_counter() - started:.1f} |")
    out(f"\nseed-002 digest (the example review's protocol): {dropped} of the {total} published includes "
        f"marked DROP ({dropped / total:.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--realdata", type=Path, default=ROOT.parent / "shared" / "realdata")
    args = parser.parse_args()
    protocol, problems = parse_protocol(EXAMPLE_PROTOCOL.read_text(encoding="utf-8"))
    if protocol is None:
        raise SystemExit(f"{EXAMPLE_PROTOCOL}: {problems}")
    print(f"# Screening order benchmark\n\nmachine: {platform.machine()} {platform.processor() or ''}, "
          f"{os.cpu_count()} CPU(s), Python {platform.python_version()}, scikit-learn {sklearn.__version__}")
    topic = args.realdata / "topic" / "synergy_Sep_2021"
    run(load_synergy_topic(topic), args.seeds, protocol.meta, print)
    donners = args.realdata / "synergy" / "Donners_2021"
    if donners.exists():
        print(f"\nskipped: {donners.name} ({donners}): ids only (doi, openalex_id, pmid, label), no titles or "
              "abstracts offline, so there is no text to rank")


if __name__ == "__main__":
    main()
