"""Search-run manifests: what each run of a saved search did, written once by the run itself.

`sitegen update` writes one manifest per saved search it runs, in the run's own
transaction, to runs/<UTC time>-<monitor_id>.json: the saved strategies verbatim,
the queries and requests as sent (never a credential or contact address), each
source's outcome, the run's counts, the snapshots its answers rest on, and the
sitegen version. Every retrieval event of the run names the manifest's SHA-256,
so the hash-chained ledger vouches for the file: `check` reports one that was
edited, is missing, or belongs to no run. A manifest is never rewritten.

Runs recorded before sitegen wrote manifests have none; for them the site shows
a manifest derived from the ledger (`origin: ledger`), which says so and holds
only what the ledger knows.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sitegen import __version__
from sitegen.errors import shown_path
from sitegen.living.facts import ReviewFacts, Run
from sitegen.records.citations import parse_citation_query
from sitegen.records.model import model_data
from sitegen.review.folder import ManifestFile, Review, manifest_path
from sitegen.review.models import (
    RUN_MANIFEST_SCHEMA_VERSION,
    BatchPayload,
    RetrievalPayload,
    RunCounts,
    RunManifest,
    RunSource,
    SavedSearch,
    Strategy,
    parse_timestamp,
)
from sitegen.review.problems import Problem
from sitegen.review.write import pretty_json
from sitegen.sources.query import QuerySyntaxError, UnsupportedQuery, provider_query
from sitegen.text import counted

LEDGER = "ledger.jsonl"
# What only the run itself knows; everything else in a manifest is checked against the ledger.
RUN_ONLY = frozenset({"schema_version", "origin", "sitegen_version", "snapshots"})
RUN_ONLY_PER_SOURCE = frozenset({"syntax", "provider_query", "requests", "status"})


def compiled_query(strategy: Strategy) -> str | dict[str, str] | None:
    """The query the strategy's provider receives (sitegen's grammar compiled, a native one as saved): its
    text, or its query parameters by name; None when the provider cannot express it. A citation search's is
    its mode and its seeds as OpenAlex is asked for them."""
    if strategy.method == "citations":
        return parse_citation_query(strategy.query).sent
    try:
        return provider_query(strategy.source, strategy.query, native=strategy.syntax == "native")
    except (QuerySyntaxError, UnsupportedQuery):
        return None



@dataclass(frozen=True)
class LastRun:
    """When a strategy last ran, its query as that run sent it and whether its source answered in full (the
    ledger's record of it)."""

    at: str
    query: str
    complete: bool
    # The label it ran under: another than the saved strategy's when the strategy was renamed since (`renamed`).
    label: str | None = None


RunKey = tuple[str, str | None, str | None]


def run_key(source: str, label: str | None, query: str) -> RunKey:
    """How one strategy's runs are known from run to run: by its source and label (its query may have been edited
    since, which the site says), or without a label by its query (two strategies of one source may have none)."""
    return source, label, None if label else query


def asks(source: str, query: str) -> tuple[str, str]:
    """What a strategy asks, whatever its label: its source and text. A saved search holds no two strategies asking
    the same (`strategy_repeats`), so a strategy of the search's last run that no saved one is known by exactly, asking
    what a saved one no run is known by exactly asks, is that strategy renamed (its label alone changed), and its
    history is the saved one's, even when its new label is one another strategy had."""
    return source, query


def strategy_runs(review: Review, search: SavedSearch) -> list[LastRun | None]:
    """The latest run of each strategy of `search`, in order (None: not run yet). A strategy is known by its run key
    when that run searched its text; else by the run of the search's last run that searched its source and text under
    another label (`asks`): it was renamed since, and the text decides, so two strategies that swapped labels keep each
    its own history. Else a labelled one by the run of its label not claimed so: edited since. An unlabelled one whose
    query was edited since, by its source when it is that source's one unlabelled strategy: its latest unlabelled run."""
    ran = last_runs(review, search.monitor_id)
    keys = [run_key(strategy.source, strategy.label, strategy.query) for strategy in search.strategies]
    exact = [key in ran and ran[key].query == strategy.query for strategy, key in zip(search.strategies, keys, strict=True)]
    taken = {key for key, known_so in zip(keys, exact, strict=True) if known_so}
    last = max((parse_timestamp(run.at) for run in ran.values()), default=None)
    asked = {asks(key[0], run.query): key for key, run in ran.items()
             if parse_timestamp(run.at) == last and key not in taken}
    by_text = {index: asked[asks(strategy.source, strategy.query)] for index, strategy in enumerate(search.strategies)
               if not exact[index] and asks(strategy.source, strategy.query) in asked}
    claimed = set(by_text.values())  # a run its text claims is that strategy's, not one's that bears its label now
    found = [ran[key] if exact[index] else ran[by_text[index]] if index in by_text
             else None if key in claimed else ran.get(key) for index, key in enumerate(keys)]
    known = {run_key(strategy.source, run.label, run.query)
             for strategy, run in zip(search.strategies, found, strict=True) if run is not None}
    unlabelled = Counter(strategy.source for strategy in search.strategies if not strategy.label)
    for index, strategy in enumerate(search.strategies):
        if found[index] is None and not strategy.label and unlabelled[strategy.source] == 1:  # edited since
            runs = [ran[key] for key in ran if key[0] == strategy.source and key[1] is None and key not in known]
            found[index] = max(runs, key=lambda run: parse_timestamp(run.at), default=None)
    return found


@dataclass(frozen=True)
class RemovedStrategy:
    """A strategy the search's last run searched that its saved file no longer holds (deleted by hand since): the
    ledger's record of that run of it."""

    source: str
    label: str | None
    query: str
    at: str


def removed_strategies(review: Review, search: SavedSearch, runs: list[LastRun | None]) -> list[RemovedStrategy]:
    """The strategies the search's last run searched (its retrieval events: the ledger's, never a stored copy) that
    none of its saved strategies is known by now (`runs`: `strategy_runs(review, search)`, which the caller holds
    already), in that run's order."""
    retrievals = [(event.ts, payload) for event, payload in zip(review.ledger, review.payloads, strict=True)
                  if isinstance(payload, RetrievalPayload) and payload.monitor_id == search.monitor_id]
    if not retrievals:
        return []
    # One run's events share its time; the latest time is the last run (whatever `last_run` was edited to).
    last = max(parse_timestamp(ts) for ts, _ in retrievals)
    # A saved strategy is known by the run `strategy_runs` found for it, under that run's own key: an edited
    # unlabelled one by the query that run searched, a renamed one by the label it had.
    kept = {run_key(strategy.source, run.label, run.query)
            for strategy, run in zip(search.strategies, runs, strict=True) if run is not None}
    return [RemovedStrategy(payload.source, payload.label, payload.query, ts) for ts, payload in retrievals
            if parse_timestamp(ts) == last and run_key(payload.source, payload.label, payload.query) not in kept]


def last_runs(review: Review, monitor_id: str) -> dict[RunKey, LastRun]:
    """`run_key` -> the latest run of each strategy of the saved search, as the ledger recorded it."""
    return {run_key(payload.source, payload.label, payload.query): LastRun(event.ts, payload.query, payload.complete,
                                                                           payload.label)
            for event, payload in zip(review.ledger, review.payloads, strict=True)
            if isinstance(payload, RetrievalPayload) and payload.monitor_id == monitor_id}

@dataclass(frozen=True)
class Execution:
    """What only the run knows about one strategy: how it was read, what was sent, what came back."""

    syntax: str
    provider_query: str | dict[str, str] | None
    requests: list[str]
    status: str


def run_manifest(monitor_id: str, at: str, retrievals: Sequence[RetrievalPayload], batch: BatchPayload | None,
                 executions: Sequence[Execution] | None = None, snapshots: str | None = None) -> RunManifest:
    """The manifest of one run, from its retrieval events (one per strategy, in order) and its batch.

    With `executions` (one per strategy) it is the run's own manifest; without, the one the ledger
    alone supports, for runs recorded before manifests existed and for checking a recorded one.
    """
    in_batch = set(batch.new_ids) if batch else set()  # the new works: not those matched to a record
    distinct = {record_id for retrieval in retrievals for record_id in retrieval.record_ids}
    sources = []
    for index, retrieval in enumerate(retrievals):
        execution = asdict(executions[index]) if executions is not None else {}
        sources.append(RunSource(
            source=retrieval.source, label=retrieval.label, method=retrieval.method, strategy=retrieval.query,
            complete=retrieval.complete,
            total=retrieval.total, retrieved=len(retrieval.record_ids),
            new=sum(1 for record_id in retrieval.record_ids if record_id in in_batch),
            note=retrieval.note, snapshot_hashes=retrieval.snapshot_hashes, **execution))
    retrieved = sum(source.retrieved for source in sources)
    new = len(in_batch & distinct)
    return RunManifest(
        schema_version=RUN_MANIFEST_SCHEMA_VERSION, origin="ledger" if executions is None else "run",
        monitor_id=monitor_id, at=at, sitegen_version=None if executions is None else __version__,
        snapshots=snapshots, complete=all(source.complete for source in sources), sources=sources,
        counts=RunCounts(retrieved=retrieved, distinct=len(distinct), duplicates=retrieved - len(distinct), new=new),
        batch=batch.batch if batch and new else None)


def manifest_bytes(manifest: RunManifest) -> bytes:
    """The manifest as its file holds it (and the site serves it)."""
    return pretty_json(model_data(manifest)).encode("utf-8")


@dataclass(frozen=True)
class RunRecord:
    """A run with the manifest the site shows for it: its own, or one derived from the ledger."""

    run: Run
    path: str  # runs/<name>.json
    manifest: RunManifest
    data: bytes

    @property
    def recorded(self) -> bool:
        return self.manifest.origin == "run"


def run_records(review: Review, runs: list[Run]) -> list[RunRecord]:
    """Every run with its manifest, oldest first (a valid review's recorded manifests match their runs)."""
    records = []
    for run in runs:
        path = manifest_path(run.at, run.monitor_id)
        file = review.manifests.get(path)
        if file is not None:
            records.append(RunRecord(run, path, file.manifest, file.data))
        else:
            derived = run_manifest(run.monitor_id, run.at, run.strategies, run.batch)
            records.append(RunRecord(run, path, derived, manifest_bytes(derived)))
    return records


# --------------------------------------------------------------------------- checks


def manifest_problems(review: Review) -> list[Problem]:
    """Each manifest in runs/ must be the one its run's events name (its canonical JSON) and agree with them;
    a run whose events name a manifest must have it; no manifest may be left without a run."""
    problems: list[Problem] = []
    claimed: set[str] = set()
    recording = False  # once runs record manifests, every later run must
    for run in ReviewFacts(review).runs:
        path = manifest_path(run.at, run.monitor_id)
        named = [strategy.manifest for strategy in run.strategies]
        file = review.manifests.get(path)
        what = f"the run of saved search {run.monitor_id!r} at {run.at}"
        if not any(named):
            if file is not None:
                claimed.add(path)
                problems.append(Problem(path, _line(file, ("at",)), None, "manifest-unanchored",
                                        f"the ledger's events for {what} (line {run.line}) name no manifest, so this "
                                        "file was not written by that run (a run writes its manifest together with "
                                        "its events); remove it"))
            elif recording:
                problems.append(Problem(LEDGER, run.line, None, "manifest-unrecorded",
                                        f"{what} names no manifest, though earlier runs do: it was not written by "
                                        "this sitegen, or its events were rewritten"))
            continue
        recording = True
        sha256 = next(name for name in named if name)
        if any(name != sha256 for name in named):
            problems.append(Problem(LEDGER, run.line, None, "manifest-anchor",
                                    f"the retrieval events of {what} name different manifests; each names the "
                                    "run's one manifest"))
        if file is None and path in review.invalid_files:
            continue  # its own problems say what is wrong with it
        if file is None:
            problems.append(Problem(LEDGER, run.line, None, "manifest-missing",
                                    f"{shown_path(path)}, the manifest of {what}, is missing (the run's events name it: "
                                    f"sha256 {sha256[:12]}…); restore it from Git"))
            continue
        claimed.add(path)
        problems += _disagreements(file, run, sha256)
    for path, file in review.manifests.items():
        if path not in claimed:
            problems.append(Problem(path, _line(file, ("at",)), None, "manifest-orphan",
                                    f"the ledger records no run of saved search {file.manifest.monitor_id!r} at "
                                    f"{file.manifest.at}: this manifest belongs to no run (the run's events were "
                                    "lost from the ledger, or the file was copied here); restore ledger.jsonl from "
                                    "Git or remove the file"))
    return problems


def _disagreements(file: ManifestFile, run: Run, sha256: str) -> list[Problem]:
    """Where the manifest differs from what the run's events record, field by field, then its hash."""
    expected = run_manifest(run.monitor_id, run.at, run.strategies, run.batch)
    where = f"for this run (ledger.jsonl line {run.line})"
    if len(file.manifest.sources) != len(expected.sources):
        problems = [Problem(file.path, _line(file, ("sources",)), None, "manifest-mismatch",
                            f"sources lists {counted(len(file.manifest.sources), 'strategy', 'strategies')} but the ledger records "
                            f"{len(expected.sources)} {where}")]
    else:
        problems = [Problem(file.path, _line(file, loc), None, "manifest-mismatch",
                            f"{_dotted(loc)} is {_shown(found)} but the ledger records {_shown(wanted)} {where}")
                    for loc, found, wanted in _compared(file.manifest, expected) if found != wanted]
    # Canonical JSON is what a run names; the bytes are what runs named before (line endings then count).
    if sha256 not in (file.sha256, file.byte_sha256):
        problems.append(Problem(file.path, problems[0].line if problems else None, None, "manifest-edited",
                                f"the manifest was changed after its run wrote it: the run's events (ledger.jsonl "
                                f"line {run.line}) name sha256 {sha256[:12]}…, the file's is {file.sha256[:12]}…; "
                                "a manifest is never rewritten: restore it from Git"))
    return problems


def _compared(recorded: RunManifest, expected: RunManifest) -> Iterator[tuple[tuple, Any, Any]]:
    """(location, recorded value, value the ledger supports) for every field the ledger can vouch for,
    in manifests listing the same number of strategies."""
    for name in RunManifest.model_fields:
        if name in RUN_ONLY:
            continue
        if name == "counts":
            for count in RunCounts.model_fields:
                yield ("counts", count), getattr(recorded.counts, count), getattr(expected.counts, count)
        elif name == "sources":
            for index, (mine, theirs) in enumerate(zip(recorded.sources, expected.sources, strict=True)):
                for field in RunSource.model_fields:
                    if field not in RUN_ONLY_PER_SOURCE:
                        yield ("sources", index, field), getattr(mine, field), getattr(theirs, field)
        else:
            yield (name,), getattr(recorded, name), getattr(expected, name)


def _line(file: ManifestFile, loc: tuple) -> int | None:
    position = file.parsed.position(loc)
    return position[0] if position else None


def _dotted(loc: tuple) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "…"
