"""The records lists and record pages, on the real example review: lists partition the records, filters
hold what the decision files say, pages link up, screening stays blind where it must, markup stays text."""

from __future__ import annotations

import math
import re
from pathlib import Path
from urllib.parse import unquote, urljoin

import pytest
from conftest import EXAMPLE
from lxml import html as lxml_html
from test_build import XSS, hostile_review

from sitegen.review.models import BatchPayload, ImportPayload, RetrievalPayload
from sitegen.screening.digest import rank_batch
from sitegen.screening.standing import STANDINGS
from sitegen.site.pages import Site, page_slug
from sitegen.site.records import NEAR_PAGES, PAGE_SIZE, page_window, record_pages, title_key
from sitegen.workspace import open_review
from tests.conftest import rendered


@pytest.fixture(scope="module")
def example():
    return open_review(EXAMPLE)


def build_records(review: Path, out: Path) -> Path:
    """Only the records pages of a review's site, as the build renders them: quicker than a whole build."""
    workspace = open_review(review)
    for path, content in rendered(record_pages(Site(workspace.review, workspace.facts, None))).items():
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())  # a list page is UTF-8 already
    return out


def one_spaced(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def tree(path: Path):
    return lxml_html.fromstring(path.read_bytes())


def list_pages(site: Path, key: str) -> list[Path]:
    """The pages of one list, in page order (the whole list starts at records.html)."""
    folder = site / "records" / "list" / key
    pages = sorted(folder.glob("*.html"), key=lambda page: int(page.stem)) if folder.is_dir() else []
    return [site / "records.html", *pages] if key == "all" else pages


def rows(page: Path) -> list:
    return tree(page).findall(".//table[@data-quick-filter]/tbody/tr")


def row_slug(row) -> str:
    """The record page a row links to, by its slug."""
    href = row.find("td").find("a").get("href")
    return re.fullmatch(r"(?:\.\./)*records/(.+)\.html", href).group(1)


def listed(site: Path, key: str) -> list[str]:
    return [row_slug(row) for page in list_pages(site, key) for row in rows(page)]


def slugs(record_ids) -> set[str]:
    return {page_slug(record_id) for record_id in record_ids}


def expected_filters(example) -> dict[str, set[str]]:
    """Each decision filter's records, derived here from the outcomes per stage, not from the site's code."""
    outcomes = example.facts.outcomes
    title_abstract, full_text = outcomes["title-abstract"], outcomes["full-text"]
    wanted = {
        "included": {i for i, o in full_text.items() if o.decision == "include"},
        "excluded-title-abstract": {i for i, o in title_abstract.items() if o.decision == "exclude"},
        "excluded-full-text": {i for i, o in full_text.items() if o.decision == "exclude" and o.reason != "not-retrieved"},
        "not-retrieved": {i for i, o in full_text.items() if o.decision == "exclude" and o.reason == "not-retrieved"},
        "conflict": {i for stage in outcomes.values() for i, o in stage.items() if o.decision == "conflict"},
        "duplicate": set(example.facts.duplicates),  # confirmed in duplicates.csv: none in the example
    }
    wanted["awaiting"] = set(example.review.records) - set().union(*wanted.values())
    return wanted


def filter_counts(page: Path) -> dict[str, int]:
    """What the filter navigation says: link or name -> the count beside it."""
    found = {}
    for item in tree(page).findall(".//nav[@class='record-filters']//li"):
        name = item.find("a") if item.find("a") is not None else item.find("span")
        count = item.find("span[@class='count']")
        found[one_spaced(name.text_content())] = int(count.text.strip("()"))
    return found


# --------------------------------------------------------------------------- the lists


def test_the_whole_list_holds_every_record_once_in_pages_of_bounded_size(example, example_site):
    pages = list_pages(example_site, "all")
    assert len(pages) == math.ceil(len(example.review.records) / PAGE_SIZE) > 1  # the example needs two pages
    assert not (example_site / "records" / "list" / "all" / "1.html").exists()  # page 1 is records.html
    everyone = listed(example_site, "all")
    assert len(everyone) == len(set(everyone)) == len(example.review.records)
    assert set(everyone) == slugs(example.review.records)
    sizes = [len(rows(page)) for page in pages]
    assert all(size == PAGE_SIZE for size in sizes[:-1]) and 0 < sizes[-1] <= PAGE_SIZE


def test_decision_filters_hold_the_derived_outcomes(example, example_site):
    wanted = expected_filters(example)
    assert set(wanted) == set(STANDINGS)
    assert wanted["included"] and wanted["excluded-title-abstract"] and wanted["conflict"] and wanted["awaiting"]
    for key, ids in wanted.items():
        shown = listed(example_site, key)
        assert len(shown) == len(set(shown)), key
        assert set(shown) == slugs(ids), key
    # the decision filters partition the records
    assert sum(len(ids) for ids in wanted.values()) == len(example.review.records)
    # and agree with the PRISMA counts derived from the same files
    assert len(wanted["included"]) == len(example.facts.included)
    counts = example.facts.prisma
    assert len(wanted["excluded-title-abstract"]) == counts.excluded_screening
    assert len(wanted["excluded-full-text"]) == counts.excluded_full_text
    assert len(wanted["not-retrieved"]) == counts.reports_not_retrieved
    assert len(wanted["conflict"] | wanted["awaiting"]) == counts.awaiting_screening + counts.awaiting_full_text


def test_filter_counts_shown_are_the_rows_listed(example, example_site):
    # records.html counts every list; the other list pages name the filters without counts (a decision
    # would otherwise change every page of every list) and say their own total
    included = list_pages(example_site, "included")[0]
    assert "class=\"count\"" not in included.read_text()
    assert f"{len(listed(example_site, 'included'))} records" in one_spaced(included.read_text())
    for page in (example_site / "records.html",):
        counts = filter_counts(page)
        assert counts["All records"] == len(example.review.records)
        # no duplicate has been confirmed: the summary does not speak of them
        assert "from its searches and imports, newest batch first" in one_spaced(page.read_text())
        assert counts["Included"] == len(listed(example_site, "included"))
        assert counts["Excluded at title and abstract"] == len(listed(example_site, "excluded-title-abstract"))
        for reason in example.review.protocol.meta.exclusion_reasons:  # every reason is a filter, 0 or not
            assert counts[reason.label] == len(listed(example_site, f"reason-{reason.code}"))
        for number in (1, 2):
            assert sum(n for name, n in counts.items() if name.startswith(f"Batch {number} ")) \
                == len(listed(example_site, f"batch-{number}"))


def test_batch_filters_hold_each_batch(example, example_site):
    batches = [payload for payload in example.review.payloads if isinstance(payload, BatchPayload)]
    assert len(batches) == 2
    seen: list[str] = []
    for batch in batches:
        shown = listed(example_site, f"batch-{batch.batch}")
        assert set(shown) == slugs(batch.record_ids)
        seen += shown
    assert sorted(seen) == sorted(slugs(example.review.records))  # every record in exactly one batch list
    assert not list_pages(example_site, "imported")  # nothing came in outside a batch


def test_each_record_is_on_a_bounded_number_of_list_pages(example, example_site):
    """The whole list, its decision, its full-text reason when excluded there, its batch: never more, so
    the lists grow in step with the review."""
    appearances: dict[str, int] = {}
    for page in (example_site / "records").rglob("list/**/*.html"):
        for row in rows(page):
            appearances[row_slug(row)] = appearances.get(row_slug(row), 0) + 1
    for row in rows(example_site / "records.html"):
        appearances[row_slug(row)] = appearances.get(row_slug(row), 0) + 1
    assert set(appearances) == slugs(example.review.records)
    assert set(appearances.values()) == {3}  # no full-text exclusion in the example: all, decision, batch


def test_each_list_page_marks_its_own_list_current_among_its_filters(example_site):
    # A list's filters are written once for all its pages (records.html apart): each page still marks its own list.
    pages = [example_site / "records.html", *sorted((example_site / "records" / "list").glob("*/*.html"))]
    assert len({page.parent for page in pages}) > 3
    for page in pages:
        current = tree(page).findall(".//nav[@class='record-filters']//a[@aria-current='page']")
        key = "all" if page.name == "records.html" else page.parent.name
        first = "records.html" if key == "all" else f"records/list/{key}/1.html"
        assert [urljoin(page.relative_to(example_site).as_posix(), link.get("href")) for link in current] == [first]


def test_a_list_page_is_its_rows_in_its_template_whatever_text_holds_the_rows_slot(monkeypatch):
    # A list page is its template rendered around a slot, its rows joined in as UTF-8. A reason's label holding the
    # slot's text (no review's is expected to) is shown as it is, its page rendered with the rows in place: the same
    # bytes as with a slot no text holds.
    from sitegen.site import records

    workspace = open_review(EXAMPLE)
    code = next(iter(workspace.facts.reason_labels))
    label = f"Labelled {records.ROWS_SLOT} & so"
    workspace.facts.reason_labels[code] = label

    def list_pages_rendered() -> dict[str, bytes]:
        return {page.path: page.render() for page in record_pages(Site(workspace.review, workspace.facts, None))
                if page.path.startswith(("records.html", "records/list/"))}

    held = list_pages_rendered()
    assert len(held) > 3 and all(f"Labelled {records.ROWS_SLOT} &amp; so".encode() in page for page in held.values())
    monkeypatch.setattr(records, "ROWS_SLOT", "\x00another slot\x00")
    assert list_pages_rendered() == held


def test_lists_run_newest_batch_first_then_by_title(example_site):
    order = []
    for page in list_pages(example_site, "all"):
        for row in rows(page):
            batch = one_spaced(row.find("td[@data-label='Batch']").text_content())
            order.append((int(batch), title_key(one_spaced(row.find("td").find("a").text_content()))))
    batches = [batch for batch, _ in order]
    assert batches == sorted(batches, reverse=True) and batches[0] == 2
    for number in set(batches):
        titles = [title for batch, title in order if batch == number]
        assert titles == sorted(titles)


def test_every_list_link_resolves(example_site):
    pages = [example_site / "records.html", *(example_site / "records" / "list").rglob("*.html")]
    assert len(pages) > 5
    for page in pages:
        base = page.as_uri()
        for nav in tree(page).findall(".//nav"):
            if nav.get("class") not in ("pager", "record-filters"):
                continue
            for link in nav.iter("a"):
                target = Path(unquote(urljoin(base, link.get("href")).split("#")[0].removeprefix("file://")))
                assert target.is_file(), (page, link.get("href"))


def test_pages_link_in_order(example_site):
    first, second = list_pages(example_site, "all")
    assert tree(second).find(".//nav[@class='pager']//a[@rel='prev']").get("href") == "../../../records.html"
    assert tree(first).find(".//nav[@class='pager']//a[@rel='next']").get("href") == "records/list/all/2.html"
    assert tree(first).find(".//nav[@class='pager']//a[@aria-current='page']").text_content().endswith("1")
    assert tree(second).find(".//nav[@class='pager']//a[@rel='next']") is None


@pytest.mark.parametrize(("current", "total", "window"), [
    (1, 1, [1]),
    (1, 2, [1, 2]),
    (1, 5, [1, 2, 3, 4, 5]),  # a gap of one page shows that page
    (2, 7, [1, 2, 3, 4, None, 7]),
    (1, 400, [1, 2, 3, None, 400]),
    (200, 400, [1, None, 198, 199, 200, 201, 202, None, 400]),
    (400, 400, [1, None, 398, 399, 400]),
])
def test_page_window(current, total, window):
    assert page_window(current, total) == window


def test_page_navigation_is_bounded_however_many_pages():
    assert max(len(page_window(current, 400)) for current in range(1, 401)) == 2 * NEAR_PAGES + 5


def test_list_pages_need_no_script(example_site):
    for page in (example_site / "records.html", list_pages(example_site, "included")[0]):
        scripts = tree(page).findall(".//script")
        assert scripts and all(script.get("src") and not (script.text or "").strip() for script in scripts)
    assert (example_site / "assets" / "records-filter.js").is_file()


# --------------------------------------------------------------------------- record pages


def record_page(site: Path, record_id: str) -> Path:
    return site / "records" / f"{page_slug(record_id)}.html"


def main_text(page: Path) -> str:
    return one_spaced(tree(page).find(".//main").text_content())


def test_an_included_record_links_its_study_page_and_others_do_not(example, example_site):
    included = example.facts.included
    for record_id in example.review.records:
        links = [a.get("href") for a in tree(record_page(example_site, record_id)).iter("a")]
        study = f"../studies/{page_slug(record_id)}.html"
        assert (study in links) == (record_id in included), record_id


def test_record_page_names_each_run_and_source_that_returned_it(example, example_site):
    returned: dict[str, list[str]] = {}
    for event, payload in zip(example.review.ledger, example.review.payloads, strict=True):
        if isinstance(payload, RetrievalPayload | ImportPayload):
            for record_id in set(payload.record_ids):
                returned.setdefault(record_id, []).append(event.ts[:10])
    found_again = next(i for i, runs in returned.items() if len(runs) == 2)
    found_late = next(i for i, runs in returned.items() if runs == ["2023-04-17"])
    for record_id in (found_again, found_late):
        table = tree(record_page(example_site, record_id)).find(".//table[@class='sightings stack-on-phone']")
        shown = [[one_spaced(cell.text_content()) for cell in row.iter("td")] for row in table.find("tbody")]
        assert [row[0] for row in shown] == returned[record_id]
        assert [row[2] for row in shown] == ["OpenAlex"] * len(returned[record_id])
        assert [row[3] for row in shown] == ["first identified"] + ["seen before"] * (len(shown) - 1)


def test_record_page_shows_its_batch_score_and_each_reviewers_decision(example, example_site):
    review, facts = example.review, example.facts
    batch = next(b for b in facts.screening.batches if b.number == 2)
    ranking = rank_batch(review, facts.screening, batch)
    for scored in ranking.decisions[:3]:
        page = record_page(example_site, scored.id)
        text = main_text(page)
        assert "screening batch 2" in text
        assert f"{scored.score} of 100: {scored.decision}" in text
        assert one_spaced(scored.rationale) in text
        decided = [row for row in review.decisions if row.decision.record_id == scored.id]
        outcome = facts.outcomes["title-abstract"][scored.id]
        for row in decided:
            who = "Adjudication" if row.reviewer == "adjudication" else row.reviewer
            assert who in text
            if outcome.decision != "conflict":
                assert f"{who} {row.decision.decision}" in text


def _decisions(review: Path, reviewer: str) -> Path:
    return review / "screening" / "title-abstract" / f"{reviewer}.csv"


def _set_decision(path: Path, record_id: str, line: str | None) -> None:
    """Replace (or, with None, remove) a record's line in a decision file."""
    lines = path.read_text().splitlines(keepends=True)
    kept = [text for text in lines if not text.startswith(f"{record_id},")]
    assert len(kept) == len(lines) - 1
    path.write_text("".join(kept) + (f"{line}\n" if line else ""))


def test_screening_stays_blind_until_it_is_settled(example_copy, tmp_path):
    workspace = open_review(example_copy)
    batch_two = next(b for b in workspace.facts.screening.batches if b.number == 2)
    title_abstract = workspace.facts.outcomes["title-abstract"]
    excluded = [i for i in batch_two.record_ids if title_abstract[i].decision == "exclude"
                and not title_abstract[i].adjudicated]
    awaiting, disputed = excluded[:2]
    # One reviewer's decision missing: the other's must not show, or the next reviewer would read it.
    _set_decision(_decisions(example_copy, "reviewer-b"), awaiting, None)
    # A disagreement: who decided what shows, but not why, until the adjudicator settles it.
    _set_decision(_decisions(example_copy, "reviewer-b"), disputed, f"{disputed},include,,SECRET-NOTE")
    site = tmp_path / "site"
    build_records(example_copy, site)
    text = main_text(record_page(site, awaiting))
    assert "Awaiting title and abstract screening" in text
    assert "reviewer-a decided, not shown while screening is blind" in text
    assert "exclude" not in text.split("Screening history")[1]
    text = main_text(record_page(site, disputed))
    assert "Reviewers disagree at title and abstract screening" in text
    assert "reviewer-a exclude" in text and "reviewer-b include" in text and "SECRET-NOTE" not in text
    assert page_slug(disputed) in listed(site, "conflict") and page_slug(awaiting) in listed(site, "awaiting")

    adjudication = _decisions(example_copy, "adjudication")
    adjudication.write_text(adjudication.read_text() + f"{disputed},exclude,,settled\n")
    build_records(example_copy, site)
    text = main_text(record_page(site, disputed))
    assert "SECRET-NOTE" in text and "Adjudication exclude" in text
    assert page_slug(disputed) in listed(site, "excluded-title-abstract")


def test_a_full_text_exclusion_is_listed_under_its_reason(example_copy, tmp_path):
    workspace = open_review(example_copy)
    reason = workspace.review.protocol.meta.exclusion_reasons[2]
    record_id = workspace.facts.included[0]
    path = example_copy / "screening" / "full-text" / "reviewer-a.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(f"{record_id},exclude,{reason.code},\n" if line.startswith(f"{record_id},") else line
                            for line in lines))
    site = tmp_path / "site"
    build_records(example_copy, site)
    assert listed(site, f"reason-{reason.code}") == listed(site, "excluded-full-text") == [page_slug(record_id)]
    assert page_slug(record_id) not in listed(site, "included")
    assert filter_counts(site / "records.html")[reason.label] == 1
    assert open_review(example_copy).facts.prisma.excluded_by_reason == {reason.code: 1}
    assert f"Excluded at full-text assessment: {reason.label}." in main_text(record_page(site, record_id))


def test_hostile_text_is_escaped_in_lists_and_record_pages(example_copy, tmp_path):
    site = tmp_path / "site"
    build_records(hostile_review(example_copy), site)
    hostile = "10.1002/hipo.22095"
    pages = [page for page in list_pages(site, "included") if page_slug(hostile) in [row_slug(r) for r in rows(page)]]
    for page in [*pages, record_page(site, hostile)]:
        raw = page.read_text()
        assert "<script>alert(1)" not in raw
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in raw
        assert XSS in main_text(page)
    assert f"Mallory {XSS}" in main_text(pages[0])


@pytest.mark.parametrize("text", ["plain", "", "<b>&amp;\"it's\"</b>", "ü & ü <", "&#39;", "\t<\n>"])
def test_record_page_text_is_escaped_exactly_as_markupsafe_escapes_it(text):
    from markupsafe import Markup, escape

    from sitegen.site.record_page import _e

    assert _e(text) == str(escape(text))
    assert _e(2024) == "2024" and _e(Markup("<i>x</i>")) == "<i>x</i>"
    for number in (0, -3, 2024, 0.5, -0.0, 1e-05, 1e300, float("inf"), float("nan"), True, None):
        assert _e(number) == str(escape(number))


def test_rows_a_record_page_writes_once_for_many_pages_differ_wherever_their_values_do():
    # A sighting's row and a batch's paragraph are made once per distinct value, for every page showing it: values
    # that differ in any one field are other text, and equal values (not the same object) the same text.
    from sitegen.living.sightings import Sighting
    from sitegen.site.record_page import _batch_paragraph, _sighting_row

    seen = Sighting("2024-12-30T03:00:00+05:30", "openalex", "s1", "main", None, True)
    others = [Sighting("2024-12-30T03:00:00Z", "openalex", "s1", "main", None, True),
              Sighting(seen.at, "pubmed", "s1", "main", None, True), Sighting(seen.at, "openalex", "s2", "main", None, True),
              Sighting(seen.at, "openalex", "s1", "other", None, True), Sighting(seen.at, "openalex", "s1", None, None, True),
              Sighting(seen.at, "openalex", "s1", "main", None, False), Sighting(seen.at, "openalex", None, None, "<f>", True)]
    rows = [_sighting_row(sighting) for sighting in [seen, *others]]
    assert len(set(rows)) == len(rows)
    assert _sighting_row(Sighting(*(getattr(seen, field) for field in seen.__slots__))) == rows[0]
    assert '<time datetime="2024-12-30T03:00:00+05:30">2024-12-29</time>' in rows[0]  # its UTC day
    assert "import: &lt;f&gt;" in rows[-1]
    paragraphs = [_batch_paragraph(*values) for values in [(3, "s1", "2024-01-02T00:00:00Z", 1), (4, "s1", "2024-01-02T00:00:00Z", 1),
                                                           (3, "s2", "2024-01-02T00:00:00Z", 1), (3, "s1", "2024-01-03T00:00:00Z", 1),
                                                           (3, "s1", "2024-01-02T00:00:00Z", 2), (3, "s1", None, 1), (None, None, None, None)]]
    assert len(set(paragraphs)) == len(paragraphs)
    assert '<time datetime="None"></time>' in paragraphs[-2]  # as a batch without its time always showed


def test_titles_sort_by_their_letters_whatever_their_accents_encoding():
    # An NFC "Émotion" sorted after "Zebrafish" (by code point) while an NFD one sorted among the E's.
    from sitegen.records.titles import title_key

    titles = ["Zebrafish sleep", "\u00c9motion in rats", "E\u0301motion in mice", "Echo", "\u201cQuoted\u201d title"]
    assert sorted(titles, key=title_key) == ["Echo", "E\u0301motion in mice", "\u00c9motion in rats",
                                             "\u201cQuoted\u201d title", "Zebrafish sleep"]


def test_two_ids_whose_short_page_names_are_one_each_get_a_page_of_their_own(sitegen, tmp_path):
    # DOIs alike for the 60 characters a page name shows, whose 32-bit digests agree (found here in a fraction
    # of a second, as anyone registering DOIs could): each record keeps its own page, and the others keep theirs.
    import hashlib
    import itertools

    first_of: dict[str, str] = {}
    for number in itertools.count():
        doi = f"10.1234/{'a' * 60}-{number:x}"
        short = page_slug(doi)
        if short in first_of:
            pair = first_of[short], doi
            break
        first_of[short] = doi
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    assert sitegen("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")[0] == 0
    ris = tmp_path / "pair.ris"
    ris.write_text("".join(f"TY  - JOUR\nTI  - Work number {n}\nPY  - 2020\nDO  - {doi}\nER  - \n"
                           for n, doi in enumerate([*pair, "10.1234/another"])))
    assert sitegen("import", review, ris, "--at", "2026-01-02T00:00:00Z")[0] == 0
    code, out, err = sitegen("build", review, "--out", tmp_path / "site")
    assert code == 0, out + err
    for number, doi in enumerate(pair):
        page = tmp_path / "site" / "records" / f"{page_slug(doi, whole=True)}.html"
        assert page_slug(doi, whole=True).endswith(hashlib.sha256(doi.encode()).hexdigest())
        assert f"Work number {number}" in main_text(page) and not (tmp_path / "site" / "records" / f"{short}.html").exists()
    assert (tmp_path / "site" / "records" / f"{page_slug('10.1234/another')}.html").exists()


def test_page_names_are_as_published():
    """A record's page name is its address: whatever page_slug's code becomes, each id keeps the name it had."""
    assert {record_id: page_slug(record_id) for record_id in (
        "10.5555/synthetic.0", "pmid:31415926", "openalex:W2741809807",
        "10.1002/(SICI)1097-4636(199706)35:4<509::AID-JBM11>3.0.CO;2-C", "-.Ünïcode ÉTUDE/é.-", "10.1234/" + "a" * 70,
    )} == {
        "10.5555/synthetic.0": "10.5555-synthetic.0-3445d2ca",
        "pmid:31415926": "pmid-31415926-477eecf1",
        "openalex:W2741809807": "openalex-w2741809807-edf356e1",
        "10.1002/(SICI)1097-4636(199706)35:4<509::AID-JBM11>3.0.CO;2-C":
            "10.1002-sici-1097-4636-199706-35-4-509-aid-jbm11-3.0.co-2-c-83ef57a7",
        "-.Ünïcode ÉTUDE/é.-": "n-code-tude-a0b572da",
        "10.1234/" + "a" * 70: "10.1234-" + "a" * 52 + "-f0964343",
    }
    assert page_slug("10.5555/synthetic.0", whole=True) == \
        "10.5555-synthetic.0-514186b09e5082b0f1560375860f2ce0fc8117b3aaebb1c350e077b43173c87b"


@pytest.mark.parametrize("title", ["A & <b>title</b>", "holds \x00path\x00 and \x00content\x00", ""])
def test_a_framed_page_is_its_frame_with_each_slot_filled_as_replacing_them_in_turn_fills_it(example, title):
    # A framed page is filled in by one join of its frame's parts; a title holding a slot's text (no review text
    # does) is filled as the three replacements always filled it.
    from markupsafe import escape

    from sitegen.site.pages import FRAME_CONTENT, FRAME_PATH, FRAME_TITLE

    site = Site(example.review, example.facts, None)
    for path in ("records/x.html", "index.html", "records/list/all/2.html"):
        page = site.framed(path, title, lambda text: text, text="<p>the content \x00title\x00</p>")
        frame = site._frame("../" * path.count("/"), site.searchable(path))
        assert page.render() == (frame.replace(FRAME_TITLE, str(escape(title))).replace(FRAME_PATH, path)
                                 .replace(FRAME_CONTENT, "<p>the content \x00title\x00</p>"))
