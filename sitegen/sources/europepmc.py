"""Europe PMC: /search with cursor paging, exact lookups, JATS full text, and
core-format results turned into normalised CSL-JSON records.

API: https://europepmc.org/RestfulWebService. No key and no contact address:
nothing but the public query is ever sent to EBI.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import BaseModel, Field, computed_field

from sitegen.records.copyright import without_copyright_statement
from sitegen.records.ids import cited_doi, normalise_arxiv, normalise_doi, normalise_pmcid, normalise_pmid, record_id
from sitegen.records.markup import HTML_HEADING, labelled_sections, plain_text
from sitegen.records.model import CslDate, CslName, NoticeOf, Record, RecordMeta, Update, visible_text, web_address
from sitegen.records.names import split_name
from sitegen.records.pages import medline_pages
from sitegen.records.providers import label
from sitegen.sources.base import (
    Items,
    Malformed,
    Pager,
    Trace,
    Unsupported,
    UntitledAnswer,
    as_dict,
    check_status,
    date_from_parts,
    element_text,
    lookup_outcome,
    month_number,
    parse_date,
    parse_json,
    read_identifier,
    require_title,
    run_call,
    said,
    text_value,
    whole_number,
    works_noticed_once,
)
from sitegen.sources.http import Fetcher, Provider, Secrets, SourceError
from sitegen.sources.jats import QUOTABLE_NAMES, Paragraph, find_passage, licence, paragraphs, quotable, read_article
from sitegen.sources.outcome import SourceOutcome, Status
from sitegen.sources.settings import SourceSettings
from sitegen.text import counted

BASE = "https://www.ebi.ac.uk/europepmc/webservices/rest"
PROVIDER = Provider(label("europepmc"), frozenset({"www.ebi.ac.uk"}), min_interval=0.1)
MAX_PAGE_SIZE = 1000  # the documented maximum pageSize
LOOKUP_LIMIT = 25  # an exact identifier matches one record, rarely a few
ERROR_KEYS = ("errMsg", "errCode", "error")  # an error reported inside a 200
RESULTS = Items("result", "no DOI, PMID or PMCID",
                lambda result: f"{text_value(result.get('source'))}:{text_value(result.get('id'))}"
                if isinstance(result, dict) and text_value(result.get("source")) and text_value(result.get("id"))
                else None, "source and id")

OPEN_AVAILABILITY = ("OA", "F")  # open access first, then free to read; "S" needs a subscription
FULLTEXT_STYLES = ("html", "pdf")  # "doi" entries are landing pages, not the text

PMC_ID_TYPES = ("pmc", "pmcid")  # older NLM files say "pmc", Europe PMC's own JATS "pmcid"

def _one_or_more(value: Any) -> list[Any]:
    # a single value sometimes arrives bare instead of in a one-item list
    return value if isinstance(value, list) else [] if value is None else [value]


def _author(author: Any) -> CslName | None:
    if not isinstance(author, dict):
        return None
    if family := text_value(author.get("lastName")):
        return CslName(family=family, given=text_value(author.get("firstName")) or text_value(author.get("initials")))
    if full_name := text_value(author.get("fullName")):  # a person named only as "Krab LC"
        return split_name(full_name)
    collective = text_value(author.get("collectiveName"))
    return CslName(literal=collective) if collective else None


def _authors(result: dict[str, Any]) -> list[CslName]:
    """The authors of the author list; without one (the lite result type), of the author string ("Schoenfeld JD,
    Haas-Kogan DA, O'Neill AF."), each "Family Initials"."""
    listed = [name for a in _one_or_more(as_dict(result.get("authorList")).get("author")) if (name := _author(a))]
    if listed or not (written := text_value(result.get("authorString"))):
        return listed
    return [split_name(name) for part in written.removesuffix(".").split(",")
            if visible_text(name := part.strip()) and name.lower() not in ("et al", "et al.")]


def _fulltext_url(result: dict[str, Any]) -> str | None:
    """The best readable copy: open access before free, Europe PMC's own copy (the one `license`
    describes) before others, HTML before PDF."""
    candidates = [u for u in _one_or_more(as_dict(result.get("fullTextUrlList")).get("fullTextUrl"))
                  if isinstance(u, dict) and u.get("availabilityCode") in OPEN_AVAILABILITY
                  and u.get("documentStyle") in FULLTEXT_STYLES and web_address(text_value(u.get("url")))]
    candidates.sort(key=lambda u: (OPEN_AVAILABILITY.index(u["availabilityCode"]), u.get("site") != "Europe_PMC",
                                   FULLTEXT_STYLES.index(u["documentStyle"])))
    return text_value(candidates[0]["url"]) if candidates else None


def _container(result: dict[str, Any], preprint: bool) -> str | None:
    journal = as_dict(as_dict(result.get("journalInfo")).get("journal")).get("title")
    book = as_dict(result.get("bookOrReportDetails"))
    # for a preprint the "publisher" is the server (bioRxiv, Research Square); for a book it is not a container
    return (plain_text(journal) or plain_text(book.get("comprisingTitle"))
            or (plain_text(book.get("publisher")) if preprint else None))


# Europe PMC's comment and correction links naming a notice against this work (PubMed's CommentsCorrections, as
# "Retraction in"); "Erratum for" and "Retraction of" are on the notice itself, naming the work it is about
# (NOTICE_OF_TYPES).
NOTICE_TYPES = {"retraction in": "retraction", "retracted and republished in": "retraction", "erratum in": "correction",
                "corrected and republished in": "correction", "expression of concern in": "expression-of-concern"}
NOTICE_OF_TYPES = {"retraction of": "retraction", "erratum for": "correction",
                   "expression of concern for": "expression-of-concern"}


def _notices(result: dict[str, Any]) -> list[Update]:
    """The retractions, corrections and expressions of concern Europe PMC links to the work, by their PMIDs and the
    DOIs their citations name (as PubMed's `updates`)."""
    found: dict[tuple[str, str | None, str | None], Update] = {}
    for link in _one_or_more(as_dict(result.get("commentCorrectionList")).get("commentCorrection")):
        link = as_dict(link)
        if kind := NOTICE_TYPES.get(" ".join((text_value(link.get("type")) or "").lower().split())):
            pmid = normalise_pmid(link.get("id")) if link.get("source") == "MED" else None
            doi = cited_doi(text_value(link.get("reference")))
            found[(kind, pmid, doi)] = Update(kind=kind, doi=doi, pmid=pmid)
    return list(found.values())


def _works_noticed(result: dict[str, Any]) -> list[NoticeOf]:
    """For a notice, the works Europe PMC links it to ("Erratum for", "Retraction of"), by PMID and cited DOI."""
    links = _one_or_more(as_dict(result.get("commentCorrectionList")).get("commentCorrection"))
    return works_noticed_once(_work_noticed(as_dict(link)) for link in links)


def _work_noticed(link: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """One link's kind of notice (None when it is no notice of another work), and that work's PMID and cited DOI."""
    kind = NOTICE_OF_TYPES.get(" ".join((text_value(link.get("type")) or "").lower().split()))
    if kind is None:
        return None, None, None
    pmid = normalise_pmid(link.get("id")) if link.get("source") == "MED" else None
    return kind, pmid, cited_doi(text_value(link.get("reference")))


def _csl_type(result: dict[str, Any], preprint: bool) -> str:
    """A preprint is CSL's "article"; a result with a book's details and no journal is a book from NCBI Bookshelf,
    or a chapter of one (a GeneReviews or StatPearls entry, whose book is the comprisingTitle), as PubMed has it."""
    book = as_dict(result.get("bookOrReportDetails"))
    if preprint:
        return "article"
    if book and not plain_text(as_dict(as_dict(result.get("journalInfo")).get("journal")).get("title")):
        return "chapter" if plain_text(book.get("comprisingTitle")) else "book"
    return "article-journal"


def _issued(result: dict[str, Any], journal: dict[str, Any]) -> CslDate | None:
    """When the work was first published, as far as Europe PMC knows it. A print date the journal gives only to the
    month ("2025 Dec") Europe PMC writes as its first day ("2025-12-01"), and a year as its first of January: that
    day was never given, so the date is kept as far as the journal's own date goes (as PubMed has it)."""
    first = result.get("firstPublicationDate")
    issued = parse_date(first, result.get("pubYear"))
    stated = text_value(journal.get("dateOfPublication"))
    if (issued is None or not stated or first != journal.get("printPublicationDate")
            or first == result.get("electronicPublicationDate")):
        return issued  # an electronic date, or one the journal does not state: a day Europe PMC was given
    words = stated.split()
    known = [whole_number(words[0], 4)]
    if len(words) > 1 and (month := month_number(words[1])):
        known.append(month)
        if len(words) > 2 and (day := whole_number(words[2], 2)):
            known.append(day)
    parts = issued.date_parts[0]
    filled = parts[len(known):]
    if parts[:len(known)] == known and filled and all(part == 1 for part in filled):
        return date_from_parts(known)
    return issued


def result_to_record(result: dict[str, Any]) -> Record | None:
    """A Record for one core-format search result, None when it has no DOI, PMID or PMCID; Unreadable
    without a title."""
    source = result.get("source")
    identifiers = {
        "doi": read_identifier("doi", normalise_doi, result.get("doi")),
        "pmid": read_identifier("pmid", normalise_pmid, result.get("pmid"), result.get("id") if source == "MED" else None),
        "pmcid": read_identifier("pmcid", normalise_pmcid, result.get("pmcid"), result.get("id") if source == "PMC" else None),
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
    notices = _notices(result)
    return Record(
        id=rid,
        type=_csl_type(result, preprint),
        title=title,
        author=_authors(result),
        container_title=_container(result, preprint),
        issued=_issued(result, journal),
        volume=text_value(journal.get("volume")),
        issue=text_value(journal.get("issue")),
        page=medline_pages(text_value(result.get("pageInfo"))),
        DOI=doi,
        PMID=pmid,
        PMCID=pmcid,
        URL=(f"https://doi.org/{doi}" if doi else f"https://europepmc.org/article/MED/{pmid}" if pmid
             else f"https://europepmc.org/article/PMC/{pmcid}"),
        abstract=without_copyright_statement(plain_text(labelled_sections(result.get("abstractText"), HTML_HEADING))),
        custom=RecordMeta(
            arxiv=normalise_arxiv(doi) if doi and doi.startswith("10.48550/") else None,  # arXiv's DOIs name the preprint
            sources=["europepmc"],
            publication_types=pub_types,
            open_access=open_access == "Y" if open_access in ("Y", "N") else None,
            # licence and URL both come from this one Europe PMC entry, never from another source's copy
            license=text_value(result.get("license")),
            fulltext_url=_fulltext_url(result),
            # "Retraction of Publication" is the notice itself, not a retracted paper
            retracted="retracted publication" in lowered or any(u.kind == "retraction" for u in notices),
            updates=notices,
            notice_of=_works_noticed(result),
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
    """The record with this DOI, PMID or PMCID. Not found is an empty `ok`, not an outage; other works in its place
    are kept apart (`lookup_outcome`)."""
    namespace, value = _lookup_identifier(identifier)

    def call(trace: Trace) -> SourceOutcome:
        limit = min(settings.max_records, LOOKUP_LIMIT)
        pager = _paged(trace, _lookup_query(namespace, value), limit, limit)
        if pager.read and len(pager.untitled) == pager.read == pager.total:  # an answer, as every lookup takes one
            raise UntitledAnswer(f"the result, {', '.join(pager.untitled)}, which has no title")
        found = pager.outcome(trace)
        if pager.read and not found.records:
            raise Malformed(f"asked for {identifier} but received no usable record")
        # Every result that came back is checked, whatever hitCount said: only the record asked for is kept.
        return lookup_outcome(trace, identifier, found.records, lambda r: r.identifiers().get(namespace) == value,
                              truncated=found.truncated)
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
    response = trace.get(f"{BASE}/search", params, post_to=f"{BASE}/searchPOST")
    if response.status == 404:
        raise SourceError("unavailable", "Europe PMC answered 404 for a search")
    check_status(response, PROVIDER.name)
    page = parse_json(response)
    if not isinstance(page, dict) or any(key in page for key in ERROR_KEYS):
        raise Malformed(f"expected search results, got {said(page)}")
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
    pager = Pager(PROVIDER.name, RESULTS, limit, min(page_size, limit), trace=trace)
    cursor: Any = "*"
    while pager.proceed(cursor):
        total, results, cursor = pager.within_the_cap(partial(_page, trace, query, cursor=cursor))
        pager.add(total, results, result_to_record, dict)
    return pager


# --------------------------------------------------------------------------- full text


class Quote(BaseModel):
    """A passage found in a licensed full text, with what must travel with it wherever it is shown."""

    paragraph: Paragraph
    licence: str | None
    licence_url: str
    source_url: str


class FullText(BaseModel):
    """One article's JATS full text from Europe PMC, with the same status and provenance as a search.

    Paragraphs are present only when `readable`: the article's machine-readable licence is one sitegen
    may quote (jats.QUOTABLE_NAMES). Otherwise `refusal` says why and where to read it instead.
    """

    status: Status
    pmcid: str
    title: str | None = None
    licence: str | None = None  # the licence's wording, else its URL
    licence_url: str | None = None  # the Creative Commons URL the licence gate read
    readable: bool = False
    refusal: str | None = None
    paragraphs: list[Paragraph] = Field(default_factory=list)  # abstract(s) first, then the body
    truncated: bool = False  # more paragraphs than jats.MAX_PARAGRAPHS or jats.MAX_CHARACTERS allow
    warnings: list[str] = Field(default_factory=list)
    executed_query: list[str] = Field(default_factory=list)
    snapshot_hashes: list[str] = Field(default_factory=list)
    retry_after: float | None = None
    cause: str | None = None  # why the call failed, as its outcome says (SourceOutcome.cause)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def source_url(self) -> str:
        return article_url(self.pmcid)

    @property
    def complete(self) -> bool:
        """Whether a passage missing from `paragraphs` is missing from the article's text as read."""
        return self.status == "ok" and not self.truncated

    def quote(self, text: str) -> Quote | None:
        """The paragraph holding `text`, with the licence and source URL that go with it; None when absent."""
        paragraph = find_passage(text, self.paragraphs)
        if paragraph is None or self.licence_url is None:
            return None
        return Quote(paragraph=paragraph, licence=self.licence, licence_url=self.licence_url,
                     source_url=self.source_url)


def article_url(pmcid: str) -> str:
    return f"https://europepmc.org/articles/{pmcid}"


def fulltext(fetcher: Fetcher, settings: SourceSettings, pmcid: str) -> FullText:
    """The full text of one PMC article. No full text (a 404 for an article Europe PMC does not list as having
    one, `_why_no_full_text`) is an `ok` with no paragraphs; a body that is
    too large, too deep, or declares entities is refused (`unavailable`, never expanded); a licence sitegen
    may not quote is an `ok` that is not `readable`.

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
            return trace.outcome("ok", warning=_why_no_full_text(trace, asked))
        parsed.update(parse_article(response.body, asked))
        if parsed["truncated"]:
            trace.warnings.append(f"the full text of {asked} is longer than sitegen reads: only its first "
                                  f"{counted(len(parsed['paragraphs']), 'paragraph was', 'paragraphs were')} kept")
        elif parsed["readable"] and not parsed["paragraphs"]:
            trace.warnings.append(f"the full text of {asked} has no paragraphs")
        return trace.outcome("ok")
    outcome = run_call(Trace("europepmc", fetcher, PROVIDER, Secrets()), call)
    return FullText(pmcid=asked, **parsed, cause=outcome.cause, **outcome.model_dump(
        include={"status", "warnings", "executed_query", "snapshot_hashes", "retry_after"}))


def _why_no_full_text(trace: Trace, pmcid: str) -> str:
    """Why Europe PMC answered 404 for the full text of `pmcid`, in the words of the run's warning. Europe PMC
    serves the full text of its open access subset only, and answers 404 for any other article; but a 404 is
    also what a moved address, a proxy or a gateway answers, saying nothing of the article, and its body is
    no sure sign (Europe PMC documents none). So its search is asked what it knows of the article: one it lists
    as open access with its text in Europe PMC has a full text, and the 404 is an outage (SourceError), never
    "no full text"; so is a search that does not answer."""
    _, results, _ = _page(trace, _lookup_query("pmcid", pmcid), LOOKUP_LIMIT, "*")
    listed = [result for result in results if isinstance(result, dict) and normalise_pmcid(result.get("pmcid")) == pmcid]
    if any(result.get("isOpenAccess") == "Y" and result.get("inEPMC") == "Y" for result in listed):
        raise SourceError("unavailable", f"Europe PMC answered 404 for the full text of {pmcid}, which its search "
                                         "lists as open access with its text in Europe PMC: taken for an outage (a "
                                         "moved address or a proxy's page), not for an article without full text")
    why = "it is not in Europe PMC's open access subset" if listed else f"Europe PMC's search knows no article {pmcid}"
    return f"Europe PMC has no full text for {pmcid}: {why}"


def parse_article(data: bytes, pmcid: str) -> dict[str, Any]:
    """Title, licence and (when the licence lets sitegen quote it) paragraphs of a JATS article, which must
    be the article `pmcid` names; Malformed when the body is refused (jats.read_article) or is not it."""
    article = read_article(data)
    if article.tag != "article":
        raise Malformed(f"expected a JATS <article>, got <{said(article.tag)}>")
    meta = article.find("front/article-meta")
    if meta is None:
        raise Malformed("the article has no <front>/<article-meta>")
    found = {value for e in meta.iterfind("article-id")
             if e.get("pub-id-type") in PMC_ID_TYPES and (value := normalise_pmcid(element_text(e)))}
    if not found:
        raise Malformed(f"the article names no PMCID, so it cannot be shown to be {pmcid}")
    if pmcid not in found:
        raise Malformed(f"asked for {pmcid} but received {', '.join(sorted(found))}: a response for a different record")
    wording, url = licence(meta)
    readable = quotable(url)
    found_paragraphs, truncated = paragraphs(article) if readable else ([], False)
    refusal = None if readable else (
        f"the reuse licence of {pmcid} ({url or 'no machine-readable Creative Commons URL'}) is not one sitegen "
        f"may quote ({QUOTABLE_NAMES}); read it at {article_url(pmcid)}")
    return {"title": element_text(meta.find("title-group/article-title")), "licence": wording, "licence_url": url,
            "readable": readable, "refusal": refusal, "paragraphs": found_paragraphs, "truncated": truncated}


def pmcid_for(fetcher: Fetcher, settings: SourceSettings, pmid: str) -> tuple[str | None, SourceOutcome]:
    """The PMCID of the article with this PMID, as Europe PMC knows it (how a PubMed or OpenAlex record
    reaches full text), with the lookup's outcome. None with a complete outcome: the article has no PMCID;
    None with any other status, or a `doubt` (another work in its place): nobody knows (an outage is never
    "no PMCID")."""
    value = normalise_pmid(pmid)
    if value is None:
        raise ValueError(f"{pmid!r} is not a PMID")
    outcome = lookup(fetcher, settings, value)
    return next((record.PMCID for record in outcome.records if record.PMCID), None), outcome
