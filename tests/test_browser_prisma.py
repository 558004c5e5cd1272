"""The PRISMA diagram as a phone shows it: readable text, whole phase labels, a page that never scrolls sideways."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}

# Per text element of the diagram: its rendered font size (computed size times the SVG's scale on
# screen, rotated or not), its box on screen, and which group (box or phase bar) it belongs to, with that group's rect.
MEASURE = """() => {
  const svg = document.querySelector("svg.prisma");
  const rect = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
  return [...svg.querySelectorAll("text")].map(text => {
    const group = text.closest("g.box, g.phase");
    return {
      text: text.textContent,
      size: parseFloat(getComputedStyle(text).fontSize) * Math.hypot(text.getScreenCTM().a, text.getScreenCTM().b),
      box: rect(text.getBoundingClientRect()),
      group: group ? group.getAttribute("class") : null,
      groupIndex: group ? [...svg.querySelectorAll("g.box, g.phase")].indexOf(group) : -1,
      frame: group ? rect(group.querySelector("rect").getBoundingClientRect()) : null,
    };
  });
}"""


@pytest.fixture
def phone(page, served_example):
    page.set_viewport_size(PHONE)
    page.goto(served_example + "index.html")
    return page


def inside(inner: dict, outer: dict, slack: float = 0.5) -> bool:
    return (inner["left"] >= outer["left"] - slack and inner["right"] <= outer["right"] + slack
            and inner["top"] >= outer["top"] - slack and inner["bottom"] <= outer["bottom"] + slack)


def overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_diagram_text_is_readable_on_a_phone(phone):
    texts = phone.evaluate(MEASURE)
    assert len(texts) > 30  # the example's update is one run: one number per box
    small = [(t["text"], round(t["size"], 1)) for t in texts if t["size"] < 11]
    assert small == []


def test_phase_labels_and_box_text_are_never_clipped(phone):
    texts = phone.evaluate(MEASURE)
    phases = [t for t in texts if t["group"] == "phase"]
    assert [t["text"] for t in phases] == ["Identification", "Screening", "Included"]
    outside = [t["text"] for t in texts if t["frame"] and not inside(t["box"], t["frame"])]
    assert outside == []
    drawing = phone.locator("svg.prisma").evaluate(
        "svg => { const r = svg.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, "
        "bottom: r.bottom}; }")
    assert [t["text"] for t in texts if not inside(t["box"], drawing)] == []  # the legend too
    # within a box, no label runs into a number or another line
    crowded = []
    for i, first in enumerate(texts):
        for second in texts[i + 1:]:
            if first["groupIndex"] == second["groupIndex"] >= 0 and overlap(first["box"], second["box"]):
                crowded.append((first["text"], second["text"]))
    assert crowded == []


def test_the_page_never_scrolls_sideways_and_the_diagram_scrolls_in_its_box(phone, tmp_path: Path):
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    scroller = phone.locator(".prisma-scroll")
    widths = scroller.evaluate("box => [box.clientWidth, box.scrollWidth]")
    assert widths[0] <= PHONE["width"] < widths[1]  # wider than the phone: it scrolls, at its natural size
    scroller.focus()  # a keyboard reader can scroll it too
    phone.keyboard.press("ArrowRight")
    phone.wait_for_function("document.querySelector('.prisma-scroll').scrollLeft > 0")
    phone.screenshot(path=str(tmp_path / "prisma-phone.png"), full_page=False)


def test_desktop_shows_the_whole_diagram_at_natural_size(page, served_example):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(served_example + "index.html")
    svg = page.locator("svg.prisma")
    natural = int(svg.get_attribute("width"))
    assert round(svg.bounding_box()["width"]) == natural
    widths = page.locator(".prisma-scroll").evaluate("box => [box.clientWidth, box.scrollWidth]")
    assert widths[0] >= widths[1]  # the example's diagram fits a desktop column without scrolling
