"""Axis (c), faithfulness: does every evidence passage occur in the text it says it comes from?

A passage is looked for in the record's abstract and, when that is not where it is, in the article's
licensed full text (Europe PMC JATS, read only under CC BY, CC BY-SA, CC0 or the Public Domain Mark). The
verdict, never a boolean:

- `verified`: every passage was found; each found in the full text carries its section, licence and URL.
- `contradicted` (refusal grade): a passage that names the abstract is absent from it. The abstract is the
  record's own, held whole, so the record says something its source does not. (An abstract its source marks cut
  short, `text.cut_short`, is not whole: a passage absent from it is unchecked.)
- `not-found`: a passage is absent from the full text as sitegen reads it. That is never all of the article
  (tables, figures, footnotes and back matter are not read; a PDF's page is not the JATS text), so a human
  looks: an open item, not a refusal.
- `insufficient-passage`: a passage could not be checked, for want of an open full text (none, a licence
  sitegen may not quote, a source that did not answer): an open item, never a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.living.facts import evidence_sha256
from sitegen.records.model import Record
from sitegen.review.models import REFUSAL_GRADE, Evidence, PassageCheck, VerificationPayload
from sitegen.sources import europepmc
from sitegen.sources.europepmc import FullText
from sitegen.sources.http import Fetcher
from sitegen.sources.settings import SourceSettings
from sitegen.text import comparable_passage, cut_short, holds_passage


@dataclass(frozen=True)
class OpenText:
    """The licensed full text of a record, or why there is none; and the responses that say so."""

    fulltext: FullText | None
    why_none: str | None
    snapshot_hashes: list[str]


def needs_fulltext(record: Record, evidence: Evidence) -> bool:
    """Whether some passage can only be checked against the full text (it is not in the abstract)."""
    abstract = comparable_passage(record.abstract or "")
    return any(finding.passage.source != "abstract" and not holds_passage(abstract, comparable_passage(finding.passage.text))
               for finding in evidence.findings)


def open_text(fetcher: Fetcher, settings: SourceSettings, record: Record) -> OpenText:
    """The record's Europe PMC full text, through its PMCID or the PMCID its PMID has."""
    hashes: list[str] = []
    pmcid = record.PMCID
    if pmcid is None and record.PMID:
        pmcid, outcome = europepmc.pmcid_for(fetcher, settings, record.PMID)
        hashes += outcome.snapshot_hashes
        if outcome.status != "ok":
            return OpenText(None, f"Europe PMC did not answer for PMID {record.PMID} ({outcome.status}): whether "
                                  "an open full text exists is unknown", hashes)
        if outcome.doubt:  # another work in its place: neither the article nor its lack of a PMCID
            return OpenText(None, f"{outcome.doubt}: whether an open full text exists is unknown", hashes)
    if pmcid is None:
        return OpenText(None, "the record has no PMCID, and no PMID through which Europe PMC names one: "
                              "no open full text to check against", hashes)
    fulltext = europepmc.fulltext(fetcher, settings, pmcid)
    hashes += fulltext.snapshot_hashes
    if fulltext.status != "ok":
        return OpenText(None, f"Europe PMC did not answer for the full text of {pmcid} ({fulltext.status}); "
                              f"{fulltext.cause or ''}".rstrip("; "), hashes)
    if not fulltext.readable:
        return OpenText(None, fulltext.refusal or f"Europe PMC has no full text for {pmcid}", hashes)
    if not fulltext.paragraphs:  # nothing read is not the whole text: no passage can be contradicted by it
        return OpenText(None, f"the full text of {pmcid} has no paragraph sitegen could read", hashes)
    return OpenText(fulltext, None, hashes)


def faithfulness_verdict(record: Record, evidence: Evidence, text: OpenText | None) -> VerificationPayload:
    """The verdict on every passage of `evidence`; `text` is the open full text when it was looked for."""
    abstract = comparable_passage(record.abstract or "")
    fulltext = text.fulltext if text else None
    checks: list[PassageCheck] = []
    reasons: list[str] = []
    contradicted = False
    for index, finding in enumerate(evidence.findings):
        passage = finding.passage
        wanted = comparable_passage(passage.text)
        number = f"finding {index + 1}"
        if holds_passage(abstract, wanted):
            checks.append(PassageCheck(finding=index, source=passage.source, result="found", found_in="abstract"))
            continue
        if passage.source == "abstract":
            if mark := cut_short(record.abstract):  # the words may be in the part its source left out
                reasons.append(f"{number}: the passage does not occur in the record's abstract, which its source cut "
                               f"short (it ends {mark!r}): a human checks it against the whole abstract")
                checks.append(PassageCheck(finding=index, source="abstract", result="unchecked"))
            elif abstract:
                contradicted = True
                reasons.append(f"{number}: the passage does not occur in the abstract it names")
                checks.append(PassageCheck(finding=index, source="abstract", result="not-found"))
            else:
                reasons.append(f"{number}: the record has no abstract to check the passage against")
                checks.append(PassageCheck(finding=index, source="abstract", result="unchecked"))
            continue
        if fulltext is None:
            why = text.why_none if text and text.why_none else "no open full text was read"
            reasons.append(f"{number}: not in the abstract; {why}")
            checks.append(PassageCheck(finding=index, source=passage.source, result="unchecked"))
            continue
        quote = fulltext.quote(passage.text)
        if quote is not None:
            checks.append(PassageCheck(finding=index, source=passage.source, result="found", found_in="fulltext",
                                       section=quote.paragraph.section, licence=(quote.licence or quote.licence_url)[:2000],
                                       url=quote.source_url))
            continue
        reasons.append(f"{number}: the passage does not occur in the paragraphs sitegen reads of the licensed "
                       f"full text ({fulltext.source_url}"
                       + (", which is longer than sitegen reads" if not fulltext.complete else "")
                       + "; tables, figures, footnotes and back matter are not read)"
                       + (f"; it is quoted from {passage.location}" if passage.location else "")
                       + ": a human checks it")
        checks.append(PassageCheck(finding=index, source=passage.source, result="not-found",
                                   licence=(fulltext.licence or fulltext.licence_url or "")[:2000] or None,
                                   url=fulltext.source_url))
    results = {check.result for check in checks}
    verdict = ("contradicted" if contradicted else "not-found" if "not-found" in results
               else "insufficient-passage" if "unchecked" in results else "verified")
    if verdict == "verified":
        reasons = ["the passage occurs verbatim in the text it names" if len(checks) == 1 else
                   f"all {len(checks)} passages occur verbatim in the text they name"]
    return VerificationPayload(record_id=record.id, axis="faithfulness", verdict=verdict,
                               refusal_grade=verdict in REFUSAL_GRADE, reasons=[r[:2000] for r in reasons],
                               snapshot_hashes=sorted(set(text.snapshot_hashes)) if text else [], passages=checks,
                               evidence_sha256=evidence_sha256(evidence))
