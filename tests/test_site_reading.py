"""The built example site as a reader reads it, page by page: English that agrees with its numbers."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from lxml import etree
from lxml import html as lxml_html
from test_site_shapes import LOCKED, built, decide, ids, new_review, ok, record, with_records

from sitegen.site.pages import NOT_FOUND_PATH
from sitegen.site.templates import templates_dir


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


def links(document) -> Iterator[str]:
    """Each address the page links or loads but its canonical one (the base_url's) and its empty icon."""
    for element in document.iter(etree.Element):
        for name in ("href", "src", "action"):
            if (address := element.get(name)) is not None and not (
                    element.tag == "link" and (address == "data:," or element.get("rel") == "canonical")):
                yield address


def crawl_problems(site: Path) -> list[str]:
    """What a reader following the site's links, or a crawler, would trip on: a link to no file or to no element
    of its page, a link from the server's root (it breaks under a project site's /repo/), a page no link from
    the home page reaches, a download or feed no page links, two pages of one <title>, a page without the
    <head> a browser and a search engine read (charset, viewport, description, canonical address when the
    review names its base_url)."""
    problems, reached, titles = [], {}, {}
    files = {path.relative_to(site).as_posix() for path in site.rglob("*") if path.is_file()}
    # The review's base_url, as the home page's canonical address names it: a link starting with it (the 404 page's
    # all do, as it is served at any depth) is a link to the site's own file, and must lead to one too.
    home = lxml_html.fromstring((site / "index.html").read_bytes()).xpath("//link[@rel='canonical']/@href")
    base = home[0].removesuffix("index.html") if home else None
    ids = {page: set(lxml_html.fromstring((site / page).read_bytes()).xpath("//@id"))
           for page in files if page.endswith(".html") and not page.startswith("pagefind/")}
    for page in sorted(ids):
        document = lxml_html.fromstring((site / page).read_bytes())
        titles.setdefault(" ".join(document.findtext(".//title", "").split()), []).append(page)
        for needed in ("meta[@charset]", "meta[@name='viewport']", "meta[@name='description'][normalize-space(@content)]"):
            if not document.xpath(f"/html/head/{needed}"):
                problems.append(f"{page}: no {needed}")
        problems += [f"{page}: its canonical address {address!r} is another page's" for address
                     in document.xpath("//link[@rel='canonical']/@href") if not address.endswith(f"/{page}")]
        reached[page] = set()
        for address in links(document):
            if base and address.startswith(base):
                address = posixpath.relpath(address.removeprefix(base) or "index.html", posixpath.dirname(page) or ".")
            parts = urlsplit(address)
            if parts.scheme in ("http", "https", "mailto"):
                continue
            if parts.scheme or address.startswith("/"):
                problems.append(f"{page}: {address!r} is not relative to the page")
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(parts.path))) \
                if parts.path else page
            if target not in files:
                problems.append(f"{page}: {address!r} links to no file of the site")
            elif parts.fragment and target.endswith(".html") and unquote(parts.fragment) not in ids[target]:
                problems.append(f"{page}: {address!r} links to no element of {target}")
            else:
                reached[page].add(target)
    if "feed.xml" in files:  # its links are the base_url's (its own address says which), else the feed's own
        feed = etree.fromstring((site / "feed.xml").read_bytes(), etree.XMLParser(resolve_entities=False))
        addresses = feed.xpath("//*[local-name()='link']/@href")
        base = next(address for address in addresses if address.endswith("feed.xml")).removesuffix("feed.xml")
        problems += [f"feed.xml: {address!r} links to no page of the site" for address in addresses
                     if not address.startswith(base) or unquote(address.removeprefix(base)) not in files]
    seen, todo = set(), ["index.html"]
    while todo:
        page = todo.pop()
        if page not in seen:
            seen.add(page)
            todo += sorted(reached.get(page, ()))
    seen.add(NOT_FOUND_PATH)  # served for an address the site does not hold: no page links it
    problems += [f"{path}: no link from the home page leads to it" for path in sorted(files - seen)
                 if path.endswith(".html") or path.startswith("downloads/") or path == "feed.xml"]
    problems += [f"{pages} share the title {title!r}" for title, pages in titles.items() if len(pages) > 1]
    return problems


def test_every_link_of_the_example_leads_somewhere_and_every_page_is_reached(example_site):
    assert crawl_problems(example_site) == []
    canonical = lxml_html.fromstring((example_site / "records.html").read_bytes()).xpath("//link[@rel='canonical']/@href")
    assert canonical == ["https://example.github.io/sitegen/records.html"]


def test_ids_and_titles_a_url_or_markup_would_misread_leave_every_link_whole(tmp_path):
    # DOIs with a URL's fragment, query and escape characters, markup, a SICI's brackets and semicolon, letters of
    # other scripts and long runs alike for 60 characters; records of one title (errata, a preprint and its article).
    dois = ["10.1002/(SICI)1098-2396(199907)33:1<1::AID-SYN1>3.0.CO;2-Q", "10.1234/a#b", "10.1234/q?x=1&y=2", "10.1234/50%25off", "10.1234/<i>x</i>\"'", "10.1234/ünïcödé-ß",
            "10.1234/日本語", "10.1234/a/../b", "10.1234/" + "x" * 80, "10.1234/" + "x" * 80 + "y"]
    records = [record(n, DOI=doi, title="Erratum" if n < 3 else f"<b>{n}</b> & {doi}") for n, doi in enumerate(dois)]
    review = with_records(tmp_path, records)
    for stage in ("title-abstract", "full-text"):
        decide(review, stage, {who: [("include", "")] * len(ids(review)) for who in ("a", "b")})
    assert crawl_problems(built(review, publish=True)) == []


def test_a_protocols_links_to_its_own_sections_reach_them(tmp_path):
    # A protocol written on GitHub links its sections by GitHub's anchors: on the site each leads to its heading,
    # repeated and hostile headings included, and no heading takes the page's own ids.
    review = new_review(tmp_path, locked=False)
    with (review / "protocol.md").open("a", encoding="utf-8") as protocol:
        protocol.write("\n## Eligibility\n\nAs [the search](#search) and [its repeat](#search-1) say; the page's "
                       "[main](#main) too.\n\n## Search\n\n## Search\n\n## Main\n\n"
                       '## "><img src=x onerror=alert(1)> `#main`\n\nBack to [eligibility](#eligibility).\n')
    ok("protocol", "lock", review, "--at", LOCKED)
    site = built(review)
    assert crawl_problems(site) == []
    page = lxml_html.fromstring((site / "protocol.html").read_bytes())
    every_id = page.xpath("//@id")
    assert len(every_id) == len(set(every_id)) and not page.xpath("//main//img")
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in page.xpath("//main//*[self::h2 or self::h3]/@id"))
    assert {"#md-search", "#md-search-1", "#md-main", "#md-eligibility"} <= set(page.xpath("//main//a/@href"))


def not_found_links(site: Path, base: str = "") -> list[str]:
    """The addresses of the site's own files the 404 page links or loads (not its sources' terms, not #main)."""
    return [address for address in links(lxml_html.fromstring((site / NOT_FOUND_PATH).read_bytes()))
            if not address.startswith("#") and (address.startswith(base) if base else not urlsplit(address).scheme)]


def test_the_404_page_leads_home_from_any_depth_when_the_review_names_its_address(example_site):
    # GitHub Pages serves 404.html for /a/b/c as well as /missing.html: a link relative to the page would start
    # from the address asked for. Every link starts from the base_url, so from any depth it reaches a file.
    base = "https://example.github.io/sitegen/"
    addresses = not_found_links(example_site, base)
    assert len(addresses) > 10 and not_found_links(example_site) == []  # no link of its own is left relative
    assert f"{base}index.html" in addresses
    for asked in (f"{base}missing.html", f"{base}a/b/c", f"{base}records/list/all/99.html"):
        for address in addresses:
            resolved = urljoin(asked, address)
            assert resolved.startswith(base) and unquote(urlsplit(resolved).path.removeprefix("/sitegen/")) in {
                path.relative_to(example_site).as_posix() for path in example_site.rglob("*") if path.is_file()}
    page = (example_site / NOT_FOUND_PATH).read_text()
    # Kept out of search engines and site search: an error page is no page of the review.
    assert '<meta name="robots" content="noindex">' in page and 'rel="canonical"' not in page
    assert "data-pagefind-body" not in page
    assert "Page not found" in reader_text(example_site / NOT_FOUND_PATH)
    # Its stylesheet is in the page, styled from disk or at any depth (base_url's address is not reached offline).
    assert "assets/style.css" not in page and (templates_dir() / "assets" / "style.css").read_text() in page


def test_the_404_page_without_an_address_links_as_every_page_does(tmp_path):
    # No base_url: no address to start from, so its links are relative, right where it is served at the top folder's
    # level (and from disk); the link checker follows them as any page's.
    site = built(new_review(tmp_path))
    assert not any(address.startswith("/") for address in not_found_links(site))
    assert "index.html" in set(not_found_links(site))
    # A sitemap lists absolute addresses: none without one (nor robots.txt, which would name it).
    assert not (site / "sitemap.xml").exists() and not (site / "robots.txt").exists()
    assert crawl_problems(site) == []


SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def sitemap_locs(site: Path, name: str = "sitemap.xml", kind: str = "urlset") -> list[str]:
    """The addresses a sitemap (or a sitemap index) lists, its shape checked as the protocol has it."""
    root = etree.fromstring((site / name).read_bytes(), etree.XMLParser(resolve_entities=False, no_network=True))
    assert root.tag == f"{SITEMAP}{kind}"
    entry = "url" if kind == "urlset" else "sitemap"
    assert [child.tag for child in root] == [f"{SITEMAP}{entry}"] * len(root)
    return [child.findtext(f"{SITEMAP}loc") for child in root]


def test_the_sitemap_lists_every_page_of_the_review_as_it_stands_by_its_address(example_site):
    base = "https://example.github.io/sitegen/"
    locs = sitemap_locs(example_site)
    pages = {page.relative_to(example_site).as_posix() for page in site_pages(example_site)}
    current = {page for page in pages if not page.startswith("v/") and page not in ("404.html", "search.html")}
    assert all(loc.startswith(base) for loc in locs) and len(locs) == len(set(locs))
    assert {unquote(loc.removeprefix(base)) for loc in locs} == current  # every current page, nothing else
    assert "v/1/index.html" in pages and f"{base}index.html" in locs
    assert (example_site / "robots.txt").read_text().splitlines()[-1] == f"Sitemap: {base}sitemap.xml"


def with_address(review: Path, base_url: str) -> Path:
    config = review / "review.yaml"
    config.write_text(config.read_text().replace("base_url: null", f"base_url: '{base_url}'"))
    return review


def test_a_sitemap_escapes_its_addresses_and_splits_when_too_long(tmp_path, monkeypatch):
    # An address may hold '&' (RFC 3986 allows it in a path): written as XML escapes it. Over the protocol's limit
    # of addresses, sitemap.xml is the index of sitemaps beside it, each within the limit.
    from sitegen.commands import build
    from sitegen.site import sitemap

    review = with_address(with_records(tmp_path, [record(n) for n in range(3)]), "https://example.org/a&b/")
    build(review, tmp_path / "one", environ={})
    raw = (tmp_path / "one" / "sitemap.xml").read_bytes()
    assert b"https://example.org/a&amp;b/index.html" in raw and b"a&b" not in raw
    locs = sitemap_locs(tmp_path / "one")
    assert "https://example.org/a&b/index.html" in locs

    monkeypatch.setattr(sitemap, "URLS_PER_SITEMAP", 4)
    build(review, tmp_path / "split", environ={})
    parts = sitemap_locs(tmp_path / "split", kind="sitemapindex")
    assert parts == [f"https://example.org/a&b/sitemap-{n}.xml" for n in range(1, len(parts) + 1)] and len(parts) > 1
    split = [loc for n in range(1, len(parts) + 1) for loc in sitemap_locs(tmp_path / "split", f"sitemap-{n}.xml")]
    assert split == locs and all(len(sitemap_locs(tmp_path / "split", f"sitemap-{n}.xml")) <= 4
                                 for n in range(1, len(parts) + 1))
