"""Which source returned each record in which run, as the ledger records it.

Every `retrieval` event (a saved search's strategy run against one source) and
every `import` event names the records it returned. A record is first identified
in the run (the events sharing one timestamp, as the PRISMA counts take runs)
where it first appears; later runs that return it again are sightings too, and
show that the searches keep finding it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sitegen.review.folder import Review
from sitegen.review.models import ImportPayload, RetrievalPayload


@dataclass(frozen=True, slots=True)
class Sighting:
    at: str  # the run's time
    source: str
    monitor_id: str | None  # the saved search; None for an import
    label: str | None  # the strategy's label, when it has one
    imported: str | None  # an import's description; None for a saved search's run
    first: bool  # in the run that first identified the record


def sightings(review: Review) -> dict[str, list[Sighting]]:
    """Record id -> every time a source returned it, in ledger order (which is time order)."""
    found: dict[str, list[Sighting]] = defaultdict(list)
    first_run: dict[str, str] = {}
    for event, payload in zip(review.ledger, review.payloads, strict=True):
        if not isinstance(payload, RetrievalPayload | ImportPayload):
            continue
        for record_id in dict.fromkeys(payload.record_ids):
            first = first_run.setdefault(record_id, event.ts) == event.ts
            if isinstance(payload, RetrievalPayload):
                sighting = Sighting(event.ts, payload.source, payload.monitor_id, payload.label, None, first)
            else:
                sighting = Sighting(event.ts, payload.source, None, None, payload.description, first)
            found[record_id].append(sighting)
    return dict(found)
