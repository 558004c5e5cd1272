"""`sitegen import-decisions` puts a decision only on the record that is the row's work.

A DOI or PMID match holds only when the row and the record are one work as the identity graph requires
(titles alike, both notices about another work or neither); a row `sitegen import` read is found again by
its content key; a confirmed duplicate is resolved to its canonical record before ambiguity is judged.
The stroke rows are real (bib-dedupe's stroke search export, tests/fixtures/dedupe/stroke), laid out as
Rayyan's CSV export.
"""

from __future__ import annotations

import csv
import io

from conftest import FIXTURES
from test_import import new_review

from sitegen.records.entry import Entry
from sitegen.references.records import entry_record
from sitegen.screening.imports import RecordIndex
from sitegen.text import counted

STROKE = FIXTURES / "dedupe" / "stroke" / "records_pre_merged.csv"
TRIAL = {"ID": "t1", "ENTRYTYPE": "article", "author": "Smith, John", "year": "2020", "journal": "Lancet",
         "title": "Statins for primary prevention of stroke in older adults: a randomised trial",
         "doi": "10.1016/S0140-6736(20)00001-1"}


def _rayyan(rows: list[dict[str, str]], vote: str = "Excluded") -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    columns = ["ID", "title", "author", "year", "journal", "volume", "issue", "pages", "doi"]
    writer.writerow([*columns, "notes"])
    for row in rows:
        writer.writerow([row.get("number" if name == "issue" else name, "") for name in columns]
                        + [f'RAYYAN-INCLUSION: {{"Kofi"=>"{vote}"}}'])
    return out.getvalue()


def _index(*entries: dict[str, str]) -> RecordIndex:
    records = [entry_record(Entry(fields["ID"], fields, 1)) for fields in entries]
    return RecordIndex({record.id: record for record in records})


def test_an_erratum_with_the_trials_doi_is_not_the_trial():
    index = _index(TRIAL)
    erratum = Entry("2", {**TRIAL, "title": "Erratum: Statins for primary prevention of stroke in older adults"}, 2)
    ids, _, why = index.match(erratum)
    assert ids == [] and "is a notice about another work" in why
    assert index.match(Entry("3", {**TRIAL, "title": "Dietary salt and blood pressure in children"}, 3))[0] == []
    # The trial itself, its title written a little differently, or a row without a title, is the trial.
    assert index.match(Entry("4", {**TRIAL, "title": "Statins for primary prevention of stroke in older adults"},
                             4))[:2] == (["10.1016/s0140-6736(20)00001-1"], "doi")
    assert index.match(Entry("5", {"doi": TRIAL["doi"]}, 5))[0] == ["10.1016/s0140-6736(20)00001-1"]


def test_the_same_holds_for_a_pmid():
    index = _index({**TRIAL, "doi": "", "pmid": "32222222"})
    ids, _, why = index.match(Entry("2", {"pmid": "32222222", "title": "Reply to: Statins for stroke"}, 2))
    assert ids == [] and "PMID" in why


def test_an_erratum_row_puts_nothing_on_the_trial(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    ris = tmp_path / "trial.ris"
    ris.write_text("TY  - JOUR\nTI  - " + TRIAL["title"] + "\nAU  - Smith, John\nPY  - 2020\nJO  - Lancet\n"
                   "DO  - " + TRIAL["doi"] + "\nER  - \n")
    assert sitegen("import", review, ris, "--at", "2026-02-01T00:00:00Z")[0] == 0
    export = tmp_path / "rayyan.csv"
    export.write_text(_rayyan([{**TRIAL, "title": "Erratum: Statins for primary prevention of stroke in older "
                                                  "adults"}]))
    code, out, err = sitegen("import-decisions", review, export, "--tool", "rayyan", "--reviewer", "kofi",
                             "--rayyan-reviewer", "Kofi")
    assert code == 1 and "nothing was written" in err  # its one row matched nothing
    assert f"{export}:2: unmatched: 10.1016/s0140-6736(20)00001-1 has its DOI but is another work" in out
    assert not (review / "screening" / "title-abstract" / "kofi.csv").exists()


def test_decisions_on_an_imported_file_with_duplicates_reach_each_canonical_record_once(sitegen, tmp_path):
    rows = list(csv.DictReader(STROKE.open(encoding="utf-8")))[:60]
    review = new_review(sitegen, tmp_path)
    export = tmp_path / "rayyan.csv"
    export.write_text(_rayyan(rows))
    assert sitegen("import", review, export, "--at", "2026-02-01T00:00:00Z")[0] == 0
    duplicates = list(csv.DictReader((review / "duplicates.csv").open()))
    assert duplicates, "the first 60 stroke rows hold duplicates the matcher finds"
    code, out, err = sitegen("import-decisions", review, export, "--tool", "rayyan", "--reviewer", "kofi",
                             "--rayyan-reviewer", "Kofi")
    assert code == 0, err
    assert f"{counted(len(rows), 'row')}: {len(rows)} matched" in out and " 0 unmatched, 0 ambiguous" in out
    written = list(csv.DictReader((review / "screening" / "title-abstract" / "kofi.csv").open()))
    decided = {row["record_id"] for row in written}
    assert len(decided) == len(written) and not decided & {row["record_id"] for row in duplicates}
    assert sitegen("check", review)[0] == 0


def test_a_rows_title_carrying_a_databases_label_or_notes_is_the_record_its_doi_names():
    # Compared as the identity graph compares two records sharing a DOI (matched_title): a screening tool's export
    # of a short title with a label ("[Preprint] ...") or MEDLINE's bracketed title with index notes was refused
    # as "another work", its label counted as title words.
    index = _index({**TRIAL, "title": "Ageing"})
    for title in ("[Preprint] Ageing", "[Ageing]. [Review] [33 refs]"):
        assert index.match(Entry("2", {**TRIAL, "title": title}, 2))[:2] == (["10.1016/s0140-6736(20)00001-1"], "doi")
    # an ampersand is the "and" MEDLINE spells out; another title is still another work
    index = _index({**TRIAL, "title": "Diet and exercise"})
    assert index.match(Entry("3", {**TRIAL, "title": "Diet & exercise"}, 3))[0] == ["10.1016/s0140-6736(20)00001-1"]
    ids, _, why = index.match(Entry("4", {**TRIAL, "title": "[Preprint] Sleep and memory in rats"}, 4))
    assert ids == [] and "its title is another" in why
