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
from collections.abc import Iterable, Iterator
from typing import Any

from sitegen.records.entry import Entry
from sitegen.records.model import FOUR_DIGITS
from sitegen.references.fields import LISTS, author_list, fields, iso_date, issns, joined, keywords
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


def read_csl_json(text: str | Iterable[str], warnings: list[str] | None = None,
                  skipped: Skipped | None = None) -> list[Entry]:
    """The items of a CSL-JSON file (an array of items, or items one after another: one, or one per line as
    records.jsonl holds them), given whole or in pieces as it is decoded; ReferenceProblem names the line of the
    first malformed one (with `skipped`, each is listed there instead). Each item is read as it ends and let go:
    what is held is the entries."""
    items: list[Entry | ReferenceProblem] = []
    given: list[tuple[str, int]] = []
    for item in _items(text):
        items.extend(each(_entry, [item]))
        given.append((_text(item[1].get("id")), item[0]) if isinstance(item, tuple) else ("", 0))
    if not items:
        raise ReferenceProblem(1, "no CSL-JSON item (the file is an empty array)")
    return checked(named(items, given, "csl", warnings), skipped)


# What a CSL item holds (any of these): an object with none of them and a list of objects is a wrapper.
ITEM_KEYS = frozenset({"id", "type", "title", "author", "editor", "issued", "DOI", "URL", "container-title"})


def _wrapped_list(value: dict) -> str | None:
    """The key of the list of objects `value` holds when it is no item but wraps a list of them."""
    if value.keys() & ITEM_KEYS:
        return None
    return next((key for key, held in value.items()
                 if isinstance(held, list) and held and all(isinstance(item, dict) for item in held)), None)


class _Held:
    """A text read piece by piece (as a file is decoded), held from the item being read on: `text` is what is held,
    and `line_of` numbers its positions as lines of the file, counted on from the position asked before (counted
    from the start for each item, the lines of a file of 15,000 items took six minutes to number)."""

    def __init__(self, text: str | Iterable[str]):
        self.pieces = iter([] if isinstance(text, str) else text)
        self.text, self.ended = (text, True) if isinstance(text, str) else ("", False)
        self.position, self.line = 0, 1  # a position in `text` and its line in the file

    def line_of(self, position: int) -> int:
        if position < self.position:
            return self.line - self.text.count("\n", position, self.position)
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line

    def more(self, start: int) -> int:
        """Let go of the text before `start` and read on, at least as much again as is held from there, so that an
        item read again as it grows (a long string) is read a few times, not once a piece; `start`, now 0."""
        self.line, self.position = self.line_of(start), 0
        read, size, wanted = [self.text[start:]], 0, max(len(self.text) - start, 1)
        for piece in self.pieces:
            read.append(piece)
            size += len(piece)
            if size >= wanted:
                break
        else:
            self.ended = True
        self.text = "".join(read)
        return 0

    def space(self, position: int) -> int:
        """Where the first character at or after `position` that is not whitespace is (the end of `text` at the end
        of the file), reading on as needed: text before `position` may be let go."""
        while (position := SPACE.match(self.text, position).end()) == len(self.text) and not self.ended:
            position = self.more(position)
        return position

    def value(self, position: int) -> tuple[Any, int, int]:
        """The JSON value at `position`, where it starts now and where it ends: read again with more text while the
        text held ends inside it (or right after it, where a number may go on). The file's error when it is not
        JSON, as `raw_decode` of the whole file gives it."""
        while True:
            try:
                value, end = DECODER.raw_decode(self.text, position)
            except json.JSONDecodeError:
                if self.ended:
                    raise
            else:
                if end < len(self.text) or self.ended:
                    return value, position, end
            position = self.more(position)


def _items(text: str | Iterable[str]) -> Iterator[tuple[int, dict] | ReferenceProblem]:
    """Each item with its line, or the problem of one that is not an object, as it is read; ReferenceProblem when
    the file is not JSON (nothing after a syntax error can be read)."""
    held = _Held(text)
    start = position = held.space(0)
    line = held.line_of(position)  # of the item being read
    try:
        if held.text.startswith("{", start):  # items one after another, each read (only the first was, silently)
            while position < len(held.text):
                if not held.text.startswith("{", position):
                    raise ReferenceProblem(line, "not CSL-JSON: text after an item where another item ('{') or the "
                                                 "end of the file should be")
                value, position, end = held.value(position)
                if wrapped := _wrapped_list(value):  # {"items": [...]}, as some services answer
                    raise ReferenceProblem(line, f"an object holding a list of items under {wrapped!r}, not a "
                                                 f"CSL-JSON item: give the list itself ([...])")
                yield line, value
                position = held.space(end)
                line = held.line_of(position)
            return
        if not held.text.startswith("[", start):
            raise ReferenceProblem(line, "not CSL-JSON: expected an array of items ('[') or one item")
        position = held.space(start + 1)
        line = held.line_of(position)
        while not held.text.startswith("]", position):
            value, position, end = held.value(position)
            yield ((line, value) if isinstance(value, dict) else
                   ReferenceProblem(line, f"not a CSL-JSON item: a {type(value).__name__}, not an object"))
            position = held.space(end)
            if held.text.startswith(",", position):
                position = held.space(position + 1)
            elif not held.text.startswith("]", position):
                raise ReferenceProblem(held.line_of(position), "not valid JSON: expected ',' or ']' after an item")
            line = held.line_of(position)
    except json.JSONDecodeError as error:
        raise ReferenceProblem(held.line_of(error.pos), f"not valid JSON: {error.msg}") from None
    except ReferenceProblem:
        raise
    except ValueError as error:  # a key given twice (`_object`)
        raise ReferenceProblem(line, f"not valid CSL-JSON: {error}") from None
    except RecursionError:  # the reader's own stack: no item of a reference nests that deep
        raise ReferenceProblem(line, "an item nested too deeply to read") from None
    after = held.line_of(position + 1)
    if held.space(position + 1) < len(held.text):
        raise ReferenceProblem(after, "not valid JSON: text after the closing ']'")


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
        # the lists sitegen's export keeps under custom (see LISTS: the notices against the work, for a notice the
        # works it is about, the reinstatements, which lift a retraction dated no later, and the other versions of
        # the study its source states), each as JSON: checked on import
        **{name: json.dumps(custom[name], ensure_ascii=False) if custom.get(name) else "" for name in LISTS},
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
