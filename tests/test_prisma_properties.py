"""PRISMA 2020 counts over random ledgers: runs of imports from databases, registers and other methods (a file
may hold a record twice), confirmed duplicates, and any decisions at both stages, with or without a published
version. Every box must balance as the flow diagram draws it, and equal a recount of the records it names."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.living.prisma import Flow, PreviousVersion, PrismaCounts, derive
from sitegen.review.folder import Review
from sitegen.review.models import ImportedFile, ImportPayload, LedgerEvent, RetrievalPayload
from sitegen.screening.outcomes import Outcome

# (source, method): two databases, a register, two other methods, and a saved search of a provider and its
# citation search (both "openalex": each event names a record once)
SOURCES = [("Embase", "database"), ("MEDLINE", "database"), ("ClinicalTrials.gov", "database"),
           ("Citation searching", "other"), ("Websites", "other"), ("openalex", "search"), ("openalex", "citations")]
IDS = [f"10.1000/p{n}" for n in range(6)]  # few, so that runs, duplicates and versions meet
SCREENING = st.sampled_from([None, "include", "include", "exclude", "maybe", "conflict", "awaiting"])
FULL_TEXT = st.sampled_from([None, ("include", ""), ("include", ""), ("exclude", "wrong-population"), ("exclude", "wrong-design"),
                             ("exclude", "not-retrieved"), ("maybe", ""), ("conflict", "")])
HASH = "0" * 64


@st.composite
def ledgers(draw) -> tuple[list[tuple[str, ImportPayload | RetrievalPayload]], dict[str, str], dict,
                           dict[str, str]]:
    """Runs of imports (each entry list may repeat a record) and saved searches, confirmed duplicates (each to a record that is
    none), outcomes per stage, and study groups (versions of one study)."""
    events = []
    for run in range(draw(st.integers(1, 4))):
        for source, method in draw(st.lists(st.sampled_from(SOURCES), min_size=1, max_size=3, unique=True)):
            entries = draw(st.lists(st.sampled_from(IDS), max_size=6))
            record_ids = list(dict.fromkeys(entries))
            at = f"2026-0{run + 1}-01T00:00:00Z"
            if method in ("search", "citations"):
                events.append((at, RetrievalPayload(monitor_id="watch", source=source, query="memory",
                                                    record_ids=record_ids,
                                                    method="database" if method == "search" else "other")))
                continue
            # an export from several databases names each entry's (odd entries here: CINAHL's)
            by_database = {source: entries[::2], "CINAHL": entries[1::2]} \
                if method == "database" and draw(st.booleans()) else {source: entries}
            file = ImportedFile(name="export.ris", sha256=HASH, format="ris", entries=len(entries), skipped=0,
                                new=len(record_ids), already=0,
                                entry_ids={name: ids for name, ids in by_database.items() if ids}) if entries else None
            events.append((at, ImportPayload(source=source, method=method, description="an export",
                                             record_ids=record_ids, file=file)))
    duplicates: dict[str, str] = {}
    for duplicate, canonical in draw(st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(IDS)), max_size=3)):
        if duplicate != canonical and canonical not in duplicates and duplicate not in duplicates.values():
            duplicates[duplicate] = canonical
    outcomes: dict[str, dict[str, Outcome]] = {"title-abstract": {}, "full-text": {}}
    for rid in IDS:
        if (decision := draw(SCREENING)) is not None:
            outcomes["title-abstract"][rid] = Outcome(decision, "", ("ann",))
        if (final := draw(FULL_TEXT)) is not None:
            outcomes["full-text"][rid] = Outcome(final[0], final[1], ("ann",))
    groups = {rid: IDS[0] for rid in draw(st.lists(st.sampled_from(IDS[:4]), max_size=3))}  # one study's versions
    return events, duplicates, outcomes, groups


def review_of(events: list[tuple[str, ImportPayload | RetrievalPayload]]) -> Review:
    ledger = [LedgerEvent.model_construct(seq=seq, type="import", ts=at, payload={}, prev=HASH, hash=HASH)
              for seq, (at, _) in enumerate(events, 1)]
    return Review(Path("review"), None, ledger=ledger, payloads=[payload for _, payload in events])


def balances(flow: Flow) -> None:
    """Each route's boxes add up as the diagram's arrows say, and no box is negative."""
    for name, value in flow:
        values = value.values() if isinstance(value, dict) else [value] if isinstance(value, int) else []
        assert all(n >= 0 for n in values), name
    assert flow.identified_databases + flow.identified_registers == sum(flow.identified_by_source.values())
    assert flow.identified_other_methods == sum(flow.identified_other_by_source.values())
    for prefix, identified in (("", flow.identified_databases + flow.identified_registers),
                               ("other_", flow.identified_other_methods)):
        box = {name.removeprefix(prefix): value for name, value in flow if name.startswith(prefix)}
        assert identified == box["duplicates_removed"] + box["screened"] + box["awaiting_screening"]
        assert box["screened"] == box["excluded_screening"] + box["reports_sought"]
        assert box["reports_sought"] == box["reports_not_retrieved"] + box["reports_assessed"] + box["awaiting_full_text"]
        assert box["excluded_full_text"] == sum(box["excluded_by_reason"].values())
    assert flow.records == sum(getattr(flow, p + n) for p in ("", "other_") for n in ("screened", "awaiting_screening"))
    assert flow.reports_assessed + flow.other_reports_assessed == \
        flow.excluded_full_text + flow.other_excluded_full_text + flow.reports_included


def recount(events, duplicates, outcomes, groups) -> dict[str, int]:
    """The whole review's boxes counted afresh from the records: a record's first run, and its route there (a
    record any database or register found in it is theirs)."""
    first: dict[str, str] = {}
    for at, payload in events:
        for rid in payload.record_ids:
            first.setdefault(rid, at)
    identifications = [(rid, payload.method) for at, payload in events
                       for ids in (payload.file.entry_ids.values() if isinstance(payload, ImportPayload)
                                   and payload.file else [payload.record_ids])
                       for rid in ids if first[rid] == at]
    by_database = {rid for rid, method in identifications if method == "database"}
    # other methods count only the records no database or register found in the same run
    identifications = [(rid, method) for rid, method in identifications if method == "database" or rid not in by_database]
    screened = [rid for rid in first if rid not in duplicates]
    decided = {rid: outcomes["title-abstract"][rid].decision for rid in screened if rid in outcomes["title-abstract"]
               and outcomes["title-abstract"][rid].decision in ("include", "exclude", "maybe")}
    sought = [rid for rid, decision in decided.items() if decision != "exclude"]
    final = {rid: outcomes["full-text"][rid] for rid in sought if rid in outcomes["full-text"]}
    included = [rid for rid, outcome in final.items() if outcome.decision == "include"]
    return {"identified": len(identifications), "records": len(screened),
            "dbr_records": sum(1 for rid in screened if rid in by_database), "screened": len(decided),
            "sought": len(sought), "not_retrieved": sum(1 for o in final.values() if o.not_retrieved),
            "reports": len(included), "studies": len({groups.get(rid, rid) for rid in included})}


def review_included(counts, outcomes, duplicates, events) -> set[str]:
    """The records included now: sought at title and abstract, included at full text, not duplicates."""
    named = {rid for _, payload in events for rid in payload.record_ids}
    return {rid for rid in named - set(duplicates) if rid in outcomes["full-text"]
            and outcomes["full-text"][rid].decision == "include" and rid in outcomes["title-abstract"]
            and outcomes["title-abstract"][rid].decision in ("include", "maybe")}


def recounted(counts: PrismaCounts) -> dict[str, int]:
    return {"identified": counts.identified, "records": counts.records,
            "dbr_records": counts.screened + counts.awaiting_screening,
            "screened": counts.screened + counts.other_screened,
            "sought": counts.reports_sought + counts.other_reports_sought,
            "not_retrieved": counts.reports_not_retrieved + counts.other_reports_not_retrieved,
            "reports": counts.reports_included, "studies": counts.studies_included}


def runs_add_up(counts: PrismaCounts) -> None:
    for name in Flow.model_fields:
        if isinstance(getattr(counts, name), dict):
            summed: Counter[str] = Counter()
            for run in counts.runs:
                summed.update(getattr(run, name))
            assert +summed == +Counter(getattr(counts, name)), name
        else:
            assert sum(getattr(run, name) for run in counts.runs) == getattr(counts, name), name


@settings(max_examples=300, deadline=None)
@given(ledgers(), st.integers(0, 4), st.data())
def test_every_box_balances_and_equals_a_recount_of_its_records(ledger, head, data):
    events, duplicates, outcomes, groups = ledger
    review = review_of(events)
    counts = derive(review, outcomes, duplicates=duplicates, study_groups=groups)
    assert counts.template == "new"
    for flow in (counts, *counts.runs):
        balances(flow)
    runs_add_up(counts)
    assert recounted(counts) == recount(events, duplicates, outcomes, groups)
    assert counts.studies_included <= counts.reports_included

    # A version published after the first `head` runs, which included some of the records they named (a
    # duplicate confirmed since among them, as a version can include one before it is found out).
    times = sorted({at for at, _ in events})
    head = sum(1 for at, _ in events if at in times[:head])  # the version's last event: the end of a run
    known = {rid for _, payload in events[:head] for rid in payload.record_ids}
    included = data.draw(st.sets(st.sampled_from(sorted(known)))) if known else set()
    updated = derive(review, outcomes, PreviousVersion(included, head), duplicates=duplicates, study_groups=groups)
    assert updated.template == "updated" and updated.new_searches is not None
    balances(updated.new_searches)
    assert updated.model_dump(include=set(Flow.model_fields)) == counts.model_dump(include=set(Flow.model_fields))
    assert updated.previous_studies + updated.new_studies == updated.studies_included
    # a study the version included is a previous study while any report of it is included, by whatever record
    now_included = {groups.get(rid, rid) for rid in review_included(counts, outcomes, duplicates, events)}
    version_studies = {groups.get(duplicates.get(rid, rid), duplicates.get(rid, rid)) for rid in included}
    assert updated.previous_studies == len(now_included & version_studies)
    # ...and the box never passes for more or fewer than the version published: those it counts and those it
    # says no longer count are the version's studies, as the version grouped them (here: none linked then)
    as_published = derive(review, outcomes, PreviousVersion(included, head, study_groups={}), duplicates=duplicates,
                          study_groups=groups)
    assert as_published.previous_studies + as_published.previous_removed == len(included)
    assert updated.previous_reports + updated.new_reports == updated.reports_included
    # the new studies are the new searches' and those earlier runs identified: a previous study is never new
    assert updated.new_searches.studies_included + updated.new_studies_earlier_runs == updated.new_studies
    assert updated.new_searches.reports_included + updated.new_reports_earlier_runs == updated.new_reports
    assert updated.new_searches.studies_included <= updated.new_searches.reports_included
    assert updated.new_searches.records == sum(run.records for run in updated.runs[updated.new_runs_from - 1:])


def test_a_previous_study_reported_now_by_another_version_is_still_a_previous_study():
    """Version 1 included a preprint; a new search found its journal version, included, and the preprint was
    excluded since (the journal version supersedes it). The study is the version's, still included: 1 previous
    study, 0 new, none in the new searches' arm, whose one included report is a new report of it."""
    preprint, journal = IDS[0], IDS[1]
    events = [("2026-01-01T00:00:00Z", ImportPayload(source="Embase", description="an export", record_ids=[preprint])),
              ("2026-03-01T00:00:00Z", ImportPayload(source="Embase", description="an export", record_ids=[journal]))]
    outcomes = {"title-abstract": {rid: Outcome("include", "", ("ann",)) for rid in (preprint, journal)},
                "full-text": {preprint: Outcome("exclude", "wrong-design", ("ann",)),
                              journal: Outcome("include", "", ("ann",))}}
    counts = derive(review_of(events), outcomes, PreviousVersion([preprint], 1),
                    study_groups={preprint: preprint, journal: preprint})
    assert (counts.previous_studies, counts.previous_removed, counts.new_studies, counts.studies_included) == \
        (1, 0, 0, 1)
    assert (counts.new_searches.studies_included, counts.new_searches.reports_included, counts.new_reports) == \
        (0, 1, 1)
    assert [run.studies_included for run in counts.runs] == [1, 0]
