"""Identifier normalisation and the stable record id.

A record's id is its lower-cased DOI when it has one, otherwise a source-prefixed
native id, in the priority order doi > openalex > arxiv > pmid > pmcid > ref. A `ref`
is no published identifier: it is derived from an imported reference's content (see
`content_ref`) for a reference that has none, so the same reference imported again is
the same record by identity. The
normalisers accept the forms providers actually send (URLs, prefixes, odd case)
and return None for anything that is not a well-formed identifier, so a bad
value never becomes a graph key or a record id.
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import wraps
from itertools import repeat
from typing import TypeVar
from urllib.parse import unquote

from sitegen.records.titles import comparable_title, folded, unmarked

NAMESPACES = ("doi", "openalex", "arxiv", "pmid", "pmcid", "ref")  # record-id priority order
NAMESPACE_LABELS = {"doi": "DOI", "openalex": "OpenAlex", "arxiv": "arXiv", "pmid": "PMID", "pmcid": "PMCID",
                    "ref": "content key"}

# Digits are written [0-9], never \d, which also takes other scripts' digits ("W" and Arabic-Indic digits):
# no provider writes an identifier so, and it would be a second spelling of one id.
_DOI = re.compile(r"^10\.[0-9]{4,9}/\S+$")
# The written forms of a DOI: doi:/DOI / info:doi/ / urn:doi: labels, resolver addresses with or without
# scheme and www./dx., and publisher pages whose path holds /doi/(abs|full|pdf|epdf|…)/10.… .
_DOI_PREFIXES = re.compile(
    r"^(?:(?:info:doi/|urn:doi:|doi\s*:\s*|doi\s+)"
    r"|(?:(?:https?:)?//)?(?:(?:www\.|dx\.)?doi\.org|hdl\.handle\.net)/(?:doi:\s*)?"
    r"|https?://[^/?#\s]+(?:/[^?#\s]*?)?/doi/(?:(?:abs|full|pdf|epdf|pdfdirect|pdfplus|fulltext|reader|book)/)?"
    r"(?=10\.))",
    re.IGNORECASE,
)
_URL_FORM = re.compile(r"^(?:https?:)?//", re.IGNORECASE)
# PubMed's AID field tags a DOI " [doi]" (and its other article ids " [pii]", which are no DOI).
_PUBMED_TAG = re.compile(r"\s*\[doi\]$", re.IGNORECASE)
# One of PubMed's other article ids with its tag ("S0140-6736(20)30183-5 [pii]", "123 [pmc]"): a value followed by
# a bracketed word that is not "doi". MEDLINE's AID and LID lines, and exports copying them into one DOI field,
# join them in either order ("10.1000/abc [doi] S0140… [pii]"), so it is removed wherever it stands: even a value
# shaped like a DOI is none when tagged as another id. Only from a word's start ((?<!\S)), so it is tried once a word.
# The tags are PubMed's article id types (ArticleIdType) and "pmid": any other bracketed word is a note (below).
_OTHER_ID_TYPES = "pii|pmc|pmcid|pmcpid|pmpid|pmcbook|pmid|pubmed|medline|mid|sici|bookaccession"
_OTHER_TAGGED_ID = re.compile(rf"(?<!\S)[^\s\[]\S*+\s+\[(?:{_OTHER_ID_TYPES})\](?:[\s,;]++|$)", re.IGNORECASE)
# Another identifier written with its label beside the DOI ("10.1000/abc, PMID: 12345", "PMCID: PMC678; doi:10.1/x"),
# as exports join a record's ids into one field: never a DOI, so removed (from the start of a run of separators only,
# (?<!…), as `_BETWEEN_DOIS`), leaving the DOI beside it to be read.
_OTHER_LABELLED_ID = re.compile(r"(?:^|(?<![\s,;])[\s,;]+)(?:pmid|pmcid|pmc|pii|issn|isbn|arxiv)\s*:\s*[^\s,;]+"
                                r"(?=[\s,;]|$)", re.IGNORECASE)
# A note that exports and databases write beside a DOI ("[Online]", "[Epub ahead of print]", "[Review]", "[doi]",
# "(Epub ahead of print)", "(2020)"): a text in square or round brackets standing apart from the DOI by white space.
# A DOI holds no white space, so it is never part of one, while a DOI's own brackets stand with no space before
# them (10.1002/(SICI)…, 10.1016/S0140-6736(20)30183-5, …(98)[…]). A bracketed text holding a DOI's start is no
# note: it is left for the DOI in it to be read (or found ambiguous). Bounded, so a field of many '[' or '(' is
# read in linear time.
_NOTE = re.compile(r"(?<!\S)(?:\[(?![^\[\]]{0,120}?10\.[0-9]{4,9}/)[^\[\]]{1,120}\]"
                   r"|\((?![^()]{0,120}?10\.[0-9]{4,9}/)[^()]{1,120}\))(?=[\s,;]|[.,;:]*$)")
# Where a field holding several DOIs ("10.1/a, 10.1/b", "10.1/a;10.1/b", "10.1/a 10.1/b") separates
# them: a separator whose next word holds a DOI's start. A SICI DOI's own ';' (…CO;2-#) is no separator.
# A run of separators is tried from its start only ((?<!…)), as names.AUTHORS_AND, and whole (++: a DOI's start
# holds none of them, so no part of a run is followed by one when the whole is not). Tried from each of its
# characters with each of its lengths, the next word was read again each time: a field of 2,000 commas (fields
# up to 2,048 characters are read) took 15 s.
_BETWEEN_DOIS = re.compile(r"(?<![\s,;])[\s,;]++(?=\S*?10\.[0-9]{4,9}/)")
_SENTENCE_PUNCTUATION = ".,;:"
_WRAPPERS = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb`"
_CLOSERS = {")": "(", "]": "[", ">": "<", "}": "{"}
# A query string pasted after a bare DOI (?utm_source=…&…): key=value pairs only.
_QUERY = re.compile(r"\?[A-Za-z][\w.-]*=[^\s/]*$")
# A SICI DOI's check character can be '#' (…;2-#), so a final '#' is kept there and only there.
_SICI_CHECK = re.compile(r";[0-9]+-#$")
# A PMID's labels: "PMID: 123", "PMID 123", MEDLINE's line "PMID- 123", "PubMed: 123", Europe PMC's source and id
# ("MED:123", "MED/123", med-123) and the addresses of its PubMed and Europe PMC pages.
_PMID_PREFIXES = re.compile(
    r"^(?:pmid\s*[:-]?\s*|pubmed\s*:\s*|med[-:/]|https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|"
    r"ncbi\.nlm\.nih\.gov/pubmed|europepmc\.org/(?:abstract|article)/med)/)", re.IGNORECASE
)
_PMCID_PREFIXES = re.compile(
    r"^(?:pmcid:\s*|pmc-|https?://(?:www\.)?(?:ncbi\.nlm\.nih\.gov/pmc/articles/|"
    r"europepmc\.org/(?:(?:abstract|article)/pmc/|articles?/)|pmc\.ncbi\.nlm\.nih\.gov/articles/))",
    re.IGNORECASE,
)
# What PubMed writes after an id: its ArticleIdList type ("123 [pubmed]", "PMC456 [pmc]") or, after a PMID, the
# record's status in its older Summary displays ("PMID: 123 [PubMed - indexed for MEDLINE]"). Tried from a run of white
# space's start only ((?<!\s)): from each of its spaces, a field of 20,000 took seconds.
_PMID_TAG = re.compile(r"(?<!\s)\s*\[(?:pmid|pubmed(?:\s*-[^\[\]]{0,80})?)\]$", re.IGNORECASE)
_PMCID_TAG = re.compile(r"(?<!\s)\s*\[pmc(?:id)?\]$", re.IGNORECASE)
_OPENALEX_PREFIXES = re.compile(r"^(?:openalex:|oax-|https?://(?:api\.)?openalex\.org/(?:works/)?)", re.IGNORECASE)
_ARXIV_PREFIXES = re.compile(r"^(?:arxiv(?:\s*:\s*|\s+)|(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/)",
                             re.IGNORECASE)
_ARXIV_PDF = re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/pdf/", re.IGNORECASE)
# The query and fragment of an arXiv page's address (…/abs/2101.00001?context=cs, …v2#S3): no part of the id.
_ARXIV_PAGE_PARTS = re.compile(r"^((?:https?://)?(?:www\.|export\.)?arxiv\.org/[^?#]*)[?#].*$", re.IGNORECASE | re.DOTALL)
# The primary subject class arXiv writes after an id it cites ("arXiv:2101.00001 [cs.LG]", "hep-th/9901001 [hep-th]").
_ARXIV_CLASS = re.compile(r"(?<!\s)\s*\[[a-z]+(?:-[a-z]+)*(?:\.[a-z]{2,})?\]$", re.IGNORECASE)
# Since April 2007: YYMM.NNNN(N), the month of its submission (01-12) from 0704 on; no other number is an arXiv id.
_ARXIV_NEW = re.compile(r"^((?:07(?:0[4-9]|1[0-2])|(?:0[89]|[1-9][0-9])(?:0[1-9]|1[0-2]))\.[0-9]{4,5})(?:v[0-9]+)?$",
                        re.IGNORECASE)  # "v2" or "V2"
# Before April 2007: archive, optionally its subject class, then YYMMNNN (hep-th/9901001, math.GT/0309136), from
# August 1991 (9108) to March 2007 (0703). arXiv writes an archive in lower case and a two-letter subject class in
# capitals: the id keeps both as arXiv writes them (a lower-cased "math.gt" is no id arXiv's API answers).
_ARXIV_OLD = re.compile(r"^([a-z]+(?:-[a-z]+)*)(?:\.([a-z]{2}))?/((?:9[1-9]|0[0-7])(?:0[1-9]|1[0-2])[0-9]{3})(?:v[0-9]+)?$",
                        re.IGNORECASE)
# The archives of old-style ids (arXiv's own list, closed in 2007): another name before a slash is no arXiv id.
_ARXIV_OLD_ARCHIVES = frozenset((
    "acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg comp-gas cond-mat cs dg-ga "
    "funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph mtrl-th nlin nucl-ex nucl-th patt-sol physics plasm-ph "
    "q-alg q-bio q-fin quant-ph solv-int stat supr-con").split())
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$")
_UNSAFE = re.compile(r"[\x00-\x20\x7f\\]")
# HTML copied with a DOI's address (an href with its markup: https://doi.org/10.1000/abc">link</a>): the quote that
# closes the attribute (before '>' or another attribute) or a tag's '<' (<a …>, </a>, <br/>, <!-- -->) ends the DOI.
# A SICI DOI's own '<' starts its contribution segment, a page and '::' (…43:4<407::AID-JBM7>3.0.CO;2-R), never a
# tag's name followed by white space, '/' or '>', so it stays.
# An HTML link pasted whole (<a href="https://doi.org/10.1000/abc">…</a>): read as its address, and its text when
# that holds a DOI, so that one naming another DOI makes the field ambiguous, as any two DOIs do. Bounded, so read
# in linear time.
_LINK = re.compile(r"""<a\s[^<>]{0,500}?\bhref\s*=\s*(["'])([^"'<>]{1,2048})\1[^<>]{0,500}>(.{0,2048}?)</a\s*>""",
                   re.IGNORECASE | re.DOTALL)
_MARKUP = re.compile(r"""<(?:[A-Za-z][A-Za-z0-9-]*(?=[\s/>])|/[A-Za-z]|!)|["'](?=\s*(?:/?>|[A-Za-z-]+\s*=))""")
T = TypeVar("T")


def _clean(value: object) -> str:
    return str(value).strip() if value is not None else ""


def normalise_doi(value: object) -> str | None:
    """The lower-case DOI in any common written form, or None.

    Removes labels and resolver or publisher address parts, invisible (format) characters, PubMed's
    " [doi]" tag and the other article ids PubMed tags beside it (" [pii]": never a DOI, wherever it
    stands), bracketed notes standing apart from the DOI (" [Online]", " (Epub ahead of print)"),
    surrounding quotes and brackets, HTML markup copied after it ('">link</a>', "<br>"), a URL's query and
    fragment, and trailing sentence punctuation, '/' and dashes; keeps what can end a DOI (a balanced ')' as in
    10.1016/s0166-4328(98)00079-5, a SICI check character '#').

    A field naming several different DOIs ("10.1/a, 10.1/b") is ambiguous and gives None: which one
    is the work's own cannot be told (the others are often its supplement, erratum or a cited work),
    and a wrong DOI would join unrelated works, while None leaves the work to its metadata. The same
    DOI written twice is that DOI. An arXiv id is no DOI (see `normalise_arxiv`).
    """
    return _normalised_doi(_clean(value))


def _memoised(function: Callable[[str], T]) -> Callable[[str], T]:
    """`function` (pure, of one text) computed once per distinct text of identifier size.

    The same identifiers are read many times over in one command: a record's id and DOI, and every
    decision and ledger event naming it (900,000 times at 100,000 records). At most IDENTIFIER_CACHE
    texts are kept (then the memo starts again), and none longer than an identifier can be (a hostile
    10 MB cell is computed, never kept). A plain dict, looked up first: an LRU cache behind a wrapper
    cost twice as much per id.
    """
    known: dict[str, T] = {}

    @wraps(function)
    def memoised(text: str) -> T:
        try:
            return known[text]
        except KeyError:
            value = function(text)
        if len(text) <= MEMOISED_LENGTH:
            if len(known) >= IDENTIFIER_CACHE:
                known.clear()
            known[text] = value
        return value

    memoised.known = known  # type: ignore[attr-defined]
    return memoised


IDENTIFIER_CACHE = 1 << 18
MEMOISED_LENGTH = 4096


# A DOI already in normalised form, in the characters most DOIs use: no label, wrapper, separator, query,
# percent escape, capital, trailing punctuation or '.'-segment for normalising to remove, so it is its own
# normalised form (as every record id and DOI in records.jsonl is) and `_normalised_doi` returns it unchanged.
# At most 505 characters, within the 512 a DOI may have.
_PLAIN_DOI = re.compile(r"10\.[0-9]{4,9}/[a-z0-9][a-z0-9._/-]{0,490}[a-z0-9]")


def _doi_in(text: str, stand_ins: bool = True) -> str | None:
    if _PLAIN_DOI.fullmatch(text) and "/." not in text:
        return text
    text = _unwrap((_visible(text) if stand_ins else _without_format(text)).strip())
    if len(text) > 2048:
        return None
    if "[" in text or "(" in text:
        text, removed = _OTHER_TAGGED_ID.subn(" ", text) if "[" in text else (text, 0)
        text, notes = _NOTE.subn(" ", text)
        text = text.strip(" \t\n,;") if removed or notes else text  # the separator that stood before it
    if ":" in text:
        text = _OTHER_LABELLED_ID.sub("", text).strip(" \t\n,;")
    if "&" in text and ";" in text:  # an HTML-escaped SICI DOI (…43:4&lt;407::AID-JBM7&gt;3.0.CO;2-R) is that DOI
        text = html.unescape(text)
    if "<" in text:
        text = _LINK.sub(_link_address, text).strip()
    found = {doi for piece in _BETWEEN_DOIS.split(text) if (doi := _one_doi(piece, stand_ins))}
    return found.pop() if len(found) == 1 else None


def _link_address(link: re.Match[str]) -> str:
    address, shown = link.group(2), link.group(3)
    return f" {address} {shown} " if _DOI_START.search(shown) else f" {address} "


_DOI_START = re.compile(r"10\.[0-9]{4,9}/")
_normalised_doi = _memoised(_doi_in)
_doi_as_kept_before = _memoised(lambda text: _doi_in(text, stand_ins=False))


def is_normal_doi(value: str) -> bool:
    """Whether `value` is a DOI in the form records hold: its own normalised form, or (kept by a sitegen before
    stand-ins were read as ASCII) that form but for its Unicode hyphens and full-width forms: a review written
    then stays valid, its record ids being on an append-only ledger."""
    return normalise_doi(value) == value or (not value.isascii() and _doi_as_kept_before(value) == value)


def _without_format(text: str) -> str:
    """Without format characters (category Cf): zero-width spaces and joiners, direction marks and embeddings,
    the byte-order mark, soft hyphens. They never show in a written identifier but ride along from copied text."""
    if text.isascii():  # no format character is ASCII: most identifiers skip the scan
        return text
    return "".join(char for char in text if unicodedata.category(char) != "Cf")


def _visible(text: str) -> str:
    """`_without_format`, and in ASCII the characters that stand for ASCII ones in copied text: Unicode hyphens
    and minus signs (word processors write them into DOIs: 10.1016/j.bbr.2020‐01‐001 is 10.1016/j.bbr.2020-01-001),
    an en dash between two letters or digits, full-width forms (１２３４) and the ideographic full stop and comma."""
    if text.isascii():
        return text
    return _EN_DASH_INSIDE.sub("-", _without_format(text).translate(_ASCII_FORMS))


# Hyphens and minus signs (never a dash of running text, which may follow an identifier), full-width ASCII.
_ASCII_FORMS = {**dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2212\ufe63\uff0d"), "-"), ord("\u3002"): ".", ord("\u3001"): ",",
                **{code: chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F) if code != 0xFF0D}}
_EN_DASH_INSIDE = re.compile(r"(?<=[^\W_])\u2013(?=[^\W_])")


def _one_doi(text: str, stand_ins: bool = True) -> str | None:
    text = _PUBMED_TAG.sub("", _unwrap(text.strip()))
    text = _MARKUP.split(text, maxsplit=1)[0]
    if _URL_FORM.match(text):
        # In an address, '?' and '#' start the query and fragment (a DOI's own are percent-encoded, though
        # a SICI DOI's final '#' is often left bare, so a '#' starts one only before a letter or digit).
        text = re.split(r"\?(?=\S*[A-Za-z0-9])|#(?=[A-Za-z0-9])", text, maxsplit=1)[0]
    text = _DOI_PREFIXES.sub("", text)
    decoded = unquote(text)
    if decoded != text and stand_ins:  # a stand-in percent-encoded (%E2%80%90, U+2010) is the one written as it is
        decoded = _visible(decoded)
    text = _trim_end(decoded.strip()).lower()
    if len(text) > 512 or not _DOI.match(text) or _has_unsafe_path(text):
        return None
    return text


def _unwrap(text: str) -> str:
    """Without quotes and brackets around the whole value ("…", <…>, […], (…)), and the sentence's punctuation
    after them ("<https://doi.org/10.1000/abc>.")."""
    while len(text) >= 2:
        first, last = text[0], text[-1]
        if last in _SENTENCE_PUNCTUATION and (first in _WRAPPERS or first in _OPENERS):
            text = text[:-1].rstrip()
        elif (first in _WRAPPERS and last in _WRAPPERS) or _encloses(text):
            text = text[1:-1].strip()
        else:
            return text
    return text


_OPENERS = {opener: closer for closer, opener in _CLOSERS.items()}


def _encloses(text: str) -> bool:
    """Whether `text`'s first character opens a bracket that its last character closes: in "(Epub) 10.1000/abc
    (print)" the first bracket closes after "Epub" and the last closes another note's, so neither is the value's.
    A stray closer inside ("(10.1000/abc).)", a sentence's bracket) opens no other pair: the outer two are one."""
    opener, closer = text[0], _OPENERS.get(text[0])
    if closer is None or text[-1] != closer:
        return False
    depth = 0
    for at, char in enumerate(text[:-1]):
        depth += (char == opener) - (char == closer)
        if depth == 0:  # the first pair closed here: the last closer is another pair's if one opens after it
            return opener not in text[at + 1:]
    return True


def _trim_end(text: str) -> str:
    """Without what cannot end this DOI: sentence punctuation, a pasted query, a stray '#',
    a closing quote or a closing bracket that has no opening one in the DOI."""
    while True:
        before = text
        text = _QUERY.sub("", text).rstrip()
        if text.endswith("#") and not _SICI_CHECK.search(text):
            text = text[:-1]
        # A DOI never ends in '/', nor in an en or em dash (they follow it in running text).
        text = text.rstrip(".,;:!?/\u2013\u2014" + _WRAPPERS).rstrip()
        if text and text[-1] in _CLOSERS and text.count(text[-1]) > text.count(_CLOSERS[text[-1]]):
            text = text[:-1]
        if text == before:
            return text


# A PMID as databases and spreadsheets also write it: zero-padded (an RIS AN of 0018632543) or as a
# spreadsheet's number (23389958.0).
_PMID = re.compile(r"0*([1-9][0-9]{0,11})(?:\.0+)?")
# A PMID labelled so may also carry the version of a versioned citation, PubMed's PMID.version (20029611.1): the
# citation's every version is one work. Unlabelled, "12.5" is a number, no PMID.
_LABELLED_PMID = re.compile(r"0*([1-9][0-9]{0,11})(?:\.[0-9]{1,3})?")


# The DOI a citation of another work names, labelled ("Lancet. 2024;404(10459):1227-1239. doi:
# 10.1016/S0140-6736(24)01653-2. Epub 2024 Sep 10."): how PubMed, Europe PMC and MEDLINE cite the work a notice is
# about beside its PMID. Only a labelled one: a citation's other numbers are no DOI.
_CITED_DOI = re.compile(r"\bdoi:\s*(10\.\d{4,9}/\S+)", re.IGNORECASE)


def cited_doi(citation: str | None) -> str | None:
    """The DOI a citation names after "doi:", normalised; None when it names none (or none that is one)."""
    found = _CITED_DOI.search(citation or "")
    return normalise_doi(found.group(1)) if found else None


def normalise_pmid(value: object) -> str | None:
    # Cleaned as a DOI is (invisible characters, full-width digits, a sentence's full stop after it): a PMID
    # left out here cannot match the same work from PubMed.
    text = _PMID_TAG.sub("", _visible(_clean(value)).strip())
    label = _PMID_PREFIXES.match(text)
    pmid = _LABELLED_PMID if label else _PMID
    text = (text[label.end():] if label else text).rstrip("/")
    match = pmid.fullmatch(text) or pmid.fullmatch(text.rstrip(".,;:"))
    return match.group(1) if match else None


# A PMCID with its "PMC" (a space or hyphen may follow it) and, so written, the version PMC gives an article's each
# release (PMC3258128.1); or bare digits, as OpenAlex gives them in its PMC URL. PMC's numbers start at 1.
_PMCID = re.compile(r"PMC[\s-]?(0*[1-9][0-9]{0,9})(?:\.[0-9]{1,3})?|(0*[1-9][0-9]{0,9})")


def normalise_pmcid(value: object) -> str | None:
    text = _PMCID_TAG.sub("", _visible(_clean(value)).strip())
    text = _PMCID_PREFIXES.sub("", text).rstrip("/").rstrip(".,;:").upper()
    match = _PMCID.fullmatch(text)
    return f"PMC{match.group(1) or match.group(2)}" if match else None


def normalise_openalex(value: object) -> str | None:
    text = _OPENALEX_PREFIXES.sub("", _clean(value)).rstrip("/").upper()
    return text if re.fullmatch(r"W[0-9]{1,12}", text) else None


def arxiv_of_doi(doi: str | None) -> str | None:
    """The arXiv id a DOI names (10.48550/arXiv.<id>, DataCite's DOI for every arXiv paper), else None."""
    doi = normalise_doi(doi)
    match = _ARXIV_DOI.match(doi) if doi else None
    return normalise_arxiv(match.group(1)) if match else None


def normalise_arxiv(value: object) -> str | None:
    """The version-less arXiv id: 2101.00001 or hep-th/9901001, also from its 10.48550/arXiv. DOI, and as
    copied from a sentence ("(arXiv:2101.00001).")."""
    given = _clean(value)
    text = _ARXIV_CLASS.sub("", _unwrap(_visible(given).rstrip(_SENTENCE_PUNCTUATION)))
    text = _ARXIV_PREFIXES.sub("", _ARXIV_PAGE_PARTS.sub(r"\1", text)).rstrip("/")
    if _ARXIV_PDF.match(given) and text.lower().endswith(".pdf"):  # its PDF: arxiv.org/pdf/2101.00001v3.pdf
        text = text[:-4]
    doi = _ARXIV_DOI.match(normalise_doi(text) or "")
    if doi:
        text = doi.group(1)
    if match := _ARXIV_NEW.match(text):
        return match.group(1)
    if (match := _ARXIV_OLD.match(text)) and match.group(1).lower() in _ARXIV_OLD_ARCHIVES:
        archive, subject_class, number = match.groups()
        return f"{archive.lower()}{f'.{subject_class.upper()}' if subject_class else ''}/{number}"
    return None


def arxiv_paper(value: object) -> str | None:
    """The paper an arXiv id names, as identity compares papers: `normalise_arxiv` without an old-style id's subject
    class (math.GT/0309136 is math/0309136: a number is unique within its archive, and the class is a listing's, which
    arXiv's own API and most indexes leave out)."""
    normal = normalise_arxiv(value)
    if normal is None or "/" not in normal:
        return normal
    archive, number = normal.split("/")
    return f"{archive.split('.')[0]}/{number}"


def is_normal_arxiv(value: str) -> bool:
    """Whether `value` is an arXiv id in the form records hold: its own normalised form, or (kept by a sitegen
    before the subject class kept its capitals) that form lower-cased, math.gt/0309136: a review written then stays
    valid, its record ids being on an append-only ledger."""
    normal = normalise_arxiv(value)
    return normal is not None and value in (normal, normal.lower())


def arxiv_address(arxiv: str) -> str:
    """The paper's abstract page at arXiv, for an arXiv id as a record holds it (a lower-cased subject class, as a
    sitegen before kept it, is not arXiv's address: it is given as arXiv writes it)."""
    return f"https://arxiv.org/abs/{normalise_arxiv(arxiv) or arxiv}"


def normalise_ref(value: object) -> str | None:
    text = _clean(value).lower().removeprefix("ref:")
    return text if re.fullmatch(r"[0-9a-f]{16}", text) else None


def content_ref(title: str, year: int | str | None, authors: list[str], container: str, volume: str = "",
                issue: str = "", pages: str = "", abstract: str = "", kind: str = "", url: str = "") -> str:
    """The `ref` of a reference without a published identifier: the first 16 hex digits of the SHA-256 of all
    a record says of itself: its compared title (`comparable_title`), year, every author, container, volume,
    issue, pages, abstract, type (these folded, markup and entities decoded) and URL; nothing a record does not
    hold (an ISSN), so a record exported and read again has its ref. Case, accents, punctuation and markup do not change it, so the same
    reference read again, from the same file or another export of it, gets the same ref; any other difference
    (another issue, another author, another abstract) gives another record, which the metadata matcher then
    compares, so two works with one short title ("Editorial", "Reply") are never one record by their ref."""
    parts = (comparable_title(title), str(year or ""), "\x1e".join(folded(unmarked(name)) for name in authors),
             *(folded(unmarked(value)) for value in (container, volume, issue, pages, abstract, kind)),
             url.strip())
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


NORMALISERS = {
    "doi": normalise_doi,
    "openalex": normalise_openalex,
    "arxiv": normalise_arxiv,
    "pmid": normalise_pmid,
    "pmcid": normalise_pmcid,
    "ref": normalise_ref,
}


def _has_unsafe_path(text: str) -> bool:
    # DOIs contain '/', so a record id can reach a path; '.' and '..' segments,
    # backslashes, whitespace and control characters never belong in one.
    if _UNSAFE.search(text):
        return True
    # Cheap test first: a "." or ".." segment needs a leading dot or one after a slash.
    if not (text.startswith(".") or "/." in text):
        return False
    return any(part in (".", "..") for part in text.split("/"))


def record_id(identifiers: dict[str, str | None]) -> str | None:
    """The stable record id for already-normalised identifiers, or None if there are none."""
    for namespace in NAMESPACES:
        value = identifiers.get(namespace)
        if value:
            return value if namespace == "doi" else f"{namespace}:{value}"
    return None


def written_record_id(value: str, namespaces: tuple[str, ...]) -> str | None:
    """The record id an identifier written in any form gives (https://doi.org/10.…, PMID: 123), trying
    `namespaces` in order; None when none of them reads it."""
    for namespace in namespaces:
        if normalised := NORMALISERS[namespace](value):
            return record_id({namespace: normalised})
    return None


def first_record_id_problem(values: Iterable[str]) -> str | None:
    """Why the first of `values` that is not a valid record id is not one, or None when all are: for the long
    lists of ids a ledger and a saved search hold (500,000 at 100,000 records), at a dict lookup for each id
    already worked out."""
    known = record_id_problem.known  # type: ignore[attr-defined]
    values = values if isinstance(values, list | tuple) else list(values)
    if set(map(known.get, values, repeat(False))) <= {None}:  # every one known valid, found in one pass in C
        return None
    for value in values:
        problem = known[value] if value in known else record_id_problem(value)
        if problem:
            return problem
    return None


def found_valid(record_ids: Iterable[str]) -> None:
    """Record ids known to be valid, as the records of a records.jsonl read whole are (their own model checked
    each, with this code): `record_id_problem` need not work them out again where the review's other files name
    them (100,000 ids of a saved search's seen_ids, when the records' parse was kept)."""
    known = record_id_problem.known  # type: ignore[attr-defined]
    for record_id in record_ids:
        if len(known) >= IDENTIFIER_CACHE:
            return
        known.setdefault(record_id, None)


def parse_record_id(value: str) -> tuple[str, str] | None:
    """(namespace, identifier) for a well-formed record id, else None."""
    if ":" in value.split("/", 1)[0]:
        namespace, _, native = value.partition(":")
        if namespace in NORMALISERS and namespace != "doi" and (NORMALISERS[namespace](native) == native or (
                namespace == "arxiv" and is_normal_arxiv(native))):
            return namespace, native
        return None
    return ("doi", value) if is_normal_doi(value) else None


# The identifiers a person may write in another form than a record id's (https://doi.org/10.…, PMID: 123), in the
# order tried.
WRITTEN_ID_NAMESPACES = ("doi", "pmid", "pmcid", "openalex", "arxiv")


# A spreadsheet's formula for text it must not take for a number or a date (="10.1234/abc", written so a CSV opens
# in Excel with the text as it is): the text is between the quotes.
_FORCED_TEXT = re.compile(r'\s*="([^"]*)"\s*')


def forced_text(value: str) -> str | None:
    """The text `value` holds as a spreadsheet's forced text ="…", or None when it is not written so."""
    forced = _FORCED_TEXT.fullmatch(value)
    return forced.group(1) if forced else None


def meant_record_id(value: str) -> str | None:
    """The record id `value` writes in another form (a DOI's address or capitals, 'doi:10.…', 'PMID: 123', any of
    them as a spreadsheet's forced text ="…"), or None. A bare number names no kind of identifier (a PMID? a
    PMCID?), so it means none."""
    if (text := forced_text(value)) is not None:
        value = text
        if parse_record_id(value) is not None:  # the id itself (ref:…, which no normaliser reads, too)
            return value
    if value.strip().isdigit():
        return None
    return written_record_id(value, WRITTEN_ID_NAMESPACES)


@_memoised
def record_id_problem(value: str) -> str | None:
    """Why `value` is not a valid record id, or None when it is."""
    if not value:
        return "record id is empty"
    if _has_unsafe_path(value):
        problem = f"record id {value!r} contains path or control characters ('..', '\\', whitespace)"
    elif parse_record_id(value) is None:
        problem = (f"record id {value!r} is not a lower-case DOI (10.xxxx/...) or a prefixed id "
                   "(openalex:W…, arxiv:…, pmid:…, pmcid:PMC…, ref:<16 hex digits>)")
    else:
        return None
    meant = meant_record_id(value)
    return problem + (f": write it as {meant!r}" if meant and meant != value else "")
