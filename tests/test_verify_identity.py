"""Axes (a) identity and (b) status on real recorded responses: the four identity verdicts, the status of a
real correction, a retraction built from the real Crossref shape, and failures that are never negatives."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import httpx
import pytest

from sitegen.records.model import CslDate, CslName, Record, RecordMeta, Reinstatement, Update
from sitegen.review.models import VerificationPayload
from sitegen.sources import openalex
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import SnapshotStore
from sitegen.verify.identity import Answer, agreement, marked_retracted, notice, status_verdict, verify_citation
from tests.http_mocks import fetcher, json_response

FIXTURES = Path(__file__).parent / "fixtures"
SETTINGS = SourceSettings()
ADAK_DOI = "10.1023/a:1007154515475"  # Adak et al. 2001, horseradish peroxidase: in Crossref and OpenAlex
ADAK_TITLE = ("An essential role of active site arginine residue in iodide binding and histidine residue in "
              "electron transfer for iodide oxidation by horseradish peroxidase")


def body(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def cited(title: str = ADAK_TITLE, doi: str | None = ADAK_DOI, family: str = "Adak", year: int = 2001,
          **fields) -> Record:
    """A reference as a manuscript or a review cites it."""
    if doi is None:
        fields["custom"] = RecordMeta(ref="0123456789abcdef")
    return Record(id=doi or "ref:0123456789abcdef", title=title, DOI=doi, author=[CslName(family=family, given="S")],
                  issued=CslDate(**{"date-parts": [[year]]}), **fields)


def serve(crossref: httpx.Response | None = None, openalex: httpx.Response | None = None,
          pubmed: httpx.Response | None = None, store: SnapshotStore | None = None):
    def handler(request: httpx.Request) -> httpx.Response:
        answer = {"api.crossref.org": crossref, "api.openalex.org": openalex,
                  "eutils.ncbi.nlm.nih.gov": pubmed}[request.url.host]
        if answer is None:
            raise AssertionError(f"unexpected request {request.url}")
        if isinstance(answer, Exception):
            raise answer
        return answer
    return fetcher(handler, "record" if store else "live", store)[0]


def crossref_adak() -> httpx.Response:
    return json_response(body("crossref/crossref_work_10.1023_a_1007154515475.json"))


def openalex_adak() -> httpx.Response:
    return json_response(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))


def not_found() -> httpx.Response:
    return httpx.Response(404, content=body("crossref/crossref_work_404.txt"), headers={"content-type": "text/plain"})


def test_a_real_paper_both_indexes_hold_is_verified_and_current(tmp_path):
    recording = serve(crossref_adak(), openalex_adak(), store=SnapshotStore(tmp_path))
    verdicts = verify_citation(recording, SETTINGS, cited())
    assert verdicts.identity.verdict == "verified" and not verdicts.identity.refusal_grade
    assert [(a.source, a.answer) for a in verdicts.identity.answers] == [("crossref", "found"), ("openalex", "found")]
    assert verdicts.status.verdict == "current"
    assert len(verdicts.identity.snapshot_hashes) == 2  # the verdict names the responses it rests on


def test_a_doi_that_resolves_to_another_work_is_a_mismatch():
    fabricated = cited(title="Deep learning predicts object-in-context memory in rats", family="Smith", year=2020)
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, fabricated)
    assert verdicts.identity.verdict == "mismatch" and verdicts.identity.refusal_grade
    assert "horseradish peroxidase" in verdicts.identity.reasons[0]
    assert {a.answer for a in verdicts.identity.answers} == {"different-work"}
    # the standing of another work says nothing of the one cited
    assert verdicts.status.verdict == "inconclusive"


def test_an_unknown_doi_is_unresolvable_when_every_index_answered():
    openalex_404 = json_response(body("openalex/openalex_work_404.json"), status=404)
    verdicts = verify_citation(serve(not_found(), openalex_404), SETTINGS, cited(doi="10.1371/notarealdoi"))
    assert verdicts.identity.verdict == "unresolvable" and verdicts.identity.refusal_grade
    assert {a.answer for a in verdicts.identity.answers} == {"not-found"}


def test_a_timeout_is_inconclusive_never_unresolvable():
    timeout = httpx.ReadTimeout("timed out")
    verdicts = verify_citation(serve(timeout, json_response(body("openalex/openalex_work_404.json"), status=404)),
                               SETTINGS, cited(doi="10.1371/notarealdoi"))
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert "never a negative" in " ".join(verdicts.identity.reasons)
    assert verdicts.status.verdict == "inconclusive"


def test_rate_limited_is_kept_apart():
    limited = httpx.Response(429, headers={"retry-after": "1"})
    verdicts = verify_citation(serve(limited, openalex_adak()), SETTINGS, cited())
    assert verdicts.rate_limited
    assert verdicts.identity.verdict == "inconclusive"
    assert [a.answer for a in verdicts.identity.answers] == ["rate-limited", "found"]


def test_only_one_index_holding_the_paper_is_inconclusive():
    verdicts = verify_citation(serve(not_found(), openalex_adak()), SETTINGS, cited())
    assert verdicts.identity.verdict == "inconclusive"
    assert "only one index holds the paper (OpenAlex)" in verdicts.identity.reasons


def test_a_real_crossref_correction_makes_the_status_corrected():
    listing = json.loads(body("crossref/crossref_prefix_10.1371_works_with_update-to_updated-by.json"))
    item = next(i for i in listing["message"]["items"] if "updated-by" in i
                and i["updated-by"][0]["type"] == "correction")
    work = {"status": "ok", "message-type": "work", "message": item}
    record = cited(title=item["title"][0], doi=item["DOI"].lower(), family=item["author"][0]["family"],
                   year=item["issued"]["date-parts"][0][0])
    openalex_404 = json_response(body("openalex/openalex_work_404.json"), status=404)
    verdicts = verify_citation(serve(json_response(json.dumps(work)), openalex_404), SETTINGS, record)
    assert verdicts.status.verdict == "corrected" and not verdicts.status.refusal_grade
    assert verdicts.status.notice == item["updated-by"][0]["DOI"].lower()


def test_an_expression_of_concern_is_named_in_words():
    # The real Adak response with an `updated-by` expression of concern, in the shape of the real correction entries.
    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    work["message"]["updated-by"] = [{"DOI": "10.1023/a:9999999999999", "type": "expression_of_concern",
                                      "label": "Expression of concern", "source": "publisher",
                                      "updated": {"date-parts": [[2024, 1, 5]]}}]
    verdicts = verify_citation(serve(json_response(json.dumps(work)), openalex_adak()), SETTINGS, cited())
    assert verdicts.status.verdict == "expression-of-concern" and not verdicts.status.refusal_grade
    assert verdicts.status.reasons == ["Crossref lists an expression of concern (10.1023/a:9999999999999)"]


def test_a_retraction_listed_by_crossref_is_refusal_grade():
    # No real recording of a retracted work exists offline (../shared/realdata/MANIFEST.md): this is the real
    # Adak response with an `updated-by` retraction entry in the shape of the real correction entries.
    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    retracted = copy.deepcopy(work)
    retracted["message"]["updated-by"] = [{"DOI": "10.1023/a:9999999999999", "type": "retraction",
                                           "label": "Retraction", "source": "retraction-watch",
                                           "updated": {"date-parts": [[2024, 1, 5]]}}]
    verdicts = verify_citation(serve(json_response(json.dumps(retracted)), openalex_adak()), SETTINGS, cited())
    assert verdicts.identity.verdict == "verified"
    assert verdicts.status.verdict == "retracted" and verdicts.status.refusal_grade
    assert verdicts.status.notice == "10.1023/a:9999999999999"
    assert verdicts.refusal_grade


def test_openalex_is_retracted_alone_makes_it_retracted():
    work = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    work["is_retracted"] = True
    verdicts = verify_citation(serve(crossref_adak(), json_response(json.dumps(work))), SETTINGS, cited())
    assert verdicts.status.verdict == "retracted"
    assert "OpenAlex marks the work retracted" in verdicts.status.reasons


def _title_searches():
    """Crossref's and OpenAlex's answers to a search by title, each listing the one work of 10.1023/a:1007154515475."""
    listing = {"status": "ok", "message-type": "work-list", "message": {
        "total-results": 1, "items": [json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))["message"]],
        "items-per-page": 5, "query": {"start-index": 0, "search-terms": None}}}
    openalex_list = {"meta": {"count": 1, "next_cursor": None},
                     "results": [json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))]}
    return serve(json_response(json.dumps(listing)), json_response(json.dumps(openalex_list)))


def test_a_reference_without_identifiers_is_found_by_title():
    verdicts = verify_citation(_title_searches(), SETTINGS, cited(doi=None))
    assert verdicts.identity.verdict == "verified"
    assert all(a.asked.startswith("title") for a in verdicts.identity.answers)


def test_a_title_search_finding_only_other_works_is_neither_a_mismatch_nor_unresolvable():
    listing = {"status": "ok", "message-type": "work-list", "message": {
        "total-results": 1, "items": [json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))["message"]],
        "items-per-page": 5, "query": {"start-index": 0, "search-terms": None}}}
    empty = {"meta": {"count": 0, "next_cursor": None}, "results": []}
    verdicts = verify_citation(serve(json_response(json.dumps(listing)), json_response(json.dumps(empty))),
                               SETTINGS, cited(title="A made-up study of rodent memory", doi=None, family="Nobody"))
    # a report, a book or a thesis may be in none of these indexes: a title search that finds nothing is
    # an open item, never a refusal
    assert verdicts.identity.verdict == "inconclusive"
    assert "closest" in (verdicts.identity.answers[0].detail or "")


@pytest.mark.parametrize("change, expected", [
    ({"title": ADAK_TITLE.upper() + "."}, "same"),  # case and punctuation are not a difference
    ({"year": 2009}, "unclear"),  # the year is wrong: a human looks
    ({"family": "Banerjee"}, "unclear"),  # the first author is not the one indexed
    # the title cut after its first words (a subtitle dropped), by the same first author in the same year
    ({"title": "An essential role of active site arginine residue in iodide binding"}, "same"),
    # another title and another year under the same DOI: the identifier names another work
    ({"title": "Arginine residues in iodide binding", "year": 2009}, "different"),
    # another language by the same first author in the same year, but nothing more to corroborate it: a DOI
    # under a made-up title must stay a mismatch
    ({"title": "Le rôle essentiel de l'arginine du site actif"}, "different"),
    ({"title": "Deep learning for protein folding", "family": "Smith", "year": 2019}, "different"),
    ({"title": "Retraction: " + ADAK_TITLE}, "different"),  # a notice is not the work
])
def test_agreement_of_a_citation_with_the_indexed_work(change, expected):
    indexed = cited()
    assert agreement(cited(**change), indexed)[0] == expected


def test_the_right_title_in_the_wrong_journal_is_a_mis_description_a_human_looks_at():
    indexed = cited(container_title="Molecular and Cellular Biochemistry", volume="218", page="1-11")
    verdict, details = agreement(cited(container_title="Nature", volume="512", page="1-9"), indexed)
    assert verdict == "unclear"
    assert "the journal cited is not the journal indexed" in details and "volume cited as 512, indexed as 218" in details
    assert agreement(cited(container_title="Mol Cell Biochem", volume="218", page="1-11"), indexed)[0] == "same"


@pytest.mark.parametrize(("cited_as", "indexed_as", "same"), [
    ("Proc. Natl. Acad. Sci. U.S.A.", "Proceedings of the National Academy of Sciences of the United States of America",
     True),  # ISO 4 contracts "National" to "Natl"
    ("J Natl Cancer Inst", "Journal of the National Cancer Institute", True),
    ("J Neurosci", "J Neurochem", False),
    ("Ann Neurol", "Ann Neurosci", False),
    ("Nat Med", "Nature Methods", False),
    ("Proc Natl Acad Sci", "Proc R Soc B", False),
    # "Natl" contracts "Natural" as well as "National" (ISO 4): either written out is the journal
    ("Natl Prod Rep", "Natural Product Reports", True),
    ("Natl Sci Rev", "National Science Review", True),
    # but it contracts neither "Nature" nor "Natural" into another journal's name
    ("Natl Med", "Nature Medicine", False),
    ("J Natl Med Assoc", "Journal of Natural Medicines", False),
])
def test_a_journal_cited_by_its_iso_abbreviation_is_the_journal_indexed(cited_as, indexed_as, same):
    # no volume or page to settle it: the names alone decide
    verdict, details = agreement(cited(container_title=cited_as), cited(container_title=indexed_as))
    assert (verdict == "same") is same
    assert ("the journal cited is not the journal indexed" in details) is not same


def test_a_translated_title_with_the_same_author_year_volume_and_page_is_for_a_human():
    indexed = cited(volume="218", page="1-11")
    french = cited(title="Le rôle essentiel de l'arginine du site actif", volume="218", page="1-11")
    assert agreement(french, indexed)[0] == "unclear"


def test_a_publisher_retraction_mark_in_the_title_is_the_work_retracted():
    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    work["message"]["title"] = ["RETRACTED ARTICLE: " + work["message"]["title"][0]]
    verdicts = verify_citation(serve(json_response(json.dumps(work)), openalex_adak()), SETTINGS, cited())
    assert verdicts.identity.verdict == "verified"
    assert verdicts.status.verdict == "retracted" and "Crossref titles the work as retracted" in verdicts.status.reasons


@pytest.mark.parametrize("title, marked", [
    ("(" + " " * 1500 + "Retracted" + " " * 1500 + ")" + " " * 1500 + ": " + ADAK_TITLE[:20], True),
    ("Retracted" + " " * 4900 + "the title goes on", False),
])
def test_a_retraction_mark_is_read_off_a_title_in_linear_time(title, marked):
    """With no bracket around the mark, the spaces before and after where it belongs were two runs, split every
    way: a title (at most 5,000 characters) holding a run of spaces no mark ends took a second, for each comparison
    of it."""
    assert marked_retracted(cited(title=title)) is marked
    assert agreement(cited(title=title), cited(title=title.replace("Retracted", "")))[0] == ("same" if marked else
                                                                                               "unclear")


def test_a_retraction_counts_even_when_the_citation_gets_the_pages_wrong():
    # found by the cited DOI: the DOI names the work, whatever the citation says of its pages
    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    work["message"]["updated-by"] = [{"DOI": "10.1023/a:9999999999999", "type": "retraction"}]
    wrong_pages = cited(page="500-515", volume="999")
    verdicts = verify_citation(serve(json_response(json.dumps(work)), openalex_adak()), SETTINGS, wrong_pages)
    assert verdicts.identity.verdict == "inconclusive"
    assert verdicts.status.verdict == "retracted"


def test_a_datacite_doi_unknown_to_crossref_is_not_a_negative():
    # Crossref's agency lookup, in the shape its API documents (no recording of it exists offline)
    agency = {"status": "ok", "message-type": "work-agency", "message-version": "1.0.0",
              "message": {"DOI": "10.5281/zenodo.1234567", "agency": {"id": "datacite", "label": "DataCite"}}}
    responses = iter([not_found(), json_response(json.dumps(agency))])
    openalex_404 = json_response(body("openalex/openalex_work_404.json"), status=404)

    def handler(request: httpx.Request) -> httpx.Response:
        return next(responses) if request.url.host == "api.crossref.org" else openalex_404
    verdicts = verify_citation(fetcher(handler)[0], SETTINGS, cited(doi="10.5281/zenodo.1234567"))
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert [a.answer for a in verdicts.identity.answers] == ["elsewhere", "not-found"]
    assert "registered with datacite" in " ".join(verdicts.identity.reasons)


def test_a_fabricated_doi_no_agency_knows_is_unresolvable():
    openalex_404 = json_response(body("openalex/openalex_work_404.json"), status=404)
    verdicts = verify_citation(serve(not_found(), openalex_404), SETTINGS, cited(doi="10.1371/notarealdoi"))
    assert verdicts.identity.verdict == "unresolvable"
    assert verdicts.identity.answers[0].detail == "no registration agency knows this DOI"


def test_one_index_alone_does_not_make_a_work_current():
    verdicts = verify_citation(serve(not_found(), openalex_adak()), SETTINGS, cited())
    assert verdicts.status.verdict == "inconclusive"
    assert "a retraction another index lists could be missed" in verdicts.status.reasons[0]


def group_cited(year: int = 2001, title: str = ADAK_TITLE) -> Record:
    return Record(id=ADAK_DOI, title=title, DOI=ADAK_DOI, author=[CslName(literal="Peroxidase Study Group")],
                  issued=CslDate(**{"date-parts": [[year]]}), volume="218", page="1-11")


def test_an_organisation_as_first_author_is_still_compared():
    # A group cited where the index lists a person (its first named member), or the reverse: the two cannot be
    # compared, which is no author disagreement, but no agreement either. The rest is still compared.
    indexed, group = cited(), group_cited()
    verdict, details = agreement(group, indexed)
    assert verdict == "same" and not any("first author cited as" in detail for detail in details)
    assert ("the first author cannot be compared: the citation names an organisation (peroxidase study group), the "
            "index a person (adak)") in details
    assert "the citation names a person (adak), the index an organisation" in " ".join(agreement(indexed, group)[1])
    assert agreement(group_cited(year=2010), indexed)[0] == "unclear"  # another year is still a discrepancy
    # a group corroborates nothing: a title unrelated to the one indexed is another work, whatever else agrees
    unrelated = group_cited(title="Deep learning predicts object-in-context memory in rats")
    assert agreement(unrelated, cited(volume="218", page="1-11"))[0] == "different"


def test_a_group_cited_for_a_work_indexed_under_a_person_is_verified_by_its_identifier_not_by_its_title(tmp_path):
    group = group_cited().model_copy(update={"volume": None, "page": None})
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, group)
    assert verdicts.identity.verdict == "verified"
    reason = verdicts.identity.reasons[0]
    assert "title and year agree" in reason and "first author agree" not in reason
    assert "the first author cannot be compared: the citation names an organisation" in reason
    # found by its title alone, the work is not confirmed: a same-titled work by anyone would agree as much
    by_title = group.model_copy(update={"DOI": None, "id": "ref:0123456789abcdef",
                                        "custom": RecordMeta(ref="0123456789abcdef")})
    verdicts = verify_citation(_title_searches(), SETTINGS, by_title)
    assert verdicts.identity.verdict == "inconclusive"
    said = " ".join(verdicts.identity.reasons)
    assert said.count("the first author cannot be compared: the citation names an organisation") == 2  # once an index


def test_a_comment_type_in_one_index_is_not_a_notice():
    commented = cited(custom=RecordMeta(publication_types=["Comment", "Journal Article"]))
    assert agreement(commented, cited())[0] == "same"


def test_verdicts_are_payloads_of_their_axis():
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, cited())
    for payload in (verdicts.identity, verdicts.status):
        assert VerificationPayload.model_validate(payload.model_dump()) == payload
    with pytest.raises(ValueError, match="not a verdict on the identity axis"):
        VerificationPayload(record_id=ADAK_DOI, axis="identity", verdict="retracted", refusal_grade=True)
    with pytest.raises(ValueError, match="refusal_grade must be true"):
        VerificationPayload(record_id=ADAK_DOI, axis="identity", verdict="mismatch", refusal_grade=False)


def test_pubmed_is_asked_only_by_pmid():
    record = cited(PMID="11206059")
    pubmed_down = httpx.Response(503)
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak(), pubmed_down), SETTINGS, record)
    assert [a.source for a in verdicts.identity.answers] == ["crossref", "openalex", "pubmed"]
    assert verdicts.identity.verdict == "inconclusive"  # two agree, but one index did not answer
    assert RecordMeta().updates == []


def test_a_retraction_of_a_work_found_only_in_part_says_nothing_of_the_work_cited():
    # A reference without identifiers; the title search finds a similar paper by other authors that is retracted.
    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))["message"]
    work["updated-by"] = [{"DOI": "10.1023/a:9999999999999", "type": "retraction", "label": "Retraction"}]
    listing = {"status": "ok", "message-type": "work-list", "message": {
        "total-results": 1, "items": [work], "items-per-page": 5, "query": {"start-index": 0, "search-terms": None}}}
    empty = {"meta": {"count": 0, "next_cursor": None}, "results": []}
    near = cited(title=ADAK_TITLE.replace("horseradish", "soybean"), doi=None, family="Banerjee")
    verdicts = verify_citation(serve(json_response(json.dumps(listing)), json_response(json.dumps(empty))),
                               SETTINGS, near)
    assert verdicts.identity.verdict == "inconclusive"
    assert verdicts.status.verdict == "inconclusive" and not verdicts.status.refusal_grade


def test_citing_a_notice_is_an_open_item_not_a_retraction():
    notice = cited(title="Expression of concern: " + ADAK_TITLE)
    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    work["message"]["title"] = ["Expression of concern: " + ADAK_TITLE]
    openalex = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    openalex["title"] = openalex["display_name"] = "Expression of concern: " + ADAK_TITLE
    verdicts = verify_citation(serve(json_response(json.dumps(work)), json_response(json.dumps(openalex))),
                               SETTINGS, notice)
    assert verdicts.identity.verdict == "verified"
    assert verdicts.status.verdict == "inconclusive" and "itself a notice" in verdicts.status.reasons[0]


def test_one_index_not_knowing_an_identifier_is_not_enough_to_call_it_unresolvable():
    verdicts = verify_citation(serve(not_found()), SETTINGS, cited(doi="10.5281/zenodo.1234567"), ("crossref",))
    assert verdicts.identity.verdict == "inconclusive"
    assert "a second must agree" in verdicts.identity.reasons[0]


def openalex_adak_titled(title: str) -> httpx.Response:
    work = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    work["title"] = work["display_name"] = title
    return json_response(json.dumps(work))


def test_indexes_disagreeing_on_what_one_doi_names_is_an_open_item_not_a_mismatch():
    # Crossref holds the work as cited under the DOI; OpenAlex links the same DOI to another work (a mislinked
    # or merged record). Nothing shows the citation wrong, so it is no refusal: a human decides which is right.
    other = openalex_adak_titled("Deep learning predicts object-in-context memory in rats")
    verdicts = verify_citation(serve(crossref_adak(), other), SETTINGS, cited())
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert "the indexes disagree on what DOI 10.1023/a:1007154515475 names" in verdicts.identity.reasons[0]
    assert [a.answer for a in verdicts.identity.answers] == ["found", "different-work"]
    # a typo in one index's title is still the work: both hold it, so it is verified
    typo = openalex_adak_titled(ADAK_TITLE.replace("peroxidase", "peroxidse"))
    assert verify_citation(serve(crossref_adak(), typo), SETTINGS, cited()).identity.verdict == "verified"


@pytest.mark.parametrize("opening", ["Retraction Note to: ", "Expression of Concern: "])
def test_a_doi_every_index_resolves_to_a_notice_is_still_a_mismatch_named_as_the_notice_it_is(opening):
    notice_title = opening + ADAK_TITLE
    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    work["message"]["title"] = [notice_title]
    verdicts = verify_citation(serve(json_response(json.dumps(work)), openalex_adak_titled(notice_title)),
                               SETTINGS, cited())
    assert verdicts.identity.verdict == "mismatch" and verdicts.identity.refusal_grade
    # notice_kind groups withdrawals and expressions of concern with retractions: the words say so, never
    # calling an expression of concern a retraction notice
    assert "it is a notice (retraction, withdrawal or expression of concern)" in verdicts.identity.reasons[0]


def test_a_pmid_pubmed_does_not_know_keeps_two_indexes_from_verifying():
    # Crossref and OpenAlex hold the work by its DOI, but PubMed, the one registry of PMIDs, knows no such PMID:
    # the citation gives a wrong identifier, so it is not the work as cited.
    empty = httpx.Response(200, content=b"<?xml version='1.0'?><PubmedArticleSet></PubmedArticleSet>",
                           headers={"content-type": "text/xml"})
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak(), empty), SETTINGS, cited(PMID="99999999"))
    assert [a.answer for a in verdicts.identity.answers] == ["found", "found", "not-found"]
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert "PubMed does not know PMID 99999999, which the citation gives" in verdicts.identity.reasons


@pytest.mark.parametrize("work_type", ["erratum", "retraction"])
def test_an_index_that_holds_a_notice_under_the_cited_doi_does_not_verify_the_work(work_type):
    # OpenAlex types a notice "erratum" or "retraction", often under the very title of the work it is about: a
    # notice is not the work cited, whatever its title says.
    work = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    work["type"] = work_type
    verdicts = verify_citation(serve(crossref_adak(), json_response(json.dumps(work))), SETTINGS, cited())
    assert verdicts.identity.verdict == "inconclusive"  # Crossref holds the work under the DOI: the indexes disagree
    openalex = next(a for a in verdicts.identity.answers if a.source == "openalex")
    assert openalex.answer == "different-work" and "it is a notice" in openalex.detail
    alone = verify_citation(serve(None, json_response(json.dumps(work))), SETTINGS, cited(), sources=("openalex",))
    assert alone.identity.verdict == "mismatch" and "it is a notice" in alone.identity.reasons[0]


@pytest.mark.parametrize("work_type", ["erratum", "retraction"])
def test_a_cited_record_an_index_types_a_notice_is_itself_a_notice(work_type):
    work = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    work["type"] = work_type
    notice_itself = openalex.work_to_record(work)  # as a review's records hold it, typed by OpenAlex
    assert notice(notice_itself) == {"erratum": "erratum", "retraction": "retraction"}[work_type]
    verdicts = verify_citation(serve(crossref_adak(), json_response(json.dumps(work))), SETTINGS, notice_itself,
                              sources=("crossref", "openalex"))
    assert verdicts.status.verdict == "inconclusive" and "itself a notice" in verdicts.status.reasons[0]


def title_search(crossref_items: list[dict], openalex_works: list[dict]) -> tuple[httpx.Response, httpx.Response]:
    listing = {"status": "ok", "message-type": "work-list", "message": {
        "total-results": len(crossref_items), "items": crossref_items, "items-per-page": 5,
        "query": {"start-index": 0, "search-terms": None}}}
    works = {"meta": {"count": len(openalex_works), "next_cursor": None}, "results": openalex_works}
    return json_response(json.dumps(listing)), json_response(json.dumps(works))


def adak_item() -> dict:
    return json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))["message"]


def adak_work() -> dict:
    return json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))


def undated(item: dict) -> dict:
    return {key: value for key, value in item.items() if key not in ("issued", "published-print", "published-online",
                                                                     "published", "created")}


@pytest.mark.parametrize(("crossref_item", "openalex_work", "citation", "unconfirmed"), [
    # the works found by the title give no first author: a same-titled work by anyone
    (lambda: {k: v for k, v in adak_item().items() if k != "author"}, lambda: dict(adak_work(), authorships=[]),
     lambda: cited(doi=None), "the first author cannot be compared: the index gives none"),
    # nor a year
    (lambda: undated(adak_item()), lambda: dict(adak_work(), publication_year=None, publication_date=None),
     lambda: cited(doi=None), "the year cannot be compared: the index gives none"),
    # a citation of a title alone: nothing but the title to go by
    (adak_item, adak_work, lambda: Record(id="ref:0123456789abcdef", title=ADAK_TITLE,
                                          custom=RecordMeta(ref="0123456789abcdef")),
     "the first author cannot be compared: the citation gives none"),
    # another paper of the same title by other authors, another year
    (adak_item, adak_work, lambda: cited(doi=None, family="Okonkwo", year=2015), "year cited as 2015, indexed as 2001"),
])
def test_a_work_found_by_its_title_alone_is_verified_only_when_first_author_and_year_agree(
        crossref_item, openalex_work, citation, unconfirmed):
    verdicts = verify_citation(serve(*title_search([crossref_item()], [openalex_work()])), SETTINGS, citation())
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert [a.answer for a in verdicts.identity.answers] == ["partial", "partial"]
    assert all(unconfirmed in reason for reason in verdicts.identity.reasons)


def test_a_title_search_finding_the_preprint_beside_the_journal_version_verifies_the_journal_version():
    preprint = dict(adak_item(), DOI="10.1101/2000.12.01.000001", type="posted-content", **{"container-title": []})
    preprint.pop("page", None)
    verdicts = verify_citation(serve(*title_search([preprint, adak_item()], [adak_work()])), SETTINGS,
                               cited(doi=None, container_title="Molecular and Cellular Biochemistry"))
    assert verdicts.identity.verdict == "verified"
    assert verdicts.answers[0].found.DOI == ADAK_DOI  # the journal version, though the preprint came first
    alone = verify_citation(serve(*title_search([preprint], [adak_work()])), SETTINGS,
                            cited(doi=None, container_title="Molecular and Cellular Biochemistry"))
    assert alone.identity.verdict == "inconclusive"
    assert "the work found is a preprint, the work cited is not" in alone.identity.reasons[0]


def crossref_adak_without(*keys: str) -> httpx.Response:
    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    for key in keys:
        work["message"].pop(key, None)
    return json_response(json.dumps(work))


def openalex_adak_without(*keys: str) -> httpx.Response:
    work = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    for key in keys:
        work.pop(key, None)
    return json_response(json.dumps(work))


CROSSREF_DATES = ("published-print", "published-online", "issued", "published", "created", "deposited", "indexed")


@pytest.mark.parametrize(("citation", "crossref_response", "openalex_response", "agreed", "not_compared"), [
    (lambda: cited().model_copy(update={"author": []}), crossref_adak, openalex_adak, "title and year agree",
     "the citation gives no first author to compare"),
    (lambda: cited().model_copy(update={"issued": None}), crossref_adak, openalex_adak, "title and first author agree",
     "the citation gives no year to compare"),
    (lambda: cited().model_copy(update={"author": [], "issued": None}), crossref_adak, openalex_adak, "title agrees",
     "the citation gives no first author and no year to compare"),
    (cited, lambda: crossref_adak_without("author"), lambda: openalex_adak_without("authorships"),
     "title and year agree", "the index gives no first author to compare"),
    (cited, lambda: crossref_adak_without(*CROSSREF_DATES),
     lambda: openalex_adak_without("publication_date", "publication_year"),
     "title and first author agree", "the index gives no year to compare"),
])
def test_a_work_verified_by_its_identifier_says_only_what_was_compared_and_agreed(
        citation, crossref_response, openalex_response, agreed, not_compared):
    # The DOI backs the match, so a citation (or an index) without an author or a year is still verified; the
    # reason names what agreed and what could not be compared, never an agreement that was not checked.
    verdicts = verify_citation(serve(crossref_response(), openalex_response()), SETTINGS, citation())
    assert verdicts.identity.verdict == "verified"
    [reason] = verdicts.identity.reasons
    assert reason.count(f"resolves to a work whose {agreed} with the citation's, {not_compared}") == 2
    assert "first author and year agree" not in reason


def test_a_work_verified_with_everything_compared_says_title_first_author_and_year_agree():
    [reason] = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, cited()).identity.reasons
    assert reason == ("Crossref and OpenAlex hold the work as cited: in Crossref, DOI 10.1023/a:1007154515475 resolves "
                      "to a work whose title, first author and year agree with the citation's; in OpenAlex, DOI "
                      "10.1023/a:1007154515475 resolves to a work whose title, first author and year agree with the "
                      "citation's")


def test_openalex_flagging_a_work_crossref_lists_reinstated_is_an_open_item_naming_both():
    """Crossref lists a retraction (2019) and a later reinstatement (2021): the work stands. OpenAlex still flags it
    retracted, giving no date: it made the work retracted, refusal grade, though it may be the very retraction
    the reinstatement lifted. Now neither silently: an open item naming both. A retraction Crossref dates after the
    reinstatement (retracted again) is still refusal grade."""
    crossref_work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    crossref_work["message"]["updated-by"] = [
        {"DOI": "10.1023/a:9999999999999", "type": "retraction", "updated": {"date-parts": [[2019, 3, 1]]}},
        {"DOI": "10.1023/a:8888888888888", "type": "reinstatement", "updated": {"date-parts": [[2021, 6, 30]]}}]
    openalex_work = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    openalex_work["is_retracted"] = True
    verdicts = verify_citation(serve(json_response(json.dumps(crossref_work)), json_response(json.dumps(openalex_work))),
                               SETTINGS, cited())
    assert verdicts.status.verdict == "inconclusive" and not verdicts.status.refusal_grade
    assert "OpenAlex marks the work retracted, giving no date" in verdicts.status.reasons
    assert ("Crossref lists a reinstatement (10.1023/a:8888888888888, 2021-06-30, lifting a retraction of "
            "2019-03-01)") in verdicts.status.reasons
    # Crossref alone, reinstated: current
    verdicts = verify_citation(serve(json_response(json.dumps(crossref_work)), openalex_adak()), SETTINGS, cited())
    assert verdicts.status.verdict == "current"
    crossref_work["message"]["updated-by"].append(
        {"DOI": "10.1023/a:7777777777777", "type": "retraction", "updated": {"date-parts": [[2023, 1, 5]]}})
    verdicts = verify_citation(serve(json_response(json.dumps(crossref_work)), json_response(json.dumps(openalex_work))),
                               SETTINGS, cited())
    assert verdicts.status.verdict == "retracted" and verdicts.status.notice == "10.1023/a:7777777777777"


def holding(source: str, **meta) -> Answer:
    """An index's answer holding the work cited (Adak et al.), with what it lists against it."""
    found = cited().model_copy(update={"custom": RecordMeta(**meta)})
    return Answer(source, f"DOI {ADAK_DOI}", False, SourceOutcome(source=source, status="ok", records=[found]), found,
                  "same")


def test_a_reinstatement_two_indexes_list_by_its_doi_and_by_its_pmid_is_said_once():
    """Crossref names a reinstatement by its DOI, PubMed by its PMID (and the DOI it links): one notice, which the
    reasons said once per index, the second time without its date. Now once, naming both indexes and all either
    gives (`with_lifted`); and the date one listing gives is the notice's, so a retraction after it stands."""
    by_doi = Reinstatement(doi="10.1023/a:8888888888888", date=[2021, 6, 30], retracted_on=[2019, 3, 1])
    by_pmid = Reinstatement(pmid="34000001", doi="10.1023/a:8888888888888")
    answers = [holding("crossref", reinstatements=[by_doi]), holding("openalex", retracted=True),
               holding("pubmed", reinstatements=[by_pmid])]
    status = status_verdict(cited(), answers)
    assert status.verdict == "inconclusive"
    assert [reason for reason in status.reasons if "reinstatement (" in reason] == [
        "Crossref and PubMed list a reinstatement (10.1023/a:8888888888888, 2021-06-30, lifting a retraction of "
        "2019-03-01)"]
    # named by its PMID alone, in one index only, it is said by it
    status = status_verdict(cited(), [holding("openalex", retracted=True),
                                      holding("pubmed", reinstatements=[Reinstatement(pmid="34000001")])])
    assert "PubMed lists a reinstatement (PMID 34000001)" in status.reasons
    # retracted again in 2023, after the reinstatement Crossref dates: PubMed's undated listing of that very notice
    # leaves no doubt about which came last
    again = Update(kind="retraction", doi="10.1023/a:7777777777777", date=[2023, 1, 5])
    answers[0] = holding("crossref", reinstatements=[by_doi], updates=[again], retracted=True)
    status = status_verdict(cited(), answers[:1] + answers[2:])
    assert status.verdict == "retracted" and status.notice == "10.1023/a:7777777777777"


def test_a_dated_retraction_beside_a_reinstatement_giving_no_date_is_an_open_item_as_the_pages_say():
    """Crossref lists a retraction dated 2022 and a reinstatement giving no date: which came last is unknown. The
    pages call the work's retraction disputed (`retraction_disputed`); verification said retracted, refusal grade.
    Now an open item naming both, as the pages say."""
    crossref_work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    crossref_work["message"]["updated-by"] = [
        {"DOI": "10.1023/a:9999999999999", "type": "retraction", "updated": {"date-parts": [[2022, 1, 5]]}},
        {"DOI": "10.1023/a:8888888888888", "type": "reinstatement"}]
    verdicts = verify_citation(serve(json_response(json.dumps(crossref_work)), openalex_adak()), SETTINGS, cited())
    assert verdicts.status.verdict == "inconclusive" and not verdicts.status.refusal_grade
    assert "Crossref lists a retraction (10.1023/a:9999999999999)" in verdicts.status.reasons
    assert verdicts.status.reasons[-1] == ("a reinstatement without a date may have lifted the retraction: a human "
                                           "decides whether it stands")


def test_a_reinstatement_notice_is_named_as_one_never_as_a_retraction():
    """A Crossref reinstatement notice is a notice (`notice` files it with retractions, as no study), but the
    reasons named it "a notice (retraction, withdrawal or expression of concern)": a reader took the notice that
    lifts a retraction for one. Now a notice is named by its own kind where its types or `update-to` say it."""
    from sitegen.sources import crossref

    work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    work["message"]["update-to"] = [{"DOI": "10.1000/reinstated", "type": "reinstatement",
                                     "updated": {"date-parts": [[2021, 6, 30]]}}]
    reinstatement = crossref.work_to_record(work["message"])
    assert notice(reinstatement) == "retraction"
    verdicts = verify_citation(serve(json_response(json.dumps(work))), SETTINGS, reinstatement, ("crossref",))
    assert verdicts.status.verdict == "inconclusive"
    assert verdicts.status.reasons[0].startswith("the record cited is itself a notice (reinstatement): ")
    verdicts = verify_citation(serve(json_response(json.dumps(work))), SETTINGS, cited(), ("crossref",))
    assert "it is a notice (reinstatement)" in verdicts.identity.reasons[0]
    work["message"]["update-to"].append({"DOI": "10.1000/concern", "type": "expression_of_concern"})
    verdicts = verify_citation(serve(json_response(json.dumps(work))), SETTINGS, cited(), ("crossref",))
    assert "it is a notice (expression of concern and reinstatement)" in verdicts.identity.reasons[0]
    # an index's own type says the kind too; a title alone says no finer than its family
    openalex_work = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    openalex_work["type"] = "retraction"
    verdicts = verify_citation(serve(None, json_response(json.dumps(openalex_work))), SETTINGS, cited(),
                               sources=("openalex",))
    assert "it is a notice (retraction)" in verdicts.identity.reasons[0]
    openalex_work["type"] = "erratum"
    verdicts = verify_citation(serve(None, json_response(json.dumps(openalex_work))), SETTINGS, cited(),
                               sources=("openalex",))
    assert "it is a notice (correction)" in verdicts.identity.reasons[0]


def test_a_notice_on_a_work_found_by_its_title_alone_reaches_the_human_who_confirms_it():
    """A title-only match that leaves the first author unconfirmed is not the work (inconclusive), but its
    retraction is named in the status reasons: dropped with the work, a human confirming the match would never
    learn of it (before the title rule, this citation was refused as retracted)."""
    retracted = dict(adak_item(), **{"updated-by": [{"DOI": "10.1023/a:9999999999999", "type": "retraction",
                                                     "label": "Retraction", "updated": {"date-parts": [[2003, 5, 1]]}}]})
    title_only = Record(id="ref:0123456789abcdef", title=ADAK_TITLE, custom=RecordMeta(ref="0123456789abcdef"))
    verdicts = verify_citation(serve(*title_search([retracted], [adak_work()])), SETTINGS, title_only)
    assert verdicts.identity.verdict == "inconclusive" and verdicts.status.verdict == "inconclusive"
    assert ("Crossref holds a work of that title not confirmed as the one cited, which lists a retraction "
            "(10.1023/a:9999999999999): a human decides whether it is the work") in verdicts.status.reasons
    # OpenAlex's work of that title lists nothing: no reason is made up for it
    assert not any(reason.startswith("OpenAlex holds") for reason in verdicts.status.reasons)


@pytest.mark.parametrize("translation", [
    "[The role of arginine and histidine in iodide oxidation by horseradish peroxidase].",  # MEDLINE's brackets
    # spaces around the brackets (an export's, a manuscript's) are none of the title
    " [The role of arginine and histidine in iodide oxidation by horseradish peroxidase]. ",
    "The role of arginine and histidine in iodide oxidation by horseradish peroxidase [Article in German]",
])
def test_a_title_marked_a_translation_beside_the_original_is_for_a_human_never_a_mismatch(translation):
    # MEDLINE gives a non-English work's title translated in brackets, Crossref in the work's own language: the
    # two titles share no words, but the first author, the year and the journal are the work's
    original = cited(title="Bedeutung basischer Aminosäuren im aktiven Zentrum für die Oxidation von Iodid",
                     container_title="Molecular and Cellular Biochemistry")
    verdict, details = agreement(cited(title=translation, container_title="Mol Cell Biochem"), original)
    assert verdict == "unclear" and "one marked a translation" in details[-1]
    assert agreement(original, cited(title=translation))[0] == "unclear"  # either side may be the translation
    # a translation still has to agree on the rest: another first author is another work
    assert agreement(cited(title=translation, family="Okonkwo"), original)[0] == "different"
    unmarked = translation.replace("[", "").replace("]", "").replace(" Article in German", "")
    assert agreement(cited(title=unmarked), original)[0] == "different"


@pytest.mark.parametrize("title", [" [Effet du sel chez le rat].", "[Effet du sel chez le rat]. ",
                                   "\u00a0[Effet du sel chez le rat].", "\t[Effet du sel chez le rat]. [Review]"])
def test_spaces_around_a_bracketed_title_keep_it_marked_a_translation(title):
    from sitegen.records.titles import matched_title, translated
    assert translated(title) and matched_title(title) == "effet du sel chez le rat"


def chapter_item() -> dict:
    return json.loads(body("crossref/crossref_work_10.1007_978-3-319-66787-4_9.json"))["message"]


def envelope(item: dict) -> dict:
    return dict(json.loads(body("crossref/crossref_work_10.1007_978-3-319-66787-4_9.json")), message=item)


CHAPTER_DOI = "10.1007/978-3-319-66787-4_9"
BOOK_TITLE = "Cryptographic Hardware and Embedded Systems – CHES 2017"


def test_a_chapter_doi_given_for_its_book_and_a_book_doi_for_its_chapter_are_open_items_never_mismatches():
    chapter = chapter_item()
    book_cited = cited(title=BOOK_TITLE, doi=CHAPTER_DOI, family="Fischer", year=2017)
    verdicts = verify_citation(serve(json_response(json.dumps(envelope(chapter)))), SETTINGS, book_cited, sources=("crossref",))
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert [a.answer for a in verdicts.identity.answers] == ["partial"]
    assert "names a part of the work cited" in verdicts.identity.reasons[0]
    # the chapter's standing is not the book's
    assert verdicts.status.verdict == "inconclusive"
    book = dict(chapter, DOI="10.1007/978-3-319-66787-4", type="book", title=[BOOK_TITLE], page=None,
                author=[], **{"container-title": ["Lecture Notes in Computer Science"]})
    chapter_cited = cited(title=chapter["title"][0], doi="10.1007/978-3-319-66787-4", family="Anceau", year=2017,
                          container_title=BOOK_TITLE)
    verdicts = verify_citation(serve(json_response(json.dumps(envelope(book)))), SETTINGS, chapter_cited, sources=("crossref",))
    assert verdicts.identity.verdict == "inconclusive" and verdicts.status.verdict == "inconclusive"
    assert "names the work the cited part appears in" in verdicts.identity.reasons[0]
    # a citation of another book under the chapter's DOI is still a mismatch
    other = cited(title="Advances in Cryptology – CRYPTO 2017", doi=CHAPTER_DOI, family="Katz", year=2017)
    verdicts = verify_citation(serve(json_response(json.dumps(envelope(chapter)))), SETTINGS, other, sources=("crossref",))
    assert verdicts.identity.verdict == "mismatch"


PREPRINT_DOI = "10.1101/2024.04.01.587366"


@pytest.mark.parametrize(("journal", "answer"), [
    ("Cell Genomics", "partial"),  # the journal version cited under its preprint's DOI: another version
    ("bioRxiv", "found"),  # the preprint cited as the preprint
    (None, "found"),  # no journal named: the DOI says which version is meant
])
def test_a_preprint_doi_given_for_the_journal_version_is_never_verified_as_it(journal, answer):
    item = json.loads(body("crossref/crossref_work_10.1101_2024.04.01.587366.json"))
    citation = cited(title=item["message"]["title"][0], doi=PREPRINT_DOI, family="Herger", year=2025,
                     container_title=journal)
    verdicts = verify_citation(serve(json_response(json.dumps(item))), SETTINGS, citation, sources=("crossref",))
    [found] = verdicts.identity.answers
    assert found.answer == answer and verdicts.identity.verdict == "inconclusive"
    if answer == "partial":
        assert "the citation names a journal (Cell Genomics), the work indexed is a preprint" in found.detail
        assert verdicts.status.verdict == "inconclusive"  # the preprint's standing is not the journal version's


def test_openalex_answering_a_doi_with_another_work_is_an_answer_judged_not_an_outage():
    # OpenAlex answers a lookup of a preprint's DOI with the journal version it merged the preprint into (a work
    # that does not carry the DOI asked). That is an answer, the same when asked again: never "OpenAlex did not
    # answer", never a negative, never the work as cited.
    preprint = cited(doi="10.21203/rs.3.rs-12345/v1", container_title="Research Square")
    verdicts = verify_citation(serve(not_found(), openalex_adak()), SETTINGS, preprint)
    openalex_answer = verdicts.answers[1]
    assert openalex_answer.answered and openalex_answer.agreement == "related"
    assert not openalex_answer.holds_the_work and not openalex_answer.negative
    assert [a.answer for a in verdicts.identity.answers][1] == "partial"
    reasons = " ".join(verdicts.identity.reasons)
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert "did not answer" not in reasons and "did not answer" not in " ".join(verdicts.status.reasons)
    assert ("OpenAlex answers DOI 10.21203/rs.3.rs-12345/v1 with another record, 10.1023/a:1007154515475, not "
            "carrying it") in reasons
    assert "horseradish peroxidase" in reasons  # names what OpenAlex gave
    assert verdicts.status.verdict == "inconclusive"


def test_crossref_answering_a_doi_with_another_work_is_an_answer_judged_not_an_outage():
    # Crossref answers an alias DOI with the work under its primary DOI (a recorded work): an answer, the same when
    # asked again, judged as OpenAlex's is (`agreement`): never "Crossref did not answer", a negative, or the work.
    alias = cited(doi="10.5555/alias.of.adak")
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, alias, sources=("crossref",))
    [answer] = verdicts.answers
    assert answer.answered and answer.agreement == "related" and answer.instead
    assert not answer.holds_the_work and not answer.negative
    assert [a.answer for a in verdicts.identity.answers] == ["partial"]  # not "no-answer": no retry settles it
    reasons = " ".join(verdicts.identity.reasons)
    assert "did not answer" not in reasons and verdicts.identity.verdict == "inconclusive"
    assert "Crossref answers DOI 10.5555/alias.of.adak with another record, 10.1023/a:1007154515475" in reasons
    # an unrelated work under it is an open item, never a mismatch: the index's mix-up, not the citation's
    other = cited(title="Deep learning predicts object-in-context memory in rats", family="Smith", year=2020,
                  doi="10.5555/alias.of.adak")
    verdicts = verify_citation(serve(crossref_adak()), SETTINGS, other, sources=("crossref",))
    assert verdicts.answers[0].agreement == "unclear" and verdicts.identity.verdict == "inconclusive"
    assert not verdicts.identity.refusal_grade


def test_pubmed_answering_a_pmid_with_another_article_is_an_answer_judged_not_an_outage():
    nejm = (FIXTURES / "pubmed" / "pubmed-29768149.xml").read_bytes()
    citation = cited(PMID="9997")
    verdicts = verify_citation(serve(pubmed=httpx.Response(200, content=nejm, headers={"content-type": "text/xml"})),
                               SETTINGS, citation, sources=("pubmed",))
    [answer] = verdicts.answers
    assert answer.answered and answer.instead and answer.agreement == "unclear"  # another article altogether
    assert verdicts.identity.answers[0].answer == "partial" and verdicts.identity.verdict == "inconclusive"
    assert "PubMed answers PMID 9997 with another record" in " ".join(verdicts.identity.reasons)


def test_an_openalex_id_merged_into_the_record_carrying_the_doi_cited_is_the_work():
    # The record cited keeps an OpenAlex id OpenAlex has since merged into the record of the work under its DOI:
    # that record carries the DOI cited, so it is the work as cited, held by OpenAlex.
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS,
                               cited(custom=RecordMeta(openalex="W2741809807")))
    assert verdicts.answers[1].asked == "OpenAlex id W2741809807" and verdicts.answers[1].holds_the_work
    assert verdicts.identity.verdict == "verified" and verdicts.status.verdict == "current"
    assert "OpenAlex answers OpenAlex id W2741809807 with W1554322594, merged with it, which carries the DOI cited" in (
        verdicts.identity.answers[1].detail)


def test_openalex_answering_a_doi_with_an_unrelated_work_is_an_open_item_not_a_mismatch():
    # An id OpenAlex reassigned to an unrelated work shows OpenAlex's mix-up, not that the DOI names that work.
    other = cited(title="Deep learning predicts object-in-context memory in rats", family="Smith", year=2020,
                  doi="10.1234/unrelated.2020")
    verdicts = verify_citation(serve(not_found(), openalex_adak()), SETTINGS, other)
    assert verdicts.answers[1].agreement == "unclear" and not verdicts.answers[1].holds_the_work
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert verdicts.resolved is None
    # its standing is not the work's: a retraction of the other work reaches a human, never decides
    retracted = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    retracted["is_retracted"] = True
    verdicts = verify_citation(serve(not_found(), json_response(json.dumps(retracted))), SETTINGS, other)
    assert verdicts.status.verdict == "inconclusive"


@pytest.mark.parametrize("written", ["ADAK SRIKANTA", "SRIKANTA ADAK"])
def test_a_first_author_in_capitals_of_unknown_order_agrees_read_either_way(written):
    # a name in capitals without a comma does not say which word is the family name (`names.order_unknown`): kept
    # whole as a literal, it still agrees with the index's "Adak, S." in either order, and claims no discrepancy
    record = cited().model_copy(update={"author": [CslName(literal=written)]})
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, record)
    assert verdicts.identity.verdict == "verified"
    assert "first author cited as" not in " ".join(verdicts.identity.reasons)


@pytest.mark.parametrize(("family", "verdict"), [
    ("Адак", "verified"),  # the Russian spelling of the name: a standard transliteration of it is "Adak"
    ("Αδάκ", "verified"),  # the Greek
    ("Иванов", "inconclusive"),  # another name, but in another script: a human compares, no discrepancy is claimed
    ("阿达克", "inconclusive"),  # Chinese characters: no transliteration is ever claimed to agree
    ("アダク", "inconclusive"),  # Japanese kana
])
def test_a_first_author_written_in_another_script_agrees_only_by_transliteration(family, verdict):
    """A reference list in Russian, Greek, Chinese or Japanese writes the authors in its own script where the indexes
    give them in Latin letters (real Crossref and OpenAlex responses for Adak et al. 2001): one name in two scripts
    was called a discrepancy ("first author cited as иванов, indexed as adak"), and with the title in that script too,
    the citation was a mismatch, though nothing said the work is another."""
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, cited(family=family))
    assert verdicts.identity.verdict == verdict and not verdicts.identity.refusal_grade
    said = " ".join(verdicts.identity.reasons)
    assert "first author cited as" not in said
    if verdict == "inconclusive":
        assert "the first author cannot be compared: the citation writes it in " in said and f"({family})" in said
        assert verdicts.status.verdict == "current"  # an index holding the DOI still holds the work for its standing
    else:
        assert "first author" in said


def test_a_first_author_in_another_script_is_never_verified_whatever_the_later_authors():
    # Later authors the index lists otherwise make the lists disagree ("none", not "unknown"): the first author,
    # in Chinese characters, still cannot be compared, and is never taken to agree.
    citation = cited(family="阿达克").model_copy(update={"author": [CslName(family="阿达克"),
                                                                  CslName(family="Okonkwo", given="N")]})
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, citation)
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert "the first author cannot be compared" in " ".join(verdicts.identity.reasons)


@pytest.mark.parametrize("family", ["Адак", "Иванов", "阿达克"])
def test_a_title_in_another_script_is_an_open_item_not_a_mismatch(family):
    """The citation's title in Russian (or Chinese), the index's in English: the two share no letter, so their
    similarity says nothing of whether they are one work's. An open item naming both, never a mismatch."""
    title = ("Существенная роль остатка аргинина активного центра в связывании иодида" if family != "阿达克"
             else "活性位点精氨酸残基在碘化物结合中的重要作用")
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, cited(title=title, family=family))
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert "so they cannot be compared" in " ".join(verdicts.identity.reasons)
    # a made-up title in the index's own script is still another work
    made_up = cited(title="Deep learning predicts object-in-context memory in rats", family=family)
    assert verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, made_up).identity.verdict == "mismatch"


def test_an_index_answering_with_a_work_without_a_title_is_no_negative():
    # Both indexes hold a work under the DOI but give it no title (real answers, the title removed): an answer no
    # record can be made of, neither the work found nor "not found", so never unresolvable
    crossref_work = json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))
    del crossref_work["message"]["title"]
    openalex_work = json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))
    del openalex_work["title"], openalex_work["display_name"]
    verdicts = verify_citation(serve(json_response(json.dumps(crossref_work)), json_response(json.dumps(openalex_work))),
                               SETTINGS, cited())
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert [a.answer for a in verdicts.identity.answers] == ["no-answer", "no-answer"]
    assert all("which has no title" in a.detail for a in verdicts.identity.answers)
    assert all("which has no title" in reason and "never a negative" in reason for reason in verdicts.identity.reasons)


@pytest.mark.parametrize("placeholder", ["Anonymous", "[No authors listed]"])
def test_a_citation_whose_author_is_a_placeholder_is_compared_as_one_naming_no_author(placeholder):
    """"Anonymous" names no one: neither the indexed first author's discrepancy nor, for two anonymous records, an
    agreement. It is checked as a citation without authors is."""
    anonymous = cited().model_copy(update={"author": [CslName(literal=placeholder)]})
    unnamed = cited().model_copy(update={"author": []})
    assert agreement(anonymous, cited()) == agreement(unnamed, cited()) == ("same", ["title similarity 100/100"])
    other_year = anonymous.model_copy(update={"issued": CslDate(**{"date-parts": [[2009]]})})
    assert agreement(other_year, anonymous) == agreement(other_year.model_copy(update={"author": []}), unnamed)


def test_a_title_search_asks_for_no_placeholder_author():
    # the stroke set's PsycINFO record, its placeholder split as a name: not words of the work to search for
    from sitegen.verify.identity import _title_query

    placeholder = cited(doi=None).model_copy(update={"author": [CslName(family="No authorship", given="indicated")]})
    assert _title_query(placeholder) == f"{ADAK_TITLE} 2001"
    assert _title_query(cited(doi=None)) == f"{ADAK_TITLE} Adak 2001"


def test_a_pmid_naming_the_journal_version_pubmed_states_of_the_preprint_cited_is_no_mismatch():
    # PubMed's eLife article (real) states "Update of" its medRxiv preprint, by DOI and PMID. A citation of the
    # preprint (its title made up here: a journal often retitles a preprint) giving the article's PMID names another
    # version of the study cited, as PubMed itself says: an open item, never a refusal. Without an identifier PubMed
    # states, the retitled article stays another work.
    elife = httpx.Response(200, content=(FIXTURES / "pubmed" / "pubmed-39737640-excerpt.xml").read_bytes(),
                           headers={"content-type": "text/xml"})
    preprint = cited(title="Tofacitinib for immune dysregulation in adults with trisomy 21: an open-label trial",
                     doi="10.1101/2024.06.13.24308783", family="Rachubinski", year=2024, PMID="39737640",
                     container_title="medRxiv")
    verdicts = verify_citation(serve(pubmed=elife), SETTINGS, preprint, sources=("pubmed",))
    [answer] = verdicts.answers
    assert answer.agreement == "related" and not answer.holds_the_work
    assert verdicts.identity.verdict == "inconclusive" and not verdicts.identity.refusal_grade
    assert "the index states the two are versions of one study" in verdicts.identity.answers[0].detail
    assert verdicts.status.verdict == "inconclusive"  # the article's standing is not the preprint's
    unstated = preprint.model_copy(update={"DOI": "10.1101/2024.06.13.99999999"})
    verdicts = verify_citation(serve(pubmed=elife), SETTINGS, unstated, sources=("pubmed",))
    assert verdicts.identity.verdict == "mismatch"


@pytest.mark.parametrize(("field", "said"), [
    ("pmid = {11234, 11235}", "pmid '11234, 11235' is not a valid PMID"),  # an identifier sitegen cannot read
    ("year = {2999}", "year '2999' is not a year"),
])
def test_an_entry_sitegen_could_not_read_whole_is_never_verified_as_cited(tmp_path, field, said):
    # Two indexes hold the work under its DOI, but the entry also gives what sitegen could not read and left out of
    # its record: that was never checked, so the entry is an open item saying so, in `verify --bib` as in the loop.
    from sitegen.verify.identity import with_unread
    from sitegen.verify.run import bib_records

    bib = tmp_path / "refs.bib"
    bib.write_text(f"@article{{adak,\n  title = {{{ADAK_TITLE}}},\n  author = {{Adak, S.}},\n  doi = {{{ADAK_DOI}}},\n"
                   f"  {field}\n}}\n", encoding="utf-8")
    [entry] = bib_records(bib)
    assert entry.notes and said in entry.notes[0], entry.notes
    verdicts = verify_citation(serve(crossref_adak(), openalex_adak()), SETTINGS, entry.record,
                               sources=("crossref", "openalex"))
    assert verdicts.identity.verdict == "verified"  # on what was read
    identity = with_unread(verdicts.identity, entry.notes)
    assert identity.verdict == "inconclusive" and not identity.refusal_grade
    assert identity.reasons[0].startswith(f"the entry's {said}") and "was never checked" in identity.reasons[0]
    # what reading it said of anything identity does not compare changes nothing
    assert with_unread(verdicts.identity, ["title: 1 control character replaced by spaces",
                                           "url 'javascript:x' is not a web address; left out"]) == verdicts.identity
