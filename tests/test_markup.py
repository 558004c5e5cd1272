"""Provider markup becomes plain text once, on the ground floor, for every provider: records, and so readers,
RIS, BibTeX and CSV, never show tags or entities."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from sitegen.records.markup import plain_text
from sitegen.records.model import CONTROL_CHARACTER
from sitegen.records.titles import matched_title
from sitegen.references import read_references
from sitegen.references.records import entry_record
from sitegen.sources import arxiv, crossref, europepmc, openalex, pubmed

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(("markup", "text"), [
    # OpenAlex (synergy fixture): inline HTML in a title
    ("Medial temporal pathways for contextual learning: Network c-<i>fos</i> mapping in rats",
     "Medial temporal pathways for contextual learning: Network c-fos mapping in rats"),
    ("GABA<sub>A</sub> receptor subunits", "GABAA receptor subunits"),
    ("Ca<sup>2+</sup>-dependent <SPAN class=\"gene\">CaMKII</SPAN>", "Ca2+-dependent CaMKII"),
    # Europe PMC (cancer fixture): section headings and bold labels
    ("<h4>Background</h4>Patients with cancer suffer", "Background Patients with cancer suffer"),
    ("alterations. <b>Keywords:</b> Molecular Imaging", "alterations. Keywords: Molecular Imaging"),
    # escaped tags, as some providers double-encode them
    ("&lt;b&gt;Background:&lt;/b&gt; rats were trained", "Background: rats were trained"),
    ("&lt;i&gt;In vivo&lt;/i&gt; imaging", "In vivo imaging"),
    # Crossref (JATS): blocks end with a space; entities resolved; a literal "<" stays
    ("<jats:title>Background</jats:title><jats:p>Usefulness (P&lt;.001) &amp; quality</jats:p>",
     "Background Usefulness (P<.001) & quality"),
    ("<jats:p>x<jats:sc>ab</jats:sc> <jats:italic>in situ</jats:italic><jats:sub>2</jats:sub></jats:p>",
     "xab in situ2"),
    ("<mml:math><mml:msub><mml:mi>K</mml:mi><mml:mi>d</mml:mi></mml:msub></mml:math> values", "Kd values"),
    ("first line<br/>second", "first line second"),
    # text that only looks like markup is left alone
    ("p < 0.05 when x<y and y>z", "p < 0.05 when x<y and y>z"),
    ("Atmospheric CO<inf>2</inf> and Zn<sup>2+</sup>", "Atmospheric CO2 and Zn2+"),  # Scopus's subscript tag
    ("AT&amp;T and R&D", "AT&T and R&D"),
    ("Rats &lt; mice", "Rats < mice"),
    ("a <script>alert(1)</script>b", "a b"),
    # an element hiding its content that never ends is a title naming one, not markup: it hides nothing
    ("The &lt;script&gt; element in HTML5", "The <script> element in HTML5"),
    ("Styling with the <style> tag and <i>CSS</i>", "Styling with the <style> tag and CSS"),
    ("an <annotation> left open", "an <annotation> left open"),
    ("control &#1; char &#xFFFE; here\x0b\x85", "control char here"),
    # comparisons before a letter are no tags: the record would say the opposite of the paper
    ("Outcomes of ASA class <I and >III patients", "Outcomes of ASA class <I and >III patients"),
    ("Child-Pugh &lt;B or &gt;C cirrhosis", "Child-Pugh <B or >C cirrhosis"),
    ("<i>In vivo</i> grades <B or >A", "In vivo grades <B or >A"),  # read twice, still a comparison
    ("embeddings for $1<p \\le n$ and $p>n$", "embeddings for $1<p \\le n$ and $p>n$"),  # arXiv's TeX
    ('<a href="https://example.org">link</a> text', "link text"),
    # small caps and overlines (Crossref, OpenAlex: "<scp>COVID</scp>-19"), MathML without a prefix
    ("(<scp>OSA</scp>) and <scp>COVID</scp>\u201019", "(OSA) and COVID\u201019"),
    ("Search for <ovl>B</ovl> decays", "Search for B decays"),
    ("<mml:math><mfenced><mi>x</mi></mfenced><mtable><mtr><mtd>1</mtd></mtr></mtable></mml:math> norms", "x 1 norms"),
    # a formula given twice is read once: MathML's TeX annotation, JATS alternatives (the first notation)
    ('<mml:math><mml:semantics><mml:msup><mml:mi>B</mml:mi><mml:mo>+</mml:mo></mml:msup>'
     '<mml:annotation encoding="application/x-tex">B^+</mml:annotation></mml:semantics></mml:math> decays',
     "B+ decays"),
    ("<inline-formula><alternatives><tex-math>$B^+$</tex-math><mml:math><mml:msup><mml:mi>B</mml:mi>"
     "<mml:mo>+</mml:mo></mml:msup></mml:math></alternatives></inline-formula> decays", "$B^+$ decays"),
    ("<alternatives><mml:math><mi>a</mi></mml:math><tex-math>a</tex-math></alternatives> then <i>b</i>", "a then b"),
    # nested alternatives, and tags without an end (a void <br>, an open <mspace>), never hide what follows
    ("a <alternatives><tex-math>T</tex-math><alternatives><tex-math>U</tex-math><tex-math>V</tex-math></alternatives>"
     "</alternatives> after", "a T after"),
    ("a <alternatives><alternatives><tex-math>U</tex-math><tex-math>V</tex-math></alternatives><tex-math>W</tex-math>"
     "</alternatives> b", "a U b"),
    ("x <alternatives><tex-math>T</tex-math><br><mml:math>M</mml:math></alternatives> after", "x T after"),
    ("a <alternatives><tex-math>T</tex-math><mml:math><mml:mi>M</mml:mi><mml:mspace width='1em'><mml:mi>N</mml:mi>"
     "</mml:math></alternatives> after", "a T after"),
    ("x <alternatives><tex-math>T<br>T2</tex-math><mml:math>M</mml:math></alternatives> y", "x T T2 y"),
    ("<mtable><mtr><mtd>1</mtd><mtd>2</mtd></mtr><mtr><mtd>3</mtd><mtd>4</mtd></mtr></mtable>", "1 2 3 4"),
    # whitespace between a formula's elements is its markup's layout (PubMed pretty-prints MathML), not its text;
    # a token's own space stays
    ("( <mml:math>\n  <mml:msub>\n    <mml:mi>V</mml:mi>\n    <mml:mn>2</mml:mn>\n  </mml:msub>\n</mml:math> ) rose",
     "( V2 ) rose"),
    ("<math> <mi>a</mi> <mo>+</mo> <mtext>and so</mtext> </math> b", "a+and so b"),
    # an underlined comparison sign is ≤ or ≥ (PubMed, PMID 28775130: "normal TSH (0.4-<u>&lt;</u>4.5 mIU/L)")
    ("normal TSH (0.4-<u>&lt;</u>4.5 mIU/L)", "normal TSH (0.4-≤4.5 mIU/L)"),
    ("age <jats:underline>&gt;</jats:underline> 65 and <u>x</u> < 3", "age ≥ 65 and x < 3"),
    # an <alternatives> left open closes with its enclosing element, or leaves the text after it read
    ("<inline-formula><alternatives><tex-math>T</tex-math></inline-formula> Results: rats improved",
     "T Results: rats improved"),
    ("a <alternatives><tex-math>T</tex-math><mml:math>M</mml:math> truncated. Results", "a T truncated. Results"),
    ("<alternatives><tex-math>T</i>X</tex-math><mml:math>M</mml:math></alternatives> y", "TX y"),  # a stray end tag
])
def test_markup_becomes_plain_text(markup, text):
    assert plain_text(markup) == text


@pytest.mark.parametrize("value", [None, 3, "", "   ", "<i></i>", "<jats:p> </jats:p>"])
def test_no_text_is_none(value):
    assert plain_text(value) is None


def _no_markup(record) -> None:
    for value in (record.title, record.container_title, record.abstract):
        if value:
            assert not any(tag in value for tag in ("<i>", "</i>", "<sub>", "<b>", "<h4>", "<jats:", "&lt;", "&amp;"))
            assert not CONTROL_CHARACTER.search(value)


def test_every_provider_normalises_title_container_and_abstract():
    # OpenAlex
    work = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())[0]
    work = {**work, "title": "GABA<sub>A</sub> &amp; <i>c-fos</i>",
            "primary_location": {"source": {"display_name": "J &amp; <i>Neuro</i>"}},
            "abstract_inverted_index": {"&lt;b&gt;Background:&lt;/b&gt;": [0], "rats": [1]}}
    record = openalex.work_to_record(work)
    assert (record.title, record.container_title, record.abstract) == \
        ("GABAA & c-fos", "J & Neuro", "Background: rats")
    # Crossref
    item = {"DOI": "10.1000/xyz", "title": ["GABA<sub>A</sub> receptor"], "container-title": ["J &amp; Neuro"],
            "abstract": "<jats:p>&lt;b&gt;Background:&lt;/b&gt; rats</jats:p>"}
    record = crossref.work_to_record(item)
    assert (record.title, record.container_title, record.abstract) == \
        ("GABAA receptor", "J & Neuro", "Background: rats")
    # Europe PMC
    result = {"id": "123", "source": "MED", "pmid": "123", "title": "GABA<sub>A</sub> receptor",
              "journalInfo": {"journal": {"title": "J &amp; <i>Neuro</i>"}},
              "abstractText": "<h4>Background</h4>&lt;i&gt;Rats&lt;/i&gt;"}
    record = europepmc.result_to_record(result)
    assert (record.title, record.container_title, record.abstract) == \
        ("GABAA receptor", "J & Neuro", "Background: Rats")  # the heading labels its section
    # PubMed (XML: real tags are elements; escaped ones arrive as text)
    xml = (b"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>123</PMID><Article><Journal>"
           b"<Title>J &amp;amp; Neuro</Title></Journal><ArticleTitle>GABA<sub>A</sub> &lt;i&gt;receptor&lt;/i&gt;"
           b"</ArticleTitle><Abstract><AbstractText Label=\"BACKGROUND\">&lt;b&gt;Rats&lt;/b&gt; ran</AbstractText>"
           b"</Abstract></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>")
    article = etree.fromstring(xml).find("PubmedArticle")
    record = pubmed.article_to_record(article)
    assert (record.title, record.container_title, record.abstract) == \
        ("GABAA receptor", "J & Neuro", "BACKGROUND: Rats ran")
    # arXiv
    atom = (b'<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom"><entry>'
            b"<id>http://arxiv.org/abs/1605.08386v1</id><title>GABA&lt;sub&gt;A&lt;/sub&gt; receptor</title>"
            b"<summary>&lt;b&gt;Background:&lt;/b&gt; rats</summary>"
            b"<arxiv:journal_ref>J &amp;amp; Neuro</arxiv:journal_ref></entry></feed>")
    entry = etree.fromstring(atom).find("{http://www.w3.org/2005/Atom}entry")
    record = arxiv.entry_to_record(entry)
    assert (record.title, record.container_title, record.abstract) == \
        ("GABAA receptor", "J & Neuro", "Background: rats")


def test_a_style_that_lost_the_spaces_beside_it_still_parts_the_words():
    # Real titles of the SYNERGY works (works_1, kept verbatim in synergy_sep2021_styled_titles.json) and a real
    # bioRxiv abstract from Crossref (paper-qa's test_bulk_doi_search cassette) lost the spaces around an italic:
    # the words ran together ("ofCamellia sinensisteas").
    works = json.loads((FIXTURES / "openalex" / "synergy_sep2021_styled_titles.json").read_text())
    assert [openalex.work_to_record(work).title for work in works] == [
        "Thunbergia laurifolia extract ameliorates cognitive and emotional deficits in olfactorectomized mice",
        "Comparative effect of Camellia sinensis teas on object recognition test deficit and metabolic changes "
        "induced by cafeteria diet",
        "Ameliorating effect of lyophilized extract of Butea frondosa leaves on scopolamine-induced amnesia in rats",
        # a superscript is part of the word it follows: the genotype stays with its gene, and the italic closing
        # after it parts it from the next word ("<sup><i>−/−</i></sup>and"), as the italic parts "in<i>eEF2K")
        "Different attentional dysfunctions in eEF2K−/−, IL1RAPL1−/− and SHANK3Δ11−/− mice"]
    preprint = json.loads((FIXTURES / "crossref" / "crossref_work_10.1101_2024.04.01.587366.json").read_text())
    abstract = crossref.work_to_record(preprint["message"]).abstract
    assert "pegRNAs targeting SMARCB1 for editing" in abstract and "assess variants in MLH1 via" in abstract
    # Within a word a style meets a hyphen, a quote, a subscript or superscript; small capitals set parts of words.
    for markup, text in [("c-<i>fos</i> mapping", "c-fos mapping"), ("<i>E. coli</i>'s", "E. coli's"),
                         ("<i>K</i><sub>d</sub>", "Kd"), ("x<jats:sc>ab</jats:sc>", "xab"), ("T</i>X", "TX")]:
        assert plain_text(markup) == text


@pytest.mark.parametrize(("markup", "text"), [
    # a bracket after a style, or a full stop, semicolon or bracket before it, is parted from it as a word is: the
    # deposit lost the space there as it lost those beside words ("ofCamellia" before, "atTERT(linkage" here)
    ("at<i>TERT</i>(linkage", "at TERT (linkage"), ("at<i>TERT</i>[12]", "at TERT [12]"),
    ("reduced<i>(in vivo)</i>", "reduced (in vivo)"), ("mice;<i>in vivo</i>", "mice; in vivo"),
    ("(n = 5)<i>in vitro</i>", "(n = 5) in vitro"), ("<i>S.</i><i>aureus</i>", "S. aureus"),
    # never inside a word or a number, nor inside brackets
    ("<i>E. coli</i>'s", "E. coli's"), ("(<i>n</i> = 5)", "(n = 5)"), ("(<i>Felis catus</i>)", "(Felis catus)"),
    ("<i>N</i>,<i>N</i>-dimethyl", "N,N-dimethyl"), ("p = 0.<i>05</i>", "p = 0.05"), ("*<i>P</i>", "*P"),
])
def test_a_style_that_lost_its_spaces_parts_a_word_from_the_punctuation_beside_it(markup, text):
    assert plain_text(markup) == text


@pytest.mark.parametrize(("markup", "text"), [
    # a chemical name's locant or configuration: a number and the letter styled after it are one word, as PubMed
    # writes it without markup ("1H-indole"); parted, the two records' titles differed
    ("1<i>H</i>-indole", "1H-indole"), ("17<jats:italic>β</jats:italic>-estradiol", "17β-estradiol"),
    ("(2<i>R</i>,3<i>S</i>)-2-amino", "(2R,3S)-2-amino"), ("4<i>H</i>-chromene", "4H-chromene"),
    # a number before a styled word is still parted from it
    ("in 2010<i>Drosophila</i> flies", "in 2010 Drosophila flies"), ("3<i>in vivo</i>", "3 in vivo"),
])
def test_a_locant_styled_after_its_number_is_part_of_the_word(markup, text):
    assert plain_text(markup) == text


@pytest.mark.parametrize(("markup", "text"), [
    # a style closing right after a subscript or superscript ends the word the script belongs to
    ("<i>CO<sub>2</sub></i>emissions", "CO2 emissions"),
    ("<jats:italic>CO<jats:sub>2</jats:sub></jats:italic>emissions rise", "CO2 emissions rise"),
    ("<i>Shank3</i><sup><i>−/−</i></sup>mice", "Shank3−/− mice"),
    ("CO<sub>2</sub><i>in situ</i>", "CO2 in situ"),
    # a script starting never parts its word, whatever style closes before it or opens in it
    ("<i>K</i><sub>d</sub> values", "Kd values"), ("<i>eEF2K</i><sup><i>−/−</i></sup>, and", "eEF2K−/−, and"),
    # no style: the spacing is the source's, none added (GABA<sub>A</sub>receptor is a real OpenAlex title's)
    ("H<sub>2</sub>S", "H2S"), ("GABA<sub>A</sub>receptor", "GABAAreceptor"), ("<sup>14</sup>C dating", "14C dating"),
    ("(<i>Callithrix jacchus</i> )", "(Callithrix jacchus )"), ("x<sup>2</sup> <i>y</i>", "x2 y"),
])
def test_a_script_belongs_to_the_word_it_follows_and_ends_it(markup, text):
    assert plain_text(markup) == text


def test_pubmed_reads_markup_sent_as_elements_as_every_provider_reads_it_sent_as_text():
    # PubMed's XML holds a title's and an abstract's <i>, <sub> and <sup> as elements, which itertext ran together:
    # the real OpenAlex titles whose italics lost the spaces beside them ("of<i>Camellia sinensis</i>teas") read
    # "ofCamellia sinensisteas" from PubMed, though "of Camellia sinensis teas" from OpenAlex.
    works = json.loads((FIXTURES / "openalex" / "synergy_sep2021_styled_titles.json").read_text())
    for work in works:
        markup = work["title"].replace("&", "&amp;")  # as XML: the titles hold no '<' but their tags
        xml = (f"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>123</PMID><Article><Journal><Title>J"
               f"</Title></Journal><ArticleTitle>{markup}</ArticleTitle><Abstract><AbstractText>Rats: {markup}"
               f"</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>")
        record = pubmed.article_to_record(etree.fromstring(xml.encode()).find("PubmedArticle"))
        title = openalex.work_to_record(work).title
        assert (record.title, record.abstract) == (title, f"Rats: {title}")


def test_fixture_records_hold_no_markup():
    for work in json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text()):
        if record := openalex.work_to_record(work):
            _no_markup(record)
    for result in json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_text())["resultList"]["result"]:
        if record := europepmc.result_to_record(result):
            _no_markup(record)


def test_imported_references_hold_no_markup_as_providers_records_hold_none():
    # Exports carry databases' markup (RIS from a database, Scopus's CO<inf>2</inf>): an import makes text
    # of it as providers' records are made, and an abstract without markup keeps its line breaks.
    ris = ("TY  - JOUR\nTI  - The <i>rat</i> and CO<inf>2</inf>\nT2  - J &amp; Neuro\nAU  - Doe, Jane\nPY  - 2021\n"
           "AB  - {}\nDO  - 10.1234/markup\nER  - \n")
    (entry,) = read_references(ris.format("<p>&lt;b&gt;Background&lt;/b&gt; rats</p>"), "ris")
    record = entry_record(entry)
    _no_markup(record)
    assert (record.title, record.container_title, record.abstract) == ("The rat and CO2", "J & Neuro",
                                                                       "Background rats")
    (entry,) = read_references(ris.format("p < 0.05 in rats"), "ris")
    assert entry_record(entry).abstract == "p < 0.05 in rats"


@pytest.mark.parametrize(("markup", "text"), [
    # a known element's tag standing apart without its other half marks up nothing: it is text, also escaped twice
    ("a &amp;lt;b&amp;gt; c", "a <b> c"), ("a &lt;b&gt; c", "a <b> c"), ("a <b> c", "a <b> c"),
    ("a </i> c", "a </i> c"),
    # one cut short by a field's limit still marks up what it touches, and optional end tags need none
    ("Effect of <i>Lactobacillus", "Effect of Lactobacillus"), ("<p>one<p>two", "one two"),
    # tags, comments and declarations that never end are text (the parser searched the rest for each end: minutes)
    ("<a href=https://example.org/?a=b>link</a> text", "link text"),  # an unquoted value holding "=" is one
    ("<i a=b <i a=b x", "<i a=b <i a=b x"), ("<!-- a <!-- b", "<!-- a <!-- b"), ("a <!-- c --> b", "a b"),
])
def test_a_tag_without_its_other_half_standing_apart_is_text(markup, text):
    assert plain_text(markup) == text


def test_text_read_from_markup_reads_back_as_itself():
    # A record's text is read again wherever it comes back (an import of sitegen's own RIS, a merge): what was read
    # as text once must not be read as markup then, or "a <b> c" loses its "b" on the way back. PubMed's real
    # abstracts hold "P &lt; 0.001"; Crossref's "P&lt;.001" in JATS.
    root = etree.parse(str(FIXTURES / "pubmed" / "pubmed2.xml"))
    texts = ["".join(node.itertext()) for node in root.iter("AbstractText", "ArticleTitle")]
    texts.append(json.loads((FIXTURES / "crossref" / "10.2196_22081.json").read_text())["message"]["abstract"])
    assert any("<" in plain_text(text) for text in texts)
    made_up = ["a &amp;lt;b&amp;gt; c", "x &amp;lt;y&amp;gt; z &amp;lt;/i&amp;gt;", "p &lt;or= 0.05 &lt;sub&gt; 2"]
    for text in texts + made_up:
        once = plain_text(text)
        assert plain_text(once) == once


@pytest.mark.parametrize(("title", "words"), [
    ("p <or= 0.05 and x >or= 3", "p 0 05 and x 3"),  # MEDLINE's signs: dropped, not what lies between them
    ("x<y>z and a <b> c", "x y z and a b c"),
    ("The <i>rat</i> and CO<inf>2</inf><br/><jats:italic>in vivo</jats:italic>", "the rat and co2 in vivo"),
])
def test_titles_compared_lose_only_what_is_markup(title, words):
    # The matchers read tags by the rule records are made by: "<" in science text is text to them too.
    assert matched_title(title) == words
