"""A search strategy too long for an address is sent by POST where the provider takes one (E-utilities, Europe PMC,
arXiv), recorded as such, and replayed offline; a short one stays a GET, so recordings made before replay as they
were. The servers here answer as real ones do: 414 to a GET whose address is too long."""

from __future__ import annotations

from urllib.parse import parse_qsl

import httpx
import pytest
from conftest import FIXTURES
from http_mocks import fetcher, json_response

from sitegen.sources import arxiv, europepmc, openalex, pubmed, query
from sitegen.sources.http import MAX_ADDRESS
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import SnapshotStore

SETTINGS = SourceSettings(contact_email="team@example.org", ncbi_api_key="ncbi-secret-key")
# A strategy as a systematic review writes one: dozens of synonyms, each in a title/abstract field.
SYNONYMS = [f'"object recognition variant {n}"[tiab]' for n in range(80)]
LONG = "(" + " OR ".join(SYNONYMS) + ") AND (rat[tiab] OR mouse[tiab])"


def strict_server(answer):
    """A server that refuses an address longer than MAX_ADDRESS, as real ones refuse theirs, and answers a
    request (GET, or POST with a form body) through `answer(method, path, params)`."""
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            if len(str(request.url)) > MAX_ADDRESS:
                return httpx.Response(414, content=b"URI Too Long")
            return answer("GET", request.url.path, dict(request.url.params))
        assert request.headers["content-type"] == "application/x-www-form-urlencoded"
        assert not request.url.query  # every parameter in the body, none in the address
        return answer("POST", request.url.path, dict(parse_qsl(request.content.decode("ascii"))))
    return handler


def xml(body: bytes) -> httpx.Response:
    return httpx.Response(200, content=body, headers={"content-type": "text/xml; charset=UTF-8"})


def pubmed_answer(method: str, path: str, params: dict[str, str]) -> httpx.Response:
    if path.endswith("/esearch.fcgi"):
        assert params["api_key"] == "ncbi-secret-key"  # credentials go in the body too, never in what is recorded
        esearch = (FIXTURES / "pubmed" / "esearch2.xml").read_bytes()
        return xml(esearch.replace(b"<Count>42249</Count>", b"<Count>2</Count>", 1))
    assert method == "GET"  # an efetch from the history server is short: it stays a GET
    return xml((FIXTURES / "pubmed" / "pubmed1.xml").read_bytes())


def test_a_long_pubmed_strategy_is_posted_recorded_and_replayed(tmp_path):
    fetch, seen, _ = fetcher(strict_server(pubmed_answer), mode="record", store=SnapshotStore(tmp_path), session="s1")
    outcome = pubmed.search(fetch, SETTINGS, LONG)
    fetch.close()
    assert outcome.status == "ok" and [record.PMID for record in outcome.records] == ["12091962", "9997"]
    assert [request.method for request in seen.requests] == ["POST", "GET"]
    assert dict(parse_qsl(seen.requests[0].content.decode("ascii")))["term"] == LONG
    assert outcome.executed_query[0].startswith("POST https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi?")
    index = (tmp_path / "index.jsonl").read_text()
    assert '"method":"POST"' in index.replace(" ", "") and "ncbi-secret-key" not in index
    # Replayed offline, the POST is found by its own fingerprint and gives the same records.
    replay, offline, _ = fetcher(lambda request: pytest.fail("replay opened a connection"), mode="replay",
                                 store=SnapshotStore(tmp_path), session="s1")
    again = pubmed.search(replay, SETTINGS, LONG)
    assert again.status == "ok" and [r.PMID for r in again.records] == ["12091962", "9997"] and not offline.requests


def test_a_strategy_recorded_with_credentials_replays_without_them(tmp_path):
    # The scheduled run sends NCBI's key and a contact address; CI replays without them. The method is chosen on the
    # request as it is recorded, without them: a strategy whose address was within MAX_ADDRESS only without them was
    # recorded as a POST and looked for as a GET in the replay, which found no recording.
    def answer(request: httpx.Request) -> httpx.Response:
        esearch = (FIXTURES / "pubmed" / "esearch2.xml").read_bytes()
        if request.url.path.endswith("/esearch.fcgi"):
            return xml(esearch.replace(b"<Count>42249</Count>", b"<Count>2</Count>", 1))
        return xml((FIXTURES / "pubmed" / "pubmed1.xml").read_bytes())

    def address(query: str, settings: SourceSettings) -> str:
        probe, seen, _ = fetcher(answer)
        pubmed.search(probe, settings, query)
        return str(seen.requests[0].url)

    query = "object recognition"
    query += " memory" * ((MAX_ADDRESS - 10 - len(address(query, SourceSettings()))) // len("+memory"))
    credentials = len("&api_key=ncbi-secret-key&email=team%40example.org")
    assert len(address(query, SourceSettings())) <= MAX_ADDRESS < len(address(query, SourceSettings())) + credentials
    fetch, _, _ = fetcher(answer, mode="record", store=SnapshotStore(tmp_path), session="s1")
    assert pubmed.search(fetch, SETTINGS, query).status == "ok"
    fetch.close()
    replay, _, _ = fetcher(lambda request: pytest.fail("replay opened a connection"), mode="replay",
                           store=SnapshotStore(tmp_path), session="s1")
    again = pubmed.search(replay, SourceSettings(), query)
    assert again.status == "ok" and [r.PMID for r in again.records] == ["12091962", "9997"]


def test_a_short_strategy_stays_a_get():
    fetch, seen, _ = fetcher(strict_server(pubmed_answer))
    assert pubmed.search(fetch, SETTINGS, "object recognition").status == "ok"
    assert [request.method for request in seen.requests] == ["GET", "GET"]


def test_a_long_europe_pmc_query_goes_to_search_post():
    core = (FIXTURES / "europepmc" / "search_cancer_core.json").read_bytes()

    def answer(method: str, path: str, params: dict[str, str]) -> httpx.Response:
        assert (method, path) == ("POST", "/europepmc/webservices/rest/searchPOST") and params["query"] == LONG
        assert params["cursorMark"] == "*" and params["format"] == "json"
        return json_response(core)
    fetch, seen, _ = fetcher(strict_server(answer))
    outcome = europepmc.search(fetch, SourceSettings(max_records=25), LONG)
    assert outcome.total == 5059039 and len(outcome.records) == 25 and len(seen.requests) == 1


def test_a_long_arxiv_query_is_posted():
    page = (FIXTURES / "arxiv" / "q_testing_s0_m10_bc5a6c384fe9.atom.xml").read_bytes()
    query = " OR ".join(f'abs:"object recognition variant {n}"' for n in range(80))

    def answer(method: str, path: str, params: dict[str, str]) -> httpx.Response:
        assert (method, path) == ("POST", "/api/query") and params["search_query"] == query
        return httpx.Response(200, content=page, headers={"content-type": "application/atom+xml"})
    fetch, seen, _ = fetcher(strict_server(answer))
    outcome = arxiv.search(fetch, SourceSettings(max_records=10), query, page_size=10)
    assert len(outcome.records) == 10 and [request.method for request in seen.requests] == ["POST"]


def _or_list(count: int) -> str:
    return " OR ".join(f'"object recognition variant {n}"' for n in range(count))


def test_an_openalex_query_too_long_for_its_address_is_unsupported_before_any_request():
    # OpenAlex takes no POST and answers an address over 4,094 bytes with 400; a query that fitted the first page
    # but not a later one (its cursor is longer than "*") failed part-way through, on every run, as an outage.
    fetch, seen, _ = fetcher(lambda request: pytest.fail("a request was sent"))
    node = query.parse_query(_or_list(100))
    outcome = openalex.search(fetch, SETTINGS, query.compile_openalex(node))
    assert outcome.status == "unsupported" and not seen.requests
    assert "OpenAlex refuses one over 4,094" in outcome.warnings[0] and "split the strategy" in outcome.warnings[0]


def test_an_openalex_query_within_its_address_is_sent():
    page = b'{"meta": {"count": 0, "next_cursor": null}, "results": []}'
    fetch, seen, _ = fetcher(strict_server(lambda method, path, params: json_response(page)))
    outcome = openalex.search(fetch, SETTINGS, query.compile_openalex(query.parse_query(_or_list(40))))
    assert outcome.status == "ok" and [request.method for request in seen.requests] == ["GET"]
    assert len(str(seen.requests[0].url)) <= openalex.MAX_ADDRESS_BYTES - openalex.ADDRESS_ROOM + 100


def test_an_or_list_past_the_grammar_s_limit_is_refused_where_it_passes_it():
    # 500 synonyms ORed are 999 terms and operators: the grammar names the first past its limit, not a provider.
    text = " OR ".join(f"term{n}" for n in range(500))
    with pytest.raises(query.QuerySyntaxError) as caught:
        query.parse_query(text)
    assert caught.value.code in ("complexity", "length") and caught.value.position > 1
    assert text[caught.value.position - 1:caught.value.end - 1].strip()
