"""What a command prints on standard output is there in full, or the command says it is not: exit 1 and one line on
standard error when standard output is closed, on a full disk or over a file size limit; its reader gone
(`| head`) is quiet, exit 141, as a program killed by SIGPIPE. Run as the program runs (`sitegen.cli.main`), on
real file descriptors: click's test runner replaces standard output."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE

from sitegen.errors import EXIT_BROKEN_PIPE, EXIT_INVALID

LOST = "error: standard output could not be written ({}), so what the command printed is missing or cut short; "


def _run(*args: object, stdout=None, before=None) -> tuple[int, str]:
    """`sitegen ARGS` with standard output `stdout` (a file, a pipe; None: closed); its status and standard error."""
    def closed_output() -> None:
        os.close(1)

    done = subprocess.run([sys.executable, "-m", "sitegen", *map(str, args)], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, env={**os.environ, "SITEGEN_CACHE_DIR": ""},
                          preexec_fn=before or (closed_output if stdout is None else None))
    return done.returncode, done.stderr


@pytest.mark.parametrize("args", [
    ("export", EXAMPLE, "--format", "ris"),
    ("digest", EXAMPLE, "--week", "2023-W15"),
    ("check", EXAMPLE, "--format", "json"),
    ("prisma", EXAMPLE, "--json"),
    ("schema",),
    ("--help",),  # printed by click, before any command runs
])
def test_printing_into_a_closed_standard_output_fails(args):
    """Each printed nothing, exit 0 (Python leaves sys.stdout None, and click prints into that nothing)."""
    assert _run(*args) == (EXIT_INVALID, LOST.format("Bad file descriptor") + "it wrote no file\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a disk always full")
@pytest.mark.parametrize("args", [("export", EXAMPLE, "--format", "ris"), ("digest", EXAMPLE, "--week", "2023-W15"),
                                  ("--help",)])
def test_printing_onto_a_full_disk_says_so(args):
    with open("/dev/full", "w") as full:
        assert _run(*args, stdout=full) == (EXIT_INVALID, LOST.format("No space left on device") + "it wrote no file\n")


def test_an_export_cut_short_by_a_file_size_limit_fails(tmp_path):
    """The limit takes part of a write, the rest fails: Python's buffered writer dropped the rest unsaid, so an
    export to a disk filling up was cut short, exit 0 (as here, at 100 KB of its 780 KB)."""
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write over the limit fails, instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    with (tmp_path / "all.json").open("w") as out:
        code, err = _run("export", EXAMPLE, "--format", "csl-json", "--records", "all", stdout=out, before=limited)
    assert (code, err) == (EXIT_INVALID, LOST.format("File too large") + "it wrote no file\n")


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    """`| head -c 10`: the reader took part of the first write and left; the rest was dropped, exit 0."""
    child = subprocess.Popen([sys.executable, "-m", "sitegen", "export", str(EXAMPLE), "--format", "csl-json",
                              "--records", "all"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "SITEGEN_CACHE_DIR": ""})
    assert child.stdout.read(10) == b'[\n  {\n    '
    child.stdout.close()
    assert (child.wait(timeout=120), child.stderr.read()) == (EXIT_BROKEN_PIPE, b"")


def test_a_build_into_a_closed_standard_output_says_what_it_wrote(tmp_path):
    """The site is built whole; only its line is lost, and the error says the site was written."""
    site = tmp_path / "site"
    assert _run("build", EXAMPLE, "--out", site) == (EXIT_INVALID, LOST.format("Bad file descriptor")
                                                     + f"it wrote {site} (each whole)\n")
    assert (site / "index.html").is_file()


HOLDS = """
import os, sys
from sitegen.cli import _hold_standard_streams
_hold_standard_streams()
os.write(int(sys.argv[1]), str(os.open(".", os.O_RDONLY)).encode())
"""


def test_a_closed_standard_output_keeps_its_number():
    """A file the command opens does not take number 1: the review's lock did, and a forked renderer, which keeps
    standard input, output and error, held the review locked after its build was killed."""
    reading, writing = os.pipe()
    try:
        subprocess.run([sys.executable, "-c", HOLDS, str(writing)], pass_fds=(writing,), timeout=60, check=True,
                       preexec_fn=lambda: os.close(1))
    finally:
        os.close(writing)
    with os.fdopen(reading) as got:
        assert int(got.read()) > 2


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("schema",), ("export", "--help")])
def test_printing_into_a_pipe_nobody_reads_ends_quietly(args):
    """Alike for what click prints before any command runs (`sitegen --help | head`): click's own exit 1 it was."""
    reading, writing = os.pipe()
    os.close(reading)
    try:
        assert _run(*args, stdout=writing) == (EXIT_BROKEN_PIPE, "")
    finally:
        os.close(writing)
