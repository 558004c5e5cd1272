"""Reciprocal rank fusion (rrf-60-v1, sitegen.records.fusion) and `sitegen search` showing the fused order,
the why of each hit, and the opt-in OpenAlex semantic shortlist."""

from __future__ import annotations

import json
import random
import re
from urllib.parse import parse_qs

import httpx
import pytest
from conftest import FIXTURES
from http_mocks import fetcher, json_response

from sitegen.records.fusion import RANKING_VERSION, Lane, Reason, fuse
from sitegen.records.model import Record
from sitegen.sources.openalex import SEMANTIC_CANDIDATES, work_to_record
from sitegen.sources.search import search
from sitegen.sources.settings import SourceSettings

WORKS = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
REAL = [work_to_record(work) for work in WORKS]


def as_from(record: Record, source: str) -> Record:
    """The same work as another provider returns it (its identifiers join it to the original)."""
    return record.model_copy(update={"custom": record.custom.model_copy(update={"sources": [source]})})


def test_scores_hand_computed():
    a, b, c, d = REAL[:4]
    hits = fuse([Lane("openalex", [a, b, c]), Lane("europepmc", [as_from(c, "europepmc"), as_from(d, "europepmc")])])
    # c: openalex #3 and europepmc #1: 1/63 + 1/61 = 0.015873 + 0.016393 = 0.032266
    # a: openalex #1: 1/61 = 0.016393;  b: openalex #2 and d: europepmc #2: 1/62 = 0.016129 each (a tie)
    assert [hit.record.id for hit in hits][:2] == [c.id, a.id]
    assert hits[0].score == pytest.approx(1 / 63 + 1 / 61)
    assert hits[1].score == pytest.approx(1 / 61)
    assert [hit.record.id for hit in hits[2:]] == sorted([b.id, d.id])  # equal scores: by record id
    assert hits[0].reasons == [Reason("europepmc", 1), Reason("openalex", 3)]
    assert hits[0].why() == "europepmc #1, openalex #3"


def test_reasons_list_only_the_lanes_that_retrieved_the_hit():
    a, b, c = REAL[:3]
    hits = fuse([Lane("openalex", [a, b]), Lane("europepmc", [as_from(b, "europepmc")]), Lane("pubmed", [c])])
    reasons = {hit.record.id: {reason.lane for reason in hit.reasons} for hit in hits}
    assert reasons == {a.id: {"openalex"}, b.id: {"openalex", "europepmc"}, c.id: {"pubmed"}}


def test_a_lane_counts_once_at_its_best_rank():
    a, b = REAL[:2]
    # the same work twice in one lane (two records a provider returned for it): only rank 1 counts
    [first, second] = fuse([Lane("openalex", [a, b, as_from(a, "openalex")])])
    assert first.record.id == a.id and first.reasons == [Reason("openalex", 1)]
    assert first.score == pytest.approx(1 / 61) and second.score == pytest.approx(1 / 62)


def test_order_is_deterministic_under_any_permutation_of_lanes():
    rng = random.Random(20261203)
    lanes = []
    for name in ("openalex", "europepmc", "pubmed", "crossref"):
        picked = rng.sample(REAL, 12)  # overlapping draws: many works are in several lanes at different ranks
        lanes.append(Lane(name, [as_from(record, name) for record in picked]))
    expected = [(hit.record.id, hit.score, hit.reasons) for hit in fuse(lanes)]
    assert len({score for _, score, _ in expected}) < len(expected)  # there are ties to break
    for seed in range(25):
        shuffled = list(lanes)
        random.Random(seed).shuffle(shuffled)
        assert [(hit.record.id, hit.score, hit.reasons) for hit in fuse(shuffled)] == expected, seed


def test_equal_ranks_in_different_lanes_tie_by_id_whatever_their_order():
    # every lane holds one work at rank 1: all score 1/61, so the order is the ids' order
    lanes = [Lane(f"lane-{n}", [record]) for n, record in enumerate(REAL[:8])]
    for seed in range(10):
        random.Random(seed).shuffle(lanes)
        hits = fuse(lanes)
        assert [hit.record.id for hit in hits] == sorted(record.id for record in REAL[:8])


def test_lane_names_must_differ():
    with pytest.raises(ValueError, match="lane names must differ"):
        fuse([Lane("openalex", REAL[:1]), Lane("openalex", REAL[1:2])])


def two_sources(request: httpx.Request) -> httpx.Response:
    """OpenAlex's search returns works 0-3; its semantic search works 3, 4, ... in that order."""
    params = parse_qs(request.url.query.decode())
    if "search.semantic" in params:
        # work 5 listed again after the rest: one candidate, at its first place
        return json_response(json.dumps({"meta": {"count": None}, "results": WORKS[3:] + [WORKS[5]]}))
    return json_response(json.dumps({"meta": {"count": 4, "next_cursor": None}, "results": WORKS[:4]}))


def test_search_reports_fused_order_and_reasons():
    fetch, _, _ = fetcher(two_sources)
    result = search(fetch, "object AND context", ["openalex"], settings=SourceSettings())
    report = result.report()
    assert report["ranking_version"] == RANKING_VERSION == "rrf-60-v1"
    assert [record["reasons"] for record in report["records"]] == [[{"lane": "openalex", "rank": n}]
                                                                    for n in range(1, 5)]
    assert [record["id"] for record in report["records"]] == [record.id for record in REAL[:4]]  # provider order


def test_semantic_shortlist_is_a_bounded_labelled_lane():
    fetch, seen, _ = fetcher(two_sources)
    result = search(fetch, "object in context memory in rodents", ["openalex"], settings=SourceSettings(),
                    semantic=True)
    [semantic_request] = [request for request in seen.requests if "search.semantic" in str(request.url)]
    assert parse_qs(semantic_request.url.query.decode())["per_page"] == [str(SEMANTIC_CANDIDATES)]
    report = result.report()
    # the shortlist's candidates are counted apart from what the database search retrieved, never added to it
    assert report["counts"]["retrieved"] == 4 and report["counts"]["shortlisted"] == len(WORKS) - 3
    assert report["sources"] == ["openalex"] and len(report["outcomes"]) == 1
    assert report["shortlist"]["lane"] == "openalex-semantic" and report["shortlist"]["total"] is None
    assert any("not a database search" in warning for warning in report["shortlist"]["warnings"])
    # work 3 is in both lanes: openalex #4 and the shortlist's #1, so it leads the fused order
    shortlisted = [record.id for record in result.shortlist.records]
    assert shortlisted == [record.id for record in REAL[3:]]
    first = report["records"][0]
    assert first["id"] == REAL[3].id
    assert first["reasons"] == [{"lane": "openalex-semantic", "rank": 1, "shortlist": True},
                                {"lane": "openalex", "rank": 4}]


def test_semantic_shortlist_keeps_at_most_the_candidate_limit():
    many = [dict(WORKS[n % len(WORKS)], id=f"https://openalex.org/W{900000 + n}", doi=None, ids={})
            for n in range(SEMANTIC_CANDIDATES + 10)]

    def handler(request: httpx.Request) -> httpx.Response:
        return json_response(json.dumps({"meta": {"count": None}, "results": many}))

    fetch, _, _ = fetcher(handler)
    result = search(fetch, "memory", ["openalex"], settings=SourceSettings(), semantic=True)
    assert result.shortlist is not None and len(result.shortlist.records) == SEMANTIC_CANDIDATES


def test_cli_search_prints_the_why(sitegen, monkeypatch):
    from sitegen import commands

    def fake(query, names, **options):
        fetch, _, _ = fetcher(two_sources)
        return search(fetch, query, names, settings=SourceSettings(), semantic=options["semantic"],
                      progress=options["progress"])

    monkeypatch.setattr(commands, "search", fake)
    code, out, err = sitegen("search", "memory", "--sources", "openalex", "--semantic")
    assert code == 0, err
    assert "why: openalex-semantic #1 (shortlist), openalex #4" in out
    # the lane's answer is said as it comes (stderr), once; stdout holds the results
    assert "openalex-semantic:" in err and "not a database search" in err and "openalex-semantic:" not in out
    assert "in fused order (rrf-60-v1" in out


def test_a_semantic_search_cannot_be_saved_as_a_database_strategy():
    # the shortlist is a one-shot `sitegen search --semantic` lane; a saved OpenAlex strategy takes only
    # search and filter, so it never reaches a run, a ledger event or PRISMA's database counts
    from sitegen.errors import SitegenError
    from sitegen.sources.search import check_strategy

    with pytest.raises(SitegenError, match="only search and filter"):
        check_strategy("openalex", "search=memory&search.semantic=object memory in rodents", native=True)


def test_a_source_named_twice_is_one_lane():
    fetch, seen, _ = fetcher(two_sources)
    result = search(fetch, "memory", ["openalex", "openalex"], settings=SourceSettings())
    assert len(result.outcomes) == 1 and len(seen.requests) == 1
    assert result.hits[0].reasons == [Reason("openalex", 1)]


def test_a_semantic_query_openalex_would_cut_is_not_sent():
    fetch, seen, _ = fetcher(two_sources)
    result = search(fetch, "memory " * 300, ["openalex"], native=True, settings=SourceSettings(), semantic=True)
    assert not any("search.semantic" in str(request.url) for request in seen.requests)
    assert result.shortlist is not None and result.shortlist.status == "unsupported"
    assert "first 2000 characters" in result.shortlist.warnings[0]
    assert not result.complete  # what was asked for was not all done: `sitegen search` exits 3


# --------------------------------------------------------------------------- lanes not ranked by relevance


def test_an_unranked_lane_adds_no_score_and_its_own_finds_come_last_by_id():
    a, b, c, d = REAL[:4]
    # pubmed's order (not relevance) puts d and c first; only openalex's ranks count
    hits = fuse([Lane("openalex", [a, b]), Lane("pubmed", [as_from(d, "pubmed"), as_from(c, "pubmed"),
                                                           as_from(b, "pubmed")], ranked=False)])
    assert [hit.record.id for hit in hits] == [a.id, b.id] + sorted([c.id, d.id])
    assert hits[1].score == pytest.approx(1 / 62)  # openalex #2 only: pubmed's third place adds nothing
    assert hits[1].why() == "openalex #2, pubmed (not ranked by relevance)"
    assert [hit.score for hit in hits[2:]] == [0, 0] and not hits[2].ranked
    assert hits[2].why() == "pubmed (not ranked by relevance)"
    assert hits[2].reasons[0].report() == {"lane": "pubmed", "ranked": False}


def test_unranked_order_is_deterministic_under_any_permutation_of_lanes_and_records():
    lanes = [Lane("arxiv", REAL[:6], ranked=False), Lane("pubmed", [as_from(r, "pubmed") for r in REAL[4:10]],
                                                        ranked=False)]
    expected = [hit.record.id for hit in fuse(lanes)]
    assert expected == sorted(record.id for record in REAL[:10])
    for seed in range(10):
        rng = random.Random(seed)
        shuffled = [Lane(lane.name, rng.sample(lane.records, len(lane.records)), ranked=False) for lane in lanes]
        assert [hit.record.id for hit in fuse(shuffled[::-1] if seed % 2 else shuffled)] == expected


@pytest.mark.parametrize("source, text, native, ranked", [
    ("openalex", "memory AND rodents", False, True),
    ("openalex", "title:memory", False, False),  # a title.search filter: OpenAlex gives no relevance order
    ("openalex", "filter=title.search:memory", True, False),
    ("openalex", "search=memory&filter=publication_year:2020", True, True),
    ("europepmc", "memory", False, True),
    ("crossref", "memory", False, True),
    ("pubmed", "memory", False, False),
    ("arxiv", "memory", False, False),
])
def test_which_lanes_rank_by_relevance(source, text, native, ranked):
    from sitegen.sources.query import provider_query
    from sitegen.sources.search import relevance_ranked

    assert relevance_ranked(source, provider_query(source, text, native=native)) is ranked


def filter_only(request: httpx.Request) -> httpx.Response:
    return json_response(json.dumps({"meta": {"count": 4, "next_cursor": None}, "results": WORKS[:4]}))


def test_search_says_a_lane_is_not_ranked(sitegen, monkeypatch):
    from sitegen import commands

    def fake(query, names, **options):
        fetch, _, _ = fetcher(filter_only)
        return search(fetch, query, names, native=True, settings=SourceSettings())

    monkeypatch.setattr(commands, "search", fake)
    code, out, err = sitegen("search", "filter=title.search:memory", "--sources", "openalex", "--native")
    assert code == 0, err
    assert out.count("why: openalex (not ranked by relevance)") == 4
    assert "openalex does not rank by relevance" in out
    code, out, err = sitegen("search", "filter=title.search:memory", "--sources", "openalex", "--native", "--json")
    report = json.loads(out)
    assert report["unranked_lanes"] == ["openalex"]
    assert report["records"][0]["reasons"] == [{"lane": "openalex", "ranked": False}]
    assert [record["id"] for record in report["records"]] == sorted(record.id for record in REAL[:4])


# --------------------------------------------------------------------------- what the semantic shortlist is sent


def test_semantic_shortlist_gets_the_words_and_the_date_limit_not_the_grammar():
    fetch, seen, _ = fetcher(two_sources)
    result = search(fetch, 'title:"object recognition" AND (rat OR mouse) NOT review', ["openalex"],
                    settings=SourceSettings(), semantic=True, since=2015)
    [semantic_request] = [request for request in seen.requests if "search.semantic" in str(request.url)]
    params = parse_qs(semantic_request.url.query.decode())
    assert params["search.semantic"] == ["object recognition rat mouse"]
    assert params["filter"] == ["from_publication_date:2015-01-01"]
    assert any("cannot exclude NOT terms (review)" in warning for warning in result.shortlist.warnings)
    summary = result.summary()
    assert f"{result.retrieved} retrieved by the database searches, {result.shortlisted} shortlisted" in summary


# --------------------------------------------------------------------------- native OpenAlex keys given twice


def test_a_native_openalex_key_given_twice_is_refused():
    from sitegen.errors import SitegenError
    from sitegen.sources.search import check_strategy

    with pytest.raises(SitegenError, match="filter is given twice in the OpenAlex strategy"):
        check_strategy("openalex", "search=memory&filter=publication_year:2020&filter=type:article", native=True)


def test_check_names_a_saved_openalex_strategy_with_a_key_twice(example_copy, sitegen):
    path = example_copy / "searches" / "object-in-context.json"
    saved = json.loads(path.read_text())
    saved["strategies"].append({"source": "openalex", "query": "search=a&search=b"})
    path.write_text(json.dumps(saved, indent=2) + "\n")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "[query-unsupported]" in out and "given twice" in out
    assert re.search(r"object-in-context\.json:\d+:\d+: error: strategies\[1\]: ", out)  # at the query's line
