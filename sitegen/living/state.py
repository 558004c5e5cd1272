"""The review's phase and its few settable fields (`sitegen state`).

The phase (protocol, searching, screening, extraction, synthesis, published)
is read from the ledger's `phase` events and advances only through
`advance`, which runs the gate predicates for the next phase and records
them. Only the fields in SETTABLE_FIELDS can be set directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import TypeAdapter, ValidationError

from sitegen.errors import OptionInvalid, SitegenError, shown_argument
from sitegen.living.facts import FactsThen, ReviewFacts, as_it_stood
from sitegen.living.ledger import append
from sitegen.records.listing import listed
from sitegen.records.model import model_data
from sitegen.review.folder import Review
from sitegen.review.models import (
    OPEN_ITEMS,
    PHASES,
    SETTABLE_FIELDS,
    BatchPayload,
    ImportPayload,
    PhasePayload,
    ProtocolLockPayload,
    RetrievalPayload,
    ReviewState,
    Thresholds,
)
from sitegen.review.transaction import Transaction
from sitegen.review.write import json_kept_form
from sitegen.text import counted


@dataclass
class Gate:
    check: str  # what must hold, in words
    ok: bool
    detail: str  # why it does not (or a count showing that it does)
    # Judged on the ledger alone (the lock, the searches run): at an earlier event, exactly as it was judged then.
    # The others read files that keep no history (decisions, evidence), as they stand now.
    on_ledger: bool = False


def _listed(ids: list[str]) -> str:
    # How many more, not "…": a refusal naming three studies of forty would read as nearly done.
    return listed(ids, 3)


def _named(ids: list[str]) -> str:
    return f" ({_listed(ids)})" if ids else ""


def gates(review: Review, facts: ReviewFacts, target: str) -> list[Gate]:
    """The predicates that must hold to enter `target`: its own and every earlier phase's, since what
    held when the review entered a phase (everything screened, say) can stop holding as it lives on."""
    if target not in PHASES[1:]:
        raise SitegenError(f"{target!r} is not a phase sitegen can advance to")
    found: dict[str, Gate] = {}
    for phase in PHASES[1:PHASES.index(target) + 1]:
        found.update((gate.check, gate) for gate in _entry_gates(review, facts, phase))
    return list(found.values())


def gates_then(review: Review, events: int, target: str) -> list[Gate]:
    """The gates to enter `target` as `advance` judged them after the ledger's first `events` events: on the ledger
    as it stood then, and the files that keep no history as they stand now (`as_it_stood`)."""
    then = as_it_stood(review, events)
    return gates(then, FactsThen(then), target)


def _entry_gates(review: Review, facts: ReviewFacts, target: str) -> list[Gate]:
    """What entering `target` itself asks for."""
    payloads = review.payloads
    locked = any(isinstance(p, ProtocolLockPayload) for p in payloads)
    folder = shown_argument(review.root)  # a command a gate suggests names the folder, ready to paste
    lock_gate = Gate("the protocol is locked", locked,
                     "" if locked else f"run `sitegen protocol lock {folder} --at TIME`", on_ledger=True)
    if target == "searching":
        return [lock_gate]
    if target == "screening":
        # A search that no source answered in full found nothing for certain: screening would start on a
        # search that may have missed what it was run for.
        searched = any(isinstance(p, ImportPayload) or (isinstance(p, RetrievalPayload) and p.complete)
                       for p in payloads)
        ran = any(isinstance(p, RetrievalPayload) for p in payloads)
        return [lock_gate, Gate("a search has run in full (or records were imported)", searched,
                                "" if searched else "every run so far was incomplete: run "
                                f"`sitegen update {folder} --at TIME` again once its sources answer" if ran
                                else f"run `sitegen monitor add {folder}` to set up and run a saved search",
                                on_ledger=True)]
    if target == "extraction":
        counts = facts.prisma
        conflicts = facts.conflicts
        unscreened = counts.awaiting_screening + counts.other_awaiting_screening  # both PRISMA routes
        unassessed = counts.awaiting_full_text + counts.other_awaiting_full_text
        # The records themselves, so that a refusal says which decisions are missing, not only how many.
        waiting = {stage: sorted(rid for rid, where in facts.standings.items()
                                 if where.kind in ("awaiting", "conflict") and where.stage == stage)
                   for stage in ("title-abstract", "full-text")}
        return [Gate("every record is screened at title and abstract", unscreened == 0,
                     f"{counted(unscreened, 'record awaits', 'records await')} screening or adjudication"
                     f"{_named(waiting['title-abstract'])}"),
                Gate("every report sought is assessed in full text", unassessed == 0,
                     f"{counted(unassessed, 'report awaits', 'reports await')} full-text assessment"
                     f"{_named(waiting['full-text'])}"),
                Gate("no conflict awaits adjudication", not conflicts,
                     f"{counted(len(conflicts), 'conflict')}{_named([f'{c.record_id} at {c.stage}' for c in conflicts])}")]
    if target == "synthesis":
        with_evidence = {item.evidence.record_id for item in review.evidence}
        missing = [i for i in facts.included if i not in with_evidence]
        return [Gate("every included study has extracted evidence", not missing,
                     f"no evidence file for {_listed(missing)}")]
    if target == "published":
        # The verdicts that stand, as the verification page shows them: the latest on each axis (an earlier
        # refusal fixed since no longer holds the review back), faithfulness only on the evidence as it is now.
        latest, evidence = facts.verdicts, facts.evidence_hashes
        missing = [i for i in facts.included if not {"identity", "status"} <= latest.get(i, {}).keys()
                   or (i in evidence and "faithfulness" not in latest.get(i, {}))]
        standing = [(rid, axis, verdict.payload) for rid in facts.included
                    for axis, verdict in latest.get(rid, {}).items()
                    if axis != "faithfulness" or rid in evidence]
        refused = sorted({rid for rid, _, p in standing if p.refusal_grade})
        open_items = [(rid, p) for rid, _, p in standing if p.verdict in OPEN_ITEMS]
        studies = len({rid for rid, _ in open_items})
        open_note = (f"{len(open_items)} open item{'s' if len(open_items) != 1 else ''} on {studies} "
                     f"stud{'ies' if studies != 1 else 'y'}, for a human (verification.html)")
        return [Gate("every included study has been checked for identity and status, and its evidence as it "
                     "stands (`sitegen verify`)", not missing,
                     f"no verdict for {_listed(missing)}" if missing else open_note if open_items else ""),
                Gate("no included study has a refusal-grade verdict (unresolvable, mismatch, retracted, "
                     "contradicted)", not refused, f"refusal grade: {_listed(refused)}" if refused else "")]
    raise AssertionError(f"no gates for {target!r}")


def show(review: Review, facts: ReviewFacts) -> dict[str, Any]:
    phase, since = facts.phase
    following = PHASES[PHASES.index(phase) + 1] if phase != PHASES[-1] else None
    checks = gates(review, facts, following) if following else []
    return {"phase": phase, "since": since, "next_phase": following,
            "gates": [{"check": g.check, "ok": g.ok, "detail": g.detail} for g in checks],
            "batches": sum(1 for p in review.payloads if isinstance(p, BatchPayload)),
            "settable": {name: _in_force(review.state, name) for name in SETTABLE_FIELDS}}


def _in_force(state: ReviewState, name: str) -> int | str | None:
    """A settable field's value as the review uses it: a threshold state.json does not set is seed 002's."""
    return getattr(state.thresholds, name) if name in Thresholds.model_fields else getattr(state, name)


def advance(review: Review, facts: ReviewFacts, at: str) -> tuple[str, str]:
    """Move to the next phase if every gate holds; the move and its checks go on the ledger."""
    phase, _ = facts.phase
    if phase == PHASES[-1]:
        raise SitegenError("the review is published; a living review stays published as it is updated")
    target = PHASES[PHASES.index(phase) + 1]
    checks = gates(review, facts, target)
    failed = [g for g in checks if not g.ok]
    if failed:
        reasons = "; ".join(f"{g.check}: {g.detail}" for g in failed)
        raise SitegenError(f"cannot advance from {phase} to {target}: {reasons}")
    transaction = Transaction(review.root)
    append(transaction, review, at, [PhasePayload(from_phase=phase, to_phase=target, checks=[g.check for g in checks])])
    transaction.commit()
    return phase, target


def given_value(name: str, value: str) -> int | str | None:
    """`sitegen state set`'s FIELD and VALUE, checked alone before the review is read: a field that cannot be set,
    or a value its field refuses whatever the review (a max_kept that is no number from 1 to 10,000, a keep_from
    that is none from 0 to 100), is a usage error naming which (OptionInvalid). The value is given as its field
    holds it."""
    if name == "phase":
        raise OptionInvalid("FIELD", "'phase' advances only through `sitegen state advance`, which checks its gates")
    if name not in SETTABLE_FIELDS:
        raise OptionInvalid("FIELD", f"{name!r} cannot be set directly; settable fields: {', '.join(SETTABLE_FIELDS)}")
    parsed: int | str | None
    if name in WHOLE_NUMBERS:
        # ASCII digits alone, as a number is written in the review's files: isdecimal takes Arabic-Indic digits,
        # and pydantic's own reading of a text would take " 5 ", "+5", "5.0" and "1_000" too. No sign either: none
        # of these fields takes a negative number, and "-0" would be read as the 0 it does not say.
        if not re.fullmatch(r"[0-9]+", value):
            raise OptionInvalid("VALUE", f"{_shown_value(value)} is no {name}: write a whole number from "
                                         f"{WHOLE_NUMBERS[name]} in the digits 0-9 alone (no sign, point, '_' or "
                                         "spaces)")
        # too large: the model's limit says how large (int() of thousands of digits would refuse)
        parsed = int(value) if len(value) <= 9 else 10**9
    else:
        parsed = value if value.strip() else None  # nothing but spaces clears the note
    field = ReviewState.model_fields[name]
    try:
        return TypeAdapter(Annotated[field.annotation, field]).validate_python(parsed, strict=True)
    except ValidationError as exc:
        why = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
        raise OptionInvalid("VALUE", f"{_shown_value(value)} is no {name}: {why}") from None


# The settable fields holding a whole number, with the numbers each takes, as a refusal says them.
WHOLE_NUMBERS = {"max_kept": "1 to 10,000", "keep_from": "0 to 100", "review_from": "0 to 100"}


def _shown_value(value: str, limit: int = 60) -> str:
    """VALUE as a refusal quotes it: in full when short, else its start and its length (a 10 KB note
    quoted whole would bury the reason)."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value):,} characters)"


def set_field(review: Review, name: str, value: int | str | None) -> ReviewState:
    """Set one whitelisted field of state.json to a value `given_value` gave. A value right in itself that the
    review's other settings refuse (a review_from above keep_from) is refused naming both, nothing written."""
    try:
        state = ReviewState.model_validate({**model_data(review.state), name: value})
    except ValidationError as exc:
        why = "; ".join(error["msg"] for error in exc.errors(include_url=False))
        first = {"keep_from": "; lower review_from first", "review_from": "; raise keep_from first"}.get(name, "")
        raise SitegenError(f"state.json: {name} {value} refused: {why}{first}; nothing was written") from None
    transaction = Transaction(review.root)
    transaction.write("state.json", json_kept_form(review.root / "state.json", model_data(state)))
    transaction.commit()
    return state
