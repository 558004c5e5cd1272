"""Metadata matching: records that identifiers cannot decide, sorted into same, probable and different.

Two layers find duplicates among a search's records:

1. the identity graph (`sitegen.records.identity`): records sharing a normalised
   identifier are one work, and contradictory identifiers are never merged;
2. this matcher, for records no identifier links. Records are compared only within
   blocks (normalised title opening and ending, first-author surname with year), never
   all pairs. A pair is *different* when anything hard disagrees: two DOIs, years more
   than one apart, volumes or first pages, or one is an erratum, reply, comment
   or retraction and the other not. It is *same* only when the normalised titles are
   nearly equal, the first authors and years agree, and enough other fields (journal,
   volume, first page, author list, abstract) corroborate it. Everything else close is
   *probable*: listed for a reviewer, never merged.

Merging is conservative: a false merge silently drops a study, so clusters are joined
best pair first and never when any two of their records are *different*. `find_duplicates`
is pure and deterministic: the same works in any order give the same sets.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

from rapidfuzz import fuzz

from sitegen.records.identity import TITLE_FLOOR, unmarked
from sitegen.records.probable import normalise_title as plain_title
from sitegen.records.probable import surname

Verdict = Literal["same", "probable", "different"]

SAME_TITLE = 95.0  # normalised-title ratio (0-100) a SAME pair needs
NEAR_TITLE = 90.0  # or this with three corroborating fields
PROBABLE_TITLE = 85.0  # and a PROBABLE pair
SAME_ABSTRACT = 90.0
BLOCK_WORDS = 4

# Trailing notes an index adds to a title: a few words without digits in brackets ("[Chinese]",
# "[Article in German]", "(author's transl)", "[Review]"), reference counts ("[33 refs]") and notes of
# linked records ("[Erratum appears in Exp Brain Res 2010;203:245]", "[Comment on ...]").
_TRAILING_NOTE = re.compile(r"(?:\s*\.?\s*(?:[\[(][A-Za-z' ,]{2,40}[\])]|\[\d+ refs?\]"
                            r"|\[(?:erratum|comment|corrected|retraction|update)[^\[\]]{0,200}\])\s*\.?)+\s*$",
                            re.IGNORECASE)
_KIND = re.compile(
    r"^\W*(?P<kind>errat\w*|corrigend\w*|correction(?=\s*(?::|to\b|notice|$))|retract\w*|withdraw\w*"
    r"|expression of concern|(?:authors?'?s?\s+)?reply|response to|in (?:reply|response)|comment\w*|re(?=\s*:)"
    r"|letter)\b", re.IGNORECASE)
_KIND_CLASS = {"errat": "erratum", "corrig": "erratum", "correc": "erratum", "retra": "retraction",
               "withd": "retraction", "expre": "retraction", "reply": "reply", "respo": "reply", "in re": "reply",
               "autho": "reply", "comme": "comment", "re": "comment", "lette": "comment"}
_JOURNAL_STOP = {"of", "the", "and", "for", "in", "on", "de", "la", "und", "der"}


def normalise_title(title: str) -> str:
    """For matching: HTML entities and tags, a translation note ("[Chinese]") and enclosing brackets
    removed, then lower case without accents or punctuation."""
    text = unmarked(title).strip()
    if (whole := re.fullmatch(r"\[([^\[\]]+)\]\.?", text)) is not None:  # MEDLINE's "[translated title]"
        text = whole.group(1)
    return plain_title(_TRAILING_NOTE.sub("", text)) or plain_title(text)


def kind(title: str) -> str:
    """"erratum", "retraction", "reply" or "comment" when the title says the record is one, else ""."""
    found = _KIND.match(html.unescape(title).lstrip("[ "))
    if not found:
        return ""
    word = found.group("kind").lower()
    for prefix, name in _KIND_CLASS.items():
        if word.startswith(prefix) and (prefix != "re" or word == "re"):
            return name
    return "reply" if "reply" in word or "response" in word else "comment"


def pages(text: str) -> tuple[str, str]:
    """First and last page, the last expanded from its abbreviation: "73-6" -> ("73", "76")."""
    parts = [part for part in re.split(r"\s*[-\u2010-\u2015]+\s*", text.strip()) if part]
    if not parts:
        return "", ""
    first = parts[0].lower()
    last = parts[1].lower() if len(parts) > 1 else ""
    if not re.search(r"\d", first):  # "Suppl-29", "Nov-19" (a range a spreadsheet took for a date): unknown
        return "", ""
    if first.isdecimal() and last.isdecimal() and len(last) < len(first):
        last = first[: len(first) - len(last)] + last
    return first.lstrip("0") or first, last.lstrip("0") or last


def volume_number(text: str) -> str:
    """The leading number of a volume ("12 Suppl 1" -> "12"), or "" when there is none or the field
    is garbled (an unbalanced parenthesis: exports cut "58 (Suppl 1)" to "1)")."""
    found = re.match(r"\s*0*(\d+)", text)
    if not found or text.count("(") != text.count(")"):
        return ""
    return found.group(1)


def journal_key(name: str) -> tuple[str, ...]:
    return tuple(word for word in plain_title(html.unescape(name)).split() if word not in _JOURNAL_STOP)


def journals_match(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Same journal, abbreviations tolerated: "J Clin Oncol" matches "Journal of Clinical Oncology"."""
    if not a or not b:
        return False
    if a == b:
        return True
    if len(a) != len(b):
        return False
    return all(x.startswith(y) or y.startswith(x) for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class Work:
    """What the matcher knows of one record; build it with `work`."""

    key: str
    title: str
    kind: str
    authors: tuple[str, ...]
    year: int | None
    journal: tuple[str, ...]
    volume: str
    issue: str  # kept, not compared: exports write supplements and issues in too many ways
    first_page: str
    last_page: str
    doi: str | None
    abstract: str
    blocks: tuple[str, ...] = field(default=(), compare=False)


def work(key: str, title: str, authors: list[str], year: int | None = None, journal: str = "", volume: str = "",
         issue: str = "", page: str = "", doi: str | None = None, abstract: str = "") -> Work:
    normal = normalise_title(title)
    names = tuple(name for name in (surname(author) for author in authors) if name)
    first, last = pages(page)
    words = normal.split()
    blocks = {f"t:{' '.join(words[:BLOCK_WORDS])}", f"e:{' '.join(words[-BLOCK_WORDS:])}"} if words else set()
    if names and year is not None:
        blocks.add(f"a:{names[0]}:{year}")
    return Work(key, normal, kind(title), names, year, journal_key(journal), volume_number(volume),
                volume_number(issue), first, last, doi, plain_title(abstract)[:2000], tuple(sorted(blocks)))


def conflict(a: Work, b: Work) -> str | None:
    """Why two records cannot be one work, or None."""
    if a.doi and b.doi and a.doi != b.doi:
        return "different DOIs"
    if a.kind != b.kind:
        return "an erratum, reply, comment or retraction and another record"
    if a.year is not None and b.year is not None and abs(a.year - b.year) > 1:
        return "years more than one apart"
    if a.volume and b.volume and a.volume != b.volume:
        return "different volumes"
    if a.first_page and b.first_page and a.first_page != b.first_page:
        return "different first pages"
    return None


def _subtitle_only(a: str, b: str) -> bool:
    """One title is the other with words added at the end (a subtitle), and the shorter has four words or more."""
    short, long = sorted((a, b), key=len)
    return len(short.split()) >= 4 and long.startswith(short + " ")


def _coauthors_agree(a: Work, b: Work) -> bool:
    """The first authors are written differently ("van der Graaf" and "Van Graaf", a family name taken
    for a given name) but three or more authors each and most of the later ones are the same."""
    if len(a.authors) < 3 or len(b.authors) < 3:
        return False
    if set(a.authors[0].split()) & set(b.authors[0].split()):
        return True
    shorter = min(len(a.authors), len(b.authors)) - 1
    return shorter >= 3 and len(set(a.authors[1:]) & set(b.authors[1:])) >= 0.6 * shorter


def classify(a: Work, b: Work) -> tuple[Verdict, float]:
    """The verdict on a pair and its normalised-title similarity."""
    if not a.title or not b.title or conflict(a, b):
        return "different", 0.0
    score = fuzz.ratio(a.title, b.title)
    if score < NEAR_TITLE and _subtitle_only(a.title, b.title):
        score = NEAR_TITLE  # one record lost its subtitle: allowed only with three corroborating fields
    if score < PROBABLE_TITLE:
        return "different", score
    first_same = bool(a.authors and b.authors and (a.authors[0] == b.authors[0] or _coauthors_agree(a, b)))
    if (a.authors and b.authors and not first_same) or (
            a.year is not None and b.year is not None and a.year != b.year):
        return "probable", score
    if score < NEAR_TITLE or not first_same or a.year is None or b.year is None:
        return "probable", score
    support = 0
    support += journals_match(a.journal, b.journal)
    support += bool(a.volume and a.volume == b.volume)
    support += bool(a.first_page and a.first_page == b.first_page)
    support += bool(len(a.authors) > 1 and a.authors == b.authors)
    support += bool(a.abstract and b.abstract and fuzz.ratio(a.abstract, b.abstract) >= SAME_ABSTRACT)
    support += bool(a.doi and a.doi == b.doi)
    long_title = len(a.title.split()) >= 6
    if score < SAME_TITLE:  # a nearly equal title needs more corroboration
        return ("same" if support >= 3 else "probable"), score
    if support >= 2 or (support == 1 and long_title):
        return "same", score
    return "probable", score


@dataclass
class Matches:
    sets: list[list[str]]  # merged duplicate sets (two or more keys each), sorted
    probable: list[tuple[str, str, float]]  # pairs for a reviewer, not merged: (first key, second key, score)


def candidate_pairs(works: list[Work]) -> list[tuple[int, int]]:
    """Index pairs sharing a block, each once, in a deterministic order."""
    blocks: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(works):
        for block in item.blocks:
            blocks[block].append(index)
    pairs = set()
    for members in blocks.values():
        for n, a in enumerate(members):
            for b in members[n + 1:]:
                pairs.add((min(a, b), max(a, b)))
    return sorted(pairs)


def find_duplicates(works: list[Work], linked: list[list[str]] = ()) -> Matches:
    """Duplicate sets among `works`. `linked` are sets of keys the identity graph joined (a shared
    identifier); within them a pair is merged when its titles are related (identity.TITLE_FLOOR) and
    nothing conflicts, since a conference supplement's DOI, or an erratum carrying the article's, is
    shared by different works."""
    works = sorted(works, key=lambda item: item.key)
    position = {item.key: n for n, item in enumerate(works)}
    if len(position) != len(works):
        raise ValueError("two records have the same key")
    verdicts = []
    for members in linked:
        indexes = sorted(position[key] for key in members)
        for n, a in enumerate(indexes):
            for b in indexes[n + 1:]:
                if not conflict(works[a], works[b]) and (
                        not works[a].title or not works[b].title
                        or fuzz.ratio(works[a].title, works[b].title) >= TITLE_FLOOR):
                    verdicts.append((0, -100.0, works[a].key, works[b].key, a, b))
    for a, b in candidate_pairs(works):
        verdict, score = classify(works[a], works[b])
        if verdict != "different":
            verdicts.append((1 if verdict == "same" else 2, -score, works[a].key, works[b].key, a, b))
    verdicts.sort()
    cluster: dict[int, list[int]] = {n: [n] for n in range(len(works))}
    owner = list(range(len(works)))
    probable = []
    for rank, negative, first, second, a, b in verdicts:
        ca, cb = owner[a], owner[b]
        if ca == cb:
            continue
        if rank < 2 and not any(conflict(works[x], works[y]) for x in cluster[ca] for y in cluster[cb]):
            keep, gone = min(ca, cb), max(ca, cb)
            for index in cluster[gone]:
                owner[index] = keep
            cluster[keep] += cluster.pop(gone)
        elif rank:
            probable.append((first, second, -negative))
    sets = sorted(sorted(works[n].key for n in members) for members in cluster.values() if len(members) > 1)
    probable = sorted({pair for pair in probable if owner[position[pair[0]]] != owner[position[pair[1]]]},
                      key=lambda pair: (-pair[2], pair[0], pair[1]))
    return Matches(sets, probable)
