#!/usr/bin/env python3
"""The records lists and record pages of a large review: size and time of the records page group.

The example review is grown in memory to --records records (default 100,000): each synthetic
record is a copy of an example record under a new DOI, returned by one more weekly run of the
saved search, in one of --batches new screening batches, and screened by two reviewers (about
85% excluded at title and abstract, the rest assessed at full text, some excluded with each
reason, some awaiting). Then only the records page group is rendered, in memory.

    python bench/records_pages_bench.py [--records 100000] [--batches 50]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

from sitegen.living.facts import ReviewFacts
from sitegen.review.folder import DecisionRow
from sitegen.review.models import BatchPayload, Decision, LedgerEvent, RetrievalPayload, parse_timestamp
from sitegen.site.pages import Site
from sitegen.site.records import PAGE_SIZE, record_pages
from sitegen.workspace import open_review

EXAMPLE = Path(__file__).resolve().parent.parent / "reviews" / "object-in-context"
ZERO_HASH = "0" * 64


def grow(review, records: int, batches: int, rng: random.Random) -> None:
    """Add `records` synthetic records to the loaded `review`, in place (nothing is written)."""
    templates = list(review.records.values())
    reasons = [reason.code for reason in review.protocol.meta.exclusion_reasons]
    search = next(iter(review.searches.values()))
    start = parse_timestamp(review.ledger[-1].ts)
    per_batch = -(-records // batches)
    seq = review.ledger[-1].seq
    for number in range(batches):
        at = (start + timedelta(weeks=number + 1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        ids = []
        for n in range(number * per_batch, min(records, (number + 1) * per_batch)):
            record_id = f"10.9999/synthetic.{n}"
            template = rng.choice(templates)
            review.records[record_id] = template.model_copy(update={"id": record_id, "DOI": record_id, "PMID": None,
                                                                    "PMCID": None})
            ids.append(record_id)
            _screen(review, record_id, rng, reasons)
        for payload in (RetrievalPayload.model_construct(monitor_id=search.monitor_id, source="openalex",
                                                         query=search.strategies[0].query, label=None, record_ids=ids,
                                                         total=len(ids), snapshot_hashes=[], complete=True, note=None),
                        BatchPayload.model_construct(batch=number + 3, monitor_id=search.monitor_id,
                                                     protocol_version=review.protocol.meta.version, record_ids=ids)):
            seq += 1
            kind = "retrieval" if isinstance(payload, RetrievalPayload) else "screening"
            review.ledger.append(LedgerEvent.model_construct(seq=seq, type=kind, ts=at, payload={}, prev=ZERO_HASH,
                                                             hash=ZERO_HASH))
            review.payloads.append(payload)


def _screen(review, record_id: str, rng: random.Random, reasons: list[str]) -> None:
    def decide(stage: str, reviewer: str, decision: str, reason: str = "") -> None:
        review.decisions.append(DecisionRow(stage, reviewer, f"screening/{stage}/{reviewer}.csv", 0, {},
                                            Decision(record_id=record_id, decision=decision,
                                                                     reason=reason, note="")))
    roll = rng.random()
    if roll < 0.02:
        return  # awaiting title and abstract screening
    title_abstract = "exclude" if roll < 0.87 else "include"
    decide("title-abstract", "reviewer-a", title_abstract)
    decide("title-abstract", "reviewer-b", title_abstract)
    if title_abstract == "include" and rng.random() < 0.9:
        if rng.random() < 0.5:
            decide("full-text", "reviewer-a", "include")
        else:
            decide("full-text", "reviewer-a", "exclude", rng.choice(reasons))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batches", type=int, default=50)
    args = parser.parse_args()
    review = open_review(EXAMPLE).review
    grow(review, args.records, args.batches, random.Random(1))
    facts = ReviewFacts(review)
    site = Site(review, facts, None)
    started = time.perf_counter()
    site.rankings  # noqa: B018 (the relevance ranking of every batch, which the batch pages share)
    ranked = time.perf_counter() - started
    started = time.perf_counter()
    lists: list[int] = []
    pages: list[int] = []
    rows = Counter()
    for path, content in record_pages(site):
        size = len(content.encode("utf-8"))
        if path == "records.html" or path.startswith("records/list/"):
            lists.append(size)
            rows[path] = content.count("<tr>") - 1  # less the header row
        else:
            pages.append(size)
    rendered = time.perf_counter() - started
    total = len(review.records)
    mb = 1_000_000
    print(f"records:              {total:,} in {args.batches + 2} batches")
    print(f"relevance ranking:    {ranked:.1f} s")
    print(f"rendering:            {rendered:.1f} s")
    print(f"record pages:         {len(pages):,}, {sum(pages) / mb:.0f} MB, {sum(pages) / len(pages) / 1000:.1f} kB each")
    print(f"list pages:           {len(lists):,}, {sum(lists) / mb:.0f} MB, largest {max(lists) / 1000:.0f} kB")
    print(f"list rows:            {sum(rows.values()):,} ({sum(rows.values()) / total:.2f} per record), "
          f"at most {max(rows.values())} a page (PAGE_SIZE {PAGE_SIZE})")


if __name__ == "__main__":
    main()
