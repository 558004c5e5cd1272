"""A file reviewers edit by hand, written again by a command, keeps its form: its line ends, byte-order mark and
final newline (or its absence), its rows as they were to the byte, its CSV quoting, its JSON key order and
indentation. Otherwise Git shows every line as changed and hides the change the command made."""

from __future__ import annotations

import csv
import difflib
import io
import json
import shutil

import pytest
from conftest import EXAMPLE
from test_import import export, held
from test_import_decisions import appended_to_reviewer_c, first_synergy_doi

from sitegen.review.models import DECISION_COLUMNS, DUPLICATE_COLUMNS
from sitegen.review.write import (
    TextForm,
    appended_lines,
    in_form,
    json_kept_form,
    text_form,
    with_rows_added,
)

AT = "2024-01-01T00:00:00Z"


@pytest.fixture
def example(tmp_path):
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    return review


def changes(before: bytes, after: bytes) -> list[tuple[list[bytes], list[bytes]]]:
    """The lines Git would show as changed: (lines taken out, lines put in) for each change."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    return [(old[i1:i2], new[j1:j2]) for tag, i1, i2, j1, j2 in
            difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if tag != "equal"]


def reformatted_json(value: dict, indent: str, line_end: str) -> bytes:
    """A JSON file as a reviewer's editor may save it: keys in reverse order, indented with `indent`, lines ending
    `line_end`, a byte-order mark first and no final newline."""
    text = json.dumps(dict(reversed(value.items())), indent=indent, ensure_ascii=False)
    return ("\ufeff" + text.replace("\n", line_end)).encode("utf-8")


# ----------------------------------------------------------------------------------------------- the helpers


@pytest.mark.parametrize(("text", "form"), [
    ("", TextForm()),
    ("a\nb\n", TextForm()),
    ("\ufeffa\r\nb", TextForm("\r\n", True, False)),
    ("a\rb\r", TextForm("\r", False, True)),
    ("a", TextForm("\n", False, False)),
])
def test_a_files_form_is_read_and_given_back(text, form):
    assert text_form(text) == form
    assert in_form(text.removeprefix("\ufeff").replace(form.line_end, "\n") + ("" if form.final_newline else "\n"),
                   form) == text


def test_lines_appended_leave_the_text_written_a_prefix_and_end_as_its_lines_do():
    assert appended_lines("", ["a", "b"]) == "a\nb\n"
    assert appended_lines("x\r\ny\r\n", ["a"]) == "x\r\ny\r\na\r\n"
    assert appended_lines("\ufeffx\ry", ["a", "b"]) == "\ufeffx\ry\ra\rb"  # no final newline: none after
    assert appended_lines("x\n", []) == "x\n"


def test_rows_added_to_a_csv_that_quotes_every_cell_are_quoted_so():
    # As R's write.csv, or a spreadsheet set to quote its text cells, saves a file: the rows added look alike
    text = '\ufeff"record_id","decision","note","reason"\r\n"10.1/a","include","",""\r\n'
    after = with_rows_added(text, DECISION_COLUMNS, [
        {"record_id": "10.1/b", "decision": "exclude", "reason": "no-control", "note": 'a "quoted" word'}], "r.csv")
    assert after == text + '"10.1/b","exclude","a ""quoted"" word","no-control"\r\n'
    # quoting every cell but the empty ones
    text = '"record_id","decision","reason","note"\n"10.1/a","include",,\n'
    after = with_rows_added(text, DECISION_COLUMNS, [{"record_id": "10.1/b", "decision": "include"}], "r.csv")
    assert after == text + '"10.1/b","include",,\n'


def test_rows_added_to_a_csv_that_quotes_what_it_must_are_quoted_only_where_they_must_be():
    text = "record_id,decision,reason,note\r\n10.1/a,include,,\r\n"
    after = with_rows_added(text, DECISION_COLUMNS, [
        {"record_id": "10.1/b", "decision": "include", "reason": "", "note": "one, two"}], "r.csv")
    assert after == text + '10.1/b,include,,"one, two"\r\n'


def test_a_note_of_two_lines_added_to_a_csv_whose_lines_end_with_cr_is_quoted():
    # Python's csv module quotes only the characters of its own line end: "\n" in a file whose lines end "\r"
    # was left bare, and the row read back as two
    text = "record_id,decision,reason,note\r10.1/a,include,,\r"
    after = with_rows_added(text, DECISION_COLUMNS, [
        {"record_id": "10.1/b", "decision": "include", "reason": "", "note": "two\nlines"}], "r.csv")
    assert after == text + '10.1/b,include,,"two\nlines"\r'
    rows = list(csv.reader(io.StringIO(after, newline="")))
    assert rows[-1] == ["10.1/b", "include", "", "two\nlines"]


def test_a_csv_holding_only_its_byte_order_mark_keeps_it_under_the_header_written():
    after = with_rows_added("\ufeff", DUPLICATE_COLUMNS, [
        {"record_id": "10.1/b", "duplicate_of": "10.1/a", "decision": "same", "reviewer": "r", "note": ""}], "d.csv")
    assert after == "\ufeffrecord_id,duplicate_of,decision,reviewer,note\n10.1/b,10.1/a,same,r,\n"


def test_json_written_again_keeps_the_files_key_order_indentation_and_form(tmp_path):
    path = tmp_path / "state.json"
    path.write_bytes(reformatted_json({"schema_version": 1, "max_kept": 25, "ledger_head": {"seq": 1, "hash": "a"}},
                                      "\t", "\r\n"))
    written = json_kept_form(path, {"schema_version": 1, "max_kept": 30, "ledger_head": {"seq": 2, "hash": "b"},
                                    "note": "new"})
    assert written == ('\ufeff{\r\n\t"ledger_head": {\r\n\t\t"seq": 2,\r\n\t\t"hash": "b"\r\n\t},\r\n'
                       '\t"max_kept": 30,\r\n\t"schema_version": 1,\r\n\t"note": "new"\r\n}')
    path.write_text('{"max_kept": 25, "schema_version": 1}')  # all on one line: it stays on one line
    assert json_kept_form(path, {"schema_version": 1, "max_kept": 30}) == '{"max_kept": 30, "schema_version": 1}'
    path.unlink()  # a new file: sitegen's own form
    assert json_kept_form(path, {"b": [1], "a": 2}) == '{\n  "b": [\n    1\n  ],\n  "a": 2\n}\n'


def test_json_list_items_are_ordered_as_the_items_written():
    path_value = [{"query": "q", "source": "s"}, {"query": "r", "source": "t"}]
    from sitegen.review.write import _ordered_as
    assert list(_ordered_as([{"source": "s", "query": "q"}, {"source": "t", "query": "r"}, {"source": "u",
                                                                                          "query": "x"}],
                            path_value)[2]) == ["query", "source"]


# ----------------------------------------------------------------------------------------------- the commands


def test_state_set_changes_only_the_line_of_the_value_set(sitegen, example):
    path = example / "state.json"
    before = reformatted_json(json.loads(path.read_text()), "    ", "\r\n")
    path.write_bytes(before)
    assert sitegen("check", example)[0] == 0
    code, _, err = sitegen("state", "set", example, "max_kept", "30")
    assert code == 0, err
    after = path.read_bytes()
    assert changes(before, after) == [([b'    "max_kept": 25,\r\n'], [b'    "max_kept": 30,\r\n'])]
    assert sitegen("check", example)[0] == 0


def test_protocol_amend_changes_only_the_version_line_and_the_ledger_only_grows(sitegen, example):
    # protocol.md with a byte-order mark, Windows line ends and no final newline; a ledger without its final newline
    protocol, ledger = example / "protocol.md", example / "ledger.jsonl"
    text = protocol.read_text().replace("Rodents (rats or mice)", "Rodents (rats, mice or hamsters)").rstrip("\n")
    before = ("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8")
    protocol.write_bytes(before)
    ledger_before = ledger.read_bytes().removesuffix(b"\n")
    ledger.write_bytes(ledger_before)
    code, _, err = sitegen("protocol", "amend", example, "--at", "2023-05-01T00:00:00Z", "--reason", "Hamsters")
    assert code == 0, err
    assert changes(before, protocol.read_bytes()) == [([b"version: 2\r\n"], [b"version: 3\r\n"])]
    written = ledger.read_bytes()
    assert written.startswith(ledger_before + b"\n") and not written.endswith(b"\n")
    assert json.loads(written[len(ledger_before):])["type"] == "amendment"
    assert sitegen("check", example)[0] == 0


def test_an_import_adds_only_the_seen_ids_to_a_reformatted_saved_search(sitegen, example, tmp_path):
    search = example / "searches" / "object-in-context.json"
    value = json.loads(search.read_text())
    before = reformatted_json(value, "\t", "\r\n")
    search.write_bytes(before)
    duplicates = example / "duplicates.csv"
    duplicates_before = ('\ufeff"' + '","'.join(DUPLICATE_COLUMNS) + '"\r\n').encode("utf-8")
    duplicates.write_bytes(duplicates_before)
    assert sitegen("check", example)[0] == 0
    export_file = tmp_path / "export.csv"  # the review's own records without their DOIs: matched by metadata
    export_file.write_text(export(list(held(EXAMPLE).records.values())[:25], False), encoding="utf-8")
    code, out, err = sitegen("import", example, export_file, "--at", AT, "--seen", "object-in-context")
    assert code == 0, err
    after = search.read_bytes()
    assert after.startswith(f'\ufeff{{\r\n\t"{list(value)[-1]}"'.encode()) and not after.endswith(b"\n")
    for taken_out, put_in in changes(before, after):  # the seen ids added, and the comma after the last one before
        assert [line.rstrip(b",\r\n") for line in taken_out] == [line.rstrip(b",\r\n") for line in put_in[:1]]
        assert all(line.startswith(b'\t\t"') for line in put_in)
    # the pairs the import matched by metadata are added to duplicates.csv as its header is written
    rows = duplicates.read_bytes()
    assert rows.startswith(duplicates_before) and rows.count(b"\n") == rows.count(b"\r\n") > 1
    assert all(line.startswith(b'"') for line in rows.splitlines()[1:])
    assert sitegen("check", example)[0] == 0


def test_import_decisions_appends_to_a_quoted_file_without_its_final_newline_as_it_is(sitegen, example, tmp_path):
    written = f'\ufeff"record_id","note","decision"\r\n"{first_synergy_doi()}","","include"'.encode()
    after = appended_to_reviewer_c(sitegen, example, tmp_path, written, slice(1, 4))
    assert after.startswith(written + b"\r\n") and not after.endswith(b"\n")
    added = after[len(written) + 2:].split(b"\r\n")
    assert len(added) == 3 and all(line.startswith(b'"10.') and line.count(b'"') == 6 for line in added)
    assert sitegen("check", example)[0] == 0
