"""Crossref client on real recorded responses (habanero and CoLRev recordings of api.crossref.org)."""

from __future__ import annotations

import copy
import gzip
import itertools
import json

import httpx
import pytest
import yaml
from conftest import FIXTURES
from http_mocks import Call, fetcher, json_response

from sitegen.records.identity import deduplicate
from sitegen.records.matching import classify, record_work
from sitegen.records.model import TITLE_LIMIT, Record, StatedVersion
from sitegen.records.notices import notice_kind
from sitegen.sources import crossref
from sitegen.sources.base import Unreadable, Untitled
from sitegen.sources.settings import SourceSettings

DIR = FIXTURES / "crossref"
SETTINGS = SourceSettings(contact_email="team@example.org", crossref_plus_token="plus-secret-token")
WORK = (DIR / "crossref_work_10.1371_journal.pone.0033693.json").read_bytes()
NOT_FOUND = (DIR / "crossref_work_404.txt").read_bytes()
ECOLOGY = (DIR / "crossref_works_query_ecology_rows2.json").read_bytes()
WIDGET = (DIR / "crossref_works_query_widget_cursor_star.json").read_bytes()
PLOS = json.loads((DIR / "crossref_prefix_10.1371_works_with_update-to_updated-by.json").read_bytes())["message"]["items"]


def single(name: str) -> dict:
    return json.loads((DIR / name).read_bytes())["message"]


def plos(doi: str) -> dict:
    return copy.deepcopy(next(item for item in PLOS if item["DOI"] == doi))


def cassette_bodies(name: str) -> list[bytes]:
    """Response bodies of a vcrpy cassette, gunzipped where they were stored gzipped."""
    interactions = yaml.safe_load((DIR / name).read_text())["interactions"]
    bodies = [i["response"]["body"]["string"] for i in interactions]
    return [gzip.decompress(b) if isinstance(b, bytes) and b[:2] == b"\x1f\x8b" else b for b in bodies]


def widget_complete() -> bytes:
    """The real widget page with total-results set to the 20 items it holds (built: no complete real list exists)."""
    envelope = json.loads(WIDGET)
    envelope["message"]["total-results"] = len(envelope["message"]["items"])
    return json.dumps(envelope).encode()


FAULT_CALLS = {
    "crossref-search": Call(crossref, lambda f: crossref.search(f, SETTINGS, {"query.bibliographic": "widget"}),
                            widget_complete(), "application/json"),
    "crossref-lookup": Call(crossref, lambda f: crossref.lookup(f, SETTINGS, "10.1371/journal.pone.0033693"),
                            WORK, "application/json"),
}


def test_search_parses_a_real_list_response():
    fetch, seen, _ = fetcher(lambda request: json_response(ECOLOGY))
    settings = SETTINGS.model_copy(update={"max_records": 2})
    outcome = crossref.search(fetch, settings, {"query": "ecology"})
    assert outcome.status == "ok" and outcome.total == 586628
    assert [r.id for r in outcome.records] == ["10.1093/obo/9780199830060-0238", "10.1093/obo/9780199830060-0023"]
    chemical = outcome.records[1]
    assert chemical.type == "entry" and chemical.custom.publication_types == ["reference-entry"]
    assert chemical.container_title == "Ecology" and chemical.issued.date_parts == [[2012, 5, 23]]
    assert chemical.author[0].family == "Kessler" and chemical.author[0].given == "André"
    assert chemical.abstract.startswith("“Ours is a world of sights and sounds.") and "<p>" not in chemical.abstract
    assert chemical.URL == "https://doi.org/10.1093/obo/9780199830060-0023"
    assert "only the first 2 of 586628 were read" in outcome.warnings[0]
    assert outcome.truncated and not outcome.complete
    request = seen.requests[0]
    params = dict(request.url.params)
    assert params == {"query": "ecology", "rows": "2", "cursor": "*", "mailto": "team@example.org"}
    assert request.headers["crossref-plus-api-token"] == "Bearer plus-secret-token"
    # the contact address and the token reach Crossref, but never what is reported as executed
    assert outcome.executed_query == ["GET https://api.crossref.org/works?query=ecology&rows=2&cursor=%2A"]
    assert "example.org" not in json.dumps(outcome.model_dump()) and "plus-secret" not in json.dumps(outcome.model_dump())


def test_no_credentials_when_none_are_set():
    fetch, seen, _ = fetcher(lambda request: json_response(WORK))
    crossref.lookup(fetch, SourceSettings(), "10.1371/journal.pone.0033693")
    assert "mailto" not in seen.requests[0].url.params
    assert "crossref-plus-api-token" not in seen.requests[0].headers
    assert crossref.PROVIDER.hosts == frozenset({"api.crossref.org"})  # the only host the fetcher will send them to


def test_real_cursor_page_and_type_mapping():
    fetch, seen, _ = fetcher(lambda request: json_response(WIDGET))
    outcome = crossref.search(fetch, SETTINGS.model_copy(update={"max_records": 20}), {"query": "widget"})
    assert outcome.status == "ok" and outcome.total == 454 and len(outcome.records) == 20
    assert seen.requests[0].url.params["cursor"] == "*" and seen.requests[0].url.params["rows"] == "20"
    by_id = {r.id: r for r in outcome.records}
    assert by_id["10.1007/978-1-4842-6700-4_5"].type == "chapter"
    assert by_id["10.1109/afrcon.2009.5308146"].type == "paper-conference"
    assert by_id["10.32614/cran.package.shinysearchbar"].type == "dataset"
    assert by_id["10.59350/7mtwq-q3661"].type == "article"  # posted-content
    assert by_id["10.1117/1.jei.28.6.063006"].type == "article-journal"
    assert by_id["10.1007/springerreference_66110"].type == "entry"  # reference-entry: CSL's entry, no preprint
    # issued {"date-parts": [[null]]} is no date, not a crash or a year 0
    assert by_id["10.1007/978-1-4302-0197-7_9"].issued is None
    # Elsevier's only licence is for text mining and its only links are its text-mining API: no licence to read the
    # work and no full text a reader can open
    elsevier = by_id["10.1016/b978-155860700-2.50014-8"].custom
    assert elsevier.license is None and elsevier.fulltext_url is None


def test_a_whole_journal_listed_among_works_is_a_periodical_never_an_unpublished_article():
    # Crossref lists DOIs of whole containers among its works (habanero's /types/journal/works cassette): a journal
    # as a whole is CSL's periodical. Read as "article" it was exported as an unpublished work (RIS UNPB).
    page = (DIR / "crossref_types_journal_works_rows2.json").read_bytes()
    fetch, _, _ = fetcher(lambda request: json_response(page))
    outcome = crossref.search(fetch, SETTINGS.model_copy(update={"max_records": 2}), {"query": "journal"})
    assert [(r.id, r.type, r.title) for r in outcome.records] == [
        ("10.35841/immunology-case-reports", "periodical", "Immunology Case Reports"),
        ("10.46528/jk", "periodical", "Juni Khyat Journal")]
    assert all(r.custom.publication_types == ["journal"] for r in outcome.records)
    # The other containers and works of their own CSL type, built from the same real item: none is an "article".
    item = json.loads(page)["message"]["items"][0]
    for crossref_type, csl_type in (("journal-issue", "periodical"), ("journal-volume", "periodical"),
                                    ("proceedings", "book"), ("book-series", "book"), ("book-set", "book"),
                                    ("report-series", "report"), ("standard", "standard"), ("database", "dataset")):
        assert crossref.work_to_record(dict(item, type=crossref_type)).type == csl_type


def test_a_page_of_real_works_with_their_references_stays_well_under_the_response_cap():
    # Real PLOS items (with reference lists) at the largest real size: a page of Crossref's maximum of 1,000
    # would be refused (over 25 MB) and the search incomplete on every run.
    largest = max(len(json.dumps(item).encode()) for item in PLOS)
    fetch, seen, _ = fetcher(lambda request: httpx.Response(200, content=widget_complete()))
    crossref.search(fetch, SourceSettings(max_records=100_000), {"query.bibliographic": "widget"})
    rows = int(seen.requests[0].url.params["rows"])
    assert rows * largest < crossref.PROVIDER.max_bytes / 2 and rows >= 100


def test_deep_paging_follows_a_cursor_that_does_not_change():
    """Four real pages of /members/98/works: Crossref sent the same next-cursor after every page."""
    pages = cassette_bodies("test_workscontainer_with_cursor.yaml")
    served = iter(pages)
    fetch, seen, _ = fetcher(lambda request: json_response(next(served)))
    settings = SETTINGS.model_copy(update={"max_records": 19})
    outcome = crossref.search(fetch, settings, {"filter": "type:journal-article"}, since=2000, rows=5)
    assert outcome.status == "ok" and outcome.total == 138567
    cursors = [r.url.params["cursor"] for r in seen.requests]
    assert cursors[0] == "*" and len(set(cursors[1:])) == 1 and len(cursors) == 4
    # the pages differ although the cursor did not; one real item (a journal issue) has no title
    assert len({r.id for r in outcome.records}) == 19
    assert outcome.warnings == ["1 Crossref work had no title and was left out: 10.1002/humu.2018.39.issue-6",
                                "Crossref reported 138567 matches: only the first 19 of 138567 were read; "
                                "raise SITEGEN_MAX_RECORDS (now 19) or narrow the query to read them all"]
    codlet = next(r for r in outcome.records if r.id == "10.1111/jai.12009")
    assert codlet.title.startswith("New record of the antenna codlet, Bregmaceros atlanticus Goode and Bean, 1886")
    assert seen.requests[0].url.params["filter"] == "type:journal-article,from-pub-date:2000-01-01"
    assert seen.requests[0].url.params["rows"] == "5" and len(outcome.executed_query) == 4


def test_a_short_body_is_an_outage_not_an_empty_success():
    envelope = json.loads(WIDGET)
    envelope["message"]["items"] = []
    answers = iter([json_response(WIDGET), json_response(json.dumps(envelope))])
    fetch, _, _ = fetcher(lambda request: next(answers))
    outcome = crossref.search(fetch, SETTINGS, {"query": "widget"})
    assert outcome.status == "unavailable" and outcome.records == []
    assert "reported 454 matches but returned 20" in outcome.warnings[0]


def test_an_envelope_that_is_not_ok_is_an_outage():
    body = json.dumps({"status": "failed", "message-type": "validation-failure", "message": [{"type": "x"}]})
    fetch, _, _ = fetcher(lambda request: json_response(body))
    outcome = crossref.search(fetch, SETTINGS, {"query": "x"})
    assert outcome.status == "unavailable" and "'failed', not 'ok'" in outcome.warnings[0]


def test_a_rejected_query_is_unsupported():
    body = json.dumps({"status": "failed", "message-type": "validation-failure",
                       "message": [{"type": "parameter-not-allowed", "message": "This route does not support x"}]})
    fetch, _, _ = fetcher(lambda request: json_response(body, status=400))
    outcome = crossref.search(fetch, SETTINGS, {"x": "y"})
    assert outcome.status == "unsupported" and "does not support x" in outcome.warnings[0]


def test_empty_result_is_ok_with_zero():
    body = json.dumps({"status": "ok", "message-type": "work-list",
                       "message": {"total-results": 0, "items": [], "next-cursor": "abc"}})
    fetch, seen, _ = fetcher(lambda request: json_response(body))
    outcome = crossref.search(fetch, SETTINGS, {"query.bibliographic": "nothing matches this"})
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0
    assert len(seen.requests) == 1


def test_lookup_of_a_real_work_with_licence_references_and_a_correction():
    fetch, seen, _ = fetcher(lambda request: json_response(WORK))
    outcome = crossref.lookup(fetch, SETTINGS, "https://doi.org/10.1371/JOURNAL.PONE.0033693")
    assert outcome.status == "ok" and outcome.total == 1
    [record] = outcome.records
    assert seen.requests[0].url.path == "/works/10.1371/journal.pone.0033693"
    assert record.id == record.DOI == "10.1371/journal.pone.0033693"
    assert record.title.startswith("Methylphenidate Exposure Induces Dopamine Neuron Loss")
    assert [a.display() for a in record.author][:2] == ["Sadasivan, Shankar", "Pond, Brooks B."]
    assert (record.container_title, record.volume, record.issue, record.page) == ("PLoS ONE", "7", "3", "e33693")
    assert record.issued.date_parts == [[2012, 3, 21]]
    assert record.custom.license == "http://creativecommons.org/licenses/by/4.0/"
    assert record.custom.fulltext_url == "http://dx.plos.org/10.1371/journal.pone.0033693"
    # the real record is updated-by a *correction*: that is not a retraction
    assert record.custom.retracted is False and record.custom.sources == ["crossref"]


def test_an_article_number_is_the_page_of_a_work_without_pages():
    # Scientific Reports deposits no page, only the article number: that is the locator a citation gives
    work = json.loads((DIR / "crossref_work_10.1038_srep16696.json").read_bytes())["message"]
    assert "page" not in work and work["article-number"] == "16696"
    record = crossref.work_to_record(work)
    assert (record.container_title, record.volume, record.issue, record.page) == ("Scientific Reports", "5", "1",
                                                                                   "16696")


def test_lookup_escapes_the_doi_in_the_path():
    fetch, seen, _ = fetcher(lambda request: json_response(WORK))
    outcome = crossref.lookup(fetch, SETTINGS, "10.1000/a#b?c;d%")
    assert seen.requests[0].url.raw_path.split(b"?")[0] == b"/works/10.1000/a%23b%3Fc%3Bd%25"
    assert outcome.executed_query == ["GET https://api.crossref.org/works/10.1000/a%23b%3Fc%3Bd%25"]
    assert outcome.status == "ok" and outcome.records == [] and outcome.instead is not None  # another work


def test_lookup_404_is_empty_not_an_outage():
    fetch, _, _ = fetcher(lambda request: httpx.Response(404, content=NOT_FOUND, headers={"content-type": "text/plain"}))
    outcome = crossref.lookup(fetch, SETTINGS, "10.1371/notarealdoi")
    assert outcome.status == "ok" and outcome.records == [] and outcome.total == 0


def test_lookup_answered_with_another_record_is_kept_apart():
    # Crossref answers an alias DOI with the work under its primary DOI (a recorded work here): an answer, the same
    # on every run, so no outage to retry; but never the work asked for. Kept apart, named, for verification to judge.
    fetch, _, _ = fetcher(lambda request: json_response(WORK))
    outcome = crossref.lookup(fetch, SETTINGS, "10.1177/02683962211048201")
    assert outcome.status == "ok" and outcome.records == [] and not outcome.complete
    assert ("Crossref answers 10.1177/02683962211048201 with another work, 10.1371/journal.pone.0033693"
            in outcome.doubt)
    assert outcome.instead.DOI == "10.1371/journal.pone.0033693" and "instead" not in outcome.model_dump()


def test_jats_abstract_becomes_plain_text():
    record = crossref.work_to_record(single("10.2196_22081.json"))
    # Each section's title is its label, as PubMed writes a structured abstract (it ran into the text)
    assert record.abstract.startswith("Background: The COVID-19 crisis has drastically changed care delivery")
    assert "quality. Objective: This study" in record.abstract  # section title and paragraph kept apart
    assert "(total effects=0.722; P<.001)" in record.abstract  # &lt; decoded once, as text
    assert "<" not in record.abstract.replace("P<.", "") and "\n" not in record.abstract
    sage = crossref.work_to_record(single("10.1177_02683962211048201.json"))
    assert sage.abstract.startswith("Artificial intelligence (AI) is beginning") and sage.abstract.endswith("research.")
    assert sage.issued.date_parts == [[2022, 6]]  # published-print comes before published-online
    assert sage.custom.license == "https://creativecommons.org/licenses/by/4.0/"


def test_markup_in_titles_is_removed_and_nothing_is_fetched():
    item = single("10.17705_1cais.04607.json")
    item["title"] = ['Effects of <i>E. coli</i> &amp; H<sub>2</sub>O <!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>&e;']
    title = crossref.work_to_record(item).title
    assert title.startswith("Effects of E. coli & H2O") and "passwd" not in title and "root" not in title


def test_organisation_authors_become_literal_names():
    record = crossref.work_to_record(single("10.17705_1cais.04607.json"))
    assert record.author[0].family == "Schryen" and record.author[1].literal == "Paderborn University"
    assert record.abstract is None and record.issued.date_parts == [[2021]]


def test_every_work_of_a_real_list_with_updates_parses_and_none_is_retracted():
    records = [crossref.work_to_record(item) for item in PLOS]
    assert len(records) == 20 and all(records)
    assert not any(r.custom.retracted for r in records)
    assert not any("retraction-notice" in r.custom.publication_types for r in records)


def test_a_correction_or_new_version_is_not_a_retraction():
    corrected = plos("10.1371/journal.pbio.0050002")  # real: updated-by correction, relation.correction
    assert corrected["updated-by"][0]["type"] == "correction" and "correction" in corrected["relation"]
    assert crossref.retraction_status(corrected) == (False, False)
    new_version = plos("10.1371/journal.ppat.1006930")  # real: update-to and updated-by itself, new_version
    assert crossref.retraction_status(new_version) == (False, False)


def test_retracted_work_and_retraction_notice():
    # No real Crossref retraction is recorded: these are real PLOS works with a
    # retraction update added in the shape of the real correction update above.
    update = {"DOI": "10.1371/journal.pone.0999999", "type": "retraction", "label": "Retraction",
              "source": "retraction-watch", "updated": {"date-parts": [[2020, 1, 1]]}}
    retracted = plos("10.1371/journal.pone.0147433")
    retracted["updated-by"] = [update]
    record = crossref.work_to_record(retracted)
    assert record.custom.retracted is True and record.custom.publication_types == ["journal-article"]

    notice = plos("10.1371/journal.pone.0143505")
    notice["update-to"] = [dict(update, DOI="10.1371/journal.pone.0147433")]
    record = crossref.work_to_record(notice)
    assert record.custom.retracted is False
    assert record.custom.publication_types == ["journal-article", "retraction-notice"]

    in_place = plos("10.1371/journal.pone.0151962")  # a publisher marking the work itself, as PLOS does new versions
    in_place["update-to"] = [dict(update, DOI=in_place["DOI"])]
    assert crossref.retraction_status(in_place) == (True, False)

    mirrored = plos("10.1371/journal.pone.0151983")  # relation mirrors the update type, as relation.correction does
    mirrored["relation"] = {"retraction": [{"id-type": "doi", "id": "10.1371/journal.pone.0999999",
                                            "asserted-by": "object"}]}
    assert crossref.retraction_status(mirrored) == (True, False)


@pytest.mark.parametrize("kind", ["withdrawal", "removal", "partial_retraction", "Retraction"])
def test_every_kind_of_retraction_marks_the_work_retracted(kind):
    # The notices list them as retractions: the record's flag (on its page and in every export) must agree.
    work = plos("10.1371/journal.pone.0147433")
    work["updated-by"] = [{"DOI": "10.1371/journal.pone.0999999", "type": kind, "label": kind,
                           "updated": {"date-parts": [[2020, 1, 1]]}}]
    record = crossref.work_to_record(work)
    assert record.custom.retracted is True
    assert [update.kind for update in record.custom.updates] == ["retraction"]


def notice(doi: str, kind: str, *date: int) -> dict:
    """An update entry in the shape of the real PLOS one (type, label, source, updated)."""
    return {"DOI": doi, "type": kind, "label": kind.capitalize(), "source": "retraction-watch",
            "updated": {"date-parts": [list(date)]}}


def test_a_retraction_a_later_reinstatement_undid_does_not_stand():
    # No real reinstatement is recorded: a real PLOS work with the retraction and the reinstatement Retraction
    # Watch's data lists, in the shape of the real correction update, and the retraction mirrored under relation
    # as Crossref mirrors the real correction.
    work = plos("10.1371/journal.pbio.0050002")  # real: updated-by correction (10.1371/journal.pbio.0060304)
    work["updated-by"] += [notice("10.1371/journal.pbio.0099001", "retraction", 2019, 3, 1),
                           notice("10.1371/journal.pbio.0099002", "reinstatement", 2021, 6, 30)]
    work["relation"]["retraction"] = [{"id-type": "doi", "id": "10.1371/journal.pbio.0099001", "asserted-by": "object"}]
    record = crossref.work_to_record(work)
    assert record.custom.retracted is False
    assert [(u.kind, u.doi) for u in record.custom.updates] == [("correction", "10.1371/journal.pbio.0060304")]

    # Retracted again after the reinstatement: the later retraction stands.
    work["updated-by"].append(notice("10.1371/journal.pbio.0099003", "retraction", 2023))
    record = crossref.work_to_record(work)
    assert record.custom.retracted is True
    assert ("retraction", "10.1371/journal.pbio.0099003") in [(u.kind, u.doi) for u in record.custom.updates]
    assert ("retraction", "10.1371/journal.pbio.0099001") not in [(u.kind, u.doi) for u in record.custom.updates]


def test_a_reinstatement_of_unknown_order_leaves_the_retraction_standing():
    work = plos("10.1371/journal.pone.0147433")
    reinstated = notice("10.1371/journal.pone.0999998", "reinstatement", 2021)
    del reinstated["updated"]
    work["updated-by"] = [notice("10.1371/journal.pone.0999999", "retraction", 2020, 1, 1), reinstated]
    assert crossref.retraction_status(work) == (True, False)


def test_a_relation_the_work_asserts_itself_is_no_notice_against_it():
    # "asserted-by": "subject" is the work saying it is the retraction (or correction) of the related work; the
    # real correction mirrored on the corrected work says "object" (asserted by the notice).
    work = plos("10.1371/journal.pone.0151983")
    work["relation"] = {"retraction": [{"id-type": "doi", "id": "10.1371/journal.pone.0147433", "asserted-by": "subject"}],
                        "correction": [{"id-type": "doi", "id": "10.1371/journal.pone.0999997", "asserted-by": "subject"}]}
    record = crossref.work_to_record(work)
    assert record.custom.retracted is False and record.custom.updates == []
    # The same relations asserted by the other work are notices against this one, read as updated-by would be.
    for related in work["relation"].values():
        related[0]["asserted-by"] = "object"
    record = crossref.work_to_record(work)
    assert record.custom.retracted is True
    assert sorted(u.kind for u in record.custom.updates) == ["correction", "retraction"]


@pytest.mark.parametrize(("title", "subtitle", "whole"), [
    ("Methylphenidate for adults with ADHD", "a systematic review", "Methylphenidate for adults with ADHD: a systematic review"),
    ("Why rats remember?", "Context and objects", "Why rats remember? Context and objects"),
    ("Objects in context: a review", "a review", "Objects in context: a review"),  # given twice: once
])
def test_a_subtitle_is_part_of_the_title(title, subtitle, whole):
    # Crossref keeps a subtitle apart; PubMed and the work itself give it in the title, and without it the
    # two indexes' records of one DOI seemed two works.
    work = plos("10.1371/journal.pone.0147433")
    work["title"], work["subtitle"] = [title], [subtitle]
    assert crossref.work_to_record(work).title == whole
    work["subtitle"] = []
    assert crossref.work_to_record(work).title == title


def test_a_title_subtitle_or_container_sent_as_one_bare_string_is_read_as_that_string():
    # Crossref sends these as lists of strings; one string sent bare is text all the same. A bare title was refused
    # as "a title that is not text", losing the work, and a bare subtitle or journal was dropped.
    item = single("crossref_work_10.1007_s40278-023-41815-2.json")
    listed = crossref.work_to_record(item)
    bare = crossref.work_to_record(dict(item, title=item["title"][0], subtitle="a bare subtitle",
                                        **{"container-title": item["container-title"][0]}))
    assert bare.title == f"{item['title'][0]}: a bare subtitle"
    assert bare.container_title == listed.container_title == item["container-title"][0]
    with pytest.raises(Unreadable, match="a title that is not text"):
        crossref.work_to_record(dict(item, title=5))  # a title of another kind is still none


def test_a_work_deposited_with_only_its_original_language_title_has_that_title():
    # A real item carries "original-title" beside "title"; one deposited with the original alone was left out as
    # having no title.
    item = json.loads(ECOLOGY)["message"]["items"][0]
    for missing in ({}, {"title": []}, {"title": None}):
        work = {key: value for key, value in item.items() if key != "title"} | missing
        assert crossref.work_to_record(work).title == item["original-title"][0] == "Communicating Ecology"
    with pytest.raises(Untitled):
        crossref.work_to_record(dict(item, title=[], **{"original-title": []}))


def test_a_subtitle_too_long_for_a_title_is_left_out_and_the_work_kept():
    # A subtitle is the title's optional part: one that would make the title longer than a record holds cost the
    # work (it could not be read: "invalid title").
    item = single("crossref_work_10.1007_s40278-023-41815-2.json")
    record = crossref.work_to_record(dict(item, subtitle=["x" * TITLE_LIMIT]))
    assert record.title == item["title"][0]


def test_work_without_doi_or_title_is_left_out():
    item = plos("10.1371/journal.pone.0147433")
    with pytest.raises(Untitled):
        crossref.work_to_record(dict(item, title=[]))
    assert crossref.work_to_record(dict(item, DOI="not a doi")) is None
    envelope = {"status": "ok", "message-type": "work-list",
                "message": {"total-results": 2, "next-cursor": "c",
                            "items": [item, dict(item, DOI="10.1371/journal.pone.0000001", title=["<i></i>"])]}}
    fetch, _, _ = fetcher(lambda request: json_response(json.dumps(envelope)))
    outcome = crossref.search(fetch, SETTINGS, {"query": "x"})
    assert outcome.status == "ok" and outcome.complete and len(outcome.records) == 1
    assert outcome.warnings == ["1 Crossref work had no title and was left out: 10.1371/journal.pone.0000001"]


def test_fields_of_the_wrong_shape_are_ignored_not_a_crash():
    item = single("10.2196_22081.json")
    for key in ("author", "license", "link", "published-print", "issued", "relation", "updated-by", "update-to"):
        for value in (5, "x", {"a": 1}, [5], None):
            assert crossref.work_to_record(dict(item, **{key: value})).id == "10.2196/22081"
    assert crossref.plain_text("control\x01characters\x0bare spaces") == "control characters are spaces"


# --------------------------------------------------------------------------- paging and hostile data


def envelope(items: list, total: int, cursor: str | None = "c") -> str:
    return json.dumps({"status": "ok", "message-type": "work-list",
                       "message": {"total-results": total, "items": items, "next-cursor": cursor}})


def test_a_negative_total_is_an_outage():
    fetch, _, _ = fetcher(lambda request: json_response(envelope(PLOS[:2], -5)))
    outcome = crossref.search(fetch, SETTINGS, {"query": "x"})
    assert outcome.status == "unavailable" and outcome.records == []
    assert "-5" in outcome.warnings[0]


def test_repeated_identical_pages_under_the_same_cursor_end_paging():
    # Crossref legitimately repeats its cursor (see the real cassette above); a repeated *page* is the end
    fetch, seen, _ = fetcher(lambda request: json_response(WIDGET))
    outcome = crossref.search(fetch, SETTINGS, {"query": "widget"}, rows=20)
    assert outcome.status == "unavailable" and outcome.records == []
    assert len(seen.requests) == 2
    assert "reported 454 matches but returned 20" in outcome.warnings[0]


def test_a_total_that_changes_between_pages_is_an_outage():
    answers = iter([envelope(PLOS[:10], 20), envelope(PLOS[10:20], 19)])
    fetch, _, _ = fetcher(lambda request: json_response(next(answers)))
    outcome = crossref.search(fetch, SETTINGS, {"query": "x"}, rows=10)
    assert outcome.status == "unavailable" and "the count changed between pages (20, then 19)" in outcome.warnings[0]


def test_truncation_is_ok_but_not_complete():
    fetch, _, _ = fetcher(lambda request: json_response(ECOLOGY))
    outcome = crossref.search(fetch, SETTINGS.model_copy(update={"max_records": 2}), {"query": "ecology"})
    assert outcome.status == "ok" and outcome.truncated and not outcome.complete


def test_a_work_that_cannot_be_stored_is_kept_out_and_the_run_incomplete():
    too_many = dict(PLOS[1], author=[{"family": f"A{i}"} for i in range(10_001)])  # over the format's limit
    fetch, _, _ = fetcher(lambda request: json_response(envelope([PLOS[0], too_many, PLOS[2]], 3)))
    outcome = crossref.search(fetch, SETTINGS, {"query": "x"})
    assert outcome.status == "ok" and outcome.dropped == 1 and not outcome.complete
    assert [r.id for r in outcome.records] == [PLOS[0]["DOI"].lower(), PLOS[2]["DOI"].lower()]
    assert outcome.warnings == [f"1 Crossref work could not be read (invalid author): {PLOS[1]['DOI'].lower()}; it is "
                                "missing from this run, which is therefore incomplete"]


def test_every_work_unreadable_is_an_outage_not_an_empty_success():
    too_long = [dict(item, title=["x" * 6000]) for item in PLOS[:3]]
    fetch, _, _ = fetcher(lambda request: json_response(envelope(too_long, 3)))
    outcome = crossref.search(fetch, SETTINGS, {"query": "x"})
    assert outcome.status == "unavailable"
    assert "3 of 3 Crossref works could not be read (invalid title)" in outcome.warnings[0]
    assert outcome.warnings[0].endswith(", ".join(item["DOI"].lower() for item in PLOS[:3]))  # named, to be found


def test_a_type_that_is_not_text_is_no_type():
    undated = {key: value for key, value in PLOS[0].items() if key not in crossref.DATE_KEYS}
    record = crossref.work_to_record(dict(undated, type=["journal-article"], issued={"date-parts": [[2020, 13, 1]]}))
    assert record.issued.date_parts == [[2020]]  # month 13 is no month
    assert record.type == "article" and record.custom.publication_types == []


def test_an_abstract_heading_is_no_part_of_the_abstract_and_suffixes_are_kept():
    # Springer, Wiley and bioRxiv deposit the abstract under a JATS title "Abstract" (or "ABSTRACT"): it began the text.
    for heading in ("Abstract", "ABSTRACT"):
        item = dict(PLOS[0], abstract=f"<jats:title>{heading}</jats:title><jats:p>Oligomers of alpha-synuclein.</jats:p>",
                    author=[{"given": "John", "family": "Smith", "suffix": "Jr."}])
        record = crossref.work_to_record(item)
        assert record.abstract == "Oligomers of alpha-synuclein."
        assert record.author[0].suffix == "Jr." and record.author[0].display() == "Smith, John, Jr."
    # A title that is not the leading "Abstract" is the label of its part.
    item = dict(PLOS[0], abstract="<jats:p>Intro.</jats:p><jats:title>Abstract</jats:title><jats:p>Rest.</jats:p>")
    assert crossref.work_to_record(item).abstract == "Intro. Abstract: Rest."


def test_a_section_title_with_attributes_is_a_label():
    # Emerald writes <jats:title content-type="abstract-subheading">Purpose</jats:title>
    item = dict(PLOS[0], abstract='<jats:sec><jats:title content-type="abstract-subheading">Purpose</jats:title>'
                                  "<jats:p>To study.</jats:p></jats:sec>")
    assert crossref.work_to_record(item).abstract == "Purpose: To study."


def test_a_chapter_in_a_book_series_has_the_book_as_its_container():
    # A real Springer chapter (skg-if/api-impl-doira, src/test/resources/crossref-book-chapter.json): Crossref lists
    # the series before the book the chapter is in.
    chapter = crossref.work_to_record(single("crossref_work_10.1007_978-3-319-66787-4_9.json"))
    assert chapter.type == "chapter"
    assert chapter.container_title == "Cryptographic Hardware and Embedded Systems – CHES 2017"
    # Its print date is a year alone, its online date the same year to the day: the day is kept.
    assert chapter.issued.date_parts == [[2017, 8, 25]]
    # An online date of another year says nothing more about the print one.
    reprinted = crossref.work_to_record(dict(single("crossref_work_10.1007_978-3-319-66787-4_9.json"),
                                             **{"published-online": {"date-parts": [[2016, 12, 30]]}}))
    assert reprinted.issued.date_parts == [[2017]]
    # A journal article's first title is its journal, whatever follows it.
    article = crossref.work_to_record(dict(single("10.2196_22081.json"), **{"container-title": [
        "Journal of Medical Internet Research", "J Med Internet Res"]}))
    assert article.container_title == "Journal of Medical Internet Research"


def test_the_licence_is_the_one_to_read_the_work_and_the_full_text_is_no_text_mining_interface():
    # Real Wiley items (habanero's workscontainer cassette) list a text-mining licence and Wiley's text-mining API,
    # which answers only a subscriber's token, before the licence of the version of record and the reader's PDF.
    items = {item["DOI"]: item for page in cassette_bodies("test_workscontainer_with_cursor.yaml")
             for item in json.loads(page)["message"]["items"]}
    wiley = crossref.work_to_record(items["10.1111/jfpp.12874"]).custom
    assert wiley.license == "http://onlinelibrary.wiley.com/termsAndConditions"
    assert wiley.fulltext_url == "http://onlinelibrary.wiley.com/wol1/doi/10.1111/jfpp.12874/fullpdf"
    # A licence of no named version is the licence (Hindawi's CC BY), and a link for similarity checking is the text.
    hindawi = crossref.work_to_record(items["10.1155/2016/1353212"]).custom
    assert hindawi.license == "http://creativecommons.org/licenses/by/4.0/"
    assert hindawi.fulltext_url == "http://downloads.hindawi.com/journals/js/2016/1353212.pdf"


def test_a_page_over_the_byte_cap_is_asked_for_again_in_halves(monkeypatch):
    # A page of works with long reference lists that passed the cap on a response was refused, and the search
    # came out unavailable on every run. A cursor marks where the next page starts whatever its size, so the
    # same cursor is asked for fewer works. Built: the 20 real PLOS works (8-57 kB each) served by cursor in
    # pages of the size asked for.
    monkeypatch.setattr(crossref, "PROVIDER", crossref.PROVIDER.__class__(
        **{**crossref.PROVIDER.__dict__, "max_bytes": 150_000}))
    envelope = json.loads(WIDGET)

    def handler(request: httpx.Request) -> httpx.Response:
        cursor, size = request.url.params["cursor"], int(request.url.params["rows"])
        start = 0 if cursor == "*" else int(cursor)
        envelope["message"].update({"total-results": len(PLOS), "items": PLOS[start:start + size],
                                    "next-cursor": str(start + size)})
        return json_response(json.dumps(envelope))

    fetch, seen, _ = fetcher(handler)
    outcome = crossref.search(fetch, SETTINGS, {"query.bibliographic": "widget"})
    assert outcome.status == "ok" and outcome.complete and len(outcome.records) == len(PLOS), outcome.warnings
    assert int(seen.requests[-1].url.params["rows"]) < crossref.PAGE_ROWS


@pytest.mark.parametrize(("update_type", "publication_type"), [
    ("correction", "correction-notice"), ("erratum", "correction-notice"),
    ("expression_of_concern", "expression-of-concern-notice"), ("retraction", "retraction-notice")])
def test_a_notice_under_the_title_of_the_work_it_is_about_is_typed_a_notice(update_type, publication_type):
    # A publisher may deposit a correction under the very title of the article it corrects: only its `update-to`
    # naming another work tells it from that article, and deduplication must never merge the two.
    article = plos("10.1371/journal.pone.0147433")
    notice = plos("10.1371/journal.pone.0143505")
    notice.update(title=article["title"], author=article["author"], issued=article["issued"],
                  **{"update-to": [{"DOI": article["DOI"], "type": update_type, "label": "Correction",
                                    "updated": {"date-parts": [[2020, 1, 1]]}}]})
    record = crossref.work_to_record(notice)
    assert record.custom.publication_types == ["journal-article", publication_type]
    assert not record.custom.retracted and not record.custom.updates  # the notice is not the work it is about
    assert notice_kind(record.title, record.custom.publication_types) != ""
    work_of = crossref.work_to_record(article)
    assert classify(record_work(work_of), record_work(record))[0] != "same"


def test_a_retraction_notice_seen_marks_the_work_it_retracts_retracted():
    # Crossref's notice names the article it retracts in `update-to`; the article's own record may not list it yet
    # (its `updated-by` lags, or it was read before the retraction). Deduplicating the two keeps them apart and
    # marks the article retracted, with the notice's DOI, as `sitegen update` does when a search brings the notice.
    article = crossref.work_to_record(plos("10.1371/journal.pone.0147433"))
    assert not article.custom.retracted
    notice = plos("10.1371/journal.pone.0143505")
    notice["update-to"] = [{"DOI": article.DOI.upper(), "type": "retraction", "label": "Retraction",
                            "updated": {"date-parts": [[2020, 1, 1]]}}]
    notice_record = crossref.work_to_record(notice)
    assert [(n.kind, n.doi) for n in notice_record.custom.notice_of] == [("retraction", article.DOI)]
    result = deduplicate([article, notice_record])
    by_id = {record.id: record for record in result.records}
    assert len(by_id) == 2 and by_id[notice_record.id].custom.retracted is False
    marked = by_id[article.id]
    assert marked.custom.retracted is True
    assert [(u.kind, u.doi) for u in marked.custom.updates] == [("retraction", notice_record.DOI)]
    # a correction notice marks its work corrected, not retracted
    notice["update-to"][0]["type"] = "correction"
    corrected = {r.id: r for r in deduplicate([article, crossref.work_to_record(notice)]).records}[article.id]
    assert not corrected.custom.retracted and [u.kind for u in corrected.custom.updates] == ["correction"]
    # the link lives in records.jsonl: a record read back still names the work it is about
    assert Record.model_validate_json(notice_record.model_dump_json(by_alias=True)).custom.notice_of == \
        notice_record.custom.notice_of


def test_a_retraction_notice_seen_beside_a_work_reinstated_later_leaves_it_reinstated():
    """The article's own record lists the retraction (2019-03-01) and a later reinstatement (2021-06-30): it is read
    as not retracted. The retraction notice met beside it in deduplication marked it retracted again, the article's
    record keeping no trace of the reinstatement and the notice no date. One rule (`retraction_lifted`) for both."""
    article_item = plos("10.1371/journal.pone.0147433")
    doi = article_item["DOI"].lower()
    article_item["updated-by"] = [
        {"DOI": "10.1371/journal.pone.0143505", "type": "retraction", "updated": {"date-parts": [[2019, 3, 1]]}},
        {"DOI": "10.9999/reinstated", "type": "reinstatement", "updated": {"date-parts": [[2021, 6, 30]]}}]
    article = crossref.work_to_record(article_item)
    assert not article.custom.retracted and article.custom.updates == []
    assert [(r.doi, r.date) for r in article.custom.reinstatements] == [("10.9999/reinstated", [2021, 6, 30])]
    notice_item = plos("10.1371/journal.pone.0143505")
    notice_item["update-to"] = [{"DOI": doi, "type": "retraction", "updated": {"date-parts": [[2019, 3, 1]]}}]
    notice = crossref.work_to_record(notice_item)
    assert [(n.kind, n.doi, n.date) for n in notice.custom.notice_of] == [("retraction", doi, [2019, 3, 1])]
    for records in ([article, notice], [notice, article]):
        kept = {record.id: record for record in deduplicate(records).records}[article.id]
        assert not kept.custom.retracted and kept.custom.updates == [], records
        assert kept.custom.reinstatements == article.custom.reinstatements
    # a retraction issued after the reinstatement (retracted again), or a notice without a date, still retracts
    for date in ({"date-parts": [[2022, 1, 5]]}, None):
        notice_item["update-to"][0]["updated"] = date
        kept = {r.id: r for r in deduplicate([article, crossref.work_to_record(notice_item)]).records}[article.id]
        assert kept.custom.retracted and [(u.kind, u.doi) for u in kept.custom.updates] == [("retraction", notice.DOI)]
    # both read back from records.jsonl, and a record written before either existed still loads
    line = article.model_dump_json(by_alias=True)
    assert Record.model_validate_json(line) == article and '"reinstatements"' in line
    assert Record.model_validate_json(notice.model_dump_json(by_alias=True)).custom.notice_of == notice.custom.notice_of
    old = json.loads(notice.model_dump_json(by_alias=True))
    del old["custom"]["notice_of"][0]["date"]
    assert Record.model_validate(old).custom.notice_of[0].date is None


def test_a_reinstatement_notice_met_in_deduplication_lifts_an_earlier_retraction_in_either_order():
    """Crossref's reinstatement notice names the article in its `update-to` of type reinstatement, as a retraction
    notice does: it was not kept, so a retraction notice met beside the article marked it retracted for good. Now,
    whichever record comes first, and whether the article's own record lists the retraction or not, the retraction
    dated no later than the reinstatement is lifted, and the article records the reinstatement and when it was
    retracted. A retraction issued after the reinstatement (retracted again) still retracts."""
    article_item = plos("10.1371/journal.pone.0147433")
    doi = article_item["DOI"].lower()
    notice_item, reinstated_item = plos("10.1371/journal.pone.0143505"), plos("10.1371/journal.pbio.0040156")
    notice_item["update-to"] = [{"DOI": doi, "type": "retraction", "updated": {"date-parts": [[2019, 3, 1]]}}]
    reinstated_item["update-to"] = [{"DOI": doi, "type": "reinstatement", "updated": {"date-parts": [[2021, 6, 30]]}}]
    notice, reinstatement = crossref.work_to_record(notice_item), crossref.work_to_record(reinstated_item)
    assert [(n.kind, n.doi, n.date) for n in reinstatement.custom.notice_of] == [("reinstatement", doi, [2021, 6, 30])]
    assert "reinstatement-notice" in reinstatement.custom.publication_types and not reinstatement.custom.retracted
    listing = copy.deepcopy(article_item)
    listing["updated-by"] = [{"DOI": notice.DOI, "type": "retraction", "updated": {"date-parts": [[2019, 3, 1]]}}]
    for article in (crossref.work_to_record(article_item), crossref.work_to_record(listing)):
        for records in itertools.permutations([article, notice, reinstatement]):
            kept = {record.DOI: record for record in deduplicate(list(records)).records}
            assert kept[reinstatement.DOI].id != kept[doi].id  # a notice is never merged with its work
            work = kept[doi].custom
            assert not work.retracted and work.updates == [], records
            assert [(r.doi, r.date, r.retracted_on) for r in work.reinstatements] == \
                [(reinstatement.DOI, [2021, 6, 30], [2019, 3, 1])]
    # the article's own record dates the retraction it lists, which its notice's absence leaves lifted all the same
    kept = {r.DOI: r for r in deduplicate([crossref.work_to_record(listing), reinstatement]).records}[doi]
    assert not kept.custom.retracted and kept.custom.updates == []
    notice_item["update-to"][0]["updated"] = {"date-parts": [[2022, 1, 5]]}
    kept = {r.DOI: r for r in deduplicate([crossref.work_to_record(notice_item), reinstatement,
                                           crossref.work_to_record(article_item)]).records}[doi]
    assert kept.custom.retracted and [(u.kind, u.doi, u.date) for u in kept.custom.updates] == \
        [("retraction", notice.DOI, [2022, 1, 5])]


def test_a_preprint_and_its_journal_version_crossref_relates_are_kept_as_other_versions():
    """Crossref's `is-preprint-of` (on bioRxiv's preprint) and `has-preprint` (on JMIR's and PLOS's articles) name
    the same study in another version, by DOI, whoever asserted it: the review links the two by it, never merges."""
    preprint = crossref.work_to_record(single("crossref_work_10.1101_2024.04.01.587366.json"))
    assert preprint.custom.stated_versions == [StatedVersion(doi="10.1016/j.xgen.2025.100814")]
    article = crossref.work_to_record(single("10.2196_22081.json"))
    assert article.custom.stated_versions == [StatedVersion(doi="10.2196/preprints.22081")]
    plos_article = crossref.work_to_record(plos("10.1371/journal.pgen.1011490"))
    assert plos_article.custom.stated_versions == [StatedVersion(doi="10.1101/2024.07.14.24310389")]
    # A relation of another kind, or naming no DOI, names no version.
    item = single("10.2196_22081.json")
    item["relation"] = {"has-preprint": [{"id-type": "uri", "id": "https://example.org/p", "asserted-by": "object"}],
                        "is-supplemented-by": [{"id-type": "doi", "id": "10.5061/dryad.x", "asserted-by": "subject"}]}
    assert crossref.work_to_record(item).custom.stated_versions == []
