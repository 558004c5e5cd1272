"""Screening order (`sitegen screen rank`): a model trained on the review's own title/abstract
decisions, its seed-002 fallback, and the digest's DROP, which must not bury includes."""

from __future__ import annotations

import csv
import json
import random

import pytest
from conftest import EXAMPLE, tree_bytes
from test_relevance import paper, protocol

from sitegen.screening.ranking import MODELS, Labelled, fit_model, screening_order
from sitegen.screening.relevance import score_batch
from sitegen.workspace import open_review

# A tiny corpus: the includes share the task's words, the excludes are about something else.
INCLUDES = [
    paper("Object-in-context recognition in rats after hippocampal lesions",
          "Rats explored objects in two contexts; object-in-context recognition needed the hippocampus."),
    paper("Perirhinal cortex and object context memory in rats",
          "Object context memory of rats was impaired after perirhinal lesions."),
    paper("Early life stress impairs object-in-context memory",
          "Adult rats stressed early in life failed the object-in-context recognition task."),
]
EXCLUDES = [
    paper("Fear conditioning in mice lacking a serotonin receptor",
          "Mice were trained in cued fear conditioning; freezing was scored by the amygdala protocol."),
    paper("Operant responding for sucrose in rats",
          "Lever pressing under a progressive ratio schedule measured motivation for sucrose."),
    paper("Odour discrimination in the olfactory bulb",
          "Mice learned to discriminate odour pairs; olfactory bulb activity was imaged."),
    paper("Spatial navigation in the water maze",
          "Mice searched for a hidden platform; swim paths were tracked over five days."),
]
TO_SCREEN = [
    paper("Object-in-context memory in aged rats", "Aged rats explored objects in contexts: recognition declined."),
    paper("Contextual fear conditioning and extinction in mice", "Mice froze in the conditioned context."),
    paper("Sucrose preference after chronic stress", "Rats drank less sucrose after chronic mild stress."),
    paper("Object recognition and context in rats with lesions",
          "Rats recognised which object belonged to which context."),
]
LABELLED = [Labelled(record, True) for record in INCLUDES] + [Labelled(record, False) for record in EXCLUDES]
PROTOCOL = protocol(watch=(("object-in-context", 1.0),), in_scope=["object-in-context"],
                    out_of_scope=["fear conditioning"])


def fallback(records=TO_SCREEN):
    return score_batch(list(records), PROTOCOL, [])


def order(candidates=TO_SCREEN, labelled=LABELLED, **kwargs):
    return screening_order(list(candidates), list(labelled), fallback(candidates), **kwargs)


def test_the_includes_sharing_terms_come_first_and_each_row_says_why():
    ordered = order()
    assert ordered.learned and (ordered.includes, ordered.excludes) == (3, 4)
    ids = [row.id for row in ordered.rows]
    assert set(ids[:2]) == {TO_SCREEN[0].id, TO_SCREEN[3].id}
    assert [row.rank for row in ordered.rows] == [1, 2, 3, 4]
    assert [row.score for row in ordered.rows] == sorted((row.score for row in ordered.rows), reverse=True)
    top = ordered.rows[0]
    assert top.rationale.startswith("linear SVM on TF-IDF of title+abstract (word 1-2 grams, sublinear tf) "
                                    "trained on 3 includes / 4 excludes at title/abstract: margin ")
    assert "top terms: " in top.rationale and "context" in top.rationale.split("top terms: ")[1]


@pytest.mark.parametrize("model", MODELS)
def test_every_model_ranks_the_likely_includes_first_and_is_named(model):
    ordered = order(model=model)
    assert {row.id for row in ordered.rows[:2]} == {TO_SCREEN[0].id, TO_SCREEN[3].id}
    label = {"logistic": "logistic regression", "svm": "linear SVM", "naive-bayes": "naive Bayes"}[model]
    assert ordered.method.startswith(f"{label} on TF-IDF")
    assert ("margin " if model == "svm" else "p=0.") in ordered.rows[0].rationale


def test_the_order_does_not_depend_on_input_order():
    expected = order().model_dump()
    rng = random.Random(7)
    for _ in range(5):
        candidates, labelled = TO_SCREEN[:], LABELLED[:]
        rng.shuffle(candidates)
        rng.shuffle(labelled)
        assert order(candidates, labelled).model_dump() == expected


def test_records_scoring_alike_are_ordered_by_content_then_id():
    twin_a = paper("Same words", "Identical abstract text.", pmid="39000002")
    twin_b = paper("Same words", "Identical abstract text.", pmid="39000001")
    ordered = order([twin_a, twin_b])
    assert ordered.rows[0].score == ordered.rows[1].score
    assert [row.id for row in ordered.rows] == sorted([twin_a.id, twin_b.id])


@pytest.mark.parametrize("labelled", [[], LABELLED[:3], LABELLED[3:]], ids=["none", "includes only", "excludes only"])
def test_before_an_include_and_an_exclude_the_seed_002_score_orders(labelled):
    ordered = order(labelled=labelled)
    assert not ordered.learned
    assert ordered.method.startswith("seed-002 relevance score (no learning: the model needs at least one include")
    seed = {scored.id: scored.score for scored in fallback().decisions}
    assert [row.score for row in ordered.rows] == sorted(seed.values(), reverse=True)
    assert all(row.score == seed[row.id] for row in ordered.rows)
    assert ordered.rows[0].id == TO_SCREEN[0].id and "watchlist:" in ordered.rows[0].rationale


def test_the_seed_002_order_is_the_rankings_own_so_a_keep_precedes_a_paper_demoted_at_its_score():
    # Both score alike; under a cap of 1 the lower id is KEEP and the other is demoted. By content ("Alpha" before
    # "Zebra") the demoted one would be screened first, above the KEEP the batch page and the digest put first.
    kept = paper("Zebra object-in-context memory in rats", "Object-in-context recognition in rats.", pmid="39000001")
    demoted = paper("Alpha object-in-context memory in rats", "Object-in-context recognition in rats.",
                    pmid="39000002")
    ranking = score_batch([kept, demoted], PROTOCOL, [], max_kept=1)
    assert [(s.id, s.decision) for s in ranking.decisions] == [(kept.id, "KEEP"), (demoted.id, "REVIEW")]
    ordered = screening_order([demoted, kept], [], ranking)
    assert not ordered.learned and [row.id for row in ordered.rows] == [kept.id, demoted.id]


def test_records_without_a_word_to_learn_from_fall_back_too():
    blank = [Labelled(paper("?", "", pmid="39000003"), True), Labelled(paper("!", "", pmid="39000004"), False)]
    candidate = paper("…", "", pmid="39000005")
    ordered = order([candidate], blank)
    assert not ordered.learned and "no word tells the records" in ordered.method


def test_nothing_to_screen_is_an_empty_order():
    ordered = order([])
    assert ordered.learned and ordered.rows == []


def test_an_unknown_model_is_refused():
    with pytest.raises(ValueError, match="unknown model 'forest'"):
        order(model="forest")


def test_fit_model_weights_the_includes_as_asked():
    import numpy as np
    from scipy.sparse import csr_matrix

    matrix = csr_matrix(np.eye(4))
    labels = np.array([1, 0, 0, 0])
    assert fit_model(matrix, labels, "naive-bayes", None).class_count_.tolist() == [3.0, 1.0]
    # The include's total weight is 9.8 times the three excludes', and all weights sum to 4.
    counts = fit_model(matrix, labels, "naive-bayes", 9.8).class_count_
    assert counts[1] / counts[0] == pytest.approx(9.8) and counts.sum() == pytest.approx(4.0)


# --------------------------------------------------------------------------- the command, on the example


def _forget_title_abstract_decisions(review, record_ids: set[str]) -> None:
    for path in (review / "screening" / "title-abstract").glob("*.csv"):
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        path.write_text("".join(",".join(row) + "\n" for row in rows if row[0] not in record_ids), encoding="utf-8")


def test_screen_rank_orders_what_is_left_to_screen_by_the_reviews_own_decisions(sitegen, example_copy):
    code, out, _ = sitegen("screen", "rank", example_copy, "--batch", "2")
    # The example is fully screened: said so, not "0 record(s) still to screen, ordered by" a model.
    assert code == 0 and out == "batch 2: no record is still to screen at title and abstract\n"
    batch = {b.number: b for b in open_review(example_copy).facts.screening.batches}[2]
    _forget_title_abstract_decisions(example_copy, set(batch.record_ids))
    before = tree_bytes(example_copy)
    code, out, _ = sitegen("screen", "rank", example_copy, "--batch", "2", "--json")
    assert code == 0
    ordered = json.loads(out)
    assert ordered["learned"] and ordered["method"].startswith("linear SVM on TF-IDF")
    assert sorted(row["id"] for row in ordered["rows"]) == sorted(batch.record_ids)
    assert [row["rank"] for row in ordered["rows"]] == list(range(1, len(batch.record_ids) + 1))
    assert all(row["rationale"].startswith(ordered["method"]) for row in ordered["rows"])
    code, text, _ = sitegen("screen", "rank", example_copy, "--batch", "2")
    assert code == 0 and f"batch 2: {len(batch.record_ids)} records still to screen, ordered by linear SVM" in text
    assert tree_bytes(example_copy) == before  # never writes a decision


def test_screen_rank_names_a_missing_batch(sitegen):
    code, _, err = sitegen("screen", "rank", EXAMPLE, "--batch", "9")
    assert code == 1 and "there is no screening batch 9" in err


# --------------------------------------------------------------------------- the digest's DROP


def test_the_digest_drops_under_2_percent_of_the_examples_included_studies():
    workspace = open_review(EXAMPLE)
    review = workspace.review
    included = {i for i, o in workspace.facts.screening.outcomes["full-text"].items() if o.decision == "include"}
    ranking = score_batch(list(review.records.values()), review.protocol.meta, [], review.state.max_kept)
    dropped = [scored.id for scored in ranking.decisions if scored.decision == "DROP" and scored.id in included]
    assert len(included) >= 30 and len(dropped) / len(included) < 0.02, dropped
    assert ranking.calibration.dropped > 0  # DROP still happens: to look-alikes


TASK = protocol(watch=(("object-in-context", 1.0),), in_scope=["object-in-context"],
                out_of_scope=["fear conditioning"])
NEUTRAL = "Rats explored two arenas on consecutive days."


def one(record, meta=TASK):
    [scored] = score_batch([record], meta, []).decisions
    return scored


def test_a_paper_naming_the_task_once_in_its_abstract_is_reviewed_not_dropped():
    meta = protocol(watch=(("object-context", 0.9),), in_scope=["object-context"], out_of_scope=["fear conditioning"])
    scored = one(paper("Recognition memory after anaesthesia", "Rats then ran the object-context task."), meta)
    assert scored.score == 48 and scored.decision == "REVIEW" and "no exclusion fired" in scored.rationale


def test_an_out_of_scope_term_in_passing_is_not_a_look_alike():
    scored = one(paper("Recognition memory after anaesthesia", f"{NEUTRAL} Unlike fear conditioning, it needs no shock."))
    assert scored.axes.criteria == 0.4 and scored.decision == "REVIEW" and scored.tags == []
    assert "in passing, not a look-alike" in scored.rationale


def test_an_out_of_scope_subject_that_recurs_or_leads_the_title_is_still_dropped():
    recurring = one(paper("Memory after anaesthesia", "Fear conditioning was tested; fear conditioning failed."))
    leading = one(paper("Fear conditioning after anaesthesia", NEUTRAL))
    for scored in (recurring, leading):
        assert (scored.decision, scored.tags) == ("DROP", ["look-alike-trap"])
        assert "an exclusion fired" in scored.rationale
    in_title = one(paper("Object-in-context memory after anaesthesia",
                         "Fear conditioning was tested; fear conditioning failed."))
    assert in_title.decision != "DROP"  # the title says what the paper is about


@pytest.mark.parametrize(("weight", "score", "decision"), [(0.87, 49, "DROP"), (0.88, 50, "REVIEW")])
def test_a_look_alike_is_dropped_below_the_review_threshold_only(weight, score, decision):
    meta = protocol(watch=(("object recognition", weight),), in_scope=["object-in-context"],
                    out_of_scope=["fear conditioning"])
    record = paper("Fear conditioning and object recognition", "Object recognition was measured after training.")
    scored = one(record, meta)  # match 1.0 x weight, criteria 0 (trap in the title), novelty 1: 45 x weight + 10
    assert (scored.score, scored.decision) == (score, decision)


def test_text_without_spaces_between_words_is_read_as_characters():
    from sitegen.records.model import Record
    from sitegen.screening.ranking import text_of, vectorizer

    record = Record(id="10.1000/x", DOI="10.1000/x", title="人工智能筛选", abstract="rats 记忆")
    terms = vectorizer().fit([text_of(record), "other words"]).vocabulary_
    assert {"人", "人 工", "记 忆", "rats"} <= set(terms)  # characters and their bigrams, as well as words
