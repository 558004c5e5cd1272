"""YAML read through libyaml, and CSV cells left unstripped where stripping changes none, give exactly
what the thorough ways give: the same data, positions and problems (issue 14).

libyaml composes a document in C but words problems and counts positions its own way, so it only ever
reads a document it finds valid; anything else goes to PyYAML's Python loader, which places the problem.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.review import folder, parsing
from sitegen.review.models import DECISION_COLUMNS, Decision

EXAMPLE = Path(__file__).parent.parent / "reviews" / "object-in-context"
LAUGHS = ("lol0: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
          "lol1: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nlol2: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n")
DEEP = "".join("  " * depth + f"k{depth}:\n" for depth in range(60)) + "  " * 60 + "end: 1\n"

def quick(text: str, rel: str = "x.yaml", line_offset: int = 0):
    """What sitegen makes of `text` (called as deep in the stack as `thorough` calls it: where the Python
    loader stops on nesting too deep depends on that)."""
    return parsing.parse_yaml(text, rel, line_offset)


def thorough(text: str, rel: str = "x.yaml", line_offset: int = 0):
    """What the Python loader alone makes of `text`."""
    fast = parsing._LibyamlLoader
    parsing._LibyamlLoader = None
    try:
        return parsing.parse_yaml(text, rel, line_offset)
    finally:
        parsing._LibyamlLoader = fast


def outcome(result):
    parsed, problems = result
    return (None if parsed is None else (parsed.data, parsed.positions)), problems


def example_yaml() -> list[str]:
    texts = [path.read_text() for path in sorted((EXAMPLE / "evidence").glob("*.yaml"))]
    protocol = (EXAMPLE / "protocol.md").read_text()
    return [*texts, (EXAMPLE / "review.yaml").read_text(), protocol.split("---\n")[1]]


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML was built without libyaml")
def test_libyaml_reads_every_file_of_the_example_as_the_python_loader_does():
    texts = example_yaml()
    assert len(texts) > 3
    for text in texts:
        assert parsing._fast_parse(text, parsing._Placer(0)) is not None  # the quick way took it
        assert outcome(quick(text, line_offset=1)) == outcome(thorough(text, line_offset=1))


@pytest.mark.parametrize("text", [
    "a: &x [1]\nb: *x\n",  # an alias
    "a: *nowhere\n",  # an alias of no anchor
    "a: &x [1, *x]\n",  # an alias inside the node it names: a cycle to libyaml
    "? &k key\n: 1\n*k : 2\n",  # an alias as a key
    DEEP.replace("end: 1", "end: &e 1\n" + "  " * 60 + "again: *e"),  # an alias deep down
    LAUGHS,
    "a: 1\nb:\n  c: 2\n  c: 3\na: 4\n",  # keys given twice, at two depths
    "[1, 2]: a\n",  # a key that is not text
    "a: 1\n  b: 2\n",  # syntax
    "a: [1, 2\n",
    "a: 'open\n",
    "a: \"\\udfff\"\n",  # a lone surrogate escape
    "a: 1\x07\n",  # a control character
    "a: !!int x\n", "a: !!timestamp 2024-13-45\n", "a: !!bool maybe\n", "a: !!float nope\n",
    "a: " + "9" * 5000 + "\n", "a: 0x" + "f" * 4000 + "\n", "a: 1e999\n", "a: .inf\n", "a: .nan\n",
    "a: 1\n---\nb: 2\n",  # two documents
    "<<: {a: 1}\nb: 2\n", "<<: [{a: 1}, {b: 2}]\nc: 3\n", "<<: 1\n",  # merge keys
    "", "---", "a:", "- a\n-", "? ", "a: 1\n? ", "{a: 1}", "[? ]", "[a, ? ]", "{? : 1}", "{a?b: 1}", "[a?b, c]", "a: b?\n", "- [a, {b: c?}]\n", "- \n- ''\n- x\n", "# only a comment\n", "plain text\n", "- a\n- b: [c, {d: e}]\n",
    "a:\tb\n", "0\t", "a: \"\tb\"\n", "a:\r\n  b: c\r\n", "é: \"ü\\u00e9\"\nb: [x, \"y\"]\n", "a: \u2028b\n", "a: x\u0085b: y\n",
    "!\n", "a: ! b\n", "a: !!str\n", "a: !local x\n", "%YAML 1.1\n---\na: 1\n", "%YAML 1.2\n---\na: 1\n",
    "%TAG ! tag:example.com,2000:\n---\na: !x 1\n", "a: |\n  one\n  two\n\nb: >-\n  folded\n  text\n",
    "a: yes\nb: no\nc: 2024-01-01\nd: True\ne: ~\nf: 1_000\ng: 0o17\nh: 1:30\ni: 0b101\nj: !!str 5\n",
    "deep: " + "[" * 1200 + "]" * 1200 + "\n",  # deeper than libyaml reads
    "deep:\n" + "".join(" " * depth + "- \n" for depth in range(1, 1200)),
])
def test_each_kind_of_file_gives_what_the_python_loader_gives(text):
    assert outcome(quick(text, line_offset=3)) == outcome(thorough(text, line_offset=3))


def test_an_alias_is_found_without_expanding_it_and_named_where_it_is():
    text = DEEP.replace("end: 1", "end: &e [a, b]\n" + "  " * 60 + "again: *e")
    assert parsing._fast_parse(text, parsing._Placer(0)) is None  # the composer gave the anchored node twice
    parsed, [problem] = parsing.parse_yaml(text, "x.yaml")
    assert parsed is None
    assert (problem.line, problem.column, problem.message) == (62, 128, "YAML syntax error: aliases (*name) are "
                                                                        "not allowed")
    many = "a: &a [x]\n" + "".join(f"l{n}: &l{n} [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" for n in range(40))
    assert parsing._fast_parse(many, parsing._Placer(0)) is None  # returns at once: nothing is expanded


def test_keys_given_twice_are_each_placed_in_the_order_of_the_file():
    text = "a:\n  x: 1\n  x: 2\nb: [{y: 1, y: 2}]\nb: 3\nc:\n  - z: 1\n    z: 2\n"
    parsed, problems = parsing.parse_yaml(text, "x.yaml")
    assert parsing._fast_parse(text, parsing._Placer(0)) is None
    assert [(p.line, p.column, p.code) for p in problems] == [(3, 3, "duplicate-key"), (4, 12, "duplicate-key"),
                                                              (5, 1, "duplicate-key"), (8, 5, "duplicate-key")]
    assert outcome((parsed, problems)) == outcome(thorough(text))


def test_a_document_with_more_collection_marks_than_libyaml_can_afford_goes_to_the_python_loader():
    # libyaml's memory grows with the square of the nesting before it refuses it: it never sees such a text.
    text = "a:\n" + "- [1]\n" * (parsing._LIBYAML_MARKS // 2)
    assert parsing._fast_parse(text, parsing._Placer(0)) is None
    parsed, problems = parsing.parse_yaml(text, "x.yaml")
    assert problems == [] and parsed.data["a"] == [[1]] * (parsing._LIBYAML_MARKS // 2)


def test_a_value_refused_by_a_constructor_keeps_its_position():
    _, [problem] = parsing.parse_yaml("a: 1\nb:\n  c: !!int nine\n", "x.yaml")
    assert (problem.line, problem.column, problem.code) == (3, 6, "yaml-value")


scalars = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                    st.none(), st.text(max_size=12))
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(documents, st.booleans(), st.sampled_from([None, "'", '"']))
def test_written_yaml_reads_the_same_either_way(data, flow, style):
    text = yaml.safe_dump(data, default_flow_style=flow, default_style=style, allow_unicode=True)
    assert outcome(quick(text)) == outcome(thorough(text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{},&*!?#'\"\\ \t\n\r|>%@`~01.\x85\u2028\ufeff\xa0é")), max_size=40))
def test_any_text_reads_the_same_either_way(text):
    assert outcome(quick(text)) == outcome(thorough(text))


# --------------------------------------------------------------------------- CSV


def reference_rows(text: str, names: list[str]) -> list[dict[str, str]]:
    """What parse_csv's rows hold, as csv itself reads them with every cell stripped: a cell missing at the end of
    a row is empty, and a row with a value past the header's columns is refused."""
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))[1:]
    return [dict(zip(names, (cell.strip() for cell in [*row, *[""] * len(names)][:len(names)]), strict=True))
            for row in rows if not any(cell.strip() for cell in row[len(names):])
            and any(cell.strip() for cell in row)]  # a row of empty cells is a blank line


@pytest.mark.parametrize("body", [
    "10.1/a,include,,\n10.1/b,exclude,off-topic,\n",
    " 10.1/a,include,,\n", "10.1/a ,include,,\n", "10.1/a,include,, note \n", "10.1/a,include,,\u00a0\n",
    '10.1/a,include,," quoted"\n', '10.1/a,include,,"quoted "\n', '10.1/a,include,,"\nlines"\n',
    '10.1/a,include,,"lines\n"\n', "10.1/a,include,,\r\n10.1/b,exclude,, \r\n", "10.1/a,include,,x \r 10.1/b,exclude,,\n",
    "10.1/a,include,,\u2028\n", "10.1/a,include,,last \t",
])
def test_csv_cells_are_stripped_whenever_stripping_changes_them(body):
    text = "record_id,decision,reason,note\n" + body
    rows, _ = parsing.parse_csv(text, "r.csv", DECISION_COLUMNS, {"record_id", "decision"})
    assert [row.values for row in rows] == reference_rows(text, DECISION_COLUMNS)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab,"\n\r \t\u00a0\u2028')), max_size=40))
def test_csv_cells_read_as_csv_reads_and_strips_them(body):
    text = "a,b\n" + body
    try:
        expected = reference_rows(text, ["a", "b"])
    except csv.Error:
        return  # a syntax error: parse_csv reports it (tests/test_parsing.py)
    rows, _ = parsing.parse_csv(text, "r.csv", ["a", "b"], set())
    assert [row.values for row in rows] == expected


def test_columns_are_found_from_the_row_s_own_line_when_asked():
    text = 'record_id,decision,reason,note\n10.1/a,include,,\n\n"10.1/b",exclude,"a, b",n\n'
    rows, _ = parsing.parse_csv(text, "r.csv", DECISION_COLUMNS, set())
    assert [dict(row.columns) for row in rows] == [{"record_id": 1, "decision": 8, "reason": 16, "note": 17},
                                                   {"record_id": 1, "decision": 10, "reason": 18, "note": 25}]


def test_rows_validated_together_give_each_bad_row_s_problems_as_alone():
    text = ("record_id,decision,reason,note\n10.1234/a,include,,\n10.1234/b,perhaps,,\nnot an id,exclude,,\n"
            "10.1234/c,exclude,,\n")
    rows, _ = parsing.parse_csv(text, "r.csv", DECISION_COLUMNS, set())
    problems: list = []
    valid = list(folder._validated_rows(rows, Decision, "r.csv", problems))
    assert [(row.line, decision.record_id) for row, decision in valid] == [(2, "10.1234/a"), (5, "10.1234/c")]
    assert [(p.line, p.column, p.code) for p in problems] == [(3, 11, "schema"), (4, 1, "schema")]
    good = [row for row in rows if row.line in (2, 5)]
    assert [decision for _, decision in folder._validated_rows(good, Decision, "r.csv", problems)] == \
        [decision for _, decision in valid]
