"""What each `sitegen` command does, as one call: open the review the way the command needs
(read-only, or locked for writing) through the workspace, and hand it to its domain.

The command line (`sitegen.cli`) only parses options, calls one function here and
prints the result; tests and other programs call these functions the same way.
The provider code (and httpx) is imported only by the commands that call a
provider, so reading, checking and building a review never loads it.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.errors import OptionInvalid, OutputFileRefused, ReviewInvalid, SitegenError, cannot_read, shown_path
from sitegen.files import read_file
from sitegen.living import protocol, retirement, state, versions
from sitegen.living.checks import UNANCHORED, ledger_problems
from sitegen.living.duplicates import Suggestion, suggestions
from sitegen.living.ledger import anchor_tail, given_search_id
from sitegen.living.prisma import PrismaCounts, other_descriptions
from sitegen.records.dedupe import dedupe_rows
from sitegen.records.matching import Matches
from sitegen.records.model import Record
from sitegen.references import Format, ReferenceProblem, decode, read_references
from sitegen.review import kept
from sitegen.review.folder import load_ledger, meant_as_adjudication
from sitegen.review.models import LedgerEvent, ReviewState, SavedSearch, Strategy, ValidationPayload, VersionRecord
from sitegen.review.problems import Problem
from sitegen.review.transaction import Transaction, recover, refuse_non_review, refuse_unwritable, review_lock
from sitegen.review.write import atomic_write, atomic_write_all
from sitegen.screening import imports
from sitegen.screening.imports import DecisionImport
from sitegen.screening.status import BatchStatus, Conflict, StageStatus
from sitegen.site.downloads import FORMATS, Selection, record_writers, selected
from sitegen.site.output import refuse_unsafe_output
from sitegen.workspace import inspect, open_review, read_review, writable

if TYPE_CHECKING:
    import httpx

    from sitegen.living.manifests import LastRun
    from sitegen.living.update import UpdateResult
    from sitegen.screening.ranking import ScreeningOrder
    from sitegen.site.build import BuildResult
    from sitegen.sources.search import SearchResult
    from sitegen.sources.settings import SourceSettings

Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    """Progress for callers that show none."""


# --------------------------------------------------------------------------- reading


def check(root: Path) -> list[Problem]:
    """Every problem of the review folder (SchemaVersionError on an unsupported schema_version), read while
    no sitegen process writes it: mid-write, its files would seem interrupted (LockHeld says so instead)."""
    if not root.is_dir():
        return inspect(root)[1]  # says what is wrong with it
    with review_lock(root, shared=True):
        return inspect(root)[1]


def prisma(root: Path) -> PrismaCounts:
    return read_review(root).facts.prisma


def search_status(root: Path, monitor_id: str | None = None) -> list[tuple[SavedSearch, list[LastRun | None],
                                                                            retirement.Retirement | None]]:
    """Each saved search (or the one named) with the latest run of each of its strategies, in order (None: not
    run yet), and its retirement if it is retired."""
    from sitegen.living.manifests import strategy_runs

    _given_search(monitor_id)
    review = read_review(root).review
    _refuse_unknown_search(root, review.searches, monitor_id)
    chosen = list(review.searches.values()) if monitor_id is None else [review.searches[monitor_id]]
    retired = retirement.retired_searches(review)
    return [(search, strategy_runs(review, search), retired.get(search.monitor_id)) for search in chosen]


def _given_search(monitor_id: str | None) -> None:
    """--id checked before the review is read: one no saved search could have is a usage error."""
    if monitor_id is not None:
        given_search_id(monitor_id, "--id")


def _refuse_unknown_search(root: Path, searches: dict[str, SavedSearch], monitor_id: str | None) -> None:
    if monitor_id is not None and monitor_id not in searches:
        raise SitegenError(f"no saved search {monitor_id!r} in {shown_path(root)} (saved searches: {', '.join(searches) or 'none'})")


def validate_searches(root: Path, at: str | None = None,
                      monitor_id: str | None = None) -> tuple[list[ValidationPayload], int]:
    """Each saved search's relative recall against the known-relevant studies (`living.validation`), and how many
    were recorded on the ledger as `validation` events dated `at` when given (none already held there)."""
    from sitegen.living.validation import record_validation, validate

    _given_search(monitor_id)
    with writable(root) if at is not None else nullcontext(read_review(root)) as workspace:
        _refuse_unknown_search(root, workspace.review.searches, monitor_id)
        payloads = validate(workspace.review, workspace.facts, monitor_id)
        recorded = record_validation(workspace.review, payloads, at) if at is not None else []
        return payloads, len(recorded)


def probable_pairs(root: Path) -> tuple[list[Suggestion], dict[str, Record]]:
    """The matcher's pairs among the review's records that no row of duplicates.csv decides yet, for a
    reviewer, and the records."""
    review = read_review(root).review
    return suggestions(review), review.records


def dedupe(source: Path, out: Path, probable_out: Path, versions_out: Path, format: Format | None = None,
           encoding: str | None = None, columns: dict[str, str] | None = None,
           force: bool = False) -> tuple[int, Matches, list[str]]:
    """Duplicate sets of a reference file (any format `read_references` reads; `format` or else its
    suffix or content; `encoding` when it is not UTF-8 or UTF-16) written to `out` (column
    merged_ids, IDs joined by ";"), probable pairs, not merged, to `probable_out` and preprints with
    their journal versions to `versions_out`; returns the record count, the result and the reader's warnings. Nothing is written when the file
    has a problem or the outputs are unusable (see `check_outputs`; an existing one is replaced only with `force`)."""
    check_outputs({"SOURCE": source}, dedupe_outputs(out, probable_out, versions_out), force)
    warnings: list[str] = []
    try:
        rows = read_references(source, format, warnings, encoding=encoding, columns=columns)
    except ReferenceProblem as problem:
        raise SitegenError(f"{shown_path(source)}:{problem.line}: {problem.message}") from None
    except LookupError as error:  # `encoding` is no text encoding (references.text_codec)
        raise OptionInvalid("--encoding", str(error)) from None
    except OSError as error:
        raise SitegenError(cannot_read(source, error)) from None
    if joined := next((row for row in rows if ";" in row.id), None):  # the sets' ids are joined by ";"
        raise SitegenError(f"{shown_path(source)}:{joined.line}: ID {joined.id!r} holds ';', which joins the IDs of a set in "
                           f"{shown_path(out.name)}: its set could not be read back; give the entries IDs without ';'")
    matches = dedupe_rows(rows)
    # The three files or none: a full disk must not leave one new beside two from an earlier run.
    atomic_write_all({
        out: SETS_HEADER + "".join(_csv_line([";".join(ids)]) for ids in matches.sets),
        probable_out: PROBABLE_HEADER + "".join(
            _csv_line([first, second, f"{score:.1f}"]) for first, second, score in matches.probable),
        versions_out: VERSIONS_HEADER + "".join(
            _csv_line([preprint, published, f"{score:.1f}"]) for preprint, published, score in matches.versions),
    })
    return len(rows), matches, warnings


# The first line of each file dedupe writes: an existing file is replaced only when it starts so.
SETS_HEADER = "merged_ids\r\n"
PROBABLE_HEADER = "first,second,score\r\n"
VERSIONS_HEADER = "preprint,published,score\r\n"


def dedupe_outputs(out: Path, probable_out: Path, versions_out: Path) -> dict[str, tuple[Path, str | None]]:
    """The files dedupe writes, by option, each with the first line it writes."""
    return {"--out": (out, SETS_HEADER), "--probable": (probable_out, PROBABLE_HEADER),
            "--versions": (versions_out, VERSIONS_HEADER)}


def check_outputs(inputs: dict[str, Path], outputs: dict[str, tuple[Path, str | None]], force: bool) -> None:
    """Refuse, before anything is written, outputs that would overwrite an input (by option) or each other
    (compared as resolved paths, so through symbolic links, '..' and './'), or that `check_output_file`
    refuses (a folder, a device, a missing folder, a file already there without `force`). Even with
    `force`, a file dedupe did not write is never replaced (its first line is not the `header` it
    writes; None: any file may be): the names of the probable pairs' and versions' files are made from
    --out's, so a reviewer's own file of that name would be lost without a word."""
    seen = {path.resolve(): f"{option} {shown_path(path)}" if option.startswith("-") else option
            for option, path in inputs.items()}
    for option, (path, header) in outputs.items():
        target = path.resolve()
        if target in seen:
            raise OutputFileRefused(f"{option} {shown_path(path)}: is the same file as {seen[target]}; give each output its own file")
        check_output_file(None, path, option, force=True)  # whether it may be replaced is told below
        if target.exists() and header is not None and not _written_by_dedupe(target, header):
            raise OutputFileRefused(f"{option} {shown_path(path)}: exists and is not a file sitegen dedupe wrote (its first line is "
                               f"not {header.strip()!r}); give another name, or remove it yourself")
        if not force:
            refuse_existing(path, option)
        seen[target] = f"{option} {shown_path(path)}"


def _written_by_dedupe(path: Path, header: str) -> bool:
    """Whether `path` is empty (made ready for it) or starts with the `header` dedupe writes, whatever its
    line ending (an editor may have saved it again)."""
    try:
        with path.open("rb") as file:
            first = file.readline(len(header) + 2)
    except OSError:
        return False  # unreadable: not known to be dedupe's, so never replaced
    return first == b"" or first.rstrip(b"\r\n") == header.strip().encode()


def _csv_line(values: list[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerow(values)
    return buffer.getvalue()


PRISMA_CSV = "prisma2020-csv"
EXPORT_FORMATS = (*(form.option for form in FORMATS), PRISMA_CSV)


def export(root: Path, format: str, selection: Selection | None = None, out: Path | None = None,
           force: bool = False) -> tuple[str, int | None]:
    """The review's records of `selection` (by default the included studies) in `format`, exactly as the
    site's download of that set writes them, and how many; or, as `prisma2020-csv`, its PRISMA 2020
    counts as the site's prisma2020.csv (no record count: the counts cover the whole review). Written
    to `out` in one step when given; nothing is written when the options, the output or the review
    have a problem (see `check_output_file`)."""
    if format not in EXPORT_FORMATS:
        raise OptionInvalid("--format", f"{format!r} is not an export format ({', '.join(EXPORT_FORMATS)})")
    if format == PRISMA_CSV and selection is not None:
        raise OptionInvalid("--records", f"does not apply to {PRISMA_CSV}: its counts cover the whole review")
    if out is not None:
        check_output_file(root, out, "--out", force)
    workspace = read_review(root)
    review, facts = workspace.review, workspace.facts
    if format == PRISMA_CSV:
        from sitegen.site.prisma_csv import prisma2020_csv  # with the site's templates, which only it needs here

        text, count = prisma2020_csv(facts.prisma, facts.reason_labels, other_descriptions(review)), None
    else:
        extension = next(form.extension for form in FORMATS if form.option == format)
        records = selected(review, facts, selection or "included")
        text, count = record_writers(review, facts).write(extension, records), len(records)
    if out is not None:
        atomic_write(out, text, sweep=True)
    return text, count


def check_output_file(root: Path | None, out: Path, option: str, force: bool) -> None:
    """Refuse, before a command does anything, a file it would write beside its work (an export, a digest, a
    report) that is inside the review folder `root` (whose files only sitegen's own writes change; None: the
    command has no review), a folder, a device, a pipe or a socket, or in a folder that does not exist (a mistyped
    path should not create folders). Anything already there, a link too, is replaced only with `force` (every
    command writing a file a user names has --force): a report or export named like an earlier one, or like
    a file of the user's, was replaced without a word."""
    target = out.resolve()
    if root is not None and root.resolve() in (target, *target.parents):
        raise OutputFileRefused(f"{option} {shown_path(out)}: is inside the review folder {shown_path(root)}; write it elsewhere")
    if target.is_dir():
        raise OutputFileRefused(f"{option} {shown_path(out)}: is a folder; give a file name")
    if target.exists() and not target.is_file():  # --force never replaces a device (/dev/full) or a pipe
        raise OutputFileRefused(f"{option} {shown_path(out)}: is not a file (a device, a pipe or a socket); give a file name")
    if not _present(out) and not out.absolute().parent.is_dir():
        raise OutputFileRefused(f"{option} {shown_path(out)}: its folder {shown_path(out.absolute().parent)} does not exist")
    if not force:
        refuse_existing(out, option)


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()  # a link to nothing is there too


def refuse_existing(out: Path, option: str) -> None:
    """A file a command would write that is already there (a link too), refused as every command without --force
    refuses it."""
    if _present(out):
        raise OutputFileRefused(f"{option} {shown_path(out)}: already exists{' (a link)' if out.is_symlink() else ''}; give --force "
                           "to replace it")


def screening_status(root: Path) -> tuple[list[BatchStatus], list[StageStatus]]:
    return read_review(root).facts.screening_status


def screening_conflicts(root: Path) -> list[Conflict]:
    return read_review(root).facts.conflicts


def ranked_batch(root: Path, number: int | None) -> ScreeningOrder:
    """Screening batch `number` ordered for screening; with None, the records imported outside a batch."""
    from sitegen.screening.digest import numbered_batch, order_batch

    workspace = read_review(root)
    screening = workspace.facts.screening
    return order_batch(workspace.review, screening, numbered_batch(screening, number))


def digest(root: Path, week: str) -> str:
    from sitegen.screening.digest import digest_markdown, weekly

    workspace = read_review(root)
    return digest_markdown(workspace.review, weekly(workspace.review, workspace.facts.screening, week))


def state_show(root: Path) -> dict[str, Any]:
    workspace = read_review(root)
    return state.show(workspace.review, workspace.facts)


def ledger_verify(root: Path) -> tuple[int, list[Problem]]:
    """(number of events, problems): the ledger's syntax, chain, time order and tail anchors.
    Reads only the ledger and the files anchoring it (state.json, searches/), so it works whatever
    else is wrong."""
    review, problems = load_ledger(root)
    if review is None:  # not a review folder at all
        return 0, problems
    # Everything it read can be wrong: the ledger, and the files naming its last events.
    problems += ledger_problems(review)
    return len(review.ledger), sorted(set(problems), key=lambda p: (p.line or 0, p.message))


def ledger_anchor(root: Path) -> LedgerEvent:
    """Record where the ledger ends in state.json, for a review whose ledger was never anchored."""
    with writable(root, tolerate=frozenset({UNANCHORED})) as workspace:
        return anchor_tail(workspace.review)


# --------------------------------------------------------------------------- writing


def build(root: Path, out: Path, now: str | None = None, environ: dict[str, str] | None = None) -> BuildResult:
    """Render the site; held under the review's lock so no update changes the review mid-build. A site
    built from exactly the review's files as they are now is left as it is. (The site builder is imported by
    the commands that build: the others, `check` first, start without it.)"""
    from sitegen.site.build import build_site, current_site, inputs_digest

    environ = dict(os.environ) if environ is None else environ
    with review_lock(root), kept.kept_out_of(out):  # one lock: the files hashed are the files the site is built from
        finished = recover(root)
        try:
            inputs = inputs_digest(root, now, environ)
            if not finished and (current := current_site(root, out, inputs)) is not None:
                return current
            workspace = open_review(root)
            return build_site(workspace.review, workspace.facts, out, now, environ, inputs)
        except (SitegenError, KeyboardInterrupt) as error:
            error.done = (*finished, *getattr(error, "done", ()))  # what the recovery above finished is said too
            raise


@dataclass
class PublishResult:
    version: VersionRecord | None  # the version recorded, or None when nothing changed since `latest`
    latest: VersionRecord | None  # the latest version before this publication
    changes: str  # the new version's changelog in one sentence ("" when there is none)
    site: BuildResult


def publish(root: Path, out: Path, now: str | None = None, environ: dict[str, str] | None = None) -> PublishResult:
    """Record the next version when the review changed since its latest (dated as `build` dates the
    site: --now, SOURCE_DATE_EPOCH or the latest ledger event), then build the site from it."""
    from sitegen.site.build import build_site, build_time

    environ = dict(os.environ) if environ is None else environ
    with kept.kept_out_of(out), writable(root) as workspace:
        refuse_unsafe_output(root, out)  # before anything is recorded: a version should get its site
        at = build_time(workspace.review, now, environ)
        if now is None and "SOURCE_DATE_EPOCH" not in environ:
            versions.refuse_stale_date(workspace.review, workspace.facts, at)
        new, latest = versions.publish(workspace.review, workspace.facts, at)
        if new is None and latest is not None:  # nothing changed: the site was last updated by the latest version
            now = latest.published_at
        changes = ""
        if new is not None:
            workspace = open_review(root)  # the review with its new version, still under the lock
            changes = versions.version_history(workspace.review, workspace.facts).changelogs[-1].summary()
        try:
            site = build_site(workspace.review, workspace.facts, out, now, environ)
        except (SitegenError, OSError, KeyboardInterrupt) as exc:  # OSError: a full disk while writing the site
            if new is not None:
                exc.done = (f"version {new.number} was recorded ({versions.version_path(new.number)}); "
                            "`sitegen build` builds its site",)
            raise
        return PublishResult(new, latest, changes, site)


# The folders a search's run writes in (besides the review folder's own files): its responses, its manifest, its
# saved search's state.
SEARCH_WRITES = ("snapshots", "runs", "searches")


def update(root: Path, at: str, mode: str = "live", settings: SourceSettings | None = None,
           progress: Progress = _quiet, transport: httpx.BaseTransport | None = None) -> UpdateResult:
    from sitegen.living import update as living_update

    with writable(root) as workspace:
        refuse_unwritable(root, SEARCH_WRITES, "searched")
        return living_update.update(workspace.review, at, mode, settings, progress, transport)


def import_files(root: Path, paths: list[Path], at: str, format: Format | None = None,
                 source: str | Sequence[str] | None = None,
                 method: str | None = None, description: str | None = None, seen: str | None = None,
                 skip_bad: bool = False, encoding: str | None = None, columns: dict[str, str] | None = None):
    from sitegen.living.imports import import_files as living_import

    with writable(root) as workspace:
        return living_import(workspace.review, paths, at, format, source, method, description, seen, skip_bad,
                             encoding, columns)


def add_monitor(root: Path, monitor_id: str, strategies: list[Strategy], at: str, mode: str = "live",
                seed_from_review: bool = False, settings: SourceSettings | None = None,
                progress: Progress = _quiet, transport: httpx.BaseTransport | None = None) -> UpdateResult:
    from sitegen.living import update as living_update

    with writable(root) as workspace:
        refuse_unwritable(root, SEARCH_WRITES, "searched")
        return living_update.add_monitor(workspace.review, monitor_id, strategies, at, mode, seed_from_review,
                                         settings, progress, transport)


def verify(root: Path, at: str | None, mode: str = "live", bib: Path | None = None,
           sources: tuple[str, ...] | None = None, settings: SourceSettings | None = None,
           progress: Progress = _quiet, transport: httpx.BaseTransport | None = None, bib_encoding: str | None = None):
    """Verify the included studies (and a .bib): a replay reads and compares, other runs record verdicts."""
    from sitegen.verify.run import verify_review

    opened = read_review(root) if mode == "replay" else None
    with (nullcontext(opened) if opened else writable(root)) as workspace:
        if opened is None:
            refuse_unwritable(root, ["snapshots"], "fetched")
        return verify_review(workspace.review, workspace.facts, at, mode, settings, bib, bib_encoding, sources,
                             progress, transport)


def retire_search(root: Path, monitor_id: str, at: str, reason: str) -> LedgerEvent:
    _given_search(monitor_id)
    with writable(root) as workspace:
        return retirement.retire_search(workspace.review, monitor_id, at, reason)


def reinstate_search(root: Path, monitor_id: str, at: str, reason: str | None = None) -> LedgerEvent:
    _given_search(monitor_id)
    with writable(root) as workspace:
        return retirement.reinstate_search(workspace.review, monitor_id, at, reason)


def protocol_lock(root: Path, at: str, reason: str | None = None) -> LedgerEvent:
    with writable(root) as workspace:
        return protocol.lock_protocol(workspace.review, workspace.facts, at, reason)


def protocol_amend(root: Path, at: str, reason: str) -> protocol.Amendment:
    # The edit being amended is exactly what check reports as "protocol-locked"; anything else must be fixed first.
    with writable(root, tolerate=frozenset({protocol.EDITED_AFTER_LOCK})) as workspace:
        return protocol.amend_protocol(workspace.review, workspace.facts, at, reason)


def import_decisions(root: Path, source: Path, tool: str, reviewer: str, stage: str = "title-abstract",
                     decision: str | None = None, tool_reviewer: str | None = None,
                     encoding: str | None = None) -> DecisionImport:
    """A screening tool's exported decisions appended to `reviewer`'s decision file at `stage` (see
    `sitegen.screening.imports`); `encoding` when the export is not UTF-8 or UTF-16. Nothing is written
    when the export cannot be read. A folder that is no review is said first, before the export is read. A
    `reviewer` named almost as the adjudication file is refused before anything, as `check` would refuse its file."""
    if meant_as_adjudication(reviewer):
        raise OptionInvalid("--reviewer", f"{reviewer!r} would name a reviewer's file that `check` refuses as a near "
                            "miss of adjudication.csv: give the reviewer's own name, or 'adjudication'")
    refuse_non_review(root)
    try:
        exported = imports.read_export(decode(read_file(source), encoding), tool, tool_reviewer or reviewer, decision)
    except (ReferenceProblem, imports.ExportProblem) as problem:
        raise SitegenError(f"{shown_path(source)}:{problem.line}: {problem.message}; nothing was written") from None
    except LookupError as error:  # `encoding` is no text encoding (references.text_codec)
        raise OptionInvalid("--encoding", str(error)) from None
    except OSError as error:
        raise SitegenError(cannot_read(source, error)) from None
    with writable(root) as workspace:
        canonical = workspace.facts.canonicals
        report, text = imports.import_decisions(workspace.review, canonical, exported, stage, reviewer)
        if text is not None:
            transaction = Transaction(root)
            transaction.write(report.path, text)
            transaction.commit()
        return report


def state_advance(root: Path, at: str) -> tuple[str, str]:
    with writable(root) as workspace:
        return state.advance(workspace.review, workspace.facts, at)


def state_set(root: Path, name: str, value: str) -> ReviewState:
    given = state.given_value(name, value)  # a value wrong in itself is refused before the review is read
    with writable(root) as workspace:
        return state.set_field(workspace.review, name, given)


def finish_interrupted(root: Path, discard: bool = False) -> list[str]:
    """Finish (or discard, before its commit point or when `discard`) a write an earlier process was
    interrupted in."""
    with review_lock(root):
        return recover(root, discard)


def search(query: str, sources: list[str], *, native: bool, since: int | None, mode: str,
           review_dir: Path | None, semantic: bool = False, progress: Progress = _quiet) -> SearchResult:
    """A one-shot search of several providers, merged by identity (the review only lends its snapshots)."""
    from sitegen.sources.search import open_fetcher
    from sitegen.sources.search import search as search_sources

    if review_dir is not None:  # its snapshots are read or written: a folder that is no review is said first
        refuse_non_review(review_dir)
    # Recording writes the review's snapshots: no other sitegen process may write them meanwhile.
    with review_lock(review_dir) if mode == "record" and review_dir else nullcontext():
        with open_fetcher(mode, review_dir / "snapshots" if review_dir else None) as fetcher:
            return search_sources(fetcher, query, sources, native=native, since=since, semantic=semantic,
                                  progress=progress)


def loop(directory: Path, topic: str, *, sources: list[str], mode: str, draft: Path | None = None,
         bib: Path | None = None, out: Path | None = None, apply: bool = False, verify: Any = None,
         transport: Any = None, max_searches: int | None = None, max_lookups: int | None = None):
    """One step of a manuscript's evidence loop: apply the last round's confirmation, or run the next round."""
    from sitegen.manuscript.loop import MAX_LOOKUPS, MAX_SEARCHES, step

    return step(directory, topic, sources=sources, mode=mode, draft=draft, bib=bib, out=out, apply=apply,
                verify=verify, transport=transport, max_searches=MAX_SEARCHES if max_searches is None else max_searches,
                max_lookups=MAX_LOOKUPS if max_lookups is None else max_lookups)


EVALUATE_INPUT_BYTES = 5_000_000  # runs, judgments and known items are ids and grades: 5 MB is a large benchmark


def _benchmark_file(path: Path, model: type, problems: list[Problem]) -> Any:
    """`path` read as `model` (see sitegen.records.metrics), or None with its problems (file, line, column)."""
    from sitegen.review.parsing import parse_json, read_text, validate

    text, found = read_text(path, str(path), EVALUATE_INPUT_BYTES)
    parsed = None
    if text is not None:
        parsed, found = parse_json(text, str(path))
    value = None
    if parsed is not None:
        value, found = validate(model, parsed, str(path))
    problems.extend(found)
    return value


def evaluate_inputs(runs: Path, judgments: Path, known: Path | None) -> dict[str, Path]:
    """The files evaluate reads, by option: its report may replace none of them, --force or not."""
    return {"--runs": runs, "--judgments": judgments, **({"--known": known} if known is not None else {})}


def evaluate(runs: Path, judgments: Path, known: Path | None, ks: list[int], out: Path, force: bool = False):
    """Frozen runs scored against judgments (and known items) at each k, written to `out` as JSON. Offline;
    an existing `out` is replaced only with `force`, and nothing is written when an input has a problem."""
    from sitegen.records.metrics import Judgments, KnownItems, Runs
    from sitegen.records.metrics import evaluate as score

    check_outputs(evaluate_inputs(runs, judgments, known), {"--out": (out, None)}, force)
    problems: list[Problem] = []
    inputs = (_benchmark_file(runs, Runs, problems), _benchmark_file(judgments, Judgments, problems),
              _benchmark_file(known, KnownItems, problems) if known is not None else None)
    if problems:
        raise ReviewInvalid(problems)
    try:
        report = score(*inputs, ks)
    except ValueError as error:
        raise SitegenError(f"--k: {error}") from None
    atomic_write(out, report.model_dump_json(indent=2) + "\n", sweep=True)
    return report
