"""Edits of a BibTeX file's text that keep everything else byte for byte: an entry's block found by
its braces, replaced or removed; a new entry appended. Pure: text in, text out."""

from __future__ import annotations

import re

from sitegen.errors import SitegenError
from sitegen.records.model import Record
from sitegen.site.exports import citation_keys, records_bibtex


def entry_text(record: Record, key: str) -> str:
    """A BibTeX entry for `record` under `key` (without its abstract: a citation needs none)."""
    return records_bibtex([record.model_copy(update={"abstract": None})], {record.id: key})


class NewKeys:
    """Keys for works cited anew ("wagner2021artificial", then "wagner2021artificial-2"…), each one that no entry of
    the file (`taken`, its keys) has, nor a key given before; each key given is added to `taken`."""

    def __init__(self, taken: set[str]):
        self.taken = taken
        self._next: dict[str, int] = {}  # a base: the number its next key is tried from ("-2" is 2; the base is 1)

    def key(self, record: Record) -> str:
        """A new key for `record`, taken. Tried from where the last of its base was found, as `citation_keys`
        counts: every number below it is taken, and `taken` only grows. Trying "-2", "-3"… from the start again
        for each work was quadratic in the works of one author, year and first word."""
        base = citation_keys([record])[record.id]
        number = self._next.get(base, 1)
        while (key := base if number == 1 else f"{base}-{number}") in self.taken:
            number += 1
        self._next[base] = number + 1
        self.taken.add(key)
        return key


def block_span(text: str, key: str) -> tuple[int, int]:
    """Where the entry `key` begins and ends in `text`: from its '@' to its closing brace or parenthesis,
    braces inside values counted. Found by its key, so earlier edits of the text cannot misplace it."""
    heads = list(re.finditer(r"@\s*[A-Za-z]+\s*([{(])\s*" + re.escape(key) + r"\s*,", text))
    if len(heads) != 1:
        raise SitegenError(f"the .bib file holds {len(heads)} entries with the key {key!r}, not one")
    start, opening = heads[0].start(), heads[0].start(1)
    closing = {"{": "}", "(": ")"}[text[opening]]
    braces, index = 0, opening + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2  # an escaped brace is text, not structure
            continue
        if char == closing and braces == 0:
            return start, index + 1
        braces += (char == "{") - (char == "}")
        index += 1
    raise SitegenError(f"the entry {key!r} of the .bib file is not closed")


def replace_entry(text: str, key: str, record: Record) -> str:
    start, end = block_span(text, key)
    return text[:start] + _newlines(entry_text(record, key).rstrip("\n"), text) + text[end:]


def remove_entry(text: str, key: str) -> str:
    start, end = block_span(text, key)
    while end < len(text) and text[end] in " \t":
        end += 1
    if text[end:end + 2] == "\r\n":
        end += 2
    elif text[end:end + 1] == "\n":
        end += 1
    return text[:start] + text[end:]


def append_entry(text: str, record: Record, key: str) -> str:
    newline = _newline(text)
    if not text or text.endswith(newline * 2):
        separator = ""
    else:
        separator = newline if text.endswith(newline) else newline * 2
    return text + separator + _newlines(entry_text(record, key), text)


def _newline(text: str) -> str:
    """The file's line ending (CRLF when it has any), which new text takes so the file keeps one style."""
    return "\r\n" if "\r\n" in text else "\n"


def _newlines(entry: str, text: str) -> str:
    return entry.replace("\n", _newline(text))
