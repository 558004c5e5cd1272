"""Values kept between commands, named by everything they are made from: parses of files, rankings.

Reading records.jsonl is most of what `sitegen check` does at review scale (100,000 records: about four
seconds of validation, two thirds of the command). What reading it gives (the records, their lines and
digests, the file's problems) depends on the file's bytes and on sitegen's code, and on nothing else. So it
is kept, pickled, in the user's cache folder, named by the SHA-256 of both (`kept_parse`); the next command
that reads the same bytes with the same code unpickles it (about a third of the time) instead.

Each reviewer's decision file (screening/<stage>/<reviewer>.csv) is kept so too, named by its bytes and its path
in the review (which its problems name): 211,000 decisions at 100,000 records, read, validated and placed in about
a second, unpickled as plain values in about a quarter of it (`review.folder.DecisionsRead`).

The evidence files (evidence/<study>.yaml) are kept so too, all in one value named by each file's path and bytes:
2,000 YAML files at 100,000 records, read and parsed in about 0.4 s, unpickled in a sixth of it. What is kept is
the parse (data and positions) and the problems of reading it; the models are validated from it on each command,
as read afresh (`review.folder.read_evidence`). Within that value each file's parse is named by its own path and bytes,
so after one file changed the others' parses are taken from the value used last, not read again (`kept_parses`).

ledger.jsonl is kept so too (800,000 record ids in its payloads at 100,000 records, validated in about 0.3 s,
unpickled in a fifth of it); the strings validation gives of its own (a Literal's) are pickled as references to
them, so that a kept ledger holds the very objects a fresh read does (`review.folder.LedgerRead`).

A value derived from the review is kept the same way (`kept_value`) where its maker names everything it
reads by a digest, and the libraries whose code it runs: a screening batch's relevance ranking
(`screening.digest.Relevance`), named by the protocol's terms, the week, the cap and the lines of the records
ranked and of the records included in the weeks before, with numpy's and rapidfuzz's versions; a decision
that changes none of them (a full-text one) then ranks nothing again in the next build. The records' citation keys
are kept so too (`site.downloads.citation_keys`), named by the lines of the records in the order they are keyed in.

A kept value is never stale: other inputs, or another sitegen, Python, pydantic (or named library), are
another name. It is only ever a copy of what making it would give, so anything wrong with one (unreadable,
cut short by a kill, another user's, of another kind) is passed over and the value made. Nothing is written
into a review: the cache folder is `SITEGEN_CACHE_DIR` (empty: keep nothing), else `$XDG_CACHE_HOME/sitegen`,
else `~/.cache/sitegen`, and never a folder inside the review read. A large value is written by a forked
process while the command goes on (pickling 100,000 records takes about three seconds), which the command
waits for before it exits (`wait_for_writers`).
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import os
import pickle
import platform
import re
import signal
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import BinaryIO, TypeVar

import pydantic
import pydantic_core

SITEGEN_ROOT = Path(__file__).resolve().parent.parent  # the package, its version (__init__.py) included
T = TypeVar("T")
PARSES_KEPT = 3  # of each kind of file: a few reviews (or branches of one) read in turn each keep theirs
ABANDONED_SECONDS = 600  # a temporary file this old is a killed writer's, never a live one's


@cache
def code_digest() -> str:
    """The digest of sitegen's code, Python's version and the versions of the libraries whose code makes the
    parsed values (pydantic's models and validation): what read a file."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr([platform.python_version(), pydantic.VERSION, pydantic_core.__version__]).encode())
    folder_digest(digest, SITEGEN_ROOT)
    return digest.hexdigest()


@cache
def code_is_files() -> bool:
    """Whether sitegen's code is files `code_digest` reads (not in a zip archive, say): only then is a parse
    kept, since only then does its name change with the code."""
    return (SITEGEN_ROOT / "review" / "kept.py").is_file()


def folder_digest(digest: hashlib._Hash, root: Path) -> None:
    """Add every file under `root` (its path and bytes, compiled caches aside) to `digest`."""
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(b"\0" + os.fsencode(path.relative_to(root).as_posix()) + b"\0")  # any name, as its bytes
            digest.update(path.read_bytes())


def cache_folder(environ: Mapping[str, str], review_root: Path) -> Path | None:
    """Where values are kept, or None when nothing is to be kept (SITEGEN_CACHE_DIR set empty, a folder inside
    the review, which a command that reads it never writes, or code whose digest cannot be made)."""
    given = environ.get("SITEGEN_CACHE_DIR")
    try:  # no home folder (no HOME, a user id with no account, as in a container): "~" is no folder
        xdg = Path(environ.get("XDG_CACHE_HOME", "").strip()).expanduser()
        if given is not None:
            folder = Path(given.strip()).expanduser() if given.strip() else None
        elif xdg.is_absolute():  # a relative one is to be ignored (the XDG base directory specification)
            folder = xdg / "sitegen"
        else:
            folder = Path.home() / ".cache" / "sitegen"
    except (RuntimeError, KeyError):
        return None
    # A relative folder would be one in whatever folder the command is run from (a literal "~", say): none.
    if folder is None or not folder.is_absolute() or not code_is_files():
        return None
    resolved = folder.resolve()
    if any(resolved.is_relative_to(written) for written in (review_root.resolve(), *_written)):
        return None
    return folder


_written: list[Path] = []  # folders a command is writing beside a review (a build's site): nothing is kept there


@contextlib.contextmanager
def kept_out_of(folder: Path) -> Iterator[None]:
    """Keep nothing in `folder` while the command writes it: a build's --out, which it replaces whole (kept
    values written there were swapped away with the old site, and on a first build made it refuse a folder
    "not built by sitegen")."""
    resolved = folder.resolve()
    _written.append(resolved)
    try:
        yield
    finally:
        _written.remove(resolved)


def kept_parse(kind: str, path: Path, folder: Path | None, read: Callable[[], T], of_type: type[T], limit: int, *,
               rel: str = "", kept: int = PARSES_KEPT) -> T:
    """`read()` (which reads `path`, refusing it past `limit` bytes), or the value it gave last time for the
    same bytes and code, kept in `folder`: at most `kept` values of `kind`. `rel` names the file in its review
    where its kind is not one file (a reviewer's decisions): what `read` reports names it. A value read afresh is
    kept (when the file did not change while it was read), written by a forked process: a parse is large."""
    before = _file_digest(path, limit) if folder is not None else None
    if folder is None or before is None:  # nothing kept; or not a regular file, or one `read` refuses by its size
        return read()
    inputs = f"{before}\0{rel}" if rel else before  # records.jsonl's parse named as before
    return _kept_or_made(folder, kind, _name(folder, kind, inputs, ()), read, of_type, kept, forked=True,
                         still_so=lambda: _file_digest(path, limit) == before)  # the value is that of the bytes named


def kept_parses(kind: str, files: list[tuple[str, Path]], folder: Path | None, read: Callable[[str], T],
                limit: int, *, kept: int = PARSES_KEPT) -> dict[str, T]:
    """`read(rel)` for each of `files` (its name in the review and its path; `read` refuses one past `limit` bytes),
    or the values it gave last time for the same files: kept in `folder` as one value of `kind`, named by each
    file's name and bytes and sitegen's code (a folder of many small files, each too small to be worth a kept
    value of its own). A file that is not a regular one, or one `read` refuses by its size, is read each time.

    Within the value each file's parse is named by that file's name and bytes and sitegen's code alone, so that when
    some files changed, the parses of the others are taken from the value of `kind` used last (one evidence file
    removed: the 1,999 others are not read and parsed again, 0.4 s at 100,000 records)."""
    if folder is None:
        return {rel: read(rel) for rel, _ in files}
    digests = {rel: _file_digest(path, limit) for rel, path in files}
    named = [(rel, path) for rel, path in files if digests[rel] is not None]
    inputs = hashlib.sha256("\0".join(f"{rel}\0{digests[rel]}" for rel, _ in named).encode()).hexdigest()
    entries = {rel: _entry_name(kind, rel, digests[rel]) for rel, _ in named}

    def made() -> dict[str, T]:
        earlier = _last_used(folder, kind)
        return {entries[rel]: earlier[entries[rel]] if entries[rel] in earlier else read(rel) for rel, _ in named}

    values = _kept_or_made(folder, kind, _name(folder, kind, inputs, ()), made, dict, kept, forked=True,
                           still_so=lambda: all(_file_digest(path, limit) == digests[rel] for rel, path in named))
    return {rel: values[entries[rel]] if digests[rel] is not None else read(rel) for rel, _ in files}


def _entry_name(kind: str, rel: str, digest: str | None) -> str:
    """The name of one file's parse within a value of `kind` (`kept_parses`): its name in the review, its bytes'
    digest and sitegen's code, as a value of its own would be named."""
    return hashlib.sha256(f"{code_digest()}\0{kind}\0{rel}\0{digest}".encode()).hexdigest()


def _last_used(folder: Path, kind: str) -> dict:
    """The value of `kind` (`kept_parses`: file parses by their names) used last in `folder`, or an empty one.
    Any of its parses is only taken under its own name, so a value of another review, or of other code, gives none."""
    ours = re.compile(rf"{re.escape(kind)}-[0-9a-f]{{40}}\.pickle")
    try:
        found = [path for path in folder.iterdir() if ours.fullmatch(path.name)]
    except OSError:
        return {}
    for path in sorted(found, key=_used, reverse=True)[:1]:
        value = _unpickled(path, dict, used=False)
        if value is not None:
            return value
    return {}


def kept_value(kind: str, inputs: str, folder: Path | None, make: Callable[[], T], of_type: type[T], *,
               libraries: tuple[str, ...], kept: int, forked: bool) -> T:
    """`make()`, or the value it gave last time from the same `inputs` (a digest of everything `make` reads),
    the same code and the same versions of `libraries` (modules whose code `make` runs, beside pydantic's),
    kept in `folder`: at most `kept` values of `kind`, the last used, each written by a forked process when
    `forked` (a large value)."""
    if folder is None:
        return make()
    return _kept_or_made(folder, kind, _name(folder, kind, inputs, libraries), make, of_type, kept, forked)


def _kept_or_made(folder: Path, kind: str, name: Path, make: Callable[[], T], of_type: type[T], kept: int,
                  forked: bool, still_so: Callable[[], bool] = lambda: True) -> T:
    """The value kept as `name`, or `make()`, kept when its inputs are `still_so` once it is made."""
    value = _unpickled(name, of_type)
    if value is not None:
        _tidy(folder, kind, kept)
        return value
    value = make()
    if still_so():
        _keep(folder, kind, name, value, kept, forked)
    return value


def _name(folder: Path, kind: str, inputs: str, libraries: tuple[str, ...]) -> Path:
    versions = [importlib.import_module(library).__version__ for library in libraries]  # imported: a lookup
    named = hashlib.sha256(f"{code_digest()}\0{kind}\0{inputs}\0{versions!r}".encode()).hexdigest()[:40]
    return folder / f"{kind}-{named}.pickle"


def _opened(path: Path) -> BinaryIO:
    """`path` opened to read, never through a link nor waiting on a pipe (the caller checks it is a file)."""
    return open(path, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK))


def _file_digest(path: Path, limit: int) -> str | None:
    """The SHA-256 of a regular file of at most `limit` bytes (as large a sparse file may seem), else None."""
    try:
        with _opened(path) as file:
            status = os.fstat(file.fileno())
            if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
                return None
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return None


def _ours(status: os.stat_result) -> bool:
    """Made by this user and writable by no other: what is unpickled must be no one else's to change."""
    return status.st_uid == os.geteuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _unpickled(name: Path, of_type: type[T], *, used: bool = True) -> T | None:
    """The value kept as `name`, when it is this user's, of `of_type`, and written as `name` (marked `used`: the last
    to be pruned)."""
    try:
        with _opened(name) as file:
            status = os.fstat(file.fileno())
            if not (stat.S_ISREG(status.st_mode) and _ours(status) and _ours(os.stat(name.parent))):
                return None
            named, value = pickle.load(file)
    except Exception:  # noqa: BLE001 (a kept value is a copy: whatever is wrong with it, it is made again)
        return None
    if named != name.name or type(value) is not of_type:  # another value's file, renamed or copied here
        return None
    if used:
        with contextlib.suppress(OSError):  # a read-only folder: still a value to use
            os.utime(name)  # used: the last to be pruned
    return value


def _keep(folder: Path, kind: str, name: Path, value: object, kept: int, forked: bool) -> None:
    """Write `value` to `name`, in a forked process when `forked` (waited for when this one exits) and there is
    a fork. Whatever fails is let be: nothing but the time of a later command depends on it."""
    if not (forked and hasattr(os, "fork")):
        _write(folder, kind, name, value, kept)
        return
    # Ctrl-C held off until both processes know which they are: else the writer could run the command's own
    # handling of it (its messages, its exit) as if it were the command.
    interrupts = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pid = os.fork()
    except OSError:
        pid = None
    if pid == 0:  # the writer: holds none of the command's files (a review's lock), says nothing, runs no exit code
        status = 1
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, interrupts)
            os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
            _write(folder, kind, name, value, kept)
            status = 0
        finally:
            os._exit(status)
    if pid is not None:  # before Ctrl-C may be raised: a writer not waited for would outlive the command
        _writers.append(pid)
        _tidied.add(kind)  # by the writer, after its write: later writers forked from here need not
    signal.pthread_sigmask(signal.SIG_SETMASK, interrupts)


_writers: list[int] = []  # the processes writing kept values, waited for before this one exits


@atexit.register
def wait_for_writers() -> None:
    """Wait until every kept value this process began to write is written (or its writer failed). Interrupted
    (Ctrl-C), the writers are interrupted too (each removes its temporary file) and waited for, and
    KeyboardInterrupt is raised again."""
    try:
        while _writers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(_writers[-1], 0)
            _writers.pop()
    except KeyboardInterrupt:
        for pid in _writers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGINT)
        for pid in _writers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        _writers.clear()
        raise


def _write(folder: Path, kind: str, name: Path, value: object, kept: int) -> None:
    """Write `value` whole or not at all; then prune `kind`, once in a process (a build keeps hundreds of
    rankings). Any failure (a full disk, a value that will not pickle) leaves the command as it would be."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _ours(os.stat(folder)):
            return
        descriptor, temporary = tempfile.mkstemp(prefix=f".{name.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(descriptor, "wb") as file:
                pickle.dump((name.name, value), file, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _tidy(folder, kind, kept)
    except Exception:  # noqa: BLE001 (see above: a kept value is never needed)
        return


_tidied: set[str] = set()  # the kinds of values this process has tidied


def _tidy(folder: Path, kind: str, kept: int) -> None:
    """`_prune`, once in a process for each kind (a build keeps hundreds of rankings): after writing a value,
    or on finding one kept (so that what killed writers left goes even when nothing is written)."""
    if kind not in _tidied and folder.is_dir():
        _tidied.add(kind)
        with contextlib.suppress(OSError):
            _prune(folder, kind, kept)


def _prune(folder: Path, kind: str, kept: int) -> None:
    """Keep the `kept` values of `kind` used last, and remove what killed writers left: only files named
    as sitegen names them (the folder may be one the user keeps other files in)."""
    now = time.time()
    ours, leftovers = re.compile(rf"{re.escape(kind)}-[0-9a-f]{{40}}\.pickle"), re.compile(
        rf"\.{re.escape(kind)}-[0-9a-f]{{40}}\.pickle\.[^/]+\.tmp")
    listed = list(folder.iterdir())
    for leftover in listed:
        if leftovers.fullmatch(leftover.name):
            with contextlib.suppress(OSError):
                if now - leftover.stat().st_mtime > ABANDONED_SECONDS:
                    leftover.unlink()
    last_used = sorted((path for path in listed if ours.fullmatch(path.name)), key=_used, reverse=True)
    for old in last_used[kept:]:
        with contextlib.suppress(OSError):
            old.unlink()


def _used(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
