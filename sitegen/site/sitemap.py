"""sitemap.xml and robots.txt, for a review that names its address (`site.base_url`): a sitemap lists
absolute addresses, so a site without one has neither.

The sitemap lists the current review's pages (every HTML page the build wrote but the 404 page, the search
page and the old versions under `v/`): a search engine is told of the review as it stands, as site search
indexes it; an old version's numbers are superseded, and its pages stay reachable from versions.html for
a crawler that follows links. A sitemap holds at most `URLS_PER_SITEMAP` addresses (the protocol's limit):
a larger site gets sitemap-1.xml, sitemap-2.xml, ... beside it (a sitemap may list only addresses under its
own folder, so they sit at the top) and sitemap.xml is their index. robots.txt names sitemap.xml; crawlers
read it only at a host's root (a user or organisation site, a custom domain): under a project site's /repo/
the sitemap is found by submitting its address.

Both are written once every page is, from the paths the build wrote, keyed by those paths and the address.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import quote

from sitegen.site.keys import code_digest
from sitegen.site.output import Finish, Page, Written
from sitegen.site.pages import NOT_FOUND_PATH
from sitegen.site.templates import templates_dir

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SITEMAP_PATH = "sitemap.xml"
ROBOTS_PATH = "robots.txt"
URLS_PER_SITEMAP = 50_000
# Not listed: the page served for a missing address, the search page (no content of its own), old versions.
UNLISTED = (NOT_FOUND_PATH, "search.html")
UNLISTED_PREFIXES = ("v/", "pagefind/")


def listed_pages(files: Mapping[str, Written]) -> list[str]:
    """The pages a sitemap lists, in order of their paths."""
    return sorted(path for path in files if path.endswith(".html") and path not in UNLISTED
                  and not path.startswith(UNLISTED_PREFIXES))


def _xml(root: ET.Element) -> bytes:
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def urlset(base_url: str, paths: list[str]) -> bytes:
    """A sitemap of `paths`, each an absolute address under `base_url` (percent-encoded; escaped as XML)."""
    ET.register_namespace("", SITEMAP_NS)
    root = ET.Element(f"{{{SITEMAP_NS}}}urlset")
    for path in paths:
        ET.SubElement(ET.SubElement(root, f"{{{SITEMAP_NS}}}url"), f"{{{SITEMAP_NS}}}loc").text = (
            base_url + quote(path, safe="/"))
    return _xml(root)


def sitemap_index(base_url: str, names: list[str]) -> bytes:
    ET.register_namespace("", SITEMAP_NS)
    root = ET.Element(f"{{{SITEMAP_NS}}}sitemapindex")
    for name in names:
        ET.SubElement(ET.SubElement(root, f"{{{SITEMAP_NS}}}sitemap"), f"{{{SITEMAP_NS}}}loc").text = base_url + name
    return _xml(root)


def robots(base_url: str) -> bytes:
    return f"User-agent: *\nDisallow:\n\nSitemap: {base_url}{SITEMAP_PATH}\n".encode()


def sitemap_pages(base_url: str, files: Mapping[str, Written]) -> Iterator[Page]:
    """sitemap.xml (with its parts when the pages are too many for one) and robots.txt, keyed by what they list."""
    paths = listed_pages(files)
    digest = hashlib.blake2b(code_digest(templates_dir()).encode(), digest_size=20)
    digest.update(base_url.encode() + b"\0" + "\0".join(paths).encode())
    key = digest.hexdigest()
    parts = [paths[start:start + URLS_PER_SITEMAP] for start in range(0, len(paths), URLS_PER_SITEMAP)]
    if len(parts) <= 1:
        yield Page(SITEMAP_PATH, lambda: urlset(base_url, paths), key)
    else:
        names = [f"sitemap-{number}.xml" for number in range(1, len(parts) + 1)]
        yield Page(SITEMAP_PATH, lambda: sitemap_index(base_url, names), key)
        for name, part in zip(names, parts, strict=True):
            yield Page(name, lambda part=part: urlset(base_url, part), key)
    yield Page(ROBOTS_PATH, lambda: robots(base_url), key)


def finish_with_sitemap(base_url: str | None, then: Finish | None = None) -> Finish:
    """A build's finishing step: `then`'s pages (the search index), then the sitemap and robots.txt when the
    review names its address (listing the pages by path alone: `then`'s may not be written yet)."""
    def finish(tree: Path, files: Mapping[str, Written], current: Mapping[str, Written]) -> Iterator[Page]:
        if then is not None:
            yield from then(tree, files, current)
        if base_url:
            yield from sitemap_pages(base_url, files)
    return finish
