"""OpenAlex client on real recorded responses (paper-qa cassettes, SYNERGY works)."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

import httpx
import pytest
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
    # OpenAlex answered (it merged the work into another, or reassigned the id): an answer, not an outage, but the
    # other work is never taken for the one asked. It is kept apart, named by the doubt, for verification to judge.
    fetch, _, _ = fetcher(lambda request: json_response(WORK))
    outcome = openalex.lookup(fetch, SETTINGS, "W2741809807")
    assert outcome.status == "ok" and outcome.records == [] and not outcome.complete
    assert "OpenAlex answers W2741809807 with another work, W1554322594" in outcome.doubt
    assert outcome.instead.custom.openalex == "W1554322594"
    assert "instead" not in outcome.model_dump()


def test_lookup_redirected_to_the_work_merged_into_is_answered_with_that_work():
    # OpenAlex redirects the id of a work it merged to the work that absorbed it: that work is what it answers.
    def served(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/works/W2741809807":
            return httpx.Response(301, headers={"location": "https://api.openalex.org/works/W1554322594"})
        return json_response(WORK)
    fetch, seen, _ = fetcher(served)
    outcome = openalex.lookup(fetch, SETTINGS, "W2741809807")
    assert [request.url.path for request in seen.requests] == ["/works/W2741809807", "/works/W1554322594"]
    assert outcome.status == "ok" and outcome.records == [] and outcome.instead.custom.openalex == "W1554322594"
    # a redirect to the work's own record (carrying the DOI asked) is the work itself
    fetch, _, _ = fetcher(lambda request: json_response(WORK) if request.url.path == "/works/W1554322594" else
                          httpx.Response(301, headers={"location": "https://api.openalex.org/works/W1554322594"}))
    outcome = openalex.lookup(fetch, SETTINGS, "10.1023/a:1007154515475")
    assert outcome.complete and [record.custom.openalex for record in outcome.records] == ["W1554322594"]
    # a redirect elsewhere names no work: still refused, as before
    fetch, _, _ = fetcher(lambda request: httpx.Response(301, headers={"location": "https://example.org/x"}))
    assert openalex.lookup(fetch, SETTINGS, "W2741809807").status != "ok"


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
    assert "no record for 1 requested id: W999" in outcome.warnings[0]
    # An answer holding works the filter did not name (a response meant for another request) adds none of them.
    sent = [SYNERGY[0], SYNERGY[1]]
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps({"meta": {"count": 2, "next_cursor": None},
                                                                    "results": sent})))
    outcome = openalex.works_by_ids(fetch, SETTINGS, ["W1979978981"])
    assert [r.custom.openalex for r in outcome.records] == ["W1979978981"]
    other = openalex.work_to_record(SYNERGY[1]).id
    assert f"OpenAlex also sent 1 work not asked for, left out: {other}" in outcome.warnings
    fetch, seen, _ = fetcher(synergy_pages(25))
    assert openalex.citing(fetch, SETTINGS, "W1554322594").status == "ok"
    assert seen.requests[0].url.params["filter"] == "cites:W1554322594"


def test_native_strategy_is_passed_verbatim():
    from sitegen.sources.query import native_openalex

    assert native_openalex("CRISPR off-target detection") == {"search": "CRISPR off-target detection"}
    assert native_openalex("filter=title.search:crispr,publication_year:2020") == {
        "filter": "title.search:crispr,publication_year:2020"}
    assert native_openalex("search=C%2B%2B programming") == {"search": "C++ programming"}
    assert native_openalex("C++ programming") == {"search": "C++ programming"}  # plain search text, as written


@pytest.mark.parametrize("text", ["search=C++ programming", "search=heart+failure&filter=publication_year:2020"])
def test_a_plus_in_a_native_search_and_filter_strategy_is_refused_not_read_as_a_space(text):
    from sitegen.sources.query import UnsupportedQuery, native_openalex

    # Read as an address's query string, search=C++ was sent as a search for "C" (each '+' a space).
    with pytest.raises(UnsupportedQuery, match=r"'\+'.*%2B"):
        native_openalex(text)


# --------------------------------------------------------------------------- paging and hostile data


def page(results: list, count: int, next_cursor: str | None) -> httpx.Response:
    return json_response(json.dumps({"meta": {"count": count, "next_cursor": next_cursor}, "results": results}))


def test_a_count_that_shrinks_between_pages_is_an_outage():
    # built from real works: the second page says there are fewer matches than the first promised
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params["cursor"] == "*":
            return page(SYNERGY[:10], 25, "10")
        return page(SYNERGY[10:20], 20, "20")
    fetch, seen, _ = fetcher(handler)
    outcome = openalex.search(fetch, SETTINGS, {"search": "x"})
    assert outcome.status == "unavailable" and outcome.records == [] and not outcome.complete
    assert "the count changed between pages (25, then 20)" in outcome.warnings[0]
    assert len(seen.requests) == 2


def testa_later_page_refused_is_an_outage_not_a_query_the_source_cannot_run():
    # An expired cursor answers 400 on page 2 of a query page 1 answered: the source was not read in full (it
    # said "not searched: the query cannot be expressed for this source", sending the user to their strategy).
    from sitegen.sources.search import describe

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params["cursor"] == "*":
            return page(SYNERGY[:10], 25, "10")
        return httpx.Response(400, json={"error": "Invalid cursor", "message": "cursor expired"})
    fetch, _, _ = fetcher(handler)
    outcome = openalex.search(fetch, SETTINGS, {"search": "x"})
    assert outcome.status == "unavailable" and outcome.records == []
    assert "refused a later page of an answer it had begun" in outcome.warnings[0]
    assert "cursor expired" in describe(outcome) and "cannot be expressed" not in describe(outcome)
    # Refused at once, the query is one the source cannot run, and the line says the source's reason.
    fetch, _, _ = fetcher(lambda request: httpx.Response(400, json={"message": "unknown field 'foo'"}))
    outcome = openalex.search(fetch, SETTINGS, {"search": "x"})
    assert outcome.status == "unsupported" and "unknown field 'foo'" in describe(outcome)


def test_onlya_later_page_of_one_answer_is_an_outage_when_refused():
    # A citation search's next seed is another request, not a later page: refused, that seed's query is one the
    # source cannot run, whichever seed came first (counting requests called it an outage after the first).
    from sitegen.sources.base import a_later_page

    works = "GET https://api.openalex.org/works"
    assert a_later_page([f"{works}?search=x&per_page=100&cursor=%2A", f"{works}?search=x&per_page=100&cursor=c2"])
    assert not a_later_page([f"{works}/W1", f"{works}/W2"])
    assert not a_later_page([f"{works}?filter=cites%3AW1&cursor=%2A", f"{works}?filter=cites%3AW2&cursor=%2A"])
    assert not a_later_page([f"{works}?search=x&cursor=%2A"])
    arxiv = "GET http://export.arxiv.org/api/query?search_query=all%3Ax"  # a last page asks for fewer
    assert a_later_page([f"{arxiv}&start=0&max_results=100", f"{arxiv}&start=100&max_results=37"])


def test_alternating_cursors_end_paging_without_duplicates():
    # built: "*" -> a -> b -> a -> b ... each page the same as two pages before, with a large count
    pages = {"*": (SYNERGY[:10], "a"), "a": (SYNERGY[10:20], "b"), "b": (SYNERGY[:10], "a")}

    def handler(request: httpx.Request) -> httpx.Response:
        results, following = pages[request.url.params["cursor"]]
        return page(results, 1000, following)
    fetch, seen, _ = fetcher(handler)
    outcome = openalex.search(fetch, SETTINGS, {"search": "x"})
    assert outcome.status == "unavailable" and outcome.records == []
    assert len(seen.requests) <= 4
    assert "reported 1000 matches but returned 20" in outcome.warnings[0]


def test_repeated_identical_pages_cannot_reach_the_count():
    # built: every page the same ten works under a fresh cursor; duplicates must not count toward the total
    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params["cursor"]
        return page(SYNERGY[:10], 1000, "1" if cursor == "*" else str(int(cursor) + 1))
    fetch, seen, _ = fetcher(handler)
    outcome = openalex.search(fetch, SETTINGS.model_copy(update={"max_records": 30}), {"search": "x"})
    assert outcome.status == "unavailable" and outcome.records == []
    assert len(seen.requests) == 2
    assert "returned 10 of the first 30" in outcome.warnings[0]


def test_truncation_at_max_records_is_not_complete():
    fetch, seen, _ = fetcher(synergy_pages(10))
    outcome = openalex.search(fetch, SETTINGS.model_copy(update={"max_records": 20}), {"search": "x"})
    assert outcome.status == "ok" and outcome.truncated and not outcome.complete
    assert len(outcome.records) == 20 and outcome.total == 25 and len(seen.requests) == 2
    [warning] = outcome.warnings
    assert "only the first 20 of 25 were read" in warning and "SITEGEN_MAX_RECORDS" in warning


def test_a_complete_read_is_complete():
    fetch, _, _ = fetcher(synergy_pages(10))
    outcome = openalex.search(fetch, SETTINGS, {"search": "x"})
    assert outcome.complete and not outcome.truncated and outcome.warnings == []


HOSTILE = {
    "id": "https://openalex.org/W999", "doi": "https://doi.org/10.1000/hostile", "title": "A hostile work",
    "ids": ["not", "a", "dict"], "primary_location": "nowhere", "best_oa_location": [1], "host_venue": 7,
    "biblio": ["1"], "open_access": "yes", "authorships": [5, "x", {"author": "Name"}, {"author": {"display_name": 3}}],
    "abstract_inverted_index": {"word": 3, "other": "0"}, "type": ["article"], "is_retracted": "false",
    "publication_date": "2020-²", "publication_year": True,
}


def test_fields_of_the_wrong_type_are_absent_not_a_crash():
    record = openalex.work_to_record(HOSTILE)
    assert record.id == "10.1000/hostile" and record.title == "A hostile work"
    assert record.author == [] and record.abstract is None and record.container_title is None
    assert record.type == "article" and record.custom.publication_types == []
    assert record.custom.retracted is False and record.custom.open_access is None
    assert record.issued.date_parts == [[2020]]
    assert openalex.abstract_from_inverted_index({"a": [0], "b": [True]}) is None  # a boolean is no position
    assert openalex.abstract_from_inverted_index(["a"]) is None
    # Two words at one position: either would be a guess, so no abstract rather than a wrong one
    assert openalex.abstract_from_inverted_index({"Hello": [0], "world": [0, 1]}) is None
    assert openalex.abstract_from_inverted_index({"no": [0, 2], "gap": [3]}) == "no no gap"  # gaps are normal
    assert openalex.related_ids({"referenced_works": "W1"}, "referenced_works") == []


def test_an_abstract_is_read_without_the_heading_its_publisher_set_above_it():
    # Real works whose inverted index opens with the publisher's heading as a word: "Abstract Background …"
    works = json.loads((DIR / "synergy_sep2021_abstract_headings.json").read_text())
    abstracts = [openalex.work_to_record(work).abstract for work in works]
    assert abstracts[0].startswith("Background Emotionally salient experiences induce the formation")
    assert abstracts[1].startswith("Neuropeptide Y (NPY) and its receptors")
    # The word as the abstract's own first word, and the word alone, are text
    assert openalex.abstract_from_inverted_index({"Abstract": [0], "reasoning": [1]}) == "Abstract reasoning"
    assert openalex.abstract_from_inverted_index({"Abstract": [0]}) == "Abstract"


def test_only_the_boolean_true_means_retracted():
    assert openalex.work_to_record(dict(SYNERGY[0], is_retracted="false")).custom.retracted is False
    assert openalex.work_to_record(dict(SYNERGY[0], is_retracted=1)).custom.retracted is False
    assert openalex.work_to_record(dict(SYNERGY[0], is_retracted=True)).custom.retracted is True


def test_a_record_that_cannot_be_stored_is_kept_out_and_the_run_incomplete():
    long_title = dict(SYNERGY[1], title="x" * 6000)  # over the record format's limit: a ValidationError
    results = [SYNERGY[0], long_title, HOSTILE, SYNERGY[2]]
    fetch, _, _ = fetcher(lambda request: page(results, 4, None))
    outcome = openalex.search(fetch, SETTINGS, {"search": "x"})
    assert outcome.status == "ok" and outcome.dropped == 1 and not outcome.complete
    assert [r.custom.openalex for r in outcome.records] == [SYNERGY[0]["id"].rsplit("/", 1)[1], "W999",
                                                            SYNERGY[2]["id"].rsplit("/", 1)[1]]
    assert outcome.warnings == [f"1 OpenAlex work could not be read (invalid title): {SYNERGY[1]['id'].rsplit('/', 1)[1]}; "
                                "it is missing from this run, which is therefore incomplete"]


def test_a_lookup_answered_with_an_unreadable_work_is_an_outage():
    work = dict(json.loads(WORK), title="x" * 6000)
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(work)))
    outcome = openalex.lookup(fetch, SETTINGS, "10.1023/a:1007154515475")
    assert outcome.status == "unavailable" and "could not be read (invalid title)" in outcome.warnings[0]


def test_a_work_whose_authors_a_list_cut_is_read_whole():
    # OpenAlex lists cut a work's authors at 100 and say so (is_authors_truncated): the rest were lost in silence.
    listed = json.loads(LIST)
    work = listed["results"][0]
    everyone = [{"author": {"display_name": f"Author{n} Person"}} for n in range(150)]
    whole = dict(work, authorships=everyone, is_authors_truncated=False)
    cut = dict(work, authorships=everyone[:100], is_authors_truncated=True)
    body = json.dumps(dict(listed, results=[cut], meta=dict(listed["meta"], count=1, next_cursor=None)))

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/works":
            return httpx.Response(200, content=body, headers={"content-type": "application/json"})
        return json_response(json.dumps(whole)) if read_whole else httpx.Response(503, text="down")

    for read_whole in (True, False):
        fetch, seen, _ = fetcher(answer)
        with fetch:
            outcome = openalex.search(fetch, SETTINGS, {"search": "paperqa"})
        assert outcome.status == "ok"
        if read_whole:
            assert len(outcome.records[0].author) == 150 and outcome.warnings == []
            assert seen.requests[1].url.path == f"/works/{work['id'].rsplit('/', 1)[1]}"
        else:  # the list's hundred, said so
            assert len(outcome.records[0].author) == 100
            assert any("lists only the first 100 authors" in said for said in outcome.warnings)


def test_works_read_whole_stop_at_their_limit_and_say_so(monkeypatch):
    # Past WHOLE_WORKS, a cut work is not read on its own: the list's authors stand, with the reason.
    listed = json.loads(LIST)
    cut = dict(listed["results"][0], is_authors_truncated=True)
    body = json.dumps(dict(listed, results=[cut], meta=dict(listed["meta"], count=1, next_cursor=None)))
    monkeypatch.setattr(openalex, "WHOLE_WORKS", 0)
    fetch, seen, _ = fetcher(lambda request: httpx.Response(200, content=body,
                                                            headers={"content-type": "application/json"}))
    with fetch:
        outcome = openalex.search(fetch, SETTINGS, {"search": "paperqa"})
    assert outcome.status == "ok" and [request.url.path for request in seen.requests] == ["/works"]
    assert any("could not be read (0 works were read on their own already)" in said for said in outcome.warnings)


def test_a_refusal_names_the_variable_that_holds_the_key():
    # OpenAlex requires a key: a refusal said "credentials or allowance", not what to set. Named with a key set or
    # not: the message is recorded, and a replay runs without keys.
    for settings in (SETTINGS, SETTINGS.model_copy(update={"openalex_api_key": None})):
        fetch, _, _ = fetcher(lambda request: json_response('{"error": "API key required"}', status=401))
        outcome = openalex.search(fetch, settings, {"search": "x"})
        assert outcome.status == "auth_error" and not outcome.complete
        assert outcome.warnings == ["OpenAlex refused access: answered HTTP 401, most likely for a missing or wrong key in "
                                    "OPENALEX_API_KEY (or its allowance is used up): API key required"]


def test_a_source_that_refuses_access_is_asked_nothing_more_in_the_run():
    """A 401 or 403 is a key the provider does not take, on every request: it was asked again for each strategy
    (each .bib entry of a loop's round), and each refusal read as an outage. Now the run stops asking it, and every
    call after the first says why, as a refusal of access (auth_error), never as "no records"."""
    fetch, seen, _ = fetcher(lambda request: json_response('{"error": "Invalid API key"}', status=403))
    with fetch:
        first = openalex.search(fetch, SETTINGS, {"search": "x"})
        second = openalex.search(fetch, SETTINGS, {"search": "y"})
    assert len(seen.requests) == 1
    assert (first.status, second.status) == ("auth_error", "auth_error")
    assert second.warnings == ["OpenAlex refused access: was not asked: it answered HTTP 403 to an earlier request of "
                               "this run, most likely for a missing or wrong key"]
    from sitegen.sources.search import describe

    # as `update` and `search` say it: refused, not "not reached", with the likely cause, naming OpenAlex once each
    assert describe(first) == ("OpenAlex refused access this run, so it was asked nothing more; new OpenAlex records "
                               "may be missing: answered HTTP 403, most likely for a missing or wrong key in "
                               "OPENALEX_API_KEY (or its allowance is used up): Invalid API key")


def test_a_page_over_the_byte_cap_is_asked_for_again_in_halves(monkeypatch):
    # A page that passed the cap on a response was refused, and the search came out unavailable on every run.
    # A cursor marks where the next page starts whatever its size, so the same cursor is asked for fewer works.
    # Built: the 25 real SYNERGY works (10-22 kB each) served by cursor in pages of the size asked for.
    monkeypatch.setattr(openalex, "PROVIDER", openalex.PROVIDER.__class__(
        **{**openalex.PROVIDER.__dict__, "max_bytes": 70_000}))

    def handler(request: httpx.Request) -> httpx.Response:
        cursor, size = request.url.params["cursor"], int(request.url.params["per_page"])
        start = 0 if cursor == "*" else int(cursor)
        following = str(start + size) if start + size < len(SYNERGY) else None
        return json_response(json.dumps({"meta": {"count": len(SYNERGY), "next_cursor": following},
                                         "results": SYNERGY[start:start + size]}))

    fetch, seen, _ = fetcher(handler)
    outcome = openalex.search(fetch, SETTINGS, {"search": "object in context"})
    assert outcome.status == "ok" and outcome.complete and len(outcome.records) == 25, outcome.warnings
    assert int(seen.requests[-1].url.params["per_page"]) < SETTINGS.openalex_per_page


@pytest.mark.parametrize("doi", ["https://doi.org/10.1234/abc def", "https://doi.org/10.1023/" + "a" * 5000])
def test_a_doi_that_cannot_be_read_is_said_to_be_left_out(doi):
    # The work is kept under its OpenAlex id, but without its DOI it may go unmatched with its duplicate: said so.
    work = json.loads(WORK)
    work["doi"] = work["ids"]["doi"] = doi
    fetch, _, _ = fetcher(lambda request: page([work], 1, None))
    outcome = openalex.search(fetch, SETTINGS, {"filter": "title.search:peroxidase"})
    [record] = outcome.records
    assert outcome.complete and record.id == "openalex:W1554322594" and record.DOI is None
    [note] = [warning for warning in outcome.warnings if "could not be read" in warning]
    assert note.startswith(f"openalex:W1554322594: the DOI {doi[:80]!r} sent for it could not be read")
    # a lookup says it alike, once
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(work)))
    outcome = openalex.lookup(fetch, SETTINGS, "W1554322594")
    assert outcome.complete and sum("the DOI" in warning for warning in outcome.warnings) == 1


def test_a_readable_identifier_beside_an_unreadable_one_is_no_loss():
    work = json.loads(WORK)
    work["doi"] = "https://doi.org/10.1234/abc def"  # unreadable, but ids.doi holds a DOI readably
    work["ids"]["doi"] = "https://doi.org/10.1023/a:1007154515475"
    fetch, _, _ = fetcher(lambda request: page([work], 1, None))
    outcome = openalex.search(fetch, SETTINGS, {"filter": "title.search:peroxidase"})
    assert outcome.records[0].DOI == "10.1023/a:1007154515475"
    assert not any("could not be read" in warning for warning in outcome.warnings)


@pytest.mark.parametrize(("openalex_type", "csl_type"), [("reference-entry", "entry"), ("peer-review", "review"),
                                                         ("standard", "standard"),
                                                         # its older vocabulary, Crossref's
                                                         ("book-part", "chapter"), ("journal-issue", "periodical"),
                                                         ("proceedings", "book")])
def test_a_work_type_with_a_csl_type_of_its_own_is_never_an_unpublished_article(openalex_type, csl_type):
    # OpenAlex's types that CSL names too, as Crossref's are read (a real SYNERGY work, its type changed): read as
    # "article" an encyclopedia entry, a peer review or a standard was exported as an unpublished work (RIS UNPB).
    assert openalex.work_to_record(dict(SYNERGY[0], type=openalex_type)).type == csl_type
