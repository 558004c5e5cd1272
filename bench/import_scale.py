#!/usr/bin/env python3
"""`sitegen import` of large reference exports in every format read: seconds and peak resident memory.

A file of about SIZE megabytes is written from one fixture record's shape (tests/fixtures/ris/psycinfo_ris.ris,
tests/fixtures/medline/pubmed_result1.txt, the first record of tests/fixtures/exports/records.bib, .csv and
.json, and for Web of Science plain text, of which no fixture is real, the layout tests/test_references_more.py
follows), each copy with its own ID, title words, DOI and PMID, and imported
into a fresh review (`sitegen init`, protocol locked) by `sitegen import` in a subprocess. Printed per format and
size: the file's megabytes and records, the command's wall-clock seconds and its peak resident memory
(getrusage of that one child, through wait4).

    python bench/import_scale.py [SIZE_MB ...] [--formats ris medline wos bibtex csv csl-json] [--trace MB] [--braced]

--braced wraps each BibTeX title and abstract whole in braces ("title = {{...}}"), as a title protected from a
style's lower-casing is written.

--trace MB reads a file of MB megabytes in this process under tracemalloc instead and prints the peak
traced memory of each step of the import and the lines holding the most memory at that peak.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
WORDS = ("trial randomised cohort outcome therapy patients children adults mortality screening exercise diet "
         "vaccine depression anxiety diabetes cancer stroke asthma pain sleep review effect risk care primary "
         "community hospital nurse-led intervention follow-up quality life costs evidence").split()
LOCKED, AT = "2023-01-01T00:00:00Z", "2023-02-01T00:00:00Z"


def ris_record(shape: str, number: int, rng: random.Random) -> str:
    title = " ".join(rng.choice(WORDS) for _ in range(10)).capitalize()
    record = re.sub(r"(?m)^ID  - .*$", f"ID  - bench-{number}", shape)
    record = re.sub(r"(?m)^T1  - .*$", f"T1  - {title} ({number})", record)
    record = re.sub(r"(?m)^DO  - .*$", f"DO  - 10.5555/bench.{number}", record)
    record = re.sub(r"(?m)^M3  - .*$", f"M3  - doi:10.5555/bench.{number}", record)
    return re.sub(r"(?m)^PMID  - .*$", f"PMID  - {30000000 + number}", record)


def medline_record(shape: str, number: int, rng: random.Random) -> str:
    title = " ".join(rng.choice(WORDS) for _ in range(10)).capitalize()
    record = re.sub(r"(?m)^PMID- .*$", f"PMID- {30000000 + number}", shape)
    record = re.sub(r"(?m)^TI  - .*$", f"TI  - {title} ({number}).", record)
    return record + f"LID - 10.5555/bench.{number} [doi]\n"


# A Web of Science plain-text record in its export's layout (one author a line, a continued title).
WOS_RECORD = """PT J
AU Chung, CYS
   Yam, VWW
AF Chung, Clive Yik-Sham
   Yam, Vivian Wing-Wah
TI Selective label-free detection of G-quadruplex structure of human
   telomere
SO CHEMICAL SCIENCE
LA English
DT Article
DE Concentration-dependent permittivity; Double-layer polarization;
   Electrophoresis
AB Label-free detection of the G-quadruplex structure of human telomeric DNA is reported, with a
   probe whose emission rises on binding; the response is selective over duplex and single strands.
SN 2041-6520
PD DEC 24
PY 2013
VL 4
IS 1
BP 377
EP 387
DI 10.1039/c2sc20897k
PM 23039619
UT WOS:000311971500044
ER

"""
# The file each format's generated export is written with, and the fixture its record comes from.
SUFFIXES = {"ris": "ris", "medline": "nbib", "wos": "ciw", "bibtex": "bib", "csv": "csv", "csl-json": "json"}
EXPORTS = FIXTURES / "exports"


def wos_record(shape: str, number: int, rng: random.Random) -> str:
    title = " ".join(rng.choice(WORDS) for _ in range(10)).capitalize()
    record = re.sub(r"(?m)^TI .*\n   .*$", f"TI {title} ({number})", shape)
    record = re.sub(r"(?m)^DI .*$", f"DI 10.5555/bench.{number}", record)
    record = re.sub(r"(?m)^PM .*$", f"PM {30000000 + number}", record)
    return re.sub(r"(?m)^UT .*$", f"UT WOS:{number:015d}", record)


def bibtex_record(shape: str, number: int, rng: random.Random) -> str:
    title = " ".join(rng.choice(WORDS) for _ in range(10)).capitalize()
    record = re.sub(r"^@article\{[^,]*,", f"@article{{bench{number},", shape)
    record = re.sub(r"(?m)^  title = \{.*\},$", f"  title = {{{title} ({number})}},", record)
    record = re.sub(r"(?m)^  doi = \{.*\},$", f"  doi = {{10.5555/bench.{number}}},", record)
    record = re.sub(r"(?m)^  openalex = \{.*\},\n", "", record)
    record = re.sub(r"(?m)^  pmid = \{.*\},$", f"  pmid = {{{30000000 + number}}},", record)
    return re.sub(r"(?m)^  (title|abstract) = \{(.*)\},$", r"  \1 = {{\2}},", record) if BRACED else record


BRACED = False  # --braced


def csv_record(shape: str, number: int, rng: random.Random) -> str:
    header, row = (next(csv.reader([line])) for line in shape.splitlines()[:2])
    cells = dict(zip(header, row, strict=True))
    cells.update(id=f"bench-{number}", title=f"{' '.join(rng.choice(WORDS) for _ in range(10)).capitalize()} "
                 f"({number})", doi=f"10.5555/bench.{number}", pmid=str(30000000 + number), pmcid="", openalex="",
                 url="")
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerow(cells.values())
    return out.getvalue()


def csl_record(shape: str, number: int, rng: random.Random) -> str:
    item = json.loads(shape)
    item.update(id=f"bench-{number}", title=f"{' '.join(rng.choice(WORDS) for _ in range(10)).capitalize()} "
                f"({number})", DOI=f"10.5555/bench.{number}", PMID=str(30000000 + number))
    for name in ("PMCID", "URL", "custom"):
        item.pop(name, None)
    return ("" if number == 1 else ",\n") + json.dumps(item, ensure_ascii=False, indent=2)


MAKERS = {"ris": ris_record, "medline": medline_record, "wos": wos_record, "bibtex": bibtex_record,
          "csv": csv_record, "csl-json": csl_record}
# What a file opens and closes with around its records.
OPENINGS = {"wos": "FN Clarivate Analytics Web of Science\nVR 1.0\n", "csl-json": "[\n"}
CLOSINGS = {"wos": "EF\n", "csl-json": "\n]\n"}


def shape(fmt: str) -> str:
    """One record of the format's fixture, as written, ending with its line end (for CSV, the header and the first
    row)."""
    if fmt == "ris":
        text = (FIXTURES / "ris" / "psycinfo_ris.ris").read_text(encoding="utf-8")
        return text[text.index("TY  - "):text.index("ER  -") + len("ER  -")] + "\n\n"
    if fmt == "medline":
        text = (FIXTURES / "medline" / "pubmed_result1.txt").read_text(encoding="utf-8").lstrip()
        return text.split("\n\n")[0].rstrip() + "\n"
    if fmt == "wos":
        return WOS_RECORD
    if fmt == "bibtex":
        return (EXPORTS / "records.bib").read_text(encoding="utf-8").split("\n\n")[0].rstrip() + "\n\n"
    if fmt == "csv":
        return "\n".join((EXPORTS / "records.csv").read_text(encoding="utf-8").splitlines()[:2])
    return json.dumps(json.loads((EXPORTS / "records.json").read_text(encoding="utf-8"))[0])


def write_export(path: Path, fmt: str, megabytes: float, seed: int = 1) -> int:
    rng, record, number = random.Random(seed), shape(fmt), 0
    opening = OPENINGS.get(fmt, "") + (record.splitlines()[0] + "\r\n" if fmt == "csv" else "")
    size = len(opening.encode())
    with open(path, "w", encoding="utf-8", newline="") as out:
        out.write(opening)
        while size < megabytes * 1e6:
            number += 1
            text = MAKERS[fmt](record, number, rng) + ("\n" if fmt == "medline" else "")
            out.write(text)
            size += len(text.encode())
        out.write(CLOSINGS.get(fmt, ""))
    return number


def sitegen(*args: str | Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, "-m", "sitegen", *map(str, args)], capture_output=True, text=True,
                          env=env, check=False)


def measured(*args: str | Path) -> tuple[int, float, float, str]:
    """The exit status, wall-clock seconds and peak RSS (MB) of `sitegen ARGS`, and its stderr."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    started = time.perf_counter()
    with subprocess.Popen([sys.executable, "-m", "sitegen", *map(str, args)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env) as child:
        err = child.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, time.perf_counter() - started, usage.ru_maxrss / 1024, err


def bench(fmt: str, megabytes: float, work: Path) -> None:
    review = work / f"review-{fmt}-{megabytes:g}"
    for args in (("init", review), ("protocol", "lock", review, "--at", LOCKED)):
        done = sitegen(*args)
        assert done.returncode == 0, done.stderr
    export = work / f"export-{megabytes:g}.{SUFFIXES[fmt]}"
    records = write_export(export, fmt, megabytes)
    code, seconds, peak, err = measured("import", review, export, "--at", AT, "--source", "Bench")
    status = "ok" if code == 0 else f"exit {code}: {err.strip()[-300:]}"
    print(f"{fmt:8} {export.stat().st_size / 1e6:7.1f} MB {records:8,} records  {seconds:7.1f} s  "
          f"peak RSS {peak:8,.0f} MB  {status}", flush=True)
    export.unlink()


def trace(fmt: str, megabytes: float, work: Path) -> None:
    """Peak traced memory of reading, recording and integrating one file, and where the peak's memory is."""
    import tracemalloc

    sys.path.insert(0, str(ROOT))
    from sitegen.living import imports
    from sitegen.review.folder import load_review

    review_root = work / f"trace-{fmt}"
    for args in (("init", review_root), ("protocol", "lock", review_root, "--at", LOCKED)):
        assert sitegen(*args).returncode == 0
    export = work / f"trace.{SUFFIXES[fmt]}"
    records = write_export(export, fmt, megabytes)
    review, _ = load_review(review_root)
    tracemalloc.start(5)
    started = time.perf_counter()
    read = imports._read(export, None, None, "Bench", False)
    current, peak = tracemalloc.get_traced_memory()
    print(f"{fmt}: {megabytes:g} MB, {records:,} records; _read: {time.perf_counter() - started:.1f} s, "
          f"peak {peak / 1e6:,.0f} MB, held after {current / 1e6:,.0f} MB ({len(read.records):,} records)")
    snapshot = tracemalloc.take_snapshot()
    for stat in snapshot.statistics("lineno")[:8]:
        print(f"  held {stat.size / 1e6:8.1f} MB  {stat.traceback[0]}")
    tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=float, default=[50, 200], help="file sizes in MB")
    parser.add_argument("--formats", nargs="+", choices=list(MAKERS), default=list(MAKERS))
    parser.add_argument("--trace", type=float, metavar="MB", help="trace the memory of reading a file of MB MB")
    parser.add_argument("--braced", action="store_true", help="BibTeX titles and abstracts wrapped whole in braces")
    options = parser.parse_args()
    global BRACED
    BRACED = options.braced
    with tempfile.TemporaryDirectory() as folder:
        for fmt in options.formats:
            if options.trace:
                trace(fmt, options.trace, Path(folder))
                continue
            for size in options.sizes:
                bench(fmt, size, Path(folder))


if __name__ == "__main__":
    main()
