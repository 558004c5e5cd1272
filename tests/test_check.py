"""`sitegen check`: every bad input is named by file and line, exits non-zero and writes nothing."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, tree_bytes

from sitegen.review.folder import load_review
from sitegen.workspace import inspect

TA = "screening/title-abstract"
FT = "screening/full-text"
A_RECORD = "10.1002/hipo.22095"  # any record of the example review


def first_record_id(review: Path) -> str:
    return json.loads((review / "records.jsonl").read_text().splitlines()[0])["id"]


def test_example_review_is_clean(sitegen):
    code, out, _ = sitegen("check", EXAMPLE)
    assert code == 0
    assert "no problems found" in out


def replace_line(path: Path, lineno: int, text: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[lineno - 1] = text if text.endswith("\n") else text + "\n"
    path.write_text("".join(lines))


def append(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text)


def check_reports(sitegen, review: Path, path: str, line: int | None, fragment: str) -> str:
    """Run check; assert exit 1, the file and line named, the message, and nothing written."""
    before = tree_bytes(review)
    code, out, err = sitegen("check", review)
    assert code == 1, out + err
    where = f"{review}/{path}" + (f":{line}" if line is not None else "")
    matching = [row for row in out.splitlines() if row.startswith(where + ":") or row.startswith(where + " ")]
    assert matching, f"no problem reported at {where}:\n{out}"
    assert any(fragment in row for row in matching), f"{fragment!r} not in {matching}"
    assert "Traceback" not in out + err
    assert tree_bytes(review) == before
    return out


def test_malformed_yaml_names_line_and_column(sitegen, example_copy):
    replace_line(example_copy / "review.yaml", 9, "licence: [CC0-1.0")
    check_reports(sitegen, example_copy, "review.yaml", 10, "YAML syntax error")


def test_malformed_yaml_in_evidence(sitegen, example_copy):
    path = example_copy / "evidence" / "wilson-2013-lec.yaml"
    replace_line(path, 3, "  - research_question: {unclosed")
    check_reports(sitegen, example_copy, "evidence/wilson-2013-lec.yaml", 4, "YAML syntax error")


def test_malformed_protocol_front_matter(sitegen, example_copy):
    replace_line(example_copy / "protocol.md", 3, "eligibility: [")
    check_reports(sitegen, example_copy, "protocol.md", None, "YAML syntax error")


def test_rows_missing_their_last_empty_cells_as_excel_saves_them_are_read(sitegen, example_copy):
    # Excel leaves out the separators of empty cells at the end of a row, in some rows and not others: every
    # such row was refused ("row has 2 field(s) but the header has 4"), so a file saved from Excel failed check.
    path = example_copy / TA / "reviewer-b.csv"
    before, _ = load_review(example_copy)
    lines = path.read_text().splitlines()
    cut = [line.removesuffix(",,") for line in lines[1:]]
    assert sum(line != old for line, old in zip(cut, lines[1:], strict=True)) > 100
    path.write_text("\n".join([lines[0], *cut]) + "\n")
    assert sitegen("check", example_copy)[0] == 0
    after, _ = load_review(example_copy)
    assert [(row.path, row.line, row.decision) for row in after.decisions] == \
        [(row.path, row.line, row.decision) for row in before.decisions]
    # A row that lacks a cell it needs is refused at its line, as an empty one is.
    append(path, f"{A_RECORD}\n")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", len(lines) + 1, "decision: Input should be")


def test_unknown_decision_value(sitegen, example_copy):
    path = example_copy / TA / "reviewer-b.csv"
    record = path.read_text().splitlines()[1].split(",")[0]
    replace_line(path, 2, f"{record},perhaps,,")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", 2, "decision: Input should be 'include', 'exclude' or 'maybe'")


@pytest.mark.parametrize("written, meant", [("Include", "include"), ("EXCLUDE", "exclude"), ("Excluded", "exclude"),
                                             ("Maybe", "maybe"), ("yes", None), ("x", None)])
def test_a_decision_written_in_another_case_is_refused_saying_the_word_to_write(sitegen, example_copy, written, meant):
    # Never read as the word it seems (a decision is a reviewer's, written as meant), but said: a spreadsheet's
    # list of choices writes "Include".
    path = example_copy / TA / "reviewer-b.csv"
    record = path.read_text().splitlines()[1].split(",")[0]
    replace_line(path, 2, f"{record},{written},,")
    out = check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", 2, "decision: Input should be")
    [said] = [line for line in out.splitlines() if "reviewer-b.csv:2:" in line]
    assert said.endswith(f"not {written!r}: write {meant!r} [schema]") if meant else "write" not in said


def test_record_id_with_path_characters_in_decisions(sitegen, example_copy):
    replace_line(example_copy / TA / "reviewer-b.csv", 3, "10.1234/../../etc/passwd,include,,")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", 3, "path or control characters")


def test_record_id_with_path_characters_in_evidence(sitegen, example_copy):
    replace_line(example_copy / "evidence" / "wilson-2013-lec.yaml", 1, "record_id: ../../secret")
    check_reports(sitegen, example_copy, "evidence/wilson-2013-lec.yaml", 1, "path or control characters")


def test_record_id_with_path_characters_in_records(sitegen, example_copy):
    path = example_copy / "records.jsonl"
    record = json.loads(path.read_text().splitlines()[0])
    record["id"] = record["DOI"] = "10.1001/../x"
    replace_line(path, 1, json.dumps(record))
    check_reports(sitegen, example_copy, "records.jsonl", 1, "path or control characters")


@pytest.mark.parametrize("target", ["protocol.md", f"{TA}/reviewer-a.csv", "evidence/wilson-2013-lec.yaml"])
def test_fifty_megabyte_file_is_refused(sitegen, example_copy, target):
    with (example_copy / target).open("ab") as handle:
        handle.write(b"#" * 50_000_000)
    check_reports(sitegen, example_copy, target, None, "larger than the")


def test_empty_folder(sitegen, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = sitegen("check", empty)
    assert code == 1
    assert "review.yaml is missing" in out and "sitegen init" in out
    assert list(empty.iterdir()) == []


def test_missing_folder(sitegen, tmp_path):
    code, out, _ = sitegen("check", tmp_path / "nowhere")
    assert code == 1
    # the folder named once: it said "X: error: X is not a directory"
    assert out == f"{tmp_path / 'nowhere'}: error: does not exist [not-a-folder]\n1 problem found\n"


def test_missing_protocol(sitegen, example_copy):
    (example_copy / "protocol.md").unlink()
    check_reports(sitegen, example_copy, "protocol.md", None, "protocol.md is missing")


def test_decision_for_unknown_record(sitegen, example_copy):
    append(example_copy / TA / "reviewer-b.csv", "10.9999/not-in-this-review,include,,\n")
    lines = (example_copy / TA / "reviewer-b.csv").read_text().count("\n")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", lines, "is not in records.jsonl")


def test_evidence_for_unknown_record(sitegen, example_copy):
    replace_line(example_copy / "evidence" / "wilson-2013-lec.yaml", 1, "record_id: 10.9999/nope")
    check_reports(sitegen, example_copy, "evidence/wilson-2013-lec.yaml", 1, "is not in records.jsonl")


@pytest.mark.parametrize("namespace", ["PMID", "openalex"])
@pytest.mark.parametrize("where", ["evidence", "decision", "duplicates"])
def test_a_record_named_by_another_of_its_identifiers_is_told_its_id(sitegen, example_copy, namespace, where):
    """A record is filed under one id, the first of its DOI, OpenAlex id, arXiv id and PMID: a file naming it by
    another (its PMID, as a reviewer copies it from PubMed) names no record, and is told which record holds that
    identifier, at its line."""
    record = next(json.loads(line) for line in (example_copy / "records.jsonl").read_text().splitlines()
                  if json.loads(line)["id"] == "10.3389/fnbeh.2014.00160")
    other = f"pmid:{record['PMID']}" if namespace == "PMID" else f"openalex:{record['custom']['openalex']}"
    if where == "evidence":
        replace_line(example_copy / "evidence" / "barsegyan-2014-bla.yaml", 1, f"record_id: {other}")
        path, line = "evidence/barsegyan-2014-bla.yaml", 1
    elif where == "decision":
        append(example_copy / TA / "reviewer-b.csv", f"{other},include,,\n")
        path, line = f"{TA}/reviewer-b.csv", (example_copy / TA / "reviewer-b.csv").read_text().count("\n")
    else:
        (example_copy / "duplicates.csv").write_text(f"record_id,duplicate_of,decision,reviewer,note\n"
                                                     f"{other},{A_RECORD},same,ann,\n")
        path, line = "duplicates.csv", 2
    check_reports(sitegen, example_copy, path, line, f"record {other!r} is not in records.jsonl: it is an identifier "
                                                     f"of the record '10.3389/fnbeh.2014.00160'; name that record by its id")


def test_two_decisions_by_one_reviewer(sitegen, example_copy):
    path = example_copy / TA / "reviewer-a.csv"
    second = path.read_text().splitlines()[1]
    append(path, second + "\n")
    lines = path.read_text().count("\n")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", lines, "already decided")


def test_exclusion_reason_not_in_protocol(sitegen, example_copy):
    path = example_copy / TA / "reviewer-b.csv"
    rows = path.read_text().splitlines()
    excluded = next(i for i, row in enumerate(rows) if ",exclude," in row)
    record = rows[excluded].split(",")[0]
    replace_line(path, excluded + 1, f"{record},exclude,wrong-planet,")
    out = check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", excluded + 1, "'wrong-planet' is not defined")
    assert "non-rodent" in out  # the message lists the codes that are defined


def test_full_text_exclusion_needs_reason(sitegen, example_copy):
    path = example_copy / "screening" / "full-text" / "reviewer-a.csv"
    record = path.read_text().splitlines()[1].split(",")[0]
    replace_line(path, 2, f"{record},exclude,,")
    check_reports(sitegen, example_copy, "screening/full-text/reviewer-a.csv", 2, "needs a reason code")


@pytest.mark.parametrize("text", ["", "# to do\n", "- a finding\n"])
def test_an_evidence_file_that_is_no_mapping_says_so_at_its_first_line(sitegen, example_copy, text):
    # It said 'Input should be a valid dictionary or instance of Evidence', and of an empty file at no line.
    (example_copy / "evidence" / "wilson-2013-lec.yaml").write_text(text)
    check_reports(sitegen, example_copy, "evidence/wilson-2013-lec.yaml", 1, "must be a mapping of record_id and findings")


def test_a_finding_repeated_whole_by_a_merge_is_named_at_its_line(sitegen, example_copy):
    # A merge that kept both sides' copy of a finding was read as two findings, listed twice on the site.
    path = example_copy / "evidence" / "wilson-2013-lec.yaml"
    head, findings = path.read_text().split("findings:\n", 1)
    path.write_text(head + "findings:\n" + findings + findings)
    line = (head + "findings:\n" + findings).count("\n") + 1
    check_reports(sitegen, example_copy, "evidence/wilson-2013-lec.yaml", line, "repeats, field for field, the one on "
                  f"line {head.count(chr(10)) + 2}")
    # Findings that differ in any field are two.
    path.write_text(head + "findings:\n" + findings + findings.replace("population: Rats", "population: Mice", 1))
    assert sitegen("check", example_copy)[0] == 0


def test_passage_not_in_abstract(sitegen, example_copy):
    path = example_copy / "evidence" / "wilson-2013-lec.yaml"
    text = path.read_text().replace("were unable\n        to recognize", "were able\n        to recognize")
    path.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "text: >-" in row)
    check_reports(sitegen, example_copy, "evidence/wilson-2013-lec.yaml", line, "does not occur verbatim")


def test_passage_matches_despite_different_line_breaks(example_copy):
    path = example_copy / "evidence" / "wilson-2013-lec.yaml"
    path.write_text(path.read_text().replace("were unable\n        to recognize", "were   unable to\n        recognize"))
    _, problems = inspect(example_copy)
    assert problems == []


def test_unknown_field_is_an_error_with_its_line(sitegen, example_copy):
    append(example_copy / "review.yaml", "licnce: MIT\n")
    lines = (example_copy / "review.yaml").read_text().count("\n")
    check_reports(sitegen, example_copy, "review.yaml", lines, "licnce: unknown field")


def test_yaml_aliases_are_refused(sitegen, example_copy):
    append(example_copy / "review.yaml", "x: &a [1]\ny: *a\n")
    check_reports(sitegen, example_copy, "review.yaml", None, "aliases")


def test_duplicate_yaml_key(sitegen, example_copy):
    append(example_copy / "review.yaml", "licence: MIT\n")
    lines = (example_copy / "review.yaml").read_text().count("\n")
    check_reports(sitegen, example_copy, "review.yaml", lines, "appears twice")


def test_front_matter_lines_with_blanks_after_the_dashes_are_read(sitegen, tmp_path):
    # An editor left spaces after a '---': protocol.md 'must start with YAML front matter between --- lines', it
    # said of a file that does, or 'the closing --- line is missing'.
    review = tmp_path / "review"
    sitegen("init", review)
    path = review / "protocol.md"
    text = path.read_text()
    assert text.startswith("---\n")
    cut = text.index("\n---\n", 4)
    path.write_text("--- \n" + text[4:cut] + "\n---\t\r\n" + text[cut + 5:])
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    assert load_review(review)[0].protocol.meta.version == 1


def test_records_out_of_order(sitegen, example_copy):
    path = example_copy / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[0], lines[1] = lines[1], lines[0]
    path.write_text("".join(lines))
    check_reports(sitegen, example_copy, "records.jsonl", 2, "out of order")


def test_record_id_not_derived_from_identifiers(sitegen, example_copy):
    path = example_copy / "records.jsonl"
    record = json.loads(path.read_text().splitlines()[0])
    record["DOI"] = record["DOI"].upper()
    replace_line(path, 1, json.dumps(record))
    check_reports(sitegen, example_copy, "records.jsonl", 1, "not in normalised form")


def test_edited_ledger_line_is_named(sitegen, example_copy):
    path = example_copy / "ledger.jsonl"
    lines = path.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if json.loads(text)["type"] == "retrieval")
    event = json.loads(lines[line - 1])
    event["payload"]["record_ids"] = event["payload"]["record_ids"][1:]
    replace_line(path, line, json.dumps(event, sort_keys=True, separators=(",", ":")))
    check_reports(sitegen, example_copy, "ledger.jsonl", line, "was edited after it was written")


def test_protocol_edited_after_lock(sitegen, example_copy):
    path = example_copy / "protocol.md"
    path.write_text(path.read_text().replace("Rodents (rats or mice)", "Rodents or rabbits"))
    check_reports(sitegen, example_copy, "protocol.md", None, "edited after it was locked")


def test_unknown_stage_folder(sitegen, example_copy):
    (example_copy / "screening" / "fulltext").mkdir()
    check_reports(sitegen, example_copy, "screening/fulltext", None, "unknown screening stage")


def test_a_decision_file_outside_a_stage_folder_says_where_it_goes(sitegen, example_copy):
    shutil.copy(example_copy / TA / "reviewer-b.csv", example_copy / "screening" / "reviewer-c.csv")
    out = check_reports(sitegen, example_copy, "screening/reviewer-c.csv", None,
                        "decisions go in a stage's folder, screening/title-abstract/ or screening/full-text/")
    assert "unknown screening stage" not in out


def test_symlinked_decision_file_is_refused(sitegen, example_copy, tmp_path):
    outside = tmp_path / "outside.csv"
    outside.write_text("record_id,decision,reason,note\n")
    (example_copy / TA / "mallory.csv").symlink_to(outside)
    check_reports(sitegen, example_copy, f"{TA}/mallory.csv", None, "symbolic link")


# Excel's "Unicode text" is UTF-16 with its byte-order mark and tabs between the columns (it was said not to be UTF-8,
# the tabs making its first line seem no text); some tools write UTF-16 without the mark (it was 'a NUL byte
# (binary data?)').
@pytest.mark.parametrize(("encoding", "separator"), [("utf-16", ","), ("utf-16", "\t"), ("utf-16-le", ","),
                                                     ("utf-16-be", "\t")])
def test_a_decision_file_saved_as_utf16_says_so(sitegen, example_copy, encoding, separator):
    path = example_copy / TA / "reviewer-b.csv"
    path.write_bytes(path.read_text().replace(",", separator).encode(encoding))
    check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", 1, "file is UTF-16 text, not UTF-8: save it as UTF-8")


@pytest.mark.parametrize("workbook", ["xlsx", "xls"])
def test_a_workbook_saved_under_a_decision_files_name_says_so(sitegen, example_copy, workbook):
    path = example_copy / TA / "reviewer-b.csv"
    if workbook == "xlsx":  # a zip archive, as Excel's workbook is
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("xl/workbook.xml", "<workbook/>")
    else:  # an OLE2 compound file's signature, then its sectors
        path.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504))
    check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", 1,
                  "file is a spreadsheet's workbook (.xlsx or .xls), not text: save it again as UTF-8")


def test_binary_file(sitegen, example_copy):
    (example_copy / TA / "reviewer-b.csv").write_bytes(b"record_id,decision\n\xff\xfe\x00garbage")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-b.csv", 2, "not valid UTF-8")


@pytest.mark.parametrize("file, line, replacement", [
    ("review.yaml", 1, "schema_version: 2"),
    ("searches/object-in-context.json", 2, '  "schema_version": "2.0",'),
])
def test_unsupported_schema_version_exits_4(sitegen, example_copy, file, line, replacement):
    replace_line(example_copy / file, line, replacement)
    before = tree_bytes(example_copy)
    code, out, err = sitegen("check", example_copy)
    assert code == 4
    assert f"{example_copy}/{file}:{line}" in out
    assert "is not supported" in out
    assert tree_bytes(example_copy) == before
    if file.startswith("searches/"):  # ledger verify reads the saved searches too: exit 4, as the README says (1)
        code, out, _ = sitegen("ledger", "verify", example_copy)
        assert code == 4 and f"{example_copy}/{file}:{line}" in out


def test_schema_version_is_never_coerced(sitegen, example_copy):
    replace_line(example_copy / "review.yaml", 1, 'schema_version: "1"')
    code, out, _ = sitegen("check", example_copy)
    assert code == 4
    assert "'1'" in out


def test_github_format_annotates_the_line(sitegen, example_copy):
    append(example_copy / TA / "reviewer-b.csv", "10.9999/nope,include,,\n")
    lines = (example_copy / TA / "reviewer-b.csv").read_text().count("\n")
    code, out, _ = sitegen("check", example_copy, "--format", "github")
    assert code == 1
    assert out.startswith(f"::error file={example_copy}/{TA}/reviewer-b.csv,line={lines},col=1,")
    assert "::record '10.9999/nope' is not in records.jsonl" in out


def test_github_format_names_the_review_and_says_so_when_it_is_clean(sitegen, example_copy):
    # A workflow checks every review in a loop: a clean one printed an empty line, so its log said nothing of it.
    code, out, _ = sitegen("check", example_copy, "--format", "github")
    assert code == 0 and out.strip() == f"{example_copy}: no problems found"
    append(example_copy / TA / "reviewer-b.csv", "10.9999/nope,include,,\n")
    code, out, _ = sitegen("check", example_copy, "--format", "github")
    assert code == 1 and out.strip().splitlines()[-1] == f"{example_copy}: 1 problem found"


def test_json_format(sitegen, example_copy):
    append(example_copy / TA / "reviewer-b.csv", "10.9999/nope,include,,\n")
    code, out, _ = sitegen("check", example_copy, "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    [problem] = report["problems"]
    assert problem["code"] == "unknown-record"
    assert problem["path"] == f"{example_copy}/{TA}/reviewer-b.csv"
    assert problem["line"] > 1
    # the keys README's command table says it prints
    row = (ROOT / "README.md").read_text().split("| `sitegen check DIR")[1].split("\n")[0]
    said = re.search(r"`json` prints `(.+?)`", row).group(1)
    assert re.findall(r'"(\w+)":', said) == [*report, *problem]


def test_every_problem_is_reported_not_just_the_first(example_copy):
    append(example_copy / TA / "reviewer-b.csv", "10.9999/nope,include,,\n")
    replace_line(example_copy / "evidence" / "wilson-2013-lec.yaml", 1, "record_id: 10.9999/nope")
    (example_copy / "protocol.md").unlink()
    _, problems = inspect(example_copy)
    assert {p.path for p in problems} >= {f"{TA}/reviewer-b.csv", "evidence/wilson-2013-lec.yaml", "protocol.md"}


def add_event(review: Path, type_: str, ts: str, payload: dict) -> int:
    """Append a correctly chained event (as a tool would) and return its line number."""
    from sitegen.living.ledger import event_hash
    from sitegen.review.write import canonical_json

    path = review / "ledger.jsonl"
    lines = path.read_text().splitlines()
    previous = json.loads(lines[-1])
    seq = previous["seq"] + 1
    event = {"seq": seq, "type": type_, "ts": ts, "payload": payload, "prev": previous["hash"],
             "hash": event_hash(seq, type_, ts, payload, previous["hash"])}
    path.write_text("\n".join(lines + [canonical_json(event)]) + "\n")
    return len(lines) + 1


def test_malformed_payload_is_reported_without_a_traceback(sitegen, example_copy):
    line = add_event(example_copy, "import", "2024-01-01T00:00:00Z",
                     {"source": "openalex", "description": "d", "record_ids": 5})
    check_reports(sitegen, example_copy, "ledger.jsonl", line, "import payload: record_ids")


def test_records_without_provenance(sitegen, example_copy):
    (example_copy / "ledger.jsonl").unlink()
    out = check_reports(sitegen, example_copy, "records.jsonl", 1, "has no provenance")
    assert "more records have no provenance" in out


def test_full_text_decision_needs_a_title_abstract_inclusion(sitegen, example_copy):
    rows = (example_copy / TA / "reviewer-a.csv").read_text().splitlines()
    excluded = next(row.split(",")[0] for row in rows if ",exclude," in row)
    path = example_copy / "screening" / "full-text" / "reviewer-a.csv"
    append(path, f"{excluded},include,,\n")
    lines = path.read_text().count("\n")
    check_reports(sitegen, example_copy, "screening/full-text/reviewer-a.csv", lines,
                  "was excluded at title/abstract; only records included or marked maybe there are assessed")


def test_amendment_must_raise_the_version(sitegen, example_copy):
    from sitegen.review.folder import protocol_hash

    digest = protocol_hash((example_copy / "protocol.md").read_text())
    line = add_event(example_copy, "amendment", "2024-01-01T00:00:00Z", {"version": 1, "sha256": digest})
    check_reports(sitegen, example_copy, "ledger.jsonl", line, "must raise the protocol version")


def _protocol_event(review: Path, type_: str, version: int, text: str | None = None) -> int:
    """A lock or amendment event for protocol.md as it is (or `text`) appended by hand, as a tool could."""
    from sitegen.review.folder import protocol_hash

    text = (review / "protocol.md").read_text() if text is None else text
    return add_event(review, type_, "2024-01-01T00:00:00Z",
                     {"version": version, "sha256": protocol_hash(text), "text": text})


def test_a_protocol_locked_again_is_no_amendment(sitegen, example_copy):
    """A second lock over an edited protocol would change the criteria with no amendment (no reason, no diff,
    nothing on the site's trail): the protocol is locked once."""
    protocol = example_copy / "protocol.md"
    protocol.write_text(protocol.read_text().replace("version: 2", "version: 3", 1).replace("Rodents (rats or mice)",
                                                                                           "Rodents"))
    line = _protocol_event(example_copy, "protocol_lock", 3)
    check_reports(sitegen, example_copy, "ledger.jsonl", line, "locks the protocol again (version 3), but it was "
                  "locked at event 7: a change to a locked protocol is recorded by `sitegen protocol amend`")


def test_an_amendment_skipping_a_version_is_reported(sitegen, example_copy):
    protocol = example_copy / "protocol.md"
    protocol.write_text(protocol.read_text().replace("version: 2", "version: 4", 1))
    line = _protocol_event(example_copy, "amendment", 4)
    check_reports(sitegen, example_copy, "ledger.jsonl", line, "makes version 4 of version 2: versions are raised "
                  "one at a time (version 3 is missing)")


def test_an_amendment_before_any_lock_is_reported(sitegen, tmp_path):
    review = tmp_path / "fresh"
    assert sitegen("init", review)[0] == 0
    assert sitegen("protocol", "lock", review, "--at", "2023-01-01T00:00:00Z")[0] == 0
    lines = (review / "ledger.jsonl").read_text().splitlines()
    lock = json.loads(lines[0])
    lock["type"] = "amendment"  # the lock rewritten as an amendment, the chain made again
    from sitegen.living.ledger import event_hash
    from sitegen.review.write import canonical_json
    lock["hash"] = event_hash(1, "amendment", lock["ts"], lock["payload"], lock["prev"])
    (review / "ledger.jsonl").write_text(canonical_json(lock) + "\n")
    state = json.loads((review / "state.json").read_text())
    state["ledger_head"]["hash"] = lock["hash"]
    (review / "state.json").write_text(json.dumps(state))
    check_reports(sitegen, review, "ledger.jsonl", 1, "amends a protocol that was never locked")


def test_a_trail_text_that_is_not_the_locked_text_is_reported(sitegen, example_copy):
    """The site shows each version's text from the ledger: it must be the text whose hash was locked."""
    from sitegen.review.folder import protocol_hash

    protocol = example_copy / "protocol.md"
    text = protocol.read_text().replace("version: 2", "version: 3", 1).replace("Rodents (rats or mice)", "Rodents")
    protocol.write_text(text)
    line = add_event(example_copy, "amendment", "2024-01-01T00:00:00Z",
                     {"version": 3, "sha256": protocol_hash(text), "text": text.replace("Rodents", "Mammals")})
    check_reports(sitegen, example_copy, "ledger.jsonl", line, "records a protocol text whose SHA-256 is not the "
                  "one it records")


def test_ledger_events_in_time_order(sitegen, example_copy):
    line = add_event(example_copy, "import", "2020-01-01T00:00:00Z",
                     {"source": "openalex", "description": "d", "record_ids": []})
    check_reports(sitegen, example_copy, "ledger.jsonl", line, "before the event above it")


def test_an_event_dated_too_late_is_one_time_problem_not_one_per_event_below(sitegen, example_copy):
    path = example_copy / "ledger.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    events[9]["ts"] = "2099-01-01T00:00:00Z"
    path.write_text("".join(json.dumps(event, sort_keys=True, separators=(",", ":")) + "\n" for event in events))
    out = check_reports(sitegen, example_copy, "ledger.jsonl", 11, "before the event above it (2099-01-01T00:00:00Z)")
    assert out.count("[ledger-time]") == 1, out


def test_an_event_deleted_from_the_middle_of_the_ledger_is_one_problem_at_its_place(sitegen, example_copy):
    path = example_copy / "ledger.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    deleted = len(lines) // 2
    del lines[deleted - 1]
    path.write_text("".join(lines))
    out = check_reports(sitegen, example_copy, "ledger.jsonl", deleted,
                        f"event has seq {deleted + 1} but follows event {deleted - 1}")
    # Not one problem per event below it, nor the anchors' claim that events were lost from the end.
    assert "1 problem found" in out, out


def test_impossible_timestamp(sitegen, example_copy):
    line = add_event(example_copy, "import", "2024-02-31T00:00:00Z",
                     {"source": "openalex", "description": "d", "record_ids": []})
    check_reports(sitegen, example_copy, "ledger.jsonl", line, "not a real date")


def test_line_separators_inside_json_strings_do_not_split_records(example_copy):
    path = example_copy / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[0])
    record["abstract"] = "before\u2028after\u2029end"
    lines[0] = json.dumps(record, ensure_ascii=False) + "\n"
    path.write_text("".join(lines))
    _, problems = inspect(example_copy)
    assert problems == []


def test_duplicate_json_keys_and_nan_are_refused(sitegen, example_copy):
    path = example_copy / "records.jsonl"
    first = path.read_text().splitlines()[0]
    replace_line(path, 1, first[:-1] + ',"title":"second title"}')
    check_reports(sitegen, example_copy, "records.jsonl", 1, "appears twice")
    search = example_copy / "searches" / "object-in-context.json"
    search.write_text(re.sub(r'"run_count": \d+', '"run_count": NaN', search.read_text()))
    line = next(n for n, text in enumerate(search.read_text().splitlines(), start=1) if '"run_count": NaN' in text)
    assert line > 1  # named on its own line of the file, not on its first
    check_reports(sitegen, example_copy, "searches/object-in-context.json", line, "NaN is not a JSON number")


def test_values_are_not_coerced(sitegen, example_copy):
    search = example_copy / "searches" / "object-in-context.json"
    search.write_text(re.sub(r'"run_count": \d+', '"run_count": "2"', search.read_text()))
    check_reports(sitegen, example_copy, "searches/object-in-context.json", None, "run_count: Input should be a valid integer")


def test_unreadable_records_do_not_bury_the_real_problem(sitegen, example_copy):
    (example_copy / "records.jsonl").write_bytes(b"\xff\xfe garbage")
    out = check_reports(sitegen, example_copy, "records.jsonl", 1, "not valid UTF-8")
    assert "unknown-record" not in out


def test_a_deleted_saved_search_is_named(example_copy, sitegen):
    (example_copy / "searches" / "object-in-context.json").unlink()
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "[search-missing]" in out and "searches/object-in-context.json is missing" in out


def test_an_invalid_file_is_reported_once_not_as_missing_from_every_file_that_names_it(example_copy, sitegen):
    # One misspelt field in a record (which decisions, ledger events, evidence and versions name), in a saved
    # search (which the ledger's runs name), in a version (which the ledger and the next version name) and in
    # a run manifest (which the run's events name): each file's own problem, and none is said to be missing.
    path = example_copy / "records.jsonl"
    record_id = first_record_id(example_copy)
    replace_line(path, 1, path.read_text().splitlines()[0].replace('"title":', '"titel":', 1))
    misspelt = {"searches/object-in-context.json": '"label"', "versions/1.json": '"ledger_head"',
                sorted(p.relative_to(example_copy).as_posix() for p in (example_copy / "runs").iterdir())[0]: '"at"'}
    for rel, key in misspelt.items():
        text = (example_copy / rel).read_text()
        (example_copy / rel).write_text(text.replace(key, key[:-1] + 'x"', 1))
    code, out, _ = sitegen("check", example_copy)
    assert code == 1
    assert "records.jsonl:1: error: titel: unknown field" in out
    for rel, key in misspelt.items():
        assert f"{rel}:" in out and f"{key.strip(chr(34))}x: unknown field" in out
    assert "[unknown-record]" not in out and "-missing]" not in out and out.count(record_id) == 0
    assert {line.split(" error: ")[0].split(":")[0].removeprefix(f"{example_copy}/") for line in out.splitlines()
            if " error: " in line} == {"records.jsonl", *misspelt}


def test_a_batch_naming_an_unknown_record_is_named_not_a_crash_later(example_copy, sitegen, tmp_path):
    from sitegen.living.ledger import event_line, next_event
    from sitegen.review.models import LedgerEvent

    lines = (example_copy / "ledger.jsonl").read_text().splitlines()
    last = LedgerEvent.model_validate(json.loads(lines[-1]))
    ghost = next_event(last, "screening", last.ts, {"batch": 3, "monitor_id": "object-in-context",
                                                     "protocol_version": 2, "record_ids": ["10.9999/ghost"]})
    (example_copy / "ledger.jsonl").write_text("\n".join([*lines, event_line(ghost)]) + "\n")
    state = json.loads((example_copy / "state.json").read_text())
    state["ledger_head"] = {"seq": ghost.seq, "hash": ghost.hash}
    (example_copy / "state.json").write_text(json.dumps(state))
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "screening event names record(s) not in records.jsonl: 10.9999/ghost" in out
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and "Traceback" not in err and not (tmp_path / "site").exists()


@pytest.mark.parametrize("character", ["\x0c", "\x01", "\x7f", "\x9b"])
def test_control_characters_in_text_fields_are_named(example_copy, sitegen, character):
    """YAML refuses them raw but writes them as escapes ("\\x0c"): the models refuse them there."""
    protocol = example_copy / "protocol.md"
    text = protocol.read_text()
    label = next(line for line in text.splitlines() if "label:" in line)
    escaped = f'{label.split("label:")[0]}label: "Non-rodent \\x{ord(character):02x} species"'
    protocol.write_text(text.replace(label, escaped, 1))
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and f"control character U+{ord(character):04X}" in out and "protocol.md:" in out


def test_evidence_for_an_excluded_record_is_named(example_copy, sitegen):
    evidence = example_copy / "evidence" / "wilson-2013-lec.yaml"
    record_id = next(line.split(":", 1)[1].strip() for line in evidence.read_text().splitlines()
                     if line.startswith("record_id:"))
    reason = next(line.split(":", 1)[1].strip() for line in (example_copy / "protocol.md").read_text().splitlines()
                  if line.strip().startswith("- code:"))
    (example_copy / "screening" / "full-text" / "adjudication.csv").write_text(
        f"record_id,decision,reason,note\n{record_id},exclude,{reason},\n")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "[evidence-excluded]" in out and "excluded at full-text" in out
    assert "wilson-2013-lec.yaml" in out


def test_protocol_images_are_not_loaded_by_readers(example_copy, tmp_path):
    from sitegen.site.templates import render_markdown

    html = render_markdown("A figure: ![tracker](https://evil.example/t.gif)")
    assert "<img" not in html and "evil.example" in html


@pytest.mark.parametrize("field, value", [("title", "A \\u001b[2J title"), ("abstract", "nul \\u0000 byte"),
                                          ("container-title", "C1 \\u009b here")])
def test_control_characters_in_records_are_named_by_line(example_copy, sitegen, field, value):
    records = example_copy / "records.jsonl"
    lines = records.read_text().splitlines()
    record = json.loads(lines[4])
    record[field] = "PLACEHOLDER"
    lines[4] = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")).replace(
        "PLACEHOLDER", value)
    records.write_text("\n".join(lines) + "\n")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "records.jsonl:5" in out and "control character" in out


def test_an_adjudication_without_a_disagreement_is_named(example_copy, sitegen):
    """It would overrule agreeing reviewers, or stand in for a required one."""
    reviewer_a = (example_copy / "screening" / "title-abstract" / "reviewer-a.csv").read_text().splitlines()
    reviewer_b = (example_copy / "screening" / "title-abstract" / "reviewer-b.csv").read_text().splitlines()
    agreed = next(a for a, b in zip(reviewer_a[1:], reviewer_b[1:], strict=True) if a == b)
    record_id, decision = agreed.split(",")[:2]
    flipped = "include" if decision == "exclude" else "exclude"
    adjudication = example_copy / "screening" / "title-abstract" / "adjudication.csv"
    adjudication.write_text(adjudication.read_text() + f"{record_id},{flipped},,overrule\n")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "[needless-adjudication]" in out and f"its reviewers agree ({decision})" in out
    # and says what to do about it, at the row's file and line
    line = len(adjudication.read_text().splitlines())
    check_reports(sitegen, example_copy, "screening/title-abstract/adjudication.csv", line,
                  "an adjudication settles a disagreement between reviewers: remove this row")


@pytest.mark.parametrize("reason, said", [
    ("", "an exclusion at full text needs a reason code from the protocol ({})"),
    ("off-topic", "exclusion reason 'off-topic' is not defined in protocol.md ({})")])
def test_a_missing_or_unknown_reason_lists_the_protocols_codes(example_copy, sitegen, reason, said):
    """A full-text exclusion without a reason named none of the codes to give, where an unknown one listed them."""
    from sitegen.review.folder import parse_protocol

    protocol, _ = parse_protocol((example_copy / "protocol.md").read_text())
    codes = ", ".join(sorted(r.code for r in protocol.meta.exclusion_reasons))
    path = example_copy / "screening" / "full-text" / "reviewer-a.csv"
    record_id = path.read_text().splitlines()[1].split(",")[0]
    replace_line(path, 2, f"{record_id},exclude,{reason},")
    check_reports(sitegen, example_copy, "screening/full-text/reviewer-a.csv", 2, said.format(f"defined: {codes}"))


@pytest.mark.parametrize("extra, code", [
    (None, "strategy-repeated"),
    ({"source": "crossref", "query": "rat OR mouse", "syntax": "sitegen"}, "query-unsupported"),
    ({"source": "openalex", "query": "search=a&api_key=b"}, "query-unsupported"),
], ids=["repeated", "grammar-crossref-cannot-express", "native-openalex-key"])
def test_a_saved_strategy_that_would_break_every_run_is_named(example_copy, sitegen, extra, code):
    path = example_copy / "searches" / "object-in-context.json"
    search = json.loads(path.read_text())
    search["strategies"].append(extra or dict(search["strategies"][0]))
    path.write_text(json.dumps(search, indent=2) + "\n")
    result, out, _ = sitegen("check", example_copy)
    assert result == 1 and f"[{code}]" in out and "strategies[1]" in out
    # at the query's line, as every problem of a saved search (the query-unsupported ones had none)
    line = [number for number, row in enumerate(path.read_text().splitlines(), start=1) if '"query"' in row][1]
    assert f"{path}:{line}:7: error: strategies[1]" in out, out


def test_a_saved_searchs_problem_is_placed_at_its_line_in_the_file_as_read(example_copy, sitegen):
    # Positions come from the text the file was read as: with a byte-order mark (an editor's, which reading
    # allows), the file opened again as text put every problem at 1:1.
    path = example_copy / "searches" / "object-in-context.json"
    search = json.loads(path.read_text())
    search["strategies"].append(dict(search["strategies"][0]))
    text = json.dumps(search, indent=2) + "\n"
    path.write_text(text, encoding="utf-8-sig")
    line = [number for number, row in enumerate(text.splitlines(), start=1) if '"query"' in row][1]  # strategies[1]
    result, out, _ = sitegen("check", example_copy)
    assert result == 1 and f"{path}:{line}:7: error: strategies[1] repeats strategies[0]" in out, out


def test_a_file_that_cannot_be_read_is_not_taken_for_an_empty_one(example_copy, sitegen):
    """Bad bytes in the ledger: its problem is reported, not a cascade of records with 'no provenance' and
    searches whose events the ledger 'no longer has' (it was never read)."""
    with (example_copy / "ledger.jsonl").open("ab") as ledger:
        ledger.write(b"\xff\xfe not UTF-8\n")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1
    lines = [line for line in out.splitlines() if ": error: " in line]
    assert len(lines) == 2, out
    assert any(line.startswith(f"{example_copy}/ledger.jsonl:") and "[encoding]" in line for line in lines)
    assert any("not checked against each other, as ledger.jsonl could not be read" in line for line in lines)


@pytest.mark.parametrize(("change", "fragment"), [
    (lambda record: record["author"][0].update(affiliation="Oslo"), "author.0.affiliation: unknown field"),
    (lambda record: record["author"].append({"given": "Anna"}), "an author needs 'family' or 'literal'"),
    (lambda record: record["author"][0].update(family=7), "author.0.family: Input should be a valid string"),
    (lambda record: record.update(issued={"date-parts": [["2020"]]}), "issued.date-parts.0.0: Input should be a valid integer"),
    (lambda record: record.update(issued={"date-parts": [[2020]], "season": 1}), "issued.season: unknown field"),
])
def test_a_bad_author_or_date_of_a_record_is_reported_at_its_line(sitegen, example_copy, change, fragment):
    path = example_copy / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[4])
    change(record)
    lines[4] = json.dumps(record, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    check_reports(sitegen, example_copy, "records.jsonl", 5, fragment)


@pytest.mark.parametrize("parts", [[[2020, 13, 1]], [[2020, 1, 40]], [[-500]], [[0, 1, 1]], [[99999999999]],
                                   [[2020, 1, 1, 1]], [[]], [[2020], [2021, 0]]])
def test_a_date_no_calendar_has_is_refused_at_its_record(example_copy, parts):
    """Dates are written into exports and pages as they are: "DA  - 2020/13/40/" was published."""
    path = example_copy / "records.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[4])
    record["issued"] = {"date-parts": parts}
    lines[4] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    _, problems = inspect(example_copy)
    [problem] = [problem for problem in problems if problem.path == "records.jsonl"]
    assert problem.line == 5 and problem.message.startswith("issued") and problem.code == "schema"


def test_a_quote_never_closed_in_a_decision_file_is_named_on_the_row_it_opens():
    """csv says only "unexpected end of data", at the file's last line: the reviewer is sent to the row
    whose quote opened, however far the file goes on."""
    from sitegen.review.parsing import parse_csv

    text = "record_id,decision,reason,note\r\n10.1/a,include,,\r\n10.1/b,exclude,,\"never closed\r\n" + \
        "".join(f"10.1/{n},include,,\r\n" for n in range(50))
    rows, problems = parse_csv(text, "screening/title-abstract/a.csv", ["record_id", "decision", "reason", "note"],
                               {"record_id", "decision"})
    assert [row.line for row in rows] == [2]
    assert [(problem.line, problem.code) for problem in problems] == [(3, "csv-syntax")]
    assert "never closed" in problems[0].message


@pytest.mark.parametrize("second", ["record_id,decision,reason,note", "\ufeffrecord_id,decision,reason,note,,"])
def test_a_header_repeated_inside_a_csv_file_is_named_as_one(second):
    """Two files put together (`cat`, a merge taking both sides): it was refused as a record id 'record_id' and a
    decision 'decision'."""
    from sitegen.review.parsing import parse_csv

    text = f"record_id,decision,reason,note\n10.1000/a,include,,\n{second}\n10.1000/b,exclude,,\n"
    rows, problems = parse_csv(text, "screening/title-abstract/a.csv", ["record_id", "decision", "reason", "note"],
                               {"record_id", "decision"})
    assert [(problem.line, problem.code) for problem in problems] == [(3, "repeated-header")]
    assert [row.line for row in rows] == [2, 4]


@pytest.mark.parametrize("closed_by", [
    '10.1000/e,exclude,,5 inch"\r\n',  # a '"' at the end of a later row closes it: no syntax error at all
    '10.1000/e,exclude,,5" apart\r\n',  # closed inside a later row: csv stops there, far from the mistake
])
def test_a_quote_left_open_and_closed_in_a_later_row_is_named_on_the_row_it_opens(closed_by):
    """The rows between were read as one note: their decisions counted for nothing, and check passed."""
    from sitegen.review.parsing import parse_csv

    text = ("record_id,decision,reason,note\r\n10.1000/a,include,,\r\n10.1000/b,exclude,,\"a note\r\n"
            "10.1000/c,include,,\r\n10.1000/d,exclude\r\n" + closed_by + "10.1000/f,include,,\r\n")
    rows, problems = parse_csv(text, "screening/title-abstract/a.csv", ["record_id", "decision", "reason", "note"],
                               {"record_id", "decision"})
    assert [(problem.line, problem.code) for problem in problems] == [(3, "csv-syntax")]
    assert "line 4, which reads as a row of its own" in problems[0].message
    assert 3 not in [row.line for row in rows]


def test_a_quote_left_open_in_a_file_quoting_every_cell_is_named_on_the_row_it_opens():
    from sitegen.review.parsing import parse_csv

    # LibreOffice's and Google Sheets' form: the quote that opens the next row closes the note.
    text = ('"record_id","decision","note"\n"10.1000/a","include",""\n"10.1000/b","exclude","a note\n'
            '"10.1000/c","include",""\n')
    _, problems = parse_csv(text, "screening/title-abstract/a.csv", ["record_id", "decision", "note"],
                            {"record_id", "decision"})
    assert [(problem.line, problem.code) for problem in problems] == [(3, "csv-syntax")]


def test_a_note_over_several_lines_is_read_whole_though_a_line_of_it_starts_with_a_record_id():
    from sitegen.review.parsing import parse_csv

    note = "same work as\n10.1000/x\n10.1000/y (its preprint)"
    text = f'record_id,decision,reason,note\n10.1000/a,exclude,,"{note}"\n10.1000/b,include,,\n'
    rows, problems = parse_csv(text, "screening/title-abstract/a.csv", ["record_id", "decision", "reason", "note"],
                               {"record_id", "decision"})
    assert problems == [] and [row.values["note"] for row in rows] == [note, ""]


@pytest.mark.parametrize(("row", "column", "said"), [
    ('10.1000/a, "exclude",,', "decision", "as 'exclude' or '\"exclude\"'"),
    (' "10.1000/a",include,,', "record_id", "as '10.1000/a' or '\"10.1000/a\"'"),
    ('10.1000/a,exclude, "non-rodent",', "reason", "as 'non-rodent' or '\"non-rodent\"'"),
])
def test_a_blank_before_a_quoted_cell_is_named_with_what_to_write(sitegen, example_copy, row, column, said):
    # Refused with pydantic's "Input should be 'include', 'exclude' or 'maybe'" alone: the quotes did not show why.
    lines = (example_copy / TA / "reviewer-a.csv").read_text(encoding="utf-8").splitlines()
    record = lines[1].split(",")[0]
    lines[1] = row.replace("10.1000/a", record)
    (example_copy / TA / "reviewer-a.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 2, "a blank before its opening '\"' makes the "
                        "quotes part of the text")
    assert said.replace("10.1000/a", record) in out and column in out


def test_a_blank_after_a_quoted_cell_is_named_as_such():
    from sitegen.review.parsing import parse_csv

    text = 'record_id,decision,reason,note\n10.1000/a,include,,\n10.1000/b,"exclude" ,,\n'
    _, [problem] = parse_csv(text, "a.csv", ["record_id", "decision", "reason", "note"], {"record_id", "decision"})
    assert (problem.line, problem.code) == (3, "csv-syntax") and "closing '\"' is followed by" in problem.message


@pytest.mark.parametrize("later", ["10.1000/xyz, the preprint", "10.1000/xyz,10.1000/abc", "10.1000/xyz, include it?"])
def test_a_note_line_starting_with_a_record_id_and_a_comma_is_no_row_of_its_own(later):
    """Only a line whose required cells read as a row's (a decision among them) is taken for a row a quote left
    open swallowed: a note naming a record and going on after a comma was refused as one."""
    from sitegen.review.models import Decision
    from sitegen.review.parsing import parse_csv

    note = f"same work as\n{later}"
    text = f'record_id,decision,reason,note\n10.1000/a,exclude,,"{note}"\n10.1000/b,include,,\n'
    rows, problems = parse_csv(text, "screening/title-abstract/a.csv", ["record_id", "decision", "reason", "note"],
                               {"record_id", "decision"}, Decision)
    assert problems == [] and [row.values["note"] for row in rows] == [note, ""]


@pytest.mark.parametrize("swallowed", ["10.1000/c,include,,", "10.1000/c,Exclude", '"10.1000/c","maybe",""'])
def test_a_row_a_quote_left_open_swallowed_is_found_by_its_decision(swallowed):
    from sitegen.review.models import Decision
    from sitegen.review.parsing import parse_csv

    text = f'record_id,decision,reason,note\n10.1000/a,include,,\n10.1000/b,exclude,,"a note\n{swallowed}\n' \
        '10.1000/e,exclude,,5 inch"\n'
    _, problems = parse_csv(text, "screening/title-abstract/a.csv", ["record_id", "decision", "reason", "note"],
                            {"record_id", "decision"}, Decision)
    assert [(problem.line, problem.code) for problem in problems] == [(3, "csv-syntax")]
    assert "line 4, which reads as a row of its own" in problems[0].message


def test_a_duplicates_note_over_lines_starting_with_record_ids_passes_check(sitegen, example_copy):
    first, second = [json.loads(line)["id"] for line in (example_copy / "records.jsonl").read_text().splitlines()[:2]]
    (example_copy / "duplicates.csv").write_text(
        "record_id,duplicate_of,decision,reviewer,note\n"
        f'{first},{second},different,reviewer-a,"not the same:\n{first}, the preprint\n{second}, same title"\n',
        encoding="utf-8")
    code, out, _ = sitegen("check", example_copy)
    assert code == 0, out


def test_a_quote_left_open_in_a_decision_file_fails_check_at_its_row(sitegen, example_copy, tmp_path):
    path = example_copy / TA / "reviewer-a.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[150] = lines[150].rstrip("\r\n") + '"a note\n'
    lines[154] = lines[154].rstrip("\r\n") + '5 inch"\n'
    path.write_text("".join(lines), encoding="utf-8")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 151, "which reads as a row of its own")
    code, _, _ = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and not (tmp_path / "site").exists()


@pytest.mark.parametrize("hide", ["file", "folder", "stage"])
def test_review_files_hidden_by_a_leading_dot_are_named_not_silently_dropped(sitegen, example_copy, hide):
    # A hidden file is never read: a decision file renamed .reviewer-a.csv, or evidence moved into a hidden
    # folder, would otherwise count for nothing and check would pass.
    if hide == "file":
        (example_copy / FT / "reviewer-a.csv").rename(example_copy / FT / ".reviewer-a.csv")
        where = f"{FT}/.reviewer-a.csv"
    elif hide == "folder":
        (example_copy / "evidence" / ".old").mkdir()
        (example_copy / "evidence" / "wilson-2013-lec.yaml").rename(example_copy / "evidence" / ".old" / "wilson-2013-lec.yaml")
        where = "evidence/.old"
    else:
        (example_copy / "screening" / "full-text").rename(example_copy / "screening" / ".full-text")
        where = "screening/.full-text"
    check_reports(sitegen, example_copy, where, None, "hidden")


def test_hidden_files_of_tools_and_editors_are_left_alone(sitegen, example_copy):
    for name in (f"{TA}/.~lock.reviewer-a.csv#", f"{TA}/.reviewer-a.csv.swp", "evidence/.gitkeep", "screening/.DS_Store"):
        (example_copy / name).write_text("")
    (example_copy / "evidence" / ".ipynb_checkpoints").mkdir()
    (example_copy / "evidence" / ".ipynb_checkpoints" / "wilson-2013-lec-checkpoint.yaml").write_text("x: 1\n")
    code, out, _ = sitegen("check", example_copy)
    assert code == 0, out


def test_a_protocol_with_lone_carriage_returns_says_so_and_a_second_byte_order_mark_hides_no_fence(sitegen,
                                                                                                example_copy):
    protocol = example_copy / "protocol.md"
    written = protocol.read_bytes()
    protocol.write_bytes(written.replace(b"\n", b"\r"))
    check_reports(sitegen, example_copy, "protocol.md", 1, "carriage return alone")
    protocol.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + written)  # read as its front matter: the lock notices the edit
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "[protocol-locked]" in out and "front matter" not in out


@pytest.mark.parametrize("name", ["records.jsonl", "ledger.jsonl", "snapshots/index.jsonl"])
def test_a_json_lines_file_with_lone_carriage_returns_says_so_as_protocol_md_does(sitegen, example_copy, name):
    # Read as one line, it was a JSON syntax error ("Extra data") thousands of columns into line 1
    path = example_copy / name
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r"))
    out = check_reports(sitegen, example_copy, name, 1, "carriage return alone")
    assert "[json-syntax]" not in out


def test_a_lone_carriage_return_in_one_line_of_records_is_named_at_that_line(sitegen, example_copy):
    path = example_copy / "records.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2] + b"\r" + lines[3]
    del lines[3]
    path.write_bytes(b"\n".join(lines))
    check_reports(sitegen, example_copy, "records.jsonl", 3, "carriage return alone")


def test_a_decision_file_saved_on_a_mac_places_a_bad_cell_at_its_column(sitegen, example_copy):
    # A lone carriage return ends a CSV's lines as csv reads it (Excel's "CSV (Macintosh)"): its rows are read, and
    # a problem's column is found on the row's own line, not on the whole file taken as line 1
    path = example_copy / TA / "reviewer-a.csv"
    lines = path.read_bytes().replace(b"\r\n", b"\n").split(b"\n")
    record_id = lines[2].split(b",")[0]
    lines[2] = record_id + b",bogus,,"
    path.write_bytes(b"\r".join(lines))
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 3, "")
    out = check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv:3:{len(record_id) + 2}", None, "decision")
    assert "1 problem found" in out


def test_a_json_file_with_a_second_byte_order_mark_says_so_in_words(sitegen, example_copy):
    path = sorted((example_copy / "searches").glob("*.json"))[0]
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + path.read_bytes())
    check_reports(sitegen, example_copy, f"searches/{path.name}", 1, "a byte-order mark (U+FEFF) starts it")


@pytest.mark.parametrize("name", ["records.jsonl", "ledger.jsonl"])
def test_a_folder_where_a_file_belongs_is_one_problem_not_a_flood(sitegen, example_copy, name):
    # Its content is unknown, not empty: checked against the other files as empty, every record or event they
    # name was a problem of its own (hundreds)
    (example_copy / name).unlink()
    (example_copy / name).mkdir()
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "2 problems found" in out
    assert [line.rsplit("[", 1)[-1] for line in out.splitlines()[:-1]] == ["not-checked]", "not-a-file]"]


def test_an_unreadable_ledger_line_is_its_own_problem_not_a_flood_below_it(sitegen, example_copy):
    # A line of ledger.jsonl that holds no event (a hand edit, a merge) made every check that judges events against
    # those before it report what it could not see: protocol.md "edited after it was locked", a run's manifest that
    # belongs to no run, run_count, a version naming records no event had identified.
    path = example_copy / "ledger.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].rstrip("\n")[:-1] + "\n"  # its closing brace lost
    path.write_text("".join(lines), encoding="utf-8")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "2 problems found" in out, out
    assert [line.rsplit("[", 1)[-1] for line in out.splitlines()[:-1]] == ["not-checked]", "json-syntax]"]
    assert all("ledger.jsonl:3" in line for line in out.splitlines()[:-1])


@pytest.mark.parametrize("separator", [";", "\t"])
# Written as spreadsheets write it, and with every cell quoted (LibreOffice's "quote all text cells", which csv read
# as a syntax error), or with an empty column after the last (";;", which hid the separator).
@pytest.mark.parametrize(("quoting", "padding"), [(csv.QUOTE_MINIMAL, False), (csv.QUOTE_ALL, False),
                                                  (csv.QUOTE_MINIMAL, True)])
def test_a_decision_file_saved_with_another_separator_is_one_problem_that_says_so(sitegen, example_copy, separator,
                                                                                  quoting, padding):
    # A spreadsheet set to German or French saves "CSV" with semicolons. Its decisions cannot be read, and
    # comparing reviewers without them made every record it decides a problem of its own (44 in all).
    path = example_copy / "screening" / "title-abstract" / "reviewer-a.csv"
    rows = [[*row, ""] if padding else row for row in csv.reader(path.open(encoding="utf-8", newline=""))]
    with path.open("w", encoding="utf-8", newline="") as file:
        csv.writer(file, delimiter=separator, lineterminator="\r\n", quoting=quoting).writerows(rows)
    out = check_reports(sitegen, example_copy, "screening/title-abstract/reviewer-a.csv", 1, "separated by")
    assert [line.rsplit("[", 1)[-1] for line in out.splitlines()[:-1]] == \
        ["not-checked]", "csv-syntax]" if quoting == csv.QUOTE_ALL else "csv-header]"]
    assert "2 problems found" in out


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_a_decision_file_whose_first_line_declares_commas_as_excel_does_is_read(sitegen, example_copy, line_end):
    # Excel reads a first line "sep=," as the CSV's separator and shows no row for it; it was refused as an
    # unknown column 'sep='. The header after it is read, and its rows keep their lines.
    path = example_copy / TA / "reviewer-a.csv"
    before, _ = load_review(example_copy)
    text = path.read_text(encoding="utf-8")
    path.write_bytes(("sep=," + line_end + text.replace("\n", line_end)).encode())
    assert sitegen("check", example_copy)[0] == 0
    after, _ = load_review(example_copy)
    moved = f"{TA}/reviewer-a.csv"
    assert [(row.path, row.line - (row.path == moved), row.decision) for row in after.decisions] == \
        [(row.path, row.line, row.decision) for row in before.decisions]


@pytest.mark.parametrize("declaration", ['"sep=,"', "sep=,,,", '"sep=,",,,'])
def test_excel_s_separator_line_saved_again_as_a_row_by_another_program_is_read(sitegen, example_copy, declaration):
    # LibreOffice and Google Sheets show "sep=," as a row, and save it as one: quoted, padded to the header's
    # columns. It was refused as a header with an unknown column 'sep='.
    path = example_copy / TA / "reviewer-a.csv"
    before, _ = load_review(example_copy)
    path.write_text(declaration + "\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert sitegen("check", example_copy)[0] == 0
    after, _ = load_review(example_copy)
    assert len(after.decisions) == len(before.decisions)
    path.write_text(path.read_text(encoding="utf-8").replace("sep=,", "sep=;", 1), encoding="utf-8")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 1, "('sep=;') is Excel's note that semicolons")


def test_a_first_line_declaring_another_separator_says_what_it_is_and_to_delete_it(sitegen, example_copy):
    path = example_copy / TA / "reviewer-a.csv"
    rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
    with path.open("w", encoding="utf-8", newline="") as file:
        file.write("sep=;\r\n")
        csv.writer(file, delimiter=";", lineterminator="\r\n").writerows(rows)
    out = check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 1, "('sep=;') is Excel's note that semicolons")
    assert "delete this line" in out and "reviewers' decisions were not compared" in out and "2 problems found" in out
    # Declared as commas, with semicolons between the columns: the header, on line 2, says so.
    path.write_text(path.read_text().replace("sep=;", "sep=,", 1))
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 2, "separated by semicolons, not commas")


def test_a_header_naming_a_column_twice_is_not_said_to_be_separated_otherwise(sitegen, example_copy):
    # Its columns are separated by commas: the message said "separated by semicolons, not commas".
    path = example_copy / "screening" / "title-abstract" / "reviewer-a.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(["record_id,decision,decision,note", *lines[1:]]) + "\n", encoding="utf-8")
    out = check_reports(sitegen, example_copy, "screening/title-abstract/reviewer-a.csv", 1, "a column is named twice")
    assert "separated by" not in out


def test_a_decision_file_cut_short_by_a_syntax_error_stops_the_comparison_of_reviewers(sitegen, example_copy):
    path = example_copy / "screening" / "title-abstract" / "reviewer-b.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].rstrip("\r\n") + '"never closed\n'
    path.write_text("".join(lines), encoding="utf-8")
    out = check_reports(sitegen, example_copy, "screening/title-abstract/reviewer-b.csv", 3, "never closed")
    assert "reviewers' decisions were not compared" in out
    assert "awaits" not in out and "needless-adjudication" not in out


def test_a_state_without_schema_version_is_a_missing_field_not_an_unsupported_version(example_copy, sitegen):
    # It said "schema_version None is not supported" with exit status 4, where every other file says a field
    # is missing (exit 1).
    state = json.loads((example_copy / "state.json").read_text())
    del state["schema_version"]
    (example_copy / "state.json").write_text(json.dumps(state))
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "schema_version: required field is missing" in out and "not supported" not in out


def _replaced_by_a_file(review, name):
    shutil.rmtree(review / name)
    (review / name).write_text("x\n")


@pytest.mark.parametrize(("change", "path", "said"), [
    # A review's folder replaced by a file, or named otherwise than sitegen reads it (a case-insensitive disk, a
    # plural, .yml): its decisions or evidence counted for nothing, and the site was published without them.
    (lambda review: _replaced_by_a_file(review, "screening"), "screening", "screening must be a folder"),
    (lambda review: _replaced_by_a_file(review, "evidence"), "evidence", "evidence must be a folder"),
    (lambda review: (review / "screening").rename(review / "Screening"), "Screening", "sitegen reads 'screening'"),
    (lambda review: (review / "evidence").rename(review / "Evidence"), "Evidence", "sitegen reads 'evidence'"),
    (lambda review: (review / "duplicate.csv").write_text("record_id,duplicate_of,decision,reviewer,note\n"),
     "duplicate.csv", "sitegen reads 'duplicates.csv'"),
    (lambda review: (review / "review.yml").write_text("title: x\n"), "review.yml",
     "sitegen reads 'review.yaml' (beside review.yaml, which is read)"),
    # Saved by another program or copied: Excel's "Unicode Text" (.txt), a spreadsheet's own format, a browser's
    # second download, a text editor's .txt after the name. Each was left alone as a user's own file.
    (lambda review: (review / "duplicates.txt").write_text("record_id\tduplicate_of\n"), "duplicates.txt",
     "sitegen reads 'duplicates.csv'"),
    (lambda review: (review / "duplicates.xlsx").write_bytes(b"PK\x03\x04"), "duplicates.xlsx",
     "sitegen reads 'duplicates.csv'"),
    (lambda review: (review / "duplicates (1).csv").write_text("record_id\n"), "duplicates (1).csv",
     "sitegen reads 'duplicates.csv'"),
    (lambda review: (review / "Validation - Copy.csv").write_text("record_id\n"), "Validation - Copy.csv",
     "sitegen reads 'validation.csv'"),
    (lambda review: (review / "state.json").rename(review / "state.json.txt"), "state.json.txt",
     "sitegen reads 'state.json'"),
])
def test_a_review_folder_that_is_not_one_or_misnamed_is_refused(sitegen, example_copy, tmp_path, change, path, said):
    change(example_copy)
    check_reports(sitegen, example_copy, path, None, said)
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and said in err and not (tmp_path / "site").exists()
    (example_copy / "NOTES.md").write_text("a user's own file is left alone\n")
    assert path in sitegen("check", example_copy)[1] and "NOTES.md" not in sitegen("check", example_copy)[1]


def test_a_review_whose_review_yaml_was_renamed_says_which_file_to_name_so(sitegen, example_copy, tmp_path):
    (example_copy / "review.yaml").rename(example_copy / "review.yaml.txt")
    check_reports(sitegen, example_copy, "review.yaml", None, "'review.yaml.txt' is there: rename it review.yaml")
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and "rename it review.yaml" in err and not (tmp_path / "site").exists()


def test_files_of_a_user_near_the_review_files_names_are_left_alone(sitegen, example_copy):
    for name in ("protocol.pdf", "protocol.txt", "records.ris", "duplicates-notes.csv", "NOTES.md"):
        (example_copy / name).write_text("a user's own file\n")
    code, out, _ = sitegen("check", example_copy)
    assert code == 0, out


def test_reading_a_review_lists_its_folder_once(example_copy, monkeypatch):
    # The walk of the review lists its top too: the near misses and files-for-folders are found in it.
    listed, scandir = [], os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: (listed.append(Path(path)), scandir(path))[1])
    (example_copy / "Evidence").mkdir()
    problems = load_review(example_copy)[1]
    assert [problem.code for problem in problems if problem.path == "Evidence"] == ["misnamed"]
    assert listed.count(example_copy) == 1


def test_a_yaml_file_ending_in_an_empty_document_is_read_and_a_second_document_is_refused(sitegen, example_copy):
    evidence = next((example_copy / "evidence").glob("*.yaml"))
    rel = f"evidence/{evidence.name}"
    text = evidence.read_text()
    evidence.write_text(text + "---\n")  # an empty last document, as some editors leave one
    code, out, err = sitegen("check", example_copy)
    assert code == 0, out + err
    evidence.write_text(text + "---\nrecord_id: 10.1000/another\n")  # a second document: which one counts?
    check_reports(sitegen, example_copy, rel, text.count("\n") + 2, "expected a single document in the stream")


def test_a_readme_in_any_folder_of_the_review_is_left_alone(sitegen, example_copy, tmp_path):
    # A team explains a folder to the people editing it; nothing in a README is a review file.
    for folder, name in [("evidence", "README.md"), ("screening", "README.md"), (TA, "readme.txt"),
                         ("searches", "README"), ("runs", "README.md"), ("versions", "Readme.md")]:
        (example_copy / folder / name).write_text("How this folder is edited.\n")
    code, out, err = sitegen("check", example_copy)
    assert code == 0, out + err
    code, out, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 0, out + err
    # Any other file there is still one sitegen does not read, and says so.
    (example_copy / "evidence" / "NOTES.md").write_text("notes\n")
    check_reports(sitegen, example_copy, "evidence/NOTES.md", None, "files here are named evidence/<study>.yaml")


def test_a_file_name_that_is_not_utf8_is_no_traceback(sitegen, example_copy, tmp_path):
    # The build's digest of its inputs encoded each name as UTF-8: a traceback before any check could speak.
    (example_copy / "notes\udcff.md").write_text("a user's own notes\n")  # the byte 0xFF, as the disk has it
    code, out, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 0 and "Traceback" not in err, err
    (example_copy / TA / "\udcff.csv").write_text("record_id,decision,reason,note\n")
    code, out, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and "Traceback" not in err and "[unexpected-file]" in out + err


@pytest.mark.parametrize("given", [".", "absolute", "dotted"])
def test_github_annotations_name_files_from_the_repository_root(sitegen, tmp_path, monkeypatch, given):
    # GitHub places an annotation by its path in the repository: run from the review folder (`check .`), or
    # given an absolute or unnormalised path, the file was named from there, and no line of the pull request
    # was annotated.
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    repository = tmp_path / "repo"
    review = repository / "reviews" / "oic"
    shutil.copytree(EXAMPLE, review)
    (repository / ".git").mkdir()
    append(review / TA / "reviewer-b.csv", "10.9999/nope,include,,\n")
    monkeypatch.chdir(review if given == "." else tmp_path)
    folder = {".": ".", "absolute": str(review), "dotted": "repo/reviews/../reviews/oic"}[given]
    code, out, _ = sitegen("check", folder, "--format", "github")
    assert code == 1 and out.startswith(f"::error file=reviews/oic/{TA}/reviewer-b.csv,line=")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repository / "reviews"))  # the checkout GitHub names comes first
    assert sitegen("check", folder, "--format", "github")[1].startswith(f"::error file=oic/{TA}/reviewer-b.csv,")


def test_a_run_count_the_ledger_does_not_record_is_refused(sitegen, example_copy):
    # The searches page said "Run 7 times" of a search the ledger ran twice.
    path = example_copy / "searches" / "object-in-context.json"
    text = path.read_text()
    path.write_text(text.replace('"run_count": 2', '"run_count": 7'))
    line = text[:text.index('"run_count"')].count("\n") + 1
    check_reports(sitegen, example_copy, "searches/object-in-context.json", line, "run_count is 7 but the ledger records 2")


def test_every_problem_of_a_misnamed_saved_search_names_the_file_it_was_read_from(sitegen, example_copy):
    # searches/foo.json holding monitor_id "object-in-context": its other problems named
    # searches/object-in-context.json, a file that does not exist, at foo.json's lines.
    searches = example_copy / "searches"
    search = json.loads((searches / "object-in-context.json").read_text())
    (searches / "object-in-context.json").unlink()
    search["strategies"].append(search["strategies"][0])
    search["run_count"] = 7
    (searches / "foo.json").write_text(json.dumps(search, indent=2) + "\n")
    text = (searches / "foo.json").read_text()
    repeated = text.index('"query"', text.index('"query"') + 1)  # strategies[1]'s query
    out = check_reports(sitegen, example_copy, "searches/foo.json", text[:repeated].count("\n") + 1,
                        "strategies[1] repeats strategies[0]")
    assert "[monitor-id]" in out and "run_count is 7" in out
    assert "object-in-context.json" not in out


@pytest.mark.parametrize(("copy", "original"), [
    ("a-copy.json", "object-in-context.json"),  # read before the file named after the search
    ("z-copy.json", "object-in-context.json"),
    ("z-copy.json", "a-first.json"),  # neither named after it
])
def test_two_files_holding_one_monitor_id_are_a_problem_naming_both(sitegen, example_copy, copy, original):
    # The file read last silently took the place of the other in the review's saved searches.
    searches = example_copy / "searches"
    text = (searches / "object-in-context.json").read_text()
    (searches / "object-in-context.json").unlink()
    (searches / original).write_text(text)
    (searches / copy).write_text(text)
    line = text[:text.index('"monitor_id"')].count("\n") + 1
    check_reports(sitegen, example_copy, f"searches/{copy}", line,
                  f"and searches/{original} holds saved search 'object-in-context' too")


CONFLICT = "<<<<<<< HEAD\n{ours}\n=======\n{theirs}\n>>>>>>> reviewer-b-branch\n"


@pytest.mark.parametrize(("rel", "ours", "theirs"), [
    ("protocol.md", "ours", "theirs"),  # before a lock, the markers were published as the protocol's text
    (f"{TA}/reviewer-a.csv", "10.1002/dev.21432,include,,", "10.1002/dev.21432,exclude,,"),
    ("records.jsonl", "{}", "{}"),
    ("review.yaml", "licence: CC0-1.0", "licence: CC-BY-4.0"),
    ("searches/object-in-context.json", "", ""),
])
def test_a_merge_conflict_left_in_a_file_is_named_as_one(sitegen, example_copy, rel, ours, theirs):
    path = example_copy / rel
    text = path.read_text()
    if rel.endswith(".json"):  # inside the object, where a pull request's edit would be
        cut = text.rfind("\n", 0, text.index('"run_count"')) + 1
        path.write_text(text[:cut] + CONFLICT.format(ours=ours, theirs=theirs) + text[cut:])
        line = text[:cut].count("\n") + 1
    else:
        path.write_text(text + ("" if text.endswith("\n") else "\n") + CONFLICT.format(ours=ours, theirs=theirs))
        line = text.count("\n") + 1 + (not text.endswith("\n"))
    check_reports(sitegen, example_copy, rel, line, "a Git merge conflict was left unresolved here")


@pytest.mark.parametrize("marker", ["<<<<<<< HEAD", ">>>>>>> reviewer-b-branch", "||||||| merged common ancestors"])
@pytest.mark.parametrize(("rel", "after"), [
    (f"{TA}/reviewer-a.csv", "10.1002/dev.21432,include,,"),
    ("evidence/wilson-2013-lec.yaml", "    population: Rats"),
    ("review.yaml", "licence: CC0-1.0"),
    ("protocol.md", "# Protocol"),
])
def test_a_merge_conflict_marker_left_alone_is_named_as_one(sitegen, example_copy, rel, after, marker):
    # A conflict resolved in part, its start or end marker not removed: a decision file's marker was two schema
    # problems of a record id '<<<<<<< HEAD', a YAML file's a syntax error at the line after the marker.
    path = example_copy / rel
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.rstrip("\n") == after) + 1
    lines.insert(at, marker + "\n")
    path.write_text("".join(lines))
    check_reports(sitegen, example_copy, rel, at + 1, f"a line Git writes around a merge conflict ({marker!r})")


@pytest.mark.parametrize("rel", [f"{TA}/adjudication.csv", f"{TA}/reviewer-b.csv"])
def test_a_decision_row_that_cannot_be_read_is_one_problem_not_a_flood(sitegen, example_copy, rel):
    # One misspelt decision made the record seem undecided, its batch unsettled, and every full-text decision of
    # the batch a problem: 38 of them, before the row's own, and false ("still awaits another reviewer").
    path = example_copy / rel
    lines = path.read_text().splitlines(keepends=True)
    # a record sent on to full text, whose decision there depends on this one
    sent_on = set((example_copy / FT / "reviewer-a.csv").read_text().split())
    at = next(n for n, line in enumerate(lines[1:], start=1)
              if ",include," in line and any(other.startswith(line.split(",")[0] + ",") for other in sent_on))
    lines[at] = lines[at].replace(",exclude,", ",EXCLUDE,").replace(",include,", ",Include,")
    path.write_text("".join(lines))
    code, out, _ = sitegen("check", example_copy)
    problems = [line for line in out.splitlines() if ": error: " in line]
    assert code == 1 and all(f"{rel}:{at + 1}:" in line for line in problems), out  # the row's problems alone
    assert any("[schema]" in line for line in problems) and len(problems) <= 2


def test_a_record_one_reviewer_decided_twice_otherwise_is_its_rows_problem_not_a_flood(sitegen, example_copy):
    # A bad merge kept both sides' rows: one reviewer's include and exclude of a record sent on to full text. It
    # seemed a conflict, its batch unsettled: 39 problems on the full-text file before the row's own.
    path = example_copy / TA / "reviewer-a.csv"
    lines = path.read_text().splitlines(keepends=True)
    sent_on = {line.split(",")[0] for line in (example_copy / FT / "reviewer-a.csv").read_text().splitlines()[1:]}
    at = next(n for n, line in enumerate(lines[1:], start=1) if ",include," in line and line.split(",")[0] in sent_on)
    lines.insert(at + 1, lines[at].replace(",include,", ",exclude,"))
    path.write_text("".join(lines))
    code, out, _ = sitegen("check", example_copy)
    problems = [line for line in out.splitlines() if ": error: " in line]
    assert code == 1 and all(f"{TA}/reviewer-a.csv:{at + 2}" in line for line in problems), out
    assert any("[duplicate-decision]" in line for line in problems) and len(problems) == 2


# A spreadsheet's forced text (="…", which CSV quotes as "=""…"""), written so Excel keeps an id as it is, too.
@pytest.mark.parametrize("written", ["https://doi.org/{}", "doi:{}", "DOI: {}", "{upper}", '="{}"', '"=""{}"""',
                                     '="https://doi.org/{upper}"'])
def test_a_decision_naming_its_record_in_another_written_form_says_the_id_and_is_one_problem(sitegen, example_copy,
                                                                                             written):
    # A DOI pasted as its address, or in capitals: the row was refused without saying the id to write, and its
    # record, seeming undecided by this reviewer, made a problem of its full-text decision too.
    path = example_copy / TA / "reviewer-a.csv"
    lines = path.read_text().splitlines(keepends=True)
    sent_on = {line.split(",")[0] for line in (example_copy / FT / "reviewer-a.csv").read_text().splitlines()[1:]}
    at = next(n for n, line in enumerate(lines[1:], start=1) if line.split(",")[0] in sent_on)
    record = lines[at].split(",")[0]
    lines[at] = lines[at].replace(record, written.format(record, upper=record.upper()), 1)
    path.write_text("".join(lines))
    out = check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", at + 1, f"write it as '{record}'")
    problems = [line for line in out.splitlines() if ": error: " in line]
    assert all(f"{TA}/reviewer-a.csv:{at + 1}" in line for line in problems), out


@pytest.mark.parametrize("name", ["Reviewer-A.csv", "reviewer-a (1).csv", "reviewer-a.csv.txt", ".reviewer-a.csv"])
def test_a_decision_file_not_named_as_one_is_its_own_problem_not_a_flood(sitegen, example_copy, name):
    # Saved under another name (a browser's ' (1)', capitals, an editor's '.txt'), a reviewer's file is not read,
    # and every record it decides seemed undecided: 43 problems (full-text decisions awaiting another reviewer,
    # adjudications of no conflict) around the file's own.
    (example_copy / TA / "reviewer-a.csv").rename(example_copy / TA / name)
    code, out, _ = sitegen("check", example_copy)
    problems = [line for line in out.splitlines() if ": error: " in line]
    assert code == 1 and len(problems) == 2 and all(f"{TA}/{name}: " in line for line in problems), out


@pytest.mark.parametrize("name", ["adjudications.csv", "adjudicator.csv", "adjudication-final.csv"])
def test_a_file_named_almost_as_the_adjudication_file_is_not_read_as_a_reviewers(sitegen, example_copy, name):
    # Read as one more reviewer's file, its rows settled nothing: every conflict it was meant to settle stayed one
    # (a flood of full-text rows in unsettled batches), and with fewer reviewers than required it decided records.
    (example_copy / TA / "adjudication.csv").rename(example_copy / TA / name)
    code, out, _ = sitegen("check", example_copy)
    problems = [line for line in out.splitlines() if ": error: " in line]
    assert code == 1 and len(problems) == 2 and all(f"{TA}/{name}: " in line for line in problems), out
    assert f"adjudications go in {TA}/adjudication.csv" in out


def test_import_decisions_refuses_a_reviewer_named_almost_as_the_adjudication_file(sitegen, example_copy, tmp_path):
    export = tmp_path / "export.csv"
    export.write_text("record_id,decision\n")
    code, _, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "adjudicator")
    assert code == 2 and "adjudication.csv" in err


def test_a_note_too_long_is_told_in_characters(sitegen, example_copy):
    # It said 'Value should have at most 2000 items after validation, not 5000', as of a list.
    replace_line(example_copy / TA / "reviewer-a.csv", 2, f"{first_record_id(example_copy)},exclude,,{'x' * 5000}")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 2, "note: String should have at most 2000 characters")


def test_a_reason_written_as_a_spreadsheets_forced_text_says_what_to_write(sitegen, example_copy):
    path = example_copy / FT / "reviewer-a.csv"
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace(",include,,", ',exclude,="non-rodent",', 1)
    path.write_text("".join(lines))
    check_reports(sitegen, example_copy, f"{FT}/reviewer-a.csv", 2,
                  "(it is written as a spreadsheet's formula for text, =\"non-rodent\": write it as 'non-rodent')")


def test_a_decision_written_as_a_spreadsheets_forced_text_says_what_to_write(sitegen, example_copy):
    # A CSV made for Excel may force every text cell (="exclude", so Excel reads it as it is): the decision was
    # refused as "Input should be 'include', 'exclude' or 'maybe'", of a cell that seems to say exclude.
    path = example_copy / TA / "reviewer-a.csv"
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if ",exclude," in line)
    lines[at] = lines[at].replace(",exclude,", ',="exclude",', 1)
    path.write_text("".join(lines))
    out = check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", at + 1,
                        "(it is written as a spreadsheet's formula for text, =\"exclude\": write it as 'exclude')")
    assert len([line for line in out.splitlines() if ": error: " in line]) == 1


def test_a_stage_folder_replaced_by_a_file_says_so(sitegen, example_copy):
    shutil.rmtree(example_copy / FT)
    (example_copy / FT).write_text("x\n")  # it said: unknown screening stage 'full-text' (expected ... full-text)
    check_reports(sitegen, example_copy, FT, None, f"{FT} must be a folder")


def test_a_huge_cell_is_not_echoed_whole_and_an_empty_column_name_is_shown(sitegen, example_copy):
    append(example_copy / TA / "reviewer-b.csv", "10.9999/" + "x" * 1_000_000 + ",include,,\n")
    for form in ("human", "github"):
        code, out, _ = sitegen("check", example_copy, "--format", form)
        assert code == 1 and max(map(len, out.splitlines())) < 5000 and "more characters not shown" in out
    path = example_copy / TA / "reviewer-a.csv"
    text = path.read_text()
    path.write_text(text.replace("record_id,decision,reason,note", "record_id,decision,,reason,note", 1))
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 1, "unknown column(s) '' (a column with no name)")


@pytest.mark.parametrize("hidden", ["\ufeff", "\u200b"])
def test_a_column_name_holding_a_character_that_does_not_show_is_shown_escaped(sitegen, example_copy, hidden):
    # A second byte-order mark (a tool adding one to a file that had one) or a zero-width space: the header was
    # said to miss 'record_id' and to hold an unknown 'record_id', the two alike on screen.
    path = example_copy / TA / "reviewer-a.csv"
    path.write_text(hidden + path.read_text(), encoding="utf-8-sig")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 1,
                  f"unknown column(s) {hidden + 'record_id'!r} (with a character that does not show)")


@pytest.mark.parametrize(("written", "says"), [
    ("Record_ID,Decision,Reason,Note", "write 'Record_ID' as 'record_id', 'Decision' as 'decision', 'Reason' as "
                                       "'reason', 'Note' as 'note'"),
    ("Record ID,decision,reason,note", "write 'Record ID' as 'record_id'"),
    ("record-id,decision,reason,note", "write 'record-id' as 'record_id'"),
    ("RecordID,decision,reason,note", "write 'RecordID' as 'record_id'"),
    ("record.id,decision,reason,note", "write 'record.id' as 'record_id'"),
])
def test_a_column_named_as_a_person_writes_it_says_which_name_to_write(sitegen, example_copy, written, says):
    path = example_copy / TA / "reviewer-a.csv"
    path.write_text(path.read_text().replace("record_id,decision,reason,note", written, 1))
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 1, says)


def test_columns_with_no_name_a_spreadsheet_pads_rows_with_are_read_as_absent(sitegen, example_copy):
    path = example_copy / TA / "reviewer-a.csv"
    lines = path.read_text().splitlines()
    # A spreadsheet wrote two empty columns after the last one, on every line or only some.
    path.write_text("\n".join(line + (",," if number % 2 == 0 else "") for number, line in enumerate(lines)) + "\n")
    code, out, err = sitegen("check", example_copy)
    assert code == 0, out + err
    # A value in such a column belongs to no column: said at its line and column.
    path.write_text("\n".join([lines[0] + ",,", *lines[1:3], lines[3] + ",,stray", *lines[4:]]) + "\n")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", 4, "a value in a column the header does not name")


def test_rows_of_empty_cells_a_spreadsheet_saves_are_read_as_blank_lines(sitegen, example_copy):
    # Excel and LibreOffice save an empty row of a sheet as its separators alone (",,,"), often the last one:
    # each was refused as a row with an empty record id and no decision.
    path = example_copy / TA / "reviewer-a.csv"
    decided = [(row.path, row.line, row.decision) for row in load_review(example_copy)[0].decisions]
    lines = path.read_text().splitlines()
    path.write_bytes(("\r\n".join([*lines[:3], ",,,", *lines[3:], ",,,", ", ,,", ""])).encode("utf-8-sig"))
    (example_copy / "validation.csv").write_text(f"record_id,note\n{A_RECORD},named by the protocol\n,\n")
    (example_copy / "duplicates.csv").write_text("record_id,duplicate_of,decision,reviewer,note\n,,,,\n")
    code, out, err = sitegen("check", example_copy)
    assert code == 0, out + err
    shifted = [(rel, line + (rel == f"{TA}/reviewer-a.csv" and line > 3), decision) for rel, line, decision in decided]
    assert [(row.path, row.line, row.decision) for row in load_review(example_copy)[0].decisions] == shifted
    # A value in any cell makes it a row like any other, read and checked.
    path.write_text("\n".join([*lines, ",,,note"]) + "\n")
    check_reports(sitegen, example_copy, f"{TA}/reviewer-a.csv", len(lines) + 1, "record id is empty")


def test_a_repositorys_own_files_at_the_review_root_are_no_near_misses(sitegen, example_copy):
    # The review folder as its repository's root: a VERSION file or a run script is no versions/ or runs/.
    (example_copy / "VERSION").write_text("1.0\n")
    (example_copy / "run").write_text("#!/bin/sh\n")
    assert sitegen("check", example_copy)[0] == 0
    (example_copy / "search").mkdir()
    (example_copy / "search" / "x.json").write_text("{}\n")
    check_reports(sitegen, example_copy, "search", None, "sitegen reads 'searches'")


def test_a_link_is_annotated_where_the_link_is(sitegen, example_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(example_copy))
    outside = tmp_path / "outside.csv"
    outside.write_text("record_id,decision,reason,note\n")
    (example_copy / TA / "mallory.csv").symlink_to(outside)
    code, out, _ = sitegen("check", example_copy, "--format", "github")
    assert code == 1 and f"file={TA}/mallory.csv," in out
    code, out, _ = sitegen("check", example_copy, "--format", "json")
    assert json.loads(out)["problems"]


def test_json_output_bounds_each_message(sitegen, example_copy):
    append(example_copy / TA / "reviewer-b.csv", "10.9999/" + "x" * 1_000_000 + ",include,,\n")
    code, out, _ = sitegen("check", example_copy, "--format", "json")
    assert code == 1 and len(out) < 100_000 and "more characters not shown" in out


def test_seen_ids_problems_name_their_line(sitegen, example_copy):
    path = example_copy / "searches" / "object-in-context.json"
    search = json.loads(path.read_text())
    dropped = search["seen_ids"].pop(3)  # a record of a batch, no longer seen
    search["seen_ids"].insert(5, "10.9999/nope")  # a record records.jsonl lacks
    text = json.dumps(search, indent=2) + "\n"
    path.write_text(text)
    nope = text[:text.index('"10.9999/nope"')].count("\n") + 1
    seen = text[:text.index('"seen_ids"')].count("\n") + 1
    out = check_reports(sitegen, example_copy, "searches/object-in-context.json", nope, "not in records.jsonl")
    assert f"searches/object-in-context.json:{seen}:" in out and dropped in out


def test_an_id_repeated_in_seen_ids_is_named_at_the_repeat_with_the_line_of_the_first(sitegen, example_copy):
    # It was reported at the "seen_ids" key's line, where nothing is to be fixed among thousands of ids.
    path = example_copy / "searches" / "object-in-context.json"
    search = json.loads(path.read_text())
    repeated = search["seen_ids"][2]
    search["seen_ids"].insert(7, repeated)
    text = json.dumps(search, indent=2) + "\n"
    path.write_text(text)
    first = text[:text.index(f'"{repeated}"')].count("\n") + 1
    second = text[:text.index(f'"{repeated}"', text.index(f'"{repeated}"') + 1)].count("\n") + 1
    out = check_reports(sitegen, example_copy, "searches/object-in-context.json", second, "appears twice in seen_ids")
    assert f"appears twice in seen_ids (first on line {first})" in out


def test_a_saved_search_naming_another_last_event_is_the_files_fault_when_the_ledger_is_whole(sitegen, example_copy):
    # It was reported at the ledger's last line as "events were deleted from the end: restore ledger.jsonl".
    path = example_copy / "searches" / "object-in-context.json"
    search = json.loads(path.read_text())
    search["last_event"]["seq"] -= 1
    text = json.dumps(search, indent=2) + "\n"
    path.write_text(text)
    line = text[:text.index('"last_event"')].count("\n") + 1
    out = check_reports(sitegen, example_copy, "searches/object-in-context.json", line, "the file was edited")
    assert "ledger-truncated" not in out


def test_a_number_where_text_goes_says_to_quote_it(sitegen, example_copy):
    path = next((example_copy / "evidence").glob("*.yaml"))
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.startswith("  ") and ": " in line and line.strip().split(": ")[0]
              in ("population", "location", "outcome", "species", "intervention", "comparator"))
    key = lines[at].split(":")[0]
    lines[at] = f"{key}: 12:30\n"  # YAML's sexagesimal 750
    path.write_text("".join(lines))
    check_reports(sitegen, example_copy, f"evidence/{path.name}", at + 1, "YAML reads 12:30 as 750")
    path.write_text("".join(lines).replace(": 12:30\n", ": 12.5\n"))
    check_reports(sitegen, example_copy, f"evidence/{path.name}", at + 1, "it was read as 12.5: put the text in quotes")


@pytest.mark.parametrize(("written", "read"), [("010", "8"), ("02", "2"), ("-07", "-7")])
def test_a_number_with_a_leading_zero_is_not_read_in_octal(sitegen, example_copy, written, read):
    # YAML 1.1 reads 010 as 8: two title/abstract reviewers written "010" became eight, silently, and every
    # full-text decision was then said to await another reviewer, review.yaml never named.
    path = example_copy / "review.yaml"
    lines = path.read_text().splitlines()
    at = next(n for n, line in enumerate(lines) if line.strip().startswith("title_abstract_reviewers:"))
    lines[at] = lines[at].split(":")[0] + f": {written}"
    path.write_text("\n".join(lines) + "\n")
    out = check_reports(sitegen, example_copy, "review.yaml", at + 1, f"YAML reads {written} as {read}, a leading 0")
    assert len([line for line in out.splitlines() if ": error: " in line]) == 1


@pytest.mark.parametrize(("written", "read"), [("0x2", "2"), ("0b10", "2"), ("1_0", "10"), ("1:00", "60"),
                                               ("2_0.5", "20.5")])
def test_a_number_yaml_reads_in_another_base_or_without_its_underscores_is_refused(sitegen, example_copy, tmp_path,
                                                                                   written, read):
    # As with a leading 0: YAML 1.1 reads 0x, 0b, base 60 (':') and skips '_', so 'full_text_reviewers: 1_0' asked
    # for ten reviewers, silently: check passed, and PRISMA counted no report assessed, all 40 awaiting.
    path = example_copy / "review.yaml"
    lines = path.read_text().splitlines()
    at = next(n for n, line in enumerate(lines) if line.strip().startswith("full_text_reviewers:"))
    lines[at] = lines[at].split(":")[0] + f": {written}"
    path.write_text("\n".join(lines) + "\n")
    check_reports(sitegen, example_copy, "review.yaml", at + 1, f"YAML reads {written} as {read}, ")
    code, stdout, stderr = sitegen("prisma", example_copy)
    assert code == 1 and f"review.yaml:{at + 1}:" in stdout + stderr and "Traceback" not in stdout + stderr
    code, _, _ = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 1 and not (tmp_path / "site").exists()


def test_a_tab_ending_a_line_of_yaml_is_read_as_a_space_is(sitegen, example_copy):
    # YAML 1.2 takes a tab at the end of a line as separation (the YAML test suite's "Various trailing tabs"), as
    # libyaml does; PyYAML refused 'licence: CC0-1.0<tab>' as a syntax error, of a line that looks right.
    value_line = re.compile(r"^ *(- )?[a-z_]+:( [^|>].*)?$")  # not a block's text, where a tab is the text's own
    paths = [example_copy / "review.yaml", *sorted((example_copy / "evidence").glob("*.yaml"))]
    before, _ = load_review(example_copy)
    for path in paths:
        lines = path.read_text().splitlines()
        assert sum(bool(value_line.match(line)) for line in lines) > 3
        path.write_text("".join(line + ("\t" if value_line.match(line) else "") + "\n" for line in lines))
    assert sitegen("check", example_copy)[0] == 0
    after, _ = load_review(example_copy)
    assert (after.config, after.evidence) == (before.config, before.evidence)


def test_a_tab_yaml_refuses_is_named_as_a_tab_with_the_way_to_mend_it(sitegen, example_copy):
    # PyYAML says "found character '\t' that cannot start any token", which names no rule and no mending.
    path = example_copy / "review.yaml"
    lines = path.read_text().splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("licence:"))
    lines[at] = lines[at].replace(": ", ":\t")
    path.write_text("\n".join(lines) + "\n")
    check_reports(sitegen, example_copy, "review.yaml", at + 1, "a tab here, where YAML reads only spaces")


@pytest.mark.parametrize("written", ["no", "off", "yes", "On"])
def test_a_switch_written_as_yes_or_no_says_to_write_true_or_false(sitegen, example_copy, written):
    # yes, no, on and off stay text (a reviewer's 'population: no' means the word), so a switch given one was
    # refused as 'Input should be a valid boolean' alone, when YAML 1.1 reads it as one.
    path = example_copy / "review.yaml"
    text = path.read_text()
    assert "\nsite:\n" in text and "  search:" not in text
    path.write_text(text.replace("\nsite:\n", f"\nsite:\n  search: {written}\n", 1))
    line = text[:text.index("\nsite:\n")].count("\n") + 3
    check_reports(sitegen, example_copy, "review.yaml", line, f"read as the text '{written}': write true or false")


def test_a_protocol_edited_after_its_lock_says_how_to_keep_the_change_and_that_way_works(sitegen, example_copy):
    # The message told the user to raise `version` first; `protocol amend` raises it itself, and following the
    # message as written must give a clean review.
    protocol = example_copy / "protocol.md"
    lines = protocol.read_text().splitlines(keepends=True)
    edited = next(n for n, line in enumerate(lines) if "Rodents (rats or mice)" in line)
    lines[edited] = lines[edited].replace("Rodents (rats or mice)", "Rodents (rats, mice or voles)")
    protocol.write_text("".join(lines))
    out = check_reports(sitegen, example_copy, "protocol.md", edited + 1, "was edited after it was locked")
    assert f"`sitegen protocol amend {example_copy} --at TIME --reason TEXT` (which raises `version` for you)" in out
    code, _, err = sitegen("protocol", "amend", example_copy, "--at", "2026-01-20T00:00:00Z", "--reason", "voles too")
    assert code == 0, err
    assert "version: 3" in protocol.read_text() and sitegen("check", example_copy)[0] == 0


@pytest.mark.parametrize("rel", [f"{TA}/reviewer-b.csv", "records.jsonl", "ledger.jsonl"])
def test_a_file_the_system_will_not_let_be_read_is_a_problem_on_that_file(sitegen, example_copy, monkeypatch, rel):
    # Permission denied stopped check with one error line, so --format github annotated nothing. Tests run as root,
    # whom permissions do not stop: the file's reads (whole, or as a stream of lines) are refused instead.
    denied = example_copy / rel
    read_bytes, open_ = Path.read_bytes, Path.open

    def refused(path: Path) -> None:
        if path == denied:
            raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(Path, "read_bytes", lambda path: (refused(path), read_bytes(path))[1])
    monkeypatch.setattr(Path, "open", lambda path, *args, **kwargs: (refused(path), open_(path, *args, **kwargs))[1])
    monkeypatch.setenv("GITHUB_WORKSPACE", str(example_copy))
    # Path's reads alone are refused: a parse kept (SITEGEN_TEST_CACHE_DIR), found by the file's digest, read through
    # os.open, would stand for the file as the system would never let it for a file it refuses to read.
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")
    code, out, err = sitegen("check", example_copy)
    assert code == 1 and not err, err
    # Unread, its content is unknown, not empty: the files are not checked against each other.
    assert [line.rsplit("[", 1)[-1] for line in out.splitlines()[:-1]] == ["not-checked]", "unreadable]"]
    assert f"{rel}: error: file could not be read (Permission denied): give the user sitegen runs" in out
    code, out, err = sitegen("check", example_copy, "--format", "github")
    assert code == 1 and not err, err
    assert f"::error file={rel},title=sitegen unreadable::file could not be read (Permission denied)" in out


@pytest.mark.parametrize(("query", "position"), [
    ("stroke AND", 8),  # AND needs a term after it
    ('"object" AND', 10),  # escaped quotes before it: \" is two characters in the file, one in the query
    ("caf\u00e9 \U00020000 (rat", 8),  # \u00e9 and a surrogate pair (\ud840\udc00) before it: one character each
    ("caf\u00e9 \U0001f600 rat", 6),  # the character refused is itself a surrogate pair
    ("rat\tOR (mouse", 8),  # a tab written \t
])
def test_a_grammar_error_in_a_saved_query_is_placed_at_its_character(example_copy, sitegen, query, position):
    """`check` named no line for a `syntax: sitegen` query the grammar refuses, where the duplicate-strategy check
    beside it gives the query's line: it is at the line, and at the column of the character the grammar stopped at
    (the file's escapes read as the one character each is)."""
    path = example_copy / "searches" / "object-in-context.json"
    search = json.loads(path.read_text())
    search["strategies"].append({"source": "openalex", "query": query, "syntax": "sitegen", "label": "broken"})
    text = json.dumps(search, indent=2) + "\n"  # ASCII: é and the emoji written as \u escapes
    path.write_text(text)
    line, row = [(number, row) for number, row in enumerate(text.splitlines(), start=1) if '"query"' in row][1]
    opening = row.index('"query": ') + len('"query": ')  # 0-based: the string's opening quote
    column = opening + len(json.dumps(query[:position - 1]))  # past the quote and the escaped text before it
    result, out, _ = sitegen("check", example_copy)
    assert result == 1
    assert f"{path}:{line}:{column}: error: strategies[1].query: position {position}: " in out, out
    assert row[column - 1] == json.dumps(query[position - 1])[1]  # the file's character there is the query's


@pytest.mark.parametrize(("field", "notice", "said"), [
    ("updates", {"kind": "retraction", "doi": "=1+1\nER  - "}, "updates.0.doi: doi '=1+1\\nER  - ' is not in "
                                                                "normalised form (not a valid identifier)"),
    ("updates", {"kind": "correction", "doi": "https://doi.org/10.1234/X"}, "updates.0.doi: doi "
                                                                            "'https://doi.org/10.1234/X' is not in "
                                                                            "normalised form (10.1234/x)"),
    ("updates", {"kind": "retraction", "pmid": "PMID: 9"}, "updates.0.pmid: pmid 'PMID: 9' is not in "
                                                            "normalised form (9)"),
    ("notice_of", {"kind": "retraction", "doi": "=HYPERLINK(1)"}, "notice_of.0.doi: doi '=HYPERLINK(1)'"),
    ("reinstatements", {"doi": "10.1234/z\r"}, "reinstatements.0.doi: doi '10.1234/z\\r' is not in normalised"),
])
def test_a_notice_identifier_not_in_normalised_form_is_named_by_line(example_copy, sitegen, field, notice, said):
    """A notice's DOI or PMID took any text (a formula, a RIS tag after a line break), which pages link and exports
    write; it is now held as the record's own identifiers are, normalised, and records.jsonl's line named."""
    records = example_copy / "records.jsonl"
    record = json.loads(records.read_text().splitlines()[4])
    record["custom"][field] = [notice]
    replace_line(records, 5, json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and f"records.jsonl:5: error: custom.{said}" in out, out


def test_notice_identifiers_sitegen_wrote_still_load():
    """Held as a record's own identifiers are, a notice's DOI and PMID refuse nothing sitegen wrote: the example
    review and the records fixture load without a problem; the records read from the Crossref fixtures (one lists a
    correction in its updated-by), deduplicated, read back as they were written; and DOIs kept with a Unicode
    hyphen by a sitegen before stand-ins were read as ASCII load as they are."""
    from conftest import FIXTURES

    from sitegen.records.identity import deduplicate
    from sitegen.records.model import Record, model_data
    from sitegen.review.folder import read_records
    from sitegen.review.write import canonical_json
    from sitegen.sources import crossref

    for folder in (EXAMPLE, FIXTURES / "exports"):
        read = read_records(folder)
        assert read.loaded and read.records and not read.problems, read.problems
    items = [json.loads(path.read_text())["message"] for path in (FIXTURES / "crossref").glob("*.json")]
    works = [work for item in items for work in (item.get("items", [item]) if isinstance(item, dict) else [])]
    records = [record for record in map(crossref.work_to_record, works) if record]
    records += deduplicate(records).records
    assert any(update.doi for record in records for update in record.custom.updates)
    for record in records:
        assert Record.model_validate(json.loads(canonical_json(model_data(record)))) == record
    kept = {"id": "10.1234/x", "DOI": "10.1234/x", "title": "T", "custom": {
        "updates": [{"kind": "retraction", "doi": "10.1234/x\u2010r", "pmid": "9"}],
        "reinstatements": [{"doi": "10.1234/x\u2010z"}], "notice_of": [{"kind": "correction", "doi": "10.1234/y\u2010w"}]}}
    custom = Record.model_validate(kept).custom
    assert [model_data(notice) for notice in (*custom.updates, *custom.reinstatements, *custom.notice_of)] == [
        *kept["custom"]["updates"], *kept["custom"]["reinstatements"], *kept["custom"]["notice_of"]]
