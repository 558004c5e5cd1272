"""PRISMA 2020 counts in hard review histories, each computed by hand from the statement's flow diagram and
compared with what sitegen derives: the JSON, and the PRISMA2020 package's CSV."""

from __future__ import annotations

import csv
import io
import json
import shutil

import httpx
import pytest
from conftest import EXAMPLE, FIXTURES
from http_mocks import json_response
from lxml import etree
from test_prisma import (  # noqa: F401  (two_run_review: a fixture)
    CORE,
    STRATEGIES,
    SYNERGY,
    counts_of,
    europepmc_copy_of,
    import_other_methods,
    two_run_review,
)

from sitegen.commands import add_monitor, update
from sitegen.living.prisma import other_method
from sitegen.review.models import Strategy
from sitegen.site import prisma_svg
from sitegen.site.prisma_csv import prisma2020_csv
from sitegen.sources.settings import SourceSettings
from sitegen.workspace import open_review

WEBSITE_EXPORT = FIXTURES / "prisma" / "citation.ris"  # a real RIS export of one paper, as a website gives it


def csv_values(review) -> dict[str, str]:
    workspace = open_review(review)
    text = prisma2020_csv(workspace.facts.prisma, workspace.facts.reason_labels)
    return {row["data"]: row["n"] for row in csv.DictReader(io.StringIO(text)) if row["data"] != "NA"}


def test_citation_searching_and_websites_are_each_counted_in_their_own_box(sitegen, two_run_review, tmp_path):  # noqa: F811
    """Two databases, then a published version, then other methods: citation searching found two new records
    (and one known), a search of websites one. The template has a box for each, and the new searches' arm
    holds both; the databases' boxes of that arm are empty."""
    assert sitegen("publish", two_run_review, "--out", tmp_path / "site", "--now", "2026-02-02T00:00:00Z")[0] == 0
    import_other_methods(two_run_review, "2026-03-01T00:00:00Z", [SYNERGY[5], SYNERGY[6], SYNERGY[0]])
    code, out, err = sitegen("import", two_run_review, WEBSITE_EXPORT, "--source", "Websites",
                             "--at", "2026-03-08T00:00:00Z")
    assert code == 0, out + err
    counts = counts_of(sitegen, two_run_review)
    assert counts["identified_other_by_source"] == {"Websites": 1, "openalex": 2}
    assert (counts["previous_from"], counts["new_runs_from"], counts["previous_studies"]) == ("version", 3, 2)
    values = csv_values(two_run_review)
    assert {key: values[key] for key in ("website_results", "organisation_results", "citations_results",
                                         "database_results", "previous_studies", "total_studies")} == {
        "website_results": "1", "organisation_results": "NA", "citations_results": "2",
        "database_results": "0", "previous_studies": "2", "total_studies": "2"}


def test_a_study_registers_export_counts_in_the_registers_box(sitegen, two_run_review):  # noqa: F811
    """Two databases, then an export of a trial register imported by its name: PRISMA 2020 counts its records
    under "Registers" on the databases-and-registers route (it was taken for other methods, citation searching,
    by default, and was counted as a database with --method database)."""
    export = FIXTURES / "ris" / "jstor_ris.ris"  # a real export of four records; what matters is the source named
    code, out, err = sitegen("import", two_run_review, export, "--source", "ClinicalTrials.gov",
                             "--at", "2026-03-01T00:00:00Z")
    assert code == 0, out + err
    assert "counted as a register (ClinicalTrials.gov)" in out
    counts = counts_of(sitegen, two_run_review)
    third = counts["runs"][2]
    assert (third["identified_registers"], third["identified_databases"], third["identified_by_source"],
            third["identified_other_methods"]) == (4, 0, {"ClinicalTrials.gov": 4}, 0)
    # the review: 9 records from the two databases, 4 from the register; the register's are screened with them
    assert (counts["identified_databases"], counts["identified_registers"], counts["records"],
            counts["awaiting_screening"]) == (9, 4, 11, 5)
    # no version published: the CSV's one arm is the whole review's, the databases' 9 beside the register's 4
    values = csv_values(two_run_review)
    assert (values["register_results"], values["register_specific_results"], values["database_results"],
            values["citations_results"]) == ("4", "ClinicalTrials.gov, 4", "9", "NA")


# Records of the two-run review (see two_run_review): A, found by both databases in run 1, is included.
A = "10.1002/hipo.22095"


def rerun_unchanged(review, at: str) -> None:
    """Run the saved search again, the providers returning what they returned in run 2: nothing new."""
    served = {"openalex": SYNERGY[:5], "europepmc": [europepmc_copy_of(SYNERGY[0], CORE[0]),
                                                     europepmc_copy_of(SYNERGY[1], CORE[1]), CORE[2], CORE[3]]}

    def providers(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps({"meta": {"count": 5, "next_cursor": None}, "results": served["openalex"]}))
        return json_response(json.dumps({"hitCount": 4, "resultList": {"result": served["europepmc"]}}))

    assert update(review, at, "live", settings=SourceSettings(), transport=httpx.MockTransport(providers)).complete


def _record(review, record_id: str) -> dict:
    return next(record for line in (review / "records.jsonl").read_text().splitlines()
                if (record := json.loads(line))["id"] == record_id)


def _add_decisions(review, stage: str, rows: str) -> None:
    with (review / "screening" / stage / "ann.csv").open("a") as decisions:
        decisions.write(rows)


def _flow(counts: dict, *names: str) -> tuple:
    return tuple(counts[name] for name in names)


FLOW = ("identified_databases", "duplicates_removed", "records", "screened", "excluded_screening",
        "reports_sought", "reports_assessed", "studies_included", "reports_included")


def test_a_duplicate_a_reviewer_confirms_after_screening_it_is_removed_as_a_duplicate(sitegen, two_run_review,  # noqa: F811
                                                                                     tmp_path):
    """Run 3 imports from Embase an entry of record A that lost its identifiers and a word of its title: a
    possible duplicate, so a record of its own, screened and included. The reviewer then confirms it is A."""
    a = _record(two_run_review, A)
    authors = "".join(f"AU  - {author['family']}, {author['given']}\n" for author in a["author"])
    export = tmp_path / "embase.ris"
    export.write_text(f"TY  - JOUR\nTI  - {a['title'].rsplit(' ', 2)[0]}\n{authors}"
                      f"PY  - {a['issued']['date-parts'][0][0]}\nER  - \n")
    code, out, err = sitegen("import", two_run_review, export, "--source", "Embase", "--at", "2026-03-01T00:00:00Z")
    assert code == 0 and "Possible duplicates" in out, out + err
    twin = next(json.loads(line)["id"] for line in (two_run_review / "records.jsonl").read_text().splitlines()
                if json.loads(line)["id"].startswith("ref:"))
    _add_decisions(two_run_review, "title-abstract", f"{twin},include,,\n")
    _add_decisions(two_run_review, "full-text", f"{twin},include,,\n")
    # by hand: 10 identified (9 + Embase 1), 2 duplicates, 8 records, 7 screened, 3 studies (A, F, the twin)
    assert _flow(counts_of(sitegen, two_run_review), *FLOW) == (10, 2, 8, 7, 2, 5, 4, 3, 3)
    (two_run_review / "duplicates.csv").write_text(f"record_id,duplicate_of,decision,reviewer,note\n"
                                                   f"{twin},{A},same,ann,\n")
    assert sitegen("check", two_run_review)[0] == 0
    counts = counts_of(sitegen, two_run_review)
    # the twin is identified in run 3 and removed there as a duplicate; its screening no longer counts
    assert _flow(counts, *FLOW) == (10, 3, 7, 6, 2, 4, 3, 2, 2)
    assert _flow(counts["runs"][2], "identified_by_source", "duplicates_removed", "records", "screened") == \
        ({"Embase": 1}, 1, 0, 0)
    # no version published: both studies (A and F) are new, whichever run found them
    assert _flow(counts, "template", "previous_studies", "new_studies", "new_runs_from") == ("new", 0, 2, None)


def test_a_record_excluded_at_title_and_abstract_then_included_by_adjudication_is_sought(sitegen, tmp_path):
    """The example: two reviewers disagreed on hipo.22066 in batch 1 and adjudication excluded it; the
    adjudication now includes it. It leaves 'excluded' for 'reports sought', awaiting its full text."""
    review = tmp_path / "review"
    shutil.copytree(EXAMPLE, review)
    before = counts_of(sitegen, review)
    adjudication = review / "screening" / "title-abstract" / "adjudication.csv"
    adjudication.write_text(adjudication.read_text().replace("10.1002/hipo.22066,exclude,", "10.1002/hipo.22066,include,"))
    assert sitegen("check", review)[0] == 0
    after = counts_of(sitegen, review)
    names = ("screened", "excluded_screening", "reports_sought", "reports_assessed", "awaiting_full_text",
             "studies_included")
    assert _flow(before, *names) == (270, 230, 40, 38, 2, 38)
    assert _flow(after, *names) == (270, 229, 41, 38, 3, 38)
    assert _flow(after["runs"][0], *names) == (260, 221, 39, 38, 1, 38)


def test_an_export_imported_again_is_not_identified_again(sitegen, two_run_review):  # noqa: F811
    export = FIXTURES / "ris" / "jstor_ris.ris"
    for at in ("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"):
        assert sitegen("import", two_run_review, export, "--at", at)[0] == 0
    counts = counts_of(sitegen, two_run_review)
    third, fourth = counts["runs"][2:]
    assert (third["identified_by_source"], third["records"]) == ({"JSTOR": 4}, 4)
    # the second import returned the four records again; none is new, none a duplicate removed
    assert (fourth["returned_by_source"], fourth["identified_by_source"], fourth["records"],
            fourth["duplicates_removed"]) == ({"JSTOR": 4}, {"JSTOR": 0}, 0, 0)
    assert _flow(counts, "identified_databases", "duplicates_removed", "records", "awaiting_screening") == \
        (13, 2, 11, 5)


def test_a_retracted_study_excluded_after_a_version_under_an_amended_protocol(sitegen, two_run_review,  # noqa: F811
                                                                              tmp_path, monkeypatch):
    """Version 1 includes A and F; A is found retracted, the protocol is amended to add the reason, A is
    excluded at full text; a third run finds nothing new. Previous studies are those of version 1 still
    included, and the new searches' arm is empty."""
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)
    assert sitegen("publish", two_run_review, "--out", tmp_path / "site", "--now", "2026-02-02T00:00:00Z")[0] == 0
    protocol = two_run_review / "protocol.md"
    protocol.write_text(protocol.read_text().replace(
        "exclusion_reasons:\n", "exclusion_reasons:\n  - code: retracted\n    label: Retracted\n"))
    assert sitegen("protocol", "amend", two_run_review, "--at", "2026-02-10T00:00:00Z",
                   "--reason", "retracted studies are excluded")[0] == 0
    full_text = two_run_review / "screening" / "full-text" / "ann.csv"
    full_text.write_text(full_text.read_text().replace(f"{A},include,,", f"{A},exclude,retracted,"))
    rerun_unchanged(two_run_review, "2026-03-01T00:00:00Z")
    assert sitegen("check", two_run_review)[0] == 0
    counts = counts_of(sitegen, two_run_review)
    assert _flow(counts, "reports_assessed", "excluded_full_text", "excluded_by_reason", "studies_included") == \
        (3, 2, {"retracted": 1, "wrong-population": 1}, 1)
    assert _flow(counts, "template", "previous_from", "previous_studies", "previous_removed", "new_studies",
                 "new_runs_from") == ("updated", "version", 1, 1, 0, 3)
    assert counts["runs"][2]["records"] == 0
    values = csv_values(two_run_review)
    assert _flow(values, "previous_studies", "database_results", "database_specific_results", "records_screened",
                 "new_studies", "total_studies") == ("1", "0", "Europe PMC, 0; OpenAlex, 0", "0", "0", "1")


def test_a_citation_search_not_reached_in_full_is_no_database(sitegen, tmp_path):
    """A database search and a citation search in one run; OpenAlex has no work for one seed, so the citation
    search is incomplete. By hand: 3 records from OpenAlex, 1 more by citation searching (the seed's other
    reference is one of the 3). The CSV listed the citation search among the databases, as "Citation searching
    (not reached in full), 0"; every output marks it on its own arm, and only there."""
    from test_citation_search import CITES_TWO, FIRST, SETTINGS, OpenAlex, new_review

    review = new_review(sitegen, tmp_path)
    strategies = [Strategy(source="openalex", query="search=object"),
                  Strategy(source="openalex", method="citations", query=f"references: {CITES_TWO}, W1")]
    assert not add_monitor(review, "both", strategies, FIRST, "live", settings=SETTINGS,
                           transport=httpx.MockTransport(OpenAlex(SYNERGY))).complete
    counts = counts_of(sitegen, review)
    assert _flow(counts, "identified_by_source", "identified_other_by_source", "records") == \
        ({"openalex": 3}, {"Citation searching": 1}, 4)
    assert counts["runs"][0]["incomplete"] == ["Citation searching"]
    values = csv_values(review)
    assert _flow(values, "database_results", "database_specific_results", "citations_results") == \
        ("3", "OpenAlex, 3", "1")
    code, out, _ = sitegen("prisma", review)
    assert code == 0
    assert "identified by source: OpenAlex 3\n" in out
    assert ("identified other by source: Citation searching 1 (not reached in full in run 1: records it holds may "
            "be missing)\n") in out
    workspace = open_review(review)
    svg = str(prisma_svg.render(workspace.facts.prisma, {}, standalone=True))
    numbers = {e.get("data-count"): "".join(e.itertext()) for e in etree.fromstring(svg.encode()).iter("{*}text")
               if e.get("data-count", "").startswith("identified_")}
    assert numbers["identified_by_source.openalex"].endswith("(n = 3)")
    assert numbers["identified_other_by_source.Citation searching"].endswith("(n = 1*)")
    description = prisma_svg.summary(workspace.facts.prisma, {})
    assert "from databases (OpenAlex 3)" in description
    assert "Other methods: 1 record identified (Citation searching 1 (not reached in full in run 1))" in description


def test_a_source_down_in_the_baseline_is_never_printed_as_a_bare_0(sitegen, tmp_path, monkeypatch):
    """Europe PMC does not answer the baseline: it identified nothing, which is no sign it holds nothing. The
    diagram and the CSV said so beside its 0; `sitegen prisma` printed the whole review's "europepmc: 0" bare."""
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")

    def europepmc_down(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps({"meta": {"count": 4, "next_cursor": None}, "results": SYNERGY[:4]}))
        return httpx.Response(503)

    assert not add_monitor(review, "watch", STRATEGIES, "2026-01-01T00:00:00Z", "live", settings=SourceSettings(),
                           transport=httpx.MockTransport(europepmc_down)).complete
    counts = counts_of(sitegen, review)
    assert _flow(counts, "identified_by_source", "records", "template") == ({"europepmc": 0, "openalex": 4}, 4, "new")
    code, out, _ = sitegen("prisma", review)
    assert code == 0
    assert ("identified by source: Europe PMC 0 (not reached in full in run 1: records it holds may be missing), "
            "OpenAlex 4\n") in out
    assert csv_values(review)["database_specific_results"] == "Europe PMC (not reached in full), 0; OpenAlex, 4"


@pytest.mark.parametrize(("source", "box"), [
    ("Websites", "websites"), ("Organisation websites", "websites"), ("Grey literature", "websites"),
    ("Google Scholar", "websites"), ("Search engines (Bing)", "websites"),
    ("Experts contacted", "organisations"), ("Manufacturers", "organisations"),
    ("Citation searching", "citations"), ("Citation searching (Google Scholar)", "citations"),
    ("Reference lists of included studies", "citations"),
    # Hand searching journals is none of the three, and a file's name says nothing: no box is guessed for them.
    ("Hand searching", None), ("export-2024.ris", None)])
def test_each_other_method_counts_in_the_box_its_name_says(source, box):
    assert other_method(source) == box


def test_records_found_with_a_web_search_engine_are_not_citation_searching(sitegen, two_run_review):  # noqa: F811
    """A review that searched Google Scholar by hand and imported what it found: PRISMA 2020 counts a search
    engine's records with the websites', and the CSV put them under citation searching."""
    code, out, err = sitegen("import", two_run_review, WEBSITE_EXPORT, "--source", "Google Scholar",
                             "--at", "2026-03-01T00:00:00Z")
    assert code == 0 and "counted as other methods (Google Scholar)" in out, out + err
    values = csv_values(two_run_review)
    assert _flow(values, "website_results", "organisation_results", "citations_results") == ("1", "NA", "NA")


def test_the_home_page_names_previous_studies_as_the_diagram_does(sitegen, two_run_review, tmp_path):  # noqa: F811
    """After a published version the diagram's previous studies are the version's; the caption under it said they
    were those of earlier searches."""
    from sitegen.commands import build

    assert sitegen("publish", two_run_review, "--out", tmp_path / "v", "--now", "2026-02-02T00:00:00Z")[0] == 0
    import_other_methods(two_run_review, "2026-03-01T00:00:00Z", [SYNERGY[5]])
    build(two_run_review, tmp_path / "site", environ={})
    page = etree.fromstring((tmp_path / "site" / "index.html").read_bytes(), etree.HTMLParser())
    caption = " ".join("".join(page.xpath("//figcaption[@id='prisma-caption']")[0].itertext()).split())
    assert "; studies from the previous version are counted apart from new ones." in caption
    svg = " ".join("".join(etree.fromstring((tmp_path / "site" / "downloads" / "prisma.svg").read_bytes()).itertext()).split())
    assert "Studies included in previous version of review" in svg and "earlier searches" not in svg + caption


def _locked_review(sitegen, tmp_path):
    """A new review with one reviewer per stage (one decision counts), its protocol locked."""
    review = tmp_path / "review"
    sitegen("init", review)
    config = review / "review.yaml"
    config.write_text(config.read_text().replace("site:", "screening:\n  title_abstract_reviewers: 1\n"
                                                          "  full_text_reviewers: 1\nsite:", 1))
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    return review


def _ris(*titles: tuple[str, str]) -> str:
    """RIS entries of one team's papers: (title, DOI or "" for none)."""
    return "".join(f"TY  - JOUR\nTI  - {title}\nAU  - Gamma, C\nAU  - Delta, D\nPY  - 2020\nJO  - Journal of Memory\n"
                   + (f"DO  - {doi}\n" if doi else "") + "ER  - \n" for title, doi in titles)


def test_two_studies_of_a_version_found_to_be_one_are_not_passed_for_what_it_published(sitegen, tmp_path):
    """An Embase export holds a paper twice, once without its DOI and a word more in the title: two records,
    both included, and version 1 publishes 2 studies. A reviewer then confirms they are one. By hand: 3 records
    identified, 1 duplicate removed, 2 screened, 1 study; of the version's 2 studies, 1 is still included and 1
    no longer counts. The box said "Studies included in previous version of review (n = 1)", which version 1
    never published."""
    review = _locked_review(sitegen, tmp_path)
    export = tmp_path / "embase.ris"
    export.write_text(_ris(("Object recognition memory after perirhinal lesions in mice", "10.1000/q1"),
                           ("Object recognition memory after perirhinal cortex lesions in mice", ""),
                           ("Context-dependent object memory in aged rats", "10.1000/r1")))
    assert sitegen("import", review, export, "--source", "Embase", "--at", "2026-01-02T00:00:00Z")[0] == 0
    twin = next(json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()
                if json.loads(line)["id"].startswith("ref:"))
    for stage, rows in (("title-abstract", f"10.1000/q1,include,,\n{twin},include,,\n10.1000/r1,exclude,,\n"),
                        ("full-text", f"10.1000/q1,include,,\n{twin},include,,\n")):
        (review / "screening" / stage / "ann.csv").write_text("record_id,decision,reason,note\n" + rows)
    assert sitegen("publish", review, "--out", tmp_path / "site", "--now", "2026-02-02T00:00:00Z")[0] == 0
    assert counts_of(sitegen, review)["studies_included"] == 2
    (review / "duplicates.csv").write_text(f"record_id,duplicate_of,decision,reviewer,note\n{twin},10.1000/q1,same,ann,\n")
    assert sitegen("check", review)[0] == 0
    counts = counts_of(sitegen, review)
    assert _flow(counts, "identified_databases", "duplicates_removed", "screened", "studies_included") == (3, 1, 2, 1)
    assert _flow(counts, "template", "previous_from", "previous_studies", "previous_removed", "new_studies") == \
        ("updated", "version", 1, 1, 0)
    workspace = open_review(review)
    svg = " ".join("".join(etree.fromstring(str(prisma_svg.render(workspace.facts.prisma, {}, standalone=True))
                                            .encode()).itertext()).split())
    assert "Studies included in previous version of review and still included (n = 1)" in svg
    assert "(of the 2 it included, 1 no longer is)" in prisma_svg.summary(workspace.facts.prisma, {})


def test_two_studies_of_a_version_since_linked_as_versions_of_one_are_not_passed_for_what_it_published(sitegen,
                                                                                                    tmp_path):
    """As above, but the reviewer links the two records as a preprint and its journal version (one study, two
    reports) instead of confirming them duplicates. By hand: version 1 published 2 studies; 1 of them still counts,
    1 no longer does, and the study has 2 reports, both the version's. The box said the version's 1 study, with
    nothing removed, counting the version's studies by today's links."""
    review = _locked_review(sitegen, tmp_path)
    export = tmp_path / "embase.ris"
    export.write_text(_ris(("Object recognition memory after perirhinal lesions in mice", "10.1000/q1"),
                           ("Perirhinal lesions and object memory in mice: a preprint", "10.1101/q1")))
    assert sitegen("import", review, export, "--source", "Embase", "--at", "2026-01-02T00:00:00Z")[0] == 0
    for stage in ("title-abstract", "full-text"):
        (review / "screening" / stage / "ann.csv").write_text("record_id,decision,reason,note\n"
                                                              "10.1000/q1,include,,\n10.1101/q1,include,,\n")
    assert sitegen("publish", review, "--out", tmp_path / "site", "--now", "2026-02-02T00:00:00Z")[0] == 0
    assert counts_of(sitegen, review)["studies_included"] == 2
    path = review / "records.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row.setdefault("custom", {})["other_versions"] = [other for other in ("10.1000/q1", "10.1101/q1")
                                                           if other != row["id"]]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    counts = counts_of(sitegen, review)
    assert _flow(counts, "template", "previous_studies", "previous_removed", "previous_reports", "new_studies",
                 "new_reports", "studies_included", "reports_included") == ("updated", 1, 1, 2, 0, 0, 1, 2)
    workspace = open_review(review)
    assert "(of the 2 it included, 1 no longer is)" in prisma_svg.summary(workspace.facts.prisma, {})


def _imported(sitegen, review, path, at: str, *source: str) -> list[str]:
    """Import one file as a run of its own at `at`; the ids of the records it added."""
    code, out, err = sitegen("import", review, path, "--at", at, *source, "--json")
    assert code == 0, out + err
    (imported,) = json.loads(out)["files"]
    return imported["new_ids"]


def _prisma2020_csv(sitegen, review, tmp_path) -> dict[str, str]:
    out = tmp_path / f"prisma2020-{len(list(tmp_path.glob('prisma2020-*.csv')))}.csv"
    code, _, err = sitegen("export", review, "--format", "prisma2020-csv", "--out", out)
    assert code == 0, err
    return {row["data"]: row["n"] for row in csv.DictReader(io.StringIO(out.read_text(encoding="utf-8")))
            if row["data"] != "NA"}


def test_a_new_review_whose_exports_were_imported_at_different_times_is_a_new_review(sitegen, tmp_path):
    """Embase exported at one time, JSTOR at another, citation searching at a third: three runs of a review that
    has published no version. PRISMA 2020's updated-review template is for an update of a published review:
    before one, every run's records are the new review's (it was drawn as updated, its "previous" studies those
    of the first two imports, and the CSV's arm held the citation search alone: 0 from databases, 0 screened).
    Once a version is published, a later run's studies are new beside the version's previous ones."""
    review = _locked_review(sitegen, tmp_path)
    embase = _imported(sitegen, review, FIXTURES / "ris" / "ieee_ris.ris", "2026-01-05T00:00:00Z",
                       "--source", "Embase")
    jstor = _imported(sitegen, review, FIXTURES / "ris" / "jstor_ris.ris", "2026-01-12T00:00:00Z")  # names JSTOR
    cited = _imported(sitegen, review, WEBSITE_EXPORT, "2026-01-19T00:00:00Z", "--source", "Citation searching")
    assert (len(embase), len(jstor), len(cited)) == (2, 4, 1)
    # every record screened; included: one of Embase's and the citation search's; one of JSTOR's sought and excluded
    _add_decisions(review, "title-abstract", "record_id,decision,reason,note\n" + "".join(
        f"{rid},{'include' if rid in (embase[0], jstor[0], cited[0]) else 'exclude'},,\n"
        for rid in embase + jstor + cited))
    _add_decisions(review, "full-text", f"record_id,decision,reason,note\n{embase[0]},include,,\n"
                                        f"{jstor[0]},exclude,wrong-population,\n{cited[0]},include,,\n")
    code, out, err = sitegen("check", review)
    assert code == 0, out + err

    counts = counts_of(sitegen, review)
    assert _flow(counts, "template", "previous_from", "new_runs_from", "previous_studies", "new_studies",
                 "studies_included") == ("new", None, None, 0, 2, 2)
    assert [run["records"] for run in counts["runs"]] == [2, 4, 1]  # the living variant keeps a column per run
    # by hand: databases 2 + 4 = 6, all screened, 4 excluded, 2 sought and assessed, 1 excluded; citation 1
    assert _flow(counts, "identified_by_source", "identified_databases", "identified_other_by_source",
                 "screened", "excluded_screening", "reports_assessed", "excluded_full_text") == \
        ({"Embase": 2, "JSTOR": 4}, 6, {"Citation searching": 1}, 6, 4, 2, 1)
    values = _prisma2020_csv(sitegen, review, tmp_path)
    assert {key: values[key] for key in ("previous_studies", "database_results", "database_specific_results",
                                         "citations_results", "records_screened", "records_excluded",
                                         "dbr_assessed", "other_assessed", "new_studies", "total_studies")} == {
        "previous_studies": "NA", "database_results": "6", "database_specific_results": "Embase, 2; JSTOR, 4",
        "citations_results": "1", "records_screened": "6", "records_excluded": "4", "dbr_assessed": "2",
        "other_assessed": "1", "new_studies": "2", "total_studies": "2"}

    # Version 1 published; then Embase is searched again and finds one record, included
    assert sitegen("publish", review, "--out", tmp_path / "site", "--now", "2026-01-26T00:00:00Z")[0] == 0
    later = _imported(sitegen, review, FIXTURES / "ris" / "psycinfo_ris.ris", "2026-02-02T00:00:00Z",
                      "--source", "Embase")
    assert len(later) == 1
    _add_decisions(review, "title-abstract", f"{later[0]},include,,\n")
    _add_decisions(review, "full-text", f"{later[0]},include,,\n")
    counts = counts_of(sitegen, review)
    assert _flow(counts, "template", "previous_from", "new_runs_from", "previous_studies", "new_studies",
                 "studies_included") == ("updated", "version", 4, 2, 1, 3)
    values = _prisma2020_csv(sitegen, review, tmp_path)  # the new-studies arm is the run after the version
    assert {key: values[key] for key in ("previous_studies", "database_results", "database_specific_results",
                                         "citations_results", "records_screened", "new_studies",
                                         "total_studies")} == {
        "previous_studies": "2", "database_results": "1", "database_specific_results": "Embase, 1",
        "citations_results": "NA", "records_screened": "1", "new_studies": "1", "total_studies": "3"}


def test_a_previous_study_whose_record_is_confirmed_a_duplicate_of_a_new_searchs_record_is_never_new(sitegen,
                                                                                                      tmp_path):
    """Version 1 included one study, found in an Embase export. A new search (MEDLINE) then finds the same paper
    under another record (no DOI, a word more in its title), which a reviewer screens and includes before anyone
    sees it is the same; a reviewer then confirms the version's record a duplicate of the new one. By hand, from
    PRISMA 2020's updated-review template: 1 study from the previous version, still included; 0 new studies, and
    the new searches included none (studies from the previous version are never new); its report, found and
    assessed by the new search, is a report of the new searches: 0 previous reports, 1 new, 1 in all. The new
    searches' arm counted the previous study as one of its own (1) beside 0 new studies."""
    review = _locked_review(sitegen, tmp_path)
    embase, medline = tmp_path / "embase.ris", tmp_path / "medline.ris"
    embase.write_text(_ris(("Object recognition memory after perirhinal lesions in mice", "10.1000/q1"),
                           ("Context-dependent object memory in aged rats", "10.1000/r1")))
    medline.write_text(_ris(("Object recognition memory after perirhinal cortex lesions in mice", "")))
    assert sitegen("import", review, embase, "--source", "Embase", "--at", "2026-01-02T00:00:00Z")[0] == 0
    for stage, rows in (("title-abstract", "10.1000/q1,include,,\n10.1000/r1,exclude,,\n"),
                        ("full-text", "10.1000/q1,include,,\n")):
        (review / "screening" / stage / "ann.csv").write_text("record_id,decision,reason,note\n" + rows)
    assert sitegen("publish", review, "--out", tmp_path / "site", "--now", "2026-02-02T00:00:00Z")[0] == 0
    (twin,) = _imported(sitegen, review, medline, "2026-03-01T00:00:00Z", "--source", "MEDLINE")
    _add_decisions(review, "title-abstract", f"{twin},include,,\n")
    _add_decisions(review, "full-text", f"{twin},include,,\n")
    (review / "duplicates.csv").write_text(f"record_id,duplicate_of,decision,reviewer,note\n10.1000/q1,{twin},same,ann,\n")
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    counts = counts_of(sitegen, review)
    assert _flow(counts, "template", "new_runs_from", "previous_studies", "previous_removed", "new_studies",
                 "new_studies_earlier_runs", "studies_included") == ("updated", 2, 1, 0, 0, 0, 1)
    new = counts["new_searches"]
    assert _flow(new, "identified_databases", "screened", "reports_assessed", "excluded_full_text",
                 "studies_included", "reports_included") == (1, 1, 1, 0, 0, 1)
    assert _flow(counts, "previous_reports", "new_reports", "reports_included") == (0, 1, 1)
    assert [run["studies_included"] for run in counts["runs"]] == [1, 0]  # the study's first run: the version's
    values = _prisma2020_csv(sitegen, review, tmp_path)
    assert _flow(values, "previous_studies", "new_studies", "total_studies", "new_reports", "total_reports") == \
        ("1", "0", "1", "1", "1")
