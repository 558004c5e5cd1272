#!/usr/bin/env python3
"""kill -9 trials: `sitegen update` and `sitegen build` killed at every write, and at random times.

    python bench/kill_trials.py [--random 50] [--every 1]

Each trial runs the command in a child process that is killed with SIGKILL (the
update records its provider responses, so snapshots are written too):
- targeted: just before, or just after, its k-th file-system write (open for
  writing, write, fsync, rename, replace, mkdir, unlink, rmdir), for every k
  (every `--every`-th k for the build, which writes one file per page);
- random: after a random delay between 0 and one unkilled run's duration.

Then the next command runs (`sitegen recover` and a complete update, or a new
build) and the trial checks what a user relies on: `sitegen check` passes; no id
that was in `seen_ids` before is lost, and the completed update holds every id
the reference run found; the ledger still starts with every event it had; a
site is either the old one or the new one, byte for byte, and after the next
build a whole site is in place with no leftover folders. Printed: trials per
kind and every violation (the target is none).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE, UPDATE = "2026-01-05T06:00:00Z", "2026-01-12T06:00:00Z"

# The child: counts file-system writes and SIGKILLs itself at the chosen one (argv: review, command, k, when).
CHILD = r'''
import builtins, json, os, pathlib, signal, sys
import httpx
from sitegen import commands
from sitegen.sources.settings import SourceSettings

review, command, target, when = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
fixtures = pathlib.Path(sys.argv[5])
count = 0

def counted(function):
    def wrapper(*args, **kwargs):
        global count
        count += 1
        if count == target and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = function(*args, **kwargs)
        if count == target and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return wrapper

def writes(mode):
    return any(flag in mode for flag in "wax+")

real_open, real_os_open = builtins.open, os.open
def tracked_open(file, mode="r", *args, **kwargs):
    return (counted(real_open) if writes(mode) else real_open)(file, mode, *args, **kwargs)
def tracked_os_open(path, flags, *args, **kwargs):
    written = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
    return (counted(real_os_open) if written else real_os_open)(path, flags, *args, **kwargs)
builtins.open, os.open = tracked_open, tracked_os_open
import io
io.open = tracked_open
for name in ("write", "fsync", "rename", "replace", "mkdir", "unlink", "rmdir"):
    setattr(os, name, counted(getattr(os, name)))

if command == "update":
    works = json.loads((fixtures / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
    def answer(request):
        return httpx.Response(200, json={"meta": {"count": len(works), "next_cursor": None}, "results": works})
    commands.update(pathlib.Path(review), sys.argv[6], "record", settings=SourceSettings(max_records=1000),
                    transport=httpx.MockTransport(answer))
else:
    commands.build(pathlib.Path(review), pathlib.Path(sys.argv[6]), environ={})
print(count)
'''


def run_child(script: Path, review: Path, command: str, target: int, when: str, extra: str,
              kill_after: float | None = None) -> subprocess.CompletedProcess | None:
    argv = [sys.executable, str(script), str(review), command, str(target), when, str(ROOT / "tests" / "fixtures"),
            extra]
    if kill_after is None:
        return subprocess.run(argv, capture_output=True, text=True, timeout=300)
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(kill_after)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    return None


def sitegen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sitegen", *args], capture_output=True, text=True, timeout=300)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} \
        if root.exists() else {}


def seen(review: Path) -> set[str]:
    return set(json.loads((review / "searches" / "watch.json").read_text())["seen_ids"])


def make_baseline(folder: Path) -> Path:
    """A review whose saved search ran once on the first 15 works; the update will find 10 more."""
    import httpx

    from sitegen import commands
    from sitegen.review.models import Strategy
    from sitegen.review.scaffold import init_review
    from sitegen.sources.settings import SourceSettings

    works = json.loads((ROOT / "tests" / "fixtures" / "openalex" / "synergy_sep2021_works_0_25.json").read_text())[:15]
    review = folder / "baseline"
    init_review(review, "Kill trials")
    commands.protocol_lock(review, "2026-01-01T00:00:00Z")
    answer = lambda request: httpx.Response(200, json={"meta": {"count": 15, "next_cursor": None}, "results": works})  # noqa: E731
    commands.add_monitor(review, "watch", [Strategy(source="openalex", query="object context")], BASELINE,
                         settings=SourceSettings(max_records=1000), transport=httpx.MockTransport(answer))
    return review


def update_trials(scratch: Path, script: Path, base: Path, targets: list[tuple[int, str]],
                  delays: list[float]) -> tuple[int, list[str], dict[str, int]]:
    reference = scratch / "reference"
    shutil.copytree(base, reference)
    run_child(script, reference, "update", 0, "never", UPDATE)
    before, after = tree(base), tree(reference)
    expected = seen(reference)
    old_ledger = (base / "ledger.jsonl").read_text()
    violations, states = [], {"old": 0, "new": 0, "interrupted": 0}
    trials = [(f"update killed {when} write {k}", k, when, None) for k, when in targets]
    trials += [(f"update killed after {delay:.3f} s", 0, "never", delay) for delay in delays]
    for name, k, when, delay in trials:
        review = scratch / "trial"
        shutil.rmtree(review, ignore_errors=True)
        shutil.copytree(base, review)
        run_child(script, review, "update", k, when, UPDATE, kill_after=delay)
        killed = tree(review)
        states["old" if killed == before else "new" if killed == after else "interrupted"] += 1
        recovered = sitegen("recover", str(review))
        if recovered.returncode != 0:
            violations.append(f"{name}: recover failed: {recovered.stderr.strip()}")
            continue
        if tree(review) not in (before, after):
            violations.append(f"{name}: after recover the review is neither the old nor the new one")
        check = sitegen("check", str(review))
        if check.returncode != 0:
            violations.append(f"{name}: check fails after recover: {check.stdout.strip()[:300]}")
        if not seen(base) <= seen(review):
            violations.append(f"{name}: {len(seen(base) - seen(review))} seen ids lost")
        if not (review / "ledger.jsonl").read_text().startswith(old_ledger):
            violations.append(f"{name}: ledger events lost")
        if tree(review) == before:  # the kill came before the commit point: the update runs again
            run_child(script, review, "update", 0, "never", UPDATE)
        if seen(review) != expected:
            violations.append(f"{name}: {len(expected - seen(review))} ids the completed update should hold are missing")
    return len(trials), violations, states


def build_trials(scratch: Path, script: Path, base: Path, targets: list[tuple[int, str]],
                 delays: list[float]) -> tuple[int, list[str], dict[str, int]]:
    old_site, new_site = scratch / "old-site", scratch / "new-site"
    run_child(script, base, "build", 0, "never", str(old_site))
    # The new site: the same review after one more decision, so old and new differ.
    changed = scratch / "changed"
    shutil.copytree(base, changed)
    record = json.loads((base / "records.jsonl").read_text().splitlines()[0])["id"]
    (changed / "screening" / "title-abstract" / "reviewer-a.csv").write_text(
        f"record_id,decision,reason,note\n{record},include,,\n")
    run_child(script, changed, "build", 0, "never", str(new_site))
    assert tree(old_site) != tree(new_site)
    old, new = tree(old_site), tree(new_site)
    violations, states = [], {"old site": 0, "new site": 0, "no site": 0, "other": 0}
    trials = [(f"build killed {when} write {k}", k, when, None) for k, when in targets]
    trials += [(f"build killed after {delay:.3f} s", 0, "never", delay) for delay in delays]
    for name, k, when, delay in trials:
        out = scratch / "sites" / "site"
        shutil.rmtree(out.parent, ignore_errors=True)
        out.parent.mkdir()
        shutil.copytree(old_site, out)
        run_child(script, changed, "build", k, when, str(out), kill_after=delay)
        now = tree(out)
        states["old site" if now == old else "new site" if now == new else "no site" if not out.exists() else
               "other"] += 1
        if out.exists() and now not in (old, new):
            violations.append(f"{name}: the site in place is neither the old nor the new one")
        rebuilt = sitegen("build", str(changed), "--out", str(out))
        if rebuilt.returncode != 0:
            violations.append(f"{name}: the next build failed: {rebuilt.stderr.strip()[:300]}")
        if tree(out) != new:
            violations.append(f"{name}: after the next build the site is not whole")
        debris = [p.name for p in out.parent.iterdir() if p.name != "site"]
        if debris:
            violations.append(f"{name}: leftovers after the next build: {debris}")
    return len(trials), violations, states


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--random", type=int, default=50, help="random-time kills per command")
    parser.add_argument("--every", type=int, default=1, help="target every N-th write of the build")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        script = scratch / "child.py"
        script.write_text(CHILD)
        base = make_baseline(scratch)
        # How many writes, and how long, an unkilled run takes.
        probe = scratch / "probe"
        shutil.copytree(base, probe)
        started = time.perf_counter()
        update_writes = int(run_child(script, probe, "update", 0, "never", UPDATE).stdout.split()[-1])
        update_seconds = time.perf_counter() - started
        started = time.perf_counter()
        build_writes = int(run_child(script, base, "build", 0, "never", str(scratch / "probe-site")).stdout.split()[-1])
        build_seconds = time.perf_counter() - started
        update_targets = [(k, when) for k in range(1, update_writes + 1) for when in ("before", "after")]
        build_targets = [(k, when) for k in range(1, build_writes + 1, args.every) for when in ("before", "after")]
        results = {
            "update": update_trials(scratch, script, base, update_targets,
                                    [rng.uniform(0, update_seconds) for _ in range(args.random)]),
            "build": build_trials(scratch, script, base, build_targets,
                                  [rng.uniform(0, build_seconds) for _ in range(args.random)]),
        }
    print(f"update: {update_writes} writes per run ({update_seconds:.2f} s); build: {build_writes} writes "
          f"({build_seconds:.2f} s)")
    total = 0
    for command, (trials, violations, states) in results.items():
        total += len(violations)
        shown = ", ".join(f"{name} {n}" for name, n in states.items())
        print(f"{command}: {trials} trials; state right after the kill: {shown}; violations: {len(violations)}")
        for line in violations[:20]:
            print(f"  {line}")
    print(f"total violations: {total} (target 0)")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
