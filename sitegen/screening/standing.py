"""Where each record stands in screening, and how it got there, derived from the decision files.

A record's standing is its one place in the flow: included, excluded at title and
abstract, excluded at full text (with the reason), in conflict, awaiting a
decision, or a confirmed duplicate of another record (which is not screened). It follows the rules the PRISMA counts follow: "maybe" at title and
abstract sends a record on to full text, and a full-text "maybe" is not yet an
assessment, so it still awaits one.

A record's screening history is every reviewer's decision at every stage, the
adjudication and the outcome, as the site shows it. Screening is blind: while a
stage still awaits a required reviewer, the decisions already made are not shown
(the next reviewer would read them), and while reviewers disagree, their reasons
and notes stay hidden until the adjudicator has settled it, as `sitegen conflicts`
keeps them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from sitegen.review.folder import ADJUDICATION, Review
from sitegen.review.models import STAGES
from sitegen.screening.outcomes import Outcome

StandingKind = Literal["included", "excluded-title-abstract", "excluded-full-text", "not-retrieved", "conflict",
                       "awaiting", "duplicate"]
STANDINGS: tuple[StandingKind, ...] = ("included", "excluded-title-abstract", "excluded-full-text", "not-retrieved",
                                       "conflict", "awaiting", "duplicate")


@dataclass(frozen=True, slots=True)
class Standing:
    kind: StandingKind
    stage: str  # the stage it stands at: where it was included or excluded, is in conflict, or awaits ("" for a duplicate)
    reason: str = ""  # the exclusion reason code at full text


# Standings are few values (a kind, a stage, a reason) shared by many records: each is made once and shared, being
# frozen, so that a page key digests a shared one once (`digested_once`), as outcomes are shared. A bounded number
# are held, as a file may give any number of reasons.
_standing = lru_cache(maxsize=4096)(Standing)


def standing(title_abstract: Outcome | None, full_text: Outcome | None) -> Standing:
    """Where a record stands, from its outcome at each stage (None: nobody has decided it there)."""
    if title_abstract is None or title_abstract.decision == "awaiting":
        return _standing("awaiting", "title-abstract")
    if title_abstract.decision == "conflict":
        return _standing("conflict", "title-abstract")
    if title_abstract.decision == "exclude":
        return _standing("excluded-title-abstract", "title-abstract")
    # Included (or "maybe") at title and abstract: the full text decides.
    if full_text is None or full_text.decision in ("awaiting", "maybe"):
        return _standing("awaiting", "full-text")
    if full_text.decision == "conflict":
        return _standing("conflict", "full-text")
    if full_text.not_retrieved:
        return _standing("not-retrieved", "full-text", full_text.reason)
    if full_text.decision == "exclude":
        return _standing("excluded-full-text", "full-text", full_text.reason)
    return _standing("included", "full-text")


def standings(records: list[str], outcomes: dict[str, dict[str, Outcome]],
              duplicates: Collection[str] = ()) -> dict[str, Standing]:
    """Each record's standing, from the outcomes per stage (as `ReviewFacts.outcomes` holds them) and
    the confirmed duplicates."""
    title_abstract, full_text = outcomes["title-abstract"], outcomes["full-text"]
    return {record_id: _standing("duplicate", "") if record_id in duplicates
            else standing(title_abstract.get(record_id), full_text.get(record_id)) for record_id in records}


@dataclass(frozen=True, slots=True)
class ShownDecision:
    """One decision as the site may show it: `decision` is None while screening must stay blind."""

    reviewer: str
    decision: str | None
    reason: str
    note: str


@dataclass(frozen=True, slots=True)
class StageHistory:
    stage: str
    decisions: list[ShownDecision]  # the reviewers' own, by reviewer
    adjudication: ShownDecision | None
    outcome: Outcome


def screening_histories(review: Review, outcomes: dict[str, dict[str, Outcome]]) -> dict[str, list[StageHistory]]:
    """Record id -> its history at each stage someone decided it at, in stage order. A confirmed duplicate
    has no outcome (`outcomes` leaves it out), and no history: its decisions stay in their files but count
    no more."""
    rows = defaultdict(list)  # (record id, stage) -> decision rows, indexed once for every record
    for row in review.decisions:
        if row.decision.record_id in outcomes[row.stage]:
            rows[row.decision.record_id, row.stage].append(row)
    histories: dict[str, list[StageHistory]] = defaultdict(list)
    # Decisions and stage histories are few values (a reviewer's "exclude", no reason, no note) shared by many records:
    # each is made once and shared, being frozen, so that a page key digests a shared one once (`digested_once`).
    decisions: dict[tuple[str, str | None, str, str], ShownDecision] = {}
    stage_histories: dict[tuple[str, tuple[int, ...], int, int], StageHistory] = {}  # by the ids of its shared parts
    for record_id, stage in sorted(rows, key=lambda key: (key[0], STAGES.index(key[1]))):
        outcome = outcomes[stage][record_id]
        blind = outcome.decision == "awaiting"
        unsettled = outcome.decision == "conflict"
        shown: dict[str, ShownDecision] = {}
        for row in rows[record_id, stage]:
            said = (row.reviewer, None if blind else row.decision.decision,
                    "" if blind or unsettled else row.decision.reason, "" if blind or unsettled else row.decision.note)
            shown[row.reviewer] = decisions.get(said) or decisions.setdefault(said, ShownDecision(*said))
        adjudication = shown.pop(ADJUDICATION, None)
        reviewers = [shown[name] for name in sorted(shown)]
        parts = (stage, tuple(map(id, reviewers)), id(adjudication), id(outcome))
        history = stage_histories.get(parts)
        if history is None:
            history = stage_histories[parts] = StageHistory(stage, reviewers, adjudication, outcome)
        histories[record_id].append(history)
    return dict(histories)
