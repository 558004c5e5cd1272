"""Pages rendered in several processes: the same site as one process builds, errors raised where the
build can report them, and no process left writing once its build is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitegen.errors import BuildError
from sitegen.review.transaction import review_lock
from sitegen.site import output
from sitegen.site.output import MANIFEST, Page, write_site
from tests.conftest import tree_bytes


def pages(count: int) -> list[Page]:
    return [Page(f"p/{number}.html", lambda number=number: f"<p>{number}</p>", f"k{number}") for number in range(count)]


def test_several_processes_write_the_site_one_process_writes(tmp_path, monkeypatch):
    built = {}
    for processes in (1, 2, 3):
        monkeypatch.setattr(output, "render_processes", lambda processes=processes: processes)
        out = tmp_path / f"site-{processes}"
        result = write_site(out, pages(500), dated=10**18)
        assert (result.files, result.rendered) == (500, 500)
        built[processes] = tree_bytes(out)
    assert built[1] == built[2] == built[3]  # the manifest too: same files, same order, same times


def test_an_error_in_another_process_is_raised_and_the_site_left_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setattr(output, "render_processes", lambda: 2)
    out = tmp_path / "site"
    write_site(out, pages(100))
    before = tree_bytes(out)
    parent = os.getpid()

    def failing(number: int) -> str:
        if os.getpid() != parent:  # whichever page the other process takes first
            raise BuildError(f"page {number} could not be rendered")
        time.sleep(0.01)  # slower here, so the other process surely takes some pages
        return f"<p>{number} again</p>"

    with pytest.raises(BuildError, match=r"page \d+ could not be rendered"):
        write_site(out, [Page(f"p/{n}.html", lambda n=n: failing(n)) for n in range(100)])
    assert tree_bytes(out) == before
    assert [path.name for path in tmp_path.iterdir() if ".site.spare-" not in path.name] == ["site"]


def test_a_process_that_dies_is_an_error_not_a_missing_page(tmp_path, monkeypatch):
    monkeypatch.setattr(output, "render_processes", lambda: 2)
    parent = os.getpid()

    def killed(number: int) -> str:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.01)  # slower here, so the other process surely takes some pages
        return "<p>x</p>"

    with pytest.raises(BuildError, match="ended without sending its pages"):
        write_site(tmp_path / "site", [Page(f"p/{n}.html", lambda n=n: killed(n)) for n in range(100)])
    assert not (tmp_path / "site").exists()


# Builds a site whose pages the other process renders only once the build is gone, and kills itself (kill -9)
# once that process has started one: argv[1] is the site, argv[2] a folder where the other process notes its pid
# and each page it finishes (none, when it dies with the build; no timing is relied on).
KILLED_PARENT = """
import os, signal, sys, time
from pathlib import Path
from sitegen.site import output
from sitegen.site.output import Page, write_site
notes = Path(sys.argv[2])
parent = os.getpid()
output.render_processes = lambda: 2
def render(number):
    if os.getpid() != parent:
        (notes / "pid").write_text(str(os.getpid()))
        deadline = time.monotonic() + 30
        while os.getppid() == parent and time.monotonic() < deadline:  # until the build is gone (or 30 s)
            time.sleep(0.01)
        (notes / f"page-{number}").write_text("done")  # only a process that outlived its build gets here
    else:
        time.sleep(0.01)  # so the other process surely takes some pages
    return "<p>x</p>"
def received(child):
    while not (notes / "pid").exists():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGKILL)
output._received = received
write_site(Path(sys.argv[1]), [Page(f"p/{n}.html", lambda n=n: render(n)) for n in range(200)])
"""


def test_the_other_processes_die_with_a_build_killed_with_minus_9(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    finished = subprocess.run([sys.executable, "-c", KILLED_PARENT, str(tmp_path / "site"), str(notes)],
                              capture_output=True, text=True, timeout=60)
    assert finished.returncode == -signal.SIGKILL, finished.stderr
    pid = int((notes / "pid").read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    assert not list(notes.glob("page-*"))  # it died with the build, before it could write a page



def test_a_renderer_holds_neither_the_reviews_lock_nor_the_sites(tmp_path, monkeypatch):
    # Forked holding every file of the build, a renderer held the review's lock until it died, a moment after a
    # build killed with -9: a build started at once found the review locked by "another sitegen process".
    monkeypatch.setattr(output, "render_processes", lambda: 2)
    review, parent = tmp_path / "review", os.getpid()
    review.mkdir()
    held = {str(review), str(tmp_path)}  # the review's lock, and the lock on the folder the site is built in

    def noted(number: int) -> str:
        if os.getpid() != parent:
            opened = {os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                      if os.path.exists(f"/proc/self/fd/{fd}")}
            (tmp_path / f"renderer-{number}").write_text(repr(sorted(opened & held)))
        time.sleep(0.002)
        return "<p>x</p>"

    with review_lock(review):
        write_site(tmp_path / "site", [Page(f"p/{n}.html", lambda n=n: noted(n)) for n in range(200)])
    noted_by_renderers = [path.read_text() for path in tmp_path.glob("renderer-*")]
    assert noted_by_renderers and set(noted_by_renderers) == {"[]"}

def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in status.read_text()
    except OSError:
        return False


def test_each_process_takes_pages_as_it_is_free_so_a_slow_one_takes_fewer(tmp_path, monkeypatch):
    monkeypatch.setattr(output, "render_processes", lambda: 2)
    parent = os.getpid()
    pids = tmp_path / "pids"
    pids.mkdir()

    def noted(number: int) -> str:
        (pids / str(number)).write_text(str(os.getpid()))
        time.sleep(0.002 if os.getpid() == parent else 0.02)  # the other process ten times slower
        return f"<p>{number}</p>"

    write_site(tmp_path / "site", [Page(f"p/{n}.html", lambda n=n: noted(n)) for n in range(400)])
    by = [int((pids / str(number)).read_text()) for number in range(400)]
    assert sorted(number for number in range(400) if by[number] == parent) != list(range(0, 400, 2))
    assert 0 < sum(pid != parent for pid in by) < 100  # not the half a fixed share would have given it
    assert all((tmp_path / "site" / "p" / f"{number}.html").read_text() == f"<p>{number}</p>" for number in range(400))


def test_a_small_batch_is_rendered_in_this_process(tmp_path, monkeypatch):
    monkeypatch.setattr(output, "render_processes", lambda: 4)
    parent = os.getpid()
    renderers = set()

    def noted(number: int) -> str:
        renderers.add(os.getpid())
        return f"<p>{number}</p>"

    write_site(tmp_path / "site", [Page(f"p/{n}.html", lambda n=n: noted(n)) for n in range(output.SHARED_FROM - 1)])
    assert renderers == {parent}
    assert (tmp_path / "site" / MANIFEST).is_file()


def test_a_build_that_cannot_start_another_process_renders_every_page_itself(tmp_path, monkeypatch):
    monkeypatch.setattr(output, "render_processes", lambda: 3)

    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(output.os, "fork", no_fork)
    result = write_site(tmp_path / "site", pages(200))
    assert result.rendered == 200 and (tmp_path / "site" / "p" / "199.html").read_text() == "<p>199</p>"


class _Cycle:
    """What rendering a Jinja template leaves behind: objects that refer to each other, holding text."""

    def __init__(self) -> None:
        self.itself = self
        self.text = "x" * 10_000


def test_the_reference_cycles_rendering_leaves_are_freed_while_a_build_renders(tmp_path, monkeypatch):
    import gc
    import weakref

    monkeypatch.setattr(output, "render_processes", lambda: 1)
    alive: weakref.WeakSet[_Cycle] = weakref.WeakSet()

    def render(number: int) -> str:
        alive.add(_Cycle())  # garbage once the page is rendered; only the cycle collector can free it
        return f"<p>{number}</p>"

    enabled = gc.isenabled()
    gc.disable()  # as a build runs (sitegen.review.folder.cycle_collection_paused)
    try:
        write_site(tmp_path / "site", [Page(f"p/{n}.html", lambda n=n: render(n)) for n in range(1000)])
        assert len(alive) < output.COLLECT_EVERY  # at most those since the last collection, not all 1,000
    finally:
        if enabled:
            gc.enable()
