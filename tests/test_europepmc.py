"""Europe PMC client on real recorded responses (pyEuropePMC search fixtures, PMC JATS full texts)."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

import httpx
import pytest
from conftest import FIXTURES
from http_mocks import Call, fetcher, json_response

from sitegen.records.names import split_name
from sitegen.sources import europepmc
from sitegen.sources.jats import read_article
from sitegen.sources.settings import SourceSettings

DIR = FIXTURES / "europepmc"
# Every credential sitegen knows of: none of them may ever reach EBI.
SETTINGS = SourceSettings(contact_email="team@example.org", openalex_api_key="oa-secret-key",
                          ncbi_api_key="ncbi-secret-key", crossref_plus_token="crossref-secret-token")
SECRETS = ("team@example.org", "oa-secret-key", "ncbi-secret-key", "crossref-secret-token")
CORE = (DIR / "search_cancer_core.json").read_bytes()
CORE_PAGE = json.loads(CORE)
RESULTS = CORE_PAGE["resultList"]["result"]
NO_RESULTS = (DIR / "search_no_results.json").read_bytes()
FIRST_DOI = "10.1016/s0140-6736(24)02600-x"


def by_id(pmid: str) -> dict:
    return next(r for r in RESULTS if r["id"] == pmid)


def page_body(results: list[dict], hit_count: int, next_cursor: str | None = None) -> bytes:
    """A search page in the real envelope (version, request echo) around real results; built, not recorded."""
    page = {key: value for key, value in CORE_PAGE.items() if key not in ("nextCursorMark", "nextPageUrl")}
    page.update(hitCount=hit_count, resultList={"result": results})
    if next_cursor is not None:
        page["nextCursorMark"] = next_cursor
    return json.dumps(page).encode()


# No small complete result set is recorded: these good bodies are the 25 real core results (or the
# first of them) with hitCount set to what they hold. The search body keeps the real nextCursorMark,
# so a complete read must stop on hitCount rather than ask for a page that does not exist.
GOOD_SEARCH = page_body(RESULTS, len(RESULTS), CORE_PAGE["nextCursorMark"])
GOOD_LOOKUP = page_body(RESULTS[:1], 1)

FAULT_CALLS = {
    "europepmc-search": Call(europepmc, lambda f: europepmc.search(f, SETTINGS, "cancer"), GOOD_SEARCH,
                             "application/json"),
    "europepmc-lookup": Call(europepmc, lambda f: europepmc.lookup(f, SETTINGS, FIRST_DOI), GOOD_LOOKUP,
                             "application/json"),
}


def params(request: httpx.Request) -> dict[str, str]:
    return dict(parse_qsl(request.url.query.decode()))


def assert_no_credentials(outcome, requests: list[httpx.Request]) -> None:
    sent = " ".join([*outcome.executed_query, *(str(r.url) for r in requests),
                     *(f"{k}: {v}" for r in requests for k, v in r.headers.items())])
    assert not any(secret in sent for secret in SECRETS)


# --------------------------------------------------------------------------- search


def test_search_parses_the_real_core_page():
    fetch, seen, _ = fetcher(lambda request: json_response(CORE))
    # max_records equal to the page: the 5 million hits are a limit reached, not a short body
    outcome = europepmc.search(fetch, SourceSettings(max_records=25), "cancer")
    assert outcome.status == "ok" and outcome.total == 5059039
    assert len(outcome.records) == 25 and len(seen.requests) == 1
    assert outcome.warnings == ["Europe PMC reported 5059039 matches: only the first 25 of 5059039 were read; "
                                "raise SITEGEN_MAX_RECORDS (now 25) or narrow the query to read them all"]
    assert outcome.truncated and not outcome.complete
    assert params(seen.requests[0]) == {"query": "cancer", "resultType": "core", "format": "json",
                                        "pageSize": "25", "cursorMark": "*"}
    assert outcome.executed_query == ["GET https://www.ebi.ac.uk/europepmc/webservices/rest/search?query=cancer"
                                      "&resultType=core&format=json&pageSize=25&cursorMark=%2A"]
    assert_no_credentials(outcome, seen.requests)

    records = {r.PMID: r for r in outcome.records}
    first = records["39709209"]
    assert first.id == FIRST_DOI and first.URL == f"https://doi.org/{FIRST_DOI}"
    assert [(a.family, a.given) for a in first.author] == [("Schoenfeld", "Jonathan D"), ("Haas-Kogan", "Daphne A"),
                                                           ("O'Neill", "Allison F")]
    assert (first.container_title, first.volume, first.issue, first.page) == ("Lancet (London, England)", "404",
                                                                              "10471", "2603-2604")
    # "2025 Dec" in print, which Europe PMC writes 2025-12-01: the day was never given
    assert first.issued.date_parts == [[2025, 12]] and first.type == "article-journal"
    # a day an electronic date gives is kept, the 1st too
    assert records["40464630"].issued.date_parts == [[2025, 8, 22]]
    assert records["40245290"].issued.date_parts == [[2025, 7, 1]]
    assert first.custom.sources == ["europepmc"] and first.custom.open_access is False
    assert first.custom.fulltext_url is None  # only a subscription link

    # abstracts arrive as HTML with <h4> headings and a bare "<" in "p < .001"
    abstract = records["40468710"].abstract
    # each heading the label of its section, as PubMed and Crossref give a structured abstract
    assert abstract.startswith("Objective: This study investigated") and "<" not in abstract.replace("p < .001", "")
    assert "cancer. Design: This was" in abstract
    assert "(n = 10)" in records["40518973"].abstract  # <i>n</i>
    assert "Hydrogen sulfide (H2S)" in records["40511629"].abstract  # H<sub>2</sub>S
    assert "median overall survival of <1 year. Conclusions" in records["40245290"].abstract

    open_access = records["40437959"]
    assert open_access.PMCID == "PMC12120539" and open_access.custom.open_access is True
    assert open_access.custom.license == "cc by-nc-nd"
    assert open_access.custom.fulltext_url == "https://europepmc.org/articles/PMC12120539"
    assert open_access.custom.publication_types == ["research-article", "Journal Article"]
    # a licence without any open copy is still the record's licence
    assert records["40468710"].custom.license == "cc by" and records["40468710"].custom.fulltext_url is None

    erratum = records["39709208"]
    assert erratum.custom.publication_types == ["Published Erratum", "correction"]
    assert erratum.custom.fulltext_url == "https://europepmc.org/articles/PMC12124214"  # "Free", HTML before PDF
    assert not erratum.author and erratum.custom.retracted is False

    no_doi = records["39038316"]  # the one real result without a DOI
    assert no_doi.id == "pmid:39038316" and no_doi.URL == "https://europepmc.org/article/MED/39038316"


def test_a_limit_larger_than_the_body_is_an_outage():
    # the second page is built: the real envelope and hitCount with an empty resultList
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params["cursorMark"] == "*":
            return json_response(CORE)
        return json_response(page_body([], 5059039, "next"))
    fetch, seen, _ = fetcher(handler)
    outcome = europepmc.search(fetch, SourceSettings(max_records=100), "cancer")
    assert outcome.status == "unavailable" and outcome.records == []
    assert "reported 5059039 matches but returned 25" in outcome.warnings[0]
    assert [r.url.params["cursorMark"] for r in seen.requests] == ["*", CORE_PAGE["nextCursorMark"]]


def test_a_short_page_without_a_cursor_is_an_outage():
    fetch, _, _ = fetcher(lambda request: json_response(page_body(RESULTS[:10], 25)))
    outcome = europepmc.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "unavailable"
    assert "reported 25 matches but returned 10" in outcome.warnings[0]


def core_pages(per_page: int):
    """Cursor paging built from the 25 real core results (no real second core page is recorded)."""
    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params["cursorMark"]
        start = 0 if cursor == "*" else int(cursor.removeprefix("after-"))
        following = f"after-{start + per_page}" if start + per_page < len(RESULTS) else cursor
        return json_response(page_body(RESULTS[start:start + per_page], len(RESULTS), following))
    return handler


def test_cursor_paging_reads_both_pages_and_filters_by_year():
    fetch, seen, _ = fetcher(core_pages(15))
    outcome = europepmc.search(fetch, SETTINGS, "cancer OR tumour", since=2020, page_size=15)
    assert outcome.status == "ok" and outcome.total == 25 and outcome.warnings == []
    assert [r.PMID for r in outcome.records] == [r["pmid"] for r in RESULTS]
    assert [r.url.params["cursorMark"] for r in seen.requests] == ["*", "after-15"]
    assert {r.url.params["query"] for r in seen.requests} == {"(cancer OR tumour) AND FIRST_PDATE:[2020-01-01 TO 3000-12-31]"}
    assert {r.url.params["pageSize"] for r in seen.requests} == {"15"}
    assert len(outcome.executed_query) == 2 and "FIRST_PDATE" in outcome.executed_query[0]
    assert_no_credentials(outcome, seen.requests)


def test_paging_stops_when_the_cursor_repeats():
    # built: the second page hands back the cursor it was asked with while hitCount promises more
    def handler(request: httpx.Request) -> httpx.Response:
        second = request.url.params["cursorMark"] != "*"
        return json_response(page_body(RESULTS[10:20] if second else RESULTS[:10], 25, "stuck"))
    fetch, seen, _ = fetcher(handler)
    outcome = europepmc.search(fetch, SETTINGS, "cancer", page_size=10)
    assert len(seen.requests) == 2
    assert outcome.status == "unavailable" and "reported 25 matches but returned 20" in outcome.warnings[0]


def test_the_real_empty_result_is_ok_with_zero():
    fetch, seen, _ = fetcher(lambda request: json_response(NO_RESULTS))
    outcome = europepmc.search(fetch, SETTINGS, "asdkfjhasdkfjhasdfasdasdasdfgsagsd")
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0 and outcome.warnings == []
    assert len(seen.requests) == 1


def test_search_404_is_an_outage_and_400_unsupported():
    fetch, _, _ = fetcher(lambda request: httpx.Response(404, text="not found"))
    assert europepmc.search(fetch, SETTINGS, "cancer").status == "unavailable"
    fetch, _, _ = fetcher(lambda request: httpx.Response(400, json={"message": "Syntax error in query"}))
    outcome = europepmc.search(fetch, SETTINGS, "cancer AND (")
    assert outcome.status == "unsupported" and "Syntax error in query" in outcome.warnings[0]


def test_an_error_message_inside_a_200_is_an_outage():
    body = json.dumps({"version": "6.9", "hitCount": 0, "errMsg": "Search service temporarily unavailable"})
    fetch, _, _ = fetcher(lambda request: json_response(body))
    outcome = europepmc.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "unavailable" and "unusable response" in outcome.warnings[0]


def test_results_without_an_identifier_are_skipped_and_counted():
    # no real preprint is recorded: a PPR-only result built from a real one, with its identifiers removed
    preprint = {key: value for key, value in RESULTS[0].items() if key not in ("pmid", "doi", "pmcid", "journalInfo")}
    preprint.update(id="PPR123456", source="PPR")
    fetch, _, _ = fetcher(lambda request: json_response(page_body([RESULTS[0], preprint], 2)))
    outcome = europepmc.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "ok" and [r.id for r in outcome.records] == [FIRST_DOI]
    assert "1 Europe PMC result had no DOI, PMID or PMCID" in outcome.warnings[0]


# --------------------------------------------------------------------------- records


def test_preprint_type_and_server():
    # built from a real result: Europe PMC gives preprints source PPR and the server as bookOrReportDetails.publisher
    preprint = {key: value for key, value in RESULTS[2].items() if key not in ("pmid", "journalInfo")}
    preprint.update(id="PPR123456", source="PPR", doi="10.1101/2025.01.01.123456",
                    bookOrReportDetails={"publisher": "bioRxiv", "yearOfPublication": 2025})
    record = europepmc.result_to_record(preprint)
    assert record.type == "article" and record.container_title == "bioRxiv" and record.id == "10.1101/2025.01.01.123456"


def test_retracted_publication_is_flagged_but_a_retraction_notice_is_not():
    # no real retracted record is recorded: the publication type is set on a real result
    retracted = europepmc.result_to_record(dict(RESULTS[0], pubTypeList={"pubType": ["Retracted Publication",
                                                                                     "Journal Article"]}))
    assert retracted.custom.retracted is True
    notice = europepmc.result_to_record(dict(RESULTS[0], pubTypeList={"pubType": ["Retraction of Publication"]}))
    assert notice.custom.retracted is False and notice.custom.publication_types == ["Retraction of Publication"]


def test_names_title_markup_and_fallback_urls():
    # built from a real result: a consortium author, an author known only by fullName, markup in the title
    result = dict(by_id("40437959"), title="Effects of <i>TP53</i> loss", doi=None,
                  authorList={"author": [{"collectiveName": "CRUK Consortium"}, {"fullName": "Kwok C"},
                                         {"lastName": "Xu"}]})
    record = europepmc.result_to_record(result)
    assert record.title == "Effects of TP53 loss"
    assert [a.display() for a in record.author] == ["CRUK Consortium", "Kwok, C", "Xu"]  # "Kwok C" split
    assert record.id == "pmid:40437959" and record.URL == "https://europepmc.org/article/MED/40437959"
    only_pmc = dict(result, pmid=None, id="PMC12120539", source="PMC")
    assert europepmc.result_to_record(only_pmc).URL == "https://europepmc.org/article/PMC/PMC12120539"
    assert europepmc.result_to_record(dict(result, pmid=None, pmcid=None, id="PPR1", source="PPR")) is None


# --------------------------------------------------------------------------- lookup


@pytest.mark.parametrize(("identifier", "result", "query"), [
    ("https://doi.org/10.1016/S0140-6736(24)02600-X", "39709209", 'DOI:"10.1016/s0140-6736(24)02600-x"'),
    ("39709209", "39709209", "EXT_ID:39709209 AND SRC:MED"),
    ("PMC12120539", "40437959", "PMCID:PMC12120539"),
])
def test_lookup_finds_the_record(identifier, result, query):
    fetch, seen, _ = fetcher(lambda request: json_response(page_body([by_id(result)], 1)))
    outcome = europepmc.lookup(fetch, SETTINGS, identifier)
    assert outcome.status == "ok" and outcome.total == 1
    assert [r.PMID for r in outcome.records] == [result]
    assert seen.requests[0].url.params["query"] == query
    assert_no_credentials(outcome, seen.requests)


def test_lookup_with_no_hit_is_empty_not_an_outage():
    fetch, _, _ = fetcher(lambda request: json_response(NO_RESULTS))
    outcome = europepmc.lookup(fetch, SETTINGS, "10.1046/j.1365-2699.2003.00795")
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0


def test_lookup_answered_with_another_record_is_kept_apart():
    # An answer (the same on every run), never the work asked for: kept apart, named, for a caller to judge.
    fetch, _, _ = fetcher(lambda request: json_response(GOOD_LOOKUP))
    outcome = europepmc.lookup(fetch, SETTINGS, "10.1002/hpja.70059")
    assert outcome.status == "ok" and outcome.records == [] and not outcome.complete
    assert f"Europe PMC answers 10.1002/hpja.70059 with another work, {FIRST_DOI}" in outcome.doubt
    assert outcome.instead.id == FIRST_DOI


def test_lookup_that_cannot_be_phrased_sends_nothing():
    fetch, seen, _ = fetcher(lambda request: json_response(GOOD_LOOKUP))
    outcome = europepmc.lookup(fetch, SETTINGS, '10.1000/a"b')
    assert outcome.status == "unsupported" and seen.requests == []
    with pytest.raises(ValueError):
        europepmc.lookup(fetch, SETTINGS, "not an identifier")


# --------------------------------------------------------------------------- full text


LICENCES = [  # (file, PMCID, the licence URL the gate reads, whether sitegen may quote it)
    ("10_3389_fimmu_2025_1706172.xml", "PMC12535959", "https://creativecommons.org/licenses/by/4.0/", True),  # ali
    ("PMC12634591.xml", "PMC12634591", "https://creativecommons.org/licenses/by/4.0/", True),  # ali:license_ref
    ("10_1136_jitc-2024-010530.xml", "PMC12458764", "https://creativecommons.org/licenses/by-nc/4.0/", False),
    ("1472-6831-8-11.nxml", "PMC2329613", "http://creativecommons.org/licenses/by/2.0", True),  # xlink:href
    ("PMC3258128.xml", "PMC3258128", "http://creativecommons.org/licenses/by-nc/3.0", False),  # xlink:href
    ("pntd.0002065.nxml", "PMC3585041", None, False),  # license-p wording, no URL
]


def xml_response(body: bytes, status: int = 200) -> httpx.Response:
    return httpx.Response(status, content=body, headers={"content-type": "application/xml"})


@pytest.mark.parametrize(("name", "pmcid", "url", "quotable"), LICENCES)
def test_fulltext_licence_of_each_real_article(name, pmcid, url, quotable):
    fetch, seen, _ = fetcher(lambda request: xml_response((DIR / name).read_bytes()))
    text = europepmc.fulltext(fetch, SETTINGS, pmcid)
    assert text.status == "ok" and text.pmcid == pmcid and text.licence_url == url and text.licence
    assert text.readable == quotable == bool(text.paragraphs) and text.title
    assert seen.requests[0].url.path == f"/europepmc/webservices/rest/{pmcid}/fullTextXML"
    assert text.executed_query == [f"GET https://www.ebi.ac.uk/europepmc/webservices/rest/{pmcid}/fullTextXML"]
    assert_no_credentials(text, seen.requests)


def test_fulltext_paragraphs_carry_their_section_titles():
    # the walk, apart from the licence gate (this article is CC BY-NC, so fulltext() gives no paragraphs)
    found, truncated = europepmc.paragraphs(read_article((DIR / "PMC3258128.xml").read_bytes()))
    assert found[0].section == "Abstract" and not truncated
    first = next(p for p in found if p.section != "Abstract")
    assert first.section == "INTRODUCTION"
    assert first.text.startswith("MicroRNAs (miRNAs) are small conserved RNAs of ∼22 nt")
    sections = [p.section for p in found]
    assert "MATERIALS AND METHODS › Cell lines and cultures" in sections  # a subsection under its parent's title
    assert "MATERIALS AND METHODS" not in sections  # it holds only subsections
    assert all("  " not in p.text and p.text == p.text.strip() for p in found)
    # an editorial without sections: paragraphs with no section title
    fetch, _, _ = fetcher(lambda request: xml_response((DIR / "10_3389_fimmu_2025_1706172.xml").read_bytes()))
    editorial = europepmc.fulltext(fetch, SETTINGS, "PMC12535959")
    assert len(editorial.paragraphs) == 9 and {p.section for p in editorial.paragraphs} == {None}


NGINX_404 = b"<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center></body></html>"


def full_text_404(search: httpx.Response, page: bytes = b""):
    """Europe PMC answering 404 (with `page`) for a full text, and `search` to its search."""
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/fullTextXML"):
            return httpx.Response(404, content=page, headers={"content-type": "text/html" if page else "application/xml"})
        assert params(request)["query"].startswith("PMCID:PMC"), request.url
        return search
    return fetcher(handler)[0]


@pytest.mark.parametrize("page", [b"", NGINX_404], ids=["empty", "html"])
def test_a_full_text_404_is_no_full_text_only_for_an_article_europepmc_lists_without_one(page):
    # Europe PMC serves the full text of its open access subset only, and answers 404 for any other article; a
    # moved address or a proxy answers 404 too. Its search says which: PMC12124214 is free to read but not open
    # access, PMC12120539 open access with its text in Europe PMC (both real results).
    free = next(r for r in RESULTS if r.get("pmcid") == "PMC12124214")
    text = europepmc.fulltext(full_text_404(json_response(page_body([free], 1)), page), SETTINGS, "PMC12124214")
    assert text.status == "ok" and text.paragraphs == [] and text.licence is None
    assert text.warnings == ["Europe PMC has no full text for PMC12124214: it is not in Europe PMC's open access subset"]
    text = europepmc.fulltext(full_text_404(json_response(NO_RESULTS), page), SETTINGS, "PMC1")
    assert text.status == "ok" and text.warnings == ["Europe PMC has no full text for PMC1: Europe PMC's search knows "
                                                     "no article PMC1"]
    open_access = next(r for r in RESULTS if r.get("pmcid") == "PMC12120539")
    text = europepmc.fulltext(full_text_404(json_response(page_body([open_access], 1)), page), SETTINGS, "PMC12120539")
    assert text.status == "unavailable" and not text.complete and text.paragraphs == []
    assert "which its search lists as open access" in text.warnings[0] and "taken for an outage" in text.warnings[0]
    # a search that does not answer leaves the 404 unexplained: an outage, never "no full text"
    text = europepmc.fulltext(full_text_404(httpx.Response(503)), SETTINGS, "PMC12124214")
    assert text.status == "unavailable" and "no full text" not in " ".join(text.warnings)


def test_fulltext_of_another_article_is_refused():
    fetch, _, _ = fetcher(lambda request: xml_response((DIR / "PMC3258128.xml").read_bytes()))
    text = europepmc.fulltext(fetch, SETTINGS, "PMC1234567")
    assert text.status == "unavailable" and text.paragraphs == [] and text.title is None
    assert "different record" in text.warnings[0]


def test_fulltext_faults_are_typed():
    fetch, _, _ = fetcher(lambda request: httpx.Response(503))
    assert europepmc.fulltext(fetch, SETTINGS, "PMC3258128").status == "unavailable"
    fetch, _, _ = fetcher(lambda request: xml_response(b"<html>maintenance</html>"))
    text = europepmc.fulltext(fetch, SETTINGS, "PMC3258128")
    assert text.status == "unavailable" and "unusable response" in text.warnings[0]
    fetch, _, _ = fetcher(lambda request: httpx.Response(429, headers={"retry-after": "3600"}))
    text = europepmc.fulltext(fetch, SETTINGS, "PMC3258128")
    assert text.status == "rate_limited" and text.retry_after == 3600


# --------------------------------------------------------------------------- paging and hostile data


def test_a_hit_count_that_changes_between_pages_is_an_outage():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params["cursorMark"] == "*":
            return json_response(page_body(RESULTS[:10], 25, "c1"))
        return json_response(page_body(RESULTS[10:20], 30, "c2"))
    fetch, _, _ = fetcher(handler)
    outcome = europepmc.search(fetch, SETTINGS, "cancer", page_size=10)
    assert outcome.status == "unavailable" and outcome.records == []
    assert "the count changed between pages (25, then 30)" in outcome.warnings[0]


def test_repeated_identical_pages_end_paging_without_duplicates():
    # built: every cursor answers with the same ten real results and a fresh cursor, five million hits
    def handler(request: httpx.Request) -> httpx.Response:
        return json_response(page_body(RESULTS[:10], 5059039, f"next-{len(seen.requests)}"))
    fetch, seen, _ = fetcher(handler)
    outcome = europepmc.search(fetch, SourceSettings(max_records=100), "cancer", page_size=10)
    assert outcome.status == "unavailable" and outcome.records == []
    assert len(seen.requests) == 2
    assert "reported 5059039 matches but returned 10 of the first 100" in outcome.warnings[0]


def test_truncation_is_ok_but_not_complete():
    fetch, _, _ = fetcher(lambda request: json_response(CORE))
    outcome = europepmc.search(fetch, SourceSettings(max_records=25), "cancer")
    assert outcome.status == "ok" and outcome.truncated and not outcome.complete


def test_a_negative_hit_count_is_an_outage():
    fetch, _, _ = fetcher(lambda request: json_response(page_body(RESULTS[:1], -1)))
    outcome = europepmc.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "unavailable" and "-1" in outcome.warnings[0]


def test_lookup_with_a_zero_hit_count_still_checks_what_came_back():
    # built: hitCount 0, yet a result for another record is present
    fetch, _, _ = fetcher(lambda request: json_response(page_body(RESULTS[:1], 0)))
    outcome = europepmc.lookup(fetch, SETTINGS, "10.1002/hpja.70059")
    assert outcome.status == "unavailable" and outcome.records == []
    assert "reported 0 matches but sent 1 different item" in outcome.warnings[0]


def test_lookup_keeps_only_the_record_asked_for_and_says_so():
    fetch, _, _ = fetcher(lambda request: json_response(page_body(RESULTS[:2], 2)))
    outcome = europepmc.lookup(fetch, SETTINGS, FIRST_DOI)
    assert outcome.status == "ok" and [r.id for r in outcome.records] == [FIRST_DOI] and outcome.total == 1
    assert "is not the record asked for" in outcome.warnings[0]


HOSTILE_SHAPES = {"journalInfo": [{"volume": "1"}], "pubTypeList": ["Journal Article"], "authorList": [{"x": 1}],
                  "fullTextUrlList": [{"url": "https://x"}], "bookOrReportDetails": "x",
                  "firstPublicationDate": "2020-²", "pubYear": "²", "isOpenAccess": ["Y"], "pageInfo": 5}


def test_fields_of_the_wrong_type_are_absent_not_a_crash():
    record = europepmc.result_to_record(dict(RESULTS[0], **HOSTILE_SHAPES))
    # an author list of no authors: the author string names them
    assert record.id == FIRST_DOI and record.author == [split_name(name.strip()) for name in
                                                        RESULTS[0]["authorString"].removesuffix(".").split(",")]
    assert record.container_title is None
    assert record.volume is None and record.custom.publication_types == [] and record.custom.fulltext_url is None
    assert record.issued.date_parts == [[2020]] and record.custom.open_access is None and record.page is None
    undated = europepmc.result_to_record(dict(RESULTS[0], firstPublicationDate="²⁰²⁰", pubYear="٢٠٢٠"))
    assert undated.issued is None  # digits that are not ASCII are no date


def test_a_result_that_cannot_be_read_is_kept_out_and_the_run_incomplete():
    hostile = dict(RESULTS[1], **HOSTILE_SHAPES)
    too_long = dict(RESULTS[2], title="x " * 3000)  # over the record format's limit (an abstract is left out instead)
    fetch, _, _ = fetcher(lambda request: json_response(page_body([RESULTS[0], too_long, hostile, RESULTS[3]], 4)))
    outcome = europepmc.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "ok" and outcome.dropped == 1 and not outcome.complete
    assert [r.PMID for r in outcome.records] == [RESULTS[0]["pmid"], RESULTS[1]["pmid"], RESULTS[3]["pmid"]]
    assert outcome.warnings == ["1 Europe PMC result could not be read (invalid title): "
                                f"MED:{RESULTS[2]['id']}; it is missing from this run, which is therefore incomplete"]


def test_fulltext_without_a_pmcid_cannot_be_shown_to_be_the_article():
    body = (DIR / "PMC3258128.xml").read_bytes().replace(b'pub-id-type="pmcid"', b'pub-id-type="other"')
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    text = europepmc.fulltext(fetch, SETTINGS, "PMC3258128")
    assert text.status == "unavailable" and text.paragraphs == [] and text.title is None
    assert "names no PMCID" in text.warnings[0]


def test_an_author_named_by_initials_keeps_them_as_given_names():
    result = dict(RESULTS[0], authorList={"author": [{"fullName": "Strekas TC", "lastName": "Strekas",
                                                       "initials": "TC"}]})
    assert [(a.family, a.given) for a in europepmc.result_to_record(result).author] == [("Strekas", "TC")]


def test_nlms_placeholder_title_is_no_title():
    from sitegen.sources.base import Untitled

    with pytest.raises(Untitled):
        europepmc.result_to_record(dict(RESULTS[0], title="[Not Available]."))


def test_a_genereviews_entry_is_a_chapter_of_its_book():
    # A real core result (zwbao/zebra-mod, tests/fixtures/genereviews/f39_epmc_book_text.json, its first result): an
    # NCBI Bookshelf entry comes under source MED with the book's details and no journal, as PubMed has it a chapter.
    result = json.loads((DIR / "search_genereviews_chapter.json").read_bytes())["resultList"]["result"][0]
    record = europepmc.result_to_record(result)
    assert (record.type, record.title, record.container_title) == ("chapter", "Dystrophinopathies", "GeneReviews®")
    assert record.issued.date_parts == [[2026, 9, 10]]  # the entry's own date, not the book's 1993
    whole_book = dict(result, bookOrReportDetails={"publisher": "University of Washington, Seattle, Seattle (WA)"})
    assert europepmc.result_to_record(whole_book).type == "book"


def test_notices_linked_to_a_work_are_its_updates_and_a_retraction_retracts_it():
    from sitegen.records.model import Update

    # Real results: one carries Europe PMC's link from a notice to the work it is about ("Erratum for", which
    # is the notice's, not a notice against it); another is given the links PubMed lists as "... in".
    results = json.loads(CORE)["resultList"]["result"]
    erratum = next(r for r in results if r.get("commentCorrectionList"))
    record = europepmc.result_to_record(erratum)
    assert record.custom.updates == [] and not record.custom.retracted
    article = dict(results[0], commentCorrectionList={"commentCorrection": [
        {"id": "40000001", "source": "MED", "reference": "Lancet. 2026.", "type": "Retraction in", "orderIn": 1},
        {"id": "40000002", "source": "MED", "reference": "Lancet. 2026.", "type": "Erratum in", "orderIn": 2},
        {"id": "40000003", "source": "MED", "reference": "Lancet. 2026.", "type": "Comment in", "orderIn": 3}]})
    record = europepmc.result_to_record(article)
    assert [(u.kind, u.pmid) for u in record.custom.updates] == [("retraction", "40000001"), ("correction", "40000002")]
    assert record.custom.retracted
    replaced = dict(results[0], commentCorrectionList={"commentCorrection": {
        "id": "40000004", "source": "MED", "reference": "JAMA. 2026.", "type": "Retracted and republished in"}})
    record = europepmc.result_to_record(replaced)  # JAMA's "Notice of Retraction and Replacement"
    assert [(u.kind, u.pmid) for u in record.custom.updates] == [("retraction", "40000004")] and record.custom.retracted
    # the notice's DOI its citation names, as PubMed's "ErratumIn" for PMID 38147649 gives it (test_pubmed's ERRATUM_IN)
    erratum_in = dict(results[0], commentCorrectionList={"commentCorrection": {
        "id": "39705317", "source": "MED", "type": "Erratum in",
        "reference": "Proc Natl Acad Sci U S A. 2025 Jan 7;122(1):e2424381121. doi: 10.1073/pnas.2424381121."}})
    assert europepmc.result_to_record(erratum_in).custom.updates == [
        Update(kind="correction", doi="10.1073/pnas.2424381121", pmid="39705317")]


def test_a_notice_names_the_work_it_is_about_and_deduplication_marks_that_work():
    """The real "Department of Error." (PMID 39709208) is "Erratum for" PMID 39293462, whose citation holds its DOI:
    the work it corrects, which deduplication marks with it, met by PMID (PubMed's record of it) or by DOI. Europe
    PMC's "Retraction of" and "Expression of concern for" name theirs alike; a link naming no PMID or DOI, none."""
    from sitegen.records.identity import deduplicate
    from sitegen.records.model import CslName, NoticeOf, Record, RecordMeta, Update

    erratum = next(r for r in json.loads(CORE)["resultList"]["result"] if r.get("pmid") == "39709208")
    notice = europepmc.result_to_record(erratum)
    assert notice.custom.notice_of == [NoticeOf(kind="correction", doi="10.1016/s0140-6736(24)01653-2",
                                                pmid="39293462")]
    for identifiers in ({"PMID": "39293462"}, {"DOI": "10.1016/s0140-6736(24)01653-2"}):
        work = Record(id=f"pmid:{identifiers['PMID']}" if "PMID" in identifiers else identifiers["DOI"],
                      title="A trial", author=[CslName(literal="A. Author")], **identifiers,
                      custom=RecordMeta(sources=["pubmed"]))
        marked = next(r for r in deduplicate([work, notice]).records if r.id == work.id)
        assert marked.custom.updates == [Update(kind="correction", doi=notice.DOI, pmid="39709208")]
    links = [{"id": "40000001", "source": "MED", "reference": "Lancet. 2026.", "type": "Retraction of"},
             {"id": "40000002", "source": "MED", "reference": "Lancet. 2026.", "type": "Expression of concern for"},
             {"id": "PPR1", "source": "PPR", "reference": "Lancet. 2026.", "type": "Erratum for"},
             {"id": "40000003", "source": "MED", "reference": "Lancet. 2026.", "type": "Comment on"}]
    record = europepmc.result_to_record(dict(erratum, commentCorrectionList={"commentCorrection": links}))
    assert record.custom.notice_of == [NoticeOf(kind="retraction", pmid="40000001"),
                                       NoticeOf(kind="expression-of-concern", pmid="40000002")]


def test_a_page_over_the_byte_cap_is_asked_for_again_in_halves(monkeypatch):
    # A page of Europe PMC's maximum size (1,000 core results, ~10 kB each and far more for a paper with
    # thousands of authors) can pass the cap on a response: it was refused, and the search came out unavailable
    # on every run. A cursor marks where the next page starts whatever its size, so the same cursor is asked
    # for fewer. Built: the 25 real core results served by cursor in pages of the size asked for.
    monkeypatch.setattr(europepmc, "PROVIDER", europepmc.PROVIDER.__class__(
        **{**europepmc.PROVIDER.__dict__, "max_bytes": 100_000}))  # the real results fit ~8 to a page

    def handler(request: httpx.Request) -> httpx.Response:
        cursor, size = request.url.params["cursorMark"], int(request.url.params["pageSize"])
        start = 0 if cursor == "*" else int(cursor.removeprefix("after-"))
        return json_response(page_body(RESULTS[start:start + size], len(RESULTS), f"after-{start + size}"))

    fetch, seen, _ = fetcher(handler)
    outcome = europepmc.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "ok" and outcome.complete, outcome.warnings
    assert [r.PMID for r in outcome.records] == [r["pmid"] for r in RESULTS]
    assert int(seen.requests[-1].url.params["pageSize"]) < europepmc.MAX_PAGE_SIZE


def test_an_identifier_that_cannot_be_read_is_said_to_be_left_out():
    # A real result whose DOI holds a space (as a deposit's typo would): kept under its PMID, and said so, for
    # without its DOI it may go unmatched with its duplicate from another source.
    result = dict(RESULTS[0], doi="10.1016/s0140-6736(24) 02600-x")
    fetch, _, _ = fetcher(lambda request: json_response(page_body([result], 1)))
    outcome = europepmc.search(fetch, SETTINGS, "cancer")
    assert outcome.complete and [(r.id, r.DOI) for r in outcome.records] == [("pmid:39709209", None)]
    assert ("pmid:39709209: the DOI '10.1016/s0140-6736(24) 02600-x' sent for it could not be read; the record is "
            "kept without it") in outcome.warnings[0]
    fetch, _, _ = fetcher(lambda request: json_response(page_body(RESULTS[:1], 1)))  # as sent: nothing to say
    assert europepmc.search(fetch, SETTINGS, "cancer").warnings == []
