"""Regenerate the machine-written files of the example review from real data.

    python scripts/make_example_review.py --realdata ../shared/realdata

Reads the SYNERGY "Sep_2021" dataset (real OpenAlex Work objects and the
published review's inclusion labels) and rebuilds reviews/object-in-context/
the way a review team would, through sitegen itself: it locks the protocol,
sets up the saved search (`monitor add`, the baseline run), writes the decisions
for its records and publishes version 1 (`publish`), then reruns the search
(`update`), verifies the included studies (`verify`) and publishes version 2
with the decisions on the new records. The runs and the verification
are recorded against a simulated OpenAlex server that serves the real works. review.yaml, protocol.md, evidence/ and README.md are written by hand and
kept.

What is real and what is simulated is stated in the example's README.md.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import shutil
import tempfile
from pathlib import Path

import httpx

from sitegen.commands import add_monitor, protocol_amend, protocol_lock, publish, state_advance, update, verify
from sitegen.review.models import DECISION_COLUMNS, Strategy
from sitegen.review.write import atomic_write
from sitegen.sources.openalex import work_to_record
from sitegen.sources.settings import SourceSettings

EXAMPLE = Path(__file__).resolve().parent.parent / "reviews" / "object-in-context"
QUERY = '"object-in-context" OR "object in context" OR "object-context recognition"'
# The SYNERGY works were retrieved from OpenAlex on 2023-04-01..10. The example pretends the
# search first ran then, finding the works published up to 2019, and ran again a week later,
# finding the rest: a simulated rerun, since no real later run of this search exists.
FIRST_RUN = "2023-04-10T00:00:00Z"
FIRST_RUN_CUTOFF_YEAR = 2019
SECOND_RUN = "2023-04-17T00:00:00Z"
AMENDED_AT = "2023-04-12T00:00:00Z"
# The included studies are verified on the day of the second run, before version 2 is published, so the
# version shows them verified. Only OpenAlex is asked: no recording of Crossref or PubMed answering for
# these works exists offline, and sitegen will not invent one.
VERIFIED_AT = SECOND_RUN
AMENDED_FROM = "    - Includes control animals (no treatment, saline injection, or sham operation)\n"
AMENDED_TO = AMENDED_FROM + "    - Genetically modified rodents (genetic modification is not an exclusion criterion)\n"


def simulated_disagreement(record_id: str) -> bool:
    """About one record in twenty, chosen by a fixed hash so the demo is reproducible."""
    return int(hashlib.sha256(record_id.encode()).hexdigest(), 16) % 20 == 0


def simulated_openalex(works: list[dict], query: str) -> httpx.MockTransport:
    """A stand-in for api.openalex.org that answers the example's strategy with the real SYNERGY works.

    The works are real OpenAlex Work objects; the paging around them (meta, cursors) is simulated,
    because the published review's records were not found by this query.
    """
    by_id = {work["id"].rsplit("/", 1)[1]: work for work in works}

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/works/W"):  # one work by its OpenAlex id, as `sitegen verify` asks
            work = by_id.get(request.url.path.rsplit("/", 1)[1])
            return httpx.Response(200, json=work) if work else httpx.Response(404)
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

    # Start from the hand-written files only (the protocol as first written, version 1);
    # evidence waits until its records exist.
    protocol = EXAMPLE / "protocol.md"
    original = protocol.read_text(encoding="utf-8").replace(AMENDED_TO, AMENDED_FROM)
    protocol.write_text(re.sub(r"^version: \d+$", "version: 1", original, count=1, flags=re.MULTILINE),
                        encoding="utf-8")
    for generated in ("records.jsonl", "ledger.jsonl", "state.json", "searches", "snapshots", "screening", "versions",
                      "runs"):
        path = EXAMPLE / generated
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    evidence = {p.name: p.read_bytes() for p in (EXAMPLE / "evidence").glob("*.yaml")}
    shutil.rmtree(EXAMPLE / "evidence")

    protocol_lock(EXAMPLE, FIRST_RUN, "locked before the first search")
    state_advance(EXAMPLE, FIRST_RUN)  # protocol -> searching
    strategy = Strategy(source="openalex", label="openalex-main", query=QUERY)
    earlier = [w for w in works if w["publication_year"] <= FIRST_RUN_CUTOFF_YEAR]
    first = add_monitor(EXAMPLE, "object-in-context", [strategy], FIRST_RUN, "record", settings=SourceSettings(),
                        transport=simulated_openalex(earlier, QUERY))
    state_advance(EXAMPLE, FIRST_RUN)  # searching -> screening
    records = [r for r in map(work_to_record, works) if r]
    included = {r.id: labels[r.custom.openalex] for r in records}
    # Version 1: the first run's records, with the decisions the published review had for them.
    write_decisions(included, set(first.searches[0].new), unassessed=set())
    with tempfile.TemporaryDirectory() as site:
        first_version = publish(EXAMPLE, Path(site) / "site", now=FIRST_RUN, environ={}).version
    # A simulated amendment between the runs: the published review notes that genetic modification
    # was not an exclusion criterion; the example makes that an explicit in-scope item (version 2).
    protocol.write_text(protocol.read_text(encoding="utf-8").replace(AMENDED_FROM, AMENDED_TO), encoding="utf-8")
    protocol_amend(EXAMPLE, AMENDED_AT, "State explicitly that genetically modified rodents are in scope, as the "
                                        "published review's eligibility note says")
    second = update(EXAMPLE, SECOND_RUN, "record", settings=SourceSettings(), transport=simulated_openalex(works, QUERY))
    assert first.complete and second.complete

    (EXAMPLE / "evidence").mkdir()
    for name, data in evidence.items():
        atomic_write(EXAMPLE / "evidence" / name, data)

    # Version 2: every record screened at title and abstract; the second run's batch is not yet
    # assessed in full text, and one of its records awaits adjudication.
    latest_batch = set(second.searches[0].new)
    conflicts, adjudicated = write_decisions(included, set(included), unassessed=latest_batch)
    verified = verify(EXAMPLE, VERIFIED_AT, "record", sources=("openalex",), settings=SourceSettings(),
                      transport=simulated_openalex(works, QUERY))
    with tempfile.TemporaryDirectory() as site:
        second_version = publish(EXAMPLE, Path(site) / "site", now=SECOND_RUN, environ={}).version
    assert first_version and second_version
    print(f"{len(records)} records ({len(first.searches[0].new)} in the first run, {len(latest_batch)} new "
          f"in the second), {sum(included.values())} included by the published review, {len(conflicts)} simulated "
          f"conflicts ({len(adjudicated)} adjudicated); published versions {first_version.number} and "
          f"{second_version.number}; {len(verified.studies)} included studies verified against OpenAlex "
          f"({len(verified.open_items)} open items, {len(verified.refusals)} refusal grade)")


def write_decisions(included: dict[str, bool], screened: set[str], unassessed: set[str]) -> tuple[list[str], list]:
    """The decision files for the `screened` records: reviewer-a's are the published labels. The simulated
    second reviewer disagrees on about one record in twenty outside the `unassessed` batch (all settled by
    the adjudicator in favour of the published label), and on one record of that batch, which is left
    open: that batch is still at title/abstract screening. Returns the conflicts and the adjudications."""
    screening = EXAMPLE / "screening"
    real = [(rid, "include" if included[rid] else "exclude", "", "") for rid in sorted(screened)]
    open_conflict = min(unassessed) if unassessed else None
    simulated = [(rid, _flip(d) if (simulated_disagreement(rid) and rid not in unassessed) or rid == open_conflict
                  else d, "", "") for rid, d, _, _ in real]
    conflicts = [rid for (rid, a, _, _), (_, b, _, _) in zip(real, simulated, strict=True) if a != b]
    adjudicated = [(rid, "include" if included[rid] else "exclude", "",
                    "adjudicated for the demonstration: follows the published inclusion label")
                   for rid in conflicts if rid != open_conflict]
    atomic_write(screening / "title-abstract" / "reviewer-a.csv", decisions_csv(real))
    atomic_write(screening / "title-abstract" / "reviewer-b.csv", decisions_csv(simulated))
    atomic_write(screening / "title-abstract" / "adjudication.csv", decisions_csv(adjudicated))
    full_text = [(rid, "include", "", "") for rid in sorted(screened) if included[rid] and rid not in unassessed]
    atomic_write(screening / "full-text" / "reviewer-a.csv", decisions_csv(full_text))
    return conflicts, adjudicated


def _flip(decision: str) -> str:
    return "exclude" if decision == "include" else "include"


if __name__ == "__main__":
    main()
