"""The evidence table and the study pages in headless Chromium: sorting, filtering, the CSV, a phone."""

from __future__ import annotations

import csv
import io

import pytest

from sitegen.site.studies import EVIDENCE_CSV_COLUMNS

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def console_errors(page):
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def column(page, name: str) -> list[str]:
    """The visible cells of one column of the evidence table, top to bottom."""
    headers = [text.strip() for text in page.locator("table.evidence thead th").all_inner_texts()]
    index = next(n for n, text in enumerate(headers) if text.startswith(name))
    return [text.strip() for text in page.locator(f"table.evidence tbody tr:visible td:nth-child({index + 1})")
            .all_inner_texts()]


def in_order(values: list[str]) -> list[str]:
    """Ascending, ignoring case, with blank (not extracted) values last: the order the script promises."""
    blank = "not extracted"
    return sorted((v for v in values if v != blank), key=str.casefold) + [v for v in values if v == blank]


def test_sorting_by_a_column_reorders_rows(served_example, page, console_errors):
    page.goto(served_example + "evidence.html")
    header = page.locator("table.evidence thead th", has_text="Population")
    button = header.get_by_role("button", name="Population")
    before = column(page, "Population")
    assert header.get_attribute("aria-sort") is None
    button.focus()
    page.keyboard.press("Enter")  # a keyboard user sorts as a mouse user does
    assert header.get_attribute("aria-sort") == "ascending"
    assert column(page, "Population") == in_order(before)
    button.click()
    assert header.get_attribute("aria-sort") == "descending"
    descending = column(page, "Population")
    filled = [value for value in in_order(before) if value != "not extracted"]
    assert descending[:len(filled)] == filled[::-1]
    assert before != descending or len(set(before)) == 1  # rows really moved
    # the other columns moved with their rows: each study still has its own finding
    page.get_by_role("button", name="Study").click()
    assert page.locator("table.evidence thead th[aria-sort]").count() == 1
    assert column(page, "Study") == sorted(column(page, "Study"), key=str.casefold)
    assert console_errors == []


def test_filters_hide_rows_that_do_not_match(served_example, page, console_errors):
    page.goto(served_example + "evidence.html")
    rows = page.locator("table.evidence tbody tr")
    total = rows.count()
    assert page.get_by_role("status").inner_text() == f"Showing {total} of {total} findings."
    texts = [" ".join(text.split()).casefold() for text in rows.all_inner_texts()]
    word = next(word for word in texts[0].split() if len(word) > 4 and sum(word in t for t in texts) < total)
    page.get_by_label("Filter findings").fill(word)
    visible = page.locator("table.evidence tbody tr:visible")
    assert visible.count() == sum(word in text for text in texts) < total
    assert page.get_by_role("status").inner_text() == f"Showing {visible.count()} of {total} findings."
    page.get_by_label("Filter findings").fill("")
    assert visible.count() == total
    populations = column(page, "Population")
    term = populations[0].split()[-1].casefold()
    page.get_by_label("Population contains").fill(term)
    assert visible.count() == sum(term in value.casefold() for value in populations) >= 1
    page.get_by_label("Filter findings").fill("no finding says this zqxj")
    assert visible.count() == 0
    assert console_errors == []


def test_csv_link_downloads_every_finding(served_example, page):
    page.goto(served_example + "evidence.html")
    total = page.locator("table.evidence tbody tr").count()
    with page.expect_download() as download:
        page.get_by_role("link", name="CSV").click()
    assert download.value.suggested_filename == "evidence.csv"
    rows = list(csv.reader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    assert rows[0] == EVIDENCE_CSV_COLUMNS and len(rows) == total + 1


def test_included_studies_sort_and_lead_to_study_pages(served_example, page, console_errors):
    page.goto(served_example + "included.html")
    page.get_by_role("button", name="Findings").click()
    page.get_by_role("button", name="Findings").click()  # most findings first
    first = page.locator("table.studies tbody tr").first
    assert first.locator("td").nth(3).inner_text().strip().isdigit()
    first.get_by_role("link").click()
    page.wait_for_url("**/studies/*.html")
    assert page.locator("blockquote.passage").count() >= 1
    assert page.get_by_role("heading", name="Cite this study").is_visible()
    assert console_errors == []


@pytest.mark.parametrize("path", ["evidence.html", "included.html", "study"])
def test_pages_fit_a_phone(served_example, page, console_errors, path):
    page.set_viewport_size(PHONE)
    if path == "study":
        page.goto(served_example + "included.html")
        path = page.locator("table.studies tbody a").first.get_attribute("href")
    page.goto(served_example + path)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    cell = page.locator("main table tbody td").first
    assert cell.evaluate("cell => getComputedStyle(cell).display") == "block"  # rows stacked, not squeezed
    assert console_errors == []


def test_the_table_is_complete_without_javascript(served_example, browser):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(served_example + "evidence.html")
        assert page.locator("table.evidence tbody tr").count() >= 1
        assert page.locator("table.evidence button").count() == 0  # no control that would do nothing
        assert page.get_by_role("link", name="CSV").is_visible()
    finally:
        context.close()
