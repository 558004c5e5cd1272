"""Fault injection for every provider: each failure is a typed outcome with a clear warning,
never a crash and never an empty success."""

from __future__ import annotations

import dataclasses
import json
import re

import httpx
import pytest
import test_arxiv
import test_crossref
import test_europepmc
import test_pubmed
from conftest import FIXTURES
from http_mocks import Call, fetcher, json_response
from lxml import etree

from sitegen.records.model import ABSTRACT_LIMIT
from sitegen.sources import openalex
from sitegen.sources.http import WAIT_BUDGET
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings

SETTINGS = SourceSettings(contact_email="team@example.org", openalex_api_key="oa-secret-key")


CALLS = {
    **test_europepmc.FAULT_CALLS,
    **test_crossref.FAULT_CALLS,
    **test_arxiv.FAULT_CALLS,
    **test_pubmed.FAULT_CALLS,
    "openalex-search": Call(openalex, lambda f: openalex.search(f, SETTINGS, {"search": "x"}),
                            (FIXTURES / "openalex" / "openalex_works_list_title_search_paperqa.json").read_bytes(),
                            "application/json"),
    "openalex-lookup": Call(openalex, lambda f: openalex.lookup(f, SETTINGS, "10.1023/a:1007154515475"),
                            (FIXTURES / "openalex" / "openalex_work_doi_10.1023_a_1007154515475.json").read_bytes(),
                            "application/json"),
}


def run(call: Call, handler) -> tuple[SourceOutcome, list, list[float]]:
    fetch, seen, time = fetcher(handler)
    with fetch:
        outcome = call.run(fetch)
    return outcome, seen.requests, time.sleeps


@pytest.fixture(params=sorted(CALLS))
def call(request) -> Call:
    return CALLS[request.param]


def test_good_response_is_ok(call):
    outcome, requests, _ = run(call, lambda r: httpx.Response(200, content=call.good_body,
                                                              headers={"content-type": call.content_type}))
    assert outcome.status == "ok", outcome.warnings
    assert outcome.records


def test_429_with_retry_after_is_retried_then_reported(call):
    outcome, requests, sleeps = run(call, lambda r: httpx.Response(429, headers={"retry-after": "2"}))
    assert outcome.status == "rate_limited"
    assert outcome.retry_after == 2
    assert len(requests) == 4
    assert sum(sleeps) >= 2 + 2 + 4  # Retry-After, then exponential backoff (plus any rate-limit spacing)
    assert "rate-limited" in outcome.warnings[0]
    assert outcome.records == []


def test_long_retry_after_is_not_waited_for(call):
    outcome, requests, sleeps = run(call, lambda r: httpx.Response(429, headers={"retry-after": "3600"}))
    assert outcome.status == "rate_limited" and outcome.retry_after == 3600
    assert len(requests) == 1 and not any(s >= 3600 for s in sleeps)


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_unavailable(call, status):
    outcome, requests, _ = run(call, lambda r: httpx.Response(status, text="upstream down"))
    assert outcome.status == "unavailable"
    assert f"HTTP {status}" in outcome.warnings[0]
    assert len(requests) == 4


@pytest.mark.parametrize("name", sorted(name for name in CALLS if "search" in name))
def test_a_request_too_long_for_the_provider_is_a_query_it_cannot_run_not_an_outage(name):
    # A 414 (URI Too Long) comes back on every run: reported as an outage, the strategy was incomplete forever
    # with "not reached this run" and no hint that its length was the cause.
    outcome, requests, _ = run(CALLS[name], lambda r: httpx.Response(414, text="Request-URI Too Long"))
    assert outcome.status == "unsupported"
    assert "too long (HTTP 414" in outcome.warnings[0] and "shorten the query" in outcome.warnings[0]
    assert len(requests) == 1


def test_transient_503_then_success(call):
    answers = iter([httpx.Response(503), httpx.Response(200, content=call.good_body,
                                                        headers={"content-type": call.content_type})])
    outcome, requests, _ = run(call, lambda r: next(answers))
    assert outcome.status == "ok" and len(requests) == 2


def test_read_timeout(call):
    def handler(request):
        raise httpx.ReadTimeout("slow", request=request)
    outcome, _, _ = run(call, handler)
    assert outcome.status == "timeout"
    assert "timed out" in outcome.warnings[0]


def test_connection_refused(call):
    def handler(request):
        raise httpx.ConnectError("refused", request=request)
    outcome, _, _ = run(call, handler)
    assert outcome.status == "unavailable"
    assert "could not be reached" in outcome.warnings[0]


def test_malformed_body(call):
    outcome, _, _ = run(call, lambda r: httpx.Response(200, content=b"<html>maintenance</html>",
                                                       headers={"content-type": call.content_type}))
    assert outcome.status == "unavailable"
    assert "unusable response" in outcome.warnings[0]


def test_truncated_body(call):
    half = call.good_body[: len(call.good_body) // 2]
    outcome, _, _ = run(call, lambda r: httpx.Response(200, content=half, headers={"content-type": call.content_type}))
    assert outcome.status == "unavailable"


@pytest.mark.parametrize("name", sorted(name for name in CALLS if CALLS[name].content_type == "application/json"))
def test_json_in_another_encoding_than_utf8_is_said_so(name):
    # One Latin-1 byte in a real answer: the body is not usable, and the warning says why (it said "truncated, not
    # JSON, or a number no record can hold", which sends whoever reads it to look for the wrong thing).
    call = CALLS[name]
    first = call.good_body.index(b'"', call.good_body.index(b":")) + 1  # the first string value's first character
    body = call.good_body[:first] + b"\xe9" + call.good_body[first:]
    outcome, _, _ = run(call, lambda r: httpx.Response(200, content=body, headers={"content-type": call.content_type}))
    assert outcome.status == "unavailable" and outcome.records == []
    assert f"the body is not UTF-8 (byte 0xE9 at offset {first:,}), as JSON must be" in outcome.warnings[0]


@pytest.mark.parametrize("name", sorted(name for name in CALLS if "xml" in CALLS[name].content_type))
@pytest.mark.parametrize("subset", ['<!ENTITY x "Injected words">', '<!ENTITY x SYSTEM "file:///etc/hostname">',
                                    "<!ELEMENT x ANY>"], ids=["internal-entity", "external-entity", "element"])
def test_xml_whose_doctype_declares_anything_is_refused_not_read_with_its_references_as_text(name, subset):
    # arXiv's and PubMed's answers declare nothing (PubMed's DOCTYPE names an external DTD, never read). An entity
    # one declared was kept unexpanded, "&x;" in a title or abstract of an `ok` answer, as a full text's is not.
    call = CALLS[name]
    body = re.sub(rb"<!DOCTYPE[^>]*>", b"", call.good_body)
    root = re.search(rb"<([A-Za-z]+)[\s>]", re.sub(rb"<\?xml[^>]*>", b"", body)).group(1)
    body = re.sub(rb"(<\?xml[^>]*>)?", lambda m: (m.group(0) or b"") + b"<!DOCTYPE %s [%s]>" % (root, subset.encode()),
                  body, count=1)
    body = re.sub(rb"(<(?:title|ArticleTitle|Count)>)", rb"\1&x;" if "ENTITY" in subset else rb"\1", body)
    outcome, _, _ = run(call, lambda r: httpx.Response(200, content=body, headers={"content-type": call.content_type}))
    assert outcome.status == "unavailable" and outcome.records == []
    assert "the body's DOCTYPE has an internal subset: refused, nothing expanded" in outcome.warnings[0]


@pytest.mark.parametrize("declared", [True, False])
def test_oversized_body(call, monkeypatch, declared):
    monkeypatch.setattr(call.module, "PROVIDER", dataclasses.replace(call.module.PROVIDER, max_bytes=100))

    def handler(request):
        if declared:
            return httpx.Response(200, content=call.good_body, headers={"content-type": call.content_type})
        return httpx.Response(200, stream=httpx.ByteStream(call.good_body), headers={"content-type": call.content_type})

    outcome, requests, _ = run(call, handler)
    assert outcome.status == "unavailable"
    assert "100-byte limit" in outcome.warnings[0]
    # Never asked again as it was; a provider whose pages can be asked for smaller (PubMed's batches, the cursor
    # pages of Europe PMC, OpenAlex and Crossref) asks for fewer records at a time, down to one.
    sizes = ("retmax", "pageSize", "per_page", "rows")
    asked = [int(next((request.url.params[size] for size in sizes if size in request.url.params), 0))
             for request in requests]
    assert len(requests) == 1 or (asked == sorted(set(asked), reverse=True) and asked[-1] == 1)


def test_redirect_is_refused(call):
    outcome, requests, _ = run(call, lambda r: httpx.Response(301, headers={"location": "https://evil.example/x?k=1"}))
    assert outcome.status == "unavailable"
    assert "redirects are refused" in outcome.warnings[0]
    assert "k=1" not in outcome.warnings[0]
    assert [r.url.host for r in requests] == [requests[0].url.host]


def test_a_redirect_target_is_shown_with_every_character_it_holds_escaped(call):
    # a Location header holding a right-to-left override (UTF-8, as httpx reads a header that is not ASCII): the
    # warning shows it escaped, never reordered
    target = "https://evil.example/x\u202eevil".encode()
    outcome, _, _ = run(call, lambda r: httpx.Response(301, headers=[(b"location", target)]))
    assert "redirected to https://evil.example/x\\u202eevil; redirects are refused" in outcome.warnings[0]
    assert outcome.warnings[0].isprintable()


def test_error_inside_a_200(call):
    outcome, _, _ = run(call, lambda r: httpx.Response(200, json={"error": "internal", "message": "try later"}))
    assert outcome.status == "unavailable"


def test_gzip_bomb_is_refused_without_expanding_it(monkeypatch):
    import gzip

    call = CALLS["openalex-search"]
    bomb = gzip.compress(b"[" * 200_000_000, compresslevel=9)
    assert len(bomb) < 300_000

    def handler(request):
        return httpx.Response(200, stream=httpx.ByteStream(bomb),
                              headers={"content-type": "application/json", "content-encoding": "gzip"})

    outcome, requests, _ = run(call, handler)
    assert outcome.status == "unavailable" and "byte limit" in outcome.warnings[0]


def test_gzip_body_is_inflated():
    import gzip

    call = CALLS["openalex-search"]
    outcome, _, _ = run(call, lambda r: httpx.Response(200, stream=httpx.ByteStream(gzip.compress(call.good_body)),
                                                       headers={"content-encoding": "gzip"}))
    assert outcome.status == "ok"


@pytest.mark.parametrize("encoding", ["br", "gzip, gzip", "deflate"])
def test_unexpected_encodings_are_refused(encoding):
    call = CALLS["openalex-search"]
    outcome, _, _ = run(call, lambda r: httpx.Response(200, stream=httpx.ByteStream(b"x"),
                                                       headers={"content-encoding": encoding}))
    assert outcome.status == "unavailable" and "content encoding" in outcome.warnings[0]


def test_a_dripping_server_hits_the_overall_deadline():
    from http_mocks import FakeTime

    call = CALLS["openalex-search"]
    time = FakeTime()

    class Drip(httpx.SyncByteStream):
        def __iter__(self):
            for _ in range(10):
                time.now += 30  # thirty seconds per byte
                yield b" "

    fetch, _, _ = fetcher(lambda r: httpx.Response(200, stream=Drip()), time=time)
    with fetch:
        outcome = call.run(fetch)
    assert outcome.status == "timeout"


@pytest.mark.parametrize("value", [b"\xb2", b"Wed, 99 Foo 2026 99:99:99 GMT", b"-1", b"1e9", b""])
def test_odd_retry_after_values_do_not_crash(value):
    call = CALLS["openalex-search"]
    outcome, _, _ = run(call, lambda r: httpx.Response(429, headers=[(b"retry-after", value)]))
    assert outcome.status == "rate_limited"


@pytest.mark.parametrize("when", ["Wed, 21 Oct 2026 07:28:30 GMT", "Wednesday, 21-Oct-26 07:28:30 GMT",
                                  "Wed Oct 21 07:28:30 2026"], ids=["imf-fixdate", "rfc850", "asctime"])
def test_retry_after_as_an_http_date_in_each_form_http_allows_is_waited_for(when):
    # HTTP requires a reader to take all three forms of a date; the asctime one names no zone (it is GMT), and
    # read as a time of no zone it could not be compared with the server's Date: the wait asked for was dropped.
    call = CALLS["openalex-search"]
    outcome, requests, sleeps = run(call, lambda r: httpx.Response(429, headers={
        "retry-after": when, "date": "Wed, 21 Oct 2026 07:28:00 GMT"}))
    assert outcome.status == "rate_limited" and outcome.retry_after == 30
    assert len(requests) == 4 and sleeps == [30.0, 30.0, 30.0]


def test_a_retry_after_of_more_digits_than_a_number_holds_is_a_long_wait_not_none():
    # A server asking for an absurdly long wait was asked again at once (the value was read as absent), three times.
    call = CALLS["openalex-search"]
    outcome, requests, sleeps = run(call, lambda r: httpx.Response(429, headers={"retry-after": "9" * 40}))
    assert outcome.status == "rate_limited" and outcome.retry_after == 3600
    assert len(requests) == 1 and sleeps == []


def test_a_zero_padded_retry_after_is_the_seconds_it_says_not_a_long_wait():
    # Counted by its digits, "0000000000005" (13 of them) was taken for a number too long to read: an hour.
    call = CALLS["openalex-search"]
    outcome, requests, _ = run(call, lambda r: httpx.Response(429, headers={"retry-after": "0000000000005"}))
    assert outcome.status == "rate_limited" and outcome.retry_after == 5 and len(requests) == 4


def test_a_retry_after_date_beside_an_unreadable_date_header_is_measured_from_now():
    # The server's Date is the reference for its Retry-After; one that cannot be read dropped the wait asked for.
    call = CALLS["openalex-search"]
    outcome, requests, _ = run(call, lambda r: httpx.Response(429, headers={
        "retry-after": "Fri, 01 Jan 2100 00:00:00 GMT", "date": "not a date"}))
    assert outcome.status == "rate_limited" and outcome.retry_after == 3600 and len(requests) == 1


def test_echoed_contact_address_never_reaches_a_warning():
    call = CALLS["openalex-search"]
    outcome, _, _ = run(call, lambda r: httpx.Response(400, json={"message": "bad mailto team\u0040example.org"}))
    assert outcome.status == "unsupported"
    assert "team" not in " ".join(outcome.warnings) and "REDACTED" in " ".join(outcome.warnings)


CONVERTERS = {"openalex": "work_to_record", "crossref": "work_to_record", "europepmc": "result_to_record",
              "arxiv": "entry_to_record", "pubmed": "article_to_record"}


@pytest.mark.parametrize("error", [TypeError, AttributeError, KeyError, ValueError])
def test_a_converter_that_fails_on_every_item_is_an_outage_not_a_traceback(call, monkeypatch, error):
    # provider data of a shape nobody foresaw makes a converter raise; the call must still end in an outcome
    def broken(item):
        raise error("unforeseen shape")
    monkeypatch.setattr(call.module, CONVERTERS[call.module.__name__.rsplit(".", 1)[1]], broken)
    outcome, _, _ = run(call, lambda r: httpx.Response(200, content=call.good_body,
                                                       headers={"content-type": call.content_type}))
    assert outcome.status == "unavailable" and outcome.records == [] and not outcome.complete
    assert f"could not be read ({error.__name__})" in outcome.warnings[0]


NGINX_404 = b"<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>"


@pytest.mark.parametrize("lookup", [
    lambda f: openalex.lookup(f, SETTINGS, "10.1023/a:1007154515475"),
    lambda f: test_crossref.crossref.lookup(f, SETTINGS, "10.1371/journal.pone.0033693"),
    lambda f: test_crossref.crossref.agency(f, SETTINGS, "10.1371/journal.pone.0033693")[1],
], ids=["openalex", "crossref", "crossref-agency"])
@pytest.mark.parametrize("page", [NGINX_404, b'{"error":"Not Found"}'], ids=["nginx", "gateway-json"])
def test_a_404_page_that_is_not_the_providers_own_is_an_outage_not_not_found(lookup, page):
    # A proxy's or a moved address's 404 says nothing of the record: verification would take "not found"
    # for a citation that does not resolve (refusal grade), so it is an outage (inconclusive). (Any JSON
    # naming an "error" was OpenAlex's own "not found".)
    fetch, _, _ = fetcher(lambda request: httpx.Response(404, content=page, headers={"content-type": "text/html"}))
    with fetch:
        outcome = lookup(fetch)
    assert outcome.status == "unavailable" and "not its own 'not found'" in outcome.warnings[-1]


def test_a_provider_that_keeps_refusing_is_asked_no_more_in_the_run():
    # Verification looks up each included study: a provider refusing every request after every retry is
    # given up after a few, so hundreds of studies do not each wait out the same refusal (hours).
    fetch, recorder, time = fetcher(lambda request: httpx.Response(429, headers={"retry-after": "30"}))
    with fetch:
        outcomes = [openalex.lookup(fetch, SETTINGS, f"10.1234/study.{n}") for n in range(40)]
    assert all(outcome.status in ("rate_limited", "unavailable") for outcome in outcomes)
    assert "was not asked" in outcomes[-1].warnings[-1]
    asked = len(recorder.requests)
    assert asked == 3 * 4  # three lookups, each with its three retries; then none
    assert sum(time.sleeps) < 3 * 3 * 31
    # A provider that answers again is asked again: only refusals in a row count.
    answers = iter([httpx.Response(503)] * 8 + [httpx.Response(404, content=b"Resource not found.")] * 10)
    fetch, recorder, _ = fetcher(lambda request: next(answers))
    with fetch:
        statuses = [test_crossref.crossref.lookup(fetch, SETTINGS, f"10.1234/study.{n}").status for n in range(4)]
    assert statuses == ["unavailable", "unavailable", "ok", "ok"]


def test_a_provider_that_answers_only_after_its_retries_is_waited_for_a_bounded_time_in_a_run():
    # Each page answered only on its fourth try, after two 429s asking for a minute: every request's retries are
    # bounded, but a read of many pages waited them out page after page (hours). Past the run's budget for the
    # provider a refusal is final, and the read is rate limited, none of its pages counted.
    works = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
    tries = iter(range(10**6))

    def answer(request: httpx.Request) -> httpx.Response:
        if next(tries) % 4 != 3:
            return httpx.Response(429, headers={"retry-after": "60"})
        start = 0 if request.url.params["cursor"] == "*" else int(request.url.params["cursor"])
        return json_response(json.dumps({"meta": {"count": len(works), "next_cursor": str(start + 1)},
                                          "results": works[start:start + 1]}))
    fetch, recorder, time = fetcher(answer)
    with fetch:
        outcome = openalex.search(fetch, SETTINGS.model_copy(update={"openalex_per_page": 1}), {"search": "x"})
    assert outcome.status == "rate_limited" and outcome.records == [] and not outcome.complete
    assert "sitegen waited 600 s for OpenAlex's retries in this run" in outcome.warnings[-1]
    assert "this run is incomplete" in outcome.warnings[-1]
    assert sum(wait for wait in time.sleeps if wait >= 1) <= WAIT_BUDGET  # the retries' waits, not the spacing
    assert len(recorder.requests) < 4 * len(works)


@pytest.mark.parametrize("refusal, status", [(429, "rate_limited"), (503, "unavailable")])
def test_a_provider_given_up_after_rate_limits_is_rate_limited_for_the_requests_it_is_not_asked(refusal, status,
                                                                                                   tmp_path):
    # A 429 mid-run: the requests not sent after it are rate limited too (re-check later, the loop pauses),
    # not an outage; and replaying the run reproduces that
    from sitegen.sources.snapshots import SnapshotStore

    store = SnapshotStore(tmp_path / "snapshots")
    fetch, _, _ = fetcher(lambda request: httpx.Response(refusal, headers={"retry-after": "30"}), "record", store,
                          session="2026-01-01T00:00:00Z")
    with fetch:
        outcomes = [openalex.lookup(fetch, SETTINGS, f"10.1234/study.{n}") for n in range(5)]
    assert [outcome.status for outcome in outcomes] == [status] * 5
    assert "was not asked" in outcomes[-1].warnings[-1]
    replay, _, _ = fetcher(lambda request: pytest.fail("replay asked the network"), "replay", store,
                           session="2026-01-01T00:00:00Z")
    with replay:
        assert [openalex.lookup(replay, SETTINGS, f"10.1234/study.{n}").status for n in range(5)] == [status] * 5


# Where each provider's answer holds a work's abstract: a JSON key, or an XML element (in any namespace).
ABSTRACT_KEYS = {"openalex": "abstract_inverted_index", "crossref": "abstract", "europepmc": "abstractText"}
ABSTRACT_ELEMENTS = {"arxiv": "summary", "pubmed": "AbstractText"}


def with_overlong_abstract(provider: str, body: bytes) -> bytes:
    """`body` (a real answer) with its first work's abstract made one character longer than a record holds."""
    overlong = "x" * (ABSTRACT_LIMIT + 1)
    if provider in ABSTRACT_ELEMENTS:
        root = etree.fromstring(body)
        next(root.iter(f"{{*}}{ABSTRACT_ELEMENTS[provider]}")).text = overlong
        return etree.tostring(root)

    def first_work(value):  # the first object with a title, before anything inside it
        if isinstance(value, dict) and "title" in value:
            return value
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        return next((found for child in children if (found := first_work(child)) is not None), None)
    data = json.loads(body)
    first_work(data)[ABSTRACT_KEYS[provider]] = {overlong: [0]} if provider == "openalex" else overlong
    return json.dumps(data).encode()


@pytest.mark.parametrize("name", sorted(name for name in CALLS if name != "pubmed-esearch"))
def test_a_work_with_an_abstract_longer_than_a_record_holds_is_kept_without_it(name):
    # A provider's absurd abstract (a whole paper in the field) is no reason to lose the work: it was refused
    # whole (unreadable, the run incomplete; a lookup an outage). Each provider's real answer, one abstract made long.
    call = CALLS[name]
    provider = call.module.__name__.rsplit(".", 1)[1]

    def answer(body: bytes):
        return lambda request: httpx.Response(200, content=body, headers={"content-type": call.content_type})
    before, _, _ = run(call, answer(call.good_body))
    after, _, _ = run(call, answer(with_overlong_abstract(provider, call.good_body)))
    assert (after.status, after.complete) == (before.status, before.complete) == ("ok", before.complete), after.warnings
    (warning,) = [warning for warning in after.warnings if warning not in before.warnings]
    named = re.fullmatch(r"the abstract of (\S+) is ([\d,]+) characters long, more than an abstract can be "
                         r"\(200,000\); the record is kept without it", warning)
    assert named and int(named[2].replace(",", "")) > ABSTRACT_LIMIT, warning
    kept = {record.id: record for record in after.records}[named[1]]
    was = {record.id: record for record in before.records}[named[1]]
    assert kept.abstract is None and kept == was.model_copy(update={"abstract": None})
    assert [record.id for record in after.records] == [record.id for record in before.records]
