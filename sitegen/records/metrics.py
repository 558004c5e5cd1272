"""The offline retrieval benchmark: frozen ranked runs scored against graded judgments.

The metrics are those of seed 004's benchmark (`sitegen evaluate`, docs/evaluation.md):

- precision@k: the share of the top k that is relevant (grade > 0); the denominator is k even when
  the run returned fewer than k records.
- nDCG@k: DCG of the top k, gain 2^grade - 1 and discount log2(rank + 1) (rank 1-based), divided by
  the DCG of the best possible top k built from the WHOLE judged pool of the query, not only from
  what this run retrieved, so a run that misses judged-relevant records is penalised for it.
- known-item recall@k: the share of a query's known-relevant records found in the top k. Known
  items need no judgments.

A window (the top k) holding any record nobody judged is reported as "unjudged", never as 0: an
unjudged record may be relevant, so a number would be a guess presented as a measurement. The means
are taken over the queries whose value is a number, and the report says how many those are.

Pure: the files are read and validated by the caller (`sitegen.commands.evaluate`).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, StringConstraints, field_validator

METRICS_VERSION = "retrieval-metrics-v1"
MAX_K = 10_000

Id = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
Grade = Annotated[int, Field(ge=0, le=3)]
# A metric's value, or why there is none: the window holds an unjudged record, or (nDCG) the judged
# pool holds no relevant record, so no ranking could score above zero and the ratio is undefined.
Value = float | Literal["unjudged", "no-relevant-judged"]


class Runs(RootModel[dict[Id, list[Id]]]):
    """runs.json: query id -> the record ids one system returned, best first."""

    @field_validator("root")
    @classmethod
    def _each_once(cls, runs: dict[str, list[str]]) -> dict[str, list[str]]:
        for query, ranked in runs.items():
            repeated = sorted(record_id for record_id, times in Counter(ranked).items() if times > 1)
            if repeated:  # a ranking holds each record once; a repeat would count its relevance twice
                raise ValueError(f"the run of query {query!r} lists {', '.join(repeated[:5])} more than once")
        return runs


class Judgments(RootModel[dict[Id, dict[Id, Grade]]]):
    """judgments.json: query id -> record id -> grade 0 (not relevant) to 3 (highly relevant)."""


class KnownItems(RootModel[dict[Id, list[Id]]]):
    """known.json: query id -> ids of records known to be relevant (say, a review's included studies)."""


def precision_at(ranked: list[str], grades: dict[str, int] | None, k: int) -> Value:
    window = ranked[:k]
    if grades is None or any(record_id not in grades for record_id in window):
        return "unjudged"
    return sum(1 for record_id in window if grades[record_id] > 0) / k


def _dcg(grades: list[int]) -> float:
    return sum((2 ** grade - 1) / math.log2(rank + 1) for rank, grade in enumerate(grades, start=1))


def ndcg_at(ranked: list[str], grades: dict[str, int] | None, k: int) -> Value:
    window = ranked[:k]
    if grades is None or any(record_id not in grades for record_id in window):
        return "unjudged"
    ideal = _dcg(sorted(grades.values(), reverse=True)[:k])
    if ideal == 0:
        return "no-relevant-judged"
    return _dcg([grades[record_id] for record_id in window]) / ideal


def recall_at(ranked: list[str], known: list[str], k: int) -> float:
    """The share of the (non-empty) known items in the top k; an id listed twice in `known` is one item."""
    return len(set(ranked[:k]) & set(known)) / len(set(known))


class QueryReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str
    retrieved: int
    judged: int | None  # records judged for this query (the pool); None when the query has no judgments
    relevant_judged: int | None
    known: int | None  # known-relevant records; None when the query has none
    precision: dict[str, Value]  # k -> value
    ndcg: dict[str, Value]
    recall: dict[str, float] | None


class Mean(BaseModel):
    """The mean over the queries with a number at each k, and how many those were (its coverage)."""

    model_config = ConfigDict(extra="forbid")

    value: dict[str, float | None]  # None: no query had a number at this k
    coverage: dict[str, int]


class Report(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metrics_version: str = METRICS_VERSION
    ks: list[int]
    queries_run: int
    queries_judged: int
    queries_known: int
    per_query: list[QueryReport]
    precision: Mean
    ndcg: Mean
    recall: Mean
    warnings: list[str]


def _mean(values: list[dict[str, Value]], ks: list[int]) -> Mean:
    numbers = {str(k): [value[str(k)] for value in values if isinstance(value[str(k)], float | int)] for k in ks}
    return Mean(value={k: sum(found) / len(found) if found else None for k, found in numbers.items()},
                coverage={k: len(found) for k, found in numbers.items()})


def evaluate(runs: Runs, judgments: Judgments, known: KnownItems | None, ks: list[int]) -> Report:
    """Every query of `runs` scored at every k; queries judged or known but never run are warned about."""
    if not ks or any(not 1 <= k <= MAX_K for k in ks):
        raise ValueError(f"each k must be between 1 and {MAX_K}")
    ks = sorted(set(ks))
    known_items = known.root if known is not None else {}
    reports = []
    for query, ranked in sorted(runs.root.items()):
        grades = judgments.root.get(query)
        items = known_items.get(query) or None
        reports.append(QueryReport(
            query=query, retrieved=len(ranked),
            judged=len(grades) if grades is not None else None,
            relevant_judged=sum(1 for grade in grades.values() if grade > 0) if grades is not None else None,
            known=len(set(items)) if items else None,
            precision={str(k): precision_at(ranked, grades, k) for k in ks},
            ndcg={str(k): ndcg_at(ranked, grades, k) for k in ks},
            recall={str(k): recall_at(ranked, items, k) for k in ks} if items else None))
    warnings = [f"{name} name(s) query {query!r}, which no run has; it is not evaluated"
                for name, queries in (("judgments", judgments.root), ("known items", known_items))
                for query in sorted(set(queries) - set(runs.root))]
    return Report(
        ks=ks, queries_run=len(reports),
        queries_judged=sum(1 for report in reports if report.judged is not None),
        queries_known=sum(1 for report in reports if report.recall is not None),
        per_query=reports,
        precision=_mean([report.precision for report in reports], ks),
        ndcg=_mean([report.ndcg for report in reports], ks),
        recall=_mean([report.recall for report in reports if report.recall is not None], ks),
        warnings=warnings)
