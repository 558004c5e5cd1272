"""Write a rendered site so that readers only ever see a whole one.

Files go into a fresh staging folder next to the target, `.<name>.building-<random>`,
the marker file last, so a staging folder holding the marker is complete. Then the
two folders are exchanged in one atomic step (Linux `renameat2`), and the old site,
now in the staging folder, is removed; the new site keeps the old folder's mode and
group. Where the system cannot exchange, the old site is renamed aside
(`.<name>.old-<random>`) and the new one renamed in; a process killed between those
two renames leaves no site, so every `write_site` first recovers: it moves the
complete new site in (or else the old one back) and removes every leftover folder.
A failure at any point leaves the previous site exactly as it was. Only a folder
sitegen built (it holds the marker file) or an empty one is ever replaced.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import re
import secrets
import shutil
from pathlib import Path

from sitegen.errors import OutputRefused
from sitegen.review.write import keep_folder_identity
from sitegen.site.pages import SITE_MARKER


def refuse_unsafe_output(review_dir: Path, out: Path) -> None:
    if out.is_symlink():
        raise OutputRefused(f"refusing to build into {out}: it is a symbolic link; give the real folder")
    review_dir, target = review_dir.resolve(), out.resolve()
    if target == review_dir or target in review_dir.parents:
        raise OutputRefused(f"refusing to build into {out}: it contains the review folder {review_dir}")
    if review_dir in target.parents:
        raise OutputRefused(f"refusing to build into {out}: it is inside the review folder; "
                            "the site is derived and belongs outside it (the default is ./site)")
    if target.exists() and not target.is_dir():
        raise OutputRefused(f"refusing to build into {out}: it is a file, not a folder")
    if target.is_dir() and any(target.iterdir()) and not (target / SITE_MARKER).is_file():
        raise OutputRefused(f"refusing to replace {out}: it is not empty and was not built by sitegen "
                            f"(no {SITE_MARKER} file); choose another --out or empty it yourself")


def write_site(out: Path, files: dict[str, bytes]) -> None:
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    _recover(out)
    staging = _leftover_name(out, "building")
    staging.mkdir()
    try:
        for rel in sorted(files, key=lambda rel: (rel == SITE_MARKER, rel)):  # the marker last: see _recover
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[rel])
        _swap_in(staging, out)
    except BaseException:
        _discard(staging)
        raise


def _swap_in(staging: Path, out: Path) -> None:
    if not out.exists():
        os.rename(staging, out)
        return
    keep_folder_identity(out, staging)
    if _exchange(staging, out):  # one atomic step: readers see the old site or the new, never none
        _discard(staging)  # now holding the old site
        return
    retired = _leftover_name(out, "old")
    os.rename(out, retired)
    try:
        os.rename(staging, out)
    except BaseException:
        os.rename(retired, out)  # put the previous site back before reporting the failure
        raise
    _discard(retired)


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


def _recover(out: Path) -> None:
    """Put a site back at `out` if a killed write_site left none, then remove its leftover folders.

    With `out` missing, the kill came between the two renames: the newest staging folder
    holding the marker is the complete new site and goes in; failing that, the newest
    retired site holding it goes back. Only folders named as write_site names them are
    touched. (A second build into the same `out` at this moment would lose its staging
    folder: builds of one review are serialised by the review lock, and building two
    reviews into one folder at once is not supported.)
    """
    building, retired = _leftovers(out, "building"), _leftovers(out, "old")
    survivor = None
    if not os.path.lexists(out):
        survivor = next((folder for folder in building + retired if (folder / SITE_MARKER).is_file()), None)
        if survivor is not None:
            os.rename(survivor, out)
    for folder in building + retired:
        if folder != survivor:
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
    return sorted(folders, key=lambda path: (path.stat().st_mtime_ns, path.name), reverse=True)
