"""The screening page and the home page's headline say what the decision files say: every outcome has
its place in the batch table, the home figures are the records list's filter counts, and the text says
how many reviewers each stage takes, as review.yaml sets it."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from markupsafe import Markup

from sitegen.commands import build
from sitegen.living.duplicates import matched_within
from sitegen.screening.outcomes import Outcome
from sitegen.site import pages
from sitegen.site.output import Page
from sitegen.site.record_page import ranked_row
from sitegen.site.records import STANDING_LABELS
from sitegen.workspace import open_review
from tests.conftest import EXAMPLE

OUTCOMES = ("include", "exclude", "maybe", "conflicts", "pending")


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["record_id", "decision", "reason", "note"])
        writer.writeheader()
        writer.writerows(rows)


def set_reviewers(review: Path, title_abstract: int, full_text: int) -> None:
    path = review / "review.yaml"
    config = yaml.safe_load(path.read_text())
    config["screening"] = {"title_abstract_reviewers": title_abstract, "full_text_reviewers": full_text}
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def first_batch(review: Path) -> set[str]:
    events = [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]
    return set(next(e["payload"]["record_ids"] for e in events if e["type"] == "screening"))


def with_every_outcome(review: Path) -> Path:
    """The example with maybes and conflicts at both stages, and records awaiting a decision at both."""
    set_reviewers(review, 2, 2)
    ta = review / "screening" / "title-abstract"
    a, b = read_rows(ta / "reviewer-a.csv"), read_rows(ta / "reviewer-b.csv")
    settled = {row["record_id"] for row in read_rows(ta / "adjudication.csv")}
    batch = first_batch(review)
    b_by_id = {row["record_id"]: row for row in b}
    agreed_out = [row for row in a if row["record_id"] in batch and row["record_id"] not in settled
                  and row["decision"] == "exclude" and b_by_id[row["record_id"]]["decision"] == "exclude"]
    for row in agreed_out[:3]:  # both reviewers say maybe: maybe at title/abstract, so on to full text
        row["decision"] = b_by_id[row["record_id"]]["decision"] = "maybe"
    write_rows(ta / "reviewer-a.csv", a)
    write_rows(ta / "reviewer-b.csv", b)
    ft = review / "screening" / "full-text"
    first = read_rows(ft / "reviewer-a.csv")
    reason = re.search(r"- code: (\S+)", (review / "protocol.md").read_text()).group(1)
    second = []
    for n, row in enumerate(first[:7]):
        decision = ["include", "include", "exclude", "exclude", "maybe", "maybe", "maybe"][n]
        if n in (4, 5):
            row["decision"] = "maybe"  # both maybe: a maybe at full text; n == 6 is a conflict
        second.append({"record_id": row["record_id"], "decision": decision,
                       "reason": reason if decision == "exclude" else "", "note": ""})
    write_rows(ft / "reviewer-a.csv", first)
    write_rows(ft / "reviewer-b.csv", second)  # the other 31 await reviewer-b: pending
    return review


def tallies(html: str) -> list[dict[str, dict]]:
    """Per batch row of the screening page: per stage, the records it counts and each outcome's figure."""
    table = html[html.index('<table class="batches'):]
    table = table[:table.index("</table>")]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
        cells = {}
        for stage, records, body in re.findall(r'data-stage="([^"]+)" data-records="(\d+)">(.*?)</td>', row, re.S):
            figures = dict(re.findall(r'data-outcome="([^"]+)">(\d+)\b', body))
            cells[stage] = {"records": int(records), **{k: int(v) for k, v in figures.items()}}
        size = int(re.search(r'data-label="Records"><a [^>]*>(\d+)</a>', row).group(1))
        rows.append({"size": size, **cells})
    return rows


def test_batch_table_accounts_for_every_record(example_copy, tmp_path):
    review = with_every_outcome(example_copy)
    out = tmp_path / "site"
    build(review, out, environ={})
    rows = tallies((out / "screening.html").read_text())
    assert rows
    seen = Counter()
    for row in rows:
        ta, ft = row["title-abstract"], row["full-text"]
        assert ta["records"] == row["size"]
        if ft["records"]:
            assert set(OUTCOMES) <= set(ta) and set(OUTCOMES) <= set(ft)
        assert sum(ta[k] for k in OUTCOMES) == row["size"]  # every record of the batch, once
        # the records that reach full text are those included or marked maybe at title and abstract
        assert ft["records"] == ta["include"] + ta["maybe"]
        assert sum(ft.get(k, 0) for k in (*OUTCOMES, "not_retrieved")) == ft["records"]
        for stage in ("title-abstract", "full-text"):
            seen.update({(stage, k) for k in ("maybe", "conflicts", "pending") if row[stage].get(k)})
    # the review exercises what the table used to leave out
    assert {("title-abstract", "maybe"), ("title-abstract", "conflicts"), ("full-text", "maybe"),
            ("full-text", "conflicts"), ("full-text", "pending")} <= set(seen)


def headline(html: str) -> dict[str, int]:
    dl = html[html.index('<dl class="headline">'):]
    dl = dl[:dl.index("</dl>")]
    return {dt: int(re.sub(r"<[^>]+>", "", dd)) for dt, dd in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", dl)}


def filter_count(site: Path, label: str) -> int:
    """The count the records list shows next to a filter of that name."""
    html = (site / "records.html").read_text()
    nav = html[html.index('aria-label="Filter records"'):]
    found = re.search(r">" + re.escape(label) + r'</(?:a|span)> <span class="count">\((\d+)\)</span>', nav)
    assert found, label
    return int(found.group(1))


@pytest.mark.parametrize("variant", ["example", "every-outcome"])
def test_home_headline_matches_the_records_filters(example_copy, tmp_path, variant):
    review = example_copy if variant == "example" else with_every_outcome(example_copy)
    out = tmp_path / "site"
    build(review, out, environ={})
    figures = headline((out / "index.html").read_text())
    for kind in ("awaiting", "conflict"):
        label = STANDING_LABELS[kind]
        assert figures[label] == filter_count(out, label)
    assert figures[STANDING_LABELS["conflict"]] >= 1  # conflicts are counted apart, never as awaiting


@pytest.mark.parametrize(("title_abstract", "full_text"), [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_screening_text_follows_the_reviewer_settings(example_copy, tmp_path, title_abstract, full_text):
    set_reviewers(example_copy, title_abstract, full_text)
    out = tmp_path / "site"
    build(example_copy, out, environ={})
    html = (out / "screening.html").read_text()
    text = " ".join(re.sub(r"<[^>]+>", "", html[html.index('<p class="screening-settings">'):]).split("</p>")[0].split())
    words = {1: "one reviewer", 2: "two reviewers"}
    assert f"At title and abstract, {words[title_abstract]} screen" in text
    assert f"at full text, {words[full_text]} assess" in text
    assert ("independently" in text.split(";")[0]) == (title_abstract > 1)
    assert ("independently" in text.split(";")[1]) == (full_text > 1)
    assert ("adjudicator" in text) == (max(title_abstract, full_text) > 1)
    assert "Two reviewers screen every record" not in html


def test_a_batch_page_is_written_in_parts_with_the_bytes_it_has_whole(monkeypatch):
    """A batch's table (20,000 rows at review scale) is written a few rows at a time, never held whole:
    the parts join to the page rendered whole, each row once, in rank order."""
    monkeypatch.setattr(pages, "ROWS_PER_PART", 3)
    workspace = open_review(EXAMPLE)
    site = pages.Site(workspace.review, workspace.facts, None)
    batch_pages = [page for page in pages.screening(site) if isinstance(page, Page) and page.path.startswith("batches/")]
    assert batch_pages
    for page in batch_pages:
        number = int(page.path.removeprefix("batches/").removesuffix(".html"))
        ranking = site.rankings[number]
        rows = [ranked_row(rank, scored, site.views_by_id[scored.id].slug, site.views_by_id[scored.id].record.title,
                           site.views_by_id[scored.id].title_abstract, site.reasons)
                for rank, scored in enumerate(ranking.decisions, start=1)]
        assert len(rows) > 2 * 3  # the example's batches each make several parts
        item = next(item for item in site.facts.screening_status[0] if item.batch.number == number)
        whole = site.page(page.path, "batch.html", batch=item.batch, duplicates=item.duplicates, calibration=ranking.calibration,
                          matched_within=0, thresholds_note="", rows_html=Markup("\n".join(rows)))
        parts = page.render()
        assert not isinstance(parts, str | bytes)
        parts = list(parts)
        assert len(parts) == 2 + -(-len(rows) // 3)  # the page around the table, and the rows 3 at a time
        assert "".join(parts) == whole
        assert all(whole.count(row) == 1 for row in rows)


def test_full_text_agreement_says_what_it_measures(example_copy, tmp_path):
    # Two exclusions for different reasons are a conflict at full text but agree on the decision kappa measures.
    build(with_every_outcome(example_copy), tmp_path / "site", environ={})
    html = (tmp_path / "site" / "screening.html").read_text()
    full_text = html[html.index("<h3>Full text</h3>"):html.index("<h2>Batches</h2>")]
    assert "Agreement here is on the decision (include, exclude or maybe)" in full_text
    assert "Two exclusions for different reasons agree on it, yet are a conflict for the adjudicator" in full_text


def test_agreement_at_a_stage_no_reviewer_has_screened_says_so(example_copy, tmp_path):
    # It said "Only one reviewer has screened at this stage so far" when none had.
    set_reviewers(example_copy, 2, 2)
    for path in (example_copy / "screening" / "full-text").glob("*.csv"):
        path.unlink()
    build(example_copy, tmp_path / "site", environ={})
    html = (tmp_path / "site" / "screening.html").read_text()
    full_text = html[html.index("<h3>Full text</h3>"):html.index("<h2>Batches</h2>")]
    assert "No reviewer has screened at this stage yet." in full_text and "Only one reviewer" not in full_text


def test_a_batch_page_tells_records_matched_within_the_run_from_those_matched_to_held_records():
    """A batch's record matched to another record of the same batch (the run found the work twice) is no record the
    review already held: the page says which is which."""
    workspace = open_review(EXAMPLE)
    site = pages.Site(workspace.review, workspace.facts, None)
    item = next(item for item in site.facts.screening_status[0] if item.batch.number)
    first, twice, held = item.batch.record_ids[:3]
    batch = item.batch.model_copy(update={"matched": [twice, held]})
    elsewhere = next(rid for rid in site.review.records if rid not in item.batch.record_ids)
    within = len(matched_within(batch.record_ids, batch.matched, {twice: first, held: elsewhere}))
    assert within == 1
    html = site.page("batches/1.html", "batch.html", batch=batch, duplicates=0,
                     calibration=site.rankings[item.batch.number].calibration,
                     matched_within=within, thresholds_note="", rows_html=Markup(""))
    text = " ".join(re.sub(r"<[^>]+>", "", html).split())
    assert "1 of them sitegen matched to a record the review already held; 1 of them sitegen matched to another " \
           "record of this batch (the run found that work twice)" in text


def test_the_agreement_column_says_which_agreement_it_is(tmp_path):
    # A Fleiss row showed the share of records all reviewers decided alike under the same "Agreement" as Cohen's
    # p_o: the column is the observed agreement kappa corrects (P-bar for Fleiss), and the page says so.
    build(EXAMPLE, tmp_path / "site", environ={})
    html = (tmp_path / "site" / "screening.html").read_text()
    assert '<th scope="col">Observed agreement</th>' in html and '<th scope="col">Agreement</th>' not in html
    assert "Observed agreement is the agreement kappa corrects for chance" in html


def test_rotating_reviewers_get_fleiss_kappa(example_copy, tmp_path):
    # Reviewer c screens every other record in b's place: each record is decided by two of three reviewers, none
    # by all three. There was no Fleiss' kappa at all ("no record was decided by every reviewer"); Fleiss (1971)
    # asks the same number of decisions on each record, not the same reviewers.
    ta = example_copy / "screening" / "title-abstract"
    b = read_rows(ta / "reviewer-b.csv")
    write_rows(ta / "reviewer-b.csv", b[::2])
    write_rows(ta / "reviewer-c.csv", b[1::2])
    build(example_copy, tmp_path / "site", environ={})
    html = (tmp_path / "site" / "screening.html").read_text()
    title_abstract = html[html.index("<h3>Title and abstract</h3>"):html.index("<h3>Full text</h3>")]
    fleiss_row = title_abstract[title_abstract.index("reviewer-a × reviewer-b × reviewer-c"):]
    fleiss_row = fleiss_row[:fleiss_row.index("</tr>")]
    assert "each record decided by 2 of the 3 reviewers" in fleiss_row and "(Fleiss)" in fleiss_row
    assert "not defined" not in fleiss_row


def batch_keys(site: pages.Site) -> dict[str, str | None]:
    return {page.path: page.key for page in pages.screening(site) if isinstance(page, Page) and page.path.startswith("batches/")}


@pytest.mark.parametrize("change", ["title", "slug", "title-abstract", "score", "full-text"])
def test_a_batch_page_gets_a_new_key_exactly_when_a_row_of_it_changes(change):
    """A batch page's key holds its records' rows (`RankedRecords`, a list a column): a record's title, page name,
    title-and-abstract outcome and score are on its row, and change its batch's key alone; its full-text outcome
    is not, and changes no key."""
    workspace = open_review(EXAMPLE)

    def site_with(changed=None) -> pages.Site:
        site = pages.Site(workspace.review, workspace.facts, None)
        if changed:
            changed(site)
        return site

    before = batch_keys(site_with())
    assert batch_keys(site_with()) == before  # the same review, the same keys
    number, ranking = next((number, ranking) for number, ranking in site_with().rankings.items() if ranking.decisions)
    record_id = ranking.decisions[-1].id

    def changed(site: pages.Site) -> None:
        view = site.views_by_id[record_id]
        if change == "score":
            rescored = ranking.model_copy(deep=True)
            rescored.decisions[-1].score += 1
            site.rankings[number] = rescored
            return
        site.views_by_id[record_id] = (
            dataclasses.replace(view, record=view.record.model_copy(update={"title": view.record.title + " (revised)"}))
            if change == "title" else dataclasses.replace(view, slug=view.slug + "-2") if change == "slug"
            else dataclasses.replace(view, title_abstract=Outcome("exclude" if view.title_abstract is None or
                                                                  view.title_abstract.decision != "exclude" else "include",
                                                                  "", ("a",)))
            if change == "title-abstract" else dataclasses.replace(view, full_text=Outcome("include", "", ("a",))))

    after = batch_keys(site_with(changed))
    assert {path for path in before if before[path] != after[path]} == (
        set() if change == "full-text" else {pages.batch_page(number)})
