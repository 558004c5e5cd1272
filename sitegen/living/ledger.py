"""The append-only, hash-chained provenance ledger (ledger.jsonl).

Each event stores the hash of the event before it (`prev`) and its own hash
over everything else, so editing, reordering or deleting any line breaks the
chain at that line and `verify_chain` names it. Deleting the last lines breaks
no chain, so the files that depend on events name them (`LedgerAnchor`):
state.json the ledger's head, each saved search its latest run's last event.

`append` is the one way events are written: typed payloads in, one
transaction out, head anchor moved with them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sitegen.errors import OptionInvalid, SitegenError
from sitegen.records.model import hand_written, model_data, printable, visible_text
from sitegen.review.folder import Review
from sitegen.review.models import (
    EVENT_TYPES,
    SLUG,
    BatchPayload,
    LedgerAnchor,
    LedgerEvent,
    Payload,
    RetrievalPayload,
    parse_timestamp,
)
from sitegen.review.transaction import Transaction
from sitegen.review.write import appended_lines, canonical_json, json_kept_form

GENESIS = "0" * 64
FUTURE_SLACK = timedelta(days=2)
EARLIEST_EVENT = datetime(1970, 1, 1, tzinfo=UTC)  # the dates sitegen writes files with start there (SOURCE_DATE_EPOCH)


def event_hash(seq: int, type_: str, ts: str, payload: dict[str, Any], prev: str) -> str:
    body = {"seq": seq, "type": type_, "ts": ts, "payload": payload, "prev": prev}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def next_event(previous: LedgerEvent | None, type_: str, ts: str, payload: dict[str, Any]) -> LedgerEvent:
    seq = previous.seq + 1 if previous else 1
    prev = previous.hash if previous else GENESIS
    return LedgerEvent(seq=seq, type=type_, ts=ts, payload=payload, prev=prev,
                       hash=event_hash(seq, type_, ts, payload, prev))


def anchor(event: LedgerEvent) -> LedgerAnchor:
    return LedgerAnchor(seq=event.seq, hash=event.hash)


def append(transaction: Transaction, review: Review, at: str, payloads: Sequence[Payload]) -> list[LedgerEvent]:
    """Append one event per payload, dated `at`, to the review's ledger in `transaction`, and move
    state.json's head anchor to the last of them. Returns the new events; nothing is on disk until
    the transaction commits."""
    check_event_time(review.ledger, at)
    events = list(review.ledger)
    for payload in payloads:
        previous = events[-1] if events else None
        events.append(next_event(previous, EVENT_TYPES[type(payload)], at, model_data(payload)))
    new = events[len(review.ledger):]
    if new:
        transaction.write("ledger.jsonl", appended(review, new))
        state = review.state.model_copy(update={"ledger_head": anchor(events[-1])})
        transaction.write("state.json", json_kept_form(review.root / "state.json", model_data(state)))
    return new


def event_line(event: LedgerEvent) -> str:
    return canonical_json(event.model_dump(mode="json"))


def appended(review: Review, new: list[LedgerEvent]) -> bytes:
    """ledger.jsonl as it is on disk with the `new` events' lines after it. Append-only is kept to the byte: the
    file as written is a prefix of the new one, its lines as they are whatever their spelling (spacing, key order,
    line ends), rather than written anew from the events read from them; the new lines end as its lines do, the
    last one only if its last line did (`appended_lines`)."""
    path = review.root / "ledger.jsonl"
    # surrogateescape: the bytes come back as they were, whatever they are
    written = path.read_bytes().decode("utf-8", "surrogateescape") if path.exists() else ""
    return appended_lines(written, [event_line(event) for event in new]).encode("utf-8", "surrogateescape")


def ledger_text(events: list[LedgerEvent]) -> str:
    """The whole of ledger.jsonl for these events."""
    return "".join(event_line(event) + "\n" for event in events)


def given_time(at: str, option: str = "--at") -> datetime:
    """A time the caller gave as `option`, parsed; one that is not a real RFC 3339 time is wrong in itself
    (OptionInvalid, named by its option: a ValueError would reach the command line as a traceback)."""
    try:
        return parse_timestamp(at)
    except ValueError as exc:
        raise OptionInvalid(option, str(exc)) from None


# What `printable` lets through that a name shown on one line may not hold (it refuses every other control).
_LINE_BREAK_OR_TAB = re.compile("[\t\n\r\u2028\u2029]")


def given_text(value: str, option: str, limit: int, one_line: bool = False) -> str:
    """Text the caller gave as `option` for the ledger to keep (for good, and on the site), without the spaces
    around it; OptionInvalid unless it is visible text of 1 to `limit` characters without a control character or an
    invisible format character, nor, when it is a name (`one_line`: a source, which PRISMA and every message show
    on one line), a line break or tab. The rule of a reviewer's text in the review's files (`hand_written`):
    applied here, where the text is typed, not where the ledger is read, so an event written before it still loads."""
    text = value.strip()
    try:
        printable(text)
        if one_line and (found := _LINE_BREAK_OR_TAB.search(text)):
            raise ValueError(f"holds U+{ord(found.group()):04X}, a line break or tab: a name is written on one line")
        if not visible_text(text) or len(text) > limit:
            raise ValueError(f"must be written in visible text of 1 to {limit:,} characters (it has {len(text):,})")
        hand_written(text)  # after: text with nothing visible is told so, not of the first invisible character
    except ValueError as error:
        raise OptionInvalid(option, f"{error}; nothing was written") from None
    return text


def given_search_id(value: str, option: str) -> str:
    """A saved search's id the caller gave as `option`; OptionInvalid unless it is one any review could have (it
    names the file searches/<id>.json), before any review is asked whether it has it."""
    if not re.fullmatch(SLUG, value):
        raise OptionInvalid(option, f"{value!r}: a saved search's id is 1 to 80 lower-case letters, digits and '-', "
                                    "starting with a letter or digit (it names the file searches/<id>.json)")
    return value


def event_time(at: str, option: str = "--at") -> datetime:
    """A time the caller gave as `option` for new events, parsed: a real RFC 3339 time that no review could
    refuse (OptionInvalid otherwise), before it is compared with any review's ledger."""
    when = given_time(at, option)
    # The clock only guards against a typo: an event dated far ahead would block every later one,
    # since the ledger is append-only and kept in time order. It never supplies the time.
    if when > datetime.now(UTC) + FUTURE_SLACK:
        raise OptionInvalid(option, f"{at} is in the future; give the time of the run (UTC)")
    # Nor can a review's event be older than the searches it could make: 1024 for 2024 would be recorded for good.
    if when < EARLIEST_EVENT:
        raise OptionInvalid(option, f"{at} is before {EARLIEST_EVENT.year}; give the time of the run (a typo in "
                                    "the year?)")
    return when


def check_event_time(events: list[LedgerEvent], at: str, option: str = "--at") -> None:
    """A caller-supplied time for new events (given as `option`): an event time (`event_time`), not before the
    ledger's latest (a SitegenError: the time is wrong for this review only)."""
    when = event_time(at, option)
    latest = max((event.ts for event in events), key=parse_timestamp, default=None)
    if latest and when < parse_timestamp(latest):
        raise SitegenError(f"{option} {at} is earlier than the latest ledger event ({latest}); "
                           "events are recorded in time order")


def holds(events: list[LedgerEvent], wanted: LedgerAnchor) -> bool:
    """Whether the ledger still has the event an anchor names, at its place and with its hash."""
    index = wanted.seq - 1
    return index < len(events) and events[index].seq == wanted.seq and events[index].hash == wanted.hash


def verify_chain(events: list[LedgerEvent]) -> list[tuple[int, str]]:
    """(index, message) for every event that breaks the chain; empty when intact."""
    broken = []
    prev = GENESIS
    above_seq = 0
    followed: dict[str, int] = {}  # hash -> the index of the first event chained to it (its `prev`)
    for index, event in enumerate(events):
        if (forked := followed.get(event.prev)) is not None and event.prev != prev:
            # Two branches each appended events after the same one, and a merge kept both tails: the second
            # tail's first event is chained where the first's was. Saying so tells what to do, as "deleted,
            # inserted or moved" did not.
            first = f"event {events[forked].seq} on line {forked + 1}"
            broken.append((index, f"event {event.seq} is a copy of {first}: remove this line"
                           if event.hash == events[forked].hash else
                           f"event {event.seq} and {first} were both appended to the same event: two branches each "
                           "appended events and a merge kept both; keep one branch's events (and its state.json), "
                           "then run the other branch's sitegen command again"))
        # Out of place, an event is reported where the numbering breaks: after one event was deleted, the
        # events below it follow each other as before, and are not each reported as moved.
        elif event.seq != index + 1 and event.seq != above_seq + 1:
            where = f"follows event {above_seq}" if index else "is the first event"
            broken.append((index, f"event has seq {event.seq} but {where}: "
                                  "an event was deleted, inserted or moved"))
        elif event.prev != prev:
            broken.append((index, f"event {event.seq} does not follow the event before it "
                                  "(prev hash differs): an earlier event was edited, deleted or moved"))
        expected = event_hash(event.seq, event.type, event.ts, event.payload, event.prev)
        if event.hash != expected:
            broken.append((index, f"event {event.seq} was edited after it was written (its hash does not match)"))
        followed.setdefault(event.prev, index)
        prev = event.hash
        above_seq = event.seq
    return broken


def anchor_tail(review: Review) -> LedgerEvent:
    """Record where the ledger ends, for a review written before sitegen anchored its tail: state.json's
    `ledger_head`, and each saved search's `last_event` (the last event of its latest run). From then on,
    losing events from the end shows. Only for a review with no anchor at all: where one exists, a
    missing one was removed, and the workspace refuses the review before this is called."""
    if not review.ledger:
        raise SitegenError("the ledger is empty: there is no event to anchor it to")
    if review.state.ledger_head is not None:
        raise SitegenError(f"the ledger is already anchored at event {review.state.ledger_head.seq}")
    transaction = Transaction(review.root)
    for monitor_id, search in review.searches.items():
        latest_run = [event for event, payload in zip(review.ledger, review.payloads, strict=True)
                      if isinstance(payload, RetrievalPayload | BatchPayload) and payload.monitor_id == monitor_id
                      and event.ts == search.last_run]
        if latest_run:
            anchored = search.model_copy(update={"last_event": anchor(latest_run[-1])})
            rel = f"searches/{monitor_id}.json"
            transaction.write(rel, json_kept_form(review.root / rel, model_data(anchored)))
    state = review.state.model_copy(update={"ledger_head": anchor(review.ledger[-1])})
    transaction.write("state.json", json_kept_form(review.root / "state.json", model_data(state)))
    transaction.commit()
    return review.ledger[-1]
