"""Every number the site, its downloads and the commands show is the one derived from the ledger and the review's
files, wherever it is shown. One review's history stresses the derivation: two reviewers disagree and an
adjudicator settles it, a version is published, the protocol is amended, the saved search is retired and
reinstated, its next run does not reach Europe PMC, an export and a hand-made file are imported (the latter with
records a search found), decisions follow, reports are not retrieved, and a reviewer confirms two duplicates after
screening began, then withdraws one confirmation (the site is built again over the first). Each output is read for its numbers and compared with
`sitegen prisma --json`: the diagram (test_prisma reads it), the home page, the records lists, the screening
page and `screen status`, the digests, the versions page, each version and the Atom feed."""

from __future__ import annotations

import csv
import json
import re

import httpx
import pytest
from conftest import FIXTURES
from http_mocks import json_response
from lxml import etree
from lxml import html as lxml_html
from test_prisma import (  # noqa: F401  (two_run_review: a fixture)
    SYNERGY,
    _inline_svg,
    counts_of,
    doi,
    drawn_numbers,
    expected_value,
    flatten,
    two_run_review,
)

from sitegen.commands import update
from sitegen.sources.settings import SourceSettings


def _append(review, stage: str, reviewer: str, rows: list[str]) -> None:
    path = review / "screening" / stage / f"{reviewer}.csv"
    text = path.read_text() if path.exists() else "record_id,decision,reason,note\n"
    path.write_text(text + "".join(row + "\n" for row in rows))


def _ids(review) -> list[str]:
    return [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()]


@pytest.fixture
def stressed(sitegen, two_run_review, tmp_path, monkeypatch):  # noqa: F811
    review = two_run_review
    before = _ids(review)
    # ann excluded pnas at title and abstract; bob included it; the adjudicator excluded it
    excluded = next(i for i in before if "pnas" in i)
    _append(review, "title-abstract", "bob", [f"{excluded},include,,"])
    _append(review, "title-abstract", "adjudication", [f"{excluded},exclude,,"])
    assert sitegen("publish", review, "--out", tmp_path / "published", "--now", "2026-02-02T00:00:00Z")[0] == 0
    protocol = review / "protocol.md"
    protocol.write_text(protocol.read_text().replace(
        "exclusion_reasons:\n", "exclusion_reasons:\n  - code: animal-only\n    label: Animal only\n"))
    for command in (("protocol", "amend", review, "--at", "2026-02-05T00:00:00Z", "--reason", "a new reason"),
                    ("monitor", "retire", review, "--id", "watch", "--at", "2026-02-06T00:00:00Z", "--reason", "paused"),
                    ("monitor", "reinstate", review, "--id", "watch", "--at", "2026-02-07T00:00:00Z")):
        code, out, err = sitegen(*command)
        assert code == 0, out + err

    def europepmc_down(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps({"meta": {"count": 7, "next_cursor": None}, "results": SYNERGY[:7]}))
        return httpx.Response(503)

    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)
    assert not update(review, "2026-03-01T00:00:00Z", "live", settings=SourceSettings(),
                      transport=httpx.MockTransport(europepmc_down)).complete
    code, out, err = sitegen("import", review, FIXTURES / "ris" / "jstor_ris.ris", "--at", "2026-03-08T00:00:00Z",
                             "--source", "Embase")
    assert code == 0, out + err
    records = {json.loads(line)["id"]: json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()}
    by_hand = tmp_path / "by-hand.ris"  # two records searches found, and one of its own
    by_hand.write_text("".join(f"TY  - JOUR\nTI  - {records[i]['title']}\nDO  - {i}\nER  - \n"
                               for i in (before[0], doi(SYNERGY[5])))
                       + "TY  - JOUR\nTI  - A hand-found trial of object memory\nPY  - 2020\nER  - \n")
    code, out, err = sitegen("import", review, by_hand, "--at", "2026-03-09T00:00:00Z")
    assert code == 0 and "1 record new to the review, 2 already in it" in out, out + err
    new = [i for i in _ids(review) if i not in before]
    assert len(new) == 7
    _append(review, "title-abstract", "ann", [f"{i},{'include' if n % 2 == 0 else 'exclude'},,"
                                              for n, i in enumerate(new[:-1])])
    included = new[:-1][::2]
    _append(review, "full-text", "ann", [f"{included[0]},include,,", f"{included[1]},exclude,not-retrieved,"])
    # two duplicates confirmed after screening began (both screened), the site built; then one confirmation is
    # withdrawn (two works after all) and the site built again over the first
    monkeypatch.setattr("sitegen.site.records.PAGE_SIZE", 2)  # so that the records lists have pages to add up
    confirmed = f"record_id,duplicate_of,decision,reviewer,note\n{new[1]},{before[0]},same,ann,\n"
    for second in ("same", "different"):
        (review / "duplicates.csv").write_text(confirmed + f"{new[2]},{before[1]},{second},ann,\n")
        code, out, err = sitegen("build", review, "--out", tmp_path / "site")
        assert code == 0, out + err
    return review, tmp_path / "site"


def _page(path) -> lxml_html.HtmlElement:
    return lxml_html.fromstring(path.read_bytes())


def _number(text: str) -> int:
    return int(re.search(r"\d+", text).group())


def test_every_output_shows_the_numbers_derived_from_the_ledger_and_the_files(sitegen, stressed):
    review, site = stressed
    counts = counts_of(sitegen, review)
    both = {key: counts[key] + counts[f"other_{key}"] for key in (
        "screened", "excluded_screening", "awaiting_screening", "reports_sought", "reports_not_retrieved",
        "excluded_full_text", "awaiting_full_text")}
    # the history is the one this test means to stress
    assert counts["template"] == "updated" and counts["previous_studies"] == 2 and counts["runs"][2]["incomplete"]
    assert counts["duplicates_removed"] == 3 and counts["identified_other_methods"] == 1
    assert json.loads((site / "downloads" / "prisma.json").read_text()) == counts

    # the diagram, as a file and on the home page, and the table beside it ("0*": a source not reached in full)
    flat = flatten(counts)
    home_bytes = (site / "index.html").read_bytes()
    for svg in ((site / "downloads" / "prisma.svg").read_bytes(), _inline_svg(home_bytes)):
        assert {key: value for key, value in drawn_numbers(svg).items()
                if expected_value(flat, key) != value} == {}
    cells = etree.fromstring(home_bytes, etree.HTMLParser()).xpath("//table[contains(@class, 'prisma-counts')]//td")
    assert all(expected_value(flat, cell.get("data-count")) == int(cell.text.rstrip("*")) for cell in cells
               if cell.get("data-count"))

    # the home page's headline numbers
    home = lxml_html.fromstring(home_bytes)
    headline = {" ".join(term.text_content().split()): _number(term.getnext().text_content())
                for term in home.xpath("//dl[@class='headline']//dt")}
    confirmed = len(_ids(review)) - counts["records"]
    assert headline == {
        "Distinct records identified, duplicates removed": counts["records"],
        "Duplicates of other records, not screened": confirmed,
        "Screened": both["screened"],
        "Studies included": counts["studies_included"],
        "Awaiting a decision": both["awaiting_screening"] + both["awaiting_full_text"],
        "Reviewers disagree, awaiting adjudication": 0}

    # the records lists: each filter's count, the rows of its pages, and the records download
    listed = {" ".join(count.getprevious().text_content().split()): _number(count.text)
              for count in _page(site / "records.html").xpath("//nav[@class='record-filters']//span[@class='count']")}
    assert {name: listed[name] for name in (
        "All records", "Included", "Excluded at title and abstract", "Full text not retrieved, not assessed",
        "Awaiting a decision", "Duplicates of other records, not screened")} == {
        "All records": len(_ids(review)), "Included": counts["reports_included"],
        "Excluded at title and abstract": both["excluded_screening"],
        "Full text not retrieved, not assessed": both["reports_not_retrieved"],
        "Awaiting a decision": both["awaiting_screening"] + both["awaiting_full_text"],
        "Duplicates of other records, not screened": confirmed}
    assert sum(count for name, count in listed.items()
               if name.startswith(("Batch ", "Imported outside"))) == len(_ids(review))
    # paged two to a page (the fixture's build): a list's pages hold as many rows as its filter says
    paged = {link.get("href").split("/")[2] if "/list/" in link.get("href") else "all":
             _number(link.getnext().text) for link in
             _page(site / "records.html").xpath("//nav[@class='record-filters']//a[../span[@class='count']]")}
    for key, count in paged.items():
        pages = [site / "records.html", *(site / "records" / "list" / "all").glob("*.html")] if key == "all" \
            else list((site / "records" / "list" / key).glob("*.html"))
        assert len(pages) == -(-count // 2), key
        assert sum(len(_page(page).xpath("//table[contains(@class, 'records')]/tbody/tr")) for page in pages) \
            == count, key
    downloaded = list(csv.DictReader((site / "downloads" / "records.csv").open(encoding="utf-8")))
    assert len(downloaded) == counts["records"]
    assert sum(row["full_text"] == "not-retrieved" for row in downloaded) == both["reports_not_retrieved"]

    # the screening page and `screen status`: per batch, what reached each stage
    code, out, err = sitegen("screen", "status", review, "--json")
    assert code == 0, err
    status = json.loads(out)["batches"]
    page = _page(site / "screening.html")
    for stage, total in (("title-abstract", both["screened"] + both["awaiting_screening"]),
                         ("full-text", both["reports_sought"])):
        shown = [int(cell.get("data-records")) for cell in page.xpath(f"//td[@data-stage='{stage}']")]
        said = [next(s["records"] for s in batch["stages"] if s["stage"] == stage) for batch in status]
        assert shown == said and sum(shown) == total, stage

    # batch 3 is the run's two new records, one since confirmed a duplicate: one is screened, and said so
    batch = " ".join(_page(site / "batches" / "3.html").text_content().split())
    assert "2 records the saved search" in batch and "1 of them is a duplicate" in batch and "so 1 is." in batch
    assert len(_page(site / "batches" / "3.html").xpath("//table[contains(@class, 'ranked')]/tbody/tr")) == 1

    # the weekly digests list each record once, in the week it arrived
    digested = sum(_number(path.read_text().split("\n\n")[1]) for path in (site / "downloads").glob("digest-*.md"))
    assert digested == counts["records"]

    # each version, on its page, on the versions page and in the feed, as its own counts say
    feed = etree.fromstring((site / "feed.xml").read_bytes())
    summaries = [entry.findtext("{*}summary") for entry in feed.iter("{*}entry")
                 if entry.findtext("{*}title", "").startswith("Version ")]
    versions = " ".join(_page(site / "versions.html").text_content().split())
    (summary,) = summaries
    derived = json.loads((site / "v" / "1" / "prisma.json").read_text())
    assert derived == json.loads((site.parent / "published" / "downloads" / "prisma.json").read_text())
    assert summary.endswith(f"{derived['studies_included']} studies included of {derived['records']} records.")
    assert f"{derived['records']} records, {derived['studies_included']} studies included" in versions
