"""The line structure PubMed's MEDLINE format and Web of Science's plain-text export share: a field
is a tag at the start of a line, its value after it, and lines that start with spaces continue it.

`tagged_records` walks the lines, keeping each field's line, and leaves the meaning of the tags to
the reader of each format (`medline.py`, `wos.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from sitegen.references.problems import ReferenceProblem, lines_of


@dataclass
class TaggedRecord:
    """One record: its first line and each field as (tag, line, the lines of its value)."""

    start: int
    fields: list[tuple[str, int, list[str]]] = field(default_factory=list)

    @cached_property
    def _joined(self) -> dict[str, list[str]]:
        joined: dict[str, list[str]] = {}
        for name, _, lines in self.fields:
            joined.setdefault(name, []).append(" ".join(" ".join(lines).split()))
        return joined

    def values(self, tag: str) -> list[str]:
        """Each occurrence of `tag`, its lines joined by a space (read once the record is complete)."""
        return self._joined.get(tag, [])

    def in_order(self, *tags: str) -> list[tuple[str, str]]:
        """(tag, value) for each occurrence of any of `tags`, in the record's order, its lines joined by a space."""
        return [(name, text) for name, _, lines in self.fields if name in tags
                if (text := " ".join(" ".join(lines).split()))]

    def items(self, tag: str) -> list[str]:
        """Each line of every occurrence of `tag` (Web of Science writes one author a line)."""
        return [text for name, _, lines in self.fields if name == tag for line in lines if (text := line.strip())]

    def first(self, *tags: str) -> str:
        return next((value for tag in tags for value in self.values(tag) if value), "")

    def line(self, tag: str) -> int:
        return next((line for name, line, _ in self.fields if name == tag), self.start)


@dataclass(frozen=True)
class Layout:
    """How a format writes its lines: `tag` matches a tag line (groups "tag" and "value"), a line
    starting with `continuation` continues the field above; a record starts with `start` (any tag
    when None) and ends with `end` (a blank line when None); tags in `outside` stand between records
    (file headers). `once` is a tag a record holds once at most (MEDLINE's PMID): met again inside a
    record, it starts the next one (records joined without the blank line between them)."""

    name: str
    tag: re.Pattern[str]
    continuation: str
    start: str | None = None
    end: str | None = None
    outside: frozenset[str] = frozenset()
    once: str | None = None


def tagged_records(text: str | Iterable[str], layout: Layout, headers: dict[str, str] | None = None
                   ) -> Iterator[TaggedRecord | ReferenceProblem]:
    """Each record of `text` (or of its lines as they are read: see `problems.lines_of`) or, for a malformed
    one, its first problem, in order, each as it ends; header tags between records go into `headers` (first
    value of each)."""
    record: TaggedRecord | None = None
    problem: ReferenceProblem | None = None  # of the record being read
    for number, line in enumerate(lines_of(text), start=1):
        match = layout.tag.match(line)
        tag = match.group("tag") if match else None
        if record is not None and layout.end is None and not line.strip():
            yield problem or record
            record = None
            continue
        if record is None:
            if tag in layout.outside:
                if headers is not None:
                    headers.setdefault(tag, (match.group("value") or "").strip())
            elif tag and (layout.start is None or tag == layout.start):
                record, problem = TaggedRecord(number, [(tag, number, [match.group("value") or ""])]), None
            elif tag:
                yield ReferenceProblem(number, f"{tag} outside a record: a record starts with a "
                                               f"'{layout.start}' line")
            elif line.strip():
                yield ReferenceProblem(number, f"text outside a record: not a {layout.name} tag line")
            continue
        if tag is not None and tag == layout.start and layout.end is not None:
            yield ReferenceProblem(record.start, f"the record starting here has no {layout.end} line before "
                                                 f"the next {layout.start} (line {number})")
            record, problem = TaggedRecord(number, [(tag, number, [match.group("value") or ""])]), None
        elif tag is not None and tag == layout.once and any(name == tag for name, _, _ in record.fields):
            yield problem or record
            record, problem = TaggedRecord(number, [(tag, number, [match.group("value") or ""])]), None
        elif tag is not None:
            if tag == layout.end:
                yield problem or record
                record = None
            else:
                record.fields.append((tag, number, [match.group("value") or ""]))
        elif line.startswith(layout.continuation) and record.fields:
            record.fields[-1][2].append(line)
        elif line.strip():
            problem = problem or ReferenceProblem(number, f"not a {layout.name} tag line ({line[:12]!r}): a line "
                                                          f"starts with a tag or continues the one above")
    if record is not None:
        if layout.end is None:
            yield problem or record
        else:
            yield ReferenceProblem(record.start, f"the record starting here has no {layout.end} line before the "
                                                 f"end of the file")
