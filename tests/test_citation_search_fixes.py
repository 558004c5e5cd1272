"""Citation searching, where a seed's identifier, its data or its fate at OpenAlex is not what a plain run meets:
identifiers holding characters a URL gives meaning to, reference lists OpenAlex lacks, merged seeds, equivalent
strategies written differently, and what a citation search's `total` counts.

The world is the small OpenAlex of tests/test_citation_search.py (real SYNERGY Work objects); where a case
needs a work that real data does not hold (a DOI with '?', a seed with no reference list), one real work is
changed in that one respect, and the test says so.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import httpx
import pytest
from http_mocks import fetcher, json_response
from test_citation_search import CITED, CITES_TWO, FIRST, SETTINGS, SYNERGY, OpenAlex, new_review, search, short

from sitegen.commands import add_monitor
from sitegen.errors import SitegenError
from sitegen.records.citations import CitationQueryError, parse_citation_query
from sitegen.records.ids import normalise_doi, normalise_openalex, normalise_pmcid, normalise_pmid
from sitegen.review.models import Strategy
from sitegen.sources import openalex
from sitegen.sources.search import open_fetcher, run_strategy
from sitegen.sources.settings import SourceSettings


def work(openalex_id: str, **changes) -> dict:
    return {**next(w for w in SYNERGY if short(w["id"]) == openalex_id), **changes}


class Renamed(OpenAlex):
    """The world with CITED's DOI replaced by `doi`, written in its resolver address percent-encoded (as an
    address must hold a '?' or '#' of the DOI)."""

    def __init__(self, doi: str):
        self.cited = work(CITED, doi="https://doi.org/" + quote(doi, safe="/"))
        super().__init__([self.cited if short(w["id"]) == CITED else w for w in SYNERGY])
        self.doi = doi

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == f"/works/doi:{self.doi}":  # httpx gives the path decoded
            self.requests.append(request)
            return json_response(json.dumps(self.cited))
        return super().__call__(request)


# --------------------------------------------------------------------------- 1: identifiers in request paths


@pytest.mark.parametrize(("doi", "encoded"), [
    ("10.1000/a?b", "a%3Fb"), ("10.1000/a#b", "a%23b"), ("10.1000/a%zz", "a%25zz"), ("10.1000/café", "caf%C3%A9"),
])
def test_a_doi_holding_url_characters_stays_in_the_path(doi, encoded):
    world = Renamed(doi)
    fetch, recorder, _ = fetcher(world)
    found = openalex.lookup(fetch, SETTINGS, doi)
    assert found.complete and [record.id for record in found.records] == [doi]
    assert recorder.requests[0].url.raw_path.decode().endswith(f"/works/doi:10.1000/{encoded}")
    outcome = search(world, f"citing: {doi}")
    assert outcome.complete and len(outcome.records) == 7  # the works citing CITED, found through its odd DOI


def test_a_doi_sitegen_cannot_read_is_an_outcome_not_a_traceback():
    fetch, recorder, _ = fetcher(lambda request: pytest.fail("asked"))
    outcome = openalex.lookup(fetch, SETTINGS, "10.1000/a b")
    assert outcome.status == "unsupported" and "is not an OpenAlex id, DOI or PMID" in outcome.warnings[0]
    with pytest.raises(CitationQueryError, match="is neither an OpenAlex work id"):
        parse_citation_query("citing: 10.1000/a b")


def test_a_saved_search_with_such_a_doi_runs(tmp_path, sitegen):
    review = new_review(sitegen, tmp_path)
    strategy = Strategy(source="openalex", method="citations", query="citing: 10.1000/a?b")
    result = add_monitor(review, "odd", [strategy], FIRST, "live", settings=SETTINGS,
                         transport=httpx.MockTransport(Renamed("10.1000/a?b")))
    assert result.complete and len(result.searches[0].new) == 7
    assert sitegen("check", review)[0] == 0


# --------------------------------------------------------------------------- 2: reference data OpenAlex lacks


@pytest.mark.parametrize(("value", "said"), [
    (None, "OpenAlex sent no referenced works for"),
    ("W1", "OpenAlex sent unreadable referenced works for"),
    ([], "OpenAlex lists no references for"),
    (["not an id", "https://openalex.org/W2144529104"], "1 of the referenced works OpenAlex lists for"),
])
def test_a_seed_whose_references_are_missing_is_doubt_not_nothing(value, said):
    """CITES_TWO with its reference list changed; the other seed is still followed."""
    seed = work(CITES_TWO, referenced_works=value)
    world = OpenAlex([seed if short(w["id"]) == CITES_TWO else w for w in SYNERGY])
    outcome = search(world, f"references: {CITES_TWO}, W2112689297")
    assert outcome.status == "ok" and not outcome.complete
    assert said in outcome.doubt and CITES_TWO in outcome.doubt
    assert outcome.records  # what the other seed cites


def test_a_missing_key_and_a_short_list_are_doubt_too():
    seed = work(CITES_TWO)
    del seed["referenced_works"]
    outcome = search(OpenAlex([seed]), f"references: {CITES_TWO}")
    assert not outcome.complete and f"OpenAlex sent no referenced works for {CITES_TWO}" in outcome.doubt
    seed = work(CITES_TWO, referenced_works_count=len(work(CITES_TWO)["referenced_works"]) + 5)
    outcome = search(OpenAlex([seed]), f"references: {CITES_TWO}")
    assert not outcome.complete and "its data may be incomplete" in outcome.doubt
    seed = work(CITES_TWO, related_works=None)
    outcome = search(OpenAlex([seed]), f"related: {CITES_TWO}")
    assert not outcome.complete and f"no related works for {CITES_TWO}" in outcome.doubt


def test_a_seed_with_its_whole_reference_list_is_complete():
    outcome = search(OpenAlex(SYNERGY), f"references: {CITES_TWO}")
    assert outcome.complete and outcome.doubt is None


# --------------------------------------------------------------------------- 3: merged or redirected seeds


def test_a_redirected_seed_is_doubt_naming_it_and_the_others_are_read():
    world = OpenAlex(SYNERGY)

    def served(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/works/W1":  # OpenAlex merged W1 into CITES_TWO
            return httpx.Response(301, headers={"location": f"https://api.openalex.org/works/{CITES_TWO}"})
        return world(request)
    fetch, _, _ = fetcher(served)
    outcome = openalex.citation_search(fetch, SETTINGS, parse_citation_query(f"citing: W1, {CITED}"))
    assert outcome.status == "ok" and not outcome.complete and len(outcome.records) == 7
    assert f"OpenAlex redirects the seed W1 to {CITES_TWO}" in outcome.doubt
    assert "not reached" not in outcome.doubt


def test_a_seed_answered_with_another_work_is_doubt_naming_both():
    world = OpenAlex(SYNERGY)

    def served(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/works/W1":
            return json_response(json.dumps(work(CITES_TWO)))
        return world(request)
    fetch, _, _ = fetcher(served)
    outcome = openalex.citation_search(fetch, SETTINGS, parse_citation_query(f"citing: W1, {CITED}"))
    assert outcome.status == "ok" and not outcome.complete and len(outcome.records) == 7
    assert f"OpenAlex answers the seed W1 with another work, {CITES_TWO}" in outcome.doubt
    # A lookup (as `sitegen verify` makes) still refuses a response for a different record: no record of it, the
    # other work kept apart as what OpenAlex answered instead (an answer, not an outage).
    refused = openalex.lookup(fetcher(served)[0], SETTINGS, "W1")
    assert refused.records == [] and not refused.complete and refused.instead.custom.openalex == CITES_TWO


def test_a_seed_answered_without_a_title_is_doubt_naming_it_not_an_outage():
    # the real seed W1 with its title removed: OpenAlex answers the same when asked again, so the run is no outage,
    # the seed is named as not followed and the others are read
    world = OpenAlex(SYNERGY)

    def served(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/works/W1":
            return json_response(json.dumps(work(CITES_TWO, id="https://openalex.org/W1", title=None,
                                                 display_name=None)))
        return world(request)
    fetch, _, _ = fetcher(served)
    outcome = openalex.citation_search(fetch, SETTINGS, parse_citation_query(f"citing: W1, {CITED}"))
    assert outcome.status == "ok" and not outcome.complete and len(outcome.records) == 7
    assert "OpenAlex answers the seed W1 with the work, " in outcome.doubt
    assert "which has no title, so nothing was followed from it" in outcome.doubt


# --------------------------------------------------------------------------- 4: equivalent strategies


@pytest.mark.parametrize(("first", "again"), [
    ("citing: W2144529104", "citing:W2144529104"),
    ("citing: W2144529104, W2610559583", "citing: https://openalex.org/W2610559583, w2144529104"),
    ("references: 10.1016/S0166-4328(98)00079-5", "references: https://doi.org/10.1016/s0166-4328(98)00079-5"),
])
def test_equivalent_citation_strategies_are_refused_side_by_side(sitegen, tmp_path, first, again):
    review = new_review(sitegen, tmp_path)
    strategies = [Strategy(source="openalex", method="citations", query=text) for text in (first, again)]
    with pytest.raises(SitegenError, match="asks what an earlier one asks"):
        add_monitor(review, "twice", strategies, FIRST, "live", settings=SETTINGS,
                    transport=httpx.MockTransport(lambda request: pytest.fail("asked")))
    assert not (review / "searches" / "twice.json").exists()


def test_check_names_equivalent_strategies_with_file_and_line(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    (review / "searches").mkdir(exist_ok=True)
    (review / "searches" / "twice.json").write_text(json.dumps({
        "schema_version": "1.0", "monitor_id": "twice", "strategies": [
            {"source": "openalex", "method": "citations", "query": f"shared: {CITED}, {CITES_TWO}"},
            {"source": "openalex", "method": "citations", "query": f"shared:{CITES_TWO},{CITED}"},
            {"source": "openalex", "query": "search=object"},
            {"source": "openalex", "query": "search=object "}]}, indent=2))
    code, out, _ = sitegen("check", review)
    assert code != 0
    assert "searches/twice.json:13:" in out and "strategies[1] repeats strategies[0]" in out
    assert "searches/twice.json:21:" in out and "strategies[3] repeats strategies[2]" in out


def test_different_citation_strategies_are_kept_apart():
    keys = {parse_citation_query(text).key for text in
            (f"citing: {CITED}", f"references: {CITED}", f"citing: {CITED}, {CITES_TWO}")}
    assert len(keys) == 3


# --------------------------------------------------------------------------- 6: what total counts


def test_total_counts_distinct_citing_works():
    seeds = ["W2112689297", CITED]  # W2112689297 cites CITED: works citing both are counted once
    outcome = search(OpenAlex(SYNERGY), "citing: " + ", ".join(seeds))
    assert outcome.complete and outcome.total == len(outcome.records)
    assert len({r.id for r in outcome.records}) == len(outcome.records)


def test_citing_seeds_share_one_runs_record_cap():
    fetch, recorder, _ = fetcher(OpenAlex(SYNERGY))
    settings = SourceSettings(max_records=5, openalex_per_page=10)
    query = parse_citation_query(f"citing: {CITED}, W2112689297")
    outcome = openalex.citation_search(fetch, settings, query)
    assert outcome.truncated and not outcome.complete and outcome.total is None
    assert len(outcome.records) <= 5
    assert "the works citing W2112689297 were not read" in " ".join(outcome.warnings)
    assert not any("cites:W2112689297" in str(request.url) for request in recorder.requests)


def test_a_seed_listing_more_than_a_run_follows_has_no_total(monkeypatch):
    monkeypatch.setattr(openalex, "MAX_IDS_PER_SEED", 3)
    outcome = search(OpenAlex(SYNERGY), f"references: {CITES_TWO}")
    assert outcome.truncated and outcome.total is None


# --------------------------------------------------------------------------- 7 and 8: how a seed is written


def test_only_ascii_digits_make_an_identifier():
    arabic = "\u0661\u0662\u0663\u0664"
    assert normalise_openalex(f"W{arabic}") is None and normalise_openalex("W1234") == "W1234"
    assert normalise_doi(f"10.{arabic}/x") is None and normalise_doi("10.1234/x") == "10.1234/x"
    assert normalise_pmcid(f"PMC{arabic}") is None and normalise_pmid(arabic) is None
    with pytest.raises(CitationQueryError, match="is neither an OpenAlex work id"):
        parse_citation_query(f"citing: W{arabic}")


def test_a_seed_with_leading_zeros_is_refused_clearly():
    with pytest.raises(CitationQueryError, match="an OpenAlex work id has no leading zeros"):
        parse_citation_query("citing: W000123, W123")


def test_a_doi_with_a_comma_points_at_the_openalex_id():
    with pytest.raises(CitationQueryError, match=r"commas separate seeds.*OpenAlex id \(W…\) instead"):
        parse_citation_query("citing: 10.1000/a,b")


def test_run_strategy_never_raises_for_a_saved_citation_search():
    fetch, _, _ = fetcher(Renamed("10.1000/a#b"))
    outcome = run_strategy(fetch, SETTINGS, "openalex", "citing: 10.1000/a#b", native=True, method="citations")
    assert outcome.complete


def test_monitor_add_with_such_a_doi_runs_from_the_command_line(sitegen, tmp_path, monkeypatch):
    review = new_review(sitegen, tmp_path)
    served = httpx.MockTransport(Renamed("10.1000/a?b"))
    monkeypatch.setattr("sitegen.living.update.open_fetcher", lambda mode, snapshots, session="", transport=None:
                        open_fetcher(mode, snapshots, session, transport=served))
    code, out, err = sitegen("monitor", "add", review, "--id", "odd", "--citations", "citing: 10.1000/a?b",
                             "--at", FIRST)
    assert code == 0 and "Traceback" not in err and "7 new records" in out


def test_listed_works_of_which_openalex_sends_none_are_doubt_not_nothing():
    # The seed lists its references, but the batch lookup of them answers with none: no answer, never "no
    # new records" (a listed work OpenAlex merged away may be missing; every one is a fault).
    world = OpenAlex(SYNERGY)

    def served(request: httpx.Request) -> httpx.Response:
        if "openalex:" in request.url.params.get("filter", ""):
            return json_response(json.dumps({"meta": {"count": 0, "next_cursor": None}, "results": []}))
        return world(request)
    fetch, _, _ = fetcher(served)
    outcome = openalex.citation_search(fetch, SETTINGS, parse_citation_query(f"references: {CITES_TWO}"))
    assert not outcome.complete and "OpenAlex sent none of the" in outcome.doubt
