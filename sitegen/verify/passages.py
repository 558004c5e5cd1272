"""Evidence anchored to real text: what `sitegen check` reports about evidence files.

Every evidence file names a known record, once, that screening has not excluded;
every passage that says it comes from the abstract must occur in it, compared as
verification compares it (`sitegen.text.holds_passage`: line wrapping in YAML, ligatures,
typography and the marks of a quotation do not matter; words and numbers do).
"""

from __future__ import annotations

from sitegen.review.folder import Review
from sitegen.review.models import Finding
from sitegen.review.parsing import Parsed
from sitegen.review.problems import Problem
from sitegen.screening.outcomes import Outcome
from sitegen.text import comparable_passage, cut_short, holds_passage


def evidence_problems(review: Review, outcomes: dict[str, dict[str, Outcome]]) -> list[Problem]:
    """`outcomes`: the review's screening outcomes per stage (computed once by the caller)."""
    problems = []
    studies: dict[str, str] = {}
    for item in review.evidence:
        record_id = item.evidence.record_id
        line, column = item.parsed.position(("record_id",)) or (None, None)
        record = review.records.get(record_id)
        if record is None:
            if review.lacks_record(record_id):
                problems.append(Problem(item.path, line, column, "unknown-record",
                                        review.absent_record(record_id)))
            continue
        if record_id in studies:
            problems.append(Problem(item.path, line, column, "duplicate-evidence",
                                    f"evidence for {record_id!r} is already in {studies[record_id]}; "
                                    "keep one file per study"))
        studies.setdefault(record_id, item.path)
        excluded = [stage for stage in ("title-abstract", "full-text")
                    if (outcome := outcomes[stage].get(record_id)) and outcome.decision == "exclude"]
        if excluded:
            problems.append(Problem(item.path, line, column, "evidence-excluded",
                                    f"record {record_id!r} was excluded at {excluded[0]} screening: evidence is "
                                    "extracted from studies that stay in the review (remove the file, or revisit "
                                    "the decision)"))
        problems += _repeated_findings(item.path, item.evidence.findings, item.parsed)
        abstract = comparable_passage(record.abstract or "")
        for index, finding in enumerate(item.evidence.findings):
            passage = finding.passage
            line, column = item.parsed.position(("findings", index, "passage", "text")) or (None, None)
            quoted = comparable_passage(passage.text)
            if not quoted:
                problems.append(Problem(item.path, line, column, "passage-empty",
                                        "the passage has no visible text (only invisible characters such as soft "
                                        "hyphens): quote the words the finding rests on"))
                continue
            if passage.source != "abstract":
                continue
            if not abstract:
                problems.append(Problem(item.path, line, column, "passage-not-found",
                                        f"passage source is 'abstract' but record {record_id!r} has no abstract"))
            elif not holds_passage(abstract, quoted) and (mark := cut_short(record.abstract)):
                problems.append(Problem(item.path, line, column, "passage-not-found",
                                        f"passage does not occur in the record's abstract, which its source cut short "
                                        f"(it ends {mark!r}): the words may be in the part left out, which sitegen "
                                        "cannot check; quote it with source: fulltext, or external with its location"))
            elif not holds_passage(abstract, quoted):
                problems.append(Problem(item.path, line, column, "passage-not-found",
                                        "passage does not occur verbatim in the record's abstract "
                                        "(compared after collapsing whitespace, ligatures, curly quotes, dashes, "
                                        "spaces beside signs, words broken at line ends, and quotes, ellipses and "
                                        f"[brackets] of a quotation): {_where_it_departs(abstract, passage.text)}"))
    return problems


def _where_it_departs(abstract: str, passage: str) -> str:
    """Where a passage stops agreeing with the abstract (`abstract` already `comparable_passage`), in the passage's
    own words: a typo copied into a long passage is found at once, not by reading both side by side."""
    words = passage.split()
    agreeing = 0  # the longest opening of the passage, in whole words, that occurs in the abstract
    while agreeing < len(words) and holds_passage(abstract, comparable_passage(" ".join(words[:agreeing + 1]))):
        agreeing += 1
    if agreeing == len(words):  # every word's opening agrees, the whole does not: nothing to point at
        return "compare it with the abstract as the record holds it"
    if agreeing == 0:
        return (f"not even its first word ({words[0]!r}) is in the abstract: is it from the full text (source: "
                "fulltext) or from another record?")
    shown = " ".join(words[max(0, agreeing - 6):agreeing])
    return (f"it agrees with the abstract as far as {('…' if agreeing > 6 else '') + shown!r}, "
            f"then has {words[agreeing]!r}, which the abstract does not have there")


def _repeated_findings(path: str, findings: list[Finding], parsed: Parsed) -> list[Problem]:
    """A finding the same as an earlier one in every field says nothing more, and would be listed twice: most often
    a merge that kept both sides' copy, or a finding pasted twice."""
    problems: list[Problem] = []
    first: dict[str, int] = {}  # a finding as JSON -> where it first is
    for index, finding in enumerate(findings):
        earlier = first.setdefault(finding.model_dump_json(), index)
        if earlier != index:
            line, column = parsed.position(("findings", index)) or (None, None)
            earlier_line = (parsed.position(("findings", earlier)) or (None, None))[0]
            problems.append(Problem(path, line, column, "repeated-finding",
                                    f"this finding repeats, field for field, the one on line {earlier_line}: keep one"))
    return problems
