"""Site search: a static pagefind index built offline with the site, and a search page that uses it."""

from __future__ import annotations

import re
import sys

import pytest
from conftest import EXAMPLE, tree_bytes

from sitegen.commands import build
from sitegen.errors import BuildError
from sitegen.site import search as site_search
from sitegen.workspace import open_review


def included_title_and_word() -> tuple[str, str]:
    """An included study's title and its most distinctive (longest) word, read from the example."""
    workspace = open_review(EXAMPLE)
    record = workspace.review.records[sorted(workspace.facts.included)[0]]
    words = re.findall(r"[A-Za-z]{4,}", record.title)
    return record.title, max(words, key=len)


def test_index_covers_only_marked_pages():
    page = (b'<!doctype html><html lang="en"><head><title>t</title></head><body><main id="main" data-pagefind-body>%s'
            b'</main></body></html>')
    files = {"a.html": page % b"alpha", "b.html": page.replace(b" data-pagefind-body", b"") % b"beta",
             "c.html": page % b"gamma"}
    index = site_search.search_index(files)
    assert "pagefind/pagefind-ui.js" in index and "pagefind/pagefind-entry.json" in index
    assert b'"page_count":2' in index["pagefind/pagefind-entry.json"]
    assert index == site_search.search_index(files)  # the same pages give the same bytes


def test_example_site_has_search(example_site):
    assert (example_site / "search.html").is_file()
    assert (example_site / "pagefind" / "pagefind-entry.json").is_file()
    home = (example_site / "index.html").read_text()
    assert 'role="search"' in home
    assert "data-pagefind-body" in (example_site / "protocol.html").read_text()
    # old versions, lists and record pages stay out of the index (at review scale no index of every
    # record stays small), and so do the home and screening pages (counts, which every decision changes);
    # the included studies' pages are in it
    assert "data-pagefind-body" not in home and "data-pagefind-body" not in (example_site / "screening.html").read_text()
    assert "data-pagefind-body" not in (example_site / "records.html").read_text()
    record_page = next((example_site / "records").glob("*.html")).read_text()
    assert "data-pagefind-body" not in record_page
    assert "data-pagefind-body" in next((example_site / "studies").glob("*.html")).read_text()


def test_a_text_naming_the_mark_does_not_put_its_page_in_the_index(example_copy, tmp_path):
    # A title holding "data-pagefind-body" (shown escaped) marked every record and list page as indexed: copied
    # to the indexer on every build, and any edit of a record ran it again.
    import json

    def indexed(site):
        return sorted(path for path, kept in json.loads((site / ".sitegen-manifest.json").read_text())["files"].items()
                      if kept.get("indexed"))

    build(example_copy, tmp_path / "plain", environ={})
    records = example_copy / "records.jsonl"
    records.write_text(records.read_text().replace('"title":"', '"title":"data-pagefind-body <main data-pagefind-body> '))
    build(example_copy, tmp_path / "marked", environ={})
    assert indexed(tmp_path / "marked") == indexed(tmp_path / "plain")
    assert not any(path.startswith("records/") for path in indexed(tmp_path / "plain"))


def test_search_can_be_turned_off(example_copy, tmp_path):
    config = example_copy / "review.yaml"
    config.write_text(config.read_text().replace("site:\n", "site:\n  search: false\n", 1))
    assert "search: false" in config.read_text()
    out = tmp_path / "site"
    build(example_copy, out, environ={})
    assert not (out / "pagefind").exists() and not (out / "search.html").exists()
    assert 'role="search"' not in (out / "index.html").read_text()
    assert "data-pagefind-body" not in (out / "index.html").read_text()


def test_a_failing_indexer_stops_the_build_and_keeps_the_old_site(example_copy, tmp_path, monkeypatch):
    out = tmp_path / "site"
    build(example_copy, out, environ={})
    before = tree_bytes(out)
    failing = tmp_path / "failing-python"
    failing.write_text("#!/bin/sh\necho 'pagefind exploded' >&2\nexit 3\n")
    failing.chmod(0o755)
    monkeypatch.setattr(site_search.sys, "executable", str(failing))
    config = example_copy / "review.yaml"  # a new title: every indexed page changes, so the index is built again
    config.write_text(config.read_text(encoding="utf-8").replace('title: "The rodent', 'title: "A rodent'), encoding="utf-8")
    with pytest.raises(BuildError, match="pagefind exploded.*site.search: false"):
        build(example_copy, out, environ={})
    monkeypatch.setattr(site_search.sys, "executable", sys.executable)
    assert tree_bytes(out) == before


def test_a_pagefind_config_in_the_working_folder_is_ignored(tmp_path, monkeypatch):
    (tmp_path / "pagefind.yml").write_text("output_subdir: elsewhere\nexclude_selectors: ['main']\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAGEFIND_OUTPUT_SUBDIR", "elsewhere")
    page = b'<!doctype html><html lang="en"><head><title>t</title></head><body><main id="main" data-pagefind-body>alpha</main></body></html>'
    index = site_search.search_index({"a.html": page})
    assert b'"page_count":1' in index["pagefind/pagefind-entry.json"]


@pytest.mark.browser
def test_search_finds_an_included_study_by_a_title_word(served_example, page):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    title, word = included_title_and_word()
    page.goto(served_example + "index.html")
    page.get_by_role("searchbox", name="Search the review").fill(word)
    page.get_by_role("button", name="Search", exact=True).click()
    page.wait_for_url("**/search.html?q=*")
    results = page.locator(".pagefind-ui__result-link")
    results.first.wait_for(timeout=10_000)
    texts = [" ".join(text.split()) for text in results.all_inner_texts()]
    assert " ".join(title.split()) in texts
    match = results.nth(texts.index(" ".join(title.split())))
    match.click()
    page.wait_for_load_state()
    assert " ".join(page.get_by_role("heading", level=1).inner_text().split()) == " ".join(title.split())
    assert errors == []


@pytest.mark.browser
def test_search_page_opened_from_disk_explains_itself(example_site, page):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto((example_site / "search.html").as_uri() + "?q=memory")
    assert "opened straight from disk" in page.locator("#search").inner_text()
    assert errors == []


def test_a_folder_left_by_a_build_killed_while_pagefind_ran_is_removed_later(tmp_path, monkeypatch):
    # Each holds a copy of every indexed page; nothing else would ever remove it.
    import os
    import time

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(site_search.tempfile, "tempdir", None)  # read TMPDIR again
    stale, running = tmp_path / "sitegen-search-killed", tmp_path / "sitegen-search-running"
    for folder in (stale, running):
        (folder / "studies").mkdir(parents=True)
        (folder / "studies" / "a.html").write_text("<p data-pagefind-body>a</p>")
    old = time.time() - site_search.STALE_SECONDS - 60
    os.utime(stale, (old, old))
    page = b'<!doctype html><html lang="en"><head><title>t</title></head><body><main id="main" data-pagefind-body>Rats</main></body></html>'
    site_search.search_index({"index.html": page})
    assert not stale.exists() and running.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["sitegen-search-running"]


def test_studies_pages_are_shared_out_among_parts_once_they_are_many(monkeypatch):
    monkeypatch.setattr(site_search, "PART_PAGES", 10)
    pages = ["evidence.html", "protocol.html", *(f"studies/s{number}.html" for number in range(45))]
    bundles = site_search.bundle_pages(pages)
    assert bundles["pagefind"] == ["evidence.html", "protocol.html"]
    parts = {folder: paths for folder, paths in bundles.items() if folder != "pagefind"}
    assert 3 <= len(parts) <= 5 and all(folder.startswith("pagefind/part-") for folder in parts)
    assert sorted(path for paths in parts.values() for path in paths) == sorted(pages[2:])  # each in one part
    # a page's part is told by its path alone: another study of the same number of parts moves none
    grown = site_search.bundle_pages([*pages, "studies/s45.html"])
    assert {folder: [path for path in paths if path != "studies/s45.html"] for folder, paths in grown.items()} == bundles
    # a few studies stay in the main bundle
    assert site_search.bundle_pages(pages[:12]) == {"pagefind": pages[:12]}


def _parted_build(review, out, monkeypatch) -> list[str]:
    """Build with the studies' pages indexed in parts of 10; the folders pagefind built, in order."""
    monkeypatch.setattr(site_search, "PART_PAGES", 10)
    built: list[str] = []
    real = site_search._pagefind
    monkeypatch.setattr(site_search, "_pagefind", lambda root, folder: built.append(folder) or real(root, folder))
    build(review, out, environ={})
    return sorted(built)


def test_a_changed_study_builds_its_part_of_the_index_again_and_keeps_the_others(example_copy, tmp_path, monkeypatch):
    import json

    out = tmp_path / "site"
    first = _parted_build(example_copy, out, monkeypatch)
    parts = json.loads((out / "pagefind" / "parts.json").read_text())
    assert len(parts) >= 3 and first == ["pagefind", *sorted(f"pagefind/{part}".rstrip("/") for part in parts)]
    for part in parts:  # each a whole bundle of its own
        assert b'"page_count":' in (out / "pagefind" / part / "pagefind-entry.json").read_bytes()
    # One study's page changes (its record's title): its part is built again, with the main bundle (the evidence
    # table names it); the other parts are kept as they were.
    workspace = open_review(example_copy)
    record = workspace.review.records[sorted(workspace.facts.included)[0]]
    records = example_copy / "records.jsonl"
    records.write_text(records.read_text().replace(json.dumps(record.title)[1:-1], "Retitled " + json.dumps(record.title)[1:-1], 1))
    again = _parted_build(example_copy, out, monkeypatch)
    assert again[0] == "pagefind" and len(again) == 2 and again[1] in first
    assert json.loads((out / "pagefind" / "parts.json").read_text()) == parts
    assert _parted_build(example_copy, out, monkeypatch) == []  # nothing changed: nothing built


@pytest.mark.browser
def test_search_finds_a_study_indexed_in_a_part(example_copy, tmp_path, monkeypatch, page):
    from conftest import serve

    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    out = tmp_path / "site"
    _parted_build(example_copy, out, monkeypatch)
    title, word = included_title_and_word()
    base, server = serve(tmp_path)
    try:
        page.goto(f"{base}site/search.html?q={word}")
        results = page.locator(".pagefind-ui__result-link")
        results.first.wait_for(timeout=10_000)
        texts = [" ".join(text.split()) for text in results.all_inner_texts()]
        assert " ".join(title.split()) in texts
    finally:
        server.terminate()
        server.wait(timeout=5)
    assert errors == []
