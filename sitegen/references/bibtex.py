"""BibTeX files as entries, read with bibtexparser v2.

An entry's ID is its key. LaTeX is decoded ("Caf{\\'e}" reads "Café") unless a value holds a
bare % or & (see BARE_SPECIAL). Authors are written "Family, Given and Family2, Given2" whichever
way the file has them ("von" parts stay with the family name). Field names are read case-insensitively; "issue" and "booktitle" are read as
"number" and "journal" when those are missing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

import bibtexparser
from bibtexparser.library import Library
from bibtexparser.middlewares.names import InvalidNameError, parse_single_name_into_parts, split_multiple_persons_names
from bibtexparser.model import DuplicateBlockKeyBlock, DuplicateFieldKeyBlock
from bibtexparser.model import Entry as BibEntry
from pylatexenc.latex2text import LatexNodes2Text

from sitegen.records.entry import ALIASES, Entry
from sitegen.references.problems import ReferenceProblem, checked, four_digit_year

FIELDS = ("author", "title", "year", "journal", "volume", "number", "pages", "doi", "abstract")
LATEX = LatexNodes2Text(math_mode="verbatim")
# A LaTeX writer escapes % and & (\% and \&); a value with them bare was written as plain text by
# its exporter (Crossref abstracts with "4.6%", Web of Science titles with "&apos;"), and reading
# it as LaTeX would drop everything after the % as a comment.
BARE_SPECIAL = re.compile(r"(?<!\\)[%&]")
LATEX_MARKUP = re.compile(r"[\\$~]|--|``|''")


def read_bibtex(text: str) -> list[Entry]:
    """The entries of a BibTeX file; ReferenceProblem names the line of the first block that does not parse."""
    with _quiet_parser():
        library = bibtexparser.parse_string(text)
    if library.failed_blocks:
        raise _problem(library)
    if not library.entries:
        raise ReferenceProblem(1, "no BibTeX entry (an entry starts with '@', as in '@article{key,')")
    return list(checked(_entry(entry) for entry in library.entries))


@contextmanager
def _quiet_parser() -> Iterator[None]:
    """bibtexparser logs each block it gives up on to stderr; the reader reports the first itself, with
    its line, so the library's own log would only repeat it in other words."""
    logger = logging.getLogger("bibtexparser")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _problem(library: Library) -> ReferenceProblem:
    block = min(library.failed_blocks, key=lambda failed: failed.start_line)
    line = block.start_line + 1  # bibtexparser counts lines from 0
    if isinstance(block, DuplicateBlockKeyBlock):
        first = library.entries_dict[block.key].start_line + 1
        return ReferenceProblem(line, f"ID {block.key!r} was already used on line {first}")
    if isinstance(block, DuplicateFieldKeyBlock):
        key = min(block.duplicate_keys)
        first, again = [field.start_line + 1 for field in block.ignore_error_block.fields if field.key == key][:2]
        return ReferenceProblem(again, f"field {key!r} is given twice in entry "
                                       f"{block.ignore_error_block.key!r} (first on line {first})")
    # A block the splitter gave up on says why in abort_reason; its str() is empty.
    reason = " ".join(str(getattr(block.error, "abort_reason", "") or block.error or "").split())
    return ReferenceProblem(line, f"not valid BibTeX: {reason or 'it does not parse'}")


def _entry(entry: BibEntry) -> Entry:
    values: dict[str, str] = {}
    for field in entry.fields:
        name = field.key.lower()
        raw = str(field.value)
        value = _authors(raw) if name == "author" else " ".join(_decoded(raw).split())
        if name == "year":
            four_digit_year(value, field.start_line + 1)
        values.setdefault(name, value)
    for alias, name in ALIASES.items():
        if alias in values:
            values.setdefault(name, values[alias])
    fields = {"ID": entry.key.strip(), "ENTRYTYPE": entry.entry_type.lower(),
              **{name: values.get(name, "") for name in FIELDS}}
    return Entry(fields["ID"], fields, entry.start_line + 1)


def _decoded(value: str) -> str:
    if BARE_SPECIAL.search(value):
        return value
    # Decoding takes milliseconds a value; without macros, math or ligatures it would only drop braces.
    if not LATEX_MARKUP.search(value):
        return value.replace("{", "").replace("}", "")
    return LATEX.latex_to_text(value)


def _authors(value: str) -> str:
    """BibTeX's "von Last, Jr, First" for each name, joined by "and"; a name BibTeX cannot split as written."""
    written = []
    for person in split_multiple_persons_names(value):
        try:
            name = parse_single_name_into_parts(person)
        except InvalidNameError:  # "Smith, Maria," (real exports have them): kept as written
            written.append(" ".join(_decoded(person).split()))
            continue
        parts = (" ".join([*name.von, *name.last]), " ".join(name.jr), " ".join(name.first))
        written.append(", ".join(" ".join(_decoded(part).split()) for part in parts if part))
    return " and ".join(written)
