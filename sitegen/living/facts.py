"""The read model: what a loaded review adds up to, derived once per command.

Checks, phase gates, the command line and the site all read the same derived
facts (screening outcomes, PRISMA counts, batches, phase, runs). Each is
computed the first time it is asked for, from the review as loaded, and never
stored: a fact can be no staler than the files it came from, and no command
computes one twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import groupby

from sitegen.living.prisma import PrismaCounts, derive
from sitegen.review.folder import Review
from sitegen.review.models import LedgerEvent, PhasePayload, ProtocolLockPayload, RetrievalPayload
from sitegen.screening.outcomes import Outcome
from sitegen.screening.status import (
    BatchStatus,
    Conflict,
    ScreeningFacts,
    StageStatus,
    conflicts,
    screening_facts,
    status,
)


@dataclass(frozen=True)
class Run:
    """One run of a saved search: every strategy executed at one time, as the ledger recorded it."""

    monitor_id: str
    at: str
    strategies: list[RetrievalPayload]

    @property
    def complete(self) -> bool:
        return all(strategy.complete for strategy in self.strategies)

    @property
    def incomplete(self) -> list[RetrievalPayload]:
        """The strategies whose source was not reached, or not read in full."""
        return [strategy for strategy in self.strategies if not strategy.complete]


class ReviewFacts:
    def __init__(self, review: Review):
        self.review = review

    @cached_property
    def screening(self) -> ScreeningFacts:
        return screening_facts(self.review)

    @property
    def outcomes(self) -> dict[str, dict[str, Outcome]]:
        """Stage -> record id -> outcome."""
        return self.screening.outcomes

    @cached_property
    def prisma(self) -> PrismaCounts:
        return derive(self.review, self.screening.outcomes)

    @cached_property
    def screening_status(self) -> tuple[list[BatchStatus], list[StageStatus]]:
        return status(self.review, self.screening)

    @cached_property
    def conflicts(self) -> list[Conflict]:
        return conflicts(self.review, self.screening)

    @cached_property
    def included(self) -> list[str]:
        """Ids of the included studies (included at full text)."""
        return [record_id for record_id, outcome in self.screening.outcomes["full-text"].items()
                if outcome.decision == "include"]

    @cached_property
    def phase(self) -> tuple[str, str | None]:
        """(phase, since when) from the ledger; a review starts in the protocol phase."""
        moves = [(p.to_phase, e.ts) for e, p in self._events(PhasePayload)]
        return moves[-1] if moves else ("protocol", None)

    @cached_property
    def protocol_trail(self) -> list[tuple[LedgerEvent, ProtocolLockPayload]]:
        """The protocol's lock and amendments, oldest first."""
        return self._events(ProtocolLockPayload)

    @cached_property
    def runs(self) -> list[Run]:
        """Every run of every saved search, oldest first, with the completeness the ledger recorded."""
        # In ledger order, which is time order (check refuses any other): a run's events are written
        # together, so one run is a stretch of retrievals sharing a time and a saved search.
        retrievals = self._events(RetrievalPayload)
        return [Run(monitor_id, at, [payload for _, payload in group])
                for (at, monitor_id), group in groupby(retrievals, key=lambda pair: (pair[0].ts, pair[1].monitor_id))]

    def _events(self, kind: type) -> list:
        return [(event, payload) for event, payload in zip(self.review.ledger, self.review.payloads, strict=True)
                if isinstance(payload, kind)]
