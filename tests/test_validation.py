"""Search validation (`sitegen monitor validate`): relative recall of the known-relevant studies per strategy
and overall, the missed studies with their reasons, validation.csv, the threshold and the ledger event."""

from __future__ import annotations

import json
import re

import pytest
from conftest import tree_bytes
from lxml import html as lxml_html

from sitegen.errors import EXIT_LOW_RECALL
from sitegen.living.ledger import anchor, append
from sitegen.living.manifests import Execution, compiled_query, manifest_bytes, run_manifest
from sitegen.living.validation import date_limits, missing_terms, validate
from sitegen.records.model import model_data
from sitegen.review.folder import manifest_hash, manifest_path, parse_protocol
from sitegen.review.models import (
    MissedStudy,
    MissReason,
    RetrievalPayload,
    SavedSearch,
    Strategy,
    StrategyRecall,
    ValidationPayload,
    ValidationStudy,
)
from sitegen.review.transaction import Transaction
from sitegen.review.write import pretty_json
from sitegen.workspace import open_review, writable
from tests.conftest import ROOT, run_cli

RUN_AT = "2023-05-01T00:00:00Z"
MONITOR = "validation-check"
# Two strategies of one saved search: OpenAlex limited by its own filter to works from 2015, and arXiv in
# sitegen's grammar looking for one title phrase.
OPENALEX = Strategy(source="openalex", label="recent", query="search=object in context&filter=from_publication_date:2015-01-01")
ARXIV = Strategy(source="arxiv", label="arxiv-title", query='title:"object-in-context"', syntax="sitegen")


def _title_has_phrase(record) -> bool:
    return missing_terms(ARXIV.query, record) is None


def _add_search(root, returned: dict[str, list[str]]) -> None:
    """Save a search with both strategies and record one complete run of it (see `_run`)."""
    _run(root, RUN_AT, [(s, returned[s.source], True) for s in (OPENALEX, ARXIV)], [OPENALEX, ARXIV])


@pytest.fixture
def two_strategies(example_copy):
    """The example with a second saved search whose arXiv strategy misses one included study (one without the
    phrase in its title, published before 2015, so OpenAlex's date limit misses it too) and whose OpenAlex
    strategy returns the included studies its date filter allows. Returns (root, the missed study, included)."""
    workspace = open_review(example_copy)
    records, included = workspace.review.records, sorted(workspace.facts.included)
    missed = next(rid for rid in included if not _title_has_phrase(records[rid]) and records[rid].year < 2015)
    recent = [rid for rid in included if records[rid].year >= 2015]
    _add_search(example_copy, {"openalex": recent, "arxiv": [rid for rid in included if rid != missed]})
    return example_copy, missed, included


def _ours(payloads):
    return next(payload for payload in payloads if payload.monitor_id == MONITOR)


def test_recall_per_strategy_and_overall_with_one_study_missing_from_one_source(two_strategies):
    root, missed, included = two_strategies
    workspace = open_review(root)  # the review with the new search is valid: it opens without a problem
    records = workspace.review.records
    payload = _ours(validate(workspace.review, workspace.facts))
    assert payload.known == included and payload.listed == []
    assert (payload.found, payload.missed) == (len(included) - 1, [missed])
    assert payload.recall == pytest.approx((len(included) - 1) / len(included))
    openalex, arxiv = payload.strategies
    assert (arxiv.found, [miss.study for miss in arxiv.missed]) == (len(included) - 1, [missed])
    codes = {reason.code for reason in arxiv.missed[0].reasons}
    # arXiv never returned it and the example's records carry no arXiv id; its title lacks the phrase
    assert "never-returned" in codes
    assert ("no-term" in codes) == (missing_terms(ARXIV.query, records[missed]) is not None)
    assert any("not retrieved from arXiv, which never returned it in any run" == reason.detail
               for reason in arxiv.missed[0].reasons)
    early = [rid for rid in included if records[rid].year < 2015]
    assert openalex.found == len(included) - len(early)
    for miss in openalex.missed:  # OpenAlex returned these in the example's own runs: it holds them
        assert [reason.code for reason in miss.reasons] == ["outside-dates"]
        assert f"published in {records[miss.study].year}, outside the strategy's date limits (from 2015)" == \
            miss.reasons[0].detail
    assert all(strategy.current and strategy.runs == 1 for strategy in payload.strategies)


def test_the_example_search_retrieves_every_included_study(example_copy):
    workspace = open_review(example_copy)
    (payload,) = validate(workspace.review, workspace.facts)
    assert payload.known == sorted(workspace.facts.included)
    assert payload.found == len(payload.known) and payload.missed == [] and not payload.below_threshold
    assert [(s.source, s.runs, s.found) for s in payload.strategies] == [("openalex", 2, len(payload.known))]


def test_validation_csv_adds_known_studies_resolved_by_identifier(two_strategies):
    root, missed, included = two_strategies
    records = open_review(root).review.records
    with_pmid = next(rid for rid in included if records[rid].PMID and rid != missed)
    outside = [rid for rid in records if rid not in included][0]
    (root / "validation.csv").write_text(
        "record_id,note\n"
        f"PMID: {records[with_pmid].PMID},already included: counted once\n"
        f"https://doi.org/{outside.upper()},named by the protocol\n"
        "10.9999/not-in-the-review,never retrieved\n")
    workspace = open_review(root)
    assert [row.study.record_id for row in workspace.review.validation] == \
        [f"pmid:{records[with_pmid].PMID}", outside, "10.9999/not-in-the-review"]
    payload = _ours(validate(workspace.review, workspace.facts))
    assert payload.listed == sorted([with_pmid, outside, "10.9999/not-in-the-review"])
    assert len(payload.known) == len(included) + 2
    assert "10.9999/not-in-the-review" in payload.missed
    arxiv = payload.strategies[1]
    (absent,) = [miss for miss in arxiv.missed if miss.study == "10.9999/not-in-the-review"]
    assert [reason.code for reason in absent.reasons] == ["not-in-records"]


def test_validation_csv_bad_rows_are_reported_with_file_and_line(example_copy, sitegen):
    (example_copy / "validation.csv").write_text(
        "record_id,note\n10.1000/fine,ok\nnot an id,typo\n10.1000/FINE,same study again\n")
    code, err, _ = sitegen("check", example_copy)  # check lists problems on standard output
    assert code == 1
    assert "validation.csv:3" in err and "neither a record id nor a DOI" in err
    assert "validation.csv:4" in err and "already listed on line 2" in err
    code, _, err = sitegen("monitor", "validate", example_copy, "--at", RUN_AT)
    assert code == 1 and "validation.csv:3" in err
    assert "validation" not in (example_copy / "ledger.jsonl").read_text().splitlines()[-1]
    (example_copy / "validation.csv").write_text("doi,note\n10.1000/x,\n")
    code, err, _ = sitegen("check", example_copy)
    assert code == 1 and "validation.csv:1" in err and "missing column(s) record_id" in err


def test_validation_recall_in_the_protocol():
    text = "---\nversion: 1\neligibility: {}\nvalidation_recall: 1.5\n---\nbody\n"
    protocol, problems = parse_protocol(text)
    assert protocol is None and problems[0].line == 4 and "validation_recall" in problems[0].message
    protocol, problems = parse_protocol(text.replace("1.5", "0.95"))
    assert problems == [] and protocol.meta.validation_recall == 0.95
    assert parse_protocol(text.replace("validation_recall: 1.5\n", ""))[0].meta.validation_recall == 0.9


def test_below_threshold_warns_and_exits_7_and_nothing_is_written_without_at(two_strategies, sitegen):
    root, _missed, included = two_strategies
    # known studies no record holds bring recall below the protocol's default 0.9
    absent = [f"10.9999/known-{n}" for n in range(len(included) // 5)]
    (root / "validation.csv").write_text("record_id,note\n" + "".join(f"{doi},\n" for doi in absent))
    before = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}
    code, out, err = sitegen("monitor", "validate", root, "--id", MONITOR)
    assert code == EXIT_LOW_RECALL == 7
    known = len(included) + len(absent)
    assert f"warning: {MONITOR} retrieves {len(included) - 1} of {known} known-relevant studies, below the " \
           "protocol's validation_recall of 90%" in err
    assert f"relative recall {len(included) - 1}/{known}" in out and "not recorded (give --at" in out
    assert "missed 10.9999/known-0: no run of any search or import retrieved it" in out
    assert {path: path.read_bytes() for path in root.rglob("*") if path.is_file()} == before
    code, out, _ = sitegen("monitor", "validate", root, "--json")
    assert code == 7 and {item["monitor_id"] for item in json.loads(out)} == {"object-in-context", MONITOR}


def test_a_bad_at_or_unknown_search_writes_nothing(example_copy, sitegen):
    ledger = (example_copy / "ledger.jsonl").read_bytes()
    code, _, err = sitegen("monitor", "validate", example_copy, "--at", "2020-01-01T00:00:00Z")
    assert code == 1 and "earlier than the latest ledger event" in err
    # A time that is none was a traceback (a ValueError from parsing it), not a message naming the option.
    code, _, err = sitegen("monitor", "validate", example_copy, "--at", "yesterday")
    assert code == 2 and "Invalid value for '--at': 'yesterday' is not an RFC 3339 timestamp" in err
    code, _, err = sitegen("monitor", "validate", example_copy, "--id", "no-such-search", "--at", RUN_AT)
    assert code == 1 and "no saved search 'no-such-search'" in err
    assert (example_copy / "ledger.jsonl").read_bytes() == ledger


def test_recorded_validation_is_on_the_ledger_and_the_searches_page(two_strategies, sitegen, tmp_path):
    root, missed, included = two_strategies
    code, out, _ = sitegen("monitor", "validate", root, "--at", "2023-05-02T00:00:00Z")
    assert code == 0 and "recorded on the ledger at 2023-05-02T00:00:00Z" in out
    events = [json.loads(line) for line in (root / "ledger.jsonl").read_text().splitlines()]
    recorded = [event for event in events if event["type"] == "validation"]
    assert [event["payload"]["monitor_id"] for event in recorded] == ["object-in-context", MONITOR]
    assert recorded[1]["payload"]["missed"] == [missed] and recorded[1]["ts"] == "2023-05-02T00:00:00Z"
    # Run again at the same time, the same validations are not recorded twice.
    before = tree_bytes(root)
    code, out, _ = sitegen("monitor", "validate", root, "--at", "2023-05-02T00:00:00Z")
    assert code == 0 and "0 new; the rest are already there at that time, the same" in out and tree_bytes(root) == before
    code, _, err = sitegen("check", root)
    assert code == 0, err
    code, _, err = sitegen("build", root, "--out", tmp_path / "site", "--now", "2023-05-03T00:00:00Z")
    assert code == 0, err
    tree = lxml_html.fromstring((tmp_path / "site" / "searches.html").read_text())
    (section,) = [s for s in tree.findall(".//section") if s.get("aria-labelledby") == f"search-{MONITOR}"]
    text = " ".join(section.text_content().split())
    assert f"retrieved {len(included) - 1} of {len(included)}" in text
    assert "arXiv (arxiv-title)" in text and "not retrieved from arXiv, which never returned it in any run" in text
    links = [a.get("href") for a in section.findall(".//ul[@class='missed-studies']//a")]
    assert links and all(link.startswith("records/") and link.endswith(".html") for link in links)
    assert (tmp_path / "site" / links[0]).is_file()


def test_date_limits_a_native_strategy_states():
    assert date_limits("openalex", "search=x&filter=from_publication_date:2015-01-01,to_publication_date:2020-12-31") \
        == (2015, 2020)
    assert date_limits("openalex", "search=x&filter=publication_year:>2010") == (2011, None)
    assert date_limits("pubmed", 'rodent AND ("2000/01/01"[dp] : "2010/12/31"[dp])') == (2000, 2010)
    assert date_limits("pubmed", "rodent AND 2000:2010[dp]") == (2000, 2010)
    assert date_limits("europepmc", "rodent AND PUB_YEAR:[2005 TO 2012]") == (2005, 2012)
    assert date_limits("crossref", "query.bibliographic=rodent&filter=from-pub-date:2019") == (2019, None)
    assert date_limits("openalex", "search=object in context") == (None, None)


@pytest.mark.parametrize("model", [ValidationStudy, ValidationPayload, StrategyRecall, MissedStudy, MissReason])
def test_every_validation_field_is_documented(model):
    docs = (ROOT / "docs" / "review-folder.md").read_text()
    for name in model.model_fields:
        assert re.search(rf"`(?:[\w.]+\.)?{re.escape(name)}`", docs), f"{model.__name__}.{name} is not documented"


def test_search_validate_is_the_same_command_and_search_query_still_searches(example_copy, monkeypatch):
    from sitegen import commands
    from sitegen.errors import SitegenError

    code, out, err = run_cli("search", "validate", example_copy)
    assert code == 0 and "relative recall 38/38" in out
    seen = []

    def searched(query, names, **options):
        seen.append((query, names))
        raise SitegenError("stopped here: no provider is called in this test")
    monkeypatch.setattr(commands, "search", searched)
    code, out, err = run_cli("search", "--sources", "openalex", "validation of recall")
    assert code == 1 and seen == [("validation of recall", ["openalex"])]
    code, out, err = run_cli("search", "memory in rats", "--sources", "pubmed")
    assert seen[-1] == ("memory in rats", ["pubmed"])
    code, out, err = run_cli("search", "query", "validate", "--sources", "arxiv")  # the word itself, searched
    assert seen[-1] == ("validate", ["arxiv"])


# --------------------------------------------------------------------------- what recall is judged on

def _run(root, at: str, ran: list[tuple[Strategy, list[str], bool]], saved: list[Strategy]) -> None:
    """Record one run of the saved search MONITOR, as `sitegen update` would: a retrieval event per strategy
    that ran (with its returned ids and whether it got the answer in full), the search saved with `saved`."""
    with writable(root) as workspace:
        review = workspace.review
        payloads = [RetrievalPayload(monitor_id=MONITOR, source=s.source, label=s.label, query=s.query,
                                     record_ids=ids, complete=complete) for s, ids, complete in ran]
        manifest = run_manifest(MONITOR, at, payloads, None, [
            Execution(s.syntax, compiled_query(s) or s.query, [f"GET {s.source} (simulated)"], "ok" if complete
                      else "timeout") for s, _, complete in ran], snapshots="replay")
        payloads = [payload.model_copy(update={"manifest": manifest_hash(manifest)}) for payload in payloads]
        transaction = Transaction(root)
        transaction.write(manifest_path(at, MONITOR), manifest_bytes(manifest).decode("utf-8"))
        events = append(transaction, review, at, payloads)
        earlier = review.searches.get(MONITOR)
        seen = list(dict.fromkeys([*(earlier.seen_ids if earlier else []), *(r for _, ids, _ in ran for r in ids)]))
        search = SavedSearch(schema_version="1.0", monitor_id=MONITOR, strategies=saved, seen_ids=seen, last_run=at,
                             run_count=(earlier.run_count if earlier else 0) + 1, last_event=anchor(events[-1]))
        transaction.write(f"searches/{MONITOR}.json", pretty_json(model_data(search)))
        transaction.commit()


def test_recall_is_judged_on_the_current_strategies_not_on_earlier_wordings(example_copy, sitegen):
    included = sorted(open_review(example_copy).facts.included)
    half = included[: len(included) // 2]
    reworded = OPENALEX.model_copy(update={"query": "search=object recognition&filter=from_publication_date:2015-01-01"})
    _run(example_copy, RUN_AT, [(OPENALEX, included, True)], [OPENALEX])
    _run(example_copy, "2023-06-01T00:00:00Z", [(reworded, half, True)], [reworded])
    workspace = open_review(example_copy)
    payload = _ours(validate(workspace.review, workspace.facts))
    earlier, now = sorted(payload.strategies, key=lambda strategy: strategy.current)
    assert (earlier.current, earlier.found) == (False, len(included))  # shown, for information
    assert (now.current, now.found) == (True, len(half))
    assert payload.found == len(half) and payload.missed == included[len(half):] and payload.below_threshold
    code, out, _ = sitegen("monitor", "validate", example_copy, "--id", MONITOR)
    assert code == EXIT_LOW_RECALL and f"relative recall {len(half)}/{len(included)}" in out
    assert "an earlier wording (for information: not judged)" in out


def test_runs_that_failed_or_never_happened_are_not_measured_not_missed(example_copy, sitegen, tmp_path):
    included = sorted(open_review(example_copy).facts.included)
    _run(example_copy, RUN_AT, [(OPENALEX, included[:3], False)], [OPENALEX, ARXIV])  # arXiv never ran
    workspace = open_review(example_copy)
    payload = _ours(validate(workspace.review, workspace.facts))
    assert payload.found == 3 and not payload.below_threshold
    openalex, arxiv = payload.strategies
    assert openalex.not_measured == "none of its 1 run got OpenAlex's answer in full" and openalex.missed == []
    assert arxiv.not_measured == "it has not run" and (arxiv.runs, arxiv.found, arxiv.missed) == (0, 0, [])
    assert payload.not_measured == [openalex, arxiv]
    code, out, err = sitegen("monitor", "validate", example_copy, "--id", MONITOR, "--at", "2023-05-02T00:00:00Z")
    assert code == 0 and "warning" not in err
    assert f"relative recall at least 3/{len(included)}" in out and "not measured: arXiv: it has not run" in out
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site", "--now", "2023-05-03T00:00:00Z")
    assert code == 0, err
    tree = lxml_html.fromstring((tmp_path / "site" / "searches.html").read_text())
    (section,) = [s for s in tree.findall(".//section") if s.get("aria-labelledby") == f"search-{MONITOR}"]
    text = " ".join(section.text_content().split())
    assert "below the protocol's threshold" not in text and "Recall is a lower bound" in text
    assert "not measured: it has not run" in text and f"at least 3 of {len(included)}" in text
    # with one complete run the strategy is measured: what it did not retrieve is missed
    _run(example_copy, "2023-06-01T00:00:00Z", [(OPENALEX, included[:3], True), (ARXIV, [], True)], [OPENALEX, ARXIV])
    workspace = open_review(example_copy)
    payload = _ours(validate(workspace.review, workspace.facts))
    assert payload.not_measured == [] and payload.below_threshold
    assert len(payload.strategies[0].missed) == len(included) - 3


@pytest.mark.parametrize(("source", "query"), [
    ("openalex", "search=rats&filter=publication_year:2010|2011|2012"),  # an OR of years
    ("openalex", "search=rats&filter=!publication_year:2010"),  # a NOT
    ("openalex", "search=publication_year:2010 rats"),  # searched words, not a filter
    ("europepmc", "rats AND (PUB_YEAR:2012 OR PUB_YEAR:2013)"),
    ("europepmc", "rats NOT PUB_YEAR:2012"),
    ("europepmc", "rats -PUB_YEAR:2012"),
    ("europepmc", "rats OR PUB_YEAR:[2010 TO 2012]"),
    ("pubmed", "rats AND (2010:2012[dp] OR 2018:2020[dp])"),
    ("pubmed", "rats NOT 2010:2012[dp]"),
    ("pubmed", "rats OR mice AND 2010:2012[dp]"),  # PubMed reads left to right: the date is one alternative
    ("arxiv", "ti:rats ANDNOT submittedDate:[2015 TO 2018]"),
])
def test_date_limits_are_claimed_only_when_unambiguous(source, query):
    assert date_limits(source, query) == (None, None)


def test_date_limits_of_anded_top_level_clauses():
    assert date_limits("openalex", "search=x&filter=publication_year:2010-2014,from_publication_date:2012-01-01") \
        == (2012, 2014)
    assert date_limits("openalex", "search=x&filter=publication_year:2010") == (2010, 2010)
    assert date_limits("pubmed", "(rats OR mice) AND 2010:2012[dp]") == (2010, 2012)
    assert date_limits("europepmc", "rats NOT mice AND PUB_YEAR:2012") == (2012, 2012)
    assert date_limits("arxiv", "ti:rats AND submittedDate:[2015 TO 2018]") == (2015, 2018)


def test_the_numbers_of_a_validation_event_are_checked(example_copy, sitegen):
    study = sorted(open_review(example_copy).facts.included)[0]
    other = "10.9999/not-known"
    good = {"monitor_id": "object-in-context", "threshold": 0.9, "known": [study], "found": 1, "strategies": []}
    strategy = {"source": "openalex", "query": "q", "current": True, "runs": 1, "incomplete_runs": 0, "found": 1}
    reason = [{"code": "unknown", "detail": "not retrieved (reason unknown)"}]
    for bad, message in [({"found": 7}, "do not add up"), ({"found": 0, "missed": [other]}, "not in known"),
                         ({"listed": [other]}, "not in known"),
                         ({"strategies": [{**strategy, "found": 7}]}, "found 7 of 1"),
                         ({"strategies": [{**strategy, "found": 0}]}, "do not add up"),
                         ({"strategies": [{**strategy, "found": 0, "missed": [{"study": other, "reasons": reason}]}]},
                          "not in known"),
                         ({"strategies": [{**strategy, "incomplete_runs": 2}]}, "more than runs")]:
        with pytest.raises(ValueError, match=message):
            ValidationPayload.model_validate({**good, **bad})
    ValidationPayload.model_validate(good)
    tampered = ValidationPayload.model_construct(**{**good, "found": 7, "listed": [], "missed": []})
    with writable(example_copy) as workspace:
        transaction = Transaction(example_copy)
        append(transaction, workspace.review, "2023-05-02T00:00:00Z", [tampered])
        transaction.commit()
    line = len((example_copy / "ledger.jsonl").read_text().splitlines())
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and f"ledger.jsonl:{line}" in out and "do not add up" in out


def test_no_term_is_claimed_only_on_title_or_abstract_words_allowing_for_endings(example_copy):
    record = next(iter(open_review(example_copy).review.records.values())).model_copy(
        update={"title": "Memory of rats in a novel arena", "abstract": "Rodents were tested."})
    assert missing_terms("author:Smith", record) is None  # no title or abstract term: nothing to claim
    assert missing_terms("rat", record) is None and missing_terms('"novel arenas"', record) is None
    assert missing_terms("remembering OR tested", record) is None
    assert missing_terms("title:mice OR author:Smith", record) == ["mice"]


def test_the_no_term_reason_names_the_words(two_strategies):
    root, missed, _ = two_strategies
    workspace = open_review(root)
    arxiv = _ours(validate(workspace.review, workspace.facts)).strategies[1]
    details = [reason.detail for miss in arxiv.missed for reason in miss.reasons if reason.code == "no-term"]
    assert details and all(detail == "none of the strategy's words (object-in-context) appear in its title as sitegen reads "
               "them" for detail in details)


def test_validation_csv_bare_numbers_are_pmids_and_one_study_is_listed_once(example_copy, sitegen):
    record = next(r for r in open_review(example_copy).review.records.values() if r.PMID and r.PMCID and r.DOI)
    (example_copy / "validation.csv").write_text(
        f"record_id,note\n{record.DOI},\n{record.PMID},\n{record.PMCID},\n0,\n0{record.PMID},\n")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1
    assert "validation.csv:3" in out and "validation.csv:4" in out and "already listed on line 2" in out
    assert "validation.csv:5" in out and "a bare number, read as a PMID" in out
    assert "validation.csv:6" in out and "already listed on line 2" in out  # zero-padded, the same PMID
    assert "PMC0" not in out


def test_percentages_never_round_up_to_the_threshold():
    from sitegen.living.validation import percent
    assert (percent(35, 39), percent(8999, 10000), percent(9, 10), percent(1, 0)) == ("89.7%", "89.9%", "90.0%", "n/a")
