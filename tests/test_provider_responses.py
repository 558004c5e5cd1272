"""Response shapes real providers send that the recorded fixtures do not hold, each built as a small variant of a
real recorded response: every work is read whole, or the source's slice of the run is said to be incomplete."""

from __future__ import annotations

import copy
import json

import httpx
import pytest
from conftest import FIXTURES
from http_mocks import fetcher, json_response
from lxml import etree

from sitegen.sources import arxiv, crossref, europepmc, openalex, pubmed
from sitegen.sources.base import parse_xml
from sitegen.sources.settings import SourceSettings

SETTINGS = SourceSettings(contact_email="team@example.org")


def xml_response(body: bytes, content_type: str = "text/xml; charset=UTF-8") -> httpx.Response:
    return httpx.Response(200, content=body, headers={"content-type": content_type})


# --------------------------------------------------------------------------- items without the provider's own id


def crossref_page(drop_id: bool) -> bytes:
    """Crossref's real two-item page for "ecology", its total set to the two items, the second's DOI removed."""
    page = json.loads((FIXTURES / "crossref" / "crossref_works_query_ecology_rows2.json").read_bytes())
    page["message"]["total-results"] = 2
    if drop_id:
        del page["message"]["items"][1]["DOI"]
    return json.dumps(page).encode()


def openalex_page(drop_id: bool) -> bytes:
    """Three real OpenAlex works as one page, the second without its ids (but with its title, its authors...)."""
    works = copy.deepcopy(json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_bytes())[:3])
    if drop_id:
        for key in ("id", "ids", "doi"):
            works[1].pop(key, None)
    return json.dumps({"meta": {"count": 3, "next_cursor": None}, "results": works}).encode()


def pubmed_search(drop_id: bool):
    """A real esearch (its Count set to 2) and pubmed1.xml's two real articles, the second without its PMID."""
    esearch = (FIXTURES / "pubmed" / "esearch2.xml").read_bytes()
    esearch = esearch.replace(b"<Count>42249</Count>", b"<Count>2</Count>", 1)
    efetch = parse_xml((FIXTURES / "pubmed" / "pubmed1.xml").read_bytes())
    if drop_id:
        pmid = efetch.findall("PubmedArticle")[1].find("MedlineCitation/PMID")
        pmid.getparent().remove(pmid)
    body = etree.tostring(efetch, xml_declaration=True, encoding="UTF-8")

    def handler(request: httpx.Request) -> httpx.Response:
        return xml_response(esearch if request.url.path.endswith("/esearch.fcgi") else body)
    return handler


def arxiv_feed(drop_id: bool) -> bytes:
    """The real first page for "testing", its total set to the ten entries it holds, the second entry's id removed."""
    feed = parse_xml((FIXTURES / "arxiv" / "q_testing_s0_m10_bc5a6c384fe9.atom.xml").read_bytes())
    feed.find("opensearch:totalResults", arxiv.NS).text = "10"
    if drop_id:
        entry = feed.findall("atom:entry", arxiv.NS)[1]
        entry.remove(entry.find("atom:id", arxiv.NS))
    return etree.tostring(feed, xml_declaration=True, encoding="UTF-8")


def europepmc_page(drop_id: bool) -> bytes:
    """Two real Europe PMC results, the second without its source, id or identifiers."""
    page = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_bytes())
    results = copy.deepcopy(page["resultList"]["result"][:2])
    if drop_id:
        for key in ("id", "source", "pmid", "pmcid", "doi"):
            results[1].pop(key, None)
    page.update(hitCount=2, resultList={"result": results})
    page.pop("nextCursorMark")
    return json.dumps(page).encode()


UNNAMED = {
    "crossref": (lambda f: crossref.search(f, SETTINGS, {"query": "ecology"}),
                 lambda drop: lambda request: json_response(crossref_page(drop)), "no DOI"),
    "openalex": (lambda f: openalex.search(f, SETTINGS, {"search": "x"}),
                 lambda drop: lambda request: json_response(openalex_page(drop)), "no OpenAlex id"),
    "pubmed": (lambda f: pubmed.search(f, SETTINGS, "cancer"), pubmed_search, "no PMID"),
    "arxiv": (lambda f: arxiv.search(f, SETTINGS, "all:testing"),
              lambda drop: lambda request: xml_response(arxiv_feed(drop), "application/atom+xml"), "no arXiv id"),
    "europepmc": (lambda f: europepmc.search(f, SETTINGS, "cancer"),
                  lambda drop: lambda request: json_response(europepmc_page(drop)), "no source and id"),
}


@pytest.mark.parametrize("provider", sorted(UNNAMED))
def test_an_item_without_the_providers_own_id_leaves_the_run_incomplete(provider):
    """Every item a provider lists has its own id (a Crossref DOI, a PMID, an OpenAlex W id): one sent without it is
    a broken item, a work lost from the run, never a work sitegen cannot track skipped from a complete answer."""
    run, handler, reason = UNNAMED[provider]
    fetch, _, _ = fetcher(handler(False))
    with fetch:
        whole = run(fetch)
    assert whole.complete and whole.warnings == []
    fetch, _, _ = fetcher(handler(True))
    with fetch:
        outcome = run(fetch)
    assert outcome.status == "ok" and not outcome.complete and outcome.dropped == 1
    assert len(outcome.records) == len(whole.records) - 1
    assert f"could not be read ({reason})" in outcome.warnings[0] and "incomplete" in outcome.warnings[0]


def test_an_id_sitegen_cannot_read_names_the_item_it_loses_and_leaves_the_run_incomplete():
    """A Crossref DOI sitegen cannot normalise is still the provider's name for a work it sent: the work is lost
    from the run, named by that id (a human can look it up), never skipped from a complete answer as a work
    sitegen cannot track, and never said to have had no DOI."""
    page = json.loads(crossref_page(False))
    page["message"]["items"][1]["DOI"] = "not-a-doi"
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(page)))
    with fetch:
        outcome = crossref.search(fetch, SETTINGS, {"query": "ecology"})
    assert outcome.status == "ok" and not outcome.complete and outcome.dropped == 1 and len(outcome.records) == 1
    assert outcome.warnings == ["1 Crossref work could not be read (an unreadable DOI): 'not-a-doi'; it is missing "
                                "from this run, which is therefore incomplete"]


def test_distinct_works_sharing_one_unreadable_id_are_each_lost_not_one_repeated():
    """An id sitegen cannot read names no work: two different works sent with the same one ("not-a-doi") are two
    works lost from the run, never one lost and the other taken for a repeat of it (which hid it from the count)."""
    page = json.loads(crossref_page(False))
    page["message"]["total-results"] = 3
    page["message"]["items"].append(copy.deepcopy(page["message"]["items"][1]))
    page["message"]["items"][2]["title"] = ["Another work altogether"]
    page["message"]["items"][1]["DOI"] = page["message"]["items"][2]["DOI"] = "not-a-doi"
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(page)))
    with fetch:
        outcome = crossref.search(fetch, SETTINGS, {"query": "ecology"})
    assert outcome.status == "ok" and not outcome.complete and outcome.dropped == 2 and len(outcome.records) == 1
    assert outcome.warnings == ["2 Crossref works could not be read (an unreadable DOI): 'not-a-doi'; they are "
                                "missing from this run, which is therefore incomplete"]


def test_the_same_work_sent_twice_with_an_unreadable_id_is_still_one_work_lost():
    """Counted by its content instead, a work with an id sitegen cannot read sent twice is one work, sent twice."""
    page = json.loads(crossref_page(False))
    page["message"]["items"][1]["DOI"] = "not-a-doi"
    page["message"]["items"].append(copy.deepcopy(page["message"]["items"][1]))
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(page)))
    with fetch:
        outcome = crossref.search(fetch, SETTINGS, {"query": "ecology"})
    assert outcome.dropped == 1 and len(outcome.records) == 1
    assert outcome.warnings[-1] == "Crossref sent 1 item more than once; each was kept once"


def test_a_shortlist_counts_each_work_with_a_shared_unreadable_id_lost():
    """The semantic shortlist, which keeps a work listed twice once by its own id, never takes two works sharing
    an id it cannot read for one."""
    works = json.loads(openalex_page(False))["results"]
    for work in works[1:]:
        work.update(id="https://openalex.org/X1", ids={"openalex": "https://openalex.org/X1"}, doi=None)
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps({"meta": {"count": None}, "results": works})))
    with fetch:
        outcome = openalex.semantic_shortlist(fetch, SETTINGS, "memory")
    assert len(outcome.records) == 1 and outcome.dropped == 2


@pytest.mark.parametrize("provider", ["crossref", "openalex", "pubmed", "arxiv"])
def test_an_answer_whose_every_id_is_unreadable_is_no_answer(provider):
    """Every work sent, none readable by its own id: the results were sent and lost, so the source is unavailable
    (as for a short page), never a complete answer of no records whose PRISMA counts say nothing was found."""
    run, handler, _ = UNNAMED[provider]
    fetch, _, _ = fetcher(unreadable_ids(provider, handler(False)))
    with fetch:
        outcome = run(fetch)
    assert outcome.status == "unavailable" and not outcome.complete and outcome.records == []
    assert "could not be read (an unreadable" in outcome.warnings[-1]


def unreadable_ids(provider: str, handler):
    """`handler`, its answer's works each given an own id sitegen cannot read (each another)."""
    def rewritten(request: httpx.Request) -> httpx.Response:
        response = handler(request)
        if provider == "pubmed" and request.url.path.endswith("/esearch.fcgi"):
            return response
        if provider in ("pubmed", "arxiv"):
            root = parse_xml(response.content)
            paths = ("PubmedArticle/MedlineCitation/PMID",) if provider == "pubmed" else ("atom:entry/atom:id",)
            for index, node in enumerate(root.findall(paths[0], arxiv.NS)):
                node.text = f"x{index}y"
            return xml_response(etree.tostring(root, xml_declaration=True, encoding="UTF-8"), response.headers["content-type"])
        page = json.loads(response.content)
        items = page["message"]["items"] if provider == "crossref" else page["results"]
        for index, item in enumerate(items):
            if provider == "crossref":
                item["DOI"] = f"not-a-doi-{index}"
            else:
                item.update(id=f"https://openalex.org/X{index}", ids={"openalex": f"https://openalex.org/X{index}"},
                            doi=None)
                item["ids"].pop("pmid", None)
        return json_response(json.dumps(page))
    return rewritten


def test_an_unreadable_id_is_shown_escaped_and_cut_and_apart_from_items_without_one():
    page = json.loads(crossref_page(False))
    page["message"]["total-results"] = 3
    page["message"]["items"].append(copy.deepcopy(page["message"]["items"][1]))
    page["message"]["items"][1]["DOI"] = "10.1234/\u202eevil\nline" + "x" * 200
    del page["message"]["items"][2]["DOI"]
    page["message"]["items"][2]["title"] = ["Another title"]
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(page)))
    with fetch:
        outcome = crossref.search(fetch, SETTINGS, {"query": "ecology"})
    assert len(outcome.records) == 1 and outcome.dropped == 2 and not outcome.complete
    [lost] = outcome.warnings
    assert lost == ("2 Crossref works could not be read (an unreadable DOI; no DOI): '10.1234/\\u202eevil\\nline"
                    + "x" * 62 + "'; they are missing from this run, which is therefore incomplete")
    assert "\n" not in lost and "\u202e" not in lost


@pytest.mark.parametrize(("run", "body", "said"), [
    (lambda fetch: crossref.lookup(fetch, SETTINGS, "10.1038/srep16696"),
     lambda: json.dumps({**json.loads(CROSSREF_LOOKUP), "message": {**json.loads(CROSSREF_LOOKUP)["message"],
                                                                    "DOI": "10.1038/srep 16696"}}).encode(),
     "the work's DOI '10.1038/srep 16696' could not be read"),
    (lambda fetch: pubmed.lookup(fetch, SETTINGS, "29768149"),
     lambda: NEJM_EFETCH.replace(b'<PMID Version="1">29768149</PMID>', b'<PMID Version="1">29768149a</PMID>', 1),
     "the article's PMID '29768149a' could not be read"),
    (lambda fetch: arxiv.lookup(fetch, SETTINGS, "1605.08386"),
     lambda: ARXIV_ONE.replace(b"<id>http://arxiv.org/abs/1605.08386v1</id>", b"<id>http://arxiv.org/abs/16O5.08386v1</id>"),
     "the entry's arXiv id 'http://arxiv.org/abs/16O5.08386v1' could not be read"),
])
def test_a_lookup_answered_with_an_unreadable_id_says_what_it_was(run, body, said):
    fetch, _, _ = fetcher(lambda request: httpx.Response(200, content=body()))
    with fetch:
        outcome = run(fetch)
    assert outcome.status == "unavailable" and said in outcome.warnings[0]


CROSSREF_LOOKUP = (FIXTURES / "crossref" / "crossref_work_10.1038_srep16696.json").read_bytes()
NEJM_EFETCH = (FIXTURES / "pubmed" / "pubmed-29768149.xml").read_bytes()
ARXIV_ONE = (FIXTURES / "arxiv" / "id_1605.08386_s0_m100_199195aa31ad.atom.xml").read_bytes()


# --------------------------------------------------------------------------- text a reader cannot see

# What a deposit copied from a word processor holds where a name or a title should be: a zero-width space, a
# byte-order mark, a left-to-right mark, a word joiner. No record may hold a name or a title no one can see.
INVISIBLE = ["\u200b", "\ufeff", "\u200e", "\u2060 \u200b"]
CROSSREF_WORK = json.loads((FIXTURES / "crossref" / "crossref_work_10.1038_srep16696.json").read_bytes())["message"]
OPENALEX_WORK = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_bytes())[0]
EUROPEPMC_RESULT = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_bytes())["resultList"]["result"][0]
PUBMED_ARTICLE = parse_xml((FIXTURES / "pubmed" / "pubmed-29768149.xml").read_bytes()).find("PubmedArticle")
ARXIV_ENTRY = parse_xml((FIXTURES / "arxiv" / "q_testing_s0_m10_bc5a6c384fe9.atom.xml").read_bytes()).find(
    "atom:entry", arxiv.NS)


def with_second_author_named(provider: str, name: str):
    """A real work of `provider` whose second author's name is `name`, and its converter."""
    if provider == "crossref":
        work = copy.deepcopy(CROSSREF_WORK)
        work["author"][1] = {"family": name, "given": name, "sequence": "additional"}
        return work, crossref.work_to_record
    if provider == "openalex":
        work = copy.deepcopy(OPENALEX_WORK)
        work["authorships"][1]["author"]["display_name"] = name
        work["authorships"][1]["raw_author_name"] = name
        return work, openalex.work_to_record
    if provider == "europepmc":
        work = copy.deepcopy(EUROPEPMC_RESULT)
        work["authorList"]["author"][1] = {"fullName": name, "lastName": name, "firstName": name}
        return work, europepmc.result_to_record
    if provider == "pubmed":
        work = copy.deepcopy(PUBMED_ARTICLE)
        author = work.findall("MedlineCitation/Article/AuthorList/Author")[1]
        for child in list(author):
            author.remove(child)
        etree.SubElement(author, "LastName").text = name
        etree.SubElement(author, "ForeName").text = name
        return work, pubmed.article_to_record
    work = copy.deepcopy(ARXIV_ENTRY)
    work.findall("atom:author/atom:name", arxiv.NS)[1].text = name
    return work, arxiv.entry_to_record


@pytest.mark.parametrize("name", INVISIBLE)
@pytest.mark.parametrize("provider", sorted(UNNAMED))
def test_an_author_named_by_invisible_characters_alone_is_no_author_and_the_work_is_kept(provider, name):
    """Such a name was taken for a name and refused by the record format, and the whole work with it: the work
    was lost from every run (its source's slice incomplete each time). It is no author; the others stay in order."""
    whole, convert = with_second_author_named(provider, "Placeholder")
    expected = [author for index, author in enumerate(convert(whole).author) if index != 1]
    work, convert = with_second_author_named(provider, name)
    assert convert(work).author == expected


@pytest.mark.parametrize("title", INVISIBLE)
def test_a_title_of_invisible_characters_alone_is_no_title(title):
    """The work is left out by name as any untitled work, not refused as unreadable (which left the run
    incomplete every time the provider sent it)."""
    page = json.loads(crossref_page(False))
    page["message"]["items"][1].update(title=[title], **{"original-title": [title]})
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(page)))
    with fetch:
        outcome = crossref.search(fetch, SETTINGS, {"query": "ecology"})
    assert outcome.complete and len(outcome.records) == 1
    assert outcome.warnings == ["1 Crossref work had no title and was left out: 10.1093/obo/9780199830060-0023"]


# --------------------------------------------------------------------------- a count that is no count

ESEARCH = (FIXTURES / "pubmed" / "esearch2.xml").read_bytes()


@pytest.mark.parametrize(("written", "said"), [
    ("-1", "the Count '-1' is not a whole number of matches"),
    ("4.2e4", "the Count '4.2e4' is not a whole number of matches"),
    ("9" * 20, f"the Count '{'9' * 20}' is not a whole number of matches"),
    ("", "the response has no Count"),
])
def test_a_count_that_is_no_whole_number_is_said_as_sent_not_as_missing(written, said):
    """A PubMed esearch or an arXiv feed whose count is not a whole number is no answer; the warning says what it
    held (it said the count was missing)."""
    esearch = ESEARCH.replace(b"<Count>42249</Count>", f"<Count>{written}</Count>".encode(), 1)
    fetch, _, _ = fetcher(lambda request: xml_response(esearch))
    with fetch:
        outcome = pubmed.search(fetch, SETTINGS, "cancer")
    assert outcome.status == "unavailable" and said in outcome.warnings[0]
    feed = ARXIV_ONE.replace(b"<opensearch:totalResults>1<", f"<opensearch:totalResults>{written}<".encode())
    fetch, _, _ = fetcher(lambda request: xml_response(feed, "application/atom+xml"))
    with fetch:
        outcome = arxiv.lookup(fetch, SETTINGS, "1605.08386")
    assert outcome.status == "unavailable" and said.replace("Count", "opensearch:totalResults") in outcome.warnings[0]


OPENALEX_LOOKUP = (FIXTURES / "openalex" / "openalex_work_doi_10.1023_a_1007154515475.json").read_bytes()


def untitled_json(body: bytes, envelope: bool) -> bytes:
    work = json.loads(body)
    for key in ("title", "display_name", "original-title"):
        (work["message"] if envelope else work).pop(key, None)
    return json.dumps(work).encode()


UNTITLED_LOOKUPS = {
    "crossref": (lambda fetch: crossref.lookup(fetch, SETTINGS, "10.1038/srep16696"),
                 lambda: untitled_json(CROSSREF_LOOKUP, True),
                 "Crossref answers with the work, 10.1038/srep16696, which has no title"),
    "openalex": (lambda fetch: openalex.lookup(fetch, SETTINGS, "10.1023/a:1007154515475"),
                 lambda: untitled_json(OPENALEX_LOOKUP, False),
                 "OpenAlex answers with the work, 10.1023/a:1007154515475, which has no title"),
    "europepmc": (lambda fetch: europepmc.lookup(fetch, SETTINGS, "10.1016/s0140-6736(24)02600-x"),
                  lambda: json.dumps({"hitCount": 1, "nextCursorMark": "end", "resultList": {"result": [
                      {key: value for key, value in EUROPEPMC_RESULT.items() if key != "title"}]}}).encode(),
                  "Europe PMC answers with the result, 10.1016/s0140-6736(24)02600-x, which has no title"),
    "pubmed": (lambda fetch: pubmed.lookup(fetch, SETTINGS, "29768149"),
               lambda: NEJM_EFETCH.replace(b"Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma.",
                                           b"[Not Available].", 1),
               "PubMed answers with the article, 10.1056/nejmoa1715274, which has no title"),
    "arxiv": (lambda fetch: arxiv.lookup(fetch, SETTINGS, "1605.08386"),
              lambda: etree.tostring(untitled_entry(ARXIV_ONE)),
              "arXiv answers with the entry, arxiv:1605.08386, which has no title"),
}


def untitled_entry(feed: bytes) -> etree._Element:
    root = parse_xml(feed)
    entry = root.find("atom:entry", arxiv.NS)
    entry.remove(entry.find("atom:title", arxiv.NS))
    return root


@pytest.mark.parametrize("provider", sorted(UNTITLED_LOOKUPS))
def test_a_lookup_answered_with_an_untitled_work_is_an_answer_not_an_outage(provider):
    """The provider holds a work under the identifier but gives it no title (a journal issue, a component): asked
    again it answers the same, so it is no outage (`unavailable`), nor "not found", but an `ok` without records
    whose doubt says what it answered, in the same words for every provider."""
    run, body, said = UNTITLED_LOOKUPS[provider]
    fetch, _, _ = fetcher(lambda request: httpx.Response(200, content=body()))
    with fetch:
        outcome = run(fetch)
    assert outcome.status == "ok" and not outcome.complete and outcome.records == [] and outcome.instead is None
    assert outcome.doubt.startswith(said) and "which has no title: no record can be made of it" in outcome.doubt


def test_a_lookup_answered_with_a_work_without_its_id_says_which_it_lacked():
    work = json.loads(CROSSREF_LOOKUP)
    del work["message"]["DOI"]
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(work)))
    with fetch:
        outcome = crossref.lookup(fetch, SETTINGS, "10.1038/srep16696")
    assert outcome.status == "unavailable" and "the work has no DOI" in outcome.warnings[0]
    work = json.loads(OPENALEX_LOOKUP)
    for key in ("id", "ids", "doi"):
        work.pop(key)
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(work)))
    with fetch:
        outcome = openalex.lookup(fetch, SETTINGS, "10.1023/a:1007154515475")
    assert outcome.status == "unavailable" and "the work has no identifier" in outcome.warnings[0]
    assert "or title" not in outcome.warnings[0]


# --------------------------------------------------------------------------- provider text quoted in a warning

LONG = "Backend failed " + "and failed again " * 20_000
ARXIV_ERROR = (FIXTURES / "arxiv" / "id_abc_s0_m100_b79c8dcf6bc3.atom.xml").read_bytes()


@pytest.mark.parametrize(("run", "body"), [
    (lambda fetch: pubmed.lookup(fetch, SETTINGS, "29768149"),
     f'<?xml version="1.0" ?>\n<eFetchResult><ERROR>{LONG}</ERROR></eFetchResult>'.encode()),
    (lambda fetch: pubmed.search(fetch, SETTINGS, "cancer"),
     ESEARCH.replace(b"<Count>42249</Count>", f"<ErrorList><{'Odd' * 10_000}>{LONG}</{'Odd' * 10_000}></ErrorList>"
                                               "<Count>42249</Count>".encode(), 1)),
    (lambda fetch: arxiv.lookup(fetch, SETTINGS, "1605.08386"),
     ARXIV_ERROR.replace(b"incorrect id format for abc</summary>", LONG.encode() + b"</summary>")),
    (lambda fetch: crossref.lookup(fetch, SETTINGS, "10.1038/srep16696"),
     CROSSREF_LOOKUP.replace(b'"message-type":"work"', json.dumps({"message-type": LONG}).strip("{}").encode())),
])
def test_text_an_answer_holds_is_quoted_cut_never_whole_in_a_warning(run, body):
    """An error a provider reports, or a kind of answer it names, is quoted in the warning (which the report and the
    ledger keep), never whole: a provider's answer cannot fill them with whatever it holds."""
    fetch, _, _ = fetcher(lambda request: httpx.Response(200, content=body))
    with fetch:
        outcome = run(fetch)
    assert outcome.status in ("unavailable", "unsupported")
    assert "Backend failed and failed again" in outcome.warnings[0] and len(outcome.warnings[0]) < 1000


HIDING = "Backend \u202efailed\u2066 \u200bagain\u2028\x85"  # an override, an isolate, a zero-width space, separators


@pytest.mark.parametrize(("run", "body", "status"), [
    (lambda fetch: arxiv.lookup(fetch, SETTINGS, "1605.08386"),
     lambda: httpx.Response(200, content=ARXIV_ERROR.replace(b"incorrect id format for abc</summary>",
                                                             HIDING.encode() + b"</summary>")), "unsupported"),
    (lambda fetch: pubmed.lookup(fetch, SETTINGS, "29768149"),
     lambda: httpx.Response(200, content=f'<?xml version="1.0" ?>\n<eFetchResult><ERROR>{HIDING}</ERROR>'
                                         "</eFetchResult>".encode()), "unavailable"),
    (lambda fetch: crossref.search(fetch, SETTINGS, {"query": "ecology"}),
     lambda: json_response(json.dumps({"status": "failed", "message": HIDING}), status=400), "unsupported"),
    (lambda fetch: europepmc.search(fetch, SETTINGS, "cancer"),
     lambda: json_response(json.dumps({"errMsg": HIDING})), "unavailable"),
], ids=["arxiv-error", "pubmed-error", "crossref-refusal", "europepmc-error"])
def test_provider_text_in_a_warning_shows_every_character_it_holds_escaped(run, body, status):
    """An error a provider reports is quoted in the warning (and the report and ledger that keep it) cut and with
    each character that does not show as itself escaped: a right-to-left override reordered the message, and a
    zero-width or separating character hid part of it or broke its line."""
    fetch, _, _ = fetcher(lambda request: body())
    with fetch:
        outcome = run(fetch)
    assert outcome.status == status
    [warning] = outcome.warnings
    assert "\\u202efailed\\u2066" in warning and "\\u200bagain" in warning, warning
    assert warning.isprintable()


def test_a_skipped_items_own_name_is_shown_escaped_and_cut_when_it_is_no_plain_short_text():
    # Europe PMC names a result it holds apart from DOI, PMID and PMCID by its source and id: shown as sent when
    # plain (AGR:IND44012345), else quoted and cut, as an id sitegen cannot read is
    odd = {"id": "IND\u202e44012345\n" + "9" * 500, "source": "AGR", "title": "A result with only Europe PMC's own id"}
    page = {"hitCount": 1, "nextCursorMark": "end", "resultList": {"result": [odd]}}
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(page)))
    with fetch:
        outcome = europepmc.search(fetch, SETTINGS, "x")
    [warning] = outcome.warnings
    assert warning.startswith("1 Europe PMC result had no DOI, PMID or PMCID and was skipped: 'AGR:IND\\u202e44012345\\n99")
    assert "\n" not in warning and "\u202e" not in warning and len(warning) < 200


def test_a_lookup_answered_with_the_work_twice_has_it_once():
    # an efetch listing the article asked for twice (real article, copied): one work, counted once
    article = parse_xml(NEJM_EFETCH).find("PubmedArticle")
    prolog = NEJM_EFETCH.split(b"<PubmedArticleSet>")[0]
    body = prolog + b"<PubmedArticleSet>" + etree.tostring(article) * 2 + b"</PubmedArticleSet>"
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    with fetch:
        outcome = pubmed.lookup(fetch, SETTINGS, "29768149")
    assert outcome.complete and [record.PMID for record in outcome.records] == ["29768149"] and outcome.total == 1
