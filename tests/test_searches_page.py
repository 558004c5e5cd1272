"""The searches page: strategies verbatim, the run history with each source's status, and every run's
manifest served byte for byte (or derived from the ledger, and labelled so, for older runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from lxml import html
from test_manifests import FIRST, SECOND, SECOND_FILE, two_runs, without_manifests


@pytest.fixture(scope="module", autouse=True)
def no_waiting():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sitegen.sources.http.pause", lambda seconds: None)
        yield


def built(review: Path, out: Path) -> Path:
    code, _, err = run_cli("build", review, "--out", out, "--now", "2026-02-01T00:00:00Z")
    assert code == 0, err
    return out


def unindexed(review: Path) -> Path:
    """The review with site search off: these tests read pages, and indexing them takes time."""
    with (review / "review.yaml").open("a") as config:
        config.write("  search: false\n")  # under `site:`, the file's last mapping
    return review


@pytest.fixture(scope="module")
def missed(tmp_path_factory) -> tuple[Path, Path]:
    """(review, built site) after two runs, the second of which missed Europe PMC."""
    folder = tmp_path_factory.mktemp("missed")
    review, _ = two_runs(run_cli, folder, europepmc_status=503)
    return review, built(unindexed(review), folder / "site")


def cells(row) -> dict[str, str]:
    """A run's row as {column label: text}, the labels being those a phone shows beside each cell."""
    return {cell.get("data-label"): " ".join(cell.text_content().split()) for cell in row.xpath("th|td")}


def manifest_link(row) -> str:
    return row.xpath(".//td[@data-label='Manifest']/a/@href")[0]


def test_each_run_shows_every_source_retrieved_new_and_its_manifest(missed):
    review, site = missed
    page = html.fromstring((site / "searches.html").read_bytes())
    newest, oldest = page.xpath("//table[contains(@class, 'runs')]/tbody/tr")
    assert newest.get("class") == "incomplete" and oldest.get("class") == "complete"
    latest, first = cells(newest), cells(oldest)
    # Read in UTC to the minute, whatever offset the ledger wrote; the exact moment stays in the <time> element.
    assert latest["Run"] == "2026-01-12 05:00 UTC" and newest.xpath(".//time/@datetime")[0] == SECOND
    assert latest["Status"].startswith("Incomplete") and 'not evidence of "no new records"' in latest["Status"]
    assert "OpenAlex: complete; 7 retrieved, 2 new" in latest["Sources"]
    assert "Europe PMC: not reached (unavailable); 0 retrieved, 0 new. Why: Europe PMC unavailable" in latest["Sources"]
    assert (latest["Retrieved"], latest["New"]) == ("7", "2 (batch 2)")
    assert "OpenAlex: complete; 5 retrieved, 5 new" in first["Sources"]
    assert "Europe PMC: complete; 3 retrieved, 3 new" in first["Sources"]
    assert (first["Retrieved"], first["New"], first["Status"]) == ("8", "8 (batch 1)", "Complete")
    links = [manifest_link(row) for row in (newest, oldest)]
    assert links == [f"downloads/{SECOND_FILE}", "downloads/runs/20260105T060000Z-watch.json"]
    for link in links:  # the run's own file, byte for byte
        assert (site / link).read_bytes() == (review / link.removeprefix("downloads/")).read_bytes()
    assert "derived" not in page.xpath("string(//table[contains(@class, 'runs')])")
    assert page.xpath("//td[@data-label='New']/a/@href") == ["batches/2.html", "batches/1.html"]
    assert (site / "batches" / "2.html").is_file()


def test_strategies_are_shown_verbatim_with_what_the_provider_receives(missed):
    page = html.fromstring((missed[1] / "searches.html").read_bytes())
    strategies = [" ".join(item.text_content().split()) for item in page.xpath("//ul[@class='strategies']/li")]
    assert strategies == ["OpenAlex, in OpenAlex's own syntax, sent verbatim: object context",
                          'Europe PMC, in sitegen\'s query grammar: cancer AND mouse Sent to Europe PMC as: '
                          '"cancer" AND "mouse"']


def test_home_sums_up_the_searches_and_links_to_them(missed):
    site = missed[1]
    home = html.fromstring((site / "index.html").read_bytes())
    section = home.xpath("//section[@aria-labelledby='searches-heading']")[0]
    summary = " ".join(section.xpath("string(p[1])").split())
    assert summary == ("1 saved search, run 2 times in all; the latest run, of watch on 2026-01-12 05:00 UTC, retrieved 7 "
                       "records, 2 of them new, though not every source answered in full (see below). Strategies, "
                       "run history and run manifests.")
    assert section.xpath("p[1]/a/@href") == ["searches.html"]
    assert not home.xpath("//table[contains(@class, 'runs')]")  # the history lives on the searches page
    assert "Europe PMC did not answer in full" in section.xpath("string(p[@class='notice run-incomplete'])")
    for page in ("index.html", "searches.html", "protocol.html"):
        nav = html.fromstring((site / page).read_bytes()).xpath("//nav[@aria-label='Site']//a[text()='Searches']")
        assert nav and nav[0].get("href") == "searches.html"


def test_runs_before_manifests_get_one_derived_from_the_ledger_and_labelled_so(tmp_path):
    review, _ = two_runs(run_cli, tmp_path)
    without_manifests(review, {FIRST, SECOND})
    site = built(unindexed(review), tmp_path / "site")
    rows = html.fromstring((site / "searches.html").read_bytes()).xpath("//table[contains(@class, 'runs')]/tbody/tr")
    assert len(rows) == 2
    for row in rows:
        assert cells(row)["Manifest"] == "JSON (derived from the ledger, not recorded at run time)"
        data = json.loads((site / manifest_link(row)).read_text())
        assert data["origin"] == "ledger" and "sitegen_version" not in data and "requests" not in data["sources"][0]
    latest = json.loads((site / manifest_link(rows[0])).read_text())
    assert (latest["at"], latest["counts"], latest["batch"]) == \
        (SECOND, {"retrieved": 10, "distinct": 10, "duplicates": 0, "new": 2}, 2)


def test_the_page_and_its_manifests_are_the_same_on_every_build(missed, tmp_path):
    review, site = missed
    again = built(review, tmp_path / "again")
    for rel in ("searches.html", f"downloads/{SECOND_FILE}", "downloads/runs/20260105T060000Z-watch.json"):
        assert (site / rel).read_bytes() == (again / rel).read_bytes()


def test_a_source_that_refused_the_strategy_is_named_not_searched(tmp_path):
    review, _ = two_runs(run_cli, tmp_path, europepmc_status=400)
    page = html.fromstring((built(unindexed(review), tmp_path / "site") / "searches.html").read_bytes())
    latest = cells(page.xpath("//table[contains(@class, 'runs')]/tbody/tr")[0])
    assert "Europe PMC: not searched (the source cannot run this strategy); 0 retrieved, 0 new. Why: Europe PMC " \
           "cannot run this query: Europe PMC rejected the query (HTTP 400)" in latest["Sources"]
    assert latest["Status"].startswith("Incomplete")


def test_a_strategy_saved_since_the_latest_run_is_never_shown_as_what_the_runs_sent(example_copy, tmp_path):
    # The page lists the runs beside the saved strategies: an edited query shows the one its runs sent,
    # and a strategy added since is said not to have run.
    path = example_copy / "searches" / "object-in-context.json"
    search = json.loads(path.read_text(encoding="utf-8"))
    sent = search["strategies"][0]["query"]
    search["strategies"][0]["query"] = "context AND memory"
    search["strategies"].append({"source": "europepmc", "query": "object AND context", "label": "second"})
    path.write_text(json.dumps(search, indent=2), encoding="utf-8")
    page = html.fromstring((built(unindexed(example_copy), tmp_path / "site") / "searches.html").read_bytes())
    edited, added = [" ".join(item.text_content().split()) for item in page.xpath("//ul[@class='strategies']/li")]
    assert "context AND memory" in edited and "Changed since it last ran (2023-04-17 00:00 UTC)" in edited
    assert edited.endswith(sent)
    assert "Not run yet" in added


def test_a_strategy_as_it_ran_has_no_notice(missed):
    page = html.fromstring((missed[1] / "searches.html").read_bytes())
    assert not page.xpath("//*[contains(@class, 'strategy-changed')]")
