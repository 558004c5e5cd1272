"""Metadata matching: records that identifiers cannot decide, sorted into same, probable and different.

Two layers find duplicates among a search's records:

1. the identity graph (`sitegen.records.identity`): records sharing a normalised
   identifier are one work, and contradictory identifiers are never merged;
2. this matcher, for records no identifier links. Records are compared only within
   blocks (normalised title opening and ending, first-author surname with year), never
   all pairs.

A pair is *different* when its titles are not close, or when something rules it out:
two different identifiers of one kind (two DOIs, two PMIDs), years more than one apart,
or one is a notice (erratum, reply, comment, retraction) and the other not. Other
disagreements (volumes, first pages, years one apart) are *discrepancies*: real
exports are full of them (a supplement number written into the volume, an abstract
number for a page) but two different papers show them too, so a pair with one is at
most probable, unless the rest of its locator settles it, or a DOI both records carry does
(an online-first record is dated a year before print and has no volume yet).

A pair is *same* when the normalised titles are nearly equal and either
- journal, volume and first page all agree and the titles are equal (the position of an
  article in a journal names it, whoever the export lists as authors), or
- the first authors and years agree and enough other fields (journal, volume, first
  page, author list, abstract) corroborate it.
Everything else close is *probable*: listed for a reviewer, never merged.

A preprint and its journal version (nearly equal titles and authors, the journal version
up to three years later) are two records of one study: never merged, they are listed as
*versions* (seed 002's journal-version rule).

Merging is conservative: a false merge silently drops a study, so clusters are joined
best pair first and never when two of their records disagree and are not themselves
the same. `find_duplicates` is pure and deterministic: the same works in any order give
the same sets.
"""

from __future__ import annotations

import functools
import html
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from sitegen.records.ids import arxiv_paper
from sitegen.records.model import Record
from sitegen.records.names import Person, author_names, incomparable, person, readings, same_person, written
from sitegen.records.notices import notice_kind
from sitegen.records.pages import full_last_page, range_parts
from sitegen.records.preprints import is_preprint
from sitegen.records.titles import GREEK_LETTERS, folded, matched_title

Verdict = Literal["same", "probable", "different"]
Agreement = Literal["equal", "differ", "unknown"]

# Normalised-title similarity (rapidfuzz ratio, 0-100) below which records sharing an identifier
# are not taken for one work. On real review searches (bib-dedupe's benchmark data) true duplicate
# pairs score 69 or more and records sharing a supplement's DOI 58 or less.
TITLE_FLOOR = 60
EQUAL_TITLE = 98.0  # normalised-title ratio (0-100) of titles taken for equal
SAME_TITLE = 95.0  # a SAME pair needs this
NEAR_TITLE = 90.0  # or this with three corroborating fields
PROBABLE_TITLE = 85.0  # and a PROBABLE pair
SAME_ABSTRACT = 90.0
BLOCK_WORDS = 4
MAX_BLOCK = 256  # records in one block, beyond which it is split by whole title
MAX_PROBABLE = 5  # probable pairs listed for one record
MIN_TITLE_WORDS = 3  # a shorter title is never enough for "same" by metadata
MIN_ABSTRACT = 200  # characters of a folded abstract that can corroborate ("No abstract available" cannot)

_JOURNAL_STOP = {"a", "of", "the", "and", "for", "in", "on", "de", "la", "und", "der"}
_ARTICLES = {"a", "an", "the"}  # "The effects of ..." and "Effects of ..." are one title
_MEETING_WORDS = {"conference", "congress", "meeting", "symposium", "abstracts", "proceedings", "workshop"}
MEETING_TYPES = {"inproceedings", "conference", "proceedings", "paper-conference", "cpaper", "conf",
                 "conference paper", "conference review"}
# Roman numerals as titles number parts, phases and types ("Part II", "type II"); "i", "v" and "x" are
# left out, being words or symbols as often.
_ROMAN = {"ii": "2", "iii": "3", "iv": "4", "vi": "6", "vii": "7", "viii": "8", "ix": "9", "xi": "11", "xii": "12"}


# Numbers written as words, cardinal and ordinal: "two-year" is "2-year", "second report" the "2nd".
_NUMBER_WORDS = {word: str(n) for n, words in enumerate(
    ("one first", "two second", "three third", "four fourth", "five fifth", "six sixth", "seven seventh",
     "eight eighth", "nine ninth", "ten tenth", "eleven eleventh", "twelve twelfth"), start=1) for word in words.split()}
# Words after which a letter or any roman numeral numbers a part of a series ("Part A", "part I", "Section B").
_SERIES_WORDS = {"part", "parts", "section", "chapter", "paper", "appendix"}
_ALL_ROMAN = {**_ROMAN, "i": "1", "v": "5", "x": "10"}


def title_numbers(title: str) -> tuple[str, ...]:
    """The numbers a folded title holds, in order, roman numerals and number words as digits, and the letter that
    numbers a part ("part A"): two titles that differ in one ("part 1" and "part 2", "part A" and "part B", "part
    one" and "part two", "type 1" and "type II diabetes", "1000 cases" and "2000 cases") are two works. Each number
    once, in the order it first comes."""
    title = re.sub(r"(?<=\d) (?=\d{3}\b)", "", title)  # "10,000" folds to "10 000": one number
    found: list[str] = []
    previous = ""
    for word in title.split():
        if previous in _SERIES_WORDS and (word in _ALL_ROMAN or (len(word) == 1 and word.isalpha())):
            found.append(_ALL_ROMAN.get(word, word))
        elif number := _ROMAN.get(word) or _NUMBER_WORDS.get(word):
            found.append(number)
        else:
            found += [run.lstrip("0") or "0" for run in re.findall(r"\d+", word)]  # "ca2" and "ca 2" alike
        previous = word
    # Each number once: an abbreviation one export adds repeats the number of what it abbreviates ("glucagon-like
    # peptide-1 (GLP-1)", "interleukin-6 (IL-6)").
    return tuple(dict.fromkeys(found))


# PubMed numbers the pages of some supplements by the supplement and the page: "24 Suppl 3:S3/78-89" is page S78 of
# supplement 3, which Embase writes "S78-S89".
_SUPPLEMENT_AND_PAGE = re.compile(r"^([a-z]+)\d+/(\d+)$")


def pages(text: str) -> tuple[str, str]:
    """First and last page, the last expanded from its abbreviation: "73-6" -> ("73", "76"), "S3/78-89" -> ("s78",
    "s89")."""
    parts = range_parts(text)
    if not parts:
        return "", ""
    first = _SUPPLEMENT_AND_PAGE.sub(r"\1\2", parts[0].lower())
    last = _SUPPLEMENT_AND_PAGE.sub(r"\1\2", parts[1].lower()) if len(parts) > 1 else ""
    if not re.search(r"\d", first):  # "Suppl-29", "Nov-19" (a range a spreadsheet took for a date): unknown
        return "", ""
    last = full_last_page(first, last)
    return first.lstrip("0") or first, last.lstrip("0") or last


def _page_parts(page: str) -> tuple[str, str]:
    """A page's letter prefix and number: "e0137960" -> ("e", "137960"), "A175.E1638" -> ("a", "175"). A number
    after a dot is part of it ("ehz745.0123" -> ("ehz", "745.0123"): Oxford numbers a supplement's abstracts
    so, every one of them "ehz745"), but for zeros alone ("123.0", a spreadsheet's number)."""
    found = re.match(r"\s*(?:pp?\.?\s*)?([a-z]*)0*(\d+)(?:\.(\d+))?", page)
    if not found:
        return "", ""
    number, after_dot = found.group(2), found.group(3)
    return found.group(1), number + (f".{after_dot}" if after_dot and after_dot.strip("0") else "")


# The number of a supplement a volume or issue names ("24 Suppl 3", "Supplement 2").
_SUPPLEMENT_NUMBER = re.compile(r"supp\w*\.?\s*(\d+)", re.IGNORECASE)


def without_supplement_label(first: str, last: str, volume: str, issue: str) -> tuple[str, str]:
    """The pages, or none when the first is only the label of the supplement the volume or issue names: "S3-89" in
    "24 Suppl 3" is what an export kept of PubMed's "S3/78-89" (page 78 of supplement 3), as "Suppl-89" is elsewhere."""
    if not first.startswith("s"):  # most pages, on every record: no label to look for
        return first, last
    labels = {f"s{number.lstrip('0')}" for number in _SUPPLEMENT_NUMBER.findall(f"{volume} {issue}")}
    return ("", "") if first in labels else (first, last)


def volume_number(text: str) -> str:
    """The leading number of a volume ("12 Suppl 1" -> "12"), or "" when there is none or the field
    is garbled (an unbalanced parenthesis: exports cut "58 (Suppl 1)" to "1)")."""
    found = re.match(r"\s*0*(\d+)", text)
    if not found or text.count("(") != text.count(")"):
        return ""
    return found.group(1)


def supplement_numbers(issue: str) -> frozenset[str]:
    """The numbers of an issue field that names a supplement ("1 SUPPL. 1" -> {"1"}), else none."""
    if not re.search(r"supp", issue, re.IGNORECASE):
        return frozenset()
    return frozenset(number.lstrip("0") or "0" for number in re.findall(r"\d+", issue))


def journal_key(name: str) -> tuple[str, ...]:
    """A journal's name as words to compare, without what exports add to it: a subtitle after ":", ";",
    " - " or "=", a note in brackets ("[Electronic Resource]", "(Clinical research ed.)", "(00392499)"),
    the meeting an abstract supplement is from ("Heart. Conference: British Atherosclerosis Society")."""
    # (?<!\s): tried from the start of a run of spaces only (see records.names.AUTHORS_AND)
    text = re.split(r"(?<!\s)\s*(?::|;|\s[-=]\s|\[|\()", html.unescape(name), maxsplit=1)[0] or name
    return _words(text)


def _words(text: str) -> tuple[str, ...]:
    words = [word for word in folded(re.sub(r"['’]", "", text)).split() if word not in _JOURNAL_STOP]
    cut = next((n for n, word in enumerate(words) if n and word in _MEETING_WORDS), len(words))
    return tuple(words[:cut])


@functools.lru_cache(maxsize=16384)  # a search's records come from a few thousand journals at most
def journal_keys(name: str) -> tuple[tuple[str, ...], ...]:
    """The journal's keys: its name as journal_key reads it, the whole name, and a name given in brackets
    after it (MEDLINE writes a translated title so: "Xianggang yi xue za zhi [Hong Kong medical journal]")."""
    bracketed = re.search(r"\[([^\[\]]+)\]", name)
    keys = (journal_key(name), _words(re.sub(r"\[[^\[\]]*\]|\([^()]*\)", " ", html.unescape(name))),
            journal_key(bracketed.group(1)) if bracketed else (),
            *(journal_key(part) for part in name.split("/")[1:]))  # "Revista Panamericana.../Pan American Journal..."
    return tuple(dict.fromkeys(key for key in keys if key))


def journals_match(a: tuple[tuple[str, ...], ...], b: tuple[tuple[str, ...], ...]) -> bool:
    """Whether two records' journal_keys name one journal."""
    return any(names_match(x, y) for x in a for y in b)


def journals_differ(a: tuple[tuple[str, ...], ...], b: tuple[tuple[str, ...], ...]) -> bool:
    """Whether two records' journals are plainly two journals: both known, no name of one matching a name
    of the other, and neither a shorter form of the other ("Cancer" and "Cancer Cytopathology", "CMAJ" and
    "Canadian Medical Association Journal", "Zhongguo Zhenjiu" and "Zhongguo zhen jiu" are not plainly
    two). Exports write journal names in too many ways for a mere mismatch to tell papers apart."""
    return not journals_match(a, b) and _unrelated_journals(a, b)


def _unrelated_journals(a: tuple[tuple[str, ...], ...], b: tuple[tuple[str, ...], ...]) -> bool:
    """`journals_differ` for two journals already found to match by no name (`journals_match`): both known, and no
    name of either a shorter form of a name of the other (`_related`, tried each way)."""
    return bool(a and b) and not any(_related(x, y) or _related(y, x) for x in a for y in b)


_VOWELS = frozenset("aeiou")


def _contracts(short: str, full: str) -> bool:
    """Whether `short` is `full` contracted as ISO 4 contracts a word: its first letters, then consonants of it in
    order, the last being its own last letter before any closing vowels ("natl" national, "mgmt" management, "hlth"
    health, "dtsch" deutsche). A contraction keeps the word's end, so "med" is none of "methods", nor "neurol" of
    "neurosci". A truncation ("natl" of "nationalism") is no contraction: the callers compare those already."""
    core = full.rstrip("aeiou")
    if not 2 <= len(short) < len(core) or short[-1] != core[-1] or core.startswith(short):
        return False
    stem = next(n for n, (x, y) in enumerate(zip(short, core, strict=False)) if x != y)
    if stem == 0 or any(letter in _VOWELS for letter in short[stem:]):
        return False
    letters = iter(core[stem:-1])
    return all(letter in letters for letter in short[stem:-1])


def _spelt_out(name: tuple[str, ...], other: tuple[str, ...]) -> tuple[str, ...]:
    """`name` with each word contracting a word of `other` ("natl" for "national") written as that word, where `other`
    is written out: another of its words is one of `name`'s in full ("proceedings" for "proc"). Two abbreviated names
    are left alone: "neurol" would pass for a contraction of "neuropathol" (Acta Neurologica, Acta Neuropathologica)."""
    if not any(full != word and full.startswith(word) for word in name for full in other):
        return name
    return tuple(next((full for full in other if _contracts(word, full)), word) for word in name)


def _related(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    """One name is the other shortened (its first words, its initials, its words abbreviated: "Neuro
    Endocrinol Lett" and "Neuroendocrinology Letters", or contracted: "Proc Natl Acad Sci" and "Proceedings of the
    National Academy of Sciences") or spelt a little differently ("Tumor Biology" and "Tumour Biology", "Nihon Rinsho"
    and "Nippon Rinsho")."""
    short = _spelt_out(short, long)
    joined_short, joined_long = "".join(short), "".join(long)
    if long[:len(short)] == short or joined_short == "".join(word[0] for word in long):
        return True
    if min(len(joined_short), len(joined_long)) >= 8 and Levenshtein.distance(
            joined_short, joined_long, score_cutoff=2) <= 2:
        return True
    position = 0
    for n, word in enumerate(short):  # each word of the short name in order in the long one, the first at its start
        found = joined_long.find(word, position)
        if found < 0 or (n == 0 and found != 0):
            return False
        position = found + len(word)
    return True


def names_match(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Same journal, abbreviations tolerated ("J Clin Oncol" matches "Journal of Clinical Oncology", and "J Natl
    Cancer Inst" "Journal of the National Cancer Institute"), and a name of three words or more matches the same
    name with more after it (a translated title)."""
    if not a or not b:
        return False
    a, b = _spelt_out(a, b), _spelt_out(b, a)
    short, long = sorted((a, b), key=len)
    if len(short) != len(long) and (len(short) < 3 or short != long[:len(short)]):
        return False
    return all(x.startswith(y) or y.startswith(x) for x, y in zip(short, long, strict=False))


@dataclass(frozen=True)
class Work:
    """What the matcher knows of one record; build it with `work`."""

    key: str
    title: str
    numbers: tuple[str, ...]  # title_numbers: "part 1" and "part 2", "type 1" and "type 2" are two works
    kind: str  # notice_kind: "" for a work, else "erratum", "retraction", "reply" or "comment"
    preprint: bool
    meeting: bool  # a conference paper or abstract: its venue names a meeting, or the entry type says so
    authors: tuple[Person, ...]
    year: int | None
    journal: tuple[tuple[str, ...], ...]  # journal_keys
    volume: str
    supplements: frozenset[str]  # the numbers of a supplement the issue field names
    issue: str  # the issue's number, "" for a supplement or when unknown
    first_page: str
    last_page: str
    identifiers: tuple[tuple[str, str], ...]  # (namespace, normalised value): doi, pmid, pmcid, ...
    abstract: str
    blocks: tuple[str, ...] = field(default=(), compare=False)
    # In a supplement or a meeting's proceedings (`in_supplement`): the DOI it may share is every abstract's.
    supplement: bool = False


def work(key: str, title: str, authors: list[str], year: int | None = None, journal: str = "", volume: str = "",
         issue: str = "", page: str = "", doi: str | None = None, abstract: str = "",
         identifiers: dict[str, str] | None = None, publication_types: tuple[str, ...] = (),
         entry_type: str = "") -> Work:
    volume, issue, page = _embase_locator(volume, issue, page)
    normal = matched_title(title)
    people = tuple(found for found in (person(name) for name in author_names(authors)) if found.family)
    first, last = without_supplement_label(*pages(page), volume, issue)
    words = normal.split()
    # A title of one or two words ("Editorial", "Letter") says too little to find a duplicate by: such
    # records meet only by first author and year.
    blocks = {f"t:{' '.join(words[:BLOCK_WORDS])}", f"e:{' '.join(words[-BLOCK_WORDS:])}"} if len(
        words) >= MIN_TITLE_WORDS else set()
    if people and year is not None:  # a name in capitals of unknown order ("CAIZHI SHEN") by either family name
        blocks.update(f"a:{reading.family}:{year}" for reading in readings(people[0]))
    known = dict(identifiers or {})
    if doi:
        known["doi"] = doi
    if "arxiv" in known:  # the paper, with or without an old-style id's subject class
        known["arxiv"] = arxiv_paper(known["arxiv"]) or known["arxiv"]
    preprint = is_preprint(known.get("doi"), publication_types, journal, known.get("arxiv"), title)
    meeting = entry_type.lower() in MEETING_TYPES or bool(_MEETING_WORDS & set(folded(journal).split()))
    supplements = supplement_numbers(issue)
    return Work(key, normal, title_numbers(normal), notice_kind(title, publication_types), preprint, meeting, people,
                year, journal_keys(journal),
                volume_number(volume), supplements,
                "" if supplements or re.search(r"supp", issue, re.IGNORECASE) else volume_number(issue),
                first, last, tuple(sorted(known.items())),
                folded(abstract)[:2000], tuple(sorted(blocks)),
                supplement=meeting or in_supplement(volume, issue, known.get("doi") or ""))


def in_supplement(volume: str, issue: str, doi: str) -> bool:
    """Whether a record's volume, issue or DOI names a supplement ("37 Suppl 1", "15_suppl",
    "Supplement 2"): a supplement's abstracts often share its DOI, one for all of them."""
    return any(re.search(r"supp", text, re.IGNORECASE) for text in (volume, issue, doi))


def _embase_locator(volume: str, issue: str, page: str) -> tuple[str, str, str]:
    """Embase writes an article without pages as volume "14 (1) (no pagination)" with the article number in
    the issue field: read back as volume 14, issue 1, page 18. Elsewhere "14 (1)" is volume and issue."""
    found = re.fullmatch(r"\s*(\d+)\s*\(([^()]+)\)\s*(\(no pagination\))?\s*", volume, re.IGNORECASE)
    if not found:
        return volume, issue, page
    if found.group(3) and not page.strip():
        return found.group(1), found.group(2), issue
    return found.group(1), issue or found.group(2), page


def record_work(record: Record) -> Work:
    """The matcher's view of a review's record, keyed by its id."""
    authors = [written(name) for name in record.author]
    return work(record.id, record.title, authors, record.year, record.container_title or "", record.volume or "",
                record.issue or "", record.page or "", None, record.abstract or "", record.identifiers(),
                tuple(record.custom.publication_types))


def conflict(a: Work, b: Work) -> str | None:
    """Why two records cannot be one work, or None."""
    if a.preprint != b.preprint:
        return "a preprint and a journal version: two versions, linked, never merged"
    theirs = dict(b.identifiers)
    for namespace, value in a.identifiers:
        # OpenAlex lists some works twice and renumbers the works it merges: two of its ids rule nothing out.
        if namespace != "openalex" and theirs.get(namespace, value) != value and not (
                namespace == "doi" and doi_versions(value, theirs[namespace])):
            return f"different {namespace.upper() if len(namespace) <= 5 else namespace} identifiers"
    if a.kind != b.kind:
        return "an erratum, reply, comment or retraction and another record"
    if a.year is not None and b.year is not None and abs(a.year - b.year) > 1:
        return "years more than one apart"
    return None


# A version suffix some repositories give each version's DOI: figshare's "….v2", Research Square's "…/v2".
_DOI_VERSION = re.compile(r"[./]v\d+$")


def doi_versions(a: str, b: str) -> bool:
    """Whether two DOIs name two versions of one item (figshare's "10.6084/m9.figshare.123.v1" and "….v2",
    Research Square's "10.21203/rs.3.rs-123/v1" and "…/v2"): they rule nothing out, the metadata decides."""
    return a != b and _DOI_VERSION.sub("", a) == _DOI_VERSION.sub("", b)


def volumes(a: Work, b: Work) -> Agreement:
    if not a.volume or not b.volume:
        return "unknown"
    if a.volume == b.volume or _swapped(a, b):
        return "equal"
    if a.volume in b.supplements or b.volume in a.supplements:
        return "unknown"  # an export put the supplement's number in the volume field
    return "differ"


def _swapped(a: Work, b: Work) -> bool:
    """Whether one export wrote the volume in the issue field and the issue in the volume field."""
    return bool(a.volume and a.issue) and (a.volume, a.issue) == (b.issue, b.volume)


def first_pages(a: Work, b: Work) -> Agreement:
    """Whether the records start on one page. Different ways of writing a page are not a disagreement:
    an article number beside print pages ("e12724" and "1-6"), a single page that is the other's last
    ("488" and "487-488", exports of abstracts)."""
    if not a.first_page or not b.first_page:
        return "unknown"
    (prefix_a, number_a), (prefix_b, number_b) = _page_parts(a.first_page), _page_parts(b.first_page)
    if not number_a or not number_b:
        return "unknown"
    if number_a == number_b and (prefix_a == prefix_b or not prefix_a or not prefix_b):
        return "equal"  # also "e0137960" and "137960"
    if bool(prefix_a) != bool(prefix_b):
        return "unknown"  # an article number or a scanning slip ("i428" and "1428") beside print pages
    single_a, single_b = not a.last_page, not b.last_page
    if (single_a and a.first_page == b.last_page) or (single_b and b.first_page == a.last_page):
        return "unknown"
    return "differ"


def issues_differ(a: Work, b: Work) -> bool:
    """Two issue numbers that differ, unless one is the other's article number (exports without pages put
    it in the issue field: issue "791" beside issue "3", page "791"); or a supplement and a numbered issue
    that is none of the supplement's numbers ("Suppl 1" and "8", not "1 Suppl 1" and "1"): a meeting's
    abstract in a journal's supplement and the article in a regular issue of the same volume, by one team
    under one title, are two records a review screens apart."""
    if _supplement_and_issue(a, b) or _supplement_and_issue(b, a):
        return True
    if not a.issue or not b.issue or a.issue == b.issue or _swapped(a, b):
        return False
    return _page_parts(a.first_page)[1] != b.issue and _page_parts(b.first_page)[1] != a.issue


def _supplement_and_issue(supplement: Work, other: Work) -> bool:
    return bool(supplement.supplements and other.issue and other.issue not in supplement.supplements
                and _page_parts(supplement.first_page)[1] != other.issue)


def authors_agree(a: Work, b: Work) -> Literal["all", "first", "none", "unknown"]:
    """"all" when the author lists are one (position by position, as far as the shorter goes, two
    authors or more), "first" when the first authors are one person (or they are written too differently
    but most later authors agree), "none" when neither, "unknown" when a record lists none, or when the first
    authors cannot be compared (`names.incomparable`: in Chinese characters and in pinyin, an organisation and a
    person) and no later ones that can be differ: no evidence either way, so a pair needs what a pair without
    authors needs."""
    if not a.authors or not b.authors:
        return "unknown"
    shorter = min(len(a.authors), len(b.authors))
    matched = sum(same_person(x, y) for x, y in zip(a.authors, b.authors, strict=False))
    first = same_person(a.authors[0], b.authors[0])
    if shorter >= 2 and matched >= 0.8 * shorter and (first or matched >= 3):
        return "all"
    if first:
        return "first"
    if shorter >= 4 and len(_families(a.authors[1:]) & _families(b.authors[1:])) >= 0.6 * (shorter - 1):
        return "first"
    if incomparable(a.authors[0], b.authors[0]) and all(
            same_person(x, y) or incomparable(x, y) for x, y in zip(*_later_authors(a.authors, b.authors), strict=False)):
        return "unknown"
    return "none"


def _families(authors: tuple[Person, ...]) -> set[tuple[str, bool]]:
    """The family names of authors, each with whether it is an organisation's: an organisation and a person are never
    one author ("WHO" and "Who, A"), as in `same_person`."""
    return {(author.family, author.organisation) for author in authors}


def _later_authors(a: tuple[Person, ...], b: tuple[Person, ...]) -> tuple[tuple[Person, ...], tuple[Person, ...]]:
    """The authors of two lists to compare beyond first authors that cannot be: those after them, or where either
    list starts with an organisation, the people of both lists. One index lists a group author first, another last
    or not at all ("ALTS Group, Smith J, Doe A" and "Smith J, Doe A"): its place says nothing, its members' do."""
    if a[0].organisation or b[0].organisation:
        return (tuple(name for name in a if not name.organisation),
                tuple(name for name in b if not name.organisation))
    return a[1:], b[1:]


def subtitle_only(a: str, b: str) -> bool:
    """One title is the other with words added at the end (a subtitle), and the shorter has four words or more."""
    short, long = sorted((a, b), key=len)
    return len(short.split()) >= 4 and long.startswith(short + " ")


def title_score(a: Work, b: Work) -> float:
    score = fuzz.ratio(a.title, b.title)
    if score < NEAR_TITLE and subtitle_only(a.title, b.title):
        score = NEAR_TITLE  # one record lost its subtitle: allowed only with three corroborating fields
    return score


def other_words(a: str, b: str) -> bool:
    """Whether two nearly equal titles differ in a word, not only in how words are spelt or joined: a word of
    one with no counterpart in the other ("increased" and "decreased", "no association" and "association"),
    where spelling variants (one letter: "tumour" and "tumor", "randomised" and "randomized") and words
    written apart or together ("follow up" and "followup") are counterparts."""
    if a == b or a.replace(" ", "") == b.replace(" ", ""):
        return False
    left, right = [w for w in a.split() if w not in _ARTICLES], [w for w in b.split() if w not in _ARTICLES]
    for word in list(left):
        if word in right:
            left.remove(word)
            right.remove(word)
    if "".join(sorted(left)) == "".join(sorted(right)):
        return False
    only_left, only_right = _unpaired(left, right), _unpaired(right, left)
    if not (set(only_left) & set(GREEK_LETTERS) and set(only_right) & set(GREEK_LETTERS)):
        # a Greek letter one export dropped ("IFN-γ" written "IFN") is no other word; another letter is
        only_left = [word for word in only_left if word not in GREEK_LETTERS]
        only_right = [word for word in only_right if word not in GREEK_LETTERS]
    return bool(only_left or only_right)


def _unpaired(words: list[str], others: list[str]) -> list[str]:
    spellings = {_spelling(other) for other in others}
    return [word for word in words if _spelling(word) not in spellings]


# British and American spellings of one word ("tumour" and "tumor", "randomised" and "randomized",
# "haemorrhage" and "hemorrhage", "modelling" and "modeling", "centre" and "center", "sulphate" and
# "sulfate"). Only these count as one word written two ways: "methanol" and "ethanol", "dysphagia" and
# "dysphasia" are one letter apart and two things.
_SPELLINGS = ((re.compile(r"our\b|our(?=s\b|ed\b|ing\b|al\b)"), "or"), (re.compile(r"is(?=e\b|es\b|ed\b|ing\b|ation)"), "iz"),
              (re.compile(r"(?<=\w)ae|^ae"), "e"), (re.compile(r"(?<=\w)oe|^oe"), "e"), (re.compile(r"ll(?=ing\b|ed\b|er\b)"), "l"),
              (re.compile(r"tre\b|tres\b"), "ter"), (re.compile(r"ph(?=at|ur|on)"), "f"), (re.compile(r"yse\b|ysed\b"), "yze"))


@functools.lru_cache(maxsize=65536)
def _spelling(word: str) -> str:
    for pattern, replacement in _SPELLINGS:
        word = pattern.sub(replacement, word)
    return word


# Words a title of editorial matter is made of ("Response to letter", "Reply to the letter to the editor",
# "Introduction to the special issue", "Editor's note", "Highlights of this issue"). Such a title names no work:
# one journal prints it many times, by the same editor, so only the position (volume and first page) tells.
_EDITORIAL_WORDS = frozenset(
    "a an and the of to in on for from by with about regarding concerning re this our your s editorial editorials editor "
    "editors guest letter letters reply replies response responses comment comments commentary correspondence "
    "author authors note notes news introduction introductory preface foreword special issue issues highlights "
    "message welcome address presidential president book books review reviews reviewer reviewers acknowledgement "
    "acknowledgements acknowledgment acknowledgments thanks abstracts proceedings meeting annual obituary memoriam "
    "erratum errata correction corrections corrigendum retraction notice announcement announcements contents index "
    "summary overview conclusion conclusions discussion invited new year volume board cover image".split())
# What a trial publishes before its results, which the results paper's title repeats but for these words:
# "<title>: study protocol for a randomised trial", "Protocol for <title>", "<title>: rationale and design".
_BEFORE_RESULTS = re.compile(r"\b(?:protocol|rationale and design|design and rationale|statistical analysis plan"
                             r"|baseline characteristics)\b")


def editorial_title(title: str) -> bool:
    """Whether a folded title is editorial matter or too short to name a work (under MIN_TITLE_WORDS words)."""
    words = title.split()
    return len(words) < MIN_TITLE_WORDS or all(word in _EDITORIAL_WORDS for word in words)


def before_results(title: str) -> bool:
    """Whether a folded title is a trial's protocol or design paper (published before its results)."""
    return _BEFORE_RESULTS.search(title) is not None


def classify(a: Work, b: Work) -> tuple[Verdict, float]:
    """The verdict on a pair and its normalised-title similarity. A pair the metadata would call the same is
    only probable, unless one journal, volume and first page name one article, when its titles name no work
    (editorial matter: "Response to letter"), or one of them is a trial's protocol and the other not, or a
    conference paper or abstract and the other not: such titles recur by the same authors, in the same year."""
    verdict, score = _verdict(a, b)
    if verdict == "same" and _told_apart_by_kind(a, b) and not (
            volumes(a, b) == first_pages(a, b) == "equal" and journals_match(a.journal, b.journal)):
        return "probable", score
    return verdict, score


def _told_apart_by_kind(a: Work, b: Work) -> bool:
    """Whether the pair's titles name no work, or name two kinds of publication by one team under one title: a
    protocol and its results, a conference paper or abstract and a journal article (a meeting's record often has no
    journal, volume or pages to tell it by)."""
    return (editorial_title(a.title) or before_results(a.title) != before_results(b.title)
            or (a.meeting != b.meeting and not journals_match(a.journal, b.journal)))


def _verdict(a: Work, b: Work) -> tuple[Verdict, float]:
    if not a.title or not b.title:
        return "different", 0.0
    score = title_score(a, b)
    if conflict(a, b):
        if score >= PROBABLE_TITLE and (_one_source_wrong(a, b) or _two_dois_one_position(a, b, score)):
            return "probable", score
        return "different", 0.0
    if score < PROBABLE_TITLE:
        return "different", score
    volume, page, people = volumes(a, b), first_pages(a, b), authors_agree(a, b)
    journal = journals_match(a.journal, b.journal)
    other_journal = not journal and _unrelated_journals(a.journal, b.journal)  # `journals_differ`, matched once
    year_apart = a.year is not None and b.year is not None and a.year != b.year
    if a.numbers != b.numbers:  # another part, type, phase or count: a reviewer looks
        if score >= SAME_TITLE and people in ("all", "first") and not year_apart and journal and _one_article(a, b, volume):
            return "same", score  # a number misspelt in one title ("p6INK4a" for "p16INK4a", "2009-10")
        return ("probable" if score >= SAME_TITLE and people in ("all", "first") else "different"), score
    organisation = any(author.organisation for author in (*a.authors[:1], *b.authors[:1]))
    if score >= EQUAL_TITLE and volume == page == "equal" and (journal or people == "all") and (
            people != "none" or organisation):
        # One position in one journal, whoever an export lists first (a group author or a named one, but
        # not two named people: letters answering an article share its title and page); or one title by the
        # same authors at one volume and page under two names of a journal ("Cytometry" and "Communications
        # in Clinical Cytometry", a renamed journal or a section).
        return "same", score
    issue_differs = issues_differ(a, b)
    if volume == "differ" or page == "differ" or year_apart or issue_differs:
        if (year_apart and volume == "equal" and page != "differ" and score >= SAME_TITLE and journal
                and people in ("all", "first") and (page == "equal" or people == "all")):
            return "same", score  # published online one year, in print the next
        if (page != "differ" and score >= SAME_TITLE and people in ("all", "first") and _shared_doi(a, b)
                and not other_journal and not _other_title(a.title, b.title)):
            # One DOI, one title, one first author: the online-first record (dated a year before print, no
            # volume or pages yet) or a volume or issue an export wrote otherwise. The abstracts a
            # supplement's DOI is shared by have other titles, first authors or first pages.
            return "same", score
        # Another journal, or another volume of one journal (both known), the next year: the work presented again,
        # an abstract in one year's supplement and the article in the next year's volume.
        elsewhere = (a.journal and b.journal and not journal) or volume == "differ"
        if score < SAME_TITLE or people not in ("all", "first") or (elsewhere and year_apart):
            return "different", score
        if page == "differ" and other_journal and _printed_pages(a) and _printed_pages(b):
            return "different", score  # printed in full in two journals: a guideline co-published, a paper reprinted
        return "probable", score
    if (people == "unknown" and score >= EQUAL_TITLE and journal and volume == "equal" and _same_abstract(a, b)
            and a.year is not None and b.year is not None):
        # No author to tell by (a record lists none, or only a placeholder: "Anonymous"): one title, year and volume
        # of one journal with one abstract is one work, as one first page makes it above (a meeting's abstracts
        # printed as one item have no pages).
        return "same", score
    if (people in ("none", "unknown") or a.year is None or b.year is None or score < NEAR_TITLE
            or len(a.title.split()) < MIN_TITLE_WORDS):
        return "probable", score
    if _other_title(a.title, b.title):
        return "probable", score  # "increased" or "decreased", "children" or "adults": a reviewer looks
    if other_journal and not (a.meeting and b.meeting):
        # A conference abstract and the journal article, one abstract at two meetings, a namesake paper
        # elsewhere. Two names of one meeting ("AMCIS 2017 Proceedings") are told by their authors below.
        return "probable", score
    support = sum((journal, volume == "equal", page == "equal", people == "all", _same_abstract(a, b),
                   bool(a.identifiers and set(a.identifiers) & set(b.identifiers))))
    if score < SAME_TITLE:  # a nearly equal title needs more corroboration, its first page among it
        return ("same" if support >= 3 and page == "equal" else "probable"), score
    if support >= 2 or (support == 1 and len(a.title.split()) >= 6):
        return "same", score
    return "probable", score


def _same_abstract(a: Work, b: Work) -> bool:
    """Whether two records give one abstract, long enough to corroborate (`MIN_ABSTRACT`)."""
    return min(len(a.abstract), len(b.abstract)) >= MIN_ABSTRACT and fuzz.ratio(a.abstract, b.abstract) >= SAME_ABSTRACT


def _one_source_wrong(a: Work, b: Work) -> bool:
    """Whether two records share an identifier and conflict only in another (one DOI, two PMIDs): one source
    mapped an identifier wrongly, and which one only a reviewer can tell. Never merged, but listed."""
    if not set(a.identifiers) & set(b.identifiers):
        return False
    return conflict_beyond_identifiers(a, b) is None


def _two_dois_one_position(a: Work, b: Work, score: float) -> bool:
    """Whether two records, one of them in a supplement or a meeting's proceedings, conflict in their DOIs alone and
    name one position in one journal all the same: one title, first author, year and first page in one journal, and
    no two volumes. Embase gives a conference abstract the DOI of another (another journal's supplement's); which DOI
    is right only a reviewer can tell. Never merged, but listed. An article's two DOIs, or two PMIDs, still part
    two records: publishers and PubMed give their own articles their own numbers. `score` is their `title_score`."""
    def without_doi(item: Work) -> Work:
        return replace(item, identifiers=tuple(key for key in item.identifiers if key[0] != "doi"))

    if not (a.supplement or b.supplement) or not (_doi(a) and _doi(b)) or conflict(without_doi(a), without_doi(b)):
        return False
    return (score >= SAME_TITLE and authors_agree(a, b) in ("all", "first")
            and a.year is not None and a.year == b.year and journals_match(a.journal, b.journal)
            and first_pages(a, b) == "equal" and volumes(a, b) != "differ")


def conflict_beyond_identifiers(a: Work, b: Work) -> str | None:
    """Why two records cannot be one work, their identifiers set aside (`conflict` but for them), or None. Two DOIs
    or PMIDs are a source's mapping or a publisher's second registration, which a reviewer can overrule; a notice
    and its work, years far apart, a preprint and its journal version are two records whatever anyone decides."""
    return conflict(replace(a, identifiers=()), replace(b, identifiers=()))


def joined_conflict(a: Work, b: Work, compared: bool) -> str | None:
    """Why a reviewer's decision may not make two records one work, or None: any `conflict`, or when the reviewer
    `compared` the two (a row of duplicates.csv names them both) any but their identifiers'
    (`conflict_beyond_identifiers`)."""
    return conflict_beyond_identifiers(a, b) if compared else conflict(a, b)


def _one_article(a: Work, b: Work, volume: Agreement) -> bool:
    """Whether two records of one journal name one article by its position alone: one volume (`volume`, as
    `volumes` found it), and one range of print pages, first and last. Two parts of a series cannot both fill
    it; the abstracts of a supplement (pages "S12", "A175-A176") and article numbers ("e1234") share pages and
    are left out."""
    pages_a, pages_b = (a.first_page, a.last_page), (b.first_page, b.last_page)
    return (volume == "equal" and pages_a == pages_b and a.last_page != a.first_page
            and all(page.isdecimal() for page in pages_a) and not (a.meeting or b.meeting))


def _printed_pages(item: Work) -> bool:
    """Whether the record gives a range of print pages: an article printed in full, not a meeting's abstract on
    one page of a supplement ("S42", "e505", "A254-A255") or an article number."""
    return item.first_page.isdecimal() and item.last_page.isdecimal() and int(item.last_page) > int(item.first_page)


def _other_title(a: str, b: str) -> bool:
    """Nearly equal titles with a word of their own, not a subtitle one record lost."""
    return other_words(a, b) and not subtitle_only(a, b)


def _doi(item: Work) -> str | None:
    return dict(item.identifiers).get("doi")


def _shared_doi(a: Work, b: Work) -> bool:
    return (doi := _doi(a)) is not None and doi == _doi(b)


def versions_of_one_work(a: Work, b: Work) -> bool:
    """Whether one record is a preprint and the other its journal version: nearly equal titles, the same
    first author (or most co-authors), neither a notice, and the journal version not before the preprint
    nor more than three years after it."""
    if a.preprint == b.preprint or a.kind or b.kind or not a.title or not b.title:
        return False
    preprint, published = (a, b) if a.preprint else (b, a)
    if preprint.year is not None and published.year is not None and not (
            0 <= published.year - preprint.year <= 3):
        return False
    return title_score(a, b) >= SAME_TITLE and authors_agree(a, b) in ("all", "first")


def disagree(a: Work, b: Work) -> bool:
    """Whether two records may not end up in one set: something rules them out; they disagree on
    volume, first page, year, first author or the numbers in their titles and are not the same for all that; or their
    titles are unrelated (below TITLE_FLOOR), so that no chain through records that lack a
    field (a record without a title, a volume or pages) joins two works."""
    if conflict(a, b):
        return True
    if a.title and b.title and fuzz.ratio(a.title, b.title) < TITLE_FLOOR:
        return True
    discrepant = volumes(a, b) == "differ" or first_pages(a, b) == "differ" or a.numbers != b.numbers or (
        issues_differ(a, b)) or (authors_agree(a, b) == "none" and fuzz.ratio(a.title, b.title) < EQUAL_TITLE) or (
        a.year is not None and b.year is not None and a.year != b.year)
    return discrepant and classify(a, b)[0] != "same"


def _linked_pair(a: Work, b: Work) -> bool:
    """Whether two titled records the identity graph joined (a shared DOI) are one work: related titles
    with the same numbers, first authors not plainly different (unless the titles are equal: one work with
    its authors transliterated two ways), and nothing else in the way. A DOI is
    shared by every abstract of a conference supplement and by an erratum exported with its article's: within
    a supplement it vouches for nearly equal titles only (`_told_apart_in_a_supplement`)."""
    if _told_apart_in_a_supplement(a, b):
        return False
    return (a.numbers == b.numbers and not disagree(a, b)
            and (authors_agree(a, b) != "none" or fuzz.ratio(a.title, b.title) >= EQUAL_TITLE))


def one_doi_one_work(a: Work, b: Work) -> bool:
    """Whether two titled records sharing a DOI, whose titles agree (identity.TITLE_FLOOR), are one work by
    what tells a DOI's several works apart: the numbers in their titles (a series' parts), their first pages
    (a supplement's abstracts) and their first authors (unless the titles are as good as equal). Not their
    years, volumes or other identifiers: sources date and number one work differently (online first, print
    later), and conflicting identifiers are the identity graph's to split and name. A trial's protocol and its
    results paper (`before_results`) are two works too, and two abstracts of a supplement
    (`_told_apart_in_a_supplement`)."""
    if _told_apart_in_a_supplement(a, b):
        return False
    return (a.numbers == b.numbers and first_pages(a, b) != "differ"
            and before_results(a.title) == before_results(b.title)
            and (authors_agree(a, b) != "none" or fuzz.ratio(a.title, b.title) >= SAME_TITLE))


def _told_apart_in_a_supplement(a: Work, b: Work) -> bool:
    """Whether two records sharing a DOI are two abstracts of a supplement or a meeting, which gives its DOI to every
    abstract: titles not nearly equal (SAME_TITLE) that the matcher does not find the same without the DOI. Two
    abstracts of one team in one supplement, one exported without its page ("A123" and none), were one work by it."""
    return (a.supplement or b.supplement) and title_score(a, b) < SAME_TITLE and classify(a, b)[0] != "same"


@dataclass
class Matches:
    sets: list[list[str]]  # merged duplicate sets (two or more keys each), sorted
    probable: list[tuple[str, str, float]]  # pairs for a reviewer, not merged: (first key, second key, score)
    versions: list[tuple[str, str, float]] = field(default_factory=list)  # (preprint key, journal version key, score)


def candidate_pairs(works: list[Work], focus: set[int] | None = None) -> list[tuple[int, int]]:
    """Index pairs sharing a block, each once, in a deterministic order; with `focus`, only pairs with
    one of those indexes. A block of more than MAX_BLOCK records (a common ending such as "a randomized
    controlled trial" across a large search) would make the pairs quadratic: within it only records with
    the same whole title are paired; the others still meet in their other blocks."""
    blocks: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(works):
        for block in item.blocks:
            blocks[block].append(index)
    for block in [block for block, members in blocks.items() if len(members) > MAX_BLOCK]:
        for index in blocks.pop(block):
            blocks[f"{block}|{works[index].title}"].append(index)
    for block in [block for block, members in blocks.items() if len(members) > MAX_BLOCK]:
        del blocks[block]  # hundreds of records with one title ("Abstracts"): only their other blocks pair them
    pairs = set()
    for members in blocks.values():
        for n, a in enumerate(members):
            for b in members[n + 1:]:
                if focus is None or a in focus or b in focus:
                    pairs.add((min(a, b), max(a, b)))
    return sorted(pairs)


def find_duplicates(works: list[Work], linked: list[list[str]] = (), focus: set[str] | None = None) -> Matches:
    """Duplicate sets among `works`. `linked` are sets of keys the identity graph joined (a shared
    identifier); within them a pair is merged when its titles are related (TITLE_FLOOR) and
    the records do not disagree, since a conference supplement's DOI, or an erratum carrying the
    article's, is shared by different works. With `focus` (keys), only pairs with one of those records
    are looked at: the new results of a run against a review's records."""
    # Ordered by content, the key last: which of two equal candidates a record joins never depends on keys
    # (positional ids of a RIS file, for one, change with the order of its records).
    works = sorted(works, key=lambda item: (item.title, item.year or 0, item.journal, item.volume, item.issue,
                                            item.first_page, item.last_page, item.authors, item.identifiers,
                                            item.abstract, item.key))
    position = {item.key: n for n, item in enumerate(works)}
    if len(position) != len(works):
        raise ValueError("two records have the same key")
    verdicts = []
    untitled: list[tuple[int, list[int]]] = []  # a record without a title, and the titled records linked to it
    for members in linked:
        indexes = sorted(position[key] for key in members)
        titled = [n for n in indexes if works[n].title]
        untitled += [(n, titled) for n in indexes if not works[n].title]
        if len(titled) > MAX_BLOCK:  # a DOI on hundreds of records names a collection, not a work
            continue
        for n, a in enumerate(titled):
            for b in titled[n + 1:]:
                if _linked_pair(works[a], works[b]):
                    verdicts.append((0, -fuzz.ratio(works[a].title, works[b].title), a, b))  # most alike first
    versions = []
    for a, b in candidate_pairs(works, None if focus is None else {position[key] for key in focus}):
        verdict, score = classify(works[a], works[b])
        if verdict != "different":
            verdicts.append((1 if verdict == "same" else 2, -score, a, b))
        elif versions_of_one_work(works[a], works[b]):
            preprint, published = (works[a], works[b]) if works[a].preprint else (works[b], works[a])
            versions.append((preprint.key, published.key, title_score(works[a], works[b])))
    verdicts.sort()
    cluster: dict[int, list[int]] = {n: [n] for n in range(len(works))}
    owner = list(range(len(works)))
    probable = []
    for rank, negative, a, b in verdicts:
        first, second = sorted((works[a].key, works[b].key))
        ca, cb = owner[a], owner[b]
        if ca == cb:
            continue
        if rank < 2 and not any(disagree(works[x], works[y]) for x in cluster[ca] for y in cluster[cb]):
            keep, gone = min(ca, cb), max(ca, cb)
            for index in cluster[gone]:
                owner[index] = keep
            cluster[keep] += cluster.pop(gone)
        elif rank:
            probable.append((first, second, -negative))
    for n, titled in untitled:  # it joins its linked records only when they are one set: else it is unknown
        owners = {owner[index] for index in titled}
        if len(owners) == 1 and not any(disagree(works[n], works[index]) for index in cluster[next(iter(owners))]):
            keep = next(iter(owners))
            if owner[n] != keep and len(cluster[owner[n]]) == 1:
                cluster.pop(owner[n])
                owner[n] = keep
                cluster[keep].append(n)
    sets = sorted(sorted(works[n].key for n in members) for members in cluster.values() if len(members) > 1)
    probable = sorted({pair for pair in probable if owner[position[pair[0]]] != owner[position[pair[1]]]},
                      key=lambda pair: (-pair[2], position[pair[0]], position[pair[1]]))
    return Matches(sets, _most_alike(probable), sorted(versions))


def _most_alike(pairs: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """At most MAX_PROBABLE pairs for each record, the most alike: a record with more is one of a series
    (titles alike but for a number), and a reviewer asked about every pair of a series learns nothing."""
    count: dict[str, int] = defaultdict(int)
    kept = []
    for first, second, score in pairs:
        if count[first] < MAX_PROBABLE and count[second] < MAX_PROBABLE:
            count[first] += 1
            count[second] += 1
            kept.append((first, second, score))
    return kept
