"""CSL-JSON (Zotero's, Pandoc's and citeproc's input: a JSON array of items) as entries.

An entry's ID is the item's "id", or "csl-N" for the N-th item without one; repeated ids name
every item by position instead, with a warning, as in RIS. Each item is decoded on its own, so a
problem is reported on the line its item starts on. Authors are "family, given" ("family, suffix,
given" with a suffix, "Jr.") or, for a literal name ({"literal": "World Health Organization"}), the
name in braces. OpenAlex and arXiv ids are read from `custom` (where sitegen's exports keep them:
CSL has no variables for them), the full date from `issued`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sitegen.records.entry import Entry
from sitegen.records.model import FOUR_DIGITS
from sitegen.references.fields import author_list, fields, iso_date, issns, joined, keywords
from sitegen.references.problems import ReferenceProblem, Skipped, checked, each, named


def _object(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are all different: one giving a field twice says two things of one item."""
    found = dict(pairs)
    if len(found) < len(pairs):
        twice = next(key for n, (key, _) in enumerate(pairs) if key in dict(pairs[:n]))
        raise ValueError(f"the key {twice!r} is given twice in one object")
    return found


DECODER = json.JSONDecoder(object_pairs_hook=_object)
SPACE = re.compile(r"\s*")
ENTRY_TYPES = {"article-journal": "article", "article": "article", "article-magazine": "article",
               "article-newspaper": "article", "review": "article", "paper-conference": "inproceedings",
               "book": "book", "chapter": "incollection", "thesis": "phdthesis", "report": "techreport"}


def read_csl_json(text: str, warnings: list[str] | None = None, skipped: Skipped | None = None) -> list[Entry]:
    """The items of a CSL-JSON file (an array of items, or items one after another: one, or one per line as
    records.jsonl holds them); ReferenceProblem names the line of the first malformed one (with `skipped`, each
    is listed there instead)."""
    items = list(_items(text))
    if not items:
        raise ReferenceProblem(1, "no CSL-JSON item (the file is an empty array)")
    given = [(_text(item[1].get("id")), item[0]) if isinstance(item, tuple) else ("", 0) for item in items]
    return checked(named(list(each(_entry, items)), given, "csl", warnings), skipped)


# What a CSL item holds (any of these): an object with none of them and a list of objects is a wrapper.
ITEM_KEYS = frozenset({"id", "type", "title", "author", "editor", "issued", "DOI", "URL", "container-title"})


def _wrapped_list(value: dict) -> str | None:
    """The key of the list of objects `value` holds when it is no item but wraps a list of them."""
    if value.keys() & ITEM_KEYS:
        return None
    return next((key for key, held in value.items()
                 if isinstance(held, list) and held and all(isinstance(item, dict) for item in held)), None)


class _Lines:
    """The line of a position in `text`, counted on from the position asked before: counted from the start of the
    text for each item, the lines of a file of 15,000 items took six minutes to number."""

    def __init__(self, text: str):
        self.text, self.position, self.line = text, 0, 1

    def __call__(self, position: int) -> int:
        if position < self.position:
            return self.text.count("\n", 0, position) + 1
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line


def _items(text: str) -> list[tuple[int, dict] | ReferenceProblem]:
    """Each item with its line, or the problem of one that is not an object; ReferenceProblem when
    the file is not JSON (nothing after a syntax error can be read)."""
    start = position = SPACE.match(text).end()
    line_of = _Lines(text)
    try:
        if text.startswith("{", start):  # items one after another, each read (only the first was, silently)
            found: list[tuple[int, dict] | ReferenceProblem] = []
            while position < len(text):
                if not text.startswith("{", position):
                    raise ReferenceProblem(line_of(position), "not CSL-JSON: text after an item where another "
                                                                  "item ('{') or the end of the file should be")
                value, end = DECODER.raw_decode(text, position)
                found.append((line_of(position), value))
                if wrapped := _wrapped_list(value):  # {"items": [...]}, as some services answer
                    raise ReferenceProblem(line_of(position), f"an object holding a list of items under "
                                           f"{wrapped!r}, not a CSL-JSON item: give the list itself ([...])")
                position = SPACE.match(text, end).end()
            return found
        if not text.startswith("[", start):
            raise ReferenceProblem(line_of(start), "not CSL-JSON: expected an array of items ('[') or one item")
        items: list[tuple[int, dict] | ReferenceProblem] = []
        position = SPACE.match(text, start + 1).end()
        while not text.startswith("]", position):
            value, end = DECODER.raw_decode(text, position)
            line = line_of(position)
            items.append((line, value) if isinstance(value, dict) else
                         ReferenceProblem(line, f"not a CSL-JSON item: a {type(value).__name__}, not an object"))
            position = SPACE.match(text, end).end()
            if text.startswith(",", position):
                position = SPACE.match(text, position + 1).end()
            elif not text.startswith("]", position):
                raise ReferenceProblem(line_of(position), "not valid JSON: expected ',' or ']' after an item")
    except json.JSONDecodeError as error:
        raise ReferenceProblem(error.lineno, f"not valid JSON: {error.msg}") from None
    except ReferenceProblem:
        raise
    except ValueError as error:  # a key given twice (`_object`)
        raise ReferenceProblem(line_of(position), f"not valid CSL-JSON: {error}") from None
    except RecursionError:  # the reader's own stack: no item of a reference nests that deep
        raise ReferenceProblem(line_of(position), "an item nested too deeply to read") from None
    if text[position + 1:].strip():
        raise ReferenceProblem(line_of(position + 1), "not valid JSON: text after the closing ']'")
    return items


def _entry(item: tuple[int, dict]) -> Entry:
    line, values = item

    def text(name: str) -> str:
        value = values.get(name)
        if isinstance(value, list):  # container-title and ISSN are lists in some exports
            value = value[0] if value else ""
        if isinstance(value, dict | list):
            raise ReferenceProblem(line, f"item {values.get('id', '')!r}: {name} is not text")
        return _text(value)

    parts = _date_parts(values.get("issued"), line)
    custom = values.get("custom") if isinstance(values.get("custom"), dict) else {}
    # sitegen's own export keeps a record's publication types (an erratum, a retraction notice) in custom: read back
    # as they were, so a notice stays one.
    written = custom.get("publication_types")
    kinds = [kind.strip() for kind in (written if isinstance(written, list) else [])
             if isinstance(kind, str) and kind.strip() and ";" not in kind]
    issn = values.get("ISSN")
    keyword = values.get("keyword")
    read = fields({
        "ENTRYTYPE": ENTRY_TYPES.get(text("type"), "misc"),
        "publication_types": "; ".join(kinds),
        "author": author_list(_name(name, line) for name in _list(values.get("author"), "author", line)),
        "title": text("title"),
        "year": parts[0] if parts else "",
        "month": parts[1] if len(parts) > 1 else "",
        "date": iso_date(parts),
        "journal": text("container-title"),
        "volume": text("volume"),
        "number": text("issue"),
        "pages": text("page"),
        "doi": text("DOI"),
        "abstract": text("abstract"),
        "pmid": text("PMID"),
        "pmcid": text("PMCID"),
        "openalex": _text(custom.get("openalex")),
        "arxiv": _text(custom.get("arxiv")),
        "url": text("URL"),
        "issn": issns(issn if isinstance(issn, list) else [_text(issn)]),
        "keywords": joined(keyword) if isinstance(keyword, list) else keywords(_text(keyword)),
        "language": text("language"),
        "publisher": text("publisher"),
        "note": text("note"),
        "retracted": "yes" if custom.get("retracted") is True else "",
        # where sitegen's own export keeps what a source said of the work's access
        "open_access": {True: "yes", False: "no"}.get(custom.get("open_access"), ""),
        "license": _text(custom.get("license")) if isinstance(custom.get("license"), str) else "",
        "fulltext_url": _text(custom.get("fulltext_url")) if isinstance(custom.get("fulltext_url"), str) else "",
        "type": text("type"),
        # the notices sitegen's export lists against the work (a retraction, a correction), as JSON: checked on import
        "updates": json.dumps(custom["updates"], ensure_ascii=False) if custom.get("updates") else "",
        # and, for a notice, the works it is about (a retraction notice's retracted article): checked on import too
        "notice_of": json.dumps(custom["notice_of"], ensure_ascii=False) if custom.get("notice_of") else "",
        # and the reinstatements it lists, which lift a retraction dated no later (a notice's, as its date says)
        "reinstatements": json.dumps(custom["reinstatements"], ensure_ascii=False) if custom.get("reinstatements") else "",
    })
    # JSON carries an abstract's line breaks (its paragraphs), which `fields` makes spaces of: kept, as a records
    # CSV's cell keeps them, so that sitegen's CSL-JSON export of a record gives back its abstract
    read["abstract"] = text("abstract")
    return Entry("", read, line)


def _text(value: Any) -> str:
    return "" if value is None or isinstance(value, bool) else str(value).strip()


def _list(value: Any, name: str, line: int) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ReferenceProblem(line, f"{name} is not a list of names")
    return value


NAME_PARTS = ("literal", "family", "given", "suffix", "non-dropping-particle", "dropping-particle")


def _name(name: Any, line: int) -> str:
    """An author as BibTeX writes one; "" for a name object with no name in it."""
    if not isinstance(name, dict):
        raise ReferenceProblem(line, f"an author is not a name object: {name!r}")
    for part in NAME_PARTS:
        if isinstance(name.get(part), bool | dict | list):
            raise ReferenceProblem(line, f"an author's {part} is not text: {name[part]!r}")
    if literal := _text(name.get("literal")):
        return f"{{{literal}}}"
    family = " ".join(part for part in (_text(name.get("non-dropping-particle")), _text(name.get("family"))) if part)
    # A dropping particle goes with the given name ("Beethoven, Ludwig van"), as CSL sorts and shows it.
    given = " ".join(part for part in (_text(name.get("given")), _text(name.get("dropping-particle"))) if part)
    # BibTeX's "Family, Jr., Given" keeps the suffix a part of its own
    if not family:
        return f"{{{given}}}" if given else ""
    suffix = _text(name.get("suffix"))
    if not given and not suffix:
        return f"{family},"  # a family name alone, kept whole ("van der Berg" alone would be split)
    if not given:
        return f"{family}, {suffix},"  # "von Last, Jr, First" with no First: "Doe, Jr." would read as one name
    return ", ".join(part for part in (family, suffix, given) if part)


def _date_parts(issued: Any, line: int) -> list[str]:
    """Year, month and day of a CSL date as written ({"date-parts": [[2020, 5]]}, or "raw"/"literal")."""
    if issued is None:
        return []
    if not isinstance(issued, dict):
        raise ReferenceProblem(line, f"issued is not a CSL date: {issued!r}")
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list):
        return [_text(part) for part in parts[0]]
    written = _text(issued.get("raw") or issued.get("literal"))
    year = FOUR_DIGITS.search(written)
    return [year.group()] if year else []
