"""kill -9 trials of `sitegen update` and `sitegen build`: the one home of the harness that
tests/test_resilience.py runs on a few seeds in CI and bench/kill_trials.py runs as a long campaign.

A trial copies a review, runs the command in a child process and SIGKILLs it, either just
before or just after its k-th file-system write (targeted) or a given time after the command
started (random; the child says when its imports are done, so the delay falls inside the
command, not inside interpreter start-up). Then it checks, in this process, what a user relies
on: the state files parse; `sitegen recover`, `sitegen check` and `sitegen ledger verify` pass;
no id that was in `seen_ids` is lost; the ledger still starts with every event it had; the
review is the old or the new one; a site is the complete old or the complete new one, byte for
byte; and the next command completes the work with no leftovers.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
WORKS_FILE = ROOT / "tests" / "fixtures" / "openalex" / "synergy_sep2021_works_0_25.json"
BASELINE, UPDATE = "2026-01-05T06:00:00Z", "2026-01-12T06:00:00Z"
BASELINE_WORKS = 15  # the saved search first ran on these; the update finds the other 10

# The child (argv: review, command, k, before|after|never, extra): counts file-system writes and
# SIGKILLs itself at the chosen one; prints "ready" once imported and the write count at the end.
CHILD = r'''
import builtins, io, os, signal, sys
sys.path.insert(0, sys.argv[6])
import kill_harness
import sitegen.commands, sitegen.living.update  # imported before "ready": the kills fall in the command

review, command, target, when, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
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

real_open, real_os_open = builtins.open, os.open
def tracked_open(file, mode="r", *args, **kwargs):
    return (counted(real_open) if any(flag in mode for flag in "wax+") else real_open)(file, mode, *args, **kwargs)
def tracked_os_open(path, flags, *args, **kwargs):
    written = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
    return (counted(real_os_open) if written else real_os_open)(path, flags, *args, **kwargs)
builtins.open = io.open = tracked_open
os.open = tracked_os_open
for name in ("write", "fsync", "rename", "replace", "mkdir", "unlink", "rmdir"):
    setattr(os, name, counted(getattr(os, name)))
print("ready", flush=True)
kill_harness.run_command(review, command, extra)
print(count, flush=True)
'''


def works() -> list[dict]:
    return json.loads(WORKS_FILE.read_text())


def openalex_answering(found: list[dict]) -> httpx.MockTransport:
    """OpenAlex answering one page holding `found`, whatever was asked."""
    page = {"meta": {"count": len(found), "next_cursor": None}, "results": found}
    return httpx.MockTransport(lambda request: httpx.Response(200, json=page))


def run_command(review: str | Path, command: str, extra: str) -> None:
    """The command a trial kills, in-process: `update` (at `extra`, recording its responses) or `build` (into `extra`)."""
    from sitegen import commands
    from sitegen.sources.settings import SourceSettings

    if command == "update":
        commands.update(Path(review), extra, "record", settings=SourceSettings(max_records=1000),
                        transport=openalex_answering(works()))
    else:
        commands.build(Path(review), Path(extra), environ={})


def make_baseline(folder: Path) -> Path:
    """A review whose saved search `watch` ran once, finding the first 15 works."""
    from sitegen import commands
    from sitegen.review.models import Strategy
    from sitegen.review.scaffold import init_review
    from sitegen.sources.settings import SourceSettings

    review = folder / "baseline"
    init_review(review, "Kill trials")
    commands.protocol_lock(review, "2026-01-01T00:00:00Z")
    commands.add_monitor(review, "watch", [Strategy(source="openalex", query="object context")], BASELINE,
                         settings=SourceSettings(max_records=1000),
                         transport=openalex_answering(works()[:BASELINE_WORKS]))
    return review


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes ({} when root is missing)."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def site_tree(out: Path) -> dict[str, bytes]:
    """A site's files with their bytes, less its manifest (which records each file's modification time,
    so two builds of one review differ there and only there)."""
    from sitegen.site.output import MANIFEST

    return {rel: data for rel, data in tree(out).items() if rel != MANIFEST}


def beside_site(out: Path) -> list[str]:
    """What lies beside the site folder other than itself and the one spare folder the next build reuses."""
    spares = sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.spare-"))
    return [p.name for p in out.parent.iterdir() if p != out and p.name not in spares[:1]]


def seen(review: Path) -> set[str]:
    return set(json.loads((review / "searches" / "watch.json").read_text())["seen_ids"])


def sitegen(*args: object) -> tuple[int, str]:
    """The CLI in this process (as a user would run it, without an interpreter start per call)."""
    from sitegen.cli import cli

    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


@dataclass
class Child:
    """How to start the killable child: its script and the command's argument."""

    script: Path

    @classmethod
    def write(cls, folder: Path) -> Child:
        script = folder / "kill_child.py"
        script.write_text(CHILD)
        return cls(script)

    def run(self, review: Path, command: str, extra: str, target: int = 0, when: str = "never",
            kill_after: float | None = None) -> tuple[int, float]:
        """Run (and kill, when asked) the child; returns its write count and the command's seconds (unkilled)."""
        argv = [sys.executable, str(self.script), str(review), command, str(target), when, extra,
                str(Path(__file__).parent)]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            ready = process.stdout.readline()
            started = time.perf_counter()
            if ready != "ready\n":  # killed at a write before it could say so, or it failed to start
                process.wait(timeout=120)
                if when == "never":
                    raise RuntimeError(f"the kill-trial child failed: {process.stderr.read()}")
                return 0, 0.0
            if kill_after is not None:
                time.sleep(kill_after)
                process.send_signal(signal.SIGKILL)
            out, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        if when == "never" and kill_after is None:
            if process.returncode != 0:
                raise RuntimeError(f"the unkilled kill-trial child failed: {err}")
            return int(out.split()[-1]), time.perf_counter() - started
        return 0, 0.0


@dataclass
class Campaign:
    """Trials of one command: how many, the violations found (target: none) and the states the kills left."""

    trials: int = 0
    violations: list[str] = field(default_factory=list)
    states: dict[str, int] = field(default_factory=dict)

    def saw(self, state: str) -> None:
        self.states[state] = self.states.get(state, 0) + 1


def review_is_sound(review: Path, name: str, campaign: Campaign) -> None:
    """The checks every killed trial must pass, on the review itself."""
    for path in [review / "state.json", *review.joinpath("searches").glob("*.json")]:
        try:
            json.loads(path.read_text())
        except ValueError as exc:
            campaign.violations.append(f"{name}: {path.name} does not parse: {exc}")
    for command in ("check", "ledger verify"):
        code, out = sitegen(*command.split(), review)
        if code != 0:
            campaign.violations.append(f"{name}: `sitegen {command}` fails: {out.strip()[:300]}")


def update_trials(scratch: Path, child: Child, base: Path, targets: list[tuple[int, str]],
                  delays: list[float]) -> Campaign:
    reference = scratch / "reference"
    shutil.rmtree(reference, ignore_errors=True)
    shutil.copytree(base, reference)
    child.run(reference, "update", UPDATE)
    before, after, expected = tree(base), tree(reference), seen(reference)
    old_ledger = (base / "ledger.jsonl").read_text()
    campaign = Campaign()
    trials = [(f"update killed {when} write {k}", k, when, None) for k, when in targets]
    trials += [(f"update killed {delay:.3f} s in", 0, "never", delay) for delay in delays]
    for name, k, when, delay in trials:
        campaign.trials += 1
        review = scratch / "trial"
        shutil.rmtree(review, ignore_errors=True)
        shutil.copytree(base, review)
        child.run(review, "update", UPDATE, k, when, kill_after=delay)
        killed = tree(review)
        campaign.saw("old" if killed == before else "new" if killed == after else "interrupted")
        code, out = sitegen("recover", review)
        if code != 0:
            campaign.violations.append(f"{name}: recover failed: {out.strip()[:300]}")
            continue
        if tree(review) not in (before, after):
            campaign.violations.append(f"{name}: after recover the review is neither the old nor the new one")
        review_is_sound(review, name, campaign)
        if not seen(base) <= seen(review):
            campaign.violations.append(f"{name}: {len(seen(base) - seen(review))} seen ids lost")
        if not (review / "ledger.jsonl").read_text().startswith(old_ledger):
            campaign.violations.append(f"{name}: ledger events lost")
        if tree(review) == before:  # killed before the commit point: the update runs again
            run_command(review, "update", UPDATE)
        if seen(review) != expected:
            campaign.violations.append(f"{name}: {len(expected - seen(review))} ids the completed update "
                                       "should hold are missing")
    return campaign


def build_trials(scratch: Path, child: Child, base: Path, targets: list[tuple[int, str]],
                 delays: list[float]) -> Campaign:
    """Kills a build replacing the old site (of `base`) with the new one (of `base` after one more decision)."""
    old_site, new_site, changed = scratch / "old-site", scratch / "new-site", scratch / "changed"
    for folder in (old_site, new_site, changed):
        shutil.rmtree(folder, ignore_errors=True)
    run_command(base, "build", str(old_site))
    shutil.copytree(base, changed)
    record = json.loads((base / "records.jsonl").read_text().splitlines()[0])["id"]
    (changed / "screening" / "title-abstract" / "reviewer-a.csv").write_text(
        f"record_id,decision,reason,note\n{record},include,,\n")
    run_command(changed, "build", str(new_site))
    old, new, review_before = site_tree(old_site), site_tree(new_site), tree(changed)
    if old == new:
        raise RuntimeError("the old and the new site should differ")
    campaign = Campaign()
    review_is_sound(changed, "before the build trials", campaign)
    trials = [(f"build killed {when} write {k}", k, when, None) for k, when in targets]
    trials += [(f"build killed {delay:.3f} s in", 0, "never", delay) for delay in delays]
    for name, k, when, delay in trials:
        campaign.trials += 1
        out = scratch / "sites" / "site"
        shutil.rmtree(out.parent, ignore_errors=True)
        out.parent.mkdir()
        shutil.copytree(old_site, out)
        child.run(changed, "build", str(out), k, when, kill_after=delay)
        now = site_tree(out)
        state = "old site" if now == old else "new site" if now == new else "no site" if not out.exists() else "other"
        campaign.saw(state)
        if state not in ("old site", "new site"):  # renameat2 exchanges the folders: never a moment without one
            campaign.violations.append(f"{name}: the site in place is {state}, neither the old nor the new one")
        if tree(changed) != review_before:  # unchanged, it passes check and ledger verify as it did before
            campaign.violations.append(f"{name}: the build changed the review folder")
        try:
            run_command(changed, "build", str(out))
        except Exception as exc:  # noqa: BLE001 - any failure of the next build is what the trial reports
            campaign.violations.append(f"{name}: the next build failed: {exc}")
        if site_tree(out) != new:
            campaign.violations.append(f"{name}: after the next build the site is not whole")
        debris = beside_site(out)
        if debris:
            campaign.violations.append(f"{name}: leftovers after the next build: {debris}")
    return campaign


def measure(scratch: Path, child: Child, base: Path) -> dict[str, tuple[int, float]]:
    """Writes and seconds of one unkilled update and one unkilled build: the range the kills are drawn from."""
    probe = scratch / "probe"
    shutil.rmtree(probe, ignore_errors=True)
    shutil.copytree(base, probe)
    return {"update": child.run(probe, "update", UPDATE), "build": child.run(base, "build", str(scratch / "probe-site"))}
