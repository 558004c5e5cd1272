"""The quick ways `sitegen check` reads a review give exactly what the thorough ways give (issue 14).

Each quick path skips work only where that work provably finds nothing; these tests pin the cases
where it must not skip, and that what is reported stays the same.
"""

from __future__ import annotations

import gc
import json
import random
import re
import unicodedata
from pathlib import Path

import pytest

from sitegen.records import ids
from sitegen.records.model import CONTROL_CHARACTER, Record, model_data, printable, visible_text
from sitegen.review import parsing
from sitegen.review.folder import cycle_collection_paused


def test_text_that_isprintable_accepts_holds_no_refused_character():
    # printable() trusts str.isprintable(): every character the record format refuses must fail it.
    refused = [code for code in range(0x110000) if CONTROL_CHARACTER.match(chr(code)) and chr(code).isprintable()]
    assert refused == []


@pytest.mark.parametrize("text, message", [
    ("tab\tand\nline breaks are text", None),
    ("a bell \x07", "holds the control character U+0007, which no text needs"),
    ("a C1 control \x85", "holds the control character U+0085, which no text needs"),
    ("a noncharacter \ufdd0", "holds U+FDD0, a code point that XML and HTML cannot hold"),
    ("a soft\u00adhyphen and a zero\u200bwidth space", None),
])
def test_printable_refuses_what_it_refused(text, message):
    if message is None:
        assert printable(text) == text
    else:
        with pytest.raises(ValueError, match=re.escape(message)):
            printable(text)


def test_visible_text_of_ascii_is_any_character_but_spaces():
    def by_category(value: str) -> bool:
        return any(not char.isspace() and unicodedata.category(char) != "Cf" for char in value)

    samples = ["", " ", "\t\n", "\x1c\x1f", "x", " x ", "\x00", "\u200b", " \u200b ", "\u00a0", "\u200bx"]
    samples += [chr(code) + tail for code in range(128) for tail in ("", " ", "a")]
    assert [visible_text(value) for value in samples] == [by_category(value) for value in samples]


@pytest.mark.parametrize("written, normalised", [
    ("10.1234/abc.def-1", "10.1234/abc.def-1"),  # already normalised: returned as it is
    ("10.1234/ABC", "10.1234/abc"),
    ("10.1234/abc.", "10.1234/abc"),
    ("10.1234/abc-", "10.1234/abc-"),  # a hyphen can end a DOI (en and em dashes cannot)
    ("10.1234/abc\u2013", "10.1234/abc"),
    ("10.1234/a/./b", None),
    ("10.1234/a/../b", None),
    ("10.1234/a/.hidden", "10.1234/a/.hidden"),  # a segment starting with '.' is no '.' segment
    ("10.1234/" + "a" * 504, "10.1234/" + "a" * 504),  # 512 characters: the longest DOI
    ("10.1234/" + "a" * 505, None),
    ("10.123456789/" + "a" * 499, "10.123456789/" + "a" * 499),
    ("10.123456789/" + "a" * 500, None),
    ("10.123/abc", None),
])
def test_doi_normalisation_of_plain_forms(written, normalised):
    assert ids.normalise_doi(written) == normalised
    assert ids.normalise_doi(f" doi:{written} ") == normalised  # the thorough way, same answer


def test_identifier_texts_are_memoised_only_at_identifier_size():
    long_id = "10.1234/" + "x" * 10_000
    before = ids.record_id_problem.__wrapped__  # the function itself, as memoised
    assert ids.record_id_problem(long_id) == before(long_id)
    assert ids.record_id_problem("10.1234/ok") is None
    assert ids.record_id_problem("10.1234/ok") is None
    assert "not a lower-case DOI" in ids.record_id_problem("10.1234/NOT")


def test_suspect_text_found_as_the_pattern_finds_it():
    rng = random.Random(14)
    alphabet = ["a", "\\", "u", "d", "8", "0", "1", "7", "f", "9", "\x7f", "\x80", "\x9f", "\xa0", "β", '"']
    samples = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(20_000)]
    assert [parsing._suspect(text) for text in samples] == [bool(parsing._SUSPECT.search(text)) for text in samples]


@pytest.mark.parametrize("text, message", [
    ('{"a": 1, "b": 2, "a": 3}', "key 'a' appears twice in the same object"),
    ('{"x": {"b": 1, "c": 2, "c": 3}}', "key 'c' appears twice in the same object"),
    ('{"n": 1e999}', "not a finite number: 1e999"),
    ('{"n": NaN}', "NaN is not a JSON number"),
    ('{"n": ' + "1" * 4301 + "}", "number too large: an integer may have at most 4300 digits"),
    ('{"t": "\\ud800"}', "lone UTF-16 surrogate"),
])
def test_json_refusals_unchanged(text, message):
    with pytest.raises(ValueError, match=message):
        parsing.load_json(text)


def test_json_values_unchanged():
    text = '{"a": [1, -0, 2.5, 1e3, true, null, "\\u00e9", {"b": []}], "c\\"": ":"}'
    assert parsing.load_json(text) == json.loads(text)


@pytest.mark.parametrize("written", [
    "Smith\uffff", "Smith\\uffff", "Smith\ufdd0", "Smith\\uFDEF", "Smith\U0001fffe", "Smith\\ud83f\\udffe",
    "Smith\x85", "Smith\\u0085", "Smith\\udfff",
])
@pytest.mark.parametrize("as_bytes", [False, True])
def test_provider_json_cleans_every_character_no_record_may_hold(written, as_bytes):
    # One bad name in a provider's answer must not drop the work (and leave the run incomplete on every run):
    # whatever JSON writes it as, raw or escaped, it becomes a space (a lone surrogate U+FFFD).
    text = '{"family": "' + written + '"}'
    value = parsing.load_json(text.encode("utf-8", "surrogatepass") if as_bytes else text, provider=True)
    assert value["family"].rstrip() in ("Smith", "Smith\ufffd")
    assert printable(value["family"]) == value["family"]


@pytest.mark.parametrize("header, line", [
    ("a,b,c", "1,22,333"),
    ("a,b,c", ",,3"),  # empty cells before a value (a row of empty cells alone is a blank line)
    ("a,b,c", '"x,y",2,3'),
    ("a,b,c", '1,"say ""hi""",3'),
])
def test_csv_columns_are_where_fields_start(header, line):
    rows, problems = parsing.parse_csv(f"{header}\n{line}\n", "f.csv", header.split(","), set())
    assert problems == []
    starts, quoted = [1], False
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            starts.append(index + 2)
    assert dict(rows[0].columns) == dict(zip(header.split(","), starts, strict=True))


@pytest.mark.parametrize("enabled", [True, False])
def test_cycle_collection_comes_back_as_it_was(enabled):
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with cycle_collection_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


EXAMPLE_RECORDS = Path(__file__).parents[1] / "reviews" / "object-in-context" / "records.jsonl"


def read_records(tmp_path, lines):
    """What `model_lines` reads of records.jsonl holding `lines`: (line, record or None, problems) each."""
    path = tmp_path / "records.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    problems: list = []
    found = [(lineno, record, row_problems) for lineno, record, _, row_problems
             in parsing.model_lines(Record, path, "records.jsonl", 10**9, problems, problems)]
    return found, problems


def thoroughly(line: str) -> Record:
    record, problems = parsing.validate(Record, parsing.Parsed(parsing.load_json(line)), "records.jsonl", line=1)
    assert problems == []
    return record


def test_records_read_in_one_pass_are_the_records_read_thoroughly(tmp_path):
    lines = EXAMPLE_RECORDS.read_text(encoding="utf-8").splitlines()
    found, problems = read_records(tmp_path, lines)
    assert problems == [] and len(found) == len(lines) == 271
    for line, (_, record, row_problems) in zip(lines, found, strict=True):
        expected = thoroughly(line)
        assert row_problems == []
        assert model_data(record) == model_data(expected)
        assert record.model_fields_set == expected.model_fields_set
        assert record.custom.model_fields_set == expected.custom.model_fields_set
        # ...and in one pass: the keys the line names are the keys the record counts
        assert len(parsing._KEY_END.findall(line)) == record.keys_given()


def with_a_key_twice(line: str, where: tuple) -> str:
    """`line` with the first key of the object at `where` (a path of keys and indexes) given twice."""
    record = json.loads(line)
    holder, last = record, where[-1] if where else None
    for step in where[:-1]:
        holder = holder[step]
    target = holder[last] if where else record
    first_key = next(iter(target))
    repeated = "{" + json.dumps(first_key) + ":" + json.dumps(target[first_key]) + "," + json.dumps(target)[1:]
    if not where:
        return repeated
    holder[last] = "@@here@@"
    return json.dumps(record).replace('"@@here@@"', repeated)


@pytest.mark.parametrize("where", [(), ("custom",), ("author", 0), ("author", 2), ("issued",),
                                   ("custom", "updates", 0)])
def test_a_key_given_twice_in_any_object_of_a_record_is_refused(tmp_path, where):
    line = next(line for line in EXAMPLE_RECORDS.read_text(encoding="utf-8").splitlines()
                if line.count('"family"') >= 3 and '"issued"' in line)
    record = json.loads(line)
    record["custom"]["updates"] = [{"kind": "correction", "doi": "10.1234/correction"}]
    line = json.dumps(record)
    assert read_records(tmp_path, [line])[1] == []
    found, problems = read_records(tmp_path, [line, with_a_key_twice(line, where)])
    assert [lineno for lineno, _, _ in found] == [1]
    assert [(problem.line, problem.code) for problem in problems] == [(2, "json-syntax")]
    assert "appears twice in the same object" in problems[0].message


@pytest.mark.parametrize("separators", [(",", ":"), (", ", " : "), (",\t", "\t:\t"), (",", "\r:")])
def test_records_read_alike_however_their_keys_are_spaced(tmp_path, separators):
    line = EXAMPLE_RECORDS.read_text(encoding="utf-8").splitlines()[5]
    record = json.loads(line)
    record["title"] = 'A title that quotes "keys": and \\": itself'  # a key's end inside a string
    spaced = json.dumps(record, separators=separators)
    found, problems = read_records(tmp_path, [spaced, with_a_key_twice(spaced, ("author", 0))])
    assert [model_data(record) for _, record, _ in found] == [model_data(thoroughly(spaced))]
    assert [(problem.line, problem.code) for problem in problems] == [(2, "json-syntax")]


@pytest.mark.parametrize("number, message", [("1e999", "not a finite number: 1e999"),
                                              ("NaN", "NaN is not a JSON number"),
                                              ("-Infinity", "-Infinity is not a JSON number"),
                                              ("1" * 4301, "number too large")])
def test_numbers_json_refuses_are_refused_in_records(tmp_path, number, message):
    line = EXAMPLE_RECORDS.read_text(encoding="utf-8").splitlines()[0]
    bad = re.sub(r'"date-parts":\[\[\d+', '"date-parts":[[' + number, line)
    assert bad != line
    found, problems = read_records(tmp_path, [bad])
    assert found == []
    assert [problem.line for problem in problems] == [1] and message in problems[0].message


def test_a_line_vouched_printable_holds_only_text_printable_accepts():
    # `model_lines` skips `printable` for a line `_proves_printable` vouches for: that must never be a line
    # holding text printable refuses, however JSON writes it (raw, escaped, after an escaped backslash).
    pool = ["a", "Z", " ", "é", "β", "\u200b", "\x85", "\x7f", "\x9f", "\ufdd0", "\U0010fffe", "\x07", "\b", "\f",
            "\n", "\t", "\r", "\\", '"', "u", "b", "f", "\ud800"]
    chooser = random.Random(14)
    vouched = 0
    for _ in range(20_000):
        text = "".join(chooser.choices(pool, k=chooser.randint(0, 6)))
        for ensure_ascii in (True, False):
            try:
                line = json.dumps({"title": text}, ensure_ascii=ensure_ascii)
            except UnicodeEncodeError:
                continue
            if parsing._proves_printable(line):
                vouched += 1
                assert printable(text) == text
    assert vouched > 1000  # the quick way is taken where it can be


@pytest.mark.parametrize("written, message", [
    ("\x85", "holds the control character U+0085"),
    ("\x7f", "holds the control character U+007F"),
    ("\ufdd0", "holds U+FDD0"),
    ("\\u0007", "holds the control character U+0007"),
    ("\\b", "holds the control character U+0008"),
    ("\\\\\\f", "holds the control character U+000C"),  # an escaped backslash, then a form feed
    ("\\u009F", "holds the control character U+009F"),
    ("\\ufffe", "holds U+FFFE"),
    ("\\udbff\\udfff", "holds U+10FFFF"),
])
@pytest.mark.parametrize("field", ['"title":"', '"family":"', '"abstract":"', '"container-title":"'])
def test_unprintable_text_is_refused_however_a_line_writes_it(tmp_path, written, message, field):
    line = next(line for line in EXAMPLE_RECORDS.read_text(encoding="utf-8").splitlines()
                if all(name in line for name in ('"family":"', '"abstract":"', '"container-title":"')))
    bad = line.replace(field, field + "x" + written, 1)
    found, problems = read_records(tmp_path, [line, bad])
    assert problems == [] and [(lineno, record is None) for lineno, record, _ in found] == [(1, False), (2, True)]
    refusals = found[1][2]
    assert [problem.line for problem in refusals] == [2] and message in refusals[0].message


def _one_by_one_lacking(review, record_ids):
    return [rid for rid in record_ids if rid not in review.records and rid not in review.invalid_record_ids] \
        if review.records_loaded else []


@pytest.mark.parametrize("named", [
    [], ["10.5555/a", "10.1/b"], ["10.1/b", "10.1/x", "10.5555/a", "10.1/x", "10.1/bad", "10.1/y"], ["10.1/y"],
])
@pytest.mark.parametrize("loaded", [True, False])
def test_records_lacking_are_those_looked_for_one_by_one_in_order(named, loaded):
    from sitegen.review.folder import Review
    review = Review(root=Path("."), config=None, records={"10.5555/a": None, "10.1/b": None},  # type: ignore[dict-item]
                    invalid_record_ids={"10.1/bad"}, records_loaded=loaded)
    assert review.lacking(named) == _one_by_one_lacking(review, named)
    assert review.lacking(iter(named)) == _one_by_one_lacking(review, named)  # any iterable, as before


def test_the_first_id_problem_is_found_past_ids_known_valid():
    ids.found_valid(["10.1/known"])
    assert ids.first_record_id_problem(["10.1/known", "10.1/known"]) is None
    assert ids.first_record_id_problem(iter(["10.1/known"])) is None
    problem = ids.first_record_id_problem(["10.1/known", "no id", "10.1/known"])
    assert problem is not None and problem == ids.record_id_problem("no id")
    assert ids.first_record_id_problem(["10.1/known", "no id"]) == problem  # known invalid now, still refused


@pytest.mark.parametrize("known", [{}, {"b": None}, {"a": None, "b": None, "c": None}, {"c": None, "a": None}])
def test_records_known_at_an_event_keep_their_order(known):
    from sitegen.living.facts import _known_only
    by_record = {"c": 3, "a": 1, "b": 2}
    kept = _known_only(by_record, known)
    assert list(kept.items()) == [(rid, value) for rid, value in by_record.items() if rid in known]
    assert kept is not by_record  # a copy: the review as it stood is not the review


def test_outcomes_combined_once_for_rows_saying_the_same_are_each_records_own():
    # stage_outcomes combines each sequence of (reviewer, decision, reason) once: every record's outcome must still
    # be what its own rows alone give, the order of its rows (the first adjudication wins) and its reasons included.
    from sitegen.review.folder import ADJUDICATION, DecisionRow
    from sitegen.review.models import Decision
    from sitegen.screening.outcomes import stage_outcomes

    said = [("reviewer-a", "exclude", "wrong-population"), ("reviewer-b", "exclude", "wrong-population"),
            ("reviewer-b", "exclude", "wrong-design"), ("reviewer-a", "include", ""), ("reviewer-b", "maybe", ""),
            (ADJUDICATION, "include", ""), (ADJUDICATION, "exclude", "wrong-design")]
    generator = random.Random(14)
    rows = []
    for number in range(400):
        record_id = f"10.5555/outcome.{number}"
        for reviewer, decision, reason in generator.sample(said, generator.randint(1, 4)):
            rows.append(DecisionRow("full-text", reviewer, f"screening/full-text/{reviewer}.csv", len(rows) + 2, {},
                                    Decision(record_id=record_id, decision=decision, reason=reason)))
    for required, agree in ((1, False), (2, False), (2, True), (3, True)):
        together = stage_outcomes(rows, "full-text", required, agree)
        for record_id, outcome in together.items():
            alone = stage_outcomes([row for row in rows if row.decision.record_id == record_id], "full-text",
                                   required, agree)
            assert alone == {record_id: outcome}
        assert len(set(together.values())) > 5


def test_a_decision_made_twice_is_found_whatever_rows_come_between():
    # _decision_problems looks a reviewer's earlier rows up once for each run of that reviewer's rows: rows of one
    # reviewer and stage split by another's (as no file gives them, but a caller may) are still compared.
    from sitegen.review.folder import DecisionRow, Review
    from sitegen.review.models import Decision
    from sitegen.screening.checks import _decision_problems

    def row(stage, reviewer, line, record_id, decision="include"):
        return DecisionRow(stage, reviewer, f"screening/{stage}/{reviewer}.csv", line, {"record_id": 1},
                           Decision(record_id=record_id, decision=decision))

    review = Review(root=Path("."), config=None)
    review.records_loaded = False  # no record is lacking: only the rows are compared
    review.decisions = [row("title-abstract", "reviewer-a", 2, "10.5555/a"), row("title-abstract", "reviewer-b", 2, "10.5555/a"),
                        row("full-text", "reviewer-a", 2, "10.5555/a"), row("title-abstract", "reviewer-a", 3, "10.5555/a"),
                        row("title-abstract", "reviewer-b", 3, "10.5555/a", "maybe")]
    problems, decided_otherwise = _decision_problems(review)
    assert [(problem.path, problem.line, problem.message) for problem in problems] == [
        ("screening/title-abstract/reviewer-a.csv", 3, "reviewer 'reviewer-a' already decided '10.5555/a' at this stage on line 2"),
        ("screening/title-abstract/reviewer-b.csv", 3, "reviewer 'reviewer-b' already decided '10.5555/a' at this stage on line 2")]
    assert decided_otherwise == {"10.5555/a": ("screening/title-abstract/reviewer-b.csv", 3)}
