"""Write a site so that readers only ever see a whole one, rendering only the pages that changed.

The site is written into a second folder next to the target and the two are exchanged in
one atomic step (Linux `renameat2`), so a reader sees the old site or the new one, never a
mix. The folder the exchange retires is kept as `.<name>.spare-<random>`, and the next build
writes into it again: it brings that folder from the site before last to the new one, so a
rebuild touches only the files that differ, not every file of a 100,000-record site.

Each built folder holds a manifest (`.sitegen-manifest.json`: what the site was built from, and
per file its page key, SHA-256, size and modification time: the build time, not the clock's) and,
written last, the marker file; a folder without the marker
is never taken for a whole site. A keyed page (see `sitegen.site.keys`) whose key equals the
one the current site was built with, and whose file there is still the one the manifest
describes, is not rendered again: its file is linked from the current site. When every file
equals the current site's, nothing is exchanged and the build says the site was up to date.

Pages to render wait in batches; each batch is shared out among as many processes as there are
processors (forked, so they hold the build's data; each takes the next few pages as it is free, writes
their files and sends back what it wrote). A page's bytes do not depend on the process that renders it.

Where the system cannot exchange, the old site is renamed aside (`.<name>.old-<random>`) and
the new one renamed in; a process killed between those two renames leaves no site, so every
`write_site` first recovers: it moves the newest whole folder in and removes every leftover
folder but one whole spare. A failure at any point leaves the previous site exactly as it
was. Only a folder sitegen built (it holds the marker file) or an empty one is ever replaced.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import functools
import gc
import hashlib
import json
import os
import pickle
import posixpath
import re
import secrets
import shutil
import signal
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass

from sitegen.errors import BuildError, LockHeld, OptionInvalid, OutputRefused, shown_argument, shown_path, symbolic_link
from sitegen.files import read_file
from sitegen.review.write import keep_folder_identity, named_as, written

SITE_MARKER = ".sitegen-site"  # marks a folder sitegen built, so only such a folder is ever replaced
MARKER_TEXT = b"This folder was built by sitegen; `sitegen build` replaces it as a whole.\n"
MANIFEST = ".sitegen-manifest.json"
# A page site search indexes says so in its HTML (templates/base.html): the whole tag, as a review's text on a
# page (escaped) can hold the attribute's name but never a '<'.
INDEXED_MARK = b'<main id="main" data-pagefind-body>'
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a large file, keyed as a page is (see `Page`): a page may render to parts."""

    key: str
    render: Callable[[], str]


@dataclass(frozen=True)
class Page:
    """One file of the site: where it goes, how to render it, and its key (None: always rendered).

    A large file is rendered in pieces, written as they come. Pieces that are keyed `Part`s (a download of
    every record, a few hundred records a part) are each copied from the current site's file when it held a
    part of that key, and rendered otherwise: a decision renders one part of the records' CSV, not 100,000 rows."""

    path: str
    render: Callable[[], str | bytes | Iterable[str] | Iterable[str | Part]]
    key: str | None = None
    # Rendered by the building process alone, with no renderer forked meanwhile: a page that reads every record
    # (a download of them all; the records lists, which together do). A forked process shares the build's memory until either writes to it, and Python
    # writes to every object it reads (its reference count), so such a page rendered beside another process had
    # every record copied, 500 MB at 100,000 records on top of the build's 1 GB.
    alone: bool = False


# A slotted pydantic dataclass, not a model: no dictionary and no set of the fields given per file, of which
# a build holds one for each of 100,000 files and more (a third of the memory each).
@pydantic_dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid"))
class Written:
    """A file as a built folder's manifest describes it."""

    key: str | None
    sha256: str
    size: int
    mtime_ns: int
    indexed: bool  # site search indexes it


class Stamp(BaseModel):
    """What a site was built from: the digest of every input (see `sitegen.site.build.inputs_digest`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    inputs: str
    records: int
    built_at: str | None
    # The review it was built from: the hash of its ledger's first event (None while the ledger is empty), which no
    # move, clone or new title changes, and its title; a build into another review's site says whose it replaces.
    review: str | None = None
    title: str | None = None


# A file rendered in keyed parts: each piece's key (None: a piece that is not a `Part`), length in bytes and, for a
# keyed part, the digest of its bytes (`_part_digest`: a part is copied only when its bytes are still those), in order.
Layout = list[tuple[str | None, int, str | None]]


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: int = 1
    stamp: Stamp | None = None
    files: dict[str, Written]
    parts: dict[str, Layout] = {}  # the files rendered in keyed parts, as they are laid out


@dataclass
class WriteResult:
    files: int
    rendered: int  # pages rendered this time; the others were kept from the previous site
    changed: bool  # False: the site already was exactly this one, and nothing was exchanged
    before: Stamp | None = None  # the stamp of the site it replaced (or found up to date)


# What runs once every page is written, given the folder being filled and its files so far: more pages
# (the site search index, which is built from the pages themselves).
Finish = Callable[[Path, Mapping[str, Written], Mapping[str, Written]], Iterable[Page]]


def refuse_unsafe_output(review_dir: Path, out: Path) -> None:
    if out.is_symlink():
        raise OutputRefused(f"refusing to build into {shown_path(out)}: it is {symbolic_link(out)}; give the real folder")
    review_dir, target = review_dir.resolve(), out.resolve()
    if target == review_dir or target in review_dir.parents:
        raise OutputRefused(f"refusing to build into {shown_path(out)}: it contains the review folder {shown_path(review_dir)}")
    if review_dir in target.parents:
        # --out defaults to ./site where the command runs: in the review's folder, that is inside it, and the folder
        # beside the review is suggested; run from outside it, ./site is (beside the review would put it in reviews/,
        # among the folders the workflows take for reviews).
        here = Path.cwd().resolve()
        inside = here == review_dir or review_dir in here.parents
        beside = os.path.relpath(review_dir.parent / "site") if inside else "site"
        raise OutputRefused(f"refusing to build into {shown_path(out)}: it is inside the review folder; "
                            f"the site is derived and belongs outside it: give --out a folder outside it, such as "
                            f"--out {shown_argument(beside)}" + (", or run the command from outside the review folder "
                            "(--out is ./site where the command runs unless given)" if inside else ""))
    if target.exists() and not target.is_dir():
        # A path that is not a folder where one is wanted: the command line is wrong (exit 2), as the CLI says of
        # it when it parses --out, and as of `init FILE`; here when the library is called, or the file came since.
        raise OptionInvalid("--out", f"{shown_path(out)} is a file, not a folder")
    if target.is_dir() and os.path.ismount(target):
        raise OutputRefused(f"refusing to build into {shown_path(out)}: it is a mount point (a container's volume, say), which "
                            "cannot be replaced as a whole as a new site is swapped in; build into a folder inside it "
                            f"(--out {shown_path(out / 'site')})")
    if target.is_dir() and any(target.iterdir()) and not (target / SITE_MARKER).is_file():
        raise OutputRefused(f"refusing to replace {shown_path(out)}: it is not empty and was not built by sitegen "
                            f"(no {SITE_MARKER} file); choose another --out or empty it yourself")
    # The site is built in a folder beside it: a place it cannot be written is refused now, before `publish`
    # records a version that would then have no site.
    beside = next(folder for folder in target.parents if folder.exists())
    if not os.access(beside, os.W_OK | os.X_OK):
        raise OutputRefused(f"refusing to build into {shown_path(out)}: {shown_path(beside)} cannot be written (no permission, or a "
                            "read-only file system); choose another --out")


def write_site(out: Path, pages: Iterable[Page] | Mapping[str, bytes], finish: Finish | None = None,
               stamp: Stamp | None = None, dated: int | None = None) -> WriteResult:
    """Make `out` the site of `pages` (or of a mapping path -> bytes), atomically, stamped with what it
    was built from. Files written are `dated` (nanoseconds since 1970; the build time) rather than by
    the clock, so the same review built afresh gives the same manifest, and a file edited since shows by its
    time. A file kept from the site before keeps its time: it has not changed since (as Last-Modified says)."""
    if isinstance(pages, Mapping):  # the marker is the writer's to write, last
        pages = [Page(path, lambda content=content: content) for path, content in pages.items() if path != SITE_MARKER]
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    with _writing_beside(out):  # one writer at a time: two would fill and swap the same folders
        _recover(out)
        current_manifest = _manifest(out)
        current = current_manifest.files
        spare = next(iter(_leftovers(out, "spare")), None)
        held_manifest = _manifest(spare) if spare is not None else Manifest(files={})
        held = held_manifest.files
        # A spare is filled by unlinking and writing its files: it is reused only when it holds no file but those
        # its manifest lists (each is checked as it is reused, `_held`). One whose files are not known, that holds
        # a file put there by hand (it would pass into the site), or a link to a folder elsewhere (it would be
        # written through) is discarded, and the build starts afresh.
        if spare is not None and not (held and _files_within(spare, held_manifest) is not None):
            _discard(spare)
            spare, held = None, {}
        if spare is not None:  # from here on the spare is being changed: never a whole site until its marker is back
            (spare / SITE_MARKER).unlink()
        tree = spare or _leftover_name(out, "spare")  # a spare from the start: after the exchange it holds the old site
        try:
            if spare is None:
                with named_as(out):  # the folder beside it is the writer's own: the error names the site's
                    tree.mkdir()
            filling = _Filling(tree, held, out, current, dated, current_manifest.parts)
            for page in pages:
                filling.add(page)
            filling.render_waiting()
            for page in finish(tree, filling.files, current) if finish else ():
                filling.add(page)
            filling.render_waiting()
            filling.remove_the_rest()
            with named_as(f"{out}/{MANIFEST}"):
                (tree / MANIFEST).write_bytes(Manifest(stamp=stamp, files=filling.files, parts=filling.layouts)
                                              .model_dump_json().encode())
            with named_as(f"{out}/{SITE_MARKER}"):
                (tree / SITE_MARKER).write_bytes(MARKER_TEXT)  # last: see _recover
            same = (not filling.differs and current.keys() == filling.files.keys()
                    and site_is_intact(out, current_manifest))  # nothing added by hand beside the pages either
            if not (same and os.path.isdir(out) and current_manifest.stamp == stamp):
                _swap_in(tree, out)
                written.append(out)
        except BaseException:
            _discard(tree)
            raise
        return WriteResult(len(filling.files), filling.rendered, changed=not same, before=current_manifest.stamp)


@contextlib.contextmanager
def _writing_beside(out: Path) -> Iterator[None]:
    """Hold the folder `out` is in, so that no other sitegen process writes a site there meanwhile (two builds
    into one --out, from two review folders, would each recover, fill and discard the folders of the other).
    An advisory `flock` on that folder, as the review's lock is on the review's: nothing is written for it,
    and the kernel drops it when the process ends, however it ends. Sites built side by side (public/a and
    public/b in parallel) take turns: a build waits up to WAIT_FOR_BESIDE seconds for the other to finish."""
    fd = os.open(out.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        waited = 0.0
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if waited >= WAIT_FOR_BESIDE:
                    raise LockHeld(f"another sitegen process has been writing a site in {shown_path(out.parent)} (into {shown_path(out)} "
                                   f"or a folder beside it) for over {WAIT_FOR_BESIDE:.0f} s; try again when it "
                                   "has finished") from None
                time.sleep(0.25)
                waited += 0.25
        yield
    finally:
        os.close(fd)


WAIT_FOR_BESIDE = 30 * 60.0  # a build of 100,000 records takes a minute or two; one hung for longer is refused


class _Filling:
    """Bring `tree` (holding the files `held` describes) to the new site, page by page, reusing the
    files of the current site at `out` (described by `current`) for pages whose key has not changed."""

    def __init__(self, tree: Path, held: dict[str, Written], out: Path, current: dict[str, Written],
                 dated: int | None, current_layouts: dict[str, Layout]):
        self.tree, self.held, self.out, self.current, self.dated = tree, held, out, current, dated
        self.current_layouts = current_layouts
        self.layouts: dict[str, Layout] = {}  # the new site's files rendered in keyed parts
        # Paths as text, not pathlib: a build of 100,000 files joins and parses each several times.
        self.tree_text, self.out_text = os.fspath(tree), os.fspath(out)
        self.files: dict[str, Written | None] = {}  # None: waiting to be rendered
        self.waiting: list[Page] = []
        self.rendered = 0
        self.differs = False  # from the current site: a page that is new, changed, or edited there since
        self.folders: set[str] = set()

    def add(self, page: Page) -> None:
        """Keep the page's file from the current site when its key says it has not changed; else render it,
        with the other pages waiting (a batch at a time, in as many processes as there are processors)."""
        path = page.path
        if not _safe(path):
            raise BuildError(f"a rendered file would land outside the output folder: {path!r}")
        if path in self.files:  # two pages claiming one path: one would silently replace the other
            raise BuildError(f"two pages would both be {shown_path(path)}")
        try:
            kept = self._kept(page)
        except OSError:
            with named_as(f"{self.out_text}/{path}"):  # named once it failed: the 100,000 that do not pay for it
                raise
        if kept is not None:
            self.files[path] = kept
            if path in self.current_layouts:  # the same bytes as the current site's file, laid out alike
                self.layouts[path] = self.current_layouts[path]
            return
        self.files[path] = None  # its place in the manifest, filled once it is rendered
        self.waiting.append(page)
        if len(self.waiting) >= RENDER_BATCH:
            self.render_waiting()

    def render_waiting(self) -> None:
        alone = [page for page in self.waiting if page.alone]
        shared = [page for page in self.waiting if not page.alone]
        self.waiting = []
        results = _in_processes(self._render, alone, processes=1) + _in_processes(self._render, shared)
        for page, (file, differs, layout) in zip(alone + shared, results, strict=True):
            self.files[page.path] = file
            if layout is not None:
                self.layouts[page.path] = layout
            self.differs |= differs
            self.rendered += 1

    def _kept(self, page: Page) -> Written | None:
        """The page's file as the new site keeps it from the current one, when its key has not changed."""
        path = page.path
        target, current = f"{self.tree_text}/{path}", f"{self.out_text}/{path}"
        before = self.current.get(path)
        if page.key is None or before is None or before.key != page.key or not _describes(before, current):
            return None
        held = self._held(path, before.sha256, target)
        if held is None:
            self._link(current, target)
            return _written(page.key, before.sha256, target, before.indexed)
        # The tree holds the file already, as its manifest describes it (kept with the same key, as most are).
        if held.key == page.key:
            return held
        return Written(key=page.key, sha256=held.sha256, size=held.size, mtime_ns=held.mtime_ns, indexed=held.indexed)

    def _render(self, page: Page) -> tuple[Written, bool, Layout | None]:
        """Render and write the page; its file, whether it differs from the current site's, and its layout when it
        is rendered in keyed parts."""
        path = page.path
        target, current = f"{self.tree_text}/{path}", f"{self.out_text}/{path}"
        layout: Layout = []
        with named_as(current):
            rendered = page.render()
            if isinstance(rendered, str | bytes):
                content = rendered.encode("utf-8") if isinstance(rendered, str) else rendered
                sha, indexed = hashlib.sha256(content).hexdigest(), INDEXED_MARK in content
                current_is_same = self._current_is(path, sha)
                if self._held(path, sha, target) is None:
                    if current_is_same:
                        self._link(current, target)
                    else:
                        self._write(target, [content])
            else:  # written as it is rendered, a part at a time: a download of 100,000 records is never held whole
                sha, indexed = self._write(target, self._pieces(path, rendered, layout))
                current_is_same = self._current_is(path, sha)
            keyed = any(key is not None for key, _, _ in layout)
            return _written(page.key, sha, target, indexed), not current_is_same, layout if keyed else None

    def _pieces(self, path: str, rendered: Iterable[str | Part], layout: Layout) -> Iterator[bytes]:
        """The bytes of a file rendered in pieces, laid out into `layout` as they come: a keyed part the current
        site's file holds (still as built: its size, time and the part's own bytes) is read from it, any other piece
        is rendered. A part's bytes are checked, not only the file's size and time: an edit by hand that keeps both
        (an older copy of the file put back) would otherwise be carried into every build after it."""
        current, before = f"{self.out_text}/{path}", self.current.get(path)
        held: dict[str, tuple[int, int, str]] = {}  # key -> (offset, length, digest) in the current site's file
        if path in self.current_layouts and before is not None and _describes(before, current):
            offset = 0
            for key, length, digest in self.current_layouts[path]:
                if key is not None and digest is not None:
                    held.setdefault(key, (offset, length, digest))
                offset += length
            if offset != before.size:  # not the layout of this file: nothing is read from it
                held = {}
        source = None
        try:
            for piece in rendered:
                if not isinstance(piece, Part):
                    data = piece.encode("utf-8")
                    layout.append((None, len(data), None))
                    yield data
                    continue
                data = None
                if piece.key in held:
                    offset, length, digest = held[piece.key]
                    source = source if source is not None else os.open(current, os.O_RDONLY)
                    data = os.pread(source, length, offset)
                    if _part_digest(data) != digest:  # changed since it was written: rendered again
                        data = None
                if data is None:
                    data = piece.render().encode("utf-8")
                layout.append((piece.key, len(data), _part_digest(data)))
                yield data
        finally:
            if source is not None:
                os.close(source)

    def _current_is(self, path: str, sha: str) -> bool:
        """Whether the current site's file at `path` holds these bytes (and is still the one it built)."""
        before = self.current.get(path)
        return before is not None and before.sha256 == sha and _describes(before, f"{self.out_text}/{path}")

    def _write(self, target: str, parts: Iterable[bytes]) -> tuple[str, bool]:
        """Write the file from its parts; its SHA-256, and whether site search indexes it."""
        self._folder(os.path.dirname(target))
        self._unshare(target)
        digest, indexed, tail = hashlib.sha256(), False, b""
        with open(target, "wb") as file:
            for part in parts:
                digest.update(part)
                file.write(part)
                # The mark may span two parts: it is looked for across each boundary too.
                indexed = indexed or INDEXED_MARK in part or INDEXED_MARK in tail + part[:len(INDEXED_MARK)]
                tail = (tail + part)[-len(INDEXED_MARK):] if len(part) < len(INDEXED_MARK) else part[-len(INDEXED_MARK):]
        if self.dated is not None:
            os.utime(target, ns=(self.dated, self.dated))
        return digest.hexdigest(), indexed

    def remove_the_rest(self) -> None:
        """Remove what the tree held that the new site has not, and the folders that leaves empty."""
        emptied = set()
        for path in self.held.keys() - self.files.keys():
            (self.tree / path).unlink(missing_ok=True)
            emptied.update((self.tree / path).parents)
        for folder in sorted(emptied, key=lambda folder: len(folder.parts), reverse=True):
            if self.tree in folder.parents:
                try:
                    folder.rmdir()
                except OSError:  # not empty: it still holds pages of the new site
                    pass

    def _held(self, path: str, sha: str, target: str) -> Written | None:
        """What the tree holds at `path` when it holds these bytes, as its manifest describes them."""
        held = self.held.get(path)
        return held if held is not None and held.sha256 == sha and _describes(held, target) else None

    def _link(self, source: str, target: str) -> None:
        self._folder(os.path.dirname(target))
        self._unshare(target)
        os.link(source, target)

    def _unshare(self, target: str) -> None:
        # A spare's file may be a link to the current site's: it is removed, never written through. A tree
        # made this build holds nothing yet (a cold build writes 100,000 files: no call is spared).
        if self.held:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)

    def _folder(self, folder: str) -> None:
        if folder not in self.folders:
            os.makedirs(folder, exist_ok=True)
            self.folders.add(folder)


# Pages are rendered a batch at a time, the batch shared out among the processors (see _in_processes).
RENDER_BATCH = 5000
SHARED_FROM = 32  # fewer pages than this are rendered where they are: a process costs more than they do
# Rendering a template leaves reference cycles (Jinja's macros and contexts refer to each other), a list
# page's rows among what they hold, and a build runs with the automatic cycle collector paused (see
# `cycle_collection_paused`): left alone, they held 600 MB by the end of a 100,000-record build. They are
# freed every COLLECT_EVERY pages, by a collection of only the objects made since the batch began.
COLLECT_EVERY = 100
PR_SET_PDEATHSIG = 1  # Linux prctl(2): the signal a process gets when its parent dies


def render_processes() -> int:
    """How many processes render pages: one per processor this process may use (forked on Linux only)."""
    return len(os.sched_getaffinity(0)) if sys.platform == "linux" else 1


def _in_processes(render: Callable[[Page], T], pages: list[Page], processes: int | None = None) -> list[T]:
    """`render(page)` for each page, in order, the pages shared out among `render_processes()` processes (or
    `processes`: 1 renders them all in this one).

    The other processes are forked, so they hold the build's data as it is, and write their pages'
    files themselves; each sends back what `render` returned, pickled, through a pipe. Each process takes
    the next chunk of pages as it finishes one (`_Chunks`). A page's bytes do not depend on the process
    that renders it. An error in any process is raised here (the others are stopped); a process that
    dies sends nothing, which is an error too; and a process whose parent dies (kill -9) is killed with
    it, so nothing writes into the folder once its build is gone."""
    processes = min(processes or render_processes(), len(pages) // SHARED_FROM) or 1
    # What exists now is left out of the collections while rendering (gc.freeze): they walk only what
    # rendering makes, and a forked process's walk copies none of the memory it shares with this one.
    gc.collect(0)
    gc.freeze()
    _return_freed_memory()
    chunks = _Chunks(len(pages))
    children: list[tuple[int, int]] = []  # each other process and its pipe
    try:
        for _ in range(1, processes):
            try:
                children.append(_forked(render, pages, chunks))
            except OSError:  # no process to be had (memory, a limit on processes): this one renders the rest
                break
        rendered = _each_rendered(render, pages, chunks)
        for child in children:
            rendered += _received(child)
    finally:
        chunks.close()
        for pid, pipe in children:
            _stopped(pid, pipe)
    ordered: list[T] = [None] * len(pages)  # type: ignore[list-item]
    for number, result in rendered:
        ordered[number] = result
    return ordered


class _Chunks:
    """The chunks of pages still to render, shared with the processes forked after it is made: each
    process takes the next chunk as it finishes one. Pages differ in cost (a batch page of 60,000 rows, a
    record's page) and a forked process pays for copying the memory it touches, so shares fixed in
    advance kept one process waiting for the other (3.1 s in a 100,000-record build; 2.2 s taken so).

    The chunks are numbers in a pipe, written at once and the pipe's writing end closed: a read of a few
    bytes takes one whole, whichever process reads; a process killed while taking one holds up no other;
    and once every chunk is taken, a read finds the end of the pipe at once."""

    def __init__(self, pages: int):
        self.pages = pages
        self.size = max(CHUNK, -(-pages // MAX_CHUNKS))
        self.reading, writing = os.pipe()
        try:  # no more than PIPE_BUF bytes: written whole, without waiting for a reader
            os.write(writing, b"".join(start.to_bytes(4, "little") for start in range(0, pages, self.size)))
        finally:
            os.close(writing)

    def take(self) -> range:
        """The numbers of the pages of the next chunk; none once every chunk is taken."""
        token = os.read(self.reading, 4)
        start = int.from_bytes(token, "little") if token else self.pages
        return range(start, min(start + self.size, self.pages))

    def close(self) -> None:
        os.close(self.reading)


CHUNK = 16  # pages taken at a time, at least
MAX_CHUNKS = 1024  # 4 bytes each: within the 4,096 bytes a pipe takes in one write (PIPE_BUF)


def _each_rendered(render: Callable[[Page], T], pages: list[Page], chunks: _Chunks) -> list[tuple[int, T]]:
    """(number, `render(page)`) for each page of each chunk this process takes, the reference cycles
    rendering leaves freed as it goes."""
    results = []
    while chunk := chunks.take():
        for number in chunk:
            results.append((number, render(pages[number])))
            if len(results) % COLLECT_EVERY == 0:
                gc.collect(0)
    return results


def _forked(render: Callable[[Page], T], pages: list[Page], chunks: _Chunks) -> tuple[int, int]:
    """A process rendering the chunks of `pages` it takes; its pid and the pipe its results come through."""
    libc = _libc()  # found before the fork: finding it may run a program
    reading, writing = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(reading)
        os.close(writing)
        raise
    if pid:
        os.close(writing)
        return pid, reading
    try:  # the child: render, send, and leave without running anything of the parent's (no atexit, no finally)
        os.close(reading)
        if libc is not None:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)
        _close_inherited(keep=(writing, chunks.reading))
        try:
            payload = pickle.dumps(("done", _each_rendered(render, pages, chunks)))
        except BaseException as error:  # sent to the parent, which raises it
            payload = _pickled_error(error)
        with os.fdopen(writing, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(0)


def _close_inherited(keep: tuple[int, ...]) -> None:
    """Close every file this process was forked holding but standard input, output and error and `keep`: among
    them the review's lock and the lock on the site's folder, which a renderer must not hold. (It dies with the
    build, but a moment after: a build started at once after a kill -9 found the review locked.)"""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)


def _pickled_error(error: BaseException) -> bytes:
    try:
        return pickle.dumps(("failed", error))
    except Exception:  # an error that cannot be pickled is sent as what it says
        return pickle.dumps(("failed", BuildError(f"rendering failed: {error!r}")))


def _received(child: tuple[int, int]) -> list:
    pid, pipe = child
    with os.fdopen(os.dup(pipe), "rb") as stream:
        payload = stream.read()
    try:
        outcome, value = pickle.loads(payload)
    except Exception:
        raise BuildError(f"a process rendering pages (pid {pid}) ended without sending its pages "
                         "(killed, or out of memory?)") from None
    if outcome == "failed":
        raise value
    return value


def _stopped(pid: int, pipe: int) -> None:
    """The child gone (killed if it is still rendering: the build failed elsewhere) and its pipe closed."""
    os.close(pipe)
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG) == (0, 0):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _safe(path: str) -> bool:
    """Whether a page's path stays inside the site and is not one of the writer's own files."""
    return (path != "" and not path.startswith("/") and ".." not in path.split("/")
            and posixpath.normpath(path) not in (".", SITE_MARKER, MANIFEST))


def _part_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _describes(written: Written, path: str | Path) -> bool:
    """Whether the file at `path` is still the one `written` describes (not replaced or edited since)."""
    try:
        status = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return status.st_size == written.size and status.st_mtime_ns == written.mtime_ns


def _written(key: str | None, sha: str, target: str, indexed: bool) -> Written:
    status = os.stat(target, follow_symlinks=False)
    return Written(key=key, sha256=sha, size=status.st_size, mtime_ns=status.st_mtime_ns, indexed=indexed)


def _manifest(folder: Path) -> Manifest:
    """What a whole built folder holds, as its manifest says; nothing for any other folder."""
    if (folder / SITE_MARKER).is_file():
        try:  # read only when a regular file: the site folder is anyone's to put a pipe or a device in
            return Manifest.model_validate_json(read_file(folder / MANIFEST))
        except (OSError, ValidationError):  # built by an earlier sitegen, or damaged: nothing is reused from it
            pass
    return Manifest(files={})


def site_is_intact(out: Path, manifest: Manifest) -> bool:
    """Whether the site at `out` holds exactly the files its manifest describes, none edited, added or
    removed since it was built, and no link to a folder elsewhere in place of one of its own."""
    out_text = os.fspath(out.absolute())
    return _files_within(out, manifest) == len(manifest.files) + 2 and all(  # the manifest and the marker besides
        _describes(written, f"{out_text}/{path}") for path, written in manifest.files.items())


def _files_within(folder: Path, manifest: Manifest) -> int | None:
    """How many files a built folder holds; None when one is a file its manifest does not list (but the
    manifest and the marker), or when a link to a folder stands in place of one of its own."""
    folder_text = os.fspath(folder.absolute())
    expected = manifest.files.keys() | {MANIFEST, SITE_MARKER}
    found = 0
    for within, folders, files in os.walk(folder_text):  # links to folders are listed as folders, not followed
        if any(os.path.islink(os.path.join(within, name)) for name in folders):
            return None
        relative = os.path.relpath(within, folder_text)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        # A file it does not list, or a folder where it lists a file (which writing the file would then meet).
        if any(prefix + name not in expected for name in files) or any(prefix + name in expected for name in folders):
            return None
        found += len(files)
    return found


def site_manifest(out: Path) -> Manifest:
    """The manifest of the whole site at `out` (empty when there is none)."""
    return _manifest(out.absolute())


STAMP_START = b'{"format":1,"stamp":'  # how the writer begins a manifest: its stamp before its files
STAMP_READ = 1 << 16


def site_stamp(out: Path) -> Stamp | None:
    """The stamp of the whole site at `out`, read alone from the start of its manifest, where the writer puts it:
    the manifest of 100,000 files is 25 MB, a third of a second to read whole. From a manifest written otherwise,
    or whose stamp is longer than STAMP_READ bytes, the whole manifest's. None when it has none."""
    out = out.absolute()
    if not (out / SITE_MARKER).is_file():
        return None
    try:
        with open(out / MANIFEST, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK)) as file:
            start = file.read(STAMP_READ) if stat.S_ISREG(os.fstat(file.fileno()).st_mode) else b""
        if start.startswith(STAMP_START):
            stamp, _ = json.JSONDecoder().raw_decode(start[len(STAMP_START):].decode("utf-8", "replace"))
            return Stamp.model_validate(stamp) if stamp is not None else None
    except (OSError, ValueError):  # a ValidationError is a ValueError
        pass
    return _manifest(out).stamp


def _swap_in(staging: Path, out: Path) -> None:
    if not out.exists():
        os.rename(staging, out)
        return
    keep_folder_identity(out, staging)
    if _exchange(staging, out):  # one atomic step: readers see the old site or the new, never none
        return  # the spare now holds the old site, whole: the next build starts from it
    retired = _leftover_name(out, "old")
    os.rename(out, retired)
    try:
        os.rename(staging, out)
    except BaseException:
        os.rename(retired, out)  # put the previous site back before reporting the failure
        raise
    os.rename(retired, _leftover_name(out, "spare"))


def _exchange(first: Path, second: Path) -> bool:
    """Swap two folders in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where the
    system cannot, and the caller falls back to two renames (a kill between them is recovered)."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


def _return_freed_memory() -> None:
    """Give the system back the memory freed since the last batch (glibc's malloc_trim).

    Text longer than 512 bytes (a page, a list's row) is allocated by the C library, which keeps what is
    freed for later rather than returning it; a forked renderer starts as large as its parent is, so
    what the parent keeps counts in every renderer too (40 MB at 100,000 records)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):  # glibc's; other C libraries return memory themselves
        libc.malloc_trim(0)


def _recover(out: Path) -> None:
    """Put a site back at `out` if a killed write_site left none, then remove its leftover folders.

    With `out` missing, the kill came between the two renames: the newest folder holding the
    marker (the one finished last: the new site) goes in. Only folders named as write_site names
    them are touched (`.building-` ones are an earlier sitegen's staging folders); one whole spare
    is kept for the next build to start from. Called under `_writing_beside`, so no other build into
    the same folder is filling a folder this could take for a leftover.
    """
    building, retired, spares = _leftovers(out, "building"), _leftovers(out, "old"), _leftovers(out, "spare")
    whole = sorted((folder for folder in building + retired + spares if (folder / SITE_MARKER).is_file()),
                   key=_age, reverse=True)
    survivor = None
    if not os.path.lexists(out) and whole:
        survivor = whole[0]
        os.rename(survivor, out)
    kept = next((folder for folder in spares if folder != survivor and (folder / SITE_MARKER).is_file()), None)
    for folder in building + retired + spares:
        if folder not in (survivor, kept):
            _discard(folder)


def _discard(folder: Path) -> None:
    # The marker goes first, so a folder half removed by a killed process never passes for a whole site.
    (folder / SITE_MARKER).unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)


def _leftover_name(out: Path, kind: str) -> Path:
    return out.parent / f".{out.name}.{kind}-{secrets.token_hex(8)}"


def _leftovers(out: Path, kind: str) -> list[Path]:
    """The real folders next to `out` named as `_leftover_name` names them, newest first."""
    name = re.compile(rf"\.{re.escape(out.name)}\.{kind}-[0-9a-f]{{16}}")
    folders = [path for path in out.parent.iterdir()
               if name.fullmatch(path.name) and path.is_dir() and not path.is_symlink()]
    return sorted(folders, key=_age, reverse=True)


def _age(folder: Path) -> tuple[int, str]:
    # A folder's own time changes when its marker is written, last: the newest is the last one finished.
    return folder.stat().st_mtime_ns, folder.name
