"""PRISMA 2020 counts: derived from the ledger and decision files, and drawn exactly as derived."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from conftest import EXAMPLE, FIXTURES
from http_mocks import json_response
from lxml import etree

from sitegen.commands import add_monitor, build, update
from sitegen.living.ledger import append
from sitegen.living.merge import integrate
from sitegen.living.prisma import Flow, PreviousVersion, PrismaCounts, derive
from sitegen.records.model import model_data
from sitegen.review.folder import load_review
from sitegen.review.models import ImportPayload, RetrievalPayload, Strategy
from sitegen.review.transaction import Transaction
from sitegen.review.write import jsonl
from sitegen.site import prisma_csv, prisma_svg
from sitegen.site.prisma_csv import prisma2020_csv
from sitegen.sources.openalex import work_to_record
from sitegen.sources.settings import SourceSettings
from sitegen.workspace import open_review

SYNERGY = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
CORE = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_text())["resultList"]["result"]
STRATEGIES = [Strategy(source="openalex", query="object"), Strategy(source="europepmc", query="object")]
TEMPLATE = FIXTURES / "prisma" / "PRISMA.csv"
AFTER_RUN_2 = "2026-02-01T00:00:00Z"  # a version published after the two-run review's runs, before any later one


def doi(work: dict) -> str:
    return work["doi"].removeprefix("https://doi.org/").lower()


def europepmc_copy_of(work: dict, template: dict) -> dict:
    """A real Europe PMC result given the identifiers and title of a real OpenAlex work (no recording has one
    paper in both), so the two sources overlap as they do in practice."""
    result = dict(template, doi=doi(work), pmid=work["ids"]["pmid"].rsplit("/", 1)[1], title=work["title"])
    result.pop("pmcid", None)
    return result


@pytest.fixture
def two_run_review(sitegen, tmp_path, monkeypatch):
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)
    review = tmp_path / "review"
    sitegen("init", review)
    config = review / "review.yaml"  # a review screened by one person: one decision per stage counts
    config.write_text(config.read_text().replace("site:", "screening:\n  title_abstract_reviewers: 1\n"
                                                          "  full_text_reviewers: 1\nsite:", 1))
    protocol = review / "protocol.md"
    protocol.write_text(protocol.read_text().replace("exclusion_reasons:\n", "exclusion_reasons:\n"
                                                     "  - code: not-retrieved\n    label: Report not retrieved\n"))
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    served = {"openalex": SYNERGY[:4], "europepmc": [europepmc_copy_of(SYNERGY[0], CORE[0]),
                                                      europepmc_copy_of(SYNERGY[1], CORE[1]), CORE[2]]}

    def providers(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps({"meta": {"count": len(served["openalex"]), "next_cursor": None},
                                             "results": served["openalex"]}))
        results = served["europepmc"]
        return json_response(json.dumps({"hitCount": len(results), "resultList": {"result": results}}))

    settings = SourceSettings()
    add_monitor(review, "watch", STRATEGIES, "2026-01-01T00:00:00Z", "live", settings=settings,
                transport=httpx.MockTransport(providers))
    served["openalex"] = SYNERGY[:5]  # one new OpenAlex record
    served["europepmc"] = served["europepmc"] + [CORE[3]]  # one new Europe PMC record
    update(review, "2026-02-01T00:00:00Z", "live", settings=settings, transport=httpx.MockTransport(providers))
    ids = [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()]
    new_openalex = doi(SYNERGY[4])
    run1 = [i for i in ids if i != new_openalex and i not in _europepmc_ids(CORE[3])]
    assert len(ids) == 7 and len(run1) == 5
    include, maybe, exclude = run1[:2], run1[2:3], run1[3:5]
    rows = ["record_id,decision,reason,note"]
    rows += [f"{i},include,," for i in include + [new_openalex]]
    rows += [f"{i},maybe,," for i in maybe] + [f"{i},exclude,," for i in exclude]  # CORE[3]'s record: undecided
    (review / "screening" / "title-abstract" / "ann.csv").write_text("\n".join(rows) + "\n")
    full_text = ["record_id,decision,reason,note", f"{include[0]},include,,", f"{new_openalex},include,,",
                 f"{include[1]},exclude,wrong-population,", f"{maybe[0]},exclude,not-retrieved,"]
    (review / "screening" / "full-text" / "ann.csv").write_text("\n".join(full_text) + "\n")
    return review


def _europepmc_ids(result: dict) -> set[str]:
    return {result.get("doi", "").lower(), f"pmid:{result.get('pmid')}"}


def import_other_methods(review_dir: Path, at: str, works: list[dict]) -> list[str]:
    """Record an import by other methods (citation searching) of real OpenAlex works, as an `import` event."""
    review, problems = load_review(review_dir)
    assert review is not None, problems
    merged = integrate(review.records, [work_to_record(work) for work in works])
    transaction = Transaction(review_dir)
    append(transaction, review, at, [ImportPayload(source="openalex", method="other", record_ids=merged.ids,
                                                   description="backward citation searching of included studies")])
    transaction.write("records.jsonl", jsonl(model_data(record) for record in merged.records.values()))
    transaction.commit()
    return merged.ids


@pytest.fixture
def other_methods_review(two_run_review, sitegen):
    """The two-run review, then a third run: citation searching found two new records and one known."""
    found = import_other_methods(two_run_review, "2026-03-01T00:00:00Z", [SYNERGY[5], SYNERGY[6], SYNERGY[0]])
    kept, dropped = found[0], found[1]
    with (two_run_review / "screening" / "title-abstract" / "ann.csv").open("a") as rows:
        rows.write(f"{kept},include,,\n{dropped},include,,\n")
    with (two_run_review / "screening" / "full-text" / "ann.csv").open("a") as rows:
        rows.write(f"{kept},include,,\n{dropped},exclude,wrong-population,\n")
    code, out, err = sitegen("check", two_run_review)
    assert code == 0, out + err
    return two_run_review


def counts_of(sitegen, review: Path) -> dict:
    code, out, err = sitegen("prisma", review, "--json")
    assert code == 0, err
    return json.loads(out)


def totals(counts: dict) -> dict:
    """The whole review's flow, without the per-run columns."""
    return {key: value for key, value in counts.items() if key != "runs"}


def test_counts_match_a_hand_computed_example(sitegen, two_run_review):
    counts = counts_of(sitegen, two_run_review)
    assert totals(counts) == {
        # run 1: OpenAlex 4 + Europe PMC 3, two of them the same works -> 5 records
        # run 2: one new from each source -> 7 records; records seen before are not counted again
        "identified_databases": 9, "identified_registers": 0, "identified_by_source": {"europepmc": 4, "openalex": 5},
        "identified_other_methods": 0, "identified_other_by_source": {},
        "duplicates_removed": 2, "excluded_automation": 0, "removed_other_reasons": 0, "records": 7,
        "screened": 6, "excluded_screening": 2, "awaiting_screening": 1,
        "reports_sought": 4, "reports_not_retrieved": 1, "reports_assessed": 3,
        "excluded_full_text": 1, "excluded_by_reason": {"wrong-population": 1}, "awaiting_full_text": 0,
        "other_duplicates_removed": 0,
        "other_screened": 0, "other_excluded_screening": 0, "other_awaiting_screening": 0,
        "other_reports_sought": 0, "other_reports_not_retrieved": 0, "other_reports_assessed": 0,
        "other_excluded_full_text": 0, "other_excluded_by_reason": {}, "other_awaiting_full_text": 0,
        "studies_included": 2, "reports_included": 2,
        # no version was ever published: a new review, however many runs found its records, so both
        # included studies (one found in run 1, one in run 2) are new and none is previous
        "template": "new", "previous_from": None, "previous_studies": 0, "previous_reports": 0, "previous_removed": 0,
        "new_runs_from": None,
        "new_studies": 2, "new_reports": 2,
        # the arm of new studies is the whole review's: no new searches apart from it
        "new_searches": None, "new_studies_earlier_runs": 0, "new_reports_earlier_runs": 0,
    }
    first, second = counts["runs"]
    assert (first["run"], first["at"], second["run"], second["at"]) == (1, "2026-01-01T00:00:00Z",
                                                                        2, "2026-02-01T00:00:00Z")
    # what each source returned in the run, against what was new: run 2 returned 5 and 4, one new each
    assert first["returned_by_source"] == {"europepmc": 3, "openalex": 4}
    assert second["returned_by_source"] == {"europepmc": 4, "openalex": 5}
    assert second["identified_by_source"] == {"europepmc": 1, "openalex": 1}
    assert (first["records"], first["duplicates_removed"], second["records"], second["duplicates_removed"]) == \
        (5, 2, 2, 0)


def test_other_methods_have_their_own_route(sitegen, other_methods_review):
    counts = counts_of(sitegen, other_methods_review)
    third = counts["runs"][2]
    # the import returned three records; one was known from run 1, so two are new, both by other methods
    assert third["returned_by_source"] == {} and third["other_returned_by_source"] == {"openalex": 3}
    assert (third["identified_other_methods"], third["identified_other_by_source"], third["records"]) == \
        (2, {"openalex": 2}, 2)
    assert third["identified_by_source"] == {} and third["identified_databases"] == 0
    assert {key: counts[key] for key in counts if key.startswith("other_")} == {
        "other_duplicates_removed": 0, "other_screened": 2, "other_excluded_screening": 0, "other_awaiting_screening": 0,
        "other_reports_sought": 2, "other_reports_not_retrieved": 0, "other_reports_assessed": 2,
        "other_excluded_full_text": 1, "other_excluded_by_reason": {"wrong-population": 1},
        "other_awaiting_full_text": 0}
    # the databases-and-registers route is what it was before the import
    assert (counts["identified_databases"], counts["screened"], counts["reports_assessed"]) == (9, 6, 3)
    assert (counts["records"], counts["duplicates_removed"], counts["studies_included"]) == (9, 2, 3)
    # no version was published before the citation search: still a new review, its three studies all new
    assert (counts["template"], counts["previous_studies"], counts["new_studies"]) == ("new", 0, 3)


def test_previous_studies_can_be_those_of_a_published_version(other_methods_review):
    """Versions pass the studies their previous version included; a study since excluded is not counted."""
    workspace = open_review(other_methods_review)
    included = [rid for rid, o in workspace.facts.outcomes["full-text"].items() if o.decision == "include"]
    counts = derive(workspace.review, workspace.facts.outcomes,
                    version_after(workspace, AFTER_RUN_2, included={included[0], "doi:10.1/gone"}))
    assert (counts.template, counts.previous_studies, counts.new_studies, counts.studies_included) == \
        ("updated", 1, 2, 3)
    # ...and the box does not pass for all the version included: it says "still included", and how many left
    assert counts.previous_removed == 1
    labels: dict[str, str] = {}
    for text in (str(prisma_svg.render(counts, labels, standalone=True)), prisma2020_csv(counts, labels),
                 prisma_svg.summary(counts, labels)):
        assert "previous version of review and still included" in text or "(of the 2 it included, 1 no longer is)" in text
    whole = derive(workspace.review, workspace.facts.outcomes, version_after(workspace, AFTER_RUN_2, {included[0]}))
    assert whole.previous_removed == 0 and "still included" not in prisma_svg.summary(whole, labels)
    assert derive(workspace.review, workspace.facts.outcomes,
                  version_after(workspace, AFTER_RUN_2, set())).template == "updated"


def test_previous_studies_are_only_those_of_a_published_version(other_methods_review):
    """Studies found by earlier runs of a review never published are not "previous": PRISMA 2020's updated-review
    template is for an update of a published version. The diagram, its description and the CSV of such a review
    have no previous studies (the CSV leaves the boxes NA); a published version's are named as PRISMA names them."""
    workspace = open_review(other_methods_review)
    labels: dict[str, str] = {}
    unpublished = workspace.facts.prisma
    included = [rid for rid, o in workspace.facts.outcomes["full-text"].items() if o.decision == "include"]
    from_version = derive(workspace.review, workspace.facts.outcomes,
                          version_after(workspace, AFTER_RUN_2, included[:1]))
    assert (unpublished.template, unpublished.previous_from) == ("new", None)
    assert (from_version.template, from_version.previous_from) == ("updated", "version")
    # the version's study is previous, never in the new searches' arm (the runs after the version: run 3 alone)
    assert from_version.new_runs_from == 3 and from_version.new_searches is not None
    assert from_version.new_searches.studies_included + from_version.new_studies_earlier_runs == \
        from_version.new_studies == 2
    for counts in (unpublished, from_version):
        for text in (str(prisma_svg.render(counts, labels, standalone=True)), prisma_svg.summary(counts, labels)):
            assert ("previous version" in text) == (counts is from_version) and "earlier searches" not in text
        # the CSV keeps the package's rows and wording for the previous studies; NA is how it leaves them out
        previous = {row[0]: row[-1] for row in read_csv(prisma2020_csv(counts, labels))[1:]
                    if row[0] in ("previous_studies", "previous_reports")}
        assert previous == ({"previous_studies": "1", "previous_reports": "1"} if counts is from_version
                            else {"previous_studies": "NA", "previous_reports": "NA"})
        assert "earlier searches" not in prisma2020_csv(counts, labels)


def test_a_single_run_is_a_new_review(sitegen, two_run_review):
    workspace = open_review(two_run_review)
    events = sum(1 for e in workspace.review.ledger if e.ts == "2026-01-01T00:00:00Z")
    review = workspace.review
    cut = replace(review, ledger=review.ledger[:events], payloads=review.payloads[:events],
                  ledger_lines=review.ledger_lines[:events])
    counts = derive(cut, workspace.facts.outcomes)
    assert (counts.template, counts.previous_studies, counts.new_studies, len(counts.runs)) == ("new", 0, 1, 1)
    assert prisma_svg.columns(counts) == []  # one run: no per-run columns
    svg = str(prisma_svg.render(counts, {}, standalone=True)).encode()
    text = " ".join("".join(etree.fromstring(svg).itertext()).split())
    assert "Previous studies" not in text and "Identification of studies via databases" in text
    assert drawn_numbers(svg)["studies_included"] == 1 and "new_studies" not in drawn_numbers(svg)


FLOW_FIELDS = list(Flow.model_fields)


@pytest.mark.parametrize("which", ["example", "two-run", "other-methods"])
def test_runs_add_up_to_the_whole_review(sitegen, request, which):
    review = {"example": EXAMPLE, "two-run": None, "other-methods": None}[which] or \
        request.getfixturevalue("two_run_review" if which == "two-run" else "other_methods_review")
    counts = counts_of(sitegen, review)
    assert counts["runs"], "no runs"
    for name in FLOW_FIELDS:
        if isinstance(counts[name], dict):
            summed: dict[str, int] = {}
            for run in counts["runs"]:
                for key, n in run[name].items():
                    summed[key] = summed.get(key, 0) + n
            assert summed == counts[name], name
        else:
            assert sum(run[name] for run in counts["runs"]) == counts[name], name
    # and each flow adds up in itself: every record is screened or awaiting, every report sought accounted for
    for flow in [counts, *counts["runs"]]:
        # each route removes its own duplicates: identified = duplicates removed + screened + awaiting, per route
        assert flow["identified_databases"] + flow["identified_registers"] - flow["duplicates_removed"] == \
            flow["screened"] + flow["awaiting_screening"]
        assert flow["identified_other_methods"] - flow["other_duplicates_removed"] == \
            flow["other_screened"] + flow["other_awaiting_screening"]
        for p in ("", "other_"):
            assert flow[f"{p}reports_sought"] == (flow[f"{p}reports_not_retrieved"] + flow[f"{p}reports_assessed"]
                                                  + flow[f"{p}awaiting_full_text"])
            assert flow[f"{p}excluded_full_text"] == sum(flow[f"{p}excluded_by_reason"].values())
        assert flow["records"] == sum(flow[f"{p}{name}"] for p in ("", "other_")
                                      for name in ("screened", "awaiting_screening"))
        assert flow["studies_included"] == sum(flow[f"{p}reports_assessed"] - flow[f"{p}excluded_full_text"]
                                               for p in ("", "other_"))
    assert counts["previous_studies"] + counts["new_studies"] == counts["studies_included"]


def test_the_example_review(sitegen):
    counts = counts_of(sitegen, EXAMPLE)
    first, second = counts["runs"]
    # the update's search returned 271 records, 11 of them new
    assert (second["returned_by_source"], second["identified_by_source"]) == ({"openalex": 271}, {"openalex": 11})
    assert (counts["records"], counts["studies_included"], counts["template"]) == (271, 38, "updated")
    assert (first["studies_included"], counts["previous_studies"], counts["new_studies"]) == (38, 38, 0)


def test_text_output_says_what_each_run_returned(sitegen):
    code, out, _ = sitegen("prisma", EXAMPLE)
    assert code == 0
    assert "studies included: 38" in out
    assert ("run 2 (2023-04-17T00:00:00Z): 11 new records identified, 11 after duplicates were removed, 0 now "
            "included studies; OpenAlex returned 271, 11 new") in out


def test_text_output_says_exclusion_reasons_and_absent_values_in_words_not_python_s(sitegen, tmp_path):
    # `sitegen prisma` printed `excluded by reason: {'wrong-design': 1}` and a new review's `previous from: None`
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    code, _, err = sitegen("import", review, FIXTURES / "ris" / "jstor_ris.ris", "--at", "2026-03-01T00:00:00Z")
    assert code == 0, err
    first, second = (json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()[:2])
    for reviewer in ("ada", "ben"):
        (review / "screening" / "title-abstract" / f"{reviewer}.csv").write_text(
            f"record_id,decision,reason,note\n{first},include,,\n{second},include,,\n")
        (review / "screening" / "full-text" / f"{reviewer}.csv").write_text(
            f"record_id,decision,reason,note\n{first},exclude,wrong-design,\n{second},exclude,wrong-population,\n")
    code, out, err = sitegen("prisma", review)
    assert code == 0, err
    assert "excluded by reason: wrong-design 1, wrong-population 1\n" in out
    assert "other excluded by reason: none\n" in out
    assert "previous from: none\n" in out and "new runs from: none\n" in out
    assert not any(mark in out for mark in ("{", "None", "'"))


def test_text_output_of_a_run_that_returned_only_held_records_says_so(sitegen, tmp_path):
    """A later import of records the review already held read "0 records identified ... Scopus returned 4, 0 new",
    which reads as a contradiction: identified is new to the review, returned is everything the source gave."""
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    for at in ("2026-03-01T00:00:00Z", "2026-03-08T00:00:00Z"):
        code, _, err = sitegen("import", review, FIXTURES / "ris" / "jstor_ris.ris", "--source", "Scopus", "--at", at)
        assert code == 0, err
    code, out, _ = sitegen("prisma", review)
    assert code == 0
    assert ("run 1 (2026-03-01T00:00:00Z): 4 new records identified, 4 after duplicates were removed, 0 now included "
            "studies; Scopus returned 4, 4 new") in out
    assert ("run 2 (2026-03-08T00:00:00Z): 0 new records identified, 0 after duplicates were removed, 0 now included "
            "studies; Scopus returned 4, all already in the review") in out
    assert "0 records identified" not in out and "0 new\n" not in out
    # --json is unchanged: the numbers, not the words
    second = counts_of(sitegen, review)["runs"][1]
    assert (second["returned_by_source"], second["identified_by_source"]) == ({"Scopus": 4}, {"Scopus": 0})


# --------------------------------------------------------------------------- the diagram


def drawn_numbers(svg: bytes) -> dict[str, int]:
    tree = etree.fromstring(svg)
    drawn: dict[str, int] = {}
    for element in tree.iter("{*}text"):
        if element.get("data-count"):
            key, value = element.get("data-count"), int(element.get("data-value"))
            assert drawn.setdefault(key, value) == value, f"{key} drawn with two values"
            assert str(value) in "".join(element.itertext()), f"{key}: the number drawn is not its data-value"
    return drawn


def flatten(counts: dict | list, prefix: str = "") -> dict[str, int]:
    """Dotted paths to every number, as data-count names them: runs.1.screened, identified_by_source.openalex."""
    items = counts.items() if isinstance(counts, dict) else enumerate(counts)
    flat = {}
    for key, value in items:
        if isinstance(value, dict | list):
            flat.update(flatten(value, f"{prefix}{key}."))
        elif isinstance(value, int) and not isinstance(value, bool):
            flat[f"{prefix}{key}"] = value
    return flat


def expected_value(flat: dict[str, int], key: str) -> int:
    """A number the JSON holds, or the sum over a span of runs merged into one column (runs.0-3.screened)."""
    head, _, rest = key.partition(".")
    span, _, field = rest.partition(".")
    if head == "runs" and "-" in span:
        first, last = map(int, span.split("-"))
        return sum(flat.get(f"runs.{i}.{field}", 0) for i in range(first, last + 1))
    if head == "runs" and field.count(".") == 1:  # a run's reasons and sources name only those it had
        return flat.get(key, 0)
    return flat[key]


def _inline_svg(html: bytes) -> bytes:
    start, end = html.index(b"<svg"), html.index(b"</svg>") + len(b"</svg>")
    return html[start:end].replace(b"<svg", b'<svg xmlns="http://www.w3.org/2000/svg"', 1)


@pytest.mark.parametrize("which", ["example", "two-run", "other-methods"])
def test_every_number_in_the_diagram_equals_the_json(sitegen, request, tmp_path, which):
    review = EXAMPLE if which == "example" else request.getfixturevalue(
        "two_run_review" if which == "two-run" else "other_methods_review")
    counts = counts_of(sitegen, review)
    flat = flatten(counts)
    if which == "example":
        site = request.getfixturevalue("example_site")  # built once for the whole session
    else:
        site = tmp_path / "site"
        build(review, site, environ={})
    page = (site / "index.html").read_bytes()
    for svg in ((site / "downloads" / "prisma.svg").read_bytes(), _inline_svg(page)):
        drawn = drawn_numbers(svg)
        for key, value in drawn.items():
            assert expected_value(flat, key) == value, key
        # every box of the template is drawn, with each run's column and the arm's total: the whole review's
        # for a new review, the new searches' for an updated one (the example: run 2, after version 1)
        updated = counts["template"] == "updated"
        arm, prefix = (counts["new_searches"], "new_searches.") if updated else (counts, "")
        arm_runs = [i for i, run in enumerate(counts["runs"]) if run["records"]
                    and (not updated or i >= counts["new_runs_from"] - 1)]
        expected = {prefix + box for box in ("identified_databases", "identified_registers", "duplicates_removed",
                                             "excluded_automation", "removed_other_reasons", "screened",
                                             "excluded_screening", "reports_sought", "reports_not_retrieved",
                                             "reports_assessed", "excluded_full_text")}
        expected |= {"studies_included", "reports_included"}
        updated_boxes = {"previous_studies", "previous_reports", "new_studies", "new_reports"}
        # the updated-review boxes are the example's (it published versions), never a review's that published none
        assert updated == (which == "example")
        if updated:
            expected |= updated_boxes
            # the arm never shows the whole review's flow, nor the runs before the previous version
            assert not {"identified_databases", "screened", "runs.0.screened"} & set(drawn)
        else:
            assert not updated_boxes & set(drawn) and not any(key.startswith("new_searches") for key in drawn)
        expected |= {f"{prefix}identified_by_source.{s}" for s in arm["identified_by_source"]}
        expected |= {f"{prefix}excluded_by_reason.{c}" for c in arm["excluded_by_reason"]}
        if len(arm_runs) > 1:
            expected |= {f"runs.{i}.screened" for i in arm_runs}
            expected |= {f"runs.{i}.returned_by_source.{s}" for i in arm_runs
                         for s in counts["runs"][i]["returned_by_source"] if s in arm["identified_by_source"]}
        if arm["identified_other_by_source"]:
            expected |= {prefix + box for box in ("identified_other_methods", "other_screened", "other_reports_sought",
                                                  "other_reports_not_retrieved", "other_reports_assessed",
                                                  "other_excluded_full_text")}
            expected |= {f"{prefix}other_excluded_by_reason.{c}" for c in arm["other_excluded_by_reason"]}
        assert expected <= set(drawn), expected - set(drawn)
    # the table beside it shows the same numbers
    table = etree.fromstring(page, etree.HTMLParser()).xpath("//table[contains(@class, 'prisma-counts')]//td")
    tabled = {cell.get("data-count"): int(cell.text) for cell in table if cell.get("data-count")}
    assert tabled and all(expected_value(flat, key) == value for key, value in tabled.items())
    assert json.loads((site / "downloads" / "prisma.json").read_text()) == counts


def test_diagram_is_accessible_text(example_site):
    tree = etree.fromstring((example_site / "downloads" / "prisma.svg").read_bytes())
    assert tree.get("role") == "img"
    assert tree.find("{*}title").text == "PRISMA 2020 flow diagram"
    desc = tree.find("{*}desc").text
    assert "38 studies included in total" in desc and "run 2 (2023-04-17 00:00 UTC) identified 11 new records" in desc
    text = " ".join("".join(tree.itertext()).split())
    for phrase in ("Identification of new studies via databases and registers", "Previous studies",
                   "Records marked as ineligible by automation tools", "Records removed for other reasons",
                   "Studies included in previous version of review (n = 38)", "New studies included in review (n = 0)",
                   "Total studies included in review (n = 38)",
                   # the arm of new studies is run 2's, the one search since version 1: 11 records, not 271
                   "Databases (n = 11)", "Records screened (n = 10)",
                   "counts the records first identified by the new searches, the runs since the previous version "
                   "(Run 2: 2023-04-17 00:00 UTC)", "Run 1 came before it and is not drawn"):
        assert phrase in text, phrase


def test_many_runs_merge_the_earliest_into_one_column(sitegen, two_run_review):
    """A review that ran weekly for months keeps a readable diagram: the earliest runs share a column, whose
    numbers are the sums of theirs."""
    counts = open_review(two_run_review).facts.prisma
    runs = [counts.runs[i % 2].model_copy(update={"run": i + 1}) for i in range(9)]
    many = counts.model_copy(update={"runs": runs})
    cols = prisma_svg.columns(many)
    assert [col.head for col in cols] == ["Runs 1\u20135", "Run 6", "Run 7", "Run 8", "Run 9", "All"]
    assert len(cols) == prisma_svg.MAX_COLUMNS
    merged = cols[0].cell(many, "identified_by_source.openalex")
    assert merged == prisma_svg.Cell(sum(run.identified_by_source["openalex"] for run in runs[:5]),
                                     "runs.0-4.identified_by_source.openalex")
    drawn = drawn_numbers(str(prisma_svg.render(many, {}, standalone=True)).encode())
    flat = flatten(many.model_dump())
    assert all(expected_value(flat, key) == value for key, value in drawn.items() if key.startswith("runs."))


def test_hostile_labels_stay_text(two_run_review):
    """Reason labels and provider text are escaped, control characters kept out: the SVG stays well-formed."""
    workspace = open_review(two_run_review)
    labels = {"wrong-population": '<script>alert(1)</script> & "quotes", =cmd; \x07bell'}
    svg = str(prisma_svg.render(workspace.facts.prisma, labels, standalone=True))
    tree = etree.fromstring(svg.encode())  # well-formed XML, or this raises
    assert not list(tree.iter("{*}script"))
    assert '<script>alert(1)</script> & "quotes", =cmd;' in " ".join("".join(tree.itertext()).split())


# --------------------------------------------------------------------------- the CSV for the PRISMA2020 R package


def read_csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_csv_has_the_template_structure_with_only_n_filled(example_site):
    template = read_csv(TEMPLATE.read_text(encoding="utf-8"))
    output = read_csv((example_site / "downloads" / "prisma2020.csv").read_text(encoding="utf-8"))
    assert output[0] == template[0] and len(output) == len(template)
    n = template[0].index("n")
    for ours, theirs in zip(output[1:], template[1:], strict=True):
        assert ours[:n] + ours[n + 1:] == theirs[:n] + theirs[n + 1:]  # every column but n as the template has it
    filled = {row[0]: row[n] for row in output[1:] if row[0] != "NA"}
    # An updated review: the new studies' arm is the update's search (run 2: 11 new records, one awaiting
    # screening and two awaiting full text), not the whole review, whose included studies are the previous 38.
    assert filled == {
        "previous_studies": "38", "previous_reports": "38", "database_results": "11",
        "database_specific_results": "OpenAlex, 11", "register_results": "0", "register_specific_results": "0",
        "website_results": "NA", "organisation_results": "NA", "citations_results": "NA",
        "duplicates": "0", "excluded_automatic": "0", "excluded_other": "0",
        "records_screened": "10", "records_excluded": "8", "dbr_sought_reports": "2",
        "dbr_notretrieved_reports": "0", "other_sought_reports": "NA", "other_notretrieved_reports": "NA",
        "dbr_assessed": "0", "dbr_excluded": "0", "other_assessed": "NA", "other_excluded": "NA",
        "new_studies": "0", "new_reports": "0", "total_studies": "38", "total_reports": "38",
        "total_studies_ma": "NA", "total_reports_ma": "NA",
        "identification": "0", "screening": "0", "included": "0"}  # the phase bars keep the template's n
    shipped = Path(prisma_svg.__file__).parents[2] / "templates" / "prisma2020.csv"
    assert read_csv(shipped.read_text(encoding="utf-8")) == template  # the shipped copy is the real template


def test_csv_of_a_review_with_other_methods(sitegen, other_methods_review):
    workspace = open_review(other_methods_review)
    labels = {"wrong-population": "Population, setting; or age", "not-retrieved": "Report not retrieved"}
    counts = workspace.facts.prisma  # no version published: a new review, the whole review in the one arm
    assert counts.template == "new"
    rows = read_csv(prisma2020_csv(counts, labels))
    filled = {row[0]: row[-1] for row in rows[1:] if row[0] != "NA"}
    assert {key: filled[key] for key in ("database_specific_results", "citations_results", "other_sought_reports",
                                         "other_assessed", "dbr_excluded", "other_excluded", "previous_studies",
                                         "new_studies", "total_studies")} == {
        "database_specific_results": "Europe PMC, 4; OpenAlex, 5", "citations_results": "2",
        "other_sought_reports": "2", "other_assessed": "2",
        # a label's own commas and semicolons would split the package's "Name, n; Name, n" list
        "dbr_excluded": "Population / setting / or age, 1", "other_excluded": "Population / setting / or age, 1",
        "previous_studies": "NA", "new_studies": "3", "total_studies": "3"}
    # the package's own parsing: split at ";", the name up to the first ",", the number after it
    parsed = [(item.split(",")[0], int(item.split(",", 1)[1])) for item in filled["dbr_excluded"].split(";")]
    assert parsed == [("Population / setting / or age", 1)]


def version_after(workspace, at: str, included: Collection[str] | None = None) -> PreviousVersion:
    """What `derive` is given for a version published after the runs up to `at`: the studies it included (by
    default those included now that those runs found) and its last ledger event."""
    review = workspace.review
    head = max(event.seq for event in review.ledger if event.ts <= at)
    known = {rid for payload, event in zip(review.payloads, review.ledger, strict=True) if event.seq <= head
             and isinstance(payload, ImportPayload | RetrievalPayload) for rid in payload.record_ids}
    return PreviousVersion(known & set(workspace.facts.included) if included is None else included, head)


def test_the_csv_of_an_updated_review_counts_the_new_searches_in_the_new_studies_arm(other_methods_review):
    # PRISMA's updated-review template: previous studies + new studies = total, and the arm above the new
    # studies is the new searches'; the whole review's flow there counted the previous studies' records again.
    # A version published after run 2 included its two studies; the citation search (run 3) came after it.
    workspace = open_review(other_methods_review)
    version = version_after(workspace, "2026-02-01T00:00:00Z")
    assert len(version.included) == 2
    counts = derive(workspace.review, workspace.facts.outcomes, version)
    assert counts.template == "updated" and counts.new_runs_from == 3
    filled = {row[0]: row[-1] for row in read_csv(prisma2020_csv(counts, {}))[1:] if row[0] != "NA"}
    # by hand: run 3's citation search found 2 new records, both assessed, one excluded; no database searched
    assert filled["citations_results"] == "2"
    assert filled["database_results"] == "0" and filled["records_screened"] == "0"
    assert (filled["other_assessed"], filled["other_excluded"]) == ("2", "wrong-population, 1")
    assert _values(filled, "previous_studies", "new_studies", "total_studies") == ("2", "1", "3")


def _values(filled: dict[str, str], *names: str) -> tuple[str, ...]:
    return tuple(filled[name] for name in names)


def test_csv_cells_cannot_start_a_formula(two_run_review):
    workspace = open_review(two_run_review)
    rows = read_csv(prisma2020_csv(workspace.facts.prisma, {"wrong-population": "=HYPERLINK(\"x\")"}))
    excluded = next(row[-1] for row in rows if row[0] == "dbr_excluded")
    assert excluded == "'=HYPERLINK(\"x\"), 1"


def test_a_preprint_and_its_journal_version_are_two_reports_of_one_study(sitegen, two_run_review):
    # Linked as versions (custom.other_versions) and both included: PRISMA counts studies and reports apart.
    path = two_run_review / "records.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    full_text = (two_run_review / "screening" / "full-text" / "ann.csv").read_text().splitlines()
    earlier, later = [row.split(",")[0] for row in full_text[1:3]]  # both included: found in runs 1 and 2
    for record in lines:
        if record["id"] in (earlier, later):
            record["custom"]["other_versions"] = [later if record["id"] == earlier else earlier]
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in lines))
    code, out, err = sitegen("check", two_run_review)
    assert code == 0, out + err
    counts = counts_of(sitegen, two_run_review)
    assert (counts["studies_included"], counts["reports_included"]) == (1, 2)
    # the study counts in the run that found its first report; the later report is a new report of it
    assert [run["studies_included"] for run in counts["runs"]] == [1, 0]
    # no version published: the study and both its reports are new
    assert (counts["previous_studies"], counts["previous_reports"]) == (0, 0)
    assert (counts["new_studies"], counts["new_reports"]) == (1, 2)


def test_a_source_not_searched_or_not_reached_in_a_run_is_never_drawn_as_a_0(sitegen, two_run_review, tmp_path):
    """A downed source is never a negative: its numbers in a run that did not reach it are marked, and a
    run that did not search a source has no number for it (both were drawn "0")."""
    review = two_run_review

    def europepmc_down(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps({"meta": {"count": 5, "next_cursor": None}, "results": SYNERGY[:5]}))
        return httpx.Response(503)

    result = update(review, "2026-03-01T00:00:00Z", "live", settings=SourceSettings(),
                    transport=httpx.MockTransport(europepmc_down))
    assert not result.complete
    jstor = FIXTURES / "ris" / "jstor_ris.ris"
    assert sitegen("import", review, jstor, "--at", "2026-03-08T00:00:00Z")[0] == 0
    site = tmp_path / "site"
    build(review, site, environ={})
    counts = json.loads((site / "downloads" / "prisma.json").read_text())
    assert counts["runs"][2]["incomplete"] == ["europepmc"]
    jstor_source = next(s for s in counts["identified_by_source"] if s not in ("openalex", "europepmc"))
    page = (site / "index.html").read_bytes()
    for svg in ((site / "downloads" / "prisma.svg").read_bytes(), _inline_svg(page)):
        cells = [(e.get("data-count"), "".join(e.itertext())) for e in etree.fromstring(svg).iter("{*}text")
                 if e.get("class") == "number"]
        # run 3 identified nothing (it has no column of its own): the whole review's Europe PMC number is marked
        europepmc = counts["identified_by_source"]["europepmc"]
        assert ("identified_by_source.europepmc", f"{europepmc}*") in cells
        # JSTOR was not searched in runs 1-2, nor OpenAlex and Europe PMC in the import's run (two rows each:
        # identified and returned): a dash, and no number claimed
        assert [key for key, text in cells if text == "\u2013"] == [None] * 8
        assert not any(key and key.startswith("runs.3.") and "openalex" in key for key, _ in cells)
        assert f"runs.3.identified_by_source.{jstor_source}" in {key for key, _ in cells}
        notes = b" ".join(svg.split(b'class="note"')[1:])
        assert b"not searched in that run" in notes and b"Europe PMC was not reached in full in run 3" in notes
    table = etree.fromstring(page, etree.HTMLParser())
    cells = table.xpath("//table[contains(@class, 'prisma-counts')]//td")
    assert all(cell.get("data-count") is None for cell in cells if cell.text == "\u2013")
    assert f"{counts['identified_by_source']['europepmc']}*" in [cell.text for cell in cells]
    assert "Europe PMC was not reached in full in run 3" in " ".join(table.xpath("//p[@class='note']/text()"))
    # No version published: the CSV's one arm is the whole review's, and lists Europe PMC, marked, as run 3 did
    # not reach it in full (OpenAlex 4 + 1, Europe PMC 3 + 1, the import's 4 from JSTOR)
    derived = PrismaCounts.model_validate(counts)
    assert prisma_csv.values(derived, {})["database_specific_results"] == \
        "Europe PMC (not reached in full), 4; JSTOR, 4; OpenAlex, 5"
    # After a version published after run 3, the new-studies arm is the import's run alone (run 3 identified
    # nothing): were Europe PMC not reached in it, the arm would list it, marked, though it identified nothing
    workspace = open_review(review)
    updated = derive(workspace.review, workspace.facts.outcomes, version_after(workspace, "2026-03-01T00:00:00Z"))
    assert updated.new_runs_from == 4
    assert prisma_csv.values(updated, {})["database_specific_results"] == "JSTOR, 4"
    updated.runs[3].incomplete.append("europepmc")
    assert prisma_csv.values(updated, {})["database_specific_results"] == \
        "Europe PMC (not reached in full), 0; JSTOR, 4"
    code, out, _ = sitegen("prisma", review)
    assert code == 0 and "Europe PMC was not reached in full (records may be missing): returned 0, 0 new" in out


def test_a_report_not_retrieved_is_nowhere_counted_as_excluded(sitegen, two_run_review, tmp_path):
    """PRISMA counts a full-text exclusion with the reason not-retrieved as a report not retrieved; the records
    list and the screening page counted it among the exclusions at full text."""
    from sitegen.site.pages import page_slug

    counts = counts_of(sitegen, two_run_review)
    assert (counts["reports_not_retrieved"], counts["excluded_full_text"]) == (1, 1)
    site = tmp_path / "site"
    build(two_run_review, site, environ={})
    records = etree.fromstring((site / "records.html").read_bytes(), etree.HTMLParser())
    filters = [" ".join("".join(item.itertext()).split()) for item in records.xpath("//nav[@class='record-filters']//li")]
    assert "Full text not retrieved, not assessed (1)" in filters
    excluded = next(text for text in filters if text.startswith("Excluded at full text ("))
    assert excluded.startswith("Excluded at full text (1)") and "retrieved" not in excluded, excluded
    screening = etree.fromstring((site / "screening.html").read_bytes(), etree.HTMLParser())
    tallies = [" ".join("".join(cell.itertext()).split()) for cell in screening.xpath("//td[@data-label='Full text']")]
    assert any("1 excluded · 1 not retrieved" in tally for tally in tallies), tallies
    not_retrieved = next(line.split(",")[0] for line in
                         (two_run_review / "screening" / "full-text" / "ann.csv").read_text().splitlines()
                         if ",not-retrieved," in line)
    page = (site / "records" / f"{page_slug(not_retrieved)}.html").read_text()
    assert "Its full text could not be retrieved, so it was not assessed for eligibility." in page
    code, out, _ = sitegen("screen", "status", two_run_review)
    assert code == 0 and "1 excluded, 1 not retrieved" in out


def test_a_label_in_chinese_wraps_to_the_width_it_is_drawn_at():
    # Labels wrapped by character count: a CJK character is drawn about twice as wide, so a reason label in
    # Chinese ran into the number columns.
    import unicodedata

    chars = 40
    lines = prisma_svg._wrap("因为研究对象不是啮齿类动物而被排除的报告" * 3, chars)
    assert len(lines) > 1
    assert all(sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line) <= chars for line in lines)
    assert prisma_svg._wrap("Population not in scope", chars) == ["Population not in scope"]


@pytest.mark.parametrize(("quiet", "said"), [(1, "Run 3 identified no new record and adds nothing."),
                                             (2, "Runs 3, 4 identified no new record and add nothing.")])
def test_the_legend_names_runs_that_identified_nothing_in_plain_english(two_run_review, quiet, said):
    counts = open_review(two_run_review).facts.prisma
    nothing = counts.runs[1].model_copy(update={name: 0 for name in ("identified_databases", "identified_registers",
                                                                      "identified_other_methods")})
    runs = [*counts.runs, *(nothing.model_copy(update={"run": 3 + n}) for n in range(quiet))]
    svg = etree.fromstring(str(prisma_svg.render(counts.model_copy(update={"runs": runs}), {}, standalone=True)).encode())
    legend = " ".join(svg.xpath("//*[local-name()='text'][@class='note']/text()"))
    assert said in legend and "(s)" not in legend


def test_the_legend_never_says_a_run_a_source_did_not_answer_identified_no_new_record(two_run_review):
    """A run whose sources were down found nothing of what they hold: "no new record" would be the silent
    negative the site must never show (a run that answered in full and found nothing is still said so)."""
    counts = open_review(two_run_review).facts.prisma
    nothing = counts.runs[1].model_copy(update={name: 0 for name in ("identified_databases", "identified_registers",
                                                                      "identified_other_methods")})
    runs = [*counts.runs, nothing.model_copy(update={"run": 3, "incomplete": ["europepmc", "openalex"]}),
            nothing.model_copy(update={"run": 4, "incomplete": []})]
    svg = etree.fromstring(str(prisma_svg.render(counts.model_copy(update={"runs": runs}), {}, standalone=True)).encode())
    legend = " ".join(" ".join(svg.xpath("//*[local-name()='text'][@class='note']/text()")).split())
    assert "Run 4 identified no new record and adds nothing." in legend
    assert "Run 3 identified no new record, but not every source answered it in full: that is no sign there " \
           "were none." in legend
    assert "Runs 3, 4" not in legend


def test_an_updated_review_draws_only_its_new_searches_in_the_arm_of_new_studies(sitegen, two_run_review, tmp_path):
    """Published after runs 1 and 2, then searched twice more: the arm of new studies has a column for runs 3
    and 4 only, and its total (New) is their sum, the CSV's numbers; it showed every run and the whole review
    (All), so previous (2) + new beside a total of the whole review's studies read as more than the total."""
    review = two_run_review
    ids = [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()]
    undecided = next(i for i in ids if i in _europepmc_ids(CORE[3]))  # run 2's record awaiting screening
    code, _, err = sitegen("publish", review, "--out", tmp_path / "v1", "--now", "2026-02-15T00:00:00Z")
    assert code == 0, err
    for ris, source, at in (("jstor_ris.ris", "Scopus", "2026-03-01T00:00:00Z"),
                            ("example_full.ris", "Embase", "2026-03-08T00:00:00Z")):
        code, _, err = sitegen("import", review, FIXTURES / "ris" / ris, "--source", source, "--at", at)
        assert code == 0, err
    added = [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()
             if json.loads(line)["id"] not in ids]
    with (review / "screening" / "title-abstract" / "ann.csv").open("a") as rows:  # one of run 3's excluded, and
        rows.write(f"{added[0]},exclude,,\n{undecided},include,,\n")  # run 2's undecided record included since
    with (review / "screening" / "full-text" / "ann.csv").open("a") as rows:
        rows.write(f"{undecided},include,,\n")
    site = tmp_path / "site"
    build(review, site, environ={})
    counts = json.loads((site / "downloads" / "prisma.json").read_text())
    new = counts["new_searches"]
    assert (counts["template"], counts["new_runs_from"], counts["previous_studies"]) == ("updated", 3, 2)
    assert new["identified_databases"] == sum(run["identified_databases"] for run in counts["runs"][2:]) > 0
    assert (new["screened"], new["excluded_screening"], counts["new_studies_earlier_runs"]) == (1, 1, 1)
    flat = flatten(counts)
    page = (site / "index.html").read_bytes()
    tree = etree.fromstring(page, etree.HTMLParser())
    heads = tree.xpath("//table[contains(@class, 'prisma-counts')]/thead//th/text()")
    assert heads == ["Box", "Run 3", "Run 4", "New"]
    for svg in ((site / "downloads" / "prisma.svg").read_bytes(), _inline_svg(page)):
        drawn = drawn_numbers(svg)
        assert all(expected_value(flat, key) == value for key, value in drawn.items())
        assert not any(key.startswith(("runs.0.", "runs.1.")) for key in drawn)  # the previous version's runs
        assert not {"identified_databases", "screened", "excluded_screening"} & set(drawn)  # the whole review's
        assert drawn["new_searches.screened"] == drawn["runs.2.screened"] + drawn["runs.3.screened"] == 1
        # previous + new = total, and the new studies are the new searches' and those earlier runs found
        assert drawn["previous_studies"] + drawn["new_studies"] == drawn["studies_included"] == 3
        assert drawn["new_searches.studies_included"] + drawn["new_studies_earlier_runs"] == drawn["new_studies"]
        text = " ".join("".join(etree.fromstring(svg).itertext()).split())
        assert "Runs 1, 2 came before it and are not drawn" in text
        assert "include 1 study and 1 report identified before the previous version and included since" in text
    # the table says the same, and the CSV's arm of new studies holds the New column's numbers
    tabled = {td.get("data-count"): int(td.text) for td in tree.xpath("//table[contains(@class, 'prisma-counts')]//td")
              if td.get("data-count")}
    assert all(expected_value(flat, key) == value for key, value in tabled.items())
    assert tabled["previous_studies"] + tabled["new_studies"] == tabled["studies_included"]
    filled = {row[0]: row[-1] for row in read_csv((site / "downloads" / "prisma2020.csv").read_text())[1:]}
    for column, key in (("database_results", "identified_databases"), ("duplicates", "duplicates_removed"),
                        ("records_screened", "screened"), ("records_excluded", "excluded_screening"),
                        ("dbr_sought_reports", "reports_sought"), ("dbr_assessed", "reports_assessed")):
        assert filled[column] == str(tabled[f"new_searches.{key}"]) == str(new[key]), column
    code, out, _ = sitegen("prisma", review)
    assert code == 0 and "new searches (runs 3, 4, since the previous version" in out
    assert "\n  screened: 1\n" in out  # the new searches', beside the whole review's


def test_csv_puts_an_import_by_other_methods_in_the_box_it_says_and_never_guesses_citation_searching(
        sitegen, tmp_path):
    """An import by other methods counts where its --source or --description says (a file's name alone says
    nothing): citation searching only when it says so, and one that says no kind is labelled as such."""
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    entry = "TY  - JOUR\nTI  - {title}\nAU  - Smith, J\nPY  - 2020\nER  - \n"
    imports = [("sites.ris", ["Memory in rats", "Sleep in mice"], ["--description", "Hand search of charity websites"]),
               ("asked.ris", ["Pain in dogs"], ["--source", "Experts contacted"]),
               ("more.ris", ["Fear in fish", "Play in cats", "Diet in cows"], [])]

    def filled() -> dict[str, list[str]]:
        code, out, err = sitegen("export", review, "--format", "prisma2020-csv")
        assert code == 0, out + err
        rows = read_csv(out)
        return {row[0]: row for row in rows[1:] if row[0] != "NA"}

    for day, (name, titles, options) in enumerate(imports, start=2):
        (tmp_path / name).write_text("".join(entry.format(title=title) for title in titles), encoding="utf-8")
        code, out, err = sitegen("import", review, tmp_path / name, "--method", "other", *options,
                                 "--at", f"2026-02-0{day}T00:00:00Z")
        assert code == 0, out + err
        if name == "asked.ris":  # every import so far says its kind: no citation searching
            rows = filled()
            assert [rows[box][-1] for box in ("website_results", "organisation_results", "citations_results")] == \
                ["2", "1", "NA"]
    rows = filled()
    assert [rows[box][-1] for box in ("website_results", "organisation_results", "citations_results")] == \
        ["2", "1", "3"]
    # the file imported with neither says no kind: its box says so, in the diagram's text and the description
    assert rows["citations_results"][3:5] == ["Records identified from: Other methods, kind not recorded",
                                              "Other methods, kind not recorded"]
