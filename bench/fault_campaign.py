#!/usr/bin/env python3
"""Fault campaign: every kind of provider fault, at every request of a living-review update.

    python bench/fault_campaign.py

A baseline review runs a saved search of two real sources (OpenAlex works of
the SYNERGY dataset, paged five at a time, and Europe PMC core results); then
an update at which both have new records runs once without faults (the
reference) and once per (fault kind, request number), each from a fresh copy of
the baseline. A run that exits 0 must hold every record the reference found;
one that cannot must say so (exit 3). Printed: per fault kind, how many runs
were complete and whole, incomplete (exit 3), and wrong: complete with records
missing, ids lost from `seen_ids`, or a crash. The target is 0 wrong.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx

from sitegen import commands
from sitegen.errors import SitegenError
from sitegen.review.models import Strategy
from sitegen.review.scaffold import init_review
from sitegen.sources import http
from sitegen.sources.settings import SourceSettings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
WORKS = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
RESULTS = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_text())["resultList"]["result"]
SETTINGS = SourceSettings(openalex_per_page=5, max_records=1000)
STRATEGIES = [Strategy(source="openalex", query="object context"), Strategy(source="europepmc", query="cancer")]
BASELINE, UPDATE = "2026-01-05T06:00:00Z", "2026-01-12T06:00:00Z"
Answer = Callable[[httpx.Request], httpx.Response]


def json_response(data: object) -> httpx.Response:
    return httpx.Response(200, content=json.dumps(data).encode(), headers={"content-type": "application/json"})


class Providers:
    """OpenAlex (cursor paging over `works`) and Europe PMC (one page of `results`)."""

    def __init__(self, works: list[dict], results: list[dict]):
        self.works, self.results = works, results

    def page(self, request: httpx.Request) -> dict:
        if request.url.host == "api.openalex.org":
            cursor = request.url.params["cursor"]
            start = 0 if cursor == "*" else int(cursor)
            size = int(request.url.params["per_page"])
            following = str(start + size) if start + size < len(self.works) else None
            return {"meta": {"count": len(self.works), "next_cursor": following},
                    "results": self.works[start:start + size]}
        return {"hitCount": len(self.results), "nextCursorMark": "end", "resultList": {"result": self.results}}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        return json_response(self.page(request))


def _lower_count(page: dict) -> dict:
    if "meta" in page:
        return {**page, "meta": {**page["meta"], "count": 1, "next_cursor": page["meta"]["next_cursor"] or "more"}}
    return {**page, "hitCount": 1, "nextCursorMark": "more"}


def _higher_count(page: dict) -> dict:
    return {**page, "meta": {**page["meta"], "count": page["meta"]["count"] + 7}} if "meta" in page \
        else {**page, "hitCount": page["hitCount"] + 7}


def _zero(page: dict) -> dict:
    return {"meta": {"count": 0, "next_cursor": None}, "results": []} if "meta" in page \
        else {"hitCount": 0, "nextCursorMark": "*", "resultList": {"result": []}}


def _items(page: dict) -> list[dict]:
    return page["results"] if "meta" in page else page["resultList"]["result"]


def _with_items(page: dict, items: list) -> dict:
    return {**page, "results": items} if "meta" in page else {**page, "resultList": {"result": items}}


def _malformed_record(page: dict) -> dict:
    items = _items(page)
    return _with_items(page, [{**items[0], "title": {"not": "text"}}, *items[1:]]) if items else page


def _record_dropped(page: dict) -> dict:
    return _with_items(page, _items(page)[1:])


def _repeated_items(page: dict) -> dict:
    items = _items(page)
    return _with_items(page, [items[0]] * len(items)) if items else page


def _error_inside(page: dict) -> dict:
    return {"error": "Internal error", "message": "try again later"}


def edited(edit: Callable[[dict], dict]) -> Callable[[Providers, httpx.Request], httpx.Response]:
    return lambda providers, request: json_response(edit(providers.page(request)))


def raw(response: Callable[[httpx.Request], httpx.Response]) -> Callable[[Providers, httpx.Request], httpx.Response]:
    return lambda providers, request: response(request)


def _raise(error: type[Exception]) -> Callable[[httpx.Request], httpx.Response]:
    def answer(request: httpx.Request) -> httpx.Response:
        raise error("injected", request=request)
    return answer


FAULTS: dict[str, Callable[[Providers, httpx.Request], httpx.Response]] = {
    "http-429": raw(lambda r: httpx.Response(429, headers={"retry-after": "1"})),
    "http-500": raw(lambda r: httpx.Response(500)),
    "http-503": raw(lambda r: httpx.Response(503)),
    "http-404": raw(lambda r: httpx.Response(404)),
    "http-401": raw(lambda r: httpx.Response(401, json={"message": "bad key"})),
    "http-400": raw(lambda r: httpx.Response(400, json={"message": "bad query"})),
    "redirect": raw(lambda r: httpx.Response(302, headers={"location": "https://elsewhere.example/"})),
    "timeout": raw(_raise(httpx.ReadTimeout)),
    "connection-refused": raw(_raise(httpx.ConnectError)),
    "empty-200": raw(lambda r: httpx.Response(200, content=b"", headers={"content-type": "application/json"})),
    "truncated-json": lambda p, r: httpx.Response(200, content=json_response(p.page(r)).content[:-40]),
    "html-page": raw(lambda r: httpx.Response(200, text="<html>maintenance</html>",
                                              headers={"content-type": "text/html"})),
    "gzip-bomb": raw(lambda r: httpx.Response(200, content=gzip.compress(b"[" + b" " * 40_000_000 + b"]"),
                                              headers={"content-encoding": "gzip"})),
    "error-inside-200": edited(_error_inside),
    "count-below-results": edited(_lower_count),
    "count-above-results": edited(_higher_count),
    "valid-looking-zero": edited(_zero),
    "malformed-record": edited(_malformed_record),
    "record-missing": edited(_record_dropped),
    "repeated-items": edited(_repeated_items),
}


class Faulty:
    """Answers like `providers`, except the `at`-th request (1-based), which gets the fault."""

    def __init__(self, providers: Providers, fault: Callable[[Providers, httpx.Request], httpx.Response], at: int):
        self.providers, self.fault, self.at, self.count = providers, fault, at, 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.count += 1
        return self.fault(self.providers, request) if self.count == self.at else self.providers(request)


def baseline(folder: Path) -> Path:
    review = folder / "baseline"
    init_review(review, "Fault campaign")
    commands.protocol_lock(review, "2026-01-01T00:00:00Z")
    commands.add_monitor(review, "watch", STRATEGIES, BASELINE, settings=SETTINGS,
                         transport=httpx.MockTransport(Providers(WORKS[:15], RESULTS[:3])))
    return review


def seen_ids(review: Path) -> list[str]:
    return json.loads((review / "searches" / "watch.json").read_text())["seen_ids"]


def main() -> None:
    http.pause = lambda seconds: None  # retries and rate limits would wait for real; the faults are the point
    updated = Providers(WORKS, RESULTS[:6])  # ten new OpenAlex works, three new Europe PMC results
    with tempfile.TemporaryDirectory() as scratch:
        scratch_dir = Path(scratch)
        base = baseline(scratch_dir)
        before = seen_ids(base)
        reference = scratch_dir / "reference"
        shutil.copytree(base, reference)
        counting = Faulty(updated, lambda p, r: p(r), 0)
        assert commands.update(reference, UPDATE, settings=SETTINGS, transport=httpx.MockTransport(counting)).complete
        expected = set(seen_ids(reference))
        requests = counting.count
        tally: dict[str, Counter] = {}
        wrong: list[str] = []
        for name, fault in FAULTS.items():
            tally[name] = Counter()
            for at in range(1, requests + 1):
                trial = scratch_dir / f"{name}-{at}"
                shutil.copytree(base, trial)
                try:
                    result = commands.update(trial, UPDATE, settings=SETTINGS,
                                             transport=httpx.MockTransport(Faulty(updated, fault, at)))
                except SitegenError as exc:
                    tally[name]["error"] += 1
                    wrong.append(f"{name} at request {at}: {exc}")
                    continue
                after = set(seen_ids(trial))
                if not set(before) <= after:
                    tally[name]["ids lost"] += 1
                    wrong.append(f"{name} at request {at}: seen ids lost")
                elif result.complete and after != expected:
                    tally[name]["complete but missing"] += 1
                    wrong.append(f"{name} at request {at}: exit 0 with {len(expected - after)} records missing")
                elif result.complete:
                    tally[name]["complete, whole"] += 1
                else:
                    tally[name]["incomplete (exit 3)"] += 1
                shutil.rmtree(trial)
    columns = ["complete, whole", "incomplete (exit 3)", "complete but missing", "ids lost", "error"]
    print(f"{requests} requests per update; each fault kind injected at each of them\n")
    print(f"{'fault kind':22}" + "".join(f"{c:>22}" for c in columns))
    for name, counts in tally.items():
        print(f"{name:22}" + "".join(f"{counts[c]:>22}" for c in columns))
    trials = sum(sum(c.values()) for c in tally.values())
    print(f"\n{len(FAULTS)} fault kinds, {trials} runs, {len(wrong)} wrong (target 0)")
    for line in wrong:
        print(f"  {line}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
