"""Test doubles for the provider layer: a routed httpx MockTransport and a fetcher that never sleeps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httpx

from sitegen.sources.http import Fetcher
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.snapshots import SnapshotStore

Handler = Callable[[httpx.Request], httpx.Response]


class FakeTime:
    """A clock that only moves when the code under test sleeps; records every sleep."""

    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Recorder:
    """Wraps a handler and keeps every request it saw."""

    def __init__(self, handler: Handler):
        self.handler = handler
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.handler(request)


def fetcher(handler: Handler, mode: str = "live", store: SnapshotStore | None = None, session: str = "",
            time: FakeTime | None = None) -> tuple[Fetcher, Recorder, FakeTime]:
    recorder = Recorder(handler)
    time = time or FakeTime()
    return (Fetcher(mode, store, session, transport=httpx.MockTransport(recorder), sleep=time.sleep, clock=time.clock),
            recorder, time)


def json_response(body: bytes | str, status: int = 200, **headers: str) -> httpx.Response:
    data = body.encode() if isinstance(body, str) else body
    return httpx.Response(status, content=data, headers={"content-type": "application/json", **headers})


@dataclass
class Call:
    """One provider call for the fault-injection suite: the module holding its PROVIDER,
    how to run it, and a good response (real, recorded) for the faults to break."""

    module: object
    run: Callable[[Fetcher], SourceOutcome]
    good_body: bytes
    content_type: str
