"""The query of a citation search: which way to follow the citation graph, from which seed works.

A saved-search strategy with method "citations" (PRISMA 2020's citation searching, an "other
method") holds one line instead of a database query, stored byte for byte:

    MODE: SEED, SEED, ...

- `references`: the works the seeds cite (backward citation searching);
- `citing`: the works that cite the seeds (forward citation searching);
- `related`: the works OpenAlex lists as related to the seeds;
- `shared`: the works referenced by at least two of 2 to 5 seeds.

A seed is an OpenAlex work id (W2741809807, or its openalex.org address) or a DOI (in any common
written form), separated by commas. Pure, and on the ground floor: the review's file models check a
saved strategy with it, and the site shows one, without loading any provider code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sitegen.records.ids import normalise_doi, normalise_openalex

SOURCE = "openalex"  # the provider whose citation graph a citation search follows
LABEL = "Citation searching"  # the source PRISMA 2020 counts its records under, among other methods
# Each mode, and what it finds, as the searches page says it.
MODES = {
    "references": "backward citation searching: the works the seeds cite",
    "citing": "forward citation searching: the works that cite the seeds",
    "related": "the works OpenAlex lists as related to the seeds",
    "shared": "the works cited by at least two of the seeds",
}
MAX_SEEDS = 50  # each seed costs a lookup and its pages: a run stays bounded
SHARED_SEEDS = (2, 5)  # "shared" compares a few studies; with many, almost every reference is shared
_LINE = re.compile(r"\s*([A-Za-z_-]+)\s*:(.*)", re.DOTALL)


class CitationQueryError(ValueError):
    """A citation-search query that breaks the grammar; the message says how."""


@dataclass(frozen=True)
class Seed:
    """One seed as written, and what it names: an OpenAlex work id or a DOI (exactly one is set)."""

    written: str
    openalex: str | None = None
    doi: str | None = None

    @property
    def key(self) -> str:
        """The seed as OpenAlex is asked for it: the work id, else the lower-case DOI."""
        return self.openalex or f"doi:{self.doi}"


@dataclass(frozen=True)
class CitationQuery:
    mode: str
    seeds: tuple[Seed, ...]

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        """What the search asks, however it is written: its mode and its seeds' keys, sorted. Two queries with one
        key find the same works (a DOI and the id of one work can be told one seed only by asking OpenAlex)."""
        return self.mode, tuple(sorted(seed.key for seed in self.seeds))

    @property
    def sent(self) -> str:
        """The query as run: its mode, and each seed as OpenAlex is asked for it."""
        return f"{self.mode}: {', '.join(seed.key for seed in self.seeds)}"


def parse_citation_query(text: str) -> CitationQuery:
    """The query `text` names; CitationQueryError saying what is wrong otherwise."""
    match = _LINE.fullmatch(text)
    if match is None:
        raise CitationQueryError(f"a citation search is written 'MODE: SEED, SEED, ...' with MODE one of "
                                 f"{', '.join(MODES)}, e.g. 'references: W2741809807'")
    mode = match.group(1)
    if mode not in MODES:
        raise CitationQueryError(f"{mode!r} is not a citation-search mode; use one of {', '.join(MODES)}")
    written = [part.strip() for part in match.group(2).split(",")]
    if not any(written):
        raise CitationQueryError(f"{mode}: names no seed work; give OpenAlex ids (W…) or DOIs after the colon")
    if "" in written:
        raise CitationQueryError(f"{mode}: has an empty seed (two commas in a row, or one at an end)")
    seeds = tuple(_seed(part, several=len(written) > 1) for part in written)
    keys = [seed.key for seed in seeds]
    if twice := next((key for index, key in enumerate(keys) if key in keys[:index]), None):
        raise CitationQueryError(f"seed {twice} is given twice")
    low, high = SHARED_SEEDS if mode == "shared" else (1, MAX_SEEDS)
    if not low <= len(seeds) <= high:
        raise CitationQueryError(f"{mode}: takes {low} to {high} seeds, not {len(seeds)}" if mode == "shared" else
                                 f"{mode}: takes at most {high} seeds, not {len(seeds)}; save several strategies")
    return CitationQuery(mode, seeds)


def strategy_key(source: str, method: str, query: str) -> tuple[str, ...]:
    """What a saved strategy asks, equal for two strategies that ask the same however written: a citation search by its mode and sorted seeds (`CitationQuery.key`), a database query by its text
    less whitespace at its ends (inside, spacing can matter to a provider's syntax)."""
    if method == "citations":
        try:
            mode, seeds = parse_citation_query(query).key
            return source, method, mode, *seeds
        except CitationQueryError:
            pass  # a broken query is reported as such; as a key, its text is all there is
    return source, method, query.strip()


def strategy_repeats(strategies: Sequence) -> Iterator[tuple[int, int, str]]:
    """(index, index of the earlier one, kind) for each saved strategy that repeats an earlier one of the same
    search: "strategy-repeated" when it asks what that one asks (run side by side, the two would count every
    record they find twice), "label-repeated" when it has the label of one of its source (runs are known by
    their label, `manifests.run_key`: each would show the other's last run)."""
    first: dict[tuple[str, ...], int] = {}
    for index, strategy in enumerate(strategies):
        key = strategy_key(strategy.source, strategy.method, strategy.query)
        if key in first:
            yield index, first[key], "strategy-repeated"
        first.setdefault(key, index)
        if strategy.label:
            named = ("label", strategy.source, strategy.label)
            if named in first:
                yield index, first[named], "label-repeated"
            first.setdefault(named, index)


def _seed(written: str, several: bool) -> Seed:
    if openalex := normalise_openalex(written):
        if openalex.startswith("W0"):
            # Whether OpenAlex reads W0123 as W123 is not documented: a seed names its work one way only.
            raise CitationQueryError(f"seed {written[:80]!r}: an OpenAlex work id has no leading zeros; write it as "
                                     "OpenAlex gives it (W followed by digits, the first not 0)")
        return Seed(written, openalex=openalex)
    if doi := normalise_doi(written):
        return Seed(written, doi=doi)
    # A DOI holding a comma ("10.1000/a,b") reaches here as two seeds, its second half no identifier.
    hint = ("; commas separate seeds, so a DOI holding a comma cannot be one: give the work's OpenAlex id (W…) "
            "instead") if several else ""
    raise CitationQueryError(f"seed {written[:80]!r} is neither an OpenAlex work id (W followed by digits) nor a "
                             f"DOI{hint}")
