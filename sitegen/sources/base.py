"""Plumbing every provider module shares: a call's trace and safe parsing.

A provider function does its requests through a `Trace`, which remembers every
executed request (without credentials) and snapshot hash; `run_call` turns
whatever went wrong into a typed outcome, so no provider error escapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from lxml import etree
from pydantic import ValidationError

from sitegen.review.models import Record, Source
from sitegen.sources.http import Fetcher, Provider, Response, Secrets, SourceError
from sitegen.sources.outcome import SourceOutcome, Status


class Malformed(Exception):
    """A response that cannot be what the provider promised: bad JSON/XML, wrong shape, short body."""


class Unsupported(Exception):
    """The request cannot be expressed for this provider; nothing was sent."""


class Trace:
    def __init__(self, source: Source, fetcher: Fetcher, provider: Provider, secrets: Secrets):
        self.source = source
        self.fetcher = fetcher
        self.provider = provider
        self.secrets = secrets
        self.executed: list[str] = []
        self.hashes: list[str] = []
        self.warnings: list[str] = []

    def get(self, url: str, params: list[tuple[str, str]], headers: dict[str, str] | None = None) -> Response:
        try:
            response = self.fetcher.get(self.provider, url, params, self.secrets, headers)
        except SourceError as exc:
            self._remember(exc.request, exc.snapshot)
            raise
        self._remember(response.request, response.snapshot)
        return response

    def _remember(self, request: str, snapshot: str | None) -> None:
        if request:
            self.executed.append(request)
        if snapshot and snapshot not in self.hashes:
            self.hashes.append(snapshot)

    def outcome(self, status: Status, records=(), total: int | None = None, retry_after: float | None = None,
                warning: str | None = None) -> SourceOutcome:
        warnings = self.warnings + ([warning] if warning else [])
        return SourceOutcome(source=self.source, status=status, records=list(records), total=total,
                             warnings=warnings, executed_query=self.executed, snapshot_hashes=self.hashes,
                             retry_after=retry_after)


def run_call(trace: Trace, call: Callable[[Trace], SourceOutcome]) -> SourceOutcome:
    """Run one provider call; every provider failure becomes an outcome with a warning in words."""
    label = trace.provider.name
    try:
        return call(trace)
    except SourceError as exc:
        what = {"rate_limited": "rate-limited", "timeout": "timed out", "unavailable": "unavailable"}
        return trace.outcome(exc.status, retry_after=exc.retry_after,
                             warning=f"{label} {what.get(exc.status, exc.status)}: {exc}")
    except Malformed as exc:
        return trace.outcome("unavailable", warning=f"{label} returned an unusable response: {exc}")
    except ValidationError as exc:  # a provider record that does not fit the record format
        return trace.outcome("unavailable", warning=f"{label} returned an unusable record: "
                                                    f"{exc.error_count()} field(s) invalid")
    except Unsupported as exc:
        return trace.outcome("unsupported", warning=f"{label} cannot run this query: {exc}")


def to_records(items: list[Any], convert: Callable[[Any], Record | None],
               item_type: type = object) -> tuple[list[Record], int]:
    """Provider items as records, and how many were skipped (wrong shape, no identifier or title)."""
    records = [record for item in items if isinstance(item, item_type) and (record := convert(item)) is not None]
    return records, len(items) - len(records)


def parse_json(response: Response) -> Any:
    try:
        return json.loads(response.body)
    except (ValueError, RecursionError):
        raise Malformed("the body is not valid JSON (truncated or not JSON)") from None


# No entities, no DTDs, no network, no huge trees: provider XML is untrusted.
_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, dtd_validation=False)


def parse_xml(data: bytes) -> etree._Element:
    try:
        root = etree.fromstring(data, parser=_XML)
    except etree.XMLSyntaxError as exc:
        raise Malformed(f"the body is not well-formed XML ({exc.msg})") from None
    if root is None:
        raise Malformed("the body is empty")
    return root


def check_status(response: Response, provider: str) -> None:
    """Map the statuses every provider shares; 2xx passes, 404 is the caller's to interpret."""
    if response.status in (400, 422):
        raise Unsupported(f"{provider} rejected the query (HTTP {response.status}): {_message(response)}")
    if response.status in (401, 403):
        raise SourceError("unavailable", f"{provider} refused the request (HTTP {response.status}: credentials or "
                                         f"allowance): {_message(response)}")
    if response.status >= 400 and response.status != 404:
        raise SourceError("unavailable", f"{provider} answered HTTP {response.status}")


def _message(response: Response) -> str:
    text = response.body[:300].decode("utf-8", "replace")
    try:
        data = json.loads(response.body)
        if isinstance(data, dict):
            text = str(data.get("message") or data.get("error") or text)[:300]
    except ValueError:
        pass
    return " ".join(text.split())
