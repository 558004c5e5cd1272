"""`sitegen update` folds results that share no identifier with a record into it when the metadata
matcher calls them the same work, and lists probable pairs for a reviewer without merging them."""

from __future__ import annotations

from sitegen.living.merge import integrate
from sitegen.living.update import UpdateResult, markdown_report
from sitegen.records.ids import record_id
from sitegen.records.model import CslName, Record, RecordMeta

TITLE = "Early mobilisation after acute stroke: a randomised controlled trial of very early rehabilitation"


def record(source: str, title: str = TITLE, volume: str = "386", page: str = "46-55", **ids: str) -> Record:
    identifiers = {"doi": ids.get("doi"), "pmid": ids.get("pmid"), "openalex": ids.get("openalex")}
    return Record(id=record_id(identifiers), title=title, DOI=identifiers["doi"], PMID=identifiers["pmid"],
                  author=[CslName(family="Bernhardt", given="Julie"), CslName(family="Langhorne", given="Peter"),
                          CslName(family="Lindley", given="Richard I.")],
                  issued={"date-parts": [[2015]]}, volume=volume, page=page, **{"container-title": "Lancet"},
                  custom=RecordMeta(openalex=identifiers["openalex"], sources=[source]))


def test_a_result_with_no_shared_identifier_joins_the_record_it_matches():
    existing = record("pubmed", pmid="25892679")
    result = integrate({existing.id: existing}, [record("openalex", title=TITLE.upper() + ".", openalex="W1")])
    assert result.ids == ["pmid:25892679"] and list(result.records) == ["pmid:25892679"]
    merged = result.records["pmid:25892679"]
    assert merged.custom.openalex == "W1" and merged.title == TITLE  # the reviewers' title stays
    assert any("no identifier in common" in note for note in merged.custom.conflicts)
    assert result.probable == []
    # The next run finds it by identity.
    again = integrate(result.records, [record("openalex", openalex="W1")])
    assert again.ids == ["pmid:25892679"]


def test_new_results_that_match_each_other_become_one_record():
    result = integrate({}, [record("pubmed", pmid="1"), record("openalex", openalex="W1")])
    assert len(result.records) == 1 and result.ids[0] == result.ids[1]


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
