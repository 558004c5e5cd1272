"""Ranked screening batches and the weekly digest.

Each batch is ranked by relevance (`sitegen.screening.relevance`) for the digest
and the site; its screening order (`sitegen screen rank`) comes from a model
trained on the review's own title/abstract decisions (`sitegen.screening.ranking`).
Neither ever writes a decision. The
digest for an ISO week gathers the batches that arrived that week: the KEEP
list with rationales, the REVIEW cases, what was dropped and why, what was
already covered, and the calibration summary.

"Prior" records, against which novelty is judged, are those of the batches of
the four weeks before, that reviewers included at title and abstract: human
decisions, not earlier scores, say what a digest already covered.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel

from sitegen.errors import SitegenError
from sitegen.review.folder import Review, parse_protocol
from sitegen.review.models import ProtocolLockPayload, ProtocolMeta, parse_timestamp
from sitegen.screening.relevance import Ranking, score_batch
from sitegen.screening.status import Batch, ScreeningFacts
from sitegen.text import markdown_code, markdown_safe

if TYPE_CHECKING:
    from sitegen.screening.ranking import ScreeningOrder

PRIOR_WEEKS = 4
EARLIEST_YEAR = 1900


class Digest(BaseModel):
    week: str  # ISO week, YYYY-Www
    batches: list[int]
    ranking: Ranking


def iso_week(timestamp: str) -> str:
    year, week, _ = parse_timestamp(timestamp).isocalendar()
    return f"{year}-W{week:02d}"


def week_start(week: str) -> date:
    """Monday of an ISO week given as YYYY-Www (or YYYY-WW)."""
    match = re.fullmatch(r"([0-9]{4})-W?([0-9]{2})", week)
    try:
        if not match:
            raise ValueError
        start = date.fromisocalendar(int(match.group(1)), int(match.group(2)), 1)
    except ValueError:
        raise SitegenError(f"--week {week!r} is not an ISO week such as 2026-W23") from None
    if start.year < EARLIEST_YEAR:  # the weeks before it (the digest's prior window) must be real dates too
        raise SitegenError(f"--week {week!r} is before {EARLIEST_YEAR}; no living review has a batch then")
    return start


def _prior(review: Review, screening: ScreeningFacts, start: date) -> list:
    """Records of the batches in the PRIOR_WEEKS weeks before `start` that reviewers included."""
    included = {i for i, o in screening.outcomes["title-abstract"].items() if o.decision == "include"}
    earliest = start - timedelta(weeks=PRIOR_WEEKS)
    return [review.records[i] for batch in screening.batches if batch.created
            and earliest <= parse_timestamp(batch.created).date() < start
            for i in batch.record_ids if i in included]


def protocol_meta(review: Review, version: int | None) -> ProtocolMeta:
    """The protocol as it was at `version` (its text is kept on the ledger), else the current one."""
    for payload in review.payloads:
        if isinstance(payload, ProtocolLockPayload) and payload.version == version and payload.text:
            protocol, _ = parse_protocol(payload.text)
            if protocol is not None:
                return protocol.meta
    return review.protocol.meta


def rank_batch(review: Review, screening: ScreeningFacts, batch: Batch) -> Ranking:
    """A batch ranked under the protocol version it is screened under."""
    prior = _prior(review, screening, week_start(iso_week(batch.created))) if batch.created else []
    return score_batch([review.records[i] for i in screening.to_screen(batch.record_ids)], protocol_meta(review, batch.protocol_version),
                       prior, review.state.max_kept)


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
    candidates = [review.records[i] for i in screening.to_screen(batch.record_ids)
                  if i not in outcomes or outcomes[i].decision == "awaiting"]
    prior = _prior(review, screening, week_start(iso_week(batch.created))) if batch.created else []
    fallback = score_batch(candidates, protocol_meta(review, batch.protocol_version), prior, review.state.max_kept)
    return screening_order(candidates, labelled, fallback)


def weekly(review: Review, screening: ScreeningFacts, week: str) -> Digest:
    """The digest of an ISO week (YYYY-Www, or YYYY-WW)."""
    start = week_start(week)
    year, number, _ = start.isocalendar()
    week = f"{year}-W{number:02d}"
    chosen = [b for b in screening.batches if b.created and iso_week(b.created) == week]
    records = [review.records[i] for i in dict.fromkeys(i for batch in chosen for i in screening.to_screen(batch.record_ids))]
    version = max((b.protocol_version or 0 for b in chosen), default=None)
    ranking = score_batch(records, protocol_meta(review, version), _prior(review, screening, start),
                          review.state.max_kept)
    return Digest(week=week, batches=[b.number for b in chosen if b.number], ranking=ranking)


def weeks(screening: ScreeningFacts) -> list[str]:
    """Every ISO week in which a batch arrived, oldest first."""
    return sorted({iso_week(b.created) for b in screening.batches if b.created})


def digest_markdown(review: Review, digest: Digest) -> str:
    decisions = digest.ranking.decisions
    title = {i: review.records[i].title for i in (d.id for d in decisions)}
    sections = [
        ("Keep", [d for d in decisions if d.decision == "KEEP"]),
        ("Review", [d for d in decisions if d.decision == "REVIEW"]),
        ("Dropped", [d for d in decisions if d.decision == "DROP" and "already-covered" not in d.tags]),
        ("Already covered", [d for d in decisions if "already-covered" in d.tags]),
    ]
    batch_names = ", ".join(str(n) for n in digest.batches) or "none"
    lines = [f"# Weekly digest {digest.week}", "",
             f"{len(decisions)} new records (screening batch {batch_names}), ranked by relevance to the protocol. "
             "Scores order the batch for reviewers; they decide nothing.", ""]
    for heading, items in sections:
        lines += [f"## {heading} ({len(items)})", ""]
        lines += [f"- **{d.score}** {markdown_code(d.id)} {markdown_safe(title[d.id])}: {markdown_safe(d.rationale)}" for d in items]
        lines += [] if items else ["None."]
        lines.append("")
    c = digest.ranking.calibration
    lines += ["## Calibration", "",
              f"Kept {c.kept}, review {c.review}, dropped {c.dropped}; force-dropped as already covered "
              f"{c.force_dropped_already_covered}; demoted to review for the cap {c.demoted_for_cap}; "
              f"stricter criteria pass applied: {'yes' if c.stricter_pass_applied else 'no'}.", ""]
    return "\n".join(lines)


def numbered_batch(screening: ScreeningFacts, number: int) -> Batch:
    found = [b for b in screening.batches if b.number == number]
    if not found:
        raise SitegenError(f"there is no screening batch {number}")
    return found[0]
