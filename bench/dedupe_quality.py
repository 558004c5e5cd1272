#!/usr/bin/env python3
"""How well sitegen finds duplicates in real systematic-review searches (bib-dedupe benchmark data).

For each dataset it forms clusters two ways and scores them with the shared
scorer (bib-dedupe's per-record counting plus pairwise precision/recall):

- identity: sitegen's identity-graph deduplication (`sitegen.records.identity`) of the
  records that carry a DOI (the only identifier in these exports): what `sitegen update`
  merges on its own;
- identity + probable: also joining the candidate pairs `sitegen probable-duplicates`
  lists (normalised title ratio >= threshold, same first-author surname, years at most
  one apart). sitegen only *lists* these for a reviewer; the score shows what a reviewer
  accepting every suggestion would get.

    python bench/dedupe_quality.py [--data ../shared/realdata/dedupe] [--scorer ../shared/bench/score_dedupe.py]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sitegen.records.identity import deduplicate
from sitegen.records.ids import normalise_doi
from sitegen.records.model import Record
from sitegen.records.probable import Candidate, normalise_title, probable_duplicates, surname

csv.field_size_limit(sys.maxsize)


def load(dataset: Path) -> list[dict[str, str]]:
    with open(dataset / "records_pre_merged.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def clusters(rows: list[dict[str, str]], threshold: float | None) -> list[list[str]]:
    parent = {row["ID"]: row["ID"] for row in rows}

    def find(item: str) -> str:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def union(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    # These exports carry no identifier but the DOI, so records that share a DOI but not a
    # title cannot be kept apart (each needs an identifier of its own): they are merged back,
    # with a note for a reviewer. Records from PubMed or OpenAlex carry their own ids.
    with_doi = [(row["ID"], doi) for row in rows if (doi := normalise_doi(row.get("doi") or ""))]
    titles = {row["ID"]: row["title"] for row in rows}
    records = [Record(id=doi, DOI=doi, title=titles[key] or "untitled") for key, doi in with_doi]
    for members in deduplicate(records).members.values():
        for index in members[1:]:
            union(with_doi[members[0]][0], with_doi[index][0])
    if threshold is not None:
        candidates = [Candidate(row["ID"], normalise_title(row.get("title") or ""),
                                surname((row.get("author") or "").split(" and ")[0]),
                                int(row["year"]) if (row.get("year") or "").isdecimal() else None)
                      for row in rows]
        for pair in probable_duplicates(candidates, threshold):
            union(pair.first, pair.second)
    groups: dict[str, list[str]] = {}
    for row in rows:
        groups.setdefault(find(row["ID"]), []).append(row["ID"])
    return [members for members in groups.values() if len(members) > 1]


def score(scorer: Path, dataset: Path, found: list[list[str]]) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["merged_ids"])
        writer.writerows([";".join(members)] for members in found)
    result = subprocess.run([sys.executable, str(scorer), str(dataset), "--clusters", handle.name],
                            capture_output=True, text=True, check=True)
    Path(handle.name).unlink()
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/realdata/dedupe"))
    parser.add_argument("--scorer", type=Path, default=Path("../shared/bench/score_dedupe.py"))
    parser.add_argument("--threshold", type=float, default=90.0)
    args = parser.parse_args()
    print(f"{'dataset':20} {'method':22} {'records':>7} {'sens.':>6} {'spec.':>6} {'pair P':>6} {'pair R':>6} {'time':>6}")
    for dataset in sorted(p for p in args.data.iterdir() if (p / "records_pre_merged.csv").exists()):
        rows = load(dataset)
        for method, threshold in (("identity (DOI)", None), (f"+ probable (>= {args.threshold:g})", args.threshold)):
            started = time.process_time()
            found = clusters(rows, threshold)
            seconds = time.process_time() - started
            result = score(args.scorer, dataset, found)
            print(f"{dataset.name:20} {method:22} {len(rows):7} {result['sensitivity']:6.3f} "
                  f"{result['specificity']:6.3f} {result['pair_precision']:6.3f} {result['pair_recall']:6.3f} "
                  f"{seconds:5.1f}s")


if __name__ == "__main__":
    main()
