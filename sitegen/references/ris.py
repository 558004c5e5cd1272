"""RIS files (EndNote, Zotero, Covidence, Rayyan, PsycINFO, JSTOR, IEEE, Ovid, Embase.com exports) as entries.

rispy reads the tags; this module first walks the lines itself, because rispy keeps no line
numbers and passes over broken structure silently. A record runs from its TY line to its ER
line; a line inside it that is no tag continues the field above it. Between records only blank
lines, export headers ("Provider: JSTOR") and record numbers ("1.", the Cochrane Library's "Record #3 of 18") may stand. Tags of more
than two letters are not RIS and are left out with their continuations, but for PsycINFO's
"PMID  - ", read as the PMID. A tag in lower case is the tag; one spaced otherwise than by two spaces (one space, a
tab) is a problem on its line, never text of the field above.

An entry's ID is its ID tag or, without one, "ris-N" for the N-th record of the file (so it is
the same on every read of the same file). When ID tags repeat, as in RIS exports joined one after
another (each numbers its records from 1), every record is named by its position instead, and a
warning says so: IDs must be unique in the file, and mixing tags with positions could collide.

Besides the benchmark's fields, an entry has the PMID (see `_entry`), PMCID (any identifier tag
holding "PMC…"), arXiv and OpenAlex ids (their addresses in UR, where RIS exports put ids RIS has no
tag for; so too a PMID or PMCID no tag gives, from PubMed's, PMC's or Europe PMC's page in UR or L2, as Zotero
writes them), URL (the first other UR or L2), full date (DA, "2008/07/16/" or OpenAlex's "2008-07-16", when its
year is the record's), month (of a date in words, IEEE's "Mar. 2017", Web of Science's "NOV" or JSTOR's "Full publication date:
July-August 2016" in C1, when the date tags give none), ISSN (SN), keywords (KW), language (LA), publisher (PB), notes (N1, where Rayyan writes
its inclusion decisions: see `fields.fields`) and database (DB, DP; EBSCOhost's codes, "ccm", by the database's
name, "CINAHL"; of EndNote's one name a line, "Embase" then "Medline", the first; Ovid's without the segment after it, "ERIC <1992 to June 2024>" is ERIC; a record without one is
CENTRAL's or Web of Science's by its accession number, and an Embase.com record is Embase's whatever its DB). An author (AU, A1) with no comma whose name holds "and" is an organisation, and is braced (see
`fields.author_list`); a line of initials alone under a family name alone is that name's, as EPPI-Reviewer splits one
(see INITIALS_ALONE). The page range of a record the export says came from PubMed or MEDLINE (`PUBMED_DATABASE`)
has its last page in full, as MEDLINE's own files are read. The year is that of the first of PY, Y1 and DA that
holds one: a date whose year part is empty ("//", "///", as exports write an unknown date) is none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import rispy
from rispy.config import LIST_TYPE_TAGS, TAG_KEY_MAPPING

from sitegen.records.entry import Entry
from sitegen.records.ids import normalise_arxiv, normalise_openalex
from sitegen.records.model import FOUR_DIGITS, MONTH_BY_ABBREVIATION
from sitegen.records.pages import medline_pages
from sitegen.references.fields import (
    EMBASE,
    GLUED_RIS_TAG,
    LISTS,
    NOTE_PMID,
    PMCID,
    at_embase,
    author_list,
    family_initials,
    fields,
    iso_date,
    issns,
    joined,
    standing_among,
)
from sitegen.references.problems import (
    ReferenceProblem,
    Skipped,
    checked,
    each,
    lines_of,
    named,
    written_year,
)
from sitegen.references.records import EMBASE_ADDRESSES, ids_at

TAG = re.compile(r"([A-Z][A-Z0-9])  -(?: |$)")
LONG_TAG = re.compile(r"[A-Z][A-Z0-9]{2,3}  -(?: |$)")
# A tag written in lower or mixed case ("ti  - ", "Au  - ", as files converted or typed by hand write them): read as
# the tag in capitals. Left as text, it would be glued to the field above it (a DOI into the year).
ANY_CASE_TAG = re.compile(r"[A-Za-z][A-Za-z0-9]  -(?: |$)")
# A known tag with the wrong spacing ("AU - Smith", "AU  -Smith", a tab or a no-break space for a space): a broken
# tag line, not text ("CA-125 levels" on a line of its own is text: no space by the hyphen). Any two letters are a
# tag with a tab beside their hyphen ("ZZ\t- ", "au\t- "): prose holds no tab, but a wrapped line may start "is - ".
_KNOWN = "|".join(sorted(set(TAG_KEY_MAPPING) - {"UK"}))
BROKEN_TAG = re.compile(rf"(?:{_KNOWN})(?:[ \t\xa0]+-|[ \t\xa0]*-[ \t\xa0])"
                        r"|[A-Za-z][A-Za-z0-9][ \xa0]*(?:\t[ \t\xa0]*-|-[ \xa0]*\t)")
HEADER_DATABASE = re.compile(r"Database:\s*(\S.*)", re.IGNORECASE)
# An export header ("Provider: JSTOR", and Cochrane's 'Content:text/plain; charset="UTF-8"' without the space; not
# an address's "http://") or a record's number ("1.", and the Cochrane Library's "Record #3 of 18" above each record's
# header: its real RIS export was refused as text outside a record).
BETWEEN_RECORDS = re.compile(r"[A-Za-z][\w .-]*:(?:\s|(?!//)\S).*|\d+\.?|Record #\d+ of \d+")

# Tags where exports write a PMID or PMCID (EndNote's accession number and custom fields, Zotero's
# notes); see `_entry` for which values count.
IDENTIFIER_TAGS = ("AN", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "M1", "N1")
FIELD_TAGS = IDENTIFIER_TAGS[:-1]  # fields that hold identifiers only: a labelled PMID anywhere in them counts
# "PMID: 123", and the Cochrane Library's "PUBMED 21314913" (C3  -  PUBMED 38407106,EMBASE 643589775).
LABELLED_PMID = re.compile(r"\b(?:PMID:?|PUBMED)\s*(\d+)\b", re.IGNORECASE)
# EBSCOhost names a record's database by its code (DB  - ccm): the databases of its common codes, by the names reviews
# give them (an edition, "CINAHL Complete" or "MEDLINE with Full Text", is the database). A code not here is kept.
EBSCOHOST_DATABASES = {
    "ccm": "CINAHL", "cin20": "CINAHL", "c8h": "CINAHL", "rzh": "CINAHL",
    "cmedm": "MEDLINE", "mdc": "MEDLINE", "mnh": "MEDLINE",
    "psyh": "APA PsycInfo", "pdh": "APA PsycArticles", "eric": "ERIC", "awn": "Africa-Wide Information",
    "aph": "Academic Search Premier", "a9h": "Academic Search Complete", "asn": "Academic Search Ultimate",
    "bth": "Business Source Premier", "buh": "Business Source Complete", "hch": "Health Source: Nursing/Academic Edition",
    "sph": "SPORTDiscus", "s3h": "SPORTDiscus", "8gh": "GreenFILE", "ufh": "Communication & Mass Media Complete",
    "eoh": "EconLit", "ahl": "America: History & Life", "hia": "Historical Abstracts", "rfh": "ATLA Religion Database",
}
PUBMED_DATABASE = re.compile(r"pubmed|medline|\bNLM\b", re.IGNORECASE)
# EBSCOhost's CINAHL note lists a record's fields by label, its PMID as "PMID: NLM23809603." (a work a note cites
# is never written so).
EBSCO_NOTE_PMID = re.compile(r"\bPMID:\s*NLM(\d+)\b")
# Its publication types are one of those fields: "Publication Type: Journal Article; Research; Tables/Charts." (the
# types, CINAHL's and MEDLINE's, hold no full stop).
EBSCO_NOTE_TYPES = re.compile(r"(?:^|\.\s+)Publication Type:\s*([^.\n]+)", re.MULTILINE)
# A date written in words: IEEE Xplore's "Y1  - Mar. 2017" (a conference's "4-8 Aug. 2020"), JSTOR's "C1  - Full
# publication date: July-August 2016" (the first month is the issue's), Web of Science's "DA  - NOV" or "DA  - MAR 15"
# beside PY's year. The word is the entry's month, read as a month only when it names one ("Winter 2014" names none),
# and only when the year written after it, if any, is the record's.
# A day after a single month ("MAR 15") is the date's day.
# Not table.WORDED_DATE (Embase.com's "1 Dec 2024"): there the number before the month is the day and a year is due;
# here it may begin a range of days (a conference's), so it is no day, and the year may be in another tag.
WORDED_DATE = re.compile(r"(?:\d{1,2}(?:-\d{1,2})?\s+)?(?P<month>[A-Za-z]{3,9})\.?"
                         r"(?P<until>\s*[-/]\s*[A-Za-z]{3,9}\.?)?(?:\s+(?P<day>\d{1,2}))?(?:,?\s+(?P<year>\d{4}))?")
ISO_DATE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")
JSTOR_DATE = re.compile(r"Full publication date:\s*(.+)", re.IGNORECASE)
SCOPUS_DATABASE = re.compile(r"\bscopus\b", re.IGNORECASE)
# The Cochrane Library's RIS names no database, but its records are CENTRAL's by their accession numbers
# (ID  - CN-01646457) and addresses (cochranelibrary.com/central/...): read as that database, as a DB tag names one.
CENTRAL_ACCESSION = re.compile(r"CN-\d{8}")
CENTRAL_ADDRESS = re.compile(r"^https?://(?:www\.)?cochranelibrary\.com/central/", re.IGNORECASE)
CENTRAL = "Cochrane CENTRAL"
# Web of Science's RIS names no database either, but its accession numbers (AN  - WOS:000282053100002) are its own.
WOS_ACCESSION = re.compile(r"WOS:\w+", re.IGNORECASE)
WEB_OF_SCIENCE = "Web of Science"
# Embase.com's RIS gives each record its address there (UR  - https://www.embase.com/search/results?...&id=L...) and
# its DB tags the sources that index it ("Embase", "Medline", both): its records are Embase's, the database searched
# (`fields.at_embase`), and a bare number in C5 is the record's PMID.
# Ovid names a database with the segment searched after it in angle brackets ("ERIC <1992 to June 2024>", "APA
# PsycInfo <2021>", "Embase <1974 to 2024 June 10>"): the segment is no part of the name, and one export's records
# were counted under as many databases as it held segments.
OVID_SEGMENT = re.compile(r"\s*<[^<>]*>$")
# A DOI's address in L1, where Ovid's ERIC writes a record's DOI (L1  - https://dx.doi.org/10.1080/...).
DOI_ADDRESS = re.compile(r"^https?://(?:dx\.)?doi\.org/10\.", re.IGNORECASE)
DOI_LIKE = re.compile(r"10\.\d{4,9}/")

# Read each tag under its own name ("VO" is a volume tag some exports write instead of VL).
# Ovid's PT, its records' publication types ("Journal, Peer Reviewed Journal"), is no RIS tag: read too; so is
# L3, where EBSCOhost writes a record's DOI alone.
MAPPING = {tag: tag for tag in [*TAG_KEY_MAPPING, "VO", "PT", "L3"]}
# Ovid's APA PsycInfo writes the subject classification in M3, each class with its code ("Cognitive Therapy
# [3311]"), where Scopus and EndNote write the type of work: no type.
CLASSIFICATION = re.compile(r"\[\d+\]\s*$")
# RefWorks writes a record's publication types in M1 ("M1  - Journal Article"), a tag others fill with an id or a
# number (Scopus's, EndNote's issue or article number), and its RIS is known by its ids ("ID  - RefID:887-eberth2024")
# or its note, "undefined" before the affiliations (REFWORKS_PLACEHOLDER). Only there is an M1 of words (no digit) a
# type.
REFWORKS_ID = re.compile(r"RefID:\d")
# RefWorks writes a record's note (N1) as the fields it keeps there joined by "; ": the note itself, or "undefined",
# its placeholder for none, then the addresses Embase lists after its authors' names, each labelled with the RIS tag
# Embase wrote it in ("undefined; M1: (Eberth D.A., deberth@cciwireless.ca) Royal Tyrrell Museum of Palaeontology,
# Drumheller, AB, Canada"). Neither the placeholder nor an address list in that form (`records.EMBASE_ADDRESSES`), in
# any export's note, is a note: a part of a note after "; " that starts with a bracket, labelled or not, is one when
# it holds an address so written.
REFWORKS_PLACEHOLDER = re.compile(r"undefined(?:;\s*|\s*$)")
NOTE_PARTS = re.compile(r";\s+(?=(?:[A-Z][A-Z0-9]:\s*)?\()")
PART_LABEL = re.compile(r"[A-Z][A-Z0-9]:\s*")
# An editor's role written after the name, as RIS's suffix part ("Hern, Matt, Ed", as Ovid's ERIC writes it) or
# in brackets ("Hern, Matt (Eds.)"): a role, not part of the name. A name with no part after the given names
# keeps "Ed" as them ("Smith, Ed" is Ed Smith).
EDITOR_ROLE = re.compile(r"\s*(?:,\s*Eds?\.?|\(\s*Eds?\.?\s*\))\s*$", re.IGNORECASE)
RECORD_NUMBER = re.compile(r"\d+\.")
# EPPI-Reviewer writes a name "Family Initials" with no comma ("Fawcett M J"), and a family name of two words as two
# author lines, the family name and then its initials ("Dos Santos" and "H B", Embase's "Dos Santos, H.B."). A line
# of initials alone ("H B", "H.B.", "H", "J-P") is no one's whole name: it is the initials of the line above when that
# is a family name alone (no comma, no initials of its own: "Dos Santos", "van der Berg", "El Amrani"). Under a whole
# name ("Troiano L P", "Smith, John") it stays a line of its own, so two authors are never made one. Initials are
# single capitals each apart from the next: "LE", "WU", "EL", family names in capitals, are no initials.
INITIALS_ALONE = re.compile(r"[A-Z](?:[.\s-]+[A-Z])*\.?")
OVID_ADDRESS = re.compile(r"^https?://ovidsp\.(?:[a-z]+\.)?ovid\.com/", re.IGNORECASE)

# RIS reference types (and EndNote's spelled-out names) to BibTeX entry types.
ENTRY_TYPES = {
    "JOUR": "article", "JFULL": "article", "EJOUR": "article", "ABST": "article", "INPR": "article",
    "MGZN": "article", "NEWS": "article", "JOURNAL ARTICLE": "article",
    "CONF": "inproceedings", "CPAPER": "inproceedings", "CONFERENCE PAPER": "inproceedings",
    "CONFERENCE PROCEEDINGS": "inproceedings",
    "BOOK": "book", "EBOOK": "book", "EDBOOK": "book", "CHAP": "incollection", "ECHAP": "incollection",
    "BOOK SECTION": "incollection", "THES": "phdthesis", "THESIS": "phdthesis", "RPRT": "techreport",
    "REPORT": "techreport", "DATA": "dataset", "DATASET": "dataset",
    # an unpublished work (a preprint: sitegen's export writes one so) is CSL's "article", as a @misc is
    "UNPB": "misc", "MANSCPT": "unpublished", "MANUSCRIPT": "unpublished",
    # biblatex's types for what classic BibTeX has none for; ELEC is the RIS specification's and Zotero's web page,
    # WEB and "Web Page" EndNote's
    "ELEC": "online", "WEB": "online", "WEB PAGE": "online", "COMP": "software", "PAT": "patent", "STAND": "standard",
    "ENCYC": "inreference", "DICT": "inreference", "BLOG": "online", "CASE": "jurisdiction", "MPCT": "movie",
}
# RIS types that name a CSL type no BibTeX entry type names: read as that type (the entry's `type`).
CSL_TYPES_OF_RIS = {"MGZN": "article-magazine", "NEWS": "article-newspaper", "DICT": "entry-dictionary",
                    "BLOG": "post-weblog", "PCOMM": "personal_communication", "MUSIC": "musical_score"}


@dataclass
class _Record:
    start: int
    lines: list[str] = field(default_factory=list)
    tag_lines: dict[str, int] = field(default_factory=dict)
    pmid: str = ""  # from PsycINFO's four-letter PMID tag, which rispy is not given
    database: str = ""  # what the export's header names ("Database: PsycINFO"), for records naming none
    # A tag that holds one value, given again with another (line, tag, value): the first is read, the
    # reader is told of the rest.
    left_out: list[tuple[int, str, str]] = field(default_factory=list)
    firsts: dict[str, str] = field(default_factory=dict)  # the first value of each tag, as written
    numbered: bool = False  # after a line of its number alone ("6. "), as Ovid numbers the records it exports


# Tags read as a list (authors, keywords, addresses, notes, ISSNs print and online, file links) and the abstract,
# whose paragraphs some exports write as AB lines one after another: every value of these is read. So is C1, where
# OpenAlex writes each author's addresses, a C1 line each after the AU line: every record with a second address
# was said to have a second C1 left out.
EVERY_VALUE_TAGS = [*LIST_TYPE_TAGS, "AB", "N2", "SN", "L1", "L2", "L4", "C1"]


def read_ris(text: str | Iterable[str], warnings: list[str] | None = None,
             skipped: Skipped | None = None) -> list[Entry]:
    """The records of a RIS file (its text, or its lines as they are read: see `problems.lines_of`);
    ReferenceProblem names the line of the first malformed one (with `skipped`, every malformed record is
    listed there instead: see `problems.checked`). When ID tags repeat, a warning naming the first repeat is
    appended to `warnings`. Each record is read as it ends and let go: what is held is the entries."""
    items: list[Entry | ReferenceProblem] = []
    given: list[tuple[str, int]] = []
    for item in _records(lines_of(text)):
        if isinstance(item, ReferenceProblem):
            items.append(item)
            given.append(("", 0))
            continue
        [tags] = rispy.loads("\n".join(item.lines), mapping=MAPPING, list_tags=EVERY_VALUE_TAGS,
                             skip_unknown_tags=True)
        if warnings is not None:
            warnings.extend(f"line {line}: a second {tag} ({value[:60]!r}) was left out: the record's first {tag} "
                            f"({item.firsts[tag][:60]!r}) is read, as RIS gives a record one"
                            for line, tag, value in item.left_out)
        items.extend(each(_entry, [(item, tags)]))
        given.append((_text(tags.get("ID")), item.tag_lines.get("ID", 0)))
    if not items:
        raise ReferenceProblem(1, "no RIS record (a record starts with a 'TY  - ' line)")
    return checked(named(items, given, "ris", warnings), skipped)


def _records(lines: Iterable[str]) -> Iterator[_Record | ReferenceProblem]:
    """Each record of the file or, for a malformed one, its first problem, in order."""
    record: _Record | None = None
    problem: ReferenceProblem | None = None  # of the record being read
    skipping = False  # inside a tag that is not RIS, whose continuation lines go with it
    database = ""  # the database an export header names (APA, EBSCO: "Database: PsycINFO")
    numbered = False  # the last line outside a record that is not blank is a number alone
    for number, written in _unglued(lines):
        line = written[:2].upper() + written[2:] if ANY_CASE_TAG.match(written) else written
        tag = match.group(1) if (match := TAG.match(line)) else None
        if record is None:
            if tag == "TY":
                record, problem, skipping = _Record(number, [line], {"TY": number}, database=database,
                                                    numbered=numbered), None, False
            elif named := HEADER_DATABASE.fullmatch(line.strip()):
                database = named.group(1).strip()
            elif not tag and BROKEN_TAG.match(line):
                yield _broken(number, line)
            elif tag or LONG_TAG.match(line):
                yield ReferenceProblem(number, f"{line.split('-')[0].strip()} outside a record: a record starts "
                                               "with a 'TY  - ' line")
            elif line.strip() and not BETWEEN_RECORDS.fullmatch(line.strip()):
                yield ReferenceProblem(number, "text outside a record: neither a RIS tag line nor an export header")
            numbered = bool(RECORD_NUMBER.fullmatch(line.strip())) if line.strip() else numbered
            continue
        if tag == "TY":
            yield ReferenceProblem(record.start, f"the record starting here has no ER line before the next TY "
                                                 f"(line {number})")
            record, problem, skipping = _Record(number, [line], {"TY": number}, database=database), None, False
        elif tag:
            skipping = False
            record.lines.append(line)
            record.tag_lines.setdefault(tag, number)
            if tag not in EVERY_VALUE_TAGS:  # a tag that holds one value: a second, other one is said
                value = " ".join(line[6:].split())
                if tag in record.firsts and value != record.firsts[tag]:
                    record.left_out.append((number, tag, value))
                record.firsts.setdefault(tag, value)
            if tag == "ER":
                yield problem or record
                record = None
        elif LONG_TAG.match(line):
            skipping = True
            if line.startswith("PMID "):
                record.pmid = line.partition("-")[2].strip()
        elif BROKEN_TAG.match(line):
            problem = problem or _broken(number, line)
        elif not skipping:
            record.lines.append(line)
    if record is not None:
        yield ReferenceProblem(record.start, "the record starting here has no ER line before the end of the file")


def _unglued(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Each line with its number, a tag line holding glued tags (see GLUED_RIS_TAG) as one line for each tag."""
    for number, line in enumerate(lines, start=1):
        for piece in GLUED_RIS_TAG.split(line) if TAG.match(line) else [line]:
            yield number, piece


def _broken(number: int, line: str) -> ReferenceProblem:
    return ReferenceProblem(number, f"not a RIS tag line: a tag is two capitals, two spaces, '-' and a space "
                                    f"({line[:12]!r})")


def entry_of_tags(tags: dict[str, str | list[str]], start: int, tag_lines: dict[str, int],
                  names: dict[str, str] | None = None) -> Entry:
    """The entry RIS tags describe, as rispy gives them (a tag of EVERY_VALUE_TAGS as a list of its values, another
    as its value), for a format whose fields are RIS's under other names (EndNote XML, which EndNote's own RIS
    export writes as these tags): read as a RIS record is, so one reference is one entry whichever file brought it.
    `start` is the record's line, `tag_lines` each tag's; `names` says a tag as the format names its field in a
    problem ("year" for PY)."""
    return _entry((_Record(start, tag_lines=tag_lines), tags), names or {})


def _entry(pair: tuple[_Record, dict], names: dict[str, str] | None = None) -> Entry:
    record, tags = pair
    names = names or {}

    def first(*names: str) -> str:
        return next((value for name in names if (value := _text(tags.get(name)))), "")

    def values(*names: str) -> list[str]:
        return [text for name in names for value in _listed(tags.get(name)) if (text := value.strip())]

    kind = first("TY")
    if not kind:
        raise ReferenceProblem(record.start, f"the record has no reference type after {names.get('TY', 'TY')}")
    # The year of the first date tag that holds one: a tag with none (an empty date, "//", "in press") is passed
    # over, as an empty tag is, and a record whose every date is so has no year.
    year = next((found for name in ("PY", "Y1", "DA") if (written := _text(tags.get(name)))
                 if (found := _ris_year(written, record.tag_lines[name], names.get(name, name)))), "")
    month = date = ""
    if year:
        # RIS dates are "YYYY/MM/DD/other" with any part left empty; DA is the full date, PY often the year alone.
        date = next((full for name in ("DA", "PY", "Y1")
                     if (full := iso_date(_date_parts(_text(tags.get(name))))).startswith(year)), year)
        jstor_date = JSTOR_DATE.match(first("C1"))
        worded = next((found for text in (first("PY"), first("Y1"), first("DA"),
                                          jstor_date.group(1) if jstor_date else "")
                       if (found := WORDED_DATE.fullmatch(text)) and found.group("year") in (None, year)), None)
        month = date[5:7] or (worded.group("month") if worded else "")
        if date == year and worded and worded.group("day") and not worded.group("until") and \
                (number := MONTH_BY_ABBREVIATION.get(worded.group("month")[:3].lower())):
            # Web of Science's "DA  - SEP 22" beside "PY  - 2010": the full date (a day the month has not ends it)
            date = iso_date([year, number, worded.group("day")]) or year
    start, end = first("SP"), first("EP")
    entry_type = ENTRY_TYPES.get(kind.upper(), "misc")
    if not start and not end and entry_type in ("article", "inproceedings"):
        start = first("C7")  # the article number (RIS's C7 for journal and conference articles): its pages
    pages = f"{start}-{end}" if start and end and end != start and "-" not in start else start or end
    # M3, the type of work ("Article", "Erratum", "Review"), as Scopus and EndNote write it (some exports put a DOI
    # there), and the types EBSCOhost's note labels.
    # sitegen writes a notice's several types in one M3, each after "; "; RefWorks writes its types in M1.
    # Ovid's records (numbered, or naming the segment searched or Ovid's address) name their types in PT, each after ", " ("Journal, Peer Reviewed Journal"; ERIC's "Journal
    # Articles, Reports - Descriptive").
    addresses = values("UR", "L2")
    # EndNote writes each of a field's values on a line of its own ("DB  - Embase" and "Medline" below it, the sources
    # Embase.com says index a record): the database is the first, not the lines run together ("Embase Medline",
    # which was counted as a database of its own and, naming MEDLINE, read an Embase accession number as a PMID).
    named = next((value for tag in ("DB", "DP") if (value := record.firsts.get(tag) or _text(tags.get(tag)))), "")
    ovid = record.numbered or bool(OVID_SEGMENT.search(named)) or any(map(OVID_ADDRESS.match, addresses))
    refworks = _refworks(first("ID"), values("N1"))
    types = [*([] if DOI_LIKE.search(first("M3")) else
               [kind for kind in first("M3").split("; ") if not CLASSIFICATION.search(kind)]),
             *(first("PT").split(", ") if ovid else []),
             *(first("M1").split("; ") if refworks and not any(map(str.isdigit, first("M1"))) else []),
             *(kind for note in values("N1") for found in EBSCO_NOTE_TYPES.finditer(note)
               for kind in found.group(1).split(";"))]
    # AU and A1 are RIS's newer and older author tags: one list written under both is one list; else the
    # authors are read in the order the lines give them, whichever tag each has.
    listed, primary = tags.get("AU", []), tags.get("A1", [])
    authors = listed if primary == listed else _in_order(record, {"AU": listed, "A1": primary})
    # An id's address is the last of its kind: sitegen writes the record's own URL first and each id's address
    # after it, and a URL may be an id's address too (an arXiv preprint's abstract page, its arXiv DOI's).
    arxiv_at = max((at for at, address in enumerate(addresses) if normalise_arxiv(address)), default=None)
    openalex_at = max((at for at, address in enumerate(addresses) if normalise_openalex(address)), default=None)
    written = OVID_SEGMENT.sub("", named)
    embase_com = at_embase(addresses)
    database = EMBASE if embase_com else EBSCOHOST_DATABASES.get(written.lower(), written) or record.database or (
        CENTRAL if CENTRAL_ACCESSION.fullmatch(first("ID")) or any(map(CENTRAL_ADDRESS.match, addresses))
        else WEB_OF_SCIENCE if WOS_ACCESSION.fullmatch(first("AN")) else "")
    if PUBMED_DATABASE.search(database):  # MEDLINE's shortened range ("221-8", or SP 221 and EP 8) read in full
        pages = medline_pages(pages)
    # The PMID, most certain first: PsycINFO's PMID tag; the accession number of a record its export
    # says came from PubMed or MEDLINE (a bare number: Embase and CINAHL accession numbers are numbers
    # too); a PMID written as such ("PMID: 123") in an identifier field, or as a whole note line, or as
    # EBSCOhost labels it in a note.
    accession = first("AN") if PUBMED_DATABASE.search(database) and first("AN").isdigit() else ""
    if not accession and SCOPUS_DATABASE.search(database) and first("C2").isdigit():
        accession = first("C2")  # Scopus writes the PubMed ID there
    if not accession and embase_com and first("C5").isdigit():
        accession = first("C5")  # and Embase.com there
    labelled = [*(found.group(1) for value in values(*FIELD_TAGS) if (found := LABELLED_PMID.search(value))),
                *(found.group(1) for value in values("N1") for line in value.splitlines()
                  if (found := NOTE_PMID.fullmatch(line.strip()) or EBSCO_NOTE_PMID.search(line)))]
    # Last, the ids of the PubMed, PubMed Central and Europe PMC pages among the addresses, where Zotero writes them
    # (L2  - https://pubmed.ncbi.nlm.nih.gov/22752652/) and RIS has no tag for them.
    at_addresses = ids_at(addresses)
    # The notes sitegen writes of a work's notices, reinstatements and other versions and of the works a notice is
    # about (see `fields`), each a line.
    standing = standing_among(values("N1"))
    return Entry("", fields({
        "ENTRYTYPE": entry_type,
        "publication_types": joined(types),
        **{name: standing.get(name, "") for name in LISTS},
        "author": author_list(_without_role(name) for value in _rejoined(authors) for name in _glued(value)),
        # a short title (ST) is better than none for matching: some exports hold only that
        "title": first("TI", "T1", "ST"),
        "year": year,
        "journal": first("JF", "T2", "JO", "JA"),
        "volume": first("VL", "VO"),
        "number": first("IS"),
        "pages": pages,
        # EBSCOhost writes the DOI in L3 alone ("L3  - 10.4202/pp.2023.6802"), ERIC's Ovid export as its address in L1
        "doi": first("DO") or next((link for link in values("L1") if DOI_ADDRESS.match(link)), "")
        or (first("L3") if DOI_LIKE.match(first("L3")) else ""),
        "abstract": first("AB", "N2"),
        "pmid": record.pmid or accession or next(iter(labelled), "") or at_addresses.get("pmid", ""),
        "pmcid": next((found.group() for value in values(*IDENTIFIER_TAGS) if (found := PMCID.search(value))), "")
        or at_addresses.get("pmcid", ""),
        "arxiv": addresses[arxiv_at] if arxiv_at is not None else "",
        "openalex": addresses[openalex_at] if openalex_at is not None else "",
        "url": next((address for at, address in enumerate(addresses) if at not in (arxiv_at, openalex_at)), ""),
        "issn": issns(values("SN")),
        "keywords": joined(values("KW")),
        "language": first("LA"),
        "publisher": first("PB"),
        "note": " ".join(filter(None, (_note(note, refworks) for note in values("N1")))),
        "retracted": "yes" if any(note.strip() == "RETRACTED" for note in values("N1")) else "",
        "month": month,
        "date": date,
        "database": database,
        "type": CSL_TYPES_OF_RIS.get(kind.upper(), ""),
    }), record.start)


def _note(note: str, refworks: bool) -> str:
    """An N1's note (see NOTE_PARTS): without RefWorks' placeholder before it in a RefWorks record, and without the
    parts that are Embase's authors' addresses; as written when it holds neither."""
    text = note[found.end():] if refworks and (found := REFWORKS_PLACEHOLDER.match(note)) else note
    parts = NOTE_PARTS.split(text)
    kept = [part for part in parts if not EMBASE_ADDRESSES.match(part[label.end():] if (label := PART_LABEL.match(part))
                                                                  else part)]
    return "; ".join(kept) if len(kept) < len(parts) else text


def _refworks(identifier: str, notes: list[str]) -> bool:
    """Whether a record is RefWorks' (see REFWORKS_ID): its id, or a note as only RefWorks starts one."""
    return bool(REFWORKS_ID.match(identifier)) or any(REFWORKS_PLACEHOLDER.match(note) for note in notes)


def _date_parts(value: str) -> list[str]:
    """A RIS date's year, month and day: "YYYY/MM/DD/other" as RIS writes it, or an ISO date ("2024-02-01"), as
    OpenAlex's RIS export writes DA (read as "YYYY/MM/DD", it gave the year alone)."""
    return value.split("-") if ISO_DATE.fullmatch(value) else value.split("/")[:3]


def _ris_year(value: str, line: int, tag: str) -> str:
    """The year of a RIS date ("2008/07/16/", "2008", "Spring 2008"), or "" when it has none: besides the words
    for "not yet" (see `written_year`), a date whose year part is empty ("//", "///", "/07/16/"): RIS writes a
    date as "YYYY/MM/DD/other" with every part it does not know left empty, and EndNote and Zotero export a
    record without a year so. ReferenceProblem when the value is text holding no year ("in the spring")."""
    year_part, slash, rest = value.partition("/")
    if slash and not year_part.strip() and not FOUR_DIGITS.search(rest):
        return ""
    return written_year(value, line, tag)


def _glued(value: str) -> list[str]:
    """An author value holding several authors, as some exports write them in one AU: separated by semicolons when
    each is "Family, Given" or "Family Initials" ("Jones, A.; Brown, B.", "Jones A; Brown B"), by commas when each
    is "Family Initials" (a Vancouver list, "Jones A, Brown B", which was read as one author "Jones A" given the
    names "Brown B"). A value whose parts are not all so (an organisation's "Dept. of X; University of Y", "Smith,
    John") is one author, and so is one braced whole, as sitegen writes a name holding ";" (`fields.braced_name`)."""
    if value.startswith("{") and value.endswith("}"):
        return [value]
    parts = [part.strip() for part in value.split(";")]
    if len(parts) > 1 and all("," in part or family_initials(part) for part in parts):
        return parts
    parts = [part.strip() for part in value.split(",")]
    return parts if len(parts) > 1 and all(family_initials(part) for part in parts) else [value]


def _rejoined(authors: list[str]) -> list[str]:
    """The author values with each line of initials alone joined to the family name alone above it (see
    INITIALS_ALONE): ["Dos Santos", "H B"] is ["Dos Santos H B"]."""
    joined_names: list[str] = []
    for value in (value.strip() for value in authors):
        above = joined_names[-1] if joined_names else ""
        if INITIALS_ALONE.fullmatch(value) and above and "," not in above and not INITIALS_ALONE.fullmatch(above) \
                and not family_initials(above):
            joined_names[-1] = f"{above} {value}"
        else:
            joined_names.append(value)
    return joined_names


def _without_role(name: str) -> str:
    """An author's name without the editor's role written after it (see EDITOR_ROLE)."""
    found = EDITOR_ROLE.search(name)
    if found and name[:found.start()].strip() and ("(" in found.group() or "," in name[:found.start()]):
        return name[:found.start()]
    return name


def _in_order(record: _Record, read: dict[str, list[str]]) -> list[str]:
    """The values `read` of the tags it names (list tags, as rispy gives them), in the order of the record's
    lines: each non-blank line of one of the tags takes the next value of its tag."""
    order = [line[:2] for line in record.lines if line[:2] in read and TAG.match(line) and line[6:].strip()]
    values = {tag: iter(listed) for tag, listed in read.items()}
    in_order = [value for tag in order if (value := next(values[tag], None)) is not None]
    return in_order + [value for remaining in values.values() for value in remaining]  # none, as rispy reads them


def _listed(value: str | list[str] | None) -> list[str]:
    return value if isinstance(value, list) else [value] if value else []


def _text(value: str | list[str] | None) -> str:
    """A tag's value as one string (list tags joined); rispy gives a list for repeated list tags."""
    return " ".join(part.strip() for part in _listed(value) if part.strip())
