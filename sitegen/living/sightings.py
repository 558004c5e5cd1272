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
        # An event's sightings differ only in whether the run first identified the record: two values, shared by
        # its records (a search returns 100,000 at review scale), not one made for each. Each record meets an
        # event once, so no record's list holds one value twice.
        if isinstance(payload, RetrievalPayload):
            seen = {first: Sighting(event.ts, payload.source, payload.monitor_id, payload.label, None, first)
                    for first in (True, False)}
        else:
            seen = {first: Sighting(event.ts, payload.source, None, None, payload.description, first)
                    for first in (True, False)}
        at = event.ts
        for record_id in dict.fromkeys(payload.record_ids):
            found[record_id].append(seen[first_run.setdefault(record_id, at) == at])
    return dict(found)
