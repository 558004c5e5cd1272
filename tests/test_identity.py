"""Identity-graph deduplication: identifier-only edges, conflict splitting, order independence."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.records.identity import deduplicate
from sitegen.records.ids import record_id
from sitegen.records.model import CslDate, CslName, Record, RecordMeta, model_data
from sitegen.sources.openalex import work_to_record

REAL = [work_to_record(w) for w in json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())]


def rec(source="openalex", title="A study", abstract=None, retracted=False, url=None, licence=None, **ids) -> Record:
    identifiers = {"doi": ids.get("doi"), "pmid": ids.get("pmid"), "pmcid": ids.get("pmcid"),
                   "openalex": ids.get("openalex"), "arxiv": ids.get("arxiv")}
    return Record(id=record_id(identifiers), title=title, abstract=abstract, DOI=identifiers["doi"],
                  PMID=identifiers["pmid"], PMCID=identifiers["pmcid"], author=[CslName(literal="A. Author")],
                  custom=RecordMeta(openalex=identifiers["openalex"], arxiv=identifiers["arxiv"], sources=[source],
                                    retracted=retracted, fulltext_url=url, license=licence,
                                    open_access=bool(url)))


def test_records_sharing_an_identifier_merge_transitively():
    a = rec("pubmed", pmid="111", doi="10.1000/x")
    b = rec("openalex", openalex="W1", pmid="111")
    c = rec("crossref", doi="10.1000/x")
    result = deduplicate([a, b, c])
    [merged] = result.records
    assert merged.id == "10.1000/x"
    assert merged.identifiers() == {"doi": "10.1000/x", "pmid": "111", "openalex": "W1"}
    assert merged.custom.sources == ["openalex", "pubmed", "crossref"]
    assert result.members == {"10.1000/x": [0, 1, 2]} and result.duplicates_removed == 2


def test_titles_never_join_records():
    preprint = rec("arxiv", title="Same title", arxiv="2101.00001")
    article = rec("pubmed", title="Same title", pmid="5")
    assert len(deduplicate([preprint, article]).records) == 2


def test_conflicting_dois_are_split_and_flagged():
    a = rec("pubmed", pmid="7", doi="10.1000/a")
    b = rec("crossref", doi="10.1000/b")
    c = rec("openalex", openalex="W9", pmid="7", doi="10.1000/b")  # bridges both DOIs
    result = deduplicate([a, b, c])
    ids = sorted(r.id for r in result.records)
    assert ids == ["10.1000/a", "10.1000/b"]
    assert all(any("Conflicting DOI values 10.1000/a, 10.1000/b" in n for n in r.custom.conflicts)
               for r in result.records)


def test_one_doi_two_pmids_keeps_records_apart_without_sharing_an_id():
    a = rec("pubmed", pmid="1", doi="10.1000/x")
    b = rec("europepmc", pmid="2", doi="10.1000/x")
    result = deduplicate([a, b])
    assert sorted(r.id for r in result.records) == ["pmid:1", "pmid:2"]
    assert all("DOI 10.1000/x is shared with other records" in " ".join(r.custom.conflicts) for r in result.records)
    assert all(r.DOI == "10.1000/x" for r in result.records)  # every identifier is kept


def test_merge_rules():
    short = rec("pubmed", pmid="3", abstract="Short.", url="https://pmc.example/a", licence="cc-by")
    long = rec("openalex", openalex="W3", pmid="3", abstract="A much longer abstract text.", retracted=True,
               url=None, licence="other")
    [merged] = deduplicate([long, short]).records
    assert merged.abstract == "A much longer abstract text."  # the longest, whole
    assert merged.custom.retracted is True  # any source saying so
    assert (merged.custom.fulltext_url, merged.custom.license) == ("https://pmc.example/a", "cc-by")  # together


def test_real_records_are_unique_and_survive_unchanged():
    result = deduplicate(REAL)
    assert len(result.records) == 25 and result.duplicates_removed == 0
    assert {model_data(r)["id"] for r in result.records} == {r.id for r in REAL}


def test_same_work_from_two_sources_on_real_data():
    real = REAL[0]
    from_pubmed = rec("pubmed", title=real.title, pmid=real.PMID, doi=real.DOI)
    result = deduplicate([real, from_pubmed])
    [merged] = result.records
    assert merged.id == real.id and merged.custom.openalex == real.custom.openalex
    assert merged.custom.sources == ["openalex", "pubmed"]


identifier = st.one_of(
    st.builds(lambda n: {"doi": f"10.1000/{n}"}, st.integers(0, 3)),
    st.builds(lambda n: {"pmid": str(n + 1)}, st.integers(0, 3)),
    st.builds(lambda n: {"openalex": f"W{n}"}, st.integers(0, 3)),
    st.builds(lambda n: {"arxiv": f"2101.0000{n}"}, st.integers(0, 3)),
)
random_record = st.builds(lambda parts, source: rec(source, **{k: v for p in parts for k, v in p.items()}),
                          st.lists(identifier, min_size=1, max_size=3),
                          st.sampled_from(["openalex", "pubmed", "europepmc", "crossref", "arxiv"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(random_record, max_size=12), st.randoms())
def test_deduplication_is_independent_of_input_order(records, random):
    shuffled = records[:]
    random.shuffle(shuffled)
    first, second = deduplicate(records), deduplicate(shuffled)
    assert [model_data(r) for r in first.records] == [model_data(r) for r in second.records]


@settings(max_examples=300, deadline=None)
@given(st.lists(random_record, max_size=12))
def test_never_merges_conflicting_identifiers_and_ids_are_unique(records):
    result = deduplicate(records)
    assert len({r.id for r in result.records}) == len(result.records)
    for merged_id, members in result.members.items():
        for namespace in ("doi", "pmid", "openalex", "arxiv"):
            values = {records[i].identifiers().get(namespace) for i in members} - {None}
            assert len(values) <= 1, (merged_id, namespace, values)
    assert sorted(i for members in result.members.values() for i in members) == list(range(len(records)))


@settings(max_examples=200, deadline=None)
@given(st.lists(random_record, max_size=12))
def test_deduplicating_twice_keeps_every_record_and_id(records):
    # Conflict notes describe the grouping they came from (a second pass sees merged records,
    # not the originals), but which records exist, their ids and identifiers never change.
    def without_notes(result):
        return [{**model_data(r), "custom": {**model_data(r)["custom"], "conflicts": None}} for r in result]

    once = deduplicate(records).records
    twice = deduplicate(once).records
    assert without_notes(twice) == without_notes(once)
    assert [bool(r.custom.conflicts) for r in twice] == [bool(r.custom.conflicts) for r in once]


def test_conflict_notes_stay_short_for_large_conflicts():
    records = [rec("pubmed", doi=f"10.1000/{n}", pmid="42") for n in range(300)]
    result = deduplicate(records)
    assert len(result.records) == 300
    assert max(len(note) for r in result.records for note in r.custom.conflicts) < 400


def test_a_shared_doi_with_unrelated_titles_is_not_one_work():
    # A conference supplement's DOI on two different abstracts, each with its own PubMed/OpenAlex id.
    a = rec("pubmed", title="Linagliptin improves the prognosis of ischemic cardiomyopathy", doi="10.2337/db14-833",
            pmid="111")
    b = rec("openalex", title="Comparison of liraglutide and exenatide on body weight", doi="10.2337/db14-833",
            openalex="W22")
    result = deduplicate([a, b])
    assert sorted(r.id for r in result.records) == ["openalex:W22", "pmid:111"]
    assert all(r.DOI == "10.2337/db14-833" for r in result.records)
    assert all("have unrelated titles" in " ".join(r.custom.conflicts) for r in result.records)


def test_same_work_with_slightly_different_titles_still_merges():
    a = rec("pubmed", title="Efficacy of batroxobin for vascular cognitive impairment. [Chinese]", doi="10.1000/x",
            pmid="5")
    b = rec("openalex", title="Efficacy of batroxobin for vascular cognitive impairment", doi="10.1000/x", openalex="W5")
    [merged] = deduplicate([a, b]).records
    assert merged.identifiers() == {"doi": "10.1000/x", "pmid": "5", "openalex": "W5"} and not merged.custom.conflicts


def test_works_sharing_their_only_identifier_stay_two_records_one_filed_by_content():
    a = rec("crossref", title="Linagliptin improves the prognosis of ischemic cardiomyopathy", doi="10.2337/db14-833")
    b = rec("crossref", title="Comparison of liraglutide and exenatide on body weight", doi="10.2337/db14-833")
    records = deduplicate([a, b]).records
    assert sorted(r.title for r in records) == sorted([a.title, b.title])  # two works, two records
    [by_content] = [r for r in records if r.id.startswith("ref:")]
    assert by_content.DOI == "10.2337/db14-833" and by_content.custom.ref == by_content.id.removeprefix("ref:")
    assert any("content key" in note for note in by_content.custom.conflicts)
    assert [r.id for r in deduplicate([b, a]).records] == [r.id for r in records]  # in any order


ORIGINAL = "Effect of exercise on depressive symptoms in older adults: a randomised trial"
NOTICE_TITLES = [f"Erratum: {ORIGINAL}", f"Erratum to: {ORIGINAL}", f"ERRATUM: {ORIGINAL}", f"Errata: {ORIGINAL}",
                 f"Correction to: {ORIGINAL}", f"Correction: {ORIGINAL}", f"Corrigendum to \"{ORIGINAL}\"",
                 f"Corrigendum: {ORIGINAL}", f"Retraction: {ORIGINAL}", f"Retraction note to: {ORIGINAL}",
                 f"Notice of retraction: {ORIGINAL}", f"Expression of concern: {ORIGINAL}",
                 f"Reply to: {ORIGINAL}", f"Reply to comment on {ORIGINAL}", f"In reply: {ORIGINAL}",
                 f"Authors' reply: {ORIGINAL}", f"Comment on: {ORIGINAL}", f"Comment on \"{ORIGINAL}\"",
                 f"Response to the letter on {ORIGINAL}", f"[Erratum: {ORIGINAL}]", f"{ORIGINAL} [Erratum]",
                 f"{ORIGINAL} (Correction)"]
# Studies whose titles begin with the same words as a notice; they are works, not notices.
WORK_TITLES = ["Correction of adolescent idiopathic scoliosis with pedicle screws",
               "Correction for attenuation in meta-analysis of reliability coefficients",
               "Response to treatment with lithium in bipolar disorder", "Retraction of the gingiva before impression",
               f"RETRACTED: {ORIGINAL}", "Commentary writing in nursing education", "Replying to patients online"]


@pytest.mark.parametrize("title", NOTICE_TITLES)
def test_an_erratum_or_reply_with_the_originals_doi_stays_apart(title):
    from sitegen.records.identity import is_notice
    original = rec("pubmed", title=ORIGINAL, doi="10.1000/trial", pmid="111")
    notice = rec("crossref", title=title, doi="10.1000/trial", openalex="W9")
    assert is_notice(notice) and not is_notice(original)
    result = deduplicate([original, notice])
    assert sorted(r.id for r in result.records) == ["openalex:W9", "pmid:111"]
    assert all("notice about another work" in " ".join(r.custom.conflicts) for r in result.records)
    # The same notice from two sources (sharing its own identifiers) is still one record.
    again = rec("openalex", title=title.upper(), doi="10.1000/trial", openalex="W9")
    assert len(deduplicate([original, notice, again]).records) == 2


@pytest.mark.parametrize("kind", ["Published Erratum", "erratum", "Retraction of Publication", "retraction-notice"])
def test_a_notice_by_publication_type_stays_apart(kind):
    original = rec("pubmed", title=ORIGINAL, doi="10.1000/trial", pmid="111")
    notice = rec("openalex", title=ORIGINAL, doi="10.1000/trial", openalex="W9")
    notice = notice.model_copy(update={"custom": notice.custom.model_copy(update={"publication_types": [kind]})})
    assert len(deduplicate([original, notice]).records) == 2


@pytest.mark.parametrize("title", WORK_TITLES)
def test_titles_that_only_look_like_notices_are_works(title):
    from sitegen.records.identity import is_notice
    assert not is_notice(rec(title=title, pmid="7"))
    a = rec("pubmed", title=title, doi="10.1000/w", pmid="5")
    b = rec("openalex", title=title, doi="10.1000/w", openalex="W5")
    assert len(deduplicate([a, b]).records) == 1
    retracted = rec("pubmed", title=title, pmid="6")
    retracted = retracted.model_copy(update={"custom": retracted.custom.model_copy(
        update={"publication_types": ["Retracted Publication"]})})
    assert not is_notice(retracted)


SUPPLEMENT_TITLES = ["Linagliptin improves the prognosis of ischemic cardiomyopathy",
                     "Comparison of liraglutide and exenatide on body weight",
                     "Insulin pump therapy in adolescents: a registry study",
                     "Sodium-glucose cotransporter 2 inhibitors and ketoacidosis"]


def test_a_supplement_doi_on_many_abstracts_merges_none_of_them():
    records = [rec("pubmed", title=title, doi="10.2337/db14-suppl", pmid=str(100 + n))
               for n, title in enumerate(SUPPLEMENT_TITLES)]
    records += [rec("openalex", title=title.upper() + ".", doi="10.2337/db14-suppl", openalex=f"W{n + 1}")
                for n, title in enumerate(SUPPLEMENT_TITLES[:2])]
    result = deduplicate(records)
    # Each abstract is one record; the same abstract from two sources (same title) is merged.
    assert len(result.records) == len(SUPPLEMENT_TITLES)
    assert sorted(len(members) for members in result.members.values()) == [1, 1, 2, 2]


@pytest.mark.parametrize(("first", "second"), [
    ("Efficacy of batroxobin for vascular cognitive impairment", "[Efficacy of batroxobin for vascular cognitive "
                                                                 "impairment]."),
    ("Efficacy of batroxobin for vascular cognitive impairment", "Efficacy of batroxobin for vascular cognitive "
                                                                 "impairment [Article in Chinese]"),
    ("Efficacy of batroxobin for vascular cognitive impairment", "Efficacy of batroxobin for vascular cognitive "
                                                                 "impairment (author's transl)"),
    ("Bone &amp; joint outcomes after <i>hip</i> fracture", "Bone & joint outcomes after hip fracture"),
    ("TREATMENT OF HYPERTENSION IN THE ELDERLY.", "Treatment of hypertension in the elderly"),
])
def test_same_doi_with_marked_or_encoded_titles_merges(first, second):
    a = rec("pubmed", title=first, doi="10.1000/x", pmid="5")
    b = rec("crossref", title=second, doi="10.1000/x")
    [merged] = deduplicate([a, b]).records
    assert not merged.custom.conflicts


def test_same_doi_and_pmid_with_a_translated_title_merges():
    a = rec("pubmed", title="Efficacy of batroxobin for vascular cognitive impairment", doi="10.1000/x", pmid="5")
    b = rec("openalex", title="巴曲酶治疗血管性认知障碍的疗效", doi="10.1000/x", pmid="5", openalex="W5")
    result = deduplicate([a, b])
    [merged] = result.records
    assert merged.identifiers() == {"doi": "10.1000/x", "pmid": "5", "openalex": "W5"}
    # A DOI alone with an unrelated (translated) title is not enough: kept apart when it can be.
    c = rec("crossref", title="巴曲酶治疗血管性认知障碍的疗效", doi="10.1000/x", openalex="W6")
    assert len(deduplicate([a, c]).records) == 2


@pytest.mark.parametrize("arxiv", ["2312.07559", "hep-th/9901001"])
def test_an_arxiv_record_and_its_arxiv_doi_record_are_one_work(arxiv):
    preprint = rec("arxiv", title="Attention is all you need", arxiv=arxiv)
    datacite = rec("openalex", title="Attention Is All You Need", doi=f"10.48550/arxiv.{arxiv}", openalex="W7")
    for order in ([preprint, datacite], [datacite, preprint]):
        [merged] = deduplicate(order).records
        assert merged.identifiers() == {"doi": f"10.48550/arxiv.{arxiv}", "arxiv": arxiv, "openalex": "W7"}
    # The journal version (its own DOI) stays a separate record.
    journal = rec("crossref", title="Attention is all you need", doi="10.5555/3295222.3295349", arxiv=arxiv)
    assert len(deduplicate([datacite, journal]).records) == 2


def test_the_example_reviews_records_are_unchanged():
    from sitegen.records.model import Record as Model
    path = FIXTURES.parent.parent / "reviews" / "object-in-context" / "records.jsonl"
    records = [Model.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]
    result = deduplicate(records)
    assert [r.id for r in result.records] == sorted(r.id for r in records)
    assert result.records == sorted(records, key=lambda r: r.id)


def test_update_keeps_an_erratum_and_a_supplement_abstract_apart_from_existing_records():
    from sitegen.living.merge import integrate
    original = rec("pubmed", title=ORIGINAL, doi="10.1000/trial", pmid="111")
    abstract = rec("pubmed", title=SUPPLEMENT_TITLES[0], doi="10.2337/db14-suppl", pmid="201")
    existing = {original.id: original, abstract.id: abstract}
    retrieved = [rec("crossref", title=f"Erratum: {ORIGINAL}", doi="10.1000/trial", openalex="W9"),
                 rec("openalex", title=SUPPLEMENT_TITLES[1], doi="10.2337/db14-suppl", openalex="W8"),
                 rec("openalex", title=ORIGINAL.upper(), doi="10.1000/trial", pmid="111", openalex="W7")]
    result = integrate(existing, retrieved)
    assert result.ids == ["openalex:W9", "openalex:W8", "10.1000/trial"]
    assert result.records["10.1000/trial"].custom.openalex == "W7"
    assert set(result.records) == {"10.1000/trial", "10.2337/db14-suppl", "openalex:W8", "openalex:W9"}


def test_a_record_without_a_title_never_joins_two_works_through_a_shared_doi():
    from sitegen.records.identity import _title_clusters
    titles = [SUPPLEMENT_TITLES[0].lower(), SUPPLEMENT_TITLES[1].lower(), ""]  # two abstracts, one record untitled
    ids, notices = [{"doi": "10.2337/db14-suppl"}] * 3, [False] * 3

    def unasked(index: int):  # titles this unlike are told apart before the matcher is asked
        pytest.fail("the matcher was asked")
    assert sorted(sorted(c) for c in _title_clusters([0, 1, 2], titles, ids, notices, unasked)) == [[0], [1], [2]]
    # Under a DOI with one titled record, the untitled record is that work.
    assert sorted(sorted(c) for c in _title_clusters([0, 2], titles, ids, notices, unasked)) == [[0, 2]]


def test_one_work_two_sources_date_and_number_apart_is_one_record():
    # Crossref dates a work by its print issue, OpenAlex by its first appearance online; one gives a volume the
    # other does not agree with: still one work by its DOI (only its title's numbers, its first page and its
    # first author tell a DOI's several works apart).
    title = "Lateral entorhinal cortex is critical for novel object-context recognition"
    online = rec("openalex", title=title, doi="10.1002/hipo.22095", openalex="W1").model_copy(
        update={"issued": CslDate(date_parts=[[2017]]), "volume": "23", "page": "352-366"})
    printed = rec("crossref", title=title.upper(), doi="10.1002/hipo.22095").model_copy(
        update={"issued": CslDate(date_parts=[[2020]]), "volume": "5", "page": "352"})
    assert len(deduplicate([online, printed]).records) == 1
    other_page = printed.model_copy(update={"page": "400-410"})
    assert len(deduplicate([online, other_page]).records) == 2  # another abstract of one supplement


def test_open_access_travels_with_the_full_text_address_and_licence_of_one_record():
    # The primary record (PubMed's) says open access but gives no address; the record with the address says
    # it is not: the merged record takes the flag, address and licence from that one record, never pairing one
    # source's flag with another's address (seed 004's merge rule).
    def flagged(record: Record, open_access: bool) -> Record:
        return record.model_copy(update={"custom": record.custom.model_copy(update={"open_access": open_access})})

    primary = flagged(rec("pubmed", pmid="4", licence="cc-by"), True)
    linked = flagged(rec("openalex", openalex="W4", pmid="4", url="https://repository.example/4", licence="other"),
                     False)
    for order in ([primary, linked], [linked, primary]):
        [merged] = deduplicate(order).records
        assert merged.custom.sources == ["openalex", "pubmed"]
        assert (merged.custom.fulltext_url, merged.custom.license, merged.custom.open_access) == (
            "https://repository.example/4", "other", False)
    # With no record giving an address, all three come from the primary record.
    alone = rec("openalex", openalex="W4", pmid="4", licence="other")
    [merged] = deduplicate([alone, primary]).records
    assert (merged.custom.fulltext_url, merged.custom.license, merged.custom.open_access) == (None, "cc-by", True)


def test_a_record_keeps_its_id_when_a_higher_priority_identifier_turns_up_later():
    """Within one retrieval the merged record takes the highest-priority id (doi > openalex > arxiv > pmid), but
    a record already in records.jsonl keeps its id for good (decisions name it): the DOI found later enriches it."""
    from sitegen.living.merge import integrate
    earlier = rec("pubmed", title="A trial", pmid="111")
    result = integrate({earlier.id: earlier}, [rec("openalex", title="A trial", doi="10.1000/trial", pmid="111",
                                                   openalex="W7")])
    assert result.ids == ["pmid:111"] and set(result.records) == {"pmid:111"}
    assert result.records["pmid:111"].DOI == "10.1000/trial" and result.records["pmid:111"].custom.openalex == "W7"


@pytest.mark.parametrize(("comment", "reply"), [
    (f"Comment on '{ORIGINAL}'", f"Reply to comment on '{ORIGINAL}'"),
    (f"Comment on: {ORIGINAL}", f"Authors' reply: {ORIGINAL}"),
    (f"{ORIGINAL} [Comment]", f"Response to comment on '{ORIGINAL}'"),
])
def test_a_comment_and_its_reply_sharing_a_doi_stay_apart(comment, reply):
    """Both are exported with the commented article's DOI: two notices, but of two kinds, so two works."""
    first = rec("pubmed", title=comment, doi="10.1000/trial", pmid="111")
    second = rec("crossref", title=reply, doi="10.1000/trial", openalex="W9")
    result = deduplicate([first, second])
    assert sorted(r.id for r in result.records) == ["openalex:W9", "pmid:111"]
    assert all("notices about another work of different kinds" in " ".join(r.custom.conflicts)
               for r in result.records)


def test_a_reply_typed_comment_by_pubmed_is_the_reply_another_source_titles():
    from sitegen.records.notices import notice_kind
    assert notice_kind(f"Reply to comment on '{ORIGINAL}'", ["Letter", "Comment"]) == "reply"
    assert notice_kind(f"Letter about '{ORIGINAL}'", ["Letter", "Comment"]) == "comment"
    assert notice_kind(f"Reply to comment on '{ORIGINAL}'", ["Published Erratum"]) == "erratum"
    pubmed = rec("pubmed", title=f"Reply to comment on '{ORIGINAL}'", doi="10.1000/trial", pmid="111")
    pubmed = pubmed.model_copy(update={"custom": pubmed.custom.model_copy(update={"publication_types": ["Comment"]})})
    crossref = rec("crossref", title=f"Reply to comment on '{ORIGINAL}'", doi="10.1000/trial", openalex="W9")
    assert len(deduplicate([pubmed, crossref]).records) == 1


@pytest.mark.parametrize(("first", "second"), [
    (f"{ORIGINAL}. Part A", f"{ORIGINAL}. Part B"),
    (f"{ORIGINAL}, part one", f"{ORIGINAL}, part two"),
    (f"{ORIGINAL}: part I", f"{ORIGINAL}: part V"),
])
def test_parts_of_a_series_sharing_a_doi_stay_apart(first, second):
    """A series' parts are numbered by letters and words as often as by digits: two works, even on one DOI."""
    result = deduplicate([rec("pubmed", title=first, doi="10.1000/series", pmid="111"),
                          rec("crossref", title=second, doi="10.1000/series", openalex="W9")])
    assert sorted(r.id for r in result.records) == ["openalex:W9", "pmid:111"]


@pytest.mark.parametrize("protocol", [f"{ORIGINAL}: study protocol", f"Protocol for {ORIGINAL}",
                                      f"{ORIGINAL}: rationale and design"])
def test_a_protocol_and_its_results_paper_sharing_a_doi_stay_apart(protocol):
    result = deduplicate([rec("pubmed", title=protocol, doi="10.1000/trial", pmid="111"),
                          rec("crossref", title=ORIGINAL, doi="10.1000/trial", openalex="W9")])
    assert sorted(r.id for r in result.records) == ["openalex:W9", "pmid:111"]
    assert all("a trial's protocol" in " ".join(r.custom.conflicts) for r in result.records)


def test_a_retraction_flag_without_a_date_and_a_dated_reinstatement_merge_into_a_record_that_says_both():
    """OpenAlex still flags a reinstated article retracted (its `is_retracted` gives no date); Crossref lists the
    retraction lifted by a later reinstatement. Merged, the flag stands (a retraction without a date is never
    lifted), and the record keeps the reinstatement: it says both, for a human, never silently either. A retraction
    a source lists with a date no later than the reinstatement another lists is lifted on the merged record."""
    from sitegen.records.model import Reinstatement, Update, retraction_disputed

    doi = "10.1234/reinstated"
    reinstated = [Reinstatement(doi="10.1234/r2", date=[2021, 6, 30], retracted_on=[2019, 3, 1])]
    crossref = rec("crossref", doi=doi)
    crossref = crossref.model_copy(update={"custom": crossref.custom.model_copy(update={
        "reinstatements": reinstated})})
    for openalex in (rec("openalex", retracted=True, doi=doi, openalex="W1"),
                     rec("pubmed", retracted=True, doi=doi, pmid="123")):
        [merged] = deduplicate([openalex, crossref]).records
        assert merged.custom.retracted and merged.custom.reinstatements == reinstated
        assert retraction_disputed(merged.custom)
    # a dated retraction one source lists, lifted by the reinstatement another lists: not retracted, said so once
    listing = rec("crossref", retracted=True, doi=doi)
    listing = listing.model_copy(update={"custom": listing.custom.model_copy(update={
        "updates": [Update(kind="retraction", doi="10.1234/r1", date=[2019, 3, 1])]})})
    reinstating = rec("openalex", doi=doi, openalex="W1")
    reinstating = reinstating.model_copy(update={"custom": reinstating.custom.model_copy(update={
        "reinstatements": [Reinstatement(doi="10.1234/r2", date=[2021, 6, 30])]})})
    [merged] = deduplicate([listing, reinstating]).records
    assert not merged.custom.retracted and merged.custom.updates == [] and not retraction_disputed(merged.custom)
    assert merged.custom.reinstatements == reinstated


def _with(record: Record, **custom) -> Record:
    return record.model_copy(update={"custom": record.custom.model_copy(update=custom)})


def test_a_record_merged_from_several_sources_is_reinstated_by_the_dated_rule_a_single_one_is():
    """A merged record follows the one dated rule (`retraction_lifted`) a record of one source does: a reinstatement
    notice met later (beside it, or listed by a source retrieved at a later run) lifts the dated retraction its
    sources list. A source's flag giving no date is kept as a retraction giving none, so it still stands beside
    the reinstatement, for a human to decide, however many sources and runs the record went through."""
    from sitegen.records.model import NoticeOf, Reinstatement, Update, retraction_disputed

    doi = "10.1234/reinstated"
    listing = _with(rec("crossref", retracted=True, doi=doi),
                    updates=[Update(kind="retraction", doi="10.1234/r1", date=[2019, 3, 1])])
    notice = _with(rec("crossref", title="Reinstatement notice", doi="10.1234/r2"),
                   publication_types=["reinstatement-notice"],
                   notice_of=[NoticeOf(kind="reinstatement", doi=doi, date=[2021, 6, 30])])
    lifting = [Reinstatement(doi="10.1234/r2", date=[2021, 6, 30], retracted_on=[2019, 3, 1])]
    reinstating = _with(rec("crossref", doi=doi), reinstatements=lifting)
    for others in ([], [rec("pubmed", doi=doi, pmid="123")]):
        [merged] = deduplicate([listing, *others]).records
        assert merged.custom.retracted
        # a reinstatement notice met beside it, in one run or at a later one (the merged record kept, then met)
        for records in ([listing, *others, notice], [merged, notice]):
            work = next(r for r in deduplicate(records).records if r.DOI == doi)
            assert not work.custom.retracted and work.custom.updates == [] and work.custom.reinstatements == lifting
        # the work's own record, retrieved at a later run, listing the reinstatement
        [work] = deduplicate([merged, reinstating]).records
        assert not work.custom.retracted and work.custom.reinstatements == lifting
    # OpenAlex's flag gives no date: beside the dated retraction Crossref lists, it stands after the reinstatement
    [merged] = deduplicate([listing, rec("openalex", retracted=True, doi=doi, openalex="W1")]).records
    for records in ([merged, notice], [merged, reinstating]):
        work = next(r for r in deduplicate(records).records if r.DOI == doi)
        assert work.custom.retracted and retraction_disputed(work.custom)
        [work] = deduplicate([work]).records  # and at every later run
        assert work.custom.retracted and retraction_disputed(work.custom)
    # so it does beside a dated retraction a notice seen tells, as the work's own flag alone
    retraction = _with(rec("crossref", title="Retraction notice", doi="10.1234/r1"),
                       publication_types=["retraction-notice"],
                       notice_of=[NoticeOf(kind="retraction", doi=doi, date=[2019, 3, 1])])
    flagged = rec("openalex", retracted=True, doi=doi, openalex="W1")
    work = next(r for r in deduplicate([flagged, retraction]).records if r.DOI == doi)
    work = next(r for r in deduplicate([work, notice]).records if r.DOI == doi)
    assert work.custom.retracted and retraction_disputed(work.custom)


def test_a_notice_naming_its_work_by_pmid_alone_marks_the_work_as_one_naming_its_doi_does():
    """PubMed and Europe PMC name the work a notice is about by PMID ("Retraction of", "Erratum for": real shape,
    the Lancet's "Department of Error." naming PMID 39293462), often without its DOI. The notice marked nothing:
    `notice_of` held DOIs only. Met by PMID, the work is marked as by DOI: in one run or a later one, whichever
    record came first, once though the work's own record lists the notice by its PMID."""
    from sitegen.records.model import NoticeOf, Update

    erratum = _with(rec("europepmc", title="Department of Error.", doi="10.1016/s0140-6736(24)02716-8",
                        pmid="39709208"), publication_types=["Published Erratum"],
                    notice_of=[NoticeOf(kind="correction", pmid="39293462")])
    told = Update(kind="correction", doi=erratum.DOI, pmid=erratum.PMID)
    # the work known by PMID alone (PubMed), or by its DOI and PMID (OpenAlex)
    for work in (rec("pubmed", pmid="39293462"), rec("openalex", doi="10.1016/s0140-6736(24)01653-2",
                                                     pmid="39293462", openalex="W1")):
        for records in ([work, erratum], [erratum, work]):
            marked = next(r for r in deduplicate(records).records if r.PMID == "39293462")
            assert marked.custom.updates == [told] and not marked.custom.retracted
            assert deduplicate([marked, erratum]).records == deduplicate(records).records  # at a later run
        # the work's own record lists the erratum by its PMID (PubMed's "ErratumIn"): one notice, not two
        listing = _with(work, updates=[Update(kind="correction", pmid="39709208")])
        marked = next(r for r in deduplicate([listing, erratum]).records if r.PMID == "39293462")
        assert marked.custom.updates == [told]
    # a retraction notice by PMID retracts
    retraction = _with(rec("pubmed", title="Retraction notice", pmid="40000001"),
                       publication_types=["Retraction of Publication"],
                       notice_of=[NoticeOf(kind="retraction", pmid="39293462")])
    marked = next(r for r in deduplicate([rec("pubmed", pmid="39293462"), retraction]).records
                  if r.PMID == "39293462")
    assert marked.custom.retracted and marked.custom.updates == [Update(kind="retraction", pmid="40000001")]
    # a notice naming its work by DOI and PMID marks it once; another work is not marked
    both = _with(erratum, notice_of=[NoticeOf(kind="correction", doi="10.1016/s0140-6736(24)01653-2",
                                               pmid="39293462")])
    records = deduplicate([rec("openalex", doi="10.1016/s0140-6736(24)01653-2", pmid="39293462", openalex="W1"),
                           both, rec("pubmed", pmid="39293463")]).records
    assert [r.custom.updates for r in records if r.PMID in ("39293462", "39293463")] == [[told], []]


def test_the_works_a_notice_is_about_are_kept_once_when_its_sources_name_them_differently():
    # Crossref names the work by DOI, PubMed by PMID and the DOI it cites: the merged notice names it once.
    from sitegen.records.model import NoticeOf

    doi = "10.1016/s0140-6736(24)01653-2"
    crossref_notice = _with(rec("crossref", title="Department of Error.", doi="10.1016/s0140-6736(24)02716-8"),
                            notice_of=[NoticeOf(kind="correction", doi=doi, date=[2024, 12, 20])])
    pubmed_notice = _with(rec("pubmed", title="Department of Error.", doi="10.1016/s0140-6736(24)02716-8",
                              pmid="39709208"), notice_of=[NoticeOf(kind="correction", doi=doi, pmid="39293462")])
    [merged] = deduplicate([crossref_notice, pubmed_notice]).records
    assert merged.custom.notice_of == [NoticeOf(kind="correction", doi=doi, pmid="39293462", date=[2024, 12, 20])]


def test_a_notice_of_names_its_work_and_older_lines_still_read():
    from pydantic import ValidationError

    from sitegen.records.model import NoticeOf

    assert NoticeOf.model_validate_json('{"kind": "retraction", "doi": "10.1234/x"}').pmid is None  # as written before
    assert NoticeOf.model_validate_json('{"kind": "retraction", "pmid": "123"}').doi is None
    with pytest.raises(ValidationError, match="named by its DOI or its PMID"):
        NoticeOf.model_validate_json('{"kind": "retraction"}')
    with pytest.raises(ValidationError, match="not in normalised form"):
        NoticeOf.model_validate_json('{"kind": "retraction", "pmid": "PMID: 123"}')


def test_listings_of_one_notice_are_joined_through_any_listing_naming_both_its_ids_in_any_order():
    """Crossref lists a retraction notice by DOI (`updated-by`), PubMed by PMID ("RetractionIn"), Europe PMC by both:
    one notice, however the records come. Without a listing (or the notice's own record) naming both, nothing says
    the DOI and the PMID are one notice's: they stay two listings, never guessed one. The works a notice is about are
    joined the same way."""
    from itertools import permutations

    from sitegen.records.model import NoticeOf, Update

    doi = "10.1234/work"
    by_doi = _with(rec("crossref", doi=doi), updates=[Update(kind="retraction", doi="10.1234/n", date=[2020, 5, 1])])
    by_pmid = _with(rec("pubmed", doi=doi, pmid="1"), updates=[Update(kind="retraction", pmid="2")])
    by_both = _with(rec("europepmc", doi=doi, pmid="1"), updates=[Update(kind="retraction", doi="10.1234/n", pmid="2")])
    for records in permutations([by_doi, by_pmid, by_both]):
        [merged] = deduplicate(list(records)).records
        assert merged.custom.updates == [Update(kind="retraction", doi="10.1234/n", pmid="2", date=[2020, 5, 1])]
    [merged] = deduplicate([by_doi, by_pmid]).records
    assert {(u.doi, u.pmid) for u in merged.custom.updates} == {("10.1234/n", None), (None, "2")}
    # the notice's own record names both, and links the listings as one
    notice = _with(rec("crossref", title="Retraction notice", doi="10.1234/n", pmid="2"),
                   publication_types=["retraction-notice"], notice_of=[NoticeOf(kind="retraction", doi=doi)])
    work = next(r for r in deduplicate([by_doi, by_pmid, notice]).records if r.DOI == doi)
    assert work.custom.updates == [Update(kind="retraction", doi="10.1234/n", pmid="2", date=[2020, 5, 1])]

    # the work a notice is about, named by DOI by one source, by PMID by another, by both by a third
    names = [NoticeOf(kind="retraction", doi=doi), NoticeOf(kind="retraction", pmid="1", date=[2020, 5, 1]),
             NoticeOf(kind="retraction", doi=doi, pmid="1")]
    sources = ["crossref", "pubmed", "europepmc"]
    notices = [_with(rec(source, title="Retraction notice", doi="10.1234/n"), publication_types=["retraction-notice"],
                     notice_of=[name]) for source, name in zip(sources, names, strict=True)]
    for records in permutations(notices):
        [merged] = deduplicate(list(records)).records
        assert merged.custom.notice_of == [NoticeOf(kind="retraction", doi=doi, pmid="1", date=[2020, 5, 1])]


def _plos_work() -> Record:
    """The real Crossref record of a PLOS ONE article (DOI only: Crossref gives no PMID)."""
    from sitegen.sources import crossref

    item = json.loads((FIXTURES / "crossref" / "crossref_work_10.1371_journal.pone.0033693.json").read_text())
    return crossref.work_to_record(item["message"])


def test_a_reinstatement_naming_the_work_by_pmid_lifts_a_retraction_naming_it_by_doi_through_a_third_listing():
    """Crossref's retraction notice names the work by DOI; PubMed's reinstatement notice by PMID alone ("Retraction
    and Republication" naming the PMID); the work's own Crossref record gives no PMID. A third listing naming both
    (Europe PMC's record of the retraction notice, or another notice about the work) says the DOI and the PMID are
    one work's: the reinstatement lifts the retraction, in whatever order the records come. Built from the real
    Crossref record of the work, the notices shaped as their indexes list them (no recording shows such a case)."""
    from itertools import permutations

    from sitegen.records.model import NoticeOf, Reinstatement

    work = _plos_work()
    doi, pmid = work.DOI, "22457774"
    retraction = _with(rec("crossref", title=f"Retraction: {work.title}", doi="10.1371/journal.pone.0999001"),
                       publication_types=["journal-article", "retraction-notice"],
                       notice_of=[NoticeOf(kind="retraction", doi=doi, date=[2013, 2, 1])])
    reinstatement = _with(rec("pubmed", title=f"Reinstatement: {work.title}", pmid="25000001"),
                          publication_types=["Journal Article", "reinstatement-notice"],
                          notice_of=[NoticeOf(kind="reinstatement", pmid=pmid, date=[2014, 7, 15])])
    # the third listing naming both: Europe PMC's record of the retraction notice, or another notice of the work
    retraction_listed = _with(rec("europepmc", title=f"Retraction: {work.title}", doi="10.1371/journal.pone.0999001",
                                  pmid="23400001"), publication_types=["Retraction of Publication"],
                              notice_of=[NoticeOf(kind="retraction", doi=doi, pmid=pmid)])
    concern = _with(rec("pubmed", title=f"Expression of concern: {work.title}", pmid="23300001"),
                    publication_types=["Expression of Concern"],
                    notice_of=[NoticeOf(kind="expression-of-concern", doi=doi, pmid=pmid, date=[2012, 11, 1])])
    for third in (retraction_listed, concern):
        for records in permutations([work, retraction, reinstatement, third]):
            marked = next(r for r in deduplicate(list(records)).records if r.DOI == doi)
            assert not marked.custom.retracted and not any(u.kind == "retraction" for u in marked.custom.updates)
            assert marked.custom.reinstatements == [Reinstatement(pmid="25000001", date=[2014, 7, 15],
                                                                  retracted_on=[2013, 2, 1])]
    # without a listing naming both, nothing says the PMID is the work's: the retraction stands, never guessed lifted
    marked = next(r for r in deduplicate([work, retraction, reinstatement]).records if r.DOI == doi)
    assert marked.custom.retracted and not marked.custom.reinstatements
    # a DOI two works share (a supplement's) joins neither to the PMID a notice names with it for the other
    other = rec("pubmed", title="Another abstract of the supplement", doi=doi, pmid="22457775")
    listed = next(r for r in deduplicate([other, retraction, reinstatement, concern]).records if r.PMID == "22457775")
    assert not listed.custom.reinstatements


def test_listings_of_one_reinstatement_are_joined_through_any_listing_naming_both_its_ids_in_any_order():
    """A reinstatement Crossref lists by DOI, PubMed by PMID and Europe PMC by both is one reinstatement, however the
    records come (`with_lifted` joined them pairwise, by DOI else PMID: the PMID's listing stayed a second one)."""
    from itertools import permutations

    from sitegen.records.model import Reinstatement, Update

    doi = "10.1371/journal.pone.0033693"
    lifted_on = Update(kind="retraction", doi="10.1371/journal.pone.0999001", date=[2013, 2, 1])
    by_doi = _with(rec("crossref", doi=doi), updates=[lifted_on],
                   reinstatements=[Reinstatement(doi="10.1371/journal.pone.0999002", date=[2014, 7, 15])])
    by_pmid = _with(rec("pubmed", doi=doi, pmid="22457774"), reinstatements=[Reinstatement(pmid="25000001")])
    by_both = _with(rec("europepmc", doi=doi, pmid="22457774"),
                    reinstatements=[Reinstatement(doi="10.1371/journal.pone.0999002", pmid="25000001")])
    for records in permutations([by_doi, by_pmid, by_both]):
        [merged] = deduplicate(list(records)).records
        assert merged.custom.reinstatements == [Reinstatement(doi="10.1371/journal.pone.0999002", pmid="25000001",
                                                              date=[2014, 7, 15], retracted_on=[2013, 2, 1])]
        assert not merged.custom.retracted
    # without the listing naming both, they stay two: nothing says they are one
    [merged] = deduplicate([by_doi, by_pmid]).records
    assert len(merged.custom.reinstatements) == 2


def test_one_doi_joins_records_whose_first_authors_are_in_chinese_characters_and_in_pinyin():
    """Crossref writes the authors of a Chinese work in pinyin, CNKI and Wanfang in Chinese characters, each with an
    English title of its own (the stroke fixture's id_0000001, as the two give it). Names in two scripts no
    transliteration compares are no evidence either way: the DOI joins the records, as it joins ones without
    authors; another first page still parts them."""
    doi = "10.3969/j.issn.1672-5921.2010.02.004"

    def record(title: str, authors: list[tuple[str, str]], page: str = "73-76") -> Record:
        return rec("crossref", title=title, doi=doi).model_copy(update={
            "author": [CslName(family=family, given=given) for family, given in authors], "page": page})

    crossref = record("Efficacy observation of batroxobin for treatment of vascular cognitive impairment",
                      [("Zhai", "Q. J."), ("Yue", "X. Y."), ("Hong", "Z.")])
    cnki = record("Observation on the efficacy of batroxobin in the treatment of vascular cognitive impairment",
                  [("翟", "乾骏"), ("岳", "新宇"), ("洪", "震")])
    assert len(deduplicate([crossref, cnki]).records) == 1
    apart = deduplicate([crossref, cnki.model_copy(update={"page": "77-80"})])
    assert len(apart.records) == 2 and all(r.custom.conflicts for r in apart.records)


def test_one_doi_joins_a_group_authors_record_and_its_named_members_record():
    """One index credits the trial's group (a literal, as MEDLINE's CN is read), another its first named member:
    an organisation and a person cannot be compared, so the DOI joins the records, as it joins ones without authors;
    another first page still parts them."""
    doi = "10.3969/j.issn.1672-5921.2010.02.004"

    def record(title: str, authors: list[CslName], page: str = "73-76") -> Record:
        return rec("crossref", title=title, doi=doi).model_copy(update={"author": authors, "page": page})

    group = record("Efficacy observation of batroxobin for treatment of vascular cognitive impairment",
                   [CslName(literal="Batroxobin Vascular Cognitive Impairment Study Group")])
    named = record("Observation on the efficacy of batroxobin in the treatment of vascular cognitive impairment",
                   [CslName(family="Zhai", given="Q. J."), CslName(family="Yue", given="X. Y.")])
    assert len(deduplicate([group, named]).records) == 1
    apart = deduplicate([group, named.model_copy(update={"page": "77-80"})])
    assert len(apart.records) == 2 and all(r.custom.conflicts for r in apart.records)


def imported(record: Record, date: str) -> Record:
    """`record` as a reference file a database exported gives it (RIS, its date as written there): no provider's."""
    from sitegen.references import read_references
    from sitegen.references.records import entry_record

    ris = f"TY  - JOUR\nTI  - {record.title}\nDO  - {record.DOI}\nPY  - {date[:4]}\nDA  - {date}\nER  - \n"
    [entry] = read_references(ris, "ris")
    return entry_record(entry)


@pytest.mark.parametrize("order", [1, -1])
def test_openalexs_filled_in_day_yields_to_the_month_another_source_of_the_work_gives(order):
    """OpenAlex gives every work a full day: "2001-01-01" for a work Crossref dates [2001, 2] (both real records of
    10.1023/a:1007154515475), "1983-07-01" for a July 1983 issue. Merged with a database export's record of the work,
    which ranks below a provider, OpenAlex's date won: a day (and a month) nobody gave. Another source's date agreeing
    before OpenAlex's 1s now stands; OpenAlex's stands where nothing says otherwise, and a day it gives is kept."""
    from sitegen.sources import crossref

    def merged(*records: Record) -> list[int]:
        [record] = deduplicate(list(records)[::order]).records
        return record.issued.date_parts[0]

    alex = work_to_record(json.loads((FIXTURES / "openalex" / "openalex_work_doi_10.1023_a_1007154515475.json")
                                     .read_text()))
    ref = crossref.work_to_record(json.loads((FIXTURES / "crossref" / "crossref_work_10.1023_a_1007154515475.json")
                                             .read_text())["message"])
    assert (alex.issued.date_parts[0], ref.issued.date_parts[0]) == ([2001, 1, 1], [2001, 2])
    assert merged(alex, imported(ref, "2001/02//")) == [2001, 2]
    assert merged(alex, ref) == [2001, 2]  # Crossref ranks above OpenAlex, as before
    july = next(record for record in REAL if record.DOI == "10.1037/0097-7403.9.3.248")
    assert july.issued.date_parts[0] == [1983, 7, 1]
    assert merged(july, imported(july, "1983/07//")) == [1983, 7]
    assert merged(july, imported(july, "1983/07/01/")) == [1983, 7, 1]  # confirmed
    assert merged(july, imported(july, "1983")) == [1983, 7, 1]  # says nothing of July's first: left as it was
    assert merged(july, imported(july, "1984/07//")) == [1983, 7, 1]  # another year: not its month's first day
    issue = next(record for record in REAL if record.DOI == "10.1515/revneuro.2004.15.4.231")
    assert issue.issued.date_parts[0] == [2004, 1, 1] and merged(issue, imported(issue, "2004")) == [2004]
    day = next(record for record in REAL if record.DOI == "10.1016/j.bbr.2014.02.014")
    assert merged(day, imported(day, "2014/05//")) == day.issued.date_parts[0] == [2014, 5, 15]  # a day it gives
