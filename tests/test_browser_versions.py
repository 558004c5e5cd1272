"""A reader follows the example's versions in Chromium: from any page to the list of versions, to an
earlier version with its own numbers and studies, and to the feed; the pages fit a phone."""

from __future__ import annotations

import json
from urllib.parse import urljoin

import pytest
from lxml import etree

pytestmark = pytest.mark.browser

ATOM = "{http://www.w3.org/2005/Atom}"


def test_reader_follows_the_versions(served_example, example_site, page):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    versions = sorted(int(folder.name) for folder in (example_site / "v").iterdir())
    assert versions == list(range(1, len(versions) + 1)) and len(versions) >= 2
    latest, earlier = versions[-1], versions[0]

    page.goto(served_example + "index.html")
    assert page.locator("footer .edition").inner_text().startswith(f"This is version {latest} of the review")
    assert page.get_by_role("heading", name="What's new since the last version").is_visible()
    page.locator("footer").get_by_role("link", name="All versions").click()
    page.wait_for_url("**/versions.html")
    assert page.locator("section.version h2").all_inner_texts() == [f"Version {n}" for n in reversed(versions)]

    page.get_by_role("link", name=f"Version {earlier}", exact=True).click()
    page.wait_for_url(f"**/v/{earlier}/index.html")
    assert page.get_by_role("heading", level=1).inner_text().startswith(f"Version {earlier}: ")
    assert page.locator("footer .edition").inner_text().startswith(f"This is version {earlier} of the review")
    counts = json.loads(page.request.get(served_example + f"v/{earlier}/prisma.json").text())
    drawn = page.locator("svg [data-count='studies_included']").last.get_attribute("data-value")
    assert int(drawn) == counts["studies_included"]
    studies = page.locator("ul.version-studies li a")
    assert studies.count() == counts["studies_included"]
    title = studies.first.inner_text()
    studies.first.click()
    page.wait_for_url("**/records/*.html")
    assert page.get_by_role("heading", level=1).inner_text() == title

    feed_link = page.locator("link[rel='alternate'][type='application/atom+xml']")
    response = page.request.get(urljoin(page.url, feed_link.get_attribute("href")))
    assert response.status == 200
    assert etree.fromstring(response.body()).tag == f"{ATOM}feed"
    assert errors == []


def test_version_pages_fit_a_phone(served_example, example_site, browser, tmp_path):
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        pages = ["versions.html"] + [f"v/{folder.name}/index.html" for folder in sorted((example_site / "v").iterdir())]
        for path in pages:
            phone.goto(served_example + path)
            assert phone.evaluate("document.documentElement.scrollWidth") <= 390, path
        phone.screenshot(path=str(tmp_path / "version-phone.png"), full_page=False)
    finally:
        phone.close()
