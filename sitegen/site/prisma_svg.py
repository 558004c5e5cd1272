"""The PRISMA 2020 flow diagram as inline SVG: real, selectable text, drawn from derived counts.

Layout is computed here (boxes, lines, arrows, phase bars); `templates/prisma.svg`
only draws it. The diagram follows the PRISMA 2020 templates: the new-review
template, or the updated-review one (previous studies + new = total) when a
previous version was published; databases and registers beside other methods when any
record came by other methods. When more than one run identified records,
each flow box gets one column per run and a column for the whole review (the
living variant, as livingPRISMAflow draws it). An updated review's arm of new studies
is the new searches' (`new_searches`): only their runs have columns, and the last one
(New) is their sum, never the whole review's, so that previous + new studies = total.
Every number carries `data-count` naming the counts field it shows (`runs.1.screened` for a
run's column, `runs.0-3.screened` for runs merged into one column, `new_searches.screened`
for the new searches' sum), so tests can prove the picture says what `sitegen prisma --json` says.

The diagram is drawn at its natural size with 13 px text: a page shows it in a
box that scrolls sideways on a narrow screen rather than shrinking the text.
"""

from __future__ import annotations

import math
import textwrap
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from markupsafe import Markup

from sitegen.living.prisma import (
    Flow,
    PrismaCounts,
    RunFlow,
    arm_flow,
    arm_runs,
    in_other_arm,
    not_in_full,
    previous_labels,
)
from sitegen.records.model import CONTROL_CHARACTER
from sitegen.records.providers import kind, label
from sitegen.review.models import utc_minute
from sitegen.site.templates import environment
from sitegen.text import counted

FONT = 13  # px: the diagram is never scaled down on a page, so this is what a reader sees
HEAD_FONT = 11  # column heads: the smallest text in the diagram
NOTE_FONT = 12
LINE = 18
PAD = 10
CHAR = 7.0  # a generous average glyph width at FONT px, so wrapped lines stay inside their box
BOLD_CHAR = 8.6  # the same for bold text: phase labels must fit their bars
NOTE_CHAR = 7.8  # the legend's glyphs at NOTE_FONT px: times are mostly digits, the widest glyphs
CELL = 48  # width of one number column: six digits at FONT px
INDENT = 12  # px per level of indent (a source under its kind, a reason under its box)
GAP_X, GAP_Y = 28, 30
MARGIN = 8
PHASE_W = 30
BOX_W, PREVIOUS_W = 270, 230
LABEL_MIN = 196  # the label part of a box with number columns
MAX_COLUMNS = 6  # number columns per box, the whole review's included: earlier runs merge beyond it
TOTAL_HEAD = {False: "All", True: "New"}  # the arm's total column: the whole review's, or the new searches'


# Under an updated review's new studies: those of them that runs before the new searches identified (the docs'
# exception: records still awaiting a decision when the version was published, and included after it).
EARLIER = "identified before the previous version, included since"
NOT_SEARCHED = "\u2013"  # a source's number in a run that did not search it: no number, never a 0
NOT_IN_FULL = "*"  # after a source's number when a run did not receive all its records (it was not reached)
PER_SOURCE = frozenset({"identified_by_source", "returned_by_source", "identified_other_by_source",
                        "other_returned_by_source"})


@dataclass(frozen=True)
class Cell:
    value: int | None  # None: the column's runs did not search the source this number is of
    key: str  # the counts field this number comes from
    mark: str = ""  # NOT_IN_FULL: the number may be too low

    @property
    def text(self) -> str:
        return NOT_SEARCHED if self.value is None else f"{self.value}{self.mark}"


@dataclass
class Line:
    text: str = ""
    cells: list[Cell | None] = field(default_factory=list)  # one per number column; None leaves it blank
    inline: Cell | None = None  # a single number, written "(n = …)" at the end of the text
    bold: bool = False
    muted: bool = False
    indent: int = 0  # levels of INDENT
    heads: list[str] = field(default_factory=list)  # the column heads, on a line of their own


@dataclass
class Box:
    x: int
    y: int
    width: int
    lines: list[Line]
    style: str = "box"  # box | title | previous
    height: int = 0

    @property
    def natural_height(self) -> int:
        return PAD * 2 + LINE * len(self.lines)


@dataclass(frozen=True)
class Column:
    """A number column: one run, several early runs merged, or (runs None) the arm's total: the whole review
    of a new review, the new searches of an updated one (`arm_flow`)."""

    head: str
    first: int = 0  # index into counts.runs
    last: int = 0
    runs: tuple[RunFlow, ...] | None = None

    def cell(self, counts: PrismaCounts, path: str) -> Cell:
        name, _, source = path.partition(".")
        source = source if name in PER_SOURCE else ""
        runs = arm_runs(counts) if self.runs is None else self.runs
        other = name in ("identified_other_by_source", "other_returned_by_source")  # the arm the number is on
        mark = NOT_IN_FULL if source and any(source in run.incomplete and in_other_arm(run, source) == other
                                             for run in runs) else ""
        if self.runs is None:
            return Cell(_value(arm_flow(counts), path), _arm_key(counts, path), mark)
        span = f"{self.first}" if self.first == self.last else f"{self.first}-{self.last}"
        if source and not any(_searched(run, source) for run in self.runs):
            return Cell(None, f"runs.{span}.{path}")
        return Cell(sum(_value(run, path) for run in self.runs), f"runs.{span}.{path}", mark)


def _arm_key(counts: PrismaCounts, path: str) -> str:
    """Where prisma.json holds the arm's number: the whole review's field, or the new searches' sum."""
    return path if counts.new_searches is None else f"new_searches.{path}"


def _searched(run: RunFlow, source: str) -> bool:
    """Whether the run asked the source (or imported its file), whatever it got."""
    return (source in run.returned_by_source or source in run.other_returned_by_source
            or source in run.incomplete)


def availability_notes(counts: PrismaCounts, cols: list[Column]) -> list[str]:
    """What the marks beside the numbers mean, for the diagram and the table: a source not reached is
    never shown as a source that had nothing."""
    notes = []
    arm = arm_flow(counts)
    if any(col.runs is not None and not any(_searched(run, source) for run in col.runs)
           for col in cols for source in (*arm.identified_by_source, *arm.identified_other_by_source)):
        notes.append(f"{NOT_SEARCHED} the source was not searched in that run.")
    for source, runs in not_in_full(counts, among=arm_runs(counts)).items():
        notes.append(f"{NOT_IN_FULL} {label(source)} was not reached in full in run {', '.join(map(str, runs))}: "
                     "records it holds may be missing, and its numbers are no sign that it has no more.")
    return notes


@dataclass
class Diagram:
    width: int = 0
    height: int = 0
    boxes: list[Box] = field(default_factory=list)
    arrows: list[list[tuple[int, int]]] = field(default_factory=list)  # polylines, arrowhead at the end
    phases: list[tuple[str, int, int]] = field(default_factory=list)  # label, top, bottom
    notes: list[str] = field(default_factory=list)
    notes_y: int = 0
    summary: str = ""
    line: int = LINE
    pad: int = PAD
    phase_w: int = PHASE_W
    margin: int = MARGIN
    font: int = FONT
    head_font: int = HEAD_FONT
    note_font: int = NOTE_FONT
    cell: int = CELL
    indent: int = INDENT


# Characters XML 1.0 cannot hold, escaped or not (the record format's one rule): the downloadable SVG must stay
# well-formed.
_NOT_XML = CONTROL_CHARACTER


def _value(flow: Flow, path: str) -> int:
    name, _, key = path.partition(".")
    value = getattr(flow, name)
    return value.get(key, 0) if isinstance(value, dict) else value


def columns(counts: PrismaCounts) -> list[Column]:
    """The number columns: one per run of the arm that identified records (earliest ones merged past
    MAX_COLUMNS), then the arm's total; none when a single run identified every record of the arm. The arm is
    the whole review (All) of a new review, and the new searches (New) of an updated one: the runs before them
    identified the previous studies, which the template counts apart. A run is chosen by what it identified,
    not by what was left after duplicates were removed: a run whose records all duplicate earlier ones still
    has numbers (identified, removed), and without its column the runs would not add up to the total."""
    first = len(counts.runs) - len(arm_runs(counts))
    found = [(index, run) for index, run in enumerate(counts.runs) if run.identified and index >= first]
    if len(found) < 2:
        return []
    keep = MAX_COLUMNS - 2  # single-run columns beside the merged one and the whole review
    merged = found[:-keep] if len(found) > MAX_COLUMNS - 1 else []
    shown = found[len(merged):]
    result = []
    if merged:
        (first, run_a), (last, run_b) = merged[0], merged[-1]
        # Runs that identified nothing between them add nothing, so summing the merged span's runs is exact.
        result.append(Column(f"Runs {run_a.run}\u2013{run_b.run}", first, last, tuple(counts.runs[first:last + 1])))
    result += [Column(f"Run {run.run}", index, index, (run,)) for index, run in shown]
    return [*result, Column(TOTAL_HEAD[counts.new_searches is not None])]


class _Writer:
    """Builds the lines of the boxes for one diagram: with number columns, or "(n = …)" inline."""

    def __init__(self, counts: PrismaCounts, cols: list[Column]):
        self.counts = counts
        self.cols = cols

    @property
    def box_width(self) -> int:
        return max(BOX_W, LABEL_MIN + len(self.cols) * CELL + 2 * PAD) if self.cols else BOX_W

    def _chars(self, width: int, indent: int = 0) -> int:
        label_px = width - 2 * PAD - len(self.cols) * CELL - indent * INDENT
        return max(12, math.floor(label_px / CHAR))

    def heading(self, text: str) -> list[Line]:
        """A bold line of a box with no number of its own: it may run across the number columns, and wraps at
        the box's edge (a one-column box is too narrow for "Records removed before screening:" in bold)."""
        chars = max(12, math.floor((self.box_width - 2 * PAD) / BOLD_CHAR))
        return [Line(part, bold=True) for part in _wrap(text, chars)]

    def heads(self) -> list[Line]:
        return [Line(heads=[col.head for col in self.cols])] if self.cols else []

    def counted(self, text: str, path: str, *, bold: bool = False, muted: bool = False, indent: int = 0,
                width: int | None = None) -> list[Line]:
        """A label with its count: one number per column, or "(n = …)" after it."""
        width = width or self.box_width
        if not self.cols:
            total = Column(TOTAL_HEAD[False]).cell(self.counts, path)
            return self.single(text, total.value, total.key, bold=bold, muted=muted, indent=indent,
                               width=width, mark=total.mark)
        lines = self._wrapped(text, width, bold=bold, muted=muted, indent=indent)
        lines[-1].cells = [col.cell(self.counts, path) for col in self.cols]
        return lines

    def per_run(self, text: str, path: str, *, indent: int = 0) -> list[Line]:
        """A number only runs have (what a source returned): blank in the whole review's column."""
        lines = self._wrapped(text, self.box_width, muted=True, indent=indent)
        lines[-1].cells = [col.cell(self.counts, path) if col.runs is not None else None for col in self.cols]
        return lines

    def _wrapped(self, text: str, width: int, *, bold: bool = False, muted: bool = False,
                 indent: int = 0) -> list[Line]:
        wrapped = _wrap(text, self._chars(width, indent)) or [""]
        return [Line(part, bold=bold, muted=muted, indent=indent) for part in wrapped]

    def single(self, text: str, value: int, key: str, *, bold: bool = False, muted: bool = False,
               indent: int = 0, width: int | None = None, mark: str = "") -> list[Line]:
        """A label with one number, "(n = …)", whatever the columns."""
        width = width or self.box_width
        chars = max(12, math.floor((width - 2 * PAD - indent * INDENT) / CHAR))
        wrapped = _wrap(text, chars) or [""]
        count = f"(n = {value}{mark})"  # never split: it goes on the label's last line, or on one of its own
        if len(wrapped[-1]) + 1 + len(count) <= chars:
            wrapped[-1] += f" {count}"
        else:
            wrapped.append(count)
        lines = [Line(part, bold=bold, muted=muted, indent=indent) for part in wrapped]
        lines[-1].inline = Cell(value, key, mark)
        return lines

    def title(self, text: str, width: int) -> list[Line]:
        chars = max(12, math.floor((width - 2 * PAD) / BOLD_CHAR))
        return [Line(part, bold=True) for part in _wrap(text, chars)]


def _wrap(text: str, chars: int) -> list[str]:
    """`text` in lines of at most `chars` narrow characters' width: a Chinese, Japanese or Korean character (or a
    full-width form) is drawn about twice as wide, so a label written in one has fewer per line (a reason label
    in Chinese ran into the number columns)."""
    text = _NOT_XML.sub(" ", text)
    wide = 0 if text.isascii() else sum(1 for char in text if unicodedata.east_asian_width(char) in "WF")
    return textwrap.wrap(text, max(6, chars * len(text) // (len(text) + wide)) if wide else chars)


def _label(source: str) -> str:
    return _NOT_XML.sub(" ", label(source))


def layout(counts: PrismaCounts, labels: dict[str, str]) -> Diagram:
    cols = columns(counts)
    w = _Writer(counts, cols)
    updated = counts.template == "updated"
    arm = arm_flow(counts)  # what the identification arms count: the new searches' boxes, if updated
    other = bool(arm.identified_other_by_source)
    box_w = w.box_width

    # x of each grid column: previous studies, databases and registers (2), other methods (2)
    x = MARGIN + PHASE_W + GAP_X // 2
    grid: dict[str, int] = {}
    if updated:
        grid["previous"] = x
        x += PREVIOUS_W + GAP_X
    for name in ("main", "main-side") + (("other", "other-side") if other else ()):
        grid[name] = x
        x += box_w + (2 * GAP_X if name == "main-side" else GAP_X)  # the routes stand apart
    width = x - (2 * GAP_X if not other else GAP_X) + MARGIN

    new_word = "new " if updated else ""
    rows: list[dict[str, tuple[list[Line], str]]] = []
    titles: dict[str, tuple[list[Line], str]] = {
        "main": (w.title(f"Identification of {new_word}studies via databases and registers", 2 * box_w + GAP_X),
                 "title")}
    if updated:
        titles["previous"] = (w.title("Previous studies", PREVIOUS_W), "previous-title")
    if other:
        titles["other"] = (w.title(f"Identification of {new_word}studies via other methods", 2 * box_w + GAP_X),
                           "other-title")

    identified = [*w.heads(), *w.heading("Records identified from:")]
    for heading, kind_name in (("Databases", "database"), ("Registers", "register")):
        identified += w.counted(heading, f"identified_{kind_name}s")
        for source in arm.identified_by_source:
            if kind(source) == kind_name:
                identified += w.counted(_label(source), f"identified_by_source.{source}", indent=1)
                if cols:  # what the source returned in each run, new or not: "271 returned, 11 new"
                    identified += w.per_run("returned in the run", f"returned_by_source.{source}", indent=2)
    removed = [*w.heads(), *w.heading("Records removed before screening:")]
    removed += w.counted("Duplicate records removed", "duplicates_removed")
    removed += w.counted("Records marked as ineligible by automation tools", "excluded_automation")
    removed += w.counted("Records removed for other reasons", "removed_other_reasons")
    row1 = {"main": (identified, "box"), "main-side": (removed, "box")}
    if updated:
        studies_label, reports_label, _ = previous_labels(counts)
        previous = w.single(studies_label, counts.previous_studies, "previous_studies", width=PREVIOUS_W)
        previous += w.single(reports_label, counts.previous_reports, "previous_reports", width=PREVIOUS_W)
        row1["previous"] = (previous, "grey")
    if other:
        found = [*w.heads(), *w.heading("Records identified from:")]
        found += w.counted("Citation searching and other methods", "identified_other_methods")
        for source in arm.identified_other_by_source:
            found += w.counted(_label(source), f"identified_other_by_source.{source}", indent=1)
        found += w.counted("Duplicate records removed", "other_duplicates_removed")
        row1["other"] = (found, "grey")
    rows.append(row1)

    def stage_rows(prefix: str, grid_name: str, style: str) -> list[dict[str, tuple[list[Line], str]]]:
        p = prefix
        screened = [*w.heads(), *w.counted("Records screened", f"{p}screened"),
                    *w.counted("awaiting screening or adjudication", f"{p}awaiting_screening", muted=True, indent=1)]
        excluded = [*w.heads(), *w.counted("Records excluded", f"{p}excluded_screening")]
        sought = [*w.heads(), *w.counted("Reports sought for retrieval", f"{p}reports_sought")]
        missing = [*w.heads(), *w.counted("Reports not retrieved", f"{p}reports_not_retrieved")]
        assessed = [*w.heads(), *w.counted("Reports assessed for eligibility", f"{p}reports_assessed"),
                    *w.counted("awaiting assessment", f"{p}awaiting_full_text", muted=True, indent=1)]
        reasons = [*w.heads(), *w.counted("Reports excluded:", f"{p}excluded_full_text", bold=True)]
        for code in getattr(arm, f"{p}excluded_by_reason"):
            reasons += w.counted(labels.get(code, code), f"{p}excluded_by_reason.{code}", indent=1)
        side = f"{grid_name}-side"
        return [{grid_name: (screened, style), side: (excluded, style)},
                {grid_name: (sought, style), side: (missing, style)},
                {grid_name: (assessed, style), side: (reasons, style)}]

    stages = stage_rows("", "main", "box")
    if other:
        for row, other_row in zip(stages, stage_rows("other_", "other", "grey"), strict=True):
            row.update(other_row)
    rows += stages

    if updated:
        studies = [*w.heads(), *w.counted("Studies included, by run", "studies_included")] if cols else []
        studies += w.single("New studies included in review", counts.new_studies, "new_studies")
        if counts.new_studies_earlier_runs:  # not in the arm above: the note under the diagram says why
            studies += w.single(EARLIER, counts.new_studies_earlier_runs, "new_studies_earlier_runs", muted=True,
                                indent=1)
        studies += w.single("Reports of new included studies", counts.new_reports, "new_reports")
        if counts.new_reports_earlier_runs:
            studies += w.single(EARLIER, counts.new_reports_earlier_runs, "new_reports_earlier_runs", muted=True,
                                indent=1)
        total = w.single("Total studies included in review", counts.studies_included, "studies_included",
                         width=PREVIOUS_W, bold=True)
        total += w.single("Reports of total included studies", counts.reports_included, "reports_included",
                          width=PREVIOUS_W)
        rows.append({"main": (studies, "box"), "previous": (total, "grey")})
    else:
        studies = [*w.heads(), *w.counted("Studies included in review", "studies_included", bold=True),
                   *w.counted("Reports of included studies", "reports_included")]
        rows.append({"main": (studies, "box")})

    diagram = Diagram(width=width)
    y = MARGIN
    title_boxes = {}
    for name, (lines, style) in titles.items():
        span = PREVIOUS_W if name == "previous" else 2 * box_w + GAP_X
        title_boxes[name] = Box(grid[name], y, span, lines, style)
    title_height = max(box.natural_height for box in title_boxes.values())
    for box in title_boxes.values():
        box.height = title_height
    diagram.boxes += title_boxes.values()
    y += title_height + GAP_Y

    placed: list[dict[str, Box]] = []
    for row in rows:
        boxes = {name: Box(grid[name], y, PREVIOUS_W if name == "previous" else box_w, lines, style)
                 for name, (lines, style) in row.items()}
        height = max(box.natural_height for box in boxes.values())
        for box in boxes.values():
            box.height = height
        placed.append(boxes)
        y += height + GAP_Y

    _fit_phases(placed, [("Identification", 0, 0), ("Screening", 1, 3), ("Included", 4, 4)])
    diagram.phases = [(name, placed[first]["main"].y, placed[last]["main"].y + placed[last]["main"].height)
                      for name, first, last in (("Identification", 0, 0), ("Screening", 1, 3), ("Included", 4, 4))]
    for boxes in placed:
        diagram.boxes += boxes.values()
    diagram.arrows = _arrows(placed, updated, other)
    bottom = max(box.y + box.height for boxes in placed for box in boxes.values())
    diagram.notes = _notes(counts, cols, width)
    diagram.notes_y = bottom + GAP_Y // 2
    diagram.height = diagram.notes_y + LINE * len(diagram.notes) + MARGIN
    diagram.summary = summary(counts, labels)
    return diagram


def _fit_phases(placed: list[dict[str, Box]], phases: list[tuple[str, int, int]]) -> None:
    """Make each phase's rows tall enough for its rotated label, so no label is ever clipped."""
    shift = 0
    for name, first, last in phases:
        for boxes in placed[first:last + 1]:
            for box in boxes.values():
                box.y += shift
        top = placed[first]["main"].y
        bottom = placed[last]["main"].y + placed[last]["main"].height
        needed = math.ceil(len(name) * BOLD_CHAR) + 2 * PAD
        if bottom - top < needed:
            extra = needed - (bottom - top)
            for box in placed[last].values():
                box.height += extra
            shift += extra


def _arrows(placed: list[dict[str, Box]], updated: bool, other: bool) -> list[list[tuple[int, int]]]:
    arrows = []

    def down(upper: Box, lower: Box) -> None:
        middle = upper.x + upper.width // 2
        arrows.append([(middle, upper.y + upper.height), (middle, lower.y)])

    def across(left: Box, right: Box) -> None:
        middle = left.y + min(left.height, right.height) // 2
        arrows.append([(left.x + left.width, middle), (right.x, middle)])

    for name in ("main", "other") if other else ("main",):
        for upper, lower in zip(placed[:3], placed[1:4], strict=True):
            down(upper[name], lower[name])
        for boxes in placed[:4]:
            if f"{name}-side" in boxes:
                across(boxes[name], boxes[f"{name}-side"])
    down(placed[3]["main"], placed[4]["main"])
    if other:  # other methods' assessed reports join the included studies, as in the template
        assessed, studies = placed[3]["other"], placed[4]["main"]
        middle = assessed.x + assessed.width // 2
        level = studies.y + studies.height // 2
        arrows.append([(middle, assessed.y + assessed.height), (middle, level), (studies.x + studies.width, level)])
    if updated:
        previous, total, studies = placed[0]["previous"], placed[4]["previous"], placed[4]["main"]
        down(previous, total)
        level = studies.y + min(studies.height, total.height) // 2
        arrows.append([(studies.x, level), (total.x + total.width, level)])
    return arrows


def _notes(counts: PrismaCounts, cols: list[Column], width: int) -> list[str]:
    """The legend under the diagram: what each number column covers, and what the marks beside numbers mean."""
    chars = max(40, math.floor((width - 2 * MARGIN) / NOTE_CHAR))
    marks = [line for note in availability_notes(counts, cols) for line in textwrap.wrap(note, chars)]
    if counts.new_searches is not None:
        return [line for note in arm_notes(counts, cols) for line in textwrap.wrap(note, chars)] + marks
    if not cols:
        return marks
    runs = "; ".join(f"Run {run.run}: {utc_minute(run.at)}" for run in counts.runs if run.identified)
    text = (f"Each box counts the records first identified in each run ({runs}), and All counts the whole "
            f"review.")
    return textwrap.wrap(text + _quiet(counts.runs), chars) + marks


def arm_notes(counts: PrismaCounts, cols: list[Column]) -> list[str]:
    """What an updated review's arm of new studies counts, for the diagram and the table: the new searches
    (which runs, and New their sum), and the new studies and reports it does not hold. None for a new review,
    whose arm is the whole review."""
    if counts.new_searches is None:
        return []
    runs = arm_runs(counts)
    before = len(counts.runs) - len(runs)
    if not runs:
        text = "No search has run since the previous version: the identification of new studies has no record."
    else:
        dated = "; ".join(f"Run {run.run}: {utc_minute(run.at)}" for run in runs if run.identified)
        text = ("The identification of new studies counts the records first identified by the new searches, the runs "
                f"since the previous version{f' ({dated})' if dated else ''}")
        text += (", each run in its column and New their sum." if cols else ".") + _quiet(runs)
    if before:
        text += (f" {_runs_named([str(n) for n in range(1, before + 1)])} came before it and "
                 f"{'is' if before == 1 else 'are'} not drawn: the previous studies came from "
                 f"{'it' if before == 1 else 'them'}.")
    notes = [text]
    earlier = [counted(n, word, plural) for n, word, plural in
               ((counts.new_studies_earlier_runs, "study", "studies"), (counts.new_reports_earlier_runs, "report",
                                                                        "reports")) if n]
    if earlier:  # PRISMA counts them as new (the version did not include them), but the new searches did not find them
        notes.append(f"The new studies and reports include {' and '.join(earlier)} identified before the previous "
                     "version and included since: screened in the runs before it, they are not in the new "
                     "searches' boxes.")
    return notes


def _quiet(runs: list[RunFlow]) -> str:
    """What the runs that identified no new record add, said so that no run goes missing from the legend."""
    quiet = [run for run in runs if not run.identified]
    answered = [str(run.run) for run in quiet if not run.incomplete]
    # A run some source did not answer in full identified nothing of what that source holds: never "no new record".
    unanswered = [str(run.run) for run in quiet if run.incomplete]
    text = ""
    if answered:
        text += f" {_runs_named(answered)} identified no new record and add{'s' if len(answered) == 1 else ''} nothing."
    if unanswered:
        text += (f" {_runs_named(unanswered)} identified no new record, but not every source answered "
                 f"{'it' if len(unanswered) == 1 else 'them'} in full: that is no sign there were none.")
    return text


def _runs_named(numbers: list[str]) -> str:
    return f"Run {numbers[0]}" if len(numbers) == 1 else f"Runs {', '.join(numbers)}"


@dataclass(frozen=True)
class TableRow:
    label: str
    level: int  # 0 for a box, 1 for a part of one (a source, a reason)
    cells: list[Cell | None]  # one per column; None where the number has no place (a run's own, in All)
    span: bool = False  # one number across every column: an updated review's whole-review number, no arm's


def table(counts: PrismaCounts, labels: dict[str, str]) -> tuple[list[str], list[TableRow]]:
    """The diagram's numbers as table rows, with the diagram's columns (or one, "n"): the home page's
    "same counts as a table", kept in step with the picture by being built from the same columns."""
    cols = columns(counts) or [Column("n")]
    arm = arm_flow(counts)  # the rows of the identification arms: the new searches', if updated

    def row(text: str, path: str, level: int = 0, *, runs_only: bool = False) -> TableRow:
        return TableRow(text, level, [None if runs_only and col.runs is None else col.cell(counts, path)
                                      for col in cols])

    def single(text: str, path: str, level: int = 0) -> TableRow:
        """A number of the whole review only (previous, new, total studies): it spans the columns, for under the
        new searches' total it would pass for one of theirs."""
        return TableRow(text, level, [Cell(_value(counts, path), path)], span=True)

    def route(prefix: str, where: str, reasons: dict[str, int]) -> list[TableRow]:
        p = prefix
        return [row(f"Records screened ({where})", f"{p}screened"),
                row("Records excluded", f"{p}excluded_screening"),
                row("Records awaiting screening or adjudication", f"{p}awaiting_screening"),
                row(f"Reports sought for retrieval ({where})", f"{p}reports_sought"),
                row("Reports not retrieved", f"{p}reports_not_retrieved"),
                row("Reports assessed for eligibility", f"{p}reports_assessed"),
                row("Reports awaiting full-text assessment", f"{p}awaiting_full_text"),
                row("Reports excluded", f"{p}excluded_full_text"),
                *(row(labels.get(code, code), f"{p}excluded_by_reason.{code}", 1) for code in reasons)]

    rows = []
    for heading, kind_name in (("databases", "database"), ("registers", "register")):
        rows.append(row(f"Records identified from {heading}", f"identified_{kind_name}s"))
        for source in arm.identified_by_source:
            if kind(source) == kind_name:
                rows.append(row(_label(source), f"identified_by_source.{source}", 1))
                if len(cols) > 1:
                    rows.append(row(f"{_label(source)}: returned in the run, new or not",
                                    f"returned_by_source.{source}", 1, runs_only=True))
    if arm.identified_other_by_source:
        rows.append(row("Records identified by citation searching and other methods", "identified_other_methods"))
        rows += [row(_label(source), f"identified_other_by_source.{source}", 1)
                 for source in arm.identified_other_by_source]
        rows.append(row("Duplicate records removed (other methods)", "other_duplicates_removed"))
    rows += [row("Duplicate records removed", "duplicates_removed"),
             row("Records marked as ineligible by automation tools", "excluded_automation"),
             row("Records removed for other reasons", "removed_other_reasons"),
             *route("", "databases and registers", arm.excluded_by_reason)]
    if arm.identified_other_by_source:
        rows += route("other_", "other methods", arm.other_excluded_by_reason)
    if counts.template != "updated":
        rows += [row("Total studies included in review", "studies_included"),
                 row("Reports of total included studies", "reports_included")]
        return [col.head for col in cols], rows
    # The arm's rows end with what the new searches included; previous + new = total are the whole review's.
    studies_label, reports_label, _ = previous_labels(counts)
    rows += [row("Studies included from the new searches", "studies_included"),
             row("Reports included from the new searches", "reports_included"),
             single(studies_label, "previous_studies"),
             single(reports_label, "previous_reports"),
             single("New studies included in review", "new_studies")]
    if counts.new_studies_earlier_runs:
        rows.append(single(EARLIER, "new_studies_earlier_runs", 1))
    rows.append(single("Reports of new included studies", "new_reports"))
    if counts.new_reports_earlier_runs:
        rows.append(single(EARLIER, "new_reports_earlier_runs", 1))
    rows += [single("Total studies included in review", "studies_included"),
             single("Reports of total included studies", "reports_included")]
    return [col.head for col in cols], rows


def summary(counts: PrismaCounts, labels: dict[str, str]) -> str:
    """The diagram in one paragraph: its accessible description."""
    def per_source(by_source: dict[str, int], arm: Literal["databases", "other"]) -> str:
        unreached = not_in_full(whole, arm, arm_runs(whole))
        return ", ".join(f"{label(s)} {n}" + (f" (not reached in full in run {', '.join(map(str, unreached[s]))})"
                                              if s in unreached else "") for s, n in by_source.items())

    whole, counts = counts, arm_flow(counts)  # the arms' numbers are the new searches', if updated
    reasons = "; ".join(f"{labels.get(c, c)}: {n}" for c, n in counts.excluded_by_reason.items()) or "none"
    text = "New searches: " if whole.new_searches is not None else ""
    text += (f"{counted(counts.identified_databases, 'record')} identified from databases "
            f"({per_source(counts.identified_by_source, 'databases') or 'none searched'}) and "
            f"{counts.identified_registers} from registers; {counted(counts.duplicates_removed, 'duplicate')} removed; "
            f"{counts.screened} screened, {counts.excluded_screening} excluded; {counted(counts.reports_sought, 'report')} "
            f"sought, {counts.reports_not_retrieved} not retrieved; {counts.reports_assessed} assessed, "
            f"{counts.excluded_full_text} excluded ({reasons}).")
    if counts.identified_other_by_source:
        other_reasons = "; ".join(f"{labels.get(c, c)}: {n}" for c, n in counts.other_excluded_by_reason.items())
        text += (f" Other methods: {counted(counts.identified_other_methods, 'record')} identified "
                 f"({per_source(counts.identified_other_by_source, 'other')}), "
                 f"{counted(counts.other_duplicates_removed, 'duplicate')} removed, {counts.other_screened} "
                 f"screened, {counts.other_excluded_screening} excluded; {counted(counts.other_reports_sought, 'report')} "
                 f"sought, {counts.other_reports_not_retrieved} not retrieved, {counts.other_reports_assessed} "
                 f"assessed, {counts.other_excluded_full_text} excluded ({other_reasons or 'none'}).")
    if whole.template == "updated":
        previous = counted(whole.previous_studies, "study", "studies") + previous_labels(whole)[2].removeprefix("studies")
        earlier = (f", and {whole.new_studies_earlier_runs} new identified before the previous version and included "
                   "since" if whole.new_studies_earlier_runs else "")
        text += (f" {counted(counts.studies_included, 'study', 'studies')} included from the new searches{earlier}. "
                 f"{previous} and {whole.new_studies} new: {counted(whole.studies_included, 'study', 'studies')} "
                 "included in total.")
    else:
        text += f" {counted(counts.studies_included, 'study', 'studies')} included."
    shown = [run for run in arm_runs(whole) if run.identified]
    if len(shown) > 1 or (shown and whole.new_searches is not None):  # an update says which runs are its searches
        text += (" By run of the new searches: " if whole.new_searches is not None else " By run: ") + "; ".join(f"run {run.run} ({utc_minute(run.at)}) identified {counted(run.identified, 'new record')}, "
                                        f"{run.records} after duplicates were removed, {run.studies_included} "
                                        "now included" for run in shown) + "."
    return _NOT_XML.sub(" ", text)


def render(counts: PrismaCounts, labels: dict[str, str], *, standalone: bool = False) -> Markup:
    diagram = layout(counts, labels)
    svg = environment().get_template("prisma.svg").render(d=diagram, standalone=standalone)
    return Markup(svg)
