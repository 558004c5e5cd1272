"""Identity-graph deduplication: records are the same work only when identifiers say so.

1. Every record is a node; its normalised identifiers (doi, openalex, arxiv, pmid,
   pmcid) and an imported reference's content key (ref) are its keys. Records sharing any key are joined (union-find), so a
   PubMed record and an OpenAlex record meet through a shared PMID even when one
   of them lacks the DOI. Titles, authors and years never join anything, so a
   preprint and its journal version stay apart unless an identifier links them.
   An arXiv DOI (10.48550/arXiv.<id>) is also a key for its arXiv id.
2. A DOI can be shared by different works, so a link made by a shared DOI alone
   holds only when the titles agree (similarity at or above TITLE_FLOOR after
   translation markers, HTML and case are removed), neither or both records are
   notices about another work (erratum, correction, retraction notice, reply,
   comment), and the numbers in their titles, their first pages and their first
   authors do not tell them apart: a conference supplement gives its DOI to every
   abstract in it, a series to its parts, and an erratum is often exported with the
   DOI of the article it corrects. A shared
   PMID, PMCID, OpenAlex or arXiv id always holds, so the same DOI and PMID with a
   translated title is one work. Titles never join records, they only cut DOI links.
   Records kept apart this way are flagged.
   Then a group in which one namespace holds two different values is a conflict (two
   DOIs for "one" paper): it is split by the first such namespace, recursively,
   and every resulting record carries a conflict note for a human.
3. Each group becomes one record. Its members are put in a canonical order
   (source priority, then completeness, then content) that does not depend on
   the order records arrived in, and fields are merged from that order.

`deduplicate` is pure and deterministic: the same records in any order give the
same result.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from rapidfuzz import fuzz

from sitegen.records.ids import (
    NAMESPACE_LABELS,
    NAMESPACES,
    arxiv_of_doi,
    arxiv_paper,
    content_ref,
    parse_record_id,
    record_id,
)
from sitegen.records.joins import UnionFind, joined
from sitegen.records.listing import listed
from sitegen.records.matching import TITLE_FLOOR, Work, one_doi_one_work, record_work
from sitegen.records.model import (
    CslDate,
    NoticeOf,
    Record,
    RecordMeta,
    Reinstatement,
    Update,
    filled,
    identifier_keys,
    lifted,
    lists_retraction,
    model_data,
    retraction_stands,
    stated_versions_once,
    with_lifted,
    with_undated_flag,
)
from sitegen.records.notices import notice_kind
from sitegen.records.providers import DATES_FILLED_IN, MERGE_PRIORITY, SOURCES
from sitegen.records.titles import matched_title

LARGE_GROUP = 256  # records sharing one DOI beyond which only equal titles are joined through it
# Identifiers that name one work only. A DOI can be shared by different works (a conference supplement
# gives one DOI to every abstract; an erratum or a reply is often exported with the DOI of the article it
# corrects), so a shared DOI needs the titles to agree; a shared PMID, PMCID, OpenAlex or arXiv id does not,
# which keeps a translated title with the same DOI and PMID one work.
# A ref (a content key) is derived from the title, year, first author, container and first page, so records
# sharing one agree on all of them: one work.
_ONE_WORK = ("pmid", "pmcid", "openalex", "arxiv", "ref")
# Ends the note on a record filed under other than its preferred identifier; a caller that keeps the
# record's earlier id (ids never change once given) drops the note with this.
FILED_ELSEWHERE = "; this record is filed under its "


@dataclass
class Deduplicated:
    records: list[Record]  # merged, sorted by id
    members: dict[str, list[int]]  # merged record id -> indexes of the input records it came from

    @property
    def duplicates_removed(self) -> int:
        return sum(len(indexes) for indexes in self.members.values()) - len(self.records)


Identifiers = dict[str, str]


def _components(indexes: list[int], ids: list[Identifiers]) -> list[list[int]]:
    """Connected groups among `indexes`: records sharing any identifier."""
    position = {index: n for n, index in enumerate(indexes)}
    forest = UnionFind(len(indexes))
    first_holder: dict[tuple[str, str], int] = {}
    for index in indexes:
        for key in ids[index].items():
            if key in first_holder:
                forest.union(position[first_holder[key]], position[index])
            else:
                first_holder[key] = index
    groups: dict[int, list[int]] = defaultdict(list)
    for index in indexes:
        groups[forest.find(position[index])].append(index)
    return list(groups.values())


def _contradiction(group: list[int], ids: list[Identifiers]) -> tuple[str, list[str]] | None:
    """The first namespace in which the group holds more than one value, with those values."""
    for namespace in NAMESPACES:
        values = sorted({v for i in group if (v := ids[i].get(namespace))})
        if len(values) > 1:
            return namespace, values
    return None


def is_notice(record: Record) -> bool:
    """True when the record is a notice about another work (erratum, correction, retraction notice,
    expression of concern, reply or comment), by its title or publication type."""
    return bool(notice_kind(record.title, record.custom.publication_types))


def _title_clusters(group: list[int], titles: list[str], ids: list[Identifiers],
                    notices: list[str], work: Callable[[int], Work]) -> list[list[int]]:
    """Single-linkage clusters of the group's records along the identifiers they share: two records
    sharing an identifier of one work (_ONE_WORK) are joined; two titled records sharing only a DOI are
    joined when both are notices of one kind or both are not (a comment and the reply to it are two works,
    often both exported with the commented article's DOI), their titles agree (at or above TITLE_FLOOR) and nothing
    tells a DOI's several works apart (`matching.one_doi_one_work`: the numbers in their titles, their first
    pages, their first authors, a protocol's title beside its results paper's; among more than LARGE_GROUP records, equal titles). A record without a title joins
    through its DOI only when the titled records holding that DOI are one cluster (or there are none):
    a DOI on several works (a supplement's) tells nothing of which one it is. Titles never join records
    that share no identifier."""
    forest = UnionFind(len(group))
    holders: dict[tuple[str, str], list[int]] = defaultdict(list)
    for position, index in enumerate(group):
        for namespace, value in ids[index].items():
            holders[namespace, value].append(position)
    for (namespace, _), positions in holders.items():
        if namespace in _ONE_WORK:
            for position in positions[1:]:
                forest.union(positions[0], position)
    dois = [positions for (namespace, _), positions in holders.items() if namespace == "doi"]
    for positions in dois:
        titled = [p for p in positions if titles[group[p]]]
        if len(titled) > LARGE_GROUP:  # a DOI on hundreds of records names a collection: equal titles only
            same: dict[tuple[str, bool], int] = {}
            for p in titled:
                forest.union(same.setdefault((titles[group[p]], notices[group[p]]), p), p)
            continue
        for n, a in enumerate(titled):
            for b in titled[n + 1:]:
                first, second = group[a], group[b]
                if notices[first] != notices[second] or not fuzz.ratio(titles[first], titles[second],
                                                                       score_cutoff=TITLE_FLOOR):
                    continue  # told apart at once, as most records of a supplement's DOI are
                if one_doi_one_work(work(first), work(second)):
                    forest.union(a, b)
    for positions in dois:
        titled = [p for p in positions if titles[group[p]]]
        untitled = [p for p in positions if not titles[group[p]]]
        roots = {forest.find(p) for p in titled}
        if len(roots) <= 1:
            for p in untitled:
                forest.union(titled[0] if titled else untitled[0], p)
    clusters: dict[int, list[int]] = defaultdict(list)
    for position, index in enumerate(group):
        clusters[forest.find(position)].append(index)
    return list(clusters.values())


def _split_titles(group: list[int], ids: list[Identifiers], titles: list[str], notices: list[str],
                  notes: dict[int, list[str]], work: Callable[[int], Work]) -> list[list[int]]:
    clusters = _title_clusters(group, titles, ids, notices, work) if len(group) > 1 else [group]
    if len(clusters) == 1:
        return [group]
    shared = sorted({f"{NAMESPACE_LABELS[ns]} {v}" for cluster in clusters for i in cluster for ns, v in ids[i].items()
                     if any((ns, v) in ids[j].items() for other in clusters if other is not cluster for j in other)})
    kinds = {notices[i] for i in group}
    if "" in kinds and len(kinds) > 1:
        note = (f"Records sharing {listed(shared)} include a notice about another work (an erratum, correction, "
                "retraction notice, reply or comment) and the work itself, so they are not taken for one work; "
                "kept apart for a reviewer.")
    elif len(kinds) > 1:
        note = (f"Records sharing {listed(shared)} are notices about another work of different kinds "
                f"({', '.join(sorted(kinds))}: a comment and the reply to it, for one), so they are not taken for "
                "one work; kept apart for a reviewer.")
    else:
        note = (f"Records sharing {listed(shared)} have unrelated titles, other numbers in their titles, other "
                "first pages or other first authors, or one is a trial's protocol and the other not, so they are not "
                "taken for one work (a conference supplement, for one, gives its DOI to every abstract); kept apart "
                "for a reviewer.")
    for index in group:
        notes[index].append(note)
    return clusters


def _split(group: list[int], ids: list[Identifiers], notes: dict[int, list[str]]) -> list[list[int]]:
    found = _contradiction(group, ids)
    if found is None:
        return [group]
    namespace, values = found
    note = (f"Conflicting {NAMESPACE_LABELS[namespace]} values {listed(values)} among records linked by other "
            "identifiers; the records are kept separate for a reviewer to resolve.")
    parts: dict[str, list[int]] = defaultdict(list)
    for index in group:
        parts[ids[index].get(namespace, "")].append(index)
        notes[index].append(note)
    # A record without a value in that namespace joins the part it is linked to. One
    # linked to several parts is ambiguous: it joins the first (by value), with a note,
    # since a record of its own would share every identifier it has with others.
    unassigned = parts.pop("", [])
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    for value, members in parts.items():
        for index in members:
            for key in ids[index].items():
                holders[key].add(value)
    for component in _components(unassigned, ids):
        linked = sorted({value for i in component for key in ids[i].items() for value in holders.get(key, ())})
        if len(linked) > 1:
            for index in component:
                notes[index].append(f"This record links records with different {NAMESPACE_LABELS[namespace]} values "
                                    f"({listed(linked)}); it was grouped with {linked[0]} and needs checking.")
        parts[linked[0]] += component
    result = []
    for part in parts.values():
        for component in _components(part, ids):
            result += _split(component, ids, notes)
    return result


def _completeness(record: Record) -> int:
    fields = (record.title, record.container_title, record.year, record.author, record.abstract,
              record.custom.fulltext_url)
    return sum(1 for value in fields if value)


def _canonical_key(record: Record) -> tuple:
    rank = min((MERGE_PRIORITY.index(s) for s in record.custom.sources if s in MERGE_PRIORITY),
               default=len(MERGE_PRIORITY))
    # The full serialised record breaks any remaining tie, so the order never depends on input order.
    return rank, -_completeness(record), record.model_dump_json()


def merged_issued(ordered: list[Record]) -> CslDate | None:
    """The date of a work's records in canonical order: the first record's that gives one, unless that record's best
    source fills in what it does not know (DATES_FILLED_IN) and ends in a day 1 (and a month 1 before it). Then the
    date of another record, from a source that says how precise it is, which agrees with it before those 1s and stops
    there or says otherwise ([1983, 7] beside "1983-07-01", [2001, 2] beside "2001-01-01") is the work's: the 1s were
    never given. With none such (OpenAlex alone, or others confirming its day), the first date stands, as it was."""
    first = next((record for record in ordered if record.issued), None)
    if first is None or not _fills_in_dates(first):
        return first.issued if first else None
    parts = first.issued.date_parts[0]
    given = len(parts)  # how many of its parts come before the 1s it may have filled in
    while given > 1 and parts[given - 1] == 1:
        given -= 1
    if given == len(parts):
        return first.issued
    for other in ordered:
        said = other.issued.date_parts[0] if other.issued and not _fills_in_dates(other) else None
        if said and len(said) >= given and said[:given] == parts[:given] and said != parts:
            return other.issued
    return first.issued


def _fills_in_dates(record: Record) -> bool:
    """Whether the record's date is one a source that fills in dates gave: its best source is such a one (a record
    merged with a better source's date has that source first; an imported file's record names no provider)."""
    ranked = [source for source in MERGE_PRIORITY if source in record.custom.sources]
    return bool(ranked) and ranked[0] in DATES_FILLED_IN


def merge(group: list[Record], notes: list[str]) -> Record:
    """One record from records of the same work, by the merge rules in the module docstring."""
    # Conflict notes describe this grouping only; a conflict resolved since is no longer noted.
    conflicts = sorted(set(notes))
    if len(group) == 1 and group[0].custom.conflicts == conflicts:
        return group[0]  # nothing to merge: the record is already in canonical form
    ordered = sorted(group, key=_canonical_key)
    primary = ordered[0]
    identifiers = {}
    for namespace in NAMESPACES:
        identifiers[namespace] = next((r.identity_keys()[namespace] for r in ordered
                                       if namespace in r.identity_keys()), None)
    # The longest abstract, whole, from one record; never stitched from several.
    abstract = max((r.abstract for r in ordered if r.abstract), key=len, default=None)
    # Licence, full-text address and open-access flag always travel together from one record.
    access = next((r for r in ordered if r.custom.fulltext_url), primary)
    sources = sorted({s for r in ordered for s in r.custom.sources}, key=SOURCES.index)
    types = sorted({t for r in ordered for t in r.custom.publication_types})
    # A reinstatement one source lists lifts a dated retraction another lists (`retraction_lifted`): the merged
    # record is retracted only if a retraction still stands, by the rule for a record of one source
    # (`retraction_stands`), a flag listing no retraction kept as a retraction giving no date (it always stands).
    flagged = [r.custom for r in ordered if r.custom.retracted]
    updates = with_undated_flag(_notices_once([u for r in ordered for u in r.custom.updates]),
                                any(not lists_retraction(custom.updates) for custom in flagged))
    reinstatements = with_lifted([n for r in ordered for n in r.custom.reinstatements], updates)
    retracted = retraction_stands(bool(flagged), updates, reinstatements)
    # Every value comes from records that were validated already, so the merged record is
    # assembled without validating it again (the bulk of the time on large reviews).
    return Record.model_construct(
        id=record_id(identifiers),
        type=primary.type,
        title=primary.title,
        author=next((r.author for r in ordered if r.author), []),
        container_title=next((r.container_title for r in ordered if r.container_title), None),
        issued=merged_issued(ordered),
        volume=next((r.volume for r in ordered if r.volume), None),
        issue=next((r.issue for r in ordered if r.issue), None),
        page=next((r.page for r in ordered if r.page), None),
        DOI=identifiers["doi"], PMID=identifiers["pmid"], PMCID=identifiers["pmcid"],
        URL=next((r.URL for r in ordered if r.URL), None),
        abstract=abstract,
        custom=RecordMeta.model_construct(
            openalex=identifiers["openalex"], arxiv=identifiers["arxiv"], ref=identifiers["ref"], sources=sources,
            publication_types=types,
            open_access=access.custom.open_access, license=access.custom.license,
            fulltext_url=access.custom.fulltext_url,
            retracted=retracted,
            updates=[update for update in updates if not lifted(update, reinstatements)],
            conflicts=conflicts, other_versions=sorted({i for r in ordered for i in r.custom.other_versions}),
            stated_versions=stated_versions_once([v for r in ordered for v in r.custom.stated_versions],
                                                 {k: v for k, v in identifiers.items() if v}),
            notice_of=_notices_once([n for r in ordered for n in r.custom.notice_of]),
            reinstatements=reinstatements,
        ),
    )


def record_ref(record: Record) -> str:
    """The content key (`ref`) of a record: what ids.content_ref makes of all it says of itself."""
    return content_ref(record.title, record.year, [name.display() for name in record.author],
                       record.container_title or "", record.volume or "", record.issue or "", record.page or "",
                       record.abstract or "", record.type, record.URL or "")


def _filed_apart(merged: list[tuple[Record, list[int]]], unmatched: list[int]) -> list[tuple[Record, list[int]]]:
    """A record kept apart (a notice, an unrelated title, another first author) but left with no identifier
    of its own, every one being another record's (a supplement's DOI), is filed under a key of its own
    content (`ref`): it stays a record, screened like any other, and says why."""
    result = list(merged)
    for n in unmatched:
        record, group = result[n]
        result[n] = (filed_by_content(record), group)
    return result


def filed_by_content(record: Record) -> Record:
    """`record` under its content key, with a note saying why (dropped again if it keeps another id)."""
    note = (f"Every identifier it has ({record.id}) is another record's: a DOI a conference supplement or a "
            f"collection gives to several works{FILED_ELSEWHERE}content key (ref) instead.")
    custom = record.custom.model_copy(update={"ref": record_ref(record),
                                              "conflicts": sorted({*record.custom.conflicts, note})})
    return Record.model_validate({**model_data(record), "id": record_id({"ref": custom.ref}),
                                  "custom": model_data(custom)})


def _keys(record: Record) -> Identifiers:
    """The record's identifiers as graph keys: an arXiv DOI (10.48550/arXiv.<id>) also names its arXiv id."""
    keys = record.identity_keys()
    if "arxiv" in keys:  # the paper: math.gt/0309136 (kept so by an earlier sitegen), math.GT/0309136, math/0309136
        keys["arxiv"] = arxiv_paper(keys["arxiv"]) or keys["arxiv"]
    elif arxiv := arxiv_of_doi(keys.get("doi")):
        keys["arxiv"] = arxiv
    return keys


def deduplicate(records: list[Record]) -> Deduplicated:
    notes: dict[int, list[str]] = defaultdict(list)
    ids = [_keys(record) for record in records]
    titles = [matched_title(record.title) for record in records]
    notices = [notice_kind(record.title, record.custom.publication_types) for record in records]
    work = functools.cache(lambda index: record_work(records[index]))  # only records sharing a DOI need one
    groups = []
    for component in _components(list(range(len(records))), ids):
        # A DOI shared by different works is no link: those links are cut first, then what the
        # remaining links join is checked for contradictory identifiers.
        for cluster in _split_titles(component, ids, titles, notices, notes, work):
            groups += _split(cluster, ids, notes)
    merged = [(merge([records[i] for i in group], [n for i in group for n in notes[i]]), sorted(group))
              for group in groups]
    merged = _distinct_ids(merged)
    merged = _marked_by_notices(merged)
    merged.sort(key=lambda pair: pair[0].id)
    return Deduplicated([record for record, _ in merged], {record.id: group for record, group in merged})


# A notice against a work (an `Update`) or the work a notice is about (a `NoticeOf`): both a kind, a DOI, a PMID and
# a date, joined the same way (`_notices_once`).
Notice = TypeVar("Notice", Update, NoticeOf)
NOTICE_FIELDS = ("doi", "pmid", "date")  # what listings of one notice complete each other with


def _named_keys(notice: Update | NoticeOf) -> set[tuple]:
    """A notice's kind with its DOI, with its PMID: two notices of one kind sharing either are one."""
    return {(notice.kind, *key) for key in identifier_keys(notice.doi, notice.pmid)}


def _notice_keys(notice: Update | NoticeOf) -> set[tuple]:
    """What a notice is joined to others by: its `_named_keys`; one naming neither (a publisher's mark in place, a
    flag kept as `UNDATED_RETRACTION`) by its kind and date: a flag giving no date is not known to be a dated
    retraction."""
    return _named_keys(notice) or {(notice.kind, "date", tuple(notice.date or ()))}


def _notices_once(notices: Iterable[Notice]) -> list[Notice]:
    """Each notice once: those of one kind sharing a DOI or a PMID are one, directly or through others (Crossref
    names a notice by DOI, PubMed by PMID; a listing giving both joins them, in whatever order they come), with
    every identifier and the date any of them gives, the first's where they differ. Two naming nothing in common
    stay two: nothing says they are one notice (`retraction_sentence` says those of one date together)."""
    return [filled(group, NOTICE_FIELDS) for group in joined(list(notices), _notice_keys)]


def _marked_by_notices(merged: list[tuple[Record, list[int]]]) -> list[tuple[Record, list[int]]]:
    """Each work a notice among the records is about (`notice_of`, by the work's DOI or PMID) marked with it, as
    though the work's own record listed it (Crossref's `updated-by` can lag behind the notice's `update-to`, and a
    PubMed notice's "Retraction of" names the work by PMID alone): a retraction, correction or expression of concern
    among its updates with the notice's DOI, PMID and date, a reinstatement among its reinstatements. Then the one
    rule of `retraction_lifted` decides, whichever record came first: a retraction dated no later than a
    reinstatement is lifted (left out of the updates, its date kept on the reinstatement), and the work is
    retracted only if a retraction still stands (`retraction_stands`)."""
    about: dict[tuple[str, str], list[tuple[Record, NoticeOf]]] = defaultdict(list)
    for notice, _ in merged:
        for work in notice.custom.notice_of:
            for key in work.work_keys():
                about[key].append((notice, work))
    if not about:
        return merged
    one_work = _one_work_keys([work for notice, _ in merged for work in notice.custom.notice_of])
    marked = []
    for record, group in merged:
        keys = _work_keys(record, one_work)
        # A notice naming the work by both its DOI and its PMID is seen once; one sharing an identifier with the
        # work (an erratum exported with the article's DOI) is not the work's notice but the work itself.
        seen = list({(id(notice), id(work)): (notice, work) for key in keys for notice, work in about.get(key, [])
                     if not _shares_identifier(notice, record)}.values())
        if seen:
            record = _marked(record, seen)
        marked.append((record, group))
    return marked


def _one_work_keys(works: list[NoticeOf]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Each identifier the notices name a work by, with every identifier naming that work: those a listing names
    together, directly or through others (a retraction naming the work by DOI, a reinstatement by PMID, a third
    notice by both, in whatever order they come)."""
    naming: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for group in joined([work.work_keys() for work in works], lambda keys: keys):
        keys = sorted({key for listing in group for key in listing})
        naming.update(dict.fromkeys(keys, keys))
    return naming


def _work_keys(record: Record, one_work: dict[tuple[str, str], list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """The identifiers the notices may name the work of `record` by: its DOI and PMID, and those the notices name
    together with either, but for another value in a namespace the record holds (a DOI two works share, the
    supplement's, joins neither to the other's PMID)."""
    own = dict(identifier_keys(record.DOI, record.PMID))
    joined_keys = [key for own_key in own.items() for key in one_work.get(own_key, [own_key])]
    return list(dict.fromkeys(key for key in [*own.items(), *joined_keys] if own.get(key[0], key[1]) == key[1]))


def _shares_identifier(notice: Record, record: Record) -> bool:
    return bool(notice.DOI and notice.DOI == record.DOI or notice.PMID and notice.PMID == record.PMID)


def _same_notice(update: Update, other: Update) -> bool:
    """Whether two notices of one kind are one: they share a DOI or a PMID (the work's record may list the notice
    by its PMID, the notice's own record give its DOI too)."""
    return not _named_keys(update).isdisjoint(_named_keys(other))


def _completed(update: Update, told: list[Update]) -> Update:
    """A notice the work's record lists, with the identifiers and the date the notice itself gives where it lacks
    them (a retraction's date decides whether a reinstatement lifted it)."""
    same = next((notice for notice in told if _same_notice(update, notice)), None)
    return update if same is None else filled([update, same], NOTICE_FIELDS)


def _marked(record: Record, seen: list[tuple[Record, NoticeOf]]) -> Record:
    """The work's record marked with the notices seen about it (each the notice's record and what it says)."""
    told = [Update(kind=work.kind, doi=notice.DOI, pmid=notice.PMID, date=work.date) for notice, work in seen
            if work.kind != "reinstatement"]
    own = [_completed(update, told) for update in record.custom.updates]
    listed = with_undated_flag(
        _notices_once([*own, *told]), record.custom.retracted and not lists_retraction(own))
    reinstatements = with_lifted([*record.custom.reinstatements,
                                  *(Reinstatement(doi=notice.DOI, pmid=notice.PMID, date=work.date) for notice, work in seen
                                    if work.kind == "reinstatement")], listed)
    standing = [update for update in listed if not lifted(update, reinstatements)]
    retracted = retraction_stands(record.custom.retracted, own, reinstatements) or lists_retraction(standing)
    custom = record.custom.model_copy(update={"updates": standing, "reinstatements": reinstatements,
                                              "retracted": retracted})
    return record if custom == record.custom else record.model_copy(update={"custom": custom})


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
        for key in record.identity_keys().items():
            owners[key].append(n)
    shared = {n for holders in owners.values() if len(holders) > 1 for n in holders}
    if not shared:
        return merged
    # Stable order: by content, so the outcome does not depend on the input order.
    order = sorted(shared, key=lambda n: merged[n][0].model_dump_json())
    # Identifiers a record holds alone come first, so no record is filed under a shared one
    # while it has one of its own; within each kind, the usual priority order.
    candidates = {}
    for n in order:
        keys = [(ns, merged[n][0].identity_keys()[ns]) for ns in NAMESPACES if ns in merged[n][0].identity_keys()]
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

    unmatched = [n for n in order if not assign(n, set())]
    if unmatched:
        return _distinct_ids(_filed_apart(merged, unmatched))
    result = list(merged)
    for (namespace, value), n in taken.items():
        record, group = merged[n]
        new_id = record_id({namespace: value})
        if new_id != record.id:
            preferred, value_shown = parse_record_id(record.id)
            note = (f"{NAMESPACE_LABELS[preferred]} {value_shown} is shared with other records that disagree on "
                    f"other identifiers{FILED_ELSEWHERE}{NAMESPACE_LABELS[namespace]} instead.")
            custom = record.custom.model_copy(update={"conflicts": sorted({*record.custom.conflicts, note})})
            record = Record.model_validate({**model_data(record), "id": new_id,
                                            "custom": model_data(custom)})
        result[n] = (record, group)
    return result
