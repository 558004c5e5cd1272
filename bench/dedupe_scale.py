#!/usr/bin/env python3
"""`sitegen dedupe` at review scale: N synthetic records (default 100,000), time and peak memory.

The records are drawn from the real benchmark exports (../shared/realdata/dedupe): title words,
author names and journal names come from them, so blocks (title openings and endings, first author
with year) are as crowded as real words and names make them. About a third of the works get one to
three more records written as another export would (other case, abbreviated page range, no DOI, a
"[Review]" note, initials instead of given names, the journal's abbreviation). The command runs in a
subprocess; printed are its wall-clock seconds, its peak resident memory, and how well it found the
planted duplicates (bib-dedupe's per-record counting, as bench/dedupe.py).

    python bench/dedupe_scale.py [N] [--data ../shared/realdata/dedupe] [--seed 1]
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

csv.field_size_limit(sys.maxsize)
COLUMNS = ["ID", "ENTRYTYPE", "author", "title", "year", "journal", "volume", "number", "pages", "doi"]


def pools(data: Path) -> tuple[list[str], list[str], list[str]]:
    words, authors, journals = [], set(), set()
    for path in sorted(data.glob("*/records_pre_merged.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                words += re.findall(r"[A-Za-z][A-Za-z-]{2,}", row.get("title", ""))
                authors.update(name.strip() for name in row.get("author", "").split(" and ") if "," in name)
                if row.get("journal", "").strip() not in ("", "NA"):
                    journals.add(row["journal"].strip())
    return words, sorted(authors), sorted(journals)


def variant(row: dict[str, str], rng: random.Random) -> dict[str, str]:
    """The same work as another export writes it."""
    copy = dict(row)
    change = rng.randrange(6)
    if change == 0:
        copy["title"] = copy["title"].upper() if rng.random() < 0.5 else copy["title"].lower()
    elif change == 1 and "-" in copy["pages"]:
        first, last = copy["pages"].split("-")
        copy["pages"] = f"{first}-{last[-1]}" if len(last) > 1 and first[:-1] == last[:-1] else copy["pages"]
    elif change == 2:
        copy["title"] += ". [Review]"
    elif change == 3:
        copy["author"] = " and ".join(f"{name.split(',')[0]}, {name.split(',')[1].strip()[:1]}"
                                      for name in copy["author"].split(" and "))
    elif change == 4:
        copy["journal"] = " ".join(word[:4] for word in copy["journal"].split() if word.lower() not in ("of", "the"))
    copy["doi"] = copy["doi"] if rng.random() < 0.4 else ""
    return copy


def generate(n: int, data: Path, seed: int) -> tuple[list[dict[str, str]], list[list[str]]]:
    rng = random.Random(seed)
    words, authors, journals = pools(data)
    rows, truth = [], []
    while len(rows) < n:
        number = len(truth)
        year = rng.randrange(1990, 2025)
        first_page = rng.randrange(1, 2000)
        work = {"ID": "", "ENTRYTYPE": "article",
                "author": " and ".join(rng.sample(authors, rng.randrange(1, 7))),
                "title": " ".join(rng.choice(words) for _ in range(rng.randrange(6, 16))).capitalize(),
                "year": str(year), "journal": rng.choice(journals), "volume": str(rng.randrange(1, 300)),
                "number": str(rng.randrange(1, 13)), "pages": f"{first_page}-{first_page + rng.randrange(3, 15)}",
                "doi": f"10.{rng.randrange(1000, 9999)}/synthetic.{number}"}
        copies = [work] + [variant(work, rng) for _ in range(rng.choice((0, 0, 1, 1, 2, 3)) if rng.random() < 0.5
                                                                else 0)]
        ids = []
        for copy in copies[: n - len(rows)]:
            copy = {**copy, "ID": f"r{len(rows):07d}"}
            rows.append(copy)
            ids.append(copy["ID"])
        if len(ids) > 1:
            truth.append(ids)
    rng.shuffle(rows)
    return rows, truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, nargs="?", default=100_000)
    parser.add_argument("--data", type=Path, default=Path("../shared/realdata/dedupe"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows, truth = generate(args.n, args.data, args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        source, out = Path(scratch) / "records.csv", Path(scratch) / "predicted.csv"
        with open(source, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sitegen", "dedupe", str(source), "--out", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        with open(out, newline="", encoding="utf-8") as handle:
            predicted = [row["merged_ids"].split(";") for row in csv.DictReader(handle)]
    true_of = {key: n for n, members in enumerate(truth) for key in members}
    owner = {key: n for n, members in enumerate(predicted) for key in members}
    found = sum(len(members) - len({owner.get(key, key) for key in members}) for members in truth)
    planted = sum(len(members) - 1 for members in truth)
    false_sets = sum(len({true_of.get(key, key) for key in members}) > 1 for members in predicted)
    print(f"{len(rows)} records, {planted} planted duplicates: {seconds:.1f} s, peak memory {peak_mb:.0f} MB; "
          f"found {found} ({found / planted:.4f}), {false_sets} set(s) joining different works")


if __name__ == "__main__":
    main()
