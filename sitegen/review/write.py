"""Deterministic serialisation and atomic writes for every file sitegen produces.

Same content in, byte-identical file out: keys keep the model's order (or are
sorted for hashed JSON), text is UTF-8 with a final newline. A file a reviewer
may have edited is written again in its own form instead (its line ends,
byte-order mark, final newline, JSON key order and indentation, CSV quoting:
`kept_form`, `json_kept_form`, `with_rows_added`), so that Git shows only
what changed. A write goes to a
temporary file in the same directory, is fsynced, then renamed over the target,
so a reader never sees half a file and a crash leaves the old one. The temporary
file is named `.<name>.sitegen-tmp-<random>`, so what a killed process leaves
behind is recognisably sitegen's and `recover` can remove it.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import fcntl
import json
import os
import re
import secrets
import signal
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitegen.errors import SitegenError
from sitegen.review.parsing import declared_separator

_TEMPORARY_MARK = ".sitegen-tmp-"

# Every file (and site folder) this process has put in place, in order: a command stopped by Ctrl-C says what it
# had written, or that it wrote nothing (each write is whole: a file, a committed transaction, a site).
written: list[Path] = []


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) held off until the block ends, then delivered as usual: for steps that must not stop half
    done (a committed transaction's renames). Only the main thread can set a signal's handler: elsewhere none is
    held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)
_TEMPORARY = re.compile(rf"\..+{re.escape(_TEMPORARY_MARK)}[0-9a-f]{{16}}", re.DOTALL)


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: the form that is hashed and stored one per line."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def pretty_json(value: Any) -> str:
    """Indented JSON (one list item per line, so Git diffs stay small)."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def jsonl(rows: Iterable[Any]) -> str:
    return "".join(jsonl_lines(rows))


def jsonl_lines(rows: Iterable[Any]) -> Iterator[str]:
    """The lines of `jsonl(rows)`, one at a time: a file too large to hold whole is written from them (`Lines`)."""
    return (canonical_json(row) + "\n" for row in rows)


@dataclass(frozen=True)
class Lines:
    """A file's text given as its lines, made only as it is written (`atomic_write`, a transaction's commit) and
    written in blocks: records.jsonl at review scale, whose text held whole (as a string, then encoded) took
    several times the file's size at the moment a command's memory peaked. Each block is encoded before a byte of
    it is written, so a line UTF-8 cannot encode fails the write as a whole text would."""

    lines: Iterable[str]


BLOCK = 1 << 20  # characters encoded and written at a time from `Lines`


def _blocks(data: bytes | str | Lines) -> Iterator[bytes]:
    """`data` as the bytes to write: whole, or from `Lines` in blocks of about BLOCK characters."""
    if not isinstance(data, Lines):
        yield data.encode("utf-8") if isinstance(data, str) else data
        return
    block: list[str] = []
    size = 0
    for line in data.lines:
        block.append(line)
        size += len(line)
        if size >= BLOCK:
            yield "".join(block).encode("utf-8")
            block, size = [], 0
    if block:
        yield "".join(block).encode("utf-8")


# ----------------------------------------------------------------- a reviewer's file written again in its form
#
# Reviewers edit the review's files in editors and spreadsheets, and read each change as a Git diff. A command that
# writes such a file again (adds rows to a decision file, raises protocol.md's version, moves state.json's ledger
# head) keeps what the file's text is beside what it says: written with other line ends, without its byte-order
# mark or with its final newline added or dropped, Git would show every line (or the last) as changed and hide the
# change made.

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class TextForm:
    """How a text file is written beside what it says: its lines' end (as its first line ends: CRLF, LF or an old
    Mac's CR), whether it begins with a byte-order mark, and whether its last line ends too. The default is sitegen's
    own form, a new file's."""

    line_end: str = "\n"
    bom: bool = False
    final_newline: bool = True


def text_form(text: str | None) -> TextForm:
    """The form of a file's text (decoded with its byte-order mark kept); sitegen's own when there is none."""
    if not text:
        return TextForm()
    found = _LINE_BREAK.search(text)
    bom = text.startswith("\ufeff")
    return TextForm(found.group() if found else "\n", bom,
                    text.endswith(("\n", "\r")) or text == "\ufeff")


def in_form(text: str, form: TextForm) -> str:
    """`text` as sitegen writes it (each line ending "\n", the last one too; no byte-order mark) written in `form`.
    Every "\n" of `text` must be a line break (JSON escapes those in its strings)."""
    if not form.final_newline:
        text = text.removesuffix("\n")
    if form.line_end != "\n":
        text = text.replace("\n", form.line_end)
    return "\ufeff" + text if form.bom else text


def on_disk(path: Path) -> str | None:
    """The text of the review file `path` that a command is about to write again, byte-order mark and line ends
    kept; None when there is none (or it is no UTF-8 text, which the review's reader refused already)."""
    try:
        return path.read_bytes().decode("utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def kept_form(path: Path, text: str) -> str:
    """`text`, as sitegen writes it, in the form of the file at `path` it replaces (`text_form`)."""
    return in_form(text, text_form(on_disk(path)))


def json_kept_form(path: Path, value: Any) -> str:
    """`value` as `pretty_json` writes it, in the form of the JSON file at `path` it replaces: its keys in the order
    the file has them (keys new to it after them), indented as the file is (or on one line, as it is), with its line
    ends, byte-order mark and final newline. A reviewer who wrote state.json's keys in another order, or indented a
    saved search with tabs, sees in the diff only the values a command changed."""
    previous = on_disk(path)
    if previous is None:
        return pretty_json(value)
    body = previous.removeprefix("\ufeff").strip()
    try:
        written = json.loads(body)
    except ValueError:
        written = None
    one_line = body and not _LINE_BREAK.search(body)  # all on one line: it stays on one line
    indent = None if one_line else _indent(previous)
    return in_form(json.dumps(_ordered_as(value, written), indent=indent, ensure_ascii=False) + "\n",
                   text_form(previous))


def _ordered_as(value: Any, written: Any) -> Any:
    """`value` with the keys of each object in the order `written` (what the file held) has them, new keys after;
    a list's items each ordered as the item written in its place (or, past them, as the last one written)."""
    if isinstance(value, dict) and isinstance(written, dict):
        keys = [key for key in written if key in value] + [key for key in value if key not in written]
        return {key: _ordered_as(value[key], written.get(key)) for key in keys}
    if isinstance(value, list) and isinstance(written, list) and written:
        return [_ordered_as(item, written[min(index, len(written) - 1)]) for index, item in enumerate(value)]
    return value


_INDENTED = re.compile(r"(?:\r\n|\r|\n)([ \t]+)\S")


def _indent(text: str) -> str | int:
    """The indentation of a JSON file's first indented line (its first key's), taken as one level; 2 spaces
    (pretty_json's) when no line is indented."""
    found = _INDENTED.search(text)
    return found.group(1) if found else 2


def appended_lines(text: str, lines: list[str]) -> str:
    """A file's `text` (decoded with its byte-order mark kept; "" when there is none) with `lines` added after it,
    each ending as the file's lines do, the last one ending only if the file's last line did: the text already
    written stays a prefix of the file, to the byte."""
    if not lines:
        return text
    form = text_form(text)
    added = form.line_end.join(lines)
    if text and not form.final_newline:
        return text + form.line_end + added
    return text + added + form.line_end


def with_rows_added(text: str, columns: list[str], rows: list[dict[str, str]], rel: str,
                    droppable: frozenset[str] = frozenset()) -> str:
    """A review's CSV file (`text`, "" when there is none yet: then it starts with `columns` as its header) with
    `rows` added at its end, each cell under its column as the file's own header names them, in whatever order
    (a reviewer may reorder them, or leave optional ones out), quoted as the file quotes its cells (`_csv_quoting`);
    its text is kept as it is, and the rows added end as its lines do (`appended_lines`). SitegenError, naming the
    file, when a row has a value for a column the file lacks (written in another's place, a reason became a note,
    or a pair of records was turned round), unless that column is `droppable` (a note sitegen writes for
    information only)."""
    if not text.strip("\ufeff \t\r\n"):  # no file, or nothing in it but a byte-order mark (which stays) or spaces
        text, header = ("\ufeff" if text.startswith("\ufeff") else ""), list(columns)
        rows = [dict(zip(columns, columns, strict=True)), *rows]
        quote_all, quoted_empty = False, False
    else:
        first_lines = _LINE_BREAK.split(text.lstrip("\ufeff"), maxsplit=2)
        header_line = first_lines[1] if declared_separator(first_lines[0]) == "," and len(first_lines) > 1 \
            else first_lines[0]  # the header follows Excel's "sep=," (see parse_csv)
        header = [name.strip() for name in next(csv.reader([header_line]), [])]
        quote_all, quoted_empty = _csv_quoting(header_line, text)
    for row in rows:
        if lacking := [column for column, value in row.items()
                       if value and column not in header and column not in droppable]:
            raise SitegenError(f"{rel}:1: the header has no column {lacking[0]!r}, which the rows to add need; add "
                               f"it to the header (columns: {','.join(columns)}); nothing was written")
    return appended_lines(text, [",".join(_csv_cell(row.get(name, ""), quote_all, quoted_empty) for name in header)
                                 for row in rows])


_QUOTED_EMPTY = re.compile(r'(?:^|,)""(?:,|$)', re.MULTILINE)


def _csv_quoting(header_line: str, text: str) -> tuple[bool, bool]:
    """How a CSV file quotes its cells: every one (as R's write.csv and some spreadsheets' "quote all text cells"
    save it), told by its header's names all being quoted; and whether it writes an empty cell as "" or as nothing.
    A file quoting only what must be (Excel's, Google Sheets') gets its rows so."""
    cells = header_line.split(",")
    quote_all = all(len(cell.strip()) >= 2 and cell.strip()[0] == cell.strip()[-1] == '"' for cell in cells)
    return quote_all, quote_all and _QUOTED_EMPTY.search(text.lstrip("\ufeff")) is not None


def _csv_cell(value: str, quote_all: bool, quoted_empty: bool) -> str:
    """One cell of a row added to a CSV file: quoted when it must be (a comma, quote or line break in it, whatever
    the file's line ends: Python's csv module leaves a "\n" unquoted in a file whose lines end "\r"), or when the
    file quotes every cell."""
    if value == "":
        return '""' if quoted_empty else ""
    if quote_all or any(character in value for character in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def atomic_write(path: Path, data: bytes | str | Lines, *, mode_from: Path | None = None, sweep: bool = False,
                 step: bool = False) -> None:
    """Replace `path` with `data` in one step (noted in `written`, unless it is only a `step` of a larger write: a
    transaction's staged file or journal).

    The file gets the permission bits of `mode_from` (by default `path` itself) when that
    exists, so an update never changes a file's mode; otherwise those a plain open() gives
    (0o666 less the umask). With `sweep` (a file a user named, outside any review: no `recover` looks
    there), what a killed write of the same file left beside it is removed first (`remove_abandoned`).
    """
    if sweep:
        remove_abandoned(path)
    with named_as(path):
        tmp = _staged(path, data, mode_from or path)
        try:
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    if not step:
        written.append(path)
    fsync_dir(path.parent)


@contextlib.contextmanager
def named_as(path: Path | str) -> Iterator[None]:
    """An error writing a file (or folder) sitegen stages beside `path` names `path`, the one asked for: the
    staged one's name (".x.ris.sitegen-tmp-…", a transaction's "ledger.jsonl.sitegen-new") means nothing to the
    user, nor does an error naming none."""
    try:
        yield
    except OSError as error:
        name = Path(os.fspath(error.filename)).name if error.filename is not None else None
        staged = name is None or name.startswith((".", Path(path).name + "."))
        if staged and Path(os.fspath(error.filename or path)).parent == Path(path).parent:
            raise OSError(error.errno, error.strerror, os.fspath(path)) from None
        raise


def atomic_write_all(files: dict[Path, bytes | str]) -> None:
    """Replace each file with its data, all of them or none when a write fails (a full disk): every file
    is written whole beside its target before any is renamed over it. Outside a review, where no journal
    is kept (what a killed write of these files left beside them is removed first); a rename failing part
    way (rare: it writes no data) can still leave some replaced."""
    for path in files:
        remove_abandoned(path)
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in files.items():
            with named_as(path):
                staged.append((_staged(path, data, path), path))
        for tmp, path in staged:
            with named_as(path):
                os.replace(tmp, path)
            written.append(path)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for folder in {path.parent for path in files}:
        fsync_dir(folder)


def probe_writable(folder: Path) -> None:
    """Create and remove an empty file in `folder` as `_staged` creates one (its name is a temporary file's, which
    `recover` removes should the process be killed between the two), raising the OSError a write there would meet:
    a read-only mount, a folder's permissions or immutable flag, as they are for this process."""
    probe = folder / f".writable{_TEMPORARY_MARK}{secrets.token_hex(8)}"
    os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    os.unlink(probe)


def _staged(path: Path, data: bytes | str | Lines, mode_from: Path) -> Path:
    """`data` written in full (`Lines` in blocks) and fsynced to a new temporary file beside `path`, with
    `mode_from`'s mode.
    Only a file is ever replaced: renamed over a device (/dev/full, as root), a pipe or a socket, the new file
    would take its place."""
    try:
        kind = os.lstat(path).st_mode
    except FileNotFoundError:
        kind = None
    if kind is not None and not (stat.S_ISREG(kind) or stat.S_ISLNK(kind)):
        raise OSError(errno.EINVAL, "not a file (a folder, a device, a pipe or a socket), which sitegen never "
                                    "replaces; give a file name", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}{_TEMPORARY_MARK}{secrets.token_hex(8)}"
    # O_EXCL never writes through something already there; 0o666 lets the kernel apply the umask.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with contextlib.suppress(OSError):  # some network file systems lock nothing: the file's age is then the guard
            fcntl.flock(fd, fcntl.LOCK_EX)  # while it is written: `remove_abandoned` leaves a file in use alone
        with os.fdopen(fd, "wb") as handle:
            _copy_mode(mode_from, handle.fileno())
            for block in _blocks(data):
                handle.write(block)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # write() and fsync() name no file: say which
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    return tmp


ABANDONED_AFTER = 60  # seconds since a temporary file was last written: no write in progress pauses that long


def remove_abandoned(path: Path) -> None:
    """Remove the temporary files a killed write of `path` left beside it: sitegen's (named for `path`), not
    locked by a write in progress, and not written to for ABANDONED_AFTER seconds."""
    try:
        entries = [entry for entry in os.scandir(path.parent) if entry.name.startswith(f".{path.name}{_TEMPORARY_MARK}")
                   and is_temporary(entry.name) and entry.is_file(follow_symlinks=False)]
    except OSError:
        return  # no folder (yet): nothing was left there
    for entry in entries:
        try:  # never waits: a pipe named so is no file of sitegen's, and opening one would block
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if time.time() - os.fstat(fd).st_mtime > ABANDONED_AFTER:
                os.unlink(entry.path)
        except OSError:
            pass  # in use by a write in progress, or already gone
        finally:
            os.close(fd)


def is_temporary(name: str) -> bool:
    """Whether a file name is one of atomic_write's temporary files (only a killed process leaves one)."""
    return _TEMPORARY.fullmatch(name) is not None


def _copy_mode(source: Path, fd: int) -> None:
    try:
        mode = os.stat(source).st_mode
    except FileNotFoundError:
        return  # a new file keeps the mode it was created with
    os.fchmod(fd, mode & 0o777)  # read/write/execute bits only: a data file is never set-uid


def keep_folder_identity(existing: Path, replacement: Path) -> None:
    """Give `replacement`, about to be renamed over the folder `existing`, that folder's permission
    bits (setgid included) and, where allowed, its group: replacing a folder must not widen or
    narrow who may read it. A new folder keeps what mkdir gave it (0o777 less the umask)."""
    try:
        status = os.stat(existing)
    except FileNotFoundError:
        return
    os.chmod(replacement, stat.S_IMODE(status.st_mode) & 0o3777)  # never set-uid
    try:
        os.chown(replacement, -1, status.st_gid)
    except PermissionError:
        pass  # not a member of that group: the folder keeps the caller's


def fsync_dir(directory: Path) -> None:
    # Make the rename itself durable; not every platform can open a directory.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
