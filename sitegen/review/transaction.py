"""All-or-nothing writes across several files of a review folder, and the review lock.

An update changes several files that must agree: the saved search's state, the
records, the ledger. Each file is written atomically on its own, but a crash
between two of them would leave them disagreeing. So a `Transaction`:

1. writes every new file beside its target (`<name>.sitegen-new`, fsynced);
2. writes the journal `.sitegen-transaction.json` naming them: the commit point;
3. renames each new file over its target, then deletes the journal.

Before the journal exists nothing has changed; after, `recover` (run by every
writing command before it starts) finishes the renames. Either way the folder
ends up all-old or all-new, never a mix. `recover` also removes what a killed
process left: the staged files of an uncommitted transaction and the
temporary files of `atomic_write`.

The journal also says what each target was when the write was committed (its inode, size and
modification time; the size and time are compared, as a copy of the folder (`cp -a`, a backup restored)
gives every file another inode). A target that has changed since (a `git pull` after the process was killed
brought a teammate's ledger) is not replaced by the staged file, which was made from the older
one: `recover` refuses, and `recover --discard` drops the interrupted write instead.

The journal sits in a Git-tracked folder, so it is untrusted input: it may only
name files inside the review, reached through real folders, with regular staged
files beside them. Anything else is refused before a single file is renamed.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sitegen.errors import LockHeld, SitegenError, shown_argument, shown_path, symbolic_link
from sitegen.records.listing import listed
from sitegen.review.parsing import walk
from sitegen.review.write import (
    Lines,
    atomic_write,
    fsync_dir,
    interrupts_held,
    is_temporary,
    named_as,
    probe_writable,
    written,
)

JOURNAL = ".sitegen-transaction.json"
STAGED = ".sitegen-new"
MAX_JOURNAL_BYTES = 1_000_000  # a journal names a few files; anything larger was not written by sitegen


class Transaction:
    def __init__(self, root: Path):
        self.root = root
        self.files: dict[str, bytes | Lines] = {}

    def write(self, rel: str, data: bytes | str | Lines) -> None:
        """Stage `data` for the review-relative path `rel` (written only by `commit`). `Lines` are made only as
        `commit` writes them: what they are made from must not change before it."""
        reason = _unsafe(self.root, rel)
        if reason:
            raise SitegenError(f"refusing to write {rel!r} in {self.root}: the path {reason}")
        with self._encodable(rel):
            self.files[rel] = data.encode("utf-8") if isinstance(data, str) else data

    @contextmanager
    def _encodable(self, rel: str) -> Iterator[None]:
        try:
            yield
        except UnicodeEncodeError:  # the readers refuse or replace lone surrogates; this is the last guard
            raise SitegenError(f"refusing to write {rel!r} in {self.root}: its text holds a lone UTF-16 surrogate, "
                               "which UTF-8 cannot encode; nothing was written") from None

    def commit(self) -> None:
        if not self.files:
            return
        rels = sorted(self.files)
        new_folders = {folder for rel in rels for folder in (self.root / rel).parents
                       if folder.is_relative_to(self.root) and folder != self.root and not folder.exists()}
        try:
            for rel in rels:
                # The staged file is renamed over the target, so it is born with the target's mode; an error
                # writing it (a read-only folder, a full disk) names the target, the file the user knows.
                with named_as(self.root / rel), self._encodable(rel):  # `Lines` are encoded as they are written
                    atomic_write(self.root / (rel + STAGED), self.files[rel], mode_from=self.root / rel, step=True)
            # Ctrl-C from the commit point on waits for the last rename: the process leaves the review whole, not
            # for the next command to finish.
            with interrupts_held():
                journal = [{"path": rel, "before": _fingerprint(self.root / rel)} for rel in rels]
                atomic_write(self.root / JOURNAL, json.dumps(journal) + "\n", step=True)  # the commit point
                _finish(self.root, rels)
        except BaseException:
            if not os.path.lexists(self.root / JOURNAL):  # not committed: a failed write (a full disk) changes nothing
                _discard(self.root, rels, new_folders)
            raise


def _fingerprint(path: Path) -> list[int] | None:
    """What a target is, as cheaply as a change shows (git and editors write a new file, or a new time):
    its inode, size and modification time; None when there is none."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    return [status.st_ino, status.st_size, status.st_mtime_ns]


def _unchanged(now: list[int] | None, before: object) -> bool:
    """Whether a target is as the journal found it: absent both times, or of the same size and time (not inode)."""
    return now == before if now is None or before is None else now[1:] == list(before)[1:]


def _discard(root: Path, rels: list[str], new_folders: set[Path]) -> None:
    """Remove the staged files of an uncommitted transaction, and the folders staging made."""
    for rel in rels:
        staged = root / (rel + STAGED)
        if os.path.lexists(staged):  # unlink(missing_ok=True) is refused on a read-only mount: the error hid the write's
            staged.unlink()
    for folder in sorted(new_folders, key=lambda folder: len(folder.parts), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def _finish(root: Path, rels: list[str]) -> None:
    for rel in rels:
        staged = root / (rel + STAGED)
        if os.path.lexists(staged):
            try:
                os.replace(staged, root / rel)
            except OSError as error:
                done = [other for other in rels if other != rel and not os.path.lexists(root / (other + STAGED))]
                raise SitegenError(
                    f"{root / rel} could not be replaced ({error.strerror}): the write was committed ("
                    f"{', '.join(done) + ' already replaced' if done else 'none of its files replaced yet'}), so the "
                    f"review's files disagree until it is finished. Make {rel} writable (its permissions, an immutable or "
                    f"append-only attribute, a read-only mount), then run `sitegen recover {shown_argument(root)}`, "
                    "which finishes it"
                ) from None
    for folder in sorted({(root / rel).parent for rel in rels}):
        fsync_dir(folder)  # the renames are durable before the journal goes
    (root / JOURNAL).unlink(missing_ok=True)
    written.extend(root / rel for rel in rels)


def refuse_unwritable(root: Path, folders: Iterable[str], before: str) -> None:
    """Refuse, before a command does `before` (fetching from the network: minutes of work, requests counted
    against an API's quota), a review whose transaction could not be written: one of `folders` (review-relative;
    "" is the review folder, where the journal goes; one not there yet is created in its parent, probed as "")
    refuses a new file, as a read-only mount or folder does."""
    for rel in dict.fromkeys(("", *folders)):
        folder = root / rel
        if rel and not folder.is_dir():
            continue
        try:
            probe_writable(folder)
        except OSError as error:
            raise SitegenError(f"{shown_path(folder)} cannot be written ({error.strerror or error}), so nothing was "
                               f"{before}; nothing was written. Make it writable, then run this again") from None


def not_a_review(root: Path) -> str | None:
    """Why `root` is no review folder, in the one sentence every command says it in (`check` among its problems,
    the others as their error), or None. The cheapest check of all: a command says it before it reads anything
    else (an export to import, a report's path)."""
    if not os.path.lexists(root):
        beside = _reviews_in(Path(os.path.dirname(root) or "."), depth=1)
        there = f" (the review folders there: {listed([shown_path(folder) for folder in beside])})" if beside else ""
        return f"{shown_path(root)} does not exist{there}"
    if not os.path.exists(root):  # a link leading nowhere: there, but no folder
        return f"{shown_path(root)} is {symbolic_link(root)}"
    if not os.path.isdir(root):
        return f"{shown_path(root)} is not a folder"
    if not os.path.lexists(root / "review.yaml"):
        return f"{shown_path(root)} is not a review folder: review.yaml is missing ({_what_to_give(root)})"
    return None


def _review_yaml_named_otherwise(root: Path, looked_at: int = 2000) -> str | None:
    """A file at the top of `root` named almost review.yaml (review.yml, Review.yaml, review.yaml.txt as a text
    editor saves it): the review, renamed, would otherwise be said to be no review at all."""
    from sitegen.review.folder import meant_entry  # (the folder's reader writes through this module)
    try:
        with os.scandir(root) as entries:
            return next((entry.name for entry in itertools.islice(entries, looked_at)
                         if entry.is_file(follow_symlinks=False) and meant_entry(entry.name, False) == "review.yaml"), None)
    except OSError:
        return None


def _what_to_give(root: Path) -> str:
    """What a person who named a folder that is no review meant, or can do: the review it is inside (a command run in
    one of its folders), the reviews in it (run at a repository's root, or in its reviews/), else how to make one
    (`init` fills only a new or empty folder: suggested for this one, it was refused)."""
    if renamed := _review_yaml_named_otherwise(root):
        return f"{renamed!r} is there: rename it review.yaml"
    folder = os.path.normpath(root)
    while True:
        parent = os.path.normpath(os.path.join(folder, os.pardir))
        if os.path.abspath(parent) == os.path.abspath(folder):  # the file system's root
            break
        if os.path.isfile(os.path.join(parent, "review.yaml")):
            return f"it is inside the review folder {shown_path(parent)}: give that"
        folder = parent
    if found := _reviews_in(root, depth=2):
        return f"the review folders in it: {listed([shown_path(folder) for folder in found])}"
    if next(os.scandir(root), None) is None:  # `init` refuses a link, so the folder it leads to is given
        return f"`sitegen init {shown_argument(os.path.realpath(root) if os.path.islink(root) else root)}` makes one"
    # A repository's reviews are under reviews/, where its workflows look for them (README: "Adopt sitegen").
    new = root / "reviews" / "my-review" if os.path.lexists(root / ".git") else root / "my-review"
    return f"`sitegen init` makes one in a new or empty folder, such as `sitegen init {shown_argument(new)}`"


def _reviews_in(folder: Path, depth: int, looked_at: int = 2000) -> list[Path]:
    """The review folders within `depth` levels below `folder` (not hidden ones), sorted; a look, not a search: no
    more than `looked_at` entries of each folder are read, so a home folder is no slower than a review."""
    found = []
    try:
        with os.scandir(folder) as entries:
            children = sorted(entry.name for entry in itertools.islice(entries, looked_at)
                              if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False))
    except OSError:
        return []
    for name in children:
        if os.path.isfile(folder / name / "review.yaml"):
            found.append(folder / name)
        elif depth > 1:
            found += _reviews_in(folder / name, depth - 1, looked_at)
    return found


def refuse_non_review(root: Path) -> None:
    """SitegenError when `root` is no review folder (`not_a_review`), before anything is read or written."""
    if why := not_a_review(root):
        raise SitegenError(f"{why}; nothing was read or written")


def recover(root: Path, discard: bool = False) -> list[str]:
    """Finish a committed transaction (or, `discard`, drop what of it is not done: its files not replaced yet) or
    discard an uncommitted one, and remove the temporary files of interrupted writes. Says what it did,
    one sentence per step (empty: nothing to do). Only a review folder is touched: the names it looks for
    must not sweep any other folder."""
    refuse_non_review(root)
    if not os.path.isfile(root / "review.yaml") or os.path.islink(root / "review.yaml"):  # there, but not a file
        raise SitegenError(f"{shown_path(root / 'review.yaml')} is not a plain file (a link or a folder), so {shown_path(root)} "
                           f"is not taken for a review folder (`sitegen check {shown_argument(root)}` says more); nothing "
                           "was changed")
    done = []
    if os.path.lexists(root / JOURNAL):
        entries = _journal_entries(root)
        rels = [rel for rel, _ in entries]
        pending = [rel for rel in rels if os.path.lexists(root / (rel + STAGED))]
        if discard and not pending:  # killed after its last rename: the write was whole
            (root / JOURNAL).unlink()
            done.append(f"the interrupted write of {', '.join(rels)} had been finished: nothing to drop")
        elif discard:
            _discard(root, rels, set())
            (root / JOURNAL).unlink()
            replaced = [rel for rel in rels if rel not in pending]
            done.append(f"dropped an interrupted write of {', '.join(pending)}: run the command that was interrupted "
                        "again" + (f"; it had replaced {', '.join(replaced)} already, so if "
                                   f"`sitegen check {shown_argument(root)}` finds the "
                                   "files disagreeing, restore them from Git as they were before it" if replaced else ""))
        else:
            changed = [rel for rel, before in entries if rel in pending and before is not _UNKNOWN
                       and not _unchanged(_fingerprint(root / rel), before)]
            if changed:
                raise SitegenError(
                    f"{', '.join(changed)} changed after an interrupted write was committed (a `git pull` or an edit "
                    f"since?): finishing it would replace {'them' if len(changed) > 1 else 'it'} with files made "
                    f"from the earlier version. Nothing was changed. Run `sitegen recover --discard {shown_argument(root)}` to drop "
                    "the interrupted write, then run the command that was interrupted again")
            _finish(root, rels)
            done.append(f"finished an interrupted write of {', '.join(rels)}")
    leftovers = [rel for rel in interrupted(root) if rel != JOURNAL]
    for rel in leftovers:  # written before a crash, and not part of any committed transaction
        (root / rel).unlink()
        _remove_emptied_folders(root, (root / rel).parent)
    if leftovers:
        done.append(f"removed what an interrupted write left behind: {', '.join(leftovers)}")
    return done


def interrupted(root: Path, entries: Iterable[tuple[str, os.DirEntry]] | None = None) -> list[str]:
    """Review-relative paths (POSIX, sorted) of everything an interrupted write left behind: the
    journal, staged files and temporary files, anywhere in the review. `recover` finishes or removes
    them all. `entries` is the review's walk (`parsing.walk`) when the caller has it already."""
    return sorted(rel for rel, entry in (walk(root) if entries is None else entries)
                  if rel == JOURNAL or (not entry.is_dir(follow_symlinks=False)
                                        and (entry.name.endswith(STAGED) or is_temporary(entry.name))))


def _remove_emptied_folders(root: Path, folder: Path) -> None:
    # Staging a file makes its folders; an uncommitted transaction's must go with its files.
    while folder != root and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


_UNKNOWN = object()  # a target's state when committed, in a journal of an earlier sitegen (a list of names)


def _journal_entries(root: Path) -> list[tuple[str, object]]:
    """The files the journal names, every one checked, each with what it was when the write was committed
    (`_fingerprint`; `_UNKNOWN` in an earlier sitegen's journal); SitegenError (nothing changed) otherwise."""
    journal = root / JOURNAL
    # A journal is never one of the files a review commits: restoring from Git cannot mend it, deleting it does.
    refusal = (f"nothing was changed; delete {JOURNAL} (a killed write's note, no file of the review), then see "
               f"with `git status` and `sitegen check {shown_argument(root)}` whether the review's files need restoring "
               "from Git")
    status = os.lstat(journal)
    if not stat.S_ISREG(status.st_mode):
        raise SitegenError(f"{journal} is not a regular file; {refusal}")
    if status.st_size > MAX_JOURNAL_BYTES:
        raise SitegenError(f"{journal} is damaged (far too large for a list of file names); {refusal}")
    try:
        journaled = json.loads(journal.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):  # not UTF-8 or not JSON, or nested past what the reader can follow
        journaled = None
    # A name alone (an earlier sitegen's journal; anything but a name is refused below as "not text").
    entries = [_entry(item) if isinstance(item, dict) else (item, _UNKNOWN) for item in journaled] \
        if isinstance(journaled, list) else []
    if not entries or None in entries:
        raise SitegenError(f"{journal} is damaged (it is not a list of file names); {refusal}")
    for rel, _ in entries:
        reason = _unsafe(root, rel)
        if reason:
            raise SitegenError(f"{journal} names {rel!r}: the path {reason}; {refusal}")
    return entries


def _entry(item: object) -> tuple[str, object] | None:
    """A journal entry {"path": ..., "before": [inode, size, time] or null}, None when it is not one."""
    if not isinstance(item, dict) or set(item) != {"path", "before"}:
        return None
    before = item["before"]
    if before is not None and not (isinstance(before, list) and len(before) == 3
                                   and all(type(value) is int for value in before)):
        return None
    return item["path"], before


def _unsafe(root: Path, rel: object) -> str | None:
    """Why a transaction may not write `rel` in `root`, or None: only a relative path to a file
    inside the review, through real folders (a missing one is created), with nothing but a
    regular file where its staged file goes, is allowed."""
    if not isinstance(rel, str):
        return "is not text"
    if "\\" in rel or "\0" in rel:
        return "contains a backslash or NUL character"
    if rel.startswith("/"):
        return "is absolute; only paths inside the review are allowed"
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "has an empty, '.' or '..' part; only paths inside the review are allowed"
    try:
        for depth in range(1, len(parts)):
            if _file_type(root.joinpath(*parts[:depth])) not in (None, stat.S_IFDIR):
                return f"goes through {'/'.join(parts[:depth])}, which is a symbolic link or file, not a real folder"
        if _file_type(root / rel) == stat.S_IFDIR:
            return "is a folder"
        if _file_type(root / (rel + STAGED)) not in (None, stat.S_IFREG):
            return f"has a staged file {rel}{STAGED} that is not a regular file"
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror})"
    return None


def _file_type(path: Path) -> int | None:
    """The type of what is at `path` (stat.S_IFDIR, S_IFREG, S_IFLNK...; a link is not followed), None if nothing."""
    try:
        return stat.S_IFMT(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None


@contextmanager
def review_lock(root: Path, shared: bool = False) -> Iterator[None]:
    """Refuse a second sitegen process writing or building the same review folder (or, `shared`, a process
    that only reads it, such as `check`, while one writes it: readers share the lock with each other).

    The lock is an advisory `flock` (POSIX) on the review directory itself, so it belongs to
    the folder's inode: every process asking for it meets the same lock whatever its
    environment (TMPDIR, working directory, the path or link it was given), and nothing is
    written into the review for a workflow to commit. Advisory: it keeps out other sitegen
    processes, not editors or git. The kernel drops it when the process ends, however it
    ends, so a crash never leaves a stale lock.
    """
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise SitegenError(f"{shown_path(root)} is not a folder sitegen can open ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(f"another sitegen process is writing {shown_path(root)} (an update, an import or a build): run "
                           "this again when that has finished" if shared else
                           f"another sitegen process is updating, building or checking {shown_path(root)}; "
                           "try again when it has finished") from None
        yield
    finally:
        os.close(fd)  # closing the only descriptor of this open releases the lock
