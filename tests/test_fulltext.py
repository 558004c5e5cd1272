"""Licensed full text from Europe PMC: safe parsing, the licence gate, paragraphs with section paths, passages
found in them, and the PMCID of a PMID (real PMC JATS files; hostile bodies built where no real one exists)."""

from __future__ import annotations

import unicodedata

import httpx
import pytest
from conftest import FIXTURES
from http_mocks import fetcher, json_response
from test_europepmc import NO_RESULTS, RESULTS, page_body

from sitegen.records.model import Record
from sitegen.sources import europepmc, jats
from sitegen.sources.jats import Paragraph, find_passage, quotable
from sitegen.sources.settings import SourceSettings
from sitegen.verify.faithfulness import open_text

DIR = FIXTURES / "europepmc"
SETTINGS = SourceSettings()
CC_BY = "https://creativecommons.org/licenses/by/4.0/"
QUOTABLE = "CC BY, CC BY-SA, CC0, Public Domain Mark"


def xml_response(body: bytes, status: int = 200) -> httpx.Response:
    return httpx.Response(status, content=body, headers={"content-type": "application/xml"})


def read(body: bytes, pmcid: str) -> europepmc.FullText:
    fetch, _, _ = fetcher(lambda request: xml_response(body))
    return europepmc.fulltext(fetch, SETTINGS, pmcid)


def article(body: str, prolog: str = "", pmcid: str = "PMC1", abstract: str = "") -> bytes:
    """A minimal JATS article under CC BY (built: the shapes no real file has)."""
    return (f'<?xml version="1.0"?>\n{prolog}<article xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'xmlns:mml="http://www.w3.org/1998/Math/MathML"><front><article-meta>'
            f'<article-id pub-id-type="pmcid">{pmcid}</article-id><title-group><article-title>T</article-title>'
            f'</title-group><permissions><license xlink:href="{CC_BY}"><license-p>CC BY</license-p></license>'
            f"</permissions>{abstract}</article-meta></front><body>{body}</body></article>").encode()


# --------------------------------------------------------------------------- the licence gate, on real articles


def test_cc_by_by_ali_license_ref_is_readable_and_its_passages_found():
    text = read((DIR / "PMC12634591.xml").read_bytes(), "PMC12634591")
    assert text.status == "ok" and text.readable and text.refusal is None and text.complete
    assert text.licence_url == CC_BY and text.licence.startswith("This is an open-access article distributed")
    assert text.source_url == "https://europepmc.org/articles/PMC12634591"
    assert text.model_dump()["source_url"] == text.source_url  # it travels wherever the full text is stored
    # wrapped and indented as in a YAML evidence file
    quote = text.quote("The phases corresponding to\n   NCT06751966 and NCT06751914 were omitted.")
    assert quote.paragraph.id == "p1" and quote.paragraph.section is None  # a correction notice: no sections
    assert (quote.licence, quote.licence_url, quote.source_url) == (text.licence, CC_BY, text.source_url)
    # a table's caption is not running text, so a passage quoting it is not in any paragraph
    assert text.quote("Clinical trials based on neoantigen vaccines for the treatment of colorectal cancer") is None


def test_cc_by_by_xlink_href_is_readable_with_section_paths():
    text = read((DIR / "1472-6831-8-11.nxml").read_bytes(), "PMC2329613")  # a DOCTYPE with no internal subset
    assert text.readable and text.licence_url == "http://creativecommons.org/licenses/by/2.0"
    # the licence's wording links its URL with an empty ext-link, which reads as the address it shows
    assert "Creative Commons Attribution License (http://creativecommons.org/licenses/by/2.0), which" in text.licence
    found = find_passage("the OHIP-NL can be considered a reliable and valid instrument", text.paragraphs)
    assert found.section == "Abstract › Conclusion"
    found = find_passage("The English-language Oral Health Impact Profile (OHIP-E) consists of 49 questions",
                         text.paragraphs)
    assert found.section == "Methods › Oral Health Impact Profile"
    assert [p.id for p in text.paragraphs] == [f"p{n}" for n in range(1, len(text.paragraphs) + 1)]
    assert text.paragraphs[0].section.startswith("Abstract")  # the abstract comes first


@pytest.mark.parametrize(("name", "pmcid", "url"), [
    ("10_1136_jitc-2024-010530.xml", "PMC12458764", "https://creativecommons.org/licenses/by-nc/4.0/"),
    ("PMC3258128.xml", "PMC3258128", "http://creativecommons.org/licenses/by-nc/3.0"),
    # The licence is CC BY in words only: without a machine-readable URL nothing says which licence, version or
    # restriction (NC, ND) the words mean, so the gate refuses rather than read prose.
    ("pntd.0002065.nxml", "PMC3585041", None),
])
def test_a_licence_sitegen_may_not_quote_gives_no_paragraphs(name, pmcid, url):
    text = read((DIR / name).read_bytes(), pmcid)
    assert text.status == "ok" and text.title and text.licence  # what the article is and its terms stay known
    assert not text.readable and text.paragraphs == [] and text.licence_url == url
    assert QUOTABLE in text.refusal and f"read it at https://europepmc.org/articles/{pmcid}" in text.refusal
    assert text.quote("Rift Valley fever") is None


def test_a_licence_address_written_with_named_entities_is_read_whole():
    # Under the article's public DOCTYPE an entity of its DTD stays undeclared; in an attribute libxml2 dropped it
    # ("http:creativecommons.org…", no licence sitegen knows): read as its character, as in an element's text.
    body = (DIR / "PMC3258128.xml").read_bytes().replace(
        b'xlink:href="http://creativecommons.org/licenses/by-nc/3.0"',
        b'xlink:href="http:&sol;&sol;creativecommons.org&sol;licenses&sol;by&sol;3.0"')
    text = read(body, "PMC3258128")
    assert text.licence_url == "http://creativecommons.org/licenses/by/3.0" and text.readable and text.paragraphs


def test_licence_prose_is_kept_when_there_is_no_url():
    text = read((DIR / "pntd.0002065.nxml").read_bytes(), "PMC3585041")
    assert text.licence.startswith("This is an open-access article distributed under the terms of the Creative "
                                   "Commons Attribution License")
    assert "no machine-readable Creative Commons URL" in text.refusal


@pytest.mark.parametrize(("url", "allowed"), [
    ("https://creativecommons.org/licenses/by/4.0/", True),
    ("http://creativecommons.org/licenses/by/2.0", True),
    ("https://creativecommons.org/licenses/by-sa/4.0/legalcode", True),
    ("https://creativecommons.org/publicdomain/zero/1.0/", True),
    ("https://creativecommons.org/publicdomain/mark/1.0/", True),
    ("https://creativecommons.org/licenses/by-nc/4.0/", False),
    ("https://creativecommons.org/licenses/by-nd/4.0/", False),
    ("https://creativecommons.org/licenses/by-nc-sa/4.0/", False),
    ("https://example.org/creativecommons.org/licenses/by/4.0/", False),
    ("https://creativecommons.org/licenses/byx/4.0/", False),
    (None, False),
])
def test_the_gate_lets_through_only_cc_by_by_sa_cc0_and_the_public_domain_mark(url, allowed):
    assert quotable(url) is allowed


def test_the_licence_url_is_the_first_creative_commons_one():
    # the journal's own link outside the licence, and a non-CC link inside it, are not the licence
    body = article("<p>x</p>").replace(
        b"<permissions>", b'<ext-link xlink:href="https://creativecommons.org/licenses/by/4.0/">site</ext-link>'
                          b"<permissions>").replace(
        f'<license xlink:href="{CC_BY}"><license-p>CC BY</license-p>'.encode(),
        b'<license><license-p>See <ext-link xlink:href="https://example.org/terms">terms</ext-link> and '
        b'<ext-link xlink:href="https://creativecommons.org/licenses/by-nd/4.0/">CC BY-ND</ext-link></license-p>')
    text = read(body, "PMC1")
    assert text.licence_url == "https://creativecommons.org/licenses/by-nd/4.0/" and not text.readable


# --------------------------------------------------------------------------- hostile bodies


LAUGHS = ('<!DOCTYPE article [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
          '<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">]>\n')
EXTERNAL = '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'


@pytest.mark.parametrize(("body", "why"), [
    (article("<p>&lol2;</p>", LAUGHS), "declares an entity"),  # billion laughs
    (article("<p>before &x; after</p>", EXTERNAL), "declares an entity"),  # XXE
    (article("<p>x</p>", "<!DOCTYPE article [<!ELEMENT article ANY>]>\n"), "internal subset"),
    # a decoy DOCTYPE in a comment, or an encoding the byte scan cannot read: refused from the parsed tree
    (article("<p>x</p>", "<!-- <!DOCTYPE x> -->\n<!DOCTYPE article [<!ELEMENT article ANY>]>\n"), "internal subset"),
    (article("<p>before &x; after</p>", EXTERNAL).decode().replace('version="1.0"', 'version="1.0" encoding="UTF-16"')
     .encode("utf-16"), "internal subset"),
])
def test_entities_and_internal_subsets_are_refused_never_expanded(body, why):
    text = read(body, "PMC1")
    assert text.status == "unavailable" and text.paragraphs == [] and text.title is None and not text.readable
    assert why in text.warnings[0] and "unusable response" in text.warnings[0]
    assert "lol" not in text.warnings[0] and "root:" not in text.warnings[0]


def test_a_prolog_of_endless_doctypes_is_refused_in_linear_time():
    text = read(b"<!DOCTYPE" * 440_000, "PMC1")  # no ">" anywhere: a scan per DOCTYPE would take hours
    assert text.status == "unavailable" and "internal subset" not in text.warnings[0]


def nested(depth: int) -> bytes:
    # <article> (1) <body> (2), then sections, then the paragraph at `depth`
    sections = depth - 3
    return article("<sec>" * sections + "<p>deep</p>" + "</sec>" * sections)


def test_depth_80_is_read_and_81_refused():
    text = read(nested(jats.MAX_DEPTH), "PMC1")
    assert text.status == "ok" and [p.text for p in text.paragraphs] == ["deep"]
    text = read(nested(jats.MAX_DEPTH + 1), "PMC1")
    assert text.status == "unavailable" and "more than 80 deep" in text.warnings[0]
    text = read(nested(10_000), "PMC1")  # deeper than the parser goes: refused there, no recursion anywhere
    assert text.status == "unavailable" and text.paragraphs == []


def test_a_body_over_4_000_000_bytes_is_refused():
    body = article("<p>x</p>")
    padded = body + b"<!--" + b"x" * (jats.MAX_BYTES - len(body) - 7) + b"-->"
    assert len(padded) == jats.MAX_BYTES and read(padded, "PMC1").readable
    text = read(padded + b" ", "PMC1")
    assert text.status == "unavailable" and "4,000,001 bytes, over the 4,000,000-byte limit" in text.warnings[0]


def test_a_response_for_another_article_is_refused():
    text = read((DIR / "PMC12634591.xml").read_bytes(), "PMC12535959")
    assert text.status == "unavailable" and text.paragraphs == [] and text.licence is None
    assert "asked for PMC12535959 but received PMC12634591" in text.warnings[0]


def test_no_full_text_is_ok_with_nothing_and_an_outage_is_not_that():
    # a 404 for an article Europe PMC's search does not know (test_europepmc: one it lists as open access)
    fetch, _, _ = fetcher(lambda request: xml_response(b"", 404) if request.url.path.endswith("/fullTextXML")
                          else json_response(NO_RESULTS))
    text = europepmc.fulltext(fetch, SETTINGS, "PMC1")
    assert text.status == "ok" and text.paragraphs == [] and not text.readable and text.refusal is None
    assert text.warnings == ["Europe PMC has no full text for PMC1: Europe PMC's search knows no article PMC1"]
    fetch, _, _ = fetcher(lambda request: xml_response(b"", 503))
    text = europepmc.fulltext(fetch, SETTINGS, "PMC1")
    assert text.status == "unavailable" and not text.complete and text.paragraphs == []
    assert "no full text" not in " ".join(text.warnings)


# --------------------------------------------------------------------------- paragraphs


def test_paragraphs_are_running_text_only_with_their_section_paths():
    abstract = ('<abstract><sec><title>Background</title><p>Why.</p></sec></abstract>'
                '<abstract abstract-type="summary"><title>Author Summary</title><p>Plainly.</p></abstract>')
    body = ('<p>Lead <inline-graphic xlink:href="g.gif"/>text, see <ext-link xlink:href="https://x.org/a"/>.</p>'
            '<sec><title>Methods</title><sec><title>Cell culture</title>'
            '<p>Cells <mml:math><mml:mi>x</mml:mi></mml:math>grew <tex-math>\\alpha</tex-math>well'
            '<fig><caption><p>Figure words</p></caption></fig> today.</p>'
            '<p>As listed: <list><list-item><p>one</p></list-item><list-item><p>two</p></list-item></list></p>'
            '<table-wrap><caption><p>Table words</p></caption></table-wrap><supplementary-material><p>Supplement'
            '</p></supplementary-material><p>   </p></sec></sec><ref-list><ref><p>Reference</p></ref></ref-list>')
    found, truncated = jats.paragraphs(jats.read_article(article(body, abstract=abstract)))
    assert [(p.id, p.section, p.text) for p in found] == [
        ("p1", "Abstract › Background", "Why."),
        ("p2", "Abstract › Author Summary", "Plainly."),
        ("p3", None, "Lead text, see https://x.org/a."),
        ("p4", "Methods › Cell culture", "Cells grew well today."),
        ("p5", "Methods › Cell culture", "As listed: one two"),  # the list is part of its paragraph, once
    ]
    assert not truncated


def test_a_footnote_inside_a_paragraph_is_left_out_and_its_sentence_found_whole():
    # Footnotes are not read (docs/verification.md): one set inside a paragraph neither splits the sentence it is
    # attached to nor is found itself (a passage quoting it is for a human, as one quoting a table or a caption).
    body = ('<sec><title>Results</title><p>Body weight rose by 12%<fn id="f1"><p>Measured at noon.</p></fn> in the '
            'treated group.</p><fn-group><fn><p>Funding came from a grant.</p></fn></fn-group></sec>')
    text = read(article(body), "PMC1")
    assert [p.text for p in text.paragraphs] == ["Body weight rose by 12% in the treated group."]
    assert text.quote("Body weight rose by 12% in the treated group.").paragraph.section == "Results"
    assert text.quote("Measured at noon.") is None and text.quote("Funding came from a grant.") is None


def test_blocks_inside_a_paragraph_written_without_whitespace_keep_their_words_apart():
    # Europe PMC's XML often has no whitespace between elements: a list's items, a quotation or a displayed
    # formula's label are still words of their own, never run into the words beside them.
    body = ('<p>Inclusion criteria were:<list list-type="bullet"><list-item><label>1.</label><p>age over 18</p>'
            '</list-item><list-item><p>written consent</p></list-item></list>and no prior surgery.</p>'
            '<p>One said<disp-quote><p>it helped</p></disp-quote>after a week; CO<sub>2</sub> rose.</p>')
    found, _ = jats.paragraphs(jats.read_article(article(body)))
    assert [p.text for p in found] == [
        "Inclusion criteria were: 1. age over 18 written consent and no prior surgery.",
        "One said it helped after a week; CO2 rose.",  # inline markup (<sub>) still joins its letters
    ]
    assert find_passage("age over 18 written consent and no prior surgery", found) is found[0]


def test_at_most_600_paragraphs_and_240_000_characters():
    text = read(article("<p>x</p>" * jats.MAX_PARAGRAPHS), "PMC1")
    assert len(text.paragraphs) == jats.MAX_PARAGRAPHS and not text.truncated and text.complete
    text = read(article("<p>x</p>" * (jats.MAX_PARAGRAPHS + 1)), "PMC1")
    assert len(text.paragraphs) == jats.MAX_PARAGRAPHS and text.truncated and not text.complete
    assert text.paragraphs[-1].id == "p600" and "only its first 600 paragraphs" in text.warnings[0]
    text = read(article(f"<p>{'y' * 100_000}</p>" * 3), "PMC1")
    assert len(text.paragraphs) == 2 and text.truncated


def test_find_passage_compares_after_nfc_and_whitespace():
    paragraphs = [Paragraph(id="p1", text="Nothing here."), Paragraph(id="p2", section="Results",
                                                                      text="The café effect was 12% higher.")]
    decomposed = unicodedata.normalize("NFD", "café effect\n  was 12%")
    assert find_passage(decomposed, paragraphs).id == "p2"
    assert find_passage("café effect was 13%", paragraphs) is None
    assert find_passage("   ", paragraphs) is None


# --------------------------------------------------------------------------- the PMCID of a PMID


def by_pmid(pmid: str) -> dict:
    return next(r for r in RESULTS if r["pmid"] == pmid)


def test_pmcid_for_a_pmid():
    fetch, seen, _ = fetcher(lambda request: json_response(page_body([by_pmid("40437959")], 1)))
    pmcid, outcome = europepmc.pmcid_for(fetch, SETTINGS, "40437959")
    assert pmcid == "PMC12120539" and outcome.status == "ok"
    params = seen.requests[0].url.params
    assert params["query"] == "EXT_ID:40437959 AND SRC:MED" and params["resultType"] == "core"


def test_no_pmcid_is_not_an_error_and_an_outage_is_not_no_pmcid():
    fetch, _, _ = fetcher(lambda request: json_response(page_body([by_pmid("39709209")], 1)))  # not in PMC
    assert europepmc.pmcid_for(fetch, SETTINGS, "39709209")[0] is None  # an ok answer: no PMCID
    fetch, _, _ = fetcher(lambda request: json_response(NO_RESULTS))  # Europe PMC does not know the PMID
    pmcid, outcome = europepmc.pmcid_for(fetch, SETTINGS, "39709209")
    assert pmcid is None and outcome.status == "ok" and outcome.complete
    fetch, _, _ = fetcher(lambda request: json_response(b"", 503))
    pmcid, outcome = europepmc.pmcid_for(fetch, SETTINGS, "39709209")
    assert pmcid is None and outcome.status == "unavailable" and not outcome.complete
    with pytest.raises(ValueError):
        europepmc.pmcid_for(fetch, SETTINGS, "PMC12120539")


def test_another_article_in_place_of_the_pmid_is_no_pmcid_and_no_outage():
    # Europe PMC answers the PMID with another article (recorded): not the article's PMCID, nor word that it has none
    fetch, _, _ = fetcher(lambda request: json_response(page_body([by_pmid("40437959")], 1)))
    pmcid, outcome = europepmc.pmcid_for(fetch, SETTINGS, "39709209")
    assert pmcid is None and outcome.status == "ok" and not outcome.complete
    assert outcome.instead.PMID == "40437959"
    text = open_text(fetch, SETTINGS, Record(id="pmid:39709209", PMID="39709209", title="A cited article"))
    assert text.fulltext is None and "Europe PMC answers 39709209 with another work" in text.why_none
    assert "whether an open full text exists is unknown" in text.why_none


def test_a_named_entity_under_a_public_doctype_reads_as_its_character_not_as_nothing():
    # A DOCTYPE naming only an external DTD is allowed (never loaded); its named entities are then left
    # unexpanded by the parser. The text keeps the character each names instead of silently losing it.
    public = '<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving DTD v1.2//EN" "JATS.dtd">\n'
    parsed = europepmc.parse_article(article("<p>caf&eacute; &amp; th&eacute; at 37&deg;C</p>", public), "PMC1")
    assert [p.text for p in parsed["paragraphs"]] == ["café & thé at 37°C"]
    # and so in what is read as plain text, the article's title and its sections' titles, as in its paragraphs
    body = article('<sec><title>IL&ndash;6 &alpha;</title><p>x</p></sec>', public).replace(
        b"<article-title>T</article-title>", b"<article-title>T&ndash;cells</article-title>")
    parsed = europepmc.parse_article(body, "PMC1")
    assert parsed["title"] == "T\u2013cells" and parsed["paragraphs"][0].section == "IL\u20136 \u03b1"
