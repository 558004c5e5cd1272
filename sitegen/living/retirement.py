"""Retiring a saved search, and bringing one back: a ledger event each.

A living review's searches change over the years. A retired search is no longer
run by `update`, but nothing of it is lost: searches/<id>.json stays as it is
(its seen_ids are what keeps the records it found out of later batches, should
it be reinstated), its runs stay on the ledger (so PRISMA still counts the
records they identified), and its manifests stay in runs/. Whether a search is
retired is derived from the ledger, never stored beside it: the latest
`retirement` or `reinstatement` event of the search says.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.errors import SitegenError, shown_argument, shown_path
from sitegen.living.ledger import append, given_search_id, given_text
from sitegen.review.folder import Review
from sitegen.review.models import LedgerEvent, Payload, ReinstatementPayload, RetirementPayload
from sitegen.review.transaction import Transaction

MAX_REASON = 2000  # characters, as a protocol amendment's reason


@dataclass(frozen=True)
class Retirement:
    """A saved search retired, as the ledger recorded it."""

    monitor_id: str
    at: str  # the event's time
    reason: str
    seq: int  # the event's place on the ledger


def retired_searches(review: Review) -> dict[str, Retirement]:
    """Monitor id -> its retirement, for each saved search retired and not reinstated since (ledger order)."""
    retired: dict[str, Retirement] = {}
    for event, payload in zip(review.ledger, review.payloads, strict=True):
        if isinstance(payload, RetirementPayload):
            retired[payload.monitor_id] = Retirement(payload.monitor_id, event.ts, payload.reason, event.seq)
        elif isinstance(payload, ReinstatementPayload):
            retired.pop(payload.monitor_id, None)
    return retired


@dataclass(frozen=True)
class SearchChange:
    """A saved search retired or reinstated, as the ledger recorded it: one step of its history."""

    monitor_id: str
    retired: bool  # False: reinstated
    at: str  # the event's time
    reason: str | None  # a reinstatement may give none
    seq: int  # the event's place on the ledger


def search_histories(review: Review) -> dict[str, list[SearchChange]]:
    """Monitor id -> every retirement and reinstatement of that saved search, oldest first: a search retired and
    reinstated since is not retired, but the gap in its runs is explained by its history."""
    histories: dict[str, list[SearchChange]] = {}
    for event, payload in zip(review.ledger, review.payloads, strict=True):
        if isinstance(payload, RetirementPayload | ReinstatementPayload):
            histories.setdefault(payload.monitor_id, []).append(SearchChange(
                payload.monitor_id, isinstance(payload, RetirementPayload), event.ts, payload.reason, event.seq))
    return histories


def retire_search(review: Review, monitor_id: str, at: str, reason: str) -> LedgerEvent:
    """Record that `update` no longer runs the saved search `monitor_id`."""
    given_search_id(monitor_id, "--id")
    reason = given_text(reason, "--reason", MAX_REASON)
    _refuse_unknown(review, monitor_id)
    retired = retired_searches(review).get(monitor_id)
    if retired is not None:
        raise SitegenError(f"saved search {monitor_id!r} was already retired at {retired.at} (ledger event "
                           f"{retired.seq}); nothing was written")
    return _record(review, at, RetirementPayload(monitor_id=monitor_id, reason=reason))


def reinstate_search(review: Review, monitor_id: str, at: str, reason: str | None = None) -> LedgerEvent:
    """Record that `update` runs the retired saved search `monitor_id` again, from its seen_ids as they were."""
    given_search_id(monitor_id, "--id")
    reason = given_text(reason, "--reason", MAX_REASON) if reason is not None else None
    _refuse_unknown(review, monitor_id)
    if monitor_id not in retired_searches(review):
        raise SitegenError(f"saved search {monitor_id!r} is not retired: `update` runs it already; nothing was "
                           "written")
    return _record(review, at, ReinstatementPayload(monitor_id=monitor_id, reason=reason))


def _refuse_unknown(review: Review, monitor_id: str) -> None:
    if monitor_id not in review.searches:
        raise SitegenError(f"no saved search {monitor_id!r} in {shown_path(review.root)} (saved searches: "
                           f"{', '.join(review.searches) or 'none'}); nothing was written")


def _record(review: Review, at: str, payload: Payload) -> LedgerEvent:
    transaction = Transaction(review.root)
    [event] = append(transaction, review, at, [payload])  # refuses a time before the ledger's latest event
    transaction.commit()
    return event


def reinstate_hint(review: Review, monitor_id: str) -> str:
    return f"`sitegen monitor reinstate {shown_argument(review.root)} --id {monitor_id} --at TIME`"
