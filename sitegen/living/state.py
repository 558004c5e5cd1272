"""The review's phase and its few settable fields (`sitegen state`).

The phase (protocol, searching, screening, extraction, synthesis, published)
is read from the ledger's `phase` events and advances only through
`advance`, which runs the gate predicates for the next phase and records
them. Only the fields in SETTABLE_FIELDS can be set directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sitegen.errors import SitegenError
from sitegen.living.ledger import check_event_time, ledger_text, next_event
from sitegen.living.prisma import derive
from sitegen.records.model import model_data
from sitegen.review.check import load_valid_review, writable_review
from sitegen.review.folder import Review
from sitegen.review.models import (
    PHASES,
    SETTABLE_FIELDS,
    BatchPayload,
    ImportPayload,
    PhasePayload,
    ProtocolLockPayload,
    RetrievalPayload,
    ReviewState,
)
from sitegen.review.transaction import Transaction
from sitegen.review.write import pretty_json
from sitegen.screening.outcomes import review_outcomes


@dataclass
class Gate:
    check: str  # what must hold, in words
    ok: bool
    detail: str  # why it does not (or a count showing that it does)


def current_phase(review: Review) -> tuple[str, str | None]:
    """(phase, since when) from the ledger; a review starts in the protocol phase."""
    moves = [(p.to_phase, e.ts) for e, p in zip(review.ledger, review.payloads, strict=True)
             if isinstance(p, PhasePayload)]
    return moves[-1] if moves else ("protocol", None)


def included_ids(review: Review) -> list[str]:
    full_text = review_outcomes(review, "full-text")
    return [record_id for record_id, outcome in full_text.items() if outcome.decision == "include"]


def gates(review: Review, target: str) -> list[Gate]:
    """The predicates that must hold to enter `target`."""
    payloads = review.payloads
    locked = any(isinstance(p, ProtocolLockPayload) for p in payloads)
    lock_gate = Gate("the protocol is locked", locked, "" if locked else "run `sitegen protocol lock`")
    if target == "searching":
        return [lock_gate]
    if target == "screening":
        searched = any(isinstance(p, RetrievalPayload | ImportPayload) for p in payloads)
        return [lock_gate, Gate("a search has run", searched,
                                "" if searched else "run `sitegen monitor add` to set up and run a saved search")]
    if target == "extraction":
        counts = derive(review)
        conflicts = [o for stage in ("title-abstract", "full-text")
                     for o in review_outcomes(review, stage).values() if o.decision == "conflict"]
        return [Gate("every record is screened at title and abstract", counts.awaiting_screening == 0,
                     f"{counts.awaiting_screening} record(s) await screening or adjudication"),
                Gate("every report sought is assessed in full text", counts.awaiting_full_text == 0,
                     f"{counts.awaiting_full_text} report(s) await full-text assessment"),
                Gate("no conflict awaits adjudication", not conflicts, f"{len(conflicts)} conflict(s)")]
    if target == "synthesis":
        with_evidence = {item.evidence.record_id for item in review.evidence}
        missing = [i for i in included_ids(review) if i not in with_evidence]
        return [Gate("every included study has extracted evidence", not missing,
                     f"no evidence file for {', '.join(missing[:3])}{' …' if len(missing) > 3 else ''}")]
    if target == "published":
        verified = {str(e.payload.get("record_id")) for e in review.ledger if e.type == "verification"}
        if not verified:
            return [Gate("included studies have verification verdicts (once verification is in use)", True,
                         "no verification has been run on this review")]
        missing = [i for i in included_ids(review) if i not in verified]
        return [Gate("every included study has a verification verdict", not missing,
                     f"no verdict for {', '.join(missing[:3])}{' …' if len(missing) > 3 else ''}")]
    raise SitegenError(f"{target!r} is not a phase sitegen can advance to")


def show(root: Path) -> dict[str, Any]:
    review = load_valid_review(root)
    phase, since = current_phase(review)
    following = PHASES[PHASES.index(phase) + 1] if phase != PHASES[-1] else None
    checks = gates(review, following) if following else []
    return {"phase": phase, "since": since, "next_phase": following,
            "gates": [{"check": g.check, "ok": g.ok, "detail": g.detail} for g in checks],
            "batches": sum(1 for p in review.payloads if isinstance(p, BatchPayload)),
            "settable": {name: getattr(review.state, name) for name in SETTABLE_FIELDS}}


def advance(root: Path, at: str) -> tuple[str, str]:
    """Move to the next phase if every gate holds; the move and its checks go on the ledger."""
    with writable_review(root) as review:
        phase, _ = current_phase(review)
        if phase == PHASES[-1]:
            raise SitegenError("the review is published; a living review stays published as it is updated")
        target = PHASES[PHASES.index(phase) + 1]
        checks = gates(review, target)
        failed = [g for g in checks if not g.ok]
        if failed:
            reasons = "; ".join(f"{g.check}: {g.detail}" for g in failed)
            raise SitegenError(f"cannot advance from {phase} to {target}: {reasons}")
        check_event_time(review.ledger, at)
        payload = PhasePayload(from_phase=phase, to_phase=target, checks=[g.check for g in checks])
        event = next_event(review.ledger[-1] if review.ledger else None, "phase", at, model_data(payload))
        transaction = Transaction(root)
        transaction.write("ledger.jsonl", ledger_text([*review.ledger, event]))
        transaction.commit()
        return phase, target


def set_field(root: Path, name: str, value: str) -> ReviewState:
    """Set one whitelisted field of state.json."""
    if name == "phase":
        raise SitegenError("the phase advances only through `sitegen state advance`, which checks its gates")
    if name not in SETTABLE_FIELDS:
        raise SitegenError(f"{name!r} cannot be set directly; settable fields: {', '.join(SETTABLE_FIELDS)}")
    with writable_review(root) as review:
        data = model_data(review.state)
        data[name] = int(value) if name == "max_kept" and value.isdecimal() else (value or None)
        try:
            state = ReviewState.model_validate(data)
        except ValidationError as exc:
            raise SitegenError(f"{name}: {exc.errors(include_url=False)[0]['msg']}") from None
        transaction = Transaction(root)
        transaction.write("state.json", pretty_json(model_data(state)))
        transaction.commit()
        return state
