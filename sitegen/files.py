"""Reading a file sitegen is given: a regular file, of a bounded size, never a device or a pipe.

A path on the command line, or a file in a folder sitegen built, can be anything: /dev/zero would be read
until memory ran out, and a named pipe would wait for a writer for ever (with the review locked).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

# The largest file sitegen reads from outside a review (a reference export, a screening tool's decisions, a
# draft): exports of a database search run to tens of MB; reading one takes several times its size in memory.
INPUT_LIMIT = 512 * 1_000_000
CHUNK = 1 << 20  # bytes read at a time
# How a spreadsheet's workbook begins (.xlsx, a zip archive; .xls, an OLE2 compound file): given where text is read,
# it is a workbook saved under a text file's name, or not saved as text at all.
SPREADSHEETS = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")


def read_file(path: Path, limit: int = INPUT_LIMIT) -> bytes:
    """The bytes of a file sitegen is given (on the command line, or in a folder it built). OSError (its
    strerror says why) for a device, pipe or folder, which would never end (/dev/zero) or wait for a writer
    for ever (a named pipe), and for a file larger than `limit`."""
    parts = list(read_chunks(path, limit, whole=True))
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_chunks(path: Path, limit: int = INPUT_LIMIT, *, whole: bool = False) -> Iterator[bytes]:
    """The bytes of a file sitegen is given, a megabyte at a time (or, `whole`, at once as far as the file's size
    goes), so that a reader of lines holds no copy of the whole file; OSError as `read_file` says."""
    with open(path, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK)) as file:
        status = os.fstat(file.fileno())  # of what was opened: nothing can be put in its place since
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "it is a device, pipe or folder, not a regular file", str(path))
        if status.st_size > limit:
            raise OSError(errno.EFBIG, f"it is {status.st_size / 1e6:,.0f} MB, larger than the {limit / 1e6:,.0f} MB "
                                       "a file given to sitegen may be; split it", str(path))
        # read(n) sets n bytes aside at once: as many as the file holds, then a megabyte at a time should it
        # have grown since (or be one the system sizes as 0, as /proc's are).
        size = 0
        while size <= limit and (part := file.read(min(status.st_size + 1 if whole and not size else CHUNK,
                                                       limit + 1 - size))):
            size += len(part)
            if size > limit:
                raise OSError(errno.EFBIG, f"larger than the {limit / 1e6:,.0f} MB a file given to sitegen may be",
                              str(path))
            yield part


def utf16_order(data: bytes) -> str | None:
    """"le" or "be" when `data` looks like UTF-16 without its byte-order mark: text of the Latin
    alphabet in UTF-16 has a 0 in every other byte, which UTF-8 text never has (NUL is no character a
    text file sitegen reads writes)."""
    sample = data[:4096]
    if len(sample) < 4 or sample.count(0) < len(sample) // 4:
        return None
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    return "le" if odd > 2 * even else "be" if even > 2 * odd else None
