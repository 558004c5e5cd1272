"""PRISMA 2020 counts in hard review histories, each computed by hand from the statement's flow diagram and
compared with what sitegen derives: the JSON, and the PRISMA2020 package's CSV."""

from __future__ import annotations

import csv
import io

from conftest import FIXTURES
from test_prisma import SYNERGY, counts_of, import_other_methods, two_run_review  # noqa: F401  (a fixture)

from sitegen.site.prisma_csv import prisma2020_csv
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
    values = csv_values(two_run_review)
    assert (values["register_results"], values["register_specific_results"], values["database_results"],
            values["citations_results"]) == ("4", "ClinicalTrials.gov, 4", "0", "NA")
