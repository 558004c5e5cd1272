#!/usr/bin/env python3
"""Generate a realistic synthetic review of N identified records, through sitegen itself.

    python bench/make_review.py N [--out DIR] [--runs 5] [--seed 1]

The review starts from the example's hand-written files (review.yaml, protocol.md) and is
grown the way a team grows one, with sitegen's own commands: the protocol is locked, an
OpenAlex saved search is added and rerun weekly (`--runs` runs in all; a simulated OpenAlex
server answers, so nothing leaves the machine), and a reference file exported from another
database ("Embase", a sitegen records CSV) is imported; a quarter of its entries name a
record the saved search also found, by DOI or by PMID (overlapping identifiers, merged on
import). Two reviewers screen titles and abstracts (they disagree on about 3% of records; an
adjudicator settles all but a few) and full texts; 2% of the records are included, each with
an evidence file whose passage quotes its abstract. The latest run's batch is left part
screened. The works are synthetic: titles, abstracts, authors and journals are drawn from
the vocabulary of the example's real SYNERGY works, so no two records are the same paper.

N counts distinct records (what `records.jsonl` holds); identified records, as PRISMA counts
them, are N plus the import's overlaps. Used by bench/build_scale.py; writes only under --out.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import shutil
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from sitegen.commands import add_monitor, import_files, protocol_lock, state_advance, update
from sitegen.review.models import DECISION_COLUMNS, Strategy
from sitegen.review.write import atomic_write
from sitegen.sources.settings import SourceSettings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from make_example_review import simulated_openalex  # noqa: E402 (the one simulated OpenAlex server)

EXAMPLE = ROOT / "reviews" / "object-in-context"
TOPIC = "object-in-context"
QUERY = '"object-in-context" OR "object in context"'
START = datetime(2024, 1, 1)
JOURNALS = ["Behavioural Brain Research", "Hippocampus", "Learning & Memory", "Neurobiology of Learning and Memory",
            "Journal of Neuroscience", "Neuropharmacology", "Physiology & Behavior", "Scientific Reports",
            "Frontiers in Behavioral Neuroscience", "Psychopharmacology", "Brain Research", "eLife"]
TYPES = ["article"] * 18 + ["review", "letter"]


def vocabulary() -> tuple[list[str], list[str], list[str]]:
    """Words of titles, sentences of abstracts and author names of the example's real records."""
    title_words, sentences, authors = [], [], []
    for line in (EXAMPLE / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        title_words += record["title"].split()
        sentences += [s.strip() + "." for s in (record.get("abstract") or "").split(". ") if len(s) > 30]
        authors += [f"{a.get('given', '')} {a.get('family', '')}".strip() for a in record.get("author", [])]
    return title_words, sentences, sorted(set(authors))


def synthetic_works(count: int, rng: random.Random) -> list[dict]:
    """`count` OpenAlex Work objects, as small as OpenAlex's answers can be and still realistic."""
    title_words, sentences, authors = vocabulary()
    works = []
    for n in range(count):
        title = " ".join(rng.choice(title_words) for _ in range(rng.randint(6, 16))).capitalize() + f" ({n})"
        abstract = " ".join(rng.choice(sentences) for _ in range(rng.randint(3, 8)))
        index: dict[str, list[int]] = {}
        for position, word in enumerate(abstract.split()):
            index.setdefault(word, []).append(position)
        year = rng.randint(1995, 2023)
        ids = {"openalex": f"https://openalex.org/W9{n:09d}", "doi": f"https://doi.org/10.5555/synthetic.{n}"}
        if rng.random() < 0.6:
            ids["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{40000000 + n}"
        first_page = rng.randint(1, 900)
        works.append({
            "id": ids["openalex"], "doi": ids["doi"], "ids": ids, "title": title, "display_name": title,
            "publication_year": year, "publication_date": f"{year}-{rng.randint(1, 12):02d}-01",
            "type": rng.choice(TYPES),
            "authorships": [{"author": {"display_name": name}} for name in rng.sample(authors, rng.randint(1, 8))],
            "primary_location": {"source": {"display_name": rng.choice(JOURNALS)}},
            "biblio": {"volume": str(rng.randint(1, 300)), "issue": str(rng.randint(1, 12)),
                       "first_page": str(first_page), "last_page": str(first_page + rng.randint(3, 20))},
            "abstract_inverted_index": index,
        })
    return works


def csv_text(rows: list[list[str]], header: list[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", type=int, help="distinct records the review holds (N)")
    parser.add_argument("--out", type=Path, default=None, help="the review folder [default: /tmp/sitegen-review-N]")
    parser.add_argument("--runs", type=int, default=5, help="runs of the saved search, a week apart [default: 5]")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    out: Path = args.out or Path(f"/tmp/sitegen-review-{args.records}")
    if out.exists():
        sys.exit(f"{out} exists; remove it or give another --out")
    rng = random.Random(args.seed)
    started = time.perf_counter()
    out.mkdir(parents=True)
    for name in ("review.yaml", "protocol.md"):
        shutil.copyfile(EXAMPLE / name, out / name)
    config = (out / "review.yaml").read_text(encoding="utf-8")
    (out / "review.yaml").write_text(config.replace("full_text_reviewers: 1", "full_text_reviewers: 2"),
                                     encoding="utf-8")

    imported_new = args.records // 100  # the export's entries no search found: 1% of the review
    found = args.records - imported_new
    works = synthetic_works(args.records, rng)
    searched, exported_only = works[:found], works[found:]
    # The baseline finds 60% of what the search will have found by the last run; each rerun adds its share.
    cutoffs = [round(found * (0.6 + 0.4 * k / max(1, args.runs - 1))) for k in range(args.runs)]
    at = [(START + timedelta(weeks=k)).strftime("%Y-%m-%dT%H:%M:%SZ") for k in range(args.runs)]
    settings = SourceSettings(max_records=10 * args.records)  # the default cap (10,000) would rightly stop a run
    protocol_lock(out, at[0], "locked before the first search")
    state_advance(out, at[0])
    strategy = Strategy(source="openalex", label="openalex-main", query=QUERY)
    add_monitor(out, TOPIC, [strategy], at[0], "live", settings=settings, transport=simulated_openalex(searched[:cutoffs[0]], QUERY))
    state_advance(out, at[0])
    print(f"run 1: {cutoffs[0]} records ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    for k in range(1, args.runs):
        update(out, at[k], "live", settings=settings, transport=simulated_openalex(searched[:cutoffs[k]], QUERY))
        print(f"run {k + 1}: {cutoffs[k]} records ({time.perf_counter() - started:.0f} s)", file=sys.stderr)

    # The other database's export: every entry new to the review, and as many again naming a record the
    # search found (by DOI, or by PMID only where the search gave one), with the export's own wording.
    overlapping = rng.sample(searched, min(len(searched), imported_new * 3))
    export_file = out.parent / f"{out.name}-embase.csv"
    export_file.write_text(export_csv(exported_only, overlapping, rng), encoding="utf-8")
    imported_at = (START + timedelta(weeks=args.runs - 1, days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    import_files(out, [export_file], imported_at, source="Embase")
    export_file.unlink()
    print(f"import: {imported_new} new, {len(overlapping)} overlapping ({time.perf_counter() - started:.0f} s)",
          file=sys.stderr)

    write_screening(out, works, searched, cutoffs, rng)
    print(f"{args.records} records in {out} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)


def export_csv(new: list[dict], overlapping: list[dict], rng: random.Random) -> str:
    """The other database's export: its own wording of each title (upper case for the overlaps), and the
    overlaps named by DOI, or by PMID alone where the search gave one."""
    header = ["ID", "title", "author", "year", "journal", "doi", "pmid"]
    rows = []
    for work, overlaps in [(work, False) for work in new] + [(work, True) for work in overlapping]:
        ids = work["ids"]
        by_pmid_only = overlaps and "pmid" in ids and rng.random() < 0.5
        rows.append([f"embase-{len(rows) + 1}", work["title"].upper() if overlaps else work["title"],
                     " and ".join(a["author"]["display_name"] for a in work["authorships"]),
                     str(work["publication_year"]), work["primary_location"]["source"]["display_name"],
                     "" if by_pmid_only else ids["doi"].removeprefix("https://doi.org/"),
                     ids.get("pmid", "").rsplit("/", 1)[-1]])
    return csv_text(rows, header)


def write_screening(out: Path, works: list[dict], searched: list[dict], cutoffs: list[int],
                    rng: random.Random) -> None:
    """Decisions of two reviewers (and an adjudicator) on every record of every batch, the latest
    batch part screened; full-text decisions on those both let through; evidence for the includes."""
    from sitegen.workspace import open_review

    review = open_review(out).review
    abstracts = {f"10.5555/synthetic.{n}": review.records[rid].abstract
                 for n in range(len(works)) if (rid := f"10.5555/synthetic.{n}") in review.records}
    latest_batch_start = cutoffs[-2] if len(cutoffs) > 1 else 0
    target_includes = round(len(works) * 0.02)
    screened = [f"10.5555/synthetic.{n}" for n in range(len(searched))
                if n < latest_batch_start or rng.random() < 0.5]
    include_share = target_includes / sum(int(rid.rsplit(".", 1)[1]) < latest_batch_start for rid in screened)
    rows = {"a": [], "b": [], "adjudication": []}
    full_text = {"a": [], "b": []}
    reasons = ["not-primary-english", "other-context-measure", "non-rodent", "no-control-group"]
    included = []
    for rid in screened:
        latest = int(rid.rsplit(".", 1)[1]) >= latest_batch_start  # still at title/abstract screening
        passes = rng.random() < include_share * 5  # one in five records let through at title/abstract is included
        decision = "include" if passes else "exclude"
        rows["a"].append([rid, decision, "", ""])
        if rng.random() < 0.03:
            rows["b"].append([rid, "exclude" if passes else "include", "", ""])
            if not latest or rng.random() < 0.9:  # the latest batch keeps a few conflicts open
                rows["adjudication"].append([rid, decision, "", "settled at the weekly meeting"])
        else:
            rows["b"].append([rid, decision, "", ""])
        if not passes or latest:
            continue
        if rng.random() < 0.2 and abstracts.get(rid):
            included.append(rid)
            full_text["a"].append([rid, "include", "", ""])
            full_text["b"].append([rid, "include", "", ""])
        else:
            reason = rng.choice(reasons)
            full_text["a"].append([rid, "exclude", reason, ""])
            full_text["b"].append([rid, "exclude", reason, ""])
    for stage, files in (("title-abstract", {"reviewer-a": rows["a"], "reviewer-b": rows["b"],
                                              "adjudication": rows["adjudication"]}),
                         ("full-text", {"reviewer-a": full_text["a"], "reviewer-b": full_text["b"]})):
        (out / "screening" / stage).mkdir(parents=True, exist_ok=True)
        for name, file_rows in files.items():
            atomic_write(out / "screening" / stage / f"{name}.csv", csv_text(file_rows, DECISION_COLUMNS).encode())
    (out / "evidence").mkdir(exist_ok=True)
    for rid in included:
        sentence = abstracts[rid].split(". ")[0].rstrip(".") + "."
        evidence = {"record_id": rid, "findings": [{
            "population": "Rats", "method": "object-in-context task",
            "finding": "Control animals discriminated the object out of context.",
            "passage": {"text": sentence, "source": "abstract"}}]}
        atomic_write(out / "evidence" / f"{rid.replace('/', '-').replace('.', '-')}.yaml",
                     json.dumps(evidence, indent=2).encode())  # JSON is YAML
    print(f"screened {len(screened)}, included {len(included)}", file=sys.stderr)


if __name__ == "__main__":
    main()
