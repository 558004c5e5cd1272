"""Resilience (issue 14): kill -9 at random points, two updates at once, a write that fails
(read-only folder, full disk), and large or hostile inputs. What each guarantees is in
docs/review-folder.md, "What sitegen guarantees when things go wrong"."""

from __future__ import annotations

import errno
import importlib
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from conftest import EXAMPLE, FIXTURES, tree_bytes
from kill_harness import (
    UPDATE,
    Child,
    beside_site,
    build_trials,
    make_baseline,
    measure,
    openalex_answering,
    update_trials,
    works,
)

from sitegen.errors import EXIT_BUSY

SEEDS = 10  # random-time kills per command; bench/kill_trials.py runs the long campaign


# --------------------------------------------------------------------------- 1. kill -9


@pytest.fixture(scope="module")
def killing(tmp_path_factory):
    """The kill harness on a baseline review, with one unkilled run's writes and seconds per command."""
    scratch = tmp_path_factory.mktemp("kills")
    child = Child.write(scratch)
    base = make_baseline(scratch)
    return scratch, child, base, measure(scratch, child, base)


def kills(runs: dict[str, tuple[int, float]], command: str) -> tuple[list[tuple[int, str]], list[float]]:
    """A few targeted kills (the first write, one in the middle, the last) and SEEDS seeded random times."""
    writes, seconds = runs[command]
    targeted = [(1, "before"), (writes // 2, "after"), (writes, "before")]
    rng = random.Random(f"{command}-kills")
    return targeted, [rng.uniform(0, seconds) for _ in range(SEEDS)]


def test_update_killed_anywhere_loses_nothing(killing):
    scratch, child, base, runs = killing
    campaign = update_trials(scratch, child, base, *kills(runs, "update"))
    assert campaign.trials == SEEDS + 3
    assert campaign.violations == []
    assert campaign.states.get("interrupted", 0) > 0  # the kills did land inside the writes


def test_build_killed_anywhere_leaves_the_old_or_the_new_site(killing):
    scratch, child, base, runs = killing
    campaign = build_trials(scratch, child, base, *kills(runs, "build"))
    assert campaign.trials == SEEDS + 3
    assert campaign.violations == []
    assert set(campaign.states) <= {"old site", "new site"}


# --------------------------------------------------------------------------- 2. two updates at once

# `sitegen update` (the CLI, recording) against a simulated OpenAlex; with "wait", each answer
# waits for a line on stdin, so the run holds the review's lock until the test lets it go on.
SERVED_UPDATE = """
import sys
import httpx
sys.path.insert(0, sys.argv[1])
from kill_harness import openalex_answering, works
answer, wait = openalex_answering(works()), sys.argv[2] == "wait"
def answer_when_told(self, request):
    if wait:
        print("asked", flush=True)
        sys.stdin.readline()
    return answer.handle_request(request)
httpx.HTTPTransport.handle_request = answer_when_told
from sitegen.cli import main
sys.argv = ["sitegen", "update", *sys.argv[3:], "--snapshots", "record"]
main()
"""


def served_update(review: Path, at: str, wait: bool) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SERVED_UPDATE, str(Path(__file__).parent),
                             "wait" if wait else "now", str(review), "--at", at],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_updates_at_once_one_proceeds_and_the_other_is_refused(tmp_path):
    review = make_baseline(tmp_path)
    first = served_update(review, UPDATE, wait=True)
    try:
        assert first.stdout.readline() == "asked\n"  # the first holds the lock, waiting for its provider
        held = tree_bytes(review)
        _, err = (second := served_update(review, UPDATE, wait=False)).communicate(timeout=60)
        assert second.returncode == EXIT_BUSY == 5
        assert err == (f"error: another sitegen process is updating, building or checking {review}; "
                       "try again when it has finished\n")
        assert tree_bytes(review) == held  # the refused run wrote nothing
        _, err = first.communicate("\n" * 10, timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, err
    assert len(json.loads((review / "searches" / "watch.json").read_text())["seen_ids"]) == len(works())
    _, err = (again := served_update(review, "2026-01-19T06:00:00Z", wait=False)).communicate(timeout=60)
    assert again.returncode == 0, err  # once the first is done, the next may run (at its own, later time)


# --------------------------------------------------------------------------- 3. a write that fails


@pytest.mark.parametrize("why", ["permission", "read-only file system"])
def test_a_site_parent_that_cannot_be_written_fails_the_build_cleanly(sitegen, example_copy, tmp_path, monkeypatch,
                                                                      why):
    parent = tmp_path / "public"
    parent.mkdir()
    assert sitegen("build", example_copy, "--out", parent / "site")[0] == 0
    before, review = tree_bytes(parent), tree_bytes(example_copy)
    if why == "permission":
        parent.chmod(0o555)
        if os.access(parent, os.W_OK):
            parent.chmod(0o755)
            pytest.skip("root may write a read-only folder (CI runs as a user); the other case injects the error")
        expected = "Permission denied"
    else:  # a mount that is read-only: every folder made in it fails, as the kernel says
        real_mkdir = os.mkdir

        def mkdir(path, *args, **kwargs):
            if Path(path).parent == parent:
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
            return real_mkdir(path, *args, **kwargs)

        monkeypatch.setattr(os, "mkdir", mkdir)
        expected = os.strerror(errno.EROFS)
    try:
        code, _, err = sitegen("build", example_copy, "--out", parent / "site", "--now", "2026-02-01T00:00:00Z")
    finally:
        parent.chmod(0o755)
        monkeypatch.undo()
    assert code == 1 and err.startswith(f"error: {expected}: {parent}/") and "Traceback" not in err
    assert tree_bytes(parent) == before and tree_bytes(example_copy) == review


class FullDisk:
    """Every file write after the first `room` fails with ENOSPC, as a full disk does (and like the
    system's, the error names no file)."""

    def __init__(self, monkeypatch, room: int):
        self.room, self.writes = room, 0
        real_fsync, real_write_bytes = os.fsync, pathlib.Path.write_bytes

        def fsync(fd):  # every review file goes through atomic_write, which fsyncs before its rename
            if not os.path.isdir(f"/proc/self/fd/{fd}"):
                self.spend()
            return real_fsync(fd)

        def write_bytes(path, data):  # the site's manifest and marker, the search index's pages
            self.spend()
            return real_write_bytes(path, data)

        def site_open(path, mode="r", *args, **kwargs):  # every site page
            if "w" in mode:
                self.spend()
            return open(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(pathlib.Path, "write_bytes", write_bytes)
        monkeypatch.setattr("sitegen.site.output.open", site_open, raising=False)

    def spend(self) -> None:
        self.writes += 1
        if self.writes > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def openalex_served(monkeypatch) -> None:
    """The CLI's provider calls answered by a recorded OpenAlex page (never the network)."""
    answer = openalex_answering(works())
    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", lambda self, request: answer.handle_request(request))


WRITERS = {
    "update": lambda review, site: ["update", review, "--at", UPDATE, "--snapshots", "record"],
    "build": lambda review, site: ["build", review, "--out", site, "--now", "2026-02-01T00:00:00Z"],
    "publish": lambda review, site: ["publish", review, "--out", site, "--now", "2026-02-01T00:00:00Z"],
    "import-decisions": lambda review, site: ["import-decisions", review, FIXTURES / "asreview" / "Sep_2021_ids.csv",
                                              "--tool", "asreview", "--reviewer", "reviewer-c"],
}


# The full disk met at the first write, or after some (the update: mid-transaction, some files staged).
@pytest.mark.parametrize(("command", "room"), [("update", 0), ("update", 2), ("build", 0), ("build", 3),
                                               ("publish", 1), ("import-decisions", 1)])
def test_a_full_disk_leaves_everything_as_it_was(sitegen, tmp_path, monkeypatch, command, room):
    review = make_baseline(tmp_path) if command == "update" else shutil.copytree(EXAMPLE, tmp_path / "review")
    site = tmp_path / "public" / "site"
    site.parent.mkdir()
    assert sitegen("build", review, "--out", site, "--now", "2026-01-06T00:00:00Z")[0] == 0
    if command == "build":  # a new title: every page changes, so the build writes more than `room` files
        config = review / "review.yaml"
        config.write_text(config.read_text(encoding="utf-8").replace('title: "The rodent', 'title: "A rodent'),
                          encoding="utf-8")
    openalex_served(monkeypatch)
    before, site_before = tree_bytes(review), tree_bytes(site)
    disk = FullDisk(monkeypatch, room)
    code, out, err = sitegen(*WRITERS[command](review, site))
    monkeypatch.undo()
    assert disk.writes > room, f"{command} wrote {disk.writes} file(s): the full disk was never met"
    assert code == 1, out + err
    message = err.splitlines()[-1]  # after the progress lines
    assert message.startswith("error: No space left on device") and "Traceback" not in err
    if command in ("update", "import-decisions"):  # a review file: the message says which
        assert message.startswith(f"error: No space left on device: {review}/"), err
    assert tree_bytes(review) == before and tree_bytes(site) == site_before
    assert beside_site(site) == []  # nothing beside it but the spare folder the next build reuses


def test_a_full_disk_after_publish_recorded_its_version_says_so(sitegen, example_copy, tmp_path, monkeypatch):
    """publish records the version, then builds: a failed build keeps the version and the message says so."""
    site = tmp_path / "site"
    assert sitegen("build", example_copy, "--out", site)[0] == 0
    with (example_copy / "protocol.md").open("a") as handle:
        handle.write("\nOne more sentence.\n")
    assert sitegen("protocol", "amend", example_copy, "--at", "2026-01-20T00:00:00Z", "--reason", "clarified")[0] == 0
    site_before = tree_bytes(site)

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def full_open(path, mode="r", *args, **kwargs):
        if "w" in mode:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_bytes", full)  # only the site's pages meet the full disk
    monkeypatch.setattr("sitegen.site.output.open", full_open, raising=False)
    code, _, err = sitegen("publish", example_copy, "--out", site, "--now", "2026-02-01T00:00:00Z")
    monkeypatch.undo()
    assert code == 1 and "Traceback" not in err
    note, error = err.splitlines()
    assert note == "note: version 3 was recorded (versions/3.json); `sitegen build` builds its site"
    assert error.startswith(f"error: No space left on device: {site}/")
    assert (example_copy / "versions" / "3.json").exists() and tree_bytes(site) == site_before


def test_a_full_disk_while_writing_the_site_names_the_file(sitegen, example_copy, tmp_path, monkeypatch):
    FullDisk(monkeypatch, room=0)
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    monkeypatch.undo()
    assert code == 1 and err.startswith(f"error: No space left on device: {tmp_path}/"), err


def test_a_transaction_that_fails_before_its_commit_point_leaves_nothing_behind(tmp_path, monkeypatch):
    """A full disk at the second staged file: the first staged file and the folder made for it go."""
    from sitegen.review.transaction import Transaction, interrupted

    review = make_baseline(tmp_path)
    before = tree_bytes(review)
    transaction = Transaction(review)
    transaction.write("ledger.jsonl", "new ledger\n")
    transaction.write("screening/new-stage/reviewer-a.csv", "record_id,decision\n")
    FullDisk(monkeypatch, room=1)
    with pytest.raises(OSError, match=f"No space left on device: '{review}/screening/new-stage/"):
        transaction.commit()
    monkeypatch.undo()
    assert interrupted(review) == [] and not (review / "screening" / "new-stage").exists()
    assert tree_bytes(review) == before


# --------------------------------------------------------------------------- 4. large and hostile inputs

MEASURED = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)
sys.exit(done.returncode)
"""


def measured_sitegen(*args: object) -> tuple[int, str, str, int]:
    """`sitegen ARGS` in a fresh process (no wall clock assertion: a hang fails by timeout); returns the exit
    status, stdout, stderr and its peak resident memory in bytes, measured by a parent whose only child it is."""
    done = subprocess.run([sys.executable, "-c", MEASURED, sys.executable, "-m", "sitegen", *map(str, args)],
                          capture_output=True, text=True, timeout=180)
    *err, peak = done.stderr.splitlines()
    return done.returncode, done.stdout, "\n".join(err), int(peak)


PEAK_BOUND = 1_500_000_000  # generous: the memory target for a whole 100,000-record build


def test_a_100_megabyte_records_file_with_a_70_megabyte_line_is_refused_at_that_line(example_copy, tmp_path):
    path = example_copy / "records.jsonl"
    lines = path.read_bytes()
    with path.open("wb") as handle:
        handle.write(lines)
        handle.write(b'{"id": "huge", "title": "' + b"x" * 70_000_000 + b'"}\n')
        while handle.tell() < 100_000_000:
            handle.write(lines)
    huge = lines.count(b"\n") + 1
    before = tree_bytes(example_copy)
    code, out, err, peak = measured_sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and "Traceback" not in err
    assert f"{example_copy}/records.jsonl:{huge}: error: line is longer than the 64 MB limit for one line" in err
    assert peak < PEAK_BOUND, f"peak memory {peak / 1e6:.0f} MB"
    assert not (tmp_path / "site").exists() and tree_bytes(example_copy) == before


def test_a_100_megabyte_records_file_of_normal_lines_is_read_in_bounded_memory(example_copy):
    """Every line well formed, each record repeated: every duplicate is named, none is lost or merged."""
    path = example_copy / "records.jsonl"
    lines = path.read_bytes()
    copies = 100_000_000 // len(lines) + 1
    path.write_bytes(lines * copies)
    code, out, err, peak = measured_sitegen("check", example_copy)
    assert code == 1 and "Traceback" not in err
    count, first = lines.count(b"\n"), json.loads(lines.split(b"\n")[0])["id"]
    assert (f"{example_copy}/records.jsonl:{count + 1}: error: record {first!r} already appears on line 1 "
            "[duplicate-record]") in out
    assert out.count("[duplicate-record]") == count * (copies - 1)
    assert peak < PEAK_BOUND, f"peak memory {peak / 1e6:.0f} MB"


EVIDENCE = "evidence/wilson-2013-lec.yaml"
LAUGHS = ('lol: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
          'lol2: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nlol3: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n')


def insert_line(review: Path, rel: str, text: str) -> int:
    """Put `text` (whole lines) at the end of the file's YAML (a protocol's front matter); returns its first line."""
    path = review / rel
    content = path.read_text()
    at = content.index("\n---", 3) + 1 if rel == "protocol.md" else len(content)
    path.write_text(content[:at] + text + content[at:])
    return content[:at].count("\n") + 1


@pytest.mark.parametrize("rel", ["review.yaml", EVIDENCE, "protocol.md"])
@pytest.mark.parametrize("hostile", ["flow nesting", "block nesting", "billion laughs"])
def test_hostile_yaml_is_refused_at_its_line(sitegen, example_copy, tmp_path, rel, hostile):
    text = {"flow nesting": "deep: " + "[" * 100_000 + "]" * 100_000 + "\n",
            "block nesting": "deep:\n" + "".join(" " * depth + "- \n" for depth in range(1, 1200)),
            "billion laughs": LAUGHS}[hostile]
    line = insert_line(example_copy, rel, text)
    before = tree_bytes(example_copy)
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and "Traceback" not in err
    message = "aliases (*name) are not allowed" if hostile == "billion laughs" else "data is nested too deeply"
    [problem] = [row for row in err.splitlines() if message in row]
    where = int(problem.removeprefix(f"{example_copy}/{rel}:").split(":")[0])
    assert line <= where <= line + text.count("\n"), problem  # within the hostile lines
    assert tree_bytes(example_copy) == before and not (tmp_path / "site").exists()


def test_deeply_nested_json_in_a_records_line_is_refused_at_its_line(sitegen, example_copy, tmp_path):
    path = example_copy / "records.jsonl"
    line = path.read_text().count("\n") + 1
    with path.open("a") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and "Traceback" not in err
    # at its line, and at the bracket where it grew too deep to read (900 deep)
    assert f"{example_copy}/records.jsonl:{line}:901: error: data is nested too deeply to read" in err


@pytest.mark.parametrize("rel", ["review.yaml", EVIDENCE, "protocol.md", "records.jsonl", "ledger.jsonl",
                                 "screening/title-abstract/reviewer-a.csv", "state.json",
                                 "searches/object-in-context.json"])
def test_bytes_that_are_not_utf8_are_refused_with_file_and_line(sitegen, example_copy, tmp_path, rel):
    path = example_copy / rel
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2][:3] + b"\xff\xfe" + lines[2][3:]  # line 3, mid-line: whatever kind of file
    path.write_bytes(b"\n".join(lines))
    before = tree_bytes(example_copy)
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and "Traceback" not in err
    advice = 'save it as UTF-8 (in a spreadsheet, as "CSV UTF-8")' if rel.endswith(".csv") else "save it as UTF-8"
    assert f"{example_copy}/{rel}:3: error: file is not valid UTF-8 text: {advice} [encoding]" in err
    assert err.endswith("error: fix the problems above; nothing was written\n")
    assert tree_bytes(example_copy) == before and not (tmp_path / "site").exists()


def test_a_megabyte_title_is_refused_and_a_long_hostile_one_is_built_escaped(sitegen, example_copy, tmp_path):
    path = example_copy / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[0])
    hostile = "<script>alert(1)</script> & </title>"
    lines[0] = json.dumps({**record, "title": hostile + "x" * 1_000_000}) + "\n"
    path.write_text("".join(lines))
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and "Traceback" not in err
    assert f"{example_copy}/records.jsonl:1: error: title: String should have at most 5000 characters" in err
    assert not (tmp_path / "site").exists()
    title = hostile + "x" * (5000 - len(hostile))  # the longest title a record may have
    lines[0] = json.dumps({**record, "title": title}) + "\n"
    path.write_text("".join(lines))
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 0, err
    pages = "".join(p.read_text() for p in (tmp_path / "site").rglob("*.html"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;/title&gt;" + "x" * 100 in pages
    assert "<script>alert(1)" not in pages


def test_ctrl_c_after_publish_recorded_its_version_says_so(sitegen, example_copy, tmp_path, monkeypatch):
    """Ctrl-C while publish builds: the version stays recorded and the message says so, exit status 130."""
    site = tmp_path / "site"
    with (example_copy / "protocol.md").open("a") as handle:
        handle.write("\nOne more sentence.\n")
    assert sitegen("protocol", "amend", example_copy, "--at", "2026-01-20T00:00:00Z", "--reason", "clarified")[0] == 0

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module("sitegen.site.build"), "build_site", interrupted)
    code, _, err = sitegen("publish", example_copy, "--out", site, "--now", "2026-02-01T00:00:00Z")
    monkeypatch.undo()
    assert code == 130 and "Traceback" not in err and "Aborted" not in err
    note, error = err.splitlines()
    assert note == "note: version 3 was recorded (versions/3.json); `sitegen build` builds its site"
    assert error.startswith("error: interrupted")
    assert (example_copy / "versions" / "3.json").exists() and not site.exists()
