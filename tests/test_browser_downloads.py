"""The example site's downloads and charts in headless Chromium: every download link returns its file,
and the charts stay legible on a phone and in dark mode."""

from __future__ import annotations

import csv
import io
import json
import re

import bibtexparser
import pytest
import rispy
from conftest import EXAMPLE
from test_browser import internal_links

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def test_every_download_link_returns_its_file(served_example, page):
    page.goto(served_example + "index.html")
    section = page.locator("section:has(#downloads-heading)")
    links = section.locator("a[download]")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    expected = {f"downloads/{name}.{ext}" for name in ("records", "included") for ext in ("ris", "bib", "json", "csv")}
    assert expected | {"downloads/ledger.jsonl", "downloads/prisma.svg", "downloads/prisma.json"} <= set(hrefs)
    bodies = {}
    for href in hrefs:
        response = page.request.get(served_example + href)
        assert response.status == 200, href
        bodies[href] = response.body()
        assert bodies[href], f"{href} is empty"
    # Each link's text says how many records the file holds, and the file holds them.
    for name in ("records", "included"):
        label = section.locator(f"a[href='downloads/{name}.ris']").inner_text()
        count = int(re.search(r"\((\d+) records\)", label).group(1))
        assert count == (271 if name == "records" else 38)
        assert len(rispy.loads(bodies[f"downloads/{name}.ris"].decode())) == count
        assert len(bibtexparser.parse_string(bodies[f"downloads/{name}.bib"].decode()).entries) == count
        assert len(json.loads(bodies[f"downloads/{name}.json"])) == count
        assert len(list(csv.DictReader(io.StringIO(bodies[f"downloads/{name}.csv"].decode())))) == count
    assert bodies["downloads/ledger.jsonl"] == (EXAMPLE / "ledger.jsonl").read_bytes()


def test_every_download_is_linked_from_a_page(example_site, served_example):
    linked = {target.removeprefix(served_example) for target in internal_links(example_site, served_example)}
    files = {path.relative_to(example_site).as_posix() for path in (example_site / "downloads").rglob("*")
             if path.is_file()}
    assert files and files <= linked, sorted(files - linked)


def test_charts_are_legible_on_a_phone(served_example, page):
    page.set_viewport_size(PHONE)
    page.goto(served_example + "index.html")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for chart in ("chart-runs", "chart-years"):
        svg = page.locator(f"#{chart}")
        box = svg.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        texts = page.evaluate("""id => [...document.querySelectorAll(`#${id} text`)].map(t => {
            const r = t.getBoundingClientRect();
            return {text: t.textContent, left: r.left, right: r.right, size: parseFloat(getComputedStyle(t).fontSize),
                    axis: t.parentNode.getAttribute('class') === 'chart-axis'};
        })""", chart)
        assert all(t["size"] >= 12 for t in texts)
        assert all(t["left"] >= 0 and t["right"] <= PHONE["width"] for t in texts), texts
        axis = sorted((t for t in texts if t["axis"]), key=lambda t: t["left"])
        assert len(axis) >= 2
        assert all(a["right"] <= b["left"] for a, b in zip(axis, axis[1:], strict=False)), axis


def luminance(colour: str) -> float:
    """Relative luminance of a computed colour: "rgb(r, g, b)" or, from color-mix(), "color(srgb r g b)"."""
    values = [float(value) for value in re.findall(r"\d+(?:\.\d+)?", colour)[:3]]
    channels = values if colour.startswith("color(srgb") else [value / 255 for value in values]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    lighter, darker = sorted((luminance(a), luminance(b)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chart_colours_follow_the_theme(served_example, page, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(served_example + "index.html")
    colours = page.evaluate("""() => {
        const fill = selector => getComputedStyle(document.querySelector(selector)).fill;
        return {background: getComputedStyle(document.body).backgroundColor,
                text: getComputedStyle(document.querySelector('#chart-runs text')).fill,
                fresh: fill('#chart-runs .chart-new'), seen: fill('#chart-runs .chart-seen'),
                included: fill('#chart-years .chart-included')};
    }""")
    background = colours.pop("background")
    assert contrast(colours["text"], background) >= 4.5, colours
    for name in ("fresh", "seen", "included"):
        assert contrast(colours[name], background) >= 3, (name, colours)  # WCAG 1.4.11 for graphics
    assert colours["fresh"] != colours["seen"]


@pytest.fixture(scope="module")
def light_accent_site(tmp_path_factory):
    """The example with a pale yellow accent, as a reviewer may pick to match a logo."""
    import shutil

    import yaml

    from sitegen.commands import build

    root = tmp_path_factory.mktemp("light-accent")
    review = shutil.copytree(EXAMPLE, root / "review")
    config = yaml.safe_load((review / "review.yaml").read_text())
    config["site"]["theme"]["accent_color"] = "#ffe066"
    (review / "review.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    build(review, root / "site", environ={})
    return root / "site"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_light_accent_still_gives_readable_links_and_bars(light_accent_site, page, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto((light_accent_site / "index.html").as_uri())
    colours = page.evaluate("""() => ({
        background: getComputedStyle(document.body).backgroundColor,
        link: getComputedStyle(document.querySelector('main a[href="protocol.html"]')).color,
        summary: getComputedStyle(document.querySelector('.chart-data summary')).color,
        included: getComputedStyle(document.querySelector('#chart-years .chart-included')).fill})""")
    background = colours.pop("background")
    assert contrast(colours["link"], background) >= 4.5, colours
    assert contrast(colours["summary"], background) >= 4.5, colours
    assert contrast(colours["included"], background) >= 3, colours
    if scheme == "light":  # the accent's hue is kept, darkened: not plain black or grey
        red, green, blue = (int(value) for value in re.findall(r"\d+", colours["link"])[:3])
        assert red > blue and green > blue, colours


def test_a_light_accent_gives_readable_links_in_a_tinted_box(light_accent_site, page):
    page.emulate_media(color_scheme="light")
    page.goto((light_accent_site / "search.html").as_uri())  # from disk the notice, with its links, stays
    colours = page.evaluate("""() => {
        const notice = document.querySelector('.notice');
        return {background: getComputedStyle(notice).backgroundColor,
                link: getComputedStyle(notice.querySelector('a')).color};
    }""")
    assert colours["background"] != "rgb(255, 255, 255)"
    assert contrast(colours["link"], colours["background"]) >= 4.5, colours
