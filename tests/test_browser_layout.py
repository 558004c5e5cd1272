"""On a 390 px phone no page scrolls sideways: not one page of the example, and not one page of each
kind when a review's own text is hostile (80-character unbroken words and long URLs in every field a
reader sees). Pages load from disk (file:// URLs) in one browser page."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLE

from sitegen.commands import build, protocol_amend

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
WORD = "Unbreakable" * 7 + "Ends"  # 81 characters, no break opportunity
URL = "https://example.org/" + "/".join(c * 40 for c in "abc") + ".html?" + "q=" + "x" * 40
LONG = f"{WORD} {URL}"


def plant(review: Path) -> Path:
    """The example with a long word and a long URL in every field a reader sees."""
    config = yaml.safe_load((review / "review.yaml").read_text())
    config["title"] += f" {WORD}"
    config["question"] += f" {LONG}"
    config["authors"] = [{"name": f"Author {WORD}", "affiliation": LONG}]
    (review / "review.yaml").write_text(yaml.safe_dump(config, sort_keys=False))

    records = [json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()]
    for record in records:
        record["title"] = f"{record.get('title', '')} {WORD}"
        record["container-title"] = f"Journal {WORD}"
        record["abstract"] = f"{record.get('abstract') or ''} {LONG}".strip()
        record["author"] = [{"family": WORD, "given": WORD}, *record.get("author", [])]
    (review / "records.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))

    for path in (review / "evidence").glob("*.yaml"):
        evidence = yaml.safe_load(path.read_text())
        for finding in evidence["findings"]:
            for field in ("research_question", "population", "method", "intervention", "finding", "limitations"):
                finding[field] = f"{finding.get(field) or ''} {LONG}".strip()
            finding["passage"]["text"] = LONG  # every abstract now ends with it
        path.write_text(yaml.safe_dump(evidence, sort_keys=False))

    protocol = (review / "protocol.md").read_text()
    protocol = re.sub(r"(    label: [^\n]+)", rf"\1 {WORD}", protocol)  # every exclusion reason's label
    protocol = protocol.replace("  in_scope:\n", f"  in_scope:\n    - {WORD}\n", 1)
    protocol += f"\n{LONG}\n\n| Term | Source |\n|---|---|\n| {WORD} | {URL} |\n"  # and a Markdown table
    (review / "protocol.md").write_text(protocol)

    for path in (review / "searches").glob("*.json"):
        search = json.loads(path.read_text())
        for strategy in search["strategies"]:
            strategy["query"] += f' OR "{WORD}" OR "{URL}"'
        path.write_text(json.dumps(search, indent=2) + "\n")
    protocol_amend(review, "2024-01-01T00:00:00Z", f"Amended: {LONG}")

    # An exclusion at full text, so an outcome naming its reason's label is shown (the example excludes none there).
    decisions = review / "screening" / "full-text" / "reviewer-a.csv"
    header, first, *rest = decisions.read_text().splitlines()
    first = first.split(",")[0] + ",exclude,other-context-measure,"
    decisions.write_text("\n".join([header, first, *rest]) + "\n")
    return review


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    review = plant(Path(shutil.copytree(EXAMPLE, root / "review")))
    build(review, root / "site", environ={})
    return root / "site"


def html_pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "pagefind" not in p.relative_to(site).parts)


def one_of_each_kind(site: Path) -> list[Path]:
    """Every page at the top of the site and the first in each folder: one of every template."""
    first: dict[Path, Path] = {}
    for path in html_pages(site):
        first.setdefault(path.parent, path)
    return sorted(set(first.values()) | set(site.glob("*.html")))


def too_wide(page, site: Path, paths: list[Path]) -> dict[str, int]:
    """Pages wider than the phone. A page with no script of its own, in a folder whose page is already
    open, replaces the open page's body (same stylesheet, same relative links): far quicker than a load."""
    wide: dict[str, int] = {}
    open_folder = None
    for path in paths:
        html = path.read_text()
        if path.parent == open_folder and "<script" not in html:
            body = html[html.index("<body>") + len("<body>"):html.rindex("</body>")]
            page.evaluate("body => { document.body.innerHTML = body; }", body)
        else:
            page.goto(path.as_uri())
            open_folder = None if "<script" in html else path.parent
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            wide[path.relative_to(site).as_posix()] = width
    return wide


def test_hostile_text_never_widens_a_page(hostile_site, page):
    page.set_viewport_size(PHONE)
    pages = one_of_each_kind(hostile_site)
    names = {p.relative_to(hostile_site).as_posix() for p in pages}
    for kind in ("records/list/", "batches/", "digests/", "studies/", "v/", "records/"):
        assert any(name.startswith(kind) for name in names), kind
    assert {"index.html", "protocol.html", "screening.html", "searches.html", "evidence.html", "included.html",
            "versions.html", "records.html"} <= names
    assert all(WORD in p.read_text() for p in pages)  # the hostile text reaches every page
    assert f"<td>{WORD}</td>" in (hostile_site / "protocol.html").read_text()
    assert too_wide(page, hostile_site, pages) == {}


def test_no_page_of_the_example_widens_on_a_phone(example_site, page):
    page.set_viewport_size(PHONE)
    pages = html_pages(example_site)
    assert len(pages) > 271  # every record's page and the rest
    assert too_wide(page, example_site, pages) == {}
