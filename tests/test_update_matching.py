"""`sitegen update` matches results that share no identifier with a record by metadata: a match becomes a
`same` row of duplicates.csv by reviewer "sitegen" (undone by changing it to `different`), nothing is merged;
probable pairs are listed for a reviewer; preprints are linked to their journal versions."""

from __future__ import annotations

import json

from conftest import FIXTURES
from test_update import CORE, FIRST, SECOND, SYNERGY, THIRD, Providers, new_review, no_waiting, run  # noqa: F401 (a fixture)

from sitegen.living.merge import Decided, integrate
from sitegen.living.update import UpdateResult, markdown_report
from sitegen.records.ids import record_id
from sitegen.records.model import CslName, Record, RecordMeta
from sitegen.sources import pubmed
from sitegen.sources.base import parse_xml

TITLE = "Early mobilisation after acute stroke: a randomised controlled trial of very early rehabilitation"


def record(source: str, title: str = TITLE, volume: str = "386", page: str = "46-55", **ids: str) -> Record:
    identifiers = {"doi": ids.get("doi"), "pmid": ids.get("pmid"), "openalex": ids.get("openalex")}
    return Record(id=record_id(identifiers), title=title, DOI=identifiers["doi"], PMID=identifiers["pmid"],
                  author=[CslName(family="Bernhardt", given="Julie"), CslName(family="Langhorne", given="Peter"),
                          CslName(family="Lindley", given="Richard I.")],
                  issued={"date-parts": [[2015]]}, volume=volume, page=page, **{"container-title": "Lancet"},
                  custom=RecordMeta(openalex=identifiers["openalex"], sources=[source]))


def test_a_result_with_no_shared_identifier_is_matched_not_merged():
    existing = record("pubmed", pmid="25892679")
    result = integrate({existing.id: existing}, [record("openalex", title=TITLE.upper() + ".", openalex="W1")])
    assert result.ids == ["openalex:W1"] and set(result.records) == {"pmid:25892679", "openalex:W1"}
    assert result.records["pmid:25892679"] == existing  # nothing of the result is mixed into the record
    assert [(a, b) for a, b, _ in result.matched] == [("openalex:W1", "pmid:25892679")]
    assert result.probable == []


def test_new_results_that_match_each_other_point_at_the_first():
    result = integrate({}, [record("pubmed", pmid="1"), record("openalex", openalex="W1"),
                            record("crossref", doi="10.1016/s0140-6736(15)60690-0")])
    assert len(result.records) == 3
    assert sorted((a, b) for a, b, _ in result.matched) == [("openalex:W1", "10.1016/s0140-6736(15)60690-0"),
                                                            ("pmid:1", "10.1016/s0140-6736(15)60690-0")]


def test_pairs_decided_in_duplicates_csv_are_left_as_decided():
    first, second = record("pubmed", pmid="1"), record("europepmc", pmid="2", volume="385")
    existing = {first.id: first, second.id: second}
    new = record("openalex", openalex="W1")
    assert [b for _, b, _ in integrate(existing, [new]).matched] == ["pmid:1"]
    # pmid:1 is a confirmed duplicate of pmid:9: a match points at pmid:9, never at a duplicate.
    decided = Decided(canonical={"pmid:1": "pmid:9"})
    assert [b for _, b, _ in integrate(existing, [new], decided).matched] == ["pmid:9"]
    # A pair decided different is not proposed again, as a match or as a probable pair.
    decided = Decided(pairs={frozenset(("openalex:W1", "pmid:1")), frozenset(("openalex:W1", "pmid:2"))})
    again = integrate(existing, [new], decided)
    assert again.matched == [] and again.probable == []


def test_a_pair_decided_through_a_confirmed_duplicate_is_not_proposed():
    # duplicates.csv confirms pmid:1 is pmid:9 (one work). A row deciding a new record `different` from either
    # decides it for the other: the match is not made through the other one, in whichever form the row names the
    # pair (it was made when the row named the duplicate, pmid:1, and the match pointed at its canonical, pmid:9).
    first = record("pubmed", pmid="1")
    new = record("openalex", openalex="W1")
    for row in (("openalex:W1", "pmid:1"), ("openalex:W1", "pmid:9")):
        decided = Decided(canonical={"pmid:1": "pmid:9"}, pairs={frozenset(row)})
        result = integrate({first.id: first}, [new], decided)
        assert result.matched == [] and result.probable == [], row
    # Two existing records a new result links, one decided `different` from the other's canonical record: not
    # proposed to a reviewer again.
    without_doi = record("openalex", openalex="W2")
    other = record("crossref", doi="10.1234/x").model_copy(update={"author": [CslName(family="Zzyzx")]})
    decided = Decided(canonical={other.id: "pmid:9"}, pairs={frozenset((without_doi.id, "pmid:9"))})
    linked = integrate({r.id: r for r in (without_doi, other)}, [record("openalex", openalex="W2", doi="10.1234/x")],
                       decided)
    assert linked.probable == []


def test_a_probable_pair_is_listed_and_nothing_is_merged():
    existing = record("pubmed", pmid="25892679")
    other_volume = record("openalex", volume="385", openalex="W2")  # another volume: a reviewer decides
    result = integrate({existing.id: existing}, [other_volume])
    assert set(result.records) == {"pmid:25892679", "openalex:W2"}
    assert [(a, b) for a, b, _ in result.probable] == [("openalex:W2", "pmid:25892679")]
    report = markdown_report(UpdateResult("2026-01-01T00:00:00Z", [], result.records, result.probable))
    assert "Possible duplicates" in report and "`openalex:W2` and `pmid:25892679`" in report


def test_a_result_with_a_contradictory_identifier_is_never_matched():
    existing = record("pubmed", pmid="25892679")
    result = integrate({existing.id: existing}, [record("europepmc", pmid="99999999")])
    assert set(result.records) == {"pmid:25892679", "pmid:99999999"} and result.probable == []


def test_a_work_openalex_lists_under_a_new_id_is_matched_as_the_same_work():
    # OpenAlex renumbers the works it merges and lists some twice: a result with the record's DOI and PMID
    # under another OpenAlex id is the same work, matched (a `same` row), never a new record to screen.
    doi, pmid = "10.1016/s0140-6736(15)60690-0", "25892679"
    existing = record("openalex", doi=doi, pmid=pmid, openalex="W2")
    result = integrate({existing.id: existing}, [record("openalex", doi=doi, pmid=pmid, openalex="W9")])
    [(new, canonical, _)] = result.matched
    assert canonical == existing.id and new != existing.id and result.probable == []


def test_a_journal_version_is_linked_to_its_preprint_and_the_link_stays():
    preprint = Record.model_validate({**record("europepmc", doi="10.1101/2014.06.01.123456").model_dump(
        by_alias=True, exclude_none=True), "issued": {"date-parts": [[2014]]}, "container-title": "bioRxiv",
        "volume": None, "page": None})
    published = record("crossref", doi="10.1016/s0140-6736(15)60690-0", openalex="W5")
    result = integrate({preprint.id: preprint}, [published])
    assert set(result.records) == {preprint.id, published.id} and result.versions == [(preprint.id, published.id)]
    assert result.records[preprint.id].custom.other_versions == [published.id]
    assert result.records[published.id].custom.other_versions == [preprint.id]
    report = markdown_report(UpdateResult("2026-01-01T00:00:00Z", [], result.records, [], result.versions))
    assert f"`{preprint.id}` is a preprint of `{published.id}`" in report
    # A later run that returns the journal version again (by identity) keeps the link.
    again = integrate(result.records, [record("pubmed", doi="10.1016/s0140-6736(15)60690-0", pmid="25892679")])
    assert again.records[published.id].custom.other_versions == [preprint.id] and again.versions == []


# --------------------------------------------------------------------------- a whole update


def under_pmcid_only(result: dict, pmcid: str) -> dict:
    """A Europe PMC result as Europe PMC also files it: under a PMCID, without the PMID and DOI."""
    twin = {key: value for key, value in result.items() if key not in ("pmid", "doi")}
    return {**twin, "id": pmcid, "source": "PMC", "pmcid": pmcid}


def test_update_records_a_metadata_match_in_duplicates_csv(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:1])
    run(review, FIRST, providers, add=True)
    before = json.loads(sitegen("prisma", review, "--json")[1])
    original = CORE[0]["doi"].lower()
    providers.results = [CORE[0], under_pmcid_only(CORE[0], "PMC9999999")]
    result = run(review, SECOND, providers)
    assert [(a, b) for a, b, _ in result.matched] == [("pmcid:PMC9999999", original)]
    rows = (review / "duplicates.csv").read_text().splitlines()
    assert rows[0] == "record_id,duplicate_of,decision,reviewer,note"
    assert rows[1].startswith(f'pmcid:PMC9999999,{original},same,sitegen,"matched by metadata in the run of')
    assert "Matched by metadata" in markdown_report(result) and "`pmcid:PMC9999999`" in markdown_report(result)
    # Matched to a record the review held before the run: already found, and no work found twice.
    assert "1 more matched record already found: in screening batch 2" in markdown_report(result)
    assert "twice" not in markdown_report(result) and result.summary()["searches"][0]["duplicates_of_new_ids"] == []
    code, out, err = sitegen("check", review)
    assert code == 0, out + err
    after = json.loads(sitegen("prisma", review, "--json")[1])
    assert after["duplicates_removed"] == before["duplicates_removed"] + 1 and after["records"] == before["records"]
    # A reviewer who finds two works changes the row: the record is then one to screen like any other.
    (review / "duplicates.csv").write_text("\n".join([rows[0], rows[1].replace(",same,sitegen,", ",different,ann,")])
                                           + "\n")
    assert sitegen("check", review)[0] == 0
    undone = json.loads(sitegen("prisma", review, "--json")[1])
    assert undone["records"] == before["records"] + 1
    # The next run returns the record again: it is known (by identity), and its pair is not proposed again.
    third = run(review, THIRD, providers)
    assert third.matched == [] and third.searches[0].new == []


def test_records_a_result_linked_stay_flagged_for_a_reviewer_whatever_later_runs_return():
    # A result that links two records by an identifier neither holds (OpenAlex gives its work the DOI another
    # record has) leaves a note on both, lists the pair for a reviewer (the run's probable pairs and
    # `probable-duplicates`), and the flag stays: a later run in which the source is down, or that returns the
    # work without the DOI, dropped the notes, and nothing else said the two may be one work.
    from pathlib import Path

    from sitegen.living.duplicates import suggestions
    from sitegen.review.folder import Review

    without_doi = record("openalex", openalex="W1")
    other = record("crossref", doi="10.1234/x").model_copy(update={"author": [CslName(family="Zzyzx")]})
    linked = integrate({r.id: r for r in (without_doi, other)}, [record("openalex", openalex="W1", doi="10.1234/x")])
    pair = sorted((without_doi.id, other.id))
    assert [(a, b) for a, b, _ in linked.probable] == [tuple(pair)]
    notes = {rid: linked.records[rid].custom.conflicts for rid in pair}
    assert all(len(found) == 1 and "may be duplicates" in found[0] for found in notes.values())
    for later in ([], [record("openalex", openalex="W1")], [record("crossref", doi="10.1234/x")]):
        again = integrate(linked.records, later)
        assert {rid: again.records[rid].custom.conflicts for rid in pair} == notes, later
    review = Review(Path("."), None, records=again.records)
    assert [sorted((s.record_id, s.duplicate_of)) for s in suggestions(review)] == [pair]
    # Once duplicates.csv decides the pair, a later run that returns the records drops the note.
    decided = Decided(pairs={frozenset(pair)})
    settled = integrate(again.records, [record("openalex", openalex="W1"), record("crossref", doi="10.1234/x")],
                        decided)
    assert all(not settled.records[rid].custom.conflicts for rid in pair) and settled.probable == []
    # The linking result itself returned again (as a saved search returns it every run): no note either.
    relinked = integrate(linked.records, [record("openalex", openalex="W1", doi="10.1234/x")], decided)
    assert all(not relinked.records[rid].custom.conflicts for rid in pair) and relinked.probable == []


def test_a_work_a_run_finds_twice_is_a_duplicate_of_the_run_not_a_record_already_found(sitegen, tmp_path):
    # Europe PMC files one work twice (under its PMID and under its PMCID alone): the second is matched to the first,
    # which is new in the same run. It is a duplicate of that run, as the batch page says, not one "already found".
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:1])
    run(review, FIRST, providers, add=True)
    providers.results = [CORE[2], under_pmcid_only(CORE[2], "PMC9999999"), under_pmcid_only(CORE[0], "PMC8888888")]
    result = run(review, SECOND, providers)
    assert sorted(b for _, b, _ in result.matched) == sorted([CORE[0]["doi"].lower(), CORE[2]["doi"].lower()])
    report = markdown_report(result)
    assert "1 more matched record already found; 1 more matched to a new record above (this run found that work " \
           "twice): in screening batch 2" in report
    (search,) = result.summary()["searches"]
    assert sorted(search["duplicate_ids"]) == ["pmcid:PMC8888888", "pmcid:PMC9999999"]
    assert search["duplicates_of_new_ids"] == ["pmcid:PMC9999999"]


def test_a_result_under_a_records_pmid_with_another_doi_is_that_article_unless_its_title_says_otherwise():
    # A PMID names one article whichever source gives it (OpenAlex here, which files works under its own W ids): the
    # result is the record with its DOI corrected, noted. A result whose title is another work's (a wrong PMID mapping) is not
    # hidden in the record under a DOI it does not have: it keeps its DOI and stands as a record of its own.
    existing = record("pubmed", doi="10.1016/s0140-6736(15)60690-0", pmid="25892679")
    corrected = integrate({existing.id: existing}, [record("openalex", doi="10.9999/corrected", pmid="25892679")])
    assert corrected.ids == [existing.id] and set(corrected.records) == {existing.id}
    [note] = corrected.records[existing.id].custom.conflicts
    assert note.startswith("A corrected DOI? OpenAlex returns this work under its PMID 25892679 with the DOI "
                           "10.9999/corrected")
    other = record("openalex", title="Dysphagia screening after stroke in a general hospital", doi="10.9999/other",
                   pmid="25892679")
    mapped = integrate({existing.id: existing}, [other])
    assert mapped.ids == ["10.9999/other"] and mapped.records["10.9999/other"].DOI == "10.9999/other"
    # So too the other way round: the record holds a PMID OpenAlex gave it by a wrong mapping, and Europe PMC, whose
    # own id it is, returns the article the PMID names: that article is not hidden in the record either.
    wrong = record("openalex", title=other.title, doi="10.9999/other", pmid="25892679", openalex="W7")
    found = integrate({wrong.id: wrong}, [record("europepmc", doi=existing.DOI, pmid="25892679")])
    assert found.ids == [existing.DOI] and found.records[existing.DOI].title == TITLE


def test_a_result_under_a_pmid_of_records_confirmed_one_work_is_that_work():
    # A reviewer confirmed two records of one paper under two DOIs the same (duplicates.csv). A result under their
    # PMID with a third DOI is that work with its DOI corrected, noted on the canonical record; one with the
    # duplicate's DOI is no correction: it is filed with the record holding that DOI.
    first = record("pubmed", doi="10.1016/s0140-6736(15)60690-0", pmid="25892679")
    second = record("pubmed", doi="10.9999/registered.twice", pmid="25892679")
    existing = {first.id: first, second.id: second}
    decided = Decided(canonical={second.id: first.id}, pairs={frozenset((first.id, second.id))})
    corrected = integrate(existing, [record("europepmc", doi="10.9999/corrected", pmid="25892679")], decided)
    assert corrected.ids == [first.id] and set(corrected.records) == set(existing)
    assert any(note.startswith("A corrected DOI?") for note in corrected.records[first.id].custom.conflicts)
    again = integrate(existing, [record("europepmc", doi="10.9999/registered.twice", pmid="25892679")], decided)
    assert again.ids == [second.id] and set(again.records) == set(existing)
    assert not any(note.startswith("A corrected DOI?") for record_ in again.records.values()
                   for note in record_.custom.conflicts)


def test_two_sources_giving_one_pmid_two_dois_in_one_run_find_one_article():
    # Within one run, as across two: the second result under the PMID is the first's article with its DOI corrected
    # (it was a second new record, reported and screened twice, and every later run under that PMID was new again).
    first = record("openalex", doi="10.1016/s0140-6736(15)60690-0", pmid="25892679")
    second = record("europepmc", doi="10.9999/corrected", pmid="25892679")
    result = integrate({}, [first, second])
    assert result.ids == [first.id, first.id] and set(result.records) == {first.id}
    [note] = result.records[first.id].custom.conflicts
    assert note.startswith("A corrected DOI? Europe PMC returns this work under its PMID 25892679 with the DOI "
                           "10.9999/corrected")
    # A record without a DOI: the DOI the run's first result gives it is the one it keeps.
    held = record("openalex", pmid="25892679", openalex="W1")
    result = integrate({held.id: held}, [record("openalex", doi=first.DOI, pmid="25892679", openalex="W1"), second])
    assert result.ids == [held.id, held.id] and set(result.records) == {held.id}
    assert result.records[held.id].DOI == first.DOI


def elife_article() -> Record:
    """PubMed's real record of an eLife article, which states its medRxiv preprint ("Update of": PMID 38946973,
    DOI 10.1101/2024.06.13.24308783)."""
    body = (FIXTURES / "pubmed" / "pubmed-39737640-excerpt.xml").read_bytes()
    return pubmed.article_to_record(parse_xml(body).find("PubmedArticle"))


def medrxiv_preprint(title: str) -> Record:
    """The preprint as a review could hold it, under another title (a journal often retitles a preprint)."""
    return Record(id="10.1101/2024.06.13.24308783", type="article", title=title, DOI="10.1101/2024.06.13.24308783",
                  author=[CslName(family="Rachubinski", given="Angela L")], issued={"date-parts": [[2024]]},
                  **{"container-title": "medRxiv"}, custom=RecordMeta(sources=["crossref"], publication_types=["posted-content"]))


def test_a_journal_version_a_source_says_is_of_a_preprint_is_linked_whatever_its_title():
    preprint = medrxiv_preprint("Tofacitinib and immune dysregulation in trisomy 21: interim results of a phase II trial")
    article = elife_article()
    assert article.title != preprint.title
    result = integrate({preprint.id: preprint}, [article])
    # Two records still, linked as versions both ways, and said to be so.
    assert set(result.records) == {preprint.id, article.id} and result.versions == [(preprint.id, article.id)]
    assert result.records[preprint.id].custom.other_versions == [article.id]
    assert result.records[article.id].custom.other_versions == [preprint.id]
    assert result.matched == [] and result.probable == []
    # The other way round (the preprint found after its article, stating nothing itself), the same.
    later = integrate({article.id: article}, [preprint])
    assert later.versions == [(preprint.id, article.id)]
    # A link to a version the review does not hold is kept on the record, linking nothing.
    alone = integrate({}, [article])
    assert alone.records[article.id].custom.other_versions == []
    assert [v.doi for v in alone.records[article.id].custom.stated_versions] == ["10.1101/2024.06.13.24308783"]


def test_a_stated_version_a_reviewer_confirmed_to_be_the_same_work_is_not_linked():
    """duplicates.csv says the two are one work: `check` refuses a version link between them, so none is made."""
    preprint = medrxiv_preprint("Another title")
    article = elife_article()
    decided = Decided(canonical={article.id: preprint.id}, pairs={frozenset((article.id, preprint.id))})
    result = integrate({preprint.id: preprint, article.id: article}, [], decided)
    assert result.versions == [] and result.records[preprint.id].custom.other_versions == []
