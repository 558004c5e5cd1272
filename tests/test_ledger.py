"""The hash chain names any edited, reordered or deleted event."""

from __future__ import annotations

from sitegen.living.ledger import GENESIS, next_event, verify_chain

TS = "2026-06-01T00:00:00Z"


def chain(n: int):
    events, previous = [], None
    for i in range(n):
        previous = next_event(previous, "import", TS, {"source": "openalex", "description": f"batch {i}",
                                                         "record_ids": []})
        events.append(previous)
    return events


def test_intact_chain():
    events = chain(4)
    assert events[0].prev == GENESIS
    assert verify_chain(events) == []


def test_edit_is_named():
    events = chain(4)
    events[2] = events[2].model_copy(update={"payload": {**events[2].payload, "description": "changed"}})
    [(index, message)] = verify_chain(events)
    assert index == 2 and "edited" in message


def test_deletion_and_reorder_are_named():
    events = chain(4)
    assert verify_chain(events[:1] + events[2:])[0][0] == 1
    swapped = [events[0], events[2], events[1], events[3]]
    assert {index for index, _ in verify_chain(swapped)} >= {1, 2}
