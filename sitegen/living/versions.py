"""Published versions of a living review: recording one, rebuilding each, and what changed between them.

A version is a file, `versions/<number>.json` (`VersionRecord`): when it was
published, where the ledger ended then (`ledger_head`), the protocol version, the
title and question, and every record's outcome at each stage. Its counts are not
stored: they are derived again with `living.prisma.derive` from the ledger up to
that event and those outcomes, so a fresh clone rebuilds every version byte for
byte. Publishing also appends a `version` event holding the SHA-256 of the file:
the file cannot be edited, and the ledger cannot lose the event it names,
without `sitegen check` saying so.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, KeysView
from dataclasses import dataclass, field, replace
from functools import cached_property

from sitegen.errors import OptionInvalid, SitegenError
from sitegen.living.facts import ReviewFacts, Run, identified_records, ledger_cut
from sitegen.living.ledger import anchor, append, check_event_time, holds
from sitegen.living.prisma import PreviousVersion, PrismaCounts, derive, study_of
from sitegen.records.listing import listed
from sitegen.records.model import model_data
from sitegen.review.folder import Review, VersionFile, locked_reasons, with_retired_reasons
from sitegen.review.models import (
    STAGES,
    VERSION_SCHEMA_VERSION,
    ImportPayload,
    LedgerEvent,
    PhasePayload,
    ProtocolLockPayload,
    ReinstatementPayload,
    RetirementPayload,
    ValidationPayload,
    VerificationPayload,
    VersionPayload,
    VersionRecord,
    parse_timestamp,
)
from sitegen.review.problems import Problem
from sitegen.review.transaction import JOURNAL, Transaction
from sitegen.review.write import canonical_json
from sitegen.screening.checks import defined_reasons
from sitegen.screening.outcomes import TO_FULL_TEXT, Outcome, published_outcomes

LEDGER = "ledger.jsonl"
UNPUBLISHED = None  # the number of the review as it stands, when that differs from every version


def version_path(number: int) -> str:
    return f"versions/{number}.json"


def version_hash(record: VersionRecord) -> str:
    """The SHA-256 a `version` event records: of the version's canonical JSON, so re-indenting the
    file (or Git changing its line endings) keeps it, and changing any value does not."""
    return hashlib.sha256(canonical_json(model_data(record)).encode("utf-8")).hexdigest()


def version_text(record: VersionRecord) -> str:
    """versions/<number>.json as sitegen writes it: indented, with each record's outcome on a line of
    its own, so the file stays readable and a Git diff shows one line per changed outcome."""
    return _indented(model_data(record), depth=3) + "\n"


def _indented(value: object, depth: int, indent: int = 0) -> str:
    """JSON with objects spread over lines down to `depth` levels, and anything deeper on one line."""
    if depth == 0 or not isinstance(value, dict) or not value:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    inner = "  " * (indent + 1)
    items = [f"{inner}{canonical_json(key)}: {_indented(item, depth - 1, indent + 1)}" for key, item in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"


# --------------------------------------------------------------------------- a version, rebuilt


@dataclass
class Snapshot:
    """The review as one version published it (or, numbered UNPUBLISHED, as it stands now): the
    ledger up to its head, its outcomes, and what they add up to."""

    number: int | None
    published_at: str | None
    title: str
    question: str
    protocol_version: int
    review: Review  # the review cut at the version's ledger head: its events and the records they name
    outcomes: dict[str, dict[str, Outcome]]
    counts: PrismaCounts
    # Included study id -> hash of its evidence (None: not recorded, older versions), worked out when first asked
    # (`evidence`): hashing every study's evidence again is wasted where no version before it is compared.
    evidence_of: Callable[[], dict[str, str] | None]
    # Of the records as they were (ReviewFacts.records_digest; None: not recorded), worked out when first asked
    # (`records_digest`): writing 100,000 records again takes seconds, and a changelog asks only when none was identified.
    records_digest_of: Callable[[], str | None]
    # Each record a reviewer had confirmed to duplicate another -> that record; None: not recorded (older versions)
    duplicates: dict[str, str] | None
    # The records the ledger up to its head identified, in the order it first named them (`identified_records`):
    # found once, as the review is cut, and read by both changelogs the snapshot is in (100,000 ids at review scale).
    identified: dict[str, None]

    @cached_property
    def facts(self) -> ReviewFacts:
        return ReviewFacts(self.review)

    @cached_property
    def records_digest(self) -> str | None:
        return self.records_digest_of()

    @cached_property
    def evidence(self) -> dict[str, str] | None:
        return self.evidence_of()

    @cached_property
    def reasons(self) -> dict[str, str] | None:
        """Exclusion reason code -> label as the protocol this version was published under had them, read
        from its text on the ledger (the lock or amendment of that protocol version) with the parser the
        loader uses, so a later amendment relabelling a reason leaves the version as it was; with the labels
        of reasons it had retired, which decisions made under earlier versions still give. None for the
        review as it stands (its protocol.md says) or when the ledger holds no text of that version."""
        if self.number is UNPUBLISHED:
            return None
        own = locked_reasons(self.review).get(self.protocol_version)
        # The review is cut at the version's head: the ledger holds no protocol version later than its own.
        return None if own is None else with_retired_reasons(self.review, own)

    @cached_property
    def included(self) -> list[str]:
        """Ids of the studies included at full text, sorted."""
        return sorted(rid for rid, outcome in self.outcomes["full-text"].items() if outcome.decision == "include")


def _cut(review: Review, events: int, identified: dict[str, None]) -> Review:
    """The review as far as its first `events` ledger events go, which `identified` the records of. Decisions and
    evidence are left out: a version keeps only the outcomes they added up to then."""
    return replace(ledger_cut(review, events, identified), decisions=[], evidence=[], versions=[])


def _outcomes(record: VersionRecord) -> dict[str, dict[str, Outcome]]:
    return {stage: {rid: Outcome(o.decision, o.reason or "", ()) for rid, o in record.outcomes.get(stage, {}).items()}
            for stage in STAGES}


def _counted(previous: Snapshot | None, record: VersionRecord | None) -> PreviousVersion | None:
    """The version `previous` (its file `record`) as the next version's diagram counts it: the studies it included,
    the last ledger event it holds (none: 0, every run after it) and its studies as it published them."""
    if previous is None:
        return None
    head = previous.review.ledger[-1].seq if previous.review.ledger else 0
    return PreviousVersion(previous.included, head, record.studies if record else None)


def published_snapshot(review: Review, record: VersionRecord, previous: Snapshot | None) -> Snapshot:
    """A version as it was published, rebuilt from its file and the ledger up to its head (`previous`:
    the version before it, whose studies the diagram's "previous studies" are, as in PRISMA's
    updated-review template)."""
    identified = identified_records(review, record.ledger_head.seq)
    cut = _cut(review, record.ledger_head.seq, identified)
    outcomes = _outcomes(record)
    before = next((item.version for item in review.versions if previous and item.version.number == previous.number),
                  None)
    return Snapshot(record.number, record.published_at, record.title, record.question, record.protocol_version, cut,
                    outcomes, derive(cut, outcomes, _counted(previous, before), record.duplicates, record.studies),
                    lambda: record.evidence, lambda: record.records, record.duplicates, identified)


def current_snapshot(review: Review, facts: ReviewFacts) -> Snapshot:
    """The review as it stands, in the same terms as a version."""
    identified = identified_records(review, len(review.ledger))
    return Snapshot(UNPUBLISHED, None, review.config.title, review.config.question, review.protocol.meta.version,
                    _cut(review, len(review.ledger), identified), facts.outcomes, facts.prisma,
                    lambda: facts.evidence_hashes, lambda: facts.records_digest, facts.canonicals, identified)


# --------------------------------------------------------------------------- what changed


@dataclass(frozen=True)
class DecisionChange:
    record_id: str
    stage: str
    before: Outcome | None  # None: no outcome at that stage yet
    after: Outcome | None


@dataclass(frozen=True)
class Changelog:
    """What changed from one snapshot to the next (from nothing, for the first version)."""

    new_records: list[str]  # identified since, in the order the ledger first named them, less new_duplicates
    decisions: list[DecisionChange]  # changed outcomes of records the earlier snapshot had already
    studies_added: list[str]
    studies_removed: list[str]
    amendments: list[tuple[LedgerEvent, ProtocolLockPayload]]  # the protocol's lock and amendments
    runs: list[Run]
    phases: list[tuple[LedgerEvent, PhasePayload]]
    title_changed: bool
    question_changed: bool
    evidence_changed: list[str]  # studies whose evidence was added, changed or removed, sorted
    # Records' metadata edited, as far as can be told: a version records its records in one digest, so with new
    # records identified too an edit of earlier ones cannot be told apart from them.
    records_edited: bool = False
    # Identified since, and confirmed to duplicate another record: removed before screening, as PRISMA counts them.
    new_duplicates: list[str] = field(default_factory=list)
    # Records identified before whose confirmation as a duplicate changed (duplicates.csv): (record, the record it
    # duplicated before, the one it duplicates now), None for none. It changes the counts as a decision does.
    duplicates_changed: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    imports: list[tuple[LedgerEvent, ImportPayload]] = field(default_factory=list)  # records imported (not searched)
    # Verdicts and search validations recorded on the ledger since: each makes a version, so each is named in it.
    verifications: list[tuple[LedgerEvent, VerificationPayload]] = field(default_factory=list)
    validations: list[tuple[LedgerEvent, ValidationPayload]] = field(default_factory=list)
    # Saved searches retired or reinstated since (`sitegen monitor retire`, `reinstate`): which searches are run.
    retirements: list[tuple[LedgerEvent, RetirementPayload | ReinstatementPayload]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.new_records or self.new_duplicates or self.decisions or self.studies_added
                    or self.studies_removed
                    or self.amendments or self.runs or self.imports or self.phases or self.title_changed or self.question_changed
                    or self.evidence_changed or self.records_edited or self.duplicates_changed
                    or self.verifications or self.validations or self.retirements)

    def summary(self) -> str:
        """One sentence a feed reader or a list of versions can show."""
        parts = [_count(len(self.new_records), "new record"),
                 _count(len(self.new_duplicates), "new duplicate of a record found before, removed",
                        "new duplicates of records found before, removed"),
                 _count(len(self.decisions), "changed decision"),
                 _count(sum(1 for _, _, now in self.duplicates_changed if now), "record confirmed as a duplicate",
                        "records confirmed as duplicates"),
                 _count(sum(1 for _, _, now in self.duplicates_changed if not now), "record no longer a duplicate",
                        "records no longer duplicates"),
                 _count(len(self.studies_added), "study added", "studies added"),
                 _count(len(self.studies_removed), "study removed", "studies removed"),
                 _count(sum(1 for event, _ in self.amendments if event.type == "amendment"), "protocol amendment"),
                 _count(sum(1 for run in self.runs if run.complete), "search run"),
                 # A source that did not answer in full is not "no new records": the one sentence a feed shows says so.
                 _count(sum(1 for run in self.runs if not run.complete), "incomplete search run (records may be missing)",
                        "incomplete search runs (records may be missing)"),
                 _count(len(self.imports), "import of records", "imports of records"),
                 _count(len(self.evidence_changed), "study with changed evidence", "studies with changed evidence"),
                 _count(len(self.phases), "phase change"),
                 _count(len(self.verifications), "verification verdict"),
                 _count(len(self.validations), "search validation"),
                 _count(sum(1 for _, payload in self.retirements if isinstance(payload, RetirementPayload)),
                        "saved search retired", "saved searches retired"),
                 _count(sum(1 for _, payload in self.retirements if isinstance(payload, ReinstatementPayload)),
                        "saved search reinstated", "saved searches reinstated")]
        shown = [part for part in parts if part] + (["records' details changed"] if self.records_edited else [])
        shown += ["the title changed"] if self.title_changed else []
        shown += ["the review question changed"] if self.question_changed else []
        sentence = ", ".join(shown) if shown else "no change to records, decisions or studies"
        return sentence[:1].upper() + sentence[1:] + "."


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return "" if n == 0 else f"{n} {singular if n == 1 else plural or singular + 's'}"


def changelog(before: Snapshot | None, after: Snapshot) -> Changelog:
    """What `after` adds to `before` (an earlier snapshot of the same ledger, or None for the first)."""
    known = before.identified.keys() if before else {}.keys()
    identified = [rid for rid in after.identified if rid not in known]
    # A study included before and now a confirmed duplicate of a record included in its place (a reviewer made the
    # newer record the one that stands for the work) is the same study: neither removed nor added, and its own
    # decisions are no longer counted, as for any duplicate.
    included_before = set(before.included) if before else set()
    confirmed = after.duplicates or {}
    stands_for = {rid: canonical for rid, canonical in confirmed.items()
                  if rid in included_before and canonical in after.included and canonical not in included_before}
    decisions = []
    for stage in STAGES:
        earlier = before.outcomes[stage] if before else {}
        later = after.outcomes[stage]
        # Each side intersected on its own: with none known (the first version) no record's id is looked at.
        for rid in sorted((known & earlier.keys() | known & later.keys()) - stands_for.keys()):
            old, now = earlier.get(rid), later.get(rid)
            if _shown(old) != _shown(now):
                decisions.append(DecisionChange(rid, stage, old, now))
    since = len(before.review.ledger) if before else 0
    events = list(zip(after.review.ledger[since:], after.review.payloads[since:], strict=True))
    runs_before = len(before.facts.runs) if before else 0
    return Changelog(
        new_records=[rid for rid in identified if rid not in confirmed], decisions=decisions,
        studies_added=[rid for rid in after.included if rid not in included_before and rid not in stands_for.values()],
        studies_removed=sorted(included_before - set(after.included) - stands_for.keys()),
        amendments=[(event, payload) for event, payload in events if isinstance(payload, ProtocolLockPayload)],
        runs=after.facts.runs[runs_before:],
        phases=[(event, payload) for event, payload in events if isinstance(payload, PhasePayload)],
        imports=[(event, payload) for event, payload in events if isinstance(payload, ImportPayload)],
        verifications=[(event, payload) for event, payload in events if isinstance(payload, VerificationPayload)],
        validations=[(event, payload) for event, payload in events if isinstance(payload, ValidationPayload)],
        retirements=[(event, payload) for event, payload in events
                     if isinstance(payload, RetirementPayload | ReinstatementPayload)],
        title_changed=before is not None and before.title != after.title,
        question_changed=before is not None and before.question != after.question,
        evidence_changed=_evidence_changed(before, after),
        new_duplicates=[rid for rid in identified if rid in confirmed],
        duplicates_changed=_duplicates_changed(before, after, known),
        records_edited=(not identified and before is not None and None not in (before.records_digest, after.records_digest)
                        and before.records_digest != after.records_digest))


def _duplicates_changed(before: Snapshot | None, after: Snapshot,
                        known: KeysView[str]) -> list[tuple[str, str | None, str | None]]:
    """Records `before` had whose confirmed duplicate status `after` changed (newly identified duplicates are
    `new_duplicates`); none when either did not record its duplicates."""
    if before is None or before.duplicates is None or after.duplicates is None:
        return []
    return [(rid, before.duplicates.get(rid), after.duplicates.get(rid))
            for rid in sorted((before.duplicates.keys() | after.duplicates.keys()) & known)
            if before.duplicates.get(rid) != after.duplicates.get(rid)]


def _evidence_changed(before: Snapshot | None, after: Snapshot) -> list[str]:
    """Studies whose evidence `after` added, changed or removed. A study newly included with its
    evidence is not named again (it is a study added); nor is evidence a version did not record. With no version
    before it, every study is added: none is named, and no evidence is hashed to say so."""
    if before is None or after.evidence is None or before.evidence is None:
        return []
    earlier = before.evidence
    included_before, included_after = set(before.included), set(after.included)  # looked up by id, not scanned
    return sorted(rid for rid in earlier.keys() | after.evidence.keys()
                  if earlier.get(rid) != after.evidence.get(rid)
                  and rid in included_before and rid in included_after)


def _shown(outcome: Outcome | None) -> tuple[str, str] | None:
    """What a version records of an outcome: its decision and reason (not who decided)."""
    return None if outcome is None else (outcome.decision, outcome.reason)


# --------------------------------------------------------------------------- every version


@dataclass
class VersionHistory:
    """Every published version, rebuilt, with what changed in each; and the review as it stands."""

    versions: list[Snapshot]  # oldest first
    changelogs: list[Changelog]  # one per version, against the one before it
    current: Snapshot
    unpublished: bool  # the review as it stands differs from its latest version (or none was published)

    @property
    def latest(self) -> Snapshot | None:
        return self.versions[-1] if self.versions else None

    @cached_property
    def since_latest(self) -> Changelog:
        """What the review as it stands adds to its latest version."""
        return changelog(self.latest, self.current)

    @cached_property
    def first_included(self) -> dict[str, int]:
        """Study id -> the number of the first version that included it."""
        first: dict[str, int] = {}
        for version in self.versions:
            for rid in version.included:
                first.setdefault(rid, version.number)
        return first


def version_history(review: Review, facts: ReviewFacts) -> VersionHistory:
    versions: list[Snapshot] = []
    changelogs = []
    for item in review.versions:
        previous = versions[-1] if versions else None
        snapshot = published_snapshot(review, item.version, previous)
        changelogs.append(changelog(previous, snapshot))
        versions.append(snapshot)
    return VersionHistory(versions, changelogs, current_snapshot(review, facts), facts.unpublished)


def publish(review: Review, facts: ReviewFacts, at: str | None) -> tuple[VersionRecord | None, VersionRecord | None]:
    """Record the next version, dated `at`, if the review changed since its latest: (the new version or
    None, the latest before it or None). The version file, its ledger event and state.json's ledger
    head are written in one transaction. `at` is None only for a review with no ledger event."""
    latest = review.versions[-1].version if review.versions else None
    if not review.ledger or at is None:
        raise SitegenError("nothing to publish: the ledger has no events yet (lock the protocol and run a search)")
    if not facts.unpublished:
        return None, latest
    try:
        check_event_time(review.ledger, at, "the publication time")
    except OptionInvalid as error:  # a time from --now, SOURCE_DATE_EPOCH or the ledger: no one option's value
        raise SitegenError(str(error)) from None
    refuse_same_time(latest, at)
    record = VersionRecord(schema_version=VERSION_SCHEMA_VERSION, number=latest.number + 1 if latest else 1,
                           published_at=at, ledger_head=anchor(review.ledger[-1]),
                           protocol_version=review.protocol.meta.version, title=review.config.title,
                           question=review.config.question, outcomes=published_outcomes(facts.outcomes),
                           evidence=facts.evidence_hashes, records=facts.records_digest,
                           duplicates=facts.canonicals, studies=study_of(review))
    transaction = Transaction(review.root)
    transaction.write(version_path(record.number), version_text(record))
    append(transaction, review, at, [VersionPayload(number=record.number, sha256=version_hash(record))])
    transaction.commit()
    return record, latest


def refuse_same_time(latest: VersionRecord | None, at: str) -> None:
    """A new version dated `at` must be later than the `latest`: two versions of one date could not be told apart by
    a reader, and their order would be the file names' (`check` refuses such a pair: `version-time`)."""
    if latest is not None and parse_timestamp(at) <= parse_timestamp(latest.published_at):
        raise SitegenError(f"the publication time {at} is not later than version {latest.number}'s "
                           f"({latest.published_at}): a new version needs a time of its own")


def refuse_stale_date(review: Review, facts: ReviewFacts, at: str | None) -> None:
    """Without --now or SOURCE_DATE_EPOCH a version is dated by the latest ledger event. When the change
    is only in files (decisions, evidence, review.yaml), that event is no later than the latest version:
    the new version would claim the old one's date, so publish asks for the time instead of inventing it."""
    if not review.versions or at is None or not facts.unpublished:
        return
    latest = review.versions[-1].version
    if parse_timestamp(at) <= parse_timestamp(latest.published_at):
        raise SitegenError(f"nothing on the ledger is newer than version {latest.number}'s date "
                           f"({latest.published_at}), so the new version has no date of its own: give the time "
                           "of publication with --now (or SOURCE_DATE_EPOCH)")


# --------------------------------------------------------------------------- what `check` says


def version_problems(review: Review) -> list[Problem]:
    """Versions numbered 1, 2, 3… each recorded by its ledger event and unedited since, anchored to
    an event the ledger still has, in time order, and naming only records the ledger had identified.
    While a committed write is pending, the files may disagree: that is reported on its own."""
    if JOURNAL in review.interrupted:
        return []
    problems: list[Problem] = []
    recorded: dict[int, tuple[LedgerEvent, int]] = {}  # version number -> its event and ledger line
    for event, line, payload in zip(review.ledger, review.ledger_lines, review.payloads, strict=True):
        if not isinstance(payload, VersionPayload):
            continue
        expected = len(recorded) + 1
        if payload.number != expected or payload.number in recorded:
            problems.append(Problem(LEDGER, line, None, "version-order",
                                    f"event {event.seq} records version {payload.number}, but the versions before "
                                    f"it make this version {expected}: versions are published 1, 2, 3… in order"))
        recorded.setdefault(payload.number, (event, line))
    files = {item.version.number: item for item in review.versions}
    previous: VersionFile | None = None
    reasons = locked_reasons(review)  # parsed once: each version is judged by the protocol versions up to its head
    for item in review.versions:
        problems += _file_problems(review, item, previous, recorded.get(item.version.number))
        problems += _outcome_problems(review, item, reasons)
        previous = item
    for number, (event, line) in sorted(recorded.items()):
        if number not in files and version_path(number) not in review.invalid_files:
            problems.append(Problem(LEDGER, line, None, "version-missing",
                                    f"event {event.seq} records version {number}, but {version_path(number)} is "
                                    "missing: restore it from Git"))
    return problems


def _file_problems(review: Review, item: VersionFile, previous: VersionFile | None,
                   recorded: tuple[LedgerEvent, int] | None) -> list[Problem]:
    record, rel = item.version, item.path

    def at(*loc: str | int) -> int | None:
        return (item.parsed.position(loc) or (None, None))[0]

    problems = []
    # The numbers before this one that no file has (a file there but invalid is reported as it is).
    missing = [number for number in range(previous.version.number + 1 if previous else 1, record.number)
               if version_path(number) not in review.invalid_files]
    if missing:
        problems.append(Problem(rel, at("number"), None, "version-gap",
                                f"version {missing[0]} is missing: versions are numbered 1, 2, 3… without gaps "
                                f"({version_path(missing[0])} was deleted, or this file was renumbered)"))
    head = record.ledger_head
    if not review.judges_anchor(head.seq):
        pass  # events past a line that holds none, or past one out of its place, are not where they seem:
        # `ledger_problems` names that line
    elif not holds(review.ledger, head):
        ends = f"ends at event {review.ledger[-1].seq}" if review.ledger else "is empty"
        problems.append(Problem(rel, at("ledger_head"), None, "version-anchor",
                                f"the ledger had event {head.seq} ({head.hash[:12]}…) when this version was "
                                f"published, but the ledger {ends} or holds another event there: it was truncated "
                                "or rewritten; restore ledger.jsonl from Git"))
    elif parse_timestamp(record.published_at) < parse_timestamp(review.ledger[head.seq - 1].ts):
        problems.append(Problem(rel, at("published_at"), None, "version-time",
                                f"published_at {record.published_at} is before the ledger event it anchors "
                                f"(event {head.seq}, {review.ledger[head.seq - 1].ts})"))
    # `publish` records the protocol in force: the version the lock or latest amendment up to its head locked.
    if review.judges_anchor(head.seq) and holds(review.ledger, head) \
            and (locked := _locked_up_to(review, head.seq)) and record.protocol_version != locked[-1]:
        problems.append(Problem(rel, at("protocol_version"), None, "version-protocol",
                                f"protocol_version {record.protocol_version} is not the protocol in force when the "
                                f"version was published: the ledger up to its head (event {head.seq}) locked "
                                f"protocol version {locked[-1]} last"))
    if previous is not None:
        before = previous.version
        if parse_timestamp(record.published_at) < parse_timestamp(before.published_at):
            problems.append(Problem(rel, at("published_at"), None, "version-time",
                                    f"published_at {record.published_at} is before version {before.number} "
                                    f"({before.published_at}): versions are published in time order"))
        elif parse_timestamp(record.published_at) == parse_timestamp(before.published_at):
            # sitegen before f01ab90 recorded such a pair when --now or SOURCE_DATE_EPOCH was given the same time.
            problems.append(Problem(rel, at("published_at"), None, "version-time",
                                    f"published_at {record.published_at} is version {before.number}'s time too: a "
                                    "reader cannot tell two versions of one time apart, and `sitegen publish` now "
                                    "dates each version after the one before it; if this is the latest version, undo "
                                    "its publication (`git revert` of the commit that added this file, its `version` "
                                    "event and state.json's head) and publish again with a later --now"))
        if head.seq < before.ledger_head.seq:
            problems.append(Problem(rel, at("ledger_head"), None, "version-anchor",
                                    f"the ledger head (event {head.seq}) is earlier than version {before.number}'s "
                                    f"(event {before.ledger_head.seq}): a later version cannot know less"))
        elif head.seq == before.ledger_head.seq + 1 and _unchanged(before, record):
            problems.append(Problem(rel, 1, None, "version-unchanged",
                                    f"version {record.number} is version {before.number} again: no ledger event came "
                                    "between them (its head is version "
                                    f"{before.number}'s own event) and it records the same title, question, protocol "
                                    "version, outcomes, evidence, records and duplicates; `sitegen publish` records a "
                                    "version only when the review changed, so it was written by hand"))
    if recorded is None:
        problems.append(Problem(rel, 1, None, "version-unrecorded",
                                f"no `version` event on the ledger records version {record.number}: the file was "
                                "not written by `sitegen publish`, or the ledger lost its event"))
    else:
        event, line = recorded
        if event.payload.get("sha256") != version_hash(record):
            problems.append(Problem(rel, 1, None, "version-edited",
                                    f"the file was changed after it was published: its content no longer has the "
                                    f"SHA-256 that ledger event {event.seq} (line {line}) recorded; restore it from Git"))
        elif event.seq != head.seq + 1:
            problems.append(Problem(rel, at("ledger_head"), None, "version-anchor",
                                    f"the ledger head is event {head.seq}, but the version was recorded by event "
                                    f"{event.seq}, which must follow it directly"))
        elif parse_timestamp(event.ts) != parse_timestamp(record.published_at):
            # `publish` dates the version and its event alike: an event dated otherwise was written by hand.
            problems.append(Problem(rel, at("published_at"), None, "version-time",
                                    f"published_at {record.published_at} is not the time of ledger event {event.seq} "
                                    f"(line {line}), which recorded the version at {event.ts}: `sitegen publish` "
                                    "dates both alike"))
    problems += _unknown_records(review, item)
    return problems


def _locked_up_to(review: Review, head: int) -> list[int]:
    """The protocol versions the ledger's first `head` events locked (a lock, then each amendment), in order."""
    return [payload.version for payload in review.payloads[:head] if isinstance(payload, ProtocolLockPayload)]


def _reasons_up_to(review: Review, head: int, reasons: dict[int, dict[str, str]]) -> set[str] | None:
    """The exclusion reason codes a version anchored at event `head` may give: those of every protocol version
    locked up to it (an amendment may retire a reason earlier decisions still give). None when the ledger up to
    there locked none, or one whose text it does not keep (an older ledger): then no code can be judged."""
    versions = _locked_up_to(review, head)
    if not versions or any(version not in reasons for version in versions):
        return None
    return {code for version in versions for code in reasons[version]}


def _outcome_problems(review: Review, item: VersionFile, reasons: dict[int, dict[str, str]]) -> list[Problem]:
    """The values of the version's outcomes that `publish` could not have written, as `check` judges the decision
    files they add up to (`screening.checks`): a reason code no protocol version locked up to the version's head
    defines (the site would show the bare code), a reason given with a decision other than 'exclude', a full-text
    outcome of a record title/abstract screening did not send on, evidence of a study not included, a record
    duplicating itself or a duplicate, and a study named by other than the least id of its linked records. A hash
    recomputed after a hand edit does not make these so. Each is named at the line of its first such value."""
    record = item.version
    if not review.judges_anchor(record.ledger_head.seq) or not holds(review.ledger, record.ledger_head):
        return []  # the anchor's own problem is named; what the ledger held then is not known
    defined = _reasons_up_to(review, record.ledger_head.seq, reasons)
    found: dict[tuple[str, str], tuple[str, ...]] = {}  # (problem code, value) -> where it is first
    for stage, by_record in record.outcomes.items():
        for rid, outcome in by_record.items():
            if outcome.reason is None:
                continue
            if outcome.decision != "exclude":
                found.setdefault(("reason-not-exclusion", outcome.decision), ("outcomes", stage, rid, "reason"))
            elif defined is not None and outcome.reason not in defined:
                found.setdefault(("unknown-reason", outcome.reason), ("outcomes", stage, rid, "reason"))
    title_abstract = record.outcomes.get("title-abstract", {})
    if record.duplicates is not None:  # a duplicate's own decisions are not judged; an older version did not say which
        for rid in record.outcomes.get("full-text", {}):
            sent_on = title_abstract.get(rid)
            if rid not in record.duplicates and (sent_on is None or sent_on.decision not in TO_FULL_TEXT):
                found.setdefault(("not-screened-in", rid), ("outcomes", "full-text", rid))
    full_text = record.outcomes.get("full-text", {})
    for rid in record.evidence or {}:
        if rid not in full_text or full_text[rid].decision != "include":
            found.setdefault(("version-evidence", rid), ("evidence", rid))
    duplicates, studies = record.duplicates or {}, record.studies or {}
    for rid, canonical in duplicates.items():  # duplicates.csv's rules: no record duplicates itself or a duplicate
        if canonical == rid or canonical in duplicates:
            found.setdefault(("version-duplicates", rid), ("duplicates", rid))
    for rid, study in studies.items():  # `study_of`: each linked record -> the least id of its versions, itself too
        if studies.get(study) != study or study > rid:
            found.setdefault(("version-studies", rid), ("studies", rid))
    problems = []
    for (code, value), loc in list(found.items())[:_NAMED]:
        line = (item.parsed.position(loc) or (None, None))[0]
        problems.append(Problem(item.path, line, None, code, _outcome_message(code, value, loc, defined)))
    if len(found) > _NAMED:  # each is found in one pass; finding each one's line is a pass of its own
        problems.append(Problem(item.path, 1, None, "version-outcomes",
                                f"and {len(found) - _NAMED} more outcomes or evidence `sitegen publish` could not "
                                "have written: the file was written or edited by hand; restore it from Git"))
    return problems


_NAMED = 10  # a file edited throughout is named by its first values, not one problem per record


def _outcome_message(code: str, value: str, loc: tuple[str, ...], defined: set[str] | None) -> str:
    stage = loc[1].replace("-", "/") if loc[0] == "outcomes" else ""
    if code == "unknown-reason":
        return (f"{stage} outcome of {loc[2]!r}: exclusion reason {value!r} is not defined by any protocol version "
                f"locked up to the version's head ({defined_reasons(defined or set())}), so the site would show "
                "the bare code; `sitegen publish` records only reasons the protocol defines")
    if code == "reason-not-exclusion":
        return (f"{stage} outcome of {loc[2]!r}: a reason code goes with 'exclude' only, not {value!r}; "
                "`sitegen publish` records none with another decision")
    if code == "not-screened-in":
        return (f"record {value!r} has a full-text outcome but title/abstract screening did not include it or mark "
                "it maybe in this version: only records sent on are assessed in full text")
    if code == "version-evidence":
        return (f"evidence of {value!r}, which this version does not include at full text: a version records the "
                "evidence of its included studies only")
    if code == "version-duplicates":
        return (f"duplicates: record {value!r} is recorded as a duplicate of itself or of another duplicate; "
                "duplicates.csv accepts neither, so `sitegen publish` records neither")
    return (f"studies: record {value!r} is linked to a study that is not named by the least id of its linked "
            "records (each of which, that one too, names it): `sitegen publish` records the study so")


def _unchanged(before: VersionRecord, after: VersionRecord) -> bool:
    """Whether `after` records the review as `before` did, in what `ReviewFacts.unpublished` compares (what an older
    version did not record is not compared, as `publish` did not)."""
    return ((after.title, after.question, after.protocol_version, after.outcomes)
            == (before.title, before.question, before.protocol_version, before.outcomes)
            and all(then is None or then == now for then, now in ((before.evidence, after.evidence),
                                                                  (before.records, after.records),
                                                                  (before.duplicates, after.duplicates))))


def _unknown_records(review: Review, item: VersionFile) -> list[Problem]:
    """Every record the version names (its outcomes, and the evidence, duplicates and study links it recorded) that
    the ledger had not identified by the version's head (or that no longer exists): a file `publish` wrote names none.
    Each part is named at the line of its first such record."""
    identified = identified_records(review, min(item.version.ledger_head.seq, len(review.ledger)))
    record = item.version
    parts: list[tuple[str, dict[str, tuple[str, ...]]]] = [  # what it is, each id it names -> where
        (f"{stage} outcomes", {rid: ("outcomes", stage, rid) for rid in by_record})
        for stage, by_record in record.outcomes.items()]
    parts.append(("evidence", {rid: ("evidence", rid) for rid in record.evidence or {}}))
    for name, what in (("duplicates", "duplicates"), ("studies", "study links")):
        where: dict[str, tuple[str, ...]] = {}
        for rid, other in (getattr(record, name) or {}).items():  # both sides name a record
            where.setdefault(rid, (name, rid))
            where.setdefault(other, (name, rid))
        parts.append((what, where))
    problems = []
    for what, where in parts:
        lacking = set(review.lacking(where))
        unknown = [rid for rid in where if rid not in identified or rid in lacking]
        if unknown:
            line = (item.parsed.position(where[unknown[0]]) or (None, None))[0]
            problems.append(Problem(item.path, line, None, "unknown-record",
                                    f"{what}: record(s) that records.jsonl lacks or that no ledger "
                                    f"event up to the version's head identified: {listed(unknown, 3)}"))
    return problems
