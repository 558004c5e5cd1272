"""Record/replay: replay reproduces a recorded run exactly, never touches the network,
fails loudly on a missing response, and no snapshot ever holds a credential."""

from __future__ import annotations

import base64
import html
import json
import re
import time
from urllib.parse import quote, unquote, unquote_plus

import httpx
import pytest
from conftest import FIXTURES
from http_mocks import fetcher, json_response

from sitegen.commands import add_monitor
from sitegen.errors import SitegenError
from sitegen.review.models import Strategy
from sitegen.sources import openalex
from sitegen.sources.http import Fetcher
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import SnapshotMissing, SnapshotStore

SETTINGS = SourceSettings(contact_email="secret.person@example.org", openalex_api_key="oa-secret-key-123",
                          openalex_per_page=10)
SYNERGY = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())


def echoing_pages(request: httpx.Request) -> httpx.Response:
    """Real works in cursor pages; the response echoes the request URL, credentials included."""
    cursor = request.url.params["cursor"]
    start = 0 if cursor == "*" else int(cursor)
    following = str(start + 10) if start + 10 < len(SYNERGY) else None
    return json_response(json.dumps({"meta": {"count": len(SYNERGY), "next_cursor": following,
                                              "request": str(request.url)},
                                     "results": SYNERGY[start:start + 10]}))


def record_then_replay(tmp_path, session=""):
    store = SnapshotStore(tmp_path / "snapshots")
    fetch, seen, _ = fetcher(echoing_pages, mode="record", store=store, session=session)
    with fetch:
        recorded = openalex.search(fetch, SETTINGS, {"search": "object in context"})
    replayer = Fetcher("replay", SnapshotStore(tmp_path / "snapshots"), session)
    replayed = openalex.search(replayer, SETTINGS, {"search": "object in context"})
    return recorded, replayed, seen


def test_replay_reproduces_the_recorded_run(tmp_path):
    recorded, replayed, seen = record_then_replay(tmp_path)
    assert recorded.status == "ok" and len(recorded.records) == 25
    assert replayed.model_dump() == recorded.model_dump()
    assert len(recorded.snapshot_hashes) == 3
    assert len(seen.requests) == 3


def test_no_snapshot_holds_a_credential(tmp_path):
    record_then_replay(tmp_path)
    files = [p for p in (tmp_path / "snapshots").rglob("*") if p.is_file()]
    assert len(files) == 4  # three bodies and the index
    for path in files:
        data = path.read_bytes()
        assert b"oa-secret-key-123" not in data and b"secret.person" not in data, path
    assert b"REDACTED" in b"".join(p.read_bytes() for p in files)


@pytest.mark.parametrize("provider", ["openalex", "crossref"])
def test_a_credential_sent_in_a_header_is_kept_out_of_snapshots_however_it_is_echoed(tmp_path, provider):
    """A key sent as "Authorization: Bearer KEY" (OpenAlex, when asked) or Crossref's Plus token: a provider
    may echo the header whole, or the bare key, and neither may reach a recorded body."""
    from sitegen.sources import crossref

    settings = SourceSettings(openalex_api_key="oa-header-key-123", openalex_key_in="header",
                              crossref_plus_token="plus-token-456")
    module, query = (openalex, {"search": "x"}) if provider == "openalex" else (crossref, {"query": "x"})
    secret = "oa-header-key-123" if provider == "openalex" else "plus-token-456"

    def echoing(request: httpx.Request) -> httpx.Response:
        header = request.headers.get("authorization") or request.headers.get("crossref-plus-api-token")
        assert header is not None and header.endswith(secret)
        echo = {"header": header, "key": header.split()[-1], "quoted": header.split()[-1].replace("-", "%2D")}
        if provider == "openalex":
            return json_response(json.dumps({"meta": {"count": 0, "next_cursor": None, "echo": echo}, "results": []}))
        return json_response(json.dumps({"status": "ok", "message": {"total-results": 0, "items": [],
                                                                      "next-cursor": None, "echo": echo}}))

    store = SnapshotStore(tmp_path / "snapshots")
    fetch, seen, _ = fetcher(echoing, mode="record", store=store)
    with fetch:
        module.search(fetch, settings, query)
    assert seen.requests
    bodies = b"".join(path.read_bytes() for path in (tmp_path / "snapshots").rglob("*") if path.is_file())
    assert secret.encode() not in bodies and b"%2D" not in bodies.replace(b"REDACTED", b"")
    assert b"REDACTED" in bodies


def test_replay_never_opens_a_connection(tmp_path, monkeypatch):
    record_then_replay(tmp_path)

    def no_network(*args, **kwargs):
        raise AssertionError("replay tried to use the network")

    monkeypatch.setattr(httpx.Client, "send", no_network)
    replayer = Fetcher("replay", SnapshotStore(tmp_path / "snapshots"))
    assert openalex.search(replayer, SETTINGS, {"search": "object in context"}).status == "ok"


def test_missing_snapshot_fails_loudly_naming_the_request(tmp_path):
    record_then_replay(tmp_path)
    replayer = Fetcher("replay", SnapshotStore(tmp_path / "snapshots"))
    with pytest.raises(SnapshotMissing, match=r"GET https://api.openalex.org/works\?search=something\+else"):
        openalex.search(replayer, SETTINGS, {"search": "something else"})


def test_a_replayed_search_the_run_never_recorded_names_the_query_as_what_differs(sitegen, example_copy):
    # Replaying another query than the example's recorded one said the recordings were "most likely by a sitegen
    # that asked differently", sending a new user after an upgrade that never happened: the query is what differs.
    code, _, err = sitegen("search", '"object-in-context" AND rat', "--sources", "openalex", "--snapshots", "replay",
                           "--review", example_copy)
    assert code == 1
    assert "the run recorded this address only with other parameters" in err
    assert "differing in search: another query than this one" in err and "cursor" not in err.split("differing")[1]
    shown = err.split("other parameters (")[1].split("), differing")[0].split("; ")
    assert len(shown) == len(set(shown))  # each recorded request once, not once per repeat


def test_sessions_keep_reruns_apart(tmp_path):
    store = SnapshotStore(tmp_path / "snapshots")
    for session, count in (("2026-01-01T00:00:00Z", 1), ("2026-02-01T00:00:00Z", 2)):
        body = json.dumps({"meta": {"count": count, "next_cursor": None}, "results": SYNERGY[:count]})
        fetch, _, _ = fetcher(lambda request, body=body: json_response(body), mode="record", store=store,
                              session=session)
        with fetch:
            openalex.search(fetch, SETTINGS, {"search": "x"})
    reopened = SnapshotStore(tmp_path / "snapshots")
    first = openalex.search(Fetcher("replay", reopened, "2026-01-01T00:00:00Z"), SETTINGS, {"search": "x"})
    latest = openalex.search(Fetcher("replay", reopened), SETTINGS, {"search": "x"})
    assert (len(first.records), len(latest.records)) == (1, 2)


def test_outages_are_recorded_and_replayed(tmp_path):
    store = SnapshotStore(tmp_path / "snapshots")
    fetch, _, _ = fetcher(lambda request: httpx.Response(503), mode="record", store=store)
    with fetch:
        recorded = openalex.search(fetch, SETTINGS, {"search": "x"})
    replayed = openalex.search(Fetcher("replay", SnapshotStore(tmp_path / "snapshots")), SETTINGS, {"search": "x"})
    assert recorded.status == replayed.status == "unavailable"
    assert replayed.warnings == recorded.warnings


def test_edited_snapshot_body_is_detected(tmp_path):
    recorded, _, _ = record_then_replay(tmp_path)
    digest = recorded.snapshot_hashes[0]
    (tmp_path / "snapshots" / digest[:2] / digest).write_bytes(b"{}")
    with pytest.raises(Exception, match="does not match its hash"):
        openalex.search(Fetcher("replay", SnapshotStore(tmp_path / "snapshots")), SETTINGS,
                        {"search": "object in context"})




def test_a_second_other_response_to_one_request_of_a_run_is_refused_naming_both_lines(tmp_path):
    # A hand edit or a merge of two branches' indexes: which response the run got is unknown, so no replay reads
    # either. A line merged in twice, the same, says nothing new and is read.
    recorded, _, _ = record_then_replay(tmp_path, session="2026-01-01T00:00:00Z")
    index = tmp_path / "snapshots" / "index.jsonl"
    lines = index.read_text().splitlines()
    first = json.loads(lines[0])
    index.write_text("\n".join([*lines, lines[0]]) + "\n")
    assert len(SnapshotStore(tmp_path / "snapshots")._entries) == len(lines)
    other = {**first, "sha256": next(h for h in recorded.snapshot_hashes if h != first["sha256"])}
    index.write_text("\n".join([*lines, json.dumps(other)]) + "\n")
    with pytest.raises(SitegenError) as refused:
        SnapshotStore(tmp_path / "snapshots")
    assert str(refused.value).startswith(f"{index}:{len(lines) + 1}: not a valid snapshot index (it records another "
                                         f"response to GET {first['url']}")
    assert "in the run at 2026-01-01T00:00:00Z" in str(refused.value) and "than line 1 does" in str(refused.value)

def test_a_missing_snapshot_body_names_the_store_as_messages_show_a_path(tmp_path):
    folder = tmp_path / "two\nlines"  # a message naming it is one line, and names it unambiguously
    recorded, _, _ = record_then_replay(folder)
    digest = recorded.snapshot_hashes[0]
    (folder / "snapshots" / digest[:2] / digest).unlink()
    with pytest.raises(SnapshotMissing) as missing:
        openalex.search(Fetcher("replay", SnapshotStore(folder / "snapshots")), SETTINGS, {"search": "object in context"})
    assert str(missing.value).endswith(f'is missing from "{tmp_path}/two\\nlines/snapshots"')

def test_identical_requests_in_one_run_replay_in_order(tmp_path):
    # Crossref, for one, answers the same cursor page after page: each answer must be kept.
    store = SnapshotStore(tmp_path / "snapshots")
    answers = iter([b"first", b"second"])
    fetch, _, _ = fetcher(lambda request: httpx.Response(200, content=next(answers)), mode="record", store=store)
    with fetch:
        for _ in range(2):
            fetch.request(openalex.PROVIDER, "https://api.openalex.org/works", [("cursor", "same")])
    replayer = Fetcher("replay", SnapshotStore(tmp_path / "snapshots"))
    bodies = [replayer.request(openalex.PROVIDER, "https://api.openalex.org/works", [("cursor", "same")]).body
              for _ in range(2)]
    assert bodies == [b"first", b"second"]
    with pytest.raises(SnapshotMissing, match=r"repeat 3"):
        replayer.request(openalex.PROVIDER, "https://api.openalex.org/works", [("cursor", "same")])


def test_an_ad_hoc_recording_replays_itself_not_a_dated_run(tmp_path):
    store = SnapshotStore(tmp_path / "snapshots")
    for session, count in (("2026-02-01T00:00:00Z", 2), ("", 1)):
        body = json.dumps({"meta": {"count": count, "next_cursor": None}, "results": SYNERGY[:count]})
        fetch, _, _ = fetcher(lambda request, body=body: json_response(body), mode="record", store=store,
                              session=session)
        with fetch:
            openalex.search(fetch, SETTINGS, {"search": "x"})
    replayed = openalex.search(Fetcher("replay", SnapshotStore(tmp_path / "snapshots")), SETTINGS, {"search": "x"})
    assert len(replayed.records) == 1


@pytest.mark.parametrize("location", [
    "https://api.openalex.org/works;api_key=oa-secret-key-123;mailto=secret.person@example.org",
    "https://secret.person%40example.org:oa-secret-key-123@api.openalex.org/works",
    "https://api.openalex.org/works#oa-secret-key-123",
    "https://api.openalex.org/w/oa-secret-key-123/SECRET.PERSON@EXAMPLE.ORG",  # the address in another case
])
def test_a_redirect_never_carries_a_credential_into_what_is_written(tmp_path, location):
    # A refused redirect's target is kept in the outcome's warning, the snapshot index and (through them) the
    # ledger and the run's manifest: only its address, and nothing of the request's key or contact address.
    store = SnapshotStore(tmp_path / "snapshots")
    fetch, _, _ = fetcher(lambda request: httpx.Response(301, headers={"location": location}), mode="record",
                          store=store)
    with fetch:
        outcome = openalex.search(fetch, SETTINGS, {"search": "object in context"})
    assert outcome.status == "unavailable" and "redirects are refused" in outcome.warnings[0]
    written = b"".join(p.read_bytes() for p in (tmp_path / "snapshots").rglob("*") if p.is_file())
    for text in (written, " ".join(outcome.warnings).encode()):
        assert b"oa-secret-key-123" not in text and b"secret.person" not in text.lower(), text


@pytest.mark.parametrize("written", ["o&#x27;brien&#64;example.org", "o&apos;brien&#x0040;example.org",
                                     "O&#39;Brien@Example.org"])
def test_a_contact_address_an_html_page_echoes_as_character_references_is_kept_out_of_snapshots(tmp_path, written):
    """An error page (a 200 in HTML) echoes the address with its apostrophe or '@' as a character reference:
    recorded as it came, the address would be published with the review's snapshots."""
    settings = SourceSettings(contact_email="o'brien@example.org")

    def error_page(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=f"<html><p>Too many requests from {written}</p></html>".encode(),
                              headers={"content-type": "text/html"})

    store = SnapshotStore(tmp_path / "snapshots")
    fetch, _, _ = fetcher(error_page, mode="record", store=store)
    with fetch:
        assert openalex.search(fetch, settings, {"search": "x"}).status == "unavailable"
    bodies = b"".join(path.read_bytes() for path in (tmp_path / "snapshots").rglob("*") if path.is_file())
    assert b"brien" not in bodies.lower() and b"Too many requests from REDACTED" in bodies


def test_a_content_type_header_echoing_a_credential_is_kept_out_of_the_snapshot_index(tmp_path):
    """The index stores each response's content type: a provider echoing the request into that header would
    put the key and contact address into a file published with the review."""
    def echoing_header(request: httpx.Request) -> httpx.Response:
        return json_response(json.dumps({"meta": {"count": 0, "next_cursor": None}, "results": []}),
                             **{"content-type": f"application/json; request={request.url}"})

    store = SnapshotStore(tmp_path / "snapshots")
    fetch, _, _ = fetcher(echoing_header, mode="record", store=store)
    with fetch:
        assert openalex.search(fetch, SETTINGS, {"search": "x"}).status == "ok"
    index = (tmp_path / "snapshots" / "index.jsonl").read_bytes()
    assert b"oa-secret-key-123" not in index and b"secret.person" not in index, index
    assert b"REDACTED" in index


def _one_layer_undone(text: str) -> set[str]:
    """`text` with one encoding undone: %-decoded, HTML and XML references or JSON's escapes undone, or a run
    of base64 characters decoded (at each offset, in either alphabet, its last group padded)."""
    undone = {unquote_plus(text), unquote(text), html.unescape(text), text.replace("\\/", "/"),
              re.sub(r"\\u([0-9A-Fa-f]{4})", lambda escape: chr(int(escape.group(1), 16)), text)}
    for run in re.findall(r"[A-Za-z0-9+/_-]{8,}", text):
        for start in range(4):
            piece = run[start:].replace("-", "+").replace("_", "/")
            piece = piece[:len(piece) - (len(piece) % 4 == 1)]
            undone.add(base64.b64decode(piece + "=" * (-len(piece) % 4)).decode("utf-8", "replace"))
    return undone


def readings(data: bytes, layers: int = 4) -> set[str]:
    """Every way `data` can be read back through a chain of up to `layers` encodings, in any order."""
    found = frontier = {data.decode("utf-8", "replace")}
    for _ in range(layers):
        frontier = {undone for text in frontier for undone in _one_layer_undone(text)} - found
        found = found | frontier
    return found


@pytest.mark.parametrize("key_in", ["query", "header"])
def test_a_run_whose_provider_echoes_the_request_in_any_encoding_writes_no_form_of_a_credential(sitegen, tmp_path,
                                                                                               key_in):
    """A provider may echo the request it was sent (its URL, with the key and contact address in the query, or
    its Authorization header) inside another URL (%-encoded again), as JSON with '/' escaped, or as base64 (a
    cursor or token it builds from the request). A run that records its answers writes none of these forms to
    the snapshots, the records, the ledger or the run's manifest, all published with the review."""
    key, address = "oa-secret/key+123=", "o'brien.person@example.org"
    settings = SourceSettings(contact_email=address, openalex_api_key=key, openalex_key_in=key_in)

    def echoing(request: httpx.Request) -> httpx.Response:
        url, header = str(request.url), request.headers.get("authorization", "")
        echoes = [quote(url, safe=""), quote(quote(url, safe=""), safe=""), base64.b64encode(url.encode()).decode(),
                  base64.urlsafe_b64encode(f"cursor:{url}".encode()).decode(), url.replace("/", "\\/"),
                  base64.b64encode(header.encode()).decode(), base64.b64encode(f"{key}|{address}".encode()).decode()]
        work = {**SYNERGY[0], "display_name": f"{SYNERGY[0]['display_name']} {echoes[2]}", "title": None}
        return json_response(json.dumps({"meta": {"count": 1, "next_cursor": None, "echo": echoes},
                                         "results": [work]}))

    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2023-01-01T00:00:00Z")
    add_monitor(review, "watch", [Strategy(source="openalex", query="object context")], "2026-01-05T06:00:00Z",
                "record", settings=settings, transport=httpx.MockTransport(echoing))
    written = {path: path.read_bytes() for path in review.rglob("*") if path.is_file()}
    assert any(b"REDACTED" in data for path, data in written.items() if "snapshots" in path.parts)
    for path, data in written.items():
        for reading in readings(data):
            assert "secret/key" not in reading and "brien.person" not in reading.lower(), (path, reading)


REAL_OPENALEX_PAGE = FIXTURES / "openalex" / "openalex_works_list_title_search_paperqa.json"


def chained_echoes(url: str, key: str, address: str) -> list[str]:
    """The request echoed through chains of encodings a provider may put it through: inside another URL's query
    (%-encoded again, '@' as %2540), then in a base64 cursor; that cursor %-encoded in the next page's address and
    '\\/'-escaped in its JSON; base64 of base64; and JSON's \\u escapes %-encoded."""
    inner = quote(f"https://api.openalex.org/works?next={quote(url, safe='')}", safe="")  # '@' as %2540
    cursor = base64.b64encode(json.dumps({"request": inner}).encode()).decode()
    return [cursor,
            base64.urlsafe_b64encode(quote(quote(address, safe=""), safe="").encode()).decode(),
            f"https://api.openalex.org/works?cursor={quote(cursor, safe='')}".replace("/", "\\/"),
            base64.b64encode(base64.b64encode(f"{key}|{address}".encode())).decode(),
            quote(json.dumps(address.replace("@", "\\u0040"))),
            base64.b64encode(b"?" + key.encode()).decode().replace("/", "\\/")]


def test_a_credential_echoed_through_a_chain_of_encodings_is_redacted_from_a_real_page(tmp_path):
    """The address and key were kept out of what a run wrote only one encoding deep, or as base64 of the request
    %-encoded once: base64 of the address %-encoded twice (%2540), base64 of base64, a cursor %-encoded or
    '\\/'-escaped, JSON's escapes %-encoded were all written as echoed. A real OpenAlex page carries the echoes."""
    key, address = "oa-secret/key+123=", "o'brien.person@example.org"
    settings = SourceSettings(contact_email=address, openalex_api_key=key)
    page = json.loads(open(REAL_OPENALEX_PAGE, encoding="utf-8").read())

    def echoing(request: httpx.Request) -> httpx.Response:
        echoes = chained_echoes(str(request.url), key, address)
        return json_response(json.dumps({**page, "meta": {**page["meta"], "next_cursor": None, "echo": echoes}}))

    store = SnapshotStore(tmp_path / "snapshots")
    fetch, _, _ = fetcher(echoing, mode="record", store=store)
    with fetch:
        outcome = openalex.search(fetch, settings, {"search": "PaperQA"})
    assert outcome.status == "ok" and outcome.records  # the page's works are read as ever
    written = {path: path.read_bytes() for path in (tmp_path / "snapshots").rglob("*") if path.is_file()}
    assert any(b"REDACTED" in data for data in written.values())
    assert any(page["results"][0]["title"].encode() in data for data in written.values())  # the rest is kept
    for path, data in written.items():
        for reading in readings(data):
            assert "secret/key" not in reading and "brien.person" not in reading.lower(), (path, reading[:300])


HOSTILE = 300_000  # bytes of a body built so that every layer read back has more to undo


@pytest.mark.parametrize("body", [
    b"%" + b"25" * (HOSTILE // 2),  # one segment %-decoded a layer at a time, and a base64 run at each
    b"\\u0025" * (HOSTILE // 6),
    b"%5C%5Cu0025&amp;&#x25;\\\\/" * (HOSTILE // 25),  # every kind of escape in one segment
    base64.b64encode(base64.b64encode(base64.b64encode(b"%25" * (HOSTILE // 7)))),  # base64 three deep
    bytes(range(256)) * (HOSTILE // 256),
], ids=["%25", "json", "mixed", "base64", "bytes"])
def test_a_body_is_read_back_for_credentials_in_linear_time(body):
    """Each segment of a response is read back through up to four encodings, in any order: the escapes of every
    kind are undone together a layer a pass, and base64 decodes into bytes shorter than it, so a body built to
    have more to undo at every layer is still read in a second or so, even on a slow runner."""
    from sitegen.sources.http import _redact

    started = time.perf_counter()
    _redact(body, openalex.secrets(SETTINGS))
    assert time.perf_counter() - started < 10


def test_a_large_body_is_redacted_in_one_copy_and_one_without_a_credential_is_not_copied():
    # A body of many short segments (a JSON answer echoing api_key=…&email=… in every item) was rebuilt segment by
    # segment, a piece for each held in a list several times the body's size, even when nothing was a secret.
    from sitegen.sources.http import Secrets, _redact

    key, address = "k3yV4lue0123456789", "reviewer.one@example.org"
    secrets = Secrets(params={"api_key": key, "email": address})
    clean = b'{"url":"https://x/?api_key=abcdefghijklmnop&email=someone%40else.org"},' * 20_000
    assert _redact(clean, secrets) is clean  # nothing to redact: the body itself, not a copy
    item = f'{{"url":"https://x/?api_key={key}&email={quote(address)}","next":"{base64.b64encode(key.encode()).decode()}"}},'
    echoed = _redact(item.encode() * 20_000, secrets)
    assert echoed == b'{"url":"https://x/?api_key=REDACTED&email=REDACTED","next":"REDACTED"},' * 20_000
    assert _redact(b"", secrets) == b"" and _redact(key.upper().encode(), secrets) == b"REDACTED"


@pytest.mark.parametrize("given", ["oa-secret-key-123\n", " oa-secret-key-123\r\n", "\toa-secret-key-123 "])
def test_a_key_set_with_white_space_around_it_is_sent_and_redacted_as_the_key(tmp_path, given):
    # A secret pasted with its line's end: sent with it, a provider echoing the key without it had the key written
    # unredacted, as redaction looked for the value as given.
    settings = SourceSettings.from_environment({"OPENALEX_API_KEY": given})
    assert settings.openalex_api_key == "oa-secret-key-123"

    def echoing(request: httpx.Request) -> httpx.Response:
        sent = request.url.params["api_key"]
        return json_response(json.dumps({"meta": {"count": 10, "next_cursor": None, "echo": f"api_key={sent.strip()}"},
                                         "results": SYNERGY[:10]}))

    store = SnapshotStore(tmp_path / "snapshots")
    fetch, _, _ = fetcher(echoing, mode="record", store=store)
    with fetch:
        assert openalex.search(fetch, settings, {"search": "PaperQA"}).status == "ok"
    written = b"".join(path.read_bytes() for path in (tmp_path / "snapshots").rglob("*") if path.is_file())
    assert b"REDACTED" in written and b"oa-secret-key-123" not in written


@pytest.mark.parametrize("given", ["oa-secret key-123", "oa-secret\nkey-123", "oa-secret\x00key-123"])
def test_a_key_with_white_space_or_a_control_inside_is_refused_naming_its_variable_not_its_value(given):
    from sitegen.errors import SitegenError

    with pytest.raises(SitegenError, match=r"^environment variable NCBI_API_KEY: holds a space") as error:
        SourceSettings.from_environment({"NCBI_API_KEY": given})
    assert "oa-secret" not in str(error.value)


@pytest.mark.parametrize("given", ["me", "me@example", "me @example.org"])
def test_a_contact_address_that_is_no_email_address_is_refused_saying_what_to_set(given):
    # It was refused with pydantic's "String should match pattern '^[^@\\s]+@…'", which says nothing to act on.
    from sitegen.errors import SitegenError

    with pytest.raises(SitegenError, match=r"^environment variable SITEGEN_CONTACT_EMAIL: is no e-mail address: set "
                                           r"it to one .* such as you@example.org, or leave it unset$"):
        SourceSettings.from_environment({"SITEGEN_CONTACT_EMAIL": given})
    assert SourceSettings.from_environment({"SITEGEN_CONTACT_EMAIL": "team@example.org"}).contact_email


def test_a_run_asking_openalex_without_its_key_says_so_before_it_asks():
    # A newcomer's first run without OPENALEX_API_KEY read as an outage until OpenAlex's refusal came back.
    from sitegen.sources.search import search
    from sitegen.sources.settings import unset_key_note

    def refusing(request: httpx.Request) -> httpx.Response:
        return json_response(json.dumps({"error": "API key required"}), status=401)

    for settings, noted in [(SourceSettings(), True), (SourceSettings(openalex_api_key="oa-secret-key"), False)]:
        said: list[str] = []
        fetch, _, _ = fetcher(refusing)
        with fetch:
            search(fetch, "memory", ["openalex"], settings=settings, progress=said.append)
        assert (said[0] == "note: OPENALEX_API_KEY is not set; OpenAlex has required a key since February 2026, so it "
                           "will most likely refuse this run: set it to your OpenAlex key") is noted, said
    assert unset_key_note(["openalex"], SourceSettings(), "replay") is None  # a replay asks nothing
    assert unset_key_note(["pubmed", "europepmc"], SourceSettings(), "live") is None
