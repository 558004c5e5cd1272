"""PubMed through NCBI E-utilities: esearch onto the history server, efetch in batches,
exact lookups by PMID, and PubmedArticle XML turned into normalised CSL-JSON records.

API: https://www.ncbi.nlm.nih.gov/books/NBK25499/. E-utilities take the API key
and the contact address only as query parameters; without a key NCBI allows
3 requests a second, with one 10.
"""

from __future__ import annotations

import dataclasses
import re

from lxml import etree

from sitegen.records.copyright import without_copyright_statement
from sitegen.records.ids import cited_doi, normalise_doi, normalise_pmcid, normalise_pmid, record_id
from sitegen.records.model import (
    CslDate,
    CslName,
    NoticeOf,
    Record,
    RecordMeta,
    StatedVersion,
    Update,
    stated_versions_once,
)
from sitegen.records.pages import medline_pages
from sitegen.records.preprints import is_preprint
from sitegen.records.providers import label
from sitegen.sources.base import (
    NO_TITLE,
    Items,
    Malformed,
    Pager,
    Trace,
    Unreadable,
    Unsupported,
    check_status,
    date_from_parts,
    element_plain_text,
    element_text,
    lookup_outcome,
    month_number,
    no_record,
    own_id,
    parse_xml,
    quoted,
    read_identifier,
    reported_count,
    require_title,
    run_call,
    said,
    to_record,
    whole_number,
    works_noticed_once,
)
from sitegen.sources.http import Fetcher, Provider, Secrets, SourceError, too_large
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings
from sitegen.text import counted

BASE = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
PROVIDER = Provider(label("pubmed"), frozenset({"eutils.ncbi.nlm.nih.gov"}), min_interval=0.34)
KEYED_INTERVAL = 0.1  # NCBI allows 10 requests a second with an API key
TOOL = "sitegen"  # NCBI asks every client to name itself with `tool` (public) and `email` (a contact)
MAX_BATCH = 10_000  # the largest retmax efetch accepts
# PubMed serves a query's records only as far as position 9,998 ("'retstart' cannot be larger than 9998"), the
# history server's included: the first 9,999. Asking for a 10,000th is refused, and the whole read with it.
RETRIEVAL_LIMIT = 9_999

# What PubMed did with a part of the query it did not search as written, by the entry naming that part. ErrorList's
# entries say a part matched nothing and was left out (any other ErrorList entry means the search failed);
# WarningList's say a quoted phrase PubMed does not know as a phrase was searched as its words, or a stopword was
# ignored. With no matches that is an answer; with matches PubMed has searched a different query.
NOT_AS_WRITTEN = {"PhraseNotFound": "did not find the phrase", "FieldNotFound": "did not find the field",
                  "QuotedPhraseNotFound": "did not find the quoted phrase", "PhraseIgnored": "ignored the term"}
# PubMed's operators are written in capitals: a lowercase "or" is a stopword, ignored, so "asthma or copd" is
# searched as asthma AND copd, another query. Any other stopword ignored ("quality of life" unquoted) leaves the
# query as it was meant, as every PubMed search does: that is no query changed.
OPERATOR_WORDS = ("and", "or", "not")


def _only_a_stopword(node: etree._Element) -> bool:
    return node.tag == "PhraseIgnored" and (element_text(node) or "").strip().casefold() not in OPERATOR_WORDS
ARTICLES = Items("article", "no PMID", lambda entry: own_id(element_text(
    entry.find("MedlineCitation/PMID" if entry.tag == "PubmedArticle" else "BookDocument/PMID")), normalise_pmid), "PMID")
# CommentsCorrections types naming a notice against this article (the notice's PMID is in the element). A work
# retracted and republished (JAMA's "Notice of Retraction and Replacement") is retracted by that notice.
UPDATE_REF_TYPES = {"RetractionIn": "retraction", "RetractedandRepublishedIn": "retraction", "ErratumIn": "correction",
                    "CorrectedandRepublishedIn": "correction", "ExpressionOfConcernIn": "expression-of-concern"}
# CommentsCorrections types on a notice naming the work it is about (its PMID, and its DOI in the citation,
# RefSource, where PubMed gives one): deduplication marks that work with the notice (`RecordMeta.notice_of`).
NOTICE_OF_REF_TYPES = {"RetractionOf": "retraction", "ErratumFor": "correction",
                       "ExpressionOfConcernFor": "expression-of-concern"}
# CommentsCorrections types linking an article and another version of it: "Update of" on a journal article names
# its preprint, "Update in" on a preprint its journal version (the other's PMID, and its DOI in RefSource). PubMed
# links an updated Cochrane review or guideline to the one it replaces so too: only a link with a preprint at one
# end names the same study in another version (`RecordMeta.stated_versions`).
VERSION_REF_TYPES = frozenset({"UpdateOf", "UpdateIn"})
NO_LABEL = "UNLABELLED"
PREPRINT_TYPE = "Preprint"
RETRACTED_TYPE = "Retracted Publication"  # the retracted article; "Retraction of Publication" is the notice itself


def _ymd(node: etree._Element | None) -> CslDate | None:
    """The date of an element with Year/Month/Day children, as far as they are valid."""
    if node is None:
        return None
    year, month, day = (element_text(node.find(part)) for part in ("Year", "Month", "Day"))
    return date_from_parts([whole_number(year, 4), month_number(month), whole_number(day, 2)])


MEDLINE_YEAR = re.compile(r"(?<![0-9])[0-9]{4}(?![0-9])")


def _pub_date(pub_date: etree._Element | None) -> CslDate | None:
    """The date of a PubDate, a journal issue's or a book's: Year, Month and Day, or a MedlineDate in their stead."""
    if date := _ymd(pub_date):
        return date
    if pub_date is not None:
        # MedlineDate is free text for ranges such as "1998 Dec-1999 Jan"; its first year (four ASCII digits, not
        # part of a longer number) is the issue's year.
        year = MEDLINE_YEAR.search(element_text(pub_date.find("MedlineDate")) or "")
        if year and (date := date_from_parts([int(year.group())])):
            return date
    return None


def _issued(article: etree._Element) -> CslDate | None:
    return _pub_date(article.find("Journal/JournalIssue/PubDate")) or _ymd(article.find("ArticleDate"))


def _abstract(article: etree._Element) -> str | None:
    parts = []
    for node in article.iterfind("Abstract/AbstractText"):
        text = element_plain_text(node)
        if text:
            label = (node.get("Label") or "").strip()
            # NLM labels a section it could not assign "UNLABELLED" (NlmCategory UNASSIGNED): no heading of the text
            shown = label and label.upper() != NO_LABEL
            parts.append(f"{label}: {text}" if shown else text)
    # MEDLINE keeps the publisher's statement apart (CopyrightInformation); one a record holds in its text goes, as
    # every provider's does
    return without_copyright_statement(" ".join(parts)) or None


def _author(node: etree._Element) -> CslName | None:
    if node.get("ValidYN") == "N":  # NLM keeps a misspelt name next to its correction, marked invalid
        return None
    if collective := element_text(node.find("CollectiveName")):
        return CslName(literal=collective)
    family = element_text(node.find("LastName"))
    given = element_text(node.find("ForeName")) or element_text(node.find("Initials"))
    return CslName(family=family, given=given, suffix=element_text(node.find("Suffix"))) if family else None


def _article_ids(article: etree._Element) -> dict[str, str]:
    # Only the article's own list: each cited reference in PubmedData/ReferenceList has an ArticleIdList too.
    found: dict[str, str] = {}
    for node in article.iterfind("PubmedData/ArticleIdList/ArticleId"):
        if value := element_text(node):
            found.setdefault(node.get("IdType", ""), value)
    return found


# A journal numbering its articles (e154225, 9966, fnae046) has PubMed keep the number, with no Pagination, only as
# the publisher's item identifier (ELocationID "pii"), and PubMed's citation shows it where pages stand, as Crossref's
# article-number is the page of its record. One word of at most 12 letters and digits: an Elsevier or SciELO PII
# (S0140-6736(24)01653-2, S0004-28032013000100035) identifies the article at its publisher and locates nothing.
ARTICLE_NUMBER = re.compile(r"(?=[A-Za-z]*[0-9])[A-Za-z0-9]{1,12}")


def _page(details: etree._Element) -> str | None:
    """MedlinePgn, MEDLINE's shortened ranges written in full; without one, the article number the pii gives."""
    if pages := medline_pages(element_text(details.find("Pagination/MedlinePgn"))):
        return pages
    return next((number for node in details.iterfind("ELocationID[@EIdType='pii']") if node.get("ValidYN") != "N"
                 and (number := element_text(node)) and ARTICLE_NUMBER.fullmatch(number)), None)


def _doi(article: etree._Element, ids: dict[str, str]) -> str | None:
    # Recent records sometimes carry the DOI only as the publisher's electronic location.
    located = [element_text(node) for node in article.iterfind("MedlineCitation/Article/ELocationID[@EIdType='doi']")
               if node.get("ValidYN") != "N"]
    return read_identifier("doi", normalise_doi, ids.get("doi"), *located)


def updates(citation: etree._Element) -> list[Update]:
    """Retractions, errata and expressions of concern PubMed lists against the article, with their PMIDs and the
    DOI their citation (RefSource) names: Crossref names the same notice by DOI alone, and only a listing giving
    both makes the two one notice when the sources' records are merged."""
    found = {}
    for node in citation.iterfind("CommentsCorrectionsList/CommentsCorrections"):
        kind = UPDATE_REF_TYPES.get(node.get("RefType") or "")
        if kind:
            pmid = normalise_pmid(element_text(node.find("PMID")))
            doi = cited_doi(element_text(node.find("RefSource")))
            found[(kind, pmid, doi)] = Update(kind=kind, doi=doi, pmid=pmid)
    return list(found.values())


def works_noticed(citation: etree._Element) -> list[NoticeOf]:
    """For a notice, the works PubMed says it is about ("Retraction of", "Erratum for"), by PMID and cited DOI."""
    return works_noticed_once(
        (NOTICE_OF_REF_TYPES.get(node.get("RefType") or ""), normalise_pmid(element_text(node.find("PMID"))),
         cited_doi(element_text(node.find("RefSource"))))
        for node in citation.iterfind("CommentsCorrectionsList/CommentsCorrections"))


def stated_versions(citation: etree._Element, preprint: bool, own: dict[str, str]) -> list[StatedVersion]:
    """The other versions of the study PubMed links the article to ("Update of", "Update in"), by PMID and cited DOI:
    those of a preprint, and those a preprint is of (its DOI or the server its citation names says so)."""
    found = []
    for node in citation.iterfind("CommentsCorrectionsList/CommentsCorrections"):
        if node.get("RefType") not in VERSION_REF_TYPES:
            continue
        cited = element_text(node.find("RefSource"))
        pmid, doi = normalise_pmid(element_text(node.find("PMID"))), cited_doi(cited)
        if (pmid or doi) and (preprint or is_preprint(doi, container=cited)):
            found.append(StatedVersion(doi=doi, pmid=pmid))
    return stated_versions_once(found, own)


def article_to_record(article: etree._Element) -> Record | None:
    """A Record for one PubmedArticle element, None when it has no PMID; Unreadable when it has one
    but no article details or title."""
    citation = article.find("MedlineCitation")
    pmid = normalise_pmid(element_text(citation.find("PMID"))) if citation is not None else None
    if pmid is None:
        return None
    details = citation.find("Article")
    if details is None:
        raise Unreadable(f"pmid:{pmid} has no article details")
    ids = _article_ids(article)
    identifiers = {"doi": _doi(article, ids), "pmid": pmid, "pmcid": read_identifier("pmcid", normalise_pmcid, ids.get("pmc"))}
    rid = record_id(identifiers)
    title = require_title(_title(details.find("ArticleTitle")) or _title(details.find("VernacularTitle")), rid)
    types = [t for node in details.iterfind("PublicationTypeList/PublicationType") if (t := element_text(node))]
    notices = updates(citation)
    issue = details.find("Journal/JournalIssue")
    return Record(
        id=rid,
        # NLM indexes preprints (bioRxiv, medRxiv, Research Square) with the publication type "Preprint": CSL's
        # "article", as Europe PMC, OpenAlex and arXiv give one.
        type="article" if PREPRINT_TYPE in types else "article-journal",
        title=title,
        author=[name for node in details.iterfind("AuthorList/Author") if (name := _author(node))],
        container_title=element_plain_text(details.find("Journal/Title")),
        issued=_issued(details),
        volume=element_text(issue.find("Volume")) if issue is not None else None,
        issue=element_text(issue.find("Issue")) if issue is not None else None,
        page=_page(details),
        DOI=identifiers["doi"],
        PMID=identifiers["pmid"],
        PMCID=identifiers["pmcid"],
        URL=f"https://doi.org/{identifiers['doi']}" if identifiers["doi"]
        else f"https://pubmed.ncbi.nlm.nih.gov/{identifiers['pmid']}/",
        abstract=_abstract(details),
        custom=RecordMeta(
            sources=["pubmed"],
            publication_types=types,
            retracted=RETRACTED_TYPE in types or any(notice.kind == "retraction" for notice in notices),
            updates=notices,
            notice_of=works_noticed(citation),
            stated_versions=stated_versions(citation, PREPRINT_TYPE in types,
                                            {key: value for key, value in identifiers.items() if value}),
        ),
    )


def _title(node: etree._Element | None) -> str | None:
    title = element_plain_text(node)
    return None if title is None or NO_TITLE.fullmatch(title) else title


def _authors_of(node: etree._Element) -> list[etree._Element]:
    """The authors an element lists: its AuthorLists but those of editors (Type="editors")."""
    return [author for listed in node.iterfind("AuthorList") if listed.get("Type", "authors") != "editors"
            for author in listed.iterfind("Author")]


def book_to_record(book: etree._Element) -> Record | None:
    """A Record for one PubmedBookArticle (a book, or a chapter of one such as a GeneReviews entry),
    None when it has no PMID; Unreadable when it has one but no title."""
    document = book.find("BookDocument")
    pmid = normalise_pmid(element_text(document.find("PMID"))) if document is not None else None
    if pmid is None:
        return None
    whole = document.find("Book")
    book_title = element_plain_text(whole.find("BookTitle")) if whole is not None else None
    chapter = _title(document.find("ArticleTitle")) or _title(document.find("VernacularTitle"))
    dois = [element_text(node) for path in ("BookDocument/ArticleIdList", "PubmedBookData/ArticleIdList")
            for node in book.iterfind(f"{path}/ArticleId[@IdType='doi']")]
    identifiers = {"doi": read_identifier("doi", normalise_doi, *dois), "pmid": pmid}
    rid = record_id(identifiers)
    title = require_title(chapter or book_title, rid)
    # The chapter's own authors, else the book's: never its editors (GeneReviews lists its editors under Book,
    # who wrote none of its chapters).
    authors = _authors_of(document) or (_authors_of(whole) if whole is not None else [])
    return Record(
        id=rid,
        type="chapter" if chapter and book_title else "book",
        title=title,
        author=[name for node in authors if (name := _author(node))],
        container_title=book_title if chapter else None,
        # A chapter's own date (GeneReviews' entries are contributed, and revised, over decades) before the book's,
        # which is when the book or its series began (1993 for every GeneReviews entry).
        issued=(_ymd(document.find("ContributionDate")) if chapter else None)
        or (_pub_date(whole.find("PubDate")) if whole is not None else None),
        DOI=identifiers["doi"],
        PMID=pmid,
        URL=f"https://doi.org/{identifiers['doi']}" if identifiers["doi"] else f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        abstract=_abstract(document),
        custom=RecordMeta(sources=["pubmed"], publication_types=[
            t for node in document.iterfind("PublicationType") if (t := element_text(node))]),
    )


def pubmed_to_record(element: etree._Element) -> Record | None:
    """A Record for either kind of entry an efetch answer holds: an article, or a book or chapter."""
    return book_to_record(element) if element.tag == "PubmedBookArticle" else article_to_record(element)


# --------------------------------------------------------------------------- requests


def secrets(settings: SourceSettings) -> Secrets:
    params = {}
    if settings.ncbi_api_key:
        params["api_key"] = settings.ncbi_api_key
    if settings.contact_email:
        params["email"] = settings.contact_email
    return Secrets(params)


def provider(settings: SourceSettings) -> Provider:
    # The module-level PROVIDER is read at call time, so a changed PROVIDER (a test's limits) applies here too.
    return dataclasses.replace(PROVIDER, min_interval=KEYED_INTERVAL) if settings.ncbi_api_key else PROVIDER


def search(fetcher: Fetcher, settings: SourceSettings, term: str, since: int | None = None,
           batch_size: int = 500) -> SourceOutcome:
    """All records matching `term` (native PubMed syntax, sent verbatim), read in batches from the history server."""
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"batch_size must be between 1 and {MAX_BATCH}, not {batch_size}")
    query = f"({term}) AND {since}:3000[dp]" if since is not None else term
    return run_call(Trace("pubmed", fetcher, provider(settings), secrets(settings)),
                    lambda trace: _search(trace, query, settings, batch_size))


def lookup(fetcher: Fetcher, settings: SourceSettings, pmid: str) -> SourceOutcome:
    """One record by PMID. Not found is an empty `ok`, not an outage; another work in its place is kept apart
    (`lookup_outcome`)."""
    wanted = normalise_pmid(pmid)
    if wanted is None:
        raise ValueError(f"{pmid!r} is not a PMID")

    def call(trace: Trace) -> SourceOutcome:
        entries = _entries(_get_xml(trace, "efetch.fcgi", [("db", "pubmed"), ("id", wanted), ("retmode", "xml")]))
        records = [to_record(entry, pubmed_to_record, trace.warnings, "the article") for entry in entries]
        if None in records:
            raise no_record(ARTICLES, entries[records.index(None)], "the article")
        return lookup_outcome(trace, f"PMID {wanted}", records, lambda found: found.PMID == wanted,
                              lambda other: f"PMID {other.PMID}")
    return run_call(Trace("pubmed", fetcher, provider(settings), secrets(settings)), call)


def _get_xml(trace: Trace, utility: str, params: list[tuple[str, str]]) -> etree._Element:
    url = f"{BASE}/{utility}"
    response = trace.get(url, params + [("tool", TOOL)], post_to=url)  # every E-utility takes POST
    if response.status == 404:
        raise SourceError("unavailable", f"PubMed answered 404 for {utility}")
    check_status(response, PROVIDER.name)
    root = parse_xml(response.body)
    # E-utilities report failures (an expired WebEnv, a backend error) as <ERROR> inside a 200. An empty <ERROR/>
    # reports none: eSpell sends one with every answer, and the answer is then judged by its kind.
    error = next((message for node in root.iter("ERROR") if (message := element_text(node))), None)
    if error is not None:
        raise Malformed(f"PubMed reported an error: {said(error)}")
    return root


def _history(root: etree._Element, warnings: list[str]) -> tuple[int, str, str]:
    """Count, WebEnv and QueryKey of an esearch result. A part of the query PubMed did not search as written
    (NOT_AS_WRITTEN) is a warning when nothing matched, and Unsupported when something did: PubMed then
    searched another query than the one saved."""
    if root.tag != "eSearchResult":
        raise Malformed(f"expected an eSearchResult, got <{said(root.tag)}>")
    for node in root.iterfind("ErrorList/*"):
        if node.tag not in NOT_AS_WRITTEN:
            raise Malformed(f"PubMed reported {said(node.tag)}: {said(element_text(node) or 'no detail')}")
    altered = [f"{NOT_AS_WRITTEN[node.tag]} {quoted(element_text(node))}"
               for node in [*root.iterfind("ErrorList/*"), *root.iterfind("WarningList/*")]
               if node.tag in NOT_AS_WRITTEN and not _only_a_stopword(node)]
    count = reported_count(element_text(root.find("Count")), "Count")
    web_env, query_key = element_text(root.find("WebEnv")) or "", element_text(root.find("QueryKey")) or ""
    if altered and count:
        it = "it" if len(altered) == 1 else "them"
        raise Unsupported(f"PubMed {' and '.join(altered)} and searched the rest of the query instead ({counted(count, 'match', 'matches')} "
                          f"of a different query than the one saved); correct or remove {it}")
    warnings += [f"PubMed {part} of the query" for part in altered]
    if count and not (web_env and query_key):
        raise Malformed(f"PubMed reported {counted(count, 'match', 'matches')} but no WebEnv or QueryKey to fetch them from")
    return count, web_env, query_key


def _entries(root: etree._Element) -> list[etree._Element]:
    """The PubmedArticle and PubmedBookArticle elements of an efetch result, in order."""
    if root.tag != "PubmedArticleSet":
        raise Malformed(f"expected a PubmedArticleSet, got <{said(root.tag)}>")
    return [element for element in root if element.tag in ("PubmedArticle", "PubmedBookArticle")]


def _search(trace: Trace, term: str, settings: SourceSettings, batch_size: int) -> SourceOutcome:
    found = _get_xml(trace, "esearch.fcgi", [("db", "pubmed"), ("term", term), ("usehistory", "y"), ("retmax", "0")])
    total, web_env, query_key = _history(found, trace.warnings)
    pager = Pager(PROVIDER.name, ARTICLES, settings.max_records, batch_size, ceiling=RETRIEVAL_LIMIT, trace=trace)
    pager.count(total)
    start = 0
    while start < pager.wanted:
        size = min(batch_size, pager.wanted - start)
        if not pager.proceed(f"{start}+{size}"):
            break
        try:
            entries = _entries(_get_xml(trace, "efetch.fcgi", [
                ("db", "pubmed"), ("query_key", query_key), ("WebEnv", web_env), ("retstart", str(start)),
                ("retmax", str(size)), ("retmode", "xml")]))
        except SourceError as exc:
            if not too_large(exc) or size == 1:
                raise
            # Records with long reference lists: a batch over the byte cap is asked for in halves (the pager's
            # limit on pages follows the size of a page).
            batch_size = pager.page_size = size // 2
            continue
        # PubMed has answered 200 with an empty or cut-short set: that is an outage, never fewer matches.
        if len(entries) < size:
            raise Malformed(f"PubMed returned {len(entries)} of the {counted(size, 'record')} asked for "
                            f"at position {start} of {total}")
        pager.add(total, entries, pubmed_to_record)
        start += size
    return pager.outcome(trace)
