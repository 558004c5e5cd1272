"""records.jsonl is validated line by line as it is read (issue 14): what is reported, and in what order,
stays what reading the whole file first gave."""

from __future__ import annotations

import json

from sitegen.review import folder, parsing


def record(n: int, **fields) -> bytes:
    doi = f"10.1234/r{n:03d}"
    return json.dumps({"id": doi, "DOI": doi, "title": f"Record {n}", **fields}).encode()


def load(root):
    review = folder.Review(root=root, config=None)
    problems = folder._load_records(root, review)
    return review, [(p.line, p.code, p.message) for p in problems]


def test_lines_without_json_come_first_then_records_in_line_order(tmp_path):
    (tmp_path / "records.jsonl").write_bytes(b"\n".join([
        record(1, title="\u0007"), b'{"id": ', record(3), record(2), b"", record(3)]) + b"\n")
    review, problems = load(tmp_path)
    assert problems == [
        (2, "json-syntax", "JSON syntax error: Expecting value"),
        (5, "blank-line", "blank line (one JSON object per line, no gaps)"),
        (1, "schema", "title: holds the control character U+0007, which no text needs"),
        (4, "order", "record '10.1234/r002' is out of order: records.jsonl is sorted by id"),
        (6, "duplicate-record", "record '10.1234/r003' already appears on line 3"),
    ]
    assert list(review.records) == ["10.1234/r003", "10.1234/r002"] and review.records_loaded
    assert review.record_digests["10.1234/r002"] == parsing.line_digest(record(2).decode())


def test_nothing_is_taken_from_a_file_not_readable_to_its_end(tmp_path):
    (tmp_path / "records.jsonl").write_bytes(b"\n".join([record(1), record(2, title=""), b"{", b"\xff"]))
    review, problems = load(tmp_path)
    # every problem of the lines read is said (a file of many bad lines stops at the first 200), nothing is taken
    assert sorted(problems) == [(2, "schema", "title: String should have at least 1 character"),
                                (3, "json-syntax", "JSON syntax error: Expecting property name enclosed in double quotes"),
                                (4, "encoding", "file is not valid UTF-8 text: save it as UTF-8")]
    assert (review.records, review.record_lines, review.record_digests, review.records_loaded) == ({}, {}, {}, False)
