"""Reviewers' decisions on probable duplicates (duplicates.csv): what they confirm, and what check refuses.

The matcher (`sitegen.records.matching`) merges only the pairs it is sure of; a *probable* pair goes to a
reviewer, who writes one row in duplicates.csv: `same` makes `record_id` a duplicate of `duplicate_of`
(the canonical record), `different` keeps both and stops `sitegen probable-duplicates` listing the pair.

Nothing is rewritten: a confirmed duplicate keeps its id, its record, its ledger entries and its
decision files. What follows from the decision is derived on every command: PRISMA counts the duplicate
among the duplicate records removed, not among the records screened; it leaves the screening queues;
its decisions no longer count; the site links it to its canonical record.

Every `same` row names the canonical record itself. A duplicate of a duplicate is refused, naming the
record to point at, rather than resolved through the chain: each line of the file then says which
record stands for the group, and re-pointing one row never silently moves the records behind it.

The matcher never merges records whose identifiers differ (two DOIs), but lists them; the reviewer who compares
the two may decide them `same` (a paper registered twice, a source's wrong DOI). Through a group, where nobody
compared them, differing identifiers still refuse a row.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from sitegen.living.merge import linked_records
from sitegen.records.matching import find_duplicates, joined_conflict, record_work, title_score
from sitegen.review.folder import DuplicateRow, Review
from sitegen.review.models import STAGES
from sitegen.review.problems import Problem
from sitegen.screening.outcomes import TO_FULL_TEXT, review_outcomes


@dataclass(frozen=True)
class Duplicate:
    """A record a reviewer confirmed to be another record (its canonical one)."""

    canonical: str
    reviewer: str
    note: str


def confirmed_duplicates(review: Review) -> dict[str, Duplicate]:
    """Duplicate record id -> its canonical record, from the `same` rows `check` accepts."""
    return {row.decision.record_id: Duplicate(row.decision.duplicate_of, row.decision.reviewer, row.decision.note)
            for row in _accepted(review)[0]}


def matched_within(record_ids: Iterable[str], matched: Iterable[str], canonical: Mapping[str, str]) -> list[str]:
    """Of the records a run's batch (`record_ids`) matched by metadata (`matched`), those it matched to another record
    of the batch (a work the run found twice; `canonical`: a match's record -> the record it was matched to), not to
    one the review held before the run. The batch page, the run report and its --json tell the two apart by it."""
    batch = set(record_ids)  # the callers give a batch's list: a set, or every match scans the whole batch
    return [record_id for record_id in matched if canonical.get(record_id) in batch]


def duplicates_of(duplicates: dict[str, Duplicate]) -> dict[str, list[str]]:
    """Canonical record id -> its confirmed duplicates, sorted."""
    found: dict[str, list[str]] = {}
    for duplicate, about in sorted(duplicates.items()):
        found.setdefault(about.canonical, []).append(duplicate)
    return found


def _accepted(review: Review) -> tuple[list[DuplicateRow], list[Problem]]:
    """The `same` rows that take effect, and the problems of every row. A row with a problem never takes
    effect, so a broken file can still be inspected without counting a wrong merge."""
    problems: list[Problem] = []
    decided: dict[frozenset[str], int] = {}  # the pair -> the line that decided it
    same: list[DuplicateRow] = []
    different: list[DuplicateRow] = []
    for row in review.duplicates:
        pair = row.decision.record_id, row.decision.duplicate_of
        absent = [(name, rid) for name, rid in zip(("record_id", "duplicate_of"), pair, strict=True)
                  if rid not in review.records]
        problems += [_problem(row, name, "unknown-record", review.absent_record(rid))
                     for name, rid in absent if review.lacks_record(rid)]
        if absent and review.records_loaded:  # a row naming an invalid record waits for it to be mended
            continue
        if frozenset(pair) in decided:
            problems.append(_problem(row, "record_id", "duplicate-pair",
                                     f"the pair {pair[0]!r} and {pair[1]!r} is already decided on line "
                                     f"{decided[frozenset(pair)]}; decide a pair once"))
            continue
        decided[frozenset(pair)] = row.line
        if row.decision.decision == "same" and _versions_of(review, *pair):
            problems.append(_problem(row, "decision", "same-but-versions",
                                     f"records {pair[0]!r} and {pair[1]!r} are linked as versions of one study "
                                     "(custom.other_versions in records.jsonl): a preprint and its journal "
                                     "version are two reports and are never merged; decide the pair `different`, "
                                     "or remove the version link if they are one report"))
            continue
        (same if row.decision.decision == "same" else different).append(row)
    first: dict[str, DuplicateRow] = {}
    for row in same:
        earlier = first.setdefault(row.decision.record_id, row)
        if earlier is not row:
            problems.append(_problem(row, "record_id", "two-canonicals",
                                     f"record {row.decision.record_id!r} is already a duplicate of "
                                     f"{earlier.decision.duplicate_of!r} (line {earlier.line}); a duplicate "
                                     "has one canonical record"))
    kept = [row for row in same if first[row.decision.record_id] is row]
    accepted = []
    for row in kept:
        target = first.get(row.decision.duplicate_of)
        if target is not None:
            problems.append(_problem(row, "duplicate_of", "duplicate-of-duplicate",
                                     f"record {row.decision.duplicate_of!r} is itself a duplicate of "
                                     f"{target.decision.duplicate_of!r} (line {target.line}); point at "
                                     f"{target.decision.duplicate_of!r}"))
        else:
            accepted.append(row)
    accepted, conflicts = _without_conflicts(review, accepted)
    problems += conflicts
    accepted, losses = _without_losses(review, accepted)
    problems += losses
    group = {row.decision.record_id: row.decision.duplicate_of for row in accepted}
    for row in different:
        a, b = row.decision.record_id, row.decision.duplicate_of
        if group.get(a, a) == group.get(b, b):
            problems.append(_problem(row, "decision", "different-but-joined",
                                     f"records {a!r} and {b!r} are decided different here, but `same` rows "
                                     f"make both duplicates of {group.get(a, a)!r}"))
    return accepted, problems


def _without_conflicts(review: Review, rows: list[DuplicateRow]) -> tuple[list[DuplicateRow], list[Problem]]:
    """The rows that join no two records the matcher rules out (an erratum and its article, years far apart, a
    preprint and its journal version; different DOIs or PMIDs), and a problem for each that would: its own pair,
    or the group it joins (every duplicate of one canonical record is one work with every other). Identifiers
    that differ do not refuse the row's own pair (`conflict_beyond_identifiers`): the reviewer compared those two
    records, and a paper registered twice or a source's wrong DOI is theirs to judge; through the group, where
    nobody compared the two records, they do."""
    if not review.records_loaded:
        return rows, []
    works = {}
    members: dict[str, list[DuplicateRow]] = {}
    problems, kept = [], []
    for row in rows:
        canonical = row.decision.duplicate_of
        group = [canonical] + [other.decision.record_id for other in members.get(canonical, [])]
        for rid in (row.decision.record_id, *group):
            if rid not in works:
                works[rid] = record_work(review.records[rid])
        reason = next(((other, why) for other in group
                       if (why := joined_conflict(works[row.decision.record_id], works[other], other == canonical))),
                      None)
        if reason is None:
            members.setdefault(canonical, []).append(row)
            kept.append(row)
            continue
        other, why = reason
        joined = "" if other == canonical else f" through {canonical!r}"
        problems.append(_problem(row, "decision", "conflicting-same",
                                 f"records {row.decision.record_id!r} and {other!r} cannot be one work "
                                 f"({why}), but this row would join them{joined}"))
    return kept, problems


def _versions_of(review: Review, a: str, b: str) -> bool:
    record = review.records.get(a)
    return record is not None and b in record.custom.other_versions


def _without_losses(review: Review, rows: list[DuplicateRow]) -> tuple[list[DuplicateRow], list[Problem]]:
    """The rows that drop nothing reviewers found: a confirmed duplicate's decisions stop counting and its
    evidence is no longer its study's, so where any reviewer included the duplicate at a stage (or said maybe)
    its canonical record must be included there too (or a maybe), and a duplicate with an evidence file needs a canonical
    record with one. A record nobody has screened yet (as `update` finds them) loses nothing."""
    if not rows:
        return rows, []
    # At title/abstract a maybe sends a record on to full text as an include does, so it is kept alike; at full text
    # only an include makes a study (a canonical record that is only a maybe there would drop the included one).
    onward = {"title-abstract": TO_FULL_TEXT, "full-text": ("include",)}
    sent_on = {stage: {rid for rid, outcome in review_outcomes(review, stage).items()
                       if outcome.decision in onward[stage]} for stage in STAGES}
    sent_on_by_anyone: dict[tuple[str, str], str] = {}
    for decided in review.decisions:  # an include said by anyone is named before a maybe
        if decided.decision.decision in onward[decided.stage]:
            key = (decided.decision.record_id, decided.stage)
            sent_on_by_anyone[key] = min(decided.decision.decision, sent_on_by_anyone.get(key, "maybe"))
    evidence = {item.evidence.record_id: item.path for item in review.evidence}
    kept, problems = [], []
    for row in rows:
        duplicate, canonical = row.decision.record_id, row.decision.duplicate_of
        lost = [f"{'an include' if decided == 'include' else 'a maybe'} decision at {stage}" for stage in STAGES
                if (decided := sent_on_by_anyone.get((duplicate, stage))) and canonical not in sent_on[stage]]
        if duplicate in evidence and canonical not in evidence:
            lost.append(f"its evidence ({evidence[duplicate]})")
        if not lost:
            kept.append(row)
            continue
        problems.append(_problem(row, "duplicate_of", "same-drops-study",
                                 f"record {duplicate!r} has {' and '.join(lost)}, which its canonical record "
                                 f"{canonical!r} lacks: confirming this row would silently drop them. Point "
                                 f"the row the other way ({canonical},{duplicate}), or move the decisions and "
                                 f"evidence to {canonical!r} first"))
    return kept, problems


def duplicate_problems(review: Review) -> list[Problem]:
    """Every problem of duplicates.csv: unknown records, a pair decided twice (either way round), a
    record with two canonical records or pointing at a duplicate, a `same` that joins records that cannot
    be one work or two versions of one study, or that would drop an included study or its evidence, a
    `different` that `same` rows contradict. (A record paired with itself and an unknown
    decision are the file's own problems, found when it is loaded.)"""
    return _accepted(review)[1]


def _problem(row: DuplicateRow, column: str, code: str, message: str) -> Problem:
    return Problem(row.path, row.line, row.columns.get(column), code, message)


@dataclass(frozen=True)
class Suggestion:
    """A pair the matcher finds, that no row of duplicates.csv decides yet: a line for a reviewer to add."""

    record_id: str  # the suggested duplicate
    duplicate_of: str  # the suggested canonical record
    verdict: Literal["same", "probable"]
    score: float  # normalised-title similarity, 0-100

    def row(self, reviewer: str) -> str:
        """The line of duplicates.csv that confirms the pair (a reviewer who finds two works writes
        `different` instead)."""
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="").writerow([self.record_id, self.duplicate_of, "same", reviewer, ""])
        return buffer.getvalue()


def _sharing_an_identifier(review: Review) -> list[tuple[str, str]]:
    """Pairs of records that share a published identifier yet are two records: identity kept them apart (a
    conference supplement gives its DOI to every abstract, a translated title reads as another work) and said
    so in a note "kept apart for a reviewer", or a search result linked them by one neither holds (a note says
    so): this is where a reviewer is asked."""
    holders: dict[tuple[str, str], list[str]] = {}
    linked: list[list[str]] = []  # records a search result linked by an identifier neither of them holds
    for record_id, record in review.records.items():
        for key in record.identifiers().items():
            holders.setdefault(key, []).append(record_id)
        linked += linked_records(record)
    groups = [*holders.values(), *([rid for rid in ids if rid in review.records] for ids in linked)]
    return sorted({(ids[0], other) for ids in groups if len(ids) > 1 for other in ids[1:]})


def suggestions(review: Review) -> list[Suggestion]:
    """The matcher's pairs among the review's records that await a reviewer, most similar first: its
    probable pairs, and the pairs of any set it calls the same (identity did not merge them when they
    arrived, so a reviewer confirms these too). A pair already decided, or joined by confirmed duplicates,
    is left out. Each is put as a row would be: a confirmed duplicate's canonical record stands for it,
    and a record that is already canonical stays so."""
    duplicates = confirmed_duplicates(review)
    canonicals = set(duplicates_of(duplicates))
    decided = {frozenset((row.decision.record_id, row.decision.duplicate_of)) for row in review.duplicates}
    works = {record_id: record_work(record) for record_id, record in review.records.items()}
    matches = find_duplicates(list(works.values()))
    pairs: list[tuple[str, str, Literal["same", "probable"], float]] = [
        (a, b, "probable", score) for a, b, score in matches.probable]
    pairs += [(members[0], other, "same", title_score(works[members[0]], works[other]))
              for members in matches.sets for other in members[1:]]
    pairs += [(a, b, "probable", title_score(works[a], works[b])) for a, b in _sharing_an_identifier(review)]
    found: dict[frozenset[str], Suggestion] = {}
    for a, b, verdict, score in pairs:
        if frozenset((a, b)) in decided:
            continue
        a, b = (duplicates[a].canonical if a in duplicates else a), (duplicates[b].canonical if b in duplicates else b)
        if a == b or frozenset((a, b)) in decided:
            continue
        keep, duplicate = (b, a) if b in canonicals and a not in canonicals else (a, b)
        found.setdefault(frozenset((a, b)), Suggestion(duplicate, keep, verdict, score))
    return sorted(found.values(), key=lambda s: (-s.score, s.verdict != "same", s.record_id, s.duplicate_of))
