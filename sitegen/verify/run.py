"""`sitegen verify`: every included study checked on three axes, the verdicts kept on the ledger.

Each included study is checked for identity and status (`identity.py`) and, when it has an evidence
file, for faithfulness (`faithfulness.py`). With `bib`, the entries of a BibTeX file are checked for
identity and status too; they are not records of the review, so their verdicts are reported, not
recorded. Live and record runs append one `verification` event per study and axis at the caller's time,
in one transaction with the responses recorded (record mode); a failed run records nothing. A replay run
reads only the responses a recorded run saved (its session is the run's time), recomputes the verdicts and
compares them with those the ledger holds for that run; it writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx

from sitegen.errors import OptionInvalid, SitegenError, cannot_read, shown_argument, shown_path
from sitegen.living.facts import ReviewFacts
from sitegen.living.ledger import append, check_event_time, given_time
from sitegen.records.model import Record
from sitegen.references import ReferenceProblem, read_references
from sitegen.references.records import entry_record
from sitegen.review.folder import Review
from sitegen.review.models import UNANSWERED, VERIFICATION_AXES, VerificationPayload, parse_timestamp
from sitegen.review.transaction import Transaction
from sitegen.sources.http import RECORD_IT
from sitegen.sources.search import open_fetcher
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import SnapshotDamaged, SnapshotMissing
from sitegen.verify.faithfulness import faithfulness_verdict, needs_fulltext, open_text
from sitegen.verify.identity import SOURCES, CitationVerdicts, verify_citation, with_unread
from sitegen.verify.report import OPEN_ITEMS


@dataclass(frozen=True)
class BibEntry:
    line: int
    key: str  # the entry's citation key
    record: Record
    notes: list[str] = field(default_factory=list)  # what reading the entry into its record said (`entry_record`)


@dataclass(frozen=True)
class BibVerdicts:
    entry: BibEntry
    verdicts: CitationVerdicts


@dataclass
class VerifyResult:
    at: str
    mode: str
    studies: dict[str, list[VerificationPayload]]  # record id -> its verdicts, in axis order
    references: list[BibVerdicts] = field(default_factory=list)
    recorded: bool = False  # the verdicts were appended to the ledger
    differences: list[str] = field(default_factory=list)  # replay: where the recomputed verdicts differ
    # replay: studies included now that the replayed run did not verify (included since): it cannot say
    # anything of them, as no response of theirs was recorded
    not_in_run: list[str] = field(default_factory=list)
    # replay: the verdicts of studies the run verified that are no longer included: compared with the ledger's,
    # but none is a refusal or an open item of the review now
    excluded_since: dict[str, list[VerificationPayload]] = field(default_factory=dict)

    def payloads(self) -> list[VerificationPayload]:
        return [payload for verdicts in self.studies.values() for payload in verdicts]

    def all_verdicts(self) -> list[VerificationPayload]:
        return self.payloads() + [p for entry in self.references for p in (entry.verdicts.identity,
                                                                           entry.verdicts.status)]

    @property
    def refusals(self) -> list[VerificationPayload]:
        return [payload for payload in self.all_verdicts() if payload.refusal_grade]

    @property
    def open_items(self) -> list[VerificationPayload]:
        return [payload for payload in self.all_verdicts() if payload.verdict in OPEN_ITEMS]

    @property
    def unanswered(self) -> list[VerificationPayload]:
        """The verdicts an index did not answer for (rate limited, an error, an outage): asked again, it may
        settle them."""
        return [payload for payload in self.all_verdicts()
                if any(answer.answer in UNANSWERED for answer in payload.answers)]


def bib_records(path: Path, encoding: str | None = None) -> list[BibEntry]:
    """The entries of a BibTeX file (in `encoding` when it is not UTF-8) as records, with their lines and keys;
    SitegenError naming file and line."""
    warnings: list[str] = []
    try:
        entries = read_references(path, "bibtex", warnings, encoding=encoding)
    except ReferenceProblem as exc:
        raise SitegenError(f"{shown_path(path)}:{exc.line}: {exc.message}") from None
    except LookupError as error:  # `encoding` is no text encoding (references.text_codec)
        raise OptionInvalid("--encoding", str(error)) from None
    except OSError as error:
        raise SitegenError(cannot_read(path, error)) from None
    except UnicodeDecodeError as exc:
        raise SitegenError(f"{shown_path(path)}: cannot be read ({exc})") from None
    records = []
    for entry in entries:
        notes: list[str] = []
        try:
            records.append(BibEntry(entry.line, entry.id, entry_record(entry, warnings=notes), notes))
        except ValueError as exc:
            raise SitegenError(f"{shown_path(path)}:{entry.line}: {exc}") from None
    return records


def verification_times(review: Review) -> list[str]:
    """The times of the review's recorded verification runs, earliest first, each once."""
    return list(dict.fromkeys(event.ts for event, payload in zip(review.ledger, review.payloads, strict=True)
                              if isinstance(payload, VerificationPayload)))


def latest_verification_time(review: Review) -> str | None:
    times = verification_times(review)
    return times[-1] if times else None


def _listed_times(times: list[str]) -> str:
    """The recorded runs a replay may name, the latest last (at most five: the latest ones)."""
    shown = times[-5:]
    return ("recorded: " + ", ".join(shown) if len(shown) == len(times)
            else f"the latest {len(shown)} of {len(times)}: " + ", ".join(shown))


def verify_review(review: Review, facts: ReviewFacts, at: str | None, mode: str = "live",
                  settings: SourceSettings | None = None, bib: Path | None = None, bib_encoding: str | None = None,
                  sources: tuple[str, ...] | None = None, progress: Callable[[str], None] = lambda message: None,
                  transport: httpx.BaseTransport | None = None) -> VerifyResult:
    """Verify the review's included studies (and the entries of `bib`) at the caller's time `at`, asking
    `sources` (by default every index; a replay asks those the recorded run asked)."""
    if mode == "replay":
        at = at or latest_verification_time(review)
        if at is None:
            raise SitegenError("replay: the ledger holds no verification run to replay; run "
                               f"`sitegen verify {shown_argument(review.root)} --snapshots record --at TIME` first")
        given_time(at)
        sources = sources or recorded_sources(review, at)
        # A replay recomputes the run it replays: the studies that run verified (a study excluded since is
        # still one whose recorded verdicts must be reproduced), not those included now.
        verified = recorded_studies(review, at)
        if not verified:
            raise SitegenError(f"replay: the ledger holds no verification run at {at}; give the time of a recorded "
                               f"run ({_listed_times(verification_times(review))}), or run `sitegen verify "
                               f"{shown_argument(review.root)} --snapshots replay` alone to replay the latest")
        studies = [record_id for record_id in verified if record_id in review.records]
        not_in_run = [record_id for record_id in facts.included if record_id not in verified]
    elif at is None:
        raise SitegenError("--at is required: the run's time, supplied by the caller")
    else:
        check_event_time(review.ledger, at)
        studies, not_in_run = facts.included, []
    sources = sources or SOURCES
    references = bib_records(bib, bib_encoding) if bib else []  # a .bib that cannot be read is said first
    if mode != "replay" and recorded_run(review, at):  # a retry after a kill would record every verdict twice
        raise SitegenError(f"the ledger already holds a verification run at {at}: replay it with "
                           f"`--snapshots replay --at {at}`, or give this run a later --at")
    if not studies and not references:
        raise SitegenError(f"{shown_path(review.root)} has no included studies to verify (and no --bib file was given)")
    settings = settings or SourceSettings.from_environment()
    evidence = {item.evidence.record_id: item.evidence for item in review.evidence}
    result = VerifyResult(at, mode, {}, not_in_run=not_in_run)
    included = set(facts.included)
    with open_fetcher(mode, review.root / "snapshots", session=at, transport=transport) as fetcher:
        for number, record_id in enumerate(studies, start=1):
            record = review.records[record_id]
            progress(f"[{number}/{len(studies)}] {record_id}")
            with _replaying(mode, review, at, record_id):
                verdicts = verify_citation(fetcher, settings, record, sources)
                payloads = [verdicts.identity, verdicts.status]
                if record_id in evidence:
                    found = evidence[record_id]
                    text = open_text(fetcher, settings, record) if needs_fulltext(record, found) else None
                    payloads.append(faithfulness_verdict(record, found, text))
            if mode == "replay" and record_id not in included:
                result.excluded_since[record_id] = payloads
            else:
                result.studies[record_id] = payloads
        for entry in references:
            progress(f"{bib}:{entry.line}: {entry.key}")
            with _replaying(mode, review, at, f"{shown_path(bib)}:{entry.line}: {entry.key}"):
                verdicts = verify_citation(fetcher, settings, entry.record, sources)
                verdicts = replace(verdicts, identity=with_unread(verdicts.identity, entry.notes))
                result.references.append(BibVerdicts(entry, verdicts))
        recorded = fetcher.snapshots.staged_files() if fetcher.snapshots is not None and mode == "record" else {}
    if mode == "replay":
        # An excluded study's evidence file goes with it (check asks so): its passages cannot be checked again.
        unevidenced = {(record_id, "faithfulness") for record_id in result.excluded_since if record_id not in evidence}
        result.differences = replay_differences(review, at, result.payloads() + [
            payload for verdicts in result.excluded_since.values() for payload in verdicts], unevidenced)
        return result
    if result.studies:
        transaction = Transaction(review.root)
        append(transaction, review, at, result.payloads())
        for rel, data in recorded.items():
            transaction.write(f"snapshots/{rel}", data)
        transaction.commit()
        result.recorded = True
    return result


@contextmanager
def _replaying(mode: str, review: Review, at: str, cited: str) -> Iterator[None]:
    """A replay that needs a response its run did not record stops, saying so and for which study or entry
    (`SnapshotMissing`): no verdict is made up for it, as another response could give another verdict. The run
    cannot be recorded again at its own time, so the advice is a new run. A response whose body was edited or cut
    short since (`SnapshotDamaged`) stops it too, naming the study or entry as well as the file and line."""
    try:
        yield
    except SnapshotDamaged as damaged:
        if mode != "replay":
            raise
        raise SnapshotDamaged(f"{cited}: {damaged}") from None
    except SnapshotMissing as missing:
        if mode != "replay":
            raise
        raise SnapshotMissing(f"{cited}: {str(missing).removesuffix(RECORD_IT)}. The verification run at {at} "
                              "cannot be replayed by this sitegen: record a new run (`sitegen verify "
                              f"{shown_path(review.root)} --snapshots record --at TIME`, which needs the network) "
                              "and commit its snapshots") from None


def recorded_run(review: Review, at: str) -> list[VerificationPayload]:
    """The verdicts the ledger holds of the verification run at the instant `at` (an earlier sitegen recorded
    the time as given, with its offset), in the order they were recorded."""
    instant = parse_timestamp(at)
    return [payload for event, payload in zip(review.ledger, review.payloads, strict=True)
            if isinstance(payload, VerificationPayload) and parse_timestamp(event.ts) == instant]


def recorded_studies(review: Review, at: str) -> list[str]:
    """The studies the verification run at `at` verified, in the order it verified them."""
    return list(dict.fromkeys(payload.record_id for payload in recorded_run(review, at)))


def recorded_sources(review: Review, at: str) -> tuple[str, ...] | None:
    """The indexes the verification run at `at` asked, in the usual order; None when it asked none."""
    asked = {answer.source for payload in recorded_run(review, at) for answer in payload.answers}
    return tuple(source for source in SOURCES if source in asked) or None


def replay_differences(review: Review, at: str, payloads: list[VerificationPayload],
                       unrecomputable: Collection[tuple[str, str]] = ()) -> list[str]:
    """Where verdicts recomputed from a run's recorded responses differ from those the ledger holds for it
    (but for the `unrecomputable` ones: (study, axis) whose inputs are gone, as an excluded study's evidence)."""
    held = {(p.record_id, p.axis): p for p in recorded_run(review, at) if (p.record_id, p.axis) not in unrecomputable}
    if not held:
        return [f"the ledger holds no verification run at {at}: nothing to compare the replay with"]
    found = {(p.record_id, p.axis): p for p in payloads}
    differences = []
    for key in sorted(set(held) | set(found), key=lambda k: (k[0], VERIFICATION_AXES.index(k[1]))):
        before, now = held.get(key), found.get(key)
        if before is None or now is None:
            differences.append(f"{key[0]} ({key[1]}): {'recorded' if before else 'not recorded'} at {at}, "
                               f"{'recomputed' if now else 'not recomputed'} now")
        elif essence(before) != essence(now):
            differences.append(f"{key[0]} ({key[1]}): recorded {before.verdict}, recomputed {now.verdict}"
                               + _why_differs(review, before, now))
    return differences


def _why_differs(review: Review, before: VerificationPayload, now: VerificationPayload) -> str:
    """What made a verdict recomputed from the same recorded responses differ from the one recorded."""
    if before.evidence_sha256 != now.evidence_sha256:
        files = [item.path for item in review.evidence if item.evidence.record_id == now.record_id]
        return (f": its evidence ({', '.join(files) or 'its evidence file'}) changed since that run; record a new "
                f"verification run (`sitegen verify {shown_argument(review.root)} --snapshots record --at TIME`), whose "
                "verdict the site will then show")
    if before.snapshot_hashes != now.snapshot_hashes:  # responses of that run, but not those it rested on
        gone = sorted(set(before.snapshot_hashes) - set(now.snapshot_hashes))
        read = sorted(set(now.snapshot_hashes) - set(before.snapshot_hashes))
        return (f": it rests on other responses than that run's verdict (recorded, not read now: "
                f"{', '.join(gone) or 'none'}; read now, not recorded: {', '.join(read) or 'none'}): snapshots/"
                "index.jsonl was edited since, or this sitegen asks otherwise; restore the index as recorded (from "
                f"version control), or record a new run (`sitegen verify {shown_argument(review.root)} --snapshots "
                "record --at TIME`)")
    return "" if before.verdict != now.verdict else " (on other answers or responses)"


def essence(payload: VerificationPayload) -> tuple:
    """What a verdict rests on, without its wording (which a later sitegen may put better): the verdict,
    the notice, the responses, each source's answer, each passage's result and the evidence checked (an
    evidence file edited since the run no longer replays)."""
    return (payload.verdict, payload.refusal_grade, payload.notice, tuple(payload.snapshot_hashes),
            tuple((a.source, a.answer, a.asked) for a in payload.answers),
            tuple((c.finding, c.result, c.found_in, c.url) for c in payload.passages), payload.evidence_sha256)


def grouped_open_items(items: list[VerificationPayload]) -> list[tuple[str, str, str, list[str]]]:
    """Open items grouped by axis, verdict and reasons, every reason given (one per passage not found, say):
    (axis, verdict, reasons, record ids)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for payload in items:
        groups.setdefault((payload.axis, payload.verdict, "; ".join(payload.reasons)), []).append(payload.record_id)
    return [(axis, verdict, reason, ids) for (axis, verdict, reason), ids in groups.items()]
