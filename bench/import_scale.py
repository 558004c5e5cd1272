#!/usr/bin/env python3
"""`sitegen import` of large RIS and MEDLINE exports: seconds and peak resident memory.

A file of about SIZE megabytes is written from one fixture record's shape (tests/fixtures/ris/psycinfo_ris.ris,
tests/fixtures/medline/pubmed_result1.txt), each copy with its own ID, title words, DOI and PMID, and imported
into a fresh review (`sitegen init`, protocol locked) by `sitegen import` in a subprocess. Printed per format and
size: the file's megabytes and records, the command's wall-clock seconds and its peak resident memory
(getrusage of that one child, through wait4).

    python bench/import_scale.py [SIZE_MB ...] [--formats ris medline] [--trace MB]

--trace MB reads a file of MB megabytes in this process under tracemalloc instead and prints the peak
traced memory of each step of the import and the lines holding the most memory at that peak.
"""

from __future__ import annotations

import argparse
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


def shape(fmt: str) -> str:
    """One record of the format's fixture, as written, ending with its line end."""
    if fmt == "ris":
        text = (FIXTURES / "ris" / "psycinfo_ris.ris").read_text(encoding="utf-8")
        return text[text.index("TY  - "):text.index("ER  -") + len("ER  -")] + "\n\n"
    text = (FIXTURES / "medline" / "pubmed_result1.txt").read_text(encoding="utf-8").lstrip()
    return text.split("\n\n")[0].rstrip() + "\n"


def write_export(path: Path, fmt: str, megabytes: float, seed: int = 1) -> int:
    rng, record, size, number = random.Random(seed), shape(fmt), 0, 0
    make = ris_record if fmt == "ris" else medline_record
    with open(path, "w", encoding="utf-8", newline="") as out:
        while size < megabytes * 1e6:
            number += 1
            text = make(record, number, rng) + ("\n" if fmt == "medline" else "")
            out.write(text)
            size += len(text.encode())
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
    export = work / f"export-{megabytes:g}.{'ris' if fmt == 'ris' else 'nbib'}"
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
    export = work / f"trace.{'ris' if fmt == 'ris' else 'nbib'}"
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
    parser.add_argument("--formats", nargs="+", choices=["ris", "medline"], default=["ris", "medline"])
    parser.add_argument("--trace", type=float, metavar="MB", help="trace the memory of reading a file of MB MB")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for fmt in options.formats:
            if options.trace:
                trace(fmt, options.trace, Path(folder))
                continue
            for size in options.sizes:
                bench(fmt, size, Path(folder))


if __name__ == "__main__":
    main()
