"""Write a rendered site so that readers only ever see a whole one.

Files go into a fresh temporary folder next to the target; only when every file
is written is the old site swapped out for the new. A failure at any point
leaves the previous site exactly as it was. Only a folder sitegen built (it
holds the marker file) or an empty one is ever replaced.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from sitegen.errors import OutputRefused
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
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        for rel, data in sorted(files.items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        staging.chmod(0o755)  # mkdtemp makes it private; a published site must be readable
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _swap_in(staging: Path, out: Path) -> None:
    if not out.exists():
        os.rename(staging, out)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    retired.rmdir()
    os.rename(out, retired)
    try:
        os.rename(staging, out)
    except BaseException:
        os.rename(retired, out)  # put the previous site back before reporting the failure
        raise
    shutil.rmtree(retired, ignore_errors=True)
