"""Screening order: the records still to screen, ranked by a model that learns from the review's
own title/abstract decisions (active learning, as ASReview LAB does).

The default is ASReview LAB's "ELAS u4": TF-IDF over each record's title and abstract (word 1- and
2-grams, sublinear term frequency, words in over 95% of records dropped), fitted on every record at
hand, decided or not (TF-IDF uses no label), and a linear SVM (C 0.11) trained on the decisions so
far, the includes weighted to 9.8 times the excludes in total. It scores each record still to
screen; the likeliest include comes first. Logistic regression and naive Bayes are there for the
benchmark (bench/screening_order.py) that chose the SVM. The model's own seed is fixed.

Before there is at least one include and one exclude there is nothing to learn from: the order
is then the seed-002 relevance score (`relevance.py`), and each row says so.

Pure: records and labels in, ranked rows out. The same records and labels in any order give the
same order: rows are put in a canonical order (content, then id) before anything is fitted, and
ties are broken the same way. Nothing here writes a decision.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import MultinomialNB
from sklearn.svm import LinearSVC

from sitegen.records.model import Record
from sitegen.screening.relevance import Ranking
from sitegen.text import counted

ModelName = Literal["logistic", "svm", "naive-bayes"]
MODELS: tuple[ModelName, ...] = ("logistic", "svm", "naive-bayes")
# Chosen by bench/screening_order.py (mean WSS@95 over 20 seeds, see bench/RESULTS-screening.md).
DEFAULT_MODEL: ModelName = "svm"
# The includes together weigh 9.8 times the excludes together: ASReview's "ELAS u4" balance, which
# bench/screening_order.py found better than equal class weights or none.
INCLUDE_WEIGHT = 9.8
MODEL_SEED = 0  # liblinear's coordinate order: fixed, so the same decisions give the same model
TOP_TERMS = 3
FEATURES = "TF-IDF of title+abstract (word 1-2 grams, sublinear tf)"
MODEL_LABELS: dict[ModelName, str] = {
    "logistic": "logistic regression",
    "svm": "linear SVM",
    "naive-bayes": "naive Bayes",
}


@dataclass(frozen=True)
class Labelled:
    """A record with its title/abstract decision: include (True) or exclude (False)."""

    record: Record
    include: bool


class OrderedRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rank: int
    id: str
    title: str  # the record's title, for a screener who reads the order (an id alone tells them nothing)
    score: float  # the model's score (probability, or the SVM's margin); the seed-002 score in fallback
    rationale: str


class ScreeningOrder(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: str  # which model and features, or the seed-002 fallback, and why
    learned: bool
    includes: int  # the decisions it learned from
    excludes: int
    rows: list[OrderedRow]  # likeliest include first


# Scripts written without spaces between words (Chinese, Japanese, Thai, ...): each character is set apart,
# so the vectorizer's word bigrams become character bigrams there instead of one token per sentence.
_UNSPACED = re.compile(r"([\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])")


def text_of(record: Record) -> str:
    return _UNSPACED.sub(r" \1 ", unicodedata.normalize("NFKC", f"{record.title}\n{record.abstract or ''}"))


def content_key(record: Record) -> tuple[str, str]:
    """The tie-break: content first (what a reviewer sees), then the id, never the input order."""
    return " ".join(text_of(record).casefold().split()), record.id


def vectorizer() -> TfidfVectorizer:
    # ASReview's ELAS u4 features; words in over 95% of the records (the, of, and) say nothing.
    # Tokens are words of two characters or more, and any single character of a script without spaces.
    return TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_df=0.95, strip_accents="unicode",
                           token_pattern=r"(?u)\b\w\w+\b|[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                                         r"\uac00-\ud7af\uf900-\ufaff]")


def sample_weights(labels: np.ndarray, include_weight: float | None) -> np.ndarray | None:
    """Weights giving the includes together `include_weight` times the weight of the excludes
    together (1.0: both classes weigh the same; None: every decision weighs 1), summing to the
    number of decisions. Includes are few: unweighted, a model learns mostly what to exclude."""
    if include_weight is None:
        return None
    includes, excludes = int(labels.sum()), int(len(labels) - labels.sum())
    weights = np.where(labels == 1, 1.0, includes / (include_weight * excludes))
    return weights * (len(labels) / weights.sum())


def fit_model(matrix: csr_matrix, labels: np.ndarray, model: ModelName = DEFAULT_MODEL,
              include_weight: float | None = INCLUDE_WEIGHT):
    """A linear model on TF-IDF rows and 0/1 labels (1 include), weighted by `sample_weights`."""
    weights = sample_weights(labels, include_weight)
    if model == "logistic":
        estimator = LogisticRegression(C=1.0, solver="liblinear", random_state=MODEL_SEED)
    elif model == "svm":
        estimator = LinearSVC(C=0.11, random_state=MODEL_SEED)  # ASReview's "ELAS u4" setting
    elif model == "naive-bayes":
        estimator = MultinomialNB(alpha=3.822)  # ASReview's v1 default
    else:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    return estimator.fit(matrix, labels, sample_weight=weights)


def model_scores(estimator, matrix: csr_matrix) -> np.ndarray:
    """Higher is likelier an include: a probability where the model gives one, else the SVM's margin."""
    if isinstance(estimator, LinearSVC):
        return estimator.decision_function(matrix)
    return estimator.predict_proba(matrix)[:, 1]


def term_weights(estimator) -> np.ndarray:
    """Each feature's pull towards include: a linear model's coefficients, naive Bayes' log-odds."""
    if isinstance(estimator, MultinomialNB):
        return estimator.feature_log_prob_[1] - estimator.feature_log_prob_[0]
    return np.asarray(estimator.coef_).ravel()


def _top_terms(row: csr_matrix, weights: np.ndarray, terms: np.ndarray) -> list[str]:
    pulls = sorted(((float(value * weights[column]), str(terms[column])) for column, value
                    in zip(row.indices, row.data, strict=True)), key=lambda pull: (-pull[0], pull[1]))
    return [term for pull, term in pulls[:TOP_TERMS] if pull > 0]


def _score_text(model: ModelName, score: float) -> str:
    return f"margin {score:+.2f}" if model == "svm" else f"p={score:.2f}"


def screening_order(candidates: list[Record], labelled: list[Labelled], fallback: Ranking,
                    model: ModelName = DEFAULT_MODEL) -> ScreeningOrder:
    """`candidates` (the records still to screen) ranked by a model trained on `labelled`, or by
    `fallback` (their seed-002 ranking) until `labelled` holds an include and an exclude."""
    candidates = sorted(candidates, key=content_key)
    labelled = sorted(labelled, key=lambda item: content_key(item.record))
    includes = sum(item.include for item in labelled)
    excludes = len(labelled) - includes
    if not includes or not excludes:
        return _fallback_order(candidates, fallback, includes, excludes,
                               "the model needs at least one include and one exclude at title/abstract")
    texts = [text_of(item.record) for item in labelled] + [text_of(record) for record in candidates]
    tfidf = vectorizer()
    try:
        matrix = tfidf.fit_transform(texts).tocsr()
    except ValueError:  # scikit-learn's "empty vocabulary": no word tells one record from another
        return _fallback_order(candidates, fallback, includes, excludes,
                               "no word tells the records' titles and abstracts apart")
    estimator = fit_model(matrix[:len(labelled)], np.array([int(item.include) for item in labelled]), model)
    to_rank = matrix[len(labelled):]
    scores = model_scores(estimator, to_rank) if candidates else np.array([])
    weights, terms = term_weights(estimator), tfidf.get_feature_names_out()
    method = (f"{MODEL_LABELS[model]} on {FEATURES} trained on {counted(includes, 'include')} / "
              f"{counted(excludes, 'exclude')} at title/abstract")
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], content_key(candidates[i])))
    rows = []
    for rank, i in enumerate(order, start=1):
        top = _top_terms(to_rank[i], weights, terms)
        pulled = f"top terms: {', '.join(top)}" if top else "no term pulls it towards include"
        rows.append(OrderedRow(rank=rank, id=candidates[i].id, title=candidates[i].title, score=round(float(scores[i]), 6),
                               rationale=f"{method}: {_score_text(model, float(scores[i]))}; {pulled}"))
    return ScreeningOrder(method=method, learned=True, includes=includes, excludes=excludes, rows=rows)


def _fallback_order(candidates: list[Record], fallback: Ranking, includes: int, excludes: int,
                    why: str) -> ScreeningOrder:
    scored = {scored.id: scored for scored in fallback.decisions}
    missing = sorted(record.id for record in candidates if record.id not in scored)
    if missing:
        raise ValueError(f"the fallback ranking has no score for: {', '.join(missing)}")
    method = (f"seed-002 relevance score (no learning: {why}; there {'is' if includes == 1 else 'are'} "
              f"{counted(includes, 'include')} and {counted(excludes, 'exclude')})")
    # In the ranking's own order (by score, then id): a KEEP and a paper demoted for the cap at its score are
    # listed as the batch page and the digest list them, the KEEP first, never the other way by their content.
    position = {scored.id: n for n, scored in enumerate(fallback.decisions)}
    order = sorted(candidates, key=lambda record: position[record.id])
    rows = [OrderedRow(rank=rank, id=record.id, title=record.title, score=float(scored[record.id].score),
                       rationale=f"{method}: {scored[record.id].score}, {scored[record.id].decision}; "
                                 f"{scored[record.id].rationale}")
            for rank, record in enumerate(order, start=1)]
    return ScreeningOrder(method=method, learned=False, includes=includes, excludes=excludes, rows=rows)
