"""The read model: what a loaded review adds up to, derived once per command.

Checks, phase gates, the command line and the site all read the same derived
facts (screening outcomes, PRISMA counts, batches, phase, runs). Each is
computed the first time it is asked for, from the review as loaded, and never
stored: a fact can be no staler than the files it came from, and no command
computes one twice.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import groupby
from typing import TypeVar

from sitegen.living.duplicates import Duplicate, confirmed_duplicates
from sitegen.living.prisma import PreviousVersion, PrismaCounts, derive
from sitegen.living.sightings import Sighting, sightings
from sitegen.records.model import model_data
from sitegen.review.folder import Review, exclusion_reasons
from sitegen.review.models import (
    BatchPayload,
    Evidence,
    ImportPayload,
    LedgerEvent,
    PhasePayload,
    ProtocolLockPayload,
    RetrievalPayload,
    VerificationPayload,
    VersionPayload,
    VersionRecord,
)
from sitegen.review.parsing import line_digest
from sitegen.review.write import canonical_json
from sitegen.screening.outcomes import Outcome, published_outcomes
from sitegen.screening.standing import StageHistory, Standing, screening_histories, standings
from sitegen.screening.status import (
    BatchStatus,
    Conflict,
    ScreeningFacts,
    StageStatus,
    conflicts,
    screening_facts,
    status,
)

T = TypeVar("T")


def evidence_sha256(evidence: Evidence) -> str:
    """The SHA-256 of the canonical JSON of a study's evidence (the `Evidence` model, so re-formatting the
    YAML changes nothing and changing a finding does): what a version and a faithfulness verdict record."""
    return hashlib.sha256(canonical_json(model_data(evidence)).encode("utf-8")).hexdigest()


def _records_digest(line_digests: Iterable[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256()
    for record_id, line in line_digests:
        digest.update(f"{record_id}\n".encode("utf-8", "surrogatepass") + line)
    return digest.hexdigest()


@dataclass(frozen=True)
class LatestVerdict:
    at: str  # the event's time
    payload: VerificationPayload


def latest_verdicts(review: Review, as_checked: bool = False) -> dict[str, dict[str, LatestVerdict]]:
    """Record id -> axis -> the latest verification event on that axis. A faithfulness verdict on evidence
    edited since (its `evidence_sha256` is not the evidence's now) stands for findings that are no longer
    there, so it is left out: the study is not verified on that axis until it is verified again. With
    `as_checked`, it stands for the evidence as it was checked (for a review as it stood at an earlier event,
    whose evidence then no file keeps)."""
    current = {item.evidence.record_id: evidence_sha256(item.evidence) for item in review.evidence}
    latest: dict[str, dict[str, LatestVerdict]] = defaultdict(dict)
    for event, payload in zip(review.ledger, review.payloads, strict=True):
        if isinstance(payload, VerificationPayload):
            latest[payload.record_id][payload.axis] = LatestVerdict(event.ts, payload)  # ledger order is time order
    if as_checked:
        return latest
    for record_id, axes in latest.items():
        faithfulness = axes.get("faithfulness")
        if faithfulness and faithfulness.payload.evidence_sha256 not in (None, current.get(record_id)):
            del axes["faithfulness"]
    return latest


def identified_records(review: Review, events: int) -> dict[str, None]:
    """The records the first `events` ledger events identified, in the order they were first named."""
    return dict.fromkeys(record_id for payload in review.payloads[:events]
                         if isinstance(payload, RetrievalPayload | ImportPayload) for record_id in payload.record_ids)


def ledger_cut(review: Review, events: int, known: dict[str, None] | None = None) -> Review:
    """The review with its ledger as far as its first `events` events go, and the records those events had
    identified (`known`, when the caller has them); every other file as it stands now."""
    known = identified_records(review, events) if known is None else known
    return replace(review, ledger=review.ledger[:events], payloads=review.payloads[:events],
                   ledger_lines=review.ledger_lines[:events], records=_known_only(review.records, known),
                   record_lines=_known_only(review.record_lines, known))


def _known_only(by_record: dict[str, T], known: dict[str, None]) -> dict[str, T]:
    """The entries of `by_record` whose record is `known`, in its order: with no record known, or every one (a
    ledger's first and last events), without looking at each (100,000 at review scale) in Python."""
    if not known:
        return {}
    if known.keys() >= by_record.keys():
        return dict(by_record)
    return {record_id: value for record_id, value in by_record.items() if record_id in known}


def as_it_stood(review: Review, events: int) -> Review:
    """The review as far as its first `events` ledger events go, for judging what a command judged then. The
    ledger keeps its history; the decision, duplicate and evidence files keep none, so they are taken as they stand
    now, about the records those events had identified (a record found since, and its decisions, were not there)."""
    known = identified_records(review, events)
    return replace(ledger_cut(review, events, known),
                   decisions=[row for row in review.decisions if row.decision.record_id in known] if known else [],
                   duplicates=[row for row in review.duplicates
                               if row.decision.record_id in known and row.decision.duplicate_of in known],
                   versions=[version for version in review.versions if version.version.ledger_head.seq < events])


@dataclass(frozen=True)
class Run:
    """One run of a saved search: every strategy executed at one time, as the ledger recorded it."""

    monitor_id: str
    at: str
    strategies: list[RetrievalPayload]
    batch: BatchPayload | None = None  # the screening batch of the records it found new, if any
    line: int | None = None  # the line of its first event in ledger.jsonl

    @property
    def complete(self) -> bool:
        return all(strategy.complete for strategy in self.strategies)

    @property
    def incomplete(self) -> list[RetrievalPayload]:
        """The strategies whose source was not reached, or not read in full."""
        return [strategy for strategy in self.strategies if not strategy.complete]


class ReviewFacts:
    def __init__(self, review: Review):
        self.review = review

    @cached_property
    def duplicates(self) -> dict[str, Duplicate]:
        """Record id -> the record a reviewer confirmed it duplicates (duplicates.csv)."""
        return confirmed_duplicates(self.review)

    @cached_property
    def canonicals(self) -> dict[str, str]:
        """Record id -> the record a reviewer confirmed it duplicates, in id order (as a version records them)."""
        return {rid: found.canonical for rid, found in sorted(self.duplicates.items())}

    @cached_property
    def verdicts(self) -> dict[str, dict[str, LatestVerdict]]:
        """Record id -> axis -> its latest verification verdict (`latest_verdicts`): read from the ledger once,
        for every page and check that shows one."""
        return latest_verdicts(self.review)

    @cached_property
    def screening(self) -> ScreeningFacts:
        return screening_facts(self.review, frozenset(self.duplicates))

    @property
    def outcomes(self) -> dict[str, dict[str, Outcome]]:
        """Stage -> record id -> outcome."""
        return self.screening.outcomes

    @cached_property
    def standings(self) -> dict[str, Standing]:
        """Record id -> where it stands in screening (included, excluded at a stage, conflict, awaiting)."""
        return standings(list(self.review.records), self.screening.outcomes, self.duplicates)

    @cached_property
    def histories(self) -> dict[str, list[StageHistory]]:
        """Record id -> its screening history per stage, blind where screening must be."""
        return screening_histories(self.review, self.screening.outcomes)

    @cached_property
    def sightings(self) -> dict[str, list[Sighting]]:
        """Record id -> every source and run that returned it, from the ledger."""
        return sightings(self.review)

    @cached_property
    def prisma(self) -> PrismaCounts:
        return derive(self.review, self.screening.outcomes, self.previous_counted, self.canonicals)

    @cached_property
    def unpublished(self) -> bool:
        """Whether the review as it stands is not its latest published version (or none was published):
        the ledger went on past that version's own event, or an outcome, the title, the question or the
        protocol version, the evidence of an included study, any record's metadata or the confirmed
        duplicates changed since."""
        review = self.review
        if not review.versions:
            return True
        latest = review.versions[-1].version
        last = review.payloads[-1] if review.payloads else None
        now = (review.config.title, review.config.question, review.protocol.meta.version)
        return (not (isinstance(last, VersionPayload) and last.number == latest.number)
                or now != (latest.title, latest.question, latest.protocol_version)
                or published_outcomes(self.outcomes) != latest.outcomes
                or (latest.evidence is not None and self.evidence_hashes != latest.evidence)
                or (latest.records is not None and self.records_digest != latest.records)
                or (latest.duplicates is not None and latest.duplicates != self.canonicals))

    @cached_property
    def records_digest(self) -> str:
        """The records as records.jsonl holds them, in one SHA-256 (each record's id and its line's digest, in
        order): what a version records, so that an edited record is a new version. Of each line as sitegen
        writes it (`canonical_json`), so that a line re-formatted (keys reordered, spaces, escapes: a merge tool,
        `jq`) is the same record, as an evidence file re-formatted is the same evidence."""
        written = _records_digest(self.review.record_digests.items())
        latest = self.review.versions[-1].version.records if self.review.versions else None
        if written == latest:  # every line as the latest version had it: no need to write each again
            return written
        return _records_digest((record_id, line_digest(canonical_json(model_data(record))))
                               for record_id, record in self.review.records.items())

    @cached_property
    def evidence_hashes(self) -> dict[str, str]:
        """Included study id -> `evidence_sha256` of its evidence, for each with an evidence file: what a
        version records, so that changed evidence is a new version."""
        included = set(self.included)
        return dict(sorted((item.evidence.record_id, evidence_sha256(item.evidence))
                           for item in self.review.evidence if item.evidence.record_id in included))

    @cached_property
    def previous_version(self) -> VersionRecord | None:
        """The version before the review as it stands (its latest version when it changed since, else the one
        before that), whose studies PRISMA's updated-review template shows as previous; None when there is none."""
        versions = self.review.versions[:len(self.review.versions) - (not self.unpublished)]
        return versions[-1].version if versions else None

    @cached_property
    def previous_counted(self) -> PreviousVersion | None:
        """The previous version as PRISMA's updated-review template counts it: the studies it included, its last
        ledger event and its studies as it published them; None when there is no such version."""
        version = self.previous_version
        if version is None:
            return None
        outcomes = version.outcomes.get("full-text", {})
        return PreviousVersion(sorted(rid for rid, outcome in outcomes.items() if outcome.decision == "include"),
                               version.ledger_head.seq, version.studies)

    @cached_property
    def screening_status(self) -> tuple[list[BatchStatus], list[StageStatus]]:
        return status(self.review, self.screening)

    @cached_property
    def conflicts(self) -> list[Conflict]:
        return conflicts(self.review, self.screening)

    @cached_property
    def reason_labels(self) -> dict[str, str]:
        """Exclusion reason code -> its label, as the protocol names them (and earlier versions named those an
        amendment retired, which earlier decisions still give)."""
        return exclusion_reasons(self.review)

    @cached_property
    def included(self) -> list[str]:
        """Ids of the included studies (included at full text)."""
        return [record_id for record_id, outcome in self.screening.outcomes["full-text"].items()
                if outcome.decision == "include"]

    @cached_property
    def phase(self) -> tuple[str, str | None]:
        """(phase, since when) from the ledger; a review starts in the protocol phase."""
        moves = [(p.to_phase, e.ts) for e, p in self._events(PhasePayload)]
        return moves[-1] if moves else ("protocol", None)

    @cached_property
    def protocol_trail(self) -> list[tuple[LedgerEvent, ProtocolLockPayload]]:
        """The protocol's lock and amendments, oldest first."""
        return self._events(ProtocolLockPayload)

    @cached_property
    def runs(self) -> list[Run]:
        """Every run of every saved search, oldest first, with the completeness the ledger recorded."""
        # In ledger order, which is time order (check refuses any other): a run's events are written
        # together, so one run is a stretch of retrievals sharing a time and a saved search.
        review = self.review
        retrievals = [(event.ts, line, payload) for event, line, payload
                      in zip(review.ledger, review.ledger_lines, review.payloads, strict=True)
                      if isinstance(payload, RetrievalPayload)]
        batches = {(event.ts, payload.monitor_id): payload for event, payload in self._events(BatchPayload)}
        runs = []
        for (at, monitor_id), group in groupby(retrievals, key=lambda item: (item[0], item[2].monitor_id)):
            events = list(group)
            runs.append(Run(monitor_id, at, [payload for _, _, payload in events], batches.get((at, monitor_id)),
                            events[0][1]))
        return runs

    def _events(self, kind: type) -> list:
        return [(event, payload) for event, payload in zip(self.review.ledger, self.review.payloads, strict=True)
                if isinstance(payload, kind)]


# The events that record a judgement of the review rather than change what it adds up to: its phase moves and its
# verification verdicts. `check` judges each phase event on the review as it stood (`FactsThen`); a run of phase
# events with only such events between them shares one derivation of the rest (`Settled`).
JUDGEMENTS = (PhasePayload, VerificationPayload)


def settled_end(payloads: list, events: int) -> int:
    """How many of the first `events` events are left once the judgements that end them are taken off."""
    while events and isinstance(payloads[events - 1], JUDGEMENTS):
        events -= 1
    return events


def without_judgements(review: Review) -> Review:
    """The review without its phase and verification events: its ledger up to the last event of another kind (the
    versions it had published by then), and every judgement before that blanked in its place (its payload None, as
    for an event that could not be read; its place kept, so every event's seq is still its line)."""
    end = settled_end(review.payloads, len(review.payloads))
    blanked = [(event.model_copy(update={"payload": {}}), None) if isinstance(payload, JUDGEMENTS) else (event, payload)
               for event, payload in zip(review.ledger[:end], review.payloads[:end], strict=True)]
    return replace(review, ledger=[event for event, _ in blanked], payloads=[payload for _, payload in blanked],
                   ledger_lines=review.ledger_lines[:end],
                   versions=[item for item in review.versions if item.version.ledger_head.seq < end])


class Settled:
    """What a review adds up to apart from its judgements: the facts of the review without them (`without_judgements`).
    The same for every cut of a ledger that differs only in the judgements that end it, so such cuts share one; and
    since the facts are derived from a review with no judgement in it, none can depend on one, however they are
    derived: a fact that needed one would find none, at once, not a stale one later."""

    def __init__(self, review: Review):
        self.facts = ReviewFacts(without_judgements(review))
        self._counted: list[tuple[PreviousVersion | None, PrismaCounts]] = []

    @property
    def end(self) -> int:
        return len(self.facts.review.ledger)

    def prisma(self, previous: PreviousVersion | None) -> PrismaCounts:
        """The counts after `previous` (which version is previous depends on whether a judgement followed the
        latest version, so it comes from the whole cut): derived once for each."""
        for then, counts in self._counted:
            if then == previous:
                return counts
        facts = self.facts
        counts = derive(facts.review, facts.screening.outcomes, previous, facts.canonicals)
        self._counted.append((previous, counts))
        return counts


def _settled(name: str) -> property:
    return property(lambda self: getattr(self.settled.facts, name),
                    doc=f"`ReviewFacts.{name}` of the review without its judgements (`Settled`).")


class FactsThen(ReviewFacts):
    """The facts of a review as it stood at an earlier event (`as_it_stood`). A faithfulness verdict stands for the
    evidence it checked: the evidence as it was then is not kept, and an edit since is no fault of that time.

    What screening, the duplicates and the evidence add up to is read from the review without its judgements
    (`settled`), which the cuts of one run of phase events share (`later`): at 100,000 records a derivation takes
    seconds. The verdicts, the phase and whether the review stood published are read from the whole cut."""

    def __init__(self, review: Review, settled: Settled | None = None):
        super().__init__(review)
        self.settled = Settled(review) if settled is None else settled

    duplicates = _settled("duplicates")
    canonicals = _settled("canonicals")
    screening = _settled("screening")
    standings = _settled("standings")
    conflicts = _settled("conflicts")
    included = _settled("included")
    evidence_hashes = _settled("evidence_hashes")
    records_digest = _settled("records_digest")

    @cached_property
    def prisma(self) -> PrismaCounts:
        return self.settled.prisma(self.previous_counted)

    @cached_property
    def verdicts(self) -> dict[str, dict[str, LatestVerdict]]:
        return latest_verdicts(self.review, as_checked=True)

    def later(self, review: Review, events: int) -> FactsThen:
        """The facts of `review` (the review these facts' review was cut from) as it stood after its first `events`
        events (no fewer than these facts' own): sharing these facts' `settled` when the events in between are
        judgements alone, so that the cut without its judgements is the same one."""
        since = len(self.review.ledger)
        if events < since or settled_end(review.payloads, events) != self.settled.end:
            return FactsThen(as_it_stood(review, events))
        # Judgements identify no record: the records and decisions of the cut are these facts' own.
        then = replace(self.review, ledger=review.ledger[:events], payloads=review.payloads[:events],
                       ledger_lines=review.ledger_lines[:events],
                       versions=[item for item in review.versions if item.version.ledger_head.seq < events])
        return FactsThen(then, self.settled)
