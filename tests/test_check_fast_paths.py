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

import pytest

from sitegen.records import ids
from sitegen.records.model import CONTROL_CHARACTER, printable, visible_text
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


@pytest.mark.parametrize("header, line", [
    ("a,b,c", "1,22,333"),
    ("a,b,c", ",,"),
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
