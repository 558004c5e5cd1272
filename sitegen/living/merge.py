"""Fold newly retrieved records into the review's records, by identity then by metadata, keeping ids stable.

Decisions and evidence refer to record ids, so an id never changes once it is
in records.jsonl: a new result that is the same work as an existing record
enriches that record and is reported under its id. It is the same work when it
shares an identifier (the identity graph), or, sharing none, when the metadata
matcher (`sitegen.records.matching`) calls the pair *same*; the record then
gains the result's identifiers, so later runs find it by identity, and a note
says why it was merged. Pairs the matcher calls *probable* are only listed, for
a reviewer to decide in duplicates.csv. Two existing records that a new result
links are possibly duplicates of each other; merging them is a reviewer's
decision, so they are left apart with a note, and the new result is counted
under the first of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sitegen.records.identity import FILED_ELSEWHERE, deduplicate, merge
from sitegen.records.ids import NAMESPACE_LABELS, NAMESPACES, record_id
from sitegen.records.matching import Matches, find_duplicates, record_work
from sitegen.records.model import Record, model_data

# The note on a record that a result without a shared identifier was merged into.
MATCHED_NOTE = ("A search result ({sources}) with no identifier in common, \"{title}\", was taken for this record "
                "because its title, authors, year and publication details agree; its identifiers are now this "
                "record's. If it is another work, record that in duplicates.csv.")


@dataclass
class Integration:
    records: dict[str, Record]  # every record of the review after the merge, by id
    ids: list[str]  # for each retrieved record, in order, the id it is known by
    probable: list[tuple[str, str, float]] = field(default_factory=list)  # pairs with a new record, for a reviewer
    versions: list[tuple[str, str]] = field(default_factory=list)  # (preprint id, journal version id) newly linked


def integrate(existing: dict[str, Record], retrieved: list[Record]) -> Integration:
    old = list(existing.values())
    result = deduplicate(old + retrieved)
    records = dict(existing)
    ids: list[str | None] = [None] * len(retrieved)
    taken = set(existing)
    new_groups = []
    for merged in result.records:
        members = result.members[merged.id]
        olds = [old[i] for i in members if i < len(old)]
        news = [i - len(old) for i in members if i >= len(old)]
        if len(olds) == 1:
            records[olds[0].id] = _enriched(olds[0], merged)
            target = olds[0].id
        elif olds:
            target = _link_existing(olds, records)
        else:
            new_groups.append((merged, news))
            continue
        for index in news:
            ids[index] = target
    first_index = {f"new:{n}": news[0] for n, (_, news) in enumerate(new_groups)}
    new_groups, matches = _match_by_metadata(new_groups, records, ids)
    for merged, news in new_groups:
        record = _with_free_id(merged, taken)
        if record is None:
            target = _note_on_holder(merged, records)
        else:
            taken.add(record.id)
            records[record.id] = record
            target = record.id
        for index in news:
            ids[index] = target
    def filed(key: str) -> str:
        return ids[first_index[key]] if key in first_index else key

    probable = [(filed(a), filed(b), score) for a, b, score in matches.probable if filed(a) != filed(b)]
    versions = sorted({(filed(a), filed(b)) for a, b, _ in matches.versions if filed(a) != filed(b)})
    for preprint, published in versions:
        _link_versions(records, preprint, published)
        _link_versions(records, published, preprint)
    return Integration(dict(sorted(records.items())), ids, probable, versions)


def _match_by_metadata(new_groups: list[tuple[Record, list[int]]], records: dict[str, Record],
                       ids: list[str | None]) -> tuple[list[tuple[Record, list[int]]], Matches]:
    """New results that share no identifier with any record, matched by metadata: one the matcher
    calls the same as an existing record is folded into it (`ids` say so); new results the same as
    each other become one. Returns the new results still to file, and the matches (probable pairs and
    versions), a new result named "new:<n>" by its place in `new_groups`."""
    if not new_groups:
        return new_groups, Matches([], [])
    keys = [f"new:{n}" for n in range(len(new_groups))]
    works = [record_work(record) for record in records.values()]
    works += [record_work(merged.model_copy(update={"id": key})) for key, (merged, _) in zip(keys, new_groups,
                                                                                            strict=True)]
    matches = find_duplicates(works, focus=set(keys))
    group_of = {key: n for n, key in enumerate(keys)}
    remaining = dict(enumerate(new_groups))
    for members in matches.sets:
        olds = [key for key in members if key not in group_of]
        news = [group_of[key] for key in members if key in group_of]
        combined = merge([new_groups[n][0] for n in news], [])
        indexes = sorted(index for n in news for index in new_groups[n][1])
        for n in news:
            del remaining[n]
        if not olds:
            remaining[news[0]] = (combined, indexes)
            continue
        target = olds[0] if len(olds) == 1 else _link_existing([records[key] for key in olds], records)
        holder = records[target]
        note = MATCHED_NOTE.format(sources=", ".join(combined.custom.sources), title=_short(combined.title))
        folded = merge([holder, combined], [*holder.custom.conflicts, note])
        records[target] = _enriched(holder, folded)
        for index in indexes:
            ids[index] = target
    return [remaining[n] for n in sorted(remaining)], matches


def _link_versions(records: dict[str, Record], holder: str, other: str) -> None:
    record = records[holder]
    linked = sorted({*record.custom.other_versions, other})
    records[holder] = record.model_copy(update={"custom": record.custom.model_copy(update={"other_versions": linked})})


def _enriched(existing: Record, merged: Record) -> Record:
    """An existing record, enriched by what a source newly says of it, keeping its id and the text
    reviewers decided on: its title, and its abstract, which evidence passages quote (a longer one
    from another source never replaces it underneath them; it only fills a missing one)."""
    kept = merged.model_copy(update={"title": existing.title, "abstract": existing.abstract or merged.abstract})
    return _keep_id(kept, existing.id)


def _keep_id(merged: Record, stable_id: str) -> Record:
    """`merged` under the id it already has; a note saying it was filed under another is no longer true."""
    conflicts = [note for note in merged.custom.conflicts if stable_id == merged.id or FILED_ELSEWHERE not in note]
    custom = merged.custom.model_copy(update={"conflicts": conflicts})
    return Record.model_validate({**model_data(merged), "id": stable_id, "custom": model_data(custom)})


def _with_free_id(record: Record, taken: set[str]) -> Record | None:
    """A new record under its preferred identifier, or the next one no record uses; None when
    every identifier it has is another record's id."""
    if record.id not in taken:
        return record
    for namespace in NAMESPACES:
        value = record.identifiers().get(namespace)
        if value and record_id({namespace: value}) not in taken:
            note = (f"Filed under its {NAMESPACE_LABELS[namespace]} because {record.id}, its preferred id, is "
                    "another record's.")
            return _noted(record, note, id=record_id({namespace: value}))
    return None


def _note_on_holder(result: Record, records: dict[str, Record]) -> str:
    """A result that deduplication kept apart (its title is unrelated) but whose every identifier is
    already a record's id cannot stand as a record of its own, since a record is filed under one of its
    own identifiers and ids never change. It is counted under the record holding its identifier, whose
    conflict notes say so, so a reviewer sees it; its metadata is not mixed into that record."""
    holder = next(rid for ns, value in result.identifiers().items()
                  if (rid := record_id({ns: value})) in records)
    note = (f"A search result ({', '.join(result.custom.sources)}) shares every identifier with this record but "
            f"has an unrelated title, \"{_short(result.title)}\"; sitegen cannot file it as a record of its own and "
            "counts it here: check whether it is a different work.")
    _add_note(records, holder, note)
    return holder


def _short(title: str) -> str:
    return title if len(title) <= 150 else title[:147] + "..."


def _link_existing(olds: list[Record], records: dict[str, Record]) -> str:
    ids = sorted(record.id for record in olds)
    note = (f"A new search result links records {', '.join(ids)} by their identifiers: they may be duplicates "
            "of each other. They are kept apart until a reviewer decides.")
    for record in olds:
        _add_note(records, record.id, note)
    return ids[0]


def _add_note(records: dict[str, Record], holder_id: str, note: str) -> None:
    records[holder_id] = _noted(records[holder_id], note)


def _noted(record: Record, note: str, **changes: str) -> Record:
    """`record` with one more conflict note for a reviewer (and any `changes`), validated again."""
    custom = record.custom.model_copy(update={"conflicts": sorted({*record.custom.conflicts, note})})
    return Record.model_validate({**model_data(record), **changes, "custom": model_data(custom)})
