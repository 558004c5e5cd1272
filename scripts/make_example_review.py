"""Regenerate the machine-written files of the example review from real data.

    python scripts/make_example_review.py --realdata ../shared/realdata

Reads the SYNERGY "Sep_2021" dataset (real OpenAlex Work objects and the
published review's inclusion labels) and writes, under
reviews/object-in-context/: records.jsonl, ledger.jsonl, the saved search and
the title/abstract and full-text decision files. review.yaml, protocol.md,
evidence/ and README.md are written by hand and left alone.

What is real and what is simulated is stated in the example's README.md.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
from pathlib import Path

import httpx

from sitegen.living.ledger import event_line, next_event
from sitegen.review.folder import protocol_hash
from sitegen.review.models import DECISION_COLUMNS, SavedSearch, Strategy
from sitegen.review.write import atomic_write, jsonl, model_data, pretty_json
from sitegen.sources.http import Fetcher
from sitegen.sources.openalex import work_to_record
from sitegen.sources.search import run_strategy
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import SnapshotStore

EXAMPLE = Path(__file__).resolve().parent.parent / "reviews" / "object-in-context"
IMPORTED_AT = "2023-04-10T00:00:00Z"  # the SYNERGY works were retrieved from OpenAlex 2023-04-01..10


def simulated_disagreement(record_id: str) -> bool:
    """About one record in twenty, chosen by a fixed hash so the demo is reproducible."""
    return int(hashlib.sha256(record_id.encode()).hexdigest(), 16) % 20 == 0


def simulated_openalex(works: list[dict], query: str) -> httpx.MockTransport:
    """A stand-in for api.openalex.org that answers the example's strategy with the real SYNERGY works.

    The works are real OpenAlex Work objects; the paging around them (meta, cursors) is simulated,
    because the published review's records were not found by this query.
    """
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path != "/works" or request.url.params.get("search") != query:
            return httpx.Response(404)
        per_page = int(request.url.params["per_page"])
        cursor = request.url.params["cursor"]
        start = 0 if cursor == "*" else int(cursor)
        following = str(start + per_page) if start + per_page < len(works) else None
        return httpx.Response(200, json={"meta": {"count": len(works), "per_page": per_page, "next_cursor": following},
                                         "results": works[start:start + per_page]})
    return httpx.MockTransport(answer)


def decisions_csv(rows: list[tuple[str, str, str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(DECISION_COLUMNS)
    writer.writerows(rows)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--realdata", type=Path, required=True, help="the shared realdata folder")
    topic = parser.parse_args().realdata / "topic" / "synergy_Sep_2021"

    works = []
    for page in sorted((topic / "works_1").glob("works_*.json"), key=lambda p: int(p.stem.split("_")[1])):
        works += json.loads(page.read_text(encoding="utf-8"))
    labels = {row["openalex_id"].rsplit("/", 1)[1]: row["label_included"] == "1"
              for row in csv.DictReader(open(topic / "labels.csv", encoding="utf-8"))}
    records = [r for r in map(work_to_record, works) if r]
    retrieval_order = [r.id for r in records]
    records.sort(key=lambda r: r.id)
    included = {r.id: labels[r.custom.openalex] for r in records}

    atomic_write(EXAMPLE / "records.jsonl", jsonl(model_data(r) for r in records))

    strategy = Strategy(source="openalex", label="openalex-main",
                        query='"object-in-context" OR "object in context" OR "object-context recognition"')
    search = SavedSearch(schema_version="1.0", monitor_id="object-in-context", strategies=[strategy],
                         seen_ids=retrieval_order, last_run=IMPORTED_AT, run_count=1)
    store = SnapshotStore(EXAMPLE / "snapshots")
    fetcher = Fetcher("record", store, IMPORTED_AT, transport=simulated_openalex(works, strategy.query))
    with fetcher:
        outcome = run_strategy(fetcher, SourceSettings(), "openalex", strategy.query, native=True)
    assert outcome.complete and len(outcome.records) == len(works), outcome.warnings
    atomic_write(EXAMPLE / "searches" / "object-in-context.json", pretty_json(model_data(search)))

    protocol = (EXAMPLE / "protocol.md").read_text(encoding="utf-8")
    lock = next_event(None, "protocol_lock", IMPORTED_AT,
                      {"version": 1, "sha256": protocol_hash(protocol), "reason": "locked before screening"})
    imported = next_event(lock, "import", IMPORTED_AT, {
        "source": "openalex",
        "description": "SYNERGY dataset Sep_2021 (De Bruin et al. 2023, doi:10.34894/HE6NAQ): the records "
                       "screened in Sep et al. 2021, as OpenAlex Work objects retrieved 2023-04-01..10",
        "record_ids": retrieval_order})
    atomic_write(EXAMPLE / "ledger.jsonl", "".join(event_line(e) + "\n" for e in (lock, imported)))

    screening = EXAMPLE / "screening"
    real = [(rid, "include" if included[rid] else "exclude", "", "") for rid in sorted(included)]
    simulated = [(rid, ("exclude" if d == "include" else "include") if simulated_disagreement(rid) else d, "", "")
                 for rid, d, _, _ in real]
    conflicts = [rid for (rid, a, _, _), (_, b, _, _) in zip(real, simulated, strict=True) if a != b]
    # All but the last conflict are settled by the adjudicator in favour of the published label;
    # the last stays open so the site shows a conflict awaiting adjudication.
    adjudicated = [(rid, "include" if included[rid] else "exclude", "",
                    "adjudicated for the demonstration: follows the published inclusion label")
                   for rid in conflicts[:-1]]
    atomic_write(screening / "title-abstract" / "reviewer-a.csv", decisions_csv(real))
    atomic_write(screening / "title-abstract" / "reviewer-b.csv", decisions_csv(simulated))
    atomic_write(screening / "title-abstract" / "adjudication.csv", decisions_csv(adjudicated))
    full_text = [(rid, "include", "", "") for rid in sorted(included) if included[rid] and rid != conflicts[-1]]
    atomic_write(screening / "full-text" / "reviewer-a.csv", decisions_csv(full_text))
    print(f"{len(records)} records, {sum(included.values())} included, {len(conflicts)} simulated conflicts "
          f"({len(adjudicated)} adjudicated)")


if __name__ == "__main__":
    main()
