"""The home page's charts: what they draw is what the ledger and the decisions say, escaped, and legible
whatever the number of runs or years."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from collections import Counter
from types import SimpleNamespace

import pytest
from conftest import EXAMPLE
from lxml import etree
from lxml import html as lxml_html

from sitegen.living.facts import ReviewFacts, Run
from sitegen.review.folder import load_review
from sitegen.review.models import ImportPayload
from sitegen.site.charts import (
    CHAR,
    NARROWEST,
    Bar,
    Chart,
    Series,
    identified_per_run,
    included_per_year,
    layout,
    nice_ticks,
    render,
    runs_chart,
    years_chart,
)

SVG = ""  # inline in HTML, the SVG needs no namespace of its own


@pytest.fixture(scope="module")
def example():
    review, problems = load_review(EXAMPLE)
    assert not problems
    return review, ReviewFacts(review)


def drawn(svg: str) -> dict[str, dict[str, int]]:
    """Bar label -> series -> the value its rectangle says it draws."""
    tree = etree.fromstring(svg.encode())
    bars = {}
    for group in tree.iter(f"{SVG}g"):
        if group.get("class") == "chart-bar":
            bars[group.get("data-label")] = {rect.get("data-series"): int(rect.get("data-value"))
                                             for rect in group.iter(f"{SVG}rect")}
    return bars


def test_each_run_splits_into_new_and_already_seen_records(example):
    review, facts = example
    identified = identified_per_run(review, facts.runs)
    assert [(item.new, item.seen) for item in identified] == [(260, 0), (11, 260)]
    first_seen: set[str] = set()
    for item in identified:
        returned = {rid for strategy in item.run.strategies for rid in strategy.record_ids}
        assert item.new == len(returned - first_seen) and item.seen == len(returned & first_seen)
        assert item.new == len(item.run.batch.record_ids)  # one saved search: its new records are its batch
        first_seen |= returned
    assert sum(item.new for item in identified) == len(review.records) == facts.prisma.records


def test_a_record_its_batch_matched_to_a_held_record_is_not_new_in_the_chart(example):
    # The run report, the batch page and the home page say such a run found no new record: so does the chart.
    review, facts = example
    last = facts.runs[-1]
    matched = last.batch.record_ids[:3]
    runs = [*facts.runs[:-1], dataclasses.replace(last, batch=last.batch.model_copy(update={"matched": matched}))]
    before, after = identified_per_run(review, facts.runs)[-1], identified_per_run(review, runs)[-1]
    assert (after.new, after.seen) == (before.new - 3, before.seen + 3)
    assert runs_chart(review, runs).summary.endswith(f"{after.new + after.seen}, {after.new} of them new.")


def test_a_record_its_batch_matched_to_another_new_record_of_the_run_is_a_duplicate_of_the_run(example):
    # The run found one work twice: the second record is matched to the first, which is new to the review. It is a
    # duplicate removed in that run (as PRISMA counts it), not a record an earlier run had seen.
    review, facts = example
    last = facts.runs[-1]
    first, *matched = last.batch.record_ids[:4]
    runs = [*facts.runs[:-1], dataclasses.replace(last, batch=last.batch.model_copy(update={"matched": matched}))]
    before = identified_per_run(review, facts.runs)[-1]
    after = identified_per_run(review, runs, {record_id: first for record_id in matched})[-1]
    assert (after.new, after.duplicates, after.seen) == (before.new - 3, 3, before.seen)
    chart = runs_chart(review, runs, {record_id: first for record_id in matched})
    assert [series.name for series in chart.series] == ["Already seen", "Duplicates within the run", "New to the review"]
    assert chart.bars[-1].parts == (before.seen, 3, before.new - 3)
    assert chart.summary.endswith(f"{before.seen + before.new}, {before.new - 3} of them new, 3 duplicates of records "
                                  "new in it.")
    # Matched to a record held before the run, the same records are seen, as before.
    held = identified_per_run(review, runs, {record_id: facts.runs[0].batch.record_ids[0] for record_id in matched})[-1]
    assert (held.new, held.duplicates, held.seen) == (before.new - 3, 0, before.seen + 3)


def test_a_work_twice_in_one_imported_file_is_a_duplicate_of_the_import_as_its_report_and_prisma_say(sitegen, tmp_path):
    # A database export holds each work twice, once with its DOI and once without: the import matches each second
    # entry to the first, new to the (empty) review. Nothing was seen before: the chart says what the import said.
    records = list(load_review(EXAMPLE)[0].records.values())[:12]
    export = tmp_path / "embase.csv"
    with export.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["ID", "ENTRYTYPE", "author", "title", "year", "journal", "volume", "pages", "doi"])
        writer.writerows([f"{kind}{n}", "article", " and ".join(name.display() for name in record.author), record.title,
                          record.year or "", record.container_title or "", record.volume or "", record.page or "",
                          record.DOI if kind == "r" else ""]
                         for kind in "rs" for n, record in enumerate(records, start=1))
    folder = tmp_path / "review"
    sitegen("init", folder)
    sitegen("protocol", "lock", folder, "--at", "2023-01-01T00:00:00Z")
    code, out, err = sitegen("import", folder, export, "--at", "2023-02-01T00:00:00Z", "--source", "Embase", "--json")
    assert code == 0, err
    counts = json.loads(out)["files"][0]
    review, problems = load_review(folder)
    assert not problems
    facts = ReviewFacts(review)
    (item,) = identified_per_run(review, facts.runs, facts.canonicals)
    assert counts["duplicates_of_new"] > 0
    assert (item.new, item.duplicates, item.seen) == (counts["new"], counts["duplicates_of_new"], 0)
    assert item.new == facts.prisma.records
    assert item.duplicates <= facts.prisma.duplicates_removed
    chart = runs_chart(review, facts.runs, facts.canonicals)
    assert drawn(str(chart.svg))[chart.bars[0].label]["Already seen"] == 0


def test_included_studies_per_year_are_the_included_records(example):
    review, facts = example
    included = [review.records[rid] for rid in facts.included]
    counts, undated = included_per_year(included)
    assert sum(counts.values()) + undated == len(facts.included) == 38
    assert {year: n for year, n in counts.items() if n} == Counter(record.year for record in included)
    assert list(counts) == list(range(min(counts), max(counts) + 1))  # every year on the axis, zeros too


def test_the_numbers_drawn_are_the_derived_facts(example):
    review, facts = example
    runs = runs_chart(review, facts.runs)
    assert drawn(render(runs)) == {"2023-04-10": {"Already seen": 0, "New to the review": 260},
                                   "2023-04-17": {"Already seen": 260, "New to the review": 11}}
    included = [review.records[rid] for rid in facts.included]
    years = years_chart(included, len(included))
    counts, _ = included_per_year(included)
    assert drawn(render(years)) == {str(year): {"Included studies": n} for year, n in counts.items()}
    assert "38 studies included, published from" in years.summary


def test_the_home_page_shows_the_charts_and_their_tables(example_site, example):
    review, facts = example
    page = lxml_html.fromstring((example_site / "index.html").read_bytes())
    section = page.get_element_by_id("charts-heading").getparent()
    svgs = section.findall(".//svg")
    assert [svg.get("id") for svg in svgs] == ["chart-runs", "chart-years"]
    for svg in svgs:
        assert svg.get("role") == "img" and svg.find("title").text and svg.find("desc").text
        assert "viewbox" not in svg.attrib  # drawn at the page's own text size
    for table in section.findall(".//table"):
        chart = {"runs": runs_chart(review, facts.runs),
                 "years": years_chart([review.records[r] for r in facts.included], len(facts.included))}[table.get("data-chart")]
        rows = [[cell.text_content().strip() for cell in row] for row in table.findall("./tbody/tr")]
        several = len(chart.series) > 1
        assert rows == [[bar.label + (f" ({bar.note})" if bar.note else ""), *map(str, bar.parts),
                         *([str(bar.total)] if several else [])] for bar in chart.bars]


def test_an_incomplete_run_says_so(example):
    review, facts = example
    run = facts.runs[-1]
    broken = Run(run.monitor_id, run.at, [run.strategies[0].model_copy(update={"complete": False})], run.batch, run.line)
    chart = runs_chart(review, [*facts.runs[:-1], broken])
    assert chart.bars[-1].note.startswith("incomplete")
    assert "1 run was incomplete" in chart.summary
    assert "incomplete" in render(chart)


def test_the_summary_never_tells_what_an_incomplete_last_run_found_as_all_there_was(example):
    review, facts = example
    run = facts.runs[-1]
    broken = Run(run.monitor_id, run.at, [run.strategies[0].model_copy(update={"complete": False})], run.batch, run.line)
    summary = runs_chart(review, [*facts.runs[:-1], broken]).summary
    assert "of them new, though not every source answered it in full: records may be missing." in summary
    assert "though not every source" not in runs_chart(review, [broken, *facts.runs[1:]]).summary


HOSTILE = "<script>alert(1)</script> & \"quoted\" 'x' ]]>"


def test_hostile_text_is_escaped():
    chart = Chart("x", HOSTILE, HOSTILE, HOSTILE, (Series(HOSTILE, "chart-new"),), (Bar(HOSTILE, (3,), HOSTILE),))
    svg = str(render(chart))
    tree = etree.fromstring(svg.encode())  # still well-formed XML
    assert not list(tree.iter(f"{SVG}script")) and "<script>" not in svg
    texts = [node.text for node in tree.iter() if node.text and HOSTILE in node.text]
    assert len(texts) >= 4  # title, desc, legend, axis label: each shown as text
    assert tree.find(f"{SVG}g[@class='chart-bars']/{SVG}g").get("data-label") == HOSTILE


@pytest.mark.parametrize("count", [1, 2, 7, 12, 40, 300])
@pytest.mark.parametrize("label", ["2023-04-10", "2023-04-10 a-long-saved-search", "2021"])
def test_labels_never_overlap_on_a_phone(count, label):
    """However many runs or years, axis labels fit side by side in the chart's width on a 390 px phone."""
    bars = tuple(Bar(f"{label}{i}", (i, 1)) for i in range(count))
    chart = Chart("t", "t", "t", "t", (Series("a", "chart-seen"), Series("b", "chart-new")), bars)
    drawn_layout = layout(chart)
    extents = []
    for item in drawn_layout.axis:
        x, width = item.x / 100 * NARROWEST, len(item.text) * CHAR
        left = {"start": x, "middle": x - width / 2, "end": x - width}[item.anchor]
        extents.append((left, left + width))
    assert extents and extents[0][0] >= 0 and extents[-1][1] <= NARROWEST
    assert all(right <= following for (_, right), (following, _) in zip(extents, extents[1:], strict=False))
    first, last = drawn_layout.axis[0].text, drawn_layout.axis[-1].text
    assert bars[0].label.startswith(first.removesuffix("…")) and bars[-1].label.startswith(last.removesuffix("…"))
    for column in drawn_layout.columns:
        for rect in column.rects:
            assert 0 <= rect.x and rect.x + rect.width <= 100 and rect.y >= drawn_layout.plot_top
            assert rect.y + rect.height <= drawn_layout.plot_bottom
    assert render(chart) == render(chart)  # deterministic


@pytest.mark.parametrize("top", [0, 1, 3, 7, 10, 38, 271, 999, 12_345])
def test_gridlines_cover_the_tallest_bar(top):
    ticks = nice_ticks(top)
    assert ticks[0] == 0 and ticks[-1] >= top and len(ticks) <= 4
    step = ticks[1] - ticks[0]
    assert re.fullmatch(r"[125]0*", str(step))


def test_a_review_without_runs_or_included_studies_has_no_charts(example):
    review, _ = example
    assert runs_chart(review, []) is None and years_chart([], 0) is None


def test_a_record_seen_by_an_import_is_not_new_to_a_later_run(example):
    review, facts = example
    first, second = facts.runs
    earlier = sorted({rid for strategy in first.strategies for rid in strategy.record_ids})
    imported = ImportPayload(source="openalex", description="a collection", record_ids=earlier)
    ledger = SimpleNamespace(ledger_lines=[1], payloads=[imported], ledger=[SimpleNamespace(ts=first.at)])
    # The import, before the run, is a bar of its own: PRISMA counts its records as identified, as the home
    # page's count of records does.
    assert [(i.new, i.seen) for i in identified_per_run(ledger, [second])] == [(260, 0), (11, 260)]
    assert [(i.new, i.seen) for i in identified_per_run(ledger, [])] == [(260, 0)]
    chart = runs_chart(ledger, [second])
    assert chart.title == "Records identified per search run and import"
    assert [bar.label for bar in chart.bars] == [f"{first.at[:10]} import (openalex)", second.at[:10]]
    assert chart.summary.startswith("1 search run and 1 import from") and " identified 271 records new" in chart.summary


def test_the_runs_summary_spans_days_and_counts_runs_and_imports_apart(example):
    """A bar's label names its import ('2023-04-10 import (openalex)'); the summary's span is of days, and a
    run is not called an import nor an import a run."""
    review, facts = example
    first, second = facts.runs
    earlier = sorted({rid for strategy in first.strategies for rid in strategy.record_ids})
    imported = ImportPayload(source="openalex", description="a collection", record_ids=earlier)
    after = SimpleNamespace(ledger_lines=[10**9], payloads=[imported], ledger=[SimpleNamespace(ts="2023-04-20T00:00:00Z")])
    summary = runs_chart(after, facts.runs).summary
    assert summary.startswith("2 search runs and 1 import from 2023-04-10 to 2023-04-20 identified ")
    assert runs_chart(after, []).summary.startswith("One import, on 2023-04-20, identified ")


def test_the_legend_wraps_to_fit_a_phone():
    """Three series (a run with duplicates of its own) are more than fit one row on a 390 px phone: none is cut."""
    series = (Series("Already seen", "chart-seen"), Series("Duplicates within the run", "chart-duplicate"),
              Series("New to the review", "chart-new"))
    drawn_layout = layout(Chart("t", "t", "t", "t", series, (Bar("2023-04-10", (1, 2, 3)),)))
    assert all(x + 16 + len(item.name) * CHAR <= NARROWEST for x, _, item in drawn_layout.legend)
    rows = sorted({y for _, y, _ in drawn_layout.legend})
    assert len(rows) == 2 and drawn_layout.plot_top >= rows[-1] + 22  # the bars' values start below the last row
