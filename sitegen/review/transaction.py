"""All-or-nothing writes across several files of a review folder, and the review lock.

An update changes several files that must agree: the saved search's state, the
records, the ledger. Each file is written atomically on its own, but a crash
between two of them would leave them disagreeing. So a `Transaction`:

1. writes every new file beside its target (`<name>.sitegen-new`, fsynced);
2. writes the journal `.sitegen-transaction.json` naming them: the commit point;
3. renames each new file over its target, then deletes the journal.

Before the journal exists nothing has changed; after, `recover` (run by every
writing command before it starts) finishes the renames. Either way the folder
ends up all-old or all-new, never a mix.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from sitegen.errors import LockHeld, SitegenError
from sitegen.review.write import atomic_write, fsync_dir

JOURNAL = ".sitegen-transaction.json"
SUFFIX = ".sitegen-new"


class Transaction:
    def __init__(self, root: Path):
        self.root = root
        self.files: dict[str, bytes] = {}

    def write(self, rel: str, data: bytes | str) -> None:
        self.files[rel] = data.encode("utf-8") if isinstance(data, str) else data

    def commit(self) -> None:
        if not self.files:
            return
        for rel, data in sorted(self.files.items()):
            atomic_write(self.root / (rel + SUFFIX), data)
        atomic_write(self.root / JOURNAL, json.dumps(sorted(self.files)) + "\n")  # the commit point
        _finish(self.root, sorted(self.files))


def _finish(root: Path, rels: list[str]) -> None:
    for rel in rels:
        staged = root / (rel + SUFFIX)
        if staged.exists():
            os.replace(staged, root / rel)
    for folder in sorted({(root / rel).parent for rel in rels}):
        fsync_dir(folder)  # the renames are durable before the journal goes
    (root / JOURNAL).unlink(missing_ok=True)


def recover(root: Path) -> bool:
    """Finish a committed transaction or discard an uncommitted one. True if there was anything to do."""
    journal = root / JOURNAL
    if journal.is_file():
        try:
            rels = json.loads(journal.read_text(encoding="utf-8"))
        except ValueError:
            raise SitegenError(f"{journal} is damaged; restore the folder from Git") from None
        if not all(isinstance(rel, str) and ".." not in Path(rel).parts for rel in rels):
            raise SitegenError(f"{journal} names files outside the review; restore the folder from Git")
        _finish(root, rels)
        return True
    leftovers = list(root.rglob(f"*{SUFFIX}"))
    for path in leftovers:  # written before a crash that came before the commit point
        path.unlink()
    return bool(leftovers)


def pending(root: Path) -> bool:
    return (root / JOURNAL).exists()


@contextmanager
def review_lock(root: Path) -> Iterator[None]:
    """Refuse a second sitegen process writing or building the same review folder.

    The lock file lives in the system's temporary folder, keyed by the review's
    real path, so taking it never writes into the review itself.
    """
    key = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:24]
    directory = Path(tempfile.gettempdir()) / "sitegen-locks"
    directory.mkdir(exist_ok=True)
    lock = FileLock(str(directory / f"{key}.lock"), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise LockHeld(f"another sitegen process is updating or building {root}; "
                       "try again when it has finished") from None
    try:
        yield
    finally:
        lock.release()
