"""`sitegen search`: several providers, one merged result, honest about what is missing."""

from __future__ import annotations

import json

import httpx
from conftest import EXAMPLE, FIXTURES
from http_mocks import fetcher, json_response

from sitegen.sources.search import search
from sitegen.sources.settings import SourceSettings

QUERY = '"object-in-context" OR "object in context" OR "object-context recognition"'
SYNERGY = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
CORE = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_text())


def test_replay_on_the_example_review(sitegen):
    code, out, err = sitegen("search", QUERY, "--sources", "openalex", "--snapshots", "replay",
                             "--review", EXAMPLE, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert set(report) >= {"records", "warnings", "sources", "counts"}
    assert report["sources"] == ["openalex"] and report["warnings"] == []
    assert report["counts"] == {"retrieved": 271, "deduplicated": 271, "duplicates_removed": 0}
    ids = [json.loads(line)["id"] for line in (EXAMPLE / "records.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in report["records"]) == ids
    assert "searching OpenAlex" in err  # progress goes to stderr, the JSON to stdout


def test_replay_is_identical_twice(sitegen):
    args = ("search", QUERY, "--sources", "openalex", "--snapshots", "replay", "--review", EXAMPLE, "--json")
    assert sitegen(*args)[1] == sitegen(*args)[1]


def two_providers(europepmc_status: int = 200):
    """OpenAlex answers with real SYNERGY works; Europe PMC with a real core result whose identifiers and
    title were edited to those of the first SYNERGY work (no recording shows one paper in both)."""
    shared = dict(CORE["resultList"]["result"][0], doi=SYNERGY[0]["doi"].removeprefix("https://doi.org/"),
                  pmid=SYNERGY[0]["ids"]["pmid"].rsplit("/", 1)[1], title=SYNERGY[0]["title"])
    shared.pop("pmcid", None)
    europepmc_body = {"hitCount": 1, "nextCursorMark": "AoE", "resultList": {"result": [shared]}}
    openalex_body = {"meta": {"count": 3, "next_cursor": None}, "results": SYNERGY[:3]}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps(openalex_body))
        if europepmc_status != 200:
            return httpx.Response(europepmc_status)
        return json_response(json.dumps(europepmc_body))
    return handler


def test_records_found_by_two_sources_are_merged():
    fetch, seen, _ = fetcher(two_providers())
    result = search(fetch, "object AND context", ["openalex", "europepmc"], settings=SourceSettings())
    report = result.report()
    assert report["counts"] == {"retrieved": 4, "deduplicated": 3, "duplicates_removed": 1}
    assert report["sources"] == ["openalex", "europepmc"]
    merged = next(r for r in result.records if r.id == SYNERGY[0]["doi"].removeprefix("https://doi.org/"))
    assert merged.custom.sources == ["openalex", "europepmc"]
    europepmc_request = next(r for r in seen.requests if r.url.host == "www.ebi.ac.uk")
    assert europepmc_request.url.params["query"] == '"object" AND "context"'  # compiled for Europe PMC


def test_a_downed_source_is_named_and_the_exit_status_says_so(sitegen, monkeypatch):
    import sitegen.sources.search as search_module

    real_open = search_module.open_fetcher
    monkeypatch.setattr(search_module, "open_fetcher",
                        lambda mode, snapshots, session="": fetcher(two_providers(europepmc_status=503))[0])
    code, out, err = sitegen("search", "object AND context", "--sources", "openalex,europepmc", "--json")
    monkeypatch.setattr(search_module, "open_fetcher", real_open)
    assert code == 3
    report = json.loads(out)
    assert report["sources"] == ["openalex"]
    assert report["counts"]["retrieved"] == 3
    assert "Europe PMC was not reached this run (unavailable); new Europe PMC records may be missing" in err
    assert any("HTTP 503" in warning for warning in report["warnings"])


def test_a_source_not_reached_is_named_once_in_each_line_that_says_so(sitegen, monkeypatch):
    """Each layer named the source again: "openalex: OpenAlex was not reached this run (unavailable); new OpenAlex
    records may be missing: OpenAlex unavailable: OpenAlex could not be reached (ConnectError)"."""
    import sitegen.sources.search as search_module

    def offline(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no network", request=request)

    monkeypatch.setattr(search_module, "open_fetcher", lambda mode, snapshots, session="": fetcher(offline)[0])
    code, out, err = sitegen("search", "object AND context", "--sources", "openalex,europepmc")
    assert code == 3
    for name in ("OpenAlex", "Europe PMC"):
        said = (f"{name} was not reached this run (unavailable); new {name} records may be missing: could not be "
                "reached (ConnectError)")
        # Said once, as a warning on stderr: the progress line only says the source fell short, stdout the results.
        assert err.splitlines().count(f"warning: {said}") == 1 and said not in out, (out, err)
        assert f"{name}: unavailable (the warning below says more)" in err.splitlines()
        assert sum(said in line for line in err.splitlines()) == 1
    code, out, _ = sitegen("search", "object AND context", "--sources", "openalex", "--json")
    assert json.loads(out)["warnings"] == ["OpenAlex unavailable: could not be reached (ConnectError)"]


def test_a_query_a_provider_cannot_express_is_unsupported_not_empty():
    fetch, seen, _ = fetcher(two_providers())
    result = search(fetch, "abstract:hippocampus", ["pubmed"], settings=SourceSettings())
    [outcome] = result.outcomes
    assert outcome.status == "unsupported" and seen.requests == []
    assert "PubMed cannot run this query" in outcome.warnings[0]
    assert not result.complete


def test_grammar_errors_point_at_the_position(sitegen):
    code, _, err = sitegen("search", 'title:"object in context" AND (rat OR mouse', "--sources", "openalex")
    assert code == 2 and "Invalid value for 'QUERY'" in err  # a query wrong in itself: the command line is
    assert "position 31: this parenthesis is never closed" in err
    assert "\n                                ^" in err


def test_bad_arguments(sitegen):
    code, _, err = sitegen("search", "x", "--sources", "scopus")
    assert code == 2 and "Invalid value for '--sources': unknown source(s) scopus" in err
    code, _, err = sitegen("search", "x", "--snapshots", "replay")
    assert code == 2 and "Invalid value for '--snapshots': replay needs a review folder" in err


def test_missing_snapshot_in_replay_is_an_error_naming_the_request(sitegen):
    code, _, err = sitegen("search", "something never recorded", "--sources", "openalex", "--snapshots", "replay",
                           "--review", EXAMPLE)
    assert code == 1
    assert "no recorded response for GET https://api.openalex.org/works?search=something+AND+never+AND+recorded" in err


def test_snapshot_mode_from_the_environment(sitegen, monkeypatch):
    monkeypatch.setenv("SITEGEN_SNAPSHOT_MODE", "replay")
    code, _, err = sitegen("search", "x", "--sources", "openalex")
    assert code == 2 and "needs a review folder" in err


def test_a_review_folder_that_is_not_there_is_named(sitegen, tmp_path):
    # A replay from a folder that does not exist said "no recorded response for GET ...", as if one were missing.
    code, _, err = sitegen("search", "x", "--snapshots", "replay", "--review", tmp_path / "missing")
    assert code == 2 and "does not exist" in err and "no recorded response" not in err


def test_each_source_answer_is_said_once(sitegen):
    """"OpenAlex: 271 records" was printed on stderr as progress and again on stdout: stdout holds the results."""
    code, out, err = sitegen("search", QUERY, "--sources", "openalex", "--snapshots", "replay", "--review", EXAMPLE)
    assert code == 0, err
    assert "OpenAlex: 271 records" in err.splitlines() and "OpenAlex: 271 records" not in out
    assert out.splitlines()[-1].startswith("271 retrieved by the database searches")
