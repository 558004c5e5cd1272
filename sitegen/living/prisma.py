"""PRISMA 2020 flow counts, derived at build time and never stored.

Identification comes from the ledger: each `retrieval` or `import` event names
the records a source returned. Runs are the events sharing one timestamp. A
record counts as identified by every source that returned it in the run where
it first appeared; counting it more than once there is what "duplicates
removed" undoes. Later runs that return it again do not count it again.

Screening and eligibility come from the decision files (see
`sitegen.screening.outcomes`). A full-text exclusion with the reason code
`not-retrieved` counts as a report not retrieved, not as an exclusion.
"""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from pydantic import BaseModel

from sitegen.review.folder import Review
from sitegen.review.models import ImportPayload, RetrievalPayload
from sitegen.screening.outcomes import DECIDED, Outcome

NOT_RETRIEVED = "not-retrieved"


class PrismaCounts(BaseModel):
    identified: int  # records identified, before duplicates were removed
    identified_databases: int
    identified_by_source: dict[str, int]  # databases, per source
    identified_other_methods: int
    duplicates_removed: int
    records: int  # distinct records after duplicates were removed
    screened: int
    excluded_screening: int
    awaiting_screening: int  # not yet decided, or a conflict awaiting adjudication
    reports_sought: int
    reports_not_retrieved: int
    reports_assessed: int
    excluded_full_text: int
    excluded_by_reason: dict[str, int]
    awaiting_full_text: int
    included: int
    runs: int
    included_previous: int  # included studies first identified before the latest run that found new records
    included_new: int  # included studies first identified in the latest run that found new records


def derive(review: Review, outcomes: dict[str, dict[str, Outcome]]) -> PrismaCounts:
    """The counts, from the ledger's events and `outcomes` (per stage, per record)."""
    by_source: Counter[str] = Counter()
    other = 0
    known: dict[str, int] = {}  # record id -> the run that first identified it
    sourced = [(event.ts, payload) for event, payload in zip(review.ledger, review.payloads, strict=True)
               if isinstance(payload, RetrievalPayload | ImportPayload)]
    runs = 0
    latest_with_new = 0  # the last run that identified anything new
    for _, events in groupby(sourced, key=lambda pair: pair[0]):
        runs += 1
        first_seen = set()
        for _, payload in events:
            if not (isinstance(payload, ImportPayload) and payload.method == "other"):
                by_source[payload.source] += 0  # every database searched is listed, even with nothing new
            for record_id in dict.fromkeys(payload.record_ids):
                if record_id in known:
                    continue
                first_seen.add(record_id)
                if isinstance(payload, ImportPayload) and payload.method == "other":
                    other += 1
                else:
                    by_source[payload.source] += 1
        known.update({record_id: runs for record_id in first_seen})
        latest_with_new = runs if first_seen else latest_with_new
    identified = sum(by_source.values()) + other

    screening = outcomes["title-abstract"]
    eligibility = outcomes["full-text"]
    decided = {rid: o.decision for rid, o in screening.items() if rid in known and o.decision in DECIDED}
    sought = [rid for rid, decision in decided.items() if decision in ("include", "maybe")]
    final = {rid: eligibility[rid] for rid in sought if rid in eligibility}
    not_retrieved = [rid for rid, o in final.items() if o.decision == "exclude" and o.reason == NOT_RETRIEVED]
    assessed = [rid for rid, o in final.items() if o.decision in ("include", "exclude") and rid not in not_retrieved]
    excluded = Counter(final[rid].reason for rid in assessed if final[rid].decision == "exclude")
    included = [rid for rid in assessed if final[rid].decision == "include"]
    new = [rid for rid in included if known[rid] == latest_with_new] if latest_with_new > 1 else []
    return PrismaCounts(
        identified=identified,
        identified_databases=sum(by_source.values()),
        identified_by_source=dict(sorted(by_source.items())),
        identified_other_methods=other,
        duplicates_removed=identified - len(known),
        records=len(known),
        screened=len(decided),
        excluded_screening=sum(1 for decision in decided.values() if decision == "exclude"),
        awaiting_screening=len(known) - len(decided),
        reports_sought=len(sought),
        reports_not_retrieved=len(not_retrieved),
        reports_assessed=len(assessed),
        excluded_full_text=sum(excluded.values()),
        excluded_by_reason=dict(sorted(excluded.items())),
        awaiting_full_text=len(sought) - len(not_retrieved) - len(assessed),
        included=len(included),
        runs=runs,
        included_previous=len(included) - len(new),
        included_new=len(new),
    )
