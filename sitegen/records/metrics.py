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
unjudged record may be relevant, so a number would be a guess presented as a measurement. The
benchmark's queries are every query any of the three files names; one judged or known but never run
is reported as "no-run", not dropped. The means are taken over the queries whose value is a number,
and the report says how many those are out of how many queries.

Record ids are compared normalised (`benchmark_id`), so `10.1000/ABC` and `https://doi.org/10.1000/abc`,
or `https://openalex.org/W123` and `W123`, are one record wherever they are written.

Pure: the files are read and validated by the caller (`sitegen.commands.evaluate`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, RootModel, StringConstraints

from sitegen.records.ids import written_record_id

METRICS_VERSION = "retrieval-metrics-v1"
MAX_K = 10_000



def benchmark_id(value: str) -> str:
    """One spelling per record id: a DOI lower-cased without its resolver address or label, an OpenAlex work
    as openalex:W…, a PMID written with its prefix (pmid:, a PubMed address) as pmid:…, a PMCID as pmcid:PMC…
    (the record-id forms, sitegen.records.ids); anything else as written, without surrounding whitespace. A
    bare number stays a number: it may be a PMID or any system's own id."""
    text = value.strip()
    if not text:
        raise ValueError("is blank: a record id has at least one character besides spaces")
    if text.isdigit():
        return text
    return written_record_id(text, ("doi", "openalex", "pmid", "pmcid")) or text


def _once_each(ids: list[str]) -> list[str]:
    repeated = sorted(record_id for record_id, times in Counter(ids).items() if times > 1)
    if repeated:  # a ranking holds each record once; a repeat would count its relevance twice
        raise ValueError(f"lists {', '.join(repeated[:5])} more than once (ids are compared normalised: "
                         "DOIs in lower case, OpenAlex, PubMed and PMC ids without their address)")
    return ids


def _distinct_keys(grades: object) -> object:
    """Refuses two judged ids that are one record (say a DOI in two cases): which grade holds is not known."""
    if isinstance(grades, dict):
        seen: dict[str, str] = {}
        for key in grades:
            if isinstance(key, str) and (normal := benchmark_id(key)) in seen:
                raise ValueError(f"{seen[normal]!r} and {key!r} are the same record ({normal}); judge it once")
            seen[benchmark_id(key) if isinstance(key, str) else key] = key
    return grades


Id = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
RecordId = Annotated[Id, AfterValidator(benchmark_id)]
# strict: true, "2" and 2.0 are not grades (a JSON boolean or string in a grade column is a mistake to show)
Grade = Annotated[int, Field(ge=0, le=3, strict=True)]
# A metric's value, or why there is none: the window holds an unjudged record; (nDCG) the judged pool
# holds no relevant record, so no ranking could score above zero and the ratio is undefined; or the
# query was judged or known but no run of it was given.
Value = float | Literal["unjudged", "no-relevant-judged", "no-run"]


class Runs(RootModel[dict[Id, Annotated[list[RecordId], AfterValidator(_once_each)]]]):
    """runs.json: query id -> the record ids one system returned, best first."""


class Judgments(RootModel[dict[Id, Annotated[dict[RecordId, Grade], BeforeValidator(_distinct_keys)]]]):
    """judgments.json: query id -> record id -> grade 0 (not relevant) to 3 (highly relevant)."""


class KnownItems(RootModel[dict[Id, list[RecordId]]]):
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
    retrieved: int | None  # None: no run of this query was given
    judged: int | None  # records judged for this query (the pool); None when the query has no judgments
    relevant_judged: int | None
    known: int | None  # known-relevant records; None when the query has none
    precision: dict[str, Value]  # k -> value
    ndcg: dict[str, Value]
    recall: dict[str, float | Literal["no-run"]] | None


class Mean(BaseModel):
    """The mean over the queries with a number at each k, and how many those were (its coverage)."""

    model_config = ConfigDict(extra="forbid")

    value: dict[str, float | None]  # None: no query had a number at this k
    coverage: dict[str, int]


class Report(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metrics_version: str = METRICS_VERSION
    ks: list[int]
    queries: int  # every query any input names: the coverage denominator
    queries_run: int
    queries_judged: int
    queries_known: int
    per_query: list[QueryReport]
    precision: Mean
    ndcg: Mean
    recall: Mean
    warnings: list[str]

    def coverage(self, mean: Mean, k: str) -> str:
        """How many of the benchmark's queries a mean at k is over, e.g. "2 of 5 queries; 1 without a run"."""
        missing = self.queries - self.queries_run
        return f"{mean.coverage[k]} of {self.queries} {'query' if self.queries == 1 else 'queries'}" + (f"; {missing} without a run" if missing else "")


def _mean(values: list[dict[str, Value]], ks: list[int]) -> Mean:
    numbers = {str(k): [value[str(k)] for value in values if isinstance(value[str(k)], float | int)] for k in ks}
    return Mean(value={k: sum(found) / len(found) if found else None for k, found in numbers.items()},
                coverage={k: len(found) for k, found in numbers.items()})


def _scored(metric: Callable[[list[str], Any, int], Value], ranked: list[str] | None, data: Any,
            ks: list[int]) -> dict[str, Value]:
    return {str(k): "no-run" if ranked is None else metric(ranked, data, k) for k in ks}


def evaluate(runs: Runs, judgments: Judgments, known: KnownItems | None, ks: list[int]) -> Report:
    """Every query any input names scored at every k; one judged or known but never run is "no-run"."""
    if not ks or any(not 1 <= k <= MAX_K for k in ks):
        raise ValueError(f"each k must be between 1 and {MAX_K}")
    ks = sorted(set(ks))
    known_items = known.root if known is not None else {}
    queries = sorted(set(runs.root) | set(judgments.root) | set(known_items))
    reports = []
    for query in queries:
        ranked = runs.root.get(query)
        grades = judgments.root.get(query)
        items = known_items.get(query) or None
        reports.append(QueryReport(
            query=query, retrieved=len(ranked) if ranked is not None else None,
            judged=len(grades) if grades is not None else None,
            relevant_judged=sum(1 for grade in grades.values() if grade > 0) if grades is not None else None,
            known=len(set(items)) if items else None,
            precision=_scored(precision_at, ranked, grades, ks), ndcg=_scored(ndcg_at, ranked, grades, ks),
            recall=_scored(recall_at, ranked, items, ks) if items else None))
    return Report(
        ks=ks, queries=len(queries), queries_run=len(runs.root),
        queries_judged=sum(1 for report in reports if report.judged is not None),
        queries_known=sum(1 for report in reports if report.recall is not None),
        per_query=reports,
        precision=_mean([report.precision for report in reports], ks),
        ndcg=_mean([report.ndcg for report in reports], ks),
        recall=_mean([report.recall for report in reports if report.recall is not None], ks),
        warnings=_warnings(runs, judgments, known_items))


def _warnings(runs: Runs, judgments: Judgments, known_items: dict[str, list[str]]) -> list[str]:
    """What makes the benchmark weaker than it looks: queries never run, empty known lists, known items
    judged not relevant (one of the two files is wrong)."""
    warnings = [f"{name} name query {query!r}, which no run has: it is reported as no-run"
                for name, queries in (("judgments", judgments.root), ("known items", known_items))
                for query in sorted(set(queries) - set(runs.root))]
    warnings += [f"known items of query {query!r} are an empty list: its recall is not measured"
                 for query, items in sorted(known_items.items()) if not items]
    for query, items in sorted(known_items.items()):
        grades = judgments.root.get(query, {})
        zero = sorted({item for item in items if grades.get(item) == 0})
        if zero:
            warnings.append(f"query {query!r}: {', '.join(zero[:5])} {'is' if len(zero) == 1 else 'are'} known "
                            "relevant but judged grade 0")
    return warnings
