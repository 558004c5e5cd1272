"""The living review's rules on the ledger and saved searches: what `sitegen check` reports about them.

The ledger's chain is intact, its events are in time order, and nothing in the
review depends on an event the ledger no longer has (the tail anchors); every
record came from a retrieval or import the ledger records; batches never
repeat a record and agree with the saved searches; snapshots the ledger cites
exist; the locked protocol was not edited; phases advance one at a time, each
when its gates held (judged again as the ledger stood then); each
run's manifest is the one its events name (`living.manifests`); published versions
are whole and in order (`living.versions`).
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from sitegen.errors import shown_argument
from sitegen.living.facts import FactsThen, as_it_stood
from sitegen.living.ledger import holds, verify_chain
from sitegen.living.manifests import manifest_problems
from sitegen.living.protocol import amendment_diff, only_version_changed
from sitegen.living.state import Gate, gates
from sitegen.living.versions import version_problems
from sitegen.records.citations import strategy_repeats
from sitegen.records.listing import listed
from sitegen.records.providers import label
from sitegen.review.folder import Review, protocol_hash
from sitegen.review.models import (
    PHASES,
    AmendmentPayload,
    BatchPayload,
    ImportPayload,
    LedgerAnchor,
    LedgerEvent,
    Payload,
    PhasePayload,
    ProtocolLockPayload,
    ReinstatementPayload,
    RetirementPayload,
    RetrievalPayload,
    VerificationPayload,
    parse_timestamp,
)
from sitegen.review.problems import Problem
from sitegen.review.transaction import JOURNAL
from sitegen.sources.query import QuerySyntaxError, UnsupportedQuery, native_said, provider_query
from sitegen.text import counted

LEDGER = "ledger.jsonl"
UNANCHORED = "ledger-unanchored"  # the one problem `sitegen ledger anchor` exists to resolve
ANCHOR_REMOVED = "anchor-removed"


def living_problems(review: Review) -> list[Problem]:
    if review.ledger_unread is not None:
        # Every check below judges files and events against the events before them: past a line of ledger.jsonl that
        # holds no event, each would find events missing (a lock, a run, a record's identification) that are not.
        # The line is the problem; the rest is judged once it is mended.
        return ledger_problems(review)
    return (ledger_problems(review) + _search_problems(review) + _batch_problems(review)
            + _protocol_problems(review) + _phase_problems(review) + _provenance_problems(review)
            + manifest_problems(review) + version_problems(review) + _retirement_problems(review))


def ledger_problems(review: Review) -> list[Problem]:
    """What `sitegen ledger verify` checks too: the chain, time order and the tail anchors."""
    lines = review.ledger_lines
    unread = review.ledger_unread
    # Every event after a line that holds none would seem moved: the chain is checked up to that line.
    events = review.ledger if unread is None else [event for event, line in zip(review.ledger, lines, strict=True)
                                                   if line < unread]
    problems = [Problem(LEDGER, lines[index], None, "ledger-chain", message) for index, message in verify_chain(events)]
    if unread is not None:
        return problems + [Problem(LEDGER, unread, None, "not-checked", f"the chain is checked only up to line {unread}, "
                                   "which holds no event that can be read (above): mend that line (or restore "
                                   "ledger.jsonl from Git), then check again")]
    # Each event is compared with the one directly above it, not with the latest time so far: one event whose
    # time was moved forward is then one problem (at the event after it), not one at every event below it.
    times = [parse_timestamp(event.ts) for event in review.ledger]
    for index, (above, event) in enumerate(pairwise(review.ledger), start=1):
        if times[index] < times[index - 1]:
            problems.append(Problem(LEDGER, lines[index], None, "ledger-time",
                                    f"event {event.seq} is dated {event.ts}, before the event above it "
                                    f"({above.ts}): events are appended in time order"))
    return problems + _anchor_problems(review)


def _anchor_problems(review: Review) -> list[Problem]:
    """Files naming an event the ledger no longer has: the ledger lost its tail (or was rewritten).

    The chain cannot show this: deleting the last lines leaves a shorter chain that is intact. So
    state.json names the ledger's last event and each saved search the last event of its latest run;
    once sitegen has written any of these anchors, a missing one was removed, not never written.
    While a committed write is pending (its journal exists) the files may disagree: that is reported
    on its own (finish it with `sitegen recover`) rather than as lost or added events.
    """
    if JOURNAL in review.interrupted:
        return []
    last = review.ledger[-1] if review.ledger else None
    where = review.ledger_lines[-1] if review.ledger_lines else None
    head = review.state.ledger_head
    anchored = head is not None or any(search.last_event for search in review.searches.values())
    problems = []
    if review.state_read and head is None and last is not None:
        problems.append(Problem("state.json", None, None, ANCHOR_REMOVED, "state.json names no `ledger_head`, yet "
                                "the saved searches name their last events, so sitegen wrote one: it was removed, "
                                "perhaps to hide events lost from the end of the ledger; restore state.json from Git")
                        if anchored else
                        Problem("state.json", None, None, UNANCHORED,
                                f"state.json does not name the ledger's last event (`ledger_head`), so events lost "
                                f"from the end of ledger.jsonl could not be noticed: if the ledger is whole (compare "
                                f"it with Git history), record where it ends with `sitegen ledger anchor {shown_argument(review.root)}`"))
    for monitor_id, search in review.searches.items():
        if anchored and search.run_count and search.last_event is None:
            problems.append(Problem(review.search_files[monitor_id].path, None, None, ANCHOR_REMOVED,
                                    "the search has run but names no `last_event`, though this review's other files "
                                    "are anchored: it was removed; restore the file from Git"))
    # An anchor at or past an event out of its place is not judged (`Review.judges_anchor`): the chain's own
    # problem names the line where events were deleted, added or moved.
    if head is not None and not review.judges_anchor(head.seq):
        head = None
    # (file, what it is, the event it names, where the file names it)
    dependants: list[tuple[str, str, LedgerAnchor, tuple[int | None, int | None]]] = []
    if head is not None:
        dependants.append(("state.json", "state.json (the ledger's last event when sitegen last wrote it)", head,
                           review.state_parsed and review.state_parsed.position(("ledger_head",)) or (None, None)))
    # With the ledger whole up to state.json's head, a saved search naming an event before it that the ledger does
    # not hold was edited itself: that file is at fault, not the ledger. (One naming an event past the head is
    # the ledger's: events lost from its end, and state.json restored from an older version with them.)
    whole = head is not None and holds(review.ledger, head)
    for monitor_id, search in review.searches.items():
        if search.last_event is None or holds(review.ledger, search.last_event):
            continue
        if not review.judges_anchor(search.last_event.seq):
            continue
        if whole and head is not None and search.last_event.seq <= head.seq:
            problems.append(Problem(review.search_files[monitor_id].path, *_search_at(review, monitor_id, "last_event"),
                                    "last-event",
                                    f"last_event names event {search.last_event.seq} ({search.last_event.hash[:12]}…), "
                                    "which the ledger (whole up to state.json's ledger_head) does not hold so: the "
                                    "file was edited or restored from an older version; restore it from Git"))
        else:
            path = review.search_files[monitor_id].path
            dependants.append((path, f"{path} (the last event of its run at {search.last_run})", search.last_event,
                               _search_at(review, monitor_id, "last_event")))
    ends = f"the ledger ends at event {last.seq}" if last else "the ledger is empty"
    failing = [dependant for dependant in dependants if not holds(review.ledger, dependant[2])]
    # Where the ledger holds an anchor's event, by its hash: wanted only when an anchor fails.
    seq_of = {event.hash: event.seq for event in review.ledger} if failing else {}
    for path, dependant, wanted, at in failing:
        if seq_of.get(wanted.hash) == wanted.seq:
            continue  # the ledger holds the event as the anchor names it, out of its place: the chain's problem
        if wanted.hash in seq_of:  # the ledger holds the event, at another place: the anchor's number was edited
            problems.append(Problem(path, *at, "anchor-edited",
                                    f"`{'ledger_head' if path == 'state.json' else 'last_event'}` names event "
                                    f"{wanted.seq} ({wanted.hash[:12]}…), but the ledger holds that "
                                    f"event as event {seq_of[wanted.hash]}: the anchor was edited by hand (sitegen "
                                    "writes it); restore the file from Git"))
            continue
        problems.append(Problem(LEDGER, where, None, "ledger-truncated",
                                f"{ends}, but {dependant} depends on event {wanted.seq} ({wanted.hash[:12]}…), "
                                "which it no longer has: events were deleted from the end or rewritten; "
                                "restore ledger.jsonl from Git"))
    if head is not None and last is not None and holds(review.ledger, head) and last.seq > head.seq:
        problems.append(Problem(LEDGER, review.ledger_lines[head.seq], None, "ledger-head",
                                f"the ledger goes on past event {head.seq}, the last one sitegen appended "
                                "(state.json's ledger_head): events were added by hand, or state.json was "
                                "restored from an older version"))
    return problems


def _search_problems(review: Review) -> list[Problem]:
    problems = []
    for monitor_id, search in review.searches.items():
        rel = review.search_files[monitor_id].path
        for index, strategy in enumerate(search.strategies):
            # A strategy that can never be sent would leave every later run incomplete. (A citation search's
            # grammar is checked as the file is read: see Strategy.)
            try:
                if strategy.method == "database":
                    provider_query(strategy.source, strategy.query, native=strategy.syntax == "native")
            except QuerySyntaxError as exc:
                # At the character the grammar stopped at, as the duplicate-strategy check below places its query.
                line, column = review.search_files[monitor_id].parsed.character_position(
                    ("strategies", index, "query"), exc.position - 1) or (None, None)
                said = native_said(str(exc), '"syntax": "native"')
                problems.append(Problem(rel, line, column, "query-syntax", f"strategies[{index}].query: {said}"))
            except UnsupportedQuery as exc:  # the query as a whole: at its line
                problems.append(Problem(rel, *_search_at(review, monitor_id, "strategies", index, "query"),
                                        "query-unsupported",
                                        f"strategies[{index}]: {label(strategy.source)} cannot run this query: {exc}"))
        for index, earlier, kind in strategy_repeats(search.strategies):
            field = "query" if kind == "strategy-repeated" else "label"
            line, column = _search_at(review, monitor_id, "strategies", index, field)
            said = (f"repeats strategies[{earlier}] (the same source and query, or citation search with the same mode "
                    "and seeds, however written)" if kind == "strategy-repeated" else
                    f"has the label {search.strategies[index].label!r} of strategies[{earlier}] of the same source: "
                    "give each its own")
            problems.append(Problem(rel, line, column, kind, f"strategies[{index}] {said}"))
        missing = review.lacking(search.seen_ids)
        if missing:
            problems.append(Problem(rel, *_seen_at(review, monitor_id, missing[0]), "unknown-record",
                                    f"seen_ids name record(s) not in records.jsonl: {listed(missing, 3)}"))
    return problems


def _search_at(review: Review, monitor_id: str, *loc: str | int) -> tuple[int | None, int | None]:
    """Where a saved search's file, as it was read, has `loc` (or the longest part of it there)."""
    return review.search_files[monitor_id].parsed.position(loc) or (None, None)


def _seen_at(review: Review, monitor_id: str, record_id: str | None = None) -> tuple[int | None, int | None]:
    """Where a saved search's file names `record_id` among its seen_ids (or, without one, its seen_ids)."""
    if record_id is None:
        return _search_at(review, monitor_id, "seen_ids")
    return _search_at(review, monitor_id, "seen_ids", review.searches[monitor_id].seen_ids.index(record_id))


def _unseen(record_ids: list[str], seen: set[str] | None) -> list[str]:
    """Those of `record_ids` not in a saved search's `seen` ids (None: no such search), in order: looked for one by
    one only when there are some (a run names up to 100,000, nearly always all seen)."""
    if seen is None or seen.issuperset(record_ids):
        return []
    return [record_id for record_id in record_ids if record_id not in seen]


def _batch_problems(review: Review) -> list[Problem]:
    """Batches and saved searches must agree with the ledger (for searches written before tail
    anchors existed, this is also what shows that a run's events were deleted)."""
    problems = []
    batched: dict[str, int] = {}
    last_run: dict[str, str] = {}
    runs: dict[str, set[str]] = {}
    seen = {monitor_id: set(search.seen_ids) for monitor_id, search in review.searches.items()}
    executed: dict[tuple, int] = {}  # (search, time, strategy) -> ledger line
    numbered = 0  # batches so far
    in_force: int | None = None  # the protocol version locked or amended last, so far
    for event, line, payload in zip(review.ledger, review.ledger_lines, review.payloads, strict=True):
        if isinstance(payload, RetrievalPayload):
            last_run[payload.monitor_id] = event.ts
            runs.setdefault(payload.monitor_id, set()).add(event.ts)
            key = (payload.monitor_id, parse_timestamp(event.ts), payload.source, payload.query, payload.label)
            if key in executed:
                problems.append(Problem(LEDGER, line, None, "run-repeated",
                                        f"saved search {payload.monitor_id!r} ran this strategy twice at {event.ts} "
                                        f"(ledger line {executed[key]}): two runs at one time would be counted as "
                                        "one and their records twice"))
            executed.setdefault(key, line)
            # What a run returned was reported (in its batch, or already in one): the search must know it as seen
            # from then on, whichever search batched it, or a later run would report it as new again.
            unseen = _unseen(payload.record_ids, seen.get(payload.monitor_id))
            if unseen:
                problems.append(Problem(review.search_files[payload.monitor_id].path,
                                        *_seen_at(review, payload.monitor_id), "seen-ids",
                                        f"seen_ids lacks record(s) its run at {event.ts} returned (ledger line "
                                        f"{line}): {', '.join(unseen[:3])}; seen_ids only grows"))
        if isinstance(payload, ImportPayload) and payload.seen in seen:
            unseen = _unseen(payload.record_ids, seen[payload.seen])
            if unseen:
                problems.append(Problem(review.search_files[payload.seen].path, *_seen_at(review, payload.seen), "seen-ids",
                                        f"seen_ids lacks record(s) the import at ledger line {line} added to it: "
                                        f"{', '.join(unseen[:3])}; seen_ids only grows"))
        if isinstance(payload, ProtocolLockPayload):  # a lock, or an amendment
            in_force = payload.version
        if not isinstance(payload, BatchPayload):
            continue
        problems += [Problem(LEDGER, line, None, code, message)
                     for code, message in _batch_event_problems(event, payload, numbered + 1, in_force)]
        numbered += 1
        twice = [i for i in payload.record_ids if i in batched]
        if twice:
            problems.append(Problem(LEDGER, line, None, "batched-twice",
                                    f"batch {payload.batch} repeats record(s) of an earlier batch (ledger line "
                                    f"{batched[twice[0]]}): {', '.join(twice[:3])}"))
        # Within one batch too: its ranking and its digest show every record once, and a record named twice would
        # be shown (and counted) twice, or its ranking refused.
        repeated = [i for i, count in Counter(payload.record_ids).items() if count > 1]
        if repeated:
            problems.append(Problem(LEDGER, line, None, "batched-twice",
                                    f"batch {payload.batch} names {', '.join(repeated[:3])} more than once: a "
                                    "batch lists each record it found once"))
        batched.update({i: line for i in payload.record_ids})
    for monitor_id, search in review.searches.items():
        rel = review.search_files[monitor_id].path
        if monitor_id in last_run and search.last_run != last_run[monitor_id]:
            problems.append(Problem(rel, *_search_at(review, monitor_id, "last_run"), "last-run",
                                    f"last_run is {search.last_run!r} but the ledger's latest run of this search is "
                                    f"{last_run[monitor_id]}: events were deleted, or the file was edited"))
        if monitor_id in runs and len(runs[monitor_id]) != search.run_count:  # the searches page says how often
            problems.append(Problem(rel, *_search_at(review, monitor_id, "run_count"), "run-count",
                                    f"run_count is {search.run_count} but the ledger records "
                                    f"{counted(len(runs[monitor_id]), 'run')} of this search: the file was edited, or events "
                                    "were deleted"))
        if search.run_count and monitor_id not in last_run:
            problems.append(Problem(rel, None, None, "last-run",
                                    f"the search has run {counted(search.run_count, 'time')} but the ledger has no retrieval "
                                    "event for it: events were deleted"))
    # Every id a search has reported went into a screening batch, or was already in one or imported:
    # a seen id in none of them means the batch event that held it was lost from the ledger.
    placed = {i for p in review.payloads if isinstance(p, BatchPayload | ImportPayload) for i in p.record_ids}
    for monitor_id, search in review.searches.items():
        unplaced = [i for i in search.seen_ids if i not in placed]
        if unplaced:
            problems.append(Problem(review.search_files[monitor_id].path, *_seen_at(review, monitor_id, unplaced[0]), "batch-missing",
                                    f"seen_ids name record(s) that no screening batch or import holds: "
                                    f"{listed(unplaced, 3)}; the batch event that held them was lost from "
                                    "the ledger (restore ledger.jsonl from Git)"))
    # A saved search the ledger has runs of must exist: deleting it would throw its seen_ids away.
    ran = {p.monitor_id: line for line, p in zip(review.ledger_lines, review.payloads, strict=True)
           if isinstance(p, RetrievalPayload | BatchPayload)}
    for monitor_id, line in ran.items():
        if monitor_id not in review.searches and f"searches/{monitor_id}.json" not in review.invalid_files:
            problems.append(Problem(LEDGER, line, None, "search-missing",
                                    f"the ledger records runs of saved search {monitor_id!r}, but "
                                    f"searches/{monitor_id}.json is missing: restore it from Git "
                                    "(its seen_ids are what keeps old records out of new batches)"))
    return problems


def _batch_event_problems(event: LedgerEvent, payload: BatchPayload, number: int, in_force: int | None) -> list[tuple[str, str]]:
    """(code, message) for a batch event `sitegen update` would not have written: it numbers batches 1, 2, 3… across
    the review, and records the protocol version in force, which decides the exclusion reasons its records may be
    given (one written by hand as an earlier version would let decisions give a reason an amendment retired)."""
    problems = []
    if payload.batch != number:
        problems.append(("batch-number", f"screening event {event.seq} records batch {payload.batch}, but the batches "
                                         f"before it make it batch {number}: batches are numbered 1, 2, 3… in order"))
    if in_force is not None and payload.protocol_version != in_force:
        problems.append(("batch-protocol", f"screening event {event.seq} records batch {payload.batch} as screened under "
                                           f"protocol version {payload.protocol_version}, but version {in_force} was in "
                                           "force then (the latest lock or amendment above it)"))
    return problems


def _retirement_problems(review: Review) -> list[Problem]:
    """A saved search is retired, run, and reinstated in that order (`sitegen monitor retire` and `reinstate` write
    no other trail), and a search retired keeps its file: reinstated, its seen_ids are what it has seen."""
    problems = []
    retired: dict[str, int] = {}  # monitor id -> the seq of the event that retired it
    for event, line, payload in zip(review.ledger, review.ledger_lines, review.payloads, strict=True):
        if isinstance(payload, RetirementPayload | ReinstatementPayload) and payload.monitor_id not in review.searches \
                and f"searches/{payload.monitor_id}.json" not in review.invalid_files:
            problems.append(Problem(LEDGER, line, None, "search-missing",
                                    f"{event.type} event {event.seq} names saved search {payload.monitor_id!r}, but "
                                    f"searches/{payload.monitor_id}.json is missing: restore it from Git (a retired "
                                    "search keeps its file, so its seen_ids stay if it is reinstated)"))
        if isinstance(payload, RetirementPayload):
            if payload.monitor_id in retired:
                problems.append(Problem(LEDGER, line, None, "retirement-trail",
                                        f"retirement event {event.seq} retires saved search {payload.monitor_id!r}, "
                                        f"retired already at event {retired[payload.monitor_id]}"))
            retired[payload.monitor_id] = event.seq
        elif isinstance(payload, ReinstatementPayload):
            if retired.pop(payload.monitor_id, None) is None:
                problems.append(Problem(LEDGER, line, None, "retirement-trail",
                                        f"reinstatement event {event.seq} reinstates saved search "
                                        f"{payload.monitor_id!r}, which was not retired"))
        elif isinstance(payload, RetrievalPayload) and payload.monitor_id in retired:
            problems.append(Problem(LEDGER, line, None, "retirement-trail",
                                    f"retrieval event {event.seq} runs saved search {payload.monitor_id!r}, retired "
                                    f"at event {retired[payload.monitor_id]} and not reinstated since"))
    return problems


def _trail_problems(before: tuple[LedgerEvent, ProtocolLockPayload] | None, event: LedgerEvent,
                    payload: ProtocolLockPayload) -> list[tuple[str, str]]:
    """(code, message) for a lock or amendment event out of its place in the protocol's trail: the protocol is
    locked once, then each amendment is the next version, with the text its hash records. `sitegen protocol`
    writes no other trail; one written by hand could change the criteria with no amendment (no reason, no diff)
    for the site to show."""
    problems = []
    amendment = isinstance(payload, AmendmentPayload)
    if before is None and amendment:
        problems.append(("amendment-unlocked", f"amendment event {event.seq} amends a protocol that was never locked "
                                               "(no `protocol_lock` event before it)"))
    elif before is not None and not amendment:
        problems.append(("protocol-relocked", f"event {event.seq} locks the protocol again (version {payload.version}), "
                                              f"but it was locked at event {before[0].seq}: a change to a locked "
                                              "protocol is recorded by `sitegen protocol amend`, with its reason and "
                                              "diff"))
    elif before is not None and payload.version <= before[1].version:
        problems.append(("amendment-version",
                         f"an amendment must raise the protocol version (it stays at {payload.version})"))
    elif before is not None and payload.version != before[1].version + 1:
        problems.append(("amendment-version", f"amendment event {event.seq} makes version {payload.version} of "
                                              f"version {before[1].version}: versions are raised one at a time "
                                              f"(version {before[1].version + 1} is missing)"))
    if amendment and before is not None:
        problems += _amendment_problems(before[1], event, payload)
    if payload.text is not None and protocol_hash(payload.text) != payload.sha256:
        problems.append(("protocol-text", f"{event.type} event {event.seq} records a protocol text whose SHA-256 is not "
                                          "the one it records: the text the site shows for this version is not the "
                                          "text that was locked"))
    return problems


def _amendment_problems(previous: ProtocolLockPayload, event: LedgerEvent,
                        payload: ProtocolLockPayload) -> list[tuple[str, str]]:
    """(code, message) for an amendment `sitegen protocol amend` would not have recorded after `previous`: one that
    changes nothing (or nothing but the version line), or whose diff is not the change it records."""
    unchanged = payload.sha256 == previous.sha256
    if unchanged or (payload.text is not None and only_version_changed(previous, payload.text)):
        return [("amendment-empty", f"amendment event {event.seq} records the protocol of version {previous.version} "
                                    f"{'unchanged' if unchanged else 'changed only in its version line'}: an "
                                    "amendment records a change to the protocol (`sitegen protocol amend` refuses "
                                    "one that changes nothing)")]
    if None not in (payload.text, payload.diff, previous.text) \
            and payload.diff != amendment_diff(previous, payload.text, payload.version):
        return [("amendment-diff", f"amendment event {event.seq} records a diff that is not the change from version "
                                   f"{previous.version}'s text to its own: the site would show a change other than "
                                   "the one made")]
    return []


def _protocol_problems(review: Review) -> list[Problem]:
    """Snapshots cited exist; amendments raise the version; the locked protocol.md is unchanged."""
    problems = []
    lock: tuple[LedgerEvent, ProtocolLockPayload] | None = None
    for event, line, payload in zip(review.ledger, review.ledger_lines, review.payloads, strict=True):
        if isinstance(payload, RetrievalPayload | VerificationPayload):
            unrecorded = [h for h in payload.snapshot_hashes if h not in review.snapshot_bodies]
            if unrecorded:
                problems.append(Problem(LEDGER, line, None, "missing-snapshot",
                                        f"{event.type} event {event.seq} cites snapshot(s) not in "
                                        f"snapshots/index.jsonl: {', '.join(unrecorded[:3])}"))
        if isinstance(payload, ProtocolLockPayload):
            problems += [Problem(LEDGER, line, None, code, message)
                         for code, message in _trail_problems(lock, event, payload)]
            lock = (event, payload)
    if lock is not None and review.protocol is not None:
        event, payload = lock
        if payload.sha256 != review.protocol.sha256 and _only_spacing(payload.text, review.protocol.text):
            # An editor trimming trailing spaces or the final newline changed no word: said so, the fix is a restore
            problems.append(Problem("protocol.md", _first_changed_line(payload.text, review), None, "protocol-locked",
                                    f"protocol.md differs from its locked text (ledger event {event.seq}) only in "
                                    "spaces or blank lines (trailing spaces, the final newline: an editor's setting?); "
                                    "restore them as locked (the ledger's event holds the text)"))
        elif payload.sha256 != review.protocol.sha256:
            problems.append(Problem("protocol.md", _first_changed_line(payload.text, review), None, "protocol-locked",
                                    f"protocol.md was edited after it was locked (ledger event {event.seq}); "
                                    "to keep the change, record it with `sitegen protocol amend "
                                    f"{shown_argument(review.root)} --at TIME --reason TEXT` (which raises `version` "
                                    "for you); else restore the locked text"))
        elif payload.version != review.protocol.meta.version:
            problems.append(Problem("protocol.md", 2, None, "protocol-locked",
                                    f"protocol version {review.protocol.meta.version} differs from the locked "
                                    f"version {payload.version}"))
    return problems


def _only_spacing(locked: str | None, text: str) -> bool:
    """Whether `text` is the `locked` text but for spaces, tabs and line breaks at the ends of its lines."""
    def lines(whole: str) -> list[str]:
        return [line.rstrip() for line in whole.rstrip().splitlines()]
    return locked is not None and lines(locked) == lines(text)


def _first_changed_line(locked: str | None, review: Review) -> int | None:
    """Where protocol.md first departs from its locked text, so the edit is annotated on its line."""
    if locked is None or review.protocol is None:
        return None
    current = review.protocol.text.replace("\r\n", "\n").split("\n")
    before = locked.replace("\r\n", "\n").split("\n")
    for number, (old, new) in enumerate(zip(before, current, strict=False), start=1):
        if old != new:
            return number
    return min(len(before), len(current)) + 1


def _phase_problems(review: Review) -> list[Problem]:
    """Each `phase` event is one step from the phase before it, taken when its gates held: judged again as
    `sitegen state advance` judged it then (`state.gates_then`), so that an event written by hand, its hash chain
    recomputed, moves no review past a gate."""
    problems = []
    previous = PHASES[0]
    judged = _gates_judged(review)
    judged_then: list[FactsThen] = []  # the facts of the review as the last phase event judged stood
    for index, (event, line, payload) in enumerate(zip(review.ledger, review.ledger_lines, review.payloads,
                                                       strict=True)):
        if not isinstance(payload, PhasePayload):
            continue
        if payload.from_phase != previous or PHASES.index(payload.to_phase) != PHASES.index(previous) + 1:
            problems.append(Problem(LEDGER, line, None, "phase-order",
                                    f"phase event moves from {payload.from_phase} to {payload.to_phase}, but the "
                                    f"review was in {previous}: phases advance one at a time"))
        elif judged and (failed := [gate for gate in _gates_then(review, index, payload.to_phase, judged_then)
                                    if not gate.ok]):
            problems.append(Problem(LEDGER, line, None, "phase-gate",
                                    f"phase event {event.seq} moves from {payload.from_phase} to {payload.to_phase}, "
                                    f"but as the review stood then {'; '.join(_failed(gate) for gate in failed)}: "
                                    "`sitegen state advance` moves a phase only once its gates hold, so the event "
                                    "was written by hand (restore ledger.jsonl and state.json from Git)"
                                    + ("" if all(gate.on_ledger for gate in failed) else
                                       ", or the decisions or evidence of the records named were changed since (give "
                                       "them what the gate asks for)")))
        previous = payload.to_phase
    return problems


def _gates_then(review: Review, events: int, target: str, last: list[FactsThen]) -> list[Gate]:
    """`state.gates_then`, on the facts of the `last` phase event judged where they are the same (`FactsThen.later`):
    the phase events of one review, advanced with only verdicts recorded between, pay for one derivation, not one
    each."""
    facts = last[0].later(review, events) if last else FactsThen(as_it_stood(review, events))
    last[:] = [facts]
    return gates(facts.review, facts, target)


def _failed(gate: Gate) -> str:
    """A gate that did not hold at an earlier event, as a problem says it: what it asks for, and which records hold
    it back (a gate on the ledger alone says only which command to run, advice that was for then)."""
    why = f" ({gate.detail})" if gate.detail and not gate.on_ledger else ""
    return f"{gate.check!r} did not hold{why}"


def _gates_judged(review: Review) -> bool:
    """Whether the files the gates read were read whole: a decision or evidence file that could not be (its own
    problem says why) would make a gate seem to fail that did not."""
    return (review.config is not None and not review.decisions_unread and not review.decisions_invalid
            and not any(path.startswith("evidence/") for path in review.invalid_files))


def _record_ids(payload: Payload) -> list[str]:
    """The records an event names, whatever its kind."""
    if isinstance(payload, RetrievalPayload | ImportPayload | BatchPayload):
        return payload.record_ids
    return [payload.record_id] if isinstance(payload, VerificationPayload) else []


def _provenance_problems(review: Review) -> list[Problem]:
    """Every record must have come from somewhere the ledger records (principle: counts are derived)."""
    named = set().union(*(payload.record_ids for payload in review.payloads
                          if isinstance(payload, RetrievalPayload | ImportPayload)))
    problems = []
    # Each event's records are looked up one event at a time only when some record an event names is lacking:
    # the events name 800,000 at 100,000 records, most of them again and again (each run's retrieval names every
    # record it returned), nearly always every one there; their union is looked up once.
    every = named.union(*(_record_ids(payload) for payload in review.payloads
                          if payload is not None and not isinstance(payload, RetrievalPayload | ImportPayload)))
    if review.records_loaded and every - review.records.keys() - review.invalid_record_ids:
        for event, line, payload in zip(review.ledger, review.ledger_lines, review.payloads, strict=True):
            if payload is not None:
                missing = review.lacking(_record_ids(payload))
                if missing:
                    problems.append(Problem(LEDGER, line, None, "unknown-record",
                                            f"{event.type} event names record(s) not in records.jsonl: "
                                            f"{', '.join(missing[:3])}"))
    unnamed = review.records.keys() - named  # in one pass: nearly always none
    orphans = [record_id for record_id in review.records if record_id in unnamed] if unnamed else []
    problems += [Problem("records.jsonl", review.record_lines[record_id], None, "no-provenance",
                         f"record {record_id!r} has no provenance: no retrieval or import event in ledger.jsonl "
                         "names it")
                 for record_id in orphans[:20]]
    if len(orphans) > 20:
        problems.append(Problem("records.jsonl", None, None, "no-provenance",
                                f"{counted(len(orphans) - 20, 'more record has', 'more records have')} no provenance on the ledger"))
    return problems
