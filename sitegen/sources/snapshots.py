"""Content-addressed snapshots of provider responses, for record and replay.

In record mode every response is stored under the review's `snapshots/` folder:
the body at `<sha256[:2]>/<sha256>`, and one line in `index.jsonl` mapping the
request's fingerprint (method, URL, sorted public parameters) and the run's
session to that body. Replay reads only these files and fails loudly, naming
the request, when one is missing; it never touches the network.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from sitegen.errors import SitegenError, shown_path
from sitegen.records.model import model_data
from sitegen.review.folder import SIZE_LIMITS
from sitegen.review.models import SnapshotEntry, describe_request, parse_timestamp, recorded_again
from sitegen.review.parsing import Parsed, read_json_lines, validate
from sitegen.review.write import atomic_write, canonical_json, jsonl

MODES = ("live", "record", "replay")
# Above every provider's cap on a response (sitegen.sources.http.Provider.max_bytes, 25 MB): a
# larger body in a review folder was planted, and replay must not read it into memory.
MAX_BODY_BYTES = 64_000_000
INDEX = "index.jsonl"


class SnapshotMissing(SitegenError):
    """Replay was asked for a response that was never recorded."""


class SnapshotDamaged(SnapshotMissing):
    """A response was recorded, but its body is gone or is not what was recorded (deleted, edited, truncated): no
    result may be made from it, and the message names the body and the index line that records it. Unlike a request
    never recorded (which a replay of an earlier sitegen's run may meet and go on from), never passed over."""


def fingerprint(method: str, url: str, params: list[tuple[str, str]]) -> str:
    request = {"method": method, "url": url, "params": sorted([k, v] for k, v in params)}
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


def describe(method: str, url: str, params: list[tuple[str, str]]) -> str:
    return describe_request(method, url, params)


class SnapshotStore:
    """The snapshots of one review folder.

    New bodies and the index are kept in memory until the owner takes them (`staged_files`) and
    writes them with everything else a run writes, in one transaction, so a run that fails or is
    killed records nothing. `save()` writes them at once, for a one-shot search.
    """

    def __init__(self, directory: Path):
        self.directory = directory
        self._entries: dict[tuple[str, str, int], SnapshotEntry] = {}
        self._new_bodies: dict[str, bytes] = {}  # sha256 -> body, not yet on disk
        self._this_run: set[tuple[str, str, int]] = set()  # entries recorded by this store, this time
        self._lines: dict[tuple[str, str, int], int] = {}  # the line of index.jsonl each entry read was on
        index = self._unlinked(directory / INDEX)
        if index.exists():
            rows, problems = read_json_lines(index, str(index), SIZE_LIMITS["snapshots/index.jsonl"])
            for lineno, value in rows or []:
                entry, entry_problems = validate(SnapshotEntry, Parsed(value), str(index), line=lineno)
                problems += entry_problems
                if entry is not None:
                    if (again := recorded_again(entry, self._entries.get(_key(entry)), self._lines.get(_key(entry)))):
                        raise SitegenError(f"{shown_path(index)}:{lineno}: not a valid snapshot index ({again})")
                    self._entries[_key(entry)] = entry
                    self._lines[_key(entry)] = lineno
            if problems:
                raise SitegenError(f"{problems[0].where()}: not a valid snapshot index ({problems[0].message})")
        self._dirty = False

    def lookup(self, key: str, session: str | None, occurrence: int = 0) -> SnapshotEntry | None:
        """The entry for this request in `session`, or in the latest session when session is None.

        `occurrence` tells identical requests of one run apart (some providers
        answer the same cursor page after page), so each replays its own response.
        """
        if session is None:
            sessions = [s for (k, s, n) in self._entries if k == key and n == occurrence]
            if not sessions:
                return None
            session = max(sessions, key=_instant)
        found = self._entries.get((key, session, occurrence))
        if found is None and session:  # recorded by an earlier sitegen with the time as given (+02:00, .000Z)
            instant = _instant(session)[0]
            found = next((entry for (k, s, n), entry in self._entries.items()
                          if k == key and n == occurrence and s and _instant(s)[0] == instant), None)
        return found

    def recorded_alike(self, method: str, url: str, session: str | None) -> list[SnapshotEntry]:
        """The requests to the address `url` recorded in `session` (in any, when None), whatever their parameters:
        what a replay missing a response was recorded with instead (an earlier sitegen asked with other parameters,
        such as another `select=` or page size)."""
        instant = _instant(session)[0] if session else None
        alike = [entry for (_, s, _), entry in self._entries.items() if entry.method == method and entry.url == url
                 and (instant is None or _instant(s)[0] == instant)]
        return sorted(alike, key=lambda entry: (describe(entry.method, entry.url, entry.params), entry.occurrence))

    def body(self, entry: SnapshotEntry) -> bytes:
        if entry.sha256 is None:
            return b""
        if entry.sha256 in self._new_bodies:
            return self._new_bodies[entry.sha256]
        path = self._unlinked(self._body_path(entry.sha256))
        request = describe(entry.method, entry.url, entry.params)
        if not path.is_file():
            raise SnapshotDamaged(f"{self._recorded_at(entry)}snapshot body {entry.sha256} for {request} "
                                  f"is missing from {shown_path(self.directory)}")
        if path.stat().st_size > MAX_BODY_BYTES:
            raise SnapshotDamaged(f"{self._recorded_at(entry)}snapshot body {shown_path(path)} for {request} is larger "
                                  f"than any response sitegen records ({MAX_BODY_BYTES:,} bytes): it was not written "
                                  "by sitegen")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise SnapshotDamaged(f"{self._recorded_at(entry)}snapshot body {shown_path(path)} for {request} does not "
                                  f"match its hash: it was edited, truncated or corrupted ({len(data):,} bytes); "
                                  "restore it as recorded (from version control), or record a new run")
        return data

    def _recorded_at(self, entry: SnapshotEntry) -> str:
        """"<index.jsonl>:<line>: ", where the entry whose body is read was recorded ("" for one recorded now)."""
        line = self._lines.get(_key(entry))
        return f"{shown_path(self.directory / INDEX)}:{line}: " if line is not None else ""

    def add(self, entry: SnapshotEntry, body: bytes | None) -> SnapshotEntry:
        if body is not None:
            digest = hashlib.sha256(body).hexdigest()
            if not self._unlinked(self._body_path(digest)).is_file():
                self._new_bodies[digest] = body
            entry = entry.model_copy(update={"sha256": digest})
        recorded = self._entries.get(_key(entry))
        if recorded is not None and recorded != entry and entry.session and _key(entry) not in self._this_run:
            # A run's responses are its evidence: another run filed under the same time must not replace them.
            raise SitegenError(f"a response for {describe(entry.method, entry.url, entry.params)} is already "
                               f"recorded for the run at {entry.session}; give this run its own time")
        self._this_run.add(_key(entry))
        self._entries[_key(entry)] = entry
        self._lines.pop(_key(entry), None)  # no longer the entry read from that line
        self._dirty = True
        return entry

    def staged_files(self) -> dict[str, bytes]:
        """What recording added, by path inside the store (new bodies, then the index), for the owner
        to write; afterwards the store holds nothing unwritten."""
        files = {f"{digest[:2]}/{digest}": body for digest, body in sorted(self._new_bodies.items())}
        if self._dirty:
            ordered = [model_data(self._entries[key]) for key in sorted(self._entries)]
            files[INDEX] = jsonl(ordered).encode("utf-8")
        self._new_bodies, self._dirty = {}, False
        return files

    def save(self) -> None:
        """Write what recording added now (each file atomically, the index last)."""
        for rel, data in self.staged_files().items():
            atomic_write(self._unlinked(self.directory / rel), data)

    def _body_path(self, digest: str) -> Path:
        return self.directory / digest[:2] / digest

    def _unlinked(self, path: Path) -> Path:
        """`path`, once neither it nor a folder from the store down to it is a symbolic link.

        A link would let a snapshot be read from, or recorded into, a place outside the review.
        """
        parts = path.relative_to(self.directory).parts
        for depth in range(len(parts) + 1):
            step = self.directory.joinpath(*parts[:depth])
            if step.is_symlink():
                raise SitegenError(f"{step} is a symbolic link; snapshots are read and written only "
                                   "inside the review, never through a link")
        return path



def _key(entry: SnapshotEntry) -> tuple[str, str, int]:
    return entry.fingerprint, entry.session, entry.occurrence


def _instant(session: str) -> tuple[float, str]:
    """A session (a run's time) in time order: as text, 09:00:00+09:00 came after 06:00:00Z, and 00Z after 00.5Z."""
    try:
        return parse_timestamp(session).timestamp(), session
    except ValueError:
        return float("-inf"), session
