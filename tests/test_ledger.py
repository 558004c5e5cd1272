"""The hash chain names any edited, reordered or deleted event; the tail anchors name lost last events."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import EXAMPLE, tree_bytes

from sitegen.living.ledger import GENESIS, event_line, next_event, verify_chain
from sitegen.review.folder import load_ledger, load_review
from sitegen.review.models import LedgerEvent

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


@pytest.mark.parametrize("tails", [(1, 1), (2, 1), (1, 2)])
def test_two_branches_tails_kept_by_a_merge_are_named_as_such(tails):
    # Each branch appended events after the same one; a merge that kept both tails read as "an event was deleted,
    # inserted or moved", which tells nobody to keep one branch's events and run the other's command again.
    base = chain(3)
    ours_tail, theirs_tail = [], []
    for tail, n, name in ((ours_tail, tails[0], "ours"), (theirs_tail, tails[1], "theirs")):
        previous = base[-1]
        for i in range(n):
            previous = next_event(previous, "import", TS, {"source": "openalex", "description": f"{name} {i}",
                                                             "record_ids": []})
            tail.append(previous)
    for merged, second in ((base + ours_tail + theirs_tail, theirs_tail), (base + theirs_tail + ours_tail, ours_tail)):
        [(index, message)] = verify_chain(merged)
        assert merged[index] is second[0]
        assert message == ("event 4 and event 4 on line 4 were both appended to the same event: two branches each "
                           "appended events and a merge kept both; keep one branch's events (and its state.json), "
                           "then run the other branch's sitegen command again")


def test_an_event_written_twice_is_named_a_copy():
    events = chain(4)
    [(index, message)] = verify_chain(events[:3] + [events[2]] + events[3:4])
    assert index == 3 and message == "event 3 is a copy of event 3 on line 3: remove this line"


# --------------------------------------------------------------------------- the tail is anchored

@pytest.fixture
def anchored(tmp_path):
    """A copy of the example, whose files were all written by sitegen's commands (so they name their anchors)."""
    review = tmp_path / "review"
    shutil.copytree(EXAMPLE, review)
    return review


def lines(review):
    return (review / "ledger.jsonl").read_text().splitlines(keepends=True)


def truncate(review, keep):
    (review / "ledger.jsonl").write_text("".join(lines(review)[:keep]))


@pytest.mark.parametrize("load", [load_review, load_ledger])
def test_reading_the_ledger_says_up_to_where_anchors_can_be_judged(anchored, load):
    # Computed once as the ledger is read, for every check that judges an anchor (state.json's head, a saved
    # search's last event, a version's ledger head).
    review, _ = load(anchored)
    count = len(review.ledger)
    assert review.ledger_misplaced is None and all(review.judges_anchor(seq) for seq in range(1, count + 1))
    rows = lines(anchored)
    (anchored / "ledger.jsonl").write_text("".join(rows[:2] + rows[3:]))
    review, _ = load(anchored)
    assert review.ledger_misplaced == 3  # the event numbered 4 is at the third place
    assert review.judges_anchor(2) and not review.judges_anchor(3) and not review.judges_anchor(count)
    (anchored / "ledger.jsonl").write_text("".join(rows[:1] + ["not an event\n"] + rows[2:]))
    review, _ = load(anchored)
    assert review.ledger_unread == 2 and not review.judges_anchor(1)  # past an unread line, nothing is judged


def test_the_example_names_its_anchors():
    state = json.loads((EXAMPLE / "state.json").read_text())
    events = [json.loads(line) for line in (EXAMPLE / "ledger.jsonl").read_text().splitlines()]
    assert state["ledger_head"] == {"seq": events[-1]["seq"], "hash": events[-1]["hash"]}
    search = json.loads((EXAMPLE / "searches" / "object-in-context.json").read_text())
    assert search["last_event"]["hash"] in {event["hash"] for event in events}


@pytest.mark.parametrize("dropped", [1, 2, 3])
def test_dropping_the_last_events_is_named_by_check_and_verify(anchored, sitegen, dropped):
    total = len(lines(anchored))
    truncate(anchored, total - dropped)
    code, out, _ = sitegen("check", anchored)
    assert code == 1 and "[ledger-truncated]" in out
    assert f"depends on event {total}" in out and "state.json" in out
    code, out, _ = sitegen("ledger", "verify", anchored)
    assert code == 1 and "ledger-truncated" in out and f"ledger.jsonl:{total - dropped}" in out


def test_losing_a_runs_batch_event_names_the_saved_search(anchored, sitegen):
    events = [json.loads(line) for line in lines(anchored)]
    search = json.loads((anchored / "searches" / "object-in-context.json").read_text())
    batch_seq = search["last_event"]["seq"]
    assert events[batch_seq - 1]["type"] == "screening"
    truncate(anchored, batch_seq - 1)
    code, out, _ = sitegen("check", anchored)
    assert code == 1 and f"searches/object-in-context.json (the last event of its run at {search['last_run']}) " \
                         f"depends on event {batch_seq}" in out


@pytest.mark.parametrize("shift", [5, -1])
def test_an_anchor_whose_number_was_edited_is_named_not_the_ledger(anchored, sitegen, shift):
    """state.json's ledger_head naming an event the ledger holds, under another number: the anchor was edited,
    not the ledger truncated (or added to by hand); state.json is named at the anchor's line, and the ledger is
    not blamed."""
    file = "state.json"
    path = anchored / file
    data = json.loads(path.read_text())
    key = "ledger_head" if file == "state.json" else "last_event"
    true_seq = data[key]["seq"]
    data[key]["seq"] += shift
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    line = next(n for n, written in enumerate(text.splitlines(), 1) if written.startswith(f'  "{key}"'))
    for command in ("check", ("ledger", "verify")):
        code, out, _ = sitegen(*([command] if isinstance(command, str) else command), anchored)
        assert code == 1 and f"{path}:{line}:3: error: `{key}` names event {true_seq + shift} " in out, out
        assert f"the ledger holds that event as event {true_seq}: the anchor was edited by hand" in out, out
        assert "ledger-truncated" not in out and "ledger-head" not in out, out


@pytest.mark.parametrize("head", ["ours", "theirs"])
def test_a_merge_keeping_two_branches_events_blames_the_ledger_not_the_anchor(anchored, sitegen, head):
    # state.json's ledger_head, merged from either branch, names an event the ledger holds under its own number, but
    # one line lower: it was said to be "edited by hand", of an anchor sitegen wrote.
    last = LedgerEvent.model_validate(json.loads(lines(anchored)[-1]))
    ours, theirs = (next_event(last, "import", f"2023-06-0{day}T00:00:00Z",
                               {"source": "Embase", "description": f"{name} branch", "record_ids": []})
                    for day, name in ((1, "ours"), (2, "theirs")))
    with (anchored / "ledger.jsonl").open("a") as ledger:
        ledger.write(event_line(ours) + "\n" + event_line(theirs) + "\n")
    state = json.loads((anchored / "state.json").read_text())
    kept = ours if head == "ours" else theirs
    state["ledger_head"] = {"seq": kept.seq, "hash": kept.hash}
    (anchored / "state.json").write_text(json.dumps(state, indent=2) + "\n")
    for command in (("check",), ("ledger", "verify")):
        code, out, _ = sitegen(*command, anchored)
        problems = [line for line in out.splitlines() if ": error: " in line]
        assert code == 1 and len(problems) == 1, out
        assert f"ledger.jsonl:{last.seq + 2}: error: event {last.seq + 1} and event {last.seq + 1} on line " \
               f"{last.seq + 1} were both appended to the same event: two branches" in problems[0], out


def test_an_emptied_ledger_is_not_intact(anchored, sitegen):
    truncate(anchored, 0)
    code, out, _ = sitegen("ledger", "verify", anchored)
    assert code == 1 and "the ledger is empty, but" in out and "intact" not in out


def test_an_event_appended_by_hand_is_named(anchored, sitegen):
    last = LedgerEvent.model_validate(json.loads(lines(anchored)[-1]))
    extra = next_event(last, "phase", "2023-06-01T00:00:00Z",
                       {"from_phase": "screening", "to_phase": "extraction", "checks": []})
    with (anchored / "ledger.jsonl").open("a") as ledger:
        ledger.write(event_line(extra) + "\n")
    code, out, _ = sitegen("ledger", "verify", anchored)
    assert code == 1 and "[ledger-head]" in out and "the last one sitegen appended" in out


def unanchor(review):
    """The review as sitegen wrote it before it anchored the ledger's tail: no anchor anywhere."""
    (review / "state.json").unlink()
    search = review / "searches" / "object-in-context.json"
    data = json.loads(search.read_text())
    del data["last_event"]
    search.write_text(json.dumps(data, indent=2) + "\n")


def test_a_review_written_before_anchoring_is_asked_to_anchor_and_can(anchored, sitegen):
    expected = {"state": json.loads((anchored / "state.json").read_text()),
                "search": json.loads((anchored / "searches" / "object-in-context.json").read_text())}
    unanchor(anchored)
    code, out, _ = sitegen("check", anchored)
    assert code == 1 and "[ledger-unanchored]" in out and f"sitegen ledger anchor {anchored}" in out
    code, out, _ = sitegen("ledger", "verify", anchored)
    assert code == 1 and "ledger-unanchored" in out
    code, out, err = sitegen("ledger", "anchor", anchored)
    assert code == 0 and f"ledger anchored at event {len(lines(anchored))}" in out, err
    # The same anchors sitegen writes as it goes: the ledger's last event, the search's last run's last event.
    assert json.loads((anchored / "state.json").read_text())["ledger_head"] == expected["state"]["ledger_head"]
    search = json.loads((anchored / "searches" / "object-in-context.json").read_text())
    assert search["last_event"] == expected["search"]["last_event"]
    assert sitegen("check", anchored)[0] == 0
    code, _, err = sitegen("ledger", "anchor", anchored)
    assert code == 1 and "already anchored" in err


@pytest.mark.parametrize("removed", ["state.json", "last_event"])
def test_a_removed_anchor_is_named_and_cannot_be_re_anchored(anchored, sitegen, removed):
    if removed == "state.json":
        (anchored / "state.json").unlink()
    else:
        search = anchored / "searches" / "object-in-context.json"
        data = json.loads(search.read_text())
        del data["last_event"]
        search.write_text(json.dumps(data, indent=2) + "\n")
    code, out, _ = sitegen("check", anchored)
    assert code == 1 and "[anchor-removed]" in out and "restore" in out
    before = tree_bytes(anchored)
    code, _, err = sitegen("ledger", "anchor", anchored)
    assert code == 1 and "anchor-removed" in err and tree_bytes(anchored) == before


def test_removing_every_anchor_does_not_hide_a_lost_batch(anchored, sitegen):
    batches = [n for n, line in enumerate(lines(anchored)) if json.loads(line)["type"] == "screening"]
    truncate(anchored, batches[-1])  # from the last run's batch event on
    unanchor(anchored)
    code, out, _ = sitegen("check", anchored)
    assert code == 1 and "[batch-missing]" in out and "the batch event that held them was lost" in out
    before = tree_bytes(anchored)
    assert sitegen("ledger", "anchor", anchored)[0] == 1  # anchoring refuses a ledger that lost events
    assert tree_bytes(anchored) == before


def test_an_interrupted_write_is_named_not_taken_for_tampering(anchored, sitegen):
    """A kill between the renames of a commit: the new ledger is in place, state.json not yet."""
    from sitegen.review.transaction import JOURNAL, STAGED

    state = json.loads((anchored / "state.json").read_text())
    last = LedgerEvent.model_validate(json.loads(lines(anchored)[-1]))
    extra = next_event(last, "phase", "2023-06-01T00:00:00Z",
                       {"from_phase": "screening", "to_phase": "extraction", "checks": []})
    with (anchored / "ledger.jsonl").open("a") as ledger:
        ledger.write(event_line(extra) + "\n")
    state["ledger_head"] = {"seq": extra.seq, "hash": extra.hash}
    (anchored / f"state.json{STAGED}").write_text(json.dumps(state))
    (anchored / JOURNAL).write_text(json.dumps(["ledger.jsonl", "state.json"]))
    for command in (("check", anchored), ("ledger", "verify", anchored)):
        code, out, _ = sitegen(*command)
        assert code == 1 and "an interrupted write was found" in out, command
        assert "ledger-head" not in out and "ledger-truncated" not in out, command


def test_ledger_verify_needs_a_review_folder(tmp_path, sitegen):
    code, out, _ = sitegen("ledger", "verify", tmp_path / "nowhere")
    assert code == 1 and "does not exist" in out and "intact" not in out
    code, out, _ = sitegen("ledger", "verify", tmp_path)
    assert code == 1 and "review.yaml is missing" in out


def test_a_leftover_temporary_file_does_not_hide_lost_events(anchored, sitegen):
    truncate(anchored, len(lines(anchored)) - 1)
    (anchored / "evidence" / ".notes.sitegen-tmp-0123456789abcdef").write_text("left by a kill")
    for command in (("check", anchored), ("ledger", "verify", anchored)):
        code, out, _ = sitegen(*command)
        assert code == 1 and "[interrupted]" in out and "ledger-truncated" in out, command


def test_an_unreadable_anchor_file_is_named_not_taken_for_a_missing_anchor(anchored, sitegen):
    (anchored / "state.json").write_text('{"schema_version": 1, "ledger_head": {"seq": "x"}}\n')
    code, out, _ = sitegen("ledger", "verify", anchored)
    assert code == 1 and "state.json:1" in out and "ledger_head" in out
    assert "ledger-unanchored" not in out and "anchor-removed" not in out


@pytest.mark.parametrize("damage", ["a key twice", "not json", "no event"])
def test_a_line_that_holds_no_event_is_named_once_not_as_every_later_event_moved(anchored, sitegen, damage):
    # Every event after a line that cannot be read would seem moved, and every anchor lost: the line is
    # named, with the one problem that the chain past it is not checked, and nothing else.
    rows = (anchored / "ledger.jsonl").read_text().splitlines()
    if damage == "a key twice":
        rows[4] = rows[4][:-1] + ',"type":"x"}'
    elif damage == "not json":
        rows[4] = rows[4][:40]
    else:
        rows[4] = json.dumps({"seq": 5})
    (anchored / "ledger.jsonl").write_text("\n".join(rows) + "\n")
    for command in ("check", "ledger"):
        code, out, _ = sitegen(command, *(["verify"] if command == "ledger" else []), anchored)
        problems = [row for row in out.splitlines() if ": error: " in row]
        assert code == 1 and len(problems) >= 2, out
        assert all(row.startswith(f"{anchored}/ledger.jsonl:5") for row in problems), out
        assert any("the chain is checked only up to line 5" in row for row in problems)


def test_appending_keeps_every_line_already_written_byte_for_byte(anchored, sitegen):
    """Append-only to the byte: a ledger whose lines another tool spelled otherwise (spaces after separators,
    Windows line ends), each the same event, keeps them as they are when sitegen appends an event."""
    ledger = anchored / "ledger.jsonl"
    respelled = "".join(json.dumps(json.loads(line), separators=(", ", ": ")) + "\r\n" for line in lines(anchored))
    ledger.write_bytes(respelled.encode("utf-8"))
    assert sitegen("check", anchored)[0] == 0  # each line is the event it was
    protocol = anchored / "protocol.md"
    protocol.write_text(protocol.read_text().replace("Rodents (rats or mice)", "Rodents (rats, mice or hamsters)"))
    code, _, err = sitegen("protocol", "amend", anchored, "--at", "2023-05-01T00:00:00Z",
                           "--reason", "Hamsters are rodents too")
    assert code == 0, err
    written = ledger.read_bytes()
    assert written.startswith(respelled.encode("utf-8"))
    assert json.loads(written[len(respelled):])["type"] == "amendment"
    assert sitegen("ledger", "verify", anchored)[0] == 0
