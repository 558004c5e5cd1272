"""Records CSV in the benchmark's columns (ID, ENTRYTYPE, author, title, year, journal, volume,
number, pages, doi, abstract; any but ID may be missing; "issue" and "booktitle" are read as
"number" and "journal"), or any CSV with a column mapping: `columns` names, for an entry field, the
column it is read from ({"title": "Article Title", "ID": "key"}); other columns are read under their
own names. With a mapping and no ID column, rows are named "csv-N" by their position N.

sitegen's own records CSV (the site's download and `sitegen export --format csv`) is known by its
header and read without a mapping: its "id" is the ID, its "authors" ("Family, Given; Family2,
Given2") the author list, and a cell's leading "'" that keeps a spreadsheet from reading a formula
is dropped again.

Other databases' and tools' CSV exports (Scopus, Embase.com, PubMed, Web of Science's tab-delimited file,
Covidence, Rayyan) are known by their header too (see PRESETS) and read with their mapping: their
page start and end columns joined as a range, their author lists ("Smolen J.; Landewé R.B.M.",
PubMed's "Lira R, Cruz A.") as BibTeX's. The lines an export writes before its header (Embase.com's
search) are skipped, and said to be (see `preamble`); Embase.com's article number is read from its Source cell and
its full date from its "Date of Publication" (see `Preset.citation` and `worded_date`). A row whose url is its
record's Embase.com address (Rayyan's) is Embase's, as a RIS record at that address is (`fields.at_embase`).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from sitegen.records.entry import ALIASES, NOTHING, Entry
from sitegen.records.model import FOUR_DIGITS
from sitegen.records.names import AUTHORS_AND, author_names
from sitegen.records.pages import medline_pages
from sitegen.references import wos
from sitegen.references.fields import (
    EMBASE,
    FIELDS,
    NAME_SEPARATOR,
    RAYYAN_INCLUSION,
    accession_pmid,
    at_embase,
    author_list,
    family_initials,
    iso_date,
    read_standing,
    statements,
)
from sitegen.references.problems import UNRECOGNISED, ReferenceProblem, Skipped, checked
from sitegen.references.records import CSL_TYPES_OF_OTHER_SENSES, month_of
from sitegen.references.ris import EBSCOHOST_DATABASES, PUBMED_DATABASE
from sitegen.text import counted

# A cell larger than any reference's field (an abstract holds at most 200,000 characters) is refused as it is read:
# a 500 MB title cell took 6 GB of memory before the title's own limit could refuse it.
csv.field_size_limit(16 * 1_000_000)

# `date` is the full date ("2008-07-16", "2008-07" or the year), beside `year`, which spreadsheets sort and filter by.
SITEGEN_COLUMNS = ["id", "title", "authors", "year", "journal", "volume", "issue", "pages", "doi", "pmid", "pmcid",
                   "openalex", "arxiv", "url", "retracted", "title_abstract", "full_text", "abstract", "citation_key",
                   "type", "date", "publication_types", "updates", "notice_of"]
# The columns added after the first export, in the order they were: an export written before one ends before it.
ADDED_COLUMNS = ("type", "date", "publication_types", "updates", "notice_of")
SITEGEN_MAPPING = {"ID": "id", "author": "authors"}


def sitegens_layout(written: list[str]) -> int | None:
    """How many of sitegen's columns a CSV header opens with when it is sitegen's records CSV (its columns, or
    those of an export written before a column was added: see ADDED_COLUMNS), either with columns a person added
    after them; None when it is not. A person's column after them is theirs, even when named as a column sitegen
    added later (a `date` they keep beside an export written before sitegen wrote one): it is not read."""
    for count in range(len(SITEGEN_COLUMNS), len(SITEGEN_COLUMNS) - len(ADDED_COLUMNS) - 1, -1):
        if written[:count] == SITEGEN_COLUMNS[:count]:
            return count
    return None


def is_sitegens_header(written: list[str]) -> bool:
    return sitegens_layout(written) is not None
# What sitegen's CSV writer puts an apostrophe before, at the start of a cell and of each line in it: a
# character a spreadsheet would start a formula with, or apostrophes before one, so that a cell's own apostrophe
# ("'-omics' approaches") is not taken for the writer's and dropped on reading.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "|", "%")
LINE_BREAK = "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # every character str.splitlines breaks on
GUARDED_LINE_START = f"(?:^|(?<=[{LINE_BREAK}]))(?='*[{re.escape(''.join(FORMULA_STARTS))}])"
_FORMULA_GUARD = re.compile(f"{GUARDED_LINE_START}'")
# A cell that is a spreadsheet's formula, as files made for Excel write them ('=HYPERLINK("https://doi.org/…")',
# '="10.1000/" & A2'): its value is not in the file, and read as written it was a record's title, or its DOI
# left out. A spreadsheet saving the file as CSV writes the values; no reference's field starts so.
SPREADSHEET_FORMULA = re.compile(r'\s*=\s*(?:"|[A-Za-z][A-Za-z0-9._]*\s*\()')
# Forced text, a formula that is one string and nothing else ('="19326203"', its quotes doubled inside): its value is
# the string, in the file. EBSCOhost's CSV writes every ISSN and date so, so that Excel keeps their zeros and their
# form; refused as a formula, no row of the export was read.
FORCED_TEXT = re.compile(r'\s*=\s*"((?:[^"]|"")*)"\s*')


def forced_text_read(value: str) -> str:
    """A cell's value, a forced text's string (see FORCED_TEXT) given as the string."""
    forced = FORCED_TEXT.fullmatch(value) if "=" in value else None
    return forced[1].replace('""', '"') if forced else value


@dataclass(frozen=True)
class Preset:
    """A known CSV export: the columns that tell it apart (`signature`, all present), the column of each
    entry field (those missing from a file are left empty), the columns of a page range's two ends and of an
    article number (the pages of an article that has none), fields every row has (`fields`), and columns read
    instead of a field's when the row fills them (`rather`: field -> column)."""

    name: str
    signature: tuple[str, ...]
    columns: dict[str, str]
    page_range: tuple[str, str] | None = None
    delimiter: str = ","
    fields: dict[str, str] = field(default_factory=dict)
    article_number: str | None = None
    page_span: str | None = None  # the pages written whole, read when the page range's columns are empty
    medline_ids: bool = False  # Web of Science's IDs (UT) are accession numbers: a MEDLINE one names the PMID
    accession: str | None = None  # a column of accession numbers, read as the PMID where one is (accession_pmid)
    rather: dict[str, str] = field(default_factory=dict)
    kinds: tuple[str, str] | None = None  # Web of Science's publication type and document types columns (PT, DT)
    page_count: tuple[str, str] | None = None  # the columns of the first page and of the number of pages
    written_date: str | None = None  # a column of dates as EBSCOhost writes them (see `written_date`)
    database_link: str | None = None  # a column of EBSCOhost addresses, which name the record's database (db=)
    extra_ids: str | None = None  # a column of lines "PMID: 123", "PMCID: PMC123" (Zotero's Extra)
    citation: str | None = None  # a column of NLM citations ("Nature. 2022 Apr;604(7907):684-688. doi: …")
    article_number_in: str | None = None  # a column of the citation written whole, read for a labelled article number
    worded_date: str | None = None  # a column of the full date in words ("1 Dec 2024"), read as the entry's date
    name_separator: str | None = None  # what parts the authors' names, where it is none of `exported_authors`'
    quotes: bool = True  # whether a '"' quotes a cell (Web of Science's tab-delimited file quotes none)
    month_day: str | None = None  # a column of the month and day ("03/30"), the year apart
    ragged: bool = False  # rows may end before the header does (abstrackr's unlabelled ones); a row of one cell
    # is a heading between the rows ("citations that are not yet labeled by anyone"), not a record


# Headers as the vendors write them (Scopus's "CSV export", PubMed's "Save: CSV", Web of Science's
# "Tab delimited file", the Cochrane Library's, Covidence's and Rayyan's reference CSV), most specific first.
PRESETS = (
    Preset("Scopus", ("Authors", "Title", "Source title", "EID"), {
        "ID": "EID", "ENTRYTYPE": "Document Type", "author": "Authors", "title": "Title", "year": "Year",
        "journal": "Source title",
        "volume": "Volume", "number": "Issue", "doi": "DOI", "pmid": "PubMed ID", "abstract": "Abstract",
        "issn": "ISSN", "language": "Language of Original Document", "keywords": "Author Keywords",
        "publisher": "Publisher", "url": "Link"}, ("Page start", "Page end"), fields={"database": "Scopus"},
        article_number="Art. No.",
        rather={"author": "Author full names"}),  # "Wilson, Lauren N. (58975547800)" where Authors has initials
    # Embase.com's CSV: its ID is the PUI (the Embase accession ID is empty for records from MEDLINE).
    # Its article number is only in its Source, the citation written whole ("Nature Communications (2024) 15:1 Article
    # Number: 4063. Date of Publication: 1 Dec 2024"), its full date in "Date of Publication".
    Preset("Embase", ("Title", "Author Names", "Source title", "Embase Accession ID"), {
        "ID": "PUI", "title": "Title", "author": "Author Names", "journal": "Source title", "year": "Publication Year",
        "volume": "Volume", "number": "Issue", "doi": "DOI", "pmid": "Medline PMID", "abstract": "Abstract",
        "issn": "ISSN", "language": "Article Language", "keywords": "Author Keywords", "publisher": "Book Publisher",
        "publication_types": "Publication Type"}, ("First Page", "Last Page"), fields={"database": "Embase"},
        article_number_in="Source", worded_date="Date of Publication"),
    # OpenAlex's CSV (its web page's download): identifiers as addresses, the authors' names parted by "|".
    Preset("OpenAlex", ("id", "display_name", "publication_year", "authorships.author.display_name"), {
        "ID": "id", "openalex": "id", "doi": "doi", "pmid": "ids.pmid", "ENTRYTYPE": "type", "title": "display_name",
        "author": "authorships.author.display_name", "year": "publication_year", "date": "publication_date",
        "journal": "primary_location.source.display_name", "issn": "primary_location.source.issn",
        "volume": "biblio.volume", "number": "biblio.issue", "abstract": "abstract", "language": "language",
        "url": "primary_location.landing_page_url", "retracted": "is_retracted"},
        ("biblio.first_page", "biblio.last_page"), fields={"database": "OpenAlex"}, name_separator="|"),
    # PubMed's CSV: volume, issue, pages and the full date only in its citation (see `nlm_citation`).
    Preset("PubMed", ("PMID", "Title", "Authors", "Citation", "Journal/Book"), {
        "ID": "PMID", "pmid": "PMID", "title": "Title", "author": "Authors", "journal": "Journal/Book",
        "year": "Publication Year", "pmcid": "PMCID", "doi": "DOI"}, fields={"database": "PubMed"},
        citation="Citation"),
    Preset("Web of Science", ("PT", "AU", "TI", "SO", "UT"), {
        "ID": "UT", "author": "AU", "title": "TI", "journal": "SO", "year": "PY", "volume": "VL", "number": "IS",
        "doi": "DI", "pmid": "PM", "abstract": "AB", "issn": "SN", "language": "LA", "keywords": "DE",
        "publisher": "PU", "month": "PD"}, ("BP", "EP"), "\t", fields={"database": "Web of Science"},
        article_number="AR", page_span="PS", medline_ids=True,
        rather={"author": "AF"},  # full names ("Garcia-Lopez, Maria Jose") where AU has initials
        kinds=("PT", "DT"), quotes=False),
    # The Cochrane Library's CSV of CENTRAL records: its PubMed ID column labels the PMID ("PUBMED 21314913").
    Preset("Cochrane Library", ("CENTRAL ID", "Author(s)", "Title", "Source"), {
        "ID": "CENTRAL ID", "author": "Author(s)", "title": "Title", "journal": "Source", "year": "Year",
        "abstract": "Abstract", "volume": "Volume", "number": "Issue", "pages": "Pages", "doi": "DOI", "url": "URL",
        "keywords": "Keywords"}, fields={"database": "Cochrane CENTRAL"}, accession="PubMed ID"),
    # EBSCOhost's CSV (CINAHL, MEDLINE, Academic Search...): no year column, the date as "4/3/2024" or "Jun2023", the
    # pages as the first and a count, the database only in each record's address ("...&db=aph&AN=...").
    Preset("EBSCOhost", ("Article Title", "Journal Title", "Accession Number", "PLink"), {
        "ID": "Accession Number", "ENTRYTYPE": "Doctype", "title": "Article Title", "author": "Author",
        "journal": "Journal Title", "issn": "ISSN", "volume": "Volume", "number": "Issue", "doi": "DOI",
        "publisher": "Publisher", "keywords": "Keywords", "abstract": "Abstract", "url": "PLink"},
        page_count=("First Page", "Page Count"), written_date="Publication Date", database_link="PLink"),
    # Zotero's "Export Collection... CSV": its Date as the item holds it (ISO when Zotero could read it).
    Preset("Zotero", ("Key", "Item Type", "Publication Title", "Abstract Note"), {
        "ID": "Key", "ENTRYTYPE": "Item Type", "author": "Author", "title": "Title", "year": "Publication Year",
        "date": "Date", "journal": "Publication Title", "issn": "ISSN", "doi": "DOI", "url": "Url",
        "abstract": "Abstract Note", "pages": "Pages", "number": "Issue", "volume": "Volume", "publisher": "Publisher",
        "language": "Language", "note": "Extra", "keywords": "Manual Tags"}, extra_ids="Extra"),
    Preset("Covidence", ("Title", "Authors", "Covidence #"), {
        "ID": "Covidence #", "title": "Title", "author": "Authors", "abstract": "Abstract", "year": "Published Year",
        "month": "Published Month", "journal": "Journal", "volume": "Volume", "number": "Issue", "pages": "Pages", "doi": "DOI",
        "note": "Notes"}, accession="Accession Number"),
    *(Preset("The Lens", ("Lens ID", "Title", "Source Title", "Author/s"), {
        "ID": "Lens ID", "ENTRYTYPE": "Publication Type", "title": "Title", "author": "Author/s",
        "date": "Date Published", "year": "Publication Year", "journal": "Source Title", "issn": "ISSNs",
        "publisher": "Publisher", "abstract": "Abstract", "volume": "Volume", "number": "Issue Number",
        "keywords": "Keywords", "url": "External URL", "pmid": "PMID", "doi": "DOI", "pmcid": "PMCID"},
        ("Start Page", "End Page"), delimiter, fields={"database": "The Lens"})
      for delimiter in (",", "\t")),  # its CSV and its tab-separated file, which quotes a cell holding a ";"
    # RefWorks' tab-delimited file (Citavi's and RefWorks' export): every empty cell a space, no cell quoted, a
    # page range as its start and "other pages" (the article number where there is no start), the month and day
    # apart from the year ("03/30").
    Preset("RefWorks", ("Reference Type", "Reference Id", "Authors, Primary", "Title Primary"), {
        "ID": "Reference Id", "ENTRYTYPE": "Reference Type", "author": "Authors, Primary", "title": "Title Primary",
        "journal": "Periodical Full", "year": "Pub Year", "volume": "Volume", "number": "Issue",
        "keywords": "Keywords", "abstract": "Abstract", "publisher": "Publisher", "issn": "ISSN/ISBN",
        "language": "Language", "url": "URL", "doi": "DOI", "pmid": "PMID", "pmcid": "PMCID"},
        ("Start Page", "Other Pages"), "\t", quotes=False, month_day="Pub Date Free From"),
    # abstrackr's export of a project's citations: a labelled_at column for each reviewer besides its own, the
    # unlabelled citations after a heading of their own, each row ending where its last filled cell does, "0" as the
    # PubMed id of a citation that has none.
    Preset("abstrackr", ("(internal) id", "(source) id", "pubmed id", "consensus"), {
        "ID": "(internal) id", "title": "title", "author": "authors", "journal": "journal", "abstract": "abstract",
        "keywords": "keywords"}, accession="pubmed id", ragged=True),
    # Google Scholar's CSV (My library's export): no identifier, each row named by its position.
    Preset("Google Scholar", ("Authors", "Title", "Publication", "Volume", "Number", "Pages", "Year", "Publisher"), {
        "author": "Authors", "title": "Title", "journal": "Publication", "volume": "Volume", "number": "Number",
        "pages": "Pages", "year": "Year", "publisher": "Publisher"}),
    Preset("Rayyan", ("key", "title", "authors", "notes"), {
        "ID": "key", "title": "title", "author": "authors", "journal": "journal", "issn": "issn", "volume": "volume",
        "number": "issue", "pages": "pages", "year": "year", "publisher": "publisher", "url": "url",
        "abstract": "abstract", "note": "notes", "doi": "doi", "keywords": "keywords", "pmid": "pubmed_id"}),
)


# An article number as a citation labels it (Embase.com's "… 15:1 Article Number: 4063. Date of Publication: …"): read
# only where the citation labels one, and the number ends at the full stop or space after it.
LABELLED_ARTICLE_NUMBER = re.compile(r"\bArticle Number:\s*([A-Za-z0-9][\w-]*)", re.IGNORECASE)
# A date in words, day first ("1 Dec 2024", "21 June 2024", "Jun 2024"), as Embase.com writes a record's publication:
# read only when it is one such date whose word names a month ("Winter 2024", "1 Dec 2024 - 31 Jan 2025" are none);
# `entry_record` keeps it only when its year is the record's.
# Not ris.WORDED_DATE: that one reads the number before a month as part of a range ("4-8 Aug. 2020"), so no day,
# takes a day after the month ("MAR 15") and a year left out; here the number before is the day and the year is due.
WORDED_DATE = re.compile(r"(?:(?P<day>\d{1,2})\s+)?(?P<month>[A-Za-z]{3,9})\.?\s+(?P<year>\d{4})")


# An export's preamble before its header is at most this many lines (Embase.com's is 3: its search
# '"SEARCH QUERY","dinosaur:ti"', a line of dashes and a blank line).
PREAMBLE_LINES = 10


def preamble(head: str) -> list[str]:
    """The lines an export writes before its header (`head`: the file's start), as Embase.com's CSV does: those
    before the first line that is a known export's header or sitegen's, when a blank line (or a row of empty cells,
    as a spreadsheet saves it) ends them and each is
    a CSV row of its own (its quotes close on it); [] when the file opens with its header or has no such line. A
    row above a header with no blank line between is not taken for a preamble: it may be data."""
    lines = io.StringIO(head, newline="").readlines()[:PREAMBLE_LINES + 1]
    if not lines or preset(first_line(head)) or is_sitegens_header(_names(first_line(head), ",")):
        return []
    for at in range(2, len(lines)):
        written = lines[at].rstrip("\r\n")
        # A row of empty cells is a blank line: a spreadsheet saving the export writes its blank line as one (",,,")
        if lines[at - 1].strip(" \t\r\n,") or not (preset(written) or is_sitegens_header(_names(written, ","))):
            continue
        return lines[:at] if all(_one_row(line) for line in lines[:at]) else []
    return []


def _one_row(line: str) -> bool:
    """Whether a line is a CSV row of its own: its quotes close on it and it parses."""
    try:
        return line.count('"') % 2 == 0 and len(list(csv.reader([line], strict=True))) <= 1
    except csv.Error:
        return False


def _line(head: str, at: int) -> str:
    """Line `at` (from 0) of the file's start, without its line end."""
    return io.StringIO(head, newline="").readlines()[at].rstrip("\r\n") if at else first_line(head)


def _names(line: str, delimiter: str) -> list[str]:
    return [name.strip().lstrip("\ufeff") for name in _header(line, delimiter)]


def first_line(text: str) -> str:
    """The first line of `text`, ended by any line ending: a CSV saved on a Mac (Excel's "CSV (Macintosh)", Web
    of Science's "Tab-delimited (Mac)") ends its lines with a lone \\r."""
    return re.split(r"[\r\n]", text, maxsplit=1)[0]


def not_a_records_csv(text: str) -> str:
    """Why a file (`text`) is read as no format: a records CSV separated by ';' or tabs (as spreadsheets in
    German or French settings save one) is named as such, and so is a known export's whose header follows the lines
    of its preamble (Embase.com's CSV saved again by Excel: "SEARCH QUERY;dinosaur:ti;;;", then its header)."""
    lines = io.StringIO(text[:65536].lstrip(), newline="").readlines()[:PREAMBLE_LINES + 1]  # of the first 64 KB
    for at, line in enumerate(lines[1:], start=2):
        if (said := _separated_otherwise(line.rstrip("\r\n"), anywhere=False)) != UNRECOGNISED:
            return f"line {at} is the header of {said}"
    return _separated_otherwise(first_line(text[:65536].lstrip()))


def _separated_otherwise(header: str, anywhere: bool = True) -> str:
    """What `header` is when it is a records CSV's separated by ';' or tabs (`not_a_records_csv`); UNRECOGNISED when
    it is not. Off the first line (not `anywhere`), only a known export's header or sitegen's counts."""
    separator = next((mark for mark in ";\t" if mark in header), None) if "," not in header else None
    names = [name.strip().lstrip("\ufeff") for name in next(csv.reader([header], delimiter=separator))] \
        if separator else []
    # A known export's header too (Covidence's or Scopus's CSV opened and saved again by a spreadsheet, or Excel's
    # "Unicode text", tab-separated): it was "unrecognised format", with no word of the separator.
    known = next((known for known in PRESETS if known.delimiter != separator and set(known.signature) <= set(names)),
                 None)
    if ("ID" in names and anywhere) or is_sitegens_header(names) or known:
        written = "';' (as spreadsheets in German or French settings save)" if separator == ";" else "tabs"
        what = f"{'an' if known.name[0] in 'AEIOU' else 'a'} {known.name} CSV export" if known else "a records CSV"
        return f"{what} separated by {written}, not commas: save it as CSV with commas (UTF-8), then import it"
    return UNRECOGNISED


def read_csv(text: str | Iterable[str], warnings: list[str] | None = None, skipped: Skipped | None = None,
             columns: dict[str, str] | None = None) -> list[Entry]:
    """The rows of a records CSV (its text, or its text in pieces as it is read: each row is read as its lines come,
    and let go); ReferenceProblem names the line of the first malformed one (1 is the header; with `skipped`, each
    malformed row is listed there instead). IDs are the ID column's, and a repeated one is a problem. A known
    export (a preset) missing some of its usual columns is read, and `warnings` names the columns, whose fields
    stay empty (a renamed "DOI" would lose every DOI)."""
    pieces = iter([text] if isinstance(text, str) else text)
    head = _head(pieces)
    skipped_lines = [] if columns else preamble(head)
    header = _line(head, len(skipped_lines))
    known = None if columns else preset(header)
    if skipped_lines and warnings is not None:
        warnings.append(f"lines 1-{len(skipped_lines)}, before the header on line {len(skipped_lines) + 1}, were "
                        f"skipped as the export's preamble, not records (line 1: {skipped_lines[0].strip()[:80]!r})")
    if known is not None and warnings is not None:
        written = {name.strip().lstrip("\ufeff") for name in _header(header, known.delimiter)}
        if missing := [column for column in known.columns.values() if column not in written]:
            warnings.append(f"a {known.name} export without the column(s) {', '.join(repr(c) for c in missing)}: "
                            "those fields are left empty; if they are there under other names, map them with "
                            "--columns FIELD=COLUMN")
    return checked(_rows(head, pieces, columns or {}, len(skipped_lines)), skipped)


def _head(pieces: Iterator[str]) -> str:
    """The start of a text given in pieces that says what the file is: its first 64 KB (`not_a_records_csv` reads
    them) and its first line whole (its header)."""
    head: list[str] = []
    size, ended = 0, False  # whether a line end has been read
    while not (ended and size >= 65536) and (piece := next(pieces, None)) is not None:
        head.append(piece)
        size += len(piece)
        ended = ended or "\n" in piece or "\r" in piece
    return "".join(head)


def _lines(pieces: Iterable[str]) -> Iterator[str]:
    """The lines of a text given in pieces, each with its line end as written ("\\r\\n", "\\r" or "\\n"), as
    io.StringIO(text, newline="") gives them to csv.reader: a quoted cell's line breaks are its own."""
    line: list[str] = []  # the pieces of the line not yet ended
    for piece in pieces:
        if "\n" not in piece and "\r" not in piece:
            line.append(piece)
            continue
        *ended, last = io.StringIO("".join(line) + piece, newline="").readlines()
        yield from ended
        line = [last]  # not yet ended, or ended by a CR that may be the first half of a CRLF
    yield from io.StringIO("".join(line), newline="").readlines()


def column_mapping(text: str) -> dict[str, str]:
    """"FIELD=COLUMN,..." (a command line's --columns) as a mapping for `read_csv`; ValueError saying
    what is wrong with it."""
    mapping: dict[str, str] = {}
    for pair in text.split(","):
        name, equals, column = (part.strip() for part in pair.partition("="))
        if not equals or not name or not column:
            raise ValueError(f"{pair.strip()!r} is not FIELD=COLUMN")
        if name not in ("ID", "ENTRYTYPE", *FIELDS):
            raise ValueError(f"{name!r} is not an entry field (fields: ID, ENTRYTYPE, {', '.join(FIELDS)})")
        if name in mapping:
            raise ValueError(f"{name!r} is given twice")
        mapping[name] = column
    return mapping


def preset(header_line: str) -> Preset | None:
    """The known export whose header `header_line` is, if any."""
    for known in PRESETS:
        written = [name.strip().lstrip("\ufeff") for name in _header(header_line, known.delimiter)]
        if set(known.signature) <= set(written):
            return known
    return None


def _header(line: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return []


def _rows(head: str, pieces: Iterator[str], columns: dict[str, str],
          skip: int = 0) -> Iterator[Entry | ReferenceProblem]:
    """Each row of the text `head` and then `pieces` make, as an entry or its problem; the header is after the
    first `skip` lines (an export's preamble: see `preamble`), each a row of its own."""
    known = None if columns else preset(_line(head, skip))
    tabbed = known is not None and known.delimiter == "\t"
    lines = _lines(itertools.chain([head], pieces))
    row: list[str] = []  # the lines of the row being read, for the problem of one that does not parse

    def kept(lines: Iterator[str]) -> Iterator[str]:
        for line in lines:
            row.append(line)
            yield line

    # Web of Science's tab-delimited file quotes nothing: a '"' in a title is a character, not a quote.
    reader = csv.reader(kept(lines), strict=True, delimiter="\t" if tabbed else ",",
                        quoting=csv.QUOTE_NONE if known is not None and not known.quotes else csv.QUOTE_MINIMAL)
    try:
        for _ in range(skip):
            next(reader)
        header = next(reader)
    except StopIteration:
        raise ReferenceProblem(1, "the file is empty; it needs a header row with an ID column") from None
    except csv.Error as error:
        raise _syntax_problem(itertools.chain(row, lines), 1, reader.line_num, error) from None
    written = [name.strip().lstrip("\ufeff") for name in header]
    layout = None if columns else sitegens_layout(written)
    sitegens = layout is not None
    if known is not None:
        columns = {name: column for name, column in known.columns.items() if column in written}
    columns = {name: column for name, column in SITEGEN_MAPPING.items() if column in written} if sitegens else columns
    if missing := [column for column in columns.values() if column not in written]:
        raise ReferenceProblem(skip + 1, f"no column {missing[0]!r} (columns: {', '.join(written)})")
    field_of = {column: name for name, column in columns.items()}
    names = [field_of.get(name) or (f"column {name}" if name in columns else name) for name in written]
    if layout is not None:  # a person's own columns after sitegen's are not read as sitegen's, whatever their name
        names[layout:] = [f"column {name}" if name in SITEGEN_COLUMNS else name for name in names[layout:]]
    if "ID" not in names and not columns:
        if len(names) < 2:  # one column and no ID: a MEDLINE (.nbib) or other text file, not a table
            raise ReferenceProblem(1, not_a_records_csv(head))
        raise ReferenceProblem(1, f"no ID column (columns: {', '.join(names)})")
    # A column named twice is refused where it is read: which of the two is meant cannot be told. A known export's
    # columns that no field is read from may repeat (abstrackr's "labeled_at", one for each reviewer).
    if twice := next((name for name in written if written.count(name) > 1 and (
            known is None or name in columns.values() or name in known_columns(known))), None):
        raise ReferenceProblem(skip + 1, f"column {twice!r} appears twice")
    position = 0
    while True:
        # A quoted field can hold line breaks: a row's problems are reported on its first line.
        line = reader.line_num + 1
        row.clear()
        try:
            values = next(reader)
        except StopIteration:
            if not position:  # as every other format's reader says of a file without a record
                raise ReferenceProblem(skip + 2, "no record: the file has a header row and no row under it") from None
            return
        except csv.Error as error:
            raise _syntax_problem(itertools.chain(row, lines), line, reader.line_num, error) from None
        if not any(value.strip() for value in values):
            continue
        ragged = known is not None and known.ragged and len(values) < len(names)
        if ragged and len(values) == 1:
            continue  # a heading between the rows
        position += 1
        if tabbed and len(values) == len(names) + 1 and not values[-1]:
            values = values[:-1]  # Web of Science ends each row with a tab
        if ragged:
            values = [*values, *[""] * (len(names) - len(values))]
        if len(values) != len(names):
            yield ReferenceProblem(line, f"{counted(len(values), 'field')} where the header has {len(names)}")
            continue
        values = [forced_text_read(value) for value in values]
        if formula := next(((name, value) for name, value in zip(written, values, strict=True)
                            if "=" in value and SPREADSHEET_FORMULA.match(value)), None):
            yield ReferenceProblem(line, f"column {formula[0]!r} holds a spreadsheet formula ({formula[1][:40]!r}), "
                                         "not the text it shows: open the file in the spreadsheet and save it as "
                                         "CSV (UTF-8), which writes each formula's value")
            continue
        fields: dict[str, str] = {}
        if sitegens:
            values = [_FORMULA_GUARD.sub("", value) for value in values]
            values[written.index("authors")] = author_list(NAME_SEPARATOR.split(values[written.index("authors")]))
        else:  # another tool's empty cell, as R writes one ("NA"); sitegen writes an empty cell empty
            values = [value if name == "ID" or value.strip().lower() not in NOTHING else ""
                      for name, value in zip(names, values, strict=True)]
        for name, value in zip(names, values, strict=True):
            fields[ALIASES.get(name, name)] = fields.get(ALIASES.get(name, name)) or value
        for name, column in columns.items():  # a column read as two fields (PubMed's PMID is its ID too)
            fields.setdefault(name, values[written.index(column)])
        fields["ID"] = fields["ID"].strip() if "ID" in fields else f"csv-{position}"
        if sitegens:
            _read_notices(fields)
        if known is not None:
            _preset_fields(known, fields)
        elif not sitegens and (columns or not AUTHORS_AND.search(fields.get("author", ""))):
            # A mapped export's author list, as exports write one ("Family, Given; ..."); so too a list in the
            # benchmark's columns not written as BibTeX's ("Liu, Y; Li, C", PubMed's "He L, Chen X"), which was read
            # as one author's name.
            fields["author"] = exported_authors(fields.get("author", ""))
        if not sitegens and at_embase([fields.get("url", "")]):
            fields["database"] = EMBASE  # a record at its Embase.com address, as RIS reads one (Rayyan's url)
        if not fields.get("label") and (found := RAYYAN_INCLUSION.search(fields.get("note", ""))):
            fields["label"] = found.group(1)
        if not sitegens and fields.get("type", "").strip().lower() in CSL_TYPES_OF_OTHER_SENSES:
            fields["type"] = ""  # not said to be CSL's: another CSV's "Review" is a review article's, most likely
        yield Entry(fields["ID"], fields, line)


def known_columns(known: Preset) -> set[str]:
    """Every column a known export's fields are read from, its mapping's and those read beside it."""
    return {*known.columns.values(), *(known.page_range or ()), *(known.page_count or ()), *known.rather.values(),
            *(column for column in (known.article_number, known.page_span, known.accession, known.written_date,
                                    known.database_link, known.extra_ids, known.citation, known.month_day) if column),
            *(known.kinds or ())}


def _read_notices(fields: dict[str, str]) -> None:
    """sitegen's `updates` and `notice_of` cells, written in words (see `references.fields`), as the JSON lists
    `entry_record` reads (the reinstatements the `updates` cell lists as `reinstatements`, the other versions as
    `stated_versions`); a cell of other words is
    given as one item, which it leaves out with a note."""
    for name, read_there in (("updates", ("updates", "reinstatements", "stated_versions")), ("notice_of", ("notice_of",))):
        if cell := fields.get(name, "").strip():
            read = read_standing(statements(cell))
            if read is None or not any(read[field] for field in read_there):
                fields[name] = json.dumps([cell], ensure_ascii=False)
                continue
            fields.update({field: read[field] for field in read_there})


def _preset_fields(known: Preset, fields: dict[str, str]) -> None:
    """A known export's row (`fields`, by entry field or by column name) read as its vendor writes it."""
    field_of = {column: name for name, column in known.columns.items()}

    def cell(column: str) -> str:  # a column read as a field is also kept under its own name, or read as the field
        return fields.get(f"column {column}", fields.get(column, fields.get(field_of.get(column, ""), ""))).strip()

    fields.update(known.fields)
    fields.update({name: written for name, column in known.rather.items() if (written := cell(column))})
    if known.name_separator:
        fields["author"] = fields.get("author", "").replace(known.name_separator, ";")
    fields["author"] = exported_authors(fields.get("author", ""))
    if known.page_range and not fields.get("pages"):
        start, end = (cell(column) for column in known.page_range)
        fields["pages"] = f"{start}-{end}" if start and end and start != end else start or end
    if known.page_span and not fields.get("pages"):
        fields["pages"] = wos.page_span(cell(known.page_span))
    if known.article_number and not fields.get("pages"):
        fields["pages"] = cell(known.article_number)
    if known.article_number_in and not fields.get("pages") and \
            len(numbers := LABELLED_ARTICLE_NUMBER.findall(cell(known.article_number_in))) == 1:
        fields["pages"] = numbers[0]
    if known.worded_date and not fields.get("date"):
        fields["date"] = worded_date(cell(known.worded_date))
    if known.medline_ids and not fields.get("pmid"):
        fields["pmid"] = wos.pubmed_id(fields["ID"])
    if known.accession and not fields.get("pmid"):
        fields["pmid"] = accession_pmid(cell(known.accession))
    if known.kinds:
        fields.update(wos.kind_fields(*map(cell, known.kinds)))
    if known.page_count and not fields.get("pages"):
        fields["pages"] = counted_pages(*map(cell, known.page_count))
    if known.month_day and (found := MONTH_DAY.fullmatch(cell(known.month_day))):
        fields["date"] = iso_date([fields.get("year", "").strip(), *found.groups()])
    if known.written_date:
        fields.update(written_date(cell(known.written_date)))
    if known.citation:
        cited = nlm_citation(cell(known.citation), fields.get("year", "").strip())
        fields.update({name: value for name, value in cited.items() if not fields.get(name, "").strip()})
    if known.extra_ids:
        for line in cell(known.extra_ids).splitlines():
            label, _, value = (part.strip() for part in line.partition(":"))
            if label.lower() in ("pmid", "pmcid") and value and not fields.get(label.lower()):
                fields[label.lower()] = value
    if known.database_link and (code := EBSCOHOST_LINK.search(cell(known.database_link))):
        fields["database"] = EBSCOHOST_DATABASES.get(code[1].lower(), code[1])
        if PUBMED_DATABASE.search(fields["database"]) and not fields.get("pmid"):
            fields["pmid"] = accession_pmid(fields["ID"])  # MEDLINE's accession number is the PMID


# An NLM citation, as PubMed writes one: "Journal. 2020 Feb 3;63(2):103640. doi: …", the month, day, issue and pages
# as far as given ("Elife. 2022 Nov 30;11:e80092."); the journal's own full stops come before the date.
_NLM_CITATION = re.compile(r"\.\s(?P<year>\d{4})(?:\s(?P<month>[A-Z][a-z]{2})(?![a-z])(?:\s(?P<day>\d{1,2}))?)?[^;.]{0,20};"
                           r"(?P<volume>[^;:()\s]+)?(?:\((?P<issue>[^()]+)\))?(?::(?P<pages>[^\s;]+?))?\.(?:\s|$)")


def nlm_citation(citation: str, year: str) -> dict[str, str]:
    """The volume, issue, pages (MEDLINE's shortened range in full) and month and day an NLM citation gives, when
    its year is the entry's (`year`); {} for another text."""
    found = _NLM_CITATION.search(citation)
    if not found or found["year"] != year:
        return {}
    number = month_of(found["month"] or "")
    month = found["month"] if number else ""
    date = iso_date([year, number, found["day"] or ""]) if number else ""
    return {name: value for name, value in (("volume", found["volume"]), ("number", found["issue"]),
                                            ("pages", medline_pages(found["pages"])), ("month", month),
                                            ("date", date)) if value}


# The database code in an EBSCOhost record's address ("https://search.ebscohost.com/login.aspx?direct=true&db=aph&AN=…").
EBSCOHOST_LINK = re.compile(r"[?&]db=([A-Za-z0-9]+)")


def counted_pages(first: str, count: str) -> str:
    """The pages from a first page and a number of pages ("924", "11": "924-934"); the first page alone when either
    is not a number."""
    if not (first.isascii() and first.isdigit() and count.isascii() and count.isdigit()) or int(count) < 2:
        return first
    return f"{first}-{int(first) + int(count) - 1}"


MONTH_DAY = re.compile(r"(\d{1,2})/(\d{1,2})")

# EBSCOhost's dates: month/day/year ("4/3/2024"), a month or season glued to the year ("Jun2023", "Jun/Jul2023",
# "Spring2023"), or the year.
_SLASHED_DATE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")
_MONTH_AND_YEAR = re.compile(r"([A-Za-z]+)\.?(?:\s*[/-]\s*[A-Za-z]+\.?)?\s*(\d{4})")


def written_date(text: str) -> dict[str, str]:
    """The year, month and date (`fields`) a date as EBSCOhost writes it gives; {} for another text."""
    text = text.strip()
    if found := _SLASHED_DATE.fullmatch(text):
        date = iso_date([found[3], found[1], found[2]])
        return {"year": found[3], "date": date} if date else {}
    if found := _MONTH_AND_YEAR.fullmatch(text):
        return {"year": found[2], "month": found[1]}  # a season is no month: `entry_record` reads the year alone
    return {"year": text} if FOUR_DIGITS.fullmatch(text) else {}


# The database's author id in brackets after each name, as Scopus's "Author full names" writes it ("Wilson, Lauren N.
# (58975547800); ..."): no part of the name. Tried from the start of a run of spaces only, as AUTHORS_AND.
AUTHOR_ID = re.compile(r"(?<!\s)\s*\(\d+\)(?=\s*(?:;|$))")


def worded_date(text: str) -> str:
    """A date in words ("1 Dec 2024": see WORDED_DATE) in ISO form ("2024-12-01", "2024-12"), or "" when it is
    not one."""
    found = WORDED_DATE.fullmatch(text.strip())
    month = month_of(found["month"]) if found else None
    return iso_date([found["year"], month, found["day"] or ""]) if found and month else ""


def exported_authors(text: str) -> str:
    """An export's author list as BibTeX's: names split at " and " (Rayyan), ";" (Scopus, Web of Science) or,
    when every part is "Family Initials", at commas (PubMed, Covidence; a full stop ending a list that has no other is
    the list's, as PubMed closes one), and where an export glued them together
    ("Akita K.Isoda K.", Embase's: see `names.author_names`); each "Family Initials" read "Family, Initials"."""
    text = AUTHOR_ID.sub("", text)
    if text.endswith(".") and "." not in text[:-1] and family_initials(re.split("[,;]", text)[-1].strip()):
        text = text[:-1]  # the full stop closing PubMed's list ("Griffin DK, O'Connor RE."), no initial's
    if AUTHORS_AND.search(text):
        names = AUTHORS_AND.split(text)
    elif ";" in text:
        names = text.split(";")
    else:
        parts = [part.strip() for part in text.split(",")]
        names = parts if len(parts) > 1 and all(family_initials(part) for part in parts) else [text]
    return author_list(", ".join(found) if "," not in name and
                       (found := family_initials(name.strip())) else name
                       for name in author_names([name.strip() for name in names]))


def _syntax_problem(lines: Iterable[str], start: int, at: int, error: csv.Error) -> ReferenceProblem:
    """The problem of a row starting on line `start` that the csv module refused on line `at` (`lines`: the file's
    lines from `start` to its end): a quote that never closes is reported where it opens (the module only notices
    at the end of the file)."""
    opened = None
    for number, content in enumerate(lines, start=start):
        # Each quote opens a field or closes the one open (an escaped quote, "", closes and reopens: the state stays
        # right). Counted a line at a time: after an odd number, a field is open when none was; after an even number
        # (two or more), when one was, closed and another opened; either way it opened on this line.
        if quotes := content.count('"'):
            opened = number if (opened is None) == (quotes % 2 == 1) else None
    if opened:
        return ReferenceProblem(opened, "not valid CSV: a quoted field opens on this line and is never closed "
                                       "(a closing '\"' is missing)")
    where = "" if at == start else f" on line {at}"
    return ReferenceProblem(start, f"not valid CSV ({error}){where}")
