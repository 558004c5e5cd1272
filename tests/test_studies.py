"""Study pages, the list of included studies and the evidence table, on the real example review."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLE, rendered
from hypothesis import given
from hypothesis import strategies as st
from lxml import html as lxml_html
from pydantic import ValidationError
from test_build import XSS, hostile_review
from test_verification_pages import ONE_INDEX, ONE_INDEX_STATUS, axis_sections, without_verification

from sitegen.living.ledger import append
from sitegen.records.model import CslName, Record, RecordMeta, retraction_disputed, web_address_problem
from sitegen.records.notices import NOTICE_TYPES
from sitegen.review.models import VERIFICATION_AXES, PassageCheck, VerificationPayload
from sitegen.review.transaction import Transaction
from sitegen.site.pages import Site, page_slug
from sitegen.site.records import record_pages
from sitegen.site.studies import (
    EVIDENCE_CSV_COLUMNS,
    KIND_SENTENCES,
    TYPE_SENTENCES,
    notices,
    reference,
    retraction_sentence,
    standing_tag,
    standing_tag_html,
    study_label,
    study_links,
    study_pages,
    vancouver_name,
    web_address,
)
from sitegen.workspace import open_review, writable

# A DOI a record may hold (a SICI DOI's '<' and '>') that holds every character a page must escape: markup after a
# DOI ends it ("10.1234/<script>" is the DOI 10.1234/), so a notice's DOI cannot carry a whole tag.
HOSTILE_DOI = '10.1234/a<1>&"x'


def one_spaced(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="module")
def example():
    return open_review(EXAMPLE)


def study_files(root: Path) -> dict[str, str]:
    """The files of the study page group for a review, rendered in memory: the pages under test,
    without the rest of the site or its search index (the example site's tests cover the whole)."""
    workspace = open_review(root)
    return rendered(study_pages(Site(workspace.review, workspace.facts, None)))


def site_files(site: Path) -> dict[str, str]:
    return {path.relative_to(site).as_posix(): path.read_text() for path in site.rglob("*")
            if path.suffix in (".html", ".csv")}


def page_text(page: str) -> str:
    return one_spaced(lxml_html.fromstring(page).find(".//main").text_content())


def evidence_rows(files: dict[str, str]) -> list[list[str]]:
    tree = lxml_html.fromstring(files["evidence.html"])
    return [[one_spaced(cell.text_content()) for cell in row.iter("td")]
            for row in tree.findall(".//table[@class='evidence stack-on-phone']/tbody/tr")]


def csv_rows(files: dict[str, str]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files["downloads/evidence.csv"])))


def study_page(record_id: str) -> str:
    return f"studies/{page_slug(record_id)}.html"


@pytest.fixture(scope="module")
def built(example_site) -> dict[str, str]:
    return site_files(example_site)


# --------------------------------------------------------------------------- the example site


def test_one_study_page_per_included_study_and_none_for_others(example, built):
    included = example.facts.included
    assert included, "the example review includes studies"
    assert {path for path in built if path.startswith("studies/")} == {study_page(i) for i in included}
    others = [record_id for record_id in example.review.records if record_id not in included]
    assert others and not any(study_page(record_id) in built for record_id in others)


def test_study_page_shows_the_study(example, built):
    for record_id in example.facts.included:
        record = example.review.records[record_id]
        page = built[study_page(record_id)]
        text = page_text(page)
        assert one_spaced(record.title) in text
        assert reference(record) in text  # "Cite this study"
        for link in study_links(record):
            assert f"{link.label}: {link.value}" in text and f'href="{link.url}"' in page
        # each stage's outcome, and each reviewer's decision at it
        assert "Title and abstract" in text and "Full text" in text
        for row in (row for row in example.review.decisions if row.decision.record_id == record_id):
            assert row.decision.decision in text
        assert f'href="../records/{page_slug(record_id)}.html"' in page


def test_the_example_shows_its_verification_run_on_every_study_page(example, built):
    """Verified against OpenAlex alone: identity and status are open items (one index asked, one index holding
    the work), and faithfulness verified where evidence was extracted, with nothing to check elsewhere."""
    with_evidence = {item.evidence.record_id for item in example.review.evidence}
    for record_id in example.facts.included:
        page = built[study_page(record_id)]
        axes = axis_sections(page)
        assert axes["axis-identity"].startswith(f"Identity: the work exists as cited Open item: needs a human. "
                                                f"{ONE_INDEX}")
        assert axes["axis-status"].startswith(
            f"Status: retracted, corrected or not Open item: needs a human. {ONE_INDEX_STATUS}")
        assert axes["axis-faithfulness"].startswith(
            "Faithfulness: the passages occur in its text " + ("verified: " if record_id in with_evidence
                                                               else "nothing to check: no evidence extracted"))
        assert "Recorded 2023-04-17" in axes["axis-identity"] and "Recorded 2023-04-17" in axes["axis-status"]
        assert "not yet verified" not in page_text(page).lower()
        assert 'class="refusal"' not in page and 'class="retracted-notice"' not in page


def test_a_study_never_verified_says_so(example):
    """Before any verification run (the example with its verification events left out in memory)."""
    files = rendered(study_pages(Site(without_verification(example.review), example.facts, None)))
    for record_id in example.facts.included:
        page = files[study_page(record_id)]
        assert "Not yet verified." in page_text(page)
        with_evidence = any(item.evidence.record_id == record_id for item in example.review.evidence)
        # faithfulness has nothing to check until evidence is extracted, and says so
        assert page_text(page).count("not yet verified") == len(VERIFICATION_AXES) - (not with_evidence)
        assert ("nothing to check: no evidence extracted" in page_text(page)) is not with_evidence
        assert 'class="verdict ' not in page  # no verdict shown that the ledger does not hold


def test_study_page_shows_every_finding_with_its_passage(example, built):
    for item in example.review.evidence:
        text = page_text(built[study_page(item.evidence.record_id)])
        for finding in item.evidence.findings:
            assert one_spaced(finding.finding) in text
            assert one_spaced(finding.passage.text) in text
            if finding.passage.source == "abstract":
                assert "From the abstract; checked verbatim" in text
    without = [record_id for record_id in example.facts.included
               if record_id not in {item.evidence.record_id for item in example.review.evidence}]
    assert without
    assert "No evidence has been extracted from this study yet." in page_text(built[study_page(without[0])])


def test_included_list_counts_and_links_every_study(example, built):
    tree = lxml_html.fromstring(built["included.html"])
    rows = tree.findall(".//table[@data-table-tools='studies']/tbody/tr")
    included = example.facts.included
    assert len(rows) == len(included)
    assert {row.find(".//a").get("href") for row in rows} == {study_page(record_id) for record_id in included}
    findings = sum(len(item.evidence.findings) for item in example.review.evidence)
    text = page_text(built["included.html"])
    assert f"{len(included)} studies included after full-text assessment" in text
    assert f"{len(example.review.evidence)} have extracted evidence ({findings} findings" in text
    assert f"{len(included) - len(example.review.evidence)} await extraction" in text
    years = [int(cells[1].text_content()) for cells in (row.findall("td") for row in rows)
             if cells[1].text_content()]
    assert years == sorted(years, reverse=True)  # newest first
    counts = {row.find(".//a").get("href"): row.findall("td")[3].text_content().strip() for row in rows}
    for item in example.review.evidence:
        assert counts[study_page(item.evidence.record_id)] == str(len(item.evidence.findings))


def test_every_finding_is_in_the_evidence_table_and_the_csv(example, built):
    expected = [(item.evidence.record_id, finding) for item in example.review.evidence
                for finding in item.evidence.findings]
    rows = evidence_rows(built)
    assert len(rows) == len(expected)
    for record_id, finding in expected:
        row = next(row for row in rows if row[5] == one_spaced(finding.finding))
        assert row[2] == one_spaced(finding.population or "not extracted")
        assert row[7].startswith(one_spaced(finding.passage.text))
        assert row[0].startswith(study_label(example.review.records[record_id]))
    exported = csv_rows(built)
    assert list(exported[0]) == EVIDENCE_CSV_COLUMNS
    assert sorted((row["study_id"], one_spaced(row["finding"]), one_spaced(row["passage"])) for row in exported) == \
        sorted((record_id, one_spaced(f.finding), one_spaced(f.passage.text)) for record_id, f in expected)
    assert 'href="downloads/evidence.csv"' in built["evidence.html"]
    assert 'src="assets/table-tools.js"' in built["evidence.html"]
    assert 'href="evidence.html"' in built["index.html"]  # in the navigation


def test_study_pages_link_within_the_site(example_site, built):
    page = next(page for path, page in built.items() if path.startswith("studies/"))
    assert 'href="../assets/style.css"' in page
    assert 'href="../evidence.html"' in page and 'href="../included.html"' in page
    assert (example_site / "assets" / "table-tools.js").is_file()


# --------------------------------------------------------------------------- verification verdicts


def test_recorded_verdicts_appear_on_the_study_page(example_copy):
    with writable(example_copy) as workspace:
        with_evidence = {item.evidence.record_id for item in workspace.review.evidence}
        record_id = next(i for i in workspace.facts.included if i in with_evidence)
        hashes = sorted(workspace.review.snapshot_bodies)[:2]
        transaction = Transaction(example_copy)
        append(transaction, workspace.review, "2023-05-01T00:00:00Z", [
            VerificationPayload(record_id=record_id, axis="identity", verdict="inconclusive", refusal_grade=False,
                                reasons=["only one index holds the paper"], snapshot_hashes=hashes),
            VerificationPayload(record_id=record_id, axis="status", verdict="retracted", refusal_grade=True,
                                reasons=["a retraction notice names this DOI"]),
        ])
        transaction.commit()
    with writable(example_copy) as workspace:  # a later verdict on one axis replaces the earlier one
        transaction = Transaction(example_copy)
        append(transaction, workspace.review, "2023-05-02T00:00:00Z", [
            VerificationPayload(record_id=record_id, axis="identity", verdict="verified", refusal_grade=False)])
        transaction.commit()
    files = study_files(example_copy)  # the review with these events is valid: it opens without a problem
    tree = lxml_html.fromstring(files[study_page(record_id)])
    axes = {one_spaced(section.find("h3").text_content()).split(":")[0]: one_spaced(section.text_content())
            for section in tree.findall(".//section[@class='axis']")}
    assert axes["Identity"].endswith("verified: the work exists as cited. Recorded 2023-05-02.")
    assert axes["Status"].endswith("Refusal grade: refuse or fix before publishing. retracted: this work was retracted. "
                                   "Recorded 2023-05-01. a retraction notice names this DOI")
    # the axis no later verdict touched keeps the example run's verdict
    assert axes["Faithfulness"].startswith("Faithfulness: the passages occur in its text verified: ")
    assert "Recorded 2023-04-17" in axes["Faithfulness"]
    text = page_text(files[study_page(record_id)])
    assert "Not yet verified." not in text and "only one index holds the paper" not in text
    assert ONE_INDEX not in text  # the run's open identity verdict is replaced
    other = next(i for i in open_review(example_copy).facts.included if i != record_id)
    assert axis_sections(files[study_page(other)])["axis-identity"].startswith(
        f"Identity: the work exists as cited Open item: needs a human. {ONE_INDEX}")  # other studies keep theirs


def test_verification_needs_an_axis():
    with pytest.raises(ValueError, match="axis"):
        VerificationPayload.model_validate({"record_id": "10.1002/hipo.22095", "verdict": "verified",
                                            "refusal_grade": False})


# --------------------------------------------------------------------------- hostile input


def test_hostile_text_is_escaped_on_every_study_view(example_copy):
    files = study_files(hostile_review(example_copy))
    for path in (study_page("10.1002/hipo.22095"), "included.html", "evidence.html"):
        assert XSS in page_text(files[path]), path
        assert "<script>alert" not in files[path], path
    assert f"Mallory {XSS}" in page_text(files["evidence.html"])  # the study's label, from its first author


def rewrite_record(review: Path, record_id: str, **custom: object) -> None:
    records = [json.loads(line) for line in (review / "records.jsonl").read_text().splitlines()]
    next(record for record in records if record["id"] == record_id)["custom"].update(custom)
    (review / "records.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))


def test_evidence_csv_is_neutralised_and_links_stay_web_addresses(example_copy):
    evidence_path = next((example_copy / "evidence").glob("*.yaml"))
    evidence = yaml.safe_load(evidence_path.read_text())
    record_id = evidence["record_id"]
    finding = evidence["findings"][0]
    finding["finding"] = '=HYPERLINK("https://attacker.example","click")'
    finding["passage"] = {"text": "@SUM(1+1)*cmd|' /C calc'!A0", "source": "fulltext", "location": "Results"}
    evidence_path.write_text(yaml.safe_dump(evidence, allow_unicode=True))
    rewrite_record(example_copy, record_id, fulltext_url=None, license="cc-by")  # (only web addresses: below)
    files = study_files(example_copy)
    row = next(row for row in csv_rows(files) if row["study_id"] == record_id)
    assert row["finding"].startswith("'=HYPERLINK") and row["passage"].startswith("'@SUM")
    assert (row["passage_source"], row["passage_location"], row["licence"], row["source_url"]) == \
        ("fulltext", "Results", "cc-by", "")
    for path in ("evidence.html", study_page(record_id)):
        assert "javascript:" not in files[path]
        assert "From the full text, Results, licence cc-by; not checked automatically." in page_text(files[path])


@pytest.mark.parametrize("field", ["URL", "fulltext_url"])
@pytest.mark.parametrize("address", ["javascript:alert(1)", "data:text/html,x", "www.example.org/paper", "https://",
                                     "https://www.nature.com@evil.example/", "https://user:pass@host/",
                                     "https://www.n\u0430ture.com/", "https://evil.example\\@doi.org/"])
def test_a_record_holds_only_web_addresses(sitegen, example_copy, field, address):
    # A record's addresses are linked from its pages and written into every download: a record holding
    # any other is refused at its line, before a page or a download could carry it.
    path = example_copy / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[7])
    (record["custom"] if field == "fulltext_url" else record)[field] = address
    lines[7] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "records.jsonl:8:" in out and "is not a web address" in out


def test_full_text_passages_name_their_licence_and_source_and_retractions_show(example_copy):
    evidence_path = next((example_copy / "evidence").glob("*.yaml"))
    evidence = yaml.safe_load(evidence_path.read_text())
    record_id = evidence["record_id"]
    evidence["findings"][0]["passage"].update(source="fulltext", location="Discussion, paragraph 2")
    evidence["findings"].append({"finding": "A second finding, from a figure.",
                                 "passage": {"text": "Figure 3 shows it.", "source": "external",
                                             "location": "Figure 3"}})
    evidence_path.write_text(yaml.safe_dump(evidence, allow_unicode=True))
    rewrite_record(example_copy, record_id, fulltext_url="https://europepmc.org/articles/PMC1", license="cc-by",
                   retracted=True)
    files = study_files(example_copy)
    study = files[study_page(record_id)]
    assert ("From the full text, Discussion, paragraph 2, licence cc-by, https://europepmc.org/articles/PMC1; "
            "not checked automatically.") in page_text(study)
    assert 'href="https://europepmc.org/articles/PMC1"' in study
    assert "This study is retracted according to at least one source." in page_text(study)
    listed = lxml_html.fromstring(files["included.html"]).xpath(f"//tbody/tr[.//a[@href='{study_page(record_id)}']]")
    assert "Retracted" in listed[0].text_content()
    assert "From an external source: Figure 3; not checked automatically." in page_text(files["evidence.html"])
    rows = [row for row in csv_rows(files) if row["study_id"] == record_id]
    assert [(r["passage_source"], r["licence"], r["source_url"]) for r in rows] == [
        ("fulltext", "cc-by", "https://europepmc.org/articles/PMC1"), ("external", "", "")]


def test_what_verification_found_of_each_passage_is_shown_with_the_passage(example_copy):
    # The study page's verification section said two passages were found in a CC BY full text and one was not;
    # the evidence block, the evidence table and its CSV said "not checked automatically" with the record's licence.
    from test_verification_pages import record as record_verdicts
    from test_verification_pages import verdict

    from sitegen.review.models import PassageCheck

    evidence_path = next((example_copy / "evidence").glob("*.yaml"))
    evidence = yaml.safe_load(evidence_path.read_text())
    record_id = evidence["record_id"]
    evidence["findings"][0]["passage"].update(source="fulltext", location="Discussion")
    evidence["findings"].append({"finding": "A second finding.", "passage": {"text": "Not in the paper at all.",
                                                                             "source": "fulltext"}})
    evidence_path.write_text(yaml.safe_dump(evidence, allow_unicode=True))
    rewrite_record(example_copy, record_id, fulltext_url="https://doi.org/10.1/publisher", license="implied-oa")
    found = len(evidence["findings"]) - 2
    checks = [PassageCheck(finding=n, source=item["passage"]["source"], result="found", found_in="abstract")
              for n, item in enumerate(evidence["findings"][:-1])]
    checks[0] = PassageCheck(finding=0, source="fulltext", result="found", found_in="fulltext",
                             section="Abstract › Conclusion", licence="CC BY", url="https://europepmc.org/article/PMC9")
    checks.append(PassageCheck(finding=found + 1, source="fulltext", result="not-found"))
    record_verdicts(example_copy, ("2023-05-01T00:00:00Z", [verdict(record_id, "faithfulness", "not-found",
                                                                    passages=checks)]))
    files = study_files(example_copy)
    for text in (page_text(files[study_page(record_id)]), page_text(files["evidence.html"])):
        assert ("From the full text, Abstract › Conclusion, licence CC BY, https://europepmc.org/article/PMC9; "
                "found verbatim in the full text by verification.") in text
        assert ("From the full text, licence implied-oa, https://doi.org/10.1/publisher; not found in the text "
                "verification read") in text
        assert "not checked automatically" not in text
    rows = [row for row in csv_rows(files) if row["study_id"] == record_id]
    assert [(r["licence"], r["source_url"], r["passage_checked"]) for r in (rows[0], rows[-1])] == [
        ("CC BY", "https://europepmc.org/article/PMC9", "found in the full text"),
        ("implied-oa", "https://doi.org/10.1/publisher", "not found")]


def test_a_review_with_no_inclusions_says_so(tmp_path, sitegen):
    review = tmp_path / "review"
    sitegen("init", review)
    files = study_files(review)
    assert "No study has been included yet." in page_text(files["included.html"])
    assert "No evidence has been extracted yet." in page_text(files["evidence.html"])
    assert csv_rows(files) == []
    assert files["downloads/evidence.csv"].startswith('"study_id","study"')


# --------------------------------------------------------------------------- the pure formatting


def record(**fields) -> Record:
    data = {"id": "10.1000/x", "DOI": "10.1000/x", "title": "A title", **fields}
    return Record.model_validate(data)


def test_reference_is_vancouver_style():
    names = [{"family": "Langston", "given": "Rosamund F."}, {"family": "Wood", "given": "Emma R"},
             {"literal": "The OiC Consortium"}]
    cited = record(author=names, title="Associative recognition and the hippocampus",
                   **{"container-title": "Hippocampus", "issued": {"date-parts": [[2010]]}},
                   volume="20", issue="10", page="1139-1153")
    assert reference(cited) == ("Langston RF, Wood ER, The OiC Consortium. Associative recognition and the "
                                "hippocampus. Hippocampus. 2010;20(10):1139-1153. doi:10.1000/x")
    seven = record(author=[{"family": f"Author{n}", "given": "Jean-Paul"} for n in range(7)], title="Why?")
    assert reference(seven) == ("Author0 JP, Author1 JP, Author2 JP, Author3 JP, Author4 JP, Author5 JP, et al. "
                                "Why? doi:10.1000/x")
    assert reference(record(title="Bare.")) == "Bare. doi:10.1000/x"
    assert vancouver_name(CslName(family="Cher")) == "Cher"


def test_study_label_names_the_first_author_and_year():
    issued = {"issued": {"date-parts": [[2013]]}}
    assert study_label(record(author=[{"family": "Wilson", "given": "D"}], **issued)) == "Wilson 2013"
    assert study_label(record(author=[{"family": "Dix"}, {"family": "Aggleton"}], **issued)) == "Dix and Aggleton 2013"
    assert study_label(record(author=[{"literal": "David Wilson"}, {"family": "B"}, {"family": "C"}])) == \
        "David Wilson et al."
    assert study_label(record(title="Anonymous and undated")) == "Anonymous and undated"


def test_links_follow_the_identifiers_the_record_has():
    full = Record.model_validate({"id": "10.1000/x(1)", "DOI": "10.1000/x(1)", "PMID": "123", "PMCID": "PMC9",
                                  "title": "T", "custom": {"openalex": "W1", "arxiv": "2101.00001"}})
    assert [(link.label, link.url) for link in study_links(full)] == [
        ("DOI", "https://doi.org/10.1000/x%281%29"), ("PubMed", "https://pubmed.ncbi.nlm.nih.gov/123/"),
        ("PubMed Central", "https://pmc.ncbi.nlm.nih.gov/articles/PMC9/"),
        ("Europe PMC", "https://europepmc.org/article/PMC/PMC9"), ("OpenAlex", "https://openalex.org/W1"),
        ("arXiv", "https://arxiv.org/abs/2101.00001")]
    pubmed_only = Record.model_validate({"id": "pmid:123", "PMID": "123", "title": "T"})
    assert [(link.label, link.url) for link in study_links(pubmed_only)] == [
        ("PubMed", "https://pubmed.ncbi.nlm.nih.gov/123/"), ("Europe PMC", "https://europepmc.org/article/MED/123")]


def test_notices_come_from_what_the_record_says():
    assert notices(record()) == []
    retracted = record(custom={"retracted": True, "publication_types": ["Journal Article", "Expression of Concern"]})
    assert notices(retracted) == ["This study is retracted according to at least one source.",
                                  "The source lists an expression of concern for this record."]
    assert notices(record(custom={"publication_types": ["retraction-notice", "Retraction of Publication"]})) == [
        "This record is a retraction notice, not a study."]


_TYPES = st.sampled_from(sorted({*TYPE_SENTENCES, *NOTICE_TYPES, "Retraction Notice", " erratum ", "Journal Article",
                                  "article", "Comment", "Letter", "review", "Published Erratum", "preprint"}))
_UPDATES = st.lists(st.builds(dict, kind=st.sampled_from(["retraction", "correction", "expression-of-concern"]),
                              date=st.sampled_from([[2020, 1, 5], [2022]])), max_size=3)


@given(st.lists(_TYPES, max_size=4), st.booleans(), _UPDATES, st.sampled_from(["study", "record"]),
       st.lists(st.just({"date": [2021, 6, 30], "retracted_on": [2019, 3, 1]}), max_size=1))
def test_notices_ask_only_what_a_record_has_and_say_what_they_said(types, retracted, updates, noun, reinstatements):
    """`notices` asks for a retraction's or an update's sentences only of a record that has one, and reads its types'
    sentences once for each list of types: the same sentences, in the same order, as asking everything of each."""
    from sitegen.records.notices import notice_kind
    from sitegen.site.studies import KIND_SENTENCES, update_sentences

    said = record(custom={"publication_types": types, "retracted": retracted, "updates": updates,
                          "reinstatements": reinstatements, "sources": ["crossref"]})
    found = [sentence] if (sentence := retraction_sentence(said, noun)) else []
    found += update_sentences(said, noun)
    for kind in types:
        notice = TYPE_SENTENCES.get(kind.lower())
        if notice and notice not in found:
            found.append(notice)
    lowered = [kind.strip().lower() for kind in types]
    noticed = [kind for kind in lowered if kind in NOTICE_TYPES]
    if not set(lowered) & TYPE_SENTENCES.keys() and noticed and (kind := notice_kind("", noticed)):
        found.append(KIND_SENTENCES[kind])
    assert notices(said, noun) == found


@pytest.mark.parametrize(("value", "linked"), [("https://example.org/a", True), ("HTTP://example.org", True),
                                                ("javascript:alert(1)", False), (" https://x", False),
                                                ("data:text/html,x", False), (None, False)])
def test_only_web_addresses_become_links(value, linked):
    assert web_address(value) == (value if linked else None)


@pytest.mark.parametrize(("value", "kept"), [
    # a user or a password before the host: the page would read as nature.com and lead to evil.example
    ("https://www.nature.com@evil.example/", None), ("https://user:pass@host/paper", None),
    ("http://doi.org:80@evil.example/", None),
    # what a page cannot show or a download would split at; a backslash before the path, read as '/' by browsers
    ("https://host/a b", None), ("https://host/a\tb", None), ("https://host/a\nER  - ", None),
    ("https://ex\u200bample.org/", None), ("https://example.org/\u202egpj.exe", None), ("https://host/\xa0", None),
    ("https://evil.example\\@doi.org/", None),
    # no host, or one that cannot be: a percent-encoded host, which browsers decode
    ("https:///evil.example", None), ("https://host:99999/", None), ("https://%65vil.example/", None),
    ("https://-evil.example/", None), ("https://a..b/", None),
    # a host outside ASCII as the xn-- name a browser goes to: a look-alike shows as what it is
    ("https://www.n\u0430ture.com/x", "https://www.xn--nture-4ve.com/x"),
    ("https://b\u00fccher.example/caf\u00e9", "https://xn--bcher-kva.example/caf\u00e9"),
    # kept as written: what follows the host (a SICI DOI's address), a port, an IPv6 host, '@' after the host
    ("https://doi.org/10.1002/(sici)1097-4636(199703)35:1<1::aid-jbm1>3.0.co;2-r",
     "https://doi.org/10.1002/(sici)1097-4636(199703)35:1<1::aid-jbm1>3.0.co;2-r"),
    ("https://example.org:8443/a?b=1#c", "https://example.org:8443/a?b=1#c"), ("http://[::1]/x", "http://[::1]/x"),
    ("https://example.org/a{b}\\c", "https://example.org/a{b}\\c"),
    ("https://example.org/@user", "https://example.org/@user"), ("https://example.org#@evil", "https://example.org#@evil"),
])
def test_an_address_that_hides_where_it_leads_is_refused_or_written_as_it_leads(value, kept):
    assert web_address(value) == kept
    assert (web_address_problem(value) is None) == (kept == value)


def test_a_full_texts_address_from_verification_follows_the_records_rule():
    # A passage's full text is linked from the study's page like a record's addresses, and read from the ledger.
    found = {"finding": 0, "source": "fulltext", "result": "found", "found_in": "fulltext"}
    assert PassageCheck(**found, url="https://europepmc.org/articles/PMC1").url == "https://europepmc.org/articles/PMC1"
    for url in ("https://reader:secret@europepmc.org/articles/PMC1", "http://europepmc.org/articles/PMC1"):
        with pytest.raises(ValidationError, match="user or a password|https://"):
            PassageCheck(**found, url=url)


def test_two_reports_of_one_study_are_counted_as_one_study_on_every_page(example_copy, tmp_path):
    """PRISMA counts studies; the pages that list a row per included report said as many studies as rows."""
    from sitegen.commands import build
    from sitegen.workspace import open_review

    workspace = open_review(example_copy)
    first, second = workspace.facts.included[:2]
    lines = (example_copy / "records.jsonl").read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines):
        record = json.loads(line)
        if record["id"] in (first, second):
            record.setdefault("custom", {})["other_versions"] = [second if record["id"] == first else first]
            lines[n] = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    (example_copy / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    reports = len(workspace.facts.included)
    phrase = f"{reports} reports of {reports - 1} studies"
    site = tmp_path / "site"
    build(example_copy, site, environ={})

    def text(page: str) -> str:
        return " ".join(lxml_html.fromstring((site / page).read_bytes()).text_content().split())

    assert f"{phrase} included after full-text assessment" in text("included.html")
    assert f"of the {phrase} included" in text("evidence.html")
    assert f"Only the {phrase} included now" in text("verification.html")
    home = text("index.html")
    assert f"{phrase} included, " in home and f"{reports} studies" not in home
    assert f"included studies ({reports} records)" in home
    assert json.loads((site / "downloads" / "prisma.json").read_text())["studies_included"] == reports - 1


@pytest.mark.parametrize(("types", "sentence"), [
    (["erratum"], "This record is a correction notice (an erratum), not a study."),  # OpenAlex
    (["retraction"], "This record is a retraction notice (or a withdrawal or expression of concern), not a study."),
    (["Journal Article", "Published Erratum"], "This record is a correction notice (an erratum), not a study."),
    (["journal-article", "correction-notice"], "This record is a correction notice (an erratum), not a study."),
])
def test_a_notice_typed_by_any_index_is_labelled_a_notice(types, sentence):
    assert notices(record(custom={"publication_types": types})) == [sentence]
    assert notices(record(custom={"publication_types": ["Comment"]})) == []  # indexes type a letter differently


def test_a_record_typed_two_notices_is_said_to_be_the_notice_its_first_type_makes_it():
    """Read from a set, the types' order was the string-hash seed's: a record typed both an erratum and a retraction
    was said to be either, changing from build to build. Its types are read in its own order, as everywhere."""
    erratum, retraction = KIND_SENTENCES["erratum"], KIND_SENTENCES["retraction"]
    assert notices(record(custom={"publication_types": ["erratum", "retraction"]})) == [erratum]
    assert notices(record(custom={"publication_types": ["Retraction", "erratum"]})) == [retraction]


def test_a_reinstatement_is_said_beside_the_retraction_it_lifted_or_the_one_still_marked():
    """A record reinstated said nothing (not retracted), and one still marked retracted beside a reinstatement
    (`retraction_disputed`: a flag giving no date) said only "retracted according to at least one source". Now the
    page says when it was retracted and reinstated, and by which notice; both sides when they disagree; and a
    retraction dated after the reinstatement as a retraction again."""
    lifted = {"reinstatements": [{"doi": "10.1234/z", "date": [2021, 6, 30], "retracted_on": [2019, 3, 1]}],
              "sources": ["crossref"]}
    assert notices(record(custom=lifted)) == [
        "This study was retracted on 2019-03-01, reinstated on 2021-06-30 (reinstatement notice 10.1234/z): the "
        "retraction no longer stands."]
    marked = {"reinstatements": [{"date": [2021, 6]}], "sources": ["crossref", "openalex"]}
    assert retraction_sentence(record(custom=marked), "record") == (
        "This record was retracted, reinstated on 2021-06 (according to Crossref, OpenAlex): the retraction no "
        "longer stands.")
    assert retraction_sentence(record(custom={**lifted, "retracted": True}), "record") == (
        "Sources disagree whether this record is retracted: at least one source marks it retracted, giving no date; "
        "it was also retracted on 2019-03-01, reinstated on 2021-06-30 (reinstatement notice 10.1234/z). Whether the "
        "retraction stands is for a human to decide.")
    # a flag that joined records listing retractions is kept as one giving no notice or date, said as the flag
    flag_kept = {**lifted, "retracted": True, "updates": [{"kind": "retraction"}]}
    assert retraction_sentence(record(custom=flag_kept), "record") == retraction_sentence(
        record(custom={**lifted, "retracted": True}), "record")
    undated = {**lifted, "retracted": True, "updates": [{"kind": "retraction", "pmid": "9"}]}
    assert retraction_sentence(record(custom=undated)).startswith(
        "Sources disagree whether this study is retracted: retracted (retraction notice PMID 9), giving no date; it "
        "was also retracted on 2019-03-01")
    again = {**lifted, "retracted": True, "updates": [{"kind": "retraction", "doi": "10.1234/x", "date": [2022, 1, 5]}]}
    assert retraction_sentence(record(custom=again)) == (
        "This study is retracted on 2022-01-05 (retraction notice 10.1234/x), after it was retracted on 2019-03-01, "
        "reinstated on 2021-06-30 (reinstatement notice 10.1234/z).")
    assert retraction_sentence(record(custom={"retracted": True})) == (
        "This study is retracted according to at least one source.")
    assert retraction_sentence(record()) is None


def test_two_listings_of_one_date_not_known_for_one_notice_are_said_as_one_retraction():
    """Crossref lists a notice by DOI, PubMed by PMID alone; nothing names both, so deduplication keeps two listings
    (it never guesses them one). The page said "retracted on D (notice 10.1/n); retracted on D (notice PMID 2)": two
    retractions on one day. It names both notices and one retraction; other dates stay apart."""
    reinstated = [{"doi": "10.1234/z", "date": [2021, 6, 30], "retracted_on": [2019, 3, 1]}]
    by_doi = {"kind": "retraction", "doi": "10.1234/n", "date": [2022, 1, 5]}
    by_pmid = {"kind": "retraction", "pmid": "2", "date": [2022, 1, 5]}
    custom = {"reinstatements": reinstated, "retracted": True, "sources": ["crossref", "pubmed"]}
    assert retraction_sentence(record(custom={**custom, "updates": [by_doi, by_pmid]})) == (
        "This study is retracted on 2022-01-05 (retraction notices 10.1234/n; PMID 2), after it was retracted on "
        "2019-03-01, reinstated on 2021-06-30 (reinstatement notice 10.1234/z).")
    undated = [{**by_doi, "date": None}, {**by_pmid, "date": None}]
    assert retraction_sentence(record(custom={**custom, "updates": undated})).startswith(
        "Sources disagree whether this study is retracted: retracted (retraction notices 10.1234/n; PMID 2), giving "
        "no date; it was also")
    later = {**by_pmid, "date": [2023, 2, 1]}
    assert retraction_sentence(record(custom={**custom, "updates": [by_doi, later]})).startswith(
        "This study is retracted on 2022-01-05 (retraction notice 10.1234/n); retracted on 2023-02-01 (retraction "
        "notice PMID 2), after")


def test_a_retraction_dated_after_its_reinstatement_is_retracted_again_not_disputed():
    """`retraction_disputed` held for any retracted record with a reinstatement, one retracted again in 2022 after
    its reinstatement of 2021 too. Disputed now means what it says: the order of the retraction and the
    reinstatement is unknown (a flag or a retraction giving no date, a reinstatement giving none)."""
    reinstated = [{"doi": "10.1234/z", "date": [2021, 6, 30], "retracted_on": [2019, 3, 1]}]
    later = {"kind": "retraction", "doi": "10.1234/x", "date": [2022, 1, 5]}
    undated = {"kind": "retraction", "pmid": "9"}

    def custom(**fields) -> RecordMeta:
        return record(custom={"reinstatements": reinstated, "sources": ["crossref"], "retracted": True,
                              **fields}).custom

    assert not retraction_disputed(custom(updates=[later]))
    assert not retraction_disputed(custom(updates=[later], sources=["crossref", "openalex"]))  # stands whatever
    assert not retraction_disputed(custom(updates=[later, undated]))  # flagged too
    assert not retraction_disputed(custom(updates=[later], retracted=False))  # reinstated
    assert retraction_disputed(custom())  # a flag giving no date
    assert retraction_disputed(custom(updates=[undated]))
    assert retraction_disputed(custom(updates=[{**later, "date": [2021, 6]}]))  # lifted: only the flag stands
    assert retraction_disputed(custom(updates=[later], reinstatements=[{"doi": "10.1234/z"}]))  # order unknown
    assert not retraction_disputed(custom(reinstatements=[]))  # retracted, nothing said against it
    # the sentence says the same: retracted again, naming the retraction dated after the reinstatement
    assert retraction_sentence(record(custom={"reinstatements": reinstated, "retracted": True,
                                              "updates": [later, undated]})) == (
        "This study is retracted on 2022-01-05 (retraction notice 10.1234/x), after it was retracted on 2019-03-01, "
        "reinstated on 2021-06-30 (reinstatement notice 10.1234/z).")


def list_tags(files: dict[str, str], slug: str) -> set[tuple[str, str]]:
    """The tags (class, text) beside the record's title in every list of the pages that links its page."""
    return {(tag.get("class"), tag.text_content()) for path, page in files.items() if path.endswith(".html")
            for link in lxml_html.fromstring(page).xpath(f"//td/a[contains(@href, '/{slug}.html')]")
            for tag in link.getparent().findall("strong")}


def test_the_lists_tag_a_lifted_and_a_disputed_retraction_as_their_pages_say(example_copy):
    """The lists of studies, the evidence table and the lists of records tagged a record whose retraction a
    reinstatement lifted, or that was disputed, "Retracted" (or "Notice", or nothing) whatever its page said."""
    record_id = yaml.safe_load(next((example_copy / "evidence").glob("*.yaml")).read_text())["record_id"]
    slug = page_slug(record_id)

    def tags() -> tuple[set, set, set]:
        studies = study_files(example_copy)
        workspace = open_review(example_copy)
        records = {path: page for path, page in rendered(record_pages(Site(workspace.review, workspace.facts, None)))
                   .items() if not re.fullmatch(r"records/[^/]+\.html", path)}  # the lists, not the records' pages
        return (list_tags({"included.html": studies["included.html"]}, slug),
                list_tags({"evidence.html": studies["evidence.html"]}, slug), list_tags(records, slug))

    reinstated = [{"doi": "10.1234/z", "date": [2021, 6, 30], "retracted_on": [2019, 3, 1]}]
    rewrite_record(example_copy, record_id, retracted=True, sources=["crossref", "openalex"],
                   reinstatements=reinstated)
    assert tags() == ({("retraction-disputed", "Retraction disputed")},) * 3
    rewrite_record(example_copy, record_id, retracted=False)
    assert tags() == ({("reinstated", "Reinstated")},) * 3
    rewrite_record(example_copy, record_id, retracted=True,
                   updates=[{"kind": "retraction", "doi": "10.1234/x", "date": [2022, 1, 5]}])  # again, after it
    assert tags() == ({("retracted", "Retracted")},) * 3
    rewrite_record(example_copy, record_id, retracted=False, updates=[], reinstatements=[])
    assert tags() == (set(),) * 3
    assert standing_tag(record(custom={"publication_types": ["erratum"]}), ["a correction notice"]) == "Notice"
    assert standing_tag_html(record()) == ""


def test_the_record_and_study_pages_say_a_reinstatement_and_a_disputed_retraction_escaped(example_copy):
    """Both pages say a reinstatement beside the retraction still marked, as a page's text, every value escaped."""
    record_id = next(iter(open_review(example_copy).facts.included))
    rewrite_record(example_copy, record_id, retracted=True, sources=["crossref", "openalex"],
                   reinstatements=[{"doi": HOSTILE_DOI, "date": [2021, 6, 30], "retracted_on": [2019, 3, 1]}])
    said = (f"is retracted: at least one source marks it retracted, giving no date; it was also retracted on "
            f"2019-03-01, reinstated on 2021-06-30 (reinstatement notice {HOSTILE_DOI}). Whether the retraction stands "
            "is for a human to decide.")
    study = study_files(example_copy)[study_page(record_id)]
    workspace = open_review(example_copy)
    page = rendered(record_pages(Site(workspace.review, workspace.facts, None)))[f"records/{page_slug(record_id)}.html"]
    assert f"Sources disagree whether this study {said}" in page_text(study)
    assert f"Sources disagree whether this record {said}" in page_text(page)
    assert HOSTILE_DOI not in study and HOSTILE_DOI not in page
    assert lxml_html.fromstring(page).xpath("//p[@class='retracted-notice' and @role='alert']")
    rewrite_record(example_copy, record_id, retracted=False)
    study = study_files(example_copy)[study_page(record_id)]
    workspace = open_review(example_copy)
    page = rendered(record_pages(Site(workspace.review, workspace.facts, None)))[f"records/{page_slug(record_id)}.html"]
    said = f"retracted on 2019-03-01, reinstated on 2021-06-30 (reinstatement notice {HOSTILE_DOI}): the retraction no"
    assert f"This study was {said} longer stands." in page_text(study)
    assert f"This record was {said} longer stands." in page_text(page)
    assert not lxml_html.fromstring(page).xpath("//p[@role='alert']")


def test_a_correction_or_expression_of_concern_listed_against_a_record_is_said_on_its_pages_and_lists(example_copy):
    """Crossref, PubMed and Europe PMC list corrections and expressions of concern against a work (its `updates`):
    no page said them, and no list tagged the record; a reader took a study under an expression of concern for a
    sound one. The study page, the record page and every list now say each kind, naming its notices."""
    record_id = next(iter(open_review(example_copy).facts.included))
    slug = page_slug(record_id)
    rewrite_record(example_copy, record_id, updates=[
        {"kind": "expression-of-concern", "doi": HOSTILE_DOI, "date": [2022, 1, 5]},
        {"kind": "correction", "pmid": "123"}])
    studies = study_files(example_copy)
    workspace = open_review(example_copy)
    pages = rendered(record_pages(Site(workspace.review, workspace.facts, None)))
    said = ["The sources list a correction to this {} (PMID 123).",
            f"The sources list an expression of concern about this {{}} ({HOSTILE_DOI}, 2022-01-05)."]
    for noun, page in (("study", studies[study_page(record_id)]), ("record", pages[f"records/{slug}.html"])):
        assert all(sentence.format(noun) in page_text(page) for sentence in said) and HOSTILE_DOI not in page
        assert not lxml_html.fromstring(page).xpath("//p[@role='alert']")  # not retracted: said, not alerted
    lists = {path: page for path, page in pages.items() if not re.fullmatch(r"records/[^/]+\.html", path)}
    assert list_tags({"included.html": studies["included.html"]}, slug) == list_tags(lists, slug) == {
        ("retracted", "Notice")}
