"""Inter-rater agreement for dual screening: Cohen's kappa, PABAK, observed agreement, Fleiss' kappa.

Pure functions over lists of paired decisions. Kappa is undefined when chance
agreement is certain (both reviewers used one category only): that is
reported as None with the reason, never as a made-up number. PABAK counts the
categories reviewers choose from (include, exclude, maybe), not those they happened
to use: one "maybe" anywhere must not change what every other decision measures.

The agreement reported beside each kappa is the observed agreement that kappa
corrects for chance, one quantity for both: the share of pairs of decisions on a
record that agree, averaged over the records. For two reviewers that is Cohen's
p_o, the share of records decided alike; for more it is Fleiss' P-bar. The share of
records all reviewers decided alike is another, stricter number, not reported.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations

from pydantic import BaseModel

from sitegen.screening.outcomes import DECIDED
from sitegen.text import counted

Z_95 = 1.959963984540054


class Agreement(BaseModel):
    reviewers: list[str]
    records: int  # Cohen's: decided by both reviewers; Fleiss': decided by the same number of the reviewers listed
    # Observed agreement, 0 to 1: Cohen's p_o (the share of records decided alike) or Fleiss' P-bar (the mean over
    # records of the share of pairs of that record's reviewers deciding it alike); the same for two reviewers.
    percent_agreement: float | None
    kappa: float | None  # Cohen's for two reviewers, Fleiss' for more
    kappa_method: str
    ci_low: float | None = None  # 95% confidence interval (Cohen's kappa only)
    ci_high: float | None = None
    pabak: float | None = None  # prevalence-adjusted, bias-adjusted kappa
    note: str | None = None


def cohen(pairs: list[tuple[str, str]], reviewers: list[str]) -> Agreement:
    """Cohen's kappa for two reviewers' decisions on the same records, with a large-sample 95% CI
    (Fleiss, Cohen and Everitt 1969)."""
    n = len(pairs)
    if n == 0:
        return Agreement(reviewers=reviewers, records=0, percent_agreement=None, kappa=None, kappa_method="cohen",
                         note="no record was decided by both reviewers")
    observed = sum(1 for a, b in pairs if a == b) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    categories = sorted(set(first) | set(second))
    expected = sum((first[c] / n) * (second[c] / n) for c in categories)
    # PABAK (Byrt, Bishop and Carlin 1993) over the k categories of the scale: (k * p_o - 1) / (k - 1).
    k = len(DECIDED)
    pabak = (k * observed - 1) / (k - 1)
    if math.isclose(expected, 1.0):
        return Agreement(reviewers=reviewers, records=n, percent_agreement=observed, kappa=None,
                         kappa_method="cohen", pabak=pabak,
                         note=f"kappa is undefined: both reviewers decided every record '{categories[0]}'")
    kappa = (observed - expected) / (1 - expected)
    if observed in (0.0, 1.0):
        # The large-sample error is 0 there, so its interval would claim a certainty two records cannot give.
        return Agreement(reviewers=reviewers, records=n, percent_agreement=observed, kappa=kappa,
                         kappa_method="cohen", pabak=pabak,
                         note=f"no confidence interval: the reviewers agreed on {'every' if observed else 'no'} record, "
                              "where the large-sample interval has no width")
    if len(first) == 1 or len(second) == 1:
        # One reviewer made one decision throughout: agreement is then exactly what chance gives, so kappa is 0
        # however many records, and its error 0 too (a hair off it in floating point, drawn "-0.00 to 0.00").
        alike, decision = (reviewers[0], *first) if len(first) == 1 else (reviewers[1], *second)
        return Agreement(reviewers=reviewers, records=n, percent_agreement=observed, kappa=0.0,
                         kappa_method="cohen", pabak=pabak,
                         note=f"no confidence interval: {alike} decided every record '{decision}', "
                              "so agreement is what chance gives and the large-sample interval has no width")
    error = large_sample_error(Counter(pairs), n, kappa, expected)
    return Agreement(reviewers=reviewers, records=n, percent_agreement=observed, kappa=kappa, kappa_method="cohen",
                     ci_low=max(-1.0, kappa - Z_95 * error), ci_high=min(1.0, kappa + Z_95 * error), pabak=pabak)


def large_sample_error(cells: Counter[tuple[str, str]], n: int, kappa: float, expected: float) -> float:
    """The standard error of Cohen's kappa of Fleiss, Cohen and Everitt (1969), for an interval around it.

    Cohen's (1960) sqrt(p_o (1 - p_o) / (n (1 - p_e)^2)) holds the reviewers' marginals fixed, so it misstates
    the error (0.130 for 0.127 on a 50-record table); this is the delta-method variance over every cell p_ij
    (first reviewer i, second j), with p_i. and p_.i the two reviewers' shares of category i:
    [sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2 + (1 - k)^2 sum_(i != j) p_ij (p_.i + p_j.)^2
     - (k - p_e (1 - k))^2] / (n (1 - p_e)^2).
    """
    first, second = Counter(), Counter()
    for (a, b), count in cells.items():
        first[a] += count / n
        second[b] += count / n
    agreeing = sum(count / n * (1 - (first[a] + second[a]) * (1 - kappa)) ** 2
                   for (a, b), count in cells.items() if a == b)
    disagreeing = sum(count / n * (second[a] + first[b]) ** 2 for (a, b), count in cells.items() if a != b)
    variance = (agreeing + (1 - kappa) ** 2 * disagreeing - (kappa - expected * (1 - kappa)) ** 2) \
        / (n * (1 - expected) ** 2)
    return math.sqrt(max(variance, 0.0))  # rounding may leave a variance of 0 a hair below it


def fleiss(ratings: list[list[str]], reviewers: list[str]) -> Agreement:
    """Fleiss' kappa (1971) for records each decided by the same number (two or more) of reviewers, not
    necessarily the same ones. Its observed agreement is P-bar, the mean over records of
    P_i = (sum_j n_ij^2 - m) / (m (m - 1)): the share of pairs of the record's m decisions that agree."""
    n = len(ratings)
    if n == 0:
        return Agreement(reviewers=reviewers, records=0, percent_agreement=None, kappa=None, kappa_method="fleiss",
                         note="no record was decided by two or more reviewers")
    raters = len(ratings[0])
    counts = [Counter(row) for row in ratings]
    categories = sorted({c for row in counts for c in row})
    per_record = [(sum(v * v for v in row.values()) - raters) / (raters * (raters - 1)) for row in counts]
    observed = sum(per_record) / n
    shares = [sum(row[c] for row in counts) / (n * raters) for c in categories]
    expected = sum(share * share for share in shares)
    if math.isclose(expected, 1.0):
        return Agreement(reviewers=reviewers, records=n, percent_agreement=observed, kappa=None,
                         kappa_method="fleiss", note=f"kappa is undefined: every decision was '{categories[0]}'")
    return Agreement(reviewers=reviewers, records=n, percent_agreement=observed,
                     kappa=(observed - expected) / (1 - expected), kappa_method="fleiss")


def modal_ratings(per_record: Counter[int]) -> int | None:
    """The number of decisions per record that Fleiss' kappa is taken over: the one most records have, of two or
    more (a tie goes to the larger number, each record then telling more). None when no record has two."""
    shared = [(records, ratings) for ratings, records in per_record.items() if ratings >= 2]
    return max(shared)[1] if shared else None


def _left_out(per_record: Counter[int], ratings: int, reviewers: int) -> str | None:
    """Why records are not in a Fleiss' kappa over records of `ratings` decisions each, or None when all are."""
    fewer = sum(records for count, records in per_record.items() if count < ratings)
    more = sum(records for count, records in per_record.items() if count > ratings)
    every = "all " if ratings == reviewers else ""
    parts = ([f"{counted(fewer, 'record')} decided by fewer than {every}{counted(ratings, 'reviewer')}"] if fewer else []) \
        + ([f"{counted(more, 'record')} decided by more than {counted(ratings, 'reviewer')}"] if more else [])
    if not parts:
        return None
    return (f"{' and '.join(parts)} left out: Fleiss' kappa needs the same number of decisions on every record "
            "(each pair's Cohen's kappa counts them)")


def agreement(decisions: dict[str, dict[str, str]]) -> list[Agreement]:
    """Agreement among reviewers: {reviewer: {record id: decision}}.

    Two reviewers: Cohen's kappa. More: Fleiss' kappa over the records decided by
    the number of reviewers most records have (in a rotating design, each record
    screened by two of three reviewers, that is two), then Cohen's kappa for every pair.
    """
    reviewers = sorted(decisions)
    if len(reviewers) < 2:
        return []
    results = [_fleiss_agreement(decisions, reviewers)] if len(reviewers) > 2 else []
    for a, b in combinations(reviewers, 2):
        shared = sorted(set(decisions[a]) & set(decisions[b]))
        results.append(cohen([(decisions[a][i], decisions[b][i]) for i in shared], [a, b]))
    return results


def _fleiss_agreement(decisions: dict[str, dict[str, str]], reviewers: list[str]) -> Agreement:
    """Fleiss' kappa among three or more reviewers (`agreement`), over the records decided by the number of them most
    records have, its note saying which records that leaves out."""
    deciding: dict[str, list[str]] = {}
    for reviewer in reviewers:
        for record_id in decisions[reviewer]:
            deciding.setdefault(record_id, []).append(reviewer)
    per_record = Counter(len(who) for who in deciding.values())
    ratings = modal_ratings(per_record)
    kept = sorted(i for i, who in deciding.items() if len(who) == ratings)
    # Fleiss' kappa needs as many decisions on every record, not the same reviewers: it is over the records of
    # the usual number; the note says how many others there are, or its kappa reads as the agreement on all.
    result = fleiss([[decisions[r][i] for r in deciding[i]] for i in kept],
                    sorted({r for i in kept for r in deciding[i]}) or reviewers)
    # Which reviewers decided a record may vary, so the row, naming them all, says how many decided each.
    rotating = f"each record decided by {ratings} of the {len(result.reviewers)} reviewers" \
        if ratings and ratings < len(result.reviewers) else None
    left_out = _left_out(per_record, ratings, len(reviewers)) if ratings else None
    result.note = "; ".join(note for note in (result.note, rotating, left_out) if note) or None
    return result
