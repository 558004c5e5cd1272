"""What the decision files add up to, per record and stage.

Reviewers decide; this only combines their decisions: an adjudication wins,
agreement stands, disagreement is a conflict for a human to settle.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from sitegen.review.folder import ADJUDICATION, DecisionRow


@dataclass(frozen=True)
class Outcome:
    decision: str  # include | exclude | maybe | conflict
    reason: str  # the exclusion reason code, when there is one
    reviewers: tuple[str, ...]
    adjudicated: bool = False


def stage_outcomes(decisions: list[DecisionRow], stage: str) -> dict[str, Outcome]:
    by_record: dict[str, list[DecisionRow]] = defaultdict(list)
    for row in decisions:
        if row.stage == stage:
            by_record[row.decision.record_id].append(row)
    return {record_id: _combine(rows) for record_id, rows in sorted(by_record.items())}


def _combine(rows: list[DecisionRow]) -> Outcome:
    reviewers = tuple(sorted(r.reviewer for r in rows if r.reviewer != ADJUDICATION))
    for row in rows:
        if row.reviewer == ADJUDICATION:
            return Outcome(row.decision.decision, row.decision.reason, reviewers, adjudicated=True)
    verdicts = {row.decision.decision for row in rows}
    if len(verdicts) > 1:
        return Outcome("conflict", "", reviewers)
    verdict = verdicts.pop()
    reasons = Counter(row.decision.reason for row in rows if row.decision.reason)
    # The most given reason; ties go to the alphabetically first code, so the result is stable.
    reason = min(reasons, key=lambda code: (-reasons[code], code)) if reasons else ""
    return Outcome(verdict, reason, reviewers)
