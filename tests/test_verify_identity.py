"""Axes (a) identity and (b) status on real recorded responses: the four identity verdicts, the status of a
real correction, a retraction built from the real Crossref shape, and failures that are never negatives."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import httpx
import pytest

from sitegen.records.model import CslDate, CslName, Record, RecordMeta
from sitegen.review.models import VerificationPayload
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import SnapshotStore
from sitegen.verify.identity import agreement, verify_citation
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


def test_a_reference_without_identifiers_is_found_by_title():
    listing = {"status": "ok", "message-type": "work-list", "message": {
        "total-results": 1, "items": [json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))["message"]],
        "items-per-page": 5, "query": {"start-index": 0, "search-terms": None}}}
    openalex_list = {"meta": {"count": 1, "next_cursor": None},
                     "results": [json.loads(body("openalex/openalex_work_doi_10.1023_a_1007154515475.json"))]}
    verdicts = verify_citation(serve(json_response(json.dumps(listing)), json_response(json.dumps(openalex_list))),
                               SETTINGS, cited(doi=None))
    assert verdicts.identity.verdict == "verified"
    assert all(a.asked.startswith("title") for a in verdicts.identity.answers)


def test_a_title_search_finding_only_other_works_is_not_a_mismatch():
    listing = {"status": "ok", "message-type": "work-list", "message": {
        "total-results": 1, "items": [json.loads(body("crossref/crossref_work_10.1023_a_1007154515475.json"))["message"]],
        "items-per-page": 5, "query": {"start-index": 0, "search-terms": None}}}
    empty = {"meta": {"count": 0, "next_cursor": None}, "results": []}
    verdicts = verify_citation(serve(json_response(json.dumps(listing)), json_response(json.dumps(empty))),
                               SETTINGS, cited(title="A made-up study of rodent memory", doi=None, family="Nobody"))
    assert verdicts.identity.verdict == "unresolvable"
    assert "closest" in (verdicts.identity.answers[0].detail or "")


@pytest.mark.parametrize("change, expected", [
    ({"title": ADAK_TITLE.upper() + "."}, "same"),  # case and punctuation are not a difference
    ({"year": 2009}, "unclear"),  # the year is wrong: a human looks
    ({"family": "Banerjee"}, "unclear"),  # the first author is not the one indexed
    ({"title": "An essential role of active site arginine residue in iodide binding"}, "unclear"),
    ({"title": "Retraction: " + ADAK_TITLE}, "different"),  # a notice is not the work
])
def test_agreement_of_a_citation_with_the_indexed_work(change, expected):
    indexed = cited()
    assert agreement(cited(**change), indexed)[0] == expected


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
