"""Ranked screening batches and the weekly digest.

Each batch is ranked by relevance (`sitegen.screening.relevance`) for the digest
and the site, and so are the records imported outside a batch, as one group; their
screening order (`sitegen screen rank`) comes from a model trained on the review's
own title/abstract decisions (`sitegen.screening.ranking`). Neither ever writes a
decision. The digest for an ISO week gathers the week's new records: the batches
that arrived that week and the records first imported that week outside a batch.
It lists the KEEP list with rationales, the REVIEW cases, what was dropped and
why, what was already covered, and the calibration summary.

"Prior" records, against which novelty is judged, are the new records of the
four weeks before (their batches', and those first imported then outside a
batch) that reviewers included at title and abstract: human decisions, not
earlier scores, say what a digest already covered.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import UTC, date, timedelta
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from sitegen.errors import OptionInvalid, SitegenError
from sitegen.records.providers import label as provider_label
from sitegen.review import kept
from sitegen.review.folder import Review, locked_protocol
from sitegen.review.models import (
    KEEP_FROM,
    REVIEW_FROM,
    ProtocolLockPayload,
    ProtocolMeta,
    RetrievalPayload,
    Thresholds,
    parse_timestamp,
    utc_day,
)
from sitegen.screening.relevance import (
    Assessment,
    Prior,
    PriorIndex,
    Ranking,
    Scored,
    Scorer,
    index_priors,
    prior_entry,
    rank,
)
from sitegen.screening.status import Batch, ScreeningFacts
from sitegen.text import counted, markdown_code, markdown_safe

if TYPE_CHECKING:
    from sitegen.screening.ranking import ScreeningOrder

PRIOR_WEEKS = 4
# Rankings kept between builds (`kept.kept_value`): every batch's and week's of a few reviews read in turn.
RANKINGS_KEPT = 2000
FORKED_FROM = 5000  # records ranked: a larger ranking is kept by a forked process, while the build goes on
RANKING_LIBRARIES = ("numpy", "rapidfuzz")  # whose code ranks (title likeness): another version, another ranking
EARLIEST_YEAR = 1900


class Digest(BaseModel):
    week: str  # ISO week, YYYY-Www
    batches: list[int]
    ranking: Ranking
    imported: int = 0  # of the records ranked, those first imported this week outside a batch
    # The week's search runs a source did not answer in full ("PubMed (label) in the run of object-in-context on
    # 2026-06-01"): its new records may be missing, so the digest is not every new record of the week.
    unreached: list[str] = []
    # The thresholds it was ranked with: state.json's as they are now, whatever the week (as its cap is).
    thresholds: Thresholds = Thresholds()


def iso_week(timestamp: str) -> str:
    return week_of(parse_timestamp(timestamp).astimezone(UTC).date())  # one instant, one week: its UTC day's


def week_of(day: date) -> str:
    """The ISO week (YYYY-Www) a day is in."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def weeks_in(year: int) -> int:
    """How many ISO weeks a year has: 28 December is always in its last one."""
    return date(year, 12, 28).isocalendar()[1]


def week_start(week: str) -> date:
    """Monday of an ISO week given as YYYY-Www (or ISO's basic YYYYWww). "2026-02" is refused: it reads as
    February as well as week 2."""
    match = re.fullmatch(r"([0-9]{4})-?W([0-9]{2})", week)
    refusal = f"{week!r} is not an ISO week such as 2026-W23"
    if not match:
        raise OptionInvalid("--week", refusal)
    year, number = int(match.group(1)), int(match.group(2))
    try:
        start = date.fromisocalendar(year, number, 1)
    except ValueError:
        if year < 1:  # no year 0 in the calendar, nor any weeks to name
            raise OptionInvalid("--week", refusal) from None
        # The form is right, the number is not: say which weeks the year has (52, or 53 as in 2020 and 2026).
        raise OptionInvalid("--week", f"{refusal}: {year} has weeks W01 to W{weeks_in(year)}") from None
    if start.year < EARLIEST_YEAR:  # the weeks before it (the digest's prior window) must be real dates too
        raise OptionInvalid("--week", f"{week!r} is before {EARLIEST_YEAR}; no living review has a batch then")
    return start


class Relevance:
    """The review's batches and weeks ranked by relevance, each paper assessed once.

    A paper's assessment depends only on the protocol it is scored under and its week's prior (the
    included records of the PRIOR_WEEKS weeks before), so it is made once for each of those and shared:
    a batch and the digest of its week reuse it, and a week of one batch is that batch's Ranking. The
    facts the rankings read (who was included, each week's prior, each locked protocol) are derived once.
    `ranked` holds batch rankings already made from the same review (`rank_batches`), to be reused.
    """

    def __init__(self, review: Review, screening: ScreeningFacts, ranked: dict[int | None, Ranking] | None = None):
        self.review, self.screening = review, screening
        self._priors: dict[date | None, PriorIndex] = {}
        self._prior_entries: dict[tuple[str, str], Prior] = {}  # by record id and the week it was covered in
        self._scorers: dict[int | None, Scorer] = {}
        self._assessments: dict[tuple[int | None, date | None, str], Assessment] = {}
        ranked = ranked or {}
        self._rankings: dict[tuple[int | None, date | None, tuple[str, ...]], Ranking] = {
            self._key(screening.to_screen(batch.record_ids), batch.protocol_version, _start(batch)): ranked[batch.number]
            for batch in screening.batches if batch.number in ranked}

    @cached_property
    def _locked(self) -> dict[int, ProtocolMeta]:
        """Each protocol version locked with its text on the ledger, as first locked."""
        locked: dict[int, ProtocolMeta] = {}
        for payload in self.review.payloads:
            if isinstance(payload, ProtocolLockPayload) and payload.text and payload.version not in locked:
                protocol = locked_protocol(payload.text)
                if protocol is not None:
                    locked[payload.version] = protocol.meta
        return locked

    def protocol(self, version: int | None) -> tuple[int | None, ProtocolMeta]:
        """The protocol as it was at `version` (its text is kept on the ledger), else the current one (None)."""
        return (version, self._locked[version]) if version in self._locked else (None, self.review.protocol.meta)

    @cached_property
    def _included(self) -> list[tuple[date, list[str]]]:
        """Each dated batch's (and import's) UTC day and the records of it that reviewers included at title and
        abstract. Imports too: their records are new records of their week's digest (`week`), so once included they
        were covered as much as a batch's. The UTC day, as its week (`iso_week`) is: a batch at 01:00 on a Monday at
        +02:00 arrived in the week before, and belongs in the next week's prior."""
        outcomes = self.screening.outcomes["title-abstract"]
        return [(parse_timestamp(batch.created).astimezone(UTC).date(),
                 [i for i in batch.record_ids if i in outcomes and outcomes[i].decision == "include"])
                for batch in [*self.screening.batches, *self.screening.imports] if batch.created]

    def _prior_weeks(self, start: date | None) -> dict[str, str]:
        """Records of the batches and imports in the PRIOR_WEEKS weeks before `start` that reviewers included, each
        with the week it was covered in (the earliest of its batches there), in the order the batches list them."""
        covered: dict[str, str] = {}
        if start is None:
            return covered
        earliest = start - timedelta(weeks=PRIOR_WEEKS)
        for day, ids in self._included:
            if earliest <= day < start:
                week = week_of(day)
                for record_id in ids:
                    covered[record_id] = min(covered.get(record_id, week), week)
        return covered

    def _prior(self, start: date | None) -> PriorIndex:
        if start not in self._priors:
            included = self._prior_weeks(start).items()
            for covered in included:
                if covered not in self._prior_entries:
                    record_id, week = covered
                    self._prior_entries[covered] = prior_entry(self.review.records[record_id], week)
            self._priors[start] = index_priors([self._prior_entries[covered] for covered in included])
        return self._priors[start]

    def _key(self, record_ids: list[str], version: int | None, start: date | None) -> tuple:
        return self.protocol(version)[0], start, tuple(record_ids)

    def rank(self, record_ids: list[str], version: int | None, start: date | None) -> Ranking:
        """The records ranked under protocol `version`, for novelty against the prior of the week from `start`
        (none without a week). Kept between builds by what it is made from (`_inputs`): a ranking of 20,000
        records took a second, and a decision that changes none of them (at full text) changes no ranking."""
        key = self._key(record_ids, version, start)
        if key not in self._rankings:
            inputs = self._inputs(record_ids, version, start) if self._kept_in is not None else None
            make = partial(self._ranked, record_ids, version, start)
            self._rankings[key] = make() if inputs is None else kept.kept_value(
                "ranking", inputs, self._kept_in, make, Ranking, libraries=RANKING_LIBRARIES, kept=RANKINGS_KEPT,
                forked=len(record_ids) > FORKED_FROM)
        return self._rankings[key]

    @cached_property
    def _kept_in(self) -> Path | None:
        """Where rankings are kept (`kept.cache_folder`), worked out once for the many a build makes."""
        return kept.cache_folder(os.environ, self.review.root)

    def _inputs(self, record_ids: list[str], version: int | None, start: date | None) -> str | None:
        """A digest of everything a ranking is made from: the protocol's terms, the week, the cap, and the
        records ranked and those of the week's prior (with the week each was covered in), each by its id and line (`Review.record_digests`; a record
        the site shows as retracted has another, which only makes its rankings again: none reads retraction);
        None when a record has no line to be known by."""
        digests = self.review.record_digests
        digest = hashlib.sha256(self.protocol(version)[1].model_dump_json().encode())
        state = self.review.state
        digest.update(repr((start, state.max_kept, state.thresholds.keep_from, state.thresholds.review_from)).encode())
        for group in (self._prior_weeks(start).items(), ((record_id, "") for record_id in record_ids)):
            digest.update(b"\0group")
            for record_id, week in group:
                if record_id not in digests:
                    return None
                digest.update(record_id.encode() + b"\0" + week.encode() + b"\0" + digests[record_id])
        return digest.hexdigest()

    def _ranked(self, record_ids: list[str], version: int | None, start: date | None) -> Ranking:
        version, protocol = self.protocol(version)
        if version not in self._scorers:
            self._scorers[version] = Scorer(protocol)
        new = [i for i in dict.fromkeys(record_ids) if (version, start, i) not in self._assessments]
        assessed = self._scorers[version].assess_all([self.review.records[i] for i in new], self._prior(start))
        for record_id, assessment in zip(new, assessed, strict=True):
            self._assessments[version, start, record_id] = assessment
        return rank([self._assessments[version, start, i] for i in record_ids], self.review.state.max_kept,
                    self.review.state.thresholds)

    def batch(self, batch: Batch, record_ids: list[str] | None = None) -> Ranking:
        """A batch (or `record_ids` of it) ranked under the protocol version it is screened under."""
        return self.rank(self.screening.to_screen(batch.record_ids) if record_ids is None else record_ids,
                         batch.protocol_version, _start(batch))

    def week(self, week: str) -> Digest:
        """The digest of an ISO week (YYYY-Www)."""
        start = week_start(week)
        year, number, _ = start.isocalendar()
        week = f"{year}-W{number:02d}"
        # The week's new records: its batches', then those first imported this week outside a batch.
        arrived = [b for b in [*self.screening.batches, *self.screening.imports]
                   if b.created and iso_week(b.created) == week]
        record_ids = list(dict.fromkeys(i for batch in arrived for i in self.screening.to_screen(batch.record_ids)))
        version = max((b.protocol_version or 0 for b in arrived), default=None)
        imported = sum(len(self.screening.to_screen(b.record_ids)) for b in arrived if b.number is None)
        return Digest(week=week, batches=[b.number for b in arrived if b.number], imported=imported,
                      ranking=self.rank(record_ids, version, start), unreached=self._unreached(week),
                      thresholds=self.review.state.thresholds)

    def _unreached(self, week: str) -> list[str]:
        """Each strategy a run of the week did not get answered in full, as the ledger records it."""
        return list(dict.fromkeys(
            f"{provider_label(payload.source)}{f' ({payload.label})' if payload.label else ''} in the run of "
            f"{payload.monitor_id} on {utc_day(event.ts)}"
            for event, payload in zip(self.review.ledger, self.review.payloads, strict=True)
            if isinstance(payload, RetrievalPayload) and not payload.complete and iso_week(event.ts) == week))


def _start(batch: Batch) -> date | None:
    """Monday of the week the batch arrived in, whose prior its novelty is judged against."""
    return week_start(iso_week(batch.created)) if batch.created else None


def rank_batch(review: Review, screening: ScreeningFacts, batch: Batch) -> Ranking:
    """A batch ranked under the protocol version it is screened under."""
    return Relevance(review, screening).batch(batch)


def rank_batches(relevance: Relevance) -> dict[int | None, Ranking]:
    """Each batch ranked, as its batch page and its records' pages show it; the records imported outside a batch
    (None) as one group, under the current protocol and with no week's prior: its imports span weeks."""
    return {batch.number: relevance.batch(batch) for batch in relevance.screening.batches}


def weekly_digests(relevance: Relevance) -> dict[str, Digest]:
    """The digest of every week in which new records arrived (`weeks`), oldest first."""
    return {week: relevance.week(week) for week in weeks(relevance.screening)}


def order_batch(review: Review, screening: ScreeningFacts, batch: Batch) -> ScreeningOrder:
    """The records of a batch still to screen at title/abstract (no decision yet, or awaiting another
    reviewer), ordered by a model trained on every title/abstract include and exclude of the review;
    by their seed-002 ranking until there are both. A 'maybe' or a conflict is neither a label nor
    still to screen."""
    # scikit-learn takes seconds to import: only the command that ranks loads it, not every command or the build.
    from sitegen.screening.ranking import Labelled, screening_order

    outcomes = screening.outcomes["title-abstract"]
    labelled = [Labelled(review.records[i], outcome.decision == "include") for i, outcome in outcomes.items()
                if outcome.decision in ("include", "exclude") and i in review.records]
    candidates = [i for i in screening.to_screen(batch.record_ids) if i not in outcomes or outcomes[i].decision == "awaiting"]
    fallback = Relevance(review, screening).batch(batch, candidates)
    return screening_order([review.records[i] for i in candidates], labelled, fallback)


def weekly(review: Review, screening: ScreeningFacts, week: str) -> Digest:
    """The digest of an ISO week (YYYY-Www)."""
    return Relevance(review, screening).week(week)


def weeks(screening: ScreeningFacts) -> list[str]:
    """Every ISO week in which a batch arrived or records were first imported outside a batch, oldest first."""
    return sorted({iso_week(b.created) for b in [*screening.batches, *screening.imports] if b.created})


# What an empty list of the digest says, in its Markdown and on its page: a bare "None." reads as a program's value.
EMPTY_SECTION = "No record this week."


def digest_sections(digest: Digest) -> list[tuple[str, list[Scored]]]:
    """The digest's lists, by heading, in the order it shows them."""
    decisions = digest.ranking.decisions
    return [
        ("Keep", [d for d in decisions if d.decision == "KEEP"]),
        ("Review", [d for d in decisions if d.decision == "REVIEW"]),
        ("Dropped", [d for d in decisions if d.decision == "DROP" and "already-covered" not in d.tags]),
        ("Already covered", [d for d in decisions if "already-covered" in d.tags]),
    ]


def digest_summary(digest: Digest) -> str:
    arrived = [f"screening batch {', '.join(str(n) for n in digest.batches)}"] if digest.batches else []
    arrived += [f"{digest.imported} imported outside a batch"] if digest.imported else []
    unreached = (f" Not every source answered in full this week ({'; '.join(digest.unreached)}): the new records it "
                 "holds may be missing, so these may not be all of the week's." if digest.unreached else "")
    if not arrived:  # "(screening batch none), ranked by relevance" read as a program's value, and ranked nothing
        return f"0 new records: no screening batch arrived and no record was first imported this week.{unreached}"
    return (f"{counted(len(digest.ranking.decisions), 'new record')} ({'; '.join(arrived)}), ranked by "
            f"relevance to the protocol. Scores order the batch for reviewers; they decide nothing.{unreached}")


def calibration_summary(digest: Digest) -> str:
    c = digest.ranking.calibration
    return (f"Kept {c.kept}, review {c.review}, dropped {c.dropped}; force-dropped as already covered "
            f"{c.force_dropped_already_covered}; demoted to review for the cap {c.demoted_for_cap}; "
            f"stricter criteria pass applied: {'yes' if c.stricter_pass_applied else 'no'}."
            + (f" {_in_scope_without_watchlist_term(c.in_scope_without_watchlist_term)} (it is the protocol's to "
               "change, never the digest's)." if c.in_scope_without_watchlist_term else "")
            + (f" {thresholds_note(digest.thresholds)}" if not digest.thresholds.seed_defaults else ""))


def thresholds_note(thresholds: Thresholds) -> str:
    """What a ranking says of thresholds other than seed 002's: their values, and that every ranking, an earlier
    week's too, is made with those state.json holds now (as with its cap), not those in force back then. Seed 002's
    own are said by each rationale alone ("KEEP: score 84 ≥ 70"), as every digest said them before they could be
    changed."""
    return (f"Thresholds: KEEP from {thresholds.keep_from}, REVIEW from {thresholds.review_from} (state.json's "
            f"keep_from and review_from, in place of seed 002's {KEEP_FROM} and {REVIEW_FROM}); every batch and week, "
            "earlier ones too, is ranked with the thresholds and cap state.json holds now.")


def _in_scope_without_watchlist_term(count: int) -> str:
    if count == 1:
        return "1 record the relevance criteria find in scope names no watchlist term: the watchlist may not anticipate it"
    return (f"{count} records the relevance criteria find in scope name no watchlist term: the watchlist may not "
            "anticipate them")


def digest_markdown(review: Review, digest: Digest) -> str:
    lines = [f"# Weekly digest {digest.week}", "", digest_summary(digest), ""]
    for heading, items in digest_sections(digest):
        lines += [f"## {heading} ({len(items)})", ""]
        lines += [f"- **{d.score}** {markdown_code(d.id)} {markdown_safe(review.records[d.id].title)}: "
                  f"{markdown_safe(d.rationale)}" for d in items]
        lines += [] if items else [EMPTY_SECTION]
        lines.append("")
    lines += ["## Calibration", "", calibration_summary(digest), ""]
    return "\n".join(lines)


def numbered_batch(screening: ScreeningFacts, number: int | None) -> Batch:
    """Screening batch `number`, or with None the records imported outside a batch, ranked as one group."""
    found = [b for b in screening.batches if b.number == number]
    if found:
        return found[0]
    if number is None:
        raise SitegenError("no record was imported outside a screening batch")
    imported = any(b.number is None for b in screening.batches)
    hint = "; rank the records imported outside a batch with --imported" if imported else ""
    raise SitegenError(f"there is no screening batch {number}{hint}")
