"""The one way sitegen talks to a provider: polite, bounded, recorded.

`Fetcher.request` enforces, for every request: a fixed allow-list of hosts per
provider, a minimum interval between requests, connect/read timeouts, a byte
cap on the body, refused redirects, bounded retries with backoff that honour
Retry-After, and each credential sent only to its own provider. In record mode
it stores every final response as a snapshot; in replay mode it serves only
snapshots and never opens a connection.

Provider modules turn what `request` returns (or the `SourceError` it raises) into
a typed outcome; nothing here knows any provider's response format.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import io
import re
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import SplitResult, urlencode, urlsplit

import httpx

from sitegen.errors import shown_text
from sitegen.review.models import Method, SnapshotEntry
from sitegen.sources.outcome import Status
from sitegen.sources.snapshots import SnapshotMissing, SnapshotStore, describe, fingerprint

RETRYABLE = {429, 500, 502, 503, 504}
GIVE_UP_AFTER = 3  # requests to one provider refused in a row, after every retry, before it is asked no more
# The most seconds one run waits out one provider's refusals (Retry-After and backoff), over all its requests. Each
# request's retries are bounded, but a provider that answers every page only after its retries (a 429 asking for a
# minute, twice) made a read of 200 pages wait ten hours: past it, a refusal is final at once.
WAIT_BUDGET = 600.0
# The longest address sent by GET. Servers refuse longer ones (HTTP 414) at limits of their own, from about 2,000
# characters up; a systematic review's strategy often runs to several thousand. A provider that takes the same
# parameters by POST (E-utilities, Europe PMC's searchPOST, arXiv) is sent a longer request so. The address is
# measured as it is recorded, without the credentials sent with it (a key and a contact address, a few dozen
# characters more): a replay without them (CI has none) must choose the method the recording was made with.
MAX_ADDRESS = 2000


RECORD_IT = "; record it with --snapshots record (needs the network)"  # how a missing response's message ends
AUTH_REFUSALS = frozenset({401, 403})  # a provider refusing access: a missing or wrong key (status auth_error)


class SourceError(Exception):
    """A request that produced no usable response: a timeout, a refusal, an outage."""

    def __init__(self, status: Status, message: str, retry_after: float | None = None, snapshot: str | None = None,
                 request: str = ""):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.snapshot = snapshot
        self.request = request


@dataclass(frozen=True)
class Provider:
    """What is allowed when talking to one provider."""

    name: str
    hosts: frozenset[str]
    min_interval: float  # seconds between two requests
    read_timeout: float = 30.0
    connect_timeout: float = 10.0
    max_bytes: int = 25_000_000
    max_seconds: float = 120.0  # for the whole answer: a server sending a byte at a time cannot hold a run forever
    max_retries: int = 3


@dataclass(frozen=True)
class Secrets:
    """Credentials and contact details for one request; never stored, never shown.

    `params` are added to the query string and `headers` to the request, but
    only after the host check, so they reach only the provider they belong to.
    """

    params: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def values(self) -> list[str]:
        """Every text to keep out of what is written, longest first: each parameter and header value, and
        the credential alone of a header written "<scheme> <credential>" ("Bearer KEY"), which a provider
        may echo without its scheme."""
        credentials = [value.split()[-1] for value in self.headers.values() if len(value.split()) > 1]
        given = {value for value in (*self.params.values(), *self.headers.values(), *credentials) if value}
        return sorted(given, key=lambda value: (-len(value), value))


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str
    request: str  # the request as executed, without credentials
    snapshot: str | None  # sha256 of the recorded body


class Fetcher:
    def __init__(self, mode: str = "live", snapshots: SnapshotStore | None = None, session: str = "",
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, max_wait: float = 60.0, wait_budget: float = WAIT_BUDGET):
        if mode not in ("live", "record", "replay"):
            raise ValueError(f"unknown snapshot mode {mode!r}")
        if mode != "live" and snapshots is None:
            raise ValueError(f"snapshot mode {mode!r} needs a snapshot store")
        self.mode = mode
        self.snapshots = snapshots
        self.session = session
        self._sleep = sleep or pause
        self._clock = clock
        self._max_wait = max_wait
        self._wait_budget = wait_budget
        self._waited: dict[str, float] = {}  # per provider, the seconds waited for retries in this run (WAIT_BUDGET)
        self._next_request: dict[str, float] = {}
        self._seen: dict[str, int] = {}  # how often each request was made in this run
        # Per provider, how many requests in a row ended still refused (429, 5xx) after every retry: at
        # GIVE_UP_AFTER it is asked nothing more in this run, so a verification of hundreds of studies
        # does not wait out the same refusal for each one (hours), nor keep asking one that asked to wait.
        self._refused_in_a_row: dict[str, int] = {}
        # The last of those refusals per provider: a provider given up on after rate limiting is rate limited
        # still (ask again later), not down, and the requests it is not asked say so.
        self._last_refusal: dict[str, SnapshotEntry] = {}
        # Per provider, the HTTP status with which it refused access (401, 403): a key it does not take is refused
        # again on every request, so it is asked nothing more in this run (update's run, a loop's round).
        self._refused_access: dict[str, int] = {}
        self._client = None if mode == "replay" else httpx.Client(transport=transport, follow_redirects=False)

    def close(self, save: bool = True) -> None:
        """End the session; in record mode, write what was recorded unless `save` is false."""
        if self._client is not None:
            self._client.close()
        if save and self.snapshots is not None and self.mode == "record":
            self.snapshots.save()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, exc_type, *exc_info) -> None:
        self.close(save=exc_type is None)  # a search that failed records nothing

    def request(self, provider: Provider, url: str, params: list[tuple[str, str]], secrets: Secrets = Secrets(),
                headers: dict[str, str] | None = None, post_to: str | None = None) -> Response:
        """A final response (any status the caller must interpret), or SourceError. Sent by GET, unless the
        address would be longer than MAX_ADDRESS and the provider takes the parameters by POST at `post_to`."""
        method: Method = "GET"
        if post_to is not None and len(url) + 1 + len(urlencode(params)) > MAX_ADDRESS:  # as recorded: see MAX_ADDRESS
            method, url = "POST", post_to
        parts = urlsplit(url)
        if parts.scheme != "https" or parts.hostname not in provider.hosts or parts.query or parts.username:
            raise ValueError(f"{url!r} is not an address sitegen may call for {provider.name}")
        key = fingerprint(method, url, params)
        shown = describe(method, url, params)
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        if self.mode == "replay":
            return self._replay(key, occurrence, shown, method, url, params)
        entry, body = self._fetch(provider, method, url, params, secrets, headers or {})
        entry = entry.model_copy(update={"fingerprint": key, "session": self.session, "occurrence": occurrence})
        if body is not None:
            body = _redact(body, secrets)
        if self.mode == "record":
            entry = self.snapshots.add(entry, body)
        return self._result(entry, body or b"", shown)

    # ----------------------------------------------------------------- internals

    def _replay(self, key: str, occurrence: int, shown: str, method: str, url: str,
                params: list[tuple[str, str]]) -> Response:
        # The run's own responses first; an ad-hoc search (no session) falls back to the latest run's.
        entry = self.snapshots.lookup(key, self.session, occurrence)
        if entry is None and not self.session:
            entry = self.snapshots.lookup(key, None, occurrence)
        if entry is None:
            session = f" in session {self.session!r}" if self.session else ""
            session += f" (repeat {occurrence + 1})" if occurrence else ""
            raise SnapshotMissing(f"replay: no recorded response for {shown}{session}"
                                  f"{_recorded_instead(self.snapshots.recorded_alike(method, url, self.session), params)}"
                                  f"{RECORD_IT}")
        return self._result(entry, self.snapshots.body(entry), shown)

    def _result(self, entry: SnapshotEntry, body: bytes, shown: str) -> Response:
        if entry.error is not None:
            raise SourceError(entry.error, entry.message or entry.error, entry.retry_after, entry.sha256, shown)
        if entry.status in RETRYABLE:
            status: Status = "rate_limited" if entry.status == 429 else "unavailable"
            raise SourceError(status, entry.message or f"HTTP {entry.status}", entry.retry_after, entry.sha256, shown)
        return Response(entry.status, body, entry.content_type or "", shown, entry.sha256)

    def _fetch(self, provider: Provider, method: Method, url: str, params: list[tuple[str, str]], secrets: Secrets,
               headers: dict[str, str]) -> tuple[SnapshotEntry, bytes | None]:
        """Send with retries; the final outcome as a snapshot entry (not yet stored) and body."""
        base = {"fingerprint": "0" * 64, "method": method, "url": url, "params": params}
        if (refused := self._refused_access.get(provider.name)) is not None:
            return SnapshotEntry(**base, error="auth_error", message=f"{provider.name} was not asked: it answered HTTP "
                                 f"{refused} to an earlier request of this run, most likely for a missing or wrong key"), None
        if self._refused_in_a_row.get(provider.name, 0) >= GIVE_UP_AFTER:
            last = self._last_refusal[provider.name]
            if last.status == 429:
                return SnapshotEntry(**base, error="rate_limited", retry_after=last.retry_after,
                                     message=f"{provider.name} was not asked: it rate limited {GIVE_UP_AFTER} requests "
                                     "in a row earlier in this run, after every retry"), None
            return SnapshotEntry(**base, error="unavailable", message=f"{provider.name} was not asked: it refused or "
                                 f"did not answer {GIVE_UP_AFTER} requests in a row earlier in this run, after every "
                                 "retry"), None
        entry, body, gave_up = self._fetch_with_retries(provider, method, url, params, secrets, headers, base)
        if entry.status in AUTH_REFUSALS:
            self._refused_access[provider.name] = entry.status
        self._refused_in_a_row[provider.name] = self._refused_in_a_row.get(provider.name, 0) + 1 if gave_up else 0
        if gave_up:
            self._last_refusal[provider.name] = entry
        return entry, body

    def _fetch_with_retries(self, provider: Provider, method: Method, url: str, params: list[tuple[str, str]],
                            secrets: Secrets, headers: dict[str, str],
                            base: dict) -> tuple[SnapshotEntry, bytes | None, bool]:
        """The final outcome and body, and whether it is a refusal that outlasted every retry (429, 5xx, no
        answer); a response sitegen refuses itself (a redirect, too large) is none: retrying would not help."""
        attempt = 0
        while True:
            self._wait_turn(provider)
            try:
                status, content_type, retry_after, body = self._send(provider, method, url, params, secrets, headers)
            except httpx.TimeoutException:
                outcome = SnapshotEntry(**base, error="timeout", message=f"{provider.name} did not answer in time")
                body = None
            except httpx.TransportError as exc:
                outcome = SnapshotEntry(**base, error="unavailable",
                                        message=f"{provider.name} could not be reached ({type(exc).__name__})")
                body = None
            except _Refused as exc:  # its text may quote the provider (a redirect's target): redacted as a body is
                return SnapshotEntry(**base, error="unavailable", message=_redact_text(str(exc), secrets)), None, False
            else:
                message = None if status < 400 else f"{provider.name} answered HTTP {status}"
                outcome = SnapshotEntry(**base, status=status, content_type=content_type, retry_after=retry_after,
                                        message=message)
                if status not in RETRYABLE:
                    return outcome, body, False
            attempt += 1
            delay = max(outcome.retry_after or 0.0, 2.0 ** (attempt - 1))
            if attempt > provider.max_retries or delay > self._max_wait:
                return outcome, body, True
            waited = self._waited.get(provider.name, 0.0)
            if waited + delay > self._wait_budget:
                note = (f" (sitegen waited {waited:,.0f} s for {provider.name}'s retries in this run, as long as a run "
                        "waits for one provider: no more retries)")
                return outcome.model_copy(update={"message": (outcome.message or "") + note}), body, True
            self._waited[provider.name] = waited + delay
            self._sleep(delay)

    def _send(self, provider: Provider, method: Method, url: str, params: list[tuple[str, str]], secrets: Secrets,
              headers: dict[str, str]) -> tuple[int, str, float | None, bytes]:
        request_headers = {"Accept": "application/json, application/xml;q=0.9, */*;q=0.1",
                           "Accept-Encoding": "gzip", **headers, **secrets.headers}
        query = params + list(secrets.params.items())
        sent: dict = {"params": query}
        if method == "POST":  # the parameters are the body, form-encoded as they would be in the address
            request_headers["Content-Type"] = "application/x-www-form-urlencoded"
            sent = {"content": urlencode(query).encode("ascii")}
        started = self._clock()
        with self._client.stream(method, url, headers=request_headers, **sent,
                                 timeout=httpx.Timeout(provider.read_timeout, connect=provider.connect_timeout)) as response:
            if response.is_redirect:
                target = response.headers.get("location", "elsewhere")
                raise _Refused(_REDIRECT.format(name=provider.name, target=_address_only(target)))
            declared = response.headers.get("content-length")
            if declared and declared.isdecimal() and int(declared) > provider.max_bytes:
                raise _Refused(f"{provider.name} response of {int(declared):,} bytes is over the "
                               f"{provider.max_bytes:,}-byte limit")
            body = _capped_body(response, provider, lambda: self._clock() - started)
            # The content type is kept in the snapshot index, and a header can echo the request as a body can
            # ("application/json; request=...?api_key=KEY"): redacted the same way.
            content_type = _redact_text(response.headers.get("content-type", ""), secrets)
            return response.status_code, content_type, _retry_after(response.headers), body

    def _wait_turn(self, provider: Provider) -> None:
        now = self._clock()
        ready = self._next_request.get(provider.name, now)
        if ready > now:
            self._sleep(ready - now)
            now = ready
        self._next_request[provider.name] = now + provider.min_interval


def pause(seconds: float) -> None:
    """Wait between requests (rate limits, backoff); tests replace it to run without waiting."""
    time.sleep(seconds)


_REDIRECT = "{name} redirected to {target}; redirects are refused"


def redirect_target(exc: SourceError) -> str | None:
    """The address a refused redirect pointed to (without its query), when `exc` is one; it is read back from the
    message because a replayed run has only the message its recording stored."""
    match = re.fullmatch(r".+? redirected to (\S+); redirects are refused", str(exc))
    return match.group(1) if match else None


_TOO_LARGE = re.compile(r".+ response(?: of [0-9,]+ bytes)? is over the [0-9,]+-byte limit")


def too_large(exc: SourceError) -> bool:
    """Whether `exc` is a response refused for its size (read back from the message, as a replayed run has only
    that): a provider that pages by count can be asked for fewer records at a time."""
    return bool(_TOO_LARGE.fullmatch(str(exc)))


class _Refused(Exception):
    """A response sitegen will not accept (redirect, too large); not worth retrying."""


def _capped_body(response: httpx.Response, provider: Provider, elapsed: Callable[[], float]) -> bytes:
    """The decoded body, refused as soon as it passes the byte cap or the overall deadline.

    Decompression is done here, a bounded piece at a time, so a small compressed
    body that would expand to gigabytes (a "gzip bomb") is refused without ever
    being expanded in full.
    """
    if response.is_stream_consumed:  # built already read (in-process transports do this): nothing to inflate
        raw_chunks, encoding = iter([response.content]), "identity"
    else:
        raw_chunks, encoding = response.iter_raw(), response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("identity", "gzip"):
        raise _Refused(f"{provider.name} answered with content encoding {encoding!r}, which sitegen does not accept")
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
    chunks, size = [], 0
    for raw in raw_chunks:
        if elapsed() > provider.max_seconds:
            raise httpx.ReadTimeout(f"{provider.name} took more than {provider.max_seconds:g} s to send its answer")
        pieces = [raw]
        if inflate is not None:
            pieces = []
            while raw:
                try:
                    piece = inflate.decompress(raw, provider.max_bytes + 1 - size)
                except zlib.error:
                    raise _Refused(f"{provider.name} sent a corrupt gzip body") from None
                pieces.append(piece)
                size_now = size + sum(len(p) for p in pieces)
                if size_now > provider.max_bytes or not piece:
                    break
                raw = inflate.unconsumed_tail
        for piece in pieces:
            size += len(piece)
            if size > provider.max_bytes:
                raise _Refused(f"{provider.name} response is over the {provider.max_bytes:,}-byte limit")
            chunks.append(piece)
    return b"".join(chunks)


def _address_only(url: str) -> str:
    """A redirect's target as scheme, host and path only: its user information, ;parameters, query and
    fragment can carry the request's key or contact address back, and none of them says where it points."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    port = f":{parts.port}" if _has_port(parts) else ""
    path = re.sub(r";[^/]*", "", parts.path)
    shown = f"{parts.scheme}://{host}{port}{path}" if parts.scheme and host else path
    # provider text in a message, escaped as `said` escapes it: a header may carry a bidi override (read as UTF-8)
    return shown_text("".join(shown.split())) or "elsewhere"


def _has_port(parts: SplitResult) -> bool:
    try:
        return parts.port is not None
    except ValueError:  # a port that is no number
        return False


def _retry_after(headers: httpx.Headers) -> float | None:
    """Retry-After in seconds (a number or an HTTP date), clamped to [0, 3600]."""
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = value.strip()
    if re.fullmatch(r"[0-9]+", seconds):  # float reads any digits (too many for a number: inf, a very long wait)
        return min(float(seconds), 3600.0)
    try:
        when = _http_date(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    try:  # the server's own clock, when it sends a readable one
        now = _http_date(headers.get("date", ""))
    except (TypeError, ValueError, IndexError, OverflowError):
        now = datetime.now(UTC)
    return min(max((when - now).total_seconds(), 0.0), 3600.0)


def _http_date(text: str) -> datetime:
    """An HTTP date, which is always in GMT: the asctime form ("Sun Nov  6 08:49:37 1994"), which HTTP requires a
    reader to take, names no zone, and read without one it could not be compared with the other forms."""
    when = email.utils.parsedate_to_datetime(text)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _redact_text(text: str, secrets: Secrets) -> str:
    return _redact(text.encode("utf-8", "surrogatepass"), secrets).decode("utf-8", "replace")


def _recorded_instead(alike: list[SnapshotEntry], params: list[tuple[str, str]], most: int = 3) -> str:
    """What a replay missing a response says of the requests to the same address the run did record: asked with
    other parameters, named, so no recorded response answers this one and none is taken in its place (another
    `select=` or page size could give another verdict). The parameters that differ say why: a `search` or `term`
    is another query than the one recorded (a new search needs the network), a `select` or page size another
    sitegen's request."""
    if not alike:
        return ""
    shown = list(dict.fromkeys(describe(entry.method, entry.url, entry.params) for entry in alike))  # each once
    more = f" and {len(shown) - most} more" if len(shown) > most else ""
    asked = {tuple(pair) for pair in params}
    # Against the recording closest to the request (the first page of another query differs in its query alone)
    differing = min((sorted({name for name, _ in {tuple(pair) for pair in entry.params} ^ asked}) for entry in alike),
                    key=len)
    return (f"; the run recorded this address only with other parameters ({'; '.join(shown[:most])}{more}), "
            f"differing in {', '.join(differing)}: another query than this one, or a sitegen that asked differently; "
            "no recording matches this request, so none is used for it")


def _redact(body: bytes, secrets: Secrets) -> bytes:
    # Some providers echo the request; a key or contact address must never reach a snapshot,
    # a warning or the ledger in any form it could be read back from.
    for value in secrets.values():
        body = _replaced(body, (found.span() for found in _secret_pattern(value).finditer(body)))
        body = _encoded_secret(value).redact(body)
    return body


def _replaced(body: bytes, spans: Iterable[tuple[int, int]]) -> bytes:
    """`body` with each of `spans` (in order, apart) replaced by REDACTED, the rest written once into one buffer:
    `body` itself when there are none. Linear in the body, and never more than the body and its redacted copy
    (re.sub, and joining a list of pieces, held a small object for each of a million echoed keys: four times the
    body's size again)."""
    out, end = None, 0
    view = memoryview(body)
    for start, stop in spans:
        out = out or io.BytesIO()
        out.write(view[end:start])
        out.write(b"REDACTED")
        end = stop
    if out is None:
        return body
    out.write(view[end:])
    return out.getvalue()


# The named character references HTML and XML write for the characters they must escape ("o'brien@…" echoed
# by an HTML error page is "o&#x27;brien@…" or "o&apos;brien@…").
_NAMED_REFERENCES = {"&": b"&amp;", "<": b"&lt;", ">": b"&gt;", '"': b"&quot;", "'": b"&apos;"}


@functools.cache  # one pattern per secret, made once: it is applied to every response and message of a run
def _secret_pattern(value: str) -> re.Pattern[bytes]:
    """Matches the secret spelled character by character (each character plainly or escaped, see `_character`),
    in any case: a contact address is the same address however a provider echoes it."""
    return re.compile(b"(?i:" + b"".join(_character(char) for char in value) + b")")


def _character(char: str) -> bytes:
    """A pattern for one character of a secret written plainly, %-encoded once or more (a URL echoed inside
    another URL's query is encoded again: '@' is %40, %2540, %252540), \\u-escaped or '\\/' as JSON writes it,
    or as an HTML or XML character reference (&#64;, &#x40;, &apos;)."""
    encoded = char.encode("utf-8")
    forms = [re.escape(encoded), "".join(f"%(?:25)*{byte:02X}" for byte in encoded).encode(),
             re.escape(f"\\u{ord(char):04X}".encode()),
             f"&#0*{ord(char)};".encode(), f"&#x0*{ord(char):X};".encode()]  # references with any leading zeros
    if char == " ":
        forms.append(re.escape(b"+"))
    if char == "/":
        forms.append(re.escape(b"\\/"))
    if char in _NAMED_REFERENCES:
        forms.append(re.escape(_NAMED_REFERENCES[char]))
    return b"(?:" + b"|".join(forms) + b")"


# How many encodings deep a secret is looked for: base64 of the address %-encoded twice (a URL echoed inside
# another URL's query, then put in a cursor) is three; a JSON escape on the way, four.
LAYERS = 4
# Bytes none of these encodings writes: an encoded secret lies between two of them (or holds the byte itself).
_DELIMITERS = b"\"'<>(){}[],"
# One escape of any kind `_character` knows, each undone as it is written: %XX, JSON's \\uXXXX and \\/ (and its
# other short escapes), and HTML and XML character references (numeric, and the named ones of _NAMED_REFERENCES).
_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})|\\([\"\\/bfnrt])"
                     rb"|&#0*([0-9]{1,7});|&#[xX]0*([0-9A-Fa-f]{1,6});|&(amp|lt|gt|quot|apos);")
_SHORT_ESCAPES = {b'"': b'"', b"\\": b"\\", b"/": b"/", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r",
                  b"t": b"\t"}
_NAMED = {reference[1:-1]: char.encode() for char, reference in _NAMED_REFERENCES.items()}  # b"amp": b"&"


def _unescaped(escape: re.Match[bytes]) -> bytes:
    percent, unicode, short, decimal, hexadecimal, named = escape.groups()
    if percent:
        return bytes([int(percent, 16)])
    if short:
        return _SHORT_ESCAPES[short]
    if named:
        return _NAMED[named]
    code = int(unicode, 16) if unicode else int(decimal) if decimal else int(hexadecimal, 16)
    return chr(code).encode("utf-8", "surrogatepass") if code <= 0x10FFFF else escape.group()


@dataclass(frozen=True)
class _EncodedSecret:
    """A secret hidden by a chain of the encodings `_character` knows one layer of, each over the whole text
    before it: %-encoding (once or more), JSON's escapes, HTML and XML references, and base64 (a provider may
    echo a URL it was sent, encoded again inside another, in a cursor it builds as base64, which is %-encoded in
    the next page's address and '\\/'-escaped in its JSON). Each segment of the text long enough to hold it is
    read back through up to LAYERS of them, and replaced whole when a reading holds it.

    Linear in the text (a 300 KB body built to have more to undo at every layer is read in a fraction of a
    second): the escapes of every kind are undone together, a layer a pass, so a segment's readings are a chain,
    not a tree of every order; each run of base64 characters is read (from each of the four characters a group
    could start at) into bytes shorter than itself, read back in turn with a layer fewer."""

    plain: re.Pattern[bytes]  # the secret as it is, in any case: a contact address is the same address in any case
    segments: re.Pattern[bytes]  # the runs of bytes between delimiters long enough to hold the secret
    base64_runs: re.Pattern[bytes]  # the runs of base64 characters long enough to hold it

    def redact(self, body: bytes) -> bytes:
        """`body` with each segment holding the secret replaced (`_replaced`): a body holding none is returned as it
        is. Rebuilt segment by segment (re.sub with a function), a body of many short segments (a JSON answer
        echoing api_key=…&email=… in every item) was held as a list of a piece for each, several times its size,
        even when nothing in it was a secret."""
        return _replaced(body, (found.span() for found in self.segments.finditer(body)
                                if self._holds(found.group(), LAYERS)))

    def _holds(self, text: bytes, layers: int) -> bool:
        """Whether `text`, read back through at most `layers` encodings, holds the secret."""
        while self.plain.search(text) is None:  # searched in any case, not in a lower-cased copy of the text
            if not layers:
                return False
            layers -= 1
            if any(self._holds(decoded, layers) for decoded in self._base64_readings(text)):
                return True
            unescaped = _ESCAPE.sub(_unescaped, text)
            if unescaped == text:
                return False
            text = unescaped
        return True

    def _base64_readings(self, text: bytes) -> Iterator[bytes]:
        """Each run of base64 characters in `text` decoded, from each of the four characters its first group
        could start at (the run may begin with a word glued to it), in either alphabet."""
        for run in self.base64_runs.finditer(text):
            characters = run.group().translate(_STANDARD)
            for start in range(4):
                piece = characters[start:]
                if len(piece) % 4 == 1:  # a last character alone holds no whole byte
                    piece = piece[:-1]
                yield base64.b64decode(piece + b"=" * (-len(piece) % 4))  # the last group's bytes too


@functools.cache  # made once per secret, as its pattern
def _encoded_secret(value: str) -> _EncodedSecret:
    secret = value.encode("utf-8").lower()
    delimiters = bytes(byte for byte in _DELIMITERS if byte not in secret)
    # No encoding shortens the text it encodes, base64 lengthens it by a third. White space always ends a segment:
    # a secret holding a space ("Bearer KEY") is redacted as its credential alone too (`Secrets.values`).
    return _EncodedSecret(re.compile(re.escape(secret), re.IGNORECASE),
                          re.compile(rb"[^\s%s]{%d,}" % (re.escape(delimiters), len(secret))),
                          re.compile(rb"[A-Za-z0-9+/_-]{%d,}" % -(-4 * len(secret) // 3)))


_STANDARD = bytes.maketrans(b"-_", b"+/")  # the URL-safe alphabet read as the standard one
