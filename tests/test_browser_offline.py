"""The built site needs no network: every kind of page works opened straight from disk (file://)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser


def one_page_of_each_kind(site: Path) -> list[Path]:
    """One page per folder and name pattern (digits folded), so every template is opened once."""
    kinds: dict[str, Path] = {}
    for page in sorted(site.rglob("*.html")):
        relative = page.relative_to(site).as_posix()
        kind = re.sub(r"[0-9]+", "N", relative) if "/" not in relative else \
            re.sub(r"[0-9]+", "N", relative.rsplit("/", 1)[0]) + "/*"
        kinds.setdefault(kind, page)
    return list(kinds.values())


def test_every_kind_of_page_works_from_disk_without_network(example_site, page):
    pages = one_page_of_each_kind(example_site)
    assert len(pages) >= 8
    outside: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: outside.append(request.url)
            if not request.url.startswith(("file://", "data:")) else None)
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    for path in pages:
        page.goto(path.as_uri())
        assert page.locator("main").inner_text().strip(), path
        # stylesheets and scripts come from the site itself
        loaded = page.evaluate("[...document.styleSheets].filter(s => s.href).map(s => s.href)")
        assert all(href.startswith(example_site.as_uri()) for href in loaded), (path, loaded)
    assert outside == []
    assert errors == []
