"""Reciprocal rank fusion (`rrf-60-v1`): several ranked lanes made one order, each hit with its why.

A lane is one ranked result list (a provider's search, best first). Records are joined across lanes
by identity (`sitegen.records.identity.deduplicate`: identifiers only, never titles), and each
joined hit scores

    score(hit) = sum over the lanes that retrieved it of 1 / (60 + rank in that lane)

with rank 1-based, each lane counted once at its best rank. There is no citation or recency boost,
and the constant 60 and equal lane weights are the usual untuned defaults (Cormack et al. 2009).
Hits are ordered by score (highest first), then by record id, then by the canonical JSON of the
record and its reasons, so the order does not depend on the order of the lanes or of the records.
`reasons` lists exactly the lanes and ranks that retrieved the hit: its "why this record".
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sitegen.records.identity import deduplicate
from sitegen.records.model import Record, model_data

RANKING_VERSION = "rrf-60-v1"
RRF_K = 60


@dataclass(frozen=True)
class Lane:
    name: str
    records: list[Record]  # best first
    shortlist: bool = False  # a bounded candidate list (a semantic lane), not a database search


@dataclass(frozen=True)
class Reason:
    lane: str
    rank: int  # 1-based, the best rank at which this lane returned the hit
    shortlist: bool = False

    def report(self) -> dict[str, object]:
        return {"lane": self.lane, "rank": self.rank} | ({"shortlist": True} if self.shortlist else {})


@dataclass(frozen=True)
class Hit:
    record: Record
    score: float
    reasons: list[Reason]  # ordered by rank, then lane

    def why(self) -> str:
        return ", ".join(f"{reason.lane} #{reason.rank}" + (" (shortlist)" if reason.shortlist else "")
                         for reason in self.reasons)


def fuse(lanes: list[Lane]) -> list[Hit]:
    """The records of every lane, joined by identity and ordered by reciprocal rank fusion."""
    names = [lane.name for lane in lanes]
    if len(set(names)) != len(names):
        raise ValueError(f"lane names must differ: {', '.join(sorted(names))}")
    entered = [(lane, rank, record) for lane in lanes for rank, record in enumerate(lane.records, start=1)]
    merged = deduplicate([record for _, _, record in entered])
    hits = []
    for record in merged.records:
        best: dict[str, Reason] = {}
        for index in merged.members[record.id]:
            lane, rank, _ = entered[index]
            if lane.name not in best or rank < best[lane.name].rank:
                best[lane.name] = Reason(lane.name, rank, lane.shortlist)
        reasons = sorted(best.values(), key=lambda reason: (reason.rank, reason.lane))
        # summed in the reasons' order, so float rounding cannot depend on the lanes' order
        hits.append(Hit(record, sum(1 / (RRF_K + reason.rank) for reason in reasons), reasons))
    return sorted(hits, key=lambda hit: (-hit.score, hit.record.id, _canonical(hit)))


def _canonical(hit: Hit) -> str:
    return json.dumps([model_data(hit.record), [reason.report() for reason in hit.reasons]], sort_keys=True,
                      ensure_ascii=False)
