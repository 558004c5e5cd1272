"""Load a review folder into memory, collecting every problem with its file and line.

`load_review` reads each file independently, so one broken file never hides the
problems in another. Rules that span files (unknown record ids, undefined exclusion
reasons, passages missing from abstracts...) belong to the domains that own them
(`screening/checks.py`, `living/checks.py`, `verify/passages.py`), which
`sitegen.workspace.inspect` applies.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import io
import os
import pickle
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC
from functools import cache
from pathlib import Path
from typing import Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

from sitegen.errors import SchemaVersionError, shown_argument, shown_path
from sitegen.records.ids import found_valid, meant_record_id, parse_record_id, record_id
from sitegen.records.listing import listed
from sitegen.records.model import (
    KEPT_BEFORE_THE_RULE,
    Record,
    hidden_format,
    hidden_format_message,
    hidden_format_reference,
    hidden_format_reference_message,
    model_data,
    share_fields_sets,
)
from sitegen.records.mojibake import encoded_twice, encoded_twice_message
from sitegen.review import kept, parsing
from sitegen.review.models import (
    DECISION_COLUMNS,
    DUPLICATE_COLUMNS,
    PAYLOAD_MODELS,
    REVIEW_SCHEMA_VERSION,
    RUN_MANIFEST_SCHEMA_VERSION,
    SEARCH_SCHEMA_VERSION,
    SLUG,
    STAGES,
    STATE_SCHEMA_VERSION,
    VALIDATION_COLUMNS,
    VERSION_SCHEMA_VERSION,
    Decision,
    DuplicateDecision,
    Evidence,
    LedgerEvent,
    Payload,
    ProtocolLockPayload,
    ProtocolMeta,
    ReviewConfig,
    ReviewState,
    RunManifest,
    SavedSearch,
    SnapshotEntry,
    ValidationStudy,
    VersionRecord,
    parse_timestamp,
    recorded_again,
)
from sitegen.review.problems import Problem
from sitegen.review.transaction import STAGED, interrupted, not_a_review
from sitegen.review.write import canonical_json

MB = 1_000_000
# Per-file size limits: generous for machine-written files, tight for hand-written ones.
SIZE_LIMITS = {
    "review.yaml": 1 * MB,
    "protocol.md": 2 * MB,
    "evidence": 2 * MB,
    "screening": 16 * MB,
    "duplicates.csv": 16 * MB,
    "validation.csv": 16 * MB,
    "searches": 128 * MB,
    "records.jsonl": 1024 * MB,
    "ledger.jsonl": 1024 * MB,
    "snapshots/index.jsonl": 1024 * MB,
    "state.json": 1 * MB,
    "runs": 16 * MB,  # a manifest lists a run's requests, not its records
    "versions": 64 * MB,  # each holds every record's outcomes when it was published (100,000 records: ~16 MB)
}

M = TypeVar("M", bound=BaseModel)
Row = TypeVar("Row")  # a model, or a dataclass of pydantic's, that a CSV row is read as
ADJUDICATION = "adjudication"  # screening/<stage>/adjudication.csv holds decisions that settle conflicts


@dataclass
class Protocol:
    meta: ProtocolMeta
    body: str
    body_line: int  # line of protocol.md where the Markdown body starts
    sha256: str  # of the whole file, line endings normalised, as locked on the ledger
    text: str  # the whole file, with newlines as Python reads text ("\r\n" and "\r" become "\n")
    version_at: tuple[int, int] | None = None  # line and column of the front matter's version, for what refers to it


@dataclass(slots=True)  # a review's decisions are many (211,000 at 100,000 records): each without a dictionary
class DecisionRow:
    stage: str
    reviewer: str
    path: str
    line: int
    columns: Mapping[str, int]
    decision: Decision


@dataclass
class DuplicateRow:
    """A row of duplicates.csv with its position."""

    path: str
    line: int
    columns: Mapping[str, int]
    decision: DuplicateDecision


@dataclass
class ValidationRow:
    """A row of validation.csv with its position."""

    path: str
    line: int
    study: ValidationStudy


@dataclass
class EvidenceFile:
    study: str
    path: str
    evidence: Evidence
    parsed: parsing.Parsed


@dataclass
class SearchFile:
    """The file a saved search was read from ("searches/<monitor_id>.json" unless misnamed), as it was read: the
    file its problems name, and where in it the field each names is (`parsed.position`)."""

    path: str
    parsed: parsing.Parsed


@dataclass
class VersionFile:
    path: str
    version: VersionRecord
    parsed: parsing.Parsed


@dataclass
class ManifestFile:
    """runs/<name>: a run's manifest as written, and its SHA-256 (which the ledger names)."""

    path: str
    manifest: RunManifest
    parsed: parsing.Parsed
    data: bytes

    @property
    def sha256(self) -> str:
        return manifest_hash(self.manifest)

    @property
    def byte_sha256(self) -> str:
        """The SHA-256 of the file's bytes, which runs recorded before manifests were hashed canonically named."""
        return hashlib.sha256(self.data).hexdigest()


def manifest_hash(manifest: RunManifest) -> str:
    """The SHA-256 a run's retrieval events name: of the manifest's canonical JSON (as for versions), so a
    checkout that changes line endings or indentation (Git's core.autocrlf) changes nothing, while any
    change to a value does."""
    return hashlib.sha256(canonical_json(model_data(manifest)).encode("utf-8")).hexdigest()


@dataclass
class Review:
    root: Path
    config: ReviewConfig | None  # None only while problems remain (a valid review always has one)
    protocol: Protocol | None = None
    searches: dict[str, SavedSearch] = field(default_factory=dict)
    search_files: dict[str, SearchFile] = field(default_factory=dict)  # by monitor id, as `searches`
    records: dict[str, Record] = field(default_factory=dict)
    record_lines: dict[str, int] = field(default_factory=dict)
    # Each record's line in records.jsonl as a digest: what the site's page keys count a record as.
    record_digests: dict[str, bytes] = field(default_factory=dict)
    records_loaded: bool = True  # False when records.jsonl could not be read: unknown-id checks are moot
    # The ids of records.jsonl's lines that name a record yet are invalid: that line's own problem says what
    # is wrong, so no other file is told the record is not there.
    invalid_record_ids: set[str] = field(default_factory=set)
    ledger: list[LedgerEvent] = field(default_factory=list)
    # Each event's payload as its typed model, or None where it has no model or is invalid.
    payloads: list[Payload | None] = field(default_factory=list)
    ledger_lines: list[int] = field(default_factory=list)  # line of each event in ledger.jsonl
    # The first line of ledger.jsonl that holds no event (not JSON, or no valid event): the chain past it
    # cannot be checked, as every later event would seem moved. None when every line was read.
    ledger_unread: int | None = None
    # The first place (a seq) holding an event numbered otherwise, or None when every event is at its place.
    # Anchors name events by place: from this one on, an anchor cannot be judged (the event it names may still
    # be there, a line higher or lower), and the chain's own problem names the line at fault.
    ledger_misplaced: int | None = None
    snapshot_bodies: set[str] = field(default_factory=set)  # sha256 of every body the snapshot index names
    # What a killed write left (journal, staged and temporary files): until `recover`, files may disagree.
    interrupted: list[str] = field(default_factory=list)
    state: ReviewState = field(default_factory=lambda: ReviewState(schema_version=STATE_SCHEMA_VERSION))
    state_read: bool = True  # False when state.json exists but could not be read: `state` then holds defaults
    state_parsed: parsing.Parsed | None = None  # state.json as read, for the line of a problem found across files
    decisions: list[DecisionRow] = field(default_factory=list)
    # Screening files that could not be read whole (not text, a bad header, a syntax error that stopped the
    # reading): the decisions they hold are unknown, so reviewers' decisions are not compared.
    decisions_unread: list[str] = field(default_factory=list)
    # Records a decision row could not be read of (its decision misspelt, say): (stage, record id) -> where.
    decisions_invalid: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    duplicates: list[DuplicateRow] = field(default_factory=list)  # duplicates.csv's rows, in file order
    validation: list[ValidationRow] = field(default_factory=list)  # validation.csv's studies, in file order
    evidence: list[EvidenceFile] = field(default_factory=list)
    versions: list[VersionFile] = field(default_factory=list)  # published versions, by number
    manifests: dict[str, ManifestFile] = field(default_factory=dict)  # search-run manifests, by path
    # Saved searches, evidence, versions and manifests whose file is there but could not be used (unreadable,
    # invalid, misnamed): that file's own problem says why, so the checks across files do not call it missing.
    invalid_files: set[str] = field(default_factory=set)

    def lacks_record(self, record_id: str) -> bool:
        """Whether records.jsonl is known to hold no record `record_id`: not when the file could not be read,
        nor when the record's line is there but invalid (its own problem is reported on that line)."""
        return self.records_loaded and record_id not in self.records and record_id not in self.invalid_record_ids

    def absent_record(self, record_id: str) -> str:
        """What a file naming `record_id`, which records.jsonl lacks, is told: and, when a record holds it as another
        of its identifiers (the PMID of a record filed under its DOI, the first of its DOI, OpenAlex, arXiv, PMID and
        PMCID), which record that is, for the file to name it by its id."""
        said = f"record {record_id!r} is not in records.jsonl"
        parsed = parse_record_id(record_id)
        holder = self._holders.get(parsed) if parsed else None
        return said + (f": it is an identifier of the record {holder!r}; name that record by its id" if holder else "")

    @functools.cached_property
    def _holders(self) -> dict[tuple[str, str], str]:
        """(namespace, identifier) -> the id of the record holding it: made only when a file names a record that
        records.jsonl lacks."""
        return {key: record.id for record in self.records.values() for key in record.identity_keys().items()}

    def lacking(self, record_ids: Iterable[str]) -> list[str]:
        """Those of `record_ids` records.jsonl is known to hold no record of (`lacks_record`), in order."""
        if not self.records_loaded:
            return []
        if not isinstance(record_ids, list | tuple):
            record_ids = list(record_ids)
        # One pass in C over the ids (a ledger's events name 800,000 at 100,000 records, nearly always every one
        # there): only the few that are not there are looked at again, in order.
        absent = set(record_ids).difference(self.records)
        absent -= self.invalid_record_ids
        return [record_id for record_id in record_ids if record_id in absent] if absent else []

    def judges_anchor(self, seq: int) -> bool:
        """Whether the ledger can tell if it holds event `seq`, as an anchor names it: every line of it was read
        (`ledger_unread`) and every event up to that place is at its place (`ledger_misplaced`). Past the line at
        fault events are not where they seem, and `living.checks.ledger_problems` names that line."""
        return self.ledger_unread is None and (self.ledger_misplaced is None or seq < self.ledger_misplaced)


def protocol_hash(text: str) -> str:
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()


def _not_a_review(root: Path) -> list[Problem]:
    """The problem `check` lists for a folder that is not a review, in the words every other command says it."""
    if (why := not_a_review(root)) is None:
        return []
    if not root.is_dir():  # shown at the folder's own path: "X: error: does not exist", not "X: error: X does not exist"
        return [Problem(".", None, None, "not-a-folder", why.removeprefix(f"{shown_path(root)} "))]
    return [Problem("review.yaml", None, None, "missing", why)]


def load_review(root: Path) -> tuple[Review | None, list[Problem]]:
    """Parse every file of the folder. Raises SchemaVersionError on an unsupported schema."""
    if refusal := _not_a_review(root):
        return None, refusal
    with cycle_collection_paused():
        return _load_all(root)


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Python's cycle collector paused while a review is read and checked.

    Reading makes millions of objects that live as long as the command (records, their authors,
    decisions) and hold no reference cycles, so the collector frees nothing then; but each of its
    passes walks every object made so far, which at 100,000 records took more time than reading them
    (and, once they are read, than deriving the screening outcomes). Reference counting still frees
    every temporary object at once. What was made is then frozen (gc.freeze): later passes of the
    collector leave it alone, and reference counting still frees it when it is no longer used."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


def _load_all(root: Path) -> tuple[Review, list[Problem]]:
    config, problems = _load_config(root)
    review = Review(root=root, config=config)
    entries = list(parsing.walk(root))  # one walk of the whole review, for links and leftovers both
    problems += _interrupted_write(root, review, entries)
    schema_problems: list[Problem] = []
    problems += _symbolic_links(entries)
    problems += _root_problems(root, entries)
    problems += _load_protocol(root, review)
    problems += _load_records(root, review)  # first: every other file names its records (`ids.found_valid`)
    problems += _load_searches(root, review, schema_problems)
    problems += _load_ledger(root, review)
    problems += _load_snapshot_index(root, review)
    problems += _load_state(root, review, schema_problems)
    problems += _load_screening(root, review)
    problems += _load_duplicates(root, review)
    problems += _load_validation(root, review)
    problems += _load_evidence(root, review)
    problems += _load_versions(root, review, schema_problems)
    problems += _load_manifests(root, review, schema_problems)
    if schema_problems:
        raise SchemaVersionError(schema_problems)
    return review, problems


def load_ledger(root: Path) -> tuple[Review | None, list[Problem]]:
    """The ledger and the files that anchor its tail (saved searches, state.json), for
    `sitegen ledger verify`, which must work whatever else is wrong: an unsupported
    schema_version here is one more problem, not a refusal."""
    if refusal := _not_a_review(root):
        return None, refusal
    review = Review(root=root, config=None)
    schema_problems: list[Problem] = []
    problems = _interrupted_write(root, review, list(parsing.walk(root))) + _load_ledger(root, review)
    problems += _load_searches(root, review, schema_problems)
    problems += _load_state(root, review, schema_problems)
    return review, problems + schema_problems


def _read(root: Path, rel: str, kind: str) -> tuple[str | None, list[Problem]]:
    return parsing.read_text(root / rel, rel, SIZE_LIMITS[kind])


def _load_config(root: Path) -> tuple[ReviewConfig | None, list[Problem]]:
    rel = "review.yaml"
    text, problems = _read(root, rel, "review.yaml")
    if text is None:
        return None, problems
    parsed, problems = parsing.parse_yaml(text, rel)
    if parsed is None or problems:
        return None, problems
    if not isinstance(parsed.data, dict):
        return None, [Problem(rel, 1, 1, "schema", "review.yaml must be a mapping of settings")]
    version = parsed.data.get("schema_version")
    if "schema_version" in parsed.data and (type(version) is not int or version != REVIEW_SCHEMA_VERSION):
        line, column = parsed.position(("schema_version",)) or (None, None)
        raise SchemaVersionError([Problem(rel, line, column, "schema-version",
                                          f"schema_version {version!r} is not supported: this sitegen reads "
                                          f"schema_version {REVIEW_SCHEMA_VERSION} (upgrade sitegen or the folder)")])
    config, problems = parsing.validate(ReviewConfig, parsed, rel)
    return config, problems


def _load_protocol(root: Path, review: Review) -> list[Problem]:
    rel = "protocol.md"
    if (root / rel).is_dir():
        return [Problem(rel, None, None, "not-a-file", "protocol.md is a folder; it must be a Markdown file")]
    text, problems = _read(root, rel, "protocol.md")
    if text is None:
        return [Problem(rel, None, None, "missing", "protocol.md is missing: every review needs a protocol")
                if p.code == "missing" else p for p in problems]
    protocol, problems = parse_protocol(text)
    review.protocol = protocol
    return problems + (_hidden_in_body(protocol, rel) if protocol else [])


def _hidden_in_body(protocol: Protocol, rel: str) -> list[Problem]:
    """A problem at each line of the protocol's Markdown that holds an invisible format character or text encoded
    twice, at its column: the reviewers' own text, under the rule their other text keeps (`hand_written`). Only the
    folder's protocol.md: versions locked on the ledger before the rule stay readable."""
    problems = []
    for number, line in enumerate(parsing.split_lines(protocol.body), start=protocol.body_line):
        if found := hidden_format(line):
            column, char = found
            problems.append(Problem(rel, number, column, "invisible-character",
                                    f"the protocol's text {hidden_format_message(char, column)}"))
        elif reference := hidden_format_reference(line):  # Markdown: the page shows "&#x202E;" as the character
            problems.append(Problem(rel, number, reference[0], "invisible-character",
                                    f"the protocol's text {hidden_format_reference_message(reference)}"))
        elif garbled := encoded_twice(line):
            problems.append(Problem(rel, number, garbled[0], "encoded-twice",
                                    f"the protocol's text {encoded_twice_message(garbled)}"))
    return problems


def exclusion_reasons(review: Review) -> dict[str, str]:
    """Every exclusion reason code -> its label, of protocol.md and of every protocol version locked before it (as
    the ledger keeps their texts): an amendment may retire a reason that decisions made earlier still give, and
    those stay named. The current protocol's labels come first."""
    current = {reason.code: reason.label for reason in review.protocol.meta.exclusion_reasons} if review.protocol \
        else {}
    return with_retired_reasons(review, current)


def with_retired_reasons(review: Review, labels: dict[str, str]) -> dict[str, str]:
    """`labels` (code -> label), and the reasons of every protocol version locked on the review's ledger that
    they lack, the latest label of each first."""
    labels = dict(labels)
    for reasons in reversed(locked_reasons(review).values()):
        for code, label in reasons.items():
            labels.setdefault(code, label)
    return labels


def locked_reasons(review: Review) -> dict[int, dict[str, str]]:
    """Each locked protocol version -> its exclusion reasons (code -> label), from its text on the ledger."""
    found: dict[int, dict[str, str]] = {}
    for payload in review.payloads:
        if isinstance(payload, ProtocolLockPayload) and payload.text:
            locked = locked_protocol(payload.text)
            found[payload.version] = {r.code: r.label for r in locked.meta.exclusion_reasons} if locked else {}
    return found


def _is_fence(line: str) -> bool:
    """Whether `line` opens or closes front matter: '---', with the blanks an editor may leave after it."""
    return line.rstrip() == "---"


def locked_protocol(text: str) -> Protocol | None:
    """A protocol version as the ledger keeps its text, read under the rules it was locked under: its reason labels and
    terms may hold an invisible format character locked before a reviewer's text refused one (`hand_written`). The
    ledger only grows: a version once locked is never unreadable. None when it cannot be read at all."""
    return parse_protocol(text, locked=True)[0]


def parse_protocol(text: str, rel: str = "protocol.md", *, locked: bool = False) -> tuple[Protocol | None, list[Problem]]:
    """protocol.md's front matter and body (for a version kept on the ledger, `locked_protocol`)."""
    lines = parsing.split_lines(text, keepends=True)
    if "\r" in text and "\n" not in text:  # as Git reads it, one line: the fences were not there to find
        return None, [parsing.lone_carriage_return(rel, 1)]
    # A byte-order mark left before the first fence (the file's own is read away; a second, from an editor that
    # added one to a file that had one, is not): the fence is still the first line's
    if not lines or not _is_fence(lines[0].lstrip("\ufeff")):
        return None, [Problem(rel, 1, 1, "front-matter",
                              "protocol.md must start with YAML front matter between '---' lines")]
    try:
        end = next(i for i in range(1, len(lines)) if _is_fence(lines[i]))
    except StopIteration:
        return None, [Problem(rel, 1, 1, "front-matter", "the front matter's closing '---' line is missing")]
    parsed, problems = parsing.parse_yaml("".join(lines[1:end]), rel, line_offset=1)
    if parsed is None or problems:
        return None, problems
    if not isinstance(parsed.data, dict):
        return None, [Problem(rel, 2, 1, "schema", "the front matter must be a mapping (version, eligibility, ...)")]
    meta, problems = parsing.validate(ProtocolMeta, parsed, rel, context=KEPT_BEFORE_THE_RULE if locked else None)
    if meta is None:
        return None, problems
    universal = text.replace("\r\n", "\n").replace("\r", "\n")
    return Protocol(meta, "".join(lines[end + 1:]), end + 2, protocol_hash(text), universal,
                    parsed.position(("version",))), problems


def _load_searches(root: Path, review: Review, schema_problems: list[Problem]) -> list[Problem]:
    problems: list[Problem] = []
    read: list[tuple[str, str, SavedSearch, parsing.Parsed]] = []  # (file name without .json, file, search, parsed)
    for path, rel in _named_files(root, "searches", ".json", SLUG_NAMES.format("searches/<monitor_id>.json"), problems):
        search, parsed, file_problems = _read_json_model(root, rel, "searches", SavedSearch, SEARCH_SCHEMA_VERSION,
                                                         "saved searches", schema_problems)
        problems += file_problems
        if search is None or parsed is None:
            review.invalid_files.add(rel)
            continue
        read.append((path.stem, rel, search, parsed))
    # Of two files holding one monitor_id, the one named after it is the saved search (the file sitegen writes):
    # files so named are taken first (a stable sort keeps the folder's order otherwise).
    read.sort(key=lambda item: item[2].monitor_id != item[0])
    for stem, rel, search, parsed in read:
        holder = review.search_files.get(search.monitor_id)
        if search.monitor_id != stem:
            line, column = parsed.position(("monitor_id",)) or (None, None)
            also = (f", and {holder.path} holds saved search {search.monitor_id!r} too: each saved search has a "
                    "monitor_id of its own, its file's name") if holder else ""
            problems.append(Problem(rel, line, column, "monitor-id", f"monitor_id {search.monitor_id!r} does not "
                                                                     f"match the file name {stem!r}{also}"))
            review.invalid_files.add(rel)
        if holder is None:
            review.searches[search.monitor_id] = search
            review.search_files[search.monitor_id] = SearchFile(rel, parsed)
    return problems


def _read_json_model(root: Path, rel: str, kind: str, model: type[M], supported: int | str, what: str,
                     schema_problems: list[Problem]) -> tuple[M | None, parsing.Parsed | None, list[Problem]]:
    """A JSON file holding one `model`, with its parsed positions; a schema_version other than `supported`
    goes to `schema_problems` (it stops the command), every other problem is returned."""
    text, problems = _read(root, rel, kind)
    parsed, parse_problems = parsing.parse_json(text, rel) if text is not None else (None, [])
    problems += parse_problems
    if parsed is None:
        return None, None, problems
    version = parsed.data.get("schema_version") if isinstance(parsed.data, dict) else None
    if isinstance(parsed.data, dict) and "schema_version" in parsed.data \
            and (type(version) is not type(supported) or version != supported):
        line, column = parsed.position(("schema_version",)) or (None, None)
        schema_problems.append(Problem(rel, line, column, "schema-version",
                                       f"schema_version {version!r} is not supported: this sitegen reads "
                                       f"{what} with schema_version {supported!r}"))
        return None, parsed, problems
    value, model_problems = parsing.validate(model, parsed, rel)
    return value, parsed, problems + model_problems


def _jsonl_rows(root: Path, rel: str) -> tuple[list[tuple[int, object]] | None, list[Problem]]:
    """(line number, value) for each line, read as a stream; None when the file cannot be read to its end."""
    if not (root / rel).exists() and not (root / rel).is_symlink():
        return [], []  # an empty review has no records and no events yet
    return parsing.read_json_lines(root / rel, rel, SIZE_LIMITS[rel])


@dataclass
class RecordsRead:
    """What reading records.jsonl gives: its valid records (each with its line and the line's digest), the
    ids of its invalid lines that name one, and its problems. It depends on the file's bytes alone, so it is
    kept between commands (`kept.kept_parse`)."""

    records: dict[str, Record] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    digests: dict[str, bytes] = field(default_factory=dict)
    invalid_ids: set[str] = field(default_factory=set)
    loaded: bool = True  # False: the file could not be read to its end, and nothing is taken from it
    problems: list[Problem] = field(default_factory=list)


def _load_records(root: Path, review: Review) -> list[Problem]:
    rel = "records.jsonl"
    if not (root / rel).exists() and not (root / rel).is_symlink():
        return []  # an empty review has no records yet
    read = kept.kept_parse("records", root / rel, kept.cache_folder(os.environ, root), lambda: read_records(root),
                           RecordsRead, SIZE_LIMITS[rel])
    review.records.update(read.records)
    review.record_lines.update(read.lines)
    review.record_digests.update(read.digests)
    review.invalid_record_ids.update(read.invalid_ids)
    review.records_loaded = read.loaded
    found_valid(read.records)
    return list(read.problems)


def read_records(root: Path) -> RecordsRead:
    """Read and validate records.jsonl, line by line (its parsed lines are never all held at once)."""
    rel = "records.jsonl"
    read = RecordsRead()
    problems: list[Problem] = []  # of lines that hold no JSON value, reported first
    unreadable: list[Problem] = []
    record_problems: list[Problem] = []
    previous = None
    fields_sets: dict[frozenset[str], set[str]] = {}
    for lineno, record, line, row_problems in parsing.model_lines(Record, root / rel, rel, SIZE_LIMITS[rel],
                                                                  problems, unreadable):
        record_problems += row_problems
        if record is None:
            read.invalid_ids.update(_named_id(line, rel, lineno))
            continue
        if record.id in read.records:
            record_problems.append(Problem(rel, lineno, None, "duplicate-record", f"record {record.id!r} already "
                                           f"appears on line {read.lines[record.id]}"))
            continue
        if previous is not None and record.id < previous:
            record_problems.append(Problem(rel, lineno, None, "order",
                                           f"record {record.id!r} is out of order: records.jsonl is sorted by id"))
        previous = record.id
        read.records[record.id] = share_fields_sets(record, fields_sets)
        read.lines[record.id] = lineno
        read.digests[record.id] = parsing.line_digest(line)
    if unreadable:  # nothing is taken from a file that cannot be read to its end
        return RecordsRead(invalid_ids=read.invalid_ids, loaded=False, problems=problems + record_problems + unreadable)
    read.problems = problems + record_problems + _version_link_problems(rel, read)
    return read


def _version_link_problems(rel: str, read: RecordsRead) -> list[Problem]:
    """Version links name records of this file, both ways."""
    problems = []
    for record in read.records.values():
        for other in record.custom.other_versions:
            if other == record.id:
                problems.append(Problem(rel, read.lines[record.id], None, "version-link",
                                        f"record {record.id!r} names itself as another version of it; "
                                        "other_versions names the other records of the same study"))
                continue
            linked = read.records.get(other)
            if linked is None or record.id not in linked.custom.other_versions:
                problems.append(Problem(rel, read.lines[record.id], None, "version-link",
                                        f"record {record.id!r} names {other!r} as another version of it, but "
                                        + ("no record has that id" if linked is None else "that record does not "
                                           "name it back")))
    return problems


def _named_id(line: str, rel: str, lineno: int) -> list[str]:
    """The id an invalid records.jsonl line gives, if it holds an object with a text id."""
    data, problems = parsing.parse_json_line(line, rel, lineno)
    record_id = data.get("id") if not problems and isinstance(data, dict) else None
    return [record_id] if isinstance(record_id, str) else []


def _load_ledger(root: Path, review: Review) -> list[Problem]:
    rel = "ledger.jsonl"
    read = kept.kept_parse("ledger", root / rel, kept.cache_folder(os.environ, root), lambda: read_ledger(root),
                           LedgerRead, SIZE_LIMITS[rel])
    review.ledger += read.events
    review.payloads += read.payloads
    review.ledger_lines += read.lines
    review.ledger_unread = read.unread
    review.ledger_misplaced = next((index + 1 for index, event in enumerate(review.ledger) if event.seq != index + 1),
                                   None)
    return list(read.problems)


def read_ledger(root: Path) -> LedgerRead:
    """Read and validate ledger.jsonl: each event and its payload."""
    rel = "ledger.jsonl"
    rows, problems = _jsonl_rows(root, rel)
    read = LedgerRead(problems=problems)
    unread = [problem.line or 1 for problem in problems if problem.code != "blank-line"]
    for lineno, value in rows or []:
        event, row_problems = parsing.validate(LedgerEvent, parsing.Parsed(value), rel, line=lineno)
        problems += row_problems
        if event is None:
            unread.append(lineno)
            continue
        payload_model = PAYLOAD_MODELS.get(event.type)
        payload = None
        if payload_model is not None:
            payload, payload_problems = parsing.validate(payload_model, parsing.Parsed(event.payload), rel, line=lineno)
            problems += [Problem(p.path, lineno, None, p.code, f"{event.type} payload: {p.message}")
                         for p in payload_problems]
        read.events.append(event)
        read.payloads.append(payload)
        read.lines.append(lineno)
    read.unread = min(unread, default=None)
    return read


@dataclass
class LedgerRead:
    """What reading ledger.jsonl gives: its valid events, each with its payload (None for a type of none, or one
    not valid) and its line, the first line that could not be read, and its problems. It depends on the file's
    bytes alone, so it is kept between commands (`kept.kept_parse`): validating the payloads' record ids (800,000
    at 100,000 records) took some 0.25 s of every command, unpickling them a fifth of that."""

    events: list[LedgerEvent] = field(default_factory=list)
    payloads: list[Payload | None] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    unread: int | None = None
    problems: list[Problem] = field(default_factory=list)

    def __getstate__(self) -> tuple:
        # The strings validation gives of its own (a Literal's, a default) are pickled as references to them, and
        # unpickled as the same objects: page keys are written by pickle, which sees which values are one object
        # (`_DECISION_VALUES`). Every other value is unpickled as pickle makes it, in C.
        constants = {id(each): index for index, each in enumerate(_ledger_constants())}
        written = io.BytesIO()
        pickler = pickle.Pickler(written, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.persistent_id = lambda value: constants.get(id(value)) if type(value) is str else None
        pickler.dump((self.events, self.payloads))
        return written.getvalue(), self.lines, self.unread, self.problems

    def __setstate__(self, state: tuple) -> None:
        models, self.lines, self.unread, self.problems = state
        unpickler = pickle.Unpickler(io.BytesIO(models))
        unpickler.persistent_load = _ledger_constants().__getitem__
        self.events, self.payloads = unpickler.load()


@cache
def _ledger_constants() -> tuple[str, ...]:
    """Every string validating a ledger event or payload may give of its own rather than take from what it reads:
    the values of the Literals its models (and theirs) name, and their fields' defaults; each object once, in an
    order that sitegen's code alone sets (a kept parse is named by that code)."""
    found: dict[int, str] = {}
    models: set[type] = set()

    def annotation(hint: object) -> None:
        if isinstance(hint, type) and issubclass(hint, BaseModel):
            model(hint)
            return
        if get_origin(hint) is Literal:
            found.update((id(value), value) for value in get_args(hint) if type(value) is str)
        for argument in get_args(hint):
            annotation(argument)

    def model(cls: type[BaseModel]) -> None:
        if cls in models:
            return
        models.add(cls)
        for info in cls.model_fields.values():
            if type(info.default) is str:
                found.setdefault(id(info.default), info.default)
            annotation(info.annotation)

    for each in (LedgerEvent, *PAYLOAD_MODELS.values()):
        model(each)
    return tuple(found.values())


def _load_state(root: Path, review: Review, schema_problems: list[Problem]) -> list[Problem]:
    rel = "state.json"
    if not (root / rel).exists() and not (root / rel).is_symlink():
        return []  # no setting changed yet: the defaults apply
    review.state_read = False  # until it is read and valid: its defaults are then no statement of the file's
    text, problems = _read(root, rel, rel)
    parsed, parse_problems = parsing.parse_json(text, rel) if text is not None else (None, [])
    problems += parse_problems
    if parsed is None:
        return problems
    version = parsed.data.get("schema_version") if isinstance(parsed.data, dict) else None
    # A missing schema_version is a missing field (the model says so, exit 1), as in every other file.
    if isinstance(parsed.data, dict) and "schema_version" in parsed.data \
            and (type(version) is not int or version != STATE_SCHEMA_VERSION):
        line, column = parsed.position(("schema_version",)) or (None, None)
        schema_problems.append(Problem(rel, line, column, "schema-version",
                                       f"schema_version {version!r} is not supported: this sitegen reads "
                                       f"state.json with schema_version {STATE_SCHEMA_VERSION}"))
        return problems
    state, model_problems = parsing.validate(ReviewState, parsed, rel)
    if state is not None:
        review.state, review.state_read, review.state_parsed = state, True, parsed
    return problems + model_problems


def _load_snapshot_index(root: Path, review: Review) -> list[Problem]:
    rel = "snapshots/index.jsonl"
    if (root / "snapshots").is_symlink():
        return []  # `_symbolic_links` reports the link; nothing is read through it
    rows, problems = _jsonl_rows(root, rel)
    recorded: dict[tuple[str, str, int], tuple[SnapshotEntry, int]] = {}  # each request of a run: its first line
    for lineno, value in rows or []:
        entry, row_problems = parsing.validate(SnapshotEntry, parsing.Parsed(value), rel, line=lineno)
        problems += row_problems
        if entry is None:
            continue
        earlier, line = recorded.setdefault((entry.fingerprint, entry.session, entry.occurrence), (entry, lineno))
        if again := recorded_again(entry, earlier if line != lineno else None, line):
            problems.append(Problem(rel, lineno, None, "duplicate-snapshot", again))
        if entry.sha256 is None:
            continue
        if not (root / "snapshots" / entry.sha256[:2] / entry.sha256).is_file():
            problems.append(Problem(rel, lineno, None, "missing-snapshot",
                                    f"the recorded body {entry.sha256} is missing from snapshots/"))
        review.snapshot_bodies.add(entry.sha256)
    return problems


def _decided_id(row: parsing.CsvRow) -> str:
    """The record a decision row that could not be read decides: its record id, or the one it writes in another form
    (https://doi.org/10.…): that record's other decisions depend on this row's."""
    written = row.values.get("record_id", "")
    return meant_record_id(written) or written


def _load_screening(root: Path, review: Review) -> list[Problem]:
    cache = kept.cache_folder(os.environ, root)
    problems = _hidden_problems(root, "screening", lambda name: name in STAGES or name.endswith(".csv"),
                                f"folders here are named screening/<stage> ({' or '.join(STAGES)})")
    for stage_dir in _files(root / "screening", directories=True):
        rel_dir = f"screening/{stage_dir.name}"
        if stage_dir.name in STAGES and not stage_dir.is_dir():
            problems.append(Problem(rel_dir, None, None, "not-a-folder", f"{rel_dir} must be a folder of reviewers' "
                                    "decision files; it is a file, so no decision of the stage is read"))
            continue
        if is_readme(stage_dir):
            continue
        if stage_dir.name not in STAGES and not stage_dir.is_dir():
            # Most often a reviewer's decision file put one folder too high: say where it goes, not that it is
            # a stage nobody knows.
            problems.append(Problem(rel_dir, None, None, "unknown-stage",
                                    f"a file here is not read: decisions go in a stage's folder, "
                                    f"{' or '.join(f'screening/{stage}/' for stage in STAGES)}"))
            continue
        if stage_dir.name not in STAGES:
            problems.append(Problem(rel_dir, None, None, "unknown-stage",
                                    f"unknown screening stage {stage_dir.name!r} (expected {' or '.join(STAGES)})"))
            continue
        before = len(problems)
        for path, rel in _named_files(root, rel_dir, ".csv", SLUG_NAMES.format("screening/<stage>/<reviewer>.csv"), problems):
            if meant_as_adjudication(path.stem):
                problems.append(Problem(rel, None, None, "misnamed",
                                        f"{path.name!r} is not read: adjudications go in {rel_dir}/{ADJUDICATION}.csv, "
                                        "and any other file here is a reviewer's, whose decisions would be counted "
                                        "as one more reviewer's, settling no conflict; rename it"))
                review.decisions_unread.append(rel)
                continue
            read = kept.kept_parse("decisions", path, cache, functools.partial(read_decisions, root, rel),
                                   DecisionsRead, SIZE_LIMITS["screening"], rel=rel, kept=DECISION_FILES_KEPT)
            problems += read.problems
            if read.unread:
                review.decisions_unread.append(rel)
            stage, reviewer = stage_dir.name, path.stem
            review.decisions += (DecisionRow(stage, reviewer, rel, line, columns, decision)
                                 for line, columns, decision in read.rows)
            review.decisions_invalid.update({(stage, decided): (rel, line) for decided, line in read.invalid})
        # A file here not named as a decision file is not read (a reviewer's saved as Reviewer-A.csv, or by a
        # browser as 'reviewer-a (1).csv'): the decisions it may hold are unknown, as an unreadable file's are.
        review.decisions_unread += [problem.path for problem in problems[before:]
                                    if problem.code in UNREAD_ENTRY and problem.path.startswith(f"{rel_dir}/")]
    return problems


# Decision files' parses kept (`kept.kept_parse`): a few reviews (or branches of one), each of two stages' reviewers
# and adjudication. A review of more files than this re-reads some of them on each command, as with none kept.
DECISION_FILES_KEPT = 8 * kept.PARSES_KEPT


@dataclass
class DecisionsRead:
    """What reading one decision file gives: its valid rows (line, columns, decision), the rows that could not be
    read (the record each decides, and its line), whether its decisions are unread (the file could not be read,
    its header or CSV is broken, or it has too many problems to be read to its end) and its problems. It depends
    on the file's bytes and its path in the review alone (its problems name the path), so it is kept between
    commands (`kept.kept_parse`): as plain values, which unpickle several times faster than the 211,000 decisions
    of a review of 100,000 records are read and validated (`__getstate__`)."""

    rows: list[tuple[int, Mapping[str, int], Decision]] = field(default_factory=list)
    invalid: list[tuple[str, int]] = field(default_factory=list)
    unread: bool = False
    problems: list[Problem] = field(default_factory=list)

    def __getstate__(self) -> tuple:
        lines = [line for line, _, _ in self.rows]
        return (self.invalid, self.unread, self.problems, lines, parsing.columns_kept([row[1] for row in self.rows]),
                [(decision.record_id, decision.decision, decision.reason, decision.note) for _, _, decision in self.rows])

    def __setstate__(self, state: tuple) -> None:
        self.invalid, self.unread, self.problems, lines, columns, decisions = state
        self.rows = list(zip(lines, parsing.columns_of_kept(columns), _decisions_as_read(decisions), strict=True))


# What validating a decision gives as its value: the Literal's own string (one object, as the same word in sitegen's
# code is), never the text read. A page key is written by pickle, which writes an object met again as a reference
# to the first: a decision unpickled as a string of its own would give the pages that show it other keys.
_DECISION_VALUES = {value: value for value in get_args(Decision.__pydantic_fields__["decision"].annotation)}


def _decisions_as_read(decisions: list[tuple[str, str, str, str]]) -> Iterator[Decision]:
    """The decisions whose fields these are, as validated when their file was read: set as unpickling each sets
    them (the frozen dataclass's `__setstate__`), without asking for the class's fields again at each of 211,000."""
    new, put, values = object.__new__, object.__setattr__, _DECISION_VALUES
    for decided, value, reason, note in decisions:
        decision = new(Decision)
        put(decision, "record_id", decided)
        put(decision, "decision", values[value])
        put(decision, "reason", reason)
        put(decision, "note", note)
        yield decision


def read_decisions(root: Path, rel: str) -> DecisionsRead:
    """Read and validate one decision file, screening/<stage>/<reviewer>.csv."""
    text, problems = _read(root, rel, "screening")
    if text is None:
        return DecisionsRead(unread=True, problems=problems)
    rows, csv_problems = parsing.parse_csv(text, rel, DECISION_COLUMNS, {"record_id", "decision"}, Decision)
    problems += csv_problems
    unread = any(problem.code in ("csv-header", "csv-syntax") for problem in csv_problems)
    valid = list(_validated_rows(rows, Decision, rel, problems))
    invalid = []
    if len(valid) < len(rows):
        read = {id(row) for row, _ in valid}
        invalid = [(_decided_id(row), row.line) for row in rows if id(row) not in read]
    # read in part: the checks across files would be false
    unread = unread or any(problem.code == "too-many-problems" and problem.path == rel for problem in problems)
    return DecisionsRead([(row.line, row.columns, decision) for row, decision in valid], invalid, unread, problems)


def meant_as_adjudication(reviewer: str) -> bool:
    """Whether a decision file named for `reviewer` is meant as the adjudication file (adjudications.csv,
    adjudicator.csv, adjudication-final.csv): read as a reviewer's, its rows would make every conflict it settles one
    reviewer wider, and every record it decides alone seem decided by one more reviewer."""
    return reviewer != ADJUDICATION and "adjudic" in reviewer


# What `_named_files` calls an entry of a folder it does not read.
UNREAD_ENTRY = frozenset({"unexpected-file", "unexpected-folder", "hidden-file"})


def _validated_rows(rows: list[parsing.CsvRow], model: type[Row], rel: str,
                    problems: list[Problem]) -> Iterator[tuple[parsing.CsvRow, Row]]:
    """Each CSV row with its value as `model`, problems added with their line and column (at most
    MAX_PROBLEMS_PER_FILE of them: then the rest of the file is not read)."""
    found = 0
    for start in range(0, len(rows), ROWS_AT_ONCE):
        part = rows[start:start + ROWS_AT_ONCE]
        cells = [row.values for row in part]
        try:  # many rows in one call: a call per row cost twice as much
            valid = _rows_of(model).validate_python(cells)
        except ValidationError:  # each row validated again, where each error is placed: only a bad file pays for it
            valid = None
        if valid is not None:
            yield from zip(part, valid, strict=True)
            continue
        for row, values in zip(part, cells, strict=True):
            if found >= parsing.MAX_PROBLEMS_PER_FILE:
                problems.append(parsing.stopped(rel, row.line))
                return
            value, row_problems = parsing.validate(
                model, parsing.Parsed(values, {(name,): (row.line, col) for name, col in row.columns.items()}),
                rel, line=row.line)
            problems += row_problems
            found += len(row_problems)
            if value is not None:
                yield row, value


# Rows validated in one call: a file of a million bad rows must not have a million errors made at once.
ROWS_AT_ONCE = 10_000


@cache
def _rows_of(model: type[Row]) -> TypeAdapter[list[Row]]:
    return TypeAdapter(list[model])


def _optional_csv(root: Path, rel: str, columns: list[str], required: set[str],
                  model: type) -> tuple[list, list[Problem]]:
    """The rows of an optional CSV file of the review (none when it is absent), and its problems."""
    if not (root / rel).exists() and not (root / rel).is_symlink():
        return [], []
    text, problems = _read(root, rel, rel)
    if text is None:
        return [], problems
    rows, csv_problems = parsing.parse_csv(text, rel, columns, required, model)
    return rows, problems + csv_problems


def _load_duplicates(root: Path, review: Review) -> list[Problem]:
    """duplicates.csv, the reviewers' decisions on probable duplicates: optional (absent, none decided)."""
    rel = "duplicates.csv"
    rows, problems = _optional_csv(root, rel, DUPLICATE_COLUMNS, {"record_id", "duplicate_of", "decision", "reviewer"},
                                   DuplicateDecision)
    for row, decision in _validated_rows(rows, DuplicateDecision, rel, problems):
        review.duplicates.append(DuplicateRow(rel, row.line, row.columns, decision))
    return problems


def _load_validation(root: Path, review: Review) -> list[Problem]:
    """validation.csv, the studies the protocol names as known to be relevant: optional (absent, the included
    studies alone are the known-relevant set)."""
    rel = "validation.csv"
    rows, problems = _optional_csv(root, rel, VALIDATION_COLUMNS, {"record_id"}, ValidationStudy)
    if not rows:
        return problems  # (the table below costs a pass over every record)
    # A record carrying several identifiers is one study however a row names it (DOI, PMID, PMCID, …).
    record_of = {record_id({namespace: value}) or record.id: record.id
                 for record in review.records.values() for namespace, value in record.identity_keys().items()}
    lines: dict[str, int] = {}
    for row, study in _validated_rows(rows, ValidationStudy, rel, problems):
        record = record_of.get(study.record_id, study.record_id)
        if record in lines:
            also = "" if record == study.record_id else f" (as record {record!r})"
            problems.append(Problem(rel, row.line, row.columns.get("record_id"), "duplicate-study",
                                    f"study {study.record_id!r}{also} is already listed on line {lines[record]}"))
            continue
        lines[record] = row.line
        review.validation.append(ValidationRow(rel, row.line, study))
    return problems


def _load_evidence(root: Path, review: Review) -> list[Problem]:
    listing: list[Problem] = []  # of the folder's other entries: each in its place among the files' problems
    files = [(path, rel, len(listing)) for path, rel in _named_files(
        root, "evidence", ".yaml", SLUG_NAMES.format("evidence/<study>.yaml"), listing)]
    reads = kept.kept_parses("evidence", [(rel, path) for path, rel, _ in files], kept.cache_folder(os.environ, root),
                             functools.partial(read_evidence, root), SIZE_LIMITS["evidence"])
    problems: list[Problem] = []
    placed = 0  # of `listing`'s problems
    for path, rel, listed_before in files:
        problems += listing[placed:listed_before]
        placed = listed_before
        parsed, read_problems = reads[rel]
        problems += read_problems
        evidence, model_problems = parsing.validate(Evidence, parsed, rel) if parsed is not None else (None, [])
        problems += model_problems
        if evidence is None or parsed is None:
            review.invalid_files.add(rel)
        else:
            review.evidence.append(EvidenceFile(path.stem, rel, evidence, parsed))
    return problems + listing[placed:]


def read_evidence(root: Path, rel: str) -> tuple[parsing.Parsed | None, list[Problem]]:
    """One evidence file read and parsed, before its model is validated: its parse (None when it holds no mapping
    to validate) and the problems of reading it. It depends on the file's bytes and its path in the review alone,
    so it is kept between commands (`kept.kept_parses`); the model is validated from it on each command, so what
    validation gives (a Literal's own string) is one object wherever it is, as in a fresh read (page keys are
    written by pickle, which sees that: `_DECISION_VALUES`)."""
    text, problems = _read(root, rel, "evidence")
    parsed, parse_problems = parsing.parse_yaml(text, rel) if text is not None else (None, [])
    if parsed is not None and not parse_problems and not isinstance(parsed.data, dict):  # empty, or a list
        parse_problems = [Problem(rel, 1, 1, "schema", f"{rel} must be a mapping of record_id and findings")]
    return (parsed if not parse_problems else None), problems + parse_problems


def _field_problem(rel: str, parsed: parsing.Parsed, field: str, code: str, message: str) -> Problem:
    """A problem placed at the line and column of one top-level field of a parsed file."""
    line, column = parsed.position((field,)) or (None, None)
    return Problem(rel, line, column, code, message)


def _json_models(root: Path, folder: str, name: re.Pattern[str], explanation: str, model: type[M],
                 supported: int | str, what: str, problems: list[Problem], schema_problems: list[Problem],
                 invalid_files: set[str]) -> Iterator[tuple[Path, str, M, parsing.Parsed]]:
    """Each well-named JSON file of `folder` that holds a valid `model`, with its parsed positions;
    every problem met on the way goes to `problems` (a schema_version problem to `schema_problems`), the
    name of each file that holds none to `invalid_files`."""
    for path, rel in _named_files(root, folder, name, explanation, problems):
        value, parsed, file_problems = _read_json_model(root, rel, folder, model, supported, what, schema_problems)
        problems += file_problems
        if value is not None and parsed is not None:
            yield path, rel, value, parsed
        else:
            invalid_files.add(rel)


VERSION_NAME = re.compile(r"[1-9][0-9]{0,8}\.json")
SLUG_NAMES = "files here are named {} (lower-case letters, digits and '-')"


def _load_versions(root: Path, review: Review, schema_problems: list[Problem]) -> list[Problem]:
    found = []
    problems: list[Problem] = []
    for path, rel, record, parsed in _json_models(
            root, "versions", VERSION_NAME, "files here are named versions/<number>.json (1.json, 2.json, …), one per "
            "published version", VersionRecord, VERSION_SCHEMA_VERSION, "versions", problems, schema_problems,
            review.invalid_files):
        if record.number != int(path.stem):
            problems.append(_field_problem(rel, parsed, "number", "version-number",
                                    f"number {record.number} does not match the file name {path.name!r}: a "
                                    "version's file is versions/<its number>.json"))
            review.invalid_files.add(rel)
            continue
        found.append(VersionFile(rel, record, parsed))
    review.versions = sorted(found, key=lambda item: item.version.number)
    return problems


def manifest_path(at: str, monitor_id: str) -> str:
    """runs/<time>-<monitor_id>.json for the run at `at`: the time in UTC, in ISO 8601's basic form
    (no ':' for file systems and addresses), so runs sort by time and no two runs share a name."""
    when = parse_timestamp(at).astimezone(UTC)
    fraction = f".{when.microsecond:06d}".rstrip("0") if when.microsecond else ""
    return f"runs/{when:%Y%m%dT%H%M%S}{fraction}Z-{monitor_id}.json"


MANIFEST_NAME = re.compile(r"\d{8}T\d{6}(?:\.\d{1,6})?Z-[a-z0-9][a-z0-9-]{0,79}\.json")


def _load_manifests(root: Path, review: Review, schema_problems: list[Problem]) -> list[Problem]:
    """Each file of runs/ as a manifest; `living.manifests` checks them against the ledger."""
    problems: list[Problem] = []
    for _path, rel, manifest, parsed in _json_models(
            root, "runs", MANIFEST_NAME, "files here are run manifests named runs/<UTC time>-<monitor_id>.json "
            "(e.g. 20260601T060000Z-my-search.json), written by `sitegen update`", RunManifest,
            RUN_MANIFEST_SCHEMA_VERSION, "run manifests", problems, schema_problems, review.invalid_files):
        if parsed.source is None:
            continue
        if manifest.origin != "run":
            problems.append(_field_problem(rel, parsed, "origin", "manifest-origin",
                                    "runs/ holds only manifests written by their runs (origin: run); one derived "
                                    "from the ledger belongs on the site, not in the review"))
            review.invalid_files.add(rel)
            continue
        if manifest_path(manifest.at, manifest.monitor_id) != rel:
            line, column = parsed.position(("at",)) or (None, None)
            problems.append(Problem(rel, line, column, "manifest-name",
                                    f"the manifest of saved search {manifest.monitor_id!r} at {manifest.at} is named "
                                    f"{manifest_path(manifest.at, manifest.monitor_id)}, not {rel}"))
            review.invalid_files.add(rel)
            continue
        review.manifests[rel] = ManifestFile(rel, manifest, parsed, parsed.source.encode("utf-8"))
    return problems


# What a review folder holds at its top, as sitegen reads it. Anything else there is the user's own (a README, a
# LICENSE, the repository's .github when the review is its root) and left alone, but for a near miss of these.
REVIEW_FOLDERS = ("evidence", "runs", "screening", "searches", "snapshots", "versions")
REVIEW_FILES = ("duplicates.csv", "ledger.jsonl", "protocol.md", "records.jsonl", "review.yaml", "state.json",
                "validation.csv")


def _root_problems(root: Path, entries: list[tuple[str, os.DirEntry]]) -> list[Problem]:
    """A folder of the review that is a file, and an entry named almost as one of the review's own (another case,
    a plural, .yml): sitegen reads neither, so decisions or evidence in them would count for nothing without a
    word, and a site be published without them. `entries`: the walk of the review (`parsing.walk`)."""
    problems = []
    top = sorted((entry.name, entry.is_dir()) for rel, entry in entries if "/" not in rel
                 and not entry.name.startswith(".") and not entry.is_symlink())  # links: `_symbolic_links`
    names = {name for name, _ in top}
    for name, is_folder in top:
        if name in REVIEW_FOLDERS and not is_folder:
            problems.append(Problem(name, None, None, "not-a-folder",
                                    f"{name} must be a folder; it is a file, so nothing of the review's {name} is read"))
        elif name not in REVIEW_FOLDERS + REVIEW_FILES and (meant := meant_entry(name, is_folder)) \
                and not _is_the_same(root / name, root / meant):  # a disk that ignores case reads Screening so
            also = f" (beside {meant}, which is read)" if meant in names else ""
            problems.append(Problem(name, None, None, "misnamed",
                                    f"{name!r} is not read: sitegen reads {meant!r}{also}; rename it, or move it out "
                                    "of the review folder if it is not the review's"))
    return problems


# What a browser or a file manager adds to the name of a copy ("duplicates (1).csv", "duplicates - Copy.csv",
# "duplicates copy 2.csv", "duplicates 2.csv").
_COPY_MARK = re.compile(r"(?:\s*\(\d+\)|\s*-?\s*copy(?:\s*\(?\d+\)?)?|\s+\d+)$")
# The endings a review's file is given when saved from another program, beyond .yml for .yaml: a spreadsheet's own
# formats and Excel's "Unicode Text" (.txt) for a CSV file; a text editor's .txt after any name (review.yaml.txt).
_SAVED_AS = {"csv": ("tsv", "txt", "xlsx", "xls", "ods", "numbers"), "yaml": ("yml",)}


def meant_entry(name: str, is_folder: bool) -> str | None:
    """The review's own entry a folder or file `name` is a near miss of, being of its kind: the same but for case,
    blanks, a plural (search, evidences), a copy's mark, or an ending another program saves it with (.yml, .txt,
    .xlsx). (A repository's own VERSION file or run script, the review its root, is no folder: no near miss of
    versions/ or runs/; a protocol.pdf is no near miss of protocol.md.)"""
    def parts(written: str) -> tuple[set[str], str]:
        base, _, suffix = written.casefold().partition(".")
        base = _COPY_MARK.sub("", base.strip()).strip()
        return {base, base.removesuffix("s"), base.removesuffix("es")}, \
            suffix.removesuffix(".txt") if "." in suffix else suffix
    bases, suffix = parts(name)
    for meant in REVIEW_FOLDERS if is_folder else REVIEW_FILES:
        its_bases, its_suffix = parts(meant)
        if bases & its_bases and suffix in (its_suffix, *_SAVED_AS.get(its_suffix, ())):
            return meant
    return None


def _is_the_same(path: Path, other: Path) -> bool:
    try:
        return path.samefile(other)
    except OSError:
        return False


def _symbolic_links(entries: list[tuple[str, os.DirEntry]]) -> list[Problem]:
    """Every symbolic link in the review, file or folder, at any depth (snapshot bodies included)."""
    return sorted(parsing.symlink_problem(rel) for rel, entry in entries if entry.is_symlink())


def _interrupted_write(root: Path, review: Review, entries: list[tuple[str, os.DirEntry]]) -> list[Problem]:
    """One problem for whatever a killed sitegen process left behind, saying how to finish it
    (files may disagree until then), instead of one puzzling problem per leftover file."""
    leftovers = review.interrupted = interrupted(root, entries)
    if not leftovers:
        return []
    return [Problem(leftovers[0], None, None, "interrupted",
                    f"an interrupted write was found ({listed(leftovers, 3)}); run `sitegen recover {shown_argument(root)}` to finish it "
                    "(writing commands and `sitegen build` finish it themselves)")]


# A note on what a folder holds, for the people editing it (README.md, readme.txt): never read.
README = re.compile(r"readme(?:\.(?:md|markdown|txt|rst))?", re.IGNORECASE)


def is_readme(path: Path) -> bool:
    return bool(README.fullmatch(path.name)) and path.is_file()


def _named_files(root: Path, folder: str, name: re.Pattern[str] | str, explanation: str,
                 problems: list[Problem]) -> Iterator[tuple[Path, str]]:
    """The files of `folder` whose name matches `name` (a regex, or a suffix after a slug);
    any other file or folder is reported as a problem, with `explanation` saying how files are named."""
    pattern = re.compile(f"(?:{SLUG.strip('^$')}){re.escape(name)}") if isinstance(name, str) else name
    problems += _hidden_problems(root, folder, lambda found: bool(pattern.fullmatch(found)), explanation)
    for path in _files(root / folder, directories=True):
        rel = f"{folder}/{path.name}"
        if path.name.endswith(STAGED):
            continue  # an interrupted write's staged file: `_interrupted_write` reports it
        if is_readme(path):
            continue
        if path.is_dir():
            problems.append(Problem(rel, None, None, "unexpected-folder",
                                    f"folders are not read here; {explanation}"))
        elif pattern.fullmatch(path.name):
            yield path, rel
        else:
            problems.append(Problem(rel, None, None, "unexpected-file", explanation))


# Hidden folders tools keep beside the files they edit (JupyterLab's checkpoints hold copies named as the files).
TOOLS_FOLDERS = frozenset({".ipynb_checkpoints", ".git", ".idea", ".vscode", ".Trash", ".Trashes"})


def _hidden_problems(root: Path, folder: str, named: Callable[[str], bool], explanation: str) -> list[Problem]:
    """A problem for each hidden entry of `folder` that looks meant to count: a file that, but for its leading
    dot, is named as the folder's files are (`named`: a decision file renamed .reviewer-a.csv), or a hidden
    folder holding such files (evidence moved into .old/). Nothing hidden is read, so it would count for
    nothing without a word; an editor's lock or swap file (.~lock.a.csv#, .a.csv.swp) is named otherwise."""
    directory = root / folder
    if not directory.is_dir() or directory.is_symlink():
        return []
    problems = []
    for path in sorted(directory.iterdir()):
        if not path.name.startswith(".") or path.is_symlink() or path.name in TOOLS_FOLDERS:
            continue
        if path.is_dir():
            try:
                meant = any(named(inner.name) for inner in path.iterdir())
            except OSError:
                meant = False
        else:
            meant = named(path.name.lstrip("."))
        if meant:
            problems.append(Problem(f"{folder}/{path.name}", None, None, "hidden-file",
                                    f"a hidden {'folder' if path.is_dir() else 'file'} is not read, so what it "
                                    f"holds does not count; rename it or remove it ({explanation})"))
    return problems


def _files(directory: Path, *, directories: bool = False) -> list[Path]:
    """Entries of a folder in a stable order, hidden files and links skipped (`_symbolic_links` reports links)."""
    if not directory.is_dir() or directory.is_symlink():
        return []
    entries = sorted(p for p in directory.iterdir() if not p.name.startswith(".") and not p.is_symlink())
    return [p for p in entries if directories or not p.is_dir()]


