"""An updated review's PRISMA diagram with several new-run columns, as a browser draws it: no box runs into
another, no text leaves its box, and every number on screen is prisma.json's."""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIXTURES, serve
from test_browser_prisma import inside, overlap
from test_prisma import expected_value, flatten, two_run_review  # noqa: F401  (two_run_review: a fixture)

from sitegen.commands import build

pytestmark = pytest.mark.browser

# Every box and phase bar of the diagram with its frame on screen, and every number it shows: the field its
# data-count names, and the text a reader sees.
MEASURE = """() => {
  const svg = document.querySelector("svg.prisma");
  const rect = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
  const groups = [...svg.querySelectorAll("g.box, g.phase")];
  return {
    frames: groups.map(group => rect(group.querySelector("rect").getBoundingClientRect())),
    texts: [...svg.querySelectorAll("text")].map(text => ({
      text: text.textContent, box: rect(text.getBoundingClientRect()), key: text.getAttribute("data-count"),
      group: groups.indexOf(text.closest("g.box, g.phase")),
    })),
  };
}"""


@pytest.fixture
def updated_site(two_run_review, sitegen, tmp_path):  # noqa: F811
    """The two-run review, published, then searched three times more (Scopus, Embase, then a citation search):
    an arm of new studies with a column per new run and their sum."""
    review = two_run_review
    code, _, err = sitegen("publish", review, "--out", tmp_path / "v1", "--now", "2026-02-15T00:00:00Z")
    assert code == 0, err
    for ris, source, at in (("jstor_ris.ris", "Scopus", "2026-03-01T00:00:00Z"),
                            ("example_full.ris", "Embase", "2026-03-08T00:00:00Z"),
                            ("psycinfo_ris.ris", "Citation searching", "2026-03-15T00:00:00Z")):
        code, out, err = sitegen("import", review, FIXTURES / "ris" / ris, "--source", source, "--at", at, "--json")
        assert code == 0, err
        new = json.loads(out)["files"][0]["new_ids"]
        with (review / "screening" / "title-abstract" / "ann.csv").open("a") as rows:  # the first included,
            rows.write("".join(f"{rid},{'include' if n == 0 else 'exclude'},,\n" for n, rid in enumerate(new)))
        with (review / "screening" / "full-text" / "ann.csv").open("a") as rows:  # and one of them excluded since
            rows.write(f"{new[0]},{'exclude,wrong-population' if source == 'Embase' else 'include,'},\n")
    site = tmp_path / "site"
    build(review, site, environ={})
    base, process = serve(site)
    yield site, base
    process.terminate()
    process.wait(timeout=5)


def test_an_updated_reviews_diagram_with_several_new_runs_keeps_its_boxes_apart_and_shows_the_json(page,
                                                                                                  updated_site):
    site, base = updated_site
    counts = json.loads((site / "downloads" / "prisma.json").read_text())
    assert (counts["template"], counts["new_runs_from"], len(counts["runs"])) == ("updated", 3, 5)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base + "index.html")
    drawn = page.evaluate(MEASURE)
    frames, texts = drawn["frames"], drawn["texts"]
    heads = [t["text"] for t in texts if t["text"] in ("Run 3", "Run 4", "Run 5", "New")]
    assert {"Run 3", "Run 4", "Run 5", "New"} <= set(heads)  # a column per new run, and their sum
    touching = [(i, j) for i, first in enumerate(frames) for j, second in enumerate(frames[i + 1:], i + 1)
                if overlap(first, second)]
    assert touching == []
    assert [t["text"] for t in texts if t["group"] >= 0 and not inside(t["box"], frames[t["group"]])] == []
    flat = flatten(counts)
    shown = {}
    for text in texts:
        if text["key"]:
            numbers = re.findall(r"\d[\d,]*", text["text"])
            assert numbers, text
            shown[text["key"]] = int(numbers[-1].replace(",", ""))
    assert len(shown) > 40
    assert {key: value for key, value in shown.items() if expected_value(flat, key) != value} == {}
    # the numbers a reader adds up: previous + new = total, and the new searches' column is its runs' sum
    assert shown["previous_studies"] + shown["new_studies"] == shown["studies_included"]
    assert shown["new_searches.screened"] == sum(shown.get(f"runs.{i}.screened", 0) for i in (2, 3, 4))
