"""`sitegen import-decisions`: screening decisions exported from Rayyan, Covidence and ASReview LAB.

The ASReview file is real (SYNERGY's Sep_2021 labels, the source of the example review). No real
Rayyan or Covidence export with a licence to copy was found, so those are built here, in each tool's
CSV layout, from the example review's real records (works from OpenAlex and Europe PMC).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURES, tree_bytes

from sitegen import commands
from sitegen.errors import OptionInvalid
from sitegen.records.entry import Entry
from sitegen.screening import imports as imports_module
from sitegen.screening.imports import RecordIndex, import_decisions, read_export, reason_code
from sitegen.workspace import open_review

SYNERGY = FIXTURES / "asreview" / "Sep_2021_ids.csv"
TA = "screening/title-abstract"
FT = "screening/full-text"


def _records(review) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, (review / "records.jsonl").read_text().splitlines())}


def _decisions(review, rel) -> dict[str, tuple[str, str]]:
    path = review / rel
    if not path.exists():
        return {}
    return {row["record_id"]: (row["decision"], row["reason"]) for row in csv.DictReader(io.StringIO(path.read_text()))}


def _csv(header: list[str], rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows([header, *rows])
    return buffer.getvalue()


def _authors(record, separator) -> str:
    return separator.join(f"{a['family']}, {a.get('given', '')}" for a in record.get("author", []) if "family" in a)


def _year(record) -> str:
    return str(record["issued"]["date-parts"][0][0])


def test_asreview_labels_of_a_real_review_become_a_reviewers_file(example_copy, sitegen):
    code, out, _ = sitegen("import-decisions", example_copy, SYNERGY, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0
    written = _decisions(example_copy, f"{TA}/reviewer-c.csv")
    labels = {row["doi"].removeprefix("https://doi.org/").lower(): row["label_included"]
              for row in csv.DictReader(SYNERGY.open())}
    assert len(written) == 271
    assert all(labels[record_id] == {"include": "1", "exclude": "0"}[decision]
               for record_id, (decision, _) in written.items())
    # The two rows with neither DOI nor a PMID of the review are reported with their lines, not guessed at.
    assert f"{SYNERGY}:143: unmatched" in out and f"{SYNERGY}:266: unmatched" in out
    assert "271 matched, 271 written" in out
    assert sitegen("check", example_copy)[0] == 0
    # Importing again changes nothing: every decision is already there.
    before = tree_bytes(example_copy)
    code, out, _ = sitegen("import-decisions", example_copy, SYNERGY, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0 and "0 written" in out and "271 already there" in out
    assert tree_bytes(example_copy) == before


def test_a_decision_already_made_is_never_overwritten(example_copy, sitegen, tmp_path):
    rows = list(csv.DictReader(SYNERGY.open()))
    flipped = tmp_path / "flipped.csv"
    flipped.write_text(_csv(["doi", "asreview_label"], [[r["doi"], "0" if r["label_included"] == "1" else "1"]
                                                          for r in rows[:3]]))
    before = tree_bytes(example_copy)
    code, out, err = sitegen("import-decisions", example_copy, flipped, "--tool", "asreview", "--reviewer", "reviewer-a")
    assert code == 1 and f"nothing was written: no row of {flipped} could be imported" in err  # none: no success
    assert out.count("conflict:") == 3 and "3 conflicting" in out and "0 written" in out
    assert tree_bytes(example_copy) == before


def test_the_library_refuses_a_reviewer_named_almost_as_the_adjudication_file(example_copy, tmp_path):
    # Refused in the CLI alone, a library caller wrote the file `check` then refuses as a near miss.
    export = tmp_path / "asreview.csv"
    export.write_text(_csv(["doi", "asreview_label"], [["10.1002/hipo.20567", "1"]]))
    before = tree_bytes(example_copy)
    with pytest.raises(OptionInvalid) as refused:
        commands.import_decisions(example_copy, export, "asreview", "adjudicator")
    assert refused.value.option == "--reviewer" and "adjudication.csv" in refused.value.message
    assert tree_bytes(example_copy) == before


@pytest.mark.parametrize("rows", [[["10.9999/no-such-record", "1"]], [["10.1002/hipo.20567", "yes"]]])
def test_an_export_of_which_no_row_can_be_imported_fails(example_copy, sitegen, tmp_path, rows):
    # Unmatched or without a decision: every row is listed with its line, nothing is written, and the exit
    # status says so (a script must not read success from an import of nothing).
    export = tmp_path / "asreview.csv"
    export.write_text(_csv(["doi", "asreview_label"], rows))
    before = tree_bytes(example_copy)
    code, out, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 1 and f"{export}:2: " in out and "nothing was written" in err
    assert tree_bytes(example_copy) == before


def test_entries_without_identifiers_match_only_the_one_record_that_is_the_same_work(example_copy, sitegen, tmp_path):
    records = list(_records(example_copy).values())[:6]
    labels = {i: "1" if d == "include" else "0" for i, (d, _) in _decisions(example_copy, f"{TA}/reviewer-a.csv").items()}
    rows = [["", r["title"], _authors(r, "; "), _year(r), r.get("container-title", ""), labels[r["id"]]]
            for r in records]
    rows.append(["", "Object-in-context memory in a species no record mentions", "Nobody, A", "2020", "", "0"])
    rows.append(["", "", "", "", "", "1"])  # nothing to match by
    export = tmp_path / "asreview.csv"
    export.write_text(_csv(["doi", "title", "authors", "year", "journal", "included"], rows))
    code, out, _ = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0
    assert set(_decisions(example_copy, f"{TA}/reviewer-c.csv")) == {r["id"] for r in records}
    assert f"{export}:8: unmatched" in out and f"{export}:9: unmatched: no DOI, PMID or title" in out


def test_a_decision_that_would_break_later_screening_is_refused(example_copy, sitegen, tmp_path):
    # Excluding at title/abstract a record already assessed in full text puts it in conflict there.
    assessed = next(iter(_decisions(example_copy, f"{FT}/reviewer-a.csv")))
    export = tmp_path / "asreview.csv"
    export.write_text(_csv(["doi", "included"], [[assessed, "0"], ["10.1001/jama.300.3.287", "0"]]))
    code, out, _ = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0
    assert f"{export}:2: refused: {assessed}: it would break the review's screening rules" in out
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {"10.1001/jama.300.3.287": ("exclude", "")}
    assert sitegen("check", example_copy)[0] == 0


def test_many_refused_decisions_are_found_in_a_few_checks_of_the_review(example_copy, sitegen, tmp_path,
                                                                          monkeypatch):
    # Each refused row used to cost a dozen checks of the whole review (halving): hours for a large review.
    assessed = list(_decisions(example_copy, f"{FT}/reviewer-a.csv"))
    assert len(assessed) >= 10
    export = tmp_path / "asreview.csv"
    export.write_text(_csv(["doi", "included"], [[record_id, "0"] for record_id in assessed]
                           + [["10.1001/jama.300.3.287", "0"]]))
    checks = []
    problems = imports_module._problems
    monkeypatch.setattr(imports_module, "_problems", lambda *args: checks.append(1) or problems(*args))
    code, out, _ = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0
    refused = {record_id for line, record_id in enumerate(assessed, start=2)
               if f"{export}:{line}: refused: {record_id}: it would break the review's screening rules" in out}
    assert len(refused) >= len(assessed) - 2  # a record excluded by both reviewers at full text stays excludable
    written = _decisions(example_copy, f"{TA}/reviewer-c.csv")
    assert written == {record_id: ("exclude", "") for record_id in [*assessed, "10.1001/jama.300.3.287"]
                       if record_id not in refused}
    assert len(checks) <= 4
    assert sitegen("check", example_copy)[0] == 0


def test_decisions_leaving_a_batch_in_full_text_with_conflicts_are_found_in_a_few_checks(example_copy, sitegen,
                                                                                         tmp_path, monkeypatch):
    # A third reviewer disagreeing with two who agree puts the record in conflict; in a batch already at full
    # text that breaks a rule on other rows (every full-text row of the batch), which halving found one by one.
    a, b = _decisions(example_copy, f"{TA}/reviewer-a.csv"), _decisions(example_copy, f"{TA}/reviewer-b.csv")
    assessed = set(_decisions(example_copy, f"{FT}/reviewer-a.csv"))
    agreed_out = [i for i, (decision, _) in a.items() if decision == "exclude" and b.get(i, ("",))[0] == "exclude"
                  and i not in assessed]
    disagreeing, agreeing = agreed_out[:12], agreed_out[12:24]
    assert len(agreeing) == 12
    export = tmp_path / "asreview.csv"
    export.write_text(_csv(["doi", "included"], [[i, "1"] for i in disagreeing] + [[i, "0"] for i in agreeing]))
    checks = []
    problems = imports_module._problems
    monkeypatch.setattr(imports_module, "_problems", lambda *args: checks.append(1) or problems(*args))
    code, out, _ = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0
    for line, record_id in enumerate(disagreeing, start=2):
        assert f"{export}:{line}: refused: {record_id}: it would break the review's screening rules" in out
    assert out.count("conflicts are not adjudicated yet") == len(disagreeing)
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {i: ("exclude", "") for i in agreeing}
    assert len(checks) <= 4
    assert sitegen("check", example_copy)[0] == 0


def test_a_confirmed_duplicates_decision_goes_to_its_canonical_record(example_copy):
    review = open_review(example_copy).review
    exported = read_export("doi,included\r\n10.1002/cpns.87,0\r\n", "asreview", "reviewer-c")
    report, text = import_decisions(review, {"10.1002/cpns.87": "10.1001/jama.300.3.287"}, exported,
                                    "title-abstract", "reviewer-c")
    assert [d.record_id for d in report.written] == ["10.1001/jama.300.3.287"]
    assert text == "record_id,decision,reason,note\n10.1001/jama.300.3.287,exclude,,\n"


@pytest.mark.parametrize(("label", "written", "conflict"), [("1", [], True), ("0", ["10.1001/jama.300.3.287"], False)])
def test_a_decision_on_a_confirmed_duplicate_is_the_reviewers_word_on_its_canonical(example_copy, label, written,
                                                                                  conflict):
    # The reviewer excluded a record later confirmed a duplicate: an export including it (matched, as every row is,
    # to the canonical record) contradicts the file, though the canonical record has no row of its own there.
    (example_copy / TA / "reviewer-c.csv").write_text("record_id,decision,reason,note\n10.1002/cpns.87,exclude,,\n")
    review = open_review(example_copy).review
    exported = read_export(f"doi,included\r\n10.1002/cpns.87,{label}\r\n", "asreview", "reviewer-c")
    report, _ = import_decisions(review, {"10.1002/cpns.87": "10.1001/jama.300.3.287"}, exported,
                                 "title-abstract", "reviewer-c")
    assert [d.record_id for d in report.written] == written  # agreeing, the canonical record's own row is written
    assert [c.why for c in report.conflicts] == ([
        "10.1001/jama.300.3.287: the decision file says 'exclude' of 10.1002/cpns.87, a confirmed duplicate of it, "
        "the export 'include'; left as it was"] if conflict else [])


def test_the_matcher_never_guesses_from_a_title_alone():
    index = RecordIndex({})
    assert index.match(Entry("1", {"title": "Object recognition memory in rats"}, 2)) == ([], "metadata", "")


def _rayyan(sitegen, review, tmp_path, records, notes):
    """Rayyan's CSV export of `records` with their `notes`, imported as Alice's decisions."""
    header = ["key", "title", "authors", "journal", "year", "pubmed_id", "url", "abstract", "notes", "doi"]
    rows = [[str(n), r["title"], _authors(r, " and "), r.get("container-title", ""), _year(r), r["PMID"], "", "",
             note, ""] for n, (r, note) in enumerate(zip(records, notes, strict=False))]
    export = tmp_path / "articles.csv"
    export.write_text(_csv(header, rows))
    code, out, _ = sitegen("import-decisions", review, export, "--tool", "rayyan", "--reviewer", "reviewer-c",
                           "--rayyan-reviewer", "alice")
    return export, code, out


def test_rayyan_notes_give_the_named_reviewers_decision_and_the_protocols_reason(example_copy, sitegen, tmp_path):
    records = list(_records(example_copy).values())
    notes = [
        'RAYYAN-INCLUSION: {"Alice"=>"Excluded", "Bob"=>"Included"} | RAYYAN-EXCLUSION-REASONS: Non-rodent species,'
        'wrong population',
        'RAYYAN-INCLUSION: {"Alice"=>"Included", "Bob"=>"Excluded"} | RAYYAN-LABELS: rats',
        'RAYYAN-INCLUSION: {"Alice"=>"Maybe"}',
        'RAYYAN-INCLUSION: {"Bob"=>"Included"}',
    ]
    export, code, out = _rayyan(sitegen, example_copy, tmp_path, records, notes)
    assert code == 0
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {records[0]["id"]: ("exclude", "non-rodent"),
                                                                  records[1]["id"]: ("include", "")}
    # Rayyan's Maybe is sitegen's maybe, a decision: here one the screening rules refuse (it disagrees with the
    # others' in a batch assessed in full text), as they would refuse any (test_a_maybe_...).
    assert f"{export}:4: refused: {records[2]['id']}: it would break the review's screening rules" in out
    assert f"{export}:5: undecided: 'alice' has no decision in it (decisions by: bob)" in out
    assert f"{export}:2: reason not mapped: {records[0]['id']}: 'wrong population'" in out
    assert sitegen("check", example_copy)[0] == 0


def test_a_rayyan_export_of_another_reviewers_votes_says_which_option_imports_them(sitegen, tmp_path):
    # The real Rayyan export holds Emily's votes: `--reviewer ada` wrote nothing, and the rows said whose votes they
    # were but not how to import them, so a new user was left at "no row could be imported".
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-06-01T09:00:00Z")
    assert sitegen("import", review, FIXTURES / "ris" / "rayyan.ris", "--at", "2026-06-01T09:10:00Z")[0] == 0
    export = FIXTURES / "spreadsheet" / "rayyan.csv"
    code, out, _ = sitegen("import-decisions", review, export, "--tool", "rayyan", "--reviewer", "ada")
    assert code == 1
    assert (f"{export}:2: undecided: 'ada' has no decision in it (decisions by: emily); if one of them is 'ada', "
            "give their name in Rayyan with --rayyan-reviewer") in out
    code, out, err = sitegen("import-decisions", review, export, "--tool", "rayyan", "--reviewer", "ada",
                             "--rayyan-reviewer", "emily")
    assert code == 0, out + err
    assert len(_decisions(review, f"{TA}/ada.csv")) == 2


def test_a_maybe_keeps_only_its_own_reviewers_reasons_in_its_note(example_copy, sitegen, tmp_path):
    # Rayyan's Maybe is written as a maybe, taking none of the reasons Rayyan lists (its excluding reviewers'). A
    # sheet's Maybe giving a reason is the reviewer's own: kept in the note (a maybe holds no reason code).
    by_id = _records(example_copy)
    records = [by_id["10.1016/j.neuroscience.2019.10.055"], by_id["10.1111/adb.12780"]]  # of a batch not in full text
    export, code, out = _rayyan(sitegen, example_copy, tmp_path, records, [
        'RAYYAN-INCLUSION: {"Alice"=>"Maybe", "Bob"=>"Excluded"} | RAYYAN-EXCLUSION-REASONS: Non-rodent species'])
    assert code == 0, out
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {records[0]["id"]: ("maybe", "")}
    assert _notes(example_copy, f"{TA}/reviewer-c.csv") == {records[0]["id"]: ""}
    export, code, out, err = _import(sitegen, example_copy, tmp_path, ["Title", "DOI", "Decision", "Exclusion reason"],
                                     [[records[1]["title"], records[1]["DOI"], "Maybe", "Non-rodent species"]],
                                     "--tool", "covidence", name="sheet.csv")
    assert code == 0, out + err
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv")[records[1]["id"]] == ("maybe", "")
    assert _notes(example_copy, f"{TA}/reviewer-c.csv")[records[1]["id"]] == \
        "Exclusion reason in the tool: Non-rodent species."
    assert sitegen("check", example_copy)[0] == 0


def test_rayyan_collaborators_sharing_a_name_decide_nothing_for_either(example_copy, sitegen, tmp_path):
    # Two collaborators shown as "Alice" (display names are not unique in Rayyan) who voted otherwise: the vote
    # read must not be whichever the notes list last. Agreeing, their vote is the reviewer's.
    records = list(_records(example_copy).values())
    notes = ['RAYYAN-INCLUSION: {"Alice"=>"Included", "Bob"=>"Excluded", "alice"=>"Excluded"} | '
             'RAYYAN-EXCLUSION-REASONS: Non-rodent species',
             'RAYYAN-INCLUSION: {"Alice"=>"Excluded", "Alice"=>"Excluded"} | RAYYAN-EXCLUSION-REASONS: Non-rodent species']
    export, code, out = _rayyan(sitegen, example_copy, tmp_path, records, notes)
    assert code == 0, out
    assert f"{export}:2: undecided: 'alice' names several reviewers in it, who decided otherwise" in out
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {records[1]["id"]: ("exclude", "non-rodent")}


def test_covidence_full_text_exclusions_keep_to_the_screening_rules(example_copy, sitegen, tmp_path):
    records = _records(example_copy)
    screened_in = [i for i, (decision, _) in _decisions(example_copy, f"{FT}/reviewer-a.csv").items()]
    excluded_at_ta = next(i for i, (d, _) in _decisions(example_copy, f"{TA}/reviewer-a.csv").items()
                          if d == "exclude" and _decisions(example_copy, f"{TA}/reviewer-b.csv")[i][0] == "exclude")
    chosen = [(screened_in[0], "No control group tested"), (screened_in[1], "no-control-group"),
              (screened_in[2], "Wrong outcome"), (excluded_at_ta, "Non-rodent species")]
    header = ["Title", "Authors", "Published Year", "Journal", "DOI", "Covidence #", "Study", "Notes", "Tags",
              "Exclusion reason"]
    rows = [[records[i]["title"], "", _year(records[i]), "", records[i]["DOI"].upper(), f"#{n}", "", "", "", reason]
            for n, (i, reason) in enumerate(chosen)]
    export = tmp_path / "covidence-excluded.csv"
    export.write_text(_csv(header, rows))
    code, out, _ = sitegen("import-decisions", example_copy, export, "--tool", "covidence", "--reviewer",
                           "reviewer-c", "--stage", "full-text")
    assert code == 0
    assert _decisions(example_copy, f"{FT}/reviewer-c.csv") == {screened_in[0]: ("exclude", "no-control-group"),
                                                               screened_in[1]: ("exclude", "no-control-group")}
    assert f"{export}:4: refused: {screened_in[2]}: an exclusion at full text needs a reason code" in out
    assert f"{export}:5: refused: {excluded_at_ta}: record '{excluded_at_ta}' was excluded at title/abstract" in out
    assert sitegen("check", example_copy)[0] == 0


@pytest.mark.parametrize(("tool", "text", "message"), [
    ("covidence", "Title,DOI\r\nA title,10.1002/dev.21432\r\n", ":1: a Covidence export of included or excluded"),
    ("rayyan", "key,title\r\n1,A title\r\n", ":1: no notes column: not Rayyan's CSV export"),
    ("asreview", "title,doi\r\nA title,10.1002/dev.21432\r\n", ":1: no label column"),
    ("asreview", 'title,included\r\nA title,1\r\n"unclosed,1\r\n', ":3: "),
    ("asreview", "title,included\r\nA title,1,2\r\n", ":2: 3 fields where the header has 2"),
    # A column read twice (names in any case): which of its values is the row's is not known.
    ("asreview", "doi,title,DOI,included\r\n10.1002/dev.21432,A title,10.1002/hipo.20567,1\r\n",
     ":1: column 'doi' appears twice"),
    ("covidence", "sep=;\r\nTitle;Notes;notes\r\nA title;a;b\r\n", ":2: column 'notes' appears twice"),
])
def test_an_export_that_cannot_be_read_is_reported_and_nothing_written(example_copy, sitegen, tmp_path, tool,
                                                                        text, message):
    export = tmp_path / "export.csv"
    export.write_text(text)
    before = tree_bytes(example_copy)
    code, _, err = sitegen("import-decisions", example_copy, export, "--tool", tool, "--reviewer", "reviewer-c")
    assert code != 0
    assert f"{export}{message}" in err and "nothing was written" in err
    assert tree_bytes(example_copy) == before


def test_an_export_not_in_utf8_names_its_line(example_copy, sitegen, tmp_path):
    export = tmp_path / "export.csv"
    export.write_bytes(b"title,included\r\nA title,1\r\nCaf\xe9,0\r\n")
    code, _, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code != 0 and f"{export}:3: not UTF-8 text" in err
    # The way out it names is an option this command has: a Latin-1 export is read with it.
    assert "--encoding latin-1" in err
    records = [record for record in _records(example_copy).values() if record.get("DOI")
               and record["title"].isascii()][:2]
    latin = tmp_path / "latin.csv"
    latin.write_bytes(_csv(["title", "doi", "asreview_label", "asreview_note"],
                           [[record["title"], record["DOI"], "1", "caf\u00e9"] for record in records]).encode("latin-1"))
    code, out, err = sitegen("import-decisions", example_copy, latin, "--tool", "asreview", "--reviewer", "reviewer-c",
                             "--encoding", "latin-1")
    assert code == 0 and "2 rows: 2 matched" in out, err
    code, _, err = sitegen("import-decisions", example_copy, latin, "--tool", "asreview", "--reviewer", "reviewer-c",
                           "--encoding", "klingon")
    assert code == 2 and "Invalid value for '--encoding': 'klingon' is not a text encoding Python knows" in err


def test_a_tools_reason_maps_to_the_code_whose_code_or_label_it_names():
    reasons = {"non-rodent": "Non-rodent species", "no-control-group": "No control group tested"}
    assert reason_code("NON-RODENT SPECIES", reasons) == "non-rodent"
    assert reason_code("no control", reasons) is None
    assert reason_code("No-control-group", reasons) == "no-control-group"


def test_a_cell_of_many_commas_is_read_in_one_pass(monkeypatch):
    # Each comma-separated part is tried as the start of a reason only with the few parts after it a label
    # could span: a hostile cell of 2,000 commas was cubic work (a minute per row, with 1,000).
    reasons = {"no-control-group": "No control group, or none tested", "non-rodent": "Non-rodent species"}
    compared = []
    plain = imports_module._plain
    monkeypatch.setattr(imports_module, "_plain", lambda text: compared.append(len(text)) or plain(text))
    written = "x," * 2000 + "no control group,, or none tested, non-rodent species"
    found = imports_module.mapped_reasons((written,), reasons)
    assert found[-2:] == [("no control group, , or none tested", "no-control-group"),
                          ("non-rodent species", "non-rodent")]
    assert len(found) == 2002 and all(code is None for _, code in found[:-2])
    assert len(compared) < 10 * 2004 and sum(compared) < 100 * 2004  # texts compared: few, and short


def appended_to_reviewer_c(sitegen, review: Path, tmp_path: Path, written: bytes, labelled: slice) -> bytes:
    """screening/title-abstract/reviewer-c.csv written as `written`, then `import-decisions` of an ASReview export of
    the SYNERGY rows `labelled` (a row's DOI the file names is one it already holds); the file's bytes after."""
    rows = list(csv.DictReader(SYNERGY.open()))
    path = review / TA / "reviewer-c.csv"
    path.write_bytes(written)
    export = tmp_path / "asreview.csv"
    export.write_text(_csv(["doi", "asreview_label"], [[r["doi"], r["label_included"]] for r in rows[labelled]]))
    code, out, err = sitegen("import-decisions", review, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0, out + err
    return path.read_bytes()


def first_synergy_doi() -> str:
    """The DOI of the first SYNERGY row, as a record id."""
    return next(csv.DictReader(SYNERGY.open()))["doi"].removeprefix("https://doi.org/").lower()


def test_appending_to_a_reviewers_file_keeps_its_bytes_and_its_line_breaks(example_copy, sitegen, tmp_path):
    # A reviewer's file written on Windows (CRLF), with a note of two lines: its bytes stay, and the rows
    # added end as its lines do, so Git shows only the rows added.
    written = f'record_id,decision,reason,note\r\n{first_synergy_doi()},include,,"two\r\nlines"\r\n'.encode()
    after = appended_to_reviewer_c(sitegen, example_copy, tmp_path, written, slice(1, 4))
    assert after.startswith(written) and after.count(b"\r\n") == after.count(b"\n") == 6
    assert sitegen("check", example_copy)[0] == 0


def test_appending_to_a_reviewers_file_whose_first_line_declares_commas_adds_under_its_header(example_copy, sitegen,
                                                                                                 tmp_path):
    # Excel's "sep=," before the header (which check reads): the header is the line after it.
    written = "sep=,\nrecord_id,decision,note,reason\n"
    text = appended_to_reviewer_c(sitegen, example_copy, tmp_path, written.encode(), slice(0, 3)).decode()
    assert text.startswith(written) and len(text.splitlines()) == 5
    assert all(line.count(",") == 3 and line.split(",")[1] in ("include", "exclude") for line in text.splitlines()[2:])
    assert sitegen("check", example_copy)[0] == 0


def _screened_in(review) -> list[str]:
    return list(_decisions(review, f"{FT}/reviewer-a.csv"))


def _import(sitegen, review, tmp_path, header, rows, *options, name="export.csv", delimiter=","):
    export = tmp_path / name
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerows([header, *rows])
    export.write_text(buffer.getvalue())
    return export, *sitegen("import-decisions", review, export, "--reviewer", "reviewer-c", *options)


COVIDENCE = ["Title", "DOI", "Exclusion reason"]


@pytest.mark.parametrize(("written", "code", "others"), [
    # the protocol's own label holds commas: it is one reason, not three unknown ones
    ("Other measure of context-dependent memory (modified OIC task, odour, fear or operant conditioning)",
     "other-context-measure", ""),
    ("Non-rodent species, No control group tested", "non-rodent", "no-control-group"),  # as tools list two
    ("Non-rodent species; Other measure of context-dependent memory (modified OIC task, odour, fear or operant "
     "conditioning)", "non-rodent", "other-context-measure"),
])
def test_a_reason_label_holding_commas_is_one_reason(example_copy, sitegen, tmp_path, written, code, others):
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[0]
    export, status, out, err = _import(sitegen, example_copy, tmp_path, COVIDENCE,
                                       [[records[chosen]["title"], records[chosen]["DOI"], written]],
                                       "--tool", "covidence", "--stage", "full-text")
    assert status == 0 and "reason not mapped" not in out, out + err
    assert _decisions(example_copy, f"{FT}/reviewer-c.csv") == {chosen: ("exclude", code)}
    # two of the protocol's reasons given: the one written is said, and the other not lost without a word
    said = f"{export}:2: other reasons: {chosen}: excluded for {code}, {others}; a decision holds one reason"
    assert (said in out) == bool(others), out


def _notes(review, rel) -> dict[str, str]:
    return {row["record_id"]: row["note"] for row in csv.DictReader((review / rel).open())}


@pytest.mark.parametrize(("written", "code", "note"), [
    ("Wrong setting", "", "Exclusion reason in the tool: Wrong setting. rats only"),  # no code of the protocol's
    ("Non-rodent species, wrong setting", "non-rodent",
     "Exclusion reasons in the tool: Non-rodent species, wrong setting. rats only"),
    ("Non-rodent species; No control group tested", "non-rodent",  # a second code, which the row cannot hold
     "Exclusion reasons in the tool: Non-rodent species; No control group tested. rats only"),
    ("Non-rodent species", "non-rodent", "rats only"),  # the row's code says it all: the note is the reviewer's
])
def test_a_tools_reason_the_row_cannot_hold_is_kept_in_its_note(example_copy, sitegen, tmp_path, written, code, note):
    # Written at title/abstract without it (a reason is optional there), the reviewer's words were lost.
    records = _records(example_copy)
    chosen = next(iter(records))
    export, status, out, err = _import(sitegen, example_copy, tmp_path, [*COVIDENCE, "Notes"],
                                       [[records[chosen]["title"], records[chosen]["DOI"], written, "rats only"]],
                                       "--tool", "covidence")
    assert status == 0, out + err
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {chosen: ("exclude", code)}
    assert _notes(example_copy, f"{TA}/reviewer-c.csv") == {chosen: note}
    assert sitegen("check", example_copy)[0] == 0


@pytest.mark.parametrize(("reason", "note"), [("", ""), ("Wrong setting", "Exclusion reason in the tool: Wrong setting.")])
def test_a_note_longer_than_a_row_holds_is_left_out_and_said(example_copy, sitegen, tmp_path, reason, note):
    # Cut at 2,000 characters without a word, its missing end read as the reviewer's note; left out, as an
    # over-long abstract is, and said with its length (the tool's reasons, said by import, are kept).
    records = _records(example_copy)
    chosen = next(iter(records))
    export, status, out, err = _import(sitegen, example_copy, tmp_path, [*COVIDENCE, "Notes"],
                                       [[records[chosen]["title"], records[chosen]["DOI"], reason, "x" * 2500]],
                                       "--tool", "covidence", "--decision", "exclude")
    assert status == 0, out + err
    assert _notes(example_copy, f"{TA}/reviewer-c.csv") == {chosen: note}
    assert f"{export}:2: note left out: {chosen}: its note is {2500 + len(note) + bool(note):,} characters long" in out
    assert sitegen("check", example_copy)[0] == 0


def test_rows_of_one_export_that_disagree_write_neither(example_copy, sitegen, tmp_path):
    # A duplicate the tool kept, included in one row and excluded in the other: the file's order must not decide.
    records = _records(example_copy)
    chosen, other = _screened_in(example_copy)[:2]
    row = [records[chosen]["title"], records[chosen]["DOI"]]
    export, status, out, err = _import(sitegen, example_copy, tmp_path, ["title", "doi", "asreview_label"],
                                       [[*row, "1"], [*row, "0"], [*row, "1"],
                                        [records[other]["title"], records[other]["DOI"], "1"]],
                                       "--tool", "asreview")
    assert status == 0, err
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {other: ("include", "")}
    assert f"{export}:2: conflict: {chosen}: line 3 of the export says 'exclude', this row 'include'; neither was " \
           "written" in out
    assert f"{export}:4: conflict: {chosen}: rows of the export disagree on it" in out


def _summary_adds_up(out: str) -> bool:
    """Whether the import's last line accounts for every matched row once: written, already there, repeating
    another row, conflicting or refused."""
    counts = dict((name, int(n)) for n, name in re.findall(
        r"(\d+) (matched|written|already there|repeating another row|conflicting|refused)", out.splitlines()[-1]))
    return counts["matched"] == sum(counts[name] for name in counts if name != "matched")


def test_each_row_of_a_record_the_export_holds_twice_is_listed_and_counted_once(example_copy, sitegen, tmp_path):
    # ASReview LAB keeps a duplicate the reviewer labelled twice, its DOI written another way. Every row not
    # written is listed at its own line, and no row is counted as "already there" that the file does not hold.
    records = _records(example_copy)
    twice, disputed = _screened_in(example_copy)[:2]
    header = ["record_id", "title", "doi", "included"]
    rows = [["0", records[twice]["title"], twice, "1"], ["1", records[twice]["title"], f"https://doi.org/{twice.upper()}", "1"],
            ["2", records[disputed]["title"], disputed, "1"], ["3", records[disputed]["title"], disputed.upper(), "1"],
            ["4", records[disputed]["title"], f"doi:{disputed}", "0"]]
    export, status, out, err = _import(sitegen, example_copy, tmp_path, header, rows, "--tool", "asreview")
    assert status == 0, err
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {twice: ("include", "")}
    assert f"{export}:3: repeated: {twice}: line 2 of the export decides it the same way" in out
    assert all(f"{export}:{line}: conflict: {disputed}: " in out for line in (4, 5, 6)), out
    assert "0 already there, 1 repeating another row" in out and "3 conflicting" in out
    assert _summary_adds_up(out), out
    # Imported again, each row is in the file or disputed: nothing is written and nothing is lost.
    before = tree_bytes(example_copy)
    export, status, out, _ = _import(sitegen, example_copy, tmp_path, header, rows, "--tool", "asreview")
    assert status == 0 and tree_bytes(example_copy) == before and "2 already there" in out and _summary_adds_up(out)


def test_a_changed_full_text_reason_is_a_conflict_not_a_decision_already_there(example_copy, sitegen, tmp_path):
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[0]
    row = [records[chosen]["title"], records[chosen]["DOI"]]
    _import(sitegen, example_copy, tmp_path, COVIDENCE, [[*row, "Non-rodent species"]], "--tool", "covidence",
            "--stage", "full-text")
    before = tree_bytes(example_copy)
    export, status, out, _ = _import(sitegen, example_copy, tmp_path, COVIDENCE, [[*row, "No control group tested"]],
                                     "--tool", "covidence", "--stage", "full-text", name="again.csv")
    assert status == 1 and tree_bytes(example_copy) == before
    assert (f"conflict: {chosen}: the decision file says 'exclude' (non-rodent), the export 'exclude' "
            "(no-control-group)") in out
    # the same decision without a reason (ASReview gives none) is no disagreement
    export, status, out, _ = _import(sitegen, example_copy, tmp_path, ["title", "doi", "asreview_label"],
                                     [[*row, "0"]], "--tool", "asreview", "--stage", "full-text", name="plain.csv")
    assert "1 already there" in out


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_an_export_separated_by_semicolons_or_tabs_is_read(example_copy, sitegen, tmp_path, delimiter):
    # Excel in German or French settings writes ';', ASReview's TSV export tabs.
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[:2]
    export, status, out, err = _import(sitegen, example_copy, tmp_path, ["title", "doi", "asreview_label"],
                                       [[records[i]["title"], records[i]["DOI"], "1"] for i in chosen],
                                       "--tool", "asreview", delimiter=delimiter)
    assert status == 0 and "2 rows: 2 matched" in out, out + err


@pytest.mark.parametrize(("text", "message"), [
    ("", "no title, DOI or PMID column: not an export of references by covidence (it is empty)"),
    ("hello\r\n", "no title, DOI or PMID column: not an export of references by covidence (its first line: hello)"),
])
def test_a_file_that_is_no_export_is_refused(example_copy, sitegen, tmp_path, text, message):
    export = tmp_path / "export.csv"
    export.write_text(text)
    before = tree_bytes(example_copy)
    code, _, err = sitegen("import-decisions", example_copy, export, "--tool", "covidence", "--reviewer",
                           "reviewer-c", "--decision", "include")
    assert code == 1 and f"{export}:1: {message}" in err and tree_bytes(example_copy) == before


def test_an_export_with_only_its_header_is_read_as_one_without_rows(example_copy, sitegen, tmp_path):
    export = tmp_path / "export.csv"
    export.write_text("title,doi,asreview_label\r\n")
    code, out, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert "no label column" not in err and "0 rows" in out


def test_a_character_no_text_may_hold_is_a_space_not_a_traceback(example_copy, sitegen, tmp_path):
    # cp1252's right quote read as Latin-1 is the C1 control U+0092; a NUL as Excel can leave.
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[0]
    export, status, out, err = _import(sitegen, example_copy, tmp_path, ["title", "doi", "asreview_label", "asreview_note"],
                                       [[records[chosen]["title"], records[chosen]["DOI"], "1",
                                         "reviewer\x92s note:\x00 rodents?"]], "--tool", "asreview")
    assert status == 0 and "Traceback" not in err, err
    assert "reviewer s note: rodents?" in (example_copy / f"{TA}/reviewer-c.csv").read_text()


def test_covidences_own_export_of_excluded_studies_gives_the_reason_in_its_notes(example_copy, sitegen, tmp_path):
    # Covidence's export has no reason column: its Notes say "Exclusion reason: …; " (and a reviewer's note after).
    header = ["Title", "Authors", "Abstract", "Published Year", "Published Month", "Journal", "Volume", "Issue",
              "Pages", "Accession Number", "DOI", "Ref", "Covidence #", "Study", "Notes", "Tags"]
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[:2]
    rows = [[records[i]["title"], "", "", _year(records[i]), "", "", "", "", "", "", records[i]["DOI"], "",
             f"#{n}", "", note, ""]
            for n, (i, note) in enumerate(zip(chosen, ["Exclusion reason: Non-rodent species; ",
                                                      "Exclusion reason: No control group tested; mice only"], strict=True))]
    export, status, out, err = _import(sitegen, example_copy, tmp_path, header, rows, "--tool", "covidence",
                                       "--stage", "full-text")
    assert status == 0 and "reason not mapped" not in out, out + err
    assert _decisions(example_copy, f"{FT}/reviewer-c.csv") == {chosen[0]: ("exclude", "non-rodent"),
                                                               chosen[1]: ("exclude", "no-control-group")}
    assert "mice only" in (example_copy / f"{FT}/reviewer-c.csv").read_text()
    assert "Exclusion reason" not in (example_copy / f"{FT}/reviewer-c.csv").read_text()


COVIDENCE_EXCLUDED = FIXTURES / "covidence" / "excluded_full_text.csv"


def test_covidences_export_of_excluded_studies_is_never_read_as_inclusions(example_copy, sitegen):
    # --decision include, given for the wrong file: each row names why it was excluded, so none is an inclusion.
    before = tree_bytes(example_copy)
    code, _, err = sitegen("import-decisions", example_copy, COVIDENCE_EXCLUDED, "--tool", "covidence",
                           "--reviewer", "reviewer-c", "--stage", "full-text", "--decision", "include")
    assert code == 1 and f"{COVIDENCE_EXCLUDED}:2: this row gives an exclusion reason (Non-rodent species)" in err
    assert "nothing was written" in err and tree_bytes(example_copy) == before
    # Read as what it is, the reasons the protocol names are written and the other is refused at full text.
    code, out, err = sitegen("import-decisions", example_copy, COVIDENCE_EXCLUDED, "--tool", "covidence",
                             "--reviewer", "reviewer-c", "--stage", "full-text")
    assert code == 0, err
    assert _decisions(example_copy, f"{FT}/reviewer-c.csv") == {"10.1002/dev.21432": ("exclude", "non-rodent"),
                                                                "10.1002/hipo.22095": ("exclude", "no-control-group")}
    assert "'Wrong study design' is no exclusion reason of the protocol" in out


SPREADSHEET = FIXTURES / "spreadsheet" / "screening_decisions.csv"


def test_a_spreadsheets_decision_column_gives_each_rows_decision(example_copy, sitegen):
    # A team's screening sheet saved by Excel (BOM, ';', CRLF) in Covidence's columns plus a Decision column:
    # an included row is never written as an exclusion because the sheet has a reason column.
    code, out, err = sitegen("import-decisions", example_copy, SPREADSHEET, "--tool", "covidence",
                             "--reviewer", "reviewer-c")
    assert code == 0, out + err
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {
        "10.1016/j.alcohol.2016.09.027": ("include", ""), "10.1016/j.bbi.2014.09.014": ("include", ""),
        "10.1001/jama.300.3.287": ("exclude", "non-rodent"), "10.1002/dev.20542": ("exclude", "")}
    assert f"{SPREADSHEET}:4: reason not mapped: 10.1002/dev.20542: 'Review article'" in out
    # A Maybe is sitegen's maybe, as Rayyan's is: a decision the screening rules judge (here, refuse: it disagrees
    # with the others' in a batch assessed in full text).
    assert f"{SPREADSHEET}:5: refused: 10.1002/hipo.20567: it would break the review's screening rules" in out
    assert f"{SPREADSHEET}:6: undecided: its decision is empty" in out
    assert sitegen("check", example_copy)[0] == 0


@pytest.mark.parametrize(("header", "row", "options", "message"), [
    (["Title", "DOI", "Reviewer 1 decision", "Reviewer 2 decision"], ["x", "10.1002/dev.20542", "Include", "Exclude"],
     [], "1: 2 columns name a decision (reviewer 1 decision, reviewer 2 decision)"),
    (["Title", "DOI", "Decision", "Exclusion reason"], ["x", "10.1002/dev.20542", "Include", "Non-rodent species"],
     [], "2: this row gives an exclusion reason (Non-rodent species), but its decision is 'Include'"),
    (["Title", "DOI", "Decision"], ["x", "10.1002/dev.20542", "Include"], ["--decision", "exclude"],
     "2: its decision is 'Include', but --decision exclude says every row is one"),
])
def test_a_spreadsheet_whose_decisions_are_unclear_is_refused_whole(example_copy, sitegen, tmp_path, header, row,
                                                                    options, message):
    before = tree_bytes(example_copy)
    export, code, _, err = _import(sitegen, example_copy, tmp_path, header, [row], "--tool", "covidence", *options)
    assert code == 1 and f"{export}:{message}" in err and "nothing was written" in err, err
    assert tree_bytes(example_copy) == before


def test_covidences_accession_number_is_the_pmid_of_a_reference_from_pubmed(example_copy, sitegen, tmp_path):
    # Covidence keeps the accession number of the database each reference came from: PubMed's is the PMID, the
    # only identifier of a row without a DOI. Another database's (Embase's ten digits) names no PubMed record.
    header = ["Title", "Authors", "Abstract", "Published Year", "Published Month", "Journal", "Volume", "Issue",
              "Pages", "Accession Number", "DOI", "Ref", "Covidence #", "Study", "Notes", "Tags"]
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[:2]
    accessions = [records[chosen[0]]["PMID"], "20" + records[chosen[1]]["PMID"].zfill(8)]
    rows = [[records[i]["title"], "", "", _year(records[i]), "", "", "", "", "", accession, "", "", f"#{n}", "", "", ""]
            for n, (i, accession) in enumerate(zip(chosen, accessions, strict=True))]
    export, status, out, err = _import(sitegen, example_copy, tmp_path, header, rows, "--tool", "covidence",
                                       "--decision", "include")
    assert status == 0, out + err
    assert list(_decisions(example_copy, f"{TA}/reviewer-c.csv")) == [chosen[0]]
    assert f"{export}:3: unmatched" in out and "1 matched" in out
    entries = [exported.entry for exported in read_export(export.read_text(), "covidence", "reviewer-c", "include")]
    assert [entry.get("pmid") for entry in entries] == [records[chosen[0]]["PMID"], ""]


@pytest.mark.parametrize("start", [b"PK\x03\x04\x14\x00\x06\x00", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00"])
@pytest.mark.parametrize("command", ["import-decisions", "import", "dedupe"])
def test_a_spreadsheet_workbook_is_named_as_one(example_copy, sitegen, tmp_path, start, command):
    # An .xlsx saved where a CSV was asked for: it was "not UTF-8 text, convert from cp1252".
    workbook = tmp_path / "export.xlsx"
    workbook.write_bytes(start + bytes(range(256)) * 4)
    before = tree_bytes(example_copy)
    arguments = {"import-decisions": [example_copy, workbook, "--tool", "asreview", "--reviewer", "reviewer-c"],
                 "import": [example_copy, workbook, "--at", "2026-01-01T00:00:00Z", "--format", "csv"],
                 "dedupe": [workbook, "--out", tmp_path / "sets.csv", "--format", "csv"]}[command]
    code, _, err = sitegen(command, *arguments)
    assert code != 0 and f"{workbook}:1: a spreadsheet workbook (.xlsx or .xls), not text" in err, err
    assert tree_bytes(example_copy) == before and not (tmp_path / "sets.csv").exists()


def test_of_two_rows_for_one_record_the_one_giving_the_reason_is_written(example_copy, sitegen, tmp_path):
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[0]
    row = [records[chosen]["title"], records[chosen]["DOI"]]
    export, status, out, err = _import(sitegen, example_copy, tmp_path, COVIDENCE,
                                       [[*row, ""], [*row, "Non-rodent species"]], "--tool", "covidence",
                                       "--stage", "full-text", "--decision", "exclude")
    assert status == 0, out + err
    assert _decisions(example_copy, f"{FT}/reviewer-c.csv") == {chosen: ("exclude", "non-rodent")}


def test_an_export_whose_only_identifier_column_is_pubmed_id_is_an_export(example_copy, sitegen, tmp_path):
    export, status, out, err = _import(sitegen, example_copy, tmp_path, ["pubmed_id", "asreview_label"],
                                       [["12345", "1"]], "--tool", "asreview")
    assert "no title, DOI or PMID column" not in err and "1 row" in out


@pytest.mark.parametrize("separator_line", ["", "sep=;\r"])
def test_an_export_whose_lines_end_in_cr_alone_is_read_by_its_own_separator(example_copy, sitegen, tmp_path,
                                                                           separator_line):
    # Excel for Mac's "CSV (Macintosh)" ends lines in CR alone; in German or French settings it separates
    # columns with ';', and a title's own commas must not make the file read as comma-separated.
    records = _records(example_copy)
    chosen = next(i for i in _screened_in(example_copy) if "," in records[i]["title"])
    export = tmp_path / "mac.csv"
    export.write_bytes(f"{separator_line}Title;DOI;included\r{records[chosen]['title']};{chosen};1\r".encode())
    code, out, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0, out + err
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {chosen: ("include", "")}


def test_excels_separator_line_before_the_header_is_read(example_copy, sitegen, tmp_path):
    # Excel writes "sep=;" as a first line where the separator is not the locale's.
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[:2]
    export = tmp_path / "export.csv"
    export.write_text("sep=;\r\ntitle;doi;asreview_label\r\n" + "".join(
        f"{records[i]['title'].replace(';', ',')};{records[i]['DOI']};1\r\n" for i in chosen) + "only;two\r\n")
    code, out, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code != 0 and f"{export}:5: 2 fields where the header has 3" in err  # lines as the file numbers them
    export.write_bytes(export.read_bytes().replace(b"only;two\r\n", b""))
    code, out, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0 and "2 rows: 2 matched" in out, out + err


def test_rayyans_reasons_of_several_excluding_reviewers_are_nobodys(example_copy, sitegen, tmp_path):
    # Rayyan lists every excluding reviewer's reasons together: given to each, one reviewer's reason became
    # the other's, and a disagreement at full text was hidden.
    records = list(_records(example_copy).values())
    notes = ['RAYYAN-INCLUSION: {"Alice"=>"Excluded", "Bob"=>"Excluded"} | RAYYAN-EXCLUSION-REASONS: '
             'Non-rodent species,No control group tested',
             'RAYYAN-INCLUSION: {"Alice"=>"Excluded", "Bob"=>"Excluded"} | RAYYAN-EXCLUSION-REASONS: Non-rodent species',
             'RAYYAN-INCLUSION: {"Alice"=>"Excluded", "Bob"=>"Excluded"} | RAYYAN-EXCLUSION-REASONS: Other measure of '
             'context-dependent memory (modified OIC task, odour, fear or operant conditioning)']
    export, code, out = _rayyan(sitegen, example_copy, tmp_path, records, notes)
    assert code == 0, out
    # one reason for all of them is theirs (a label's own commas make no second one): kept; two: nobody's
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {records[0]["id"]: ("exclude", ""),
                                                                  records[1]["id"]: ("exclude", "non-rodent"),
                                                                  records[2]["id"]: ("exclude", "other-context-measure")}
    assert f"{export}:2: reason not mapped: {records[0]['id']}: the tool lists the reasons 'Non-rodent species', " \
           "'No control group tested' of 2 reviewers who excluded it without saying whose: none was taken" in out


def test_an_export_of_a_header_alone_fails(example_copy, sitegen, tmp_path):
    export = tmp_path / "asreview.csv"
    export.write_text("doi,asreview_label\n")
    before = tree_bytes(example_copy)
    code, _, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 1 and "holds no row of decisions" in err and tree_bytes(example_copy) == before


@pytest.mark.parametrize("header", [["record_id", "decision", "note", "reason"], ["decision", "record_id", "reason", "note"]])
def test_decisions_are_added_under_the_files_own_header_however_its_columns_are_ordered(example_copy, sitegen,
                                                                                       tmp_path, header):
    # A reviewer's file whose columns are in another order (check reads them by name): the reason was written
    # into the note column, or the record id into the decision's.
    records = _records(example_copy)
    screened_in = list(_decisions(example_copy, f"{FT}/reviewer-a.csv"))
    path = example_copy / FT / "reviewer-c.csv"
    path.write_text(",".join(header) + "\n")
    rows = [[records[screened_in[0]]["title"], "", _year(records[screened_in[0]]), "", records[screened_in[0]]["DOI"],
             "#1", "", "", "", "No control group tested"]]
    export = tmp_path / "covidence-excluded.csv"
    export.write_text(_csv(["Title", "Authors", "Published Year", "Journal", "DOI", "Covidence #", "Study", "Notes",
                            "Tags", "Exclusion reason"], rows))
    code, out, err = sitegen("import-decisions", example_copy, export, "--tool", "covidence", "--reviewer",
                             "reviewer-c", "--stage", "full-text")
    assert code == 0, out + err
    assert path.read_text().splitlines()[0] == ",".join(header)
    assert _decisions(example_copy, f"{FT}/reviewer-c.csv") == {screened_in[0]: ("exclude", "no-control-group")}
    assert sitegen("check", example_copy)[0] == 0


def _exclusion_into(sitegen, review, tmp_path, existing: bytes) -> tuple[str, int, str, bytes]:
    """A full-text exclusion of a record screened in, imported from Covidence into reviewer-c's file as it was
    (`existing`): the record, the exit status, stderr, and the file's bytes after."""
    records = _records(review)
    screened_in = list(_decisions(review, f"{FT}/reviewer-a.csv"))[0]
    path = review / FT / "reviewer-c.csv"
    path.write_bytes(existing)
    export = tmp_path / "covidence-excluded.csv"
    export.write_text(_csv(["Title", "DOI", "Covidence #", "Exclusion reason"],
                           [[records[screened_in]["title"], records[screened_in]["DOI"], "#1", "No control group tested"]]))
    code, out, err = sitegen("import-decisions", review, export, "--tool", "covidence", "--reviewer", "reviewer-c",
                             "--stage", "full-text")
    return screened_in, code, out + err, path.read_bytes()


def test_a_decision_needing_a_column_the_file_lacks_is_refused_and_nothing_written(example_copy, sitegen, tmp_path):
    # check accepts the file: reason and note are optional columns
    _, code, said, after = _exclusion_into(sitegen, example_copy, tmp_path, b"record_id,decision\n")
    assert code == 1 and f"{FT}/reviewer-c.csv:1: the header has no column 'reason'" in said
    assert after == b"record_id,decision\n"


def test_decisions_are_added_to_a_file_whose_lines_end_in_cr(example_copy, sitegen, tmp_path):
    # An old Mac's line ends: check reads the file, and import-decisions was a traceback.
    record_id, code, said, after = _exclusion_into(sitegen, example_copy, tmp_path, b"record_id,decision,reason,note\r")
    assert code == 0, said
    assert after == f"record_id,decision,reason,note\r{record_id},exclude,no-control-group,\r".encode()
    assert sitegen("check", example_copy)[0] == 0


@pytest.mark.parametrize("label", ["label", "final_included", "included_final"])
def test_asreview_1s_export_keeps_the_columns_of_the_dataset_it_was_given(example_copy, sitegen, tmp_path, label):
    # ASReview LAB 1 exported labels under the upload's own label column and, for a RIS upload, titles and
    # authors under rispy's names (primary_title, first_authors): an export it wrote, refused or unmatched.
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[:2]
    export, status, out, err = _import(sitegen, example_copy, tmp_path,
                                       ["record_id", "primary_title", "first_authors", "year", label],
                                       [[str(n), records[i]["title"], _authors(records[i], "; "), _year(records[i]),
                                         "1"] for n, i in enumerate(chosen)], "--tool", "asreview")
    assert status == 0 and "2 rows: 2 matched, 2 written" in out, out + err
    assert _decisions(example_copy, f"{TA}/reviewer-c.csv") == {i: ("include", "") for i in chosen}


def test_asreview_1s_exported_notes_are_the_decisions_note(example_copy, sitegen, tmp_path):
    # ASReview LAB 1 wrote the reviewer's notes to exported_notes_1, _2, ... (LAB 2 to asreview_note).
    records = _records(example_copy)
    chosen = _screened_in(example_copy)[:2]
    export, status, out, err = _import(sitegen, example_copy, tmp_path,
                                       ["record_id", "title", "doi", "included", "asreview_ranking",
                                        "exported_notes_2", "exported_notes_1"],
                                       [["0", records[chosen[0]]["title"], records[chosen[0]]["DOI"], "1", "1",
                                         "rats, then mice", "object in context"],
                                        ["1", records[chosen[1]]["title"], records[chosen[1]]["DOI"], "1", "2", "",
                                         ""]], "--tool", "asreview")
    assert status == 0, out + err
    notes = {row["record_id"]: row["note"] for row in csv.DictReader((example_copy / TA / "reviewer-c.csv").open())}
    assert notes == {chosen[0]: "object in context rats, then mice", chosen[1]: ""}


def test_rayyans_user_notes_of_the_named_reviewer_are_the_decisions_note(example_copy, sitegen, tmp_path):
    # Rayyan keeps each reviewer's notes in USER-NOTES, as Ruby writes a hash of lists: only Alice's are hers.
    records = list(_records(example_copy).values())
    notes = [' RAYYAN-INCLUSION: {"Alice"=>"Excluded", "Bob"=>"Excluded"} | RAYYAN-LABELS: rats | USER-NOTES: '
             '{"Bob"=>["not Alice\'s"], "Alice"=>["rabbits, \\"not\\" rodents", "see [2]"]}',
             ' RAYYAN-INCLUSION: {"Alice"=>"Included"} | USER-NOTES: {"Bob"=>["only Bob wrote"]}']
    export, code, out = _rayyan(sitegen, example_copy, tmp_path, records, notes)
    assert code == 0, out
    written = {row["record_id"]: row["note"] for row in csv.DictReader((example_copy / TA / "reviewer-c.csv").open())}
    assert written == {records[0]["id"]: 'rabbits, "not" rodents see [2]', records[1]["id"]: ""}


@pytest.mark.parametrize(("reason", "note"), [("", ""), ("Wrong setting", "Exclusion reason in the tool: Wrong setting.")])
def test_a_note_encoded_twice_is_left_out_and_said_with_what_it_meant(example_copy, sitegen, tmp_path, reason, note):
    # A tool's export opened in Excel as Windows-1252 and saved again: `check` refuses such a note (`hand_written`),
    # so writing it would leave the review failing its check; left out, and said with the text it meant.
    records = _records(example_copy)
    chosen = next(iter(records))
    export, status, out, err = _import(sitegen, example_copy, tmp_path, [*COVIDENCE, "Notes"],
                                       [[records[chosen]["title"], records[chosen]["DOI"], reason, "the authorsâ€™ cohort"]],
                                       "--tool", "covidence", "--decision", "exclude")
    assert status == 0, out + err
    assert _notes(example_copy, f"{TA}/reviewer-c.csv") == {chosen: note}
    assert f"{export}:2: note left out: {chosen}: its note holds 'authorsâ€™' at character" in out
    assert "is 'authors’' garbled" in out
    assert sitegen("check", example_copy)[0] == 0
