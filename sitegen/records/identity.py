"""Identity-graph deduplication: records are the same work only when identifiers say so.

1. Every record is a node; its normalised identifiers (doi, openalex, arxiv, pmid,
   pmcid) are its keys. Records sharing any key are joined (union-find), so a
   PubMed record and an OpenAlex record meet through a shared PMID even when one
   of them lacks the DOI. Titles, authors and years never join anything, so a
   preprint and its journal version stay apart unless an identifier links them.
2. A group in which one namespace holds two different values is a conflict (two
   DOIs for "one" paper): it is split by the first such namespace, recursively,
   and every resulting record carries a conflict note for a human.
3. Each group becomes one record. Its members are put in a canonical order
   (source priority, then completeness, then content) that does not depend on
   the order records arrived in, and fields are merged from that order.

`deduplicate` is pure and deterministic: the same records in any order give the
same result.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sitegen.records.ids import NAMESPACES, parse_record_id, record_id
from sitegen.review.models import SOURCES, Record, RecordMeta
from sitegen.review.write import canonical_json, model_data

# Curated bibliographic databases first: their metadata is the most reliable primary record.
SOURCE_PRIORITY = ("pubmed", "europepmc", "crossref", "openalex", "arxiv")
LABELS = {"doi": "DOI", "openalex": "OpenAlex", "arxiv": "arXiv", "pmid": "PMID", "pmcid": "PMCID"}


@dataclass
class Deduplicated:
    records: list[Record]  # merged, sorted by id
    members: dict[str, list[int]]  # merged record id -> indexes of the input records it came from

    @property
    def duplicates_removed(self) -> int:
        return sum(len(indexes) for indexes in self.members.values()) - len(self.records)


class _UnionFind:
    def __init__(self, size: int):
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _components(indexes: list[int], records: list[Record]) -> list[list[int]]:
    """Connected groups among `indexes`: records sharing any identifier."""
    position = {index: n for n, index in enumerate(indexes)}
    forest = _UnionFind(len(indexes))
    first_holder: dict[tuple[str, str], int] = {}
    for index in indexes:
        for key in records[index].identifiers().items():
            if key in first_holder:
                forest.union(position[first_holder[key]], position[index])
            else:
                first_holder[key] = index
    groups: dict[int, list[int]] = defaultdict(list)
    for index in indexes:
        groups[forest.find(position[index])].append(index)
    return list(groups.values())


def _contradiction(group: list[int], records: list[Record]) -> tuple[str, list[str]] | None:
    """The first namespace in which the group holds more than one value, with those values."""
    for namespace in NAMESPACES:
        values = sorted({v for i in group if (v := records[i].identifiers().get(namespace))})
        if len(values) > 1:
            return namespace, values
    return None


def _split(group: list[int], records: list[Record], notes: dict[int, list[str]]) -> list[list[int]]:
    found = _contradiction(group, records)
    if found is None:
        return [group]
    namespace, values = found
    note = (f"Conflicting {LABELS[namespace]} values {', '.join(values)} among records linked by other "
            "identifiers; the records are kept separate for a reviewer to resolve.")
    parts: dict[str, list[int]] = defaultdict(list)
    for index in group:
        parts[records[index].identifiers().get(namespace, "")].append(index)
        notes[index].append(note)
    # A record without a value in that namespace joins the part it is linked to. One
    # linked to several parts is ambiguous: it joins the first (by value), with a note,
    # since a record of its own would share every identifier it has with others.
    unassigned = parts.pop("", [])
    for component in _components(unassigned, records):
        keys = {key for i in component for key in records[i].identifiers().items()}
        linked = sorted(value for value, members in parts.items()
                        if any(key in keys for i in members for key in records[i].identifiers().items()))
        if len(linked) > 1:
            for index in component:
                notes[index].append(f"This record links records with different {LABELS[namespace]} values "
                                    f"({', '.join(linked)}); it was grouped with {linked[0]} and needs checking.")
        parts[linked[0]] += component
    result = []
    for part in parts.values():
        for component in _components(part, records):
            result += _split(component, records, notes)
    return result


def _completeness(record: Record) -> int:
    fields = (record.title, record.container_title, record.year, record.author, record.abstract,
              record.custom.fulltext_url)
    return sum(1 for value in fields if value)


def _canonical_key(record: Record) -> tuple:
    rank = min((SOURCE_PRIORITY.index(s) for s in record.custom.sources if s in SOURCE_PRIORITY),
               default=len(SOURCE_PRIORITY))
    return rank, -_completeness(record), canonical_json(model_data(record))


def merge(group: list[Record], notes: list[str]) -> Record:
    """One record from records of the same work, by the merge rules in the module docstring."""
    ordered = sorted(group, key=_canonical_key)
    primary = ordered[0]
    identifiers = {}
    for namespace in NAMESPACES:
        identifiers[namespace] = next((r.identifiers()[namespace] for r in ordered if namespace in r.identifiers()),
                                      None)
    # The longest abstract, whole, from one record; never stitched from several.
    abstract = max((r.abstract for r in ordered if r.abstract), key=len, default=None)
    # Licence, full-text address and open-access flag always travel together from one record.
    access = next((r for r in ordered if r.custom.fulltext_url), primary)
    sources = sorted({s for r in ordered for s in r.custom.sources}, key=SOURCES.index)
    types = sorted({t for r in ordered for t in r.custom.publication_types})
    return Record(
        id=record_id(identifiers),
        type=primary.type,
        title=primary.title,
        author=next((r.author for r in ordered if r.author), []),
        container_title=next((r.container_title for r in ordered if r.container_title), None),
        issued=next((r.issued for r in ordered if r.issued), None),
        volume=next((r.volume for r in ordered if r.volume), None),
        issue=next((r.issue for r in ordered if r.issue), None),
        page=next((r.page for r in ordered if r.page), None),
        DOI=identifiers["doi"], PMID=identifiers["pmid"], PMCID=identifiers["pmcid"],
        URL=next((r.URL for r in ordered if r.URL), None),
        abstract=abstract,
        custom=RecordMeta(
            openalex=identifiers["openalex"], arxiv=identifiers["arxiv"], sources=sources, publication_types=types,
            open_access=access.custom.open_access, license=access.custom.license,
            fulltext_url=access.custom.fulltext_url, retracted=any(r.custom.retracted for r in ordered),
            conflicts=sorted(set(notes) | {c for r in ordered for c in r.custom.conflicts}),
        ),
    )


def deduplicate(records: list[Record]) -> Deduplicated:
    notes: dict[int, list[str]] = defaultdict(list)
    groups = []
    for component in _components(list(range(len(records))), records):
        groups += _split(component, records, notes)
    merged = [(merge([records[i] for i in group], [n for i in group for n in notes[i]]), sorted(group))
              for group in groups]
    merged = _distinct_ids(merged)
    merged.sort(key=lambda pair: pair[0].id)
    return Deduplicated([record for record, _ in merged], {record.id: group for record, group in merged})


def _distinct_ids(merged: list[tuple[Record, list[int]]]) -> list[tuple[Record, list[int]]]:
    """Give records split apart by a conflict ids of their own.

    After a split, several records can still share their highest-priority
    identifier (one DOI, two PMIDs). Every identifier is kept, but each record's
    id must be unique: a record that shares its preferred identifier takes the
    best identifier it can have alone (a matching between records and their
    identifiers, preferring higher priority), and says so in a conflict note.
    """
    owners: dict[tuple[str, str], list[int]] = defaultdict(list)
    for n, (record, _) in enumerate(merged):
        for key in record.identifiers().items():
            owners[key].append(n)
    shared = {n for holders in owners.values() if len(holders) > 1 for n in holders}
    if not shared:
        return merged
    # Stable order: by content, so the outcome does not depend on the input order.
    order = sorted(shared, key=lambda n: canonical_json(model_data(merged[n][0])))
    # Identifiers a record holds alone come first, so no record is filed under a shared one
    # while it has one of its own; within each kind, the usual priority order.
    candidates = {}
    for n in order:
        keys = [(ns, merged[n][0].identifiers()[ns]) for ns in NAMESPACES if ns in merged[n][0].identifiers()]
        candidates[n] = sorted(keys, key=lambda key: len(owners[key]) > 1)
    taken: dict[tuple[str, str], int] = {}

    def assign(n: int, visited: set[tuple[str, str]]) -> bool:
        for key in candidates[n]:
            if key in visited:
                continue
            visited.add(key)
            if key not in taken or assign(taken[key], visited):
                taken[key] = n
                return True
        return False

    for n in order:
        if not assign(n, set()):
            raise AssertionError("identity conflict with no identifier left to tell records apart")
    result = list(merged)
    for (namespace, value), n in taken.items():
        record, group = merged[n]
        new_id = record_id({namespace: value})
        if new_id != record.id:
            preferred, value_shown = parse_record_id(record.id)
            note = (f"{LABELS[preferred]} {value_shown} is shared with other records that disagree on "
                    f"other identifiers; this record is filed under its {LABELS[namespace]} instead.")
            custom = record.custom.model_copy(update={"conflicts": sorted({*record.custom.conflicts, note})})
            record = Record.model_validate({**model_data(record), "id": new_id,
                                            "custom": model_data(custom)})
        result[n] = (record, group)
    return result
