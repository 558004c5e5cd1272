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
