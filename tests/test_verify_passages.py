"""Evidence passages as reviewers copy them from a PDF or a web page, checked against real text: the example
review's abstracts, a real PubMed abstract (its <sub> and symbols as PubMed sends them) and real PMC JATS full
texts. A passage that quotes its source the way people quote is verified; one that changes a number, drops a
'not' or comes from another record is not."""

from __future__ import annotations

import json

import httpx
import pytest
from lxml import etree

from sitegen.records.model import Record
from sitegen.review.models import Evidence
from sitegen.sources import jats
from sitegen.sources.pubmed import pubmed_to_record
from sitegen.sources.settings import SourceSettings
from sitegen.verify.faithfulness import OpenText, faithfulness_verdict, open_text
from sitegen.workspace import inspect
from tests.conftest import EXAMPLE, FIXTURES
from tests.http_mocks import fetcher

# The example's studies with evidence, and a real PubMed abstract (NEJM 2018, PMID 29768149).
BLA, LEC, STRESS = "10.3389/fnbeh.2014.00160", "10.1002/hipo.22095", "10.1016/j.neuropharm.2018.02.001"
PUBMED = "pubmed"


def example_record(record_id: str) -> Record:
    for line in (EXAMPLE / "records.jsonl").open(encoding="utf-8"):
        if json.loads(line)["id"] == record_id:
            return Record.model_validate_json(line)
    raise AssertionError(record_id)


def pubmed_record() -> Record:
    root = etree.fromstring((FIXTURES / "pubmed" / "pubmed-29768149.xml").read_bytes())
    return pubmed_to_record(root.find(".//PubmedArticle"))


def record(which: str) -> Record:
    return pubmed_record() if which == PUBMED else example_record(which)


def evidence(of: Record, text: str, source: str = "abstract") -> Evidence:
    return Evidence.model_validate({"record_id": of.id, "findings": [
        {"finding": "A finding.", "passage": {"text": text, "source": source}}]})


def abstract_verdict(which: str, text: str) -> str:
    quoted = record(which)
    return faithfulness_verdict(quoted, evidence(quoted, text), None).verdict


BMC = Record(id="10.1186/1472-6831-8-11", DOI="10.1186/1472-6831-8-11", PMCID="PMC2329613", title="OHIP-NL",
             abstract="An abstract that quotes nothing.")  # the full text (CC BY 2.0) is what is quoted


def bmc_fulltext() -> OpenText:
    body = (FIXTURES / "europepmc" / "1472-6831-8-11.nxml").read_bytes()
    fetch = fetcher(lambda request: httpx.Response(200, content=body, headers={"content-type": "application/xml"}))[0]
    return open_text(fetch, SourceSettings(), BMC)


def fulltext_verdict(text: str) -> str:
    return faithfulness_verdict(BMC, evidence(BMC, text, "fulltext"), bmc_fulltext()).verdict


def pntd_paragraphs() -> list[jats.Paragraph]:
    """The paragraphs of a real PLoS NTD article, read as JATS is (its licence aside: the words are what matter)."""
    return jats.paragraphs(jats.read_article((FIXTURES / "europepmc" / "pntd.0002065.nxml").read_bytes()))[0]


# --------------------------------------------------------------------------- numbers are whole numbers


@pytest.mark.parametrize(("which", "passage"), [
    (PUBMED, "The rate of adherence in the budesonide maintenance group was 78"),  # of "78.9%"
    (BLA, "infusions of norepinephrine (0.3, 1"),  # of "1.0"
    (PUBMED, "5 mg) used as needed"),  # of "(0.5 mg)"
])
def test_a_number_cut_short_is_not_the_number(which, passage):
    assert abstract_verdict(which, passage) == "contradicted"


def test_a_number_quoted_whole_before_its_full_stop_or_comma_is_found():
    assert abstract_verdict(BLA, "infusions of norepinephrine (0.3, 1.0, or 3.0") == "verified"
    assert abstract_verdict(PUBMED, "The rate of adherence in the budesonide maintenance group was 78.9%") == "verified"


# --------------------------------------------------------------------------- signs as typed or typeset


@pytest.mark.parametrize("passage", [
    "mean age ± SD = 57.1 ± 12.2 yrs",  # as the text sets it
    "mean age +/- SD = 57.1 +/- 12.2 yrs",  # as a keyboard types it
    "mean age ± SD = 57.1±12.2 yrs",  # as a PDF gives it, its thin spaces lost
    "Cronbach's alpha = 0.82\u20130.97; ICC = 0.78\u20130.90",  # a range's en dash, no spaces
    "Cronbach\u00b4s alpha for the total OHIP-NL was 0.97",  # an acute accent for the apostrophe
    "(P<0.01 \u2013 0.001)",
    "119 consecutive patients (68.9% women",  # the text has "68.9 % women"
])
def test_a_full_text_passage_with_its_signs_typed_or_spaced_otherwise_is_verified(passage):
    assert fulltext_verdict(passage) == "verified"


@pytest.mark.parametrize("passage", [
    "(P \u2264 0.01 \u2013 0.001)",  # "≤" is not the text's "<"
    "mean age ± SD = 57.1 ± 12.1 yrs",
    "a convenience sample of 191 consecutive patients",
    "Self-reported oral habits (i.e., the control measures) were related to the total OHIP-NL scores",  # no 'not'
])
def test_a_full_text_passage_with_a_changed_sign_number_or_word_is_not_found(passage):
    assert fulltext_verdict(passage) == "not-found"


@pytest.mark.parametrize(("which", "passage"), [
    (BLA, "exhibited poor 24-\nh retention when given 3 min"),  # "24-h" broken at its hyphen
    (STRESS, "examining the effects of early-life stress\u2014induced by raising offspring"),  # text: "stress - induced"
    (PUBMED, "95% confidence interval [CI], 1.00 to 1.30; P = 0.046"),  # PubMed: "P=0.046"
])
def test_an_abstract_passage_spaced_otherwise_beside_a_sign_is_verified(which, passage):
    assert abstract_verdict(which, passage) == "verified"


@pytest.mark.parametrize(("which", "passage"), [
    (PUBMED, "95% confidence interval [CI], 1.00 to 1.30; P = 0.04"),
    (PUBMED, "1.00 to 1.30; P \u2264 0.046"),
    (BLA, "poor 24-h retention when given 30 min of training"),
])
def test_an_abstract_passage_with_a_changed_number_or_sign_is_contradicted(which, passage):
    assert abstract_verdict(which, passage) == "contradicted"


# --------------------------------------------------------------------------- a passage read as it is quoted


@pytest.mark.parametrize(("which", "passage"), [
    (LEC, "\u201crats with lesions of LEC were unable to recognize object-context associations\u201d"),
    (LEC, '"rats with lesions of LEC were unable to recognize object-context associations."'),
    (LEC, "rats with lesions of LEC were unable to recognize object-context associations."),  # text goes on: "yet"
    (LEC, "Rats with lesions of LEC were unable to recognize object-context associations"),  # mid-sentence in the text
    (LEC, "in a subsequent experiment it was demonstrated"),  # the text's sentence starts "In"
    (BLA, "norepinephrine (0.3, 1.0, or 3.0 \u00b5g)"),  # the record has "3.0 μ g" (an italic μ's space)
    (PUBMED, "a fast-acting \u03b2\u2082-agonist may be an alternative"),  # PubMed's "β<sub>2</sub>" reads "β 2"
    (PUBMED, "(200 \u00b5g of budesonide and 6 \u00b5g of formoterol)"),  # micro sign for mu
])
def test_an_abstract_passage_as_a_reviewer_quotes_it_is_verified(which, passage):
    assert abstract_verdict(which, passage) == "verified"


@pytest.mark.parametrize("passage", [
    "incubated with 5% CO\u2082 and checked daily",  # the JATS has CO<sub>2</sub>
    "a total area of 103,127 km\u00b2, much of it",  # km<sup>2</sup>
    "a titre of \u2265log\u2081\u2080 1.0",  # &#x02265;log<sub>10</sub> 1.0
    "an equal volume of 100 TCID\u2085\u2080 of RVFV",  # TCID<sub>50</sub>
])
def test_superscripts_and_subscripts_copied_from_a_pdf_are_found_in_jats_that_marks_them_up(passage):
    assert jats.find_passage(passage, pntd_paragraphs()) is not None


@pytest.mark.parametrize(("which", "passage"), [
    (STRESS, "Early-life stress did alter high-arousing context and auditory fear conditioning"),  # 'not' dropped
    (LEC, "Early-life stress impaired adult performance"),  # another record's passage
    (PUBMED, "A total of 3489 patients underwent randomization"),  # 3849
    (LEC, "rats with lesions of LEC were able to recognize"),
])
def test_an_abstract_passage_that_says_something_else_is_contradicted(which, passage):
    assert abstract_verdict(which, passage) == "contradicted"


def test_sitegen_check_reads_a_passage_as_verification_does(example_copy):
    # `sitegen check` compares abstract passages as verification does: a passage in curly quotes is no problem
    path = example_copy / "evidence" / "barsegyan-2014-bla.yaml"
    text = path.read_text(encoding="utf-8")
    quoted = ("        \u201cNorepinephrine administered after 3 min of object-in-context training induced a\n"
              "        dose-dependent memory enhancement\u201d\n")
    start = text.index("      text: >-\n") + len("      text: >-\n")
    end = text.index("      source: abstract")
    path.write_text(text[:start] + quoted + text[end:], encoding="utf-8")
    assert inspect(example_copy)[1] == []
    path.write_text(text[:start] + quoted.replace("3 min", "10 min") + text[end:], encoding="utf-8")
    [problem] = inspect(example_copy)[1]
    assert (problem.code, problem.path, problem.line) == ("passage-not-found", "evidence/barsegyan-2014-bla.yaml", 16)
    # where it stops agreeing, in the passage's own words: a figure or a typo copied wrong is found at once
    assert problem.message.endswith("it agrees with the abstract as far as '“Norepinephrine administered after', "
                                    "then has '10', which the abstract does not have there"), problem.message


def test_a_passage_from_elsewhere_is_said_to_share_not_even_its_first_word(example_copy):
    path = example_copy / "evidence" / "barsegyan-2014-bla.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index("      text: >-\n") + len("      text: >-\n")
    end = text.index("      source: abstract")
    path.write_text(text[:start] + "        Zebrafish preferred the novel arm.\n" + text[end:], encoding="utf-8")
    [problem] = inspect(example_copy)[1]
    assert problem.code == "passage-not-found"
    assert "not even its first word ('Zebrafish') is in the abstract" in problem.message, problem.message


# --------------------------------------------------------------------------- words left out, words of the reviewer's


@pytest.mark.parametrize(("which", "passage"), [
    (BLA, "Saline-infused control rats exhibited poor 24-h retention \u2026 and good retention when given 10 min of "
          "training."),
    (STRESS, "Early-life stress impaired adult performance ... object-in-context recognition memory task."),
    (STRESS, "[Early-life stress] effect was absent when animals were exposed to a single stressor"),  # for "This"
    (LEC, "[R]ats with lesions of LEC were unable to recognize object-context associations"),
    (PUBMED, "95% confidence interval [\u2026] 1.00 to 1.30"),
    (PUBMED, "The rate of adherence in the budesonide maintenance group was 78.9%\u2026"),
])
def test_an_abstract_passage_with_words_left_out_or_bracketed_is_verified(which, passage):
    assert abstract_verdict(which, passage) == "verified"


@pytest.mark.parametrize(("which", "passage"), [
    (BLA, "good retention when given 10 min of training \u2026 Saline-infused control rats"),  # out of order
    (BLA, "Saline-infused control rats exhibited poor 24-h retention \u2026 and good retention when given 30 min"),
    (LEC, "[R]ats with lesions of LEC were able to recognize object-context associations"),
])
def test_an_abstract_passage_whose_parts_are_not_there_in_order_is_contradicted(which, passage):
    assert abstract_verdict(which, passage) == "contradicted"


def test_words_left_out_of_a_full_text_passage_are_left_out_of_one_paragraph():
    assert fulltext_verdict("Cronbach's alpha for the total OHIP-NL was 0.97 \u2026 The average inter-item "
                            "correlation") == "verified"
    # the same paragraph's words run on into the next paragraph as they stand, but an ellipsis is no bridge
    # between paragraphs: the parts of "In seven patients … The mean total scores" are in two
    assert fulltext_verdict("In seven patients, a total of 14 missing answers that did not exceed these criteria "
                            "were imputed. The mean total scores") == "verified"
    assert fulltext_verdict("In seven patients, a total of 14 missing answers \u2026 The mean total "
                            "scores") == "not-found"


def test_a_passage_quoted_across_two_paragraphs_is_in_the_section_it_starts_in():
    paragraphs = jats.paragraphs(jats.read_article((FIXTURES / "europepmc" / "1472-6831-8-11.nxml").read_bytes()))[0]
    passage = ("In seven patients, a total of 14 missing answers that did not exceed these criteria were imputed. "
               "The mean total scores")
    for quoted in (passage, f"\u201c{passage}\u201d", passage.replace("In seven", "in seven")):
        found = jats.find_passage(quoted, paragraphs)
        assert (found.id, found.section) == ("p23", "Results"), quoted


# --------------------------------------------------------------------------- a number's minus sign is the number's

SIGNED = Record(id="10.1000/signed", DOI="10.1000/signed", title="Weight and temperature",
                abstract="Body weight changed by \u22120.5 kg (95% CI \u22120.9 to \u22120.1) with treatment and by "
                         "-1.2 kg with placebo; core temperature fell to \u22123 \u00b0C. Hazard ratio 0.82 "
                         "(0.70\u20130.97). Effect size d = -0.4 in COVID-19 patients.")


@pytest.mark.parametrize("passage", [
    "0.5 kg (95% CI",  # of "−0.5 kg": the sign flipped
    "0.1) with treatment",
    "1.2 kg with placebo",  # a hyphen-minus, as a keyboard types it
    "3 \u00b0C. Hazard ratio",
    "0.5 kg ... 1.2 kg with placebo",  # a part of a quotation with words left out
    "[it] changed by \u22120.5 kg ... 0.9 to \u22120.1",
])
def test_a_number_quoted_without_its_minus_sign_is_another_number(passage):
    # "0.5 kg" is not the abstract's "−0.5 kg" (a loss, not a gain), as "5 mg" is not "0.5 mg"
    assert faithfulness_verdict(SIGNED, evidence(SIGNED, passage), None).verdict == "contradicted"


@pytest.mark.parametrize("passage", [
    "changed by -0.5 kg (95% CI -0.9 to -0.1)",
    "\u22120.5 kg",
    "0.97). Effect size d=\u22120.4",  # the end of a range: its dash is no minus sign
    "fell to \u22123\u00b0C",
])
def test_a_number_quoted_with_its_sign_or_after_a_range_dash_is_verified(passage):
    assert faithfulness_verdict(SIGNED, evidence(SIGNED, passage), None).verdict == "verified"


# --------------------------------------------------------------------------- Greek letters typed or spelled

GREEK = Record(id="10.1000/greek", DOI="10.1000/greek", title="Greek", abstract=(
    "Serum TGF-\u03b2 rose after 5 \u03bcg/kg of the \u03bc-opioid agonist; A\u03b242 deposits and \u0394FosB fell."))


@pytest.mark.parametrize("passage", [
    "Serum TGF-beta rose",  # an abstract or a keyboard without Greek type spells the letter
    "after 5 ug/kg",  # a unit's micro is "u"
    "5 \u00b5g/kg",  # the micro sign, as a keyboard types it, is the Greek mu
    "5 mcg/kg",
    "the mu-opioid agonist",
    "A\u03b242 deposits and \u0394FosB fell",
])
def test_a_greek_letter_spelled_is_the_letter(passage):
    assert faithfulness_verdict(GREEK, evidence(GREEK, passage), None).verdict == "verified"


@pytest.mark.parametrize("passage", ["Serum TGF-alpha rose", "after 5 mg/kg", "Abeta42 deposits",  # a name in a word
                                     "the mu opioid agonist"])
def test_another_greek_letter_or_unit_is_not_the_letter(passage):
    assert faithfulness_verdict(GREEK, evidence(GREEK, passage), None).verdict == "contradicted"


# --------------------------------------------------------------------------- an abstract its source cut short


@pytest.mark.parametrize("mark", [" (ABSTRACT TRUNCATED AT 250 WORDS)", "(ABSTRACT TRUNCATED AT 400 WORDS)",
                                  " (ABSTRACT TRUNCATED)", " …", "..."])
def test_a_passage_absent_from_an_abstract_its_source_cut_short_is_unchecked_never_contradicted(mark):
    # MEDLINE kept 250 or 400 words of a long abstract until the 1990s, and says so at its end: the passage may be in
    # the words left out, so its absence contradicts nothing; a human checks it against the whole abstract.
    whole = pubmed_record()
    cut = whole.model_copy(update={"abstract": whole.abstract.rsplit(". ", 2)[0] + "." + mark})
    left_out = whole.abstract.rsplit(". ", 1)[1]
    verdict = faithfulness_verdict(cut, evidence(cut, left_out), None)
    assert verdict.verdict == "insufficient-passage" and not verdict.refusal_grade
    assert "which its source cut short (it ends" in verdict.reasons[0] and mark.strip() in verdict.reasons[0]
    kept = cut.abstract.split(". ")[1]
    assert faithfulness_verdict(cut, evidence(cut, kept), None).verdict == "verified"
    # an abstract held whole still contradicts a passage it does not hold
    assert faithfulness_verdict(whole, evidence(whole, left_out + " in mice"), None).verdict == "contradicted"


def test_sitegen_check_says_a_passage_may_be_in_the_part_of_the_abstract_its_source_left_out(example_copy):
    records = example_copy / "records.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if json.loads(line)["id"] == BLA)
    bla = json.loads(lines[at])
    bla["abstract"] = bla["abstract"].split(". ")[0] + ". (ABSTRACT TRUNCATED AT 250 WORDS)"
    lines[at] = json.dumps(bla, ensure_ascii=False, sort_keys=True) + "\n"
    records.write_text("".join(lines), encoding="utf-8")
    problems = [p for p in inspect(example_copy)[1] if p.path == "evidence/barsegyan-2014-bla.yaml"]
    assert problems and all(p.code == "passage-not-found" for p in problems)
    assert "which its source cut short (it ends '(ABSTRACT TRUNCATED AT 250 WORDS)')" in problems[0].message
    assert "quote it with source: fulltext, or external with its location" in problems[0].message
