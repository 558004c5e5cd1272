"""Rerun saved searches and report only what was never seen: the heart of a living review.

For each saved search, every strategy is re-executed verbatim, one call each.
The ids returned are folded into the review's records by identity, combined in
order, and compared with `seen_ids`: the new batch is exactly the ids not seen
before. A source that was not reached makes its slice *incomplete*, which is
reported in words and never taken for "no new papers". Then, in one
transaction: records are updated, one `retrieval` event per strategy and one
`screening` batch event are appended to the ledger, the run's manifest is
written (runs/, named by its retrieval events), and the saved search advances
(`seen_ids` only grows; `last_run` is the caller's timestamp).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import ValidationError

from sitegen.errors import OptionInvalid, SitegenError, quoted_text, shown_argument, shown_path
from sitegen.living.duplicates import confirmed_duplicates, matched_within
from sitegen.living.ledger import anchor, append, check_event_time, given_search_id
from sitegen.living.manifests import (
    Execution,
    LastRun,
    RemovedStrategy,
    asks,
    compiled_query,
    manifest_bytes,
    removed_strategies,
    run_manifest,
    strategy_runs,
)
from sitegen.living.merge import Decided, Integration, integrate
from sitegen.living.retirement import Retirement, reinstate_hint, retired_searches
from sitegen.records.citations import LABEL as CITATION_SEARCHING
from sitegen.records.citations import strategy_repeats
from sitegen.records.model import Record, model_data
from sitegen.records.providers import label
from sitegen.review.folder import Review, manifest_hash, manifest_path
from sitegen.review.models import (
    DUPLICATE_COLUMNS,
    SEARCH_SCHEMA_VERSION,
    BatchPayload,
    ImportPayload,
    Payload,
    ProtocolLockPayload,
    RetrievalPayload,
    RunCounts,
    SavedSearch,
    Strategy,
    parse_timestamp,
)
from sitegen.review.transaction import Transaction
from sitegen.review.write import Lines, json_kept_form, jsonl_lines, with_rows_added
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.search import answered, check_strategy, describe, open_fetcher, run_strategy
from sitegen.sources.settings import SourceSettings, unset_key_note
from sitegen.text import counted, markdown_code, markdown_safe


def ordered_unique(ids: list[str]) -> list[str]:
    """Ids in first-seen order, each once."""
    return list(dict.fromkeys(ids))


def new_ids(current: list[str], seen: list[str]) -> list[str]:
    """The new batch: current ids not seen before, in their current order. O(n) with a set."""
    seen_set = set(seen)
    return [record_id for record_id in ordered_unique(current) if record_id not in seen_set]


@dataclass
class StrategyRun:
    strategy: Strategy
    outcome: SourceOutcome
    ids: list[str]  # record ids returned, after identity merging, in order
    # The saved search's file is edited by hand between runs: a strategy whose text is not what its latest run
    # searched (`edited_since`: that run), or one no earlier run of a search that has run knows (`unknown_before`),
    # is searched as saved now, and the run says so (its ledger event holds the text searched).
    edited_since: LastRun | None = None
    unknown_before: bool = False
    # A strategy whose label alone changed since (the same source and text as one the last run searched, under
    # another label or none, `manifests.asks`): the last run's record of it. It is renamed, not one strategy removed
    # and another added.
    renamed_from: LastRun | None = None

    def change(self) -> str | None:
        """How the strategy differs from the search's earlier runs, in words; None when it does not."""
        name = strategy_name(self.strategy.source, self.strategy.label)
        if self.edited_since is not None:
            return (f"{name}: the strategy was edited since its last run ({self.edited_since.at}, which searched "
                    f"{self.edited_since.query!r}); this run searched it as saved now, {self.strategy.query!r}, and "
                    "what it returned that the search had not seen is new")
        if self.renamed_from is not None:
            before = f"labelled {self.renamed_from.label!r}" if self.renamed_from.label else "unlabelled"
            return (f"{name}: the strategy was renamed since its last run ({self.renamed_from.at}, when it was "
                    f"{before}); the same text, {self.strategy.query!r}, was searched")
        if self.unknown_before:
            return (f"{name}: no earlier run searched {self.strategy.query!r} (the strategy was added to the saved "
                    "search, or edited, since its last run); what it returned that the search had not seen is new")
        return None


def strategy_name(source: str, strategy_label: str | None) -> str:
    return label(source) + (f" ({strategy_label})" if strategy_label else "")


def removal(removed: RemovedStrategy) -> str:
    """A strategy deleted from the saved search since its last run, in words."""
    return (f"{strategy_name(removed.source, removed.label)}: the strategy was removed from the saved search since "
            f"its last run ({removed.at}, which searched {removed.query!r}); this run did not search it, and what "
            "only it would find is not searched for any more")


@dataclass
class SearchRun:
    monitor_id: str
    strategies: list[StrategyRun]
    new: list[str]  # the new works: never seen by this search, not yet in the review, no duplicate of a record
    batch: int | None  # the screening batch the new records form, if any
    manifest: str  # the run's manifest, runs/<time>-<monitor_id>.json
    # Records of the batch sitegen matched by metadata to another record (a `same` row of duplicates.csv): not
    # new works, so not reported as new, but in the batch so that they are screened if a reviewer says
    # `different` (screening passes over a confirmed duplicate).
    duplicates: list[str] = field(default_factory=list)
    # Strategies the search's last run searched that its file no longer holds (deleted by hand since): a source
    # the review searched before and no longer does is said, never just left out of the table.
    removed: list[RemovedStrategy] = field(default_factory=list)
    # Of `duplicates`, those matched to another record of the same batch (the run found the work twice): duplicates
    # of the run, not records the review had already found (`matched_within`, as the batch page tells them apart).
    within: list[str] = field(default_factory=list)
    # The ids this search had not seen before the run, which its seen_ids gained: the new works, the matched
    # duplicates, and records the review held already (imported, or batched by another search, earlier or in this
    # run), which are seen from now on but not screened twice. The search's diff, as seed 000 defines it.
    unseen: list[str] = field(default_factory=list)
    # The run's counts as its manifest records them (from its retrieval events): retrieved, distinct, duplicates.
    counts: RunCounts | None = None

    @property
    def in_review_before(self) -> list[str]:
        """Of `unseen`, those the review had handed to reviewers already: neither new nor a matched duplicate."""
        batched = set(self.new) | set(self.duplicates)
        return [record_id for record_id in self.unseen if record_id not in batched]

    @property
    def already_found(self) -> list[str]:
        """Of `duplicates`, those matched to a record the review held before the run."""
        within = set(self.within)
        return [record_id for record_id in self.duplicates if record_id not in within]

    def changes(self) -> list[str]:
        """How the strategies searched differ from those of the search's last run, a sentence each."""
        return [change for run in self.strategies if (change := run.change())] + [removal(r) for r in self.removed]

    @property
    def complete(self) -> bool:
        return all(run.outcome.complete for run in self.strategies)

    @property
    def answered(self) -> bool:
        """Whether any source answered in full: without one, "no new records" would be said of nothing."""
        return any(run.outcome.complete for run in self.strategies)


@dataclass
class UpdateResult:
    at: str
    searches: list[SearchRun]
    records: dict[str, Record] = field(default_factory=dict)
    probable: list[tuple[str, str, float]] = field(default_factory=list)  # possible duplicates, for a reviewer
    versions: list[tuple[str, str]] = field(default_factory=list)  # (preprint id, journal version id) linked
    matched: list[tuple[str, str, float]] = field(default_factory=list)  # (new record, canonical record, score)
    # Saved searches retired since the review's latest search run, which this run did not run: said by the first
    # run after a search is retired, so that a run report never leaves a search out without a word.
    retired: list[Retirement] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return all(search.complete for search in self.searches)

    def summary(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "complete": self.complete,
            "searches": [{
                "monitor_id": search.monitor_id,
                "complete": search.complete,
                "batch": search.batch,
                "new_ids": search.new,
                "duplicate_ids": search.duplicates,
                "duplicates_of_new_ids": search.within,
                "unseen_ids": search.unseen,
                # seed 000's counts of a search, as the run's manifest and retrieval events record them
                "counts": {"retrieved": search.counts.retrieved, "deduplicated": search.counts.distinct,
                           "duplicates_removed": search.counts.duplicates, "unseen": len(search.unseen),
                           "new": len(search.new)} if search.counts else None,
                "manifest": search.manifest,
                "strategies": [{
                    "source": run.strategy.source, "method": run.strategy.method, "label": run.strategy.label,
                    "query": run.strategy.query,
                    "status": run.outcome.status, "returned": len(run.ids), "total": run.outcome.total,
                    "warnings": run.outcome.warnings, "snapshot_hashes": run.outcome.snapshot_hashes,
                    "edited_since": {"at": run.edited_since.at, "query": run.edited_since.query}
                    if run.edited_since else None,
                    "unknown_before": run.unknown_before,
                    "renamed_from": {"label": run.renamed_from.label, "at": run.renamed_from.at}
                    if run.renamed_from else None,
                } for run in search.strategies],
                "removed": [{"source": removed.source, "label": removed.label, "query": removed.query,
                             "at": removed.at} for removed in search.removed],
            } for search in self.searches],
            "probable_duplicates": [{"first": first, "second": second, "score": round(score, 1)}
                                    for first, second, score in self.probable],
            "versions": [{"preprint": preprint, "published": published} for preprint, published in self.versions],
            "matched": [{"record_id": new, "duplicate_of": canonical, "score": round(score, 1)}
                        for new, canonical, score in self.matched],
            "retired": [{"monitor_id": retired.monitor_id, "at": retired.at, "reason": retired.reason}
                        for retired in self.retired],
        }


def update(review: Review, at: str, mode: str = "live", settings: SourceSettings | None = None,
           progress: Callable[[str], None] = lambda message: None,
           transport: httpx.BaseTransport | None = None) -> UpdateResult:
    """Rerun every saved search of the review at the caller-supplied time `at`."""
    if not review.searches:
        raise SitegenError(f"{shown_path(review.root)} has no saved searches; add one with `sitegen monitor add "
                           f"{shown_argument(review.root)} --id ID --strategy SOURCE QUERY --at TIME`")
    require_lock(review)
    retired = retired_searches(review)
    active = [search for monitor_id, search in review.searches.items() if monitor_id not in retired]
    if not active:
        raise SitegenError(f"every saved search of {shown_path(review.root)} is retired ({', '.join(retired)}); "
                           f"bring one back with {reinstate_hint(review, next(iter(retired)))}, or add one with "
                           f"`sitegen monitor add`; nothing was written")
    result = _run(review, active, at, mode, settings, progress, transport)
    result.retired = newly_retired(review, retired)
    return result


def newly_retired(review: Review, retired: dict[str, Retirement]) -> list[Retirement]:
    """The retired searches no search run has passed over yet: retired after the ledger's latest retrieval."""
    latest_run = max((event.seq for event, payload in zip(review.ledger, review.payloads, strict=True)
                      if isinstance(payload, RetrievalPayload)), default=0)
    return [retirement for retirement in retired.values() if retirement.seq > latest_run]


def retirement(retired: Retirement) -> str:
    """A search this run did not run, as it was retired, in words."""
    # A ledger written by other means may hold any character: `quoted_text` escapes what would not show.
    return (f"{retired.monitor_id}: the saved search was retired at {retired.at} (why: {quoted_text(retired.reason)}) "
            "and was not run; its earlier runs and the records they found stay in the review")


def add_monitor(review: Review, monitor_id: str, strategies: list[Strategy], at: str, mode: str = "live",
                seed_from_review: bool = False, settings: SourceSettings | None = None,
                progress: Callable[[str], None] = lambda message: None,
                transport: httpx.BaseTransport | None = None) -> UpdateResult:
    """Set up a saved search and run its baseline: the first result set is the opening batch,
    or, with `seed_from_review`, the review's already screened records count as seen."""
    given_search_id(monitor_id, "--id")
    require_lock(review)
    if monitor_id in review.searches:
        retired = retired_searches(review).get(monitor_id)
        raise SitegenError(f"a saved search {monitor_id!r} already exists in {shown_path(review.root)}/searches/"
                           + (f" (retired at {retired.at}): bring it back, its seen_ids as they are, with "
                              f"{reinstate_hint(review, monitor_id)}" if retired else
                              f": give another --id, or run it again with `sitegen update {shown_argument(review.root)} "
                              "--at TIME`; nothing was written"))
    for strategy in strategies:
        check_strategy(strategy.source, strategy.query, native=strategy.syntax == "native", method=strategy.method)
    for index, _, kind in strategy_repeats(strategies):
        repeated = strategies[index]
        raise OptionInvalid("--citations" if repeated.method == "citations" else "--strategy",
                            f"the strategy {repeated.query!r} asks what an earlier one asks (the same source and query, "
                            "or citation search with the same mode and seeds, however written); nothing was saved"
                            if kind == "strategy-repeated" else
                            f"two {repeated.source} strategies have the label {repeated.label!r}: a label names one "
                            "strategy of its source (its runs are known by it); nothing was saved")
    # Seeded with the records the review already holds: screened, batched or imported.
    seen = sorted(set(in_review(review)) | {row.decision.record_id for row in review.decisions}) \
        if seed_from_review else []
    try:
        search = SavedSearch(schema_version=SEARCH_SCHEMA_VERSION, monitor_id=monitor_id, strategies=strategies,
                             seen_ids=seen, last_run="", run_count=0)
    except ValidationError as exc:
        raise OptionInvalid("--id", f"{monitor_id!r}: {exc.errors(include_url=False)[0]['msg']}") from None
    return _run(review, [search], at, mode, settings, progress, transport)


def require_lock(review: Review) -> None:
    # A batch is screened under a locked protocol version; without a lock there is none.
    if not any(isinstance(payload, ProtocolLockPayload) for payload in review.payloads):
        raise SitegenError(f"the protocol is not locked: lock it (`sitegen protocol lock {shown_argument(review.root)} "
                           "--at TIME`) before searching, so every batch is screened under a fixed protocol version")


def decided(review: Review) -> Decided:
    """What duplicates.csv decides, as `integrate` takes it."""
    return Decided({duplicate: about.canonical for duplicate, about in confirmed_duplicates(review).items()},
                   {frozenset((row.decision.record_id, row.decision.duplicate_of)) for row in review.duplicates})


def in_review(review: Review) -> list[str]:
    """Records already handed to reviewers: in an earlier batch, or imported."""
    return [i for p in review.payloads if isinstance(p, BatchPayload | ImportPayload) for i in p.record_ids]


def check_run_time(review: Review, at: str) -> None:
    """SitegenError unless `at` is a valid event time after every search run and import of the review.

    One run per time: runs are the ledger's events sharing a time (a second run or import then would merge
    with the first in PRISMA and count its records twice), and recorded responses are filed by the run's time.
    """
    check_event_time(review.ledger, at)
    sourced = [event.ts for event, payload in zip(review.ledger, review.payloads, strict=True)
               if isinstance(payload, RetrievalPayload | ImportPayload)]
    sourced += [search.last_run for search in review.searches.values() if search.last_run]
    if sourced and parse_timestamp(at) <= max(parse_timestamp(ts) for ts in sourced):
        latest = max(sourced, key=parse_timestamp)
        # An import refused so is most often the second export of one search: say what a later time makes of it.
        raise SitegenError(f"--at {at} is not after the latest search run or import ({latest}); give this run "
                           "its own, later time (events at one time are one run in PRISMA: files imported together, "
                           "in one command, are one run; a later run is drawn as an update of the runs before it)")


def _run(review: Review, searches: list[SavedSearch], at: str, mode: str, settings: SourceSettings | None,
         progress: Callable[[str], None], transport: httpx.BaseTransport | None) -> UpdateResult:
    check_run_time(review, at)  # before any request: a bad --at wastes no provider's allowance
    settings = settings or SourceSettings.from_environment()
    fetcher = open_fetcher(mode, review.root / "snapshots", session=at, transport=transport)
    if note := unset_key_note([strategy.source for search in searches for strategy in search.strategies], settings,
                              mode):
        progress(note)
    executed: list[tuple[SavedSearch, Strategy, SourceOutcome]] = []
    with fetcher:
        for search in searches:
            for strategy in search.strategies:
                progress(f"{search.monitor_id}: searching {label(strategy.source)}"
                         f"{f' ({strategy.label})' if strategy.label else ''}...")
                outcome = run_strategy(fetcher, settings, strategy.source, strategy.query,
                                       native=strategy.syntax == "native", method=strategy.method)
                outcome = collapse_doubted(outcome, last_complete_run(review, search.monitor_id, strategy))
                progress(f"{search.monitor_id}: {answered(label(strategy.source), outcome)}")
                executed.append((search, strategy, outcome))
        # Recorded responses go into the run's transaction below: a run that fails records nothing.
        recorded = fetcher.snapshots.staged_files() if fetcher.snapshots is not None else {}
    retrieved = [record for _, _, outcome in executed for record in outcome.records]
    merged = integrate(review.records, retrieved, decided(review))
    result = UpdateResult(at, [], merged.records, merged.probable, merged.versions, merged.matched)
    payloads: list[Payload] = []
    manifests: dict[str, bytes] = {}  # path -> the run's manifest
    last_payload: dict[str, int] = {}  # monitor id -> index of the last payload its run appends
    fresh_ids: dict[str, list[str]] = {}  # monitor id -> ids it had never seen
    batch = sum(1 for payload in review.payloads if isinstance(payload, BatchPayload))
    already = set(in_review(review))  # never put a record in a second batch
    canonical = {duplicate: kept for duplicate, kept, _ in merged.matched}
    position = 0
    for search in searches:
        earlier = strategy_runs(review, search) if search.run_count else [None] * len(search.strategies)
        removed = removed_strategies(review, search, earlier) if search.run_count else []
        runs = []
        for owner, strategy, outcome in executed:
            if owner is search:
                ids = ordered_unique(merged.ids[position:position + len(outcome.records)])
                position += len(outcome.records)
                last = earlier[len(runs)]
                runs.append(StrategyRun(strategy, outcome, ids,
                                        edited_since=last if last is not None and last.query != strategy.query else None,
                                        unknown_before=bool(search.run_count) and last is None,
                                        renamed_from=last if last is not None and last.label != strategy.label else None))
        fresh = fresh_ids[search.monitor_id] = new_ids([i for run in runs for i in run.ids], search.seen_ids)
        # New to this search but already handed to reviewers (another search found it first):
        # seen from now on, but not screened twice.
        to_screen = [i for i in fresh if i not in already]
        to_screen_matched = [i for i in to_screen if i in canonical]
        already.update(to_screen)
        new_batch = None
        if to_screen:
            batch += 1
            new_batch = BatchPayload(batch=batch, monitor_id=search.monitor_id,
                                     protocol_version=review.protocol.meta.version, record_ids=to_screen,
                                     matched=to_screen_matched)
        try:
            retrievals = [_retrieval(search, run) for run in runs]
            manifest = run_manifest(search.monitor_id, at, retrievals, new_batch, [_execution(run) for run in runs],
                                    mode)
        except ValidationError as exc:  # before anything is written: the run records nothing
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in error["loc"])
            raise SitegenError(f"saved search {search.monitor_id!r}: the run cannot be recorded "
                               f"({where}: {error['msg']}); nothing was written") from None
        path = manifest_path(at, search.monitor_id)
        manifests[path] = manifest_bytes(manifest)
        # Every retrieval event names the manifest: the chained ledger then vouches for the file.
        digest = manifest_hash(manifest)
        payloads += [retrieval.model_copy(update={"manifest": digest}) for retrieval in retrievals]
        payloads += [new_batch] if new_batch else []
        last_payload[search.monitor_id] = len(payloads) - 1
        result.searches.append(SearchRun(search.monitor_id, runs, new_batch.new_ids if new_batch else [],
                                         new_batch.batch if new_batch else None, path, to_screen_matched, removed,
                                         matched_within(to_screen, to_screen_matched, canonical), fresh,
                                         manifest.counts))
    transaction = Transaction(review.root)
    events = append(transaction, review, at, payloads)
    for search in searches:
        advanced = search.model_copy(update={
            "seen_ids": search.seen_ids + fresh_ids[search.monitor_id], "last_run": at,
            "run_count": search.run_count + 1,
            "last_event": anchor(events[last_payload[search.monitor_id]])})
        rel = f"searches/{search.monitor_id}.json"  # a new one's (monitor add) is written as pretty_json writes it
        transaction.write(rel, json_kept_form(review.root / rel, model_data(advanced)))
    write_integrated(transaction, review, at, merged)
    for rel, data in recorded.items():
        transaction.write(f"snapshots/{rel}", data)
    for rel, data in manifests.items():
        transaction.write(rel, data)
    transaction.commit()
    return result


def last_complete_run(review: Review, monitor_id: str, strategy: Strategy) -> RetrievalPayload | None:
    """The ledger's latest complete retrieval of this strategy's text, if it ever ran completely: under whatever
    label it had then (`asks`: a rename keeps the strategy's history; its label is no part of what it asks)."""
    runs = [payload for payload in review.payloads if isinstance(payload, RetrievalPayload) and payload.complete
            and payload.monitor_id == monitor_id
            and asks(payload.source, payload.query) == asks(strategy.source, strategy.query)]
    return runs[-1] if runs else None


def collapse_doubted(outcome: SourceOutcome, previous: RetrievalPayload | None) -> SourceOutcome:
    """An answer that looks whole but collapsed against the strategy's last complete run is doubted.

    A bibliographic database does not lose nine in ten matches of a saved query between two runs; a
    valid-looking empty (or nearly empty) answer is far likelier an index or service fault. Taking it
    for "no new records" would be the silent negative a living review must never report, so the run
    is incomplete until a human looks. If the database really changed, save the strategy anew.
    """
    if previous is None or not outcome.complete:
        return outcome
    before = previous.total if previous.total is not None else len(previous.record_ids)
    now = outcome.total if outcome.total is not None else len(outcome.records)
    if before and now * 10 < before:
        return outcome.model_copy(update={"doubt": f"{label(outcome.source)} reported {now} matches where this "
                                                   f"strategy's last complete run had {before}: taken for a fault, "
                                                   "not an answer"})
    # The count may hold while the records do not (items it can no longer read, under a changed format).
    if len(outcome.records) * 10 < len(previous.record_ids):
        return outcome.model_copy(update={"doubt": f"{label(outcome.source)} sent {counted(len(outcome.records), 'usable record')} "
                                                   f"where this strategy's last complete run had "
                                                   f"{len(previous.record_ids)}: taken for a fault, not an answer"})
    return outcome


def _retrieval(search: SavedSearch, run: StrategyRun) -> RetrievalPayload:
    return RetrievalPayload(monitor_id=search.monitor_id, source=run.strategy.source, query=run.strategy.query,
                            label=run.strategy.label, record_ids=run.ids, total=run.outcome.total,
                            snapshot_hashes=run.outcome.snapshot_hashes, complete=run.outcome.complete,
                            note="; ".join(filter(None, [*run.outcome.warnings, run.outcome.doubt])) or None,
                            method="other" if run.strategy.method == "citations" else "database")


def _execution(run: StrategyRun) -> Execution:
    # A citation search is in neither a provider's syntax nor sitegen's grammar, but its own.
    return Execution(syntax="citations" if run.strategy.method == "citations" else run.strategy.syntax,
                     provider_query=compiled_query(run.strategy), requests=run.outcome.executed_query,
                     status=run.outcome.status)


def unreached(result: UpdateResult) -> list[str]:
    """Sentences naming every source whose slice of this run is unknown."""
    sentences = []
    for search in result.searches:
        for run in search.strategies:
            if not run.outcome.complete:
                sentences.append(f"{search.monitor_id}: {describe(run.outcome)}")
    return sentences


def changed(result: UpdateResult) -> list[str]:
    """Sentences naming every strategy that differs from what the search's earlier runs searched, or that its last
    run searched and this one did not, and every search retired since the latest run."""
    return ([f"{search.monitor_id}: {change}" for search in result.searches for change in search.changes()]
            + [retirement(retired) for retired in result.retired])


def _status_cell(outcome: SourceOutcome) -> str:
    if outcome.complete:
        return "complete"
    return "incomplete" if outcome.status == "ok" else outcome.status.replace("_", " ")


MATCHED_REVIEWER = "sitegen"  # the reviewer of a duplicates.csv row that update wrote for a metadata match


def write_integrated(transaction: Transaction, review: Review, at: str, merged: Integration) -> None:
    """Stage what integrating a run's or an import's records changes: records.jsonl, every record one line in id
    order, streamed (`Lines`: made and written a block at a time as the transaction commits, never held whole),
    and duplicates.csv when records were matched by metadata."""
    transaction.write("records.jsonl", Lines(jsonl_lines(model_data(record) for record in merged.records.values())))
    if merged.matched:
        transaction.write("duplicates.csv", matched_rows(review, at, merged.matched))


def matched_rows(review: Review, at: str, matched: list[tuple[str, str, float]]) -> str:
    """duplicates.csv with a `same` row by reviewer "sitegen" added for each metadata match of a run; the
    file's existing text is kept as it is."""
    path = review.root / "duplicates.csv"
    text = path.read_bytes().decode("utf-8") if path.exists() else ""  # its line ends and byte-order mark kept
    return with_rows_added(text, DUPLICATE_COLUMNS, [
        {"record_id": new, "duplicate_of": canonical, "decision": "same", "reviewer": MATCHED_REVIEWER,
         "note": f"matched by metadata in the run of {at}: titles {score:.0f}% alike, authors, year and publication "
                 "details agree"} for new, canonical, score in matched], "duplicates.csv",
        droppable=frozenset({"note"}))  # the note only informs: a file without the column is written without it


def markdown_report(result: UpdateResult) -> str:
    """The run report for a pull-request body and $GITHUB_STEP_SUMMARY."""
    lines = [f"## sitegen update at {result.at}", ""]
    if result.complete:
        lines.append("**Complete:** every source answered in full.")
    else:
        lines.append("**Incomplete:** some sources were not reached or not read in full; their new records may be "
                     "missing.")
        lines += [f"- {markdown_safe(sentence)}" for sentence in unreached(result)]
    for search in result.searches:
        lines += ["", f"### Saved search {markdown_code(search.monitor_id)}", "",
                  "| Source | Query | Status | Returned |", "| --- | --- | --- | --- |"]
        for run in search.strategies:
            searched = f"{CITATION_SEARCHING} ({label(run.strategy.source)})" if run.strategy.method == "citations" \
                else label(run.strategy.source)
            lines.append(f"| {searched} | {markdown_safe(run.strategy.query)} | "
                         f"{_status_cell(run.outcome)} | {len(run.ids)} |")
        edits = search.changes()
        if edits:  # the file was edited by hand since the last run: say what was searched instead, or no more
            lines += ["", "Strategies not as at the last run:"] + [f"- {markdown_safe(edit)}" for edit in edits]
        notes = [warning for run in search.strategies if run.outcome.complete for warning in run.outcome.warnings]
        if notes:  # what a complete answer still left out (items without an identifier or a title), by name
            lines += ["", "Notes:"] + [f"- {markdown_safe(note)}" for note in notes]
        lines.append("")
        if search.new:
            lines.append(f"**{counted(len(search.new), 'new record')}** (screening batch {search.batch}):")
            lines.append("")
            for record_id in search.new:
                record = result.records[record_id]
                lines.append(f"- {markdown_code(record_id)} ({record.year or 'n.d.'}) {markdown_safe(record.title)}")
        elif search.complete and not search.unseen:
            lines.append("No new records since the last run: every source answered in full and nothing was unseen.")
        elif search.complete:
            lines.append("No new records since the last run: every source answered in full, and what this search had "
                         "not seen was in the review already.")
        elif search.answered:
            lines.append("No new records from the sources that answered in full; the others are unknown this run, "
                         "not empty.")
        else:
            lines.append("No source answered in full: new records are unknown this run, not none.")
        if search.duplicates:
            held, within = len(search.already_found), len(search.within)
            found = [*([f"{counted(held, 'more matched record')} already found"] if held else []),
                     *([f"{within} more matched to a new record above (this run found "
                        f"{'that work' if within == 1 else 'those works'} twice)"] if within else [])]
            lines.append(f"{'; '.join(found)}: in screening batch {search.batch} (see Matched by metadata), "
                         "each screened only if a reviewer changes its row to `different`.")
        if before := search.in_review_before:  # seen_ids gained them: said, so the diff adds up to what it gained
            lines.append(f"{counted(len(before), 'record')} this search had not seen {'was' if len(before) == 1 else 'were'} "
                         "in the review already (imported, or in another saved search's screening batch): seen from "
                         "now on, not screened twice.")
        lines += ["", f"Run manifest: {markdown_code(search.manifest)}"]
    if result.retired:
        lines += ["", "### Retired saved searches", ""]
        lines += [f"- {markdown_safe(retirement(retired))}" for retired in result.retired]
    if result.matched:
        lines += ["", "### Matched by metadata", "",
                  "New records that share no identifier with a record of the review but agree with it in title, "
                  "authors, year and publication details. Each is recorded in `duplicates.csv` as a duplicate "
                  "(reviewer `sitegen`), so it is counted as a duplicate removed and not screened; to keep "
                  "both, change that row's decision to `different`.", ""]
        for new, canonical, score in result.matched:
            lines.append(f"- {markdown_code(new)} is {markdown_code(canonical)} (titles {score:.0f}% alike): "
                         f"{markdown_safe(result.records[canonical].title)}")
    if result.versions:
        lines += ["", "### Preprints and their journal versions", "",
                  "Linked as two versions of one study, not merged:", ""]
        lines += [f"- {markdown_code(preprint)} is a preprint of {markdown_code(published)}"
                  for preprint, published in result.versions]
    if result.probable:
        lines += ["", "### Possible duplicates", "",
                  "Records that may be one work: new records that look like another record but share no "
                  "identifier with it, and records a new result linked by an identifier neither holds. Nothing "
                  "was merged: record each decision in `duplicates.csv`.", ""]
        for first, second, score in result.probable:
            lines.append(f"- {markdown_code(first)} and {markdown_code(second)} (titles {score:.0f}% alike): "
                         f"{markdown_safe(result.records[first].title)}")
    return "\n".join(lines) + "\n"
