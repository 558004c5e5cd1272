"""Where screening stands: per batch and stage, what is decided, pending or in conflict, and how well
reviewers agree. Everything here is derived from the decision files and the ledger's batches."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from sitegen.review.folder import ADJUDICATION, Review
from sitegen.review.models import STAGES, BatchPayload, ImportPayload, ProtocolLockPayload
from sitegen.screening.agreement import Agreement, agreement
from sitegen.screening.outcomes import TO_FULL_TEXT, Outcome, review_outcomes


class Batch(BaseModel):
    number: int | None  # None: records that came in without a batch (imported), ranked together as one group
    monitor_id: str | None
    protocol_version: int | None
    created: str | None
    record_ids: list[str]
    matched: list[str] = []  # of record_ids, those the run matched to a record the review held: no new work


class StageStatus(BaseModel):
    stage: str
    records: int  # to be screened at this stage
    decided_by: dict[str, int]  # reviewer -> records they decided
    include: int
    exclude: int  # at full text, the reports not retrieved left out
    not_retrieved: int = 0  # at full text: excluded with the reason `not-retrieved`
    maybe: int
    conflicts: int
    adjudicated: int
    pending: int  # no outcome yet
    agreement: list[Agreement]


class BatchStatus(BaseModel):
    batch: Batch
    stages: list[StageStatus]
    duplicates: int = 0  # of the batch's records, those confirmed to duplicate another: not screened


class Conflict(BaseModel):
    record_id: str
    title: str
    stage: str
    decisions: dict[str, str]  # reviewer -> decision; their reasons and notes stay hidden until adjudicated
    reasons_differ: bool = False  # the decisions are one (an exclusion), the reasons for it are not


@dataclass(frozen=True)
class ScreeningFacts:
    """What every screening view reads, derived once: each stage's outcomes and the batches.

    A confirmed duplicate (duplicates.csv) is screened no more: its decisions stay in their files but
    give it no outcome, and it leaves every queue, though its batch still lists it as it arrived."""

    outcomes: dict[str, dict[str, Outcome]]  # stage -> record id -> outcome
    batches: list[Batch]  # the records outside any batch last, as one group numbered None
    duplicates: frozenset[str] = frozenset()
    # The same records outside any batch, by the import that first brought them (`first_imports`): dated, so
    # that the digest of a week counts them among its new records.
    imports: list[Batch] = field(default_factory=list)

    def to_screen(self, record_ids: list[str]) -> list[str]:
        """The records of `record_ids` that are screened: all but the confirmed duplicates."""
        return [record_id for record_id in record_ids if record_id not in self.duplicates]


def screening_facts(review: Review, duplicates: frozenset[str] = frozenset()) -> ScreeningFacts:
    outcomes = {stage: {record_id: outcome for record_id, outcome in review_outcomes(review, stage).items()
                        if record_id not in duplicates} for stage in STAGES}
    found = batches(review)
    return ScreeningFacts(outcomes, found, duplicates, first_imports(review, found))


def batches(review: Review) -> list[Batch]:
    found = [Batch(number=p.batch, monitor_id=p.monitor_id, protocol_version=p.protocol_version, created=e.ts,
                   record_ids=p.record_ids, matched=p.matched)
             for e, p in zip(review.ledger, review.payloads, strict=True) if isinstance(p, BatchPayload)]
    batched = {record_id for batch in found for record_id in batch.record_ids}
    loose = [record_id for record_id in review.records if record_id not in batched]
    if loose:
        found.append(Batch(number=None, monitor_id=None, protocol_version=None, created=None, record_ids=loose))
    return found


def first_imports(review: Review, found: list[Batch]) -> list[Batch]:
    """The records outside any batch (of `found`), grouped by the import that first handed them to reviewers: one
    group per import time (the files of one `sitegen import` share it, as PRISMA takes them for one run), dated
    by it and under the protocol version in force then, oldest first. A record of no import event (recorded
    before imports were) is in none."""
    loose = {record_id for batch in found if batch.number is None for record_id in batch.record_ids}
    groups: dict[str, Batch] = {}
    first: set[str] = set()
    in_force: int | None = None
    for event, payload in zip(review.ledger, review.payloads, strict=True):  # ledger order is time order
        if isinstance(payload, ProtocolLockPayload):  # a lock, or an amendment
            in_force = payload.version
        elif isinstance(payload, ImportPayload):
            arrived = [record_id for record_id in payload.record_ids if record_id in loose and record_id not in first]
            first.update(arrived)
            if arrived:
                group = groups.setdefault(event.ts, Batch(number=None, monitor_id=None, protocol_version=in_force,
                                                          created=event.ts, record_ids=[]))
                group.record_ids.extend(arrived)
    return list(groups.values())


@dataclass
class _Stage:
    """One stage's outcomes and each reviewer's decisions, computed once for every batch."""

    name: str
    outcomes: dict[str, Outcome]
    by_reviewer: dict[str, dict[str, str]]
    eligible: set[str] | None  # at full text: the records included (or maybe) at title/abstract


def _stages(review: Review, screening: ScreeningFacts) -> list[_Stage]:
    stages = []
    outcomes = screening.outcomes
    for name in STAGES:
        by_reviewer: dict[str, dict[str, str]] = {}
        for row in review.decisions:
            if row.stage == name and row.reviewer != ADJUDICATION and row.decision.record_id not in screening.duplicates:
                by_reviewer.setdefault(row.reviewer, {})[row.decision.record_id] = row.decision.decision
        eligible = None
        if name == "full-text":  # only records included (or maybe) at title/abstract reach full text
            eligible = {i for i, o in stages[0].outcomes.items() if o.decision in TO_FULL_TEXT}
        stages.append(_Stage(name, outcomes[name], by_reviewer, eligible))
    return stages


def _stage_status(stage: _Stage, record_ids: list[str]) -> StageStatus:
    ids = set(record_ids) if stage.eligible is None else set(record_ids) & stage.eligible
    by_reviewer = {reviewer: {i: d for i, d in decided.items() if i in ids}
                   for reviewer, decided in sorted(stage.by_reviewer.items())}
    by_reviewer = {reviewer: decided for reviewer, decided in by_reviewer.items() if decided}
    outcomes = stage.outcomes
    mine = [outcomes[i] for i in ids if i in outcomes and outcomes[i].decision != "awaiting"]
    count = {decision: sum(1 for o in mine if o.decision == decision)
             for decision in ("include", "exclude", "maybe", "conflict")}
    # A report whose full text was not retrieved was not assessed: PRISMA does not count it as excluded.
    not_retrieved = sum(1 for o in mine if o.not_retrieved) \
        if stage.name == "full-text" else 0
    return StageStatus(stage=stage.name, records=len(ids),
                       decided_by={reviewer: len(d) for reviewer, d in by_reviewer.items()},
                       include=count["include"], exclude=count["exclude"] - not_retrieved,
                       not_retrieved=not_retrieved, maybe=count["maybe"],
                       conflicts=count["conflict"], adjudicated=sum(1 for o in mine if o.adjudicated),
                       pending=len(ids) - len(mine), agreement=agreement(by_reviewer))


def status(review: Review, screening: ScreeningFacts) -> tuple[list[BatchStatus], list[StageStatus]]:
    """Per batch, and overall, for each stage."""
    stages = _stages(review, screening)
    per_batch = []
    for batch in screening.batches:
        screened = screening.to_screen(batch.record_ids)
        per_batch.append(BatchStatus(batch=batch, stages=[_stage_status(stage, screened) for stage in stages],
                                     duplicates=len(batch.record_ids) - len(screened)))
    overall = [_stage_status(stage, screening.to_screen(list(review.records))) for stage in stages]
    return per_batch, overall


def conflicts(review: Review, screening: ScreeningFacts) -> list[Conflict]:
    """Unresolved disagreements, blind: who decided what, never why."""
    in_conflict = [(stage, record_id, outcome) for stage in STAGES
                   for record_id, outcome in screening.outcomes[stage].items() if outcome.decision == "conflict"]
    # The decisions on records in conflict, indexed once (conflicts x decisions would be quadratic), and those
    # alone: a review of 100,000 records has 200,000 decisions and a few conflicts.
    by_record: dict[tuple[str, str], dict[str, str]] = {(stage, record_id): {} for stage, record_id, _ in in_conflict}
    for row in review.decisions:
        decisions = by_record.get((row.stage, row.decision.record_id))
        if decisions is not None:
            decisions[row.reviewer] = row.decision.decision
    found = []
    for stage, record_id, outcome in in_conflict:
        decisions = by_record[stage, record_id]
        found.append(Conflict(record_id=record_id, title=review.records[record_id].title, stage=stage,
                              decisions=dict(sorted(decisions.items())), reasons_differ=outcome.reasons_differ))
    return found
