"""The built example site as a reader reads it, page by page: English that agrees with its numbers."""

from __future__ import annotations

import re
from pathlib import Path

from lxml import html as lxml_html


def reader_text(page: Path) -> str:
    """What a reader sees on the page (and what a screen reader says for its diagrams), spaces collapsed."""
    document = lxml_html.fromstring(page.read_bytes())
    for hidden in document.xpath("//script | //style"):
        hidden.drop_tree()
    return " ".join(document.text_content().split())


def site_pages(site: Path) -> list[Path]:
    return sorted(page for page in site.rglob("*.html") if "pagefind" not in page.relative_to(site).parts)


def test_no_page_leaves_a_plural_for_the_reader_to_pick(example_site):
    """'1 conflict(s)' reads as a template, not a sentence: a count says its noun in the number it needs."""
    # 'http(s)' names two schemes, not a count.
    hedged = {str(page.relative_to(example_site)): re.findall(r"\b(?!http\(s\))\w+\(s\)", reader_text(page))
              for page in site_pages(example_site)}
    assert {page: words for page, words in hedged.items() if words} == {}
    assert "1 conflict awaits adjudication." in reader_text(example_site / "screening.html")
