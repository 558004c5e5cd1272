"""The searches page in headless Chromium: a run's manifest link downloads its JSON, and the page fits
a 390 px phone screen with each run's key facts in view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import serve
from test_manifests import SECOND_FILE, two_runs
from test_searches_page import unindexed

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)


@pytest.fixture
def served_runs(sitegen, tmp_path):
    """A review whose second run missed Europe PMC, built and served: (base URL, review folder)."""
    review, _ = two_runs(sitegen, tmp_path, europepmc_status=503)
    code, _, err = sitegen("build", unindexed(review), "--out", tmp_path / "site")
    assert code == 0, err
    base, server = serve(tmp_path / "site")
    yield base, review
    server.terminate()
    server.wait(timeout=5)


def overflow(page) -> int:
    """How many CSS pixels the page is wider than the window (0: no sideways scrolling)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


def test_the_manifest_link_downloads_the_runs_json(served_runs, page):
    base, review = served_runs
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(base + "searches.html")
    link = page.locator("table.runs tbody tr").first.get_by_role("link", name="JSON")
    with page.expect_download() as download:
        link.click()
    saved = Path(download.value.path())
    assert download.value.suggested_filename == Path(SECOND_FILE).name
    assert saved.read_bytes() == (review / SECOND_FILE).read_bytes()
    assert json.loads(saved.read_text())["sources"][1]["status"] == "unavailable"
    response = page.request.get(base + "downloads/" + SECOND_FILE)
    assert response.status == 200 and response.headers["content-type"].startswith("application/json")
    assert errors == []


def test_the_page_fits_a_phone_with_each_runs_key_facts_in_view(served_runs, page):
    base, _ = served_runs
    page.set_viewport_size(PHONE)
    page.goto(base + "searches.html")
    assert overflow(page) == 0
    row = page.locator("table.runs tbody tr").first
    for label in ("Run", "Status", "Sources", "Retrieved", "New", "Manifest"):
        cell = row.locator(f"[data-label='{label}']")
        assert cell.is_visible(), label
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], label
        # each cell says what it is, since the header row is not shown on a phone
        assert page.evaluate("cell => getComputedStyle(cell, '::before').content", cell.element_handle()) \
            == f'"{label}: "'
    # The incomplete run stands out from the complete one.
    colours = [page.evaluate("row => getComputedStyle(row).backgroundColor", r.element_handle())
               for r in page.locator("table.runs tbody tr").all()]
    assert colours[0] != colours[1]
    page.goto(base + "index.html")
    assert overflow(page) == 0


def test_the_examples_searches_page_fits_a_phone_and_a_desktop(served_example, page):
    for size in (PHONE, {"width": 1280, "height": 900}):
        page.set_viewport_size(size)
        page.goto(served_example + "searches.html")
        assert page.get_by_role("heading", name="Searches", level=1).is_visible()
        assert overflow(page) == 0, size
        assert page.locator("table.runs tbody tr").count() >= 2
