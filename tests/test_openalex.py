"""OpenAlex client on real recorded responses (paper-qa cassettes, SYNERGY works)."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

import httpx
from conftest import FIXTURES
from http_mocks import fetcher, json_response

from sitegen.sources import openalex
from sitegen.sources.settings import SourceSettings

DIR = FIXTURES / "openalex"
SETTINGS = SourceSettings(contact_email="team@example.org", openalex_api_key="oa-secret-key", openalex_per_page=10)
LIST = (DIR / "openalex_works_list_title_search_paperqa.json").read_bytes()
WORK = (DIR / "openalex_work_doi_10.1023_a_1007154515475.json").read_bytes()
NOT_FOUND = (DIR / "openalex_work_404.json").read_bytes()
SYNERGY = json.loads((DIR / "synergy_sep2021_works_0_25.json").read_text())


def test_search_parses_a_real_list_response():
    fetch, seen, _ = fetcher(lambda request: json_response(LIST))
    outcome = openalex.search(fetch, SETTINGS, {"filter": "title.search:PaperQA"})
    assert outcome.status == "ok" and outcome.total == 1
    [record] = outcome.records
    assert record.id == "10.48550/arxiv.2312.07559"
    assert record.custom.arxiv == "2312.07559"
    assert record.custom.openalex == "W4389761608"
    params = dict(parse_qsl(seen.requests[0].url.query.decode()))
    assert params["filter"] == "title.search:PaperQA" and params["cursor"] == "*" and params["per_page"] == "10"
    # the key and contact go to OpenAlex, but never into what is reported as executed
    assert params["api_key"] == "oa-secret-key" and params["mailto"] == "team@example.org"
    assert outcome.executed_query == ["GET https://api.openalex.org/works?filter=title.search%3APaperQA&per_page=10&cursor=%2A"]


def test_key_can_travel_in_a_header_instead():
    fetch, seen, _ = fetcher(lambda request: json_response(LIST))
    openalex.search(fetch, SETTINGS.model_copy(update={"openalex_key_in": "header"}), {"search": "x"})
    request = seen.requests[0]
    assert request.headers["authorization"] == "Bearer oa-secret-key"
    assert "api_key" not in request.url.query.decode()


def synergy_pages(per_page: int):
    """Cursor paging built from 25 real SYNERGY works (no real recording of OpenAlex paging exists)."""
    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params["cursor"]
        start = 0 if cursor == "*" else int(cursor)
        page = SYNERGY[start:start + per_page]
        following = str(start + per_page) if start + per_page < len(SYNERGY) else None
        return json_response(json.dumps({"meta": {"count": len(SYNERGY), "next_cursor": following}, "results": page}))
    return handler


def test_cursor_paging_reads_every_page():
    fetch, seen, _ = fetcher(synergy_pages(10))
    outcome = openalex.search(fetch, SETTINGS, {"search": "object in context"}, since=1990)
    assert outcome.status == "ok"
    assert len(outcome.records) == 25 == outcome.total
    assert [r.url.params["cursor"] for r in seen.requests] == ["*", "10", "20"]
    assert seen.requests[0].url.params["filter"] == "from_publication_date:1990-01-01"
    assert len(outcome.executed_query) == 3


def test_a_short_body_is_an_outage_not_an_empty_success():
    body = json.dumps({"meta": {"count": 120, "next_cursor": None}, "results": []})
    fetch, _, _ = fetcher(lambda request: json_response(body))
    outcome = openalex.search(fetch, SETTINGS, {"search": "x"})
    assert outcome.status == "unavailable"
    assert "reported 120 matches but returned 0" in outcome.warnings[0]


def test_empty_result_is_ok_with_zero():
    fetch, _, _ = fetcher(lambda request: json_response('{"meta": {"count": 0, "next_cursor": null}, "results": []}'))
    outcome = openalex.search(fetch, SETTINGS, {"search": "nothing matches this"})
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0


def test_lookup_by_doi_on_a_real_work():
    fetch, seen, _ = fetcher(lambda request: json_response(WORK))
    outcome = openalex.lookup(fetch, SETTINGS, "https://doi.org/10.1023/A:1007154515475")
    assert outcome.status == "ok"
    [record] = outcome.records
    assert record.id == "10.1023/a:1007154515475" and record.custom.openalex == "W1554322594"
    assert seen.requests[0].url.path == "/works/doi:10.1023/a:1007154515475"


def test_lookup_404_is_empty_not_an_outage():
    fetch, _, _ = fetcher(lambda request: httpx.Response(404, content=NOT_FOUND, headers={"content-type": "text/html"}))
    outcome = openalex.lookup(fetch, SETTINGS, "10.1046/j.1365-2699.2003.00795")
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0


def test_lookup_answered_with_another_record_is_refused():
    fetch, _, _ = fetcher(lambda request: json_response(WORK))
    outcome = openalex.lookup(fetch, SETTINGS, "W2741809807")
    assert outcome.status == "unavailable"
    assert "different record" in outcome.warnings[0]


def test_retracted_flag_is_kept():
    work = dict(SYNERGY[0], is_retracted=True)  # no real retracted work is recorded; flag set on a real one
    assert openalex.work_to_record(work).custom.retracted is True


def test_citation_graph():
    work = json.loads(WORK)
    references = openalex.related_ids(work, "referenced_works")
    assert references and all(r.startswith("W") for r in references)
    asked = []

    def handler(request):
        asked.append(request.url.params["filter"])
        return json_response(json.dumps({"meta": {"count": 1, "next_cursor": None}, "results": [SYNERGY[0]]}))

    fetch, _, _ = fetcher(handler)
    outcome = openalex.works_by_ids(fetch, SETTINGS, ["W1979978981", "W999"])
    assert asked == ["openalex:W1979978981|W999"]
    assert [r.custom.openalex for r in outcome.records] == ["W1979978981"]
    assert "no record for 1 requested id(s): W999" in outcome.warnings[0]
    fetch, seen, _ = fetcher(synergy_pages(25))
    assert openalex.citing(fetch, SETTINGS, "W1554322594").status == "ok"
    assert seen.requests[0].url.params["filter"] == "cites:W1554322594"


def test_native_strategy_is_passed_verbatim():
    assert openalex.native_params("CRISPR off-target detection") == {"search": "CRISPR off-target detection"}
    assert openalex.native_params("filter=title.search:crispr,publication_year:2020") == {
        "filter": "title.search:crispr,publication_year:2020"}
