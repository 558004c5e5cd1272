"""Screening's rules on the decision files: what `sitegen check` reports about screening.

Each decision must name a known record, come once per reviewer and stage, use
only the protocol's exclusion reasons, and give one at full text; a record
reaches full text only when title/abstract screening let it through; nobody
screens before the protocol is locked or assesses a batch in full text while
its title/abstract conflicts are unsettled.
"""

from __future__ import annotations

from collections.abc import Collection

from sitegen.errors import shown_argument
from sitegen.review.folder import ADJUDICATION, DecisionRow, Review, locked_reasons
from sitegen.review.models import STAGES, BatchPayload, ImportPayload, ProtocolLockPayload
from sitegen.review.parsing import forced_text_hint, quoted_after_blank_hint
from sitegen.review.problems import Problem
from sitegen.screening.outcomes import Outcome, review_outcomes


def screening_problems(review: Review, outcomes: dict[str, dict[str, Outcome]],
                       duplicates: Collection[str] = ()) -> list[Problem]:
    """Every screening problem; `outcomes` are the review's outcomes per stage (computed once by the caller),
    which confirmed `duplicates` have none of: their decisions were made, and stay, but count no more."""
    title_abstract = outcomes["title-abstract"]
    decision_problems, decided_otherwise = _decision_problems(review)
    each_file = decision_problems + _protocol_unlocked(review)
    if review.decisions_unread:
        # Compared without the decisions of a file that was not read (unreadable, or not named as a decision file
        # is), every record it decides would seem undecided: one problem says so, not one per record.
        unread = ", ".join(review.decisions_unread)
        return each_file + [Problem(review.decisions_unread[0], None, None, "not-checked",
                                    f"reviewers' decisions were not compared with each other: {unread} was not "
                                    "read, and the records it decides would all seem undecided; mend it, then "
                                    "check again")]
    across = (_stage_problems(review, title_abstract, duplicates) + _unsettled_batches(review, title_abstract)
              + _needless_adjudications(review))
    return each_file + _without_invalid_rows(review, title_abstract, across, decided_otherwise)


def _without_invalid_rows(review: Review, title_abstract: dict[str, Outcome], across: list[Problem],
                          decided_otherwise: dict[str, tuple[str, int]]) -> list[Problem]:
    """The checks across files but on the records what a reviewer decided of is unclear (see `_unclear`): without
    a clear decision, a record seemed undecided or in conflict, and its batch unsettled, which made a problem of
    every full-text decision of the batch, the row's own problem last. One note names the records left unchecked."""
    unclear = _unclear(review, decided_otherwise)
    if not unclear:
        return across
    conflicts = {record_id for record_id, outcome in title_abstract.items() if outcome.decision == "conflict"}
    left_out = {row.decision.record_id for row in review.decisions if row.decision.record_id in unclear}
    for payload in review.payloads:  # a batch unsettled by those records alone
        if isinstance(payload, BatchPayload) and (in_conflict := conflicts.intersection(payload.record_ids)) \
                and in_conflict <= unclear.keys():
            left_out.update(payload.record_ids)
    skipped = {(row.path, row.line) for row in review.decisions if row.decision.record_id in left_out}
    kept = [problem for problem in across if (problem.path, problem.line) not in skipped]
    if len(kept) == len(across):
        return across
    (rel, line), shown = next(iter(unclear.values())), sorted(unclear)[:3]
    return kept + [Problem(rel, line, None, "not-checked",
                           f"decisions on {', '.join(map(repr, shown))}{' and others' if len(unclear) > 3 else ''} were "
                           "not compared with other reviewers' and stages' while what a reviewer decided of them is "
                           "unclear (a row that cannot be read, or two rows deciding otherwise); mend it, then check "
                           "again")]


def _unclear(review: Review, decided_otherwise: dict[str, tuple[str, int]]) -> dict[str, tuple[str, int]]:
    """Record id -> where it is, for each record a reviewer's decision on is unclear: a row deciding it could not be
    read (its decision misspelt), or one reviewer decided it twice at a stage, otherwise the second time (a bad merge
    kept both sides' rows; `_decision_problems` finds them). Either row is reported on its own; which decision was
    meant, only the reviewer knows."""
    unclear = {record_id: where for (_, record_id), where in review.decisions_invalid.items()}
    for record_id, where in decided_otherwise.items():
        unclear.setdefault(record_id, where)
    return unclear


def _needless_adjudications(review: Review) -> list[Problem]:
    """An adjudication settles a disagreement: one on a record the reviewers agree on would overrule
    them, and one on a record they have not all decided would stand in for a required reviewer."""
    problems = []
    adjudicated = [row for row in review.decisions if row.reviewer == ADJUDICATION]
    for stage in STAGES:
        adjudications = [row for row in adjudicated if row.stage == stage]
        reviewed = review_outcomes(review, stage, adjudicated=False,
                                   of={row.decision.record_id for row in adjudications})
        for row in adjudications:
            before = reviewed.get(row.decision.record_id)
            if before is not None and before.decision == "conflict":
                continue
            state = ("no reviewer has decided it" if before is None
                     else "it still awaits a required reviewer" if before.decision == "awaiting"
                     else f"its reviewers agree ({before.decision})")
            problems.append(Problem(row.path, row.line, row.columns.get("record_id"), "needless-adjudication",
                                    f"record {row.decision.record_id!r} is not in conflict at {stage}: {state}; "
                                    "an adjudication settles a disagreement between reviewers: remove this row "
                                    "(write it again if they come to disagree)"))
    return problems


def _decision_problems(review: Review) -> tuple[list[Problem], dict[str, tuple[str, int]]]:
    """Each decision row's own problems; and the records a reviewer decided twice at a stage, otherwise the second
    time (record id -> that row's place), found in the same walk over the decisions."""
    problems = []
    decided_otherwise: dict[str, tuple[str, int]] = {}
    # The protocol's reasons, and those of the version each record was screened under (an amendment may
    # retire a reason that earlier decisions gave; a record handed to reviewers later cannot give it).
    reasons = {r.code for r in review.protocol.meta.exclusion_reasons} if review.protocol else set()
    by_version = locked_reasons(review)
    screened_under: dict[str, int] | None = None  # worked out for the first reason the protocol lacks
    # Stage -> reviewer -> record id -> the row that decided it first. The walk makes nothing for a row that has
    # no problem (211,000 at 100,000 records): its reviewer's rows are looked up once for a run of them (a file's).
    first_seen: dict[tuple[str, str], dict[str, DecisionRow]] = {}
    stage = reviewer = None
    seen: dict[str, DecisionRow] = {}
    lacking = set(review.lacking([row.decision.record_id for row in review.decisions]))  # in one pass
    for row in review.decisions:
        decision = row.decision
        record_id = decision.record_id
        if row.stage != stage or row.reviewer != reviewer:
            stage, reviewer = row.stage, row.reviewer
            seen = first_seen.setdefault((stage, reviewer), {})
        if record_id in lacking:
            problems.append(Problem(row.path, row.line, row.columns.get("record_id"), "unknown-record",
                                    review.absent_record(record_id)))
        first = seen.setdefault(record_id, row)
        if first is not row:
            who = "the adjudicator" if row.reviewer == ADJUDICATION else f"reviewer {row.reviewer!r}"
            problems.append(Problem(row.path, row.line, row.columns.get("record_id"), "duplicate-decision",
                                    f"{who} already decided {record_id!r} at this stage on line {first.line}"))
            if (decision.decision, decision.reason) != (first.decision.decision, first.decision.reason):
                decided_otherwise.setdefault(record_id, (row.path, row.line))
        reason = decision.reason
        if reason and decision.decision != "exclude":
            problems.append(Problem(row.path, row.line, row.columns.get("reason"), "reason-not-exclusion",
                                    f"a reason code goes with 'exclude' only, not {decision.decision!r} "
                                    "(use the note column for remarks)"))
        elif reason and reason not in reasons:
            if screened_under is None:
                screened_under = _screened_under(review)
            if reason not in by_version.get(screened_under.get(record_id, 0), ()):
                problems.append(Problem(row.path, row.line, row.columns.get("reason"), "unknown-reason",
                                        f"exclusion reason {reason!r} is not defined in protocol.md "
                                        f"({defined_reasons(reasons)}){forced_text_hint(reason)}"
                                        f"{quoted_after_blank_hint(reason)}"))
        elif decision.decision == "exclude" and row.stage == "full-text" and not reason:
            problems.append(Problem(row.path, row.line, row.columns.get("reason"), "reason-required",
                                    f"an exclusion at full text needs a reason code from the protocol "
                                    f"({defined_reasons(reasons)})"))
    return problems, decided_otherwise


def defined_reasons(reasons: Collection[str]) -> str:
    """The protocol's exclusion reason codes, as every problem asking for one lists them: the reviewer picks one
    without opening protocol.md."""
    return f"defined: {', '.join(sorted(reasons))}" if reasons else "none defined"


def _screened_under(review: Review) -> dict[str, int]:
    """Record id -> the protocol version it was handed to reviewers under: its screening batch's, else, for a record
    imported outside any batch, the version in force when it was first imported (import refuses to run before the
    lock)."""
    in_force: int | None = None
    screened_under: dict[str, int] = {}
    for payload in review.payloads:  # ledger order is time order
        if isinstance(payload, ProtocolLockPayload):
            in_force = payload.version
        elif isinstance(payload, ImportPayload) and in_force is not None:
            for record_id in payload.record_ids:
                screened_under.setdefault(record_id, in_force)
    return screened_under | {record_id: payload.protocol_version for payload in review.payloads
                             if isinstance(payload, BatchPayload) for record_id in payload.record_ids}


def _stage_problems(review: Review, title_abstract: dict[str, Outcome], duplicates: Collection[str]) -> list[Problem]:
    """A record reaches full text only when title/abstract screening included it."""
    problems = []
    for row in review.decisions:
        if row.stage != "full-text" or row.decision.record_id in duplicates:
            continue
        outcome = title_abstract.get(row.decision.record_id)
        decision = outcome.decision if outcome else None
        if decision not in ("include", "maybe"):
            state = {None: "has no title/abstract decision", "exclude": "was excluded at title/abstract",
                     "conflict": "is an unresolved conflict at title/abstract",
                     "awaiting": "still awaits a decision by another reviewer at title/abstract"}[decision]
            problems.append(Problem(row.path, row.line, row.columns.get("record_id"), "not-screened-in",
                                    f"record {row.decision.record_id!r} {state}; only records included or marked "
                                    "maybe there are assessed in full text"))
    return problems


def _protocol_unlocked(review: Review) -> list[Problem]:
    """Every decision is made under a fixed protocol (seed 003's first gate, checked on the files)."""
    if not review.decisions or any(isinstance(p, ProtocolLockPayload) for p in review.payloads):
        return []
    first = min(review.decisions, key=lambda row: (row.path, row.line))
    return [Problem(first.path, first.line, None, "protocol-unlocked",
                    "screening decisions exist but the protocol was never locked; lock it first "
                    f"(`sitegen protocol lock {shown_argument(review.root)} --at TIME`) so every decision is made "
                    "under a fixed protocol")]


def _unsettled_batches(review: Review, title_abstract: dict[str, Outcome]) -> list[Problem]:
    """No full-text stage for a batch whose title/abstract screening still has conflicts."""
    unsettled = {record_id for payload in review.payloads if isinstance(payload, BatchPayload)
                 if any(title_abstract.get(i) and title_abstract[i].decision == "conflict" for i in payload.record_ids)
                 for record_id in payload.record_ids}
    return [Problem(row.path, row.line, row.columns.get("record_id"), "batch-unsettled",
                    f"record {row.decision.record_id!r} is in a batch whose title/abstract "
                    "conflicts are not adjudicated yet; settle them before full-text screening")
            for row in review.decisions if row.stage == "full-text" and row.decision.record_id in unsettled]
