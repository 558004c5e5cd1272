"""Where screening stands: per batch and stage, what is decided, pending or in conflict, and how well
reviewers agree. Everything here is derived from the decision files and the ledger's batches."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from sitegen.review.check import load_valid_review
from sitegen.review.folder import ADJUDICATION, Review
from sitegen.review.models import STAGES, BatchPayload
from sitegen.screening.agreement import Agreement, agreement
from sitegen.screening.outcomes import review_outcomes


class Batch(BaseModel):
    number: int | None  # None: records that came in without a batch (imported)
    monitor_id: str | None
    protocol_version: int | None
    created: str | None
    record_ids: list[str]


class StageStatus(BaseModel):
    stage: str
    records: int  # to be screened at this stage
    decided_by: dict[str, int]  # reviewer -> records they decided
    include: int
    exclude: int
    maybe: int
    conflicts: int
    adjudicated: int
    pending: int  # no outcome yet
    agreement: list[Agreement]


class BatchStatus(BaseModel):
    batch: Batch
    stages: list[StageStatus]


class Conflict(BaseModel):
    record_id: str
    title: str
    stage: str
    decisions: dict[str, str]  # reviewer -> decision; their reasons and notes stay hidden until adjudicated


def batches(review: Review) -> list[Batch]:
    found = [Batch(number=p.batch, monitor_id=p.monitor_id, protocol_version=p.protocol_version, created=e.ts,
                   record_ids=p.record_ids)
             for e, p in zip(review.ledger, review.payloads, strict=True) if isinstance(p, BatchPayload)]
    batched = {record_id for batch in found for record_id in batch.record_ids}
    loose = [record_id for record_id in review.records if record_id not in batched]
    if loose:
        found.append(Batch(number=None, monitor_id=None, protocol_version=None, created=None, record_ids=loose))
    return found


def _stage_status(review: Review, stage: str, record_ids: list[str]) -> StageStatus:
    outcomes = review_outcomes(review, stage)
    ids = set(record_ids)
    if stage == "full-text":  # only records included (or maybe) at title/abstract reach full text
        screened = review_outcomes(review, "title-abstract")
        ids = {i for i in ids if i in screened and screened[i].decision in ("include", "maybe")}
    by_reviewer: dict[str, dict[str, str]] = {}
    for row in review.decisions:
        if row.stage == stage and row.reviewer != ADJUDICATION and row.decision.record_id in ids:
            by_reviewer.setdefault(row.reviewer, {})[row.decision.record_id] = row.decision.decision
    mine = [outcomes[i] for i in ids if i in outcomes and outcomes[i].decision != "awaiting"]
    count = {decision: sum(1 for o in mine if o.decision == decision)
             for decision in ("include", "exclude", "maybe", "conflict")}
    return StageStatus(stage=stage, records=len(ids),
                       decided_by={reviewer: len(d) for reviewer, d in sorted(by_reviewer.items())},
                       include=count["include"], exclude=count["exclude"], maybe=count["maybe"],
                       conflicts=count["conflict"], adjudicated=sum(1 for o in mine if o.adjudicated),
                       pending=len(ids) - len(mine), agreement=agreement(by_reviewer))


def status(review: Review) -> tuple[list[BatchStatus], list[StageStatus]]:
    """Per batch, and overall, for each stage."""
    per_batch = [BatchStatus(batch=batch, stages=[_stage_status(review, stage, batch.record_ids)
                                                  for stage in STAGES]) for batch in batches(review)]
    overall = [_stage_status(review, stage, list(review.records)) for stage in STAGES]
    return per_batch, overall


def conflicts(review: Review) -> list[Conflict]:
    """Unresolved disagreements, blind: who decided what, never why."""
    found = []
    for stage in STAGES:
        for record_id, outcome in review_outcomes(review, stage).items():
            if outcome.decision != "conflict":
                continue
            decisions = {row.reviewer: row.decision.decision for row in review.decisions
                         if row.stage == stage and row.decision.record_id == record_id}
            found.append(Conflict(record_id=record_id, title=review.records[record_id].title, stage=stage,
                                  decisions=dict(sorted(decisions.items()))))
    return found


def screening_report(root: Path) -> tuple[list[BatchStatus], list[StageStatus]]:
    return status(load_valid_review(root))


def conflict_report(root: Path) -> list[Conflict]:
    return conflicts(load_valid_review(root))
