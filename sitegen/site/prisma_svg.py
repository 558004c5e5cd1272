"""The PRISMA 2020 flow diagram as inline SVG: real, selectable text, drawn from derived counts.

Layout is computed here (boxes, lines, arrows); `templates/prisma.svg` only
draws it. Every number carries `data-count` naming the field of the counts it
shows, so tests can prove the picture says what `sitegen prisma --json` says.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from markupsafe import Markup

from sitegen.living.prisma import PrismaCounts
from sitegen.records.providers import label
from sitegen.site.templates import environment

WIDTH = 780
LEFT_X, LEFT_W = 60, 330
RIGHT_X, RIGHT_W = 440, 320
LINE = 18
PAD = 12
GAP = 34
CHARS_LEFT, CHARS_RIGHT = 44, 42


@dataclass
class Line:
    text: str
    count: int | None = None
    key: str | None = None  # the counts field this number comes from
    bold: bool = False


@dataclass
class Box:
    x: int
    y: int
    width: int
    lines: list[Line]

    @property
    def height(self) -> int:
        return PAD * 2 + LINE * len(self.lines)


@dataclass
class Diagram:
    boxes: list[Box] = field(default_factory=list)
    arrows: list[tuple[int, int, int, int]] = field(default_factory=list)
    phases: list[tuple[str, int, int]] = field(default_factory=list)  # label, top, bottom
    height: int = 0
    summary: str = ""
    footnote: str = ""


# Characters XML 1.0 cannot hold, escaped or not: the downloadable SVG must stay well-formed.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _counted(label: str, count: int, key: str, width: int, *, bold: bool = False) -> list[Line]:
    """A label with its count, wrapped; the count sits on the last line."""
    wrapped = textwrap.wrap(f"{_NOT_XML.sub(' ', label)} (n = {count})", width) or [""]
    lines = [Line(text, bold=bold) for text in wrapped[:-1]]
    lines.append(Line(wrapped[-1], count, key, bold))
    return lines


def layout(counts: PrismaCounts, labels: dict[str, str]) -> Diagram:
    diagram = Diagram()
    left_column: list[Box] = []
    y = 10

    def row(left: list[Line], right: list[Line] | None, phase: str | None = None) -> None:
        nonlocal y
        left_box = Box(LEFT_X, y, LEFT_W, left)
        boxes = [left_box]
        if right is not None:
            right_box = Box(RIGHT_X, y, RIGHT_W, right)
            boxes.append(right_box)
            middle = y + min(left_box.height, right_box.height) // 2
            diagram.arrows.append((LEFT_X + LEFT_W, middle, RIGHT_X, middle))
        height = max(box.height for box in boxes)
        if left_column:
            previous = left_column[-1]
            diagram.arrows.append((LEFT_X + LEFT_W // 2, previous.y + previous.height, LEFT_X + LEFT_W // 2, y))
        diagram.boxes += boxes
        left_column.append(left_box)
        if phase:
            diagram.phases.append((phase, y, y + height))
        else:
            label, top, _ = diagram.phases[-1]
            diagram.phases[-1] = (label, top, y + height)
        y += height + GAP

    identified = [Line("Records identified from:", bold=True)]
    identified += _counted("Databases", counts.identified_databases, "identified_databases", CHARS_LEFT)
    for source, n in counts.identified_by_source.items():
        identified += _counted(f"  {label(source)}", n, f"identified_by_source.{source}", CHARS_LEFT)
    if counts.identified_other_methods:
        identified += _counted("Other methods", counts.identified_other_methods, "identified_other_methods",
                               CHARS_LEFT)
    removed = [Line("Records removed before screening:", bold=True)]
    removed += _counted("Duplicate records removed", counts.duplicates_removed, "duplicates_removed", CHARS_RIGHT)
    row(identified, removed, "Identification")
    row(_counted("Records screened", counts.screened, "screened", CHARS_LEFT),
        _counted("Records excluded", counts.excluded_screening, "excluded_screening", CHARS_RIGHT), "Screening")
    row(_counted("Reports sought for retrieval", counts.reports_sought, "reports_sought", CHARS_LEFT),
        _counted("Reports not retrieved", counts.reports_not_retrieved, "reports_not_retrieved", CHARS_RIGHT))
    reasons = [Line("Reports excluded:", bold=True)]
    for code, n in counts.excluded_by_reason.items():
        reasons += _counted(labels.get(code, code), n, f"excluded_by_reason.{code}", CHARS_RIGHT)
    if not counts.excluded_by_reason:
        reasons += _counted("None excluded", 0, "excluded_full_text", CHARS_RIGHT)
    row(_counted("Reports assessed for eligibility", counts.reports_assessed, "reports_assessed", CHARS_LEFT),
        reasons)
    included = _counted("Studies included in review", counts.included, "included", CHARS_LEFT, bold=True)
    if counts.runs > 1:
        included += _counted("From earlier searches", counts.included_previous, "included_previous", CHARS_LEFT)
        included += _counted("New from the latest search with new records", counts.included_new, "included_new",
                             CHARS_LEFT)
    row(included, None, "Included")
    diagram.footnote = (f"Not shown as excluded: {counts.awaiting_screening} record(s) awaiting screening or "
                        f"adjudication; {counts.awaiting_full_text} report(s) awaiting full-text assessment.")
    diagram.height = y + LINE
    diagram.summary = summary(counts, labels)
    return diagram


def summary(counts: PrismaCounts, labels: dict[str, str]) -> str:
    per_source = ", ".join(f"{label(s)} {n}" for s, n in counts.identified_by_source.items())
    reasons = "; ".join(f"{labels.get(c, c)}: {n}" for c, n in counts.excluded_by_reason.items()) or "none"
    return (f"{counts.identified} records identified ({per_source or 'no databases'}; other methods "
            f"{counts.identified_other_methods}); {counts.duplicates_removed} duplicates removed; "
            f"{counts.screened} screened, {counts.excluded_screening} excluded; {counts.reports_sought} reports "
            f"sought, {counts.reports_not_retrieved} not retrieved; {counts.reports_assessed} assessed, "
            f"{counts.excluded_full_text} excluded ({reasons}); {counts.included} studies included.")


def render(counts: PrismaCounts, labels: dict[str, str], *, standalone: bool = False) -> Markup:
    diagram = layout(counts, labels)
    svg = environment().get_template("prisma.svg").render(d=diagram, width=WIDTH, line=LINE, pad=PAD,
                                                          standalone=standalone)
    return Markup(svg)
