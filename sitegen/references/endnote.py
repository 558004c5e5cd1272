"""EndNote XML (EndNote's File > Export > XML, "XML" output) as entries.

A file is `<xml><records>` holding one `<record>` per reference; a record's fields are elements named for EndNote's
fields (`<titles><title>`, `<contributors><authors><author>`, `<dates><year>`, `<electronic-resource-num>`...),
their text as written or in `<style face="normal" font="default" size="100%">` runs (several in one field, a word
in italics between them, are one text). EndNote writes a whole file on one line: a record is named by its position
and its `<rec-number>` besides its line.

Each field is read as the RIS tag EndNote's own RIS export writes it to (see FIELDS), and the tags as a RIS record's
(`ris.entry_of_tags`): one reference exported from EndNote as XML or as RIS is one entry, its names, dates, DOI,
PMID (the accession number of a record from PubMed or MEDLINE), pages and database read alike. The reference type is
`<ref-type name="Journal Article">17</ref-type>`, by its name, else its number. An entry's ID is its rec-number, else
"endnote-N" by position; repeated rec-numbers (libraries' exports joined) name every record by position, with a
warning, as in RIS.

XML is untrusted: parsed by lxml fed in pieces (a record's elements are let go once it is read, so a file of
thousands of records is never held as one tree), with no entities, DTD or network, libxml2's limits on depth (256)
and text size kept; a document type declaration, which EndNote never writes and which is how entities are declared
(a billion laughs), is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

from sitegen.records.entry import Entry
from sitegen.records.model import FOUR_DIGITS
from sitegen.references.problems import FORMATS_READ, ReferenceProblem, Skipped, checked, each, named
from sitegen.references.ris import DOI_LIKE, EVERY_VALUE_TAGS, entry_of_tags

# How an EndNote XML file begins: the declaration and comments, then <xml> and <records>. A comment ends at its
# first "-->" and a processing instruction at its first "?>", as XML reads them: each is an atomic group, else a text
# of many comments not followed by <xml> would be tried split at every "-->" (exponential time on a file's 4 KB).
COMMENT, INSTRUCTION = r"(?><!--.*?-->)", r"(?><\?.*?\?>)"
START = re.compile(rf"\s*(?:<\?xml[^>]*\?>\s*)?(?:{COMMENT}\s*)*<xml>\s*(?:{COMMENT}\s*)*<records[\s>/]", re.DOTALL)
# A record's fields (paths below <record>) as the RIS tags EndNote's RIS export writes them to. Fields no entry
# reads (the editors, A2, among them) are kept so that a record reads as its RIS export does, tag for tag.
FIELDS = {
    "contributors/authors/author": "AU", "contributors/secondary-authors/author": "A2",
    "contributors/tertiary-authors/author": "A3", "contributors/subsidiary-authors/author": "A4",
    "titles/title": "TI", "titles/secondary-title": "T2", "titles/tertiary-title": "T3", "titles/alt-title": "J2",
    "titles/short-title": "ST", "titles/translated-title": "TT",
    "periodical/full-title": "JF", "periodical/abbr-1": "JA",
    "pages": "SP", "volume": "VL", "number": "IS", "edition": "ET", "section": "SE",
    "dates/year": "PY", "dates/pub-dates/date": "DA", "isbn": "SN", "accession-num": "AN", "call-num": "CN",
    "label": "LB", "keywords/keyword": "KW", "abstract": "AB", "notes": "N1", "research-notes": "RN",
    "urls/related-urls/url": "UR", "urls/pdf-urls/url": "L1", "electronic-resource-num": "DO",
    "remote-database-name": "DB", "remote-database-provider": "DP", "language": "LA", "publisher": "PB",
    "pub-location": "CY", "auth-address": "AD", "work-type": "M3", "caption": "CA", "access-date": "Y2",
    **{f"custom{number}": f"C{number}" for number in range(1, 8)},
}
# Fields whose value holds one item a line (EndNote's keywords and notes): each line is a value, as RIS writes it.
BY_LINE = {"KW", "N1"}
# What a field is called in a problem: EndNote's name, not the RIS tag it is read as.
NAMES = {"TY": "ref-type", "PY": "year", "DA": "pub-dates/date"}
# EndNote's reference types, by name, as RIS types (what EndNote's RIS export writes), and by number, as the name
# EndNote gives it: a record names its type `<ref-type name="Journal Article">17</ref-type>`.
TYPES = {
    "journal article": "JOUR", "book": "BOOK", "book section": "CHAP", "edited book": "EDBOOK",
    "conference proceedings": "CONF", "conference paper": "CPAPER", "thesis": "THES", "report": "RPRT",
    "web page": "ELEC", "electronic article": "EJOUR", "electronic book": "EBOOK", "electronic book section": "ECHAP",
    "magazine article": "MGZN", "newspaper article": "NEWS", "generic": "GEN", "manuscript": "MANSCPT",
    "unpublished work": "UNPB", "dataset": "DATA", "computer program": "COMP", "patent": "PAT", "standard": "STAND",
    "encyclopedia": "ENCYC", "dictionary": "DICT", "blog": "BLOG", "personal communication": "PCOMM", "case": "CASE",
    "film or broadcast": "MPCT", "music": "MUSIC",
}
NUMBERED_TYPES = {
    "17": "journal article", "6": "book", "5": "book section", "28": "edited book", "10": "conference proceedings",
    "47": "conference paper", "32": "thesis", "27": "report", "12": "web page", "43": "electronic article",
    "44": "electronic book", "60": "electronic book section", "19": "magazine article", "23": "newspaper article",
    "13": "generic", "36": "manuscript", "34": "unpublished work", "59": "dataset", "9": "computer program",
    "25": "patent", "58": "standard", "53": "encyclopedia", "52": "dictionary", "56": "blog",
    "26": "personal communication", "7": "case", "21": "film or broadcast", "61": "music",
}
# A document type declaration, which can stand only before the root element: after the XML declaration, comments and
# processing instructions. Told before parsing: libxml2 reads the declaration, and its entities' use in a chunk fed
# with it, before the root element's event says the file has one.
DOCTYPE = re.compile(rf"\s*(?:{INSTRUCTION}\s*|{COMMENT}\s*)*<!DOCTYPE", re.DOTALL | re.IGNORECASE)
# libxml2's limits on what no EndNote export comes near, as its messages name them, in words a user can act on (its
# own advice, XML_PARSE_HUGE, is a switch of the library's, not the user's).
LIMITS = (
    (re.compile(r"Excessive depth in document: (\d+)"), "elements nested more than {} deep, which no EndNote export "
                                                         "has"),
    (re.compile(r"Text node too long|Buffer size limit exceeded|Huge input lookup|Name too long|"
                r"AttValue length too long"),
     "a text, name or attribute value of over 10,000,000 characters, which no reference has"),
)
_STRING = etree.XPath("string()")  # an element's text, its <style> runs joined, without comments
DOCTYPE_REFUSED = ("the file declares a document type (<!DOCTYPE ...>), which EndNote XML never has: sitegen reads "
                   "no DTD or entities")
CHUNK = 1 << 20  # characters fed to the parser at a time


@dataclass
class _Record:
    line: int
    position: int
    number: str = ""  # <rec-number>
    tags: dict[str, list[str]] = field(default_factory=dict)
    tag_lines: dict[str, int] = field(default_factory=dict)


def is_endnote_xml(text: str) -> bool:
    """Whether `text` begins as an EndNote XML export does (<xml><records>, after a declaration or comments)."""
    return START.match(text[:4096]) is not None


def read_endnote_xml(text: str, warnings: list[str] | None = None, skipped: Skipped | None = None) -> list[Entry]:
    """The records of an EndNote XML file; ReferenceProblem names the line of the first malformed one (with
    `skipped`, each is listed there instead) or of the first XML error, which no record survives."""
    items = list(_records(text))
    if not items:
        raise ReferenceProblem(1, "no EndNote record (an EndNote XML file holds <record> elements in <xml><records>)")
    given = [("", 0) if isinstance(item, ReferenceProblem) else (item.number, item.line) for item in items]
    return checked(named(list(each(_entry, items)), given, "endnote", warnings), skipped)


def _records(text: str) -> Iterator[_Record | ReferenceProblem]:
    """Each record, read as its element ends and then let go; ReferenceProblem at the first XML error."""
    # Fed as UTF-8 whatever the declaration says: the text is decoded already (a UTF-16 export too).
    parser = etree.XMLPullParser(events=("start", "end"), resolve_entities=False, no_network=True, load_dtd=False,
                                 huge_tree=False, remove_comments=True, remove_pis=True, encoding="utf-8")
    root: etree._Element | None = None
    position = 0
    if declared := DOCTYPE.match(text):
        raise ReferenceProblem(text.count("\n", 0, declared.end()) + 1, DOCTYPE_REFUSED)
    etree.clear_error_log()  # the log is the thread's, and holds earlier parses' errors
    try:
        for at in range(0, max(len(text), 1), CHUNK):
            parser.feed(text[at:at + CHUNK].encode("utf-8", errors="surrogatepass"))
            for event, element in parser.read_events():
                if root is None:
                    root = _checked_root(element)
                elif event == "end" and element.tag == "record" and element.getparent() is not None \
                        and element.getparent().getparent() is root:
                    position += 1
                    yield _record(element, position)
                    element.clear()
                    while element.getprevious() is not None:  # the records read before it
                        del element.getparent()[0]
        parser.close()
    except etree.XMLSyntaxError as error:
        # libxml2's first error, which the pull parser may report only at the end ("no element found")
        first = next(iter(error.error_log), None)
        line = (first.line if first else error.lineno) or 1
        message = first.message if first else re.sub(r", line \d+, column \d+$", "", error.msg or "")
        raise ReferenceProblem(line, _in_words(message)) from None


def _in_words(message: str) -> str:
    """libxml2's message of an XML error as the problem says it: a limit in words, other errors as libxml2 says."""
    for pattern, words in LIMITS:
        if found := pattern.search(message):
            return f"XML with {words.format(*found.groups())}"
    return f"not well-formed XML: {message.strip()}"


def _checked_root(element: etree._Element) -> etree._Element:
    """The root element, when it is EndNote XML's and the file declares no document type."""
    if element.getroottree().docinfo.doctype:
        raise ReferenceProblem(element.sourceline or 1, DOCTYPE_REFUSED)
    if element.tag != "xml":
        raise ReferenceProblem(element.sourceline or 1, f"XML whose root element is <{element.tag}>, not EndNote "
                                                        f"XML (<xml><records>): sitegen reads {FORMATS_READ}")
    return element


def _record(element: etree._Element, position: int) -> _Record:
    record = _Record(element.sourceline or 1, position, _text(element.find("rec-number")))
    kind = element.find("ref-type")
    if kind is not None:
        name = (kind.get("name") or NUMBERED_TYPES.get(_text(kind), "")).strip()
        record.tags["TY"], record.tag_lines["TY"] = [TYPES.get(name.lower(), name.upper())], kind.sourceline or 1
    for path, tag in FIELDS.items():
        for found in element.iterfind(path):
            text = _text(found)
            if tag == "DO":  # a DOI a line: lines holding none (a PII, "[pii]") are no DOI
                text = "\n".join(line for line in text.splitlines() if DOI_LIKE.search(line)) or text
            values = text.splitlines() if tag in BY_LINE else [text]
            if any(value.strip() for value in values):
                record.tags.setdefault(tag, []).extend(value for value in values if value.strip())
                record.tag_lines.setdefault(tag, found.sourceline or record.line)
    return record


def _entry(record: _Record) -> Entry:
    # rispy's shape: a tag read once holds its value, a list tag its values
    tags = {tag: values if tag in EVERY_VALUE_TAGS else values[0] for tag, values in record.tags.items()}
    tags.setdefault("TY", "GEN")  # a record without a type is EndNote's Generic
    if "PY" not in tags and not FOUR_DIGITS.search(str(tags.get("DA", ""))):
        # EndNote keeps the year apart: its Date field is the rest ("Mar 15", "Spring"), no year of its own
        tags.pop("DA", None)
    try:
        return entry_of_tags(tags, record.line, record.tag_lines, NAMES)
    except ReferenceProblem as problem:
        numbered = f" (rec-number {record.number})" if record.number else ""
        raise ReferenceProblem(problem.line, f"record {record.position}{numbered}: {problem.message}") from None


def _text(element: etree._Element | None) -> str:
    return str(_STRING(element)).strip() if element is not None else ""
