"""What the decision files add up to, per record and stage.

Reviewers decide; this only combines their decisions: an adjudication wins,
agreement of the required number of reviewers stands, disagreement is a conflict
for a human to settle, and a record fewer reviewers have decided is awaiting.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from sitegen.review.folder import ADJUDICATION, DecisionRow, Review
from sitegen.review.models import STAGES, PublishedOutcome, ScreeningSettings

# The exclusion reason code of a report whose full text could not be retrieved: PRISMA 2020 counts it as a
# report not retrieved, never as a report assessed and excluded.
NOT_RETRIEVED = "not-retrieved"


@dataclass(frozen=True, slots=True)
class Outcome:
    decision: str  # include | exclude | maybe | conflict | awaiting (fewer reviewers than required)
    reason: str  # the exclusion reason code, when there is one
    reviewers: tuple[str, ...]
    adjudicated: bool = False
    reasons_differ: bool = False  # a conflict though every reviewer decided alike: excluded for different reasons

    @property
    def not_retrieved(self) -> bool:
        """Excluded at full text because the full text could not be retrieved: not assessed, so not excluded."""
        return self.decision == "exclude" and self.reason == NOT_RETRIEVED


# Outcomes are few values (a decision, a reason, who decided) shared by many records: each is made once and
# shared, being frozen (made for every record, they were a third of the time of combining 100,000 records'
# decisions). A bounded number are held, as a file may give any number of reasons.
_outcome = lru_cache(maxsize=4096)(Outcome)


DECIDED = ("include", "exclude", "maybe")
# Title-and-abstract decisions that send a record on to full-text screening.
TO_FULL_TEXT = ("include", "maybe")


def stage_outcomes(decisions: list[DecisionRow], stage: str, required: int = 1,
                   reasons_must_agree: bool = False) -> dict[str, Outcome]:
    by_record: dict[str, list[Said]] = defaultdict(list)
    for row in decisions:
        if row.stage == stage:
            decision = row.decision
            by_record[decision.record_id].append((row.reviewer, decision.decision, decision.reason))
    # A record's outcome is that of what its rows say (`_combine`), and few records' rows say something no other
    # record's do (two reviewers excluding, say): each sequence is combined once (at 100,000 records, 107,000
    # combinations were a tenth of the time of reading the review and checking it).
    combined: dict[tuple[Said, ...], Outcome] = {}
    outcomes = {}
    for record_id, rows in sorted(by_record.items()):
        said = tuple(rows)
        outcome = combined.get(said)
        if outcome is None:
            outcome = combined[said] = _combine(said, required, reasons_must_agree)
        outcomes[record_id] = outcome
    return outcomes


# What one decision row says: its reviewer, decision and reason (all a record's outcome depends on, in its order).
Said = tuple[str, str, str]


def review_outcomes(review: Review, stage: str, *, adjudicated: bool = True,
                    of: Collection[str] | None = None) -> dict[str, Outcome]:
    """Outcomes under the review's own rules: its required number of reviewers per stage, and at
    full text, where PRISMA counts exclusions by reason, agreement on the reason too. With
    `adjudicated` false, what the reviewers' own decisions add up to, before any adjudication.
    With `of`, the outcomes of those records only (a record's outcome depends on its own decisions alone)."""
    settings = review.config.screening if review.config else ScreeningSettings()
    required = settings.title_abstract_reviewers if stage == "title-abstract" else settings.full_text_reviewers
    decisions = review.decisions
    if of is not None:  # first: it leaves few rows (the adjudicated records') for the other filter
        decisions = [row for row in decisions if row.decision.record_id in of]
    if not adjudicated:
        decisions = [row for row in decisions if row.reviewer != ADJUDICATION]
    return stage_outcomes(decisions, stage, required, reasons_must_agree=stage == "full-text")


def _combine(rows: tuple[Said, ...], required: int, reasons_must_agree: bool) -> Outcome:
    reviewers = tuple(sorted([reviewer for reviewer, _, _ in rows if reviewer != ADJUDICATION]))
    if len(reviewers) < len(rows):  # an adjudication among them: the first one wins
        _, decision, reason = next(row for row in rows if row[0] == ADJUDICATION)
        return _outcome(decision, reason, reviewers, adjudicated=True)
    # Until every required reviewer has decided, a record awaits, whatever the others decided: a disagreement
    # shown earlier would tell the reviewer still to decide what the others did (blind screening).
    if len(reviewers) < required:
        return _outcome("awaiting", "", reviewers)
    verdicts = {decision for _, decision, _ in rows}
    given_reasons = {reason for _, _, reason in rows if reason}
    if len(verdicts) > 1:
        return _outcome("conflict", "", reviewers)
    if reasons_must_agree and len(given_reasons) > 1:
        return _outcome("conflict", "", reviewers, reasons_differ=True)
    verdict = verdicts.pop()
    if not given_reasons:
        return _outcome(verdict, "", reviewers)
    reasons = Counter(reason for _, _, reason in rows if reason)
    # The most given reason; ties go to the alphabetically first code, so the result is stable.
    reason = min(reasons, key=lambda code: (-reasons[code], code))
    return _outcome(verdict, reason, reviewers)


def published_outcomes(outcomes: dict[str, dict[str, Outcome]]) -> dict[str, dict[str, PublishedOutcome]]:
    """Outcomes as a published version records them (versions/<N>.json): each record's decision and
    reason per stage, sorted by record id, without who decided; a stage with none is left out."""
    published = {stage: {rid: PublishedOutcome(decision=outcome.decision, reason=outcome.reason or None)
                         for rid, outcome in sorted(outcomes[stage].items())} for stage in STAGES}
    return {stage: by_record for stage, by_record in published.items() if by_record}
