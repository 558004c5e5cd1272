"""The record writers, made quick for 100,000 records (issue 14), write what they wrote before, byte for byte.

The golden files in tests/fixtures/exports/ were written by the writers before that rewrite (the CSV's last
columns, `type`, `date`, `publication_types`, `updates` and `notice_of`, added since: each row as it was, with the
record's CSL type, full date, publication types and notices after it; the BibTeX's `month`
and `date` lines, added since, are its only other lines). The
escaping functions are compared here with their earlier, plain implementations (kept below) on
hostile text: every kind of white space and line break, LaTeX's special characters, "and",
commas, formula starts, capitals that are no A-Z.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys

import pytest
from conftest import FIXTURES
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from sitegen.records.model import CONTROL_CHARACTER, CslName, Record, RecordMeta, model_data
from sitegen.records.pages import _PAGE, first_and_last, range_parts
from sitegen.references.table import LINE_BREAK
from sitegen.site import exports
from sitegen.site.exports import (
    authors,
    bibtex_name,
    citation_keys,
    latex_text,
    one_line,
    records_bibtex,
    records_csl_json,
    records_csv,
    records_ris,
    safe_cell,
    write_csv,
)

GOLDEN = FIXTURES / "exports"
GOLDEN_RECORDS = [Record.model_validate_json(line) for line in (GOLDEN / "records.jsonl").read_text().splitlines()]
ALL_CHARACTERS = "".join(map(chr, range(sys.maxunicode + 1)))


@pytest.mark.parametrize("extension", ["ris", "bib", "json", "csv"])
def test_writers_write_the_golden_files(extension):
    keys = citation_keys(GOLDEN_RECORDS)
    outcomes = ["include", "exclude", "maybe", ""]
    status = {record.id: (outcomes[i % 4], outcomes[(i + 1) % 4]) for i, record in enumerate(GOLDEN_RECORDS)}
    written = {"ris": lambda: records_ris(GOLDEN_RECORDS, keys), "bib": lambda: records_bibtex(GOLDEN_RECORDS, keys),
               "json": lambda: records_csl_json(GOLDEN_RECORDS, keys),
               "csv": lambda: records_csv(GOLDEN_RECORDS, status, keys)}[extension]()
    assert written == (GOLDEN / f"records.{extension}").read_bytes().decode()


def test_no_records_write_what_they_wrote():
    assert (records_ris([]), records_bibtex([]), records_csl_json([])) == ("", "", "[]\n")
    assert records_csv([], {}) == write_csv(exports.CSV_COLUMNS, [])


def test_one_line_relies_on_split_breaking_where_regex_white_space_does():
    assert re.findall(r"\s", ALL_CHARACTERS) == [char for char in ALL_CHARACTERS if char.isspace()]
    assert set(exports._OTHER_SPACES) == {char for char in ALL_CHARACTERS if char.isspace()} - {" "}


def test_the_quick_paths_rely_on_unprintable_white_space_and_line_breaks():
    # one_line takes a printable value for one without other white space, and the CSV a printable row for one
    # without a line break.
    assert not [char for char in ALL_CHARACTERS if char.isspace() and char != " " and char.isprintable()]
    assert not [char for char in LINE_BREAK if char.isprintable()]


def test_name_parts_rely_on_no_other_character_matching_and():
    # _name_part looks for "and" in the lower-cased text before _AND's case-blind search.
    assert [char for char in ALL_CHARACTERS if re.fullmatch("[and]", char, re.IGNORECASE)] == list("ADNadn")


def test_latex_escapes_hold_no_other_special_character_escaped_on_its_own():
    # _substituted replaces those characters one after another: no escape may hold another.
    assert not [(special, char) for special in exports._ALONE_SPECIALS for char in exports._ALONE_SPECIALS
                if char != special and char in exports._LATEX_SPECIALS[special]]


def earlier_first_and_last(page: str | None) -> tuple[str, str]:
    # The general rule, without the quick path for plain pages (a page that is no range of two is kept whole).
    if not page:
        return "", ""
    written = page.strip()
    parts = range_parts(written)
    if len(parts) == 2 and all(_PAGE.fullmatch(part) for part in parts):
        return parts[0], parts[1]
    return written, ""


@given(st.lists(st.sampled_from([*"0123456789- \t-–—aZiv", "٣", "--"]), max_size=12).map("".join))
def test_pages_read_as_before(page):
    assert first_and_last(page) == earlier_first_and_last(page)


# --------------------------------------------------------------------------- the earlier implementations

LINE_BREAKS = re.compile(f"[{LINE_BREAK}]+")


def earlier_one_line(value: str) -> str:
    return re.sub(r"\s+", " ", LINE_BREAKS.sub(" ", value)).strip()


def earlier_write_csv(header: list[str], rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerows([exports._FORMULA_LINE_START.sub("'", cell) for cell in row] for row in [header, *rows])
    return buffer.getvalue()


def earlier_latex_text(value: str) -> str:
    # (with the ligatures broken since, which the earlier implementation did not)
    escaped = exports._LATEX_SPECIAL.sub(lambda match: exports._LATEX_SPECIALS[match.group()], earlier_one_line(value))
    return re.sub(r"(?<=[`?!])(?=`)|(?<=')(?=')", "{}", escaped)


def earlier_title(value: str) -> str:
    return " ".join(f"{{{earlier_latex_text(word)}}}" if any(char.isupper() for char in word[1:])
                    else earlier_latex_text(word) for word in earlier_one_line(value).split(" "))


def earlier_name_part(value: str) -> str:
    text = exports._AND.sub(lambda match: "{" + match.group() + "}", earlier_latex_text(value))
    return f"{{{text}}}" if "," in text else text


def earlier_csl_json(records: list[Record], keys: dict[str, str]) -> str:
    items = []
    for record in records:
        item = model_data(record)
        if record.author:
            item["author"] = [TypeAdapter(CslName).dump_python(name, exclude_none=True) for name in record.author]
        items.append({**item, "citation-key": keys[record.id]})
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


# Pieces hostile text is made of: every white space and line break, LaTeX's and spreadsheets' special characters,
# BibTeX's "and", capitals beyond A-Z (a titlecase digraph, a Roman numeral, a mathematical capital, a circled one).
PIECES = [*" \t\n\r\v\f\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\u200b",
          *"\\{}$&%#_^~@=+-|'\",.;:/`?!", *"aAzZ09éÉßǅⅠ𝐀Ⓐİﬁ–—", "and", "AND", "And", "  ", "Jr.", "van der", "\n=1+1"]
HOSTILE = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
# Long text (an abstract) of printable pieces and spaces only, which the quick paths for long text take.
PLAIN = st.lists(st.sampled_from(["word", " ", "  ", "É", "{", "NF1", "=", "and", ","]), max_size=10).map("".join)
TEXT = (HOSTILE | st.text(max_size=30) | st.builds(lambda text, times: text * times, HOSTILE, st.integers(1, 30))
        | st.builds(lambda text, times: text * times, PLAIN, st.integers(20, 60)))


@given(TEXT)
def test_one_line_as_before(text):
    assert one_line(text) == earlier_one_line(text)


@given(TEXT)
def test_latex_escaping_as_before(text):
    assert latex_text(text) == earlier_latex_text(text)
    assert exports._title(text) == earlier_title(text)
    assert exports._name_part(text) == earlier_name_part(text)


@given(TEXT)
def test_printable_as_isprintable(text):
    # A long ASCII text is told from its bytes: every ASCII character, and long text holding each, says the same.
    for char in map(chr, range(128)):
        assert exports.printable(char) == char.isprintable()
        assert exports.printable("a" * 300 + char) == (char.isprintable())
    assert exports.printable(text) == text.isprintable()
    assert exports.printable(text * 50) == (text * 50).isprintable()


@given(TEXT)
def test_formula_neutralisation_as_before(text):
    assert safe_cell(text) == exports._FORMULA_LINE_START.sub("'", text)


@settings(max_examples=200)
@given(st.lists(st.lists(TEXT, max_size=4), max_size=4))
def test_csv_as_the_csv_module_wrote_it(rows):
    assert write_csv(["a", "b"], rows) == earlier_write_csv(["a", "b"], rows)


def valid(model, **fields):
    try:
        return model(**fields)
    except ValidationError:
        return None


# What a record can hold: no control character.
STORED = st.lists(st.sampled_from([piece for piece in PIECES if not CONTROL_CHARACTER.search(piece)]),
                  min_size=1, max_size=30).map("".join)
NAMES = st.one_of(st.builds(valid, st.just(CslName), family=STORED, given=st.none() | STORED,
                            suffix=st.none() | STORED),
                  st.builds(valid, st.just(CslName), literal=STORED))
RECORDS = st.builds(valid, st.just(Record), id=st.just("10.1234/abcd"), DOI=st.just("10.1234/abcd"), title=STORED,
                    author=st.lists(NAMES.filter(bool), max_size=3), abstract=st.none() | STORED,
                    container_title=st.none() | STORED, page=st.none() | STORED, custom=st.builds(RecordMeta))


@settings(max_examples=150, deadline=None)
@given(RECORDS)
def test_names_and_csl_json_as_before(record):
    assume(record is not None)
    try:
        names = authors(record)
    except ValidationError:  # split_name can make a name without visible text of one stored whole ("Ann \u200b")
        return
    assert records_csl_json([record], {record.id: "key"}) == earlier_csl_json([record], {record.id: "key"})
    for split_name in names:
        family = earlier_name_part(split_name.family or "")
        given_name = earlier_name_part(split_name.given or "")
        earlier = ("{" + earlier_latex_text(split_name.literal) + "}" if split_name.literal
                   else f"{family}, {earlier_name_part(split_name.suffix)}, {given_name}" if split_name.suffix
                   else f"{family}, {given_name}" if given_name
                   else f"{{{family}}}" if " " in family and not family[:1].islower() else family)
        assert bibtex_name(split_name) == earlier


@pytest.mark.parametrize("key", ["krab2008simvastatin-2", 'a"b\\c', "Ü\u2028\x7f"])
def test_csl_json_writes_any_key_as_before(key):
    record = GOLDEN_RECORDS[0]
    assert records_csl_json([record], {record.id: key}) == earlier_csl_json([record], {record.id: key})


def _first_free_keys(records):
    """Citation keys as they were first given: each record the first of base, base-2, base-3… no record has yet."""
    keys, taken = {}, set()
    for record in records:
        base = key = exports._key_base(record)
        number = 1
        while key in taken:
            number += 1
            key = f"{base}-{number}"
        taken.add(key)
        keys[record.id] = key
    return keys


def test_citation_keys_of_many_records_of_one_base_are_numbered_in_linear_work(monkeypatch):
    # 20,000 records of one first author, year and first title word (a hostile import, or a review's "Anonymous"
    # errata) were numbered by trying -2, -3, … from the start for each: a minute at every build and export. Counted,
    # not timed: each key tried was a look-up in a set.
    class Counted(set):
        probes = 0

        def __contains__(self, item):
            Counted.probes += 1
            return super().__contains__(item)

    alike = [Record.model_validate({"id": f"10.1234/x{n}", "DOI": f"10.1234/x{n}", "type": "article-journal",
                                    "title": "Effect of things" if n % 3 else "Other things",
                                    "author": [{"family": "Smith", "given": "J"}], "issued": {"date-parts": [[2020]]}})
             for n in range(2000)]
    records = GOLDEN_RECORDS + alike + GOLDEN_RECORDS[:5]  # a record given twice keeps the key it was given last
    expected = _first_free_keys(records)
    monkeypatch.setattr(exports, "set", Counted, raising=False)  # any set() the module makes is this one
    keys = citation_keys(records)
    assert keys == expected and keys["10.1234/x1999"] == "smith2020effect-1333"
    assert Counted.probes < 3 * len(records)  # was about 2,000,000


@given(st.lists(TEXT, max_size=6))
def test_values_taken_for_one_line_each_are(values):
    # RIS writes its values as they are when _one_line_each says they are one line: it must never say so wrongly.
    if exports._one_line_each(values):
        assert [one_line(value) for value in values] == values


@settings(max_examples=150, deadline=None)
@given(RECORDS)
def test_ris_quick_path_writes_what_one_line_for_each_value_wrote(record):
    assume(record is not None)
    try:
        authors(record)
    except ValidationError:
        return
    quick = records_ris([record], {record.id: "key"})
    original = exports._one_line_each
    exports._one_line_each = lambda values: False  # every value through one_line, as each was before
    try:
        assert quick == records_ris([record], {record.id: "key"})
    finally:
        exports._one_line_each = original


@pytest.mark.parametrize("part", ["Izabela", "Grzegorz M.", "Jong-Ho", "J.-P.", "O'Brien", "O''Brien", "Alexander",
                                  "and", "AND", "Anand", "van der Berg", "M.  J", " Ann", "Ann ", "Smith, Jr.",
                                  "de_la", "Ann.", "A..B", "Ann-", "Ann--Bo", "Zoë Ødegård", "A\u00a0B", "12", "J.\u2028P"])
def test_name_parts_as_before(part):
    assert exports._name_part(part) == earlier_name_part(part)
    assert latex_text(part) == earlier_latex_text(part)


@pytest.mark.parametrize("row", [["a", "=1"], ["", "-x"], ['"', "=x"], ["=a", "b"], ["a,b", "'=c"], ['a"', '"b'],
                                 ["x", "@y", "z"], ["%", ""], ["a", "b|"], ["a\nb", "c"],
                                 ['say "hi"', "=x"], ['"q"', "", "-y"], ['x"', "y"], ['a"=b', "c"], ['"', '"+'],
                                 ['a"', "b\x1fc"]])
def test_csv_rows_guarded_as_before(row):
    assert write_csv(["a", "b"], [row]) == earlier_write_csv(["a", "b"], [row])


@pytest.mark.parametrize("batch", [1, 2, 3, 1000])
def test_csl_json_in_batches_as_before(monkeypatch, batch):
    # Records are serialised a batch at a time as a list and cut apart at their closing braces.
    monkeypatch.setattr(exports, "JSON_BATCH", batch)
    keys = citation_keys(GOLDEN_RECORDS)
    assert records_csl_json(GOLDEN_RECORDS, keys) == earlier_csl_json(GOLDEN_RECORDS, keys)


def test_csl_json_of_a_list_in_another_layout_is_written_a_record_at_a_time(monkeypatch):
    class OtherLayout:
        def dump_json(self, *args, **kwargs):
            return b"[]"

    monkeypatch.setattr(exports, "JSON_BATCH", 2)
    monkeypatch.setattr(exports, "_record_list", OtherLayout)
    keys = citation_keys(GOLDEN_RECORDS)
    assert records_csl_json(GOLDEN_RECORDS, keys) == earlier_csl_json(GOLDEN_RECORDS, keys)


@given(st.lists(st.sampled_from(["article", "letter; comment", ";", "", "Retraction", " retraction ", "a;b;c"]),
                max_size=4))
def test_publication_types_written_as_before(types):
    assert exports._types_text(types) == "; ".join([kind for kind in types if ";" not in kind])
