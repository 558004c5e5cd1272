"""What an import means for PRISMA, for the next update, and for exports.

- PRISMA identifies an imported file's entries, not its distinct records: a record a file holds twice is a
  duplicate removed, and a file whose entries name their databases counts under each of them.
- After `import --seen`, an update result sitegen matches by metadata to a record already found is no new work:
  it is in the run's batch (screened if a reviewer says `different`) but not reported as new.
- The same file given twice to one import is imported once; `export --records all` leaves out confirmed
  duplicates, as PRISMA does.
Real data: the stroke search export (bib-dedupe, tests/fixtures/dedupe/stroke) and the example review.
"""

from __future__ import annotations

import csv
import io
import json

from conftest import FIXTURES
from test_import import held, import_json, imports, new_review, prisma

import sitegen.living.update as living_update
from sitegen.commands import update
from sitegen.records.entry import Entry
from sitegen.references.records import entry_record
from sitegen.sources.outcome import SourceOutcome
from sitegen.workspace import open_review

STROKE = FIXTURES / "dedupe" / "stroke" / "records_pre_merged.csv"
FIRST, SECOND = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"


def _stroke(count: int) -> list[dict[str, str]]:
    return list(csv.DictReader(STROKE.open(encoding="utf-8")))[:count]


def _csv(rows: list[dict[str, str]], databases: list[str] | None = None) -> str:
    out = io.StringIO()
    columns = ["ID", "ENTRYTYPE", "author", "title", "year", "journal", "volume", "number", "pages"]
    writer = csv.writer(out)
    writer.writerow(columns + ["database"] * bool(databases))
    for n, row in enumerate(rows):
        writer.writerow([f"e{n}", *(row.get(name, "") for name in columns[1:])] + ([databases[n]] if databases else []))
    return out.getvalue()


def test_prisma_identifies_every_entry_and_a_repeat_is_a_duplicate_removed(sitegen, tmp_path):
    rows = _stroke(40)
    review = new_review(sitegen, tmp_path)
    path = tmp_path / "export.csv"
    path.write_text(_csv(rows + rows[:5]))  # five entries twice, as an export holding them twice
    result = import_json(sitegen, review, path, "--at", FIRST)
    counts = prisma(sitegen, review)
    records = len(held(review).records) - len(list(csv.DictReader((review / "duplicates.csv").open())))
    assert result["files"][0]["entries"] == 45
    assert counts["identified_other_methods"] == 45 and counts["records"] == records
    # Found by other methods, so removed on that route: the databases arm identified nothing to remove.
    assert counts["other_duplicates_removed"] == 45 - records >= 5 and counts["duplicates_removed"] == 0
    assert counts["identified_other_methods"] == counts["other_duplicates_removed"] + counts["other_screened"] \
        + counts["other_awaiting_screening"]
    assert sum(run["identified_other_methods"] for run in counts["runs"]) == 45
    assert sum(run["other_duplicates_removed"] for run in counts["runs"]) == counts["other_duplicates_removed"]


def test_a_file_from_several_databases_counts_under_each(sitegen, tmp_path):
    rows = _stroke(3)
    review = new_review(sitegen, tmp_path)
    path = tmp_path / "ebsco.csv"
    path.write_text(_csv([rows[0], rows[0], rows[2]], ["PubMed", "Embase", "Embase"]))
    result = import_json(sitegen, review, path, "--at", FIRST)
    assert result["files"][0]["method"] == "database"
    assert imports(review)[0]["file"]["entry_ids"].keys() == {"pubmed", "Embase"}
    counts = prisma(sitegen, review)
    assert counts["identified_by_source"] == {"Embase": 2, "pubmed": 1}
    assert (counts["identified_databases"], counts["duplicates_removed"], counts["records"]) == (3, 1, 2)


def test_the_same_file_twice_is_imported_once(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    path = tmp_path / "export.csv"
    path.write_text(_csv(_stroke(6)))
    copy = tmp_path / "copy.csv"
    copy.write_bytes(path.read_bytes())
    result = import_json(sitegen, review, path, tmp_path / "." / "export.csv", copy, "--at", FIRST)
    assert [item["name"] for item in result["files"]] == ["export.csv"]
    assert result["repeated_files"] == [f"{tmp_path / '.' / 'export.csv'}: given more than once; imported once",
                                        f"{copy}: the same content as {path}; imported once"]
    assert prisma(sitegen, review)["identified_other_methods"] == 6


def test_export_all_leaves_out_confirmed_duplicates(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    path = tmp_path / "export.csv"
    path.write_text(_csv(_stroke(40)))
    import_json(sitegen, review, path, "--at", FIRST)
    duplicates = {row["record_id"] for row in csv.DictReader((review / "duplicates.csv").open())}
    code, out, err = sitegen("export", review, "--format", "csl-json", "--records", "all")
    assert code == 0, err
    exported = {item["id"] for item in json.loads(out)}
    assert duplicates and not exported & duplicates
    assert len(exported) == prisma(sitegen, review)["records"] == len(held(review).records) - len(duplicates)


def test_an_update_result_matching_an_imported_record_is_no_new_work(sitegen, example_copy, tmp_path, monkeypatch):
    row = _stroke(3)[2]  # a real reference, imported without a DOI and marked seen by the saved search
    path = tmp_path / "export.csv"
    path.write_text(_csv([row]))
    import_json(sitegen, example_copy, path, "--seen", "object-in-context", "--at", FIRST)
    # The search now returns that work under a DOI (Crossref's test prefix: the work is real, the DOI is not).
    found = entry_record(Entry("r", {**row, "doi": "10.5555/stroke.3"}, 1), "openalex")
    monkeypatch.setattr(living_update, "run_strategy", lambda fetcher, settings, source, query, native=True, method="database":
                        SourceOutcome(source=source, status="ok", records=[found], total=1))
    monkeypatch.setattr(living_update, "collapse_doubted", lambda outcome, previous: outcome)
    result = update(example_copy, SECOND)
    assert [(new, canonical) for new, canonical, _ in result.matched][0][0] == found.id
    search = result.searches[0]
    assert search.new == [] and search.duplicates == [found.id]
    assert result.summary()["searches"][0]["new_ids"] == []
    assert "No new records since the last run" in living_update.markdown_report(result)
    facts = open_review(example_copy).facts
    batch = next(b for b in facts.screening.batches if b.number == search.batch)
    assert found.id in batch.record_ids and facts.screening.to_screen(batch.record_ids) == []
    # A reviewer who says the two are different works gets it to screen.
    lines = [line.replace(",same,", ",different,", 1) if line.startswith(f"{found.id},") else line
             for line in (example_copy / "duplicates.csv").read_text().splitlines()]
    (example_copy / "duplicates.csv").write_text("\n".join(lines) + "\n")
    facts = open_review(example_copy).facts
    assert facts.screening.to_screen(batch.record_ids) == [found.id]


def test_a_database_an_export_names_by_a_providers_label_is_that_provider(sitegen, tmp_path):
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    source = tmp_path / "export.ris"
    source.write_text("TY  - JOUR\nTI  - A study of memory in rats\nAU  - Smith, J\nPY  - 2020\nDB  - PubMed\n"
                      "ER  - \n", encoding="utf-8")
    code, out, err = sitegen("import", review, source, "--at", "2026-02-01T00:00:00Z")
    assert code == 0, out + err
    counts = json.loads(sitegen("prisma", review, "--json")[1])
    assert counts["identified_by_source"] == {"pubmed": 1}


def test_entries_of_one_file_that_are_one_record_and_entries_naming_no_database_are_said(sitegen, tmp_path):
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    source = tmp_path / "mixed.ris"
    entry = "TY  - JOUR\nTI  - A study of memory in rats\nAU  - Smith, J\nPY  - 2020\n{db}ER  - \n"
    source.write_text(entry.format(db="DB  - Embase\n") + entry.format(db="") + entry.format(db=""), encoding="utf-8")
    code, out, err = sitegen("import", review, source, "--at", "2026-02-01T00:00:00Z")
    assert code == 0, out + err
    assert "are one record" in out and "entries name no database while others do" in out


def test_a_version_counts_the_duplicates_confirmed_when_it_was_published(sitegen, tmp_path):
    # A version's counts are derived again at every build: without the duplicates confirmed then, one the review
    # removed came back as a record awaiting screening on the version's page, against the home page's.
    review = new_review(sitegen, tmp_path)
    path = tmp_path / "export.csv"
    path.write_text(_csv(_stroke(8)))
    import_json(sitegen, review, path, "--at", FIRST, "--method", "database", "--source", "Embase")
    duplicate, kept, *others = held(review).records
    (review / "duplicates.csv").write_text(f"record_id,duplicate_of,decision,reviewer,note\n"
                                           f"{duplicate},{kept},same,ann,\n")
    folder = review / "screening" / "title-abstract"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ann.csv").write_text("record_id,decision,reason,note\n"
                                    + "".join(f"{rid},exclude,,\n" for rid in [kept, *others]))
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    site = tmp_path / "site"
    code, _, err = sitegen("publish", review, "--out", site, "--now", SECOND)
    assert code == 0, err
    assert json.loads((review / "versions" / "1.json").read_text())["duplicates"] == {duplicate: kept}
    now = json.loads((site / "downloads" / "prisma.json").read_text())
    version = json.loads((site / "v" / "1" / "prisma.json").read_text())
    assert now["duplicates_removed"] >= 1 and now["records"] == len(others) + 1
    assert {key: version[key] for key in now if key != "runs"} == {key: now[key] for key in now if key != "runs"}
    # a duplicate confirmed or withdrawn since is a change to publish
    (review / "duplicates.csv").write_text("record_id,duplicate_of,decision,reviewer,note\n")
    (folder / "ann.csv").write_text("record_id,decision,reason,note\n"
                                    + "".join(f"{rid},exclude,,\n" for rid in [duplicate, kept, *others]))
    code, out, _ = sitegen("publish", review, "--out", site, "--now", "2024-03-01T00:00:00Z")
    assert code == 0 and out.startswith("published version 2"), out


def test_a_study_kept_under_the_record_it_was_confirmed_to_duplicate_is_still_a_previous_study(sitegen, tmp_path):
    # Version 1 includes a record; a later import brings a better record of the same work, which is included,
    # and the first is confirmed its duplicate. The study is still included: not "removed" plus "new".
    review = new_review(sitegen, tmp_path)
    config = review / "review.yaml"  # one reviewer per stage, so one file of decisions settles each
    config.write_text(config.read_text().replace("site:", "screening:\n  title_abstract_reviewers: 1\n"
                                                          "  full_text_reviewers: 1\nsite:", 1))
    rows = _stroke(20)
    path = tmp_path / "first.csv"
    path.write_text(_csv(rows[:1]))
    import_json(sitegen, review, path, "--at", FIRST, "--method", "database", "--source", "Embase")
    [first] = held(review).records

    def include(*ids: str) -> None:
        for stage in ("title-abstract", "full-text"):
            folder = review / "screening" / stage
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "ann.csv").write_text("record_id,decision,reason,note\n" + "".join(f"{i},include,,\n" for i in ids))

    include(first)
    site = tmp_path / "site"
    assert sitegen("publish", review, "--out", site, "--now", SECOND)[0] == 0
    path = tmp_path / "second.csv"
    # another work stands for the better record (a reviewer confirms them one, below)
    path.write_text(_csv([next(row for row in rows if row["title"][:30] != rows[0]["title"][:30]
                               and row["year"] == rows[0]["year"])]))
    import_json(sitegen, review, path, "--at", "2024-03-01T00:00:00Z", "--method", "database", "--source", "Embase")
    [later] = [rid for rid in held(review).records if rid != first]
    include(first, later)
    (review / "duplicates.csv").write_text(f"record_id,duplicate_of,decision,reviewer,note\n{first},{later},same,ann,\n")
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    counts = prisma(sitegen, review)
    assert (counts["previous_studies"], counts["previous_removed"], counts["new_studies"]) == (1, 0, 0)
    assert counts["studies_included"] == 1
    # and so says the version that publishes it, page and all
    assert sitegen("publish", review, "--out", site, "--now", "2024-04-01T00:00:00Z")[0] == 0
    version = json.loads((site / "v" / "2" / "prisma.json").read_text())
    assert (version["previous_studies"], version["previous_removed"], version["new_studies"]) == (1, 0, 0)
