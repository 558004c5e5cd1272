"""Downloads offered on the site: records as RIS, BibTeX, CSL-JSON and CSV.

Pure functions, records in, text out. Each format carries what a reference
manager reads from it: authors as family and given names, a name a source gave
as one field (an organisation, CSL's `literal`) kept whole, every identifier in
the field that format's readers take it from, and one citation key per record
shared by all formats (BibTeX key, RIS ID, CSL `citation-key`).

Exports are read by spreadsheets, reference managers and LaTeX, so they are
hardened: no line of a CSV cell can start a formula and no CSV cell can break a
row; no RIS value can carry a line break that would smuggle in a tag of its own;
no BibTeX value can close its braces early, open an entry with `@`, or run a
LaTeX command.

A review's downloads hold every record in every format, so each writer does the
least work per record it can (issue 14: 100,000 records): text with nothing to
escape is found by one quick scan and left as it is, and nothing is converted
twice.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from itertools import chain

from pydantic import TypeAdapter

from sitegen.records.ids import arxiv_address
from sitegen.records.model import CslName, Record
from sitegen.records.names import split_name
from sitegen.records.notices import NOTICE_TYPES
from sitegen.records.pages import first_and_last
from sitegen.references.fields import (
    RETRACTED,
    TYPES_STATEMENT,
    braced_name,
    iso_date,
    joined_statements,
    notice_of_statement,
    update_statement,
    version_statement,
)

# The records CSV's columns and formula guard are the CSV reader's too, which reads the download back.
from sitegen.references.table import FORMULA_STARTS, GUARDED_LINE_START
from sitegen.references.table import SITEGEN_COLUMNS as CSV_COLUMNS

# The start of the cell and of every line inside it, where that line starts a formula (or apostrophes before one).
_FORMULA_LINE_START = re.compile(GUARDED_LINE_START)
_GUARDED_STARTS = frozenset((*FORMULA_STARTS, "'"))


def safe_cell(value: str) -> str:
    """Neutralise every line of a cell a spreadsheet would evaluate (OWASP CSV injection guidance).

    A spreadsheet that splits a cell at a line break reads each line as a cell of its own,
    so the prefix goes before each line that starts a formula, not only the first.
    """
    # A line break is no printable character, so a printable value is one line: only its start can need the prefix.
    if value.isprintable() and value[:1] not in _GUARDED_STARTS:
        return value
    return _FORMULA_LINE_START.sub("'", value)


@dataclass(frozen=True)
class Span:
    """Where the records written stand in their file: the whole file's records (as `sitegen export` writes them), or
    a part of them, as the site writes its downloads (a part a few hundred records, `site.downloads`), after other
    records (so without the file's header or opening, and a separator first) or before others (without its closing)."""

    after_others: bool = False
    before_others: bool = False


WHOLE = Span()


def write_csv(header: list[str], rows: Iterable[list[str]]) -> str:
    """CSV for spreadsheets: every cell neutralised and quoted (see `csv_lines`)."""
    return "".join(csv_lines(header, rows))


def csv_lines(header: list[str], rows: Iterable[list[str]]) -> Iterator[str]:
    """The lines of a CSV file for spreadsheets: every cell neutralised and quoted.

    Quoting every cell keeps each line break inside its cell, whatever the break: the csv
    module quotes only the ones it writes itself, so a lone CR or U+2028 would start a row.
    Written as the csv module writes with QUOTE_ALL (each cell in quotes, a quote doubled, an
    empty row an empty line), which goes char by char, five times slower than str.replace.
    """
    return map(_csv_row, chain([header], rows))


def _csv_row(row: list[str]) -> str:
    return _csv_line(row) if row else "\n"


def _csv_line(row: list[str]) -> str:
    # Most rows need neither the formula guard nor a quote doubled: a few calls over the whole row, in C, tell,
    # where a call or two per cell cost more than the writing (issue 14). A printable row breaks no line
    # (LINE_BREAK's characters are unprintable), so only the start of a cell can need the guard.
    body = '","'.join(row)
    # When the body's quotes are the separators' alone (no cell holds one), a cell after the first starts right after
    # a quote, and a quote is followed by a guarded start only there: one search finds every such cell.
    if printable(body) and body[:1] not in _GUARDED_STARTS:
        if body.count('"') == 2 * len(row) - 2:
            if not _GUARDED_AFTER_QUOTE.search(body):
                return f'"{body}"\n'
        else:  # a quote in a cell (an abstract's): the cells apart by a character none holds, being unprintable
            apart = _UNIT_SEPARATOR.join(row)
            if not _GUARDED_AFTER_SEPARATOR.search(apart):
                return '"' + apart.replace('"', '""').replace(_UNIT_SEPARATOR, '","') + '"\n'
    return '"' + '","'.join([safe_cell(cell).replace('"', '""') for cell in row]) + '"\n'


_GUARDED_AFTER_QUOTE = re.compile(f'"[{re.escape("".join(_GUARDED_STARTS))}]')
_UNIT_SEPARATOR = "\x1f"
_GUARDED_AFTER_SEPARATOR = re.compile(f'{_UNIT_SEPARATOR}[{re.escape("".join(_GUARDED_STARTS))}]')


def printable(text: str) -> bool:
    """`text.isprintable()`, quicker for long ASCII text (a row with its abstract): ASCII's printable characters are
    " " to "~", deleted from its bytes in one pass, where isprintable looks each character up in Unicode's tables
    (1.3 µs for 3,000 characters against 7). A short text's bytes would cost more to make than its look-ups."""
    if len(text) > _LONG and text.isascii():
        return not text.encode("ascii").translate(None, _PRINTABLE_ASCII)
    return text.isprintable()


_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))


def _joined(parts: Iterable[str], separator: str, span: Span = WHOLE) -> Iterator[str]:
    """`separator.join(parts)`, a part at a time: a download of 100,000 records is never one string (with the
    separator before the first part too when it follows others)."""
    for index, part in enumerate(parts):
        yield part if index == 0 and not span.after_others else separator + part


def one_line(value: str) -> str:
    """Every run of white space, line breaks included, as one space; none at either end.

    str.split() splits at each character re's \\s matches (str.isspace), every LINE_BREAK among them.
    """
    if "  " not in value and value[:1] != " " and value[-1:] != " " and (
            # Every white-space character but the space is unprintable (tests/test_exports_scale.py), so a
            # printable value holds no other: isprintable() tells in one call, where a short value's 25 scans for
            # _OTHER_SPACES would cost more in calls than in scanning. A long value's scans cost less.
            not _holds_any(value, _ASCII_OTHER_SPACES if value.isascii() else _OTHER_SPACES) if len(value) > _LONG
            else value.isprintable()):
        return value
    return " ".join(value.split())


# Text longer than this (an abstract) is looked over for what there is to change before it is changed: a scan
# for each character, in C, is many times quicker than splitting the text into words or matching a regex.
_LONG = 200
# Every white-space character but the space; none lies above U+3000, the ideographic space.
_OTHER_SPACES = tuple(char for char in map(chr, range(0x3001)) if char.isspace() and char != " ")
# Those an ASCII text can hold (isascii() is no scan: a string knows whether it is ASCII).
_ASCII_OTHER_SPACES = tuple(char for char in _OTHER_SPACES if char.isascii())


def _holds_any(text: str, characters: Iterable[str]) -> bool:
    return any(map(text.__contains__, characters))


def page_range(record: Record) -> tuple[str, str]:
    """The record's first and last page ("" when not given): see `records.pages.first_and_last`."""
    return first_and_last(record.page)


def authors(record: Record) -> list[CslName]:
    """The record's authors as RIS, BibTeX and the records CSV write them (see `one_field_name`)."""
    return [one_field_name(name) if name.literal else name for name in record.author]


def one_field_name(name: CslName) -> CslName:
    """A name a source gave as one field (CSL's literal: Crossref's organisation "HEC Montréal") as RIS, BibTeX
    and the records CSV keep it whole.

    These formats have no literal of their own. An organisation's name, or a word alone, stays a literal: written
    as it is, their readers keep it so. A name of words that reads like a person's ("HEC Montréal") is written as
    those formats write a one-field name, a family name alone ("HEC Montréal," in RIS, braced in BibTeX), which
    their readers keep whole: as it is, it was read as the given name "HEC" and the family name "Montréal". One
    written with a comma ("Doe, Jane") says where it splits, and is split so.
    """
    read = split_name(name.literal or "")
    if read.literal:
        return name
    return read if "," in (name.literal or "") else CslName(family=name.literal)


def written_name(name: CslName) -> str:
    """A name as RIS and the records CSV write it: "Family, Given" ("Family, Given, Suffix"), an organisation
    whole, and a family name with no given names as "Family,", which readers keep whole (Zotero as a one-field
    name, EndNote as it writes an organisation, sitegen as the family name): "van der Berg" or "Garcia Marquez"
    alone would be read as a given name and a family name. A name holding ";" is braced (`fields.braced_name`): an
    organisation's "Group A; Group B" was read back as two. With a suffix, the given names are left empty in
    their place ("Family, , Suffix"): "Doe, Jr." reads as one name, as "Martin Luther King, Jr." does."""
    if name.family and not name.given:
        return f"{name.family}, , {name.suffix}" if name.suffix else f"{name.family},"
    if name.family and name.given and not name.suffix and not name.literal:  # most names, as display() writes
        return f"{name.family}, {name.given}"                                # them, without its calls
    return braced_name(name.display())


def authors_text(record: Record) -> str:
    return "; ".join(map(written_name, authors(record)))


def _types_text(types: list[str]) -> str:
    # The types but those holding ";" (most lists hold none: a ";" each separator's alone), joined by "; ".
    text = "; ".join(types)
    return text if text.count(";") == len(types) - 1 else "; ".join([kind for kind in types if ";" not in kind])


def notice_types(record: Record) -> list[str]:
    """A notice's publication types ("journal-article", "retraction-notice"), which say it is no study; [] for
    any other record, whose types are the review's provenance, written by CSL-JSON and the CSV alone."""
    types = record.custom.publication_types
    if not types:  # most records
        return []
    is_notice = record.custom.notice_of or any(map(_is_notice_type, types))
    return [kind for kind in types if ";" not in kind] if is_notice else []


# A type's look-up, kept for the few types records hold ("article", "letter"): no Python call for each record's.
@lru_cache(maxsize=1024)
def _is_notice_type(kind: str) -> bool:
    return kind.strip().lower() in NOTICE_TYPES


def updates_statements(record: Record) -> list[str]:
    """The notices against the work, then its reinstatements, each in words with its identifiers and, where known,
    its date (and a reinstatement the retraction it lifted): read back without the dates, a retraction notice beside
    the work would retract it again (see `references.fields`). Then the other versions of the study its source
    states, which a review importing the file links as the one it came from did."""
    custom = record.custom
    if not custom.updates and not custom.reinstatements and not custom.stated_versions:  # most records: none
        return []
    return [*(update_statement(update.kind, update.doi, update.pmid, update.date) for update in custom.updates),
            *(update_statement("reinstatement", reinstatement.doi, reinstatement.pmid, reinstatement.date, reinstatement.retracted_on)
              for reinstatement in custom.reinstatements),
            *(version_statement(version.doi, version.pmid) for version in custom.stated_versions)]


def notice_of_statements(record: Record) -> list[str]:
    """For a notice, the works it is about, each in words with its DOI or PMID and the notice's date where known (see
    `references.fields`)."""
    return [notice_of_statement(work.kind, work.doi, work.pmid, work.date) for work in record.custom.notice_of]


def standing_statements(record: Record) -> list[str]:
    """What the record is when it is a notice, whether it is retracted, and the notices listed against it or the
    works it is about: as RIS's notes and BibTeX's note say them, which their readers show and sitegen reads."""
    types = notice_types(record)
    return [*([TYPES_STATEMENT + "; ".join(types)] if types else []), *([RETRACTED] if record.custom.retracted else []),
            *updates_statements(record), *notice_of_statements(record)]


# --------------------------------------------------------------------------- citation keys

_KEY_STOPWORDS = frozenset({"a", "an", "the", "of", "on", "in", "and", "for", "to", "with", "at", "by", "from", "is",
                            "are", "does", "do", "its", "into"})


_NOT_KEY_CHARACTER = re.compile("[^a-z0-9]")
# A word of a title: what lies between spaces, dashes, slashes and colons.
_KEY_WORD = re.compile(r"[^\s\-\u2010-\u2015/:]+")


def _ascii_word(text: str) -> str:
    if text.isascii():  # NFKD changes no ASCII character
        folded = text.lower()
        return folded if folded.isalnum() else _NOT_KEY_CHARACTER.sub("", folded)
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _NOT_KEY_CHARACTER.sub("", folded.lower())


def _first_word(text: str) -> str:
    first = _KEY_WORD.match(text)  # most titles start with their first word, which does: one call tells
    if first is not None and (word := _ascii_word(first.group())) and word not in _KEY_STOPWORDS:
        return word
    for match in _KEY_WORD.finditer(text):  # word by word: the first or second mostly does
        word = _ascii_word(match.group())
        if word and word not in _KEY_STOPWORDS:
            return word
    return ""


def _key_base(record: Record) -> str:
    """"krab2008simvastatin": first author's family name (or an organisation's first word), year, first title word.

    The name as RIS and BibTeX write it, whose readers give back a one-field name as a family name alone: so the
    record imported from its export has the same key."""
    first = record.author[0] if record.author else None
    if first is not None and first.literal:  # as `authors` writes it; the others are not made
        first = one_field_name(first)
    author = (_ascii_word(first.family) if first and first.family else _first_word(first.literal or "") if first
              else "")
    return f"{author[:24] or 'anon'}{record.year or 'nd'}{_first_word(record.title)[:20] or 'untitled'}"


def citation_keys(records: Iterable[Record]) -> dict[str, str]:
    """Record id -> a BibTeX-safe key, unique among `records`.

    `records` come in the order the review first saw them: the first record with a given
    base keeps it, later ones get "-2", "-3"... A living review only ever adds records after
    those it has, so a key once published never moves to another record.
    """
    keys: dict[str, str] = {}
    given: dict[str, int] = {}  # a base: how many records have a key of it
    for record in records:
        base = _key_base(record)
        # Counted, not searched for: a base is never of the form "x-n" ([a-z0-9] only), so no key of one base is
        # another's, and the next free key of a base is its count. Trying "-2", "-3"… from the start again for each
        # record was quadratic: 20,000 records of one author, year and first word took a minute, at every build.
        given[base] = number = given.get(base, 0) + 1
        keys[record.id] = base if number == 1 else f"{base}-{number}"
    return keys


# --------------------------------------------------------------------------- CSV


def records_csv(records: list[Record], status: dict[str, tuple[str, str]], keys: dict[str, str] | None = None) -> str:
    """`status` maps record id to (title/abstract outcome, full-text outcome)."""
    return "".join(records_csv_parts(records, status, keys))


def records_csv_parts(records: list[Record], status: dict[str, tuple[str, str]],
                      keys: dict[str, str] | None = None, span: Span = WHOLE) -> Iterator[str]:
    keys = keys if keys is not None else citation_keys(records)

    def row(record: Record) -> list[str]:
        custom = record.custom
        title_abstract, full_text = status.get(record.id, ("", ""))
        issued = record.issued
        date = tuple(issued.date_parts[0]) if issued and issued.date_parts else ()  # as _date_parts, and year
        types = custom.publication_types
        # The identifiers as `Record.identifiers` gives them, without making its dictionary for each record; the
        # statements of most records, which have none, without the calls that find there are none.
        return [record.id, record.title, authors_text(record), str(date[0]) if date and date[0] else "",
                record.container_title or "", record.volume or "", record.issue or "", record.page or "",
                record.DOI or "", record.PMID or "", record.PMCID or "", custom.openalex or "",
                custom.arxiv or "", record.URL or "", "yes" if custom.retracted else "no",
                title_abstract, full_text, record.abstract or "", keys[record.id], record.type, _iso_date(date),
                _types_text(types) if types else "",
                (joined_statements(updates_statements(record))
                 if custom.updates or custom.reinstatements or custom.stated_versions else ""),
                joined_statements(notice_of_statements(record)) if custom.notice_of else ""]

    rows = map(row, records)
    return map(_csv_row, rows) if span.after_others else csv_lines(CSV_COLUMNS, rows)


# --------------------------------------------------------------------------- RIS

OPENALEX_ADDRESS = "https://openalex.org/"
# CSL types as RIS names them (the RIS specification's types, as Zotero writes and reads them), each read back as
# itself by sitegen's RIS reader. A preprint (CSL's "article", and "preprint" as some files write it) is RIS's
# unpublished work, UNPB, as EndNote and Mendeley read it; a web page is ELEC, which Zotero writes and reads for one
# and EndNote reads as its Web Page.
RIS_TYPES = {"article-journal": "JOUR", "chapter": "CHAP", "book": "BOOK", "thesis": "THES",
             "paper-conference": "CPAPER", "report": "RPRT", "dataset": "DATA", "article": "UNPB", "preprint": "UNPB",
             "manuscript": "MANSCPT", "webpage": "ELEC", "software": "COMP", "patent": "PAT", "standard": "STAND",
             "article-magazine": "MGZN", "article-newspaper": "NEWS", "entry-encyclopedia": "ENCYC",
             "entry-dictionary": "DICT", "post-weblog": "BLOG", "personal_communication": "PCOMM", "legal_case": "CASE",
             "motion_picture": "MPCT", "musical_score": "MUSIC",
             # RIS has no type of their own: the closest, read back as that type (README: export)
             "entry": "ENCYC", "post": "ELEC", "review": "JOUR", "review-book": "JOUR"}
# Types not named here are GEN, RIS's generic, read back as CSL's "article".


def records_ris(records: list[Record], keys: dict[str, str] | None = None) -> str:
    """RIS as EndNote, Zotero and Mendeley read it.

    The journal goes in T2 (Zotero's and EndNote's journal for JOUR) and JF (the RIS
    specification's full journal name). RIS has no tag of its own for PubMed ids: the PMID goes
    in AN, the accession number, where EndNote's PubMed import puts it, and the PMCID in C2,
    EndNote's PMCID field for journal articles; the PMID goes in a note too, as "PMID: n", as Zotero
    writes it, because an accession number alone is no PMID to a reader that does not know where the
    record came from (Embase's and CINAHL's are numbers too). Nor has RIS a tag for arXiv or OpenAlex ids: they go
    as their resolver addresses in further UR lines, after the record's own URL (Zotero keeps the
    first UR as the URL and the others as notes; EndNote keeps them all).

    Each record is a "TAG  - value" line per value, given values only, then "ER  - " and an empty
    line; no "1." line before it, which some reference managers reject. RIS is line-based: a line break
    inside a value would start a new tag (e.g. "ER  -"), so every value is written on one line.
    """
    return "".join(records_ris_parts(records, keys))


def records_ris_parts(records: list[Record], keys: dict[str, str] | None = None, span: Span = WHOLE) -> Iterator[str]:
    keys = keys if keys is not None else citation_keys(records)
    return _joined(map(partial(_ris_entry, keys=keys), records), "\n", span)


def _ris_entry(record: Record, keys: dict[str, str]) -> str:
    ris_type = RIS_TYPES.get(record.type, "GEN")
    # Each line after the ID as the line break and tag before it, then the value, which is written on one line: most
    # records' values are so already, which one look over them all tells (`_one_line_each`), where a call of one_line
    # for each cost a third of the writing (issue 14).
    parts = ["\nTI  - ", record.title]
    for name in authors(record):
        parts += "\nAU  - ", written_name(name)
    if record.issued:
        date = record.issued.date_parts[0]
        if date and date[0]:
            parts += "\nPY  - ", str(date[0])
        if len(date) > 1:
            parts += "\nDA  - ", f"{'/'.join(f'{part:02d}' for part in date)}/"
    if record.container_title:
        parts += "\nT2  - ", record.container_title
        if ris_type == "JOUR":
            parts += "\nJF  - ", record.container_title
    first_page, last_page = page_range(record)
    for tag, value in (("\nVL  - ", record.volume), ("\nIS  - ", record.issue), ("\nSP  - ", first_page),
                       ("\nEP  - ", last_page), ("\nDO  - ", record.DOI), ("\nAN  - ", record.PMID),
                       ("\nC2  - ", record.PMCID), ("\nAB  - ", record.abstract)):
        if value:
            parts += tag, value
    custom = record.custom
    for url in (record.URL, custom.arxiv and arxiv_address(custom.arxiv),
                custom.openalex and f"{OPENALEX_ADDRESS}{custom.openalex}"):
        if url:
            parts += "\nUR  - ", url
    if types := notice_types(record):  # a notice's type of work, as EndNote shows M3 (and sitegen reads it)
        parts += "\nM3  - ", "; ".join(types)
    if record.PMID:
        parts += "\nN1  - ", f"PMID: {record.PMID}"
    if custom.retracted:
        parts += "\nN1  - ", "RETRACTED"
    if custom.updates or custom.reinstatements or custom.stated_versions or custom.notice_of:
        for statement in (*updates_statements(record), *notice_of_statements(record)):
            parts += "\nN1  - ", statement
    if not _one_line_each(parts[1::2]):
        parts[1::2] = map(one_line, parts[1::2])
    return f"TY  - {ris_type}\nID  - {keys[record.id]}{''.join(parts)}\nER  - \n"


def _one_line_each(values: list[str]) -> bool:
    """Whether every value is one line as `one_line` writes it (False when unsure): joined by spaces, an end of one
    with white space, or a run of it inside one, is two spaces together or at an end of the whole; white space
    other than the space is unprintable (tests/test_exports_scale.py). Checked in a few calls, in C."""
    text = " ".join(values)
    return printable(text) and "  " not in text and text[:1] != " " and text[-1:] != " "


# --------------------------------------------------------------------------- BibTeX

# CSL types as BibTeX entry types, each read back as itself by sitegen's BibTeX reader. A preprint is a @misc, as
# arXiv and BibTeX's own advice write one (with its eprint when it is on arXiv); the types classic BibTeX has none
# for take biblatex's (@online for a web page, @dataset, @software, @patent, @inreference for an encyclopedia's
# entry, @movie, @jurisdiction for a legal case), which biber, JabRef, Zotero and Pandoc read as those, and a
# classic style prints as a @misc.
BIBTEX_TYPES = {"article-journal": "article", "chapter": "incollection", "book": "book", "thesis": "phdthesis",
                "paper-conference": "inproceedings", "report": "techreport", "dataset": "dataset", "article": "misc",
                "preprint": "misc", "manuscript": "unpublished", "webpage": "online", "software": "software",
                "patent": "patent", "standard": "standard", "entry-encyclopedia": "inreference", "motion_picture": "movie",
                "legal_case": "jurisdiction",
                # BibTeX has no type of their own: the closest, read back as that type (README: export)
                "entry": "inreference", "entry-dictionary": "inreference", "post": "online", "post-weblog": "online",
                "article-magazine": "article", "article-newspaper": "article", "review": "article",
                "review-book": "article"}
# Types not named here are @misc, read back as CSL's "article".
# Where each entry type names what a record appeared in: a book in its series; a type with no such field (a thesis,
# a report, a @misc) in howpublished. sitegen's BibTeX reader reads each back.
CONTAINER_FIELDS = {"article": "journal", "incollection": "booktitle", "inproceedings": "booktitle", "book": "series",
                    "inreference": "booktitle"}
# Every character LaTeX or BibTeX treats specially, written so that braces stay balanced:
# BibTeX counts a brace even after a backslash, so "\{" would end a field early.
_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\textbraceleft{}", "}": r"\textbraceright{}",
                   "$": r"\$", "&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_",
                   "^": r"\textasciicircum{}", "~": r"\textasciitilde{}"}
_LATEX_SPECIAL = re.compile("[" + re.escape("".join(_LATEX_SPECIALS)) + "]")
# Pairs of characters LaTeX (and so the readers of BibTeX) sets as one other character: `` and '' as curly
# quotes (an arXiv abstract's ``Holy Trinity''), ?` and !` as ¿ and ¡. An empty group between the two keeps
# them the characters they are. ("--" and "---" are read as written.)
_LIGATURES = ("``", "''", "?`", "!`")
_LIGATURE = re.compile(r"(?<=[`?!])(?=`)|(?<=')(?=')")
# BibTeX splits an author list at "and" outside braces, in any case.
_AND = re.compile(r"\band\b", re.IGNORECASE)


def latex_text(value: str) -> str:
    """One line of text as a BibTeX value shows it, every LaTeX special character escaped.

    "@" needs no escape: inside a braced value it starts nothing.
    """
    if value.isalnum():  # a number, an id ("PMC123"): no white space, no special character; one call tells
        return value
    text = one_line(value)
    if len(text) > _LONG:  # an abstract: a scan for each character, in C, is quicker than a regex's search
        return _substituted(text) if _holds_any(text, _LATEX_SPECIALS) or _holds_any(text, _LIGATURE_MARKS) \
            else text
    return _escaped(text)


def _escaped(text: str) -> str:
    return _substituted(text) if _TO_ESCAPE.search(text) else text  # most short values: one search, no copy


# What `_substituted` changes: a special character, or a ligature's pair (an escape makes no pair, so those of the
# escaped text are the text's own).
_TO_ESCAPE = re.compile(f"{_LATEX_SPECIAL.pattern}|{'|'.join(map(re.escape, _LIGATURES))}")
# A character every ligature's pair holds.
_LIGATURE_MARKS = ("`", "''")
# The escape of each of these holds none of the others, so each can be replaced on its own, in turn. Those of a
# backslash and the braces hold backslashes and braces: a text with any of those is escaped in one pass, by the regex.
_ALONE_SPECIALS = tuple(char for char in _LATEX_SPECIALS if char not in "\\{}")


def _substituted(text: str) -> str:
    """The text with its special characters escaped and its ligatures' pairs broken."""
    if _holds_any(text, "\\{}"):
        text = _LATEX_SPECIAL.sub(_latex_escape, text)
    else:  # str.replace for each character there is ("54%"), where a regex's sub is slow to scan
        for char in _ALONE_SPECIALS:
            if char in text:
                text = text.replace(char, _LATEX_SPECIALS[char])
    return _LIGATURE.sub("{}", text) if _holds_any(text, _LIGATURE_MARKS) else text


def _latex_escape(match: re.Match[str]) -> str:
    return _LATEX_SPECIALS[match.group()]


# A dash followed by another: in BibTeX's pages a run of dashes is a range's, which readers read as one hyphen.
_DASH_BEFORE_DASH = re.compile(r"-(?=-)")


def _bibtex_pages(record: Record) -> str:
    """A range as "first--last"; a page written whole ("ENEURO.0284--16", "1--2--3") with each run of dashes broken
    by "{}", so that it reads back as written, not as a range's one hyphen."""
    first, last = page_range(record)
    if last:
        return f"{latex_text(first)}--{latex_text(last)}"
    text = latex_text(first)
    return _DASH_BEFORE_DASH.sub("-{}", text) if "--" in text else text


def _title(value: str) -> str:
    """The title with the case of acronyms and gene names ("NF1", "mGluR5") kept from styles that lower-case.

    Escaped whole, then split into words: an escape holds no space and no capital letter, so the words are
    the title's own, and one has a capital after its first character exactly when its escape does.
    """
    text = latex_text(value)
    if text.isascii() and not _ASCII_CAPITAL_INSIDE.search(text):  # most titles: one quick scan tells
        return text
    return " ".join(f"{{{word}}}" if _capital_inside(word) else word for word in text.split(" "))


# In ASCII text, whose capitals are A-Z: a capital after another character of its word.
_ASCII_CAPITAL_INSIDE = re.compile("[^ ][A-Z]")


def _capital_inside(word: str) -> bool:
    tail = word[1:]
    # A tail with a lower-case letter and no capital is the common case; islower() finds it in one scan.
    return not tail.islower() and any(map(str.isupper, tail))


def _verbatim(value: str) -> str:
    """A DOI or URL, which biblatex reads verbatim: only what would unbalance the braces is percent-encoded."""
    return one_line(value).replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D")


def _name_part(value: str) -> str:
    # Most name parts ("Izabela", "Grzegorz M.", "Jong-Ho") are words of letters with a space, a dot, a hyphen or an
    # apostrophe between: nothing to change, if they hold no "and" (in any case, as `_AND`'s matches are).
    if (value.isalnum() or _PLAIN_NAME_PART.fullmatch(value)) and "and" not in value.lower():
        return value
    # latex_text's work without its calls, which cost more than the work on a name: a record has many names.
    text = _escaped(" ".join(value.split()))
    if "and" in text.lower():  # _AND's matches are "and" in any case (no other character folds to a, n or d)
        text = _AND.sub(_braced, text)
    return f"{{{text}}}" if "," in text else text


# Words of letters and digits ("_", a word character to re, is LaTeX's special), one apart: by a space, a hyphen, an
# apostrophe or a dot, or a dot before a space or hyphen ("J.-P."); a dot may end it. No white space at either end or
# doubled, no special character, no comma, no ligature's pair: `_name_part` changes none but "and".
_PLAIN_NAME_PART = re.compile(r"[^\W_]+(?:(?:\.?[ \-]|[.'])[^\W_]+)*\.?")


def _braced(match: re.Match[str]) -> str:
    return "{" + match.group() + "}"


def bibtex_name(name: CslName) -> str:
    """BibTeX's "von Last, First" or "von Last, Jr, First"; an organisation braced whole so it is never split."""
    if name.literal:
        return "{" + latex_text(name.literal) + "}"
    family, given = _name_part(name.family or ""), _name_part(name.given) if name.given else ""
    if name.suffix:
        return f"{family}, {_name_part(name.suffix)}, {given}"
    if given:
        return f"{family}, {given}"
    # Without a comma BibTeX reads the capitalised words before the last as given names ("Garcia Marquez" as
    # Marquez, G.): a family name given alone is braced whole, all of it the last name. One starting with a
    # lower-case particle ("van der Berg") is read as BibTeX's "von Last", the family name it is.
    return f"{{{family}}}" if " " in family and not family[:1].islower() else family


def _bibtex_entry(record: Record, key: str) -> str:
    entry_type = BIBTEX_TYPES.get(record.type, "misc")
    custom = record.custom
    fields = (
        ("author", " and ".join([bibtex_name(name) for name in authors(record)])),
        ("title", _title(record.title)),
        (CONTAINER_FIELDS.get(entry_type, "howpublished"),
         record.container_title and latex_text(record.container_title)),
        ("year", str(record.year) if record.year else None),
        # The month for BibTeX styles, and the whole date as biblatex writes one (sitegen reads it back).
        ("month", str(parts[1]) if len(parts := _date_parts(record)) > 1 else None),
        ("date", "-".join(f"{part:02d}" for part in parts) if len(parts) > 1 else None),
        ("volume", record.volume and latex_text(record.volume)),
        ("number", record.issue and latex_text(record.issue)),
        ("pages", _bibtex_pages(record)),
        ("doi", record.DOI and _verbatim(record.DOI)),
        ("pmid", record.PMID and latex_text(record.PMID)),
        ("pmcid", record.PMCID and latex_text(record.PMCID)),
        ("eprint", custom.arxiv and latex_text(custom.arxiv)),
        ("archiveprefix", "arXiv" if custom.arxiv else None),
        # No BibTeX style knows an OpenAlex id; a field a style does not know is passed over, and read back.
        ("openalex", custom.openalex and latex_text(custom.openalex)),
        ("url", record.URL and _verbatim(record.URL)),
        ("abstract", record.abstract and latex_text(record.abstract)),
        # What a notice is, and a work's retraction and notices, in words biblatex prints and Zotero keeps
        ("note", latex_text(joined_statements(standing_statements(record))) or None
         if custom.publication_types or custom.retracted or custom.updates or custom.reinstatements
         or custom.stated_versions or custom.notice_of else None),  # most records state none of those
    )
    body = "".join([f"  {name} = {{{value}}},\n" for name, value in fields if value])
    return f"@{entry_type}{{{key},\n{body}}}\n"


# Records share few dates (at most one a day), each written as an ISO date many times over: once is enough.
@cache
def _iso_date(parts: tuple[int, ...]) -> str:
    return iso_date(parts)


def _date_parts(record: Record) -> list[int]:
    return list(record.issued.date_parts[0]) if record.issued and record.issued.date_parts else []


def records_bibtex(records: list[Record], keys: dict[str, str] | None = None) -> str:
    """BibTeX (UTF-8, as biber, JabRef, Zotero and modern BibTeX read it), one entry per record."""
    return "".join(records_bibtex_parts(records, keys))


def records_bibtex_parts(records: list[Record], keys: dict[str, str] | None = None,
                         span: Span = WHOLE) -> Iterator[str]:
    keys = keys if keys is not None else citation_keys(records)
    return _joined((_bibtex_entry(record, keys[record.id]) for record in records), "\n", span)


# --------------------------------------------------------------------------- CSL-JSON


def records_csl_json(records: list[Record], keys: dict[str, str] | None = None) -> str:
    """CSL-JSON as citation processors and Zotero read it: names as the record holds them, the citation key kept.

    sitegen's own metadata stays under CSL's `custom`, which the CSL schema keeps for such data.
    Written as sitegen.review.write.pretty_json writes the list of records' data (2-space indent,
    UTF-8 unescaped), by pydantic's serialiser (see `records_csl_json_parts`), which is about ten times quicker
    than building its data and encoding that with the json module's indenting encoder.
    """
    return "".join(records_csl_json_parts(records, keys))


def records_csl_json_parts(records: list[Record], keys: dict[str, str] | None = None,
                           span: Span = WHOLE) -> Iterator[str]:
    """The file a record at a time: "[\n  " and the first record's object, then ",\n  " and each other's, then "\n]\n".

    The records are serialised `JSON_BATCH` at a time as a list, indented as the file indents them, and the list cut
    at each object's closing brace: one call of pydantic's serialiser for each record, and the indenting of its
    object again, cost more than the serialising (issue 14)."""
    keys = keys if keys is not None else citation_keys(records)
    if not records:
        yield "[]\n" if span == WHOLE else ""
        return
    for start in range(0, len(records), JSON_BATCH):
        batch = records[start:start + JSON_BATCH]
        listed = _record_list().dump_json(batch, indent=2, by_alias=True, exclude_none=True).decode()
        # "[\n  {\n    …\n  },\n  {\n    …\n  }\n]": a line break inside a value is escaped, and an object inside a
        # record's is indented further, so "\n  }" is each record's closing brace and nothing else. A record's object
        # always has fields.
        pieces = listed.split("\n  }")[:-1]
        if len(pieces) != len(batch):  # not as pydantic writes a list: each record's object serialised on its own
            pieces = [",\n  " + _indented(record.model_dump_json(indent=2, by_alias=True, exclude_none=True)[:-2])
                      for record in batch]
        # the first record of a later batch, or of a part after others, follows another
        pieces[0] = ("," if start or span.after_others else "[") + pieces[0][1:]
        for piece, record in zip(pieces, batch, strict=True):
            yield f'{piece},\n    "citation-key": {_quoted_key(keys[record.id])}\n  }}'
    if not span.before_others:
        yield "\n]\n"


JSON_BATCH = 200  # records serialised together: about half a megabyte at the example review's record sizes


def _indented(text: str) -> str:
    return text.replace("\n", "\n  ")


@cache
def _record_list() -> TypeAdapter[list[Record]]:
    return TypeAdapter(list[Record])


_PLAIN_KEY = re.compile("[a-z0-9-]+")


def _quoted_key(key: str) -> str:
    # A key citation_keys makes ([a-z0-9], "-n") is written as json.dumps writes it, without its call.
    return f'"{key}"' if _PLAIN_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)
