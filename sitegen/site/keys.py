"""Page keys: a digest of everything a page is rendered from, so a rebuild renders only what changed.

A keyed page's key covers the code and templates that render it (`code_digest`), the context
every page shares and the page's own context, walked value by value (`Keys.of`). Two builds
that give a page the same key render the same bytes, so the writer may keep the page it has
instead of rendering it again. Nothing is remembered between builds but the keys the previous
site was built with (in its manifest): a key is always computed from the review as it is now.

The walk knows the values page contexts hold: text, numbers, lists and dicts, dataclasses and
pydantic models (field by field). A record of the review counts as the bytes of its line in
records.jsonl (`Review.record_digests`), the cheapest exact account of it; a value of any other
kind is refused, so a context can never carry something the key does not see.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path

from pydantic import BaseModel

import sitegen
from sitegen.records.model import Record

SITEGEN_ROOT = Path(sitegen.__file__).resolve().parent


@cache
def code_digest(templates: Path) -> str:
    """The digest of sitegen's code and the templates: a page rendered by other code is another page."""
    digest = hashlib.blake2b(sitegen.__version__.encode(), digest_size=20)
    for root in (SITEGEN_ROOT, templates):
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"\0{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


class Keys:
    """Page keys for one build of one review."""

    def __init__(self, records: Mapping[str, Record], record_digests: Mapping[str, bytes], shared: str):
        self.records = records
        self.record_digests = record_digests
        self.shared = shared
        # Digests of the objects many pages share (a batch, a record), kept with the object itself so
        # its id cannot be reused by another object while the build runs.
        self._memo: dict[int, tuple[object, bytes]] = {}

    def of(self, *parts: object) -> str:
        """The key of a page rendered from `parts` (its template, path and context)."""
        digest = hashlib.blake2b(self.shared.encode(), digest_size=20)
        digest.update("".join(map(self._value, parts)).encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def _value(self, value: object) -> str:
        tag = _TAGS.get(type(value))
        if tag is not None:
            return f"{tag}{value!r};"
        if isinstance(value, list | tuple):
            return "[" + "".join(map(self._value, value)) + "]"
        if isinstance(value, dict):
            return "{" + "".join(self._value(key) + self._value(item) for key, item in value.items()) + "}"
        remembered = self._memo.get(id(value))
        if remembered is not None:
            return remembered[1]
        if isinstance(value, Record) and self.records.get(value.id) is value and value.id in self.record_digests:
            encoded = f"record:{self.record_digests[value.id].hex()};"
        else:
            names = _fields(type(value))
            whole = type(value).__name__ + "(" + "".join(self._value(getattr(value, name)) for name in names) + ")"
            # A shared object (a batch of 60,000 ids) stands in its pages' keys as a digest of itself.
            encoded = f"#{hashlib.blake2b(whole.encode('utf-8', 'surrogatepass'), digest_size=16).hexdigest()};"
        self._memo[id(value)] = (value, encoded)
        return encoded


_TAGS = {str: "s", int: "i", float: "f", bool: "b", type(None): "n", Decimal: "d"}


@cache
def _fields(kind: type) -> tuple[str, ...]:
    """The fields a value of `kind` is made of; a kind that is neither a pydantic model nor a dataclass
    cannot be accounted for."""
    if issubclass(kind, BaseModel):
        return tuple(kind.model_fields)
    if dataclasses.is_dataclass(kind):
        return tuple(field.name for field in dataclasses.fields(kind))
    raise TypeError(f"a page key cannot account for a {kind.__name__}")
