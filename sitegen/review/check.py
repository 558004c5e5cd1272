"""Rules that span files: what `sitegen check` adds on top of parsing each file.

`inspect_review` is the one entry point: it loads the folder and returns the
review with every problem found, sorted by file and line. It never writes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sitegen.errors import ReviewInvalid
from sitegen.living.ledger import verify_chain
from sitegen.review.folder import ADJUDICATION, Review, load_review
from sitegen.review.models import (
    PHASES,
    BatchPayload,
    ImportPayload,
    LedgerEvent,
    PhasePayload,
    ProtocolLockPayload,
    RetrievalPayload,
    parse_timestamp,
)
from sitegen.review.problems import Problem
from sitegen.review.transaction import recover, review_lock
from sitegen.screening.outcomes import review_outcomes
from sitegen.sources.query import QuerySyntaxError, parse_query


def inspect_review(root: Path) -> tuple[Review | None, list[Problem]]:
    review, problems = load_review(root)
    if review is not None:
        problems += check_review(review)
    return review, sorted(set(problems), key=_order)


def load_valid_review(root: Path) -> Review:
    """The review, or ReviewInvalid listing every problem (nothing is ever half-used)."""
    review, problems = inspect_review(root)
    if problems or review is None:
        raise ReviewInvalid(problems)
    return review


@contextmanager
def writable_review(root: Path) -> Iterator[Review]:
    """The valid review for a command that writes it: held under the review lock, with any
    interrupted write finished first."""
    with review_lock(root):
        recover(root)
        yield load_valid_review(root)


def _order(problem: Problem) -> tuple:
    return (problem.path, problem.line or 0, problem.column or 0, problem.code, problem.message)


def check_review(review: Review) -> list[Problem]:
    return (_check_decisions(review) + _check_stages(review) + _check_gates(review) + _check_evidence(review)
            + _check_searches(review) + _check_ledger(review))


def _check_gates(review: Review) -> list[Problem]:
    """The phase rules a pull request must not break (seed 003's gates, checked on the files)."""
    problems = []
    locked = any(isinstance(p, ProtocolLockPayload) for p in review.payloads)
    if review.decisions and not locked:
        first = min(review.decisions, key=lambda row: (row.path, row.line))
        problems.append(Problem(first.path, first.line, None, "protocol-unlocked",
                                "screening decisions exist but the protocol was never locked; lock it first "
                                "(`sitegen protocol lock`) so every decision is made under a fixed protocol"))
    # No full-text stage for a batch whose title/abstract screening still has conflicts.
    screened = review_outcomes(review, "title-abstract")
    unsettled = {record_id for payload in review.payloads if isinstance(payload, BatchPayload)
                 if any(screened.get(i) and screened[i].decision == "conflict" for i in payload.record_ids)
                 for record_id in payload.record_ids}
    for row in review.decisions:
        if row.stage == "full-text" and row.decision.record_id in unsettled:
            problems.append(Problem(row.path, row.line, row.columns.get("record_id"), "batch-unsettled",
                                    f"record {row.decision.record_id!r} is in a batch whose title/abstract "
                                    "conflicts are not adjudicated yet; settle them before full-text screening"))
    previous = "protocol"
    for line, payload in zip(review.ledger_lines, review.payloads, strict=True):
        if isinstance(payload, PhasePayload):
            if payload.from_phase != previous or PHASES.index(payload.to_phase) != PHASES.index(previous) + 1:
                problems.append(Problem("ledger.jsonl", line, None, "phase-order",
                                        f"phase event moves from {payload.from_phase} to {payload.to_phase}, but the "
                                        f"review was in {previous}: phases advance one at a time"))
            previous = payload.to_phase
    return problems


def normalise_whitespace(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def _check_decisions(review: Review) -> list[Problem]:
    problems = []
    reasons = {r.code for r in review.protocol.meta.exclusion_reasons} if review.protocol else set()
    first_seen: dict[tuple[str, str, str], int] = {}
    for row in review.decisions:
        decision = row.decision
        column = row.columns.get
        if decision.record_id not in review.records and review.records_loaded:
            problems.append(Problem(row.path, row.line, column("record_id"), "unknown-record",
                                    f"record {decision.record_id!r} is not in records.jsonl"))
        key = (row.stage, row.reviewer, decision.record_id)
        if key in first_seen:
            who = "the adjudicator" if row.reviewer == ADJUDICATION else f"reviewer {row.reviewer!r}"
            problems.append(Problem(row.path, row.line, column("record_id"), "duplicate-decision",
                                    f"{who} already decided {decision.record_id!r} at this stage "
                                    f"on line {first_seen[key]}"))
        else:
            first_seen[key] = row.line
        if decision.reason and decision.decision != "exclude":
            problems.append(Problem(row.path, row.line, column("reason"), "reason-not-exclusion",
                                    f"a reason code goes with 'exclude' only, not {decision.decision!r} "
                                    "(use the note column for remarks)"))
        elif decision.reason and decision.reason not in reasons:
            known = ", ".join(sorted(reasons)) or "none defined"
            problems.append(Problem(row.path, row.line, column("reason"), "unknown-reason",
                                    f"exclusion reason {decision.reason!r} is not defined in protocol.md "
                                    f"(defined: {known})"))
        elif decision.decision == "exclude" and row.stage == "full-text" and not decision.reason:
            problems.append(Problem(row.path, row.line, column("reason"), "reason-required",
                                    "an exclusion at full text needs a reason code from the protocol"))
    return problems


def _check_stages(review: Review) -> list[Problem]:
    """A record reaches full text only when title/abstract screening included it."""
    screened = review_outcomes(review, "title-abstract")
    problems = []
    for row in review.decisions:
        if row.stage != "full-text":
            continue
        outcome = screened.get(row.decision.record_id)
        decision = outcome.decision if outcome else None
        if decision not in ("include", "maybe"):
            state = {None: "has no title/abstract decision", "exclude": "was excluded at title/abstract",
                     "conflict": "is an unresolved conflict at title/abstract",
                     "awaiting": "still awaits a decision by another reviewer at title/abstract"}[decision]
            problems.append(Problem(row.path, row.line, row.columns.get("record_id"), "not-screened-in",
                                    f"record {row.decision.record_id!r} {state}; only records included there "
                                    "are assessed in full text"))
    return problems


def _check_evidence(review: Review) -> list[Problem]:
    problems = []
    studies: dict[str, str] = {}
    for item in review.evidence:
        record_id = item.evidence.record_id
        line, column = item.parsed.position(("record_id",)) or (None, None)
        record = review.records.get(record_id)
        if record is None:
            if review.records_loaded:
                problems.append(Problem(item.path, line, column, "unknown-record",
                                        f"record {record_id!r} is not in records.jsonl"))
            continue
        if record_id in studies:
            problems.append(Problem(item.path, line, column, "duplicate-evidence",
                                    f"evidence for {record_id!r} is already in {studies[record_id]}; "
                                    "keep one file per study"))
        studies.setdefault(record_id, item.path)
        abstract = normalise_whitespace(record.abstract or "")
        for index, finding in enumerate(item.evidence.findings):
            passage = finding.passage
            if passage.source != "abstract":
                continue
            line, column = item.parsed.position(("findings", index, "passage", "text")) or (None, None)
            if not abstract:
                problems.append(Problem(item.path, line, column, "passage-not-found",
                                        f"passage source is 'abstract' but record {record_id!r} has no abstract"))
            elif normalise_whitespace(passage.text) not in abstract:
                problems.append(Problem(item.path, line, column, "passage-not-found",
                                        "passage does not occur verbatim in the record's abstract "
                                        "(compared after collapsing whitespace)"))
    return problems


def _check_searches(review: Review) -> list[Problem]:
    problems = _check_batches(review)
    for monitor_id, search in review.searches.items():
        for index, strategy in enumerate(search.strategies):
            if strategy.syntax == "sitegen":
                try:
                    parse_query(strategy.query)
                except QuerySyntaxError as exc:
                    problems.append(Problem(f"searches/{monitor_id}.json", None, None, "query-syntax",
                                            f"strategies[{index}].query: {exc}"))
        missing = [i for i in search.seen_ids if i not in review.records] if review.records_loaded else []
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            problems.append(Problem(f"searches/{monitor_id}.json", None, None, "unknown-record",
                                    f"seen_ids name record(s) not in records.jsonl: {', '.join(missing[:3])}{more}"))
    return problems


def _check_batches(review: Review) -> list[Problem]:
    """Batches and saved searches must agree with the ledger: this also anchors the ledger's tail,
    since deleting the last run's events leaves a saved search claiming a run the ledger lacks."""
    problems = []
    batched: dict[str, int] = {}
    last_run: dict[str, str] = {}
    runs: dict[str, set[str]] = {}
    for event, line, payload in zip(review.ledger, review.ledger_lines, review.payloads, strict=True):
        if isinstance(payload, RetrievalPayload):
            last_run[payload.monitor_id] = event.ts
            runs.setdefault(payload.monitor_id, set()).add(event.ts)
        if not isinstance(payload, BatchPayload):
            continue
        twice = [i for i in payload.record_ids if i in batched]
        if twice:
            problems.append(Problem("ledger.jsonl", line, None, "batched-twice",
                                    f"batch {payload.batch} repeats record(s) of an earlier batch (ledger line "
                                    f"{batched[twice[0]]}): {', '.join(twice[:3])}"))
        batched.update({i: line for i in payload.record_ids})
        search = review.searches.get(payload.monitor_id)
        unseen = [i for i in payload.record_ids if search and i not in set(search.seen_ids)]
        if unseen:
            problems.append(Problem(f"searches/{payload.monitor_id}.json", None, None, "seen-ids",
                                    f"seen_ids lacks record(s) of batch {payload.batch}: {', '.join(unseen[:3])}; "
                                    "seen_ids only grows"))
    for monitor_id, search in review.searches.items():
        rel = f"searches/{monitor_id}.json"
        if monitor_id in last_run and search.last_run != last_run[monitor_id]:
            problems.append(Problem(rel, None, None, "last-run",
                                    f"last_run is {search.last_run!r} but the ledger's latest run of this search is "
                                    f"{last_run[monitor_id]}: events were deleted, or the file was edited"))
        if len(runs.get(monitor_id, ())) > search.run_count:
            problems.append(Problem(rel, None, None, "run-count",
                                    f"run_count is {search.run_count} but the ledger records "
                                    f"{len(runs[monitor_id])} runs of this search"))
        if search.run_count and monitor_id not in last_run and review.ledger:
            problems.append(Problem(rel, None, None, "last-run",
                                    f"the search has run {search.run_count} time(s) but the ledger has no retrieval "
                                    "event for it: events were deleted"))
    return problems


def _check_ledger(review: Review) -> list[Problem]:
    rel = "ledger.jsonl"
    lines = review.ledger_lines
    problems = [Problem(rel, lines[index], None, "ledger-chain", message)
                for index, message in verify_chain(review.ledger)]
    named: set[str] = set()
    lock: tuple[LedgerEvent, ProtocolLockPayload] | None = None
    previous_time = None
    for index, (event, payload) in enumerate(zip(review.ledger, review.payloads, strict=True)):
        when = parse_timestamp(event.ts)
        if previous_time is not None and when < previous_time:
            problems.append(Problem(rel, lines[index], None, "ledger-time",
                                    f"event {event.seq} is dated {event.ts}, before the event above it: "
                                    "events are appended in time order"))
        previous_time = max(when, previous_time or when)
        if isinstance(payload, RetrievalPayload):
            unrecorded = [h for h in payload.snapshot_hashes if h not in review.snapshot_bodies]
            if unrecorded:
                problems.append(Problem(rel, lines[index], None, "missing-snapshot",
                                        f"retrieval event {event.seq} cites snapshot(s) not in snapshots/index.jsonl: "
                                        f"{', '.join(unrecorded[:3])}"))
        if isinstance(payload, RetrievalPayload | ImportPayload):
            named.update(payload.record_ids)
            missing = [i for i in payload.record_ids if i not in review.records]
            if missing and review.records_loaded:
                problems.append(Problem(rel, lines[index], None, "unknown-record",
                                        f"{event.type} event names record(s) not in records.jsonl: "
                                        f"{', '.join(missing[:3])}"))
        if isinstance(payload, ProtocolLockPayload):
            if event.type == "amendment" and lock is not None and payload.version <= lock[1].version:
                problems.append(Problem(rel, lines[index], None, "amendment-version",
                                        f"an amendment must raise the protocol version (it stays at {payload.version})"))
            lock = (event, payload)
    problems += _check_provenance(review, named)
    if lock is not None and review.protocol is not None:
        event, payload = lock
        if payload.sha256 != review.protocol.sha256:
            problems.append(Problem("protocol.md", _first_changed_line(payload.text, review), None, "protocol-locked",
                                    f"protocol.md was edited after it was locked (ledger event {event.seq}); "
                                    "record the change as an amendment instead of editing the locked text"))
        elif payload.version != review.protocol.meta.version:
            problems.append(Problem("protocol.md", 2, None, "protocol-locked",
                                    f"protocol version {review.protocol.meta.version} differs from the locked "
                                    f"version {payload.version}"))
    return problems


def _first_changed_line(locked: str | None, review: Review) -> int | None:
    """Where protocol.md first departs from its locked text, so the edit is annotated on its line."""
    if locked is None:
        return None
    current = (review.root / "protocol.md").read_text(encoding="utf-8").replace("\r\n", "\n").split("\n")
    before = locked.replace("\r\n", "\n").split("\n")
    for number, (old, new) in enumerate(zip(before, current, strict=False), start=1):
        if old != new:
            return number
    return min(len(before), len(current)) + 1


def _check_provenance(review: Review, named: set[str]) -> list[Problem]:
    """Every record must have come from somewhere the ledger records (principle: counts are derived)."""
    orphans = [record_id for record_id in review.records if record_id not in named]
    problems = [Problem("records.jsonl", review.record_lines[record_id], None, "no-provenance",
                        f"record {record_id!r} has no provenance: no retrieval or import event in ledger.jsonl "
                        "names it")
                for record_id in orphans[:20]]
    if len(orphans) > 20:
        problems.append(Problem("records.jsonl", None, None, "no-provenance",
                                f"{len(orphans) - 20} more records have no provenance on the ledger"))
    return problems
