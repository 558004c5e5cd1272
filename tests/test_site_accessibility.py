"""Every built page, read as a screen reader reads it: each table and image named, each header cell heading its
row or column, each form control labelled, each link saying where it goes, an outline of headings that skips
no level under the page's one <h1>, and a link past the site's header to the page's content. Checked over every
page of the example review and of the example with hostile text in every field (test_build.hostile_everywhere),
so no record, evidence or protocol text can take a page out of shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import html as lxml_html
from test_build import hostile_everywhere

from sitegen.commands import build
from sitegen.site.templates import render_markdown

SCOPES = {"col", "row", "colgroup", "rowgroup"}
CONTROLS = "//input[not(@type='hidden')] | //select | //textarea"


def html_pages(site: Path) -> list[Path]:
    """The site's own pages (pagefind's files are its search index, not pages)."""
    return sorted(path for path in site.rglob("*.html") if "pagefind" not in path.relative_to(site).parts)


def labelled_by(page, element) -> str:
    """The text of the elements an element's aria-labelledby names, "" when one is missing."""
    names = (element.get("aria-labelledby") or "").split()
    found = [page.xpath("//*[@id=$id]", id=name) for name in names]
    return " ".join(hit[0].text_content().strip() for hit in found) if names and all(found) else ""


def accessible_name(page, element) -> str:
    """An element's name, as far as a page's markup gives it (aria-labelledby, aria-label, then its own text)."""
    return (labelled_by(page, element) or (element.get("aria-label") or "").strip()
            or element.text_content().strip()
            or " ".join(alt for alt in element.xpath(".//img/@alt") if alt.strip()))


def page_problems(page) -> list[str]:
    """What a screen reader would miss on one parsed page, each said in a line."""
    problems = []
    ids = page.xpath("//@id")
    problems += [f"id {name!r} is used twice" for name in sorted({name for name in ids if ids.count(name) > 1})]
    for table in page.iter("table"):
        caption = table.find("caption")
        if not ((caption is not None and caption.text_content().strip()) or labelled_by(page, table)
                or (table.get("aria-label") or "").strip()):
            problems.append(f"a table has no name (class {table.get('class')!r})")
        if not table.xpath(".//th"):
            problems.append(f"a table has no header cell (class {table.get('class')!r})")
    problems += [f"header cell {th.text_content().strip()!r} has no scope" for th in page.iter("th")
                 if th.get("scope") not in SCOPES]
    problems += [f"image {img.get('src')!r} has no alt" for img in page.iter("img") if img.get("alt") is None]
    for svg in page.xpath("//*[local-name()='svg'][@role='img']"):
        title = svg.xpath("./*[local-name()='title']")
        if not (labelled_by(page, svg) or svg.get("aria-label") or (title and title[0].text_content().strip())):
            problems.append(f"svg {svg.get('id')!r} shown as an image has no title")
    for control in page.xpath(CONTROLS):
        name = control.get("id")
        if not (labelled_by(page, control) or control.get("aria-label") or control.xpath("ancestor::label")
                or (name and page.xpath("//label[@for=$id][normalize-space()]", id=name))):
            problems.append(f"form control {name or control.get('name')!r} has no label")
    problems += [f"button {button.get('type')!r} has no name" for button in page.iter("button")
                 if not accessible_name(page, button)]
    problems += [f"link to {link.get('href')!r} has no text" for link in page.iter("a")
                 if link.get("href") is not None and not accessible_name(page, link)]
    levels = [int(heading.tag[1]) for heading in page.iter("h1", "h2", "h3", "h4", "h5", "h6")]
    if levels.count(1) != 1 or levels[0] != 1:
        problems.append(f"the page has not one <h1> before its other headings: {levels}")
    problems += [f"an <h{level}> follows an <h{above}>" for above, level in zip(levels, levels[1:], strict=False)
                 if level > above + 1]
    first_link = page.xpath("//body//a[@href][1]")
    target = first_link[0].get("href", "")[1:] if first_link and first_link[0].get("href", "").startswith("#") else ""
    if not (target and page.xpath("//main[@id=$id]", id=target)):
        problems.append("the page's first link does not skip to its <main>")
    if not page.getroottree().getroot().get("lang"):
        problems.append("the page names no language")
    return problems


def site_problems(site: Path) -> dict[str, list[str]]:
    pages = html_pages(site)
    assert len(pages) > 300  # every page kind of the example: records, studies, batches, lists, versions
    found = {}
    for path in pages:
        if problems := page_problems(lxml_html.fromstring(path.read_bytes())):
            found[path.relative_to(site).as_posix()] = problems
    return found


def test_every_page_of_the_example_can_be_read_with_a_screen_reader(example_site):
    assert site_problems(example_site) == {}


def test_hostile_text_in_every_field_leaves_every_page_readable(example_copy, tmp_path):
    review, _ = hostile_everywhere(example_copy)
    site = tmp_path / "site"
    build(review, site, environ={})
    assert site_problems(site) == {}


@pytest.mark.parametrize("markdown", ["| a | b |\n|---|---|\n| 1 | 2 |\n",
                                      "## Search\n\n| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |\n",
                                      "#### Deep first\n\n# Then top\n\n### Skipping\n"])
def test_the_protocols_markdown_names_its_tables_and_skips_no_heading_level(markdown):
    page = lxml_html.fromstring("<html lang='en'><body><a href='#main'>Skip</a><main id='main'><h1>Protocol</h1>"
                                f"<section>{render_markdown(markdown)}</section></main></body></html>")
    assert page_problems(page) == []
    names = [table.get("aria-label") for table in page.iter("table")]
    assert len(set(names)) == len(names)  # two tables under one heading are told apart
