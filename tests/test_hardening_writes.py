"""Nothing lost, nothing half-written (DESIGN principle 7) when processes are killed, run side by
side with different environments, or meet a crafted journal: the review lock, the leftovers of
interrupted writes, the recovery journal, file modes, and the site swap."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from conftest import ROOT, tree_bytes

from sitegen.errors import LockHeld, SitegenError
from sitegen.review import scaffold
from sitegen.review.transaction import JOURNAL, STAGED, Transaction, interrupted, recover, review_lock
from sitegen.review.write import atomic_write
from sitegen.site.output import MANIFEST, SITE_MARKER, write_site

TEMPORARY = ".sitegen-tmp-0123456789abcdef"  # the form of atomic_write's temporary-file suffix


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under root as it is on disk (links are recorded, never followed): compare two."""
    found: dict[str, object] = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                found[rel] = ("folder", os.stat(path).st_mode)
            else:
                found[rel] = ("file", path.read_bytes(), os.stat(path).st_mode)
    return found


def child(script: str, *args: object, tmpdir: Path | None = None, **popen) -> subprocess.Popen:
    """A separate Python process running `script` (with TMPDIR set as given)."""
    env = {**os.environ, **({"TMPDIR": str(tmpdir)} if tmpdir else {})}
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=ROOT, env=env, text=True,
                            **popen)


@pytest.fixture
def review(sitegen, tmp_path) -> Path:
    folder = tmp_path / "review"
    assert sitegen("init", folder)[0] == 0
    return folder


@pytest.fixture
def umask():
    """Set the process umask for one test (the mode of new files depends on it)."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


# --------------------------------------------------------------------------- 1. the review lock

HOLD_LOCK = """
import sys
from pathlib import Path
from sitegen.review.transaction import review_lock
with review_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_lock_held_by_another_process_refuses_whatever_its_tmpdir(sitegen, review, tmp_path, monkeypatch):
    (tmp_path / "tmp-child").mkdir()
    (tmp_path / "tmp-parent").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp-parent"))
    link = tmp_path / "same-review"
    link.symlink_to(review)
    before = snapshot(tmp_path)
    holder = child(HOLD_LOCK, review, tmpdir=tmp_path / "tmp-child", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == "held\n"
        for path in (review, link):  # however the folder is named
            with pytest.raises(LockHeld, match=f"another sitegen process is updating, building or checking {path}; try again"):
                with review_lock(path):
                    pass
        code, _, err = sitegen("build", review, "--out", tmp_path / "site")
        assert code == 5 and "another sitegen process is updating, building or checking" in err
        # Commands that only read wait their turn too: export and digest read a write half done ("an interrupted
        # write was found ... run sitegen recover").
        for args in (["export", review, "--format", "ris", "--out", tmp_path / "x.ris"], ["prisma", review],
                     ["digest", review, "--week", "2023-W15", "--out", tmp_path / "d.md"]):
            code, _, err = sitegen(*args)
            assert code == 5 and "another sitegen process is writing" in err, args
        assert snapshot(tmp_path) == before  # no site, and nothing written into the review to hold the lock
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    with review_lock(review):  # the holder's exit released it
        pass


def test_a_lock_held_here_refuses_another_process_whatever_its_tmpdir(review, tmp_path):
    (tmp_path / "tmp-child").mkdir()
    with review_lock(review):
        build = child("from sitegen.cli import main; main()", "build", review, "--out", tmp_path / "site",
                      tmpdir=tmp_path / "tmp-child", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = build.communicate(timeout=60)
    assert build.returncode == 5
    assert f"another sitegen process is updating, building or checking {review}" in err
    assert "Traceback" not in err
    assert not (tmp_path / "site").exists()


def test_the_lock_is_released_after_its_context_and_writes_nothing(review):
    before = sorted(os.listdir(review))
    with pytest.raises(RuntimeError):
        with review_lock(review):
            assert sorted(os.listdir(review)) == before
            raise RuntimeError("the command failed")
    with review_lock(review):
        pass
    assert sorted(os.listdir(review)) == before


def test_the_lock_needs_a_folder(sitegen, tmp_path):
    (tmp_path / "file").write_text("x")
    for missing in (tmp_path / "nowhere", tmp_path / "file"):
        with pytest.raises(SitegenError, match=f"{missing} is not a folder sitegen can open"):
            with review_lock(missing):
                pass
    code, _, err = sitegen("build", tmp_path / "nowhere", "--out", tmp_path / "site")
    assert code == 1 and f"{tmp_path / 'nowhere'} does not exist; nothing was read or written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# --------------------------------------------------------------------------- 2. leftovers of interrupted writes

# Kills itself at the n-th os.replace of a transaction writing two files (one new, in a new folder).
KILLED_TRANSACTION = """
import os, signal, sys
from pathlib import Path
from sitegen.review.transaction import Transaction
real_replace, calls = os.replace, []
def replace(src, dst):
    calls.append(src)
    if len(calls) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    real_replace(src, dst)
os.replace = replace
transaction = Transaction(Path(sys.argv[1]))
transaction.write("ledger.jsonl", "new ledger\\n")
transaction.write("screening/extra/new.csv", "new,decisions\\n")
transaction.commit()
"""


def test_a_killed_transaction_leaves_nothing_recover_cannot_finish_or_remove(review, tmp_path):
    (review / "ledger.jsonl").write_text("old ledger\n")
    before = snapshot(review)
    results = []
    for kill_at in range(1, 6):  # 2 staged files, the journal, then the 2 renames
        attempt = tmp_path / f"attempt-{kill_at}"
        shutil.copytree(review, attempt, symlinks=True)
        killed = child(KILLED_TRANSACTION, attempt, kill_at)
        assert killed.wait(timeout=30) == -signal.SIGKILL
        left = interrupted(attempt)
        if kill_at <= 3:  # before the commit point: staged and temporary files, all removed
            assert left and all(rel.endswith(STAGED) or ".sitegen-tmp-" in rel for rel in left), left
            assert recover(attempt) == [f"removed what an interrupted write left behind: {', '.join(left)}"]
        else:
            assert JOURNAL in left
            assert recover(attempt) == ["finished an interrupted write of ledger.jsonl, screening/extra/new.csv"]
        assert interrupted(attempt) == []
        results.append(snapshot(attempt))
    assert results[0] == results[1] == results[2] == before  # killed before the journal: nothing changed
    assert results[3] == results[4] != before  # killed after it: finished
    assert (tmp_path / "attempt-4" / "ledger.jsonl").read_text() == "new ledger\n"
    assert (tmp_path / "attempt-4" / "screening" / "extra" / "new.csv").read_text() == "new,decisions\n"


# Kills itself while streaming records.jsonl (`Lines`, written a line a block here: each larger than the file's
# buffer, so each reaches the file as it is written), after half its lines: printed, the size they reached.
KILLED_STREAM = """
import os, signal, sys
from pathlib import Path
import sitegen.review.write as write
from sitegen.review.transaction import Transaction
write.BLOCK = 10
temporary = Path(sys.argv[1]) / ".records.jsonl.sitegen-new.sitegen-tmp-"
def lines():
    for number in range(100):
        if number == 50:
            written = [path.stat().st_size for path in temporary.parent.glob(temporary.name + "*")]
            print(written[0], flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        yield f'{{"id":"record-{number:03}","abstract":"{"x" * 20000}"}}\\n'
transaction = Transaction(Path(sys.argv[1]))
transaction.write("ledger.jsonl", "new ledger\\n")
transaction.write("records.jsonl", write.Lines(lines()))
transaction.commit()
"""


def test_a_transaction_killed_while_streaming_a_file_leaves_the_review_as_it_was(review):
    (review / "records.jsonl").write_text('{"id":"old"}\n')
    before = snapshot(review)
    killed = child(KILLED_STREAM, review, stdout=subprocess.PIPE)
    out, _ = killed.communicate(timeout=30)
    assert killed.returncode == -signal.SIGKILL
    assert int(out) >= 49 * 20000  # written as made: the lines before were on disk already, not held
    left = interrupted(review)
    assert left and all(rel.endswith(STAGED) or ".sitegen-tmp-" in rel for rel in left), left
    assert recover(review) and interrupted(review) == [] and snapshot(review) == before


class FailingWrites:
    """A file opened by `_staged` whose `fails_at`-th write fails with ENOSPC, as a disk filling up mid-file does."""

    def __init__(self, handle, fails_at: int):
        self.handle, self.fails_at, self.writes = handle, fails_at, 0

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self.handle.__exit__(*exc)

    def write(self, data):
        self.writes += 1
        if self.writes == self.fails_at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.handle.write(data)


@pytest.mark.parametrize("failure", ["full disk", "lone surrogate"])
def test_a_streamed_file_failing_mid_write_changes_nothing(review, monkeypatch, failure):
    import sitegen.review.write as write

    (review / "records.jsonl").write_text('{"id":"old"}\n')
    before = snapshot(review)
    monkeypatch.setattr(write, "BLOCK", 10)
    lines = [f'{{"id":"record-{number:03}"}}\n' for number in range(100)]
    if failure == "lone surrogate":  # the readers refuse one; the transaction is the last guard, even streamed
        lines[60] = '{"id":"\ud800"}\n'
    else:
        real_fdopen = os.fdopen
        monkeypatch.setattr(os, "fdopen", lambda *args, **kwargs: FailingWrites(real_fdopen(*args, **kwargs), 60))
    transaction = Transaction(review)
    transaction.write("ledger.jsonl", "new ledger\n")
    transaction.write("records.jsonl", write.Lines(iter(lines)))
    with pytest.raises((OSError, SitegenError)) as failed:
        transaction.commit()
    monkeypatch.undo()
    message = str(failed.value)
    assert message == (f"[Errno 28] No space left on device: '{review / 'records.jsonl'}'" if failure == "full disk"
                       else f"refusing to write 'records.jsonl' in {review}: its text holds a lone UTF-16 surrogate, "
                            "which UTF-8 cannot encode; nothing was written")
    assert interrupted(review) == [] and snapshot(review) == before


KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
from sitegen.review.write import atomic_write
os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
atomic_write(Path(sys.argv[1]), "new\\n")
"""


def test_recover_removes_a_killed_writes_temporary_file_and_says_so(review):
    (review / "searches" / "watch.json").write_text("old\n")
    killed = child(KILLED_WRITE, review / "searches" / "watch.json")
    assert killed.wait(timeout=30) == -signal.SIGKILL
    [leftover] = interrupted(review)
    assert leftover.startswith("searches/.watch.json.sitegen-tmp-")
    assert recover(review) == [f"removed what an interrupted write left behind: {leftover}"]
    assert sorted(os.listdir(review / "searches")) == [".gitkeep", "watch.json"]
    assert (review / "searches" / "watch.json").read_text() == "old\n"
    assert recover(review) == []


def test_leftovers_are_found_anywhere_in_the_review_and_only_sitegens_own(review, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f".x{TEMPORARY}").write_text("not the review's")
    (review / "linked").symlink_to(outside)  # never followed
    planted = [f".ledger.jsonl{TEMPORARY}", f"snapshots/ab/.body.json{TEMPORARY}",
               f"searches/.watch.json{STAGED}{TEMPORARY}", f"searches/watch.json{STAGED}", f"records.jsonl{STAGED}"]
    for rel in planted:
        (review / rel).parent.mkdir(parents=True, exist_ok=True)
        (review / rel).write_text("debris")
    mine = [".notes.tmp", "notes.sitegen-tmp-0123456789abcdef", f".x.sitegen-tmp-{'0' * 15}", "new.csv.sitegen-newer"]
    for name in mine:  # a reviewer's files, named almost like sitegen's
        (review / name).write_text("keep")
    assert interrupted(review) == sorted(planted)
    (review / JOURNAL).write_text('["records.jsonl"]\n')
    assert interrupted(review) == sorted([*planted, JOURNAL])
    outside_before = snapshot(outside)
    done = recover(review)
    assert done[0] == "finished an interrupted write of records.jsonl"
    assert done[1].startswith("removed what an interrupted write left behind: ")
    assert interrupted(review) == []
    assert (review / "records.jsonl").read_text() == "debris"  # the committed staged file went in
    assert all((review / name).read_text() == "keep" for name in mine)
    assert snapshot(outside) == outside_before


def test_cli_recover_reports_what_it_did(sitegen, review):
    (review / f"records.jsonl{STAGED}").write_text("uncommitted\n")
    code, out, _ = sitegen("recover", review)
    assert code == 0
    assert f"removed what an interrupted write left behind: records.jsonl{STAGED}" in out
    assert (review / "records.jsonl").read_text() == ""
    assert sitegen("recover", review)[1] == "nothing was interrupted\n"


# --------------------------------------------------------------------------- 3. the journal is untrusted


def plant(review: Path, outside: Path, case: str) -> object:
    """Bait outside the review and whatever `case` needs inside it; returns the bad path."""
    (outside / "x").write_text("precious")
    (outside / f"x{STAGED}").write_text("attacker's")
    if case == "linked-folder":
        (review / "linked").symlink_to(outside)
    elif case == "staged-link":
        (review / f"ledger.jsonl{STAGED}").symlink_to(outside / "x")
    elif case == "folder-target":
        (review / f"searches{STAGED}").write_text("attacker's")
    return {"absolute": str(outside / "x"), "dot-dot": "../outside/x", "linked-folder": "linked/x",
            "staged-link": "ledger.jsonl", "folder-target": "searches", "backslash": "searches\\..\\..\\x",
            "nul": "records.jsonl\0", "empty-part": "searches//watch.json", "dot-part": "./records.jsonl",
            "too-long": "x" * 300, "number": 5, "nested-list": ["records.jsonl"]}[case]


CASES = ["absolute", "dot-dot", "linked-folder", "staged-link", "folder-target", "backslash", "nul", "empty-part",
         "dot-part", "too-long", "number", "nested-list"]


@pytest.mark.parametrize("case", CASES)
def test_a_crafted_journal_entry_is_refused_and_nothing_changes(sitegen, review, tmp_path, case):
    outside = tmp_path / "outside"
    outside.mkdir()
    bad = plant(review, outside, case)
    # A valid entry first, with its staged file: every entry is checked before anything is renamed.
    (review / f"records.jsonl{STAGED}").write_text("staged\n")
    (review / JOURNAL).write_text(json.dumps(["records.jsonl", bad]))
    before = snapshot(tmp_path)
    with pytest.raises(SitegenError) as refused:
        recover(review)
    message = str(refused.value)
    assert message.startswith(f"{review / JOURNAL} names {bad!r}: the path ")
    assert message.endswith(f"; nothing was changed; delete {JOURNAL} (a killed write's note, no file of the review), "
                            f"then see with `git status` and `sitegen check {review}` whether the review's files "
                            "need restoring from Git")
    code, _, err = sitegen("recover", review)
    assert code == 1 and f"names {bad!r}: the path" in err and "Traceback" not in err
    assert snapshot(tmp_path) == before
    assert (outside / "x").read_text() == "precious"


@pytest.mark.parametrize("text", ['"records.jsonl"', '{"records.jsonl": 1}', "[]", "null", "[", "\udcff",
                                  '["records.jsonl"' + ", " * 600_000 + "]", "[" * 400_000 + "]" * 400_000])
def test_a_journal_that_is_not_a_list_of_names_is_refused(review, text):
    (review / f"records.jsonl{STAGED}").write_text("staged\n")
    (review / JOURNAL).write_bytes(text.encode("utf-8", "surrogateescape"))
    before = snapshot(review)
    with pytest.raises(SitegenError, match=f"{JOURNAL} is damaged .* nothing was changed"):
        recover(review)
    assert snapshot(review) == before


def test_a_journal_that_is_a_link_is_refused(review, tmp_path):
    (tmp_path / "elsewhere.json").write_text('["records.jsonl"]')
    (review / f"records.jsonl{STAGED}").write_text("staged\n")
    (review / JOURNAL).symlink_to(tmp_path / "elsewhere.json")
    before = snapshot(tmp_path)
    with pytest.raises(SitegenError, match=f"{JOURNAL} is not a regular file; nothing was changed"):
        recover(review)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("case", CASES)
def test_a_transaction_refuses_the_same_paths(review, tmp_path, case):
    outside = tmp_path / "outside"
    outside.mkdir()
    bad = plant(review, outside, case)
    before = snapshot(tmp_path)
    transaction = Transaction(review)
    transaction.write("records.jsonl", "fine\n")
    with pytest.raises(SitegenError) as refused:
        transaction.write(bad, "anything\n")
    assert str(refused.value).startswith(f"refusing to write {bad!r} in {review}: the path ")
    transaction.commit()
    kind, _, mode = before["review/records.jsonl"]
    assert snapshot(tmp_path) == {**before, "review/records.jsonl": (kind, b"fine\n", mode)}


def test_a_transaction_may_create_folders(review):
    transaction = Transaction(review)
    transaction.write("screening/new-stage/reviewer-a.csv", "id,decision\n")
    transaction.commit()
    assert (review / "screening" / "new-stage" / "reviewer-a.csv").read_text() == "id,decision\n"
    assert interrupted(review) == []


# --------------------------------------------------------------------------- 4. file modes


@pytest.mark.parametrize(("mask", "new_mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_transaction_keeps_each_files_mode_and_gives_new_ones_the_umasks(review, umask, mask, new_mode):
    umask(mask)
    (review / "records.jsonl").chmod(0o644)
    (review / "ledger.jsonl").chmod(0o664)
    expected = {"records.jsonl": 0o644, "ledger.jsonl": 0o664, "searches/new.json": new_mode}
    transaction = Transaction(review)
    for rel in expected:
        transaction.write(rel, "new\n")
    transaction.commit()
    assert {rel: os.stat(review / rel).st_mode & 0o7777 for rel in expected} == expected
    assert (review / "ledger.jsonl").read_text() == "new\n"


def test_atomic_write_keeps_the_mode(tmp_path, umask):
    target = tmp_path / "state.json"
    atomic_write(target, "one\n")
    assert os.stat(target).st_mode & 0o7777 == 0o644
    target.chmod(0o640)
    atomic_write(target, "two\n")
    assert os.stat(target).st_mode & 0o7777 == 0o640
    target.chmod(0o4755)  # only the read/write/execute bits carry over
    atomic_write(target, "three\n")
    assert os.stat(target).st_mode & 0o7777 == 0o755


def test_a_command_keeps_the_ledgers_mode(sitegen, review, umask):
    (review / "ledger.jsonl").chmod(0o664)
    code, _, err = sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    assert code == 0, err
    assert (review / "ledger.jsonl").read_text().count("\n") == 1
    assert os.stat(review / "ledger.jsonl").st_mode & 0o7777 == 0o664


# --------------------------------------------------------------------------- 5. the site swap

OLD = {"index.html": b"old site", SITE_MARKER: b"sitegen"}
NEW = {"index.html": b"new site", "records/a.html": b"a", SITE_MARKER: b"sitegen"}
NEWER = {"index.html": b"newer site", SITE_MARKER: b"sitegen"}


def site_folder(path: Path, files: dict[str, bytes], age: int = 0) -> Path:
    """A folder holding `files`, its modification time `age` seconds in the past."""
    path.mkdir()
    for rel, data in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_bytes(data)
    stamp = 1_700_000_000 - age
    os.utime(path, (stamp, stamp))
    return path


def contents(folder: Path) -> dict[str, bytes]:
    """The site's files; its manifest left out, and its marker as the test folders write it."""
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    files.pop(MANIFEST, None)
    return {rel: b"sitegen" if rel == SITE_MARKER else data for rel, data in files.items()}


def but_the_spare(folder: Path) -> list[str]:
    """The names in `folder` but the one spare a build keeps beside the site (the site before)."""
    names = sorted(p.name for p in folder.iterdir())
    spares = [name for name in names if re.fullmatch(r"\.site\.spare-[0-9a-f]{16}", name)]
    assert len(spares) <= 1
    return [name for name in names if name not in spares]


def failing_write_site(out: Path) -> None:
    """A write_site that recovers `out`, then fails before its own swap (a file where a folder must go)."""
    with pytest.raises(OSError):
        write_site(out, {"index.html": b"x", "index.html/inside": b"y"})


def debris(n: int) -> str:
    return f"{n:016x}"


@pytest.mark.parametrize(("leftovers", "expected"), [
    # killed between the two renames: the complete new site goes in
    ([("old", OLD, 5), ("building", NEW, 1)], NEW),
    # two complete new sites (not made by one review, but possible): the newest goes in
    ([("old", OLD, 5), ("building", NEW, 1), ("building", NEWER, 0)], NEWER),
    # the new site was not complete (no marker): the old one goes back
    ([("old", OLD, 5), ("building", {"index.html": b"half"}, 1)], OLD),
    # only a half-removed retired site (its marker went first): nothing passes for a site
    ([("old", {"index.html": b"half removed"}, 5)], None),
])
def test_a_killed_swap_is_recovered_before_the_next_write(tmp_path, leftovers, expected):
    out = tmp_path / "site"
    for n, (kind, files, age) in enumerate(leftovers):
        site_folder(tmp_path / f".site.{kind}-{debris(n)}", files, age)
    failing_write_site(out)
    if expected is None:
        assert list(tmp_path.iterdir()) == []
    else:
        assert contents(out) == expected
        assert but_the_spare(tmp_path) == ["site"]


def test_leftovers_beside_an_existing_site_are_removed_and_nothing_else(tmp_path):
    out = site_folder(tmp_path / "site", OLD)
    site_folder(tmp_path / f".site.building-{debris(1)}", NEW)
    site_folder(tmp_path / f".site.building-{debris(2)}", {"index.html": b"half"})
    site_folder(tmp_path / f".site.old-{debris(3)}", {"index.html": b"half removed"})
    elsewhere = site_folder(tmp_path / "elsewhere", NEWER)
    keep = {
        f".site.old-{debris(4)}": "a file, not a folder",
        f".site.building-{debris(5)}": "a link to a folder",
        ".site.keep": "another name",
        f".other.building-{debris(6)}": "another output's",
        f".site.building-{debris(7)}x": "not sitegen's name",
    }
    for name, what in keep.items():
        if what == "a file, not a folder":
            (tmp_path / name).write_text(what)
        elif what == "a link to a folder":
            (tmp_path / name).symlink_to(elsewhere)
        else:
            site_folder(tmp_path / name, NEW)
    before = {name: snapshot(tmp_path / name) if (tmp_path / name).is_dir() else None for name in keep}
    write_site(out, NEWER)
    assert contents(out) == NEWER
    assert but_the_spare(tmp_path) == sorted([*keep, "site", "elsewhere"])
    assert {name: snapshot(tmp_path / name) if (tmp_path / name).is_dir() else None for name in keep} == before
    assert contents(elsewhere) == NEWER


def test_the_marker_is_written_last(tmp_path, monkeypatch):
    order = []
    real_write = Path.write_bytes

    def write_bytes(self, data):
        order.append(self.name)
        return real_write(self, data)

    def page_open(path, mode="r", *args, **kwargs):  # pages are written through open(), a part at a time
        if "w" in mode:
            order.append(os.path.basename(path))
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    monkeypatch.setattr("sitegen.site.output.open", page_open, raising=False)
    write_site(tmp_path / "site", NEW)
    assert order == ["index.html", "a.html", MANIFEST, SITE_MARKER]


# Replaces the site at argv[1], killing itself once the old site is renamed away and before the new goes in.
KILLED_SWAP = """
import os, signal, sys
from pathlib import Path
from sitegen.site import output
from sitegen.site.output import SITE_MARKER
real_rename = os.rename
def rename(src, dst):
    if Path(src).name.startswith(".site.spare-"):
        os.kill(os.getpid(), signal.SIGKILL)
    real_rename(src, dst)
output.os.rename = rename
output._exchange = lambda first, second: False  # a system without renameat2: the two-rename swap
output.write_site(Path(sys.argv[1]), {"index.html": b"new site", "records/a.html": b"a", SITE_MARKER: b"sitegen"})
"""


def test_where_the_system_can_exchange_folders_a_site_is_always_in_place(tmp_path, monkeypatch):
    """On Linux the swap is one renameat2(RENAME_EXCHANGE): no rename, so no moment without a site."""
    from sitegen.site import output

    out = tmp_path / "site"
    write_site(out, OLD)
    if not output._exchange(tmp_path, tmp_path):  # a folder exchanged with itself: a harmless probe
        pytest.skip("this system has no renameat2 exchange")

    def no_rename(src, dst):
        raise AssertionError("the swap should not rename")

    monkeypatch.setattr(output.os, "rename", no_rename)
    write_site(out, NEW)
    assert contents(out) == NEW and but_the_spare(tmp_path) == ["site"]


def test_a_rebuild_keeps_the_sites_folder_mode(tmp_path):
    out = tmp_path / "site"
    write_site(out, OLD)
    out.chmod(0o750)
    write_site(out, NEW)
    assert contents(out) == NEW and stat.S_IMODE(out.stat().st_mode) == 0o750


def test_init_keeps_the_mode_of_the_empty_folder_it_fills(tmp_path, sitegen):
    folder = tmp_path / "review"
    folder.mkdir()
    folder.chmod(0o2750)
    assert sitegen("init", folder)[0] == 0
    assert stat.S_IMODE(folder.stat().st_mode) == 0o2750
    previous = os.umask(0o077)
    try:
        assert sitegen("init", tmp_path / "private")[0] == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) == 0o700


def test_a_build_killed_between_its_renames_is_finished_by_the_next(tmp_path):
    out = tmp_path / "site"
    write_site(out, OLD)
    killed = child(KILLED_SWAP, out)
    assert killed.wait(timeout=30) == -signal.SIGKILL
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "site" not in names  # the state the kill left: no site at all, an old and a new beside it
    assert [name.split("-")[0] for name in names] == [".site.old", ".site.spare"]
    failing_write_site(out)  # recovery alone: the new site the kill interrupted goes in
    assert contents(out) == NEW
    assert but_the_spare(tmp_path) == ["site"]
    write_site(out, NEWER)
    assert contents(out) == NEWER
    assert but_the_spare(tmp_path) == ["site"]


def test_init_removes_what_a_killed_init_left_behind(tmp_path, sitegen):
    leftover = tmp_path / ".review.init-abc123"
    (leftover / "searches").mkdir(parents=True)
    (leftover / "review.yaml").write_text("half written")
    keep = tmp_path / ".other.init-abc123"
    keep.mkdir()
    code, _, err = sitegen("init", tmp_path / "review")
    assert code == 0, err
    assert not leftover.exists() and keep.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.init-abc123", "review"]


def test_init_fills_the_empty_working_folder_in_place(tmp_path, sitegen, monkeypatch):
    # `mkdir review && cd review && sitegen init .`: the folder cannot be renamed over (it was "Device or resource
    # busy: ..init-…"), nor can a mount point; a folder given by its full path was replaced, leaving the shell
    # in a deleted folder that showed nothing.
    folder = tmp_path / "review"
    folder.mkdir()
    inode = folder.stat().st_ino
    monkeypatch.chdir(folder)
    code, out, err = sitegen("init", ".")
    assert code == 0, err
    assert "run `sitegen check .`" in out
    assert folder.stat().st_ino == inode
    assert sorted(p.name for p in folder.iterdir()) == sorted(scaffold.ENTRIES)
    assert sitegen("check", ".")[0] == 0


def test_init_clears_what_an_init_killed_filling_a_folder_left_and_nothing_else(tmp_path, sitegen):
    killed = tmp_path / "killed"
    (killed / ".sitegen-init-abc123" / "searches").mkdir(parents=True)
    (killed / ".sitegen-init-abc123" / "review.yaml").write_text("half written")
    (killed / "protocol.md").write_text("moved before the kill")
    code, _, err = sitegen("init", killed)
    assert code == 0, err
    assert sorted(p.name for p in killed.iterdir()) == sorted(scaffold.ENTRIES)
    theirs = tmp_path / "theirs"
    (theirs / ".sitegen-init-abc123").mkdir(parents=True)
    (theirs / "notes.txt").write_text("a user's file")
    code, _, err = sitegen("init", theirs)
    assert code == 1 and "exists and is not empty" in err
    assert (theirs / "notes.txt").read_text() == "a user's file"


@pytest.mark.parametrize("committed", [True, False], ids=["after-commit-point", "before-commit-point"])
def test_check_names_an_interrupted_write_and_build_finishes_it(example_copy, sitegen, tmp_path, committed):
    """After a kill, check says what happened and how to finish it (not "unexpected file"); build finishes it."""
    staged = ["records.jsonl", "searches/object-in-context.json"]
    for rel in staged:
        (example_copy / f"{rel}{STAGED}").write_bytes((example_copy / rel).read_bytes())
    if committed:
        (example_copy / JOURNAL).write_text(json.dumps(staged) + "\n")
    (example_copy / "searches" / f".object-in-context.json{TEMPORARY}").write_text("half")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "[interrupted]" in out and "an interrupted write was found" in out
    assert f"run `sitegen recover {example_copy}` to finish it" in out
    assert "unexpected-file" not in out and out.count("[interrupted]") == 1
    code, out, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 0, err
    assert interrupted(example_copy) == []
    assert sitegen("check", example_copy)[0] == 0


def test_recovery_touches_only_a_review_folder(tmp_path, sitegen):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    planted = [tmp_path / "deep" / "er" / f"data{STAGED}", tmp_path / "deep" / "er" / f".notes{TEMPORARY}"]
    for path in planted:
        path.write_text("keep")
    before = snapshot(tmp_path)
    for command in (["recover", tmp_path], ["ledger", "anchor", tmp_path], ["build", tmp_path, "--out", tmp_path / "s"]):
        code, _, err = sitegen(*command)
        assert code == 1 and "Traceback" not in err, command
    assert snapshot(tmp_path) == before


def test_a_command_that_stops_says_what_it_finished_first(example_copy, sitegen, tmp_path):
    (example_copy / f"records.jsonl{STAGED}").write_text("an uncommitted write\n")
    (example_copy / "protocol.md").write_text("no front matter\n")
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1
    assert f"note: removed what an interrupted write left behind: records.jsonl{STAGED}" in err
    assert "nothing else was written" in err and "nothing was written" not in err


# --------------------------------------------------------------------------- a committed write and files changed since


def committed_not_finished(review: Path, monkeypatch) -> None:
    """A write of the ledger and state.json killed right after its commit point: staged files and journal."""
    import sitegen.review.transaction as transaction

    with monkeypatch.context() as patch:
        patch.setattr(transaction, "_finish", lambda root, rels: None)
        staged = Transaction(review)
        staged.write("ledger.jsonl", (review / "ledger.jsonl").read_text() + "{}\n")
        staged.write("state.json", "{}\n")
        staged.commit()
    assert (review / JOURNAL).exists() and (review / f"ledger.jsonl{STAGED}").exists()


def test_a_committed_write_is_not_finished_over_a_file_pulled_since(sitegen, review, tmp_path, monkeypatch):
    committed_not_finished(review, monkeypatch)
    atomic_write(review / "ledger.jsonl", "a teammate's ledger, pulled\n")  # git writes a new file
    before = snapshot(tmp_path)
    code, out, err = sitegen("recover", review)
    assert code == 1 and "ledger.jsonl changed after an interrupted write was committed" in err
    assert "--discard" in err and snapshot(tmp_path) == before
    code, out, err = sitegen("build", review, "--out", tmp_path / "site")  # every command recovers first: refused too
    assert code != 0 and snapshot(tmp_path) == before
    code, out, err = sitegen("recover", review, "--discard")
    assert code == 0, err
    assert (review / "ledger.jsonl").read_text() == "a teammate's ledger, pulled\n"
    assert interrupted(review) == []


def test_a_committed_write_of_unchanged_files_is_finished(sitegen, review, monkeypatch):
    committed_not_finished(review, monkeypatch)
    staged = (review / f"state.json{STAGED}").read_text()
    assert recover(review) and (review / "state.json").read_text() == staged and interrupted(review) == []


def test_a_committed_write_is_finished_in_a_copy_of_the_folder(sitegen, review, tmp_path, monkeypatch):
    # A copy (cp -a, rsync, a backup restored) gives every file another inode: the unchanged targets were taken
    # for changed ones, and the only way out offered dropped a write half done.
    committed_not_finished(review, monkeypatch)
    staged = (review / f"state.json{STAGED}").read_text()
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(review), str(copy)], check=True)
    assert os.stat(copy / "ledger.jsonl").st_ino != os.stat(review / "ledger.jsonl").st_ino
    code, _, err = sitegen("recover", copy)
    assert code == 0, err
    assert (copy / "state.json").read_text() == staged and interrupted(copy) == []


def test_a_write_partly_finished_and_changed_since_can_be_dropped_and_says_what_it_had_done(sitegen, review,
                                                                                          monkeypatch):
    committed_not_finished(review, monkeypatch)
    os.replace(review / f"ledger.jsonl{STAGED}", review / "ledger.jsonl")  # killed after its first rename
    atomic_write(review / "state.json", '{"pulled": true}\n')  # then a pull changed a file still pending
    code, _, err = sitegen("recover", review)
    assert code == 1 and "state.json changed after an interrupted write" in err
    code, out, _ = sitegen("recover", review, "--discard")  # the way out it names works
    assert code == 0 and "dropped an interrupted write of state.json" in out
    assert "it had replaced ledger.jsonl already" in out and "restore them from Git" in out
    assert interrupted(review) == [] and (review / "state.json").read_text() == '{"pulled": true}\n'


def test_a_rename_refused_after_the_commit_point_says_the_write_is_half_done(sitegen, review, monkeypatch):
    # An immutable or append-only attribute, or another user's file in a sticky folder: the rename fails
    # after some files were replaced already.
    real = os.replace

    def refuse_state(source, target, *args, **kwargs):
        if str(target).endswith("state.json"):
            raise PermissionError(1, "Operation not permitted", str(source))
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", refuse_state)
    staged = Transaction(review)
    staged.write("ledger.jsonl", (review / "ledger.jsonl").read_text() + "{}\n")
    staged.write("state.json", "{}\n")
    with pytest.raises(SitegenError) as refused:
        staged.commit()
    message = str(refused.value)
    assert message.startswith(f"{review / 'state.json'} could not be replaced (Operation not permitted)")
    assert "(ledger.jsonl already replaced)" in message and f"`sitegen recover {review}`" in message
    monkeypatch.setattr(os, "replace", real)
    assert recover(review) and interrupted(review) == []


def test_check_waits_for_no_writer_and_checks_share_the_lock(sitegen, review, tmp_path):
    # Mid-write, a review's files would seem interrupted: check says another process is writing instead.
    held = child(HOLD_LOCK, review, tmpdir=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert held.stdout.readline() == "held\n"
        code, out, err = sitegen("check", review)
        assert code == 5 and f"another sitegen process is writing {review}" in err and "interrupted" not in out
    finally:
        held.stdin.close()
        assert held.wait(timeout=30) == 0
    with review_lock(review, shared=True):  # a check running: another check proceeds, a writer is refused
        assert sitegen("check", review)[0] == 0
        with pytest.raises(LockHeld, match="updating, building or checking"):
            with review_lock(review):
                pass


def test_dropping_a_write_that_had_finished_drops_nothing(sitegen, review, monkeypatch):
    # Killed after its last rename, before the journal went: nothing is pending, and the write was whole.
    committed_not_finished(review, monkeypatch)
    for staged in list(review.glob(f"*{STAGED}")):
        os.replace(staged, review / staged.name.removesuffix(STAGED))
    code, out, _ = sitegen("recover", review, "--discard")
    assert code == 0 and "had been finished: nothing to drop" in out and "restore" not in out
    assert interrupted(review) == []


def test_two_builds_into_one_folder_from_two_reviews_are_one_at_a_time(review, tmp_path, sitegen, monkeypatch):
    # Each build held its own review's lock, so two of them filled and swapped the same output's folders at once.
    import fcntl

    other = tmp_path / "other-review"
    shutil.copytree(review, other)
    site = tmp_path / "out" / "site"
    assert sitegen("build", review, "--out", site)[0] == 0
    before = snapshot(site.parent)
    monkeypatch.setattr("sitegen.site.output.WAIT_FOR_BESIDE", 0.5)
    holder = os.open(site.parent, os.O_RDONLY | os.O_DIRECTORY)  # as a build writing into site.parent holds it
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        code, _, err = sitegen("build", other, "--out", site, "--now", "2026-01-01T00:00:00Z")
    finally:
        os.close(holder)
    assert code == 5 and f"another sitegen process has been writing a site in {site.parent}" in err
    assert snapshot(site.parent) == before
    # A build beside another waits its turn: sites side by side (public/a, public/b) are built in parallel jobs
    monkeypatch.setattr("sitegen.site.output.WAIT_FOR_BESIDE", 60.0)
    holder = os.open(site.parent, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    threading.Timer(1.0, os.close, (holder,)).start()  # the other build finishes a second later
    assert sitegen("build", other, "--out", site.parent / "beside", "--now", "2026-01-01T00:00:00Z")[0] == 0
    assert sitegen("build", other, "--out", site, "--now", "2026-01-01T00:00:00Z")[0] == 0  # released: it builds


def test_no_output_replaces_a_device_or_a_pipe(sitegen, tmp_path):
    # `export --out /dev/full --force` (as root) replaced the device with a file; digest replaced a file unasked.
    review = tmp_path / "review"
    shutil.copytree(ROOT / "reviews" / "object-in-context", review)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for args in (["export", review, "--format", "ris", "--out", pipe, "--force"],
                 ["digest", review, "--week", "2023-W15", "--out", pipe]):
        code, _, err = sitegen(*args)
        assert code in (1, 2) and "not a file" in err and "Traceback" not in err, err
        assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    with pytest.raises(OSError, match="not a file"):
        atomic_write(pipe, "text")
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    notes = tmp_path / "notes.md"
    notes.write_text("my notes\n")
    code, _, err = sitegen("digest", review, "--week", "2023-W15", "--out", notes)
    assert code == 2 and "already exists; give --force" in err and notes.read_text() == "my notes\n"
    assert sitegen("digest", review, "--week", "2023-W15", "--out", notes, "--force")[0] == 0
    assert notes.read_text() != "my notes\n"
    # A link to nothing is there too: digest replaced it unasked, export said its folder did not exist.
    link = tmp_path / "link.ris"
    link.symlink_to(tmp_path / "nowhere" / "x.ris")
    for args in (["digest", review, "--week", "2023-W15", "--out", link],
                 ["export", review, "--format", "ris", "--out", link]):
        code, _, err = sitegen(*args)
        assert code == 2 and "already exists (a link); give --force" in err and link.is_symlink(), err


def test_an_export_removes_what_a_killed_export_of_the_same_file_left_beside_it(sitegen, tmp_path):
    # A killed export left its temporary file (up to the whole export, 600 MB at 100,000 records) beside the output
    # for good: no recover looks outside a review. Only sitegen's, of that file, not in use and not written lately.
    import fcntl

    review = tmp_path / "review"
    shutil.copytree(ROOT / "reviews" / "object-in-context", review)
    out = tmp_path / "out.ris"
    abandoned, recent, in_use, other = [tmp_path / f".{name}.sitegen-tmp-{n:016x}"
                                        for n, name in enumerate(["out.ris", "out.ris", "out.ris", "other.ris"])]
    for path in (abandoned, recent, in_use, other):
        path.write_text("half an export")
    pipe = tmp_path / f".out.ris.sitegen-tmp-{9:016x}"
    os.mkfifo(pipe)  # named as sitegen's, no file of sitegen's: never opened (opening it waited for ever)
    hour_ago = os.stat(recent).st_mtime - 3600
    for path in (abandoned, in_use, other):
        os.utime(path, (hour_ago, hour_ago))
    held = os.open(in_use, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)  # a write in progress in another process
    try:
        code, _, err = sitegen("export", review, "--format", "ris", "--out", out)
    finally:
        os.close(held)
    assert code == 0, err
    assert not abandoned.exists() and recent.exists() and in_use.exists() and other.exists() and out.is_file()
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)


def test_publish_into_a_folder_it_cannot_write_records_no_version(example_copy, sitegen, tmp_path, monkeypatch):
    # The version was recorded, then the build failed ("Operation not permitted: …/.site.spare-…"): a version
    # with no site. (Root writes anywhere, so the folder's permission is what os.access says.)
    config = example_copy / "review.yaml"
    config.write_text(re.sub(r"(?m)^title: .*$", "title: A changed title", config.read_text(), count=1))
    before = tree_bytes(example_copy)
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: Path(path) != locked and real(path, mode, **kw))
    code, _, err = sitegen("publish", example_copy, "--out", locked / "site", "--now", "2026-01-01T00:00:00Z")
    assert code == 1 and f"{locked} cannot be written" in err and "version" not in err
    assert tree_bytes(example_copy) == before and not any(locked.iterdir())


def test_a_write_that_fails_names_the_path_asked_for_not_sitegens_staged_one(sitegen, example_copy):
    # /proc takes no new file or folder, even from root: the error named the hidden file or folder sitegen
    # stages beside the target (".x.ris.sitegen-tmp-…", ".site.spare-…", ".nope.init-…")
    for command, target in [(("export", example_copy, "--format", "ris", "--out"), "/proc/sitegen-test.ris"),
                            (("build", example_copy, "--out"), "/proc/sitegen-test-site"),
                            (("init",), "/proc/sitegen-test-review")]:
        code, out, err = sitegen(*command, target)
        assert code == 1 and "Traceback" not in err, out + err
        said = err.strip().splitlines()[-1]
        assert target in said and "/proc/." not in said, said


def read_only(monkeypatch, folder: Path) -> None:
    """`folder` as on a read-only mount (which even root meets, as a bind mount of a checkout): creating or removing
    a file there fails with EROFS, naming it, and removing one that is not there fails likewise."""
    real_open, real_unlink = os.open, os.unlink

    def refused(path) -> bool:
        return Path(os.fspath(path)).is_relative_to(folder)

    def open_(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and refused(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    def unlink(path, *args, **kwargs):
        if refused(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "unlink", unlink)


@pytest.mark.parametrize(("args", "target"), [
    (("state", "set", "{review}", "max_kept", "9"), "state.json"),
    (("import", "{review}", "{ris}", "--at", "2026-06-01T00:00:00Z"), "ledger.jsonl"),
    (("import-decisions", "{review}", "{asreview}", "--tool", "asreview", "--reviewer", "reviewer-c"),
     "screening/title-abstract/reviewer-c.csv"),
], ids=["state-set", "import", "import-decisions"])
def test_a_read_only_review_names_the_file_it_would_replace_and_says_nothing_was_written(
        sitegen, example_copy, tmp_path, monkeypatch, args, target):
    """Removing the transaction's staged files after the write failed raised EROFS again (unlink(missing_ok=True)
    does on a read-only mount), so the error named "state.json.sitegen-new", a file the user never had; and it did not
    say that nothing was written."""
    ris = tmp_path / "new.ris"
    ris.write_text("TY  - JOUR\nTI  - A study of objects in their contexts\nDO  - 10.9999/ro.1\nER  - \n",
                   encoding="utf-8")
    fill = {"review": example_copy, "ris": ris, "asreview": ROOT / "tests/fixtures/asreview/Sep_2021_ids.csv"}
    before = tree_bytes(example_copy)
    read_only(monkeypatch, example_copy)
    code, _, err = sitegen(*[arg.format(**fill) for arg in args])
    monkeypatch.undo()
    assert code == 1 and "Traceback" not in err
    assert err.splitlines()[-1] == f"error: Read-only file system: {example_copy / target}; nothing was written"
    assert tree_bytes(example_copy) == before


@pytest.mark.parametrize("command", ["monitor-add", "update", "verify"])
@pytest.mark.parametrize("where", ["", "snapshots"])
def test_a_review_that_cannot_be_written_is_refused_before_anything_is_fetched(example_copy, monkeypatch, command,
                                                                              where):
    """Each command that fetches, then writes what it fetched, searched (every page of every source, minutes and an
    API's quota) before its transaction met the read-only folder; the folders its write needs are tried first."""
    import httpx

    from sitegen import commands
    from sitegen.review.models import Strategy
    from sitegen.sources.settings import SourceSettings

    requests: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda request: requests.append(request) or httpx.Response(500))
    settings = SourceSettings(max_records=10)
    run = {"monitor-add": lambda: commands.add_monitor(example_copy, "watch", [Strategy(source="openalex", query="x")],
                                                       "2026-06-01T00:00:00Z", settings=settings, transport=transport),
           "update": lambda: commands.update(example_copy, "2026-06-01T00:00:00Z", settings=settings,
                                             transport=transport),
           "verify": lambda: commands.verify(example_copy, "2026-06-01T00:00:00Z", settings=settings,
                                             transport=transport)}[command]
    before = tree_bytes(example_copy)
    read_only(monkeypatch, example_copy / where)
    with pytest.raises(SitegenError, match="cannot be written.*nothing was written") as raised:
        run()
    monkeypatch.undo()
    assert requests == [] and tree_bytes(example_copy) == before
    assert str(example_copy / where).rstrip("/") in str(raised.value)
