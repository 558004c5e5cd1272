"""The readers behind `check`: positions, YAML pitfalls, CSV shapes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.review.parsing import parse_csv, parse_yaml


def test_yaml_keeps_reviewer_words_as_text():
    parsed, problems = parse_yaml("a: yes\nb: no\nc: 2024-01-01\nd: true\n", "x.yaml")
    assert problems == []
    assert parsed.data == {"a": "yes", "b": "no", "c": "2024-01-01", "d": True}


def test_yaml_positions_point_at_keys():
    parsed, _ = parse_yaml("top:\n  items:\n    - name: a\n    - name: b\n", "x.yaml")
    assert parsed.position(("top", "items", 1, "name")) == (4, 7)
    assert parsed.position(("top", "items", 1, "missing")) == (4, 7)  # falls back to the parent


@pytest.mark.parametrize(("written", "read"), [
    ('"\\ud83d\\ude00 and \\ud835\\udd18"', "😀 and 𝔘"),  # as a JSON writer escapes them (json.dumps), which YAML reads
    ('"\\U0001F600"', "😀"), ('"\\ud83d"', None), ('"\\ude00\\ud83d"', None), ('"\\ud83d x \\ude00"', None),
])
def test_a_pair_of_surrogate_escapes_is_the_character_it_writes_and_a_lone_one_no_character(written, read):
    # An evidence file written by a JSON writer (valid YAML) with an emoji or a mathematical letter in a finding
    # was refused: PyYAML reads each escape of the pair as a lone surrogate.
    parsed, problems = parse_yaml(f"finding: {written}\n", "evidence/x.yaml")
    if read is None:
        assert parsed is None and [problem.code for problem in problems] == ["yaml-value"]
        assert "lone UTF-16 surrogate" in problems[0].message
    else:
        assert not problems and parsed.data == {"finding": read}


def test_yaml_front_matter_offset():
    _, problems = parse_yaml("a: [\n", "protocol.md", line_offset=1)
    assert problems[0].line == 3


def test_csv_positions_and_shapes():
    text = 'record_id,decision,reason,note\n10.1234/a,include,,"a, quoted note"\n\n10.1234/b,exclude\n'
    rows, problems = parse_csv(text, "r.csv", ["record_id", "decision", "reason", "note"], {"record_id", "decision"})
    assert [r.line for r in rows] == [2, 4]
    assert rows[0].values["note"] == "a, quoted note"
    assert rows[0].columns["reason"] == 19
    assert rows[1].values == {"record_id": "10.1234/b", "decision": "exclude", "reason": "", "note": ""}
    assert problems == []


def test_csv_header_errors():
    _, problems = parse_csv("id,decision\n", "r.csv", ["record_id", "decision"], {"record_id", "decision"})
    assert "missing column(s) record_id" in problems[0].message
    assert "unknown column(s) id" in problems[0].message
    _, problems = parse_csv("", "r.csv", ["record_id"], {"record_id"})
    assert problems[0].code == "csv-header"


@pytest.mark.parametrize("header, shown", [
    ("," * 2000 + "note" + "," * 2000, "unknown column(s) ''"),  # padding after the last name is dropped, not before
    ("record_id,decision,reason,note" + "," * 2000, None),  # a spreadsheet's padding, read as absent
    ("," * 2000, "missing column(s) decision, record_id"),  # no name at all: every column is kept, and none is named
])
def test_a_headers_padding_is_cut_in_linear_work(monkeypatch, header, shown):
    # The padding after a header's last name was cut one column at a time, asking each time whether any column had a
    # name: a header of 20,000 commas each side of one name took 13 s to check, a 400 KB one minutes. Counted, not
    # timed: the columns any() looks at.
    from sitegen.review import parsing

    looked = 0

    def counted_any(values):
        nonlocal looked
        for value in values:
            looked += 1
            if value:
                return True
        return False

    monkeypatch.setattr(parsing, "any", counted_any, raising=False)  # the module's any() is this one
    rows, problems = parse_csv(header + "\n", "r.csv", ["record_id", "decision", "reason", "note"], {"record_id", "decision"})
    assert rows == [] and [shown in p.message for p in problems] == ([True] if shown else [])
    assert all(p.message.count("(a column with no name)") <= 1 for p in problems)  # named once, not 4,000 times
    assert looked < 3 * len(header)  # was 4,000,000 for the first


@settings(max_examples=200)
@given(st.text(max_size=300))
def test_yaml_reader_never_raises(text):
    parse_yaml(text, "x.yaml")


@settings(max_examples=200)
@given(st.text(max_size=300))
def test_csv_reader_never_raises(text):
    parse_csv(text, "x.csv", ["record_id", "decision", "reason", "note"], {"record_id", "decision"})


@pytest.mark.parametrize("text, position, code", [
    ('{\n  "a": 1,\n  "max_kept": NaN\n}', (3, 15), "json-syntax"),
    ('{\n "x": {"k": 1,\n   "k": 2}, "k": 3\n}', (3, 4), "json-syntax"),  # the second k of the inner object
    ('{"x": {"k": 1}, "k": 2,\n "y": [{"k": 1}, {"k": 1}]}', None, None),  # one key in several objects is fine
    ('[1,\n 2, -Infinity]', (2, 5), "json-syntax"),
    ('{"s": "ok \\ud83d\\ude00 \\"NaN\\"",\n "t": "bad \\ud800"}', (2, 7), "json-syntax"),
    ('{"a":\n' + "[" * 5000 + "]" * 5000 + "}", (2, 900), "too-deep"),
])
def test_json_a_review_file_cannot_hold_is_named_at_its_line_and_column(text, position, code):
    """json.loads says only what it refused (NaN, a key twice, a lone surrogate, nesting too deep), not
    where: a state.json, version or saved search of many lines was reported at line 1."""
    from sitegen.review.parsing import _json

    value, problems = _json(text, "state.json", 0)
    if position is None:
        assert problems == [] and value["y"] == [{"k": 1}, {"k": 1}]
        return
    [problem] = problems
    assert (problem.line, problem.column, problem.code) == (*position, code)


@pytest.mark.parametrize("text, position, fragment", [
    ('{\n  "a": 1,\n  "b": [1, 2],\n}\n', (3, 14), "a comma after the last item"),  # json stops a line on, at }
    ('{\n  "b": [\n    "x",\n    "y",\n  ]\n}', (4, 8), "a comma after the last item"),
    ('{\n  "a": 1,\n  // the first run\n  "b": 2\n}', (3, 3), "JSON has no comments"),
    ('{\n  "a": 1,\n  # the first run\n  "b": 2\n}', (3, 3), "JSON has no comments"),
    ("{\n  'a': 1\n}", (2, 3), "double quotes"),
    ('{\n  "a": ,\n}', (2, 8), "Expecting value"),  # no comma after a last item: json's own words
])
def test_json_written_as_javascript_is_named_where_a_person_wrote_it(text, position, fragment):
    """A trailing comma was reported at the bracket after it, a line later, as "Expecting property name"."""
    from sitegen.review.parsing import _json

    _, [problem] = _json(text, "searches/main.json", 0)
    assert (problem.line, problem.column, problem.code) == (*position, "json-syntax")
    assert fragment in problem.message


def test_the_walk_for_a_refusal_past_where_json_stopped_never_fails_itself():
    """After json's reader gave up (nested too deep), text it never read may hold a string that is not
    valid JSON: finding the place must not raise in turn."""
    from sitegen.review.parsing import _json

    def deep(frames: int):
        return deep(frames - 1) if frames else _json("[" * 850 + "]" * 850 + '\n{"a": "\\x"}', "state.json", 0)

    [problem] = deep(250)[1]
    assert problem.code == "too-deep" and problem.line == 1


def test_a_key_given_twice_is_named_at_the_second_with_the_line_of_the_first():
    # Only the second was named: in a long file, which key to keep meant searching for the other.
    from sitegen.review.parsing import _json

    _, [problem] = _json('{\n  "a": 1,\n  "x": {"k": 1},\n  "b": 2,\n  "a": 3\n}', "state.json", 0)
    assert (problem.line, problem.column) == (5, 3) and "(first on line 2)" in problem.message
    _, [problem] = _json('{"a": 1, "a": 2}', "ledger.jsonl", 6)  # a line of a JSON-lines file: its own line
    assert (problem.line, problem.column) == (7, 10) and "(first at column 2)" in problem.message
    for offset in (0, 1):  # a file of its own, and front matter after its fence
        _, [problem] = parse_yaml("a: 1\nb:\n  c: 2\n  d: 3\n  c: 4\n", "f.yaml", line_offset=offset)
        assert (problem.line, problem.code) == (5 + offset, "duplicate-key")
        assert f"(first on line {3 + offset})" in problem.message
    _, [problem] = parse_yaml("a: {b: 1, c: 2, b: 3}\n", "f.yaml")
    assert (problem.line, problem.column) == (1, 17) and "(first at column 5)" in problem.message


@pytest.mark.parametrize("line_end", ["\u2028", "\u2029", "\r", "\x85"])
@pytest.mark.parametrize("offset", [0, 1])
def test_yaml_lines_are_counted_as_editors_count_them(line_end, offset):
    # YAML ends a line at these too; a file's lines end only at "\n", and problems name the file's lines.
    first = f'a: "x{line_end}y"\n'
    parsed, problems = parse_yaml(first + "b: 1\n", "f.yaml", line_offset=offset)  # read by libyaml
    assert problems == [] and parsed.position(("b",)) == (2 + offset, 1)
    _, problems = parse_yaml(first + "b: 1\nb: 2\n", "f.yaml", line_offset=offset)  # by PyYAML's own loader
    assert [(p.line, p.column, p.code) for p in problems] == [(3 + offset, 1, "duplicate-key")]
    _, problems = parse_yaml(first + "b: [1, {c: 2]\n", "f.yaml", line_offset=offset)
    assert [(p.line, p.code) for p in problems] == [(2 + offset, "yaml-syntax")]


def test_a_yaml_merge_key_is_refused_with_its_place():
    # `<<: {...}` gave a mapping's keys unseen: a way round the rule that no key is given twice.
    from sitegen.review.parsing import parse_yaml

    _, problems = parse_yaml("record_id: a\n<<: {record_id: b}\n", "evidence/x.yaml")
    assert [(p.line, p.column, p.code) for p in problems] == [(2, 1, "merge-key")]
    assert parse_yaml('note: "<<"\n"<<": text\n', "evidence/x.yaml")[1] == []  # a quoted "<<" is text
