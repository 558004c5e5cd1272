"""duplicates.csv: reviewers' decisions on probable duplicates, checked, and taking effect by derivation only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import review_of_ris, tree_bytes
from lxml import etree
from test_check import check_reports
from test_prisma import FLOW_FIELDS, SYNERGY, doi, flatten, two_run_review  # noqa: F401  (a fixture this module's tests use)
from test_screening_page import filter_count, headline

from sitegen.living.duplicates import Duplicate, confirmed_duplicates, duplicate_problems, suggestions
from sitegen.living.ledger import append
from sitegen.living.merge import integrate
from sitegen.records.model import Record, model_data
from sitegen.review.folder import DuplicateRow, Review, load_review
from sitegen.review.models import DuplicateDecision, ImportPayload
from sitegen.review.transaction import Transaction
from sitegen.review.write import jsonl
from sitegen.site.pages import page_slug
from sitegen.site.records import STANDING_LABELS
from sitegen.site.studies import doi_url
from sitegen.sources.openalex import work_to_record
from sitegen.workspace import open_review

HEADER = "record_id,duplicate_of,decision,reviewer,note\n"
TWIN = "pmcid:PMC9999999"
ORIGINAL = doi(SYNERGY[1])  # a real OpenAlex work the two-run review found in its first run


def twin_of(record: Record, pmcid: str) -> Record:
    """The record as a second database exports it: under only a PMCID, which shares no identifier with the
    original, and without its authors, pages and abstract, so the matcher calls the pair probable, not the same
    (one long abstract in both, with title, journal, year and volume, makes an author-less pair the same)."""
    data = model_data(record)
    for key in ("author", "page", "abstract"):
        data.pop(key, None)
    for key in ("DOI", "PMID", "PMCID", "URL"):
        data.pop(key, None)
    data["custom"].pop("openalex", None)
    data["custom"]["sources"] = ["europepmc"]
    return Record.model_validate({**data, "id": f"pmcid:{pmcid}", "PMCID": pmcid})


def import_twin(review_dir: Path, at: str, pmcid: str) -> str:
    """A database import, at `at`, of a twin of ORIGINAL (a third run)."""
    review, problems = load_review(review_dir)
    assert review is not None, problems
    merged = integrate(review.records, [twin_of(review.records[ORIGINAL], pmcid)])
    transaction = Transaction(review_dir)
    append(transaction, review, at, [ImportPayload(source="europepmc", method="database", record_ids=merged.ids,
                                                   description="an export of the same search from Europe PMC")])
    transaction.write("records.jsonl", jsonl(model_data(record) for record in merged.records.values()))
    transaction.commit()
    return merged.ids[0]


@pytest.fixture
def twin_review(two_run_review, sitegen):  # noqa: F811
    """The two-run review and a third run: a database export brought in ORIGINAL's twin, which a reviewer
    screened (included at title and abstract, excluded at full text) before anyone saw it was a twin."""
    twin = import_twin(two_run_review, "2026-03-01T00:00:00Z", TWIN[len("pmcid:"):])
    assert twin == TWIN
    with (two_run_review / "screening" / "title-abstract" / "ann.csv").open("a") as rows:
        rows.write(f"{TWIN},include,,\n")
    with (two_run_review / "screening" / "full-text" / "ann.csv").open("a") as rows:
        rows.write(f"{TWIN},exclude,wrong-population,\n")
    code, out, err = sitegen("check", two_run_review)
    assert code == 0, out + err
    return two_run_review


def write_decisions(review: Path, *rows: str) -> None:
    (review / "duplicates.csv").write_text(HEADER + "".join(f"{row}\n" for row in rows))


def counts_of(sitegen, review: Path) -> dict:
    code, out, err = sitegen("prisma", review, "--json")
    assert code == 0, out + err
    return json.loads(out)


# --------------------------------------------------------------------------- taking effect


def test_a_confirmed_duplicate_is_removed_not_screened(sitegen, twin_review):
    before = counts_of(sitegen, twin_review)
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,ann,one paper exported by two databases")
    code, out, err = sitegen("check", twin_review)
    assert code == 0, out + err
    after = counts_of(sitegen, twin_review)
    # Identified as before; removed as a duplicate instead of counted as a record screened and excluded.
    assert after["identified_databases"] == before["identified_databases"]
    assert after["duplicates_removed"] == before["duplicates_removed"] + 1
    assert (after["records"], after["screened"]) == (before["records"] - 1, before["screened"] - 1)
    assert after["reports_assessed"] == before["reports_assessed"] - 1
    assert after["excluded_by_reason"]["wrong-population"] == before["excluded_by_reason"]["wrong-population"] - 1
    third = after["runs"][2]  # the run that brought the twin: it identified one record, a duplicate
    assert (third["identified_by_source"], third["duplicates_removed"], third["records"]) == ({"europepmc": 1}, 1, 0)
    for name in FLOW_FIELDS:  # the runs still add up to the whole review, and each flow in itself
        if not isinstance(after[name], dict):
            assert sum(run[name] for run in after["runs"]) == after[name], name
    for flow in [after, *after["runs"]]:
        identified = flow["identified_databases"] + flow["identified_registers"] + flow["identified_other_methods"]
        assert identified - flow["duplicates_removed"] == flow["records"]
        assert flow["records"] == sum(flow[f"{p}{name}"] for p in ("", "other_")
                                      for name in ("screened", "awaiting_screening"))


def test_a_duplicate_leaves_screening_and_keeps_its_files(sitegen, twin_review):
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,ann,")
    decisions = tree_bytes(twin_review / "screening")
    workspace = open_review(twin_review)
    facts = workspace.facts
    assert facts.standings[TWIN].kind == "duplicate" and facts.duplicates[TWIN].canonical == ORIGINAL
    assert all(TWIN not in outcomes for outcomes in facts.outcomes.values())
    _, overall = facts.screening_status
    assert overall[0].records == len(workspace.review.records) - 1
    assert tree_bytes(twin_review / "screening") == decisions  # nothing deleted or rewritten


def test_a_pair_decided_different_stays_two_records(sitegen, twin_review):
    before = counts_of(sitegen, twin_review)
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},different,ann,the PMCID is another paper")
    assert counts_of(sitegen, twin_review) == before


# --------------------------------------------------------------------------- bad inputs: file, line, exit 1


@pytest.mark.parametrize(("rows", "line", "fragment"), [
    ([f"pmid:1,{ORIGINAL},same,ann,"], 2, "'pmid:1' is not in records.jsonl"),
    ([f"{ORIGINAL},{ORIGINAL},same,ann,"], 2, "is paired with itself"),
    ([f"{TWIN},{ORIGINAL},maybe,ann,"], 2, "decision"),
    ([f"{TWIN},{ORIGINAL},same,Ann Smith,"], 2, "reviewer"),
    ([f"{TWIN},{ORIGINAL},same,ann,", f"{ORIGINAL},{TWIN},different,bob,"], 3, "already decided on line 2"),
    ([f"{TWIN},{ORIGINAL},same,ann,", f"{TWIN},{ORIGINAL},same,bob,"], 3, "already decided on line 2"),
])
def test_a_bad_row_is_named_by_line(sitegen, twin_review, rows, line, fragment):
    write_decisions(twin_review, *rows)
    check_reports(sitegen, twin_review, "duplicates.csv", line, fragment)


def test_a_bad_header_is_named(sitegen, twin_review):
    (twin_review / "duplicates.csv").write_text(f"record_id,decision\n{TWIN},same\n")
    check_reports(sitegen, twin_review, "duplicates.csv", 1, "missing column(s) duplicate_of, reviewer")


def test_same_is_refused_for_records_that_cannot_be_one_work(sitegen, twin_review):
    # Its own DOI and PMID (ORIGINAL's are different: the reviewer's to overrule) and more that rules it out.
    other = doi(SYNERGY[0])
    write_decisions(twin_review, f"{other},{ORIGINAL},same,ann,")
    check_reports(sitegen, twin_review, "duplicates.csv", 2, "cannot be one work (an erratum")


def test_same_is_refused_when_the_group_would_join_two_works(sitegen, twin_review):
    """The twin alone is ORIGINAL's duplicate, and another record alone could be the twin's; pointing both
    at ORIGINAL would make one work of two records with different PMCIDs."""
    import_twin(twin_review, "2026-04-01T00:00:00Z", "PMC8888888")
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,ann,", f"pmcid:PMC8888888,{ORIGINAL},same,ann,")
    check_reports(sitegen, twin_review, "duplicates.csv", 3, f"through '{ORIGINAL}'")


def test_a_duplicate_of_a_duplicate_names_the_record_to_point_at(sitegen, twin_review):
    third = doi(SYNERGY[0])
    write_decisions(twin_review, f"{third},{TWIN},same,ann,", f"{TWIN},{ORIGINAL},same,ann,")
    out = check_reports(sitegen, twin_review, "duplicates.csv", 2, f"point at '{ORIGINAL}'")
    assert "(line 3)" in out


def test_a_duplicate_has_one_canonical_record(sitegen, twin_review):
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,ann,", f"{TWIN},{doi(SYNERGY[0])},same,ann,")
    check_reports(sitegen, twin_review, "duplicates.csv", 3, "is already a duplicate of")


def only(record: Record, namespace: str, value: str) -> Record:
    """The record under one identifier, as reference-manager exports often give it."""
    data = model_data(record)
    for key in ("DOI", "PMID", "PMCID", "URL"):
        data.pop(key, None)
    data["custom"].pop("openalex", None)
    field = {"doi": "DOI", "pmid": "PMID", "pmcid": "PMCID"}[namespace]
    return Record.model_validate({**data, "id": value if namespace == "doi" else f"{namespace}:{value}",
                                  field: value})


def test_different_is_refused_between_records_same_rows_join(tmp_path):
    """Three exports of one real paper, each under another identifier: two `same` rows make the second and
    third duplicates of the first, so a row calling those two different contradicts the file."""
    paper = twin_of(Record.model_validate(model_data(work_to_record(SYNERGY[1]))), "PMC9999999")
    records = [only(paper, "doi", ORIGINAL), only(paper, "pmid", "10512585"), only(paper, "pmcid", "PMC9999999")]
    first, second, third = (record.id for record in records)
    review = Review(tmp_path, None, records={record.id: record for record in records})
    for line, (a, b, decision) in enumerate([(second, first, "same"), (third, first, "same"),
                                             (second, third, "different")], start=2):
        review.duplicates.append(DuplicateRow("duplicates.csv", line, {"decision": 3}, DuplicateDecision(
            record_id=a, duplicate_of=b, decision=decision, reviewer="ann")))
    assert [(p.path, p.line, p.column, p.code) for p in duplicate_problems(review)] == [
        ("duplicates.csv", 4, 3, "different-but-joined")]
    assert set(confirmed_duplicates(review)) == {second, third}


# --------------------------------------------------------------------------- sitegen probable-duplicates


def test_pairs_awaiting_a_decision_come_with_a_line_to_paste(sitegen, twin_review):
    code, out, err = sitegen("probable-duplicates", twin_review, "--reviewer", "ann", "--json")
    assert code == 0, err
    [pair] = json.loads(out)
    assert (pair["record_id"], pair["duplicate_of"], pair["verdict"]) == (TWIN, ORIGINAL, "probable")
    assert pair["record_title"] == pair["duplicate_of_title"]
    (twin_review / "duplicates.csv").write_text(HEADER + pair["row"] + "\n")
    code, out, err = sitegen("check", twin_review)
    assert code == 0, out + err
    assert open_review(twin_review).facts.duplicates[TWIN].reviewer == "ann"
    code, out, _ = sitegen("probable-duplicates", twin_review)
    assert code == 0 and out.strip() == "0 pairs await a decision in duplicates.csv"


def test_a_pair_decided_different_is_not_listed_again(sitegen, twin_review):
    code, out, _ = sitegen("probable-duplicates", twin_review)
    assert code == 0 and f"{TWIN},{ORIGINAL},same,<reviewer>," in out and "1 pair awaits" in out
    write_decisions(twin_review, f"{ORIGINAL},{TWIN},different,ann,")
    code, out, _ = sitegen("probable-duplicates", twin_review, "--json")
    assert code == 0 and json.loads(out) == []


# --------------------------------------------------------------------------- the site


def test_record_pages_link_a_duplicate_and_its_canonical_record(sitegen, twin_review, tmp_path):
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,ann,")
    out = tmp_path / "site"
    code, _, err = sitegen("build", twin_review, "--out", out, "--now", "2026-05-01T00:00:00Z")
    assert code == 0, err
    twin_page = (out / "records" / f"{page_slug(TWIN)}.html").read_text()
    assert f'Duplicate of <a href="../records/{page_slug(ORIGINAL)}.html" dir="auto">' in twin_page
    assert "(confirmed by ann)" in twin_page
    original_page = (out / "records" / f"{page_slug(ORIGINAL)}.html").read_text()
    assert f'<a href="../records/{page_slug(TWIN)}.html"><code>{TWIN}</code></a>' in original_page
    assert f"{page_slug(TWIN)}.html" in (out / "records" / "list" / "duplicate" / "1.html").read_text()


def test_records_the_matcher_calls_the_same_are_suggested_too(tmp_path):
    """Records that arrived before metadata matching merged anything stay apart until a reviewer confirms."""
    paper = Record.model_validate(model_data(work_to_record(SYNERGY[1])))
    first, second = only(paper, "doi", ORIGINAL), only(paper, "pmid", "10512585")
    review = Review(tmp_path, None, records={first.id: first, second.id: second})
    [suggestion] = suggestions(review)
    assert (suggestion.record_id, suggestion.duplicate_of, suggestion.verdict) == (second.id, first.id, "same")
    review.duplicates.append(DuplicateRow("duplicates.csv", 2, {}, DuplicateDecision(
        record_id=second.id, duplicate_of=first.id, decision="different", reviewer="ann")))
    assert suggestions(review) == []


# --------------------------------------------------------------------------- preprint and journal versions


def link_versions(review: Path, first: str, second: str, both: bool = True) -> None:
    path = review / "records.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        if row["id"] == first or (both and row["id"] == second):
            row.setdefault("custom", {})["other_versions"] = [second if row["id"] == first else first]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_record_pages_link_the_other_version_of_a_study(sitegen, twin_review, tmp_path):
    link_versions(twin_review, ORIGINAL, TWIN)
    code, out, err = sitegen("check", twin_review)
    assert code == 0, out + err
    site = tmp_path / "site"
    code, _, err = sitegen("build", twin_review, "--out", site, "--now", "2026-05-01T00:00:00Z")
    assert code == 0, err
    page = (site / "records" / f"{page_slug(ORIGINAL)}.html").read_text()
    assert "The same study in another version" in page and f'href="../records/{page_slug(TWIN)}.html"' in page


def test_a_record_page_names_a_stated_version_the_review_does_not_hold(sitegen, two_run_review, tmp_path):  # noqa: F811
    """A source stated another version of the study (`custom.stated_versions`) that no search or import brought in:
    the record's page said nothing of it. It names it now, linked to doi.org and PubMed, escaped (a SICI DOI holds
    "<" and ">"); a version the review holds is left to the version link, and a record stating none says nothing."""
    path = two_run_review / "records.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    held = next(row for row in rows if row["id"] != ORIGINAL and row.get("DOI"))
    sici = "10.1002/(sici)1097-4636(199604)30:4<525::aid-jbm12>3.0.co;2-n"
    for row in rows:
        if row["id"] == ORIGINAL:
            row["custom"]["stated_versions"] = [{"doi": sici, "pmid": "8000001"}, {"doi": held["DOI"]}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, err = sitegen("check", two_run_review)
    assert code == 0, out + err
    site = tmp_path / "site"
    code, _, err = sitegen("build", two_run_review, "--out", site, "--now", "2026-05-01T00:00:00Z")
    assert code == 0, err
    page = (site / "records" / f"{page_slug(ORIGINAL)}.html").read_text()
    [said] = re.findall(r'<p class="versions">A source names another version of this study not in this review: .*</p>',
                        page)
    escaped = sici.replace("<", "&lt;").replace(">", "&gt;")
    assert f'<a href="{doi_url(sici)}" rel="noopener">doi:{escaped}</a>' in said and "<525" not in page
    assert '<a href="https://pubmed.ncbi.nlm.nih.gov/8000001/" rel="noopener">PMID 8000001</a>' in said
    assert held["DOI"] not in said
    other = (site / "records" / f"{page_slug(held['id'])}.html").read_text()
    assert "not in this review" not in other


@pytest.mark.parametrize("both", [True, False])
def test_a_version_link_must_name_a_record_that_names_it_back(sitegen, twin_review, both):
    link_versions(twin_review, ORIGINAL, "pmid:999999" if both else TWIN, both=both)
    code, out, err = sitegen("check", twin_review)
    assert code != 0 and "records.jsonl:" in out + err
    assert ("no record has that id" if both else "does not name it back") in out + err


# --------------------------------------------------------------------------- a `same` that would drop a study


def decide_full_text(review: Path, record_id: str, decision: str) -> None:
    """Replace the reviewer's full-text decision on `record_id`."""
    path = review / "screening" / "full-text" / "ann.csv"
    rows = [row for row in path.read_text().splitlines() if not row.startswith(f"{record_id},")]
    path.write_text("\n".join([*rows, f"{record_id},{decision},{'wrong-population' if decision == 'exclude' else ''},"])
                    + "\n")


def write_evidence(review: Path, record_id: str) -> None:
    (review / "evidence" / "twin.yaml").write_text(
        f"record_id: {record_id}\nfindings:\n  - finding: A finding.\n    passage:\n      text: A passage.\n"
        "      source: external\n      location: page 2\n")


@pytest.mark.parametrize(("twin_full_text", "original_full_text", "lost"), [
    ("include", "exclude", "has an include decision at full-text and its evidence (evidence/twin.yaml)"),
    ("include", "include", "has its evidence (evidence/twin.yaml)"),
    # At full text only an include makes a study: a canonical record there only a maybe would drop the included one.
    ("include", "maybe", "has an include decision at full-text and its evidence (evidence/twin.yaml)"),
])
def test_same_is_refused_when_it_would_drop_an_included_study(sitegen, twin_review, twin_full_text,
                                                              original_full_text, lost):
    """The twin, not ORIGINAL, is the study a reviewer included and extracted: confirming it as ORIGINAL's
    duplicate would make its decisions and evidence stop counting, so check refuses and says what to do."""
    decide_full_text(twin_review, TWIN, twin_full_text)
    decide_full_text(twin_review, ORIGINAL, original_full_text)
    write_evidence(twin_review, TWIN)
    included = counts_of(sitegen, twin_review)["studies_included"]
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,ann,")
    out = check_reports(sitegen, twin_review, "duplicates.csv", 2, lost)
    assert f"Point the row the other way ({ORIGINAL},{TWIN})" in out
    # Pointed the other way, nothing is lost: the included twin stands for both.
    write_decisions(twin_review, f"{ORIGINAL},{TWIN},same,ann,")
    code, out, err = sitegen("check", twin_review)
    assert code == 0, out + err
    assert counts_of(sitegen, twin_review)["studies_included"] == included - (original_full_text == "include")


def test_same_for_a_record_nobody_screened_is_accepted(tmp_path):
    """What `update` writes for a new record that metadata shows to be an included study's duplicate:
    a record without decisions loses nothing, whichever record is canonical."""
    paper = Record.model_validate(model_data(work_to_record(SYNERGY[1])))
    first, second = only(paper, "doi", ORIGINAL), only(paper, "pmid", "10512585")
    review = Review(tmp_path, None, records={first.id: first, second.id: second})
    review.duplicates.append(DuplicateRow("duplicates.csv", 2, {}, DuplicateDecision(
        record_id=second.id, duplicate_of=first.id, decision="same", reviewer="sitegen")))
    assert duplicate_problems(review) == [] and set(confirmed_duplicates(review)) == {second.id}


def test_a_record_cannot_be_another_version_of_itself(sitegen, twin_review):
    link_versions(twin_review, ORIGINAL, ORIGINAL, both=False)
    ids = [json.loads(line)["id"] for line in (twin_review / "records.jsonl").read_text().splitlines()]
    check_reports(sitegen, twin_review, "records.jsonl", ids.index(ORIGINAL) + 1, "names itself")


def test_versions_of_one_study_are_never_decided_the_same(sitegen, twin_review):
    link_versions(twin_review, ORIGINAL, TWIN)
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,ann,")
    check_reports(sitegen, twin_review, "duplicates.csv", 2, "are never merged")
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},different,ann,a preprint and its journal version")
    code, out, err = sitegen("check", twin_review)
    assert code == 0, out + err


def test_a_reviewer_named_otherwise_than_a_name_is_told_what_a_name_is(sitegen, twin_review):
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,Zoë Müller,")
    out = check_reports(sitegen, twin_review, "duplicates.csv", 2, "reviewer: must be a name of lower-case letters, "
                        "digits and hyphens (reviewer-a), at most 80, not 'Zoë Müller'")
    assert "should match pattern" not in out  # the regular expression is no message


def test_the_site_counts_a_run_whose_only_record_is_a_duplicate(sitegen, twin_review, tmp_path):
    """The third run identified one record, which a reviewer confirmed to be a duplicate: it still has its
    column (identified 1, removed 1), so every row of the runs adds up to All, and All is `prisma --json`;
    the home page's headline says it counts records without their duplicates, which the list shows apart."""
    write_decisions(twin_review, f"{TWIN},{ORIGINAL},same,ann,")
    counts = flatten(counts_of(sitegen, twin_review))
    site = tmp_path / "site"
    code, _, err = sitegen("build", twin_review, "--out", site, "--now", "2026-05-01T00:00:00Z")
    assert code == 0, err
    home = (site / "index.html").read_text()
    page = etree.fromstring(home, etree.HTMLParser())
    heads = page.xpath("//table[contains(@class, 'prisma-counts')]/thead//th/text()")
    assert heads == ["Box", "Run 1", "Run 2", "Run 3", "All"]
    for tr in page.xpath("//table[contains(@class, 'prisma-counts')]/tbody/tr"):
        label, *cells = tr.xpath("th/text()") + [td.text or "" for td in tr.xpath("td")]
        keys = [td.get("data-count") for td in tr.xpath("td")]
        if keys[-1] is None:  # a number of the runs alone (what a source returned): nothing to add up to
            continue
        assert counts[keys[-1]] == int(cells[-1]), label
        if all(keys[:-1]):  # a number of the whole review only (previous studies) has no run cells
            assert sum(int(cell) for cell in cells[:-1]) == int(cells[-1]), label
    assert "identified no new record" not in home and "Run 3: 2026-03-01 00:00 UTC" in home
    figures = headline(home)
    duplicates = STANDING_LABELS["duplicate"]
    assert figures["Distinct records identified, duplicates removed"] == counts["records"]
    assert figures[duplicates] == filter_count(site, duplicates) == 1
    assert counts["records"] + figures[duplicates] == filter_count(site, "All records")
    summary = (site / "records.html").read_text()
    assert "from its searches and imports (1 of them confirmed a duplicate)," in summary
    # The downloads hold the records without their duplicates, and say so: not "All records" with another count.
    offered = re.search(r'href="downloads/records\.ris" download>([^<(]+) \((\d+) records\)', home)
    assert offered.group(1) == "Records after duplicates removed" and int(offered.group(2)) == counts["records"]


def test_records_identity_kept_apart_though_they_share_a_doi_are_put_to_a_reviewer(sitegen, tmp_path):
    # Two rows with one DOI, volume and pages, one titled in English, the other in the original Chinese, became
    # two records, each noted "kept apart for a reviewer"; no list put the pair to a reviewer.
    review, (code, _, _) = review_of_ris(tmp_path, "".join(
        f"TY  - JOUR\nTI  - {title}\nAU  - Wang, Li\nPY  - 2019\nJO  - Chinese Journal of Sleep\nVL  - 35\n"
        f"SP  - 100\nEP  - 105\nDO  - 10.1234/cjs.2019.035\nER  - \n"
        for title in ("Sleep quality in older adults", "老年人睡眠质量研究")))
    assert code == 0
    records = [json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()]
    assert len(records) == 2  # identity keeps them apart (titles of two works)
    code, out, err = sitegen("probable-duplicates", review, "--json")
    assert code == 0, err
    [pair] = json.loads(out)
    assert {pair["record_id"], pair["duplicate_of"]} == {record["id"] for record in records}


def test_same_is_refused_when_it_would_drop_a_record_sent_on_as_maybe(sitegen, tmp_path):
    # Both reviewers said maybe at title and abstract (on to full text): confirming it as the duplicate of a
    # record they excluded dropped it without a word, where an include was refused.
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0 and sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")[0] == 0
    ris = tmp_path / "two.ris"
    ris.write_text("".join(f"TY  - JOUR\nTI  - {title}\nAU  - Doe, Jane\nPY  - 2020\nER  - \n"
                           for title in ("Sleep and memory in rats", "Exercise and anxiety in mice")))
    assert sitegen("import", review, ris, "--at", "2026-01-02T00:00:00Z")[0] == 0
    maybe, excluded = [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()]
    for reviewer in ("ann", "bob"):
        (review / "screening" / "title-abstract" / f"{reviewer}.csv").write_text(
            f"record_id,decision,reason,note\n{maybe},maybe,,\n{excluded},exclude,,\n")
    assert sitegen("check", review)[0] == 0
    write_decisions(review, f"{maybe},{excluded},same,ann,")
    out = check_reports(sitegen, review, "duplicates.csv", 2, "has a maybe decision at title-abstract")
    assert f"Point the row the other way ({excluded},{maybe})" in out


# --------------------------------------------------------------------------- conflicting identifiers

OTHER_DOI = "10.9999/second.doi.of.one.paper"


def other_doi_twin(review_dir: Path) -> str:
    """A twin of ORIGINAL a second database exports with ORIGINAL's PMID but another DOI (a publisher that
    registered the paper twice, or a source that mapped the wrong DOI): the identifiers conflict."""
    review, problems = load_review(review_dir)
    assert review is not None, problems
    twin = twin_of(review.records[ORIGINAL], "PMC7777777")
    data = model_data(twin)
    twin = Record.model_validate({**data, "id": OTHER_DOI, "DOI": OTHER_DOI, "PMCID": None,
                                  "PMID": review.records[ORIGINAL].PMID, "custom": {**data["custom"], "sources": ["openalex"]}})
    # Filed as a record of its own, as sitegen filed such a twin before it took a result under a record's PMID
    # with another DOI for that record with its DOI corrected (`merge._doi_corrections`): a review may hold it.
    records = dict(sorted({**review.records, twin.id: twin}.items()))
    transaction = Transaction(review_dir)
    append(transaction, review, "2026-03-01T00:00:00Z", [ImportPayload(
        source="europepmc", method="database", record_ids=[twin.id], description="another database's export")])
    transaction.write("records.jsonl", jsonl(model_data(record) for record in records.values()))
    transaction.commit()
    return twin.id


def test_a_reviewer_may_decide_records_with_conflicting_identifiers_the_same(sitegen, two_run_review,  # noqa: F811
                                                                             tmp_path):
    # Two records of one paper under two DOIs: the matcher never merges them, and check refused the reviewer's
    # `same` ("different DOI identifiers"), so the review counted one paper twice with no way to say otherwise.
    twin = other_doi_twin(two_run_review)
    assert twin == OTHER_DOI
    code, out, err = sitegen("probable-duplicates", two_run_review, "--json")
    assert code == 0, err
    assert {(pair["record_id"], pair["duplicate_of"]) for pair in json.loads(out)} == {(twin, ORIGINAL)}
    before = counts_of(sitegen, two_run_review)
    write_decisions(two_run_review, f"{twin},{ORIGINAL},same,ann,one paper the publisher registered twice")
    code, out, err = sitegen("check", two_run_review)
    assert code == 0, out + err
    facts = open_review(two_run_review).facts
    assert facts.duplicates[twin] == Duplicate(ORIGINAL, "ann", "one paper the publisher registered twice")
    after = counts_of(sitegen, two_run_review)
    assert after["duplicates_removed"] == before["duplicates_removed"] + 1
    assert after["records"] == before["records"] - 1
    site = tmp_path / "site"
    code, _, err = sitegen("build", two_run_review, "--out", site, "--now", "2026-05-01T00:00:00Z")
    assert code == 0, err
    page = (site / "records" / f"{page_slug(twin)}.html").read_text()
    assert f'Duplicate of <a href="../records/{page_slug(ORIGINAL)}.html"' in page and "(confirmed by ann)" in page
    code, out, err = sitegen("export", two_run_review, "--format", "csl-json", "--records", "all")
    assert code == 0, err
    exported = {item["id"] for item in json.loads(out)}
    assert ORIGINAL in exported and twin not in exported
    # `different` keeps both, as for any pair.
    write_decisions(two_run_review, f"{twin},{ORIGINAL},different,ann,two papers")
    code, out, err = sitegen("check", two_run_review)
    assert code == 0, out + err
    assert counts_of(sitegen, two_run_review) == before
    code, out, err = sitegen("export", two_run_review, "--format", "csl-json", "--records", "all")
    assert code == 0 and {ORIGINAL, twin} <= {item["id"] for item in json.loads(out)}, err
