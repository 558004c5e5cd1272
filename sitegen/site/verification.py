"""The verification report page: where citation verification of the included studies stands.

The report itself (counts, refusals, open items, studies never verified) is
`sitegen.verify.report`'s, which the command line prints too; this page group
lists it with links to each study's page, in the order of the included studies' list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sitegen.site.studies import AxisVerdict, Study
from sitegen.verify.report import AXIS_LABELS, ReportItem, verification_report

if TYPE_CHECKING:  # pages.py lists this module's page group, so it cannot be imported from here at run time
    from sitegen.site.pages import Files, Site


@dataclass(frozen=True)
class ReportRow:
    """One report item as the page lists it: the study and its verdict on the item's axis."""

    study: Study
    verdict: AxisVerdict


def report_rows(studies: dict[str, Study], items: list[ReportItem]) -> list[ReportRow]:
    return [ReportRow(studies[item.record_id],
                      next(verdict for verdict in studies[item.record_id].verdicts if verdict.axis == item.axis))
            for item in items]


def unverified_axes(studies: dict[str, Study], items: list[ReportItem]) -> list[tuple[Study, list[str]]]:
    """Each study with axes never verified, once, with those axes: a list a reviewer works through."""
    axes: dict[str, list[str]] = {}
    for item in items:
        axes.setdefault(item.record_id, []).append(item.axis)
    return [(studies[record_id], names) for record_id, names in axes.items()]


def verification_pages(site: Site) -> Files:
    """verification.html: the counts per axis and verdict, refusals, open items, studies never verified."""
    studies = {study.record.id: study for study in site.studies}
    report = verification_report(site.review, list(studies))
    yield "verification.html", site.page(
        "verification.html", "verification.html", report=report, axis_labels=AXIS_LABELS, studies=len(studies),
        study_count=site.facts.prisma.studies_included,
        refusals=report_rows(studies, report.refusals), open_items=report_rows(studies, report.open_items),
        unverified=unverified_axes(studies, report.unverified))
