"""Downloads offered on the site: records as RIS, BibTeX, CSL-JSON and CSV.

Pure functions, records in, text out. Each format carries what a reference
manager reads from it: authors split into family and given names (a name stored
as one display string is split here, so records stored before sitegen split
names at normalisation export the same way), every identifier in the field that
format's readers take it from, and one citation key per record shared by all
formats (BibTeX key, RIS ID, CSL `citation-key`).

Exports are read by spreadsheets, reference managers and LaTeX, so they are
hardened: no line of a CSV cell can start a formula and no CSV cell can break a
row; no RIS value can carry a line break that would smuggle in a tag of its own;
no BibTeX value can close its braces early, open an entry with `@`, or run a
LaTeX command.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable

import rispy

from sitegen.records.model import CslName, Record, model_data
from sitegen.records.names import split

# The records CSV's columns and formula guard are the CSV reader's too, which reads the download back.
from sitegen.references.table import FORMULA_STARTS, LINE_BREAK
from sitegen.references.table import SITEGEN_COLUMNS as CSV_COLUMNS
from sitegen.review.write import pretty_json

# Every character LINE_BREAK holds (those str.splitlines breaks on): some spreadsheet or other honours each.
_LINE_BREAKS = re.compile(f"[{LINE_BREAK}]+")
# The start of the cell and of every line inside it, where that line starts a formula.
_FORMULA_LINE_START = re.compile(f"(?:^|(?<=[{LINE_BREAK}]))(?=[{re.escape(''.join(FORMULA_STARTS))}])")


def safe_cell(value: str) -> str:
    """Neutralise every line of a cell a spreadsheet would evaluate (OWASP CSV injection guidance).

    A spreadsheet that splits a cell at a line break reads each line as a cell of its own,
    so the prefix goes before each line that starts a formula, not only the first.
    """
    return _FORMULA_LINE_START.sub("'", value)


def write_csv(header: list[str], rows: list[list[str]]) -> str:
    """CSV for spreadsheets: every cell neutralised and quoted.

    Quoting every cell keeps each line break inside its cell, whatever the break: the csv
    module quotes only the ones it writes itself, so a lone CR or U+2028 would start a row.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerows([safe_cell(cell) for cell in row] for row in [header, *rows])
    return buffer.getvalue()


def one_line(value: str) -> str:
    return re.sub(r"\s+", " ", _LINE_BREAKS.sub(" ", value)).strip()


# Between the first and last page of a range: a hyphen, an en dash (Crossref writes some), BibTeX's "--".
_PAGE_RANGE = re.compile(r"\s*[-\u2010-\u2015]+\s*")


def page_range(record: Record) -> tuple[str, str]:
    """The record's first and last page ("" when not given), however the range is written."""
    first, _, last = _PAGE_RANGE.sub("-", record.page or "").partition("-")
    return first, last


def authors(record: Record) -> list[CslName]:
    """The record's authors as a reference manager needs them: display names split into family and given."""
    return [split(name) for name in record.author]


def authors_text(record: Record) -> str:
    return "; ".join(name.display() for name in authors(record))


# --------------------------------------------------------------------------- citation keys

_KEY_STOPWORDS = frozenset({"a", "an", "the", "of", "on", "in", "and", "for", "to", "with", "at", "by", "from", "is",
                            "are", "does", "do", "its", "into"})


def _ascii_word(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def _first_word(text: str) -> str:
    words = (_ascii_word(word) for word in re.split(r"[\s\-\u2010-\u2015/:]+", text))
    return next((word for word in words if word and word not in _KEY_STOPWORDS), "")


def _key_base(record: Record) -> str:
    """"krab2008simvastatin": first author's family name (or an organisation's first word), year, first title word."""
    first = split(record.author[0]) if record.author else None
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
    taken: set[str] = set()
    for record in records:
        base = key = _key_base(record)
        number = 1
        while key in taken:  # a base is never of this form ([a-z0-9] only), so "-n" keys cannot clash with one
            number += 1
            key = f"{base}-{number}"
        taken.add(key)
        keys[record.id] = key
    return keys


# --------------------------------------------------------------------------- CSV


def records_csv(records: list[Record], status: dict[str, tuple[str, str]], keys: dict[str, str] | None = None) -> str:
    """`status` maps record id to (title/abstract outcome, full-text outcome)."""
    keys = keys if keys is not None else citation_keys(records)
    rows = []
    for record in records:
        ids = record.identifiers()
        title_abstract, full_text = status.get(record.id, ("", ""))
        rows.append([record.id, record.title, authors_text(record), str(record.year or ""),
                     record.container_title or "", record.volume or "", record.issue or "", record.page or "",
                     ids.get("doi", ""), ids.get("pmid", ""), ids.get("pmcid", ""), ids.get("openalex", ""),
                     ids.get("arxiv", ""), record.URL or "", "yes" if record.custom.retracted else "no",
                     title_abstract, full_text, record.abstract or "", keys[record.id]])
    return write_csv(CSV_COLUMNS, rows)


# --------------------------------------------------------------------------- RIS

ARXIV_ADDRESS = "https://arxiv.org/abs/"
OPENALEX_ADDRESS = "https://openalex.org/"
RIS_TYPES = {"article-journal": "JOUR", "chapter": "CHAP", "book": "BOOK", "thesis": "THES",
             "paper-conference": "CPAPER", "report": "RPRT", "dataset": "DATA", "article": "GEN"}


class _PlainRisWriter(rispy.RisWriter):
    """rispy's writer without its "1." line before each record, which some reference managers reject."""

    def set_header(self, count: int) -> str:
        return ""


def _ris_name(name: CslName) -> str:
    """RIS's "Lastname, Firstname, Suffix"; an organisation as one part, which readers keep whole."""
    return name.literal or ", ".join(part for part in (name.family, name.given, name.suffix) if part)


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
    """
    keys = keys if keys is not None else citation_keys(records)
    entries = []
    for record in records:
        first_page, last_page = page_range(record)
        ris_type = RIS_TYPES.get(record.type, "GEN")
        date = record.issued.date_parts[0] if record.issued else []
        entry: dict[str, object] = {"type_of_reference": ris_type, "id": keys[record.id], "title": record.title}
        if record.author:
            entry["authors"] = [_ris_name(name) for name in authors(record)]
        optional = {"year": str(record.year) if record.year else None,
                    "date": "/".join(f"{part:02d}" for part in date) + "/" if len(date) > 1 else None,
                    "secondary_title": record.container_title,
                    "alternate_title3": record.container_title if ris_type == "JOUR" else None,
                    "volume": record.volume, "number": record.issue, "start_page": first_page, "end_page": last_page,
                    "doi": record.DOI, "accession_number": record.PMID, "custom2": record.PMCID,
                    "abstract": record.abstract}
        entry.update({key: value for key, value in optional.items() if value})
        urls = [record.URL, record.custom.arxiv and f"{ARXIV_ADDRESS}{record.custom.arxiv}",
                record.custom.openalex and f"{OPENALEX_ADDRESS}{record.custom.openalex}"]
        if any(urls):
            entry["urls"] = [url for url in urls if url]
        notes = [record.PMID and f"PMID: {record.PMID}", record.custom.retracted and "RETRACTED"]
        if any(notes):
            entry["notes"] = [note for note in notes if note]
        entries.append(_ris_safe(entry))
    return rispy.dumps(entries, implementation=_PlainRisWriter) if entries else ""


def _ris_safe(entry: dict[str, object]) -> dict[str, object]:
    # RIS is line-based: a line break inside a value would start a new tag (e.g. "ER  -").
    return {key: [one_line(v) for v in value] if isinstance(value, list) else one_line(str(value))
            for key, value in entry.items()}


# --------------------------------------------------------------------------- BibTeX

BIBTEX_TYPES = {"article-journal": "article", "chapter": "incollection", "book": "book", "thesis": "phdthesis",
                "paper-conference": "inproceedings", "report": "techreport", "dataset": "misc", "article": "misc"}
CONTAINER_FIELDS = {"article": "journal", "incollection": "booktitle", "inproceedings": "booktitle"}
# Every character LaTeX or BibTeX treats specially, written so that braces stay balanced:
# BibTeX counts a brace even after a backslash, so "\{" would end a field early.
_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\textbraceleft{}", "}": r"\textbraceright{}",
                   "$": r"\$", "&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_",
                   "^": r"\textasciicircum{}", "~": r"\textasciitilde{}"}
_LATEX_SPECIAL = re.compile("[" + re.escape("".join(_LATEX_SPECIALS)) + "]")
# BibTeX splits an author list at "and" outside braces, in any case.
_AND = re.compile(r"\band\b", re.IGNORECASE)


def latex_text(value: str) -> str:
    """One line of text as a BibTeX value shows it, every LaTeX special character escaped.

    "@" needs no escape: inside a braced value it starts nothing.
    """
    return _LATEX_SPECIAL.sub(lambda match: _LATEX_SPECIALS[match.group()], one_line(value))


def _title(value: str) -> str:
    """The title with the case of acronyms and gene names ("NF1", "mGluR5") kept from styles that lower-case."""
    words = one_line(value).split(" ")
    return " ".join(f"{{{latex_text(word)}}}" if any(char.isupper() for char in word[1:]) else latex_text(word)
                    for word in words)


def _verbatim(value: str) -> str:
    """A DOI or URL, which biblatex reads verbatim: only what would unbalance the braces is percent-encoded."""
    return one_line(value).replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D")


def _name_part(value: str) -> str:
    text = _AND.sub(lambda match: "{" + match.group() + "}", latex_text(value))
    return f"{{{text}}}" if "," in text else text


def bibtex_name(name: CslName) -> str:
    """BibTeX's "von Last, First" or "von Last, Jr, First"; an organisation braced whole so it is never split."""
    if name.literal:
        return "{" + latex_text(name.literal) + "}"
    family, given = _name_part(name.family or ""), _name_part(name.given or "")
    if name.suffix:
        return f"{family}, {_name_part(name.suffix)}, {given}"
    return f"{family}, {given}" if given else family


def _bibtex_entry(record: Record, key: str) -> str:
    entry_type = BIBTEX_TYPES.get(record.type, "misc")
    fields: list[tuple[str, str | None]] = [
        ("author", " and ".join(bibtex_name(name) for name in authors(record)) or None),
        ("title", _title(record.title)),
        (CONTAINER_FIELDS.get(entry_type, "howpublished"),
         latex_text(record.container_title) if record.container_title else None),
        ("year", str(record.year) if record.year else None),
        ("volume", latex_text(record.volume) if record.volume else None),
        ("number", latex_text(record.issue) if record.issue else None),
        ("pages", "--".join(latex_text(page) for page in page_range(record) if page) or None),
        ("doi", _verbatim(record.DOI) if record.DOI else None),
        ("pmid", latex_text(record.PMID) if record.PMID else None),
        ("pmcid", latex_text(record.PMCID) if record.PMCID else None),
        ("eprint", latex_text(record.custom.arxiv) if record.custom.arxiv else None),
        ("archiveprefix", "arXiv" if record.custom.arxiv else None),
        # No BibTeX style knows an OpenAlex id; a field a style does not know is passed over, and read back.
        ("openalex", latex_text(record.custom.openalex) if record.custom.openalex else None),
        ("url", _verbatim(record.URL) if record.URL else None),
        ("abstract", latex_text(record.abstract) if record.abstract else None),
        ("note", "Retracted" if record.custom.retracted else None),
    ]
    body = "".join(f"  {name} = {{{value}}},\n" for name, value in fields if value)
    return f"@{entry_type}{{{key},\n{body}}}\n"


def records_bibtex(records: list[Record], keys: dict[str, str] | None = None) -> str:
    """BibTeX (UTF-8, as biber, JabRef, Zotero and modern BibTeX read it), one entry per record."""
    keys = keys if keys is not None else citation_keys(records)
    return "\n".join(_bibtex_entry(record, keys[record.id]) for record in records)


# --------------------------------------------------------------------------- CSL-JSON


def records_csl_json(records: list[Record], keys: dict[str, str] | None = None) -> str:
    """CSL-JSON as citation processors and Zotero read it: names split, the citation key kept.

    sitegen's own metadata stays under CSL's `custom`, which the CSL schema keeps for such data.
    """
    keys = keys if keys is not None else citation_keys(records)
    items = []
    for record in records:
        item = model_data(record)
        if record.author:
            item["author"] = [model_data(name) for name in authors(record)]
        items.append({**item, "citation-key": keys[record.id]})
    return pretty_json(items)
