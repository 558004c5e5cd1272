"""Events only sitegen's commands write, written by hand with the hash chain recomputed (a pull request can):
`sitegen check` judges each again as its command judged it then, so none moves a review past what it asks for."""

from __future__ import annotations

import json
import re

from sitegen.living.ledger import GENESIS, event_hash
from sitegen.review.write import canonical_json

RIS = ("TY  - JOUR\nTI  - A study of voles\nPY  - 2020\nDO  - 10.1000/voles\nER  - \n"
       "TY  - JOUR\nTI  - A study of moles\nPY  - 2021\nDO  - 10.1000/moles\nER  - \n")
LATER_RIS = "TY  - JOUR\nTI  - A study of shrews\nPY  - 2022\nDO  - 10.1000/shrews\nER  - \n"


def new_review(sitegen, tmp_path, *, locked=True, imported=True):
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    if locked:
        assert sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")[0] == 0
    if imported:
        (tmp_path / "references.ris").write_text(RIS, encoding="utf-8")
        assert sitegen("import", review, tmp_path / "references.ris", "--at", "2026-01-02T00:00:00Z")[0] == 0
    return review


def advance(sitegen, review, at):
    code, out, err = sitegen("state", "advance", review, "--at", at)
    assert code == 0, out + err


def forge(review, type_, payload, ts, at=None):
    """Insert an event by hand at line `at` of ledger.jsonl (at its end without one), every event from there chained
    again and state.json's ledger head moved with them: what a hand edit can do that the hash chain does not show."""
    events = [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]
    at = len(events) + 1 if at is None else at
    events.insert(at - 1, {"type": type_, "ts": ts, "payload": payload})
    previous = GENESIS
    for seq, event in enumerate(events, start=1):
        event.update(seq=seq, prev=previous, hash=event_hash(seq, event["type"], event["ts"], event["payload"],
                                                             previous))
        previous = event["hash"]
    (review / "ledger.jsonl").write_text("".join(canonical_json(event) + "\n" for event in events))
    state = json.loads((review / "state.json").read_text()) if (review / "state.json").exists() else {"schema_version": 1}
    state["ledger_head"] = {"seq": len(events), "hash": previous}
    (review / "state.json").write_text(json.dumps(state, indent=2) + "\n")
    return at


def phase(from_phase, to_phase):
    return {"from_phase": from_phase, "to_phase": to_phase, "checks": []}


def problems(sitegen, review):
    code, out, _ = sitegen("check", review)
    return code, [line for line in out.splitlines() if "ledger.jsonl" in line]


def test_a_phase_event_written_by_hand_before_the_protocol_was_locked_is_caught(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path, locked=False, imported=False)
    line = forge(review, "phase", phase("protocol", "searching"), "2026-01-01T00:00:00Z")
    assert sitegen("ledger", "verify", review)[0] == 0  # the chain links: only the gates show it
    code, found = problems(sitegen, review)
    assert code == 1
    [problem] = found
    assert f"ledger.jsonl:{line}" in problem and "phase-gate" in problem
    assert "'the protocol is locked' did not hold:" in problem, problem  # no advice to lock: that was for then
    assert "restore ledger.jsonl and state.json from Git" in problem and "changed since" not in problem


def test_a_phase_event_is_judged_on_the_ledger_as_it_stood_then(sitegen, tmp_path):
    """The records imported after a forged move to screening do not make it right: the gate is judged on the
    events before it."""
    review = new_review(sitegen, tmp_path, imported=False)
    advance(sitegen, review, "2026-01-01T01:00:00Z")  # to searching: the protocol is locked
    (tmp_path / "references.ris").write_text(RIS, encoding="utf-8")
    assert sitegen("import", review, tmp_path / "references.ris", "--at", "2026-01-02T00:00:00Z")[0] == 0
    line = forge(review, "phase", phase("searching", "screening"), "2026-01-01T02:00:00Z", at=3)
    code, [problem] = problems(sitegen, review)
    assert code == 1 and f"ledger.jsonl:{line}" in problem
    assert "'a search has run in full (or records were imported)' did not hold" in problem, problem


def test_a_forged_move_past_unscreened_records_names_them(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    advance(sitegen, review, "2026-01-03T00:00:00Z")
    advance(sitegen, review, "2026-01-03T00:01:00Z")
    line = forge(review, "phase", phase("screening", "extraction"), "2026-01-04T00:00:00Z")
    code, [problem] = problems(sitegen, review)
    assert code == 1 and f"ledger.jsonl:{line}" in problem and "moves from screening to extraction" in problem
    assert "'every record is screened at title and abstract' did not hold (2 records await" in problem, problem
    assert "10.1000/moles" in problem and "10.1000/voles" in problem
    assert "or the decisions or evidence of the records named were changed since" in problem  # files keep no history


def test_each_forged_step_of_a_run_of_them_is_caught(sitegen, tmp_path):
    """One step at a time, each written by hand: the first whose gate did not hold is named, and every later one."""
    review = new_review(sitegen, tmp_path, locked=False, imported=False)
    steps = ["protocol", "searching", "screening", "extraction", "synthesis", "published"]
    lines = [forge(review, "phase", phase(before, after), "2026-01-01T00:00:00Z") for before, after
             in zip(steps, steps[1:], strict=False)]
    code, found = problems(sitegen, review)
    assert code == 1
    assert [int(re.search(r"ledger\.jsonl:(\d+):", problem)[1]) for problem in found] == lines


def test_a_review_that_advanced_through_its_gates_stays_clean_as_it_lives_on(sitegen, tmp_path):
    """Records found after the review left screening await screening now: no fault of the step taken then."""
    review = new_review(sitegen, tmp_path)
    for reviewer in ("ann", "bob"):
        (review / "screening" / "title-abstract" / f"{reviewer}.csv").write_text(
            "record_id,decision,reason,note\n10.1000/voles,exclude,wrong-population,\n"
            "10.1000/moles,exclude,wrong-population,\n")
    for minute, _ in enumerate(range(5)):
        advance(sitegen, review, f"2026-01-03T00:0{minute}:00Z")
    (tmp_path / "later.ris").write_text(LATER_RIS, encoding="utf-8")
    code, out, err = sitegen("import", review, tmp_path / "later.ris", "--at", "2026-01-04T00:00:00Z")
    assert code == 0, out + err
    code, out, _ = sitegen("check", review)
    assert code == 0, out


def test_evidence_edited_after_an_event_is_no_fault_of_the_event(example_copy):
    """The evidence as it was when a phase event was written is kept nowhere: a faithfulness verdict stands for the
    evidence it checked when the event is judged again, though it no longer stands for the review as it is now."""
    from sitegen.living.state import gates, gates_then
    from sitegen.workspace import open_review

    evidence = next((example_copy / "evidence").glob("*.yaml"))
    text = evidence.read_text()
    evidence.write_text(text.replace("finding: >-\n", "finding: >-\n      Edited after verification.\n", 1))
    workspace = open_review(example_copy)
    review = workspace.review
    edited = next(item.evidence.record_id for item in review.evidence if item.path.endswith(evidence.name))

    def checked(found):
        return next(gate for gate in found if gate.check.startswith("every included study has been checked"))

    assert edited in checked(gates(review, workspace.facts, "published")).detail
    assert edited not in checked(gates_then(review, len(review.ledger), "published")).detail


def amendment_of(review, text):
    """protocol.md written as `text`, and the amendment payload recording it as `sitegen protocol amend` would."""
    from sitegen.living.protocol import amendment_diff
    from sitegen.review.folder import parse_protocol, protocol_hash
    from sitegen.review.models import ProtocolLockPayload

    [lock] = [json.loads(line)["payload"] for line in (review / "ledger.jsonl").read_text().splitlines()]
    (review / "protocol.md").write_text(text)
    protocol, _ = parse_protocol(text)
    return {"version": 2, "sha256": protocol_hash(protocol.text), "reason": "Clarified", "text": protocol.text,
            "diff": amendment_diff(ProtocolLockPayload(**lock), protocol.text, 2)}


def test_an_amendment_written_by_hand_that_changes_nothing_but_its_version_is_caught(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path, imported=False)
    payload = amendment_of(review, (review / "protocol.md").read_text().replace("version: 1", "version: 2"))
    line = forge(review, "amendment", payload, "2026-01-02T00:00:00Z")
    code, [problem] = problems(sitegen, review)
    assert code == 1 and f"ledger.jsonl:{line}" in problem and "amendment-empty" in problem
    assert "records the protocol of version 1 changed only in its version line" in problem


def test_an_amendment_written_by_hand_with_a_diff_of_another_change_is_caught(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path, imported=False)
    text = (review / "protocol.md").read_text().replace("version: 1", "version: 2")
    payload = amendment_of(review, text.replace("Not primary research", "Not primary research or a review"))
    honest = dict(payload)
    payload["diff"] = payload["diff"].replace("or a review", "or a pilot study")
    forge(review, "amendment", honest, "2026-01-02T00:00:00Z")
    assert sitegen("check", review)[0] == 0  # the amendment as `sitegen protocol amend` writes it
    (review / "ledger.jsonl").write_text("\n".join((review / "ledger.jsonl").read_text().splitlines()[:1]) + "\n")
    line = forge(review, "amendment", payload, "2026-01-02T00:00:00Z")
    code, [problem] = problems(sitegen, review)
    assert code == 1 and f"ledger.jsonl:{line}" in problem and "amendment-diff" in problem


def test_a_version_event_written_by_hand_dated_otherwise_than_its_version_is_caught(sitegen, tmp_path):
    from sitegen.living.ledger import anchor
    from sitegen.living.versions import publish, version_hash, version_text
    from sitegen.workspace import open_review

    review = new_review(sitegen, tmp_path)
    workspace = open_review(review)
    [record, _] = publish(workspace.review, workspace.facts, "2026-01-03T00:00:00Z")
    assert sitegen("check", review)[0] == 0
    ledger = open_review(review).review.ledger
    forged = record.model_copy(update={"number": 2, "published_at": "2026-01-05T00:00:00Z",
                                       "ledger_head": anchor(ledger[-1])})
    (review / "versions" / "2.json").write_text(version_text(forged))
    line = forge(review, "version", {"number": 2, "sha256": version_hash(forged)}, "2026-01-04T00:00:00Z")
    code, out, _ = sitegen("check", review)
    assert code == 1 and "versions/2.json" in out and "version-time" in out
    assert f"is not the time of ledger event {line} (line {line})" in out, out


def test_a_batch_event_written_by_hand_under_a_retired_protocol_version_or_number_is_caught(sitegen, example_copy):
    """`sitegen update` numbers batches in order and records the protocol version in force, which decides the reasons
    its records may be excluded for: the example's protocol was amended to version 2 before its second batch."""
    batches = [json.loads(line)["payload"] for line in (example_copy / "ledger.jsonl").read_text().splitlines()
               if json.loads(line)["type"] == "screening"]
    assert [batch["protocol_version"] for batch in batches] == [1, 2]
    payload = {"batch": 3, "monitor_id": batches[-1]["monitor_id"], "protocol_version": 1, "record_ids": []}
    line = forge(example_copy, "screening", payload, "2024-06-01T00:00:00Z")
    code, found = problems(sitegen, example_copy)
    assert code == 1
    assert any(f"ledger.jsonl:{line}" in problem and "batch-protocol" in problem
               and "under protocol version 1, but version 2 was in force then" in problem for problem in found), found
    forge(example_copy, "screening", {**payload, "batch": 5, "protocol_version": 2}, "2024-06-02T00:00:00Z")
    code, found = problems(sitegen, example_copy)
    assert any(f"ledger.jsonl:{line + 1}" in problem and "batch-number" in problem
               and "records batch 5, but the batches before it make it batch 4" in problem for problem in found), found


def test_a_version_written_by_hand_that_publishes_nothing_new_is_caught(sitegen, tmp_path):
    from sitegen.living.ledger import anchor
    from sitegen.living.versions import publish, version_hash, version_text
    from sitegen.workspace import open_review

    review = new_review(sitegen, tmp_path)
    workspace = open_review(review)
    [record, _] = publish(workspace.review, workspace.facts, "2026-01-03T00:00:00Z")
    workspace = open_review(review)
    assert publish(workspace.review, workspace.facts, "2026-01-04T00:00:00Z")[0] is None  # nothing changed
    forged = record.model_copy(update={"number": 2, "published_at": "2026-01-04T00:00:00Z",
                                       "ledger_head": anchor(workspace.review.ledger[-1])})
    (review / "versions" / "2.json").write_text(version_text(forged))
    forge(review, "version", {"number": 2, "sha256": version_hash(forged)}, "2026-01-04T00:00:00Z")
    code, out, _ = sitegen("check", review)
    assert code == 1 and "versions/2.json:1" in out and "version-unchanged" in out, out
    assert "version 2 is version 1 again" in out


def test_a_run_of_phase_events_is_judged_on_one_derivation_of_the_facts(sitegen, tmp_path, monkeypatch):
    """Phase events with only phase and verification events between them judge the same review but for its verdicts:
    `check` derives its facts once for the run (at 100,000 records each derivation takes seconds), and finds what
    judging each event on its own finds, the verdicts recorded between included."""
    import sitegen.living.checks as checks
    import sitegen.living.facts as facts
    from sitegen.living.state import gates_then
    from sitegen.review.folder import load_review

    review = new_review(sitegen, tmp_path)
    for stage in ("title-abstract", "full-text"):
        for reviewer in ("ann", "bob"):
            (review / "screening" / stage).mkdir(parents=True, exist_ok=True)
            (review / "screening" / stage / f"{reviewer}.csv").write_text(
                "record_id,decision,reason,note\n10.1000/voles,include,,\n10.1000/moles,include,,\n")
    advance(sitegen, review, "2026-01-03T00:00:00Z")
    advance(sitegen, review, "2026-01-03T00:01:00Z")
    lines = [forge(review, "phase", phase("screening", "extraction"), "2026-01-04T00:00:00Z"),
             forge(review, "phase", phase("extraction", "synthesis"), "2026-01-04T00:00:00Z")]
    for axis, verdict in (("identity", "verified"), ("status", "current")):
        forge(review, "verification", {"record_id": "10.1000/voles", "axis": axis, "verdict": verdict,
                                       "refusal_grade": False}, "2026-01-05T00:00:00Z")
    lines.append(forge(review, "phase", phase("synthesis", "published"), "2026-01-06T00:00:00Z"))
    derived = []
    real = facts.screening_facts
    monkeypatch.setattr(facts, "screening_facts", lambda *args: derived.append(args) or real(*args))
    loaded, _ = load_review(review)
    found = [problem for problem in checks.living_problems(loaded) if problem.code == "phase-gate"]
    assert [problem.line for problem in found] == lines[1:]  # every record was screened: only the evidence is missing
    assert "(no verdict for 10.1000/moles)" in found[-1].message  # the verdicts on voles, recorded since synthesis
    assert len(derived) == 1
    monkeypatch.setattr(checks, "_gates_then", lambda review, events, target, _: gates_then(review, events, target))
    assert [problem for problem in checks.living_problems(loaded) if problem.code == "phase-gate"] == found
    assert len(derived) == 4  # one each, judged alone


def test_the_facts_a_run_of_phase_events_shares_can_hold_no_judgement(sitegen, tmp_path):
    """The facts a run of phase events shares are those of the review without its phase and verification events
    (`Settled`), so no fact among them can go stale as judgements are recorded: one that needed a judgement would
    find none. Every cut, shared or not, and across a version published between them, holds every fact a derivation
    of its own finds, and the whole ledger's are the review's own."""
    from functools import cached_property

    from sitegen.living.facts import FactsThen, ReviewFacts, Settled, as_it_stood
    from sitegen.review.folder import load_review

    review = new_review(sitegen, tmp_path)
    for stage, rows in (("title-abstract", "10.1000/voles,include,,\n10.1000/moles,exclude,,\n"),
                        ("full-text", "10.1000/voles,include,,\n")):
        for reviewer in ("ann", "bob"):
            (review / "screening" / stage).mkdir(parents=True, exist_ok=True)
            (review / "screening" / stage / f"{reviewer}.csv").write_text("record_id,decision,reason,note\n" + rows)
    advance(sitegen, review, "2026-01-03T00:00:00Z")
    assert sitegen("publish", review, "--out", tmp_path / "site", "--now", "2026-01-03T00:00:30Z")[0] == 0
    first = len((review / "ledger.jsonl").read_text().splitlines())
    advance(sitegen, review, "2026-01-03T00:01:00Z")
    forge(review, "phase", phase("screening", "extraction"), "2026-01-04T00:00:00Z")
    for axis, verdict in (("identity", "verified"), ("status", "current")):
        forge(review, "verification", {"record_id": "10.1000/voles", "axis": axis, "verdict": verdict,
                                       "refusal_grade": False}, "2026-01-05T00:00:00Z")
    forge(review, "phase", phase("extraction", "synthesis"), "2026-01-06T00:00:00Z")
    loaded, _ = load_review(review)

    blind = Settled(loaded).facts
    assert blind.verdicts == {} and blind.phase == ("protocol", None)
    names = sorted(name for name, value in vars(ReviewFacts).items() if isinstance(value, cached_property | property))
    facts = FactsThen(as_it_stood(loaded, first - 1))
    for events in range(first - 1, len(loaded.ledger) + 1):
        facts = facts.later(loaded, events)
        alone = FactsThen(as_it_stood(loaded, events))
        assert {name: getattr(facts, name) for name in names} == {name: getattr(alone, name) for name in names}
    assert facts.settled.end == first  # the cuts from the version's event on shared one derivation
    whole = ReviewFacts(loaded)
    assert {name: getattr(facts, name) for name in names} == {name: getattr(whole, name) for name in names}
    assert facts.unpublished and facts.phase[0] == "synthesis" and "10.1000/voles" in facts.verdicts
