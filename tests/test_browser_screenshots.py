"""Phone and desktop screenshots of the main pages, kept as test artefacts for a person to look at.

They land in ./test-artifacts/screenshots (or $SITEGEN_ARTIFACTS/screenshots), which CI can upload.
The layout itself is asserted elsewhere (no sideways scroll at 390 px, legible diagram text);
this test checks only that each shot was taken of a page that rendered.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}


def main_pages(site: Path) -> dict[str, str]:
    study = min((site / "studies").glob("*.html"))
    record = min((site / "records").glob("*.html"))
    pages = {"home": "index.html", "evidence": "evidence.html", "included": "included.html",
             "searches": "searches.html", "records": "records.html", "versions": "versions.html",
             "study": study.relative_to(site).as_posix(), "record": record.relative_to(site).as_posix()}
    return {name: path for name, path in pages.items() if (site / path).is_file()}


def test_screenshots_of_the_main_pages(example_site, served_example, browser):
    folder = Path(os.environ.get("SITEGEN_ARTIFACTS", ROOT / "test-artifacts")) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    pages = main_pages(example_site)
    assert {"home", "evidence", "study", "searches"} <= set(pages)
    for device, viewport in VIEWPORTS.items():
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        for name, path in pages.items():
            page.goto(served_example + path)
            assert page.locator("h1").first.inner_text().strip()
            shot = folder / f"{name}-{device}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 1000
        context.close()
