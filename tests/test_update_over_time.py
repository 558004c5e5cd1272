"""Updates over many weeks, as providers' data drifts: whatever a source now says of a record, an update never
leaves the review in a state `check` refuses (and so every later command with it). Real OpenAlex works
(tests/fixtures/openalex) with their ids changed between runs as OpenAlex renumbers and corrects them."""

from __future__ import annotations

import copy
import csv

from test_update import FIRST, SECOND, SYNERGY, THIRD, Providers, new_review, no_waiting, run  # noqa: F401 (a fixture)

FOURTH = "2026-01-26T06:00:00Z"


def work(index: int, *, openalex: str | None = None, pmid: str | None = "", doi: str | None = "") -> dict:
    """A real OpenAlex work with its OpenAlex id, PMID or DOI replaced ("" keeps it, None removes it)."""
    found = copy.deepcopy(SYNERGY[index])
    if openalex:
        found["id"] = found["ids"]["openalex"] = f"https://openalex.org/{openalex}"
    if pmid != "":
        found["ids"].pop("pmid", None)
        if pmid:
            found["ids"]["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{pmid}"
    if doi != "":
        found["doi"] = f"https://doi.org/{doi}" if doi else None
        found["ids"].pop("doi", None)
        if doi:
            found["ids"]["doi"] = found["doi"]
    return found


def same_rows(review) -> list[tuple[str, str]]:
    path = review / "duplicates.csv"
    rows = csv.DictReader(path.open(encoding="utf-8")) if path.exists() else []
    return [(row["record_id"], row["duplicate_of"]) for row in rows if row["decision"] == "same"]


def test_a_match_that_would_join_two_pmids_through_a_confirmed_group_is_only_probable(sitegen, tmp_path):
    # Week 1 matches W901 (PMID 111) to a record; week 2 finds W902 (PMID 222), the same by its metadata. A `same`
    # row for it would make 111 and 222 one work through that record: check refused the folder, and every
    # command after it.
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(3, pmid=None), work(4)], [])
    run(review, FIRST, providers, add=True)
    providers.works = [work(3, pmid=None), work(4), work(3, doi=None, openalex="W901", pmid="111")]
    assert run(review, SECOND, providers).matched
    providers.works = [work(3, pmid=None), work(4), work(3, doi=None, openalex="W902", pmid="222")]
    result = run(review, THIRD, providers)
    assert result.matched == [] and any("openalex:W902" in (a, b) for a, b, _ in result.probable)
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    run(review, FOURTH, providers)  # and the next update runs
    assert sitegen("check", review)[0] == 0


def test_an_enrichment_that_contradicts_a_confirmed_duplicate_is_not_made(sitegen, tmp_path):
    # sitegen matched W901 (PMID 111) to W900; OpenAlex later gives W900 the PMID 222. Stored, it made the two
    # records of one `same` row contradict each other, and check refused the folder.
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0), work(3, doi=None, pmid=None, openalex="W900")], [])
    run(review, FIRST, providers, add=True)
    providers.works = [work(0), work(3, doi=None, pmid=None, openalex="W900"),
                       work(3, doi=None, openalex="W901", pmid="111")]
    run(review, SECOND, providers)
    assert same_rows(review) == [("openalex:W901", "openalex:W900")]
    providers.works[1] = work(3, doi=None, pmid="222", openalex="W900")
    run(review, THIRD, providers)
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    records = {line.split('"id":"')[1].split('"')[0]: line for line in (review / "records.jsonl").read_text().splitlines()}
    assert "222" not in records["openalex:W900"] and "kept as it was" in records["openalex:W900"]
    # The reviewer finds two works: the next run gives W900 its PMID, and the note saying the row holds is gone.
    duplicates = review / "duplicates.csv"
    duplicates.write_text(duplicates.read_text().replace(",same,", ",different,"))
    run(review, "2026-02-01T00:00:00Z", providers)
    records = {line.split('"id":"')[1].split('"')[0]: line for line in (review / "records.jsonl").read_text().splitlines()}
    assert "222" in records["openalex:W900"] and "kept as it was" not in records["openalex:W900"]


def test_a_run_whose_only_unseen_record_is_a_matched_duplicate_reports_no_new_record_anywhere(sitegen, tmp_path):
    # OpenAlex lists a work again under a second id; the matcher finds it the same as the record the review has.
    # The command said 0 new; the run's manifest, the searches page and the home page said "1 new".
    import json
    import re

    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0), work(3, openalex="W900")], [])
    run(review, FIRST, providers, add=True)
    providers.works = [work(0), work(3, openalex="W901", doi=None)]
    result = run(review, SECOND, providers)
    assert result.searches[0].new == [] and result.searches[0].duplicates == ["openalex:W901"]
    [manifest] = [json.loads(path.read_text()) for path in (review / "runs").glob("20260112*.json")]
    assert manifest["counts"]["new"] == 0 and all(source["new"] == 0 for source in manifest["sources"])
    ledger = [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]
    batch = next(event["payload"] for event in reversed(ledger) if event["type"] == "screening")
    assert batch["record_ids"] == batch["matched"] == ["openalex:W901"]
    assert sitegen("check", review)[0] == 0
    site = tmp_path / "site"
    assert sitegen("build", review, "--out", site)[0] == 0
    home = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (site / "index.html").read_text()))
    assert "0 new to the search (screening batch 2, with 1 matched to records found before)" in home
    assert "retrieved 2 records, 0 of them new" in home
    batch_page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (site / "batches" / "2.html").read_text()))
    assert "1 of them sitegen matched to a record the review already held" in batch_page


def test_a_work_openalex_renumbered_and_retitled_is_matched_not_new(sitegen, tmp_path):
    # OpenAlex renumbers a work (W900 -> W902) as its title is revised; DOI and PMID stay. The OpenAlex ids keep
    # the two records apart, and the revised title kept the matcher from calling them the same: it was new.
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0), work(3, openalex="W900")], [])
    run(review, FIRST, providers, add=True)
    revised = work(3, openalex="W902")
    revised["title"] = revised["display_name"] = ("Lateral entorhinal cortex lesions impair novel object-context "
                                                  "recognition in rats: a c-fos study")
    providers.works = [work(0), revised]
    result = run(review, SECOND, providers)
    assert result.searches[0].new == [] and [canonical for _, canonical, _ in result.matched] == [
        "10.1002/hipo.22095"]
    assert sitegen("check", review)[0] == 0
