"""A record's title written in a right-to-left script (Hebrew, Arabic, Persian) reads in its own direction on
every page that shows it, in headless Chromium: its closing punctuation stays at its end, on the left. Authors
and a journal in such a script keep their place among the year and volume around them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE

from sitegen.commands import build

pytestmark = pytest.mark.browser

STUDY = "10.3389/fnbeh.2014.00160"  # an included study of the example (evidence/barsegyan-2014-bla.yaml)
TITLE = "זיכרון אובייקט בהקשר בחולדות: האם האמיגדלה משפיעה?"  # Hebrew, ending in a question mark
AUTHOR = {"family": "כהן", "given": "דוד"}
JOURNAL = "כתב עת לזיכרון"


@pytest.fixture(scope="module")
def hebrew_title_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("rtl")
    review = Path(shutil.copytree(EXAMPLE, root / "review"))
    records = [json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()]
    for record in records:
        if record["id"] == STUDY:
            record["title"] = TITLE
            record["author"] = [AUTHOR]
            record["container-title"] = JOURNAL
    (review / "records.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    build(review, root / "site", environ={})
    return root / "site"


def titles_read_right_to_left(page, url: str) -> list[bool]:
    page.goto(url)
    elements = page.get_by_text(TITLE, exact=True)
    assert elements.count() >= 1, url
    return [elements.nth(i).evaluate("e => e.matches(':dir(rtl)')") for i in range(elements.count())]


def test_a_right_to_left_title_reads_in_its_own_direction(hebrew_title_site, page):
    included = hebrew_title_site / "included.html"
    page.goto(included.as_uri())
    study_page = page.get_by_role("link", name=TITLE).get_attribute("href")
    record_page = study_page.replace("studies/", "records/")
    for url in (included, hebrew_title_site / study_page, hebrew_title_site / record_page,
                hebrew_title_site / "records" / "list" / "included" / "1.html", hebrew_title_site / "verification.html"):
        assert all(titles_read_right_to_left(page, url.as_uri())), url.relative_to(hebrew_title_site)
    # The question mark is drawn at the title's left end, where a reader of Hebrew ends it.
    page.goto((hebrew_title_site / record_page).as_uri())
    ends = page.locator("h1").evaluate("""h1 => {
        const text = h1.firstChild, range = document.createRange(), box = i => {
            range.setStart(text, i); range.setEnd(text, i + 1); return range.getBoundingClientRect().left; };
        return {first: box(0), last: box(text.length - 1)};
    }""")
    assert ends["last"] < ends["first"], ends


def left_of(container, first: str, second: str) -> bool:
    """Whether the text `first` is drawn wholly left of the text `second` inside `container` (a locator)."""
    return container.evaluate("""(element, [first, second]) => {
        const box = text => {
            const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                const at = node.data.indexOf(text);
                if (at >= 0) { const range = document.createRange(); range.setStart(node, at);
                               range.setEnd(node, at + text.length); return range.getBoundingClientRect(); }
            }
            throw new Error(text + " not found");
        };
        return box(first).right <= box(second).left;
    }""", [first, second])


def test_authors_and_journal_in_a_right_to_left_script_keep_their_place(hebrew_title_site, page):
    page.goto((hebrew_title_site / "records" / "list" / "included" / "1.html").as_uri())
    byline = page.locator("tr", has=page.get_by_role("link", name=TITLE)).locator(".byline")
    year = re.search(r"\((\d{4})\)", byline.inner_text()).group(0)
    # Names, then "(year)", then the journal, left to right: the year is not drawn before the names.
    assert left_of(byline, AUTHOR["given"], year) and left_of(byline, year, JOURNAL)
    page.goto((hebrew_title_site / "included.html").as_uri())
    study_page = page.get_by_role("link", name=TITLE).get_attribute("href")
    for path in (study_page, study_page.replace("studies/", "records/")):
        page.goto((hebrew_title_site / path).as_uri())
        cited = page.locator("p.citation")
        year = re.search(r", (\d{4})", cited.inner_text()).group(0)
        assert left_of(cited, JOURNAL, year)  # "journal, year; volume", not "year ,journal"
