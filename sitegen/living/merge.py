"""Fold newly retrieved records into the review's records, by identity, keeping ids stable.

Decisions and evidence refer to record ids, so an id never changes once it is
in records.jsonl: a new result that is the same work as an existing record
(by any shared identifier) enriches that record and is reported under its id.
Two existing records that a new result links are possibly duplicates of each
other; merging them is a reviewer's decision, so they are left apart with a
note, and the new result is counted under the first of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.records.identity import deduplicate
from sitegen.records.ids import NAMESPACES, record_id
from sitegen.records.model import Record, model_data


@dataclass
class Integration:
    records: dict[str, Record]  # every record of the review after the merge, by id
    ids: list[str]  # for each retrieved record, in order, the id it is known by


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
            records[olds[0].id] = _keep_id(merged, olds[0].id)
            target = olds[0].id
        elif olds:
            target = _link_existing(olds, records)
        else:
            new_groups.append((merged, news))
            continue
        for index in news:
            ids[index] = target
    for merged, news in new_groups:
        record = _with_free_id(merged, taken)
        taken.add(record.id)
        records[record.id] = record
        for index in news:
            ids[index] = record.id
    return Integration(dict(sorted(records.items())), ids)


def _keep_id(merged: Record, stable_id: str) -> Record:
    return Record.model_validate({**model_data(merged), "id": stable_id})


def _with_free_id(record: Record, taken: set[str]) -> Record:
    """A new record under its preferred identifier, or the next one no existing record uses."""
    if record.id not in taken:
        return record
    for namespace in NAMESPACES:
        value = record.identifiers().get(namespace)
        if value and record_id({namespace: value}) not in taken:
            return _keep_id(record, record_id({namespace: value}))
    raise AssertionError(f"every identifier of {record.id} belongs to another record")


def _link_existing(olds: list[Record], records: dict[str, Record]) -> str:
    ids = sorted(record.id for record in olds)
    note = (f"A new search result links records {', '.join(ids)} by their identifiers: they may be duplicates "
            "of each other. They are kept apart until a reviewer decides.")
    for record in olds:
        custom = record.custom.model_copy(update={"conflicts": sorted({*record.custom.conflicts, note})})
        records[record.id] = Record.model_validate({**model_data(record), "custom": model_data(custom)})
    return ids[0]
