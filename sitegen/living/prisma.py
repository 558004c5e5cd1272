"""PRISMA 2020 flow counts, derived at build time and never stored.

Identification comes from the ledger: each `retrieval` or `import` event names
the records a source returned. Runs are the events sharing one timestamp. A
record is *first identified* in the earliest run that names it, and counts as
identified by every source that returned it in that run; counting it more than
once there is what "duplicate records removed" undoes. Later runs that return it
again do not count it again (the run's `returned_by_source` shows them). A record
a reviewer confirmed to duplicate another (duplicates.csv) is identified in its
own first run like any other, and removed there as a duplicate: it counts among
"duplicate records removed", not among the records screened.

Records arrive by one of two routes, as the PRISMA 2020 templates draw them:
databases and registers (saved-search runs, and imports with method
"database"; a provider's `kind` in the registry says which of the two), or other
methods (saved citation searches, counted under "Citation searching", and imports
with method "other": records taken from a bibliographic source by following
citations or another route than searching it). A record any
database or register returned in its first run belongs to the databases and
registers route; other methods count only the records they alone found.

Screening and eligibility come from the decision files (see
`sitegen.screening.outcomes`). sitegen screens every record at title and
abstract, whatever its route, so the other-methods route has its own screened
and excluded counts (the template has no such box there; sitegen's diagram
adds it so that no record goes unaccounted for). A full-text exclusion with the
reason code `not-retrieved` counts as a report not retrieved, not as an
exclusion. A study is its included reports: a preprint and its journal version,
linked as versions of one study (`custom.other_versions`) and both included, are
two reports of one study; any other included record is a study of its own.

The living variant partitions the records by the run that first identified
them and derives the same boxes for each partition (`runs`): the partitions'
counts add up to the whole review's. An updated review's identification of new
studies is the new searches' (the runs after the previous version): their
columns summed once here (`new_searches`), for the diagram, its table and the CSV.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from itertools import groupby
from typing import Literal, NamedTuple, get_origin

from pydantic import Field

from sitegen.records.citations import LABEL as CITATION_SEARCHING
from sitegen.records.joins import UnionFind
from sitegen.records.model import Strict
from sitegen.records.providers import kind
from sitegen.review.folder import Review
from sitegen.review.models import ImportPayload, RetrievalPayload
from sitegen.screening.outcomes import DECIDED, NOT_RETRIEVED, TO_FULL_TEXT, Outcome

OTHER = "other"  # the route of records found by other methods than searching a database or register
Route = Literal["database", "register", "other"]
# PRISMA 2020 draws three boxes for the records other methods identified: websites, organisations and citation
# searching. The ledger knows an other-methods source by the name the review gave it (`sitegen import --source`),
# so its box is read from that name, and, when the name says none, from what its imports say they were
# (`--description`). A name that says it followed citations is citation searching, whatever it followed them in
# ("Citation searching (Google Scholar)"), as sitegen's own citation searches are. A web search engine, named as
# such or by its name (Google Scholar), is searched as websites are: PRISMA 2020 counts it there, never as citation
# searching. An import that says none of these (a file imported without --source, named by its file name) is in
# no box: which it belongs in is not known, and guessing citation searching would mislabel it.
OtherMethod = Literal["websites", "organisations", "citations"]
_CITATIONS = re.compile(r"\b(?:citations?|citing|cited|reference lists?|snowball\w*)\b", re.IGNORECASE)
_WEBSITES = re.compile(r"\b(?:web ?sites?|web ?pages?|search engines?|grey literature|gray literature|google|bing|"
                       r"duckduckgo|yahoo|baidu|yandex)\b", re.IGNORECASE)
_ORGANISATIONS = re.compile(r"\b(?:organi[sz]ations?|experts?|contacted|manufacturers?|sponsors?)\b", re.IGNORECASE)


class Flow(Strict):
    """The boxes of the PRISMA 2020 flow for a set of records: the whole review, or one run's new records.

    Unprefixed screening and report fields are the databases-and-registers route; `other_` ones the
    other-methods route. Every count is of records first identified in the set's run(s).
    """

    identified_databases: int = Field(description="records identified from databases, summed over databases")
    identified_registers: int = Field(description="records identified from registers, summed over registers")
    identified_by_source: dict[str, int] = Field(
        description="databases and registers searched -> records each identified (0 when it found nothing new)")
    identified_other_methods: int = Field(description="records identified by other methods, summed over sources")
    identified_other_by_source: dict[str, int] = Field(
        description="sources used by other methods -> records each identified")
    duplicates_removed: int = Field(description="databases and registers: identifications beyond the first of the "
                                                "same record in its run, and records a reviewer confirmed to "
                                                "duplicate another")
    excluded_automation: int = Field(
        description="records marked ineligible by automation tools: always 0, because a relevance score only "
                    "orders a batch and reviewers decide every record")
    removed_other_reasons: int = Field(
        description="records removed before screening for other reasons: always 0, because every identified "
                    "record goes to the reviewers (the ledger records no removal)")
    records: int = Field(description="distinct records, both routes, after duplicates were removed")
    screened: int = Field(description="records with a title-and-abstract decision")
    excluded_screening: int
    awaiting_screening: int = Field(description="not yet decided at title and abstract, or a conflict")
    reports_sought: int = Field(description="records included or marked maybe at title and abstract")
    reports_not_retrieved: int = Field(description=f"excluded at full text with the reason {NOT_RETRIEVED!r}")
    reports_assessed: int = Field(description="reports with a full-text decision to include or exclude")
    excluded_full_text: int
    excluded_by_reason: dict[str, int] = Field(description="exclusion reason code -> reports excluded")
    awaiting_full_text: int = Field(description="reports sought, neither assessed nor known to be unobtainable")
    other_duplicates_removed: int = Field(default=0, description="other methods: as duplicates_removed, of the "
                                                                 "records only other methods identified")
    other_screened: int
    other_excluded_screening: int
    other_awaiting_screening: int
    other_reports_sought: int
    other_reports_not_retrieved: int
    other_reports_assessed: int
    other_excluded_full_text: int
    other_excluded_by_reason: dict[str, int]
    other_awaiting_full_text: int
    studies_included: int = Field(description="studies included in the review, both routes")
    reports_included: int = Field(description="reports of the included studies")

    @property
    def identified(self) -> int:
        """Records identified by every route, before duplicates were removed: what a run found, even when
        every record it found turned out to duplicate one the review had."""
        return self.identified_databases + self.identified_registers + self.identified_other_methods


class RunFlow(Flow):
    """One run's column of the living diagram: the records it identified first, and what each source returned."""

    run: int = Field(ge=1, description="the run's place among every run of the review, from 1")
    at: str = Field(description="the run's time, as the ledger recorded it")
    returned_by_source: dict[str, int] = Field(
        description="database or register -> records its search returned in this run, new or already known, "
                    "counted as they are identified (an entry a file holds twice is returned twice, one of them "
                    "a duplicate removed)")
    other_returned_by_source: dict[str, int] = Field(
        default_factory=dict, description="as returned_by_source, for the sources used by other methods")
    incomplete: list[str] = Field(description="sources this run did not reach or did not read in full")


class PrismaCounts(Flow):
    """The whole review's flow, the updated-review boxes (previous + new = total), and the per-run columns."""

    template: Literal["new", "updated"] = Field(
        description="'updated' when a previous published version's studies are reported apart from the new ones "
                    "(PRISMA 2020's template for updated reviews); 'new' before any version is published, however "
                    "many runs and imports identified the records")
    previous_from: Literal["version"] | None = Field(
        default=None, description="what the previous studies are: those of the previous published version "
                                  "('version'); None for 'new'")
    previous_studies: int = Field(description="studies included in the previous version and still included")
    previous_reports: int
    previous_removed: int = Field(default=0, description="studies the previous version included that no "
                                                         "longer are, or that are one with another of them now "
                                                         "(a confirmed duplicate): not counted in previous_studies")
    new_runs_from: int | None = Field(
        default=None, description="'updated': the first run of the new searches (after the previous version), "
                                  "whose columns add up to the template's identification of new studies; None for "
                                  "'new', whose identification is every run's")
    new_studies: int = Field(description="included studies that are not previous studies")
    new_reports: int
    new_searches: Flow | None = Field(
        default=None, description="'updated': the identification of new studies, the template's arm beside the "
                                  "previous studies: the boxes of the runs from new_runs_from on, summed (no run, "
                                  "all 0); None for 'new', whose arm is the whole review's flow")
    new_studies_earlier_runs: int = Field(
        default=0, description="'updated': new studies that runs before the new searches identified and that were "
                               "included after the previous version: among new_studies, not in "
                               "new_searches.studies_included (their screening is in those runs' columns); "
                               "0 for 'new'")
    new_reports_earlier_runs: int = Field(
        default=0, description="'updated': as new_studies_earlier_runs, for new_reports")
    runs: list[RunFlow] = Field(description="one flow per run, oldest first; they add up to the whole review's")


def previous_labels(counts: PrismaCounts) -> tuple[str, str, str]:
    """How the diagram, its description and its CSV name the previous studies, their reports, and both
    in a sentence: as PRISMA's updated-review template does for a published version."""
    if counts.previous_removed:  # the box counts those still included: it must not pass for all the version had
        return ("Studies included in previous version of review and still included",
                "Reports of studies included in previous version of review and still included",
                f"studies from the previous version still included (of the {counts.previous_studies + counts.previous_removed} "
                f"it included, {counts.previous_removed} no longer {'is' if counts.previous_removed == 1 else 'are'})")
    return ("Studies included in previous version of review",
            "Reports of studies included in previous version of review", "studies from the previous version")


def arm_runs(counts: PrismaCounts) -> list[RunFlow]:
    """The runs whose records the identification arm counts: every run of a new review; the new searches of an
    updated one (the runs before them identified the previous version's studies)."""
    if counts.template == "updated" and counts.new_runs_from is not None:
        return counts.runs[counts.new_runs_from - 1:]
    return counts.runs


def arm_flow(counts: PrismaCounts) -> Flow:
    """The boxes of the identification arm: the whole review's for a new review, the new searches' for an
    updated one (so that previous + new studies = total)."""
    return counts.new_searches if counts.new_searches is not None else counts


def other_method(source: str, descriptions: Iterable[str] = ()) -> OtherMethod | None:
    """Which of PRISMA 2020's other-methods boxes a source identified by other methods counts in: as its name says,
    else as the first of its imports' `descriptions` that says one; None when none says."""
    if source == CITATION_SEARCHING:
        return "citations"
    for text in (source, *descriptions):
        if _CITATIONS.search(text):
            return "citations"
        if _WEBSITES.search(text):
            return "websites"
        if _ORGANISATIONS.search(text):
            return "organisations"
    return None


def other_descriptions(review: Review) -> dict[str, list[str]]:
    """Source -> what each import by other methods that counts under it says it was (its description), in ledger
    order: the box of a source whose name says none (`other_method`)."""
    described: dict[str, list[str]] = {}
    for payload in review.payloads:
        if isinstance(payload, ImportPayload) and payload.method == "other":
            for source in _identifications(payload):
                described.setdefault(source, []).append(payload.description)
    return described


def not_in_full(counts: PrismaCounts, arm: Literal["databases", "other"] | None = None,
                among: Iterable[RunFlow] | None = None) -> dict[str, list[int]]:
    """Source -> the runs that did not receive all its records (it was not reached, or not in full); with `arm`,
    only the sources of that arm, databases and registers or other methods, as each run used them; with
    `among`, only those runs (an updated review's new searches)."""
    runs: dict[str, list[int]] = {}
    for run in counts.runs if among is None else among:
        for source in run.incomplete:
            if arm is None or (arm == "other") == in_other_arm(run, source):
                runs.setdefault(source, []).append(run.run)
    return runs


def in_other_arm(run: RunFlow, source: str) -> bool:
    """Whether a source the run did not reach in full is one of its other methods (a citation search) rather than
    a database or register it searched. Only searches can go unreached, and a citation search is named as its
    method is ("Citation searching"), so a name the run used on both arms is the database's."""
    return source in run.other_returned_by_source and source not in run.returned_by_source


@dataclass(frozen=True)
class _Run:
    at: str
    events: list[RetrievalPayload | ImportPayload]
    last_seq: int  # of its last event on the ledger


def _route(payload: RetrievalPayload | ImportPayload, source: str) -> Route:
    if payload.method == "other":
        return OTHER
    return kind(source)


def _source(payload: RetrievalPayload | ImportPayload) -> str:
    """The source an event's records count under: a citation search's under "Citation searching", as PRISMA 2020
    names that method, whichever index's citation graph it followed."""
    return CITATION_SEARCHING if isinstance(payload, RetrievalPayload) and payload.method == "other" \
        else payload.source


def _identifications(payload: RetrievalPayload | ImportPayload) -> dict[str, list[str]]:
    """Source -> the record id of each identification the event made, repeats kept: an imported file's
    entries under the database each names (two entries of one record are two identifications, one of them a
    duplicate removed); a saved search's records, and an import recorded before entries were kept, once each
    under the event's source (a citation search's under "Citation searching")."""
    if isinstance(payload, ImportPayload) and payload.file and payload.file.entry_ids is not None:
        return payload.file.entry_ids
    return {_source(payload): list(dict.fromkeys(payload.record_ids))}


def _runs(review: Review) -> list[_Run]:
    sourced = [(event.ts, event.seq, payload) for event, payload in zip(review.ledger, review.payloads, strict=True)
               if isinstance(payload, RetrievalPayload | ImportPayload)]
    return [_Run(at, [payload for _, _, payload in events], events[-1][1])
            for at, grouped in groupby(sourced, key=lambda item: item[0]) if (events := list(grouped))]


def _summed(runs: Iterable[RunFlow]) -> Flow:
    """The boxes of several runs added up, box by box and source by source (no run: every box 0)."""
    summed: dict[str, object] = {name: {} if get_origin(info.annotation) is dict else 0
                                 for name, info in Flow.model_fields.items()}
    for run in runs:
        for name in Flow.model_fields:
            value = getattr(run, name)
            if isinstance(value, dict):
                into = summed[name]
                for key, n in value.items():
                    into[key] = into.get(key, 0) + n
            else:
                summed[name] += value
    return Flow(**{name: dict(sorted(value.items())) if isinstance(value, dict) else value
                   for name, value in summed.items()})


def _stage_flow(ids: list[str], outcomes: dict[str, dict[str, Outcome]], prefix: str) -> tuple[dict, list[str]]:
    """Screening and eligibility of one route's records: the fields (named with `prefix`), and the included ids."""
    screening, eligibility = outcomes["title-abstract"], outcomes["full-text"]
    decided = {rid: screening[rid].decision for rid in ids if rid in screening and screening[rid].decision in DECIDED}
    sought = [rid for rid, decision in decided.items() if decision in TO_FULL_TEXT]
    final = {rid: eligibility[rid] for rid in sought if rid in eligibility}
    not_retrieved = {rid for rid, o in final.items() if o.not_retrieved}
    assessed = [rid for rid, o in final.items() if o.decision in ("include", "exclude") and rid not in not_retrieved]
    excluded = Counter(final[rid].reason for rid in assessed if final[rid].decision == "exclude")
    fields = {"screened": len(decided),
              "excluded_screening": sum(1 for decision in decided.values() if decision == "exclude"),
              "awaiting_screening": len(ids) - len(decided),
              "reports_sought": len(sought), "reports_not_retrieved": len(not_retrieved),
              "reports_assessed": len(assessed), "excluded_full_text": sum(excluded.values()),
              "excluded_by_reason": dict(sorted(excluded.items())),
              "awaiting_full_text": len(sought) - len(not_retrieved) - len(assessed)}
    included = [rid for rid in assessed if final[rid].decision == "include"]
    return {f"{prefix}{name}": value for name, value in fields.items()}, included


class Included(NamedTuple):
    """The included reports of a set of records, by route, each in the set's order."""

    databases: list[str]  # databases and registers
    other: list[str]  # other methods


def _flow(ids: Iterable[str], found: dict[str, Counter[tuple[Route, str]]], searched: set[tuple[Route, str]],
          outcomes: dict[str, dict[str, Outcome]], duplicates: Collection[str]) -> tuple[dict, Included]:
    """The flow fields of a set of records, and which of them are included studies (by route).

    `found` maps each record to the (route, source) pairs that identified it in its first run, with how many
    times each did;
    `searched` lists every (route, source) used, so a source that found nothing new still shows, as 0;
    `duplicates` are identified but removed before screening.
    """
    by_source = Counter({source: 0 for route, source in searched if route != OTHER})
    other_by_source = Counter({source: 0 for route, source in searched if route == OTHER})
    routed: dict[str, list[str]] = {"dbr": [], OTHER: []}
    for rid in ids:  # plain dicts and additions: Counter's constructor and update cost 1 s at 100,000 records
        databases = {source: n for (route, source), n in found[rid].items() if route != OTHER}
        if rid not in duplicates:
            routed["dbr" if databases else OTHER].append(rid)
        if databases:
            for source, n in databases.items():
                by_source[source] += n
        else:
            for (_, source), n in found[rid].items():
                other_by_source[source] += n
    dbr, dbr_included = _stage_flow(routed["dbr"], outcomes, "")
    other, other_included = _stage_flow(routed[OTHER], outcomes, "other_")
    records = len(routed["dbr"]) + len(routed[OTHER])
    included = len(dbr_included) + len(other_included)
    fields = {
        "identified_databases": sum(n for source, n in by_source.items() if kind(source) == "database"),
        "identified_registers": sum(n for source, n in by_source.items() if kind(source) == "register"),
        "identified_by_source": dict(sorted(by_source.items())),
        "identified_other_methods": sum(other_by_source.values()),
        "identified_other_by_source": dict(sorted(other_by_source.items())),
        # Each route removes its own duplicates: a record a database found is screened on that route.
        "duplicates_removed": sum(by_source.values()) - len(routed["dbr"]),
        "other_duplicates_removed": sum(other_by_source.values()) - len(routed[OTHER]),
        "excluded_automation": 0, "removed_other_reasons": 0, "records": records, **dbr, **other,
        "studies_included": included, "reports_included": included,  # studies: see `derive`
    }
    return fields, Included(dbr_included, other_included)


def study_of(review: Review) -> dict[str, str]:
    """Record id -> the study it reports, named by the least id of its versions (records linked by
    `other_versions`, however far), for every record linked to another."""
    links = [(rid, other) for rid, record in review.records.items() for other in record.custom.other_versions]
    linked = sorted({rid for link in links for rid in link})
    place = {rid: n for n, rid in enumerate(linked)}
    versions = UnionFind(len(linked))  # a set's root is its least member: the least id, as `linked` is sorted
    for rid, other in links:
        versions.union(place[rid], place[other])
    return {rid: linked[versions.find(place[rid])] for rid in linked}


def _studies(included: Iterable[str], study_of: dict[str, str]) -> set[str]:
    return {study_of.get(rid, rid) for rid in included}


def _study_runs(included: Iterable[str], first_run: Mapping[str, int], study_of: Mapping[str, str],
                version_records: Iterable[tuple[str, str]] = ()) -> dict[str, int]:
    """Included study -> index of the run it counts in: the run that first identified one of its included
    reports, or one the previous version included (`version_records`, each as the record it is now), so that a
    study of the previous version counts in the runs before the new searches, however it is reported now."""
    runs: dict[str, int] = {}
    for rid in included:
        study = study_of.get(rid, rid)
        runs[study] = min(runs.get(study, first_run[rid]), first_run[rid])
    for rid, now in version_records:
        if (study := study_of.get(now, now)) in runs and rid in first_run:
            runs[study] = min(runs[study], first_run[rid])
    return runs


@dataclass(frozen=True)
class PreviousVersion:
    """The published version an updated review's diagram is drawn after, as `derive` needs it: the studies it
    included (`included`), its last ledger event (`head`: the runs after it are the new searches) and its records'
    studies as it published them (`study_groups`; None: as now). One value, so that no call can give the studies a
    version included without the event that ends it: every run would then be taken for a new search, and the
    version's own studies counted in the new searches' arm."""

    included: Collection[str]
    head: int
    study_groups: Mapping[str, str] | None = None


def derive(review: Review, outcomes: dict[str, dict[str, Outcome]], previous: PreviousVersion | None = None,
           duplicates: Mapping[str, str] | None = None, study_groups: Mapping[str, str] | None = None) -> PrismaCounts:
    """The counts, from the ledger's events, `outcomes` (per stage, per record) and the records confirmed
    to duplicate others (`duplicates`: each with the record it duplicates).

    Without `previous` the review has no published version before it and is drawn with the new-review template:
    every run's records together, no previous studies, however many runs or imports at different times identified
    them (a new review's exports imported one by one are still one review's searches; PRISMA 2020's updated-review
    template is for an update of a published review). Given `previous` (a published version before it), the
    previous studies are those it included still included, and the new searches are the runs after its last ledger
    event (`PreviousVersion.head`). Records are grouped into studies by their links (`study_of`), or as
    `study_groups` says (a published version's, as they were then); the previous version's own studies as it
    published them (`PreviousVersion.study_groups`).
    """
    duplicates = duplicates or {}
    runs = _runs(review)
    grouping = dict(study_groups) if study_groups is not None else study_of(review)
    first_run: dict[str, int] = {}  # record id -> index of the run that first identified it
    found: dict[str, Counter[tuple[Route, str]]] = {}
    columns = []
    included_by_run: list[Included] = []
    for index, run in enumerate(runs):
        new: dict[str, Counter[tuple[Route, str]]] = {}
        returned: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}  # by other methods or not
        run_searched: set[tuple[Route, str]] = set()
        for payload in run.events:
            for source, ids in _identifications(payload).items():
                route = _route(payload, source)
                run_searched.add((route, source))
                returned[route == OTHER][source] += len(ids)
                for rid in ids:
                    if rid not in first_run:
                        new.setdefault(rid, Counter())[route, source] += 1
        first_run.update(dict.fromkeys(new, index))
        found.update(new)
        fields, run_included = _flow(new, found, run_searched, outcomes, duplicates)
        included_by_run.append(run_included)
        incomplete = sorted({_source(p) for p in run.events if isinstance(p, RetrievalPayload) and not p.complete})
        columns.append(RunFlow(run=index + 1, at=run.at, returned_by_source=dict(sorted(returned[False].items())),
                               other_returned_by_source=dict(sorted(returned[True].items())),
                               incomplete=incomplete, **fields))
    # The whole review's boxes are its runs' added up, as each record is counted in the run that first identified it
    # (one pass over every record again took a second at 100,000 records); its included reports are theirs, in the
    # order such a pass lists them: the databases' and registers' route, then the other methods'.
    whole = _summed(columns)
    fields = {name: getattr(whole, name) for name in Flow.model_fields}
    included = [rid for run_included in included_by_run for rid in run_included.databases]
    included += [rid for run_included in included_by_run for rid in run_included.other]
    # A study counts once, in the run that identified the first of its included reports (or of those the previous
    # version included: a study from the previous version is never new), so that the runs' studies still add up
    # to the review's.
    version_records = [(rid, duplicates.get(rid, rid)) for rid in previous.included] if previous else []
    study_run = _study_runs(included, first_run, grouping, version_records)  # study -> the run it counts in
    for index, column in enumerate(columns):
        columns[index] = column.model_copy(update={"studies_included": sum(1 for at in study_run.values()
                                                                           if at == index)})
    fields["studies_included"] = len(study_run)
    if previous is None:  # a new review: nothing published before, so no previous studies
        return PrismaCounts(template="new", previous_studies=0, previous_reports=0,
                            new_studies=fields["studies_included"], new_reports=len(included), runs=columns, **fields)
    # A study the version included under a record since confirmed to duplicate another is still included
    # under that one: neither removed nor new. But two studies the version included, since found to be one,
    # are one previous study now: the other no longer counts, as one excluded since would not, so the box
    # never passes for the number the version published.
    # A study the version included is a previous study while any report of it is included, whichever record
    # (another version of it, or the record it was since confirmed to duplicate).
    kept = {now for _, now in version_records}
    previous_set = _studies(included, grouping) & _studies(kept, grouping)
    previous_studies = len(previous_set)
    # Counted as the version grouped them: two of its studies since linked as versions of one count once now.
    published = dict(previous.study_groups) if previous.study_groups is not None else grouping
    removed = max(0, len(_studies(previous.included, published)) - previous_studies)
    new_runs_from = next((index + 1 for index, run in enumerate(runs) if run.last_seq > previous.head),
                         len(runs) + 1)
    # Records the earlier runs identified that still awaited a decision when the version was published, and were
    # included after it, are new studies (the version did not include them) screened in those earlier runs: the
    # new searches' arm does not hold them, so they are counted apart for the diagram to say so.
    earlier = new_runs_from - 1
    # A record the new searches identified and assessed is their report, a new one, even when a record the version
    # included has since been confirmed its duplicate, as a later report of a previous study is: so the arm's
    # reports assessed are its reports excluded and included, and previous + new reports = total.
    version_included = set(previous.included)
    previous_reports = [rid for rid in included if rid in kept and (rid in version_included or first_run[rid] < earlier)]
    previous_records = set(previous_reports)
    return PrismaCounts(
        template="updated", previous_from="version", previous_studies=previous_studies,
        previous_reports=len(previous_reports), previous_removed=removed, new_runs_from=new_runs_from,
        new_studies=fields["studies_included"] - previous_studies, new_reports=len(included) - len(previous_reports),
        new_searches=_summed(columns[earlier:]),
        new_studies_earlier_runs=sum(1 for study, index in study_run.items()
                                     if index < earlier and study not in previous_set),
        new_reports_earlier_runs=sum(1 for rid in included if first_run[rid] < earlier and rid not in previous_records),
        runs=columns, **fields)
