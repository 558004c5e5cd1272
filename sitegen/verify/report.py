"""Where citation verification stands: the latest verdict per study and axis, and what needs attention.

`sitegen verify` appends one `verification` ledger event per record, axis and run; only the latest
event on an axis counts (a later run replaces an earlier verdict). The report reads the ledger for
the studies included now: a verdict on a record no longer included is left out of every count and
list. Items are ordered as the caller lists the studies: refusals first (unresolvable, mismatch,
retracted, contradicted: refuse the citation or fix it before publishing), then open items
(inconclusive, insufficient-passage, not-found: a human has to look), then the axes a study was never
verified on. The site's verification page and study pages show it; the command line prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.living.facts import LatestVerdict, latest_verdicts
from sitegen.records.providers import label
from sitegen.review.folder import Review
from sitegen.review.models import AXIS_VERDICTS, OPEN_ITEMS, VERIFICATION_AXES, VerificationPayload
from sitegen.text import counted

AXIS_LABELS = {
    "identity": "Identity: the work exists as cited",
    "status": "Status: retracted, corrected or not",
    "faithfulness": "Faithfulness: the passages occur in its text",
}
NOT_VERIFIED = "not yet verified"
NOTHING_TO_CHECK = "nothing to check"  # faithfulness of a study with no evidence extracted


@dataclass(frozen=True)
class ReportItem:
    """One included study on one axis: its latest verdict, or none (`latest` is None)."""

    record_id: str
    axis: str
    latest: LatestVerdict | None


@dataclass(frozen=True)
class VerificationReport:
    # axis -> verdict (each of the axis's verdicts, then NOT_VERIFIED, then for faithfulness
    # NOTHING_TO_CHECK) -> number of included studies
    counts: dict[str, dict[str, int]]
    refusals: list[ReportItem]
    open_items: list[ReportItem]
    unverified: list[ReportItem]  # an included study with no verdict on an axis it can be checked on
    not_included: list[str]  # records with verdicts that are not included now: counted nowhere
    ever_verified: bool  # the ledger holds any verification event at all


def verification_report(review: Review, included: list[str]) -> VerificationReport:
    """The report for the studies `included` now (ids, in the order the report lists them)."""
    latest = latest_verdicts(review)
    with_evidence = {item.evidence.record_id for item in review.evidence if item.evidence.findings}
    counts = {axis: dict.fromkeys((*AXIS_VERDICTS[axis], NOT_VERIFIED), 0) for axis in VERIFICATION_AXES}
    counts["faithfulness"][NOTHING_TO_CHECK] = 0
    refusals, open_items, unverified = [], [], []
    for record_id in included:
        for axis in VERIFICATION_AXES:
            verdict = latest.get(record_id, {}).get(axis)
            item = ReportItem(record_id, axis, verdict)
            if verdict is None:
                nothing = axis == "faithfulness" and record_id not in with_evidence
                counts[axis][NOTHING_TO_CHECK if nothing else NOT_VERIFIED] += 1
                if not nothing:
                    unverified.append(item)
                continue
            counts[axis][verdict.payload.verdict] += 1
            if verdict.payload.refusal_grade:
                refusals.append(item)
            elif verdict.payload.verdict in OPEN_ITEMS:
                open_items.append(item)
    current = set(included)
    return VerificationReport(counts, refusals, open_items, unverified,
                              sorted(record_id for record_id in latest if record_id not in current), bool(latest))


# --------------------------------------------------------------------------- in words


def _sources(payload: VerificationPayload, *answers: str) -> tuple[str, bool]:
    """The sources that gave one of `answers`, named as a list in words, and whether they are several."""
    names = list(dict.fromkeys(label(answer.source) for answer in payload.answers if answer.answer in answers))
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}" if names else ""
    return listed, len(names) > 1


def _with_verb(sources: tuple[str, bool], one: str, several: str, otherwise: str) -> str:
    names, plural = sources
    return f"{names} {several if plural else one}" if names else otherwise


def _unanswered(payload: VerificationPayload) -> str:
    """Why a verdict is open: the sources that did not answer, else the verdict's own first reason (only
    one index holds the paper, the work found agrees only in part)."""
    silent = "did not answer (a rate limit, an error or a timeout: never read as a negative)"
    otherwise = payload.reasons[0] if payload.reasons else "the sources that answered do not settle it"
    return _with_verb(_sources(payload, "rate-limited", "no-answer"), silent, silent, otherwise)


def verdict_sentence(payload: VerificationPayload) -> str:
    """The verdict as a reader understands it, from what the sources answered ("verified: Crossref
    and OpenAlex agree with the citation"). A notice's DOI is not part of it: the caller links it."""
    verdict = payload.verdict
    if payload.axis == "identity":
        sentence = {
            "verified": _with_verb(_sources(payload, "found"), "agrees with the citation",
                                   "agree with the citation", "the work exists as cited"),
            "mismatch": _with_verb(_sources(payload, "different-work"), "resolves its identifier to a different work",
                                   "resolve its identifier to a different work",
                                   "its identifier resolves to a different work"),
            "unresolvable": _with_verb(_sources(payload, "not-found"), "knows of no such work",
                                       "know of no such work", "no source consulted knows of such a work"),
            "inconclusive": _unanswered(payload),
        }[verdict]
    elif payload.axis == "status":
        sentence = {
            # the verdict's own reason names exactly the indexes that held the work (a work a title search found
            # only in part is not among them)
            "current": payload.reasons[0] if payload.reasons else
            "no source lists a retraction, correction or expression of concern",
            "corrected": "a correction to this work is published",
            "expression-of-concern": "an expression of concern about this work is published",
            "retracted": "this work was retracted",
            "inconclusive": _unanswered(payload),
        }[verdict]
    else:
        checked = len(payload.passages)
        missing = sum(check.result == "not-found" for check in payload.passages)
        sentence = {
            "verified": f"{'every passage occurs' if checked != 1 else 'the passage occurs'} in the text it cites",
            "not-found": (f"{missing} of {counted(checked, 'passage')} found in neither the abstract nor a licensed full text"
                          if checked else "a passage found in neither the abstract nor a licensed full text"),
            "contradicted": "a passage does not occur in the text it names, which sitegen holds whole",
            "insufficient-passage": "a passage could not be checked: there was no text to check it against",
        }[verdict]
    return f"{verdict.replace('-', ' ')}: {sentence}"
