"""Europe PMC: /search with cursor paging, exact lookups, JATS full text, and
core-format results turned into normalised CSL-JSON records.

API: https://europepmc.org/RestfulWebService. No key and no contact address:
nothing but the public query is ever sent to EBI.
"""

from __future__ import annotations

from typing import Any

from lxml import etree
from pydantic import BaseModel, Field

from sitegen.records.ids import normalise_arxiv, normalise_doi, normalise_pmcid, normalise_pmid, record_id
from sitegen.records.markup import plain_text
from sitegen.records.model import CslName, Record, RecordMeta
from sitegen.records.names import split_name
from sitegen.records.providers import label
from sitegen.sources.base import (
    Items,
    Malformed,
    Pager,
    Trace,
    Unsupported,
    as_dict,
    check_status,
    element_text,
    parse_date,
    parse_json,
    parse_xml,
    require_title,
    run_call,
    text_value,
)
from sitegen.sources.http import Fetcher, Provider, Secrets, SourceError
from sitegen.sources.outcome import SourceOutcome, Status
from sitegen.sources.settings import SourceSettings

BASE = "https://www.ebi.ac.uk/europepmc/webservices/rest"
PROVIDER = Provider(label("europepmc"), frozenset({"www.ebi.ac.uk"}), min_interval=0.1)
MAX_PAGE_SIZE = 1000  # the documented maximum pageSize
LOOKUP_LIMIT = 25  # an exact identifier matches one record, rarely a few
ERROR_KEYS = ("errMsg", "errCode", "error")  # an error reported inside a 200
RESULTS = Items("result(s)", "no DOI, PMID or PMCID",
                lambda result: f"{text_value(result.get('source'))}:{text_value(result.get('id'))}"
                if isinstance(result, dict) and text_value(result.get("source")) and text_value(result.get("id"))
                else None)

OPEN_AVAILABILITY = ("OA", "F")  # open access first, then free to read; "S" needs a subscription
FULLTEXT_STYLES = ("html", "pdf")  # "doi" entries are landing pages, not the text

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
PMC_ID_TYPES = ("pmc", "pmcid")  # older NLM files say "pmc", Europe PMC's own JATS "pmcid"

def _one_or_more(value: Any) -> list[Any]:
    # a single value sometimes arrives bare instead of in a one-item list
    return value if isinstance(value, list) else [] if value is None else [value]


def _author(author: Any) -> CslName | None:
    if not isinstance(author, dict):
        return None
    if family := text_value(author.get("lastName")):
        return CslName(family=family, given=text_value(author.get("firstName")))
    if full_name := text_value(author.get("fullName")):  # a person named only as "Krab LC"
        return split_name(full_name)
    collective = text_value(author.get("collectiveName"))
    return CslName(literal=collective) if collective else None


def _fulltext_url(result: dict[str, Any]) -> str | None:
    """The best readable copy: open access before free, Europe PMC's own copy (the one `license`
    describes) before others, HTML before PDF."""
    candidates = [u for u in _one_or_more(as_dict(result.get("fullTextUrlList")).get("fullTextUrl"))
                  if isinstance(u, dict) and u.get("availabilityCode") in OPEN_AVAILABILITY
                  and u.get("documentStyle") in FULLTEXT_STYLES and text_value(u.get("url"))]
    candidates.sort(key=lambda u: (OPEN_AVAILABILITY.index(u["availabilityCode"]), u.get("site") != "Europe_PMC",
                                   FULLTEXT_STYLES.index(u["documentStyle"])))
    return text_value(candidates[0]["url"]) if candidates else None


def _container(result: dict[str, Any], preprint: bool) -> str | None:
    journal = as_dict(as_dict(result.get("journalInfo")).get("journal")).get("title")
    book = as_dict(result.get("bookOrReportDetails"))
    # for a preprint the "publisher" is the server (bioRxiv, Research Square); for a book it is not a container
    return (plain_text(journal) or plain_text(book.get("comprisingTitle"))
            or (plain_text(book.get("publisher")) if preprint else None))


def result_to_record(result: dict[str, Any]) -> Record | None:
    """A Record for one core-format search result, None when it has no DOI, PMID or PMCID; Unreadable
    without a title."""
    source = result.get("source")
    identifiers = {
        "doi": normalise_doi(result.get("doi")),
        "pmid": normalise_pmid(result.get("pmid") or (result.get("id") if source == "MED" else None)),
        "pmcid": normalise_pmcid(result.get("pmcid") or (result.get("id") if source == "PMC" else None)),
    }
    doi, pmid, pmcid = identifiers["doi"], identifiers["pmid"], identifiers["pmcid"]
    rid = record_id(identifiers)
    if rid is None:
        return None
    raw_title = result.get("title")
    title = require_title(plain_text(raw_title), rid, malformed=raw_title is not None and not isinstance(raw_title, str))
    journal = as_dict(result.get("journalInfo"))
    pub_types = [t for t in map(text_value, _one_or_more(as_dict(result.get("pubTypeList")).get("pubType"))) if t]
    lowered = {t.lower() for t in pub_types}
    preprint = source == "PPR" or "preprint" in lowered
    open_access = result.get("isOpenAccess")
    return Record(
        id=rid,
        type="article" if preprint else "article-journal",
        title=title,
        author=[name for a in _one_or_more(as_dict(result.get("authorList")).get("author")) if (name := _author(a))],
        container_title=_container(result, preprint),
        issued=parse_date(result.get("firstPublicationDate"), result.get("pubYear")),
        volume=text_value(journal.get("volume")),
        issue=text_value(journal.get("issue")),
        page=text_value(result.get("pageInfo")),
        DOI=doi,
        PMID=pmid,
        PMCID=pmcid,
        URL=(f"https://doi.org/{doi}" if doi else f"https://europepmc.org/article/MED/{pmid}" if pmid
             else f"https://europepmc.org/article/PMC/{pmcid}"),
        abstract=plain_text(result.get("abstractText")),
        custom=RecordMeta(
            arxiv=normalise_arxiv(doi) if doi and doi.startswith("10.48550/") else None,  # arXiv's DOIs name the preprint
            sources=["europepmc"],
            publication_types=pub_types,
            open_access=open_access == "Y" if open_access in ("Y", "N") else None,
            # licence and URL both come from this one Europe PMC entry, never from another source's copy
            license=text_value(result.get("license")),
            fulltext_url=_fulltext_url(result),
            # "Retraction of Publication" is the notice itself, not a retracted paper
            retracted="retracted publication" in lowered,
        ),
    )


# --------------------------------------------------------------------------- requests


def search(fetcher: Fetcher, settings: SourceSettings, query: str, since: int | None = None,
           page_size: int = MAX_PAGE_SIZE) -> SourceOutcome:
    """All results of a Europe PMC query (native syntax, verbatim), paged with cursors."""
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ValueError(f"page_size must be between 1 and {MAX_PAGE_SIZE}, not {page_size}")
    text = f"({query}) AND FIRST_PDATE:[{since}-01-01 TO 3000-12-31]" if since is not None else query
    return run_call(Trace("europepmc", fetcher, PROVIDER, Secrets()),
                    lambda trace: _paged(trace, text, settings.max_records, page_size).outcome(trace))


def lookup(fetcher: Fetcher, settings: SourceSettings, identifier: str) -> SourceOutcome:
    """The record with this DOI, PMID or PMCID. Not found is an empty `ok`, not an outage."""
    namespace, value = _lookup_identifier(identifier)

    def call(trace: Trace) -> SourceOutcome:
        limit = min(settings.max_records, LOOKUP_LIMIT)
        pager = _paged(trace, _lookup_query(namespace, value), limit, limit)
        found = pager.outcome(trace)
        # Every result that came back is checked, whatever hitCount said: only the record asked for is kept.
        matching = [r for r in found.records if r.identifiers().get(namespace) == value]
        others = [r.id for r in found.records if r not in matching]
        if pager.read and not matching:
            received = ", ".join(others) or "no usable record"
            raise Malformed(f"asked for {identifier} but received {received}: a response for a different record")
        if others:
            trace.warnings.append(f"Europe PMC also returned {', '.join(others[:5])}, which "
                                  f"{'is' if len(others) == 1 else 'are'} not the record asked for; left out")
        return trace.outcome("ok", matching, len(matching), truncated=found.truncated)
    return run_call(Trace("europepmc", fetcher, PROVIDER, Secrets()), call)


def _lookup_identifier(identifier: str) -> tuple[str, str]:
    # bare digits are a PMID (normalise_pmcid would also take them), so PMID is tried before PMCID
    for namespace, normalise in (("doi", normalise_doi), ("pmid", normalise_pmid), ("pmcid", normalise_pmcid)):
        if value := normalise(identifier):
            return namespace, value
    raise ValueError(f"{identifier!r} is not a DOI, PMID or PMCID")


def _lookup_query(namespace: str, value: str) -> str:
    if namespace == "doi":
        if '"' in value:
            raise Unsupported(f'the DOI {value} contains a double quote, which a DOI:"…" phrase cannot hold')
        return f'DOI:"{value}"'
    return f"EXT_ID:{value} AND SRC:MED" if namespace == "pmid" else f"PMCID:{value}"


def _page(trace: Trace, query: str, page_size: int, cursor: str) -> tuple[Any, list[Any], Any]:
    """One page: (hitCount, results, nextCursorMark), or Malformed when it cannot be a page of results
    (the pager checks hitCount)."""
    params = [("query", query), ("resultType", "core"), ("format", "json"), ("pageSize", str(page_size)),
              ("cursorMark", cursor)]
    response = trace.get(f"{BASE}/search", params)
    if response.status == 404:
        raise SourceError("unavailable", "Europe PMC answered 404 for a search")
    check_status(response, PROVIDER.name)
    page = parse_json(response)
    if not isinstance(page, dict) or any(key in page for key in ERROR_KEYS):
        raise Malformed(f"expected search results, got {str(page)[:200]!r}")
    total = page.get("hitCount")
    listing = page.get("resultList")
    results = listing.get("result") if isinstance(listing, dict) else None
    if results is None and total == 0:
        results = []  # nothing found needs no list
    if not isinstance(results, list):
        raise Malformed("the response has no resultList")
    return total, results, page.get("nextCursorMark")


def _paged(trace: Trace, query: str, limit: int, page_size: int) -> Pager:
    """Every page of a query, read; the caller turns the pager into an outcome."""
    size = min(page_size, limit)
    pager = Pager(PROVIDER.name, RESULTS, limit, size)
    cursor: Any = "*"
    while pager.proceed(cursor):
        total, results, cursor = _page(trace, query, size, cursor)
        pager.add(total, results, result_to_record, dict)
    return pager


# --------------------------------------------------------------------------- full text


class FullText(BaseModel):
    """One article's JATS full text from Europe PMC, with the same status and provenance as a search."""

    status: Status
    pmcid: str
    title: str | None = None
    licence: str | None = None
    paragraphs: list[tuple[str | None, str]] = Field(default_factory=list)  # (section title, text), in order
    warnings: list[str] = Field(default_factory=list)
    executed_query: list[str] = Field(default_factory=list)
    snapshot_hashes: list[str] = Field(default_factory=list)
    retry_after: float | None = None

    @property
    def complete(self) -> bool:
        return self.status == "ok"


def fulltext(fetcher: Fetcher, settings: SourceSettings, pmcid: str) -> FullText:
    """The full text of one PMC article. No full text (404) is an `ok` with no paragraphs.

    `settings` is unused (Europe PMC takes no key or contact); it keeps every provider call the same shape.
    """
    asked = normalise_pmcid(pmcid)
    if asked is None:
        raise ValueError(f"{pmcid!r} is not a PMCID")
    parsed: dict[str, Any] = {}

    # run_call gives full text the same failure handling as a search; the article travels beside the outcome
    def call(trace: Trace) -> SourceOutcome:
        response = trace.get(f"{BASE}/{asked}/fullTextXML", [])
        check_status(response, PROVIDER.name)
        if response.status == 404:
            return trace.outcome("ok", warning=f"Europe PMC has no full text for {asked}")
        parsed.update(parse_article(response.body, asked))
        return trace.outcome("ok")
    outcome = run_call(Trace("europepmc", fetcher, PROVIDER, Secrets()), call)
    return FullText(pmcid=asked, **parsed, **outcome.model_dump(
        include={"status", "warnings", "executed_query", "snapshot_hashes", "retry_after"}))


def parse_article(data: bytes, pmcid: str) -> dict[str, Any]:
    """Title, licence and body paragraphs of a JATS article, which must be the article `pmcid` names."""
    article = parse_xml(data)
    if article.tag != "article":
        raise Malformed(f"expected a JATS <article>, got <{article.tag}>")
    meta = article.find("front/article-meta")
    if meta is None:
        raise Malformed("the article has no <front>/<article-meta>")
    found = {value for e in meta.iterfind("article-id")
             if e.get("pub-id-type") in PMC_ID_TYPES and (value := normalise_pmcid(element_text(e)))}
    if not found:
        raise Malformed(f"the article names no PMCID, so it cannot be shown to be {pmcid}")
    if pmcid not in found:
        raise Malformed(f"asked for {pmcid} but received {', '.join(sorted(found))}: a response for a different record")
    return {"title": element_text(meta.find("title-group/article-title")),
            "licence": licence(meta), "paragraphs": paragraphs(article)}


def licence(meta: etree._Element) -> str | None:
    """The licence of a JATS article: its URL where stated, else its type, else its wording."""
    element = meta.find(".//license")
    if element is None:
        return None
    refs = [element_text(child) for child in element if isinstance(child.tag, str)
            and etree.QName(child).localname == "license_ref"]  # ali:license_ref, whatever the prefix
    wording = [element_text(p) or "" for p in element if p.tag in ("license-p", "p")]
    for candidate in (element.get(XLINK_HREF), *refs, element.get("license-type"), " ".join(wording)):
        if text := text_value(candidate):
            return text
    return None


def paragraphs(article: etree._Element) -> list[tuple[str | None, str]]:
    """(nearest section title, text) for every paragraph of the body, outermost paragraphs only
    (a paragraph inside a list inside a paragraph is already part of its text)."""
    body = article.find("body")
    if body is None:
        return []
    found: list[tuple[str | None, str]] = []
    for p in body.iter("p"):
        if next(p.iterancestors("p"), None) is not None:
            continue
        if text := element_text(p):
            found.append((_section_title(p), text))
    return found


def _section_title(element: etree._Element) -> str | None:
    for section in element.iterancestors("sec"):
        title = section.find("title")
        if text := element_text(title):
            return text
    return None

