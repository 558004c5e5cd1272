"""Ctrl-C on the command line: one line saying what was written, exit status 130, no traceback, and the
review whole (a committed transaction's renames are finished before Ctrl-C is let through)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, tree_bytes

from sitegen.errors import EXIT_INTERRUPTED

EXPORT = FIXTURES / "dedupe" / "cytology_screening" / "records_pre_merged.csv"  # a real export of 1,856 records


def _locked_review(sitegen, folder: Path) -> Path:
    review = folder / "review"
    assert sitegen("init", review)[0] == 0
    assert sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")[0] == 0
    return review


# Ctrl-C while Python loads sitegen's modules, before any command runs: a finder raises it as sitegen.cli is found.
INTERRUPTED_LOADING = """
import sys
class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "sitegen.cli":
            raise KeyboardInterrupt
sys.meta_path.insert(0, CtrlC())
from sitegen.__main__ import main
main()
"""


def test_ctrl_c_while_the_program_starts_is_one_line_not_a_traceback():
    """That was a KeyboardInterrupt traceback through the imports (the first half second of every command)."""
    done = subprocess.run([sys.executable, "-c", INTERRUPTED_LOADING, "check", "."], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (EXIT_INTERRUPTED, "", "error: interrupted; nothing was written\n")


def _holds_open(pid: int, folder: Path) -> bool:
    """Whether process `pid` has `folder` open (a sitegen command holds its review's lock on it)."""
    with contextlib.suppress(OSError):
        return any(os.readlink(fd) == str(folder) for fd in Path(f"/proc/{pid}/fd").iterdir())
    return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see the review's lock taken")
def test_sigint_while_an_import_runs_stops_it_writing_nothing(sitegen, tmp_path):
    """A real SIGINT (Ctrl-C in a terminal) once the import holds the review: one line, exit 130, the review as it
    was."""
    review = _locked_review(sitegen, tmp_path)
    before = tree_bytes(review)
    child = subprocess.Popen([sys.executable, "-m", "sitegen", "import", str(review), str(EXPORT),
                              "--at", "2026-01-02T00:00:00Z"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "SITEGEN_CACHE_DIR": ""},
                             # a child started in the background ignores SIGINT unless told otherwise
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not _holds_open(child.pid, review) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert (child.returncode, err) == (EXIT_INTERRUPTED, "error: interrupted; nothing was written\n")
    assert tree_bytes(review) == before


def test_ctrl_c_while_an_import_reads_says_nothing_was_written(sitegen, tmp_path, monkeypatch):
    """Ctrl-C in the middle of the work (here: as the file is read): nothing written, and said so."""
    import sitegen.living.imports as imports

    review = _locked_review(sitegen, tmp_path)
    before = tree_bytes(review)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(imports, "read_reference_file", interrupted)
    code, out, err = sitegen("import", review, EXPORT, "--at", "2026-01-02T00:00:00Z")
    assert (code, out, err) == (EXIT_INTERRUPTED, "", "error: interrupted; nothing was written\n")
    assert tree_bytes(review) == before


def test_ctrl_c_in_a_command_that_only_reads_says_only_that_it_was_interrupted(sitegen, tmp_path, monkeypatch):
    """`screen status` writes nothing however it ends: "nothing was written" would suggest it might have."""
    from sitegen import commands

    review = _locked_review(sitegen, tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "screening_status", interrupted)
    assert sitegen("screen", "status", review) == (EXIT_INTERRUPTED, "", "error: interrupted\n")


def test_ctrl_c_between_the_renames_of_a_committed_write_leaves_the_review_whole(sitegen, tmp_path, monkeypatch):
    """SIGINT after the transaction's commit point, as its first file is renamed into place: the other files
    are renamed too before Ctrl-C stops the command, so the review is the whole new one (no journal left for the
    next command to finish), and the message names what was written."""
    import sitegen.review.transaction as transaction

    review = _locked_review(sitegen, tmp_path)
    real_replace = os.replace
    calls = []

    def replace_then_ctrl_c(source, target):
        real_replace(source, target)
        if str(source).endswith(transaction.STAGED):  # a staged file renamed over its target: past the commit point
            if not calls:
                signal.raise_signal(signal.SIGINT)
            calls.append(target)

    monkeypatch.setattr(transaction.os, "replace", replace_then_ctrl_c)
    code, out, err = sitegen("import", review, EXPORT, "--at", "2026-01-02T00:00:00Z")
    monkeypatch.undo()
    assert code == EXIT_INTERRUPTED and "Traceback" not in err, err
    assert len(calls) == 4  # duplicates.csv, ledger.jsonl, records.jsonl, state.json: all of them
    assert err.startswith(f"error: interrupted after it wrote {review}/duplicates.csv, {review}/ledger.jsonl, ")
    assert err.endswith(" (each whole); nothing else was written\n")
    assert not (review / transaction.JOURNAL).exists()
    assert sitegen("check", review)[:2] == (0, "no problems found\n")
    assert "identified other methods: 1856\n" in sitegen("prisma", review)[1]  # every record of the file


@pytest.mark.parametrize("existing", [False, True], ids=["new-folder", "empty-folder"])
def test_ctrl_c_as_init_puts_the_review_in_place_names_it(sitegen, tmp_path, monkeypatch, existing):
    """SIGINT as `init` renames the new review into place: the review is there, whole, and the message names it (it
    said nothing was written). Filling an empty folder, SIGINT as its last file is moved in takes every file out
    again: nothing was written, and the folder is empty as it was."""
    import sitegen.review.scaffold as scaffold

    review = tmp_path / "review"
    if existing:
        review.mkdir()
    real_replace = os.replace

    def replace_then_ctrl_c(source, target):
        real_replace(source, target)
        if Path(target) == review or Path(target).name == "review.yaml":
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(scaffold.os, "replace", replace_then_ctrl_c)
    code, out, err = sitegen("init", review)
    monkeypatch.undo()
    assert code == EXIT_INTERRUPTED and "Traceback" not in err, err
    if existing:
        assert err == "error: interrupted; nothing was written\n" and list(review.iterdir()) == []
    else:
        assert err == f"error: interrupted after it wrote {review} (each whole); nothing else was written\n"
        assert sitegen("check", review)[:2] == (0, "no problems found\n")
