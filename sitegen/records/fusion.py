"""Reciprocal rank fusion (`rrf-60-v1`): several ranked lanes made one order, each hit with its why.

A lane is one result list (a provider's search). Records are joined across lanes by identity
(`sitegen.records.identity.deduplicate`: identifiers only, never titles), and each joined hit scores

    score(hit) = sum over the ranked lanes that retrieved it of 1 / (60 + rank in that lane)

with rank 1-based, each lane counted once at its best rank. Only a lane whose order is a relevance
ranking (`Lane.ranked`) has ranks: a list sorted by date, or in no stated order, says nothing about
relevance, so such a lane adds no score. A hit only unranked lanes found comes after every hit a ranked
lane found, in record id order, its reasons saying the lane did not rank by relevance. There is no citation or recency boost,
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
    records: list[Record]  # best first when `ranked`; otherwise in the provider's (non-relevance) order
    shortlist: bool = False  # a bounded candidate list (a semantic lane), not a database search
    ranked: bool = True  # the provider ordered the list by relevance to the query


@dataclass(frozen=True)
class Reason:
    lane: str
    rank: int | None  # 1-based, the best rank at which this lane returned the hit; None: the lane is unranked
    shortlist: bool = False

    def report(self) -> dict[str, object]:
        rank = {"rank": self.rank} if self.rank is not None else {"ranked": False}
        return {"lane": self.lane} | rank | ({"shortlist": True} if self.shortlist else {})

    def text(self) -> str:
        if self.rank is None:
            return f"{self.lane} ({UNRANKED_NOTE})"
        return f"{self.lane} #{self.rank}" + (" (shortlist)" if self.shortlist else "")


UNRANKED_NOTE = "not ranked by relevance"


@dataclass(frozen=True)
class Hit:
    record: Record
    score: float
    reasons: list[Reason]  # ordered by rank, then lane; unranked lanes last

    def why(self) -> str:
        return ", ".join(reason.text() for reason in self.reasons)

    @property
    def ranked(self) -> bool:
        """Some lane that ranks by relevance found this hit."""
        return any(reason.rank is not None for reason in self.reasons)


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
            known = best.get(lane.name)  # an unranked lane's reason has no rank to improve on
            if known is None or (known.rank is not None and rank < known.rank):
                best[lane.name] = Reason(lane.name, rank if lane.ranked else None, lane.shortlist)
        reasons = sorted(best.values(), key=lambda reason: (reason.rank is None, reason.rank or 0, reason.lane))
        # summed in the reasons' order, so float rounding cannot depend on the lanes' order
        hits.append(Hit(record, sum(1 / (RRF_K + reason.rank) for reason in reasons if reason.rank is not None),
                        reasons))
    return sorted(hits, key=lambda hit: (not hit.ranked, -hit.score, hit.record.id, _canonical(hit)))


def _canonical(hit: Hit) -> str:
    return json.dumps([model_data(hit.record), [reason.report() for reason in hit.reasons]], sort_keys=True,
                      ensure_ascii=False)
