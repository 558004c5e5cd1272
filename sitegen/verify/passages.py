"""Evidence anchored to real text: what `sitegen check` reports about evidence files.

Every evidence file names a known record, once; every passage that says it
comes from the abstract must occur in it verbatim (compared after collapsing
whitespace, so line wrapping in YAML does not matter).
"""

from __future__ import annotations

import re
import unicodedata

from sitegen.review.folder import Review
from sitegen.review.problems import Problem


def normalise_whitespace(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def evidence_problems(review: Review) -> list[Problem]:
    problems = []
    studies: dict[str, str] = {}
    for item in review.evidence:
        record_id = item.evidence.record_id
        line, column = item.parsed.position(("record_id",)) or (None, None)
        record = review.records.get(record_id)
        if record is None:
            if review.records_loaded:
                problems.append(Problem(item.path, line, column, "unknown-record",
                                        f"record {record_id!r} is not in records.jsonl"))
            continue
        if record_id in studies:
            problems.append(Problem(item.path, line, column, "duplicate-evidence",
                                    f"evidence for {record_id!r} is already in {studies[record_id]}; "
                                    "keep one file per study"))
        studies.setdefault(record_id, item.path)
        abstract = normalise_whitespace(record.abstract or "")
        for index, finding in enumerate(item.evidence.findings):
            passage = finding.passage
            if passage.source != "abstract":
                continue
            line, column = item.parsed.position(("findings", index, "passage", "text")) or (None, None)
            if not abstract:
                problems.append(Problem(item.path, line, column, "passage-not-found",
                                        f"passage source is 'abstract' but record {record_id!r} has no abstract"))
            elif normalise_whitespace(passage.text) not in abstract:
                problems.append(Problem(item.path, line, column, "passage-not-found",
                                        "passage does not occur verbatim in the record's abstract "
                                        "(compared after collapsing whitespace)"))
    return problems
