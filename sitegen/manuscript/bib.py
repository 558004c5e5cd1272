"""Edits of a BibTeX file's text that keep everything else byte for byte: an entry's block found by
its braces, replaced or removed; a new entry appended. Pure: text in, text out."""

from __future__ import annotations

from sitegen.errors import SitegenError
from sitegen.records.model import Record
from sitegen.site.exports import citation_keys, records_bibtex


def entry_text(record: Record, key: str) -> str:
    """A BibTeX entry for `record` under `key` (without its abstract: a citation needs none)."""
    return records_bibtex([record.model_copy(update={"abstract": None})], {record.id: key})


def new_key(record: Record, taken: set[str]) -> str:
    """A key for `record` ("wagner2021artificial") that no entry of the file has yet."""
    base = key = citation_keys([record])[record.id]
    number = 1
    while key in taken:
        number += 1
        key = f"{base}-{number}"
    return key


def block_span(text: str, line: int, key: str) -> tuple[int, int]:
    """Where the entry starting on `line` (1-based) begins and ends in `text`: from its '@' to its closing
    brace or parenthesis, braces inside values counted."""
    offset = sum(len(part) for part in text.splitlines(keepends=True)[:line - 1])
    start = text.find("@", offset)
    opening = min((i for i in (text.find("{", start), text.find("(", start)) if i >= 0), default=-1)
    if start < 0 or opening < 0:
        raise SitegenError(f"the entry {key!r} is no longer on line {line} of the .bib file")
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
    raise SitegenError(f"the entry {key!r} on line {line} of the .bib file is not closed")


def replace_entry(text: str, line: int, key: str, record: Record) -> str:
    start, end = block_span(text, line, key)
    return text[:start] + entry_text(record, key).rstrip("\n") + text[end:]


def remove_entry(text: str, line: int, key: str) -> str:
    start, end = block_span(text, line, key)
    while end < len(text) and text[end] in " \t":
        end += 1
    if text[end:end + 1] == "\n":
        end += 1
    return text[:start] + text[end:]


def append_entry(text: str, record: Record, key: str) -> str:
    separator = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return text + separator + entry_text(record, key)
