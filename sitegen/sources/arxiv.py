"""arXiv: Atom API search with start/max_results paging, exact id lookups, and
Atom entries turned into normalised CSL-JSON records.

API: https://info.arxiv.org/help/api/user-manual.html. No credentials; arXiv asks
for one request every three seconds, serves at most 2,000 results per page and
30,000 per query, and reports errors as an Atom entry titled "Error".
"""

from __future__ import annotations

import re

from lxml import etree

from sitegen.records.ids import normalise_arxiv, normalise_doi, record_id
from sitegen.review.models import CslDate, CslName, Record, RecordMeta
from sitegen.sources.base import Malformed, Trace, Unsupported, check_status, parse_xml, run_call, to_records
from sitegen.sources.http import Fetcher, Provider, Response, Secrets, SourceError
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings

BASE = "https://export.arxiv.org/api/query"
PROVIDER = Provider("arXiv", frozenset({"export.arxiv.org"}), min_interval=3.0)
MAX_PAGE = 2000
MAX_RESULTS = 30_000  # arXiv returns nothing past this offset, whatever totalResults says
# Oldest first: papers submitted while a search is being paged land after the
# pages already read instead of shifting them, so paging neither skips nor repeats.
SORT = [("sortBy", "submittedDate"), ("sortOrder", "ascending")]

NS = {"atom": "http://www.w3.org/2005/Atom", "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
      "arxiv": "http://arxiv.org/schemas/atom"}
FEED = f"{{{NS['atom']}}}feed"
_SPACE = re.compile(r"\s+")


def _text(element: etree._Element, path: str) -> str | None:
    """The whitespace-collapsed text at `path`, or None when it is missing or blank."""
    found = element.find(path, NS)
    text = _SPACE.sub(" ", found.text or "").strip() if found is not None else ""
    return text or None


def _date_parts(published: str | None) -> CslDate | None:
    parts = [int(p) for p in (published or "")[:10].split("-") if p.isdigit()][:3]
    return CslDate(date_parts=[parts]) if parts else None


def error_message(entry: etree._Element) -> str | None:
    """arXiv's explanation when `entry` is its error report rather than a paper, else None."""
    # A paper could be titled "Error"; arXiv's error entries are told apart by an id that is no paper's.
    if _text(entry, "atom:title") != "Error" or normalise_arxiv(_text(entry, "atom:id")):
        return None
    return _text(entry, "atom:summary") or "arXiv reported an error without a message"


def entry_to_record(entry: etree._Element) -> Record | None:
    """A Record for one Atom entry, or None when it has no arXiv id or no title."""
    arxiv = normalise_arxiv(_text(entry, "atom:id"))  # the abs URL with its version, e.g. …/abs/1605.08386v1
    doi = normalise_doi(_text(entry, "arxiv:doi"))  # of the published version, when the authors gave one
    title = _text(entry, "atom:title")
    if arxiv is None or title is None:
        return None
    pdf = entry.find("atom:link[@title='pdf']", NS)
    return Record(
        id=record_id({"doi": doi, "arxiv": arxiv}),
        # Always "article" (CSL's type for a preprint), even when a DOI or journal
        # reference names a published version: this record describes the arXiv copy.
        type="article",
        title=title,
        author=[CslName(literal=name) for author in entry.findall("atom:author", NS)
                if (name := _text(author, "atom:name"))],
        container_title=_text(entry, "arxiv:journal_ref"),
        issued=_date_parts(_text(entry, "atom:published")),
        DOI=doi,
        URL=f"https://arxiv.org/abs/{arxiv}",
        abstract=_text(entry, "atom:summary"),
        custom=RecordMeta(
            arxiv=arxiv,
            sources=["arxiv"],
            publication_types=["preprint"],
            open_access=True,
            fulltext_url=pdf.get("href") if pdf is not None and pdf.get("href") else None,
        ),
    )


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
            raise Malformed(f"arXiv reported {total} matches but sent {len(entries)}")
        records = []
        for entry in entries:
            record = entry_to_record(entry)
            if record is None:
                raise Malformed("the entry has no arXiv id or title")
            if record.custom.arxiv != asked:
                raise Malformed(f"asked for {arxiv_id} but received arxiv:{record.custom.arxiv}: "
                                "a response for a different record")
            records.append(record)
        return trace.outcome("ok", records, len(records))
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
        raise Malformed(f"expected an Atom feed, got a <{etree.QName(feed).localname}> document")
    if message := _first_error(feed):
        raise Unsupported(message)
    return feed


def _total(feed: etree._Element) -> int:
    total = _text(feed, "opensearch:totalResults")
    if total is None or not total.isdigit():
        raise Malformed("the feed has no opensearch:totalResults")
    return int(total)


def _paged(trace: Trace, query: str, page_size: int, settings: SourceSettings) -> SourceOutcome:
    records: list[Record] = []
    limit = min(settings.max_records, MAX_RESULTS)
    start, total, skipped = 0, None, 0
    while total is None or start < min(total, limit):
        size = min(page_size, limit - start)
        params = [("search_query", query), ("start", str(start)), ("max_results", str(size)), *SORT]
        feed = _feed(trace.get(BASE, params))
        total = _total(feed)
        entries = feed.findall("atom:entry", NS)
        page_records, page_skipped = to_records(entries, entry_to_record)
        records += page_records
        skipped += page_skipped
        start += len(entries)
        if not entries or len(entries) < size:
            break  # the last page, or a short page before the end, which the check below refuses
    # arXiv sometimes sends a short or empty page in the middle of a result set;
    # taking it as the end would silently drop papers.
    expected = min(total or 0, limit)
    if start < expected:
        raise Malformed(f"arXiv reported {total} matches but sent only {start} of the first {expected}")
    if skipped:
        trace.warnings.append(f"{skipped} arXiv entry/entries had no arXiv id or title and were skipped")
    if total and total > limit:
        trace.warnings.append(f"arXiv reported {total} matches; only the first {limit} were read")
    return trace.outcome("ok", records[:limit], total)
