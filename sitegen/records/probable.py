"""Probable duplicates: records that look like the same work but share no identifier.

Identity deduplication merges only on identifiers. Records from exports and
preprint servers often lack them, so, as systematic-review deduplication tools
do, this lists candidate pairs whose normalised titles are nearly equal (a
rapidfuzz Levenshtein ratio at or above a threshold) with the same first-author
surname and publication years at most one apart. It never merges anything: a
reviewer decides.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass

from rapidfuzz import fuzz

from sitegen.records.model import Record
from sitegen.records.names import split, split_name


@dataclass(frozen=True)
class Candidate:
    key: str  # the record id (or any stable key)
    title: str
    first_author: str
    year: int | None


@dataclass(frozen=True)
class ProbablePair:
    first: str
    second: str
    score: float  # title similarity, 0-100


def normalise_title(title: str) -> str:
    """Lower case, accents and punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKD", title)
    text = "".join(char for char in text if not unicodedata.combining(char)).lower()
    return " ".join(re.sub(r"[^\w\s]|_", " ", text).split())


def surname(name: str) -> str:
    """The family name of an author as sources write it: "Bouton, Mark E.", "Mark E. Bouton" or "Bouton ME"."""
    return normalise_title(split_name(name).family or name) if name.strip() else ""


def candidate(record: Record) -> Candidate:
    first = split(record.author[0]) if record.author else None
    author = (first.family or first.literal or "") if first else ""
    return Candidate(record.id, normalise_title(record.title), normalise_title(author), record.year)


def probable_duplicates(candidates: list[Candidate], threshold: float = 90.0) -> list[ProbablePair]:
    """Pairs worth a reviewer's look, most similar first. Compared only within one first-author
    surname (or, without authors, one first title word), which keeps large reviews fast."""
    blocks: dict[str, list[Candidate]] = defaultdict(list)
    for item in candidates:
        block = item.first_author or f"title:{(item.title.split() or [''])[0]}"
        blocks[block].append(item)
    pairs = []
    for members in blocks.values():
        members.sort(key=lambda item: item.key)
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if a.year is not None and b.year is not None and abs(a.year - b.year) > 1:
                    continue
                score = fuzz.ratio(a.title, b.title, score_cutoff=threshold)
                if score:
                    pairs.append(ProbablePair(a.key, b.key, round(score, 1)))
    return sorted(pairs, key=lambda pair: (-pair.score, pair.first, pair.second))
