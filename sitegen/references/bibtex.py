"""BibTeX files as entries, read with bibtexparser v2.

An entry's ID is its key. LaTeX is decoded ("Caf{\\'e}" reads "Café") unless a value holds a
bare % or & (see BARE_SPECIAL). Authors are written "Family, Given and Family2, Given2" whichever
way the file has them ("von" parts stay with the family name; a name braced whole, an organisation,
stays braced). Field names are read case-insensitively; "issue" and "booktitle" are read as
"number" and "journal" when those are missing. Besides the benchmark's fields an entry has pmid (Scopus's pubmed_id),
pmcid, arXiv id ("eprint" of an arXiv entry, "arxivid", or a journal naming one), url, issn, keywords, language,
publisher, note, month and database (Scopus's "source").
An entry whose `crossref` names another of the file takes from it where and when it appeared (`INHERITED`; the
parent's title as its booktitle), never the parent's identifiers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

import bibtexparser
from bibtexparser.library import Library
from bibtexparser.middlewares.names import InvalidNameError, parse_single_name_into_parts, split_multiple_persons_names
from bibtexparser.model import DuplicateBlockKeyBlock, DuplicateFieldKeyBlock, ImplicitComment, ParsingFailedBlock
from bibtexparser.model import Entry as BibEntry
from bibtexparser.model import Field as BibField
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

from sitegen.records.entry import ALIASES, Entry
from sitegen.records.names import NAMES_LEFT_OUT, split_name
from sitegen.references.fields import AND, NOTE_PMID, fields, issns, keywords, read_standing, statements
from sitegen.references.problems import ReferenceProblem, Skipped, checked, each, written_year
from sitegen.references.records import CSL_TYPES, PUBLICATION_TYPES
from sitegen.text import counted

# The text-mode commands writers (sitegen's exports among them) use for characters that would otherwise
# unbalance braces or act as commands, read back as those characters (pylatexenc's defaults drop the braces
# and read \textasciicircum as a modifier letter).
_CONTEXT = get_default_latex_context_db()
_CONTEXT.add_context_category("text-mode-specials", prepend=True, macros=[
    MacroTextSpec(name, char) for name, char in (("textbraceleft", "{"), ("textbraceright", "}"),
                                                 ("textbackslash", "\\"), ("textasciicircum", "^"),
                                                 ("textasciitilde", "~"))])
LATEX = LatexNodes2Text(latex_context=_CONTEXT, math_mode="verbatim")
# Inline math, as reference managers write what a title's characters are (Zotero writes β as {$\beta$}),
# is read as the text it shows: $\beta$ -> β, CO$_2$ -> CO2, $^{13}$C -> 13C (sub- and superscripts lose
# their marks, as <sub> and <sup> do in markup). An escaped \$ is a dollar sign, no math.
MATH = LatexNodes2Text(latex_context=_CONTEXT, math_mode="text")
INLINE_MATH = re.compile(r"(?<!\\)\$(?:[^$\\]|\\.)+\$")
MATH_STAND_IN = re.compile("\ue001([0-9]+)\ue002")  # private-use characters, as HYPHEN_STAND_IN
# A LaTeX writer escapes % and & (\% and \&); a value with them bare was written as plain text by
# its exporter (Crossref abstracts with "4.6%", Web of Science titles with "&apos;"), and reading
# it as LaTeX would drop everything after the % as a comment.
BARE_SPECIAL = re.compile(r"(?<!\\)[%&]")
# "670--676", "1 -- 10": a page range's dash (tried from the start of a run of spaces only, see AUTHORS_AND)
RANGE_DASH = re.compile(r"(?<!\s)\s*-{2,3}\s*")
# Fields holding one identifier or address, in which no white space belongs: a line break in one is the file's
# wrapping ("10.1016/j.jclinepi.\n  2020.01.001"), which BibTeX reads as a space and would make it no DOI.
IDENTIFIER_FIELDS = ("doi", "url", "eprint", "pmid", "pmcid")
DOI_START = re.compile(r"10\.[0-9]{4,9}/")
LATEX_MARKUP = re.compile(r"[\\$~]|--|``|''")
# Braces nested deeper than this in a value that holds LaTeX are refused: no reference needs them, and each
# accent nested in another doubles the text the decoder makes (25 deep: 16 million characters from one "o").
MAX_LATEX_NESTING = 8
INNERMOST_GROUP = re.compile(r"\{[^{}]*\}")
HYPHEN_STAND_IN = "\ue000"  # a private-use character: no file writes it, and LaTeX makes no ligature of it
# The private-use characters decoding stands in with (HYPHEN_STAND_IN, MATH_STAND_IN's and the like): a value that
# holds one already is kept as written, as its stand-ins could not be told from the decoder's.
STAND_IN_CHARACTERS = re.compile("[\ue000-\ue00f]")
# pylatexenc reads a value a character at a time (some microseconds each: minutes for a file of abstracts), though
# plain text between commands reads as itself. So each run of it outside braces goes to the decoder as a stand-in,
# past its first few characters, which a command before it may take as its arguments (none of pylatexenc's takes
# over 6). Inside braces a command may change every character of its argument (an accent on "{ab}" marks both),
# and \verb and environments read their text raw, so those are decoded whole. A run holds no character LaTeX or
# pylatexenc reads specially (nor ` ' ! ? of its specials ``, '', !`, ?`; nor [ or * after a command) and no line
# end (a blank line is a token of its own to pylatexenc, a paragraph).
RUN_ARGUMENTS = 7
_PLAIN = r"[^\\{}$%&~#^_\[\]*'`!?\r\n\ue001-\uf8ff]"
LATEX_PIECE = re.compile(rf"\\(?:[^\W\d_]+|.)|({_PLAIN}+)|.", re.DOTALL)  # a command, a run of plain text, or else
RUN_TAIL = re.compile(rf"((?:\s*\S){{{RUN_ARGUMENTS}}}\s*)(\S(?:.*\S)?)")
RUN_STAND_IN = re.compile("\ue003([0-9]+)\ue004")
# Entry types that name where a work appeared in "howpublished" (those of sitegen's export among them).
PUBLISHED_IN_HOWPUBLISHED = frozenset({"misc", "phdthesis", "mastersthesis", "techreport", "online", "unpublished",
                                       "dataset", "software", "patent", "standard", "movie", "jurisdiction"})
# Text between entries is a comment to BibTeX, but a line that opens an entry ("article{two,") or sets a
# field ("title = {...}") there is an entry that lost its "@", and would be dropped without a word. The spaces
# around the key are one run when there is no key: as two (\s*\s*), a run was split every way (300 KB of tabs on
# a line between entries took minutes).
# What an entry takes from the entry its `crossref` names (BibTeX's inheritance, for a paper in its proceedings or a
# chapter in its book): where and when it appeared, never what names the parent work itself (its title is the
# child's booktitle; its DOI, URL or abstract would make the child be checked as its proceedings).
INHERITED = frozenset({"year", "date", "month", "booktitle", "journal", "journaltitle", "editor", "publisher",
                       "address", "location", "organization", "series", "volume", "issn", "isbn"})
ENTRY_WITHOUT_AT = re.compile(r"\s*(?:[A-Za-z]+\s*[{(]\s*(?:[^\s,{}()=]+\s*)?,|[A-Za-z][\w-]*\s*=\s*[{\"]).*")


def read_bibtex(text: str, warnings: list[str] | None = None, skipped: Skipped | None = None) -> list[Entry]:
    """The entries of a BibTeX file; ReferenceProblem names the line of the first block that does not
    parse (with `skipped`, each such block is listed there instead). A value naming a macro no @string of
    the file defines is kept as written, and said in `warnings` (BibTeX keys are the IDs, and a repeated
    key is a problem, not a renaming)."""
    with _quiet_parser():
        library = bibtexparser.parse_string(text, parse_stack=[])  # values as written: `_value` reads them
    macros: dict[str, str] = {}
    undefined: list[str] = []
    for string in library.strings:  # in the file's order: a @string may use those before it
        try:
            macros[string.key.lower()] = _value(str(string.value), macros, undefined, string.start_line + 1)
        except ReferenceProblem as problem:
            if skipped is None:
                raise
            skipped.append((problem.line, problem.message))  # skipped as a bad entry is: its macro stays undefined
    lost = [problem for block in library.blocks if isinstance(block, ImplicitComment)
            and (problem := _without_at(block)) is not None]
    if not library.entries and not library.failed_blocks and not lost:
        raise ReferenceProblem(1, "no BibTeX entry (an entry starts with '@', as in '@article{key,')")
    blocks = sorted([*library.entries, *library.failed_blocks], key=lambda block: block.start_line)
    items = [block if isinstance(block, BibEntry) else _problem(library, block) for block in blocks]
    items = sorted([*items, *lost], key=lambda item: item.line if isinstance(item, ReferenceProblem) else
                   item.start_line + 1)
    keys = {entry.key.strip().lower(): entry for entry in library.entries}  # BibTeX matches a crossref in any case
    entries = checked(each(lambda entry: _entry(entry, macros, undefined, _parent(entry, keys)), items), skipped)
    if undefined and warnings is not None:
        warnings.append(f"{counted(len(undefined), 'value names', 'values name')} a macro no @string of the file defines, kept as written "
                        f"({', '.join(undefined[:5])}{' ...' if len(undefined) > 5 else ''})")
    return entries


def _without_at(block: ImplicitComment) -> ReferenceProblem | None:
    """The problem of text between entries that holds an entry without its "@", on its first such line."""
    for offset, line in enumerate(block.comment.splitlines()):
        if ENTRY_WITHOUT_AT.fullmatch(line):
            return ReferenceProblem(block.start_line + 1 + offset,
                                    f"text outside an entry that looks like one ({line.strip()[:30]!r}): an "
                                    "entry starts with '@', as in '@article{key,'")
    return None


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


def _problem(library: Library, block: ParsingFailedBlock) -> ReferenceProblem:
    line = block.start_line + 1  # bibtexparser counts lines from 0
    if isinstance(block, DuplicateBlockKeyBlock):
        if block.key in library.entries_dict:
            first = library.entries_dict[block.key].start_line + 1
            return ReferenceProblem(line, f"ID {block.key!r} was already used on line {first}")
        first = library.strings_dict[block.key].start_line + 1 if block.key in library.strings_dict else None
        return ReferenceProblem(line, f"@string {block.key!r} was already defined"
                                      + (f" on line {first}" if first else ""))
    if isinstance(block, DuplicateFieldKeyBlock):
        key = min(block.duplicate_keys)
        first, again = [field.start_line + 1 for field in block.ignore_error_block.fields if field.key == key][:2]
        return ReferenceProblem(again, f"field {key!r} is given twice in entry "
                                       f"{block.ignore_error_block.key!r} (first on line {first})")
    # A block the splitter gave up on says why in abort_reason; its str() is empty.
    reason = " ".join(str(getattr(block.error, "abort_reason", "") or block.error or "").split())
    return ReferenceProblem(line, f"not valid BibTeX: {reason or 'it does not parse'}")


def _parent(entry: BibEntry, keys: dict[str, BibEntry]) -> BibEntry | None:
    """The entry `entry`'s crossref names, when the file holds it (a parent's own crossref is not followed)."""
    named = next((str(field.value) for field in entry.fields if field.key.lower() == "crossref"), "")
    parent = keys.get(named.strip().strip('{}"').strip().lower())
    return parent if parent is not None and parent is not entry else None


def _inherited(parent: BibEntry | None) -> list[tuple[str, BibField]]:
    """The fields an entry takes from its crossref's entry, by the name they take (`INHERITED`)."""
    if parent is None:
        return []
    return [("booktitle" if name == "title" else name, field) for field in parent.fields
            if (name := field.key.lower()) in INHERITED or name == "title"]


def _entry(entry: BibEntry, macros: dict[str, str], undefined: list[str], parent: BibEntry | None) -> Entry:
    values: dict[str, str] = {}
    own = [(field.key.lower(), field) for field in entry.fields]
    named = {name for name, _ in own}
    for name, field in [*own, *(item for item in _inherited(parent) if item[0] not in named)]:
        raw = _value(str(field.value), macros, undefined, field.start_line + 1)
        if LATEX_MARKUP.search(raw) and _nesting(raw) > MAX_LATEX_NESTING:
            raise ReferenceProblem(field.start_line + 1, f"field {name!r} nests its braces more than "
                                                         f"{MAX_LATEX_NESTING} deep, which no reference needs")
        if name == "pages":  # a range's "--" (an en dash when typeset) is the hyphen other sources write
            raw = RANGE_DASH.sub("-", raw)
        value = _authors(raw) if name == "author" else " ".join(_decoded(raw).split())
        # joined only when it names one work: two DOIs on two lines are two, which no join may make one
        if name in IDENTIFIER_FIELDS and "\n" in raw.strip() and len(DOI_START.findall(value)) <= 1:
            value = "".join(value.split())
        if name == "year":
            written_year(value, field.start_line + 1)
        values.setdefault(name, value)
    for alias, name in ALIASES.items():
        if alias in values:
            values.setdefault(name, values[alias])
    # biblatex (Zotero's Better BibLaTeX, JabRef) dates an entry with an ISO `date` ("2019-07-04", a range
    # "2019-07-04/2019-07-06") and no `year`: its year is the date's.
    if not values.get("year") and (dated := re.match(r"\s*(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", values.get("date", ""))):
        values["year"] = dated.group(1)
        values["date"] = "-".join(part for part in dated.groups() if part)
    # An entry of a type with no field for where it appeared names that in "howpublished", as sitegen's own export
    # writes a record's container there (a @book's says how it was published: "Self-published"); a web address
    # there is no container.
    published = values.get("howpublished", "")
    if entry.entry_type.lower() in PUBLISHED_IN_HOWPUBLISHED and published \
            and not values.get("journal") and not re.search(r"://|\bwww\.", published):
        values["journal"] = published
    if entry.entry_type.lower() == "book" and values.get("series") and not values.get("journal"):
        values["journal"] = values["series"]  # the series a book appeared in, as sitegen's export writes it
    # An article numbered rather than paged is cited by its number, as the RIS (C7) and CSV exports of the same
    # databases give it: Scopus's art_number, Web of Science's Article-Number, biblatex's eid.
    if not values.get("pages"):
        values["pages"] = values.get("art_number") or values.get("article-number") or values.get("eid", "")
    arxiv = _arxiv_id(values)
    if arxiv and _journal_arxiv_id(values) == arxiv:  # the "journal" only says where the preprint is
        values["journal"] = "arXiv"
        entry_type = "misc"  # a preprint: CSL's "article", as the arXiv source gives one
    else:
        entry_type = entry.entry_type.lower()
    document_type = " ".join(values.get("document_type", "").lower().split())
    standing = read_standing(statements(values["note"])) or {} if values.get("note", "").strip() else {}
    key = entry.key.strip()
    pmid_key = re.fullmatch(r"PMID:(\d+)", key)  # Europe PMC's keys
    return Entry(key, parent=parent.key.strip() if parent is not None else "", fields=fields({
        # Scopus says what a record is (an erratum, a review, a book chapter it writes as @book) in document_type, as
        # its CSV export does
        **values, "ID": key, "ENTRYTYPE": document_type if document_type in PUBLICATION_TYPES or
        document_type in CSL_TYPES else entry_type,
        # Scopus writes the PMID as pubmed_id (its CSV's "PubMed ID")
        "pmid": values.get("pmid") or values.get("pubmed_id") or (pmid_key.group(1) if pmid_key else "")
        or _note_pmid(values.get("note", "")),
        "arxiv": values.get("arxivid") or arxiv, "keywords": keywords(values.get("keywords", "")),
        "issn": issns([values.get("issn", "")]),
        # a BibTeX "label" field is a citation label, not a screening decision
        # Scopus names itself in `source`; Web of Science gives each record its accession number, "WOS:…" (before
        # 2020 or so, "ISI:…")
        "database": values.get("source") or ("Web of Science" if values.get("unique-id", "").upper().startswith(
            ("WOS:", "ISI:")) else ""),
        "label": "",
        "type": "",  # BibTeX's own `type` field is free text ("Research Article"), no CSL type
        # sitegen's note says what a notice is, a work's retraction and its notices, in words (see `fields`)
        **{name: written for name, written in standing.items() if written},
        "retracted": "yes" if standing.get("retracted") else values.get("retracted", "")}),
        line=entry.start_line + 1)


def _note_pmid(note: str) -> str:
    """The PMID a note line gives alone ("PMID: 12345678"), as Zotero's BibTeX export writes its Extra field."""
    return next((found.group(1) for line in note.splitlines() if (found := NOTE_PMID.fullmatch(line.strip()))), "")


# Where BibTeX files other than an arXiv entry's own name the paper's arXiv id: Google Scholar's journal
# "arXiv preprint arXiv:1706.03762", DBLP's journal "CoRR" with volume "abs/1706.03762".
ARXIV_JOURNAL = re.compile(r"arxiv(?:\s+preprint)?\s*:?\s*(?:arxiv\s*:\s*)?(\S+)", re.IGNORECASE)


def _arxiv_id(values: dict[str, str]) -> str:
    """The arXiv id an entry names: its eprint when that is an arXiv one (BibTeX's archiveprefix, biblatex's
    eprinttype), else one its journal and volume give."""
    if "arxiv" in (values.get("archiveprefix", "").lower(), values.get("eprinttype", "").lower()):
        return values.get("eprint", "")
    return _journal_arxiv_id(values)


def _journal_arxiv_id(values: dict[str, str]) -> str:
    journal = values.get("journal", "").strip()
    if found := ARXIV_JOURNAL.fullmatch(journal):
        return found.group(1)
    volume = values.get("volume", "").strip()
    if journal.lower() == "corr" and volume.lower().startswith("abs/"):
        return volume[len("abs/"):]
    return ""


def _decoded(value: str) -> str:
    """A value's text. LaTeX's "--" and "---" ligatures stay as written ("HbA1c--a marker" is a title, not
    typesetting to undo)."""
    if BARE_SPECIAL.search(value) or STAND_IN_CHARACTERS.search(value):
        return value
    # Decoding takes milliseconds a value; without macros, math or ligatures it would only drop braces.
    if not LATEX_MARKUP.search(value):
        return value.replace("{", "").replace("}", "")
    maths: list[str] = []

    def stand_in(found: re.Match[str]) -> str:  # decoded apart, so that what it shows is never read as LaTeX
        maths.append(MATH.latex_to_text(found.group()).replace("_", "").replace("^", ""))
        return f"\ue001{len(maths) - 1}\ue002"
    runs: list[str] = []
    try:
        latex = INLINE_MATH.sub(stand_in, value).replace("-", HYPHEN_STAND_IN)
        text = LATEX.latex_to_text(_runs_set_aside(latex, runs))
        if not _runs_came_through(text, len(runs)):  # a run was read as LaTeX after all: the whole text is read
            text = LATEX.latex_to_text(latex)
    except Exception:  # noqa: BLE001 (pylatexenc fails on commands it reads without their arguments: \href{a}{b}, \sqrt)
        return value  # kept as written, as a value with a bare % is
    text = RUN_STAND_IN.sub(lambda found: runs[int(found.group(1))], text).replace(HYPHEN_STAND_IN, "-")
    text = MATH_STAND_IN.sub(lambda found: maths[int(found.group(1))], text)
    # The value held no stand-in, so one left is one the decoder took apart (an accent whose argument runs on over
    # math marks each character of its stand-in): the text would carry invisible characters, and is kept as written.
    return value if STAND_IN_CHARACTERS.search(text) else text


def _runs_came_through(text: str, runs: int) -> bool:
    """Whether pylatexenc's reading of a value with its runs set aside holds each run's stand-in whole, once and in
    order, as text of its own. A command can read on past where `_runs_set_aside` saw its argument end (in math whose
    end was not found, "}" closes no group), and one that takes a run apart or drops it read it as LaTeX."""
    return text.count("\ue003") == text.count("\ue004") == runs and \
        [int(number) for number in RUN_STAND_IN.findall(text)] == list(range(runs))


def _runs_set_aside(value: str, runs: list[str]) -> str:
    """`value` with each run of plain text outside braces replaced by a stand-in past its first RUN_ARGUMENTS
    characters, the text replaced kept in `runs`; `value` itself when it holds a command that reads its text raw.
    Braces that open the value, or open right inside such braces, are no command's argument (nothing before them
    could take one): their text is read as outside braces (a title protected whole, "{{A Title With {Braces}}}"),
    unless a "$" is left (math whose end was not found, which pylatexenc reads on past the braces' end)."""
    if re.search(r"\\(?:verb|begin|end)", value):
        return value
    unwrapped = "$" in value
    pieces: list[str] = []
    wrapping: list[bool] = []  # for each group open, whether it is such braces
    depth = 0  # groups open that are not
    for found in LATEX_PIECE.finditer(value):
        piece = found.group()
        if piece == "{":
            wrapping.append(not unwrapped and not depth and (not pieces or (pieces[-1] == "{" and wrapping[-1])))
            depth += not wrapping[-1]
        elif piece == "}" and wrapping:
            depth -= not wrapping.pop()
        elif found.group(1) and not depth and (tail := RUN_TAIL.match(piece)):
            runs.append(tail.group(2))
            piece = f"{tail.group(1)}\ue003{len(runs) - 1}\ue004{piece[tail.end():]}"
        pieces.append(piece)
    return "".join(pieces)


# The macros BibTeX itself defines: a month is kept as written ("jan"), as a file without them writes it.
MONTH_MACROS = frozenset(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
MAX_EXPANDED = 1_000_000  # characters a value may reach through macros: five times the longest abstract
BARE_WORD = re.compile(r"[^\s#{}\"]+")
NEXT_FIELD = re.compile(r"[A-Za-z][\w:.+-]*\s*=")  # "doi = {...}": a field's name and its '='



def _value(written: str, macros: dict[str, str], undefined: list[str], line: int) -> str:
    """A value as BibTeX reads it: braced or quoted text, a number, or a @string macro, or several joined by
    '#' ("Part one" # " and two", journal # " Supplement"). A word naming no macro is kept as written and
    named in `undefined` with its `line`; a value that is none of these is kept as written. ReferenceProblem
    when macros would make it longer than MAX_EXPANDED (each @string may double the one before), or when text
    follows a whole value without a '#' (the next field's, a comma missing: it would be read into this one)."""
    pieces = _pieces(written, line)
    if pieces is None:
        return written
    text, length = [], 0
    for braced, piece in pieces:
        if not braced and piece.lower() in macros:
            piece = macros[piece.lower()]
        elif not braced and not piece[0].isdigit() and piece.lower() not in MONTH_MACROS:
            undefined.append(f"line {line}: {piece}")
        length += len(piece)
        if length > MAX_EXPANDED:
            raise ReferenceProblem(line, f"the value's @string macros make it over {MAX_EXPANDED:,} characters long")
        text.append(piece)
    return "".join(text)


def _pieces(written: str, line: int) -> list[tuple[bool, str]] | None:
    """The parts of a value joined by '#', each (True, its text) when braced or quoted, (False, the word)
    when a number or macro; None when the value is not made so; ReferenceProblem on `line` when text follows
    a part without a '#' between them."""
    pieces, position, end = [], 0, len(written)
    while True:
        while position < end and written[position].isspace():
            position += 1
        if position == end:
            return None  # nothing where a part belongs
        if written[position] in '{"':
            closing = _closing(written, position)
            if closing is None:
                return None
            pieces.append((True, written[position + 1:closing]))
            position = closing + 1
        elif word := BARE_WORD.match(written, position):
            pieces.append((False, word.group()))
            position = word.end()
        else:
            return None
        while position < end and written[position].isspace():
            position += 1
        if position == end:
            return pieces
        if written[position] != "#":
            after = " ".join(written[position:].split())
            if NEXT_FIELD.match(after):  # the next field, read into this one: a comma is missing between them
                raise ReferenceProblem(line, f"the value is followed by {after[:60]!r}, which is not part of it: "
                                             "a comma is missing after the value (before the next field)")
            return None  # some other form, kept as written (pages = 1 - 10)
        position += 1


# What can close a braced or quoted part: a brace, a quote, or a backslash escaping the character after it
# (as bibtexparser's splitter reads `"G\"odel"`, which found where the value ends).
_DELIMITER = re.compile(r'[{}"]|\\.', re.DOTALL)


def _closing(written: str, start: int) -> int | None:
    """Where the brace or quote opening at `start` closes: braces nest, a quote closes only outside them,
    and an escaped character closes nothing."""
    quoted, depth = written[start] == '"', 0
    for found in _DELIMITER.finditer(written, start + 1):
        char = found.group()
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return None if quoted else found.start()
            depth -= 1
        elif char == '"' and quoted and depth == 0:
            return found.start()
    return None


def _nesting(value: str) -> int:
    """How deep `value`'s braces nest, counted up to one past MAX_LATEX_NESTING (innermost groups removed
    a round at a time)."""
    depth = 0
    while depth <= MAX_LATEX_NESTING:
        value, removed = INNERMOST_GROUP.subn("", value)
        if not removed:
            break
        depth += 1
    return depth


def _authors(value: str) -> str:
    """BibTeX's "von Last, Jr, First" for each name, joined by "and"; a name BibTeX cannot split as written.

    A name with a last name only is one BibTeX never splits: it is written "Family," (see `split_name`), so that a
    family name of several words ("van der Berg", "{Garcia Marquez}") is not read as given names and a family
    name. A name braced whole that sitegen would not split either (an organisation, one word), or that holds a
    comma ("{Doe, Jane}": "Family," would read as no name), stays braced, a literal."""
    written = []
    for person in split_multiple_persons_names(value):
        if NAMES_LEFT_OUT.fullmatch(" ".join(person.split())):
            # "and others", BibTeX's "et al.": stays so for the record to leave out (as a name, it was read as an
            # author named "others", and "et al." as "al., et")
            written.append(" ".join(person.split()))
            continue
        if _braced_whole(person):  # "{World Health Organization}", "{Garcia Marquez}": one name
            text = " ".join(_decoded(person[1:-1]).split())
            family_alone = text and "," not in text and not AND.search(text) and not split_name(text).literal
            written.append(f"{text}," if family_alone else f"{{{text}}}")
            continue
        try:
            name = parse_single_name_into_parts(person)
        except InvalidNameError:  # "Smith, Maria," (real exports have them): kept as written
            written.append(" ".join(_decoded(person).split()))
            continue
        parts = (" ".join([*name.von, *name.last]), " ".join(name.jr), " ".join(name.first))
        text = ", ".join(" ".join(_decoded(part).split()) for part in parts if part)
        # An "and" left in a name was braced in the file ("Smith {and} Wesson, J."): decoded, it would split
        # the list there, so the name is braced whole.
        written.append(f"{{{text}}}" if AND.search(text) else text if name.first or name.jr else f"{text},")
    return " and ".join(written)


def _braced_whole(text: str) -> bool:
    """Whether the text is one brace group, "{...}", as BibTeX writes a name never to be split."""
    depth = 0
    for position, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return position == len(text) - 1 and position > 0
    return False
