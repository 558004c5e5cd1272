"""Text a reader sees: every record and review-file field refuses what XML and HTML cannot hold, a title
must have visible text, and the site's address must be a clean http(s) URL. Each is reported by `check`
with its file and line, exits non-zero, and writes nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_check import check_reports, replace_line

from sitegen.records.model import printable

# Code points XML 1.0 or HTML cannot hold: noncharacters at the end of the BMP and of the last plane, one of
# the U+FDD0 block, a C0 control, DEL and a C1 control (which a terminal would obey).
UNFIT = ["\ufffe", "\uffff", "\ufdd0", "\U0010ffff", "\U0001fffe", "\x01", "\x7f", "\x9b"]


def set_first_record(review, **fields) -> None:
    path = review / "records.jsonl"
    record = json.loads(path.read_text().splitlines()[0])
    record.update(fields)
    replace_line(path, 1, json.dumps(record))


@pytest.mark.parametrize("char", UNFIT, ids=lambda char: f"U+{ord(char):04X}")
@pytest.mark.parametrize("field", ["title", "abstract"])
def test_a_record_refuses_what_xml_and_html_cannot_hold(sitegen, example_copy, field, char):
    set_first_record(example_copy, **{field: f"Object {char} recognition"})
    check_reports(sitegen, example_copy, "records.jsonl", 1, f"U+{ord(char):04X}")


def test_a_record_refuses_a_lone_surrogate(sitegen, example_copy):
    path = example_copy / "records.jsonl"
    record = json.loads(path.read_text().splitlines()[0])
    record["title"] = "Object SURROGATE recognition"
    replace_line(path, 1, json.dumps(record).replace("SURROGATE", "\\udfff"))
    check_reports(sitegen, example_copy, "records.jsonl", 1, "surrogate")


@pytest.mark.parametrize("char", ["\ufffe", "\uffff", "\ufdd0", "\x85"], ids=lambda char: f"U+{ord(char):04X}")
def test_review_file_text_refuses_what_xml_and_html_cannot_hold(sitegen, example_copy, char):
    path = example_copy / "review.yaml"
    lines = path.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if text.startswith("title:"))
    replace_line(path, line, f'title: "A living review \\u{ord(char):04X} of objects"')
    check_reports(sitegen, example_copy, "review.yaml", line, f"U+{ord(char):04X}")


@pytest.mark.parametrize("char", ["\ufffe", "\uffff", "\ufdd0"], ids=lambda char: f"U+{ord(char):04X}")
def test_a_decision_note_refuses_what_xml_and_html_cannot_hold(sitegen, example_copy, char):
    path = example_copy / "screening" / "title-abstract" / "reviewer-a.csv"
    lines = path.read_text().splitlines()
    replace_line(path, 2, lines[1].rsplit(",", 1)[0] + f",note {char} here")
    check_reports(sitegen, example_copy, "screening/title-abstract/reviewer-a.csv", 2, f"U+{ord(char):04X}")


@pytest.mark.parametrize("title", [" ", "   \t  ", "\u3000", "\u200b\u200b", "\ufeff "])
def test_a_record_title_needs_visible_text(sitegen, example_copy, title):
    set_first_record(example_copy, title=title)
    check_reports(sitegen, example_copy, "records.jsonl", 1, "no visible text")


def test_an_author_name_needs_visible_text(sitegen, example_copy):
    path = example_copy / "records.jsonl"
    record = json.loads(path.read_text().splitlines()[0])
    record["author"] = [{"family": "  ", "given": "Ada"}]
    replace_line(path, 1, json.dumps(record))
    check_reports(sitegen, example_copy, "records.jsonl", 1, "visible text")


@pytest.mark.parametrize("url", [
    '"https://example.org/\\x01review/"', '"https://example.org/re\\u0085view/"', '"https://example.org/a\\"b/"',
    "'https://example.org/<script>/'", '"https://example.org/a>b/"', '"https://example.org/a\\\\b/"',
    '"https://example.org/a b/"', '"https://example.org/a\\tb/"', "'https://example.org/it''s/'",
    '"https://exa mple.org/"', '"https://example.org/revi\\u00e9w/"', '"https://example.org/a`b/"',
    '"javascript://example.org/"', '"https://example.org/?q=1"', '"https://user@example.org/"',
])
def test_base_url_must_be_a_clean_http_address(sitegen, example_copy, url):
    path = example_copy / "review.yaml"
    lines = path.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if text.strip().startswith("base_url:"))
    replace_line(path, line, f"  base_url: {url}")
    check_reports(sitegen, example_copy, "review.yaml", line, "base_url must be a clean absolute http(s) address")


@pytest.mark.parametrize("url", ["https://user.github.io/repo/", "http://localhost:8000", "https://example.org/a%20b/",
                                 "https://example.org/~me/review-1.2/"])
def test_clean_base_urls_are_accepted(url):
    from sitegen.review.models import SiteSettings

    assert SiteSettings(base_url=url).base_url.startswith(url)


# Direction controls: a text may use them, but never leave one open for what a page shows after it.
OPENERS, CLOSERS = "\u202a\u202b\u202d\u202e\u2066\u2067\u2068", "\u202c\u2069"


def open_after(text: str) -> list[str]:
    """The direction controls `text` leaves open, as Unicode's bidirectional algorithm pairs them (a paragraph's
    end closes all)."""
    stack: list[str] = []
    for char in text:
        if char in OPENERS:
            stack.append("i" if char in "\u2066\u2067\u2068" else "e")
        elif char == "\u202c" and stack and stack[-1] == "e":
            stack.pop()
        elif char == "\u2069" and "i" in stack:
            while stack.pop() != "i":
                pass
        elif char == "\n":
            if stack:
                return stack
    return stack


@given(st.text(alphabet=st.sampled_from([*OPENERS, *CLOSERS, "a", "\u05d0", " ", "\n"]), max_size=30))
def test_a_text_leaves_no_direction_control_open(text):
    contained = printable(text)
    assert open_after(contained) == []
    assert printable(contained) == contained  # read again, unchanged
    assert len(contained) <= len(text)  # never longer: a field's length limit holds
    # Only controls are dropped: what the text says stays, in its order.
    assert [c for c in contained if c not in OPENERS + CLOSERS] == [c for c in text if c not in OPENERS + CLOSERS]
    if open_after(text) == [] and all(c not in CLOSERS for c in text) and "\n" not in text:
        assert contained == text


def test_text_without_direction_controls_is_left_as_it_is():
    for text in ["Object recognition", "\u05e2\u05d1\u05e8\u05d9\u05ea and English", "\u200fmark\u200e"]:
        assert printable(text) == text


def test_a_title_that_opens_an_override_cannot_turn_the_page_after_it(sitegen, example_copy, tmp_path):
    # "RLO" would show every later word of the record's line on the records page reversed.
    set_first_record(example_copy, title="Object recognition \u202eRLO left open")
    code, out, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 0, err
    pages = [path.read_text(encoding="utf-8") for path in (tmp_path / "site").rglob("*.html")]
    shown = [page for page in pages if "RLO left open" in page]
    assert shown, "the title is on the site"
    for page in shown:
        assert "\u202e" not in page
    csv_download = (tmp_path / "site" / "downloads" / "records.csv").read_text(encoding="utf-8")
    assert "Object recognition RLO left open" in csv_download and "\u202e" not in csv_download
    # a title that closes what it opens keeps it
    set_first_record(example_copy, title="Object recognition \u202eclosed\u202c here")
    assert sitegen("build", example_copy, "--out", tmp_path / "site")[0] == 0
    assert any("\u202eclosed\u202c here" in path.read_text(encoding="utf-8")
               for path in (tmp_path / "site").rglob("*.html"))
