"""The records lists in headless Chromium: filters and pages are plain links that work from disk, the
quick filter narrows a page, and on a 390 px phone no page of the site scrolls sideways."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.site.records import PAGE_SIZE

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def record_rows(page):
    return page.locator("table.records tbody tr")


def test_filters_by_decision_and_batch(served_example, page):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(served_example + "records.html")
    filters = page.get_by_role("navigation", name="Filter records")
    assert record_rows(page).count() == PAGE_SIZE

    filters.get_by_role("link", name="Included", exact=True).click()
    page.wait_for_url("**/records/list/included/1.html")
    assert page.get_by_role("heading", level=1).inner_text() == "Records: Included"
    included = record_rows(page)
    assert included.count() == 38
    assert set(included.locator("td[data-label='Full text']").all_inner_texts()) == {"include"}

    filters.get_by_role("link", name=re.compile(r"^Batch 2 ")).click()
    page.wait_for_url("**/records/list/batch-2/1.html")
    batch = record_rows(page)
    assert batch.count() == 11
    assert set(batch.locator("td[data-label='Batch']").all_inner_texts()) == {"2"}

    filters.get_by_role("link", name="Excluded at title and abstract").click()
    page.wait_for_url("**/records/list/excluded-title-abstract/1.html")
    assert {text.split()[0] for text in record_rows(page).locator("td[data-label='Title and abstract']").all_inner_texts()} == {"exclude"}

    # back to the whole list, then its second page
    page.get_by_role("link", name="All records").first.click()
    page.wait_for_url("**/records.html")
    page.get_by_role("navigation", name="Pages of this list", exact=True).get_by_role("link", name="Next").click()
    page.wait_for_url("**/records/list/all/2.html")
    assert record_rows(page).count() == 271 - PAGE_SIZE
    record_rows(page).first.locator("a").first.click()
    page.wait_for_url(re.compile(r"/records/[^/]+\.html$"))
    assert page.get_by_role("heading", name="Screening history").is_visible()
    assert errors == []


def test_quick_filter_narrows_the_page(served_example, page):
    page.goto(served_example + "records/list/included/1.html")
    rows = record_rows(page)
    title = rows.nth(5).locator("td").first.locator("a").inner_text()
    word = max(title.split(), key=len)
    page.get_by_label("Filter this page").fill(word.upper())
    visible = rows.filter(visible=True)
    assert 1 <= visible.count() < 38
    assert all(word.lower() in text.lower() for text in visible.all_inner_texts())
    assert page.get_by_role("status").inner_text().endswith("of 38 records on this page match")
    page.get_by_label("Filter this page").fill("")
    assert rows.filter(visible=True).count() == 38


def test_lists_work_from_disk(example_site, page):
    page.goto((example_site / "records.html").as_uri())
    page.get_by_role("navigation", name="Filter records").get_by_role("link", name="Included", exact=True).click()
    page.wait_for_url("**/records/list/included/1.html")
    assert record_rows(page).count() == 38
    assert page.evaluate("getComputedStyle(document.body).fontFamily")  # the stylesheet loaded from disk
    assert page.get_by_label("Filter this page").is_visible()  # and the script


def one_page_of_every_kind(site: Path) -> list[str]:
    """Every page at the top of the site and the first page in each folder: one of every template,
    whichever pages the site grows."""
    pages = sorted(path.relative_to(site).as_posix() for path in site.glob("*.html"))
    for folder in sorted(path for path in site.rglob("*") if path.is_dir()):
        inside = sorted(folder.glob("*.html"))
        if inside:
            pages.append(inside[0].relative_to(site).as_posix())
    return pages


def test_no_page_scrolls_sideways_on_a_phone(example_site, served_example, page):
    page.set_viewport_size(PHONE)
    pages = one_page_of_every_kind(example_site)
    assert {"records.html", "screening.html", "protocol.html", "included.html"} <= set(pages)
    assert any(p.startswith("records/list/") for p in pages) and any(p.startswith("batches/") for p in pages)
    assert any(p.startswith("digests/") for p in pages) and any(re.fullmatch(r"records/[^/]+", p) for p in pages)
    wide = {}
    for path in pages:
        page.goto(served_example + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            wide[path] = width
    assert wide == {}
