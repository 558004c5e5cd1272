"""Protocol lock and amendments; phases that advance only through their gates; settable fields."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import EXAMPLE, review_of_ris, tree_bytes


@pytest.fixture
def example(tmp_path):
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    return review


def events(review, type_):
    return [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()
            if json.loads(line)["type"] == type_]


def test_the_example_shows_its_lock_and_amendment_trail(example):
    [lock] = events(example, "protocol_lock")
    [amendment] = events(example, "amendment")
    assert lock["payload"]["version"] == 1 and amendment["payload"]["version"] == 2
    assert "+    - Genetically modified rodents" in amendment["payload"]["diff"]
    batches = events(example, "screening")
    assert [b["payload"]["protocol_version"] for b in batches] == [1, 2]  # later batches use the new version


def test_an_edit_after_lock_is_caught_then_amended(sitegen, example):
    protocol = example / "protocol.md"
    protocol.write_text(protocol.read_text().replace("Rodents (rats or mice)", "Rodents (rats, mice or hamsters)"))
    code, out, _ = sitegen("check", example)
    assert code == 1 and "edited after it was locked" in out
    line = next(n for n, text in enumerate(protocol.read_text().split("\n"), 1) if "hamsters" in text)
    assert f"protocol.md:{line}: error:" in out  # annotated on the edited line
    code, out, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z",
                             "--reason", "Hamsters are rodents too")
    assert code == 0, err
    assert "protocol amended to version 3" in out
    assert "version: 3" in protocol.read_text()  # the version is raised in the file itself
    [_, amendment] = events(example, "amendment")
    assert amendment["payload"]["reason"] == "Hamsters are rodents too"
    assert "-    - Rodents (rats or mice)" in amendment["payload"]["diff"]
    assert sitegen("check", example)[0] == 0
    site = example.parent / "site"
    assert sitegen("build", example, "--out", site)[0] == 0
    page = (site / "protocol.html").read_text()
    assert "Hamsters are rodents too" in page and "Amendments" in page


@pytest.mark.parametrize("respaced", [lambda text: text.rstrip("\n"), lambda text: text.replace("\n", "  \n", 3),
                                      lambda text: text + "\n\n"], ids=["final newline", "trailing spaces", "blank"])
def test_a_locked_protocol_changed_only_in_spacing_says_so(sitegen, example, respaced):
    protocol = example / "protocol.md"
    protocol.write_text(respaced(protocol.read_text()))
    code, out, _ = sitegen("check", example)
    assert code == 1 and "only in spaces or blank lines" in out and "amend" not in out


@pytest.mark.parametrize("version_raised_by_hand", [False, True])
def test_an_amendment_keeps_the_protocols_line_ends(sitegen, example, version_raised_by_hand):
    # Written again with other line ends, every line of protocol.md would show as changed in Git
    protocol = example / "protocol.md"
    text = protocol.read_text().replace("Rodents (rats or mice)", "Rodents (rats, mice or hamsters)")
    if version_raised_by_hand:
        text = text.replace("version: 2", "version: 3", 1)
    protocol.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    written = protocol.read_bytes()
    code, out, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", "Hamsters")
    assert code == 0, err
    assert b"\r\n" in protocol.read_bytes() and b"\n" not in protocol.read_bytes().replace(b"\r\n", b"")
    assert b"version: 3\r\n" in protocol.read_bytes()
    if version_raised_by_hand:  # nothing for the amendment to write: the file is left as the reviewer wrote it
        assert protocol.read_bytes() == written
    assert sitegen("check", example)[0] == 0


def test_amend_refuses_nothing_changed_and_no_reason(sitegen, example):
    code, _, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", "none")
    assert code == 1 and "has not changed since version 2" in err
    code, _, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", " ")
    assert code == 2 and "Invalid value for '--reason': must be written in visible text of 1 to 2,000 characters" in err


@pytest.mark.parametrize(("reason", "message"), [
    ("bad\x01reason", "'--reason': holds the control character U+0001"), ("x" * 2001, "in visible text of 1 to 2,000"),
    ("\u200b", "in visible text of 1 to 2,000"),  # nothing a reader can see
])
def test_a_reason_no_reader_can_see_is_refused_before_it_is_recorded_for_good(sitegen, example, reason, message):
    # A reason is kept on the append-only ledger and shown on the site: it was recorded as given (a raw control
    # character went into protocol.html and the search index), which check then passed.
    protocol = example / "protocol.md"
    protocol.write_text(protocol.read_text().replace("Rodents (rats or mice)", "Rodents (rats, mice or hamsters)"))
    before = tree_bytes(example)
    code, _, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", reason)
    assert code == 2 and "Invalid value for '--reason'" in err and message in err and "nothing was written" in err
    assert tree_bytes(example) == before


def test_a_reason_an_earlier_sitegen_recorded_unchecked_stays_readable():
    # The ledger can never be rewritten: an empty or unprintable reason an earlier sitegen recorded must not make
    # every later command refuse the review (the check is on what is given now: see the test above).
    from sitegen.review.models import AmendmentPayload, ProtocolLockPayload

    for reason in ("", "bad\x01reason", "x" * 3000):
        assert ProtocolLockPayload(version=1, sha256="0" * 64, reason=reason).reason == reason
        assert AmendmentPayload(version=2, sha256="0" * 64, reason=reason).reason == reason


def test_an_amendment_retiring_a_reason_decisions_give_says_where_they_are(sitegen, example):
    # The amendment was recorded without a word: a reviewer who retired a code meaning to recode its decisions
    # learnt of them nowhere, as check accepts them.
    path = example / "screening" / "title-abstract" / "reviewer-a.csv"
    lines = path.read_text().splitlines()
    excluded = [n for n, line in enumerate(lines) if ",exclude," in line][:5]
    for n in excluded:
        lines[n] = lines[n].split(",")[0] + ",exclude,non-rodent,"
    path.write_text("\n".join(lines) + "\n")
    other = example / "screening" / "title-abstract" / "reviewer-b.csv"
    lines = other.read_text().splitlines()
    (single,) = [n for n, line in enumerate(lines) if ",exclude," in line][:1]
    lines[single] = lines[single].split(",")[0] + ",exclude,no-control-group,"
    other.write_text("\n".join(lines) + "\n")
    code, out, _ = sitegen("check", example)
    assert code == 0, out
    protocol = example / "protocol.md"
    protocol.write_text(protocol.read_text().replace("  - code: non-rodent\n    label: Non-rodent species\n", "")
                        .replace("  - code: no-control-group\n    label: No control group tested\n", ""))
    code, out, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", "Retired")
    assert code == 0, out + err
    assert "protocol amended to version 3" in out
    places = ", ".join(f"screening/title-abstract/reviewer-a.csv:{n + 1}" for n in excluded[:3])
    assert (f"note: 5 decisions still give the reason code 'non-rodent', which version 3 no longer defines (kept: "
            f"they were made under version 2 or earlier): {places} and 2 more") in err
    assert ("note: 1 decision still gives the reason code 'no-control-group', which version 3 no longer defines "
            f"(kept: it was made under version 2 or earlier): screening/title-abstract/reviewer-b.csv:{single + 1}"
            ) in err
    assert "error" not in err
    # A code retired that no decision gives needs no note.
    protocol.write_text(protocol.read_text().replace("  - code: not-primary-english\n    label: Not primary "
                                                     "literature in English\n", ""))
    code, out, err = sitegen("protocol", "amend", example, "--at", "2023-05-02T00:00:00Z", "--reason", "Again")
    assert code == 0 and "version 4" in out and "note:" not in err, out + err


def test_an_amendment_may_retire_a_reason_earlier_decisions_gave(sitegen, example):
    # Removing a reason code from the protocol was refused for good ("unknown-reason" on each decision that gave
    # it before): the decisions stay valid, and the site names the retired reason by its label.
    path = example / "screening" / "title-abstract" / "reviewer-a.csv"
    lines = path.read_text().splitlines()
    record_id = lines[1].split(",")[0]
    decided = [f"{record_id},exclude,non-rodent," if line.startswith(f"{record_id},") else line for line in lines]
    path.write_text("\n".join(decided) + "\n")
    other = example / "screening" / "title-abstract" / "reviewer-b.csv"
    other.write_text("\n".join(f"{record_id},exclude,non-rodent," if line.startswith(f"{record_id},") else line
                               for line in other.read_text().splitlines()) + "\n")
    adjudication = example / "screening" / "title-abstract" / "adjudication.csv"
    adjudication.write_text("\n".join(line for line in adjudication.read_text().splitlines()
                                      if not line.startswith(f"{record_id},")) + "\n")
    protocol = example / "protocol.md"
    text = protocol.read_text()
    protocol.write_text(text.replace("  - code: non-rodent\n    label: Non-rodent species\n", ""))
    assert "code: non-rodent" not in protocol.read_text()
    code, out, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", "Retired")
    assert code == 0, out + err
    code, out, _ = sitegen("check", example)
    assert code == 0, out
    from sitegen.workspace import open_review

    assert open_review(example).facts.reason_labels["non-rodent"] == "Non-rodent species"
    new = example / "screening" / "title-abstract" / "reviewer-c.csv"  # a code never defined is still refused
    new.write_text(f"record_id,decision,reason,note\n{record_id},exclude,no-such-reason,\n")
    code, out, _ = sitegen("check", example)
    assert code == 1 and "exclusion reason 'no-such-reason' is not defined" in out
    # A record that arrived after the amendment cannot be excluded for the reason it retired.
    ris = example.parent / "later.ris"
    ris.write_text("TY  - JOUR\nTI  - A later study of hamsters\nPY  - 2023\nDO  - 10.1234/later\nER  - \n")
    new.unlink()
    code, out, err = sitegen("import", example, ris, "--at", "2023-05-02T00:00:00Z")
    assert code == 0, out + err
    new.write_text("record_id,decision,reason,note\n10.1234/later,exclude,non-rodent,\n")
    code, out, _ = sitegen("check", example)
    assert code == 1 and "exclusion reason 'non-rodent' is not defined" in out


def test_an_amendment_may_retire_a_reason_decisions_on_imported_records_gave(sitegen, tmp_path):
    # Imported records form no batch, so they had no protocol version: a reason their decisions gave under the
    # version in force when they were imported was refused once an amendment retired it, so the amendment itself
    # was refused (and the decisions of a version already published would have had to be rewritten).
    ris = "TY  - JOUR\nTI  - A study of voles\nPY  - 2020\nDO  - 10.1000/early\nER  - \n"
    review, (code, _, _) = review_of_ris(tmp_path, ris)
    assert code == 0
    decisions = review / "screening" / "title-abstract" / "ann.csv"
    decisions.write_text("record_id,decision,reason,note\n10.1000/early,exclude,wrong-population,\n")
    protocol = review / "protocol.md"
    protocol.write_text(protocol.read_text().replace("  - code: wrong-population\n    label: Population not in scope\n",
                                                     ""))
    code, out, err = sitegen("protocol", "amend", review, "--at", "2026-01-04T00:00:00Z", "--reason", "Retired")
    assert code == 0, out + err
    code, out, _ = sitegen("check", review)
    assert code == 0, out
    # A record imported after the amendment cannot be excluded for the reason it retired.
    later = tmp_path / "later.ris"
    later.write_text("TY  - JOUR\nTI  - A study of moles\nPY  - 2022\nDO  - 10.1000/later\nER  - \n")
    assert sitegen("import", review, later, "--at", "2026-01-05T00:00:00Z")[0] == 0
    with decisions.open("a") as handle:
        handle.write("10.1000/later,exclude,wrong-population,\n")
    code, out, _ = sitegen("check", review)
    assert code == 1 and "ann.csv:3:" in out and "exclusion reason 'wrong-population' is not defined" in out


def test_lock_twice_is_refused(sitegen, example):
    code, _, err = sitegen("protocol", "lock", example, "--at", "2023-05-01T00:00:00Z")
    assert code == 1 and "already locked" in err


def test_screening_before_the_protocol_is_locked_is_caught(sitegen, tmp_path):
    review = tmp_path / "new"
    sitegen("init", review)
    # A decision for a record the review does not have is also reported, but the lock comes first.
    (review / "screening" / "title-abstract" / "ann.csv").write_text("record_id,decision,reason,note\n")
    (review / "screening" / "title-abstract" / "ann.csv").write_text(
        "record_id,decision,reason,note\n10.1000/x,include,,\n")
    code, out, _ = sitegen("check", review)
    assert code == 1 and "the protocol was never locked" in out


def test_full_text_for_a_batch_with_open_conflicts_is_caught(sitegen, example):
    code, out, _ = sitegen("screen", "conflicts", example, "--json")
    [conflict] = json.loads(out)
    batch = next(b for b in events(example, "screening") if conflict["record_id"] in b["payload"]["record_ids"])
    other = next(i for i in batch["payload"]["record_ids"] if i != conflict["record_id"])
    # pretend the batch's other record was included at title/abstract and assessed in full text
    with (example / "screening" / "title-abstract" / "adjudication.csv").open("a") as handle:
        handle.write(f"{other},include,,\n")
    with (example / "screening" / "full-text" / "reviewer-a.csv").open("a") as handle:
        handle.write(f"{other},include,,\n")
    code, out, _ = sitegen("check", example)
    assert code == 1 and "conflicts are not adjudicated yet" in out


def test_phase_gates_refuse_with_reasons(sitegen, example):
    before = tree_bytes(example)
    code, _, err = sitegen("state", "advance", example, "--at", "2023-05-01T00:00:00Z")
    assert code == 1
    assert "cannot advance from screening to extraction" in err
    assert "1 conflict" in err and "2 reports await full-text assessment" in err
    assert tree_bytes(example) == before


def test_a_refused_advance_names_the_records_that_hold_it_back(sitegen, example):
    """Not only how many: which records await a decision or an adjudication, so the reviewer knows what to do."""
    from sitegen.workspace import open_review

    facts = open_review(example).facts
    [conflict] = facts.conflicts
    unassessed = sorted(rid for rid, where in facts.standings.items()
                        if where.kind == "awaiting" and where.stage == "full-text")
    code, _, err = sitegen("state", "advance", example, "--at", "2023-05-01T00:00:00Z")
    assert code == 1
    # Each count in the number it needs: "1 record awaits", "2 reports await", never "1 record(s)".
    assert f"1 record awaits screening or adjudication ({conflict.record_id})" in err, err
    assert f"2 reports await full-text assessment ({', '.join(unassessed)})" in err, err
    assert f"1 conflict ({conflict.record_id} at title-abstract)" in err, err


def test_state_show_says_how_to_advance_once_every_gate_holds(sitegen, example):
    """A list of ticked gates alone leaves the reviewer to guess the next step: it names the command, with the
    folder; while a gate fails it is not offered."""
    from sitegen.workspace import open_review

    code, out, _ = sitegen("state", "show", example)
    assert code == 0 and "[ ] no conflict awaits adjudication" in out and "state advance" not in out
    facts = open_review(example).facts
    [conflict] = facts.conflicts
    unassessed = sorted(rid for rid, where in facts.standings.items()
                        if where.kind == "awaiting" and where.stage == "full-text")
    with (example / "screening" / "title-abstract" / "adjudication.csv").open("a") as handle:
        handle.write(f"{conflict.record_id},exclude,,\n")
    with (example / "screening" / "full-text" / "reviewer-a.csv").open("a") as handle:
        handle.writelines(f"{record_id},include,,\n" for record_id in unassessed)
    code, out, _ = sitegen("state", "show", example)
    assert code == 0 and "[ ]" not in out, out
    assert f"every gate holds: run `sitegen state advance {example} --at TIME` to move to extraction" in out


def test_a_new_review_advances_only_after_its_gates(sitegen, tmp_path):
    review = tmp_path / "new"
    sitegen("init", review)
    code, _, err = sitegen("state", "advance", review, "--at", "2026-01-01T00:00:00Z")
    # The command to run names the folder, ready to paste.
    assert code == 1 and f"the protocol is locked: run `sitegen protocol lock {review} --at TIME`" in err
    assert sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")[0] == 0
    code, out, _ = sitegen("state", "advance", review, "--at", "2026-01-01T00:00:00Z")
    assert code == 0 and "protocol -> searching" in out
    code, _, err = sitegen("state", "advance", review, "--at", "2026-01-02T00:00:00Z")
    assert code == 1 and "a search has run" in err
    code, out, _ = sitegen("state", "show", review, "--json")
    shown = json.loads(out)
    assert shown["phase"] == "searching" and shown["next_phase"] == "screening"


def test_only_whitelisted_fields_can_be_set(sitegen, example):
    # A field that cannot be set, or a value its field refuses, is a usage error (exit 2) naming FIELD or VALUE.
    code, out, _ = sitegen("state", "set", example, "max_kept", "10")
    assert code == 0 and json.loads((example / "state.json").read_text())["max_kept"] == 10
    code, _, err = sitegen("state", "set", example, "phase", "published")
    assert code == 2 and "Invalid value for 'FIELD'" in err and "advances only through `sitegen state advance`" in err
    code, _, err = sitegen("state", "set", example, "title", "x")
    assert code == 2 and "Invalid value for 'FIELD'" in err and "cannot be set directly" in err
    code, _, err = sitegen("state", "set", example, "max_kept", "0")
    assert code == 2 and "'0' is no max_kept" in err
    code, _, err = sitegen("state", "set", example, "max_kept", "9" * 23)  # a whole number, only too large
    assert code == 2 and "less than or equal to 10000" in err
    # a value starting with '-' is the value, not an option: a negative number (refused as any sign is, "-0" too,
    # which was written as 0), or a note written as a list item
    for field, signed in [("max_kept", "-1"), ("max_kept", "-" + "9" * 23), ("keep_from", "-0"),
                          ("review_from", "-0"), ("max_kept", "+5")]:
        before = (example / "state.json").read_bytes()
        code, _, err = sitegen("state", "set", example, field, signed)
        assert code == 2 and f"'{signed}' is no {field}: write a whole number from" in err and "no sign" in err, err
        assert (example / "state.json").read_bytes() == before
    code, out, err = sitegen("state", "set", example, "status_note", "- paused over the holidays")
    assert code == 0 and out == "status_note: - paused over the holidays\n", out + err
    # a note a reader cannot see is refused, and one holding an invisible character that makes text display otherwise
    # than it is (nothing is written); one of nothing but spaces clears the note
    code, _, err = sitegen("state", "set", example, "status_note", "\u00ad")
    assert code == 2 and "is no status_note: holds no visible text" in err, err
    before = (example / "state.json").read_bytes()
    code, _, err = sitegen("state", "set", example, "status_note", "paused \u202euntil May\u202c")
    assert code == 2 and "is no status_note: holds U+202E (RIGHT-TO-LEFT OVERRIDE) at character 8" in err, err
    assert (example / "state.json").read_bytes() == before
    code, out, err = sitegen("state", "set", example, "status_note", "   ")
    assert code == 0 and out == "status_note: (none)\n", out + err
    assert sitegen("check", example)[0] == 0


@pytest.mark.parametrize("words", [("status_note", "--at"), ("status_note", "--at=2026-01-01T00:00:00Z"),
                                   ("status_note", "--json"), ("--at", "x")])
def test_a_word_written_as_an_option_is_refused_as_a_value(sitegen, example, words):
    """`state set DIR status_note --at` stored "--at" as the note, shown on the home page: an option misplaced or
    mistyped is refused (exit 2, nothing written), saying how to give it as the value: after `--`, wherever that is."""
    before = (example / "state.json").read_bytes()
    code, _, err = sitegen("state", "set", example, *words)
    assert code == 2 and f"{words[-1] if words[0] == 'status_note' else words[0]} looks like an option" in err, err
    assert "put -- before it" in err and (example / "state.json").read_bytes() == before
    code, out, err = sitegen("state", "set", example, "status_note", "--", "--at")
    assert code == 0 and out == "status_note: --at\n", out + err
    code, out, err = sitegen("state", "set", "--", example, "status_note", "--json")
    assert code == 0 and out == "status_note: --json\n", out + err


@pytest.mark.parametrize("value", [" 5 ", "+5", "5.0", "1_000", "1e3", "\uff15", "0x10", ""])
def test_max_kept_is_written_in_ascii_digits_alone(sitegen, example, value):
    """A number is read as the review's files write one: digits alone. Read by pydantic's lax rules a text
    would give 1000 for "1_000" and 5 for "5.0" or " 5 ", values nobody could tell they had set."""
    before = tree_bytes(example)
    code, _, err = sitegen("state", "set", example, "max_kept", value)
    assert code == 2 and f"{value!r} is no max_kept: write a whole number from 1 to 10,000" in err, err
    assert tree_bytes(example) == before


def test_a_long_refused_value_is_quoted_in_part(sitegen, example):
    code, _, err = sitegen("state", "set", example, "status_note", "a" * 10_240)
    assert code == 2 and "… (10,240 characters) is no status_note: String should have at most 500" in err
    assert len(err) < 1000


def test_a_forged_phase_jump_is_caught(sitegen, example):
    from sitegen.living.ledger import event_hash
    from sitegen.review.write import canonical_json

    lines = (example / "ledger.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    payload = {"from_phase": "screening", "to_phase": "published", "checks": []}
    event = {"seq": last["seq"] + 1, "type": "phase", "ts": "2024-01-01T00:00:00Z", "payload": payload,
             "prev": last["hash"], "hash": event_hash(last["seq"] + 1, "phase", "2024-01-01T00:00:00Z", payload,
                                                      last["hash"])}
    (example / "ledger.jsonl").write_text("\n".join(lines + [canonical_json(event)]) + "\n")
    code, out, _ = sitegen("check", example)
    assert code == 1 and "phases advance one at a time" in out


def test_amend_raises_a_commented_version_line(sitegen, example):
    protocol = example / "protocol.md"
    text = protocol.read_text().replace("version: 2", "version: 2  # as locked", 1)
    protocol.write_text(text.replace("Rodents (rats or mice)", "Rodents (rats, mice or voles)"))
    code, out, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", "voles")
    assert code == 0, err
    assert "\nversion: 3  # as locked\n" in protocol.read_text()  # the reviewer's comment stays
    assert sitegen("check", example)[0] == 0


@pytest.mark.parametrize("edit", ["version: 3", "version: 3  # amended", "version: 4"])
def test_an_amendment_of_nothing_but_the_version_is_refused(sitegen, example, edit):
    """A new version number over the same protocol amends nothing: refused at the version line, saying how to
    undo it, and nothing is written."""
    protocol = example / "protocol.md"
    protocol.write_text(protocol.read_text().replace("version: 2", edit, 1))
    before = tree_bytes(example)
    code, out, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", "none")
    assert code == 1, out + err
    assert "protocol.md:2:1: error: protocol.md has not changed since version 2 but for its `version` line: set it " \
           "back to `version: 2`" in out + err
    assert tree_bytes(example) == before
    protocol.write_text(protocol.read_text().replace(edit, "version: 2", 1))
    assert sitegen("check", example)[0] == 0


def test_a_time_far_in_the_future_is_refused(sitegen, example):
    before = tree_bytes(example)
    code, _, err = sitegen("state", "set", example, "max_kept", "5")
    assert code == 0
    protocol = example / "protocol.md"
    protocol.write_text(protocol.read_text().replace("Rodents (rats or mice)", "Rodents"))
    code, _, err = sitegen("protocol", "amend", example, "--at", "2230-04-20T00:00:00Z", "--reason", "typo")
    assert code == 2 and "Invalid value for '--at'" in err and "is in the future" in err
    assert tree_bytes(example)["ledger.jsonl"] == before["ledger.jsonl"]


def test_every_later_phase_asks_for_what_the_earlier_ones_did(example):
    """What held when a review entered a phase can stop holding as it lives on (a new batch arrives, an
    included study loses its evidence): publishing asks for all of it again."""
    from sitegen.living.state import gates
    from sitegen.workspace import open_review

    workspace = open_review(example)
    published = {gate.check: gate.ok for gate in gates(workspace.review, workspace.facts, "published")}
    assert published["every record is screened at title and abstract"] is False  # the example's open batch
    assert "every included study has extracted evidence" in published
    assert "the protocol is locked" in published and published["the protocol is locked"]


@pytest.mark.parametrize("version", ["2", '"1"', "1.0", "0"])
@pytest.mark.parametrize("command", [("show",), ("set", "max_kept", "5"), ("advance", "--at", "2023-05-01T00:00:00Z")])
def test_every_state_command_refuses_a_state_json_of_another_schema_version_with_status_4(sitegen, example, version,
                                                                                         command):
    """state.json of a schema_version this sitegen does not read is refused (exit 4, its own status), never
    read as version 1 and never rewritten: `state set` would otherwise write it back as version 1."""
    state = json.loads((example / "state.json").read_text())
    (example / "state.json").write_text(json.dumps(state, indent=2).replace(
        '"schema_version": 1', f'"schema_version": {version}') + "\n")
    before = tree_bytes(example)
    code, out, err = sitegen("state", command[0], example, *command[1:])
    assert code == 4, out + err
    assert "state.json:" in out + err and "is not supported" in out + err
    assert tree_bytes(example) == before


def test_the_synthesis_and_publishing_gates_name_the_studies_that_hold_them_back(example):
    """Entering synthesis needs evidence for every included study; publishing needs identity and status verdicts
    for each and no refusal-grade verdict (a retraction, say) standing: each failing gate names the studies."""
    from sitegen.living.facts import LatestVerdict
    from sitegen.living.state import gates
    from sitegen.workspace import open_review

    workspace = open_review(example)
    review, facts = workspace.review, workspace.facts
    with_evidence = {item.evidence.record_id for item in review.evidence}
    without = [rid for rid in facts.included if rid not in with_evidence]
    [synthesis] = [g for g in gates(review, facts, "synthesis") if "extracted evidence" in g.check]
    assert not synthesis.ok and synthesis.detail.startswith(f"no evidence file for {without[0]}")
    assert len(without) > 3 and synthesis.detail.endswith(f" and {len(without) - 3} more")  # how many, not "…"

    unverified, retracted = facts.included[:2]
    status = facts.verdicts[retracted]["status"]
    verdicts = {**facts.verdicts, retracted: {**facts.verdicts[retracted], "status": LatestVerdict(
        status.at, status.payload.model_copy(update={"verdict": "retracted", "refusal_grade": True}))}}
    del verdicts[unverified]
    facts.__dict__["verdicts"] = verdicts  # the latest verdicts as `sitegen verify` would have left them
    published = {g.check.split(" (")[0]: g for g in gates(review, facts, "published")}
    checked = published["every included study has been checked for identity and status, and its evidence as it stands"]
    assert not checked.ok and checked.detail == f"no verdict for {unverified}"
    refused = published["no included study has a refusal-grade verdict"]
    assert not refused.ok and refused.detail == f"refusal grade: {retracted}"


@pytest.mark.parametrize("field", ["schema_version", "ledger_head"])
def test_a_state_json_field_outside_the_whitelist_is_not_settable(sitegen, example, field):
    """Only max_kept, status_note and seed 002's thresholds are settable: widening the whitelist is a decision about
    who may change what, so the version and the ledger anchor sitegen writes itself are refused as a usage error,
    nothing written."""
    from sitegen.review.models import SETTABLE_FIELDS

    assert SETTABLE_FIELDS == ("max_kept", "status_note", "keep_from", "review_from")
    before = tree_bytes(example)
    code, _, err = sitegen("state", "set", example, field, "2")
    assert code == 2 and "Invalid value for 'FIELD'" in err and "cannot be set directly" in err
    assert tree_bytes(example) == before


def test_a_published_review_advances_no_further(example):
    from sitegen.errors import SitegenError
    from sitegen.living.state import advance
    from sitegen.workspace import open_review

    workspace = open_review(example)
    workspace.facts.__dict__["phase"] = ("published", "2023-04-10T00:00:00Z")
    before = tree_bytes(example)
    with pytest.raises(SitegenError, match="the review is published"):
        advance(workspace.review, workspace.facts, "2023-05-01T00:00:00Z")
    assert tree_bytes(example) == before


def test_a_phase_written_into_state_json_by_hand_is_refused_not_read(sitegen, example):
    """The phase lives on the ledger and moves only through `state advance`: state.json holding one (a hand edit
    to skip the gates) is an unknown field, named with its line, and no state command runs on it."""
    state = json.loads((example / "state.json").read_text())
    (example / "state.json").write_text(json.dumps({**state, "phase": "published"}, indent=2) + "\n")
    before = tree_bytes(example)
    code, out, err = sitegen("state", "advance", example, "--at", "2023-05-01T00:00:00Z")
    assert code == 1 and "state.json:" in out + err and "phase: unknown field" in out + err
    assert tree_bytes(example) == before
    code, out, _ = sitegen("check", example)
    assert code == 1 and "phase: unknown field" in out


def test_a_version_locked_before_the_invisible_character_rule_is_read_as_it_was_locked(sitegen, example):
    # An earlier sitegen locked version 3, whose new reason's label holds a direction override (a reviewer's text
    # was only `printable` then). protocol.md now refuses it, but the ledger cannot be rewritten: version 3 is read
    # under the rule it was locked under, so the reason it defined, which version 4 retired, stays known.
    from sitegen.living.facts import ReviewFacts
    from sitegen.living.imports import import_files
    from sitegen.living.ledger import append
    from sitegen.living.protocol import amendment_diff
    from sitegen.review.folder import exclusion_reasons, load_review, locked_reasons, protocol_hash
    from sitegen.review.models import AmendmentPayload
    from sitegen.review.transaction import Transaction
    from sitegen.screening.digest import Relevance

    protocol = example / "protocol.md"
    current = protocol.read_text()
    label = "Hamsters \u202eylno\u202c"
    reason = "  - code: no-control-group\n"
    version_3 = current.replace("version: 2", "version: 3").replace(
        reason, f"  - code: hamster\n    label: {label}\n{reason}")
    review, _ = load_review(example)
    version_2 = [payload for payload in review.payloads if isinstance(payload, AmendmentPayload)][-1]
    transaction = Transaction(example)
    append(transaction, review, "2023-05-01T00:00:00Z", [AmendmentPayload(
        version=3, sha256=protocol_hash(version_3), reason="Hamsters", text=version_3,
        diff=amendment_diff(version_2, version_3, 3))])  # as that sitegen wrote it
    transaction.commit()
    ris = example.parent / "later.ris"  # a record screened under version 3, excluded for the reason it defined
    ris.write_text("TY  - JOUR\nTI  - A later study of hamsters\nPY  - 2023\nDO  - 10.1234/later\nER  - \n")
    import_files(load_review(example)[0], [ris], "2023-05-01T12:00:00Z")  # as sitegen imported it then
    (example / "screening" / "title-abstract" / "reviewer-c.csv").write_text(
        "record_id,decision,reason,note\n10.1234/later,exclude,hamster,\n")
    protocol.write_text(current.replace("version: 2", "version: 4"))  # the reason retired, its label with it
    code, out, err = sitegen("protocol", "amend", example, "--at", "2023-05-02T00:00:00Z", "--reason", "Retired")
    assert code == 0, out + err
    assert "still gives the reason code 'hamster', which version 4 no longer defines" in err
    code, out, _ = sitegen("check", example)
    assert code == 0, out
    review, _ = load_review(example)
    assert locked_reasons(review)[3]["hamster"] == label and exclusion_reasons(review)["hamster"] == label
    version, meta = Relevance(review, ReviewFacts(review).screening).protocol(3)
    assert version == 3 and "hamster" in {item.code for item in meta.exclusion_reasons}
    # protocol.md itself is held to the rule: the same label there is refused.
    protocol.write_text(version_3.replace("version: 3", "version: 5"))
    code, out, _ = sitegen("check", example)
    assert code == 1 and "U+202E (RIGHT-TO-LEFT OVERRIDE)" in out


# --------------------------------------------------------------------------- seed 002's thresholds in state.json


def test_the_thresholds_are_set_and_shown_as_in_force(sitegen, example):
    """keep_from and review_from (seed 002's "the calling agent may override") are set as max_kept is; a state.json
    without them shows seed 002's 70 and 50, and a command writing it for another field adds neither."""
    before = (example / "state.json").read_bytes()
    assert b"keep_from" not in before and b"review_from" not in before
    code, out, _ = sitegen("state", "show", example, "--json")
    assert code == 0 and json.loads(out)["settable"] == {"max_kept": 25, "status_note": None, "keep_from": 70,
                                                      "review_from": 50}
    code, _, _ = sitegen("state", "set", example, "max_kept", "25")  # the value it holds: the file is as it was
    assert code == 0 and (example / "state.json").read_bytes() == before
    code, out, err = sitegen("state", "set", example, "keep_from", "60")
    assert (code, out) == (0, "keep_from: 60\n"), err
    code, out, err = sitegen("state", "set", example, "review_from", "0")
    assert (code, out) == (0, "review_from: 0\n"), err
    state = json.loads((example / "state.json").read_text())
    assert (state["keep_from"], state["review_from"]) == (60, 0)
    code, out, _ = sitegen("state", "show", example)
    assert code == 0 and "keep_from: 60\nreview_from: 0\n" in out
    assert sitegen("check", example)[0] == 0


@pytest.mark.parametrize(("field", "value", "said"), [
    ("keep_from", "101", "'101' is no keep_from: Input should be less than or equal to 100"),
    ("review_from", "-1", "'-1' is no review_from: write a whole number from 0 to 100 in the digits 0-9 alone (no sign"),
    ("review_from", "-0", "'-0' is no review_from: write a whole number from 0 to 100 in the digits 0-9 alone (no sign"),
    ("keep_from", "6.5", "'6.5' is no keep_from: write a whole number from 0 to 100 in the digits 0-9 alone"),
    ("review_from", " 40", "' 40' is no review_from: write a whole number from 0 to 100"),
    ("keep_from", "", "'' is no keep_from: write a whole number from 0 to 100"),
])
def test_a_threshold_that_is_no_score_is_refused_naming_it(sitegen, example, field, value, said):
    before = tree_bytes(example)
    code, _, err = sitegen("state", "set", example, field, value)
    assert code == 2 and "Invalid value for 'VALUE'" in err and said in err, err
    assert tree_bytes(example) == before


@pytest.mark.parametrize(("field", "value", "said"), [
    ("keep_from", "40", "keep_from 40 refused: review_from 50 (seed 002's default: state.json sets none) is above "
                        "keep_from 40: review_from must be at most keep_from; lower review_from first"),
    ("review_from", "71", "review_from 71 refused: review_from 71 is above keep_from 70 (seed 002's default: "
                          "state.json sets none): review_from must be at most keep_from; raise keep_from first"),
])
def test_thresholds_out_of_order_are_refused_naming_both_and_nothing_is_written(sitegen, example, field, value, said):
    # Right in itself, wrong beside the review's other threshold: a refusal of the review's (exit 1), not of the
    # command line.
    before = tree_bytes(example)
    code, _, err = sitegen("state", "set", example, field, value)
    assert code == 1 and f"state.json: {said}; nothing was written" in err, err
    assert tree_bytes(example) == before
    # equal thresholds stand: no score is then REVIEW, every one from them is KEEP
    assert sitegen("state", "set", example, field, "70" if field == "review_from" else "50")[0] == 0


@pytest.mark.parametrize(("fields", "line", "said"), [
    ('"review_from": 80', 4, "review_from: review_from 80 is above keep_from 70 (seed 002's default"),
    ('"keep_from": 30', 4, "keep_from: review_from 50 (seed 002's default: state.json sets none) is above keep_from 30"),
    ('"keep_from": 60,\n  "review_from": 61', 5, "review_from: review_from 61 is above keep_from 60"),
    ('"keep_from": 101', 4, "keep_from: Input should be less than or equal to 100"),
    ('"review_from": 49.5', 4, "review_from: Input should be a valid integer"),
    ('"keep_from": true', 4, "keep_from: Input should be a valid integer"),
])
def test_thresholds_edited_by_hand_are_checked_at_their_line(sitegen, example, fields, line, said):
    (example / "state.json").write_text('{\n  "schema_version": 1,\n  "max_kept": 25,\n  ' + fields + "\n}\n")
    code, out, err = sitegen("check", example)
    assert code == 1 and f"state.json:{line}:3: error: {said}" in out + err, out + err
    before = tree_bytes(example)
    code, _, err = sitegen("state", "set", example, "max_kept", "30")  # nothing is written on a review refused
    assert code == 1 and tree_bytes(example) == before
