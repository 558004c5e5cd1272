"""Reviews of unusual shape, built and read as a reader reads them: nothing searched, a search that found
nothing, a search no source answered, one record, every record excluded or in conflict, studies without
evidence, records without year, journal or abstract. No page shows a program's value ("None", "[]"), a count
with the wrong number ("1 records"), an empty table or list without a sentence saying why, a chart of zeros,
or a run no source answered as if it had found nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from conftest import run_cli
from lxml import html as lxml_html
from test_update import SETTINGS, STRATEGIES, Providers

from sitegen.commands import add_monitor

LOCKED, IMPORTED, SEARCHED, BUILT = ("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z",
                                     "2026-02-01T00:00:00Z")
NOUNS = "records|studies|runs|reports|duplicates|imports|searches|times|findings|batches|decisions|items|passages"


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)


def ok(*args) -> str:
    code, out, err = run_cli(*args)
    assert code == 0, (args, out, err)
    return out


def new_review(folder: Path, locked: bool = True) -> Path:
    review = folder / "review"
    ok("init", review)
    with (review / "review.yaml").open("a") as config:
        config.write("  search: false\n")  # under `site:`, the file's last mapping: these tests read pages
    if locked:
        ok("protocol", "lock", review, "--at", LOCKED)
    return review


def record(n: int, **fields) -> dict:
    made = {"id": f"ref{n}", "type": "article-journal", "title": f"Study {n} of object memory in rats",
            "author": [{"family": f"Author{n}", "given": "A."}], "issued": {"date-parts": [[2000 + n]]},
            "container-title": "Journal of Tests", "abstract": f"Abstract of study {n}. Rats remembered objects."}
    made.update(fields)
    return {key: value for key, value in made.items() if value is not None}


def with_records(folder: Path, records: list[dict]) -> Path:
    review = new_review(folder)
    (folder / "records.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    ok("import", review, folder / "records.json", "--format", "csl-json", "--source", "Embase", "--at", IMPORTED)
    return review


def ids(review: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()]


def decide(review: Path, stage: str, decisions: dict[str, list[tuple[str, str]]]) -> None:
    """Each reviewer's decisions at `stage`: (decision, reason) for each record, in the order of `ids`."""
    for reviewer, rows in decisions.items():
        lines = [f"{i},{decision},{reason},\n" for i, (decision, reason) in zip(ids(review), rows, strict=True)]
        (review / "screening" / stage / f"{reviewer}.csv").write_text("record_id,decision,reason,note\n" + "".join(lines))


class Unreachable:
    def __call__(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"retry-after": "1"})


def searched(folder: Path, providers) -> Path:
    review = new_review(folder)
    add_monitor(review, "watch", STRATEGIES, SEARCHED, "live", settings=SETTINGS, transport=httpx.MockTransport(providers))
    return review


def built(review: Path, publish: bool = False) -> Path:
    site = review.parent / "site"
    ok("publish" if publish else "build", review, "--out", site, "--now", BUILT)
    return site


def pages(site: Path) -> dict[str, lxml_html.HtmlElement]:
    read = {}
    for page in sorted(site.rglob("*.html")):
        document = lxml_html.fromstring(page.read_bytes())
        for hidden in document.xpath("//script | //style"):
            hidden.drop_tree()
        read[page.relative_to(site).as_posix()] = document
    return read


def text(document) -> str:
    return " ".join(document.text_content().split())


def misreadings(site: Path) -> dict[str, list[str]]:
    """What on each page reads as a program's output rather than a sentence."""
    found: dict[str, list[str]] = {}
    for name, document in pages(site).items():
        said = text(document)
        problems = [f"says {m.group()!r}" for m in re.finditer(r"\bNone\b|\bnan\b|\bNaN\b|\[\]|\{\}|\b0 of 0\b", said)]
        problems += [f"says {m.group()!r}" for m in re.finditer(rf"\b1 (?:{NOUNS})\b|\w\(s\)", said)]
        for table in document.xpath("//table"):
            if not table.xpath("./tbody/tr | ./tr[td]"):
                problems.append(f"an empty table: {text(table)[:80]}")
        for listed in document.xpath("//ul | //ol"):
            if not listed.xpath("./li"):
                problems.append("an empty list")
        if problems:
            found[name] = problems
    return found


def shape_fresh(folder):
    return new_review(folder, locked=False)


def shape_locked(folder):
    return new_review(folder)


def shape_one_record(folder):
    return with_records(folder, [record(0)])


def shape_unscreened(folder):
    return with_records(folder, [record(n) for n in range(3)])


def shape_all_excluded(folder):
    review = with_records(folder, [record(n) for n in range(3)])
    decide(review, "title-abstract", {who: [("exclude", "wrong-population")] * 3 for who in ("a", "b")})
    return review


def shape_all_in_conflict(folder):
    review = with_records(folder, [record(n) for n in range(3)])
    decide(review, "title-abstract", {"a": [("include", "")] * 3, "b": [("exclude", "wrong-population")] * 3})
    return review


def shape_not_retrieved(folder):
    review = new_review(folder, locked=False)
    protocol = review / "protocol.md"
    protocol.write_text(protocol.read_text().replace(
        "exclusion_reasons:\n", "exclusion_reasons:\n  - code: not-retrieved\n    label: Full text not obtained\n", 1))
    ok("protocol", "lock", review, "--at", LOCKED)
    (folder / "records.json").write_text(json.dumps([record(n) for n in range(3)]))
    ok("import", review, folder / "records.json", "--format", "csl-json", "--source", "Embase", "--at", IMPORTED)
    decide(review, "title-abstract", {who: [("include", "")] * 3 for who in ("a", "b")})
    decide(review, "full-text", {who: [("exclude", "not-retrieved")] * 3 for who in ("a", "b")})
    return review


def shape_included_without_evidence(folder):
    review = with_records(folder, [
        record(0, title="Longtitle " * 499 + "End", author=[{"family": f"Family{n}", "given": "G."} for n in range(300)],
               issued=None, abstract=None, **{"container-title": None}),
        record(1, title="أثر السياق على ذاكرة الأشياء لدى الجرذان", author=[{"family": "العلي", "given": "محمد"}]),
        record(2, title="大鼠物体情境识别记忆的研究", author=[{"family": "王", "given": "伟"}])])
    for stage in ("title-abstract", "full-text"):
        decide(review, stage, {who: [("include", "")] * 3 for who in ("a", "b")})
    return review


def shape_nothing_found(folder):
    return searched(folder, Providers([], []))


def shape_never_reached(folder):
    return searched(folder, Unreachable())


SHAPES = [shape_fresh, shape_locked, shape_one_record, shape_unscreened, shape_all_excluded, shape_all_in_conflict,
          shape_not_retrieved, shape_included_without_evidence, shape_nothing_found, shape_never_reached]


@pytest.mark.parametrize("publish", [False, True], ids=["built", "published"])
@pytest.mark.parametrize("shape", SHAPES, ids=[shape.__name__.removeprefix("shape_") for shape in SHAPES])
def test_every_page_of_an_unusual_review_reads_as_sentences(tmp_path, shape, publish):
    review = shape(tmp_path)
    if publish and shape is shape_fresh:
        return  # nothing to publish: `publish` refuses a review whose ledger is empty
    assert misreadings(built(review, publish)) == {}


def home(site: Path) -> str:
    return text(pages(site)["index.html"])


def test_a_search_that_found_nothing_says_so_and_draws_no_chart(tmp_path):
    site = built(shape_nothing_found(tmp_path))
    said = home(site)
    assert "found nothing: every source answered in full and returned no record" in said
    assert "OpenAlex found nothing (it answered in full)" in said  # the changelog's run
    assert "Records identified per search run" not in said and "chart-figure" not in (site / "index.html").read_text()
    searches = text(pages(site)["searches.html"])
    assert "Complete: every source answered in full and found nothing" in searches
    assert "OpenAlex: complete; nothing found" in searches


def test_a_search_no_source_answered_is_never_told_as_finding_nothing(tmp_path):
    site = built(shape_never_reached(tmp_path))
    said = home(site)
    assert "retrieved nothing, as no source answered in full" in said
    assert "OpenAlex did not answer in full and returned nothing: records may be missing" in said
    for page in ("index.html", "searches.html"):
        assert "found nothing" not in text(pages(site)[page]), page
    assert "no record retrieved so far" in text(pages(site)["searches.html"])


def test_a_review_with_nothing_yet_says_so_instead_of_showing_empty_parts(tmp_path):
    site = built(shape_fresh(tmp_path))
    said = home(site)
    assert "nothing has been recorded: no protocol lock, search, import or decision" in said
    assert "No change to records" not in said and "All 0 records" not in said
    assert "Records: none yet." in said and "Included studies: none yet." in said
    assert "No record has arrived for screening yet" in text(pages(site)["screening.html"])
    assert "Only the 0" not in text(pages(site)["verification.html"])


def test_one_record_is_counted_in_the_singular_on_every_page(tmp_path):
    site = built(shape_one_record(tmp_path), publish=True)
    read = pages(site)
    assert "1 record identified from databases" in text(read["index.html"])
    assert "1 record, 0 studies included" in text(read["versions.html"])
    assert "1 record identified after removing duplicates" in text(read["v/1/index.html"])
    assert "1 record imported" in text(read["batches/imported.html"])
    assert "0 studies included of 1 record." in (site / "feed.xml").read_text()


def test_an_empty_list_of_a_digest_says_there_is_no_record(tmp_path):
    site = built(shape_unscreened(tmp_path))
    digest = next(name for name in pages(site) if name.startswith("digests/"))
    said = text(pages(site)[digest])
    assert "Keep (0) No record this week." in said and "None." not in said


def test_sitegen_prisma_says_a_run_of_one_record_in_the_singular(tmp_path):
    # The site says "1 record"; `sitegen prisma`'s line for each run said "1 records identified".
    out = ok("prisma", shape_one_record(tmp_path))
    assert "1 new record identified, 1 after duplicates were removed, 0 now included studies;" in out
