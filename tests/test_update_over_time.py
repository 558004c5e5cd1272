"""Updates over many weeks, as providers' data drifts: whatever a source now says of a record, an update never
leaves the review in a state `check` refuses (and so every later command with it). Real OpenAlex works
(tests/fixtures/openalex) with their ids changed between runs as OpenAlex renumbers and corrects them."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import httpx
from test_update import (  # noqa: F401 (no_waiting: a fixture)
    CORE,
    FIRST,
    SECOND,
    SYNERGY,
    THIRD,
    Providers,
    ledger,
    new_review,
    no_waiting,
    run,
    state,
)

import sitegen.living.update as update_module
from sitegen.commands import update
from sitegen.living.update import markdown_report
from sitegen.sources.settings import SourceSettings
from sitegen.text import markdown_safe

FOURTH = "2026-01-26T06:00:00Z"


def work(index: int, *, openalex: str | None = None, pmid: str | None = "", doi: str | None = "",
         pmcid: str | None = "") -> dict:
    """A real OpenAlex work with its OpenAlex id, PMID, PMCID or DOI replaced ("" keeps it, None removes it)."""
    found = copy.deepcopy(SYNERGY[index])
    if openalex:
        found["id"] = found["ids"]["openalex"] = f"https://openalex.org/{openalex}"
    if pmid != "":
        found["ids"].pop("pmid", None)
        if pmid:
            found["ids"]["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{pmid}"
    if pmcid != "":
        found["ids"].pop("pmcid", None)
        if pmcid:
            found["ids"]["pmcid"] = f"https://www.ncbi.nlm.nih.gov/pmc/articles/{pmcid}"
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


# --------------------------------------------------------------------------- identity shifts, edits and part-answers


def europepmc(result: dict, *, pmid: str | None = "", doi: str | None = "") -> dict:
    """A real Europe PMC result with its PMID or DOI replaced ("" keeps it, None removes it)."""
    found = copy.deepcopy(result)
    for key, value in (("pmid", pmid), ("doi", doi)):
        if value != "":
            found.pop(key, None)
            if value:
                found[key] = value
    return found


def test_a_record_whose_identifiers_shift_between_runs_is_reported_new_once_and_keeps_its_decision(sitegen,
                                                                                                      tmp_path):
    # Europe PMC first sends a work with its PMID only (its id is then pmid:…), later with its DOI too (which
    # outranks a PMID as an id), in capitals or as a resolver address, then not at all, then with the DOI alone.
    # None of these is a new record: the id stays, the reviewer's decision stays on it, seen_ids only grows.
    review = new_review(sitegen, tmp_path)
    other, shifting = CORE[1], CORE[0]
    pmid, doi = shifting["pmid"], shifting["doi"]
    providers = Providers([], [other, europepmc(shifting, doi=None)])
    first = run(review, FIRST, providers, add=True)
    record_id = f"pmid:{pmid}"
    assert record_id in first.searches[0].new
    decisions = review / "screening" / "title-abstract" / "ann.csv"
    decisions.parent.mkdir(parents=True, exist_ok=True)
    decisions.write_text(f"record_id,decision,reason,note\n{record_id},exclude,,\n")
    assert sitegen("check", review)[0] == 0
    seen = state(review)["seen_ids"]
    for at, results in ((SECOND, [other, europepmc(shifting, doi=doi.upper())]),
                        (THIRD, [other, europepmc(shifting, doi=f"https://doi.org/{doi}")]),
                        (FOURTH, [other]),
                        ("2026-02-02T06:00:00Z", [europepmc(shifting, pmid=None, doi=doi), other])):
        providers.results = results
        result = run(review, at, providers)
        assert result.complete and result.searches[0].new == [] and result.matched == [], at
        now = state(review)["seen_ids"]
        assert now[:len(seen)] == seen and len(now) == len(set(now)), at
        seen = now
        [returned] = [event["payload"]["record_ids"] for event in ledger(review) if event["ts"] == at
                      and event["type"] == "retrieval" and event["payload"]["source"] == "europepmc"]
        assert (record_id in returned) == (at != FOURTH), at  # the ledger names it by its id, whatever it was sent with
    records = {json.loads(line)["id"]: json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()}
    assert records[record_id]["DOI"] == doi  # enriched under the id it had
    assert not any(key == doi for key in records)
    assert decisions.read_text().endswith(f"{record_id},exclude,,\n")
    code, out, err = sitegen("check", review)
    assert code == 0, out + err


def test_a_work_a_provider_returns_under_its_pmid_with_a_corrected_doi_is_the_same_work(sitegen, tmp_path):
    # Europe PMC sends a work under the PMID it sent before with another DOI: a shared PMID makes one work, but the
    # two DOIs split the group, and the work was reported new. A PMID names one article: it is the same work, noted.
    # OpenAlex files a preprint and its journal version under one W id: another DOI there may be another report of
    # the study, which stays a record of its own (new, and a probable pair for a reviewer).
    review = new_review(sitegen, tmp_path)
    # (Without its PMID and PMCID, which would name the article whoever gave them.)
    providers = Providers([work(0), work(3, pmid=None, pmcid=None)], [CORE[1], CORE[0]])
    first = run(review, FIRST, providers, add=True)
    before = (review / "records.jsonl").read_text().count("\n")
    providers.works = [work(0), work(3, pmid=None, pmcid=None, doi="10.9999/journal.version")]
    providers.results = [CORE[1], europepmc(CORE[0], doi="10.9999/corrected.europepmc")]
    second = run(review, SECOND, providers)
    assert second.complete and second.searches[0].new == ["10.9999/journal.version"] and second.matched == []
    assert [sorted(pair[:2]) for pair in second.probable] == [sorted(["10.9999/journal.version",
                                                                     work(3)["doi"].removeprefix("https://doi.org/")])]
    records = {json.loads(line)["id"]: json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()}
    assert len(records) == before + 1
    record_id = CORE[0]["doi"].lower()
    assert record_id in first.searches[0].new and records[record_id]["DOI"] == record_id  # keeps its id and DOI
    [note] = records[record_id]["custom"]["conflicts"]
    assert note.startswith("A corrected DOI? Europe PMC returns this work under its PMID ")
    assert "10.9999/corrected.europepmc" in note
    [returned] = [event["payload"]["record_ids"] for event in ledger(review) if event["ts"] == SECOND
                  and event["payload"].get("source") == "europepmc"]
    assert record_id in returned
    assert sitegen("check", review)[0] == 0
    # The note stays though the source is down at the next run.
    providers.europepmc_status = 503
    run(review, THIRD, providers)
    records = {json.loads(line)["id"]: json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()}
    assert any(note.startswith("A corrected DOI? Europe PMC") for note in records[record_id]["custom"]["conflicts"])
    assert sitegen("check", review)[0] == 0


def test_a_work_openalex_returns_under_its_pmid_with_a_corrected_doi_is_the_same_work(sitegen, tmp_path):
    # A PMID or PMCID names one article whichever source gives it: OpenAlex returning a work under the PMID and
    # PMCID it gave before, with another DOI, returns the same work with its DOI corrected. It was reported new a
    # second time (the two DOIs split the group). A preprint DOI under the journal version's PMID is another
    # report, though: a record of its own, linked as a version.
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0), work(3)], [])
    run(review, FIRST, providers, add=True)
    record_id = work(3)["doi"].removeprefix("https://doi.org/")
    providers.works = [work(0), work(3, doi="10.9999/corrected")]
    second = run(review, SECOND, providers)
    assert second.complete and second.searches[0].new == [] and second.probable == []
    records = {json.loads(line)["id"]: json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()}
    assert "10.9999/corrected" not in records and records[record_id]["DOI"] == record_id
    [note] = records[record_id]["custom"]["conflicts"]
    assert note.startswith("A corrected DOI? OpenAlex returns this work under its ") and "10.9999/corrected" in note
    [returned] = [event["payload"]["record_ids"] for event in ledger(review) if event["ts"] == SECOND
                  and event["payload"].get("source") == "openalex"]
    assert record_id in returned
    assert sitegen("check", review)[0] == 0
    preprint = work(3, doi="10.1101/2013.01.01.123456")
    preprint["type"] = "preprint"
    providers.works = [work(0), preprint]
    third = run(review, THIRD, providers)
    assert third.searches[0].new == ["10.1101/2013.01.01.123456"]
    assert third.versions == [("10.1101/2013.01.01.123456", record_id)]
    assert sitegen("check", review)[0] == 0
    # Another work OpenAlex gives that PMID by a wrong mapping (its title, year and W id another's) is not hidden in
    # the record.
    pmid = work(3)["ids"]["pmid"].rsplit("/", 1)[1]
    mapped = work(5, pmid=pmid, pmcid=None)
    providers.works = [work(0), mapped]
    fourth = run(review, FOURTH, providers)
    assert fourth.searches[0].new == [mapped["doi"].removeprefix("https://doi.org/").lower()]


def test_a_work_openalex_renumbers_and_gives_a_corrected_doi_at_once_is_not_new(sitegen, tmp_path):
    # OpenAlex merges works under a new W id and corrects the DOI in the same change; PMID and PMCID stay. The other
    # W id kept the DOI from being taken as corrected, the two DOIs kept the matcher from calling them one work, and
    # the work was reported new a second time. Two OpenAlex ids rule nothing out: it is the same work, matched.
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0), work(3)], [])
    run(review, FIRST, providers, add=True)
    record_id = work(3)["doi"].removeprefix("https://doi.org/")
    providers.works = [work(0), work(3, openalex="W902", doi="10.9999/corrected")]
    second = run(review, SECOND, providers)
    assert second.complete and second.searches[0].new == [] and second.probable == []
    assert [(new, canonical) for new, canonical, _ in second.matched] == [("openalex:W902", record_id)]
    records = {json.loads(line)["id"]: json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()}
    assert records[record_id]["DOI"] == record_id and "10.9999/corrected" not in records
    assert any(note.startswith("A corrected DOI? OpenAlex") for note in records[record_id]["custom"]["conflicts"])
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    assert run(review, THIRD, providers).searches[0].new == []  # and so at every later run


def served_by(providers: Providers, monkeypatch) -> None:
    """`sitegen update` from the command line, its providers answered by `providers` (live, never recorded)."""
    real_open = update_module.open_fetcher
    monkeypatch.setattr(update_module, "open_fetcher", lambda mode, snapshots, session="", transport=None:
                        real_open("live", None, transport=httpx.MockTransport(providers)))


def searched_once(sitegen, tmp_path: Path) -> tuple[Path, Providers, Path, dict]:
    """A review whose saved search ran once at FIRST; its providers, the saved search's file and its data."""
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0)], [])
    run(review, FIRST, providers, add=True)
    saved = review / "searches" / "watch.json"
    return review, providers, saved, json.loads(saved.read_text())


def test_a_strategy_edited_by_hand_between_runs_is_searched_as_saved_and_the_run_says_so(sitegen, tmp_path,
                                                                                          monkeypatch):
    # The saved search's file is the strategy: an edit between runs is searched as it stands, verbatim. It was
    # searched silently: the run report (a pull request's body) and the command's output read as any run's,
    # though every record the new text finds beyond the old one's is reported new.

    review, providers, saved, data = searched_once(sitegen, tmp_path)
    data["strategies"][0]["query"] = "object AND memory"
    data["strategies"].append({"source": "openalex", "label": "added", "query": "recognition"})
    saved.write_text(json.dumps(data, indent=2))
    assert sitegen("check", review)[0] == 0  # editing the strategies is allowed: they are the reviewers' to change
    providers.works = [work(0), work(3)]
    result = run(review, SECOND, providers)
    [edited, unchanged, added] = result.searches[0].strategies
    assert edited.edited_since is not None and edited.edited_since.query == "object context"
    assert edited.edited_since.at == FIRST and not edited.unknown_before
    assert unchanged.edited_since is None and not unchanged.unknown_before and unchanged.change() is None
    assert added.unknown_before and added.edited_since is None
    assert result.searches[0].removed == []  # an edited strategy is known by its last run, not taken for removed
    report = markdown_report(result)
    assert "Strategies not as at the last run:" in report
    assert "which searched 'object context'" in report and "'object AND memory'" in report
    assert "no earlier run searched 'recognition'" in report
    summary = result.summary()["searches"][0]["strategies"]
    assert summary[0]["edited_since"] == {"at": FIRST, "query": "object context"} and summary[2]["unknown_before"]
    # The ledger says which text each run searched.
    queries = [(event["ts"], event["payload"]["query"]) for event in ledger(review) if event["type"] == "retrieval"]
    assert (FIRST, "object context") in queries and (SECOND, "object AND memory") in queries
    # The next run, with nothing edited, says nothing of it; from the command line the note is on stderr.
    served_by(providers, monkeypatch)
    code, _, err = sitegen("update", review, "--at", THIRD, "--report", tmp_path / "report.md")
    assert code == 0 and "edited since its last run" not in err
    assert "Strategies not as" not in (tmp_path / "report.md").read_text()
    saved.write_text(saved.read_text().replace('"recognition"', '"recognition memory"'))
    code, _, err = sitegen("update", review, "--at", FOURTH)
    assert code == 0 and "note: watch: OpenAlex (added): the strategy was edited since its last run" in err, err


def test_a_strategy_deleted_by_hand_between_runs_is_named_with_the_text_its_last_run_searched(sitegen, tmp_path,
                                                                                             monkeypatch):
    # Deleting a strategy from the saved search's file stopped its source being searched without a word: the run
    # report read as any run's, and its reader could not tell a source searched before was no longer searched.
    review, providers, saved, data = searched_once(sitegen, tmp_path)
    data["strategies"] = [strategy for strategy in data["strategies"] if strategy["source"] != "europepmc"]
    saved.write_text(json.dumps(data, indent=2))
    assert sitegen("check", review)[0] == 0  # the strategies are the reviewers' to change
    served_by(providers, monkeypatch)
    code, out, err = sitegen("update", review, "--at", SECOND, "--json", "--report", tmp_path / "report.md")
    assert code == 0, out + err
    [search] = json.loads(out)["searches"]
    assert search["removed"] == [{"source": "europepmc", "label": None, "query": "cancer", "at": FIRST}]
    assert [strategy["source"] for strategy in search["strategies"]] == ["openalex"]
    report = (tmp_path / "report.md").read_text()
    assert "Strategies not as at the last run:" in report
    assert "- " + markdown_safe("Europe PMC: the strategy was removed from the saved search since its last run "
                                f"({FIRST}, which searched 'cancer')") in report
    assert "note: watch: Europe PMC: the strategy was removed from the saved search" in err, err
    assert sitegen("check", review)[0] == 0
    # Its last run is now this one, which did not search it: the next run says nothing of it.
    code, out, err = sitegen("update", review, "--at", THIRD, "--json", "--report", tmp_path / "report.md",
                             "--force")
    assert code == 0 and json.loads(out)["searches"][0]["removed"] == [], out + err
    assert "was removed from the saved search" not in err, err
    assert "Strategies not as" not in (tmp_path / "report.md").read_text()


def test_a_strategy_renamed_by_hand_between_runs_is_said_renamed_not_removed_and_added(sitegen, tmp_path, monkeypatch):
    # Giving a strategy a label (or another one), its text unchanged, was reported as one strategy removed and
    # another added, as if the review had stopped searching something and started searching something else.
    review, providers, saved, data = searched_once(sitegen, tmp_path)
    data["strategies"][1]["label"] = "cancer-terms"
    saved.write_text(json.dumps(data, indent=2))
    served_by(providers, monkeypatch)
    for at, before, label in ((SECOND, None, "cancer-terms"), (THIRD, "cancer-terms", "oncology")):
        report_path = tmp_path / f"{at[:10]}.md"
        code, out, err = sitegen("update", review, "--at", at, "--json", "--report", report_path)
        assert code == 0, out + err
        [search] = json.loads(out)["searches"]
        [_, renamed] = search["strategies"]
        assert search["removed"] == [] and renamed["label"] == label and not renamed["unknown_before"]
        last = FIRST if at == SECOND else SECOND
        assert renamed["renamed_from"] == {"label": before, "at": last}
        was = "unlabelled" if before is None else f"labelled {before!r}"
        said = f"Europe PMC ({label}): the strategy was renamed since its last run ({last}, when it was {was}"
        assert f"note: watch: {said}); the same text, 'cancer', was searched" in err, err
        assert "removed from the saved search" not in err and "no earlier run searched" not in err
        assert "- " + markdown_safe(said) in report_path.read_text()
        saved.write_text(saved.read_text().replace('"cancer-terms"', '"oncology"'))
    # A new label on another text is no rename: that strategy was removed, and the other added.
    saved.write_text(saved.read_text().replace('"oncology"', '"tumours"').replace('"cancer"', '"tumour"'))
    code, out, err = sitegen("update", review, "--at", FOURTH, "--json")
    [search] = json.loads(out)["searches"]
    assert code == 0 and [removed["label"] for removed in search["removed"]] == ["oncology"], out + err
    assert search["strategies"][1]["unknown_before"] and search["strategies"][1]["renamed_from"] is None


def test_two_strategies_that_swap_labels_are_each_said_renamed_and_keep_their_own_history(sitegen, tmp_path,
                                                                                          monkeypatch):
    # Two strategies of one source swapped labels, their texts unchanged: each was known by its label, so by the
    # other's run, and both were said edited (the other's text "searched" last time), their histories crossed.
    review, providers, saved, data = searched_once(sitegen, tmp_path)
    data["strategies"] = [{"source": "openalex", "label": "x", "query": "object context"},
                          {"source": "openalex", "label": "y", "query": "recognition"}, data["strategies"][1]]
    saved.write_text(json.dumps(data, indent=2))
    run(review, SECOND, providers)
    saved.write_text(saved.read_text().replace('"x"', '"was-x"').replace('"y"', '"x"').replace('"was-x"', '"y"'))
    served_by(providers, monkeypatch)
    code, out, err = sitegen("monitor", "status", review)
    assert code == 0 and f"object context  [renamed since its last run ({SECOND}, when it was labelled 'x')]" in out, out
    assert f"recognition  [renamed since its last run ({SECOND}, when it was labelled 'y')]" in out, out
    result = run(review, THIRD, providers)
    [first, second, _] = result.searches[0].strategies
    assert (first.strategy.label, first.strategy.query) == ("y", "object context")
    assert first.edited_since is None and first.renamed_from is not None and first.renamed_from.label == "x"
    assert second.edited_since is None and second.renamed_from is not None and second.renamed_from.label == "y"
    assert result.searches[0].removed == [] and not first.unknown_before and not second.unknown_before
    assert "the same text, 'object context', was searched" in first.change()
    # A label taken by another strategy's text, the strategy under it edited: it is no rename but a new text.
    saved.write_text(saved.read_text().replace('"recognition"', '"recognition memory"').replace('"y"', '"z"')
                     .replace('"x"', '"y"'))
    result = run(review, FOURTH, providers)
    [first, second, _] = result.searches[0].strategies
    assert (first.strategy.label, first.renamed_from.label, first.edited_since) == ("z", "y", None)
    assert second.unknown_before and second.renamed_from is None and second.edited_since is None
    assert [removed.query for removed in result.searches[0].removed] == ["recognition"]


def test_a_renamed_strategy_keeps_its_history_collapse_check_status_and_site(sitegen, tmp_path, monkeypatch):
    # A rename (the same text, a new label) was said renamed, but its history was looked up by label: the first run
    # after it had no last complete run to compare with (a source collapsing to nothing was taken for an answer),
    # `monitor status` said "not run yet" and the searches page "Not run yet: saved after the search's latest run".
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(index) for index in range(12)], [])
    run(review, FIRST, providers, add=True)
    saved = review / "searches" / "watch.json"
    data = json.loads(saved.read_text())
    data["strategies"][0]["label"] = "object-terms"
    saved.write_text(json.dumps(data, indent=2))
    code, out, _ = sitegen("monitor", "status", review)
    assert code == 0 and "not run yet" not in out, out
    assert f"renamed since its last run ({FIRST}, when it was unlabelled)" in out, out
    assert sitegen("build", review, "--out", tmp_path / "site")[0] == 0
    page = (tmp_path / "site" / "searches.html").read_text()
    assert "Not run yet" not in page and "Renamed since it last ran" in page and "when it was unlabelled" in page
    providers.works = []  # OpenAlex collapses from 12 matches to none: a fault, whatever the strategy is called
    result = run(review, SECOND, providers)
    [renamed, _] = result.searches[0].strategies
    assert renamed.renamed_from is not None and not renamed.outcome.complete and not result.complete
    assert "last complete run had 12" in renamed.outcome.doubt
    # Renamed again after that incomplete run: its last complete run is still the one under its first name.
    saved.write_text(saved.read_text().replace('"object-terms"', '"objects"'))
    result = run(review, THIRD, providers)
    assert not result.searches[0].strategies[0].outcome.complete
    assert "last complete run had 12" in result.searches[0].strategies[0].outcome.doubt


def test_a_source_failing_part_way_through_its_answer_reports_none_of_it_and_says_where_it_stopped(sitegen, tmp_path):
    # OpenAlex sends page 1, then fails on page 2. Nothing of the answer is counted (new records of page 1 are
    # reported by the next run that reads the whole answer, once), seen_ids keep what they had, the run is
    # incomplete, and it says the source stopped part-way, not that it was never reached.
    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0)], [])
    run(review, FIRST, providers, add=True)
    seen = state(review)["seen_ids"]
    works = [work(index) for index in range(6)]

    def second_page_fails(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org" and request.url.params.get("cursor") != "*":
            return httpx.Response(503)
        if request.url.host == "api.openalex.org":
            return httpx.Response(200, json={"meta": {"count": 6, "next_cursor": "page-2"}, "results": works[:3]})
        return providers(request)

    paged = SourceSettings(max_records=1000, openalex_per_page=3)
    result = update(review, SECOND, "live", settings=paged, transport=httpx.MockTransport(second_page_fails))
    assert not result.complete and result.searches[0].new == [] and state(review)["seen_ids"] == seen
    report = markdown_report(result)
    assert "OpenAlex stopped on page 2 of its answer this run (unavailable)" in report.replace("\\", "")
    assert "having sent 3 of the 6 records it found: those are not counted, and this run is incomplete" in report
    assert "OpenAlex was not reached" not in report
    [openalex] = [event["payload"] for event in ledger(review) if event["ts"] == SECOND
                  and event["payload"].get("source") == "openalex"]
    assert openalex["complete"] is False and openalex["record_ids"] == [] and "page 2" in openalex["note"]
    providers.works = works
    third = update(review, THIRD, "live", settings=paged, transport=httpx.MockTransport(providers))
    assert third.complete and third.searches[0].new == [w["doi"].removeprefix("https://doi.org/").lower()
                                                        for w in works[1:]]


def test_an_id_removed_from_seen_ids_by_hand_stops_the_next_update_before_anything_is_reported(sitegen, tmp_path,
                                                                                                monkeypatch):
    # With the id gone, the run would take the record for unseen (it stays out of a second batch, being in the
    # first, but the search would count it as new to it): the update is refused at the file's line, and nothing
    # is asked of a provider or written.
    from conftest import tree_bytes

    review = new_review(sitegen, tmp_path)
    providers = Providers([work(0), work(3)], [])
    run(review, FIRST, providers, add=True)
    saved = review / "searches" / "watch.json"
    data = json.loads(saved.read_text())
    removed = data["seen_ids"].pop(0)
    saved.write_text(json.dumps(data, indent=2))
    before = tree_bytes(review)
    asked: list[httpx.Request] = []
    real_open = update_module.open_fetcher
    monkeypatch.setattr(update_module, "open_fetcher", lambda mode, snapshots, session="", transport=None:
                        real_open("live", None, transport=httpx.MockTransport(lambda r: asked.append(r) or providers(r))))
    code, out, err = sitegen("update", review, "--at", SECOND)
    assert code == 1 and f"{saved}:" in err and "seen_ids lacks" in err and removed in err and "nothing was written" in err
    assert asked == [] and tree_bytes(review) == before
