"""Deterministic serialisation and atomic writes for every file sitegen produces.

Same content in, byte-identical file out: keys keep the model's order (or are
sorted for hashed JSON), text is UTF-8 with a final newline. A write goes to a
temporary file in the same directory, is fsynced, then renamed over the target,
so a reader never sees half a file and a crash leaves the old one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: the form that is hashed and stored one per line."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def pretty_json(value: Any) -> str:
    """Indented JSON (one list item per line, so Git diffs stay small)."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def jsonl(rows: Iterable[Any]) -> str:
    return "".join(canonical_json(row) + "\n" for row in rows)


def atomic_write(path: Path, data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


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
