"""Charts for the home page as inline SVG: records identified per search run, included studies per year.

The numbers are derived here from the loaded review (never stored); the layout is
computed here too, and `templates/chart.svg` only draws it. Each chart carries its
data as `bars`, which the page also shows as a table, so a screen reader or a
browser without SVG gets the same numbers as the picture.

The SVG has no viewBox: its width is the page's (bar positions are percentages)
and its text is drawn at CSS pixel size, so a phone shows the same legible text
as a desktop and never scrolls sideways. Labels on the time axis are thinned to
as many as fit a 390 px phone, whatever the number of runs or years. Colours are
classes the style sheet sets (with `currentColor` fallbacks), so they follow dark mode.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

from markupsafe import Markup

from sitegen.living.facts import Run
from sitegen.records.model import Record
from sitegen.review.folder import Review
from sitegen.review.models import ImportPayload, utc_day
from sitegen.site.templates import environment, studies_phrase
from sitegen.text import counted

if TYPE_CHECKING:  # pages.py shows these charts on the home page, so it cannot be imported from here at run time
    from sitegen.site.pages import Site

FONT = 12  # px, as drawn on every screen
CHAR = 7.2  # a generous average glyph width at FONT px
NARROWEST = 330  # px: the chart's width on a 390 px phone, inside the page's margins
GUTTER = 14  # percent of the width kept left of the plot for the value axis
LEGEND_H, VALUES_H, PLOT_H, AXIS_H = 22, 18, 160, 22
MAX_TICKS = 4  # value gridlines, zero included
BAR_LABELS = 12  # up to this many bars, each shows its total above it
GAP = 12  # px between two axis labels


@dataclass(frozen=True)
class Series:
    name: str
    css: str  # class of its bars, which the style sheet colours


@dataclass(frozen=True)
class Bar:
    label: str  # on the time axis: a run's date, or a year
    parts: tuple[int, ...]  # one value per series, stacked from the axis up
    note: str = ""  # said with the label in the table and the bar's tooltip, e.g. "incomplete"

    @property
    def total(self) -> int:
        return sum(self.parts)


@dataclass(frozen=True)
class Chart:
    slug: str
    title: str
    summary: str  # the chart in one or two sentences: its description for screen readers
    axis: str  # what the bars are: the table's first column
    series: tuple[Series, ...]
    bars: tuple[Bar, ...]

    @property
    def svg(self) -> Markup:
        return render(self)


# --------------------------------------------------------------------------- the data


@dataclass(frozen=True)
class RunIdentification:
    at: str
    run: Run | None  # None: an import of records (`imported` names its source), which PRISMA counts as identified too
    new: int  # records no earlier run or import had identified, less those matched to a record the review held
    seen: int  # records returned again, or matched by metadata to a record the review held (not new to screen)
    imported: str = ""
    # Records matched by metadata to a record new in the same run or import (a work a file holds twice): neither
    # new nor seen before, but a duplicate of that run, which PRISMA removes there and the import report names so.
    duplicates: int = 0


def identified_per_run(review: Review, runs: list[Run],
                       canonical: Mapping[str, str] | None = None) -> list[RunIdentification]:
    """For each run and each import, in the ledger's order, the distinct records it identified, split into new
    to the review, duplicates of records new in the same run, and already seen.

    A record counts as seen once any earlier run or import named it, whichever saved search ran; one the
    run's batch matched to a record the review held is no new record either (the run report, the batch
    and its manifest say so too), nor is one an import matched so (its file's counts say so). A record matched
    to one the review did not hold before the run (`canonical`, duplicates.csv's confirmed duplicates: the
    record the match named) is a duplicate within the run, as PRISMA and the import report count it.
    """
    canonical = canonical or {}
    imports = [(line, event.ts, payload) for line, event, payload
               in zip(review.ledger_lines, review.ledger, review.payloads, strict=True)
               if isinstance(payload, ImportPayload)]
    events = sorted([(run.line or 0, run.at, run) for run in runs] + imports, key=lambda item: item[0])
    seen: set[str] = set()
    result = []
    for _, at, event in events:
        if isinstance(event, Run):
            returned = set(chain.from_iterable(strategy.record_ids for strategy in event.strategies))  # in C, id by id
            unseen = returned - seen
            matched = unseen & set(event.batch.matched if event.batch else ())
            within = _within(matched, seen, canonical, len(matched))
            new = len(unseen - matched)
            result.append(RunIdentification(at, event, new, len(returned) - new - within, duplicates=within))
        else:  # as the import counted them, where it did (a record it matched to one held is not new either)
            returned = set(event.record_ids)
            unseen = returned - seen
            new = event.file.new if event.file else len(unseen)
            # The import kept counts, not which records it matched: at most those it did not count new are duplicates.
            within = _within(unseen, seen, canonical, len(unseen) - new)
            result.append(RunIdentification(at, None, new, len(returned) - new - within, event.source, within))
        seen |= returned
    return result


def _within(candidates: set[str], seen: set[str], canonical: Mapping[str, str], most: int) -> int:
    """How many of `candidates` (records a run returned that no earlier one had) duplicate a record no earlier run
    had either, so one new in the same run: at most `most`, those the run did not count as new."""
    return min(most, sum(1 for record_id in candidates
                         if record_id in canonical and canonical[record_id] not in seen))


def included_per_year(records: list[Record]) -> tuple[dict[int, int], int]:
    """Included studies per publication year, every year from the first to the last (zeros too), and
    how many have no year."""
    years = [record.year for record in records if record.year is not None]
    counts = {year: 0 for year in range(min(years), max(years) + 1)} if years else {}
    for year in years:
        counts[year] += 1
    return counts, len(records) - len(years)


def runs_chart(review: Review, runs: list[Run], canonical: Mapping[str, str] | None = None) -> Chart | None:
    identified = identified_per_run(review, runs, canonical)
    if not any(item.seen + item.duplicates + item.new for item in identified):
        return None  # no bar to draw: an axis of zeros would pass for data (the searches section says what was found)
    several = len({item.run.monitor_id for item in identified if item.run}) > 1
    # Duplicates within a run are a series of their own only where some run had one: a legend entry for zeros
    # would claim a kind of record no run identified.
    within = any(item.duplicates for item in identified)
    bars = tuple(Bar(utc_day(item.at) + (f" import ({item.imported})" if item.run is None else
                                         f" {item.run.monitor_id}" if several else ""),
                     (item.seen, item.duplicates, item.new) if within else (item.seen, item.new),
                     "" if item.run is None or item.run.complete else "incomplete: some records may be missing")
                 for item in identified)
    new = sum(item.new for item in identified)
    incomplete = sum(1 for item in identified if item.run and not item.run.complete)
    # A bar's label may name its import or saved search after the day: the summary's span is of days alone.
    first, last = utc_day(identified[0].at), utc_day(identified[-1].at)
    imports = sum(1 for item in identified if item.run is None)
    searches = len(identified) - imports
    tallies = [f"{n} {noun}{'' if n == 1 else 's'}" for n, noun in ((searches, "search run"), (imports, "import")) if n]
    runs_text = f"{' and '.join(tallies)} from {first} to {last}" if len(bars) > 1 else \
        f"One {'search run' if identified[0].run else 'import'}, on {first},"
    latest = identified[-1]
    repeated = f", {counted(latest.duplicates, 'duplicate')} of records new in it" if latest.duplicates else ""
    # What the latest run found is never told as all there was when a source did not answer it in full.
    unanswered = ", though not every source answered it in full: records may be missing" \
        if latest.run and not latest.run.complete else ""
    summary = (f"{runs_text} identified {counted(new, 'record')} new to the review; the last "
               f"{'run' if latest.run else 'import'} identified {bars[-1].total}, {latest.new} of them new{repeated}"
               f"{unanswered}."
               + (f" {incomplete} run{'s were' if incomplete != 1 else ' was'} incomplete." if incomplete else ""))
    title = "Records identified per search run and import" if imports else "Records identified per search run"
    return Chart("runs", title, summary, "Run or import" if imports else "Run",
                 (Series("Already seen", "chart-seen"),
                  *([Series("Duplicates within the run", "chart-duplicate")] if within else []),
                  Series("New to the review", "chart-new")), bars)


def years_chart(included: list[Record], studies: int) -> Chart | None:
    """Included reports per publication year (a study's preprint and journal article are drawn in their years),
    `studies` of them."""
    counts, undated = included_per_year(included)
    if not counts:
        return None
    bars = tuple(Bar(str(year), (n,)) for year, n in counts.items())
    first, last = min(counts), max(counts)
    peak = max(counts.values())
    summary = (f"{studies_phrase(len(included), studies)} included, published from {first} to {last}; at most {peak} "
               "in one year "
               f"({', '.join(str(year) for year, n in counts.items() if n == peak)})."
               + (f" {undated} {'has' if undated == 1 else 'have'} no publication year and "
                  f"{'is' if undated == 1 else 'are'} not drawn." if undated else ""))
    return Chart("years", "Included studies per publication year", summary, "Year",
                 (Series("Included studies", "chart-included"),), bars)


def home_charts(site: Site) -> list[Chart]:
    # The included records looked up by id, not found among every record (100,000 at review scale): the chart
    # counts them by year, whatever their order.
    records = site.review.records
    charts = [runs_chart(site.review, site.facts.runs, site.facts.canonicals),
              years_chart([records[record_id] for record_id in dict.fromkeys(site.facts.included) if record_id in records],
                          site.facts.prisma.studies_included)]
    return [chart for chart in charts if chart]


# --------------------------------------------------------------------------- the layout


@dataclass(frozen=True)
class Rect:
    x: float  # percent of the width
    width: float  # percent
    y: int
    height: int
    css: str
    series: str
    value: int


@dataclass(frozen=True)
class Label:
    x: float  # percent
    y: int
    text: str
    anchor: str


@dataclass(frozen=True)
class Column:
    bar: Bar
    rects: tuple[Rect, ...]
    tooltip: str


@dataclass(frozen=True)
class Layout:
    chart: Chart
    height: int
    plot_top: int
    plot_bottom: int
    gutter: float
    legend: tuple[tuple[int, int, Series], ...]  # (x in px, y of its row in px, series)
    ticks: tuple[tuple[int, int], ...]  # (value, y)
    columns: tuple[Column, ...]
    values: tuple[Label, ...]  # totals above the bars
    axis: tuple[Label, ...]  # labels under the bars


def nice_ticks(top: int) -> list[int]:
    """Gridline values from 0: at most MAX_TICKS, a step of 1, 2 or 5 times a power of ten, the last >= top."""
    if top <= 0:
        return [0, 1]
    for power in range(0, 12):
        for unit in (1, 2, 5):
            step = unit * 10 ** power
            if math.ceil(top / step) < MAX_TICKS:
                return [step * i for i in range(math.ceil(top / step) + 1)]
    raise ValueError(f"{top} is too large to chart")


def axis_labels(bars: tuple[Bar, ...], slot: float) -> tuple[Label, ...]:
    """Labels for as many bars as fit side by side on the narrowest screen, first and last always.

    A label too long for two to fit is shortened with an ellipsis; the table has it whole.
    """
    plot_px = NARROWEST * (100 - GUTTER) / 100
    longest = int((plot_px / 2 - GAP) // CHAR)
    texts = [bar.label if len(bar.label) <= longest else bar.label[:longest - 1] + "…" for bar in bars]
    width = max(len(text) for text in texts) * CHAR + GAP  # px a label needs, with a gap
    room = max(2, int(plot_px // width))
    if len(bars) <= room:
        chosen = list(range(len(bars)))
    else:
        chosen = sorted({round(i * (len(bars) - 1) / (room - 1)) for i in range(room)})
    # A label wider than its bar's slot is anchored at the plot's edges so it is never cut off.
    fits = slot / 100 * NARROWEST >= width
    labels = []
    for index in chosen:
        anchor = "middle" if fits or index not in (0, len(bars) - 1) else "start" if index == 0 else "end"
        x = GUTTER + slot * (index + (0.5 if anchor == "middle" else 0 if anchor == "start" else 1))
        labels.append(Label(round(x, 3), 0, texts[index], anchor))
    return tuple(labels)


def layout(chart: Chart) -> Layout:
    bars = chart.bars
    ticks = nice_ticks(max(bar.total for bar in bars))
    legend = legend_rows(chart.series)
    top = LEGEND_H * (1 + max(y for _, y, _ in legend) // LEGEND_H) + VALUES_H
    bottom = top + PLOT_H
    scale = PLOT_H / ticks[-1]
    slot = (100 - GUTTER) / len(bars)
    columns, values = [], []
    for index, bar in enumerate(bars):
        x = round(GUTTER + slot * (index + 0.15), 3)
        base, rects = bottom, []
        for series, value in zip(chart.series, bar.parts, strict=True):
            height = round(value * scale)
            rects.append(Rect(x, round(slot * 0.7, 3), base - height, height, series.css, series.name, value))
            base -= height
        parts = ", ".join(f"{value} {series.name.lower()}" for series, value in zip(chart.series, bar.parts,
                                                                                      strict=True))
        tooltip = f"{bar.label}: {bar.total}" + (f" ({parts})" if len(bar.parts) > 1 else "") + \
            (f"; {bar.note}" if bar.note else "")
        columns.append(Column(bar, tuple(rects), tooltip))
        if len(bars) <= BAR_LABELS:
            values.append(Label(round(GUTTER + slot * (index + 0.5), 3), base - 4, str(bar.total), "middle"))
    axis = tuple(Label(label.x, bottom + 16, label.text, label.anchor) for label in axis_labels(bars, slot))
    return Layout(chart, bottom + AXIS_H, top, bottom, GUTTER, legend,
                  tuple((value, round(bottom - value * scale)) for value in ticks), tuple(columns), tuple(values), axis)


def legend_rows(series: tuple[Series, ...]) -> tuple[tuple[int, int, Series], ...]:
    """Each series' legend entry at (x, y) px: side by side while they fit the narrowest screen, then on a row
    below, so a phone shows every entry whole."""
    placed, x, y = [], 0, 0
    for item in series:
        width = 16 + round(len(item.name) * CHAR)  # the swatch, its gap, the name
        if x and x + width > NARROWEST:
            x, y = 0, y + LEGEND_H
        placed.append((x, y, item))
        x += width + 16
    return tuple(placed)


def render(chart: Chart) -> Markup:
    return Markup(environment().get_template("chart.svg").render(d=layout(chart), font=FONT))
