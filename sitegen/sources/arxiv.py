"""arXiv: Atom API search with start/max_results paging, exact id lookups, and
Atom entries turned into normalised CSL-JSON records.

API: https://info.arxiv.org/help/api/user-manual.html. No credentials; arXiv asks
for one request every three seconds, serves at most 2,000 results per page and
30,000 per query, and reports errors as an Atom entry titled "Error".
"""

from __future__ import annotations

import re

from lxml import etree

from sitegen.records.copyright import without_copyright_statement
from sitegen.records.ids import normalise_arxiv, normalise_doi, record_id
from sitegen.records.markup import plain_text
from sitegen.records.model import Record, RecordMeta, StatedVersion, stated_versions_once, web_address
from sitegen.records.names import split_name
from sitegen.records.providers import label
from sitegen.sources.base import (
    Items,
    Malformed,
    Pager,
    Trace,
    Unsupported,
    check_status,
    element_text,
    lookup_outcome,
    no_record,
    own_id,
    parse_date,
    parse_xml,
    reported_count,
    require_title,
    run_call,
    said,
    to_record,
)
from sitegen.sources.http import Fetcher, Provider, Response, Secrets, SourceError
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings
from sitegen.text import counted

BASE = "https://export.arxiv.org/api/query"
PROVIDER = Provider(label("arxiv"), frozenset({"export.arxiv.org"}), min_interval=3.0)
MAX_PAGE = 2000
MAX_RESULTS = 30_000  # arXiv returns nothing past this offset, whatever totalResults says
# Oldest first: papers submitted while a search is being paged land after the
# pages already read instead of shifting them, so paging neither skips nor repeats.
SORT = [("sortBy", "submittedDate"), ("sortOrder", "ascending")]

NS = {"atom": "http://www.w3.org/2005/Atom", "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
      "arxiv": "http://arxiv.org/schemas/atom"}
FEED = f"{{{NS['atom']}}}feed"
ENTRIES = Items("entry", "no arXiv id", lambda entry: own_id(_text(entry, "atom:id"), normalise_arxiv), "arXiv id",
                "entries")


def _text(element: etree._Element, path: str) -> str | None:
    """The whitespace-collapsed text at `path`, or None when it is missing or blank."""
    return element_text(element.find(path, NS))


def error_message(entry: etree._Element) -> str | None:
    """arXiv's explanation when `entry` is its error report rather than a paper, else None."""
    # A paper could be titled "Error"; arXiv's error entries are told apart by an id that is no paper's.
    if _text(entry, "atom:title") != "Error" or normalise_arxiv(_text(entry, "atom:id")):
        return None
    return said(_text(entry, "atom:summary") or "arXiv reported an error without a message")


def entry_to_record(entry: etree._Element) -> Record | None:
    """A Record for one Atom entry, None when it has no arXiv id; Unreadable without a title."""
    arxiv = normalise_arxiv(_text(entry, "atom:id"))  # the abs URL with its version, e.g. …/abs/1605.08386v1
    title = plain_text(_text(entry, "atom:title"))
    if arxiv is None:
        return None
    title = require_title(title, f"arxiv:{arxiv}")
    pdf = entry.find("atom:link[@title='pdf']", NS)
    return Record(
        # The arXiv copy, by its arXiv id alone: `arxiv:doi` is the DOI of the published version the authors
        # name, another record of the same study. Taken for this one's, it merged the journal article into the
        # preprint (never reported as new), where a preprint and its journal version are linked as versions.
        id=record_id({"arxiv": arxiv}),
        # Always "article" (CSL's type for a preprint), even when a journal reference names a published version.
        type="article",
        title=title,
        author=[split_name(name) for author in entry.findall("atom:author", NS)  # display names only
                if (name := _text(author, "atom:name"))],
        container_title=plain_text(_text(entry, "arxiv:journal_ref")),
        issued=parse_date(_text(entry, "atom:published")),  # e.g. 2016-05-26T17:59:46Z
        URL=f"https://arxiv.org/abs/{arxiv}",
        abstract=without_copyright_statement(plain_text(_text(entry, "atom:summary"))),
        custom=RecordMeta(
            arxiv=arxiv,
            sources=["arxiv"],
            publication_types=["preprint"],
            open_access=True,
            fulltext_url=web_address(pdf.get("href")) if pdf is not None else None,
            retracted=_withdrawn(entry),
            stated_versions=_published_versions(entry, arxiv),
        ),
    )


def _published_versions(entry: etree._Element, arxiv: str) -> list[StatedVersion]:
    """The published versions the authors name in `arxiv:doi` (a DOI, or several separated by spaces): the same
    study in another version. arXiv's own DOI for the paper (10.48550/arXiv.<id>) is this record."""
    dois = (normalise_doi(written) for written in (_text(entry, "arxiv:doi") or "").split())
    return stated_versions_once((StatedVersion(doi=doi) for doi in dois if doi),
                                {"doi": normalise_doi(f"10.48550/arXiv.{arxiv}") or ""})


# How arXiv says a paper was withdrawn (its last version replaces the paper and abstract with a notice): "This paper
# has been withdrawn by the author(s)", "Withdrawn by arXiv administrators", "withdrawn: duplicate submission".
_WITHDRAWN = re.compile(r"^\W*(?:(?:this|the)\s+)?(?:(?:paper|article|manuscript|submission|preprint|work)\s+"
                        r"(?:(?:has\s+been|is|was)\s+)?)?withdrawn\b", re.IGNORECASE)


def _withdrawn(entry: etree._Element) -> bool:
    """Whether the entry's comment or abstract says the paper was withdrawn: a retraction, as Crossref says of a
    withdrawal, so that it is never read as a study."""
    return any(_WITHDRAWN.search(_text(entry, path) or "") for path in ("arxiv:comment", "atom:summary"))


# --------------------------------------------------------------------------- requests


def search(fetcher: Fetcher, settings: SourceSettings, search_query: str, since: int | None = None,
           page_size: int = 100) -> SourceOutcome:
    """All papers matching `search_query`, written in arXiv's own syntax (e.g. `ti:crispr AND cat:q-bio*`)."""
    query = search_query
    if since is not None:
        query = f"({search_query}) AND submittedDate:[{since}01010000 TO 300012312359]"
    return run_call(Trace("arxiv", fetcher, PROVIDER, Secrets()),
                    lambda trace: _paged(trace, query, min(page_size, MAX_PAGE), settings))


def lookup(fetcher: Fetcher, settings: SourceSettings, arxiv_id: str) -> SourceOutcome:
    """One paper by arXiv id (any version; the record is version-less). Not found is an empty `ok`."""
    asked = normalise_arxiv(arxiv_id)

    def call(trace: Trace) -> SourceOutcome:
        # An id sitegen cannot read is still sent: arXiv's own error entry then says what is wrong with it.
        feed = _feed(trace.get(BASE, [("id_list", asked or arxiv_id.strip())]))
        entries, total = feed.findall("atom:entry", NS), _total(feed)
        if len(entries) < total:
            raise Malformed(f"arXiv reported {counted(total, 'match', 'matches')} but sent {len(entries)}")
        records = [to_record(entry, entry_to_record, trace.warnings, "the entry") for entry in entries]
        if None in records:
            raise no_record(ENTRIES, entries[records.index(None)], "the entry")
        return lookup_outcome(trace, arxiv_id, records, lambda found: found.custom.arxiv == asked)
    return run_call(Trace("arxiv", fetcher, PROVIDER, Secrets()), call)


def _first_error(feed: etree._Element) -> str | None:
    return next(filter(None, (error_message(entry) for entry in feed.findall("atom:entry", NS))), None)


def _rejection(body: bytes) -> str:
    """What arXiv's error feed, sent with HTTP 400, says is wrong with the request."""
    try:
        message = _first_error(parse_xml(body))
    except Malformed:
        message = None
    return message or "arXiv rejected the query (HTTP 400)"


def _feed(response: Response) -> etree._Element:
    """The Atom feed of a response; arXiv's error entry (with HTTP 400, or inside a feed) is `unsupported`."""
    if response.status == 400:
        raise Unsupported(_rejection(response.body))
    if response.status == 404:
        raise SourceError("unavailable", "arXiv answered 404 for a query")
    check_status(response, PROVIDER.name)
    feed = parse_xml(response.body)
    if feed.tag != FEED:
        raise Malformed(f"expected an Atom feed, got a <{said(etree.QName(feed).localname)}> document")
    if message := _first_error(feed):
        raise Unsupported(message)
    return feed


def _total(feed: etree._Element) -> int:
    return reported_count(_text(feed, "opensearch:totalResults"), "opensearch:totalResults")


def _paged(trace: Trace, query: str, page_size: int, settings: SourceSettings) -> SourceOutcome:
    pager = Pager(PROVIDER.name, ENTRIES, settings.max_records, page_size, ceiling=MAX_RESULTS, trace=trace)
    start = 0
    while start < pager.cap and pager.proceed(str(start)):
        size = min(page_size, pager.cap - start)  # the last page asks only for what is left
        params = [("search_query", query), ("start", str(start)), ("max_results", str(size)), *SORT]
        feed = _feed(trace.get(BASE, params, post_to=BASE))  # the API takes its query by POST too
        entries = feed.findall("atom:entry", NS)
        pager.add(_total(feed), entries, entry_to_record)
        start += len(entries)
        if len(entries) < size:
            # The last page, or a short or empty page in the middle of a result set (arXiv sends
            # those): the pager's count check tells them apart, so no paper is silently dropped.
            pager.end("a page held fewer entries than asked for")
    return pager.outcome(trace)
