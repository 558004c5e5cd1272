#!/usr/bin/env python3
"""Identity deduplication of 100,000 records (target: under 10 s on one core).

Synthetic but realistic overlap: works known to three providers, each provider
returning about half of them with the identifiers it carries (OpenAlex: id, DOI,
PMID; PubMed: PMID and most DOIs; Europe PMC: PMID, PMCID, some DOIs), plus a
few works whose providers disagree about an identifier.

    python bench/dedup_bench.py [--records 100000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import time

from sitegen.records.identity import deduplicate
from sitegen.records.ids import record_id
from sitegen.records.model import CslName, Record, RecordMeta


def synthetic(count: int, seed: int) -> list[Record]:
    rng = random.Random(seed)
    records: list[Record] = []
    n = 0
    while len(records) < count:
        n += 1
        doi = f"10.{1000 + n % 9000}/bench.{n}" if rng.random() < 0.9 else None
        pmid = str(10_000_000 + n) if rng.random() < 0.7 else None
        pmcid = f"PMC{5_000_000 + n}" if pmid and rng.random() < 0.3 else None
        # About one work in 500: PubMed maps its PMID to a different DOI than the other providers.
        conflicting = f"10.9999/conflict.{n}" if pmid and rng.random() < 0.002 else None
        for source in ("openalex", "pubmed", "europepmc"):
            if rng.random() > 0.5 or len(records) >= count:
                continue
            ids = {"openalex": f"W{n}" if source == "openalex" else None,
                   "doi": (conflicting if source == "pubmed" and conflicting else doi)
                   if source != "europepmc" or rng.random() < 0.5 else None,
                   "pmid": pmid if source != "openalex" or rng.random() < 0.8 else None,
                   "pmcid": pmcid if source == "europepmc" else None}
            if not any(ids.values()):
                continue
            records.append(Record(id=record_id(ids), title=f"Work {n} as {source}", DOI=ids["doi"],
                                  PMID=ids["pmid"], PMCID=ids["pmcid"], author=[CslName(literal="A. Author")],
                                  abstract="x" * rng.randint(0, 400) or None,
                                  custom=RecordMeta(openalex=ids["openalex"], sources=[source])))
    return records[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    records = synthetic(args.records, args.seed)
    started = time.process_time()
    result = deduplicate(records)
    seconds = time.process_time() - started
    conflicts = sum(1 for r in result.records if r.custom.conflicts)
    print(f"records in:             {len(records):,}")
    print(f"records out:            {len(result.records):,}")
    print(f"duplicates removed:     {result.duplicates_removed:,}")
    print(f"records with conflicts: {conflicts:,}")
    print(f"CPU time:               {seconds:.2f} s (target < 10 s)")


if __name__ == "__main__":
    main()
