"""Sightings: which source returned each record in which run, read from the ledger's events."""

from __future__ import annotations

from types import SimpleNamespace

from sitegen.living.sightings import Sighting, sightings
from sitegen.review.models import ImportPayload, PhasePayload, RetrievalPayload


def test_each_event_is_one_sighting_of_each_record_it_names_first_in_the_run_that_identified_it():
    """An event's records share its sightings (two values: first or not), yet a record named twice by one event is
    sighted once by it, and only the events of the run that first identified a record are its first sightings."""
    first_run, later_run = "2026-01-05T10:00:00Z", "2026-01-12T10:00:00Z"
    events = [(first_run, RetrievalPayload(monitor_id="m", source="pubmed", query="q", label="A", record_ids=["10.1000/a", "10.1000/b", "10.1000/a"])),
              (first_run, RetrievalPayload(monitor_id="m", source="openalex", query="q", record_ids=["10.1000/b"])),
              (later_run, PhasePayload.model_construct()),
              (later_run, ImportPayload(source="Embase", description="export", record_ids=["10.1000/a", "10.1000/c"]))]
    review = SimpleNamespace(ledger=[SimpleNamespace(ts=at) for at, _ in events], payloads=[p for _, p in events])
    found = sightings(review)
    pubmed = Sighting(first_run, "pubmed", "m", "A", None, True)
    assert found == {
        "10.1000/a": [pubmed, Sighting(later_run, "Embase", None, None, "export", False)],
        "10.1000/b": [pubmed, Sighting(first_run, "openalex", "m", None, None, True)],
        "10.1000/c": [Sighting(later_run, "Embase", None, None, "export", True)]}
    assert all(len({id(sighting) for sighting in listed}) == len(listed) for listed in found.values())
