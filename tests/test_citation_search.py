"""Citation searching as a saved-search strategy (PRISMA 2020's "other methods"): backward and forward
citation searches from seed works, rerun like any database search and counted apart in PRISMA.

The OpenAlex served here is a small world of real Work objects (SYNERGY's Sep_2021 works, as OpenAlex sent
them): their own `referenced_works` lists say which of them cite which, so every answer is real data.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from conftest import EXAMPLE, FIXTURES, tree_bytes
from http_mocks import fetcher, json_response

from sitegen.commands import add_monitor, update
from sitegen.errors import SitegenError
from sitegen.living.ledger import verify_chain
from sitegen.records.citations import CitationQueryError, parse_citation_query
from sitegen.records.model import model_data
from sitegen.review.folder import load_review
from sitegen.review.models import RetrievalPayload, Strategy
from sitegen.site.pages import page_slug
from sitegen.sources import openalex
from sitegen.sources.search import open_fetcher
from sitegen.sources.settings import SourceSettings
from sitegen.text import counted
from sitegen.workspace import open_review

DIR = FIXTURES / "openalex"
SYNERGY = json.loads((DIR / "synergy_sep2021_works_0_25.json").read_text())
NOT_FOUND = (DIR / "openalex_work_404.json").read_bytes()
SETTINGS = SourceSettings(max_records=1000, openalex_per_page=10)
CITED = "W2144529104"  # a 1999 work seven of the SYNERGY works cite (their referenced_works say so)
CITES_TWO = "W2610559583"  # a 2017 work citing two of the others
FIRST, SECOND = "2026-01-05T06:00:00Z", "2026-01-12T06:00:00Z"


def short(openalex_url: str) -> str:
    return openalex_url.rsplit("/", 1)[-1]


class OpenAlex:
    """OpenAlex over a set of real works: lookups by id or DOI, `openalex:` and `cites:` filters with cursors."""

    def __init__(self, works: list[dict]):
        self.works = list(works)
        self.fail_after: int | None = None  # answer 503 from this many requests on (an outage mid-way)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.fail_after is not None and len(self.requests) > self.fail_after:
            return httpx.Response(503)
        path = request.url.path
        if "search" in request.url.params:  # a database search: it answers with the first works of the world
            return json_response(json.dumps({"meta": {"count": 3, "next_cursor": None}, "results": self.works[:3]}))
        if path.startswith("/works/"):
            wanted = path.removeprefix("/works/")
            for work in self.works:
                if short(work["id"]) == wanted or f"doi:{work['doi'].removeprefix('https://doi.org/')}" == wanted:
                    return json_response(json.dumps(work))
            return httpx.Response(404, content=NOT_FOUND, headers={"content-type": "text/html"})
        kind, _, value = request.url.params["filter"].partition(":")
        if kind == "openalex":
            ids = set(value.split("|"))
            found = [work for work in self.works if short(work["id"]) in ids]
        else:
            assert kind == "cites" and request.url.params["sort"] == "publication_date:desc"
            found = sorted((work for work in self.works if f"https://openalex.org/{value}" in work["referenced_works"]),
                           key=lambda work: work["publication_date"], reverse=True)
        per_page, cursor = int(request.url.params["per_page"]), request.url.params["cursor"]
        start = 0 if cursor == "*" else int(cursor)
        following = str(start + per_page) if start + per_page < len(found) else None
        return json_response(json.dumps({"meta": {"count": len(found), "next_cursor": following},
                                         "results": found[start:start + per_page]}))


def search(world: OpenAlex, text: str):
    fetch, _, _ = fetcher(world)
    return openalex.citation_search(fetch, SETTINGS, parse_citation_query(text))


def works_citing(openalex_id: str, works: list[dict] = SYNERGY) -> list[dict]:
    return [work for work in works if f"https://openalex.org/{openalex_id}" in work["referenced_works"]]


# --------------------------------------------------------------------------- the grammar


@pytest.mark.parametrize(("text", "message"), [
    ("refs: W1", "'refs' is not a citation-search mode"),
    ("W2144529104", "is written 'MODE: SEED, SEED, ...'"),
    ("references:", "names no seed work"),
    ("references: W1,, W2", "an empty seed"),
    ("citing: W1, https://openalex.org/W1", "seed W1 is given twice"),
    ("shared: W1", "takes 2 to 5 seeds, not 1"),
    ("shared: W1, W2, W3, W4, W5, W6", "takes 2 to 5 seeds, not 6"),
    ("references: paper-one", "'paper-one' is neither an OpenAlex work id"),
    ("citing: " + ", ".join(f"W{n}" for n in range(1, 52)), "at most 50 seeds"),
])
def test_a_query_breaking_the_grammar_says_how(text, message):
    with pytest.raises(CitationQueryError, match=message):
        parse_citation_query(text)
    with pytest.raises(ValueError, match=message):
        Strategy(source="openalex", method="citations", query=text)


def test_seeds_may_be_dois_and_the_query_is_kept_verbatim():
    text = "shared:https://doi.org/10.1016/S0166-4328(98)00079-5 ,  w2144529104"
    strategy = Strategy(source="openalex", method="citations", query=text)
    assert strategy.query == text and model_data(strategy)["method"] == "citations"
    assert parse_citation_query(text).sent == "shared: doi:10.1016/s0166-4328(98)00079-5, W2144529104"
    # A database strategy's JSON does not change: the default method is left out.
    assert "method" not in model_data(Strategy(source="openalex", query="search=object"))


def test_only_openalex_follows_citations_and_only_in_its_own_grammar():
    with pytest.raises(ValueError, match="its source must be 'openalex'"):
        Strategy(source="pubmed", method="citations", query="citing: W2144529104")
    with pytest.raises(ValueError, match="leave out syntax"):
        Strategy(source="openalex", method="citations", syntax="sitegen", query="citing: W2144529104")


# --------------------------------------------------------------------------- running one


def test_backward_citation_search_finds_what_the_seed_cites():
    outcome = search(OpenAlex(SYNERGY), f"references: {CITES_TWO}")
    seed = next(work for work in SYNERGY if short(work["id"]) == CITES_TWO)
    held = {short(work["id"]) for work in SYNERGY}
    cited = sorted((short(w) for w in seed["referenced_works"] if short(w) in held), key=lambda w: int(w[1:]))
    assert [record.custom.openalex for record in outcome.records] == cited == ["W2098430271", "W2144529104"]
    assert outcome.total == len(set(seed["referenced_works"]))  # every work it cites, found or not
    # The works this small world lacks are named, not hidden; their absence is OpenAlex's answer.
    assert outcome.complete and f"no record for {counted(outcome.total - 2, 'requested id')}" in outcome.warnings[0]


def test_forward_citation_search_finds_the_citing_works_newest_first():
    outcome = search(OpenAlex(SYNERGY), f"citing: {CITED}")
    expected = sorted(works_citing(CITED), key=lambda work: work["publication_date"], reverse=True)
    assert outcome.complete and outcome.total == 7
    assert [record.custom.openalex for record in outcome.records] == [short(work["id"]) for work in expected]


def test_a_doi_seed_is_resolved_to_its_work():
    work = next(work for work in SYNERGY if short(work["id"]) == CITED)
    by_doi = search(OpenAlex(SYNERGY), f"citing: {work['doi']}")
    assert [r.id for r in by_doi.records] == [r.id for r in search(OpenAlex(SYNERGY), f"citing: {CITED}").records]


def test_shared_keeps_works_cited_by_two_seeds_most_shared_first():
    seeds = ["W2112689297", "W2098430271", "W2126189390"]  # three of the works citing CITED
    lists = [set(next(w for w in SYNERGY if short(w["id"]) == s)["referenced_works"]) for s in seeds]
    counts = {short(ref): sum(ref in refs for refs in lists) for refs in lists for ref in refs}
    shared = sorted((ref for ref, n in counts.items() if n >= 2), key=lambda ref: (-counts[ref], int(ref[1:])))
    outcome = search(OpenAlex(SYNERGY), "shared: " + ", ".join(seeds))
    assert outcome.total == len(shared) and CITED in shared
    held = {short(work["id"]) for work in SYNERGY}
    assert [r.custom.openalex for r in outcome.records] == [ref for ref in shared if ref in held] == [CITED]


def test_the_order_does_not_depend_on_how_seeds_or_works_are_listed():
    seeds = ["W2112689297", "W2098430271", "W2126189390"]
    for mode in ("references", "citing", "shared"):
        forward = search(OpenAlex(SYNERGY), f"{mode}: " + ", ".join(seeds))
        backward = search(OpenAlex(list(reversed(SYNERGY))), f"{mode}: " + ", ".join(reversed(seeds)))
        assert [r.id for r in forward.records] == [r.id for r in backward.records], mode
        assert forward.records or mode == "citing"


def test_an_unknown_seed_is_a_warning_and_the_slice_incomplete():
    outcome = search(OpenAlex(SYNERGY), f"references: {CITES_TWO}, W1")
    assert outcome.status == "ok" and not outcome.complete
    assert "OpenAlex has no work for the seed W1" in outcome.doubt
    assert len(outcome.records) == 2  # what the other seed leads to is still read


def test_an_outage_mid_way_is_an_outage_not_an_answer():
    world = OpenAlex(SYNERGY)
    world.fail_after = 2  # the two seeds resolve, then the citing works cannot be read
    outcome = search(world, f"citing: {CITED}, {CITES_TWO}")
    assert outcome.status == "unavailable" and not outcome.records and not outcome.complete


def test_more_references_than_a_run_follows_is_truncated(monkeypatch):
    monkeypatch.setattr(openalex, "MAX_IDS_PER_SEED", 3)
    outcome = search(OpenAlex(SYNERGY), f"references: {CITES_TWO}")
    assert outcome.truncated and not outcome.complete
    assert "only the first 3 were followed" in outcome.warnings[0]


# --------------------------------------------------------------------------- as a saved search


def new_review(sitegen, tmp_path: Path) -> Path:
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2023-01-01T00:00:00Z")
    return review


def ledger(review: Path) -> list[dict]:
    return [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]


def test_a_citation_search_reruns_reporting_only_new_citing_works(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    before_2012 = [work for work in SYNERGY if work["publication_date"] < "2012"]
    world = OpenAlex(before_2012)  # by the second run, the later citing works are indexed
    strategy = Strategy(source="openalex", method="citations", query=f"citing: {CITED}")
    first = add_monitor(review, "citations", [strategy], FIRST, "live", settings=SETTINGS,
                        transport=httpx.MockTransport(world))
    world.works = list(SYNERGY)
    second = update(review, SECOND, "live", settings=SETTINGS, transport=httpx.MockTransport(world))
    assert first.complete and second.complete
    early = {short(w["id"]) for w in works_citing(CITED, before_2012)}
    late = {short(w["id"]) for w in works_citing(CITED)} - early
    assert early and late
    records = {json.loads(line)["id"]: json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()}
    assert {records[i]["custom"]["openalex"] for i in first.searches[0].new} == early
    assert {records[i]["custom"]["openalex"] for i in second.searches[0].new} == late
    retrievals = [event["payload"] for event in ledger(review) if event["type"] == "retrieval"]
    assert [payload["method"] for payload in retrievals] == ["other", "other"]
    manifest = json.loads((review / second.searches[0].manifest).read_text())
    assert manifest["sources"][0]["method"] == "other"
    assert manifest["sources"][0]["provider_query"] == f"citing: {CITED}" and manifest["sources"][0]["syntax"] == "citations"
    assert sitegen("check", review)[0] == 0


def test_prisma_counts_a_citation_search_under_other_methods(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    world = OpenAlex(SYNERGY)  # the database search finds SYNERGY[:3], CITED among them
    database = Strategy(source="openalex", query="search=object")
    citations = Strategy(source="openalex", method="citations", query=f"references: {CITES_TWO}")
    add_monitor(review, "both", [database, citations], FIRST, "live", settings=SETTINGS,
                transport=httpx.MockTransport(world))
    later = Strategy(source="openalex", method="citations", query=f"citing: {CITED}")
    add_monitor(review, "later", [later], SECOND, "live", settings=SETTINGS, transport=httpx.MockTransport(world))
    counts = open_review(review).facts.prisma
    first, second = counts.runs
    # CITED, found in the first run by the database search and by the citation search, belongs to the
    # databases route; the other work the seed cites was found by citation searching alone.
    assert first.identified_by_source == {"openalex": 3} and first.identified_other_by_source == {
        "Citation searching": 1}
    assert first.returned_by_source == {"openalex": 3}  # each route's sources on its own: a database arm's line
    assert first.other_returned_by_source == {"Citation searching": 2}
    # The second run's citing works, less those the first run already identified.
    known = {short(work["id"]) for work in SYNERGY[:3]} | {"W2098430271"}
    citing = {short(work["id"]) for work in works_citing(CITED)}
    assert second.identified_other_methods == len(citing - known) and second.identified_databases == 0
    assert counts.identified_other_by_source == {"Citation searching": 1 + len(citing - known)}
    assert counts.identified_databases == 3


def test_the_searches_page_shows_a_citation_search_with_its_seeds(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    strategy = Strategy(source="openalex", method="citations", query=f"references: {CITES_TWO}, W1")
    result = add_monitor(review, "citations", [strategy], FIRST, "live", settings=SETTINGS,
                         transport=httpx.MockTransport(OpenAlex(SYNERGY)))
    assert not result.complete  # W1 is no work: the run says so
    code, _, _ = sitegen("build", review, "--out", tmp_path / "site")
    assert code == 0
    page = (tmp_path / "site" / "searches.html").read_text()
    assert "Citation searching" in page and "backward citation searching" in page
    assert 'href="https://openalex.org/W1"' in page and "not a record of this review" in page
    assert "Citation searching (OpenAlex)" in page and "OpenAlex has no work for the seed W1" in page
    svg = next((tmp_path / "site").rglob("prisma*.svg")).read_text()
    assert "Citation searching" in svg


def test_a_seed_held_by_the_review_links_to_its_record(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    add_monitor(review, "citations", [Strategy(source="openalex", method="citations", query=f"citing: {CITED}")],
                FIRST, "live", settings=SETTINGS, transport=httpx.MockTransport(OpenAlex(SYNERGY)))
    seed = next(work for work in SYNERGY if short(work["id"]) == CITES_TWO)  # a citing work, now in the review
    add_monitor(review, "more", [Strategy(source="openalex", method="citations", query=f"references: {seed['doi']}")],
                SECOND, "live", settings=SETTINGS, transport=httpx.MockTransport(OpenAlex(SYNERGY)))
    assert sitegen("build", review, "--out", tmp_path / "site")[0] == 0
    page = (tmp_path / "site" / "searches.html").read_text()
    assert f'<a href="records/{page_slug(seed["doi"].removeprefix("https://doi.org/"))}.html" dir="auto">' in page


def test_check_reports_a_broken_citation_query_with_file_and_line(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    (review / "searches").mkdir(exist_ok=True)
    (review / "searches" / "broken.json").write_text(json.dumps({
        "schema_version": "1.0", "monitor_id": "broken",
        "strategies": [{"source": "openalex", "method": "citations", "query": "shared: W2144529104"}]}, indent=2))
    code, out, _ = sitegen("check", review)
    assert code != 0
    assert "searches/broken.json:8:" in out and "shared: takes 2 to 5 seeds, not 1" in out


def test_monitor_add_takes_citation_searches(sitegen, tmp_path, monkeypatch):
    review = new_review(sitegen, tmp_path)
    before = tree_bytes(review)
    code, out, err = sitegen("monitor", "add", review, "--id", "cites", "--citations", "citing: nothing",
                             "--at", FIRST)
    assert code != 0 and "--citations" in err + out and "'nothing' is neither" in err + out
    code, _, err = sitegen("monitor", "add", review, "--id", "cites", "--at", FIRST)
    assert code != 0 and "--strategy or --citations" in err
    assert tree_bytes(review) == before
    served = httpx.MockTransport(OpenAlex(SYNERGY))
    monkeypatch.setattr("sitegen.living.update.open_fetcher", lambda mode, snapshots, session="", transport=None:
                        open_fetcher(mode, snapshots, session, transport=served))
    code, out, err = sitegen("monitor", "add", review, "--id", "cites", "--citations", f"citing: {CITED}",
                             "--at", FIRST)
    assert code == 0, err
    saved = json.loads((review / "searches" / "cites.json").read_text())
    assert saved["strategies"] == [{"source": "openalex", "method": "citations", "query": f"citing: {CITED}"}]
    assert "7 new records" in out


def test_the_example_review_is_unchanged_and_its_ledger_hashes_hold():
    review, problems = load_review(EXAMPLE)
    assert not problems and not verify_chain(review.ledger)
    for event in review.ledger:
        if event.type == "retrieval":
            assert model_data(RetrievalPayload.model_validate(event.payload)) == event.payload


def test_add_monitor_refuses_a_broken_query_before_asking_anyone(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    strategy = Strategy.model_construct(source="openalex", method="citations", query="citing:", syntax="native",
                                        endpoint=None, label=None)
    with pytest.raises(SitegenError, match="names no seed work"):
        add_monitor(review, "x", [strategy], FIRST, "live", settings=SETTINGS,
                    transport=httpx.MockTransport(lambda request: pytest.fail("asked")))


def test_a_doi_and_an_id_of_one_work_are_one_seed():
    """Otherwise every reference of that work would look shared by two seeds."""
    seed = next(work for work in SYNERGY if short(work["id"]) == CITES_TWO)
    outcome = search(OpenAlex(SYNERGY), f"shared: {seed['doi']}, {CITES_TWO}")
    assert outcome.records == [] and outcome.total == 0
    assert f"is {CITES_TWO}, given already as {seed['doi']}: it counts once" in outcome.warnings[0]
    # One real seed: "shared" cannot be run, so the slice is unknown, never "complete, nothing new".
    assert not outcome.complete and f"{seed['doi']} and {CITES_TWO} are one work" in outcome.doubt
