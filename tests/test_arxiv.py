"""arXiv client on real recorded Atom feeds (arxiv.py test fixtures of export.arxiv.org)."""

from __future__ import annotations

import httpx
from conftest import FIXTURES
from http_mocks import Call, fetcher
from lxml import etree

from sitegen.records.model import StatedVersion
from sitegen.sources import arxiv
from sitegen.sources.base import parse_xml
from sitegen.sources.settings import SourceSettings

DIR = FIXTURES / "arxiv"
SETTINGS = SourceSettings(contact_email="team@example.org")
PAGE_0 = (DIR / "q_testing_s0_m10_bc5a6c384fe9.atom.xml").read_bytes()
PAGE_10 = (DIR / "q_testing_s10_m10_34e56e15aaac.atom.xml").read_bytes()
ONE = (DIR / "id_1605.08386_s0_m100_199195aa31ad.atom.xml").read_bytes()
TWO_ASKED = (DIR / "id_0808.05394_1707.08567_s0_m100_42e5aa0ec3af.atom.xml").read_bytes()
NONE = (DIR / "id_0000.0000_s0_m100_8b51d9633a68.atom.xml").read_bytes()
ERROR = (DIR / "id_abc_s0_m100_b79c8dcf6bc3.atom.xml").read_bytes()
ATOM = "application/atom+xml"


def atom(body: bytes, status: int = 200) -> httpx.Response:
    return httpx.Response(status, content=body, headers={"content-type": ATOM})


def edited(body: bytes, total: int | None = None, keep: int | None = None) -> bytes:
    """A real feed with opensearch:totalResults set to `total` and only its first `keep` entries."""
    feed = parse_xml(body)
    if total is not None:
        feed.find("opensearch:totalResults", arxiv.NS).text = str(total)
    for entry in feed.findall("atom:entry", arxiv.NS)[keep:] if keep is not None else []:
        feed.remove(entry)
    return etree.tostring(feed, xml_declaration=True, encoding="UTF-8")


def entries(body: bytes) -> list[etree._Element]:
    return parse_xml(body).findall("atom:entry", arxiv.NS)


FAULT_CALLS = {
    # the real first page of "testing", its totalResults set to the 10 entries it holds (built: no small real result)
    "arxiv-search": Call(arxiv, lambda f: arxiv.search(f, SETTINGS, "all:testing"), edited(PAGE_0, total=10), ATOM),
    "arxiv-lookup": Call(arxiv, lambda f: arxiv.lookup(f, SETTINGS, "1605.08386"), ONE, ATOM),
}


def pages(request: httpx.Request) -> httpx.Response:
    return atom({"0": PAGE_0, "10": PAGE_10}[request.url.params["start"]])


def test_search_pages_by_start_three_seconds_apart():
    fetch, seen, time = fetcher(pages)
    outcome = arxiv.search(fetch, SETTINGS.model_copy(update={"max_records": 20}), "all:testing", page_size=10)
    assert outcome.status == "ok" and outcome.total == 214881 and len(outcome.records) == 20
    assert [dict(r.url.params) for r in seen.requests] == [
        {"search_query": "all:testing", "start": start, "max_results": "10", "sortBy": "submittedDate",
         "sortOrder": "ascending"} for start in ("0", "10")]
    assert time.sleeps == [3.0]  # arXiv asks for one request every three seconds
    assert outcome.warnings == ["arXiv reported 214881 matches: only the first 20 of 214881 were read; "
                                "raise SITEGEN_MAX_RECORDS (now 20) or narrow the query to read them all"]
    assert outcome.truncated and not outcome.complete
    assert len(outcome.executed_query) == 2 and outcome.executed_query[1].startswith(
        "GET https://export.arxiv.org/api/query?search_query=all%3Atesting&start=10&max_results=10")
    assert len({r.custom.arxiv for r in outcome.records}) == 20
    assert all("example.org" not in request for request in outcome.executed_query)  # no contact is sent to arXiv
    assert "team" not in str(seen.requests[0].url) and "mailto" not in seen.requests[0].url.params


def test_since_wraps_the_native_query():
    fetch, seen, _ = fetcher(lambda request: atom(NONE))
    outcome = arxiv.search(fetch, SETTINGS, "ti:crispr OR abs:crispr", since=2020)
    assert outcome.status == "ok"
    assert seen.requests[0].url.params["search_query"] == (
        "(ti:crispr OR abs:crispr) AND submittedDate:[202001010000 TO 300012312359]")


def test_the_last_page_asks_only_for_what_is_left():
    fetch, seen, _ = fetcher(pages)
    outcome = arxiv.search(fetch, SETTINGS.model_copy(update={"max_records": 15}), "all:testing", page_size=10)
    assert outcome.status == "ok" and len(outcome.records) == 15
    assert [r.url.params["max_results"] for r in seen.requests] == ["10", "5"]


def test_a_short_page_before_the_end_is_an_outage():
    short = edited(PAGE_10, keep=5)  # the real second page with half of its entries gone
    answers = {"0": PAGE_0, "10": short}
    fetch, _, _ = fetcher(lambda request: atom(answers[request.url.params["start"]]))
    outcome = arxiv.search(fetch, SETTINGS.model_copy(update={"max_records": 20}), "all:testing", page_size=10)
    assert outcome.status == "unavailable" and outcome.records == []
    assert "reported 214881 matches but returned 15 of the first 20" in outcome.warnings[0]


def test_a_feed_promising_more_than_it_holds_is_an_outage():
    fetch, _, _ = fetcher(lambda request: atom(edited(PAGE_0, total=12)))
    outcome = arxiv.search(fetch, SETTINGS, "all:testing")
    assert outcome.status == "unavailable" and "reported 12 matches but returned 10" in outcome.warnings[0]


def test_empty_result_is_ok_with_zero():
    fetch, seen, _ = fetcher(lambda request: atom(NONE))  # a real feed with totalResults 0 and no entries
    outcome = arxiv.search(fetch, SETTINGS, "ti:nothingmatchesthis")
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0
    assert len(seen.requests) == 1


def test_error_entry_in_a_search_is_unsupported():
    fetch, _, _ = fetcher(lambda request: atom(ERROR))  # arXiv's error feed, served with HTTP 200
    outcome = arxiv.search(fetch, SETTINGS, "all:testing")
    assert outcome.status == "unsupported" and outcome.records == []
    assert outcome.warnings == ["arXiv cannot run this query: incorrect id format for abc"]


def test_lookup_of_a_real_paper():
    fetch, seen, _ = fetcher(lambda request: atom(ONE))
    outcome = arxiv.lookup(fetch, SETTINGS, "arXiv:1605.08386v1")
    assert outcome.status == "ok" and outcome.total == 1
    assert dict(seen.requests[0].url.params) == {"id_list": "1605.08386"}
    [record] = outcome.records
    assert record.id == "arxiv:1605.08386" and record.custom.arxiv == "1605.08386" and record.DOI is None
    assert record.title == "Heat-bath random walks with Markov bases"
    assert [(a.family, a.given) for a in record.author] == [("Stanley", "Caprice"), ("Windisch", "Tobias")]
    assert record.issued.date_parts == [[2016, 5, 26]] and record.container_title is None
    assert record.abstract.startswith("Graphs on lattice points are studied") and "\n" not in record.abstract
    assert record.type == "article" and record.URL == "https://arxiv.org/abs/1605.08386"
    assert record.custom.fulltext_url == "https://arxiv.org/pdf/1605.08386v1"
    assert record.custom.open_access is True and record.custom.license is None
    assert record.custom.sources == ["arxiv"] and record.custom.publication_types == ["preprint"]


def test_lookup_when_arxiv_drops_an_unknown_id_from_the_list():
    fetch, _, _ = fetcher(lambda request: atom(TWO_ASKED))  # asked for 0808.05394 and 1707.08567; one came back
    outcome = arxiv.lookup(fetch, SETTINGS, "1707.08567")
    assert outcome.status == "ok" and [r.id for r in outcome.records] == ["arxiv:1707.08567"]
    assert len(outcome.records[0].author) == 34 and outcome.records[0].author[-2].display() == "Wübben, Dirk"


def test_lookup_of_a_nonexistent_id_is_empty_not_an_outage():
    fetch, seen, _ = fetcher(lambda request: atom(NONE))
    outcome = arxiv.lookup(fetch, SETTINGS, "0000.0000")
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0
    assert seen.requests[0].url.params["id_list"] == "0000.0000"


def test_lookup_of_a_malformed_id_is_unsupported():
    fetch, seen, _ = fetcher(lambda request: atom(ERROR, status=400))  # as recorded: HTTP 400 with the error feed
    outcome = arxiv.lookup(fetch, SETTINGS, "abc")
    assert outcome.status == "unsupported" and outcome.records == []
    assert outcome.warnings == ["arXiv cannot run this query: incorrect id format for abc"]
    assert seen.requests[0].url.params["id_list"] == "abc"


def test_a_400_without_an_error_feed_is_still_unsupported():
    fetch, _, _ = fetcher(lambda request: httpx.Response(400, text="Bad Request"))
    outcome = arxiv.lookup(fetch, SETTINGS, "1605.08386")
    assert outcome.status == "unsupported" and "HTTP 400" in outcome.warnings[0]


def test_lookup_answered_with_another_record_is_kept_apart():
    # An answer (the same on every run), never the paper asked for: kept apart, named, for a caller to judge.
    fetch, _, _ = fetcher(lambda request: atom(ONE))
    outcome = arxiv.lookup(fetch, SETTINGS, "2202.12139")
    assert outcome.status == "ok" and outcome.records == [] and not outcome.complete
    assert "arXiv answers 2202.12139 with another work, arxiv:1605.08386" in outcome.doubt
    assert outcome.instead.custom.arxiv == "1605.08386"


def test_published_version_doi_and_journal_ref():
    first = entries(PAGE_0)[0]
    assert first.find("arxiv:doi", arxiv.NS).text == "10.1109/ICSTW55395.2022.00035"
    record = arxiv.entry_to_record(first)
    # The DOI arXiv lists is the journal version's, another record of the study: the preprint keeps its own id,
    # so the journal article a later search finds is linked as its version, never merged into it.
    assert record.id == "arxiv:2202.12139" and record.DOI is None
    assert record.custom.arxiv == "2202.12139" and record.URL == "https://arxiv.org/abs/2202.12139"
    assert record.container_title.startswith("Artificial Intelligence in Software Testing @ 2022 IEEE")
    assert record.type == "article" and record.custom.publication_types == ["preprint"]
    journal_only = arxiv.entry_to_record(entries(PAGE_0)[5])  # 1202.4527: a journal_ref and no DOI
    assert journal_only.id == "arxiv:1202.4527" and journal_only.DOI is None
    assert journal_only.container_title == ("International Journal of Software Engineering & Applications (IJSEA), "
                                            "Vol.3, No.1, January 2012")
    assert arxiv.entry_to_record(entries(PAGE_10)[8]).id == "arxiv:" + entries(PAGE_10)[8].find(
        "atom:id", arxiv.NS).text.rsplit("/", 1)[1].split("v")[0]


def test_whitespace_is_collapsed_in_titles_and_summaries():
    entry = entries(ONE)[0]
    entry.find("atom:title", arxiv.NS).text = "Heat-bath random walks\n  with Markov bases "
    record = arxiv.entry_to_record(entry)
    assert record.title == "Heat-bath random walks with Markov bases"


def test_a_paper_titled_error_is_a_paper():
    entry = entries(ONE)[0]
    entry.find("atom:title", arxiv.NS).text = "Error"
    assert arxiv.error_message(entry) is None and arxiv.entry_to_record(entry).title == "Error"
    assert arxiv.error_message(entries(ERROR)[0]) == "incorrect id format for abc"
    assert arxiv.entry_to_record(entries(ERROR)[0]) is None


# --------------------------------------------------------------------------- paging and hostile data


def test_an_empty_second_feed_reporting_zero_is_an_outage():
    # built: the real first page says 20 matches; the second page is the real empty feed (totalResults 0)
    answers = {"0": edited(PAGE_0, total=20), "10": NONE}
    fetch, seen, _ = fetcher(lambda request: atom(answers[request.url.params["start"]]))
    outcome = arxiv.search(fetch, SETTINGS, "all:testing", page_size=10)
    assert outcome.status == "unavailable" and outcome.records == []
    assert "the count changed between pages (20, then 0)" in outcome.warnings[0]
    assert len(seen.requests) == 2


def test_repeated_identical_pages_cannot_reach_the_count():
    # built: arXiv answering every start with the same real first page
    fetch, seen, _ = fetcher(lambda request: atom(PAGE_0))
    outcome = arxiv.search(fetch, SETTINGS.model_copy(update={"max_records": 40}), "all:testing", page_size=10)
    assert outcome.status == "unavailable" and outcome.records == []
    assert len(seen.requests) == 2
    assert "reported 214881 matches but returned 10 of the first 40" in outcome.warnings[0]


def test_the_arxiv_ceiling_truncates_and_says_to_narrow_the_query(monkeypatch):
    monkeypatch.setattr(arxiv, "MAX_RESULTS", 10)  # arXiv's own 30,000, scaled down to the real first page
    fetch, _, _ = fetcher(lambda request: atom(PAGE_0))
    outcome = arxiv.search(fetch, SETTINGS, "all:testing", page_size=10)
    assert outcome.status == "ok" and outcome.truncated and not outcome.complete and len(outcome.records) == 10
    [warning] = outcome.warnings
    assert "only the first 10 of 214881 were read" in warning and "narrow the query" in warning
    assert "SITEGEN_MAX_RECORDS" not in warning  # raising it would not help


def test_a_total_in_other_digits_is_an_outage_not_a_crash():
    body = PAGE_0.replace(b"totalResults>214881<", "totalResults>²<".encode())
    assert body != PAGE_0
    fetch, _, _ = fetcher(lambda request: atom(body))
    outcome = arxiv.search(fetch, SETTINGS, "all:testing")
    assert outcome.status == "unavailable" and "totalResults" in outcome.warnings[0]


def test_a_published_date_in_other_digits_is_no_date():
    entry = entries(ONE)[0]
    entry.find("atom:published", arxiv.NS).text = "2020-²"
    assert arxiv.entry_to_record(entry).issued.date_parts == [[2020]]
    entry.find("atom:published", arxiv.NS).text = "²⁰²⁰"
    assert arxiv.entry_to_record(entry).issued is None


def test_a_withdrawn_paper_is_marked_retracted_not_read_as_a_study():
    # arXiv replaces a withdrawn paper's abstract with the notice; it was kept as a study like any other.
    import copy

    entry = copy.deepcopy(entries(ONE)[0])
    assert arxiv.entry_to_record(entry).custom.retracted is False
    entry.find("atom:summary", arxiv.NS).text = "This paper has been withdrawn by the author due to a crucial error."
    assert arxiv.entry_to_record(entry).custom.retracted is True
    entry = copy.deepcopy(entries(ONE)[0])
    comment = entry.find("arxiv:comment", arxiv.NS)
    if comment is None:
        comment = etree.SubElement(entry, f"{{{arxiv.NS['arxiv']}}}comment")
    comment.text = "Withdrawn by arXiv administrators: duplicate submission"
    assert arxiv.entry_to_record(entry).custom.retracted is True
    comment.text = "We study withdrawn drugs; 12 pages"  # the word in a comment is no withdrawal
    assert arxiv.entry_to_record(entry).custom.retracted is False


def test_a_withdrawal_written_without_this_paper_is_one():
    import copy

    entry = copy.deepcopy(entries(ONE)[0])
    entry.find("atom:summary", arxiv.NS).text = "Paper withdrawn by the author."
    assert arxiv.entry_to_record(entry).custom.retracted is True


def test_the_published_version_arxiv_names_is_kept_as_another_version():
    """`arxiv:doi` names the journal version: kept on the preprint as another version of it (the review links the
    journal article by it, whatever it is titled), never as the preprint's own DOI. Several DOIs are each one."""
    first = entries(PAGE_0)[0]
    assert arxiv.entry_to_record(first).custom.stated_versions == [StatedVersion(doi="10.1109/icstw55395.2022.00035")]
    assert arxiv.entry_to_record(entries(PAGE_0)[5]).custom.stated_versions == []  # 1202.4527 names no DOI
    first.find("arxiv:doi", arxiv.NS).text = "10.1109/ICSTW55395.2022.00035 10.48550/arXiv.2202.12139 10.1000/other"
    assert arxiv.entry_to_record(first).custom.stated_versions == [
        StatedVersion(doi="10.1109/icstw55395.2022.00035"), StatedVersion(doi="10.1000/other")]
