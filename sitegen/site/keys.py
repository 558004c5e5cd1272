"""Page keys: a digest of everything a page is rendered from, so a rebuild renders only what changed.

A keyed page's key covers the code and templates that render it (`code_digest`), the context
every page shares and the page's own context, walked value by value (`Keys.of`). Two builds
that give a page the same key render the same bytes, so the writer may keep the page it has
instead of rendering it again. Nothing is remembered between builds but the keys the previous
site was built with (in its manifest): a key is always computed from the review as it is now.

A key is a digest of the page's context written out by pickle, which writes text, numbers, lists
and dicts in C: a key costs little more than the bytes it covers. Dataclasses and pydantic models are
written as their kind's name and their fields' values. A record of the review counts as the bytes of its
line in records.jsonl (`Review.record_digests`), the cheapest exact account of it, and a value many
pages hold (a screening batch, a record's list entry) is digested once and counts as its digest.
A value of any other kind (an object that is neither, a function made inside another) is refused,
so a context can never carry something the key does not see. (The values pages hold by the hundred
thousand are dataclasses with slots: pickle asks an object without them for its dictionary, which Python
then makes and keeps.) The same review gives every page the
same key in every process (tested under two string-hash seeds), so a rebuild renders only what changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import operator
import pickle
from collections.abc import Callable, Mapping
from decimal import Decimal
from enum import Enum
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from sitegen.records.model import Record
from sitegen.review import kept
from sitegen.screening.status import Batch

T = TypeVar("T")


# Libraries whose output is on the pages (escaping, Markdown, the search index, JSON): another version of any
# of them, or of Python, may render another page from the same context.
RENDERING_LIBRARIES = ("jinja2", "markupsafe", "markdown-it-py", "pagefind", "pydantic")


@cache
def code_digest(templates: Path) -> str:
    """The digest of sitegen's code, the templates, Python's version and the rendering libraries' (each page
    key and the up-to-date check count it): a page rendered by other code is another page."""
    digest = hashlib.blake2b(kept.code_digest().encode(), digest_size=20)  # sitegen's code, Python's version
    digest.update(repr([(name, metadata.version(name)) for name in RENDERING_LIBRARIES]).encode())
    kept.folder_digest(digest, templates)
    return digest.hexdigest()


class Keys:
    """Page keys for one build of one review."""

    def __init__(self, records: Mapping[str, Record], record_digests: Mapping[str, bytes], shared: str):
        self.records = records
        self.record_digests = record_digests
        self.shared = shared
        # What each value digested once stands as in keys, kept with the value itself so its id cannot be
        # reused by another object while the build runs.
        self._memo: dict[int, tuple[object, tuple]] = {}
        self._reducers = _Reducers(self)
        self._shared_digest = hashlib.blake2b(shared.encode(), digest_size=20)  # every key starts from it
        self._idle: list[tuple[io.BytesIO, pickle.Pickler]] = []  # picklers made, not writing a value

    def of(self, *parts: object) -> str:
        """The key of a page rendered from `parts` (its template, path and context)."""
        digest = self._shared_digest.copy()
        digest.update(self._pickled(parts))
        return digest.hexdigest()

    def digest(self, value: object) -> bytes:
        """The digest a value of a kind digested once stands as in keys (`digested_once`)."""
        if type(value) not in DIGESTED_ONCE:
            raise TypeError(f"a {type(value).__name__} is not digested once")
        return self._digested(value)[1][0]

    def as_lines(self, records: list[Record]) -> list[bytes] | list[Record]:
        """`records` as a key may count them: each the digest of its line, when each is the review's record of its
        id and has a line (a review read from its folder: every record), else the records themselves, to be digested
        as `of` digests any. Looked up in C: a key of 100,000 records, each written through `_digested` (a Python
        step each), took a third of a second."""
        record_ids = list(map(_ID, records))
        lines = list(map(self.record_digests.get, record_ids))
        if None in lines or not all(map(operator.is_, map(self.records.get, record_ids), records)):
            return records
        return lines

    def _pickled(self, value: object) -> bytes:
        # `_Reducers` says how the kinds pickle has no C writer for are written. pickle's memo writes an
        # object met again within one value as a reference to the first: it never makes two values alike.
        # A build writes two values a page (its key's, and its list entry's), 200,000 at 100,000 records: a
        # pickler is made once and used again, and each value starts from the memo of the functions keys
        # are written with (`_PRIMED`), which would otherwise be looked up and written out in every value, at more
        # cost than the value. A value written while another is (`_digested`) takes another pickler.
        buffer, pickler = self._idle.pop() if self._idle else self._pickler()
        pickler.memo = _PRIMED  # a copy: what a value is written as depends on it alone
        try:
            pickler.dump(value)
        except (pickle.PicklingError, AttributeError) as error:  # a function made inside another one, say
            raise TypeError(f"a page key cannot account for a value: {error}") from None
        written = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        self._idle.append((buffer, pickler))  # not after an error: a pickler that failed is not used again
        return written

    def _pickler(self) -> tuple[io.BytesIO, pickle.Pickler]:
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=5)
        pickler.dispatch_table = self._reducers
        return buffer, pickler

    def _digested(self, value: Any) -> tuple:
        remembered = self._memo.get(id(value))
        if remembered is not None:
            return remembered[1]
        if isinstance(value, Record) and self.records.get(value.id) is value and value.id in self.record_digests:
            digest = self.record_digests[value.id]
        else:
            # written as any value of its kind is, then digested; a tuple's with `_contents_of`, or a tuple of
            # one value would be written as a dataclass of one field and the same name is
            whole = _contents(value) if isinstance(value, tuple) else _by_fields(type(value))(value)[1]
            digest = hashlib.blake2b(self._pickled(whole), digest_size=16).digest()
        reduced = (_digest_of, (digest,))
        self._memo[id(value)] = (value, reduced)
        return reduced


_ID = operator.attrgetter("id")


def _digest_of(digest: bytes) -> None:
    """What a value digested once stands as in a key (never called: keys are digested, not unpickled)."""
    raise AssertionError(digest)


# The kinds of values many pages hold, each digested once and standing as its digest in every key: a
# record (the digest of its line), a screening batch (60,000 ids, on every record page of the batch),
# and those `digested_once` names. A value is remembered by its id: values alike but not the same object are
# digested once each, to the same digest.
DIGESTED_ONCE: set[type] = {Record, Batch}


def digested_once(kind: type[T]) -> type[T]:
    """Class decorator: values of this dataclass (or tuple, written as its kind's name and contents) stand in page
    keys as their digest, made once per build."""
    DIGESTED_ONCE.add(kind)
    return kind


class _Reducers(dict):
    """How pickle writes each kind of value it has no C writer for, found on first meeting the kind: a
    kind digested once as its digest; a pydantic model or a dataclass as its kind's name and its fields'
    values; a dict, list or tuple of another kind (a Counter, a named tuple) as its kind's name and
    contents; a Decimal pickle's own way; any other kind refused. (Contexts hold lists, never sets: pickle writes a set
    in the order of its hashes, which differs between processes, so a page holding one would get another
    key, and be rendered again, in every build.)"""

    def __init__(self, keys: Keys):
        super().__init__()
        self.keys = keys

    def __missing__(self, kind: type) -> Callable[[Any], Any]:
        if kind in DIGESTED_ONCE:
            reducer: Callable[[Any], Any] = self.keys._digested
        elif issubclass(kind, BaseModel):
            reducer = _by_fields(kind)
        elif issubclass(kind, dict | list | tuple) and not issubclass(kind, Enum):  # a Counter, a named tuple
            reducer = _contents
        elif dataclasses.is_dataclass(kind):
            reducer = _by_fields(kind)
        elif kind is Decimal:
            reducer = _PICKLE_AS_USUAL
        else:
            raise TypeError(f"a page key cannot account for a {kind.__name__}")
        self[kind] = reducer
        return reducer


@cache
def _by_fields(kind: type) -> Callable[[Any], tuple]:
    """How a model or dataclass of `kind` is written: its kind's name and its fields' values, one tuple read in C
    (a slotted frozen dataclass's own way to pickle is a Python function, at twice the cost). The values pages
    hold by the hundred thousand are written this way, a dozen for each record: nothing more is made for each."""
    fields = _fields(kind)
    if not fields:
        name_only = (kind.__qualname__,)
        return lambda value: (_fields_of, name_only)
    name_and_values = operator.attrgetter("__class__.__qualname__", *fields)  # reducers are found by exact kind
    return lambda value: (_fields_of, name_and_values(value))


def _contents(value: dict | list | tuple) -> tuple:
    return _contents_of, (type(value).__qualname__, dict(value) if isinstance(value, dict) else list(value))


def _fields_of(kind: str, *fields: object) -> None:
    """What a model is written as in a key: its kind and fields (never called: keys are not unpickled)."""
    raise AssertionError(kind)


def _contents_of(kind: str, contents: object) -> None:
    """What a dict, list or tuple of another kind is written as in a key: its kind and contents (never called).
    Not `_fields_of`: a dataclass of one field would be written as a Counter of the same name is."""
    raise AssertionError(kind)


def _primed_memo() -> Any:
    """A pickler's memo holding the functions keys are written with, as each value starts from it."""
    pickler = pickle.Pickler(io.BytesIO(), protocol=5)
    pickler.dump((_fields_of, _contents_of, _digest_of))
    return pickler.memo


_PRIMED = _primed_memo()
_PICKLE_AS_USUAL = operator.methodcaller("__reduce_ex__", 5)


@cache
def _fields(kind: type) -> tuple[str, ...]:
    """The fields a pydantic model or a dataclass is made of."""
    if issubclass(kind, BaseModel):
        return tuple(kind.model_fields)
    return tuple(field.name for field in dataclasses.fields(kind))
