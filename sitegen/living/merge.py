"""Fold newly retrieved records into the review's records by identity, keeping ids stable; match the rest
by metadata without merging anything.

Decisions and evidence refer to record ids, so an id never changes once it is
in records.jsonl: a new result that shares an identifier with an existing record
(the identity graph) enriches that record and is reported under its id. Two
existing records that a new result links are possibly duplicates of each other;
merging them is a reviewer's decision, so they are left apart with a note, and
the new result is counted under the first of them.

A new result sharing no identifier is filed as a record of its own, then the
metadata matcher (`sitegen.records.matching`) compares it with the review's
records: a pair it calls *same* is returned as a match, which `update` records
as a `same` row of duplicates.csv by reviewer "sitegen" (so PRISMA counts it as
a duplicate removed and it is not screened, and a reviewer who finds two works
changes the row to `different`: nothing is lost either way); a *probable* pair
is only listed; a preprint and its journal version are linked as versions.
Pairs a reviewer already decided in duplicates.csv are left as decided.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from sitegen.records.identity import FILED_ELSEWHERE, deduplicate, filed_by_content
from sitegen.records.ids import NAMESPACE_LABELS, NAMESPACES, record_id
from sitegen.records.matching import (
    SAME_TITLE,
    Work,
    conflict,
    conflict_beyond_identifiers,
    find_duplicates,
    record_work,
    title_score,
)
from sitegen.records.model import Record, identifier_keys, model_data
from sitegen.records.providers import PROVIDERS, label


@dataclass
class Integration:
    records: dict[str, Record]  # every record of the review after the merge, by id
    ids: list[str]  # for each retrieved record, in order, the id it is known by
    matched: list[tuple[str, str, float]] = field(default_factory=list)  # (new record, its canonical record, score)
    # Pairs for a reviewer: a new record like another, or two records a new result linked (`_link_existing`).
    probable: list[tuple[str, str, float]] = field(default_factory=list)
    versions: list[tuple[str, str]] = field(default_factory=list)  # (preprint id, journal version id) newly linked


@dataclass
class Decided:
    """What duplicates.csv already says: confirmed duplicates (duplicate -> canonical) and the pairs decided."""

    canonical: dict[str, str] = field(default_factory=dict)
    pairs: set[frozenset[str]] = field(default_factory=set)


def integrate(existing: dict[str, Record], retrieved: list[Record], decided: Decided | None = None) -> Integration:
    decided = decided or Decided()
    existing, retrieved, run_notes = _doi_corrections(existing, retrieved, decided)
    old = list(existing.values())
    result = deduplicate(old + retrieved)
    records = dict(existing)
    ids: list[str | None] = [None] * len(retrieved)
    taken = set(existing)
    new_groups = []
    linked: list[list[str]] = []  # existing records a new result links: a reviewer is asked (Integration.probable)
    for merged in result.records:
        members = result.members[merged.id]
        olds = [old[i] for i in members if i < len(old)]
        news = [i - len(old) for i in members if i >= len(old)]
        if len(olds) == 1:
            records[olds[0].id] = _enriched(olds[0], merged, decided)
            target = olds[0].id
        elif olds:
            target = _link_existing(olds, records, decided)
            linked.append(sorted(record.id for record in olds))
        else:
            new_groups.append((merged, news))
            continue
        for index in news:
            ids[index] = target
    new_ids = set()
    for merged, news in new_groups:
        record = _with_free_id(merged, taken)
        if record is None:
            target = _note_on_holder(merged, records)
        else:
            taken.add(record.id)
            records[record.id] = record
            new_ids.add(target := record.id)
        for index in news:
            ids[index] = target
    for index, note in run_notes:  # on the record the first result of an article this run is known by
        _add_note(records, ids[index], note)
    groups = _groups(decided)
    _keep_confirmed_groups(records, existing, groups)
    integration = Integration(records, ids)
    integration.probable += [(ids[0], other, title_score(record_work(records[ids[0]]), record_work(records[other])))
                             for ids in linked for other in ids[1:] if not _decided(decided, ids[0], other)]
    if new_ids:
        _match_by_metadata(integration, new_ids, decided, groups)
    _link_stated_versions(integration, decided)
    integration.records = dict(sorted(records.items()))
    return integration


def _doi_corrections(existing: dict[str, Record], retrieved: list[Record],
                     decided: Decided) -> tuple[dict[str, Record], list[Record], list[tuple[int, str]]]:
    """`existing` and `retrieved`, a result that a provider returns under its own id for a record (a PMID from
    PubMed or Europe PMC: `ProviderInfo.own_ids`), or under an id that names one article whoever gives it (a PMID
    or PMCID from OpenAlex too: `ARTICLE_IDS`), but with another DOI than the record's taken for that record with
    its DOI corrected, unless the two may be two works (`_one_article`).

    A shared PMID or OpenAlex id always makes one work, but two DOIs in one group split it (`identity._split`),
    so a DOI corrected between two runs made the work new. The result is given the record's DOI (the record keeps
    its id, which may be that DOI, and an id never changes) and the record a note naming the DOI the provider
    gives now, for a reviewer to check which is right; the note stays at later runs (`RUN_NOTES`).

    Two results of one run under an article's id no record holds (two sources disagreeing on its DOI) are one
    article in the same way: the later is given the first's DOI, and the note, returned with the first result's
    index, goes on the record that result is filed as."""
    holders: dict[tuple[str, str], list[str]] = {}
    for record in existing.values():
        for key in record.identifiers().items():
            holders.setdefault(key, []).append(record.id)
    records, results = dict(existing), list(retrieved)
    firsts: dict[tuple[str, str], int] = {}  # an article's id no record holds -> the run's first result under it
    dois: dict[str | int, str] = {}  # the article's record (its id) or first result (its index) -> the DOI it keeps
    run_notes: list[tuple[int, str]] = []
    for index, result in enumerate(retrieved):
        ids = result.identifiers()
        own = {(namespace, value) for source in result.custom.sources for namespace in _own_ids(source)
               if (value := ids.get(namespace))}
        # Records duplicates.csv confirms to be one work hold its ids as one: the work's canonical record.
        held = sorted({decided.canonical.get(holder, holder) for key in own for holder in holders.get(key, ())})
        earlier: list[int] = []
        if not held:
            earlier = sorted({firsts[key] for key in own if key in firsts})
            firsts.update({key: index for key in own if key not in firsts})
        if len(held) == 1 and held[0] in records:
            holder: str | int = held[0]
            article = records[holder]
        elif len(earlier) == 1:
            holder = earlier[0]
            article = results[holder]
        else:  # a record of its own, the run's first result under its ids, or several works: identity decides
            if result.DOI and not held:
                dois[index] = result.DOI
            continue
        doi = dois.get(holder) or article.DOI
        if not doi:  # the article has no DOI yet: this result's is the one it keeps this run
            if result.DOI:
                dois[holder] = result.DOI
            continue
        # A DOI a record holds already is none corrected (one of a work's records confirmed by a reviewer): identity
        # files the result with that record.
        if not result.DOI or result.DOI == doi or ("doi", result.DOI) in holders \
                or _disagree_beyond_doi(article, result) or not _one_article(article, result):
            continue
        results[index] = result.model_copy(update={"DOI": doi})
        if isinstance(holder, str):
            namespace, value = min(key for key in own if key in holders)  # the record's, or a confirmed duplicate's
            records[holder] = _noted(records[holder], _correction_note(result, namespace, value, doi))
        else:
            namespace, value = min(key for key in own if firsts[key] == holder)
            run_notes.append((holder, _correction_note(result, namespace, value, doi)))
    return records, results, run_notes


def _correction_note(result: Record, namespace: str, value: str, kept: str) -> str:
    return (f"{DOI_CORRECTED}{', '.join(label(source) for source in result.custom.sources)} returns this work "
            f"under its {NAMESPACE_LABELS[namespace]} {value} with the DOI {result.DOI}, not {kept}: taken "
            f"for the same work, its DOI corrected; the record keeps {kept}. Check which DOI is the work's.")


# A PMID or PMCID names one article, whichever provider gives it: OpenAlex too (whose own W id may file a preprint
# and its journal version together). A result sharing one with a record is that article (`_one_article`).
ARTICLE_IDS = ("pmid", "pmcid")


def _own_ids(source: str) -> tuple[str, ...]:
    return (*ARTICLE_IDS, *(PROVIDERS[source].own_ids if source in PROVIDERS else ()))


def _one_article(record: Record, result: Record) -> bool:
    """Whether a result sharing an article's id with `record` is that article, whatever its DOI: their titles agree
    and nothing else tells them apart (a preprint and its journal version, a notice and its work:
    `conflict_beyond_identifiers`). A PMID a source gives the wrong work (OpenAlex maps them) must not hide one work
    in another's record: kept apart, both are screened and a reviewer sees the pair."""
    ours, theirs = record_work(record), record_work(result)
    return not conflict_beyond_identifiers(ours, theirs) and title_score(ours, theirs) >= SAME_TITLE


def _disagree_beyond_doi(first: Record, second: Record) -> bool:
    """Whether two records hold different values in a namespace other than the DOI's (two PMIDs, say). Two OpenAlex
    ids rule nothing out (as `matching.conflict` takes them): OpenAlex renumbers the works it merges, and may
    correct a work's DOI in the same change."""
    ours, theirs = first.identifiers(), second.identifiers()
    return any(ours[namespace] != theirs[namespace] for namespace in ours.keys() & theirs.keys()
               if namespace not in ("doi", "openalex"))


def _groups(decided: Decided) -> dict[str, list[str]]:
    """Canonical record -> it and the records duplicates.csv confirms to be it (one work)."""
    groups: dict[str, list[str]] = {}
    for duplicate, canonical in sorted(decided.canonical.items()):
        groups.setdefault(canonical, [canonical]).append(duplicate)
    return groups


def _contradicting(members: list[str], works: dict[str, Work]) -> tuple[str, str, str] | None:
    """Two records of a group the matcher rules out as one work (different DOIs or PMIDs...), and why; each against
    the canonical and those before it. Stricter than `check`, which lets a row's own pair differ in identifiers (the
    reviewer compared them): an enrichment never makes a group differ where it did not."""
    for later, member in enumerate(members):
        for other in members[:later]:
            if member in works and other in works and (why := conflict(works[member], works[other])):
                return member, other, why
    return None


def _keep_confirmed_groups(records: dict[str, Record], existing: dict[str, Record],
                           groups: dict[str, list[str]]) -> None:
    """An enrichment that would make records confirmed to be one work (duplicates.csv, `groups`) contradict each
    other (a source now gives one of them another PMID) is not made: `check` would refuse the folder, and every
    command with it. Of each pair that would contradict, the record a source changed keeps what it had (and the
    notes this run added), with a note for a reviewer; the group's other records keep what they were given."""
    for members in groups.values():
        before = {rid: record_work(existing[rid]) for rid in members if rid in existing}
        now = {rid: record_work(records[rid]) for rid in members if rid in records}
        if now == before or _contradicting(members, before):
            continue  # nothing a source changed, or a contradiction there before this run (check reports it)
        while found := _contradicting(members, now):
            record_id, other, why = found
            changed = [rid for rid in (record_id, other) if rid in before and now[rid] != before[rid]]
            if not changed:
                break  # not of this run's making (cannot be, as the group agreed before it)
            for rid in changed:
                notes = sorted({*existing[rid].custom.conflicts, *records[rid].custom.conflicts})
                kept = existing[rid].model_copy(update={"custom": existing[rid].custom.model_copy(
                    update={"conflicts": notes})})
                records[rid] = _noted(kept, (
                    f"A source now describes this record otherwise ({why} from "
                    f"{other if rid == record_id else record_id}, which duplicates.csv says is the same work); it "
                    "was kept as it was. If they are different works, change their row to `different`."))
                now[rid] = before[rid]


def _match_by_metadata(integration: Integration, new_ids: set[str], decided: Decided,
                       groups: dict[str, list[str]]) -> None:
    """The matcher's verdicts on pairs with a new record: each new record the same as another becomes a
    match to its canonical record (the most similar existing one, or the first new one of its set, and
    through a confirmed duplicate its canonical record); probable pairs and version links as found. Pairs
    decided in duplicates.csv are not proposed again."""
    records = integration.records
    works = {record_id: record_work(record) for record_id, record in records.items()}
    matches = find_duplicates(list(works.values()), focus=new_ids)

    def canonical(record_id: str) -> str:
        return decided.canonical.get(record_id, record_id)

    def undecided(a: str, b: str) -> bool:
        return not _decided(decided, a, b)

    joined = {key: list(members) for key, members in groups.items()}  # and the records matched to them now

    def matched_to(new: str, target: str) -> bool:
        """Match `new` to `target`'s canonical record, unless a record confirmed to be that one rules it out
        (another PMID): the row would then make the folder invalid, and a reviewer decides."""
        group = joined.setdefault(canonical(target), [canonical(target)])
        if any(conflict(works[new], works[other]) for other in group if other in works):
            return False
        group.append(new)
        integration.matched.append((new, canonical(target), title_score(works[new], works[target])))
        return True

    unsure: list[tuple[str, str, float]] = []
    for members in matches.sets:
        olds = [key for key in members if key not in new_ids]
        news = [key for key in members if key in new_ids]
        for new in news:
            if not olds and new == news[0]:
                continue  # a set of new records only: the first stands for it, the others point at it
            best = max(olds, key=lambda key: (title_score(works[new], works[key]), key)) if olds else news[0]
            if undecided(new, best) and not matched_to(new, best):
                unsure.append((new, best, title_score(works[new], works[best])))
    # A new record filed apart only because OpenAlex gave it another id (it renumbers the works it merges) shares
    # a PMID or PMCID, which name one work, with a record the review has: the same work, whatever its title now
    # says (a revised one). The matcher rules nothing out by OpenAlex ids, so it is matched when nothing else
    # tells the two apart.
    held: dict[tuple[str, str], str] = {}  # (pmid or pmcid, its value) -> the first record holding it
    for holder, found in works.items():
        for key in found.identifiers if holder not in new_ids else ():
            if key[0] in ("pmid", "pmcid"):
                held.setdefault(key, holder)
    done = {new for new, _, _ in integration.matched} | {new for members in matches.sets for new in members[1:]}
    by_identifier: set[frozenset[str]] = set()
    for new in sorted(new_ids - done):
        found = next((held[key] for key in sorted(works[new].identifiers) if key in held), None)
        if found is not None and undecided(new, found) and matched_to(new, found):  # matched_to rules out conflicts
            by_identifier.add(frozenset((new, found)))
    integration.probable += [(a, b, score) for a, b, score in matches.probable
                             if undecided(a, b) and frozenset((a, b)) not in by_identifier] + unsure
    integration.versions = sorted((a, b) for a, b, _ in matches.versions)
    for preprint, published in integration.versions:
        _link_versions(records, preprint, published)
        _link_versions(records, published, preprint)


def _link_stated_versions(integration: Integration, decided: Decided) -> None:
    """Link each two records of the review one of which a source says is the other's preprint or journal version
    (`custom.stated_versions`), whatever their titles: a journal often retitles a preprint, and the matcher, which
    compares titles, misses the pair. Linked as the matcher links versions, never merged; a pair duplicates.csv or
    this run's matches take for one work is left so (`check` refuses a version link between duplicates), and a pair
    listed as probable duplicates is not, the source having said what the two are. A stated version the review does
    not hold stays on the record."""
    records = integration.records
    if not any(record.custom.stated_versions for record in records.values()):
        return  # most reviews: no source stated one
    holders: dict[tuple[str, str], str] = {}
    for record in records.values():
        for key in identifier_keys(record.DOI, record.PMID):
            holders.setdefault(key, record.id)
    one_work = {frozenset((new, canonical)) for new, canonical, _ in integration.matched}
    stated: set[tuple[str, str]] = set()
    for record in records.values():
        for version in record.custom.stated_versions:
            for other in {holders[key] for key in version.work_keys() if key in holders} - {record.id}:
                pair = frozenset((record.id, other))
                if pair not in one_work and decided.canonical.get(record.id, record.id) \
                        != decided.canonical.get(other, other):
                    stated.add(_preprint_first(records[record.id], records[other]))
    new = sorted(pair for pair in stated if pair[1] not in records[pair[0]].custom.other_versions)
    for preprint, published in new:
        _link_versions(records, preprint, published)
        _link_versions(records, published, preprint)
    linked = {frozenset(pair) for pair in stated}
    integration.probable = [entry for entry in integration.probable if frozenset(entry[:2]) not in linked]
    integration.versions = sorted({*integration.versions, *new})


def _preprint_first(a: Record, b: Record) -> tuple[str, str]:
    """(the preprint's id, the journal version's) of two versions of one study: the matcher's word on which is a
    preprint (`record_work`), else their ids in order."""
    if record_work(b).preprint and not record_work(a).preprint:
        return b.id, a.id
    first, second = sorted((a.id, b.id))
    return first, second


def _link_versions(records: dict[str, Record], holder: str, other: str) -> None:
    record = records[holder]
    linked = sorted({*record.custom.other_versions, other})
    records[holder] = record.model_copy(update={"custom": record.custom.model_copy(update={"other_versions": linked})})


def _decided(decided: Decided, a: str, b: str) -> bool:
    """Whether duplicates.csv decides the pair: a row of its own, both one work, or a row on the works they are
    confirmed to be (a record `different` from another is different from that one's confirmed duplicates)."""
    first, second = decided.canonical.get(a, a), decided.canonical.get(b, b)
    return first == second or frozenset((a, b)) in decided.pairs or frozenset((first, second)) in decided.pairs


def _all_decided(decided: Decided, ids: list[str]) -> bool:
    """Whether duplicates.csv decides every pair of these records (those a search result linked)."""
    return all(_decided(decided, a, b) for a, b in itertools.combinations(ids, 2))


def _enriched(existing: Record, merged: Record, decided: Decided) -> Record:
    """An existing record, enriched by what a source newly says of it, keeping its id and the text
    reviewers decided on: its title, and its abstract, which evidence passages quote (a longer one
    from another source never replaces it underneath them; it only fills a missing one), and the notes
    an earlier run left for a reviewer (`RUN_NOTES`) but a link duplicates.csv has decided since."""
    carried = [note for note in existing.custom.conflicts if note.startswith(RUN_NOTES) and not (
        (linked := _LINKED_IDS.match(note)) and _all_decided(decided, linked.group(1).split(", ")))]
    custom = merged.custom.model_copy(update={"conflicts": sorted({*merged.custom.conflicts, *carried})}) \
        if carried else merged.custom  # most records found again have no note to carry
    kept = merged.model_copy(update={"title": existing.title, "abstract": existing.abstract or merged.abstract,
                                     "custom": custom})
    return _keep_id(kept, existing.id)


# The notes a run leaves for a reviewer here say what that run's results showed, which the records do not hold
# (the identifier that linked two records is on neither of them): they stay at later runs, whatever those
# return (a source down dropped them). Identity's own notes are derived from the records at every run.
LINKED = "A new search result links records "
DOI_CORRECTED = "A corrected DOI? "
RUN_NOTES = (LINKED, "A search result (", DOI_CORRECTED)  # `_keep_confirmed_groups` says its note again while it holds
_LINKED_IDS = re.compile(re.escape(LINKED) + r"(.+?) by their identifiers")


def linked_records(record: Record) -> list[list[str]]:
    """The records each note on `record` says a search result linked to it (they may be one work)."""
    return [found.group(1).split(", ") for note in record.custom.conflicts if (found := _LINKED_IDS.match(note))]


def _keep_id(merged: Record, stable_id: str) -> Record:
    """`merged` under the id it already has; a note saying it was filed under another is no longer true."""
    conflicts = [note for note in merged.custom.conflicts if stable_id == merged.id or FILED_ELSEWHERE not in note]
    custom = merged.custom.model_copy(update={"conflicts": conflicts})
    return Record.model_validate({**model_data(merged), "id": stable_id, "custom": model_data(custom)})


def _with_free_id(record: Record, taken: set[str]) -> Record | None:
    """A new record under its preferred identifier, or the next one no record uses, or else a content key
    (`ref`); None when even that is another record's id (the same content twice)."""
    if record.id not in taken:
        return record
    for namespace in NAMESPACES:
        value = record.identity_keys().get(namespace)
        if value and record_id({namespace: value}) not in taken:
            note = (f"Filed under its {NAMESPACE_LABELS[namespace]} because {record.id}, its preferred id, is "
                    "another record's.")
            return _noted(record, note, id=record_id({namespace: value}))
    # Every identifier it has is another record's (a supplement's DOI it shares with another abstract): it is
    # filed under a key of its own content, so it is screened like any other record, never hidden in another.
    filed = filed_by_content(record)
    return None if filed.id in taken else filed


def _note_on_holder(result: Record, records: dict[str, Record]) -> str:
    """A result that deduplication kept apart (its title is unrelated) but whose every identifier is
    already a record's id cannot stand as a record of its own, since a record is filed under one of its
    own identifiers and ids never change. It is counted under the record holding its identifier, whose
    conflict notes say so, so a reviewer sees it; its metadata is not mixed into that record."""
    holder = next(rid for ns, value in result.identity_keys().items()
                  if (rid := record_id({ns: value})) in records)
    note = (f"A search result ({', '.join(result.custom.sources)}) shares every identifier with this record but "
            f"has an unrelated title, \"{_short(result.title)}\"; sitegen cannot file it as a record of its own and "
            "counts it here: check whether it is a different work.")
    _add_note(records, holder, note)
    return holder


def _short(title: str) -> str:
    return title if len(title) <= 150 else title[:147] + "..."


def _link_existing(olds: list[Record], records: dict[str, Record], decided: Decided) -> str:
    """The records a new result links, noted for a reviewer unless duplicates.csv decided them (the note then goes)."""
    ids = sorted(record.id for record in olds)
    note = (f"{LINKED}{', '.join(ids)} by their identifiers: they may be duplicates "
            "of each other. They are kept apart until a reviewer decides.")
    settled = _all_decided(decided, ids)
    for record in olds:
        (_remove_note if settled else _add_note)(records, record.id, note)
    return ids[0]


def _add_note(records: dict[str, Record], holder_id: str, note: str) -> None:
    records[holder_id] = _noted(records[holder_id], note)


def _remove_note(records: dict[str, Record], holder_id: str, note: str) -> None:
    custom = records[holder_id].custom
    records[holder_id] = records[holder_id].model_copy(update={"custom": custom.model_copy(
        update={"conflicts": [kept for kept in custom.conflicts if kept != note]})})


def _noted(record: Record, note: str, **changes: str) -> Record:
    """`record` with one more conflict note for a reviewer (and any `changes`), validated again."""
    custom = record.custom.model_copy(update={"conflicts": sorted({*record.custom.conflicts, note})})
    return Record.model_validate({**model_data(record), **changes, "custom": model_data(custom)})
