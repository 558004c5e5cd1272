"""Published versions: `sitegen publish`, the version files `check` guards, every version's pages, the
changelog, and the Atom feed. Reviews here hold real records (SYNERGY works from OpenAlex) found by two
runs of a saved search against a stand-in OpenAlex, and screened with the example's decisions."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urljoin, urlparse

import httpx
import pytest
from conftest import EXAMPLE, FIXTURES, review_of_ris, run_cli, tree_bytes
from http_mocks import json_response
from lxml import etree, html

from sitegen.commands import add_monitor, build, check, prisma, publish, update
from sitegen.errors import ReviewInvalid, SitegenError
from sitegen.living.ledger import event_hash
from sitegen.living.versions import version_hash, version_text
from sitegen.review.models import RFC3339, Strategy, VersionRecord
from sitegen.review.write import canonical_json
from sitegen.site.pages import page_slug
from sitegen.sources.settings import SourceSettings

WORKS = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())
FIRST_RUN, SECOND_RUN = "2023-04-10T00:00:00Z", "2023-04-17T00:00:00Z"
FIRST_RUN_CUTOFF_YEAR = 2014  # the first run finds the works published up to then, the second all of them
SETTINGS = SourceSettings(max_records=1000)
ATOM = "{http://www.w3.org/2005/Atom}"


def openalex(works: list[dict]) -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: json_response(json.dumps(
        {"meta": {"count": len(works), "next_cursor": None}, "results": works})))


def records_of(review: Path) -> dict[str, dict]:
    return {record["id"]: record for record in map(json.loads, (review / "records.jsonl").read_text().splitlines())}


def screen_like_the_example(review: Path) -> None:
    """The example's decisions (the published review's labels) for the records this review has so far."""
    known = records_of(review)
    for path in sorted((EXAMPLE / "screening").rglob("*.csv")):
        rows = list(csv.reader(io.StringIO(path.read_text())))
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows([rows[0]] + [row for row in rows[1:] if row[0] in known])
        target = review / path.relative_to(EXAMPLE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(buffer.getvalue())


@pytest.fixture(scope="module")
def first_run_template(tmp_path_factory) -> Path:
    """A review after its first run, screened."""
    review = tmp_path_factory.mktemp("first-run") / "review"
    run_cli("init", review)
    # The example's screening settings and site address; no search index, which these tests do not need.
    config = (EXAMPLE / "review.yaml").read_text()
    (review / "review.yaml").write_text(config.replace("\nsite:\n", "\nsite:\n  search: false\n"))
    run_cli("protocol", "lock", review, "--at", "2023-04-01T00:00:00Z")
    earlier = [work for work in WORKS if work["publication_year"] <= FIRST_RUN_CUTOFF_YEAR]
    add_monitor(review, "object-in-context", [Strategy(source="openalex", query="object context")], FIRST_RUN,
                "live", settings=SETTINGS, transport=openalex(earlier))
    screen_like_the_example(review)
    return review


@pytest.fixture
def first_run(first_run_template, tmp_path) -> Path:
    review = tmp_path / "review"
    shutil.copytree(first_run_template, review)
    return review


def second_run(review: Path) -> list[str]:
    """The second run (every work), screened as the example screened its records."""
    result = update(review, SECOND_RUN, "live", settings=SETTINGS, transport=openalex(WORKS))
    screen_like_the_example(review)
    return result.searches[0].new


@dataclass
class Published:
    review: Path
    site: Path
    counts_before: dict  # `sitegen prisma` when version 1 was published, before the second run
    new: list[str]  # the records the second run found
    changes: str  # version 2's changelog in a sentence, as `publish` said it


@pytest.fixture(scope="module")
def published(first_run_template, tmp_path_factory) -> Published:
    """Version 1 published after the first run, version 2 after the second."""
    folder = tmp_path_factory.mktemp("two-versions")
    review, site = folder / "review", folder / "site"
    shutil.copytree(first_run_template, review)
    publish(review, site, environ={})
    counts_before = prisma(review).model_dump()
    new = second_run(review)
    result = publish(review, site, environ={})
    assert (result.version.number, result.latest.number) == (2, 1)
    return Published(review, site, counts_before, new, result.changes)


@pytest.fixture
def two_versions(published, tmp_path) -> Path:
    review = tmp_path / "review"
    shutil.copytree(published.review, review)
    return review


# --------------------------------------------------------------------------- publish


def test_publishing_twice_records_one_version(first_run, tmp_path, sitegen):
    site = tmp_path / "site"
    code, out, err = sitegen("publish", first_run, "--out", site)
    assert code == 0, err
    assert out.startswith(f"published version 1 ({FIRST_RUN}): {len(records_of(first_run))} new records")
    assert sorted(p.name for p in (first_run / "versions").iterdir()) == ["1.json"]
    ledger = (first_run / "ledger.jsonl").read_text().splitlines()
    assert json.loads(ledger[-1])["type"] == "version"
    before = tree_bytes(first_run)

    code, out, err = sitegen("publish", first_run, "--out", site)
    assert code == 0, err
    assert out.startswith(f"nothing changed since version 1 of 2023-04-10; no new version\n{site} is up to date")
    assert tree_bytes(first_run) == before  # no version, no event, nothing written
    assert "This is version 1 of the review, published" in (site / "index.html").read_text()
    assert check(first_run) == []


def test_an_update_is_published_as_version_2_and_version_1_keeps_its_numbers(published):
    site = published.site
    later = len(published.new)
    assert later == sum(work["publication_year"] > FIRST_RUN_CUTOFF_YEAR for work in WORKS)
    assert published.changes.startswith(f"{later} new records")
    # v/1 serves the numbers of version 1, as they were before the update; v/2 and the root the new ones
    assert json.loads((site / "v" / "1" / "prisma.json").read_text()) == published.counts_before
    counts_after = prisma(published.review).model_dump()
    assert counts_after["records"] == published.counts_before["records"] + later
    assert json.loads((site / "v" / "2" / "prisma.json").read_text()) == counts_after
    assert json.loads((site / "downloads" / "prisma.json").read_text()) == counts_after

    # v/2's changelog names every new record by title, linked to its page; v/1's names none of them
    titles = {rid: record["title"] for rid, record in records_of(published.review).items()}
    changes = page(site / "v" / "2" / "index.html").xpath("//section[@aria-labelledby='changes-heading']")[0]
    named = {a.get("href"): a.text_content() for a in changes.xpath(".//dt[starts-with(., 'New records')]"
                                                                     "/following-sibling::dd[1]//a")}
    assert named == {f"../../records/{page_slug(rid)}.html": titles[rid] for rid in published.new}
    first = page(site / "v" / "1" / "index.html").xpath("//section[@aria-labelledby='changes-heading']")[0]
    assert not {a.text_content() for a in first.xpath(".//a")} & {titles[rid] for rid in published.new}
    # versions.html lists the newest first, each linking its own page
    listed = [a.get("href") for a in page(site / "versions.html").xpath("//section[@class='version']/h2/a")]
    assert listed == ["v/2/index.html", "v/1/index.html"]


def test_version_pages_show_their_own_studies_and_question(two_versions, tmp_path):
    """The question changes and a study is dropped after version 2: its page keeps both, and the root
    says honestly that it shows changes not yet published. Building records nothing."""
    config = two_versions / "review.yaml"
    config.write_text(config.read_text().replace("Which procedural variables", "Which variables"))
    full_text = two_versions / "screening" / "full-text" / "reviewer-a.csv"
    rows = full_text.read_text().splitlines(keepends=True)
    dropped = rows[-1].split(",")[0]
    full_text.write_text("".join(rows[:-1]))
    before = tree_bytes(two_versions)
    site = tmp_path / "site"
    build(two_versions, site, environ={})
    assert tree_bytes(two_versions) == before
    version_2 = (site / "v" / "2" / "index.html").read_text()
    assert "Which procedural variables" in version_2
    assert f"records/{page_slug(dropped)}.html" in version_2.split('id="version-studies-heading"')[1]
    home = (site / "index.html").read_text()
    assert "changes not yet published since" in home and 'href="v/2/index.html">version 2</a>' in home
    whats_new = page(site / "index.html").xpath("//section[@class='whats-new']")[0].text_content()
    assert "Studies removed (1)" in whats_new and "The review question changed." in whats_new
    assert json.loads((site / "downloads" / "prisma.json").read_text())["studies_included"] == \
        json.loads((site / "v" / "2" / "prisma.json").read_text())["studies_included"] - 1


def test_a_changelog_cut_short_holds_the_first_of_each_list_as_the_whole_lists_them(two_versions):
    """The home page's changelog holds only the first few of each list (of 100,000 new records at review scale)
    and each list's length: the first few of the whole changelog's lists, in their order, with their outcomes."""
    from sitegen.site.pages import Site
    from sitegen.site.versions import NamedViews, changelog_view
    from sitegen.workspace import open_review

    # Changes since version 2 too: studies dropped, so decisions changed.
    full_text = two_versions / "screening" / "full-text" / "reviewer-a.csv"
    rows = full_text.read_text().splitlines(keepends=True)
    full_text.write_text("".join(rows[:-3]))
    workspace = open_review(two_versions)
    site = Site(workspace.review, workspace.facts, None)
    history, views = site.history, NamedViews(site.views_by_id)
    lists = ("new_records", "decisions", "studies_added", "studies_removed", "evidence_changed",
             "duplicates_changed", "verifications")
    for log, after in [*zip(history.changelogs, history.versions, strict=True), (history.since_latest, history.current)]:
        whole = changelog_view(log, after, views)
        longest = max(len(getattr(whole, name)) for name in lists)
        assert longest > 2
        for limit in range(longest + 2):
            cut = changelog_view(log, after, views, limit)
            for name in lists:
                assert len(getattr(cut, name)) == len(getattr(whole, name)), name
                assert getattr(cut, name)[:limit] == getattr(whole, name)[:limit], name
            shown = {view.record.id for view in whole.new_records[:limit]}
            assert cut.outcomes == {stage: {rid: outcome for rid, outcome in outcomes.items() if rid in shown}
                                    for stage, outcomes in whole.outcomes.items()}
            if limit < len(whole.new_records):  # a page asking for more than is held fails, not shows fewer
                with pytest.raises(IndexError):
                    cut.new_records[:limit + 1]
    assert len(history.since_latest.decisions) > 1 and len(history.changelogs[0].new_records) > 10


def test_every_page_says_which_version_it_shows(two_versions, tmp_path):
    site = tmp_path / "site"
    build(two_versions, site, environ={})
    for path in sorted(site.rglob("*.html")):
        if path.relative_to(site).parts[0] == "pagefind":
            continue  # the search index's own files, not sitegen's pages
        tree = page(path)
        footer = tree.xpath("//footer")[0]
        assert footer.xpath(".//a[text()='All versions']"), path
        edition = footer.xpath(".//p[@class='edition']")[0].text_content()
        if path.parent.parent.name == "v":
            assert edition.startswith(f"This is version {path.parent.name} of the review"), path
        else:
            assert edition.startswith("This is version 2 of the review, published 2023-04-17"), path
    assert (site / "v" / "1" / "index.html").read_text().count("This is an earlier version") == 1
    assert "This is the latest version" in (site / "v" / "2" / "index.html").read_text()


def test_rebuilds_with_versions_are_byte_identical(two_versions, tmp_path):
    build(two_versions, tmp_path / "one", environ={})
    clone = tmp_path / "clone"
    shutil.copytree(two_versions, clone)  # a fresh clone rebuilds every version byte for byte
    build(clone, tmp_path / "two", environ={})
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")


def test_publication_time_is_never_the_clock(first_run, tmp_path, sitegen):
    publish(first_run, tmp_path / "site", now="2023-05-01T12:00:00Z", environ={})
    assert json.loads((first_run / "versions" / "1.json").read_text())["published_at"] == "2023-05-01T12:00:00Z"
    (first_run / "screening" / "full-text" / "reviewer-a.csv").write_text("record_id,decision,reason,note\n")
    before = tree_bytes(first_run)
    with pytest.raises(SitegenError, match="is not later than version 1's"):  # dated by the ledger's latest event
        publish(first_run, tmp_path / "site", environ={"SOURCE_DATE_EPOCH": "1681948800"})
    assert tree_bytes(first_run) == before
    published = publish(first_run, tmp_path / "site", environ={"SOURCE_DATE_EPOCH": "1685000000"}).version
    assert published.number == 2 and published.published_at == "2023-05-25T07:33:20Z"


def test_publish_refuses_what_it_cannot_publish(first_run, tmp_path, sitegen):
    empty = tmp_path / "empty"
    sitegen("init", empty)
    code, _, err = sitegen("publish", empty, "--out", tmp_path / "site")
    assert code == 1 and "nothing to publish: the ledger has no events yet" in err
    assert not (empty / "versions").exists() and not (tmp_path / "site").exists()
    # an invalid review: nothing recorded, no site
    decisions = first_run / "screening" / "title-abstract" / "reviewer-a.csv"
    kept = decisions.read_text()
    decisions.write_text("record_id,decision\nnope,maybe\n")
    before = tree_bytes(first_run)
    with pytest.raises(ReviewInvalid):
        publish(first_run, tmp_path / "site", environ={})
    assert tree_bytes(first_run) == before and not (tmp_path / "site").exists()
    decisions.write_text(kept)
    # an unsafe output folder is refused before anything is recorded
    with pytest.raises(SitegenError, match="inside the review folder"):
        publish(first_run, first_run / "site", environ={})
    assert not (first_run / "versions").exists()


# --------------------------------------------------------------------------- check


def version_file(review: Path, number: int) -> Path:
    return review / "versions" / f"{number}.json"


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def edit_outcome(review: Path) -> tuple[str, int]:
    path = version_file(review, 1)
    text = path.read_text()
    edited = text.replace('{"decision": "exclude"}', '{"decision": "include"}', 1)
    path.write_text(edited)
    return "versions/1.json", 1


def renumber(review: Path) -> tuple[str, int]:
    """Version 1 deleted and version 2 renumbered as 1 (its number and name both)."""
    version_file(review, 1).unlink()
    path = version_file(review, 2)
    path.rename(version_file(review, 1))
    path = version_file(review, 1)
    path.write_text(path.read_text().replace('"number": 2,', '"number": 1,'))
    return "versions/1.json", 1


def rename_only(review: Path) -> tuple[str, int]:
    version_file(review, 2).rename(version_file(review, 3))
    return "versions/3.json", line_of(version_file(review, 3), '"number"')


def cut_in_half(review: Path) -> tuple[str, int]:
    path = version_file(review, 2)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:len(lines) // 2]))
    return "versions/2.json", len(lines) // 2 + 1


def truncate_ledger(review: Path) -> tuple[str, int]:
    """The ledger cut back to before version 2's head, state.json's anchor moved with it."""
    ledger = review / "ledger.jsonl"
    head = json.loads(version_file(review, 2).read_text())["ledger_head"]["seq"]
    events = ledger.read_text().splitlines(keepends=True)[:head - 1]
    ledger.write_text("".join(events))
    state = json.loads((review / "state.json").read_text())
    last = json.loads(events[-1])
    state["ledger_head"] = {"seq": last["seq"], "hash": last["hash"]}
    (review / "state.json").write_text(json.dumps(state))
    return "versions/2.json", line_of(version_file(review, 2), '"ledger_head"')


def unknown_record(review: Path) -> tuple[str, int]:
    path = version_file(review, 1)
    path.write_text(path.read_text().replace('"title-abstract": {\n', '"title-abstract": {\n      '
                                             '"10.9999/never.seen": {"decision": "include"},\n', 1))
    return "versions/1.json", line_of(path, "10.9999/never.seen")


def named_unseen(field: str):
    """Version 2's duplicates or study links naming a record no ledger event identified (a hand edit)."""
    def damage(review: Path) -> tuple[str, int]:
        path = version_file(review, 2)
        data = json.loads(path.read_text())
        known = next(iter(data["outcomes"]["title-abstract"]))
        data[field] = {known: "10.9999/never.seen"}
        path.write_text(json.dumps(data, indent=2))
        return "versions/2.json", line_of(path, "10.9999/never.seen")
    damage.__name__ = f"unseen_in_{field}"
    return damage


def unlocked_protocol(review: Path) -> tuple[str, int]:
    path = version_file(review, 2)
    data = json.loads(path.read_text())
    data["protocol_version"] += 5
    path.write_text(json.dumps(data, indent=2))
    return "versions/2.json", line_of(path, '"protocol_version"')


def backwards_in_time(review: Path) -> tuple[str, int]:
    path = version_file(review, 2)
    path.write_text(path.read_text().replace(f'"published_at": "{SECOND_RUN}"', '"published_at": "2023-04-09T00:00:00Z"'))
    return "versions/2.json", line_of(path, '"published_at"')


def hand_made(review: Path) -> tuple[str, int]:
    """A third version written by hand: no ledger event records it."""
    data = json.loads(version_file(review, 2).read_text())
    data["number"] = 3
    version_file(review, 3).write_text(json.dumps(data, indent=2))
    return "versions/3.json", 1


def deleted(review: Path) -> tuple[str, int]:
    version_file(review, 2).unlink()
    return "ledger.jsonl", len((review / "ledger.jsonl").read_text().splitlines())


@pytest.mark.parametrize(("damage", "code"), [
    (edit_outcome, "version-edited"),
    (renumber, "version-edited"),
    (rename_only, "version-number"),
    (cut_in_half, "json-syntax"),
    (truncate_ledger, "version-anchor"),
    (unknown_record, "unknown-record"),
    (named_unseen("duplicates"), "unknown-record"),
    (named_unseen("studies"), "unknown-record"),
    (unlocked_protocol, "version-protocol"),
    (backwards_in_time, "version-time"),
    (hand_made, "version-unrecorded"),
    (deleted, "version-missing"),
])
def test_check_refuses_damaged_versions_with_file_and_line(two_versions, damage, code, tmp_path):
    path, line = damage(two_versions)
    before = tree_bytes(two_versions)
    problems = check(two_versions)
    assert (path, line, code) in {(p.path, p.line, p.code) for p in problems}, problems
    assert tree_bytes(two_versions) == before  # check never writes
    with pytest.raises(ReviewInvalid):  # and nothing builds or publishes from it
        build(two_versions, tmp_path / "site", environ={})
    assert not (tmp_path / "site").exists()


def test_renumbered_versions_name_the_gap_and_the_lost_file(two_versions):
    renumber(two_versions)
    found = {(p.path, p.code) for p in check(two_versions)}
    assert ("ledger.jsonl", "version-missing") in found  # version 2's event has no file any more


def test_check_cli_annotates_a_tampered_version(two_versions, sitegen):
    edit_outcome(two_versions)
    code, out, _ = sitegen("check", two_versions, "--format", "github")
    assert code == 1
    assert re.search(r"::error file=[^,]*versions/1\.json,line=1,[^:]*::.*changed after it was published", out)


def resealed(review: Path, edit) -> None:
    """Version 2 (the latest) edited by `edit` (its data -> nothing) and written as `publish` writes it, with its
    ledger event's SHA-256, the hash chain and state.json's head recomputed: what a pull request can do that the
    version's hash does not show."""
    path = version_file(review, 2)
    data = json.loads(path.read_text())
    edit(data)
    record = VersionRecord.model_validate(data)
    path.write_text(version_text(record))
    events = [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]
    assert events[-1]["type"] == "version" and events[-1]["payload"]["number"] == 2
    events[-1]["payload"]["sha256"] = version_hash(record)
    last = events[-1]
    last["hash"] = event_hash(last["seq"], last["type"], last["ts"], last["payload"], last["prev"])
    (review / "ledger.jsonl").write_text("".join(canonical_json(event) + "\n" for event in events))
    state = json.loads((review / "state.json").read_text())
    state["ledger_head"] = {"seq": last["seq"], "hash": last["hash"]}
    (review / "state.json").write_text(json.dumps(state, indent=2) + "\n")


def outcome_line(review: Path, stage: str, record_id: str) -> int:
    """The line of `record_id`'s outcome at `stage` in version 2 (as `publish` writes it: one outcome a line)."""
    lines = version_file(review, 2).read_text().splitlines()
    start = next(n for n, line in enumerate(lines) if line.strip().startswith(f'"{stage}"'))
    return next(n for n, line in enumerate(lines[start:], start=start + 1) if line.strip().startswith(f'"{record_id}"'))


def first_with(data: dict, stage: str, decision: str) -> str:
    return next(rid for rid, outcome in data["outcomes"][stage].items() if outcome["decision"] == decision)


def made_up_reason(data: dict) -> str:
    rid = first_with(data, "full-text", "include")
    data["outcomes"]["full-text"][rid] = {"decision": "exclude", "reason": "made-up"}
    data["evidence"] = {study: digest for study, digest in data["evidence"].items() if study != rid}
    return rid


def reason_with_include(data: dict) -> str:
    rid = first_with(data, "full-text", "include")
    data["outcomes"]["full-text"][rid]["reason"] = "made-up"
    return rid


def assessed_though_excluded(data: dict) -> str:
    """A full-text outcome for a record title/abstract screening excluded."""
    rid = first_with(data, "title-abstract", "exclude")
    data["outcomes"]["full-text"][rid] = {"decision": "maybe"}
    return rid


@pytest.mark.parametrize(("edit", "code"), [
    (made_up_reason, "unknown-reason"),
    (reason_with_include, "reason-not-exclusion"),
    (assessed_though_excluded, "not-screened-in"),
])
def test_check_judges_a_resealed_versions_outcomes_as_publish_wrote_them(two_versions, edit, code, tmp_path):
    edited: list[str] = []
    resealed(two_versions, lambda data: edited.append(edit(data)))
    problems = check(two_versions)
    found = {(p.path, p.line, p.code) for p in problems}
    assert ("versions/2.json", outcome_line(two_versions, "full-text", edited[0]), code) in found, problems
    assert not {p.code for p in problems} & {"version-edited", "version-anchor", "ledger-chain"}, problems
    with pytest.raises(ReviewInvalid):
        build(two_versions, tmp_path / "site", environ={})


def test_check_names_a_resealed_versions_reason_no_protocol_defined(two_versions):
    resealed(two_versions, made_up_reason)
    message = next(p.message for p in check(two_versions) if p.code == "unknown-reason")
    assert "'made-up'" in message and "defined:" in message


def evidence_of_an_exclusion(data: dict) -> None:
    data["evidence"][first_with(data, "title-abstract", "exclude")] = "0" * 64


def duplicate_of_itself(data: dict) -> None:
    rid = first_with(data, "title-abstract", "exclude")
    data["duplicates"] = {rid: rid}


def study_named_by_a_greater_id(data: dict) -> None:
    first, second = sorted(data["outcomes"]["title-abstract"])[:2]
    data["studies"] = {first: second, second: second}


@pytest.mark.parametrize(("edit", "code"), [
    (evidence_of_an_exclusion, "version-evidence"),
    (duplicate_of_itself, "version-duplicates"),
    (study_named_by_a_greater_id, "version-studies"),
])
def test_check_refuses_resealed_links_publish_could_not_have_recorded(two_versions, edit, code):
    resealed(two_versions, edit)
    problems = check(two_versions)
    assert code in {p.code for p in problems}, problems
    assert all(p.line is not None for p in problems if p.code == code)


# --------------------------------------------------------------------------- the feed


def page(path: Path):
    return html.fromstring(path.read_bytes())


def feed_links(site: Path, feed: etree._Element, base: str) -> list[Path]:
    """Every link of the feed as the file of the site it names."""
    root = urljoin(base, feed.get("{http://www.w3.org/XML/1998/namespace}base") or "")
    files = []
    for link in feed.iter(f"{ATOM}link"):
        address = urlparse(urljoin(root, link.get("href")))
        files.append(site / address.path.removeprefix(urlparse(base).path))
    return files


@pytest.mark.parametrize("base_url", [None, "https://example.org/reviews/oic/"])
def test_feed_is_well_formed_atom_whose_links_resolve(two_versions, tmp_path, base_url):
    config = two_versions / "review.yaml"
    text = re.sub(r"\n  base_url: \S+", "", config.read_text())
    if base_url:
        text = text.replace("site:\n", f"site:\n  base_url: {base_url}\n")
    config.write_text(text)
    site = tmp_path / "site"
    build(two_versions, site, environ={})
    feed = etree.fromstring((site / "feed.xml").read_bytes(), etree.XMLParser(resolve_entities=False))
    assert feed.tag == f"{ATOM}feed"
    for required in ("id", "title", "updated", "author"):
        assert feed.find(f"{ATOM}{required}") is not None, required
    entries = feed.findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}title") for e in entries[:1]] == ["Version 2"]
    studies = [e for e in entries if not e.findtext(f"{ATOM}title").startswith("Version ")]
    assert len(entries) - len(studies) == 2
    assert len(studies) == json.loads((site / "v" / "2" / "prisma.json").read_text())["studies_included"]
    ids = [feed.findtext(f"{ATOM}id")] + [e.findtext(f"{ATOM}id") for e in entries]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", i) for i in ids)
    dates = [feed.findtext(f"{ATOM}updated")] + [e.findtext(f"{ATOM}{tag}") for e in entries
                                                 for tag in ("updated", "published")]
    assert all(RFC3339.match(d) and datetime.fromisoformat(d) for d in dates)
    assert feed.findtext(f"{ATOM}updated") == SECOND_RUN
    for entry in entries:
        assert entry.findtext(f"{ATOM}summary")
        assert [link.get("rel") for link in entry.findall(f"{ATOM}link")] == ["alternate"]
    hrefs = [link.get("href") for link in feed.iter(f"{ATOM}link")]
    assert all(h.startswith(base_url) for h in hrefs) if base_url else not any("://" in h for h in hrefs)
    served = base_url or "http://127.0.0.1:8000/"
    for file in feed_links(site, feed, served):
        assert file.is_file(), file
    # the home page announces the feed to readers' browsers
    alternate = page(site / "index.html").xpath("//link[@type='application/atom+xml']")[0]
    assert alternate.get("rel") == "alternate" and alternate.get("href") == "feed.xml"


def test_feed_ids_are_stable_across_addresses_and_rebuilds(two_versions, tmp_path):
    build(two_versions, tmp_path / "one", environ={})
    config = two_versions / "review.yaml"
    config.write_text(re.sub(r"base_url: \S+", "base_url: https://elsewhere.example/", config.read_text()))
    build(two_versions, tmp_path / "two", environ={"SOURCE_DATE_EPOCH": "1700000000"})

    def ids(site: Path) -> list[str]:
        return [e.text for e in etree.fromstring((site / "feed.xml").read_bytes()).iter(f"{ATOM}id")]

    assert ids(tmp_path / "one") == ids(tmp_path / "two")


def test_feed_escapes_hostile_titles(two_versions, tmp_path):
    hostile = "<script>alert(1)</script> & ]]> "  # (a record cannot hold U+FFFE: check refuses it)
    study = json.loads(version_file(two_versions, 1).read_text())["outcomes"]["full-text"]
    target = next(iter(study))
    records = two_versions / "records.jsonl"
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    for record in lines:
        if record["id"] == target:
            record["title"] = hostile
    records.write_text("".join(json.dumps(record) + "\n" for record in lines))
    site = tmp_path / "site"
    build(two_versions, site, environ={})
    raw = (site / "feed.xml").read_bytes()
    assert b"<script>" not in raw and "\ufffe".encode() not in raw
    titles = [entry.findtext(f"{ATOM}title") for entry in etree.fromstring(raw).iter(f"{ATOM}entry")]
    assert "<script>alert(1)</script> & ]]>" in [title.strip() for title in titles]


def test_feed_holds_the_latest_versions_only(two_versions, tmp_path, monkeypatch):
    # The feed held every version and every study any version newly included: published weekly for years, each
    # poll fetched the whole history. It holds the latest versions (here 1 of 2); versions.html keeps them all.
    from sitegen.site import feed

    site = tmp_path / "site"
    build(two_versions, site, environ={})
    whole = etree.fromstring((site / "feed.xml").read_bytes())
    monkeypatch.setattr(feed, "FEED_VERSIONS", 1, raising=False)
    build(two_versions, tmp_path / "latest", environ={})
    latest = etree.fromstring((tmp_path / "latest" / "feed.xml").read_bytes())

    def summaries(root) -> list[str]:
        return [entry.findtext(f"{ATOM}summary") for entry in root.iter(f"{ATOM}entry")]

    assert any(text.startswith("Newly included in version 1:") for text in summaries(whole))
    version_2, *studies = latest.iter(f"{ATOM}entry")
    assert version_2.findtext(f"{ATOM}title") == "Version 2"
    assert summaries(latest) == [version_2.findtext(f"{ATOM}summary")] + [
        text for text in summaries(whole) if text.startswith("Newly included in version 2:")]
    assert "versions.html lists them all" in latest.findtext(f"{ATOM}subtitle")
    assert "versions.html" not in whole.findtext(f"{ATOM}subtitle")


def test_no_feed_before_the_first_version(first_run, tmp_path):
    site = tmp_path / "site"
    build(first_run, site, environ={})
    assert not (site / "feed.xml").exists()
    assert "application/atom+xml" not in (site / "index.html").read_text()
    assert "No version of this review has been published yet." in (site / "index.html").read_text()
    assert "No version has been published yet" in (site / "versions.html").read_text()


def test_the_example_shows_two_versions_and_a_real_changelog(example_site):
    """The example publishes version 1 after its first run and version 2 after the second."""
    events = [json.loads(line) for line in (EXAMPLE / "ledger.jsonl").read_text().splitlines()]
    batches = [event["payload"]["record_ids"] for event in events if event["type"] == "screening"]
    assert [event["payload"]["number"] for event in events if event["type"] == "version"] == [1, 2]
    assert check(EXAMPLE) == []
    first, second = (json.loads((example_site / "v" / str(n) / "prisma.json").read_text()) for n in (1, 2))
    assert (first["records"], second["records"]) == (len(batches[0]), len(batches[0]) + len(batches[1]))
    assert json.loads((example_site / "downloads" / "prisma.json").read_text()) == second
    titles = {rid: record["title"] for rid, record in records_of(EXAMPLE).items()}
    changes = page(example_site / "v" / "2" / "index.html").xpath("//section[@aria-labelledby='changes-heading']")[0]
    named = {a.text_content() for a in changes.xpath(".//a")}
    assert {titles[rid] for rid in batches[1]} <= named
    assert any(text.startswith("Amended to version 2") for text in named)


def test_an_interrupted_publication_is_named_then_finished(two_versions, sitegen):
    """Killed after its commit point: the new version's file is staged, the ledger already renamed."""
    path = version_file(two_versions, 2)
    path.rename(path.with_name("2.json.sitegen-new"))
    (two_versions / ".sitegen-transaction.json").write_text('["versions/2.json"]\n')
    assert {p.code for p in check(two_versions)} == {"interrupted"}
    assert sitegen("recover", two_versions)[0] == 0
    assert check(two_versions) == [] and path.is_file()


# --------------------------------------------------------------------------- what a new version is


def write_evidence(review: Path, record_id: str, finding: str, name: str = "a-study") -> Path:
    path = review / "evidence" / f"{name}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"record_id: {json.dumps(record_id)}\nfindings:\n  - finding: {json.dumps(finding)}\n"
                    "    passage:\n      text: A passage from the paper.\n      source: external\n"
                    "      location: page 3\n")
    return path


def test_changed_evidence_is_a_new_version_that_names_the_study(two_versions, tmp_path, sitegen):
    site = tmp_path / "site"
    study = json.loads(version_file(two_versions, 2).read_text())["outcomes"]["full-text"]
    record_id = next(rid for rid, outcome in study.items() if outcome["decision"] == "include")
    title = records_of(two_versions)[record_id]["title"]

    def publish_at(now: str) -> tuple[int, str, str]:
        code, out, err = sitegen("publish", two_versions, "--out", site, "--now", now)
        assert code == 0, err
        return json.loads(sorted((two_versions / "versions").glob("*.json"))[-1].read_text())["number"], out, \
            (site / "index.html").read_text()

    path = write_evidence(two_versions, record_id, "Controls discriminated the objects.")
    number, out, _ = publish_at("2023-05-01T00:00:00Z")
    assert number == 3 and "1 study with changed evidence" in out  # evidence added to an included study
    recorded = json.loads(version_file(two_versions, 3).read_text())["evidence"]
    assert list(recorded) == [record_id]

    path.write_text(path.read_text().replace("Controls discriminated", "Controls did not discriminate"))
    number, out, _ = publish_at("2023-05-02T00:00:00Z")
    assert number == 4 and out.startswith("published version 4 (2023-05-02T00:00:00Z): 1 study with changed evidence.")
    changes = page(site / "v" / "4" / "index.html").xpath("//dt[starts-with(., 'Evidence changed')]")
    assert [dt.text_content() for dt in changes] == ["Evidence changed (1)"]
    assert title in changes[0].getnext().text_content()
    assert check(two_versions) == []

    # re-formatting the file changes no evidence: no version
    path.write_text(path.read_text().replace("finding: ", "finding:   ") + "\n# a comment\n")
    number, out, _ = publish_at("2023-05-03T00:00:00Z")
    assert number == 4 and out.startswith("nothing changed since version 4")

    path.unlink()  # evidence removed from a study still included
    number, out, _ = publish_at("2023-05-04T00:00:00Z")
    assert number == 5 and "1 study with changed evidence" in out
    assert json.loads(version_file(two_versions, 5).read_text())["evidence"] == {}


def test_publish_without_a_time_refuses_to_reuse_the_latest_versions_date(two_versions, tmp_path, sitegen):
    """Only files changed (no ledger event since version 2): the ledger has no newer time to date it by."""
    study = json.loads(version_file(two_versions, 2).read_text())["outcomes"]["full-text"]
    record_id = next(rid for rid, outcome in study.items() if outcome["decision"] == "include")
    write_evidence(two_versions, record_id, "Controls discriminated the objects.")
    before = tree_bytes(two_versions)
    code, out, err = sitegen("publish", two_versions, "--out", tmp_path / "site")
    assert code == 1 and "nothing on the ledger is newer than version 2's date" in err and "--now" in err
    assert tree_bytes(two_versions) == before and not (tmp_path / "site").exists()
    # with nothing to publish, publish still builds without a time
    (two_versions / "evidence" / "a-study.yaml").unlink()
    code, out, err = sitegen("publish", two_versions, "--out", tmp_path / "site")
    assert code == 0 and out.startswith("nothing changed since version 2"), err


def test_a_version_made_by_an_incomplete_run_says_so_in_its_summary(two_versions, tmp_path):
    # A run whose source did not answer was "1 search run." in the feed, the list of versions and what publish
    # printed: read as a search that found nothing new, which a downed source is not.
    down = httpx.MockTransport(lambda request: httpx.Response(503, text="down"))
    update(two_versions, "2023-05-01T00:00:00Z", "live", settings=SETTINGS, transport=down)
    site = tmp_path / "site"
    result = publish(two_versions, site, now="2023-05-02T00:00:00Z", environ={})
    assert result.changes == "1 incomplete search run (records may be missing)."
    summaries = [entry.findtext(f"{ATOM}summary") for entry in etree.parse(site / "feed.xml").iter(f"{ATOM}entry")]
    assert summaries[0].startswith("1 incomplete search run (records may be missing).")


def test_a_phase_change_is_in_the_changelog_summary(two_versions, tmp_path, sitegen):
    code, out, err = sitegen("state", "advance", two_versions, "--at", "2023-05-01T00:00:00Z")
    assert code == 0, err
    code, out, err = sitegen("publish", two_versions, "--out", tmp_path / "site")
    assert code == 0, err
    assert out.startswith("published version 3 (2023-05-01T00:00:00Z): 1 phase change.")
    assert "no change to records" not in (tmp_path / "site" / "v" / "3" / "index.html").read_text().lower()


def test_feed_links_each_new_study_to_its_study_page_while_it_is_included(two_versions, tmp_path):
    def study_links(site: Path) -> dict[str, str]:
        feed = etree.fromstring((site / "feed.xml").read_bytes())
        return {e.findtext(f"{ATOM}id"): e.find(f"{ATOM}link").get("href") for e in feed.iter(f"{ATOM}entry")
                if not e.findtext(f"{ATOM}title").startswith("Version ")}

    config = two_versions / "review.yaml"
    config.write_text(re.sub(r"\n  base_url: \S+", "", config.read_text()))  # links relative to the site
    build(two_versions, tmp_path / "site", environ={})
    links = study_links(tmp_path / "site")
    assert links and all(re.fullmatch(r"studies/[^/]+\.html", href) for href in links.values())
    assert all((tmp_path / "site" / href).is_file() for href in links.values())
    # a study no longer included has no study page: its entry links to its record's page
    included = json.loads(version_file(two_versions, 2).read_text())["outcomes"]["full-text"]
    dropped = next(rid for rid, outcome in sorted(included.items()) if outcome["decision"] == "include")
    for sheet in (two_versions / "screening" / "full-text").glob("*.csv"):
        sheet.write_text("".join(line for line in sheet.read_text().splitlines(keepends=True)
                                 if not line.startswith(f"{dropped},")))
    build(two_versions, tmp_path / "later", environ={})
    later = study_links(tmp_path / "later")
    moved = {key: href for key, href in later.items() if href != links[key]}
    assert list(moved.values()) == [f"records/{page_slug(dropped)}.html"]
    assert (tmp_path / "later" / next(iter(moved.values()))).is_file()


def test_version_pages_keep_the_reason_labels_of_their_own_protocol(first_run, tmp_path, sitegen):
    """An amendment that relabels every exclusion reason changes the review as it stands, not the versions
    published before it: their changelogs and diagrams keep the labels of the protocol they were under."""
    protocol = first_run / "protocol.md"

    def amend(text: str, at: str) -> None:
        protocol.write_text(text)
        code, _, err = sitegen("protocol", "amend", first_run, "--at", at, "--reason", "reasons")
        assert code == 0, err

    reasons = re.search(r"^exclusion_reasons:\n(?:  .*\n)+", (EXAMPLE / "protocol.md").read_text(), re.MULTILINE)
    amend(re.sub(r"^exclusion_reasons:\n(?:  .*\n)+", reasons.group(), protocol.read_text(), flags=re.MULTILINE),
          "2023-04-11T00:00:00Z")  # the example's reasons
    sheet = first_run / "screening" / "full-text" / "reviewer-a.csv"
    header, first, *rest = sheet.read_text().splitlines()
    sheet.write_text("\n".join([header, first.split(",")[0] + ",exclude,non-rodent,", *rest]) + "\n")
    site = tmp_path / "site"
    code, _, err = sitegen("publish", first_run, "--out", site, "--now", "2023-04-12T00:00:00Z")
    assert code == 0, err
    labels = re.findall(r"^    label: (.+)$", reasons.group(), flags=re.MULTILINE)
    shown = page(site / "v" / "1" / "index.html").text_content()
    published = [label for label in labels if label in shown]
    assert published  # the version's exclusions, with their labels

    amend(re.sub(r"^    label: (.+)$", r"    label: Relabelled \1", protocol.read_text(), flags=re.MULTILINE),
          "2023-04-13T00:00:00Z")
    build(first_run, site, environ={})
    shown = page(site / "v" / "1" / "index.html").text_content()
    assert "Relabelled" not in shown and all(label in shown for label in published)
    # the review as it stands: the new labels, in its list of full-text exclusions (the home page's diagram draws
    # the new searches since version 1, none here: version 1's exclusions are in its own diagram)
    assert "Relabelled" in page(site / "records" / "list" / "excluded-full-text" / "1.html").text_content()


def correct_the_first_title(review: Path) -> None:
    """Edit the first record's title, as a reviewer correcting a provider's typo would."""
    path = review / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["title"] += " (corrected)"
    lines[0] = json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_an_edited_record_is_a_new_version_and_the_version_before_says_its_records_changed(
        two_versions, tmp_path, sitegen):
    # A version records its records' digest: a title edited since is an unpublished change, and the
    # earlier version's page, which shows records as the review holds them now, says they were edited.
    site = tmp_path / "site"
    assert len(json.loads(version_file(two_versions, 2).read_text())["records"]) == 64
    correct_the_first_title(two_versions)
    assert sitegen("check", two_versions)[0] == 0
    code, _, err = sitegen("build", two_versions, "--out", site)
    assert code == 0, err
    assert "Unpublished changes since version 2" in page(site / "index.html").text_content()
    notice = "//p[contains(@class, 'records-changed')]"
    assert page(site / "v" / "2" / "index.html").xpath(notice)
    code, _, err = sitegen("publish", two_versions, "--out", site, "--now", "2023-05-01T00:00:00Z")
    assert code == 0, err
    assert page(site / "v" / "2" / "index.html").xpath(notice) and not page(site / "v" / "3" / "index.html").xpath(notice)

    # The version an edit alone made says what changed (it said "No change to records, decisions or studies").
    code, out, _ = sitegen("publish", two_versions, "--out", site, "--now", "2023-05-02T00:00:00Z")
    assert code == 0 and "records' details changed" not in out  # nothing changed since version 3: no version
    changelog = page(site / "v" / "3" / "index.html").xpath("string(//p[@class='changelog-summary'])")
    assert changelog == "Records' details changed."
    assert "edited, or completed by a search run" in page(site / "versions.html").text_content()


def test_a_record_line_written_again_in_another_form_is_not_an_edit(two_versions, tmp_path, sitegen):
    # A version recorded the digest of each line as written: the same record with its keys in another order and
    # spaces (as `jq` or a merge tool writes it) was published as a new version, "Records' details changed", and
    # every earlier version's page said its records had been edited since.
    path = two_versions / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0] = json.dumps(dict(reversed(json.loads(lines[0]).items())), indent=None)  # escaped, keys reversed
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    site = tmp_path / "site"
    code, out, err = sitegen("publish", two_versions, "--out", site, "--now", "2023-05-01T00:00:00Z")
    assert code == 0, err
    assert out.startswith("nothing changed since version 2")
    assert not page(site / "v" / "2" / "index.html").xpath("//p[contains(@class, 'records-changed')]")
    correct_the_first_title(two_versions)  # an edit still is one
    code, out, err = sitegen("publish", two_versions, "--out", site, "--now", "2023-05-01T00:00:00Z")
    assert code == 0 and out.startswith("published version 3 (2023-05-01T00:00:00Z): Records' details changed."), err


def test_a_version_is_never_dated_as_the_one_before(two_versions, tmp_path, sitegen):
    # --now (or SOURCE_DATE_EPOCH) equal to the latest version's time recorded a second version of that time.
    latest = json.loads(version_file(two_versions, 2).read_text())["published_at"]
    correct_the_first_title(two_versions)
    before = sorted(path.name for path in (two_versions / "versions").iterdir())
    code, _, err = sitegen("publish", two_versions, "--out", tmp_path / "site", "--now", latest)
    assert code == 1 and f"is not later than version 2's ({latest})" in err
    assert sorted(path.name for path in (two_versions / "versions").iterdir()) == before


def test_check_refuses_two_versions_of_one_time(two_versions, tmp_path, monkeypatch):
    # sitegen before f01ab90 recorded a version dated as the one before it (--now given the same time), and check
    # passed the pair: published_at was only refused when earlier than the version before.
    import sitegen.living.versions as versions

    latest = json.loads(version_file(two_versions, 2).read_text())["published_at"]
    correct_the_first_title(two_versions)
    monkeypatch.setattr(versions, "refuse_same_time", lambda latest, at: None)  # as sitegen wrote then
    with pytest.raises(ReviewInvalid):  # recorded, then refused by the check its site is built after
        publish(two_versions, tmp_path / "site", latest, environ={})
    monkeypatch.undo()
    assert json.loads(version_file(two_versions, 3).read_text())["published_at"] == latest
    found = [(p.path, p.line, p.code) for p in check(two_versions) if p.code == "version-time"]
    assert found == [("versions/3.json", line_of(version_file(two_versions, 3), '"published_at"'), "version-time")]
    with pytest.raises(ReviewInvalid):  # and nothing builds from it
        build(two_versions, tmp_path / "again", environ={})


def test_a_versions_count_of_studies_stays_as_published_when_records_are_linked_later(example_copy, tmp_path):
    # Studies were grouped by the records' links as records.jsonl holds them now: linking a preprint to its journal
    # article after a version was published (as update does when it finds one) changed that version's counts.
    from sitegen.workspace import open_review

    included = sorted(open_review(example_copy).facts.included)[:2]
    path = example_copy / "records.jsonl"

    def link(linked: bool) -> None:
        lines = []
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["id"] in included:
                other = [rid for rid in included if rid != record["id"]]
                record.setdefault("custom", {})["other_versions"] = other if linked else []
                if not linked:
                    del record["custom"]["other_versions"]
            lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        path.write_text("\n".join(lines) + "\n")

    site = tmp_path / "site"
    link(True)
    config = example_copy / "review.yaml"  # the example's versions predate record digests: a change they hold
    config.write_text(config.read_text().replace("a living review (sitegen example)", "a living review"))
    version = publish(example_copy, site, now="2023-06-01T00:00:00Z", environ={}).version
    linked_counts = json.loads((site / "v" / str(version.number) / "prisma.json").read_text())
    assert version.studies == {included[1]: included[0], included[0]: included[0]}
    link(False)  # the links removed since: now two studies, but not in the version published as one
    build(example_copy, site, environ={})
    assert json.loads((site / "v" / str(version.number) / "prisma.json").read_text()) == linked_counts
    assert json.loads((site / "downloads" / "prisma.json").read_text())["studies_included"] == \
        linked_counts["studies_included"] + 1


def test_a_versions_page_counts_its_studies_as_its_diagram_does(two_versions, tmp_path):
    # The list of a version's included studies was headed by its number of records: a preprint linked to its
    # journal article made it "Included studies (N)" beside a diagram of N - 1 studies.
    from sitegen.workspace import open_review

    included = sorted(open_review(two_versions).facts.included)[:2]
    path = two_versions / "records.jsonl"
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["id"] in included:
            record.setdefault("custom", {})["other_versions"] = [rid for rid in included if rid != record["id"]]
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    site = tmp_path / "site"
    publish(two_versions, site, now="2023-05-01T00:00:00Z", environ={})
    studies = json.loads((site / "v" / "3" / "prisma.json").read_text())["studies_included"]
    reports = len(page(site / "v" / "3" / "index.html").xpath("//ul[@class='version-studies']/li"))
    assert reports == studies + 1
    heading = page(site / "v" / "3" / "index.html").xpath("string(//h2[@id='version-studies-heading'])")
    assert heading == f"Included studies ({reports} reports of {studies} studies)"


def test_a_version_holds_record_ids_as_long_as_records_have_them():
    # Keys of `duplicates` and `studies` were limited to 200 characters: a review holding a DOI of 300 could not
    # publish (a ValidationError).
    from sitegen.review.models import VersionRecord

    long_id = "10.1234/" + "a" * 500
    data = json.loads((EXAMPLE / "versions" / "1.json").read_text())
    record = VersionRecord.model_validate({**data, "duplicates": {long_id: "10.1234/b"}, "studies": {long_id: long_id}})
    assert record.studies == {long_id: long_id}


def test_the_latest_version_says_so_when_the_review_has_changed_since(two_versions, tmp_path):
    # It called itself "an earlier version" while no later one was published.
    from sitegen.workspace import open_review

    changed = open_review(two_versions).facts.included[0]
    for path in (two_versions / "screening" / "full-text").glob("*.csv"):
        lines = path.read_text(encoding="utf-8").splitlines()
        path.write_text("\n".join(line for line in lines if not line.startswith(f"{changed},")) + "\n", encoding="utf-8")
    site = tmp_path / "site"
    build(two_versions, site, environ={})
    latest = " ".join((site / "v" / "2" / "index.html").read_text().split())
    assert "This is the latest published version, kept as it was published; the review has changed since" in latest
    assert "This is an earlier version" not in latest
    assert "This is an earlier version" in (site / "v" / "1" / "index.html").read_text()


def test_a_duplicate_confirmed_alone_is_a_version_that_says_so(tmp_path, sitegen):
    # duplicates.csv changes the counts (the duplicate is removed before screening) and is recorded by a version,
    # but the changelog had no word for it: the version a confirmed duplicate alone made said "No change to
    # records, decisions or studies.", in the publish output, the versions page and the feed.
    entry = "TY  - JOUR\nTI  - Object-in-context memory in aged rats\nAU  - Kim, Lee\nPY  - 2021\n{}ER  - \n\n"
    review, (code, _, err) = review_of_ris(tmp_path, entry.format("DO  - 10.1000/c1\n") + entry.format(""))
    assert code == 0, err
    site = tmp_path / "site"
    assert sitegen("publish", review, "--out", site, "--now", "2026-01-03T00:00:00Z")[0] == 0
    [duplicate] = [record["id"] for record in map(json.loads, (review / "records.jsonl").read_text().splitlines())
                   if record["id"].startswith("ref:")]
    (review / "duplicates.csv").write_text(f"record_id,duplicate_of,decision,reviewer,note\n"
                                           f"{duplicate},10.1000/c1,same,ann,one work\n")
    code, out, err = sitegen("publish", review, "--out", site, "--now", "2026-01-04T00:00:00Z")
    assert code == 0, err
    assert out.startswith("published version 2 (2026-01-04T00:00:00Z): 1 record confirmed as a duplicate.")
    changes = page(site / "v" / "2" / "index.html").xpath("string(//dl[@class='changelog'])")
    assert "confirmed a duplicate of Object-in-context memory in aged rats" in " ".join(changes.split())
    (review / "duplicates.csv").unlink()
    code, out, err = sitegen("publish", review, "--out", site, "--now", "2026-01-05T00:00:00Z")
    assert code == 0, err
    assert out.startswith("published version 3 (2026-01-05T00:00:00Z): 1 record no longer a duplicate.")


def test_a_version_published_after_a_reason_was_retired_still_names_the_reason(tmp_path, sitegen):
    # Decisions made before an amendment retired a reason keep it, and the review as it stands names it by its
    # label; a version published under the amended protocol showed the bare code in its diagram and changelog.
    entry = "TY  - JOUR\nTI  - Context memory in voles\nPY  - 2021\nDO  - 10.1000/v1\nER  - \n"
    review, (code, _, err) = review_of_ris(tmp_path, entry)
    assert code == 0, err
    for stage, reviewer in [(s, r) for s in ("title-abstract", "full-text") for r in ("ann", "bob")]:
        decision = "include," if stage == "title-abstract" else "exclude,wrong-population"
        (review / "screening" / stage / f"{reviewer}.csv").write_text(
            f"record_id,decision,reason,note\n10.1000/v1,{decision},\n")
    protocol = review / "protocol.md"
    protocol.write_text(protocol.read_text().replace("  - code: wrong-population\n    label: Population not in scope\n",
                                                     ""))
    code, _, err = sitegen("protocol", "amend", review, "--at", "2026-01-03T00:00:00Z", "--reason", "Retired")
    assert code == 0, err
    site = tmp_path / "site"
    code, _, err = sitegen("publish", review, "--out", site, "--now", "2026-01-04T00:00:00Z")
    assert code == 0, err
    version = page(site / "v" / "1" / "index.html")
    assert "excluded (Population not in scope: 1)" in version.text_content()
    assert "exclude: Population not in scope" in version.xpath("string(//dl[@class='changelog'])")


def test_a_version_made_by_a_validation_alone_says_so(two_versions, tmp_path, sitegen):
    # Every ledger event makes a version, but the changelog had no word for verdicts and validations: the version
    # a `monitor validate --at` alone made said "No change to records, decisions or studies."
    code, _, err = sitegen("monitor", "validate", two_versions, "--at", "2023-05-01T00:00:00Z")
    assert code in (0, 7), err
    site = tmp_path / "site"
    code, out, err = sitegen("publish", two_versions, "--out", site, "--now", "2023-05-02T00:00:00Z")
    assert code == 0, err
    assert out.startswith("published version 3 (2023-05-02T00:00:00Z): 1 search validation.")
    changes = page(site / "v" / "3" / "index.html").xpath("string(//dl[@class='changelog'])")
    assert "saved search" in changes and "known-relevant studies retrieved" in changes


def test_publish_with_nothing_changed_keeps_the_latest_versions_date(example_copy, tmp_path):
    """Nothing changed since version 2: no version is recorded, and the site says it was last updated when
    version 2 was published, not at --now (it said 'last updated 2026-02-01' beside 'nothing changed')."""
    before = tree_bytes(example_copy)
    code, out, err = run_cli("publish", example_copy, "--out", tmp_path / "site", "--now", "2026-02-01T00:00:00Z")
    assert code == 0, err
    said, built = out.splitlines()
    assert said == "nothing changed since version 2 of 2023-04-17; no new version"
    assert built.endswith("last updated 2023-04-17T00:00:00Z)")
    assert tree_bytes(example_copy) == before
    assert "2026-02-01" not in (tmp_path / "site" / "index.html").read_text()


def many_versions(folder: Path, count: int) -> Path:
    """A review of three records published `count` times, a decision changed between each version and the next."""
    from test_site_shapes import decide, record, with_records

    review = with_records(folder, [record(n) for n in range(3)])
    for n in range(count):
        first = ("include", "") if n % 2 == 0 else ("exclude", "wrong-population")
        decide(review, "title-abstract", {who: [first, ("include", ""), ("include", "")] for who in ("a", "b")})
        assert publish(review, folder / "site", now=f"2026-03-{n + 1:02d}T00:00:00Z", environ={}).version.number == n + 1
    return review


def test_the_list_of_versions_is_paged_newest_first_with_links_that_resolve(tmp_path, monkeypatch):
    # versions.html held every version with its changelog: a review published weekly for years made one page of
    # hundreds of sections, growing with every version. Its pages hold VERSIONS_PER_PAGE each, as records lists do.
    from test_site_reading import crawl_problems

    from sitegen.site import versions

    monkeypatch.setattr(versions, "VERSIONS_PER_PAGE", 2, raising=False)
    review = many_versions(tmp_path, 7)
    site = tmp_path / "site"
    paths = ["versions.html", "versions/2.html", "versions/3.html", "versions/4.html"]
    shown = []
    for number, path in enumerate(paths, start=1):
        document = page(site / path)
        numbers = [int(h2.get("id").removeprefix("version-")) for h2 in document.xpath("//section[@class='version']/h2")]
        assert len(numbers) <= 2
        shown += numbers
        assert document.findtext(".//title").startswith(f"Versions (page {number} of 4)")
        assert document.xpath("//nav[@class='pager']//a[@aria-current='page']/text()") == [str(number)] * 2
    assert shown == [7, 6, 5, 4, 3, 2, 1]  # each version once, newest first
    assert not (site / "versions" / "5.html").exists()
    assert crawl_problems(site) == []  # the pages' links (from versions/, one folder down) and the pagers' resolve
    # Built afresh, every file is the one the publications built page by page (the manifest's times aside: a
    # page kept from an earlier build keeps its time).
    build(review, tmp_path / "again", now="2026-03-07T00:00:00Z", environ={})
    assert drop_manifest(tree_bytes(tmp_path / "again")) == drop_manifest(tree_bytes(site))

    # Between publications (a decision changed, then another) the versions' pages, and the list's pages but the
    # first (which says what is not yet published), keep their keys: the writer keeps them, not rendering them again.
    from test_site_shapes import decide

    def decided(first: tuple[str, str], now: str) -> dict[str, str | None]:
        decide(review, "title-abstract", {who: [first, ("exclude", "wrong-population"), ("include", "")]
                                          for who in ("a", "b")})
        build(review, site, now=now, environ={})
        files = json.loads((site / ".sitegen-manifest.json").read_text())["files"]
        return {path: written["key"] for path, written in files.items()}

    before = decided(("include", ""), "2026-04-01T00:00:00Z")
    after = decided(("exclude", "wrong-population"), "2026-04-02T00:00:00Z")
    kept = {path for path in after if after[path] is not None and after[path] == before[path]}
    assert {f"v/{n}/index.html" for n in range(1, 8)} | set(paths[1:]) <= kept
    assert "versions.html" not in kept and "records.html" not in kept


def drop_manifest(files: dict[str, bytes]) -> dict[str, bytes]:
    return {path: content for path, content in files.items() if path != ".sitegen-manifest.json"}
