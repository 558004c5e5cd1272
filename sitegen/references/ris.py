"""RIS files (EndNote, Zotero, Covidence, Rayyan, PsycINFO, JSTOR, IEEE exports) as entries.

rispy reads the tags; this module first walks the lines itself, because rispy keeps no line
numbers and passes over broken structure silently. A record runs from its TY line to its ER
line; a line inside it that is no tag continues the field above it. Between records only blank
lines, export headers ("Provider: JSTOR") and record numbers ("1.") may stand. Tags of more
than two letters (PsycINFO's "PMID  - ") are not RIS and are left out with their continuations.

An entry's ID is its ID tag or, without one, "ris-N" for the N-th record of the file (so it is
the same on every read of the same file). When ID tags repeat, as in RIS exports joined one after
another (each numbers its records from 1), every record is named by its position instead, and a
warning says so: IDs must be unique in the file, and mixing tags with positions could collide.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import rispy
from rispy.config import LIST_TYPE_TAGS, TAG_KEY_MAPPING

from sitegen.records.entry import Entry
from sitegen.references.problems import ReferenceProblem, checked

TAG = re.compile(r"([A-Z][A-Z0-9])  -(?: |$)")
LONG_TAG = re.compile(r"[A-Z][A-Z0-9]{2,3}  -(?: |$)")
# A known tag with the wrong spacing ("AU - Smith", "AU  -Smith"): a broken tag line, not text
# ("CA-125 levels" on a line of its own is text: no space by the hyphen).
BROKEN_TAG = re.compile(rf"(?:{'|'.join(sorted(set(TAG_KEY_MAPPING) - {'UK'}))})(?: +-| *- )")
BETWEEN_RECORDS = re.compile(r"[A-Za-z][\w .-]*:\s.*|\d+\.?")

# Read each tag under its own name ("VO" is a volume tag some exports write instead of VL).
MAPPING = {tag: tag for tag in [*TAG_KEY_MAPPING, "VO"]}

# RIS reference types (and EndNote's spelled-out names) to BibTeX entry types.
ENTRY_TYPES = {
    "JOUR": "article", "JFULL": "article", "EJOUR": "article", "ABST": "article", "INPR": "article",
    "MGZN": "article", "NEWS": "article", "JOURNAL ARTICLE": "article",
    "CONF": "inproceedings", "CPAPER": "inproceedings", "CONFERENCE PAPER": "inproceedings",
    "CONFERENCE PROCEEDINGS": "inproceedings",
    "BOOK": "book", "EBOOK": "book", "EDBOOK": "book", "CHAP": "incollection", "ECHAP": "incollection",
    "BOOK SECTION": "incollection", "THES": "phdthesis", "THESIS": "phdthesis", "RPRT": "techreport",
    "REPORT": "techreport",
}


@dataclass
class _Record:
    start: int
    lines: list[str] = field(default_factory=list)
    tag_lines: dict[str, int] = field(default_factory=dict)


def read_ris(text: str, warnings: list[str] | None = None) -> list[Entry]:
    """The records of a RIS file; ReferenceProblem names the line of the first malformed one. When ID
    tags repeat, a warning naming the first repeat is appended to `warnings`."""
    records = list(_records(text.replace("\r\n", "\n").replace("\r", "\n").split("\n")))
    if not records:
        raise ReferenceProblem(1, "no RIS record (a record starts with a 'TY  - ' line)")
    parsed = rispy.loads("\n".join(line for record in records for line in record.lines),
                         mapping=MAPPING, list_tags=LIST_TYPE_TAGS, skip_unknown_tags=True)
    repeat = _repeated_id(records, parsed)
    if repeat and warnings is not None:
        warnings.append(f"{repeat}; every record is named by its position instead (ris-1 to ris-{len(records)})")
    return list(checked(_entry(n, record, tags, by_position=bool(repeat)) for n, (record, tags) in
                        enumerate(zip(records, parsed, strict=True), start=1)))


def _repeated_id(records: list[_Record], parsed: list[dict]) -> str | None:
    """What the first repeated ID tag is and where, or None when the ID tags are unique."""
    seen: dict[str, int] = {}
    for record, tags in zip(records, parsed, strict=True):
        if value := _text(tags.get("ID")):
            line = record.tag_lines["ID"]
            if value in seen:
                return f"ID {value!r} on line {line} was already used on line {seen[value]}"
            seen[value] = line
    return None


def _records(lines: list[str]) -> Iterator[_Record]:
    record: _Record | None = None
    skipping = False  # inside a tag that is not RIS, whose continuation lines go with it
    for number, line in enumerate(lines, start=1):
        tag = match.group(1) if (match := TAG.match(line)) else None
        if record is None:
            if tag == "TY":
                record, skipping = _Record(number, [line], {"TY": number}), False
            elif tag or LONG_TAG.match(line) or BROKEN_TAG.match(line):
                raise ReferenceProblem(number, f"{line.split('-')[0].strip()} outside a record: a record starts "
                                               "with a 'TY  - ' line")
            elif line.strip() and not BETWEEN_RECORDS.fullmatch(line.strip()):
                raise ReferenceProblem(number, "text outside a record: neither a RIS tag line nor an export header")
            continue
        if tag == "TY":
            raise ReferenceProblem(record.start, f"the record starting here has no ER line before the next TY "
                                                 f"(line {number})")
        if tag:
            skipping = False
            record.lines.append(line)
            record.tag_lines.setdefault(tag, number)
            if tag == "ER":
                yield record
                record = None
        elif LONG_TAG.match(line):
            skipping = True
        elif BROKEN_TAG.match(line):
            raise ReferenceProblem(number, f"not a RIS tag line: a tag is two capitals, two spaces, '-' and a "
                                           f"space ({line[:12]!r})")
        elif not skipping:
            record.lines.append(line)
    if record is not None:
        raise ReferenceProblem(record.start, "the record starting here has no ER line before the end of the file")


def _entry(position: int, record: _Record, tags: dict, by_position: bool) -> Entry:
    def first(*names: str) -> str:
        return next((value for name in names if (value := _text(tags.get(name)))), "")

    kind = first("TY")
    if not kind:
        raise ReferenceProblem(record.start, "the record has no reference type after TY")
    date_tag = next((name for name in ("PY", "Y1", "DA") if _text(tags.get(name))), None)
    year = ""
    if date_tag:
        found = re.search(r"(?<!\d)\d{4}(?!\d)", _text(tags[date_tag]))
        if not found:
            raise ReferenceProblem(record.tag_lines[date_tag],
                                   f"{date_tag} {_text(tags[date_tag])!r} holds no four-digit year")
        year = found.group()
    start, end = first("SP"), first("EP")
    authors = [name.strip() for name in [*tags.get("AU", []), *tags.get("A1", [])] if name.strip()]
    fields = {
        "ID": ("" if by_position else first("ID")) or f"ris-{position}",
        "ENTRYTYPE": ENTRY_TYPES.get(kind.upper(), "misc"),
        "author": " and ".join(dict.fromkeys(authors)),
        # a short title (ST) is better than none for matching: some exports hold only that
        "title": first("TI", "T1", "ST"),
        "year": year,
        "journal": first("JF", "T2", "JO", "JA"),
        "volume": first("VL", "VO"),
        "number": first("IS"),
        "pages": f"{start}-{end}" if start and end and end != start and "-" not in start else start or end,
        "doi": first("DO"),
        "abstract": first("AB", "N2"),
    }
    return Entry(fields["ID"], fields, record.start)


def _text(value: str | list[str] | None) -> str:
    """A tag's value as one string (list tags joined); rispy gives a list for repeated list tags."""
    if isinstance(value, list):
        return " ".join(part.strip() for part in value if part.strip())
    return (value or "").strip()
