"""The offline retrieval benchmark (sitegen.records.metrics, `sitegen evaluate`): hand-computed figures,
unjudged windows, the ideal DCG from the whole judged pool, and every bad input refused."""

from __future__ import annotations

import csv
import json
import math

import pytest
from conftest import EXAMPLE, FIXTURES, run_cli

from sitegen.records.metrics import Judgments, KnownItems, Runs, evaluate, ndcg_at, precision_at, recall_at

GRADES = {"a": 3, "b": 0, "c": 1, "d": 2}  # d is judged relevant but no run below retrieves it


def test_precision_counts_grade_above_zero_over_k():
    # top 3 = a(3), b(0), c(1): two relevant / 3
    assert precision_at(["a", "b", "c"], GRADES, 3) == pytest.approx(2 / 3)
    # a run shorter than k still divides by k: a(3) relevant, 1 / 4
    assert precision_at(["a"], GRADES, 4) == pytest.approx(1 / 4)


def test_ndcg_hand_computed():
    # DCG@3 of a(3), b(0), c(1): (2^3-1)/log2(2) + 0/log2(3) + (2^1-1)/log2(4) = 7 + 0 + 0.5 = 7.5
    # ideal@3 from the whole pool (3, 2, 1, 0): 7/1 + 3/log2(3) + 1/2 = 7 + 1.892789 + 0.5 = 9.392789
    assert ndcg_at(["a", "b", "c"], GRADES, 3) == pytest.approx(7.5 / (7 + 3 / math.log2(3) + 0.5))
    assert ndcg_at(["a", "b", "c"], GRADES, 3) == pytest.approx(0.798485, abs=1e-6)


def test_ideal_dcg_comes_from_the_whole_judged_pool_not_the_retrieved():
    # The run retrieved a, b, c in the best order possible among them: against only what it retrieved,
    # nDCG would be 1. d (grade 2) was judged but missed, so the ideal@2 is a(3), d(2):
    # 7 + 3/log2(3) = 8.892789; DCG@2 of a, c is 7 + 1/log2(3) = 7.630930; 7.630930 / 8.892789 = 0.858103
    assert ndcg_at(["a", "c", "b"], GRADES, 2) == pytest.approx(0.858103, abs=1e-6)
    assert ndcg_at(["a", "d", "c"], GRADES, 2) == pytest.approx(1.0)


def test_unjudged_window_is_unjudged_never_zero():
    # x was never judged: a window holding it is unjudged, although a window above it is measured
    run = ["b", "x", "a"]
    assert precision_at(run, GRADES, 1) == 0.0  # b (grade 0) alone: a real zero
    assert precision_at(run, GRADES, 2) == "unjudged"
    assert ndcg_at(run, GRADES, 2) == "unjudged"
    assert precision_at(["a"], None, 1) == "unjudged"  # a query nobody judged
    assert ndcg_at(["b"], {"b": 0}, 1) == "no-relevant-judged"  # ideal DCG 0: no ratio, not a zero


def test_known_item_recall_needs_no_judgments():
    # known a, z: a is in the top 2, z nowhere: 1 / 2
    assert recall_at(["a", "x", "y"], ["a", "z"], 2) == 0.5
    assert recall_at(["x", "a"], ["a", "z"], 1) == 0.0
    assert recall_at(["a"], ["a", "z", "a"], 1) == 0.5  # a known id listed twice is one item


def test_means_are_over_measured_queries_with_coverage():
    runs = Runs({"q1": ["a", "b"], "q2": ["x"], "q3": ["c"]})
    judgments = Judgments({"q1": GRADES, "q3": {"c": 1}, "q9": {"c": 1}})
    report = evaluate(runs, judgments, KnownItems({"q2": ["x", "y"]}), [1, 2])
    # precision@1: q1 a -> 1, q3 c -> 1, q2 unjudged: mean 1 over 2 queries
    assert report.precision.value["1"] == 1.0 and report.precision.coverage["1"] == 2
    # precision@2: q1 a, b -> 1/2; q3 c and nothing -> 1/2; mean 0.5 over 2
    assert report.precision.value["2"] == 0.5 and report.precision.coverage["2"] == 2
    [q2] = [query for query in report.per_query if query.query == "q2"]
    assert q2.precision == {"1": "unjudged", "2": "unjudged"} and q2.recall == {"1": 0.5, "2": 0.5}
    assert report.recall.coverage == {"1": 1, "2": 1}
    # q9 is judged but has no run: it is one of the benchmark's queries, reported as no-run, not dropped
    assert report.queries == 4 and report.queries_run == 3
    assert report.queries_judged == 3 and report.queries_known == 1
    [q9] = [query for query in report.per_query if query.query == "q9"]
    assert q9.retrieved is None and q9.precision == {"1": "no-run", "2": "no-run"}
    assert report.coverage(report.precision, "1") == "2 of 4 queries; 1 without a run"
    assert any("'q9'" in warning for warning in report.warnings)


def _write(path, data) -> str:
    path.write_text(json.dumps(data, indent=1))
    return str(path)


@pytest.fixture
def inputs(tmp_path):
    return (_write(tmp_path / "runs.json", {"q1": ["a", "b", "c"], "q2": ["x"]}),
            _write(tmp_path / "judgments.json", {"q1": GRADES}),
            _write(tmp_path / "known.json", {"q1": ["a", "d"]}))


def test_cli_writes_a_report(tmp_path, inputs):
    runs, judgments, known = inputs
    code, out, err = run_cli("evaluate", "--runs", runs, "--judgments", judgments, "--known", known,
                             "--k", "3", "--k", "1", "--out", tmp_path / "report.json")
    assert code == 0, err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["ks"] == [1, 3]
    assert report["precision"]["coverage"] == {"1": 1, "3": 1}  # q2 was never judged
    assert report["recall"]["value"]["3"] == 0.5  # a found, d missed
    assert "precision: @1 1.000 (1 of 2 queries)" in out


def test_cli_refuses_to_overwrite(tmp_path, inputs):
    runs, judgments, _ = inputs
    (tmp_path / "report.json").write_text("keep me")
    code, _, err = run_cli("evaluate", "--runs", runs, "--judgments", judgments, "--out", tmp_path / "report.json")
    assert code == 2 and "already exists; give --force to replace it" in err
    assert (tmp_path / "report.json").read_text() == "keep me"
    code, _, err = run_cli("evaluate", "--runs", runs, "--judgments", judgments, "--out", judgments, "--force")
    assert code == 2 and f"--out {judgments}: is the same file as --judgments {judgments}" in err


def test_cli_refuses_oversized_inputs(tmp_path, inputs):
    _, judgments, _ = inputs
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"q": [f"id-{n:08}" for n in range(500_000)]}))  # about 7 MB
    code, _, err = run_cli("evaluate", "--runs", big, "--judgments", judgments, "--out", tmp_path / "r.json")
    assert code == 1 and "big.json" in err and "5 MB limit" in err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(("text", "where", "message"), [
    ('{"q1": ["a",\n  "b",\n  ]}', "runs.json:2:6", "JSON syntax error: a comma after the last item"),
    ('{"q1": ["a",\n  "b",\n  "a"]}', "runs.json:1:2", "q1: lists a more than once"),
    ('{"q1": ["a"],\n "q2": [7]}', "runs.json:2:9", "q2.0: Input should be a valid string"),
    ('{"q1": ["a",\n  "  "]}', "runs.json:2:3", "q1.1: is blank"),  # it was read as the id ""
])
def test_cli_bad_runs_name_file_and_line(tmp_path, inputs, text, where, message):
    _, judgments, _ = inputs
    (tmp_path / "runs.json").write_text(text)
    code, _, err = run_cli("evaluate", "--runs", tmp_path / "runs.json", "--judgments", judgments,
                           "--out", tmp_path / "r.json")
    assert code == 1 and f"{tmp_path / where}: error: {message}" in err, err
    assert not (tmp_path / "r.json").exists()


def test_cli_bad_grade_names_its_path(tmp_path, inputs):
    runs, _, _ = inputs
    bad = _write(tmp_path / "j.json", {"q1": {"a": 3, "b": 4}})
    code, _, err = run_cli("evaluate", "--runs", runs, "--judgments", bad, "--out", tmp_path / "r.json")
    # json.dumps(indent=1) puts "b" on line 4, column 3
    # as docs/evaluation.md shows it
    assert code == 1 and f"{bad}:4:3: error: q1.b: Input should be less than or equal to 3 [schema]" in err, err
    assert not (tmp_path / "r.json").exists()


def test_cli_missing_input(tmp_path, inputs):
    runs, _, _ = inputs
    code, _, err = run_cli("evaluate", "--runs", runs, "--judgments", tmp_path / "none.json",
                           "--out", tmp_path / "r.json")
    assert code == 1 and "none.json" in err and "missing" in err


def test_the_example_search_order_scored_on_its_real_labels(sitegen, tmp_path):
    # The example's recorded search replayed as `sitegen search` orders it (one lane: the provider's order),
    # scored against the SYNERGY labels of the same records (included = grade 1). bench/search_metrics.py
    # prints the same figures with a random-order floor.
    code, out, err = sitegen("search", '"object-in-context" OR "object in context" OR "object-context recognition"',
                             "--sources", "openalex", "--snapshots", "replay", "--review", EXAMPLE, "--json")
    assert code == 0, err
    order = [record["custom"]["openalex"] for record in json.loads(out)["records"]]
    with (FIXTURES / "asreview" / "Sep_2021_ids.csv").open(newline="") as handle:
        grades = {row["openalex_id"].rsplit("/", 1)[1]: int(row["label_included"])
                  for row in csv.DictReader(handle) if row["openalex_id"]}
    report = evaluate(Runs({"q": order}), Judgments({"q": grades}),
                      KnownItems({"q": [record_id for record_id, grade in grades.items() if grade]}), [10, 100, 271])
    assert len(order) == 271 and len(grades) == 271
    assert report.precision.value == {"10": pytest.approx(0.4), "100": pytest.approx(0.16), "271": pytest.approx(40 / 271)}
    assert report.recall.value["100"] == pytest.approx(0.4) and report.recall.value["271"] == 1.0
    assert report.ndcg.value["10"] == pytest.approx(0.388, abs=1e-3)


# --------------------------------------------------------------------------- ids compared normalised


@pytest.mark.parametrize(("written", "normal"), [
    ("10.1000/ABC", "10.1000/abc"), (" https://doi.org/10.1000/ABC ", "10.1000/abc"), ("doi:10.1000/abc", "10.1000/abc"),
    ("https://openalex.org/W123", "openalex:W123"), ("W123", "openalex:W123"), ("openalex:w123", "openalex:W123"),
    ("pmid:31000001", "pmid:31000001"), ("https://pubmed.ncbi.nlm.nih.gov/31000001/", "pmid:31000001"),
    ("31000001", "31000001"),  # a bare number may be any system's id: kept as written
    ("PMC123456", "pmcid:PMC123456"), ("pmcid:pmc123456", "pmcid:PMC123456"),
    ("  my-own-id ", "my-own-id"),
])
def test_ids_are_normalised_as_read(written, normal):
    from sitegen.records.metrics import benchmark_id

    assert benchmark_id(written) == normal


def test_spellings_of_one_record_match_across_files():
    runs = Runs({"q": ["https://openalex.org/W123", "10.1000/ABC", "x"]})
    judgments = Judgments({"q": {"W123": 2, "https://doi.org/10.1000/abc": 0, " x": 1}})
    report = evaluate(runs, judgments, KnownItems({"q": ["10.1000/abc", "openalex:W123"]}), [1, 3])
    [query] = report.per_query
    assert query.precision == {"1": 1.0, "3": pytest.approx(2 / 3)}  # every window judged
    assert query.recall == {"1": 0.5, "3": 1.0}


def test_two_spellings_of_one_record_in_a_run_are_refused_with_file_and_path(tmp_path, inputs):
    _, judgments, _ = inputs
    runs = _write(tmp_path / "runs.json", {"q1": ["a"], "q2": ["10.1000/ABC", "https://doi.org/10.1000/abc"]})
    code, _, err = run_cli("evaluate", "--runs", runs, "--judgments", judgments, "--out", tmp_path / "r.json")
    assert code == 1 and f"{runs}:" in err and "q2: lists 10.1000/abc more than once" in err, err
    assert not (tmp_path / "r.json").exists()


def test_two_spellings_of_one_judged_record_are_refused(tmp_path, inputs):
    runs, _, _ = inputs
    bad = _write(tmp_path / "j.json", {"q1": {"W5": 1, "https://openalex.org/W5": 0}})
    code, _, err = run_cli("evaluate", "--runs", runs, "--judgments", bad, "--out", tmp_path / "r.json")
    assert code == 1 and f"{bad}:" in err and "'W5' and 'https://openalex.org/W5' are the same record" in err, err


# --------------------------------------------------------------------------- the query set and its warnings


def test_cli_counts_queries_without_a_run_in_coverage(tmp_path, inputs):
    runs, _, _ = inputs  # runs of q1 and q2
    judgments = _write(tmp_path / "j.json", {"q1": GRADES, "q3": {"a": 1}})
    known = _write(tmp_path / "k.json", {"q1": ["a"], "q4": [], "q5": ["b"]})
    code, out, err = run_cli("evaluate", "--runs", runs, "--judgments", judgments, "--known", known,
                             "--k", "1", "--out", tmp_path / "r.json")
    assert code == 0, err
    assert "precision: @1 1.000 (1 of 5 queries; 3 without a run)" in out
    assert "known items of query 'q4' are an empty list" in err
    report = json.loads((tmp_path / "r.json").read_text())
    assert {query["query"]: query["retrieved"] for query in report["per_query"]} == {
        "q1": 3, "q2": 1, "q3": None, "q4": None, "q5": None}


def test_a_known_item_judged_not_relevant_is_warned_about():
    report = evaluate(Runs({"q": ["a", "b"]}), Judgments({"q": {"a": 1, "b": 0}}), KnownItems({"q": ["a", "b"]}), [2])
    assert report.warnings == ["query 'q': b is known relevant but judged grade 0"]


@pytest.mark.parametrize("grade", [True, "2", 2.0, -1, 4])
def test_grades_are_integers_0_to_3_only(grade):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Judgments.model_validate({"q": {"a": grade}})


def test_bench_without_labels_says_to_pass_labels(tmp_path):
    import subprocess
    import sys

    from conftest import ROOT

    done = subprocess.run([sys.executable, ROOT / "bench" / "search_metrics.py", "--labels", tmp_path / "none.csv"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "pass --labels" in done.stderr and "Traceback" not in done.stderr
