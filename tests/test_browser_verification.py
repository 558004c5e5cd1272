"""On a 390 px phone, verdicts with long unbroken text (reasons, what a source answered, a notice's DOI, a
full text's section and address) never widen the study page or the verification report."""

from __future__ import annotations

import pytest
from test_browser_layout import LONG, PHONE, URL, too_wide
from test_verification_pages import record, study_page, verdict

from sitegen.commands import build
from sitegen.review.models import PassageCheck, SourceAnswer
from sitegen.workspace import open_review

pytestmark = pytest.mark.browser


def test_long_verdict_text_never_widens_a_page_on_a_phone(example_copy, tmp_path, page):
    workspace = open_review(example_copy)
    studied = next(item.evidence.record_id for item in workspace.review.evidence
                   if item.evidence.record_id in workspace.facts.included)
    record(example_copy, ("2023-05-01T00:00:00Z", [
        verdict(studied, "identity", "mismatch", reasons=[LONG], answers=[
            SourceAnswer(source="crossref", answer="different-work", asked=LONG, detail=LONG)]),
        verdict(studied, "status", "retracted", notice="10.1000/" + "x" * 200, reasons=[LONG]),
        verdict(studied, "faithfulness", "not-found", reasons=[LONG], passages=[
            PassageCheck(finding=0, source="fulltext", result="found", found_in="fulltext", section=LONG,
                         licence=LONG, url=URL),
            PassageCheck(finding=0, source="fulltext", result="not-found", licence=LONG, url=URL)])]))
    site = tmp_path / "site"
    build(example_copy, site, environ={})
    page.set_viewport_size(PHONE)
    pages = [site / study_page(studied), site / "verification.html"]
    assert URL in pages[0].read_text() and "x" * 200 in pages[1].read_text()  # the notice, on both
    assert too_wide(page, site, pages) == {}
