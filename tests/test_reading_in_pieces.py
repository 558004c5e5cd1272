"""JSON-lines files are read in pieces of many lines, decoded a piece at once (issue 14): what is read
and every problem found (its line, its kind) stay what reading line by line gives, wherever a piece ends."""

from __future__ import annotations

import json
import random

import pytest

from sitegen.review import parsing


def read(path, limit=10**9):
    problems: list = []
    lines = list(parsing.read_lines(path, "x.jsonl", limit, problems))
    return lines, [(p.line, p.code, p.message) for p in problems]


@pytest.fixture(params=[1, 2, 3, 7, 64, 1 << 20])
def piece_bytes(request, monkeypatch):
    # Pieces of a few bytes end mid-line and mid-character; the real size holds the whole file.
    monkeypatch.setattr(parsing, "_PIECE_BYTES", request.param)
    return request.param


def test_lines_as_split_lines_splits_them(tmp_path, piece_bytes):
    rng = random.Random(14)
    alphabet = ["a", "é", "β", "𝔸", "\r", "\n", "\r\n", "\u2028", "\x85", " ", '"', "\ufeff"]
    for _ in range(40):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        path = tmp_path / "x.jsonl"
        path.write_bytes(text.encode("utf-8"))
        expected = parsing.split_lines(text.removeprefix("\ufeff")) if text != "\ufeff" else [""]
        assert read(path) == (list(enumerate(expected, start=1)), [])


@pytest.mark.parametrize("bad, code, message", [
    (b'{"a": "\xff"}\n', "encoding", "file is not valid UTF-8 text: save it as UTF-8"),
    (b'{"a": "\xc3"}\n', "encoding", "file is not valid UTF-8 text: save it as UTF-8"),  # a character cut short
    (b'{"a": 1}\x00\n', "encoding", "file contains a NUL byte (binary data?)"),
    (b'{"long": "' + b"x" * 120 + b'"}\n', "too-large", "line is longer than the 0.0001 MB limit for one line"),
    (b'{"long": "' + b"x" * 120 + b'\x00"}', "too-large",  # its NUL past what is read of it
     "line is longer than the 0.0001 MB limit for one line"),
    (b"\x00" * 300, "encoding", "file contains a NUL byte (binary data?)"),  # binary, however long its line
])
def test_the_first_bad_line_is_named_and_stops_reading(tmp_path, monkeypatch, piece_bytes, bad, code, message):
    monkeypatch.setattr(parsing, "MAX_LINE_BYTES", 100)
    good = [json.dumps({"n": n, "t": "é" * n}) for n in range(12)]
    path = tmp_path / "x.jsonl"
    path.write_bytes("\n".join(good).encode() + b"\n" + bad + b"\n" + b'{"after": "\xff\x00"}\n')
    assert read(path) == (list(enumerate(good, start=1)), [(13, code, message)])


def test_a_line_without_end_is_held_no_further_than_the_limit(tmp_path, monkeypatch, piece_bytes):
    # 1,000 lines' worth of one line: reading stops once it is known to be too long.
    monkeypatch.setattr(parsing, "MAX_LINE_BYTES", 100)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b"x" * 100_000)
    pieces = []
    with path.open("rb") as handle:
        for piece in parsing._pieces_of_lines(handle):
            pieces.append(piece)
    assert max(len(piece) for piece in pieces) <= 100 + 1 + max(piece_bytes, len(b'{"a": 1}\n'))
    assert read(path) == ([(1, '{"a": 1}')], [(2, "too-large", "line is longer than the 0.0001 MB limit for one line")])


def test_a_byte_order_mark_is_dropped_on_line_1_only(tmp_path, piece_bytes):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\xef\xbb\xbf{"a": 2}\n')
    assert read(path) == ([(1, '{"a": 1}'), (2, '\ufeff{"a": 2}')], [])
    rows, problems = parsing.read_json_lines(path, "x.jsonl", 10**9)
    assert rows == [(1, {"a": 1})]
    assert [(p.line, p.code, p.message) for p in problems] == [
        (2, "json-syntax", "JSON syntax error: a byte-order mark (U+FEFF) starts it, as an editor adding a second "
                           "one, or a file joined to another that had one, leaves it: remove it")]
    path.write_bytes(b"\xef\xbb\xbf")  # a first line of only the mark is an empty line
    assert read(path) == ([(1, "")], [])


def test_a_string_with_a_byte_order_mark_or_bytes_read_as_json_loads_reads_them():
    # load_json parses text with one decoder made once; what json.loads does first is kept.
    with pytest.raises(json.JSONDecodeError, match=r"a byte-order mark \(U\+FEFF\) starts it"):
        parsing.load_json('\ufeff{"a": 1}')
    assert parsing.load_json('{"a": 1}'.encode("utf-16")) == {"a": 1}
    with pytest.raises(ValueError, match="key 'a' appears twice"):
        parsing.load_json(b'{"a": 1, "a": 2}')
    with pytest.raises(ValueError, match="key 'a' appears twice"):
        parsing.load_json('{"a": 1, "a": 2}')
