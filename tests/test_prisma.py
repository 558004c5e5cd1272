"""PRISMA 2020 counts: derived from the ledger and decision files, and drawn exactly as derived."""

from __future__ import annotations

import json

import httpx
import pytest
from conftest import EXAMPLE, FIXTURES
from http_mocks import json_response
from lxml import etree

from sitegen.commands import add_monitor, build, update
from sitegen.review.models import Strategy
from sitegen.sources.settings import SourceSettings

SYNERGY = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
CORE = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_text())["resultList"]["result"]
STRATEGIES = [Strategy(source="openalex", query="object"), Strategy(source="europepmc", query="object")]


def doi(work: dict) -> str:
    return work["doi"].removeprefix("https://doi.org/").lower()


def europepmc_copy_of(work: dict, template: dict) -> dict:
    """A real Europe PMC result given the identifiers and title of a real OpenAlex work (no recording has one
    paper in both), so the two sources overlap as they do in practice."""
    result = dict(template, doi=doi(work), pmid=work["ids"]["pmid"].rsplit("/", 1)[1], title=work["title"])
    result.pop("pmcid", None)
    return result


@pytest.fixture
def two_run_review(sitegen, tmp_path, monkeypatch):
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)
    review = tmp_path / "review"
    sitegen("init", review)
    config = review / "review.yaml"  # a review screened by one person: one decision per stage counts
    config.write_text(config.read_text().replace("site:", "screening:\n  title_abstract_reviewers: 1\n"
                                                          "  full_text_reviewers: 1\nsite:", 1))
    protocol = review / "protocol.md"
    protocol.write_text(protocol.read_text().replace("exclusion_reasons:\n", "exclusion_reasons:\n"
                                                     "  - code: not-retrieved\n    label: Report not retrieved\n"))
    sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    served = {"openalex": SYNERGY[:4], "europepmc": [europepmc_copy_of(SYNERGY[0], CORE[0]),
                                                      europepmc_copy_of(SYNERGY[1], CORE[1]), CORE[2]]}

    def providers(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return json_response(json.dumps({"meta": {"count": len(served["openalex"]), "next_cursor": None},
                                             "results": served["openalex"]}))
        results = served["europepmc"]
        return json_response(json.dumps({"hitCount": len(results), "resultList": {"result": results}}))

    settings = SourceSettings()
    add_monitor(review, "watch", STRATEGIES, "2026-01-01T00:00:00Z", "live", settings=settings,
                transport=httpx.MockTransport(providers))
    served["openalex"] = SYNERGY[:5]  # one new OpenAlex record
    served["europepmc"] = served["europepmc"] + [CORE[3]]  # one new Europe PMC record
    update(review, "2026-02-01T00:00:00Z", "live", settings=settings, transport=httpx.MockTransport(providers))
    ids = [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()]
    new_openalex = doi(SYNERGY[4])
    run1 = [i for i in ids if i != new_openalex and i not in _europepmc_ids(CORE[3])]
    assert len(ids) == 7 and len(run1) == 5
    include, maybe, exclude = run1[:2], run1[2:3], run1[3:5]
    rows = ["record_id,decision,reason,note"]
    rows += [f"{i},include,," for i in include + [new_openalex]]
    rows += [f"{i},maybe,," for i in maybe] + [f"{i},exclude,," for i in exclude]  # CORE[3]'s record: undecided
    (review / "screening" / "title-abstract" / "ann.csv").write_text("\n".join(rows) + "\n")
    full_text = ["record_id,decision,reason,note", f"{include[0]},include,,", f"{new_openalex},include,,",
                 f"{include[1]},exclude,wrong-population,", f"{maybe[0]},exclude,not-retrieved,"]
    (review / "screening" / "full-text" / "ann.csv").write_text("\n".join(full_text) + "\n")
    return review


def _europepmc_ids(result: dict) -> set[str]:
    return {result.get("doi", "").lower(), f"pmid:{result.get('pmid')}"}


def test_counts_match_a_hand_computed_example(sitegen, two_run_review):
    code, out, err = sitegen("prisma", two_run_review, "--json")
    assert code == 0, err
    assert json.loads(out) == {
        # run 1: OpenAlex 4 + Europe PMC 3, two of them the same works -> 5 records
        # run 2: one new from each source -> 7 records; records seen before are not counted again
        "identified": 9, "identified_databases": 9, "identified_by_source": {"europepmc": 4, "openalex": 5},
        "identified_other_methods": 0, "duplicates_removed": 2, "records": 7,
        "screened": 6, "excluded_screening": 2, "awaiting_screening": 1,
        "reports_sought": 4, "reports_not_retrieved": 1, "reports_assessed": 3,
        "excluded_full_text": 1, "excluded_by_reason": {"wrong-population": 1}, "awaiting_full_text": 0,
        "included": 2, "runs": 2, "included_previous": 1, "included_new": 1,
    }


def drawn_numbers(svg: bytes) -> dict[str, int]:
    tree = etree.fromstring(svg)
    return {element.get("data-count"): int(element.get("data-value"))
            for element in tree.iter("{*}text") if element.get("data-count")}


def flatten(counts: dict) -> dict[str, int]:
    flat = {}
    for key, value in counts.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{sub}": n for sub, n in value.items()})
        else:
            flat[key] = value
    return flat


@pytest.mark.parametrize("which", ["two-run", "example"])
def test_every_number_in_the_diagram_equals_the_json(sitegen, two_run_review, tmp_path, which):
    review = two_run_review if which == "two-run" else EXAMPLE
    _, out, _ = sitegen("prisma", review, "--json")
    counts = flatten(json.loads(out))
    site = tmp_path / "site"
    build(review, site, environ={})
    for svg in ((site / "downloads" / "prisma.svg").read_bytes(),
                _inline_svg((site / "index.html").read_bytes())):
        drawn = drawn_numbers(svg)
        assert drawn, "the diagram shows no numbers"
        for key, value in drawn.items():
            assert counts[key] == value, key
        expected = {"identified_databases", "duplicates_removed", "screened", "excluded_screening", "reports_sought",
                    "reports_not_retrieved", "reports_assessed", "included"}
        assert expected <= set(drawn)
    assert json.loads((site / "downloads" / "prisma.json").read_text()) == json.loads(out)


def _inline_svg(html: bytes) -> bytes:
    start, end = html.index(b"<svg"), html.index(b"</svg>") + len(b"</svg>")
    return html[start:end].replace(b"<svg", b'<svg xmlns="http://www.w3.org/2000/svg"', 1)


def test_diagram_is_accessible_text(tmp_path):
    site = tmp_path / "site"
    build(EXAMPLE, site, environ={})
    tree = etree.fromstring((site / "downloads" / "prisma.svg").read_bytes())
    assert tree.get("role") == "img"
    assert tree.find("{*}title").text == "PRISMA 2020 flow diagram"
    assert "38 studies included" in tree.find("{*}desc").text
    assert "Records screened (n = 270)" in "".join(tree.itertext())
