"""Plumbing every provider module shares: a call's trace, safe parsing, reading
untrusted values, converting items to records, and paging.

A provider function does its requests through a `Trace`, which remembers every
executed request (without credentials) and snapshot hash; `run_call` turns
whatever went wrong into a typed outcome, so no provider error escapes. A paged
search reads its pages through a `Pager`, which alone decides when paging stops
and whether what was read is the whole answer, a truncated one, or an outage.
"""

from __future__ import annotations

import hashlib
import html
import html.entities
import json
import re
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from lxml import etree
from pydantic import ValidationError

from sitegen.errors import shown_text
from sitegen.records.ids import NAMESPACE_LABELS
from sitegen.records.listing import listed
from sitegen.records.markup import plain_text
from sitegen.records.model import (
    CONTROL_CHARACTER,
    MONTH_BY_ABBREVIATION,
    CslDate,
    NoticeOf,
    Record,
    calendar_date,
    leaving_out_overlong_abstracts,
    visible_text,
)
from sitegen.records.providers import Source
from sitegen.review.parsing import load_json
from sitegen.sources.http import AUTH_REFUSALS, Fetcher, Provider, Response, Secrets, SourceError, too_large
from sitegen.sources.outcome import SourceOutcome, Status
from sitegen.text import counted


class Malformed(Exception):
    """A response that cannot be what the provider promised: bad JSON/XML, wrong shape, short body."""


class Unsupported(Exception):
    """The request cannot be expressed for this provider; nothing was sent."""


class Unreadable(ValueError):
    """An item that names a work sitegen could track (it has an identifier) but cannot be read as a record."""


class UntitledAnswer(Malformed):
    """A lookup answered with an identified work the provider gives no title (a journal issue, a component): an
    answer, not an outage, as asked again the provider answers the same, but no record (`no_record`). `run_call`
    makes it an `ok` outcome without records whose `doubt` says so, never "not found"."""


class Untitled(Exception):
    """An identified work the provider gives no title (a journal issue, a component): left out, by name."""

    def __init__(self, record_id: str):
        super().__init__(record_id)
        self.record_id = record_id


# Crossref's work types to CSL item types, also OpenAlex's older vocabulary (`openalex.CSL_TYPES`); anything else is a
# plain "article". A DOI Crossref lists among works may name a whole container (a journal, one of its issues, a
# proceedings volume, a book series): CSL's type for it, never "article", which sitegen exports as an unpublished work
# (RIS UNPB), a preprint.
CROSSREF_CSL_TYPES = {
    "journal-article": "article-journal",
    "posted-content": "article",
    "proceedings-article": "paper-conference",
    "book-chapter": "chapter",
    "book-part": "chapter",
    "book-section": "chapter",
    "book": "book",
    "monograph": "book",
    "edited-book": "book",
    "reference-book": "book",
    "reference-entry": "entry",
    "peer-review": "review",
    "dissertation": "thesis",
    "report": "report",
    "dataset": "dataset",
    "database": "dataset",
    "standard": "standard",
    "journal": "periodical",
    "journal-volume": "periodical",
    "journal-issue": "periodical",
    "proceedings": "book",
    "proceedings-series": "book",
    "book-series": "book",
    "book-set": "book",
    "report-series": "report",
    "report-component": "report",
}

# NLM's placeholder for a title it does not have ("[Not Available]."), which PubMed and the databases that take
# its records (Europe PMC) send as the title: no title.
NO_TITLE = re.compile(r"\[\s*not available\s*\]\.?", re.IGNORECASE)


def require_title(title: str | None, record_id: str, *, malformed: bool = False) -> str:
    """The title of an identified work. A title the provider left out (or NLM's placeholder for one) makes the
    work `Untitled` (left out and named); a title field holding something other than text makes the item
    `Unreadable`, which leaves the source's slice of the run incomplete until a human looks."""
    if title and not NO_TITLE.fullmatch(title):
        return title
    if malformed:
        raise Unreadable(f"{record_id} has a title that is not text")
    raise Untitled(record_id)


class Trace:
    def __init__(self, source: Source, fetcher: Fetcher, provider: Provider, secrets: Secrets):
        self.source = source
        self.fetcher = fetcher
        self.provider = provider
        self.secrets = secrets
        self.executed: list[str] = []
        self.hashes: list[str] = []
        self.warnings: list[str] = []
        self.pager: Pager | None = None  # the paged read under way, if any: what a failure part-way left unread

    def get(self, url: str, params: list[tuple[str, str]], headers: dict[str, str] | None = None,
            post_to: str | None = None) -> Response:
        """The response to `url` with `params`; a request too long for an address goes by POST to `post_to`, where
        the provider takes one (see `Fetcher.request`)."""
        try:
            response = self.fetcher.request(self.provider, url, params, self.secrets, headers, post_to)
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
                warning: str | None = None, truncated: bool = False, dropped: int = 0,
                cause: str | None = None) -> SourceOutcome:
        warnings = self.warnings + ([warning] if warning else [])
        return SourceOutcome(source=self.source, status=status, records=list(records), total=total,
                             warnings=warnings, executed_query=self.executed, snapshot_hashes=self.hashes,
                             retry_after=retry_after, truncated=truncated, dropped=dropped, cause=cause)

    def failure(self, status: Status, cause: str, happened: str | None = None,
                retry_after: float | None = None) -> SourceOutcome:
        """A failed call's outcome: its warning "<happened>: <cause>", or `cause` alone when that is a sentence
        of its own, and its cause beside it for a sentence naming the source and what happened."""
        return self.outcome(status, retry_after=retry_after, warning=f"{happened}: {cause}" if happened else cause,
                            cause=cause)


FAILURES = {"rate_limited": "rate-limited", "timeout": "timed out", "unavailable": "unavailable",
            "auth_error": "refused access"}


def unnamed(label: str, text: str) -> str:
    """`text`, a sentence about `label`, without it before its verb ("could not be reached"): for a message
    that names the provider already."""
    return text[len(label) + 1:] if text.startswith(f"{label} ") else text


def about(label: str, text: str) -> str:
    """`text` as a line about `label`: "<label>: <text>", unless `text` is a sentence about it already (names it
    first), which said it twice ("OpenAlex: OpenAlex was not reached this run")."""
    return text if text.startswith(f"{label} ") else f"{label}: {text}"


def run_call(trace: Trace, call: Callable[[Trace], SourceOutcome]) -> SourceOutcome:
    """Run one provider call; every provider failure becomes an outcome with a warning in words."""
    label = trace.provider.name
    happened: str | None = None  # "<label> <what happened>", where the cause is not a sentence of its own
    retry_after: float | None = None
    try:
        return call(trace)
    except SourceError as exc:
        # "<label> <what happened>: <why>", the label once: the why is most often the fetcher's own sentence about
        # the provider ("OpenAlex could not be reached"), so it read "OpenAlex unavailable: OpenAlex could not be
        # reached".
        status, cause = exc.status, unnamed(label, str(exc))
        happened, retry_after = f"{label} {FAILURES.get(exc.status, exc.status)}", exc.retry_after
    except UntitledAnswer as exc:
        return trace.outcome("ok").model_copy(update={"doubt": f"{label} answers with {exc}: no record can be made "
                                                               "of it, and asked again it answers the same"})
    except Malformed as exc:
        status, cause = "unavailable", f"{label} returned an unusable response: {exc}"
    except ValidationError as exc:  # a provider record that does not fit the record format
        status, cause = "unavailable", f"{label} returned an unusable record: {counted(exc.error_count(), 'field')} invalid"
    except Unsupported as exc:
        if a_later_page(trace.executed):  # a later page refused (an expired cursor) of an answer begun: an outage
            # in the middle of the reading, not a query the source cannot run
            status, cause = "unavailable", f"it refused a later page of an answer it had begun ({exc})"
            happened = f"{label} {FAILURES['unavailable']}"
        else:  # not a later page of an answer, so _part_way adds nothing
            status, cause = "unsupported", f"{label} cannot run this query: {exc}"
    return trace.failure(status, cause + _part_way(trace), happened, retry_after)


# Query parameters that say which page of one answer a request asks for, and how long it is (a last page asks for
# fewer): OpenAlex's and Crossref's cursor, Europe PMC's cursorMark, arXiv's start, E-utilities' retstart.
PAGE_PARAMETERS = frozenset({"cursor", "cursorMark", "offset", "start", "retstart", "page",
                             "per_page", "pageSize", "rows", "max_results", "retmax"})


def _asked(request: str) -> tuple[str, list[tuple[str, str]]]:
    """A request without the parameters choosing its page: what every page of one answer asks alike."""
    address, _, query = request.partition("?")
    return address, sorted((key, value) for key, value in parse_qsl(query, keep_blank_values=True)
                           if key not in PAGE_PARAMETERS)


def pages_before(executed: list[str]) -> int:
    """How many pages of one answer came before the last request, when that asked for a later page of it: the
    earlier requests asking what it asks but for the page (0 for a first page, or a request of its own: a citation
    search's next seed is another request). Requests between pages (a work read whole) are passed over."""
    if not executed:
        return 0
    last = _asked(executed[-1])
    return sum(1 for request in executed[:-1] if _asked(request) == last)


def a_later_page(executed: list[str]) -> bool:
    """Whether the last request asked for a later page of an answer an earlier request began: the same address
    and parameters but those choosing the page."""
    return pages_before(executed) > 0


def _part_way(trace: Trace) -> str:
    """What a failure on a later page of an answer leaves out, in words: the pages read before it are not counted
    (the source's slice of the run is unknown, and a later run reads the answer again from its start), so a run's
    events and report never read as if the source had sent nothing."""
    pages = pages_before(trace.executed)
    if not pages:
        return ""
    pager = trace.pager
    if pager is None:
        return (f" (on page {pages + 1} of its answer: the records of the {counted(pages, 'page')} "
                "it had sent are not counted, and this run is incomplete)")
    # How many of the records it found it had sent: a batched read (PubMed's efetch after its esearch) fails after
    # some of a known number, and "page 2" alone does not say how much of the answer is missing.
    sent = f"{pager.read} of the {pager.total} records it found" if pager.total is not None \
        else counted(pager.read, 'record')
    return (f" (on page {pages + 1} of its answer, having sent {sent}: those are not counted, and this run is "
            "incomplete)")


# --------------------------------------------------------------------------- untrusted values
# Provider data may hold anything anywhere: a field of the wrong type is treated as absent.


def works_noticed_once(links: Iterable[tuple[str | None, str | None, str | None]]) -> list[NoticeOf]:
    """The works a notice's links name, each a (kind of notice, PMID, cited DOI) as its source reads it, each work
    once: a link of no kind read here, or naming no work, is passed over, and a source may list one work twice."""
    found: list[NoticeOf] = []
    for kind, pmid, doi in links:
        if kind and (pmid or doi) and (work := NoticeOf(kind=kind, pmid=pmid, doi=doi)) not in found:
            found.append(work)
    return found


def text_value(value: Any) -> str | None:
    """A string with its ends stripped, or None when it is not a string or is blank: holds nothing a reader can
    see (a zero-width space or a byte-order mark alone is no name, and a record refuses a name it cannot show)."""
    return value.strip() if isinstance(value, str) and visible_text(value) else None


def entity_character(entity: etree._Entity) -> str:
    """What a named entity the parser left unexpanded reads as. Provider XML that names an external DTD (PubMed's,
    JATS') uses its entities ("&ndash;", "&alpha;") undeclared, as that DTD is never read: each is the character
    the HTML and MathML table names it (which holds JATS' and NLM's names), one table for every provider; a name it
    does not hold stays as written. An entity declared in the body itself is never expanded: parse_xml refuses it.
    One in an attribute's value is read alike (parse_xml)."""
    return named_character(entity.name) or entity.text or ""


def named_character(name: str) -> str | None:
    """The character(s) the HTML and MathML table names `name` ("ndash": "–"), or None."""
    return html.entities.html5.get(f"{name};")


def xml_text(node: etree._Element) -> str:
    """The text of an element and of every element inside it, in order, as itertext gives it but with each named
    entity read as its character (`entity_character`); comments and processing instructions are left out, their
    tails kept. The recursion is bounded: the parser refuses elements nested over 256 deep (parse_xml)."""
    parts = [node.text or ""]
    for child in node:
        if isinstance(child, etree._Entity):
            parts.append(entity_character(child))
        elif isinstance(child.tag, str):
            parts.append(xml_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def element_text(node: etree._Element | None) -> str | None:
    """The full text of an XML element (markup such as <i> or <sub> dropped, named entities read as their
    characters: `xml_text`), whitespace collapsed, or None."""
    if node is None:
        return None
    # XML holds no C0 control character, but DEL and the C1 ones it does: the record format refuses them.
    text = " ".join(CONTROL_CHARACTER.sub(" ", xml_text(node)).split())
    return text if visible_text(text) else None  # as `text_value`: invisible characters alone are no text


def element_plain_text(node: etree._Element | None) -> str | None:
    """The text of an XML element whose markup is elements (PubMed's <i>, <sub> in a title or an abstract), read
    as `plain_text` reads markup sent as text, so that a style parts the words it was set against alike (itertext
    runs them together: "effect of<i>Camellia</i>teas" read "effect ofCamelliateas"); None when it holds none."""
    if node is None:
        return None
    children = "".join(etree.tostring(child, encoding="unicode", with_tail=True) for child in node)
    return plain_text(html.escape(node.text or "", quote=False) + children)


def said(value: Any, most: int = 200) -> str:
    """Provider text quoted in a message (an error it reported, a tag it sent), whitespace collapsed, cut to its
    first `most` characters and each character that does not show as itself escaped (`shown_text`): an answer
    cannot fill a warning, and the report and ledger that keep it, with whatever it holds, nor reorder what it shows
    (a right-to-left override) or hide part of it. Every provider's text in a message goes through here, or, in
    quotes, through `quoted`."""
    return shown_text(_collapsed(value, most))


def quoted(value: Any, most: int = 200) -> str:
    """Provider text in quotes in a message (a term PubMed did not search), as `said` shows it but quoted and escaped
    once, by `repr`, as an id that cannot be read is (`_written`): quoting `said`'s text again would escape its
    escapes a second time, showing a right-to-left override as \\\\u202e."""
    return repr(_collapsed(value, most))


def _collapsed(value: Any, most: int) -> str:
    """`value` as text, whitespace collapsed, cut to its first `most` characters (an ellipsis saying so)."""
    text = " ".join(str(value).split())
    return text if len(text) <= most else f"{text[:most]}…"


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def whole_number(text: Any, digits: int = 12) -> int | None:
    """The number written in `text` with 1 to `digits` ASCII digits, or None.

    str.isdigit() accepts "²" (int() then fails) and str.isdecimal() accepts
    Arabic-Indic digits (int() then reads them): neither is a provider's number.
    """
    if not isinstance(text, str) or not re.fullmatch(f"[0-9]{{1,{digits}}}", text.strip()):
        return None
    return int(text)


def reported_count(text: str | None, what: str) -> int:
    """A provider's count of matches sent as text (`what` names where: "Count"); Malformed when it is missing, or
    says what it held when it is no whole number ("-1", "1e3", more digits than a count has)."""
    if (count := whole_number(text)) is not None:
        return count
    if not text:
        raise Malformed(f"the response has no {what}")
    raise Malformed(f"the {what} {_written(text)} is not a whole number of matches")


_DATE = re.compile(r"\s*([0-9]{1,4})(?![0-9])(?:-([0-9]{1,2})(?![0-9])(?:-([0-9]{1,2})(?![0-9]))?)?")


def month_number(value: str | None) -> int | None:
    """A month as a number: "12", "Dec" or "December"; None for anything else (a season, "Winter")."""
    return whole_number(value, 2) or MONTH_BY_ABBREVIATION.get((value or "")[:3].lower())


def date_from_parts(parts: Sequence[Any]) -> CslDate | None:
    """[year, month, day] as a CslDate, as far as they are a real date (`calendar_date`); None without a year."""
    usable = calendar_date(parts)
    return CslDate(date_parts=[usable]) if usable else None


def parse_date(*values: Any) -> CslDate | None:
    """The first of `values` that holds a date: text starting "YYYY[-MM[-DD]]" in ASCII digits (anything
    after it, such as a time, is ignored; a month or day out of range ends the date), or a year as a number."""
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool):
            parts: list[Any] = [value]
        elif isinstance(value, str) and (match := _DATE.match(value)):
            parts = [int(group) if group else None for group in match.groups()]
        else:
            continue
        if date := date_from_parts(parts):
            return date
    return None


# --------------------------------------------------------------------------- identifiers

# The identifiers a provider sent for the record being made that could not be read (`read_identifier`), while a
# converter runs within `_converted`; None outside it.
_unread_identifiers: ContextVar[list[str] | None] = ContextVar("unread_identifiers", default=None)


def read_identifier(namespace: str, normalise: Callable[[Any], str | None], *values: Any) -> str | None:
    """The first of `values` (a provider's fields for one identifier of a work, most trusted first) that `normalise`
    reads, or None. When one was sent but none can be read (a DOI with a space in it, or longer than any DOI), the
    record is made without it, and the outcome says so (`to_records`, `to_record`): a work kept without its DOI is
    not matched with a record of it under that DOI, so the loss is never silent."""
    sent = None
    for value in values:
        if (found := normalise(value)) is not None:
            return found
        sent = sent or _written(value)
    if sent is not None and (unread := _unread_identifiers.get()) is not None:
        unread.append(f"{NAMESPACE_LABELS.get(namespace, namespace)} {sent}")
    return None


def _written(value: Any) -> str | None:
    """A value sent for an identifier, as a warning shows it (its first 80 characters, quoted and escaped), or None
    when nothing was sent."""
    if isinstance(value, str):
        return repr(text[:80]) if (text := text_value(value)) else None
    return None if value is None or value in ([], {}) else repr(value)[:80]


def _converted(convert: Callable[[Any], Record | None], item: Any) -> tuple[Record | None, list[str]]:
    """`convert(item)`, and what was left out of its record, in words: an abstract longer than a record holds
    (`leaving_out_overlong_abstracts`), identifiers that could not be read (`read_identifier`)."""
    unread: list[str] = []
    token = _unread_identifiers.set(unread)
    try:
        with leaving_out_overlong_abstracts() as left_out:
            record = convert(item)
    finally:
        _unread_identifiers.reset(token)
    if record is not None and unread:
        it = "it" if len(unread) == 1 else "them"
        left_out.append(f"{record.id}: the {' and the '.join(unread)} sent for it could not be read; the record is "
                        f"kept without {it}, so a record of the same work under {it} may not be matched with it")
    return record, left_out


def _said_once(notes: list[str], more: Iterable[str]) -> None:
    """Each of `more` appended to `notes` unless said there already (or earlier in `more`): what was left out the
    same way of several items, or of one item met again on another page, is said once."""
    for note in more:
        if note not in notes:
            notes.append(note)


# --------------------------------------------------------------------------- items to records

# What a converter may raise on provider data of a shape nobody foresaw (ValidationError: a record
# that does not fit the record format). Anything else is a programming error and is not caught.
CONVERSION_ERRORS = (LookupError, TypeError, AttributeError, ValueError, ValidationError, etree.LxmlError)


@dataclass
class Converted:
    records: list[Record] = field(default_factory=list)
    skipped: list[Any] = field(default_factory=list)  # no usable identifier
    untitled: list[str] = field(default_factory=list)  # ids of identified works the provider gives no title
    unreadable: list[Any] = field(default_factory=list)  # not the expected type, or the converter failed on them
    reasons: list[str] = field(default_factory=list)  # why, in words, one per unreadable item
    # what was left out of records kept (an abstract longer than a record holds), in words naming the record
    left_out: list[str] = field(default_factory=list)


def to_records(items: Iterable[Any], convert: Callable[[Any], Record | None], item_type: type = object,
               named: Items | None = None) -> Converted:
    """Provider items as records. An item without an identifier is skipped, one without a title is left out
    by name, and one of the wrong type or on which the converter fails is unreadable: each said so, none
    the end of the whole call. A record given an abstract longer than it may hold is kept without it, and
    said so (`leaving_out_overlong_abstracts`).

    With `named`, the provider's items, an item without the provider's own id, or with one sitegen cannot read
    (`UnreadId`), that made no record is unreadable rather than skipped: the provider names every item it has (a
    Crossref work by its DOI, a PubMed article by its PMID), so one sitegen cannot name is a work lost from the run,
    not a work sitegen cannot track (a Europe PMC AGRICOLA record, named by the provider's own id alone)."""
    converted = Converted()
    for item in items:
        if not isinstance(item, item_type):  # a malformed answer, not a work without an identifier
            converted.unreadable.append(item)
            converted.reasons.append(f"not a {item_type.__name__}")
            continue
        try:
            record, left_out = _converted(convert, item)
            converted.left_out += left_out
        except Untitled as exc:
            converted.untitled.append(exc.record_id)
            continue
        except CONVERSION_ERRORS as exc:
            converted.unreadable.append(item)
            converted.reasons.append(conversion_failure(exc))
            continue
        if record is None and (lost := _unnamed(item, named)):
            converted.unreadable.append(item)
            converted.reasons.append(lost)
        elif record is None:
            converted.skipped.append(item)
        else:
            converted.records.append(record)
    return converted


def _unnamed(item: Any, named: Items | None) -> str | None:
    """Why `item`, which made no record, is a work lost rather than one sitegen cannot track, in words: the
    provider's own id for it is missing ("no DOI") or cannot be read ("an unreadable DOI"); None when it has one
    sitegen reads, or the provider names no items."""
    if named is None or named.native_id is None:
        return None
    own = named.native_id(item)
    if own is None:
        return f"no {named.native_name}"
    return f"an unreadable {named.native_name}" if isinstance(own, UnreadId) else None


def to_record(item: Any, convert: Callable[[Any], Record | None], warnings: list[str],
              what: str = "the record") -> Record | None:
    """One item as a record (a lookup's answer), None when it is no record (`no_record` says why); Malformed
    when the converter fails on it, `UntitledAnswer` when it is an identified work without a title. What was left
    out of the record (as by `to_records`) is said in `warnings`."""
    try:
        record, left_out = _converted(convert, item)
        _said_once(warnings, left_out)
        return record
    except Untitled as exc:
        raise UntitledAnswer(f"{what}, {exc.record_id}, which has no title") from None
    except CONVERSION_ERRORS as exc:
        raise Malformed(f"{what} could not be read ({conversion_failure(exc)})") from None


def lookup_outcome(trace: Trace, asked: str, records: Sequence[Record], is_asked: Callable[[Record], bool],
                   named: Callable[[Record], str] = lambda record: record.id, truncated: bool = False) -> SourceOutcome:
    """The outcome of an exact lookup of `asked` (the identifier in words: "PMID 123") answered with `records`.

    Those carrying the identifier (`is_asked`) are the answer, and any others are left out, said so; none at all is
    "not found", an empty `ok`. Only other works is an answer too: the provider holds the identifier under another
    work (it merged the two, keeps the identifier as an alias, or reassigned it), and asked again it answers the same,
    so it is no outage to retry. It is never the work asked for: an `ok` without records whose `doubt` names the
    others (by `named`), the first kept as `instead` for a caller to judge (sitegen.verify.identity)."""
    matching: list[Record] = []
    others: list[Record] = []
    # a work the answer holds twice (an efetch listing one article twice) is one work: kept once, as a page keeps it
    once: dict[frozenset[tuple[str, str]], Record] = {}
    for record in records:
        once.setdefault(frozenset(record.identifiers().items()), record)
    for record in once.values():
        (matching if is_asked(record) else others).append(record)
    names = [named(record) for record in others]
    provider = trace.provider.name
    if matching or not others:
        if others:
            trace.warnings.append(f"{provider} also returned {listed(names)}, which {'is' if len(others) == 1 else 'are'}"
                                  " not the record asked for; left out")
        return trace.outcome("ok", matching, len(matching), truncated=truncated)
    works = "another work" if len(others) == 1 else "other works"
    doubt = (f"{provider} answers {asked} with {works}, {listed(names)} (merged with the work asked for, or the "
             "identifier is an alias or was reassigned): not taken for the work asked for")
    return trace.outcome("ok", truncated=truncated).model_copy(update={"doubt": doubt, "instead": others[0]})


def conversion_failure(exc: Exception) -> str:
    """Why an item could not be read, naming only sitegen's own fields (never echoing provider data)."""
    if isinstance(exc, Unreadable):
        return str(exc)  # sitegen's own words about a normalised identifier
    if isinstance(exc, ValidationError):
        fields = sorted({".".join(str(part) for part in error["loc"]) or "record"
                         for error in exc.errors(include_url=False)})
        return "invalid " + ", ".join(fields[:3]) + (", …" if len(fields) > 3 else "")
    return type(exc).__name__


# --------------------------------------------------------------------------- paging


class UnreadId(str):
    """An item's own id that sitegen cannot read, as its provider wrote it (`own_id`): a warning says the item had
    one, and shows it, where an item without one "had no DOI"."""


def own_id(value: Any, normalise: Callable[[Any], str | None]) -> str | None:
    """An item's own id as its provider sent it: normalised, else as written (an `UnreadId`: its first 80
    characters, quoted and escaped), so that an id sitegen cannot read still names the item in a warning; None when
    the provider sent none."""
    if normalised := normalise(value):
        return normalised
    # Only text: an id of another type (a list, a number) is a broken item, unreadable (`to_records`)
    written = _written(value) if isinstance(value, str) else None
    return UnreadId(written) if written else None


@dataclass(frozen=True)
class Items:
    """How a provider's items are named in warnings, e.g. Items("work", "no DOI or title")."""

    noun: str  # one item, as a count says it: "1 Crossref work", "2 Crossref works" (`plural` when not noun + s)
    missing: str  # what a skipped item lacked
    # The provider's own id for an item (OpenAlex's W id, Europe PMC's "AGR:IND123"…): an item sent twice
    # counts once, however its identifiers differ the second time, and a skipped item is named by it. The
    # provider gives every item one, so an item without it is unreadable, never skipped (`to_records`).
    native_id: Callable[[Any], str | None] | None = None
    native_name: str = "id"  # what that id is called, in words: "DOI", "PMID", "OpenAlex id"
    plural: str | None = None

    def readable_id(self, item: Any) -> str | None:
        """The item's own id when sitegen can read it, the one name two items share only when they are the same work;
        None for an id it cannot read (`UnreadId`): distinct works may be sent with the same one ("not-a-doi"), so
        it tells no repeat from another work lost."""
        own = self.native_id(item) if self.native_id else None
        return None if isinstance(own, UnreadId) else own

    def counted(self, n: int, provider: str) -> str:
        """`n` of the provider's items: "1 arXiv entry", "3 arXiv entries"."""
        return counted(n, f"{provider} {self.noun}", f"{provider} {self.plural or self.noun + 's'}")


def no_record(items: Items, item: Any, what: str) -> Malformed:
    """Why `item`, a lookup's answer, made no record (`to_record` gave None), every provider's lookup in the same
    words: its own id could not be read (shown as sent), or it had none. (One without a title is an answer,
    `to_record` raises `UntitledAnswer`.)"""
    own = items.native_id(item) if items.native_id else None
    if isinstance(own, UnreadId):
        return Malformed(f"{what}'s {items.native_name} {own} could not be read")
    return Malformed(f"{what} has {items.missing}" if own is None else f"{what}, {own}, could not be made a record")


Page = TypeVar("Page")


def _were(n: int) -> str:
    return "was" if n == 1 else "were"


# More matches than any bibliographic index holds (OpenAlex, the largest, holds some 10^8 works): no count, as a
# count written in text has at most 12 digits (`whole_number`).
MOST_MATCHES = 10**12 - 1


class Pager:
    """One paged read: the one place that decides when paging stops and what was read.

    - The first reported total is the total; a page reporting another is Malformed (the results
      moved while they were read), and so is a total that is not a whole number >= 0.
    - Only distinct items count toward it: records by their identifiers, skipped items by their
      content. A page adding nothing new ends paging, so repeated pages cannot reach the total.
    - A cursor used before (any earlier page) ends paging, unless the provider legitimately
      repeats cursors (Crossref); a hard page limit is the backstop.
    - At the end, fewer items than min(total, cap) is Malformed (a short body is an outage);
      more matches than the cap (max_records, or the provider's own ceiling) is an `ok`
      outcome marked truncated, with a warning saying how to read the rest.

    Use: `while pager.proceed(cursor): ...fetch...; pager.add(total, items, convert)`, then
    `pager.outcome(trace)`.
    """

    def __init__(self, provider: str, items: Items, limit: int, page_size: int, *, ceiling: int | None = None,
                 cursors_repeat: bool = False, trace: Trace | None = None):
        if trace is not None:  # a failure on a later page says how much of the answer came before it
            trace.pager = self
        self.provider = provider
        self.items = items
        self.limit = limit
        self.ceiling = ceiling
        self.page_size = max(1, page_size)
        self.cursors_repeat = cursors_repeat
        self.total: int | None = None
        self.records: list[Record] = []
        self.pages = 0
        self.repeated = 0
        self._keys: set[frozenset[tuple[str, str]]] = set()
        self._skipped: set[str] = set()
        self._untitled: dict[str, None] = {}  # ids, in the order they came
        self._unreadable: set[str] = set()
        self._reasons: list[str] = []
        self._left_out: list[str] = []  # what was left out of records kept, in words
        self._native_ids: set[str] = set()
        self._skipped_names: dict[str, None] = {}  # the provider's own names for skipped items, where it has them
        self._unreadable_names: dict[str, None] = {}  # and for unreadable ones, so that a human can find them
        self._cursors: set[str] = set()
        self._ended = False
        self._why = ""  # why paging ended before everything was read, for the outage message

    @property
    def cap(self) -> int:
        """The most records this read may take: max_records, or the provider's ceiling when lower."""
        return min(self.limit, self.ceiling) if self.ceiling is not None else self.limit

    @property
    def wanted(self) -> int:
        """How many items must be read for the answer to be whole (up to the cap)."""
        return self.cap if self.total is None else min(self.total, self.cap)

    @property
    def untitled(self) -> list[str]:
        """The ids of the identified works read that the provider gives no title, in the order they came."""
        return list(self._untitled)

    @property
    def read(self) -> int:
        """Distinct items read: records, and skipped, untitled and unreadable items."""
        return len(self.records) + len(self._skipped) + len(self._untitled) + len(self._unreadable)

    def count(self, total: Any) -> None:
        """Take a reported total: the first one stands, and every later one must equal it."""
        if not isinstance(total, int) or isinstance(total, bool) or total < 0:
            raise Malformed(f"the reported count {str(total)[:40]!r} is not a whole number of matches")
        if total > MOST_MATCHES:  # read as a count, it would say "only the first 1000 of 10^40 were read"
            raise Malformed(f"the reported count {str(total)[:40]}{'…' if len(str(total)) > 40 else ''} is more "
                            "matches than any index holds")
        if self.total is None:
            self.total = total
        elif total != self.total:
            raise Malformed(f"the count changed between pages ({self.total}, then {total}): "
                            "the results moved while they were read")

    def proceed(self, cursor: Any) -> bool:
        """Whether to ask for the page at `cursor` (a provider's token, or an offset as text); remembers it."""
        if self.pages:
            if self._ended or self.read >= self.wanted:
                return False
            if not isinstance(cursor, str) or not cursor:
                return self.end("no cursor for the next page")
            if cursor in self._cursors and not self.cursors_repeat:
                return self.end("the next page's cursor was one already used")
            if self.pages >= self._max_pages():
                return self.end(f"gave up after {self.pages} pages")
        elif self.total is not None and self.wanted == 0:
            return False
        self._cursors.add(str(cursor))
        return True

    def within_the_cap(self, read_page: Callable[[int], Page]) -> Page:
        """`read_page(size)` at this read's page size, asked again for half as many items while the answer is over
        the cap on a response (works with thousands of authors or references), down to one: for a provider whose
        cursor marks where the next page starts whatever its size. The limit on pages follows the smaller size."""
        while True:
            try:
                return read_page(self.page_size)
            except SourceError as exc:
                if not too_large(exc) or self.page_size == 1:
                    raise
                self.page_size //= 2

    def end(self, why: str = "") -> bool:
        """Read no more pages (the provider said this was the last); `why` explains a short read."""
        self._ended = True
        self._why = self._why or why
        return False

    def add(self, total: Any, items: Sequence[Any], convert: Callable[[Any], Record | None],
            item_type: type = object) -> None:
        """One page: its reported total and its items."""
        self.count(total)
        self.pages += 1
        before = self.read
        fresh = []
        for item in items:
            native = self.items.readable_id(item)
            if native is not None and native in self._native_ids:
                self.repeated += 1
                continue
            if native is not None:
                self._native_ids.add(native)
            fresh.append(item)
        converted = to_records(fresh, convert, item_type, self.items)
        for record in converted.records:
            key = frozenset(record.identifiers().items())
            if key in self._keys:
                self.repeated += 1
            else:
                self._keys.add(key)
                self.records.append(record)
        _said_once(self._left_out, converted.left_out)
        for record_id in converted.untitled:
            if record_id in self._untitled:
                self.repeated += 1
            self._untitled[record_id] = None
        for seen, found in ((self._skipped, converted.skipped), (self._unreadable, converted.unreadable)):
            for item in found:
                key = _fingerprint(item)
                if key in seen:
                    self.repeated += 1
                else:
                    seen.add(key)
        if self.items.native_id is not None:
            self._skipped_names.update(dict.fromkeys(filter(None, map(self.items.native_id, converted.skipped))))
            self._unreadable_names.update(dict.fromkeys(filter(None, map(self.items.native_id, converted.unreadable))))
        for reason in converted.reasons:
            if reason not in self._reasons:
                self._reasons.append(reason)
        if self.read == before:
            self.end("a page brought nothing new" if items else "a page was empty")

    def outcome(self, trace: Trace) -> SourceOutcome:
        """The read as an outcome: Malformed when short, truncated when capped; warnings in one place."""
        name = self.provider
        if self.total is None:
            raise Malformed("no page of results was read")
        total = self.total
        if self.read < self.wanted:
            of = f" of the first {self.wanted}" if self.wanted < total else ""
            why = f" ({self._why})" if self._why else ""
            raise Malformed(f"{name} reported {counted(total, 'match', 'matches')} but returned {self.read}{of}{why}")
        if self.read > total:
            # The count is wrong, so nothing says the results are whole (a provider that counts
            # fewer than it sends may also stop offering pages before the end).
            raise Malformed(f"{name} reported {counted(total, 'match', 'matches')} but sent {counted(self.read, 'different item')}: "
                            "its count cannot be trusted, so the results may not be whole")
        reasons = "; ".join(self._reasons[:3])
        unreadable = f": {listed(_shown(self._unreadable_names))}" if self._unreadable_names else ""
        if self._unreadable and not self.records:
            raise Malformed(f"{len(self._unreadable)} of {self.items.counted(self.read, name)} could not be read ({reasons})"
                            f"{unreadable}")
        # Items none of which can be used, and none a record of the provider's own that sitegen cannot track (a
        # Europe PMC AGRICOLA record): what a renamed id or title field looks like, no answer and not "none new".
        if self.read and not self.records and not self._skipped_names:
            raise Malformed(f"none of the {self.items.counted(self.read, name)} could be used ({len(self._skipped)} had "
                            f"{self.items.missing}, {len(self._untitled)} no title)")
        if self._skipped:
            shown = f": {listed(_shown(self._skipped_names))}" if self._skipped_names else ""
            trace.warnings.append(f"{self.items.counted(len(self._skipped), name)} had {self.items.missing} and "
                                  f"{_were(len(self._skipped))} skipped{shown}")
        if self._untitled:
            trace.warnings.append(f"{self.items.counted(len(self._untitled), name)} had no title and "
                                  f"{_were(len(self._untitled))} left out: "
                                  f"{listed(list(self._untitled))}")
        if self._unreadable:
            trace.warnings.append(f"{self.items.counted(len(self._unreadable), name)} could not be read ({reasons})"
                                  f"{unreadable}; {'it is' if len(self._unreadable) == 1 else 'they are'} missing "
                                  "from this run, which is therefore incomplete")
        # each once: a work of a list that was read whole on its own (OpenAlex's authors) was said of already
        _said_once(trace.warnings, self._left_out)
        if self.repeated:
            trace.warnings.append(f"{name} sent {counted(self.repeated, 'item')} more than once; each was kept once")
        truncated = total > self.cap
        if truncated:
            trace.warnings.append(f"{name} reported {total} matches: only the first {self.cap} of {total} were "
                                  f"read; {self._how_to_read_more()}")
        return trace.outcome("ok", self.records[: self.cap], total, truncated=truncated,
                             dropped=len(self._unreadable))

    def _how_to_read_more(self) -> str:
        if self.ceiling is not None and self.ceiling <= self.limit:
            return (f"{self.provider} serves at most {self.ceiling} per query, so narrow the query "
                    "(e.g. by publication year) to read them all")
        return f"raise SITEGEN_MAX_RECORDS (now {self.limit}) or narrow the query to read them all"

    def _max_pages(self) -> int:
        # Twice the pages a full read needs (a provider may send smaller pages than asked for), plus one.
        return 2 * -(-self.wanted // self.page_size) + 1


def _shown(names: Iterable[str]) -> list[str]:
    """Items' own names as a warning shows them: as sent when short and printable (AGR:IND44012345), else quoted,
    escaped and cut (`_written`), as an id sitegen cannot read is already (`UnreadId`)."""
    return [name if isinstance(name, UnreadId) or (name.isprintable() and len(name) <= 80) else _written(name) or ""
            for name in names]


def _fingerprint(item: Any) -> str:
    """A digest of an item's content, so the same unusable item sent twice is counted once."""
    if isinstance(item, etree._Element):
        data = etree.tostring(item)
    else:
        try:
            data = json.dumps(item, sort_keys=True, default=repr).encode()
        except (TypeError, ValueError, RecursionError):
            return f"object-{id(item)}"
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- responses


def parse_json(response: Response) -> Any:
    try:
        return load_json(response.body, provider=True)
    except UnicodeDecodeError as exc:  # a ValueError, said apart: the body is whole JSON in the wrong encoding
        raise Malformed(f"the body is not UTF-8 (byte 0x{exc.object[exc.start]:02X} at offset {exc.start:,}), as JSON "
                        "must be") from None
    except (ValueError, RecursionError):
        raise Malformed("the body is not valid JSON (truncated, not JSON, or a number no record can hold)") from None


# No entities, no DTDs, no network, no huge trees: provider XML is untrusted.
_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, dtd_validation=False)


def parse_xml(data: bytes) -> etree._Element:
    root = _parsed(data)
    # No provider's answer declares anything in its DOCTYPE (PubMed's names an external DTD, which is not read). One
    # that does is no answer of theirs: its entities would be kept unexpanded, as "&name;" in a title, and its
    # elements' declarations could add attributes; refused whole, as a full text's is (sitegen.sources.jats).
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and (next(dtd.iterentities(), None) is not None or next(dtd.iterelements(), None) is not None):
        raise Malformed("the body's DOCTYPE has an internal subset: refused, nothing expanded")
    # A named entity no DTD read declares (one of PubMed's or JATS' external DTD) in an attribute's value is dropped
    # by libxml2, the text around it kept ("A&ndash;B" read "AB"), where in an element's text it stays an entity
    # node read as its character (`xml_text`). Written as that character before parsing again, an attribute reads
    # as an element's text does, never silently shorter. Only a DOCTYPE lets an entity go undeclared: without one,
    # the body is not well-formed.
    info = root.getroottree().docinfo
    if info.doctype and (written := _attribute_entities_as_characters(data, info.encoding or "UTF-8")) != data:
        root = _parsed(written)
    return root


def _parsed(data: bytes) -> etree._Element:
    try:
        root = etree.fromstring(data, parser=_XML)
    except etree.XMLSyntaxError as exc:
        raise Malformed(f"the body is not well-formed XML ({exc.msg})") from None
    if root is None:
        raise Malformed("the body is empty")
    return root


# A named entity other than XML's own five, anywhere: what a body without one (nearly every answer) is passed by.
_UNDECLARED_ENTITY = re.compile(r"&(?!(?:amp|lt|gt|quot|apos);)((?:[^\W\d]|[_:])[\w.:\-\u00b7]*);")
# Markup that may hold a "<" or a quote that is not a start tag's (comments, CDATA, processing instructions, the
# DOCTYPE), matched to be passed over, and a start tag, whose quoted values may hold ">". The body is well-formed
# (parsed already), so these are all that a "<" opens.
_MARKUP = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!DOCTYPE(?:[^\[>]|\[.*?\])*>"
                     r"|(?P<tag><[^!?/](?:[^>\"']|\"[^\"]*\"|'[^']*')*>)", re.DOTALL)


def _attribute_entities_as_characters(data: bytes, encoding: str) -> bytes:
    """`data` (in `encoding`, as the parser read it) with each undeclared named entity in a start tag's attribute
    values written as character references to what `entity_character` reads it as, or as its own text
    ("&amp;name;") when the table holds no such name; in the same encoding (UTF-16 too), so its declaration holds."""
    try:
        text = data.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        raise Malformed(f"the body's encoding ({encoding[:40]!r}) cannot be read to check its attributes") from None
    if not _UNDECLARED_ENTITY.search(text):
        return data

    def reference(entity: re.Match[str]) -> str:
        characters = named_character(entity.group(1))
        if characters is None:
            return f"&amp;{entity.group(1)};"
        return "".join(f"&#{ord(character)};" for character in characters)

    def tag(markup: re.Match[str]) -> str:
        return _UNDECLARED_ENTITY.sub(reference, markup.group()) if markup.group("tag") else markup.group()

    return _MARKUP.sub(tag, text).encode(encoding)


def check_status(response: Response, provider: str, key_variable: str | None = None) -> None:
    """Map the statuses every provider shares; 2xx passes, 404 is the caller's to interpret. A refusal names
    `key_variable`, the environment variable of a key the provider requires, as what to set. It is named whether
    or not it is set: the message is recorded, and a replay (run without keys) must give the same."""
    if response.status in (400, 422):
        raise Unsupported(f"{provider} rejected the query (HTTP {response.status}): {_error_detail(response)}")
    if response.status == 414:
        # The query is too long for the provider's address limit: it fails the same way on every run, so it is a
        # query the provider cannot take (one that takes POST is sent a long query so), never an outage to wait out.
        raise Unsupported(f"{provider} refused the request as too long (HTTP 414 URI Too Long): shorten the query, "
                          "or split it into several strategies whose results are combined")
    if response.status in AUTH_REFUSALS:  # not an outage to wait out: the same key is refused until it is fixed
        raise SourceError("auth_error", f"{provider} answered HTTP {response.status}, {auth_cause(key_variable)}: "
                                        f"{_error_detail(response)}")
    if response.status >= 400 and response.status != 404:
        raise SourceError("unavailable", f"{provider} answered HTTP {response.status}")


def auth_cause(key_variable: str | None) -> str:
    """The likely cause of a refusal of access, for a person to act on."""
    if key_variable:
        return f"most likely for a missing or wrong key in {key_variable} (or its allowance is used up)"
    return "most likely for missing or wrong credentials (or an allowance used up)"


def not_found(response: Response, provider: str, *own: bytes) -> bool:
    """Whether the response is the provider's own "no such record": a 404 whose body holds one of `own`, the
    words it answers so with (as recorded). A 404 page of anything else (a proxy, a CDN, an address the
    provider moved) says nothing of the record: an outage, never "not found", which verification would
    take for a citation that does not resolve."""
    if response.status != 404:
        return False
    if any(words in response.body for words in own):
        return True
    raise SourceError("unavailable", f"{provider} answered 404 with a page that is not its own 'not found' (a moved "
                                     "address or a proxy's page): taken for an outage")


def _error_detail(response: Response) -> str:
    """The provider's own explanation of a refusal (a JSON `message` or `error`, else the body's start)."""
    text = response.body[:300].decode("utf-8", "replace")
    try:
        data = json.loads(response.body)
        if isinstance(data, dict):
            text = str(data.get("message") or data.get("error") or text)
    except (ValueError, RecursionError):
        pass
    return said(text, 300)
