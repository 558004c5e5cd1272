"""Identifier normalisation and record ids."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.records.ids import (
    NORMALISERS,
    normalise_arxiv,
    normalise_doi,
    normalise_openalex,
    normalise_pmcid,
    normalise_pmid,
    parse_record_id,
    record_id,
    record_id_problem,
)


def test_doi_forms_providers_send():
    assert normalise_doi("https://doi.org/10.1037/0097-7403.9.3.248") == "10.1037/0097-7403.9.3.248"
    assert normalise_doi("doi:10.1002/HIPO.22095") == "10.1002/hipo.22095"
    assert normalise_doi("https://doi.org/10.1002%2Fhipo.22095") == "10.1002/hipo.22095"
    assert normalise_doi("10.1016/S0166-4328(98)00079-5") == "10.1016/s0166-4328(98)00079-5"
    assert normalise_doi("not a doi") is None
    assert normalise_doi("10.12/too-short-prefix") is None
    assert normalise_doi("10.1234/../../etc/passwd") is None


def test_other_identifiers():
    assert normalise_pmid("https://pubmed.ncbi.nlm.nih.gov/24847228") == "24847228"
    assert normalise_pmid("PMID: 123") == "123"
    assert normalise_pmid("0123") == normalise_pmid("PMID: 0000123") == "123"  # zero-padded, as some exports write it
    assert normalise_pmid("23389958.0") == "23389958"  # a spreadsheet's number
    assert [normalise_pmid(text) for text in ("0", "000", "12.5", "1e7", "123 456")] == [None] * 5
    assert normalise_pmcid("https://www.ncbi.nlm.nih.gov/pmc/articles/8284613") == "PMC8284613"
    assert normalise_pmcid("pmc12345") == "PMC12345"
    assert normalise_openalex("https://openalex.org/W2741809807") == "W2741809807"
    assert normalise_arxiv("https://arxiv.org/abs/1605.08386v2") == "1605.08386"
    assert normalise_arxiv("arXiv:hep-th/9901001") == "hep-th/9901001"
    assert normalise_arxiv("10.48550/arXiv.2312.07559") == "2312.07559"
    assert normalise_arxiv("http://arxiv.org/pdf/2101.00001v3.pdf") == "2101.00001"  # the address of its PDF
    assert normalise_arxiv("https://export.arxiv.org/pdf/hep-th/9901001v1.PDF") == "hep-th/9901001"
    assert normalise_arxiv("2101.00001V2") == "2101.00001" and normalise_arxiv("hep-th/9901001V1") == "hep-th/9901001"
    assert normalise_arxiv("2101.00001.pdf") is None  # no address: not read as one


@pytest.mark.parametrize(("written", "arxiv"), [
    ("arXiv:2101.00001 [cs.LG]", "2101.00001"), ("arXiv:2101.00001v2 [astro-ph.CO].", "2101.00001"),
    ("arXiv:hep-th/9901001 [hep-th]", "hep-th/9901001"), ("arXiv 2101.00001", "2101.00001"),
    ("https://arxiv.org/abs/2101.00001?context=cs", "2101.00001"), ("https://arxiv.org/abs/2101.00001v2#S3", "2101.00001"),
    ("arxiv.org/pdf/2101.00001v2.pdf?download=1", "2101.00001"), ("https://arxiv.org/html/2101.00001v1", "2101.00001")])
def test_an_arxiv_id_as_arxiv_cites_it_or_as_a_page_address_is_read(written, arxiv):
    # arXiv's own citation names the primary class after the id; its pages carry a query, fragment or /html/ path.
    assert normalise_arxiv(written) == arxiv


@pytest.mark.parametrize("written", ["1234.5678", "9999.99999", "2113.00001", "0703.0001", "foo/1234567", "a/9901001",
                                     "hep-th/9913001", "hep-th/0801001", "arxiv2101.00001", "arXiv:2101.00001 [a b]"])
def test_a_number_shaped_like_an_arxiv_id_that_no_arxiv_id_can_be_gives_none(written):
    # A month 13-99, a new-style id before April 2007, an old-style one after it or of no archive arXiv had: an id
    # made up of a stray number would join unrelated records.
    assert normalise_arxiv(written) is None


def test_record_id_priority_doi_openalex_arxiv_pmid():
    ids = {"doi": "10.1/x", "openalex": "W1", "arxiv": "2101.00001", "pmid": "5", "pmcid": "PMC6"}
    assert record_id({**ids, "doi": "10.1234/x"}) == "10.1234/x"
    assert record_id({k: v for k, v in ids.items() if k != "doi"}) == "openalex:W1"
    assert record_id({"arxiv": "2101.00001", "pmid": "5"}) == "arxiv:2101.00001"
    assert record_id({"pmid": "5", "pmcid": "PMC6"}) == "pmid:5"
    assert record_id({}) is None


def test_record_id_problems():
    assert record_id_problem("10.1002/hipo.22095") is None
    assert record_id_problem("openalex:W2741809807") is None
    assert record_id_problem("pmcid:PMC123") is None
    assert "path or control" in record_id_problem("../etc/passwd")
    assert "path or control" in record_id_problem("10.1234/a\\b")
    assert "path or control" in record_id_problem("10.1234/a b")
    assert "not a lower-case DOI" in record_id_problem("10.1234/ABC")
    assert "not a lower-case DOI" in record_id_problem("openalex:w12")
    assert "empty" in record_id_problem("")
    # Another written form of an identifier says the record id it gives; a bare number names no kind of identifier.
    assert record_id_problem("https://doi.org/10.1234/ABC").endswith(": write it as '10.1234/abc'")
    assert record_id_problem("PMID: 123").endswith(": write it as 'pmid:123'")
    assert "write it as" not in record_id_problem("123")
    # A spreadsheet's forced text (="…") around an id, or around another form of one.
    assert record_id_problem('="10.1234/abc"').endswith(": write it as '10.1234/abc'")
    assert record_id_problem('="ref:0123456789abcdef"').endswith(": write it as 'ref:0123456789abcdef'")
    assert record_id_problem('="PMID: 123"').endswith(": write it as 'pmid:123'")
    assert "write it as" not in record_id_problem('="123"')


@given(st.text(max_size=80))
def test_normalisers_never_crash_and_are_idempotent(text):
    for normalise in NORMALISERS.values():
        value = normalise(text)
        if value is not None:
            assert normalise(value) == value


@given(st.text(max_size=80))
def test_a_valid_record_id_always_parses(text):
    if record_id_problem(text) is None:
        assert parse_record_id(text) is not None


# DOIs of different shapes: plain, with parentheses, a SICI DOI ending in its check character '#',
# one with '/' in the suffix, an upper-case one.
DOIS = ["10.1037/0097-7403.9.3.248", "10.1016/S0166-4328(98)00079-5",
        "10.1002/(SICI)1098-2345(1997)43:2<111::AID-AJP2>3.0.CO;2-#", "10.1044/1092-4388(2007/046)",
        "10.1002/HIPO.22095", "10.48550/arXiv.2312.07559"]
PREFIXES = ["", "doi:", "DOI:", "doi: ", "DOI ", "info:doi/", "urn:doi:", "https://doi.org/", "http://doi.org/",
            "https://dx.doi.org/", "http://dx.doi.org/", "https://www.doi.org/", "doi.org/", "dx.doi.org/",
            "https://doi.org/doi:"]
URL_PREFIXES = ["https://doi.org/", "https://www.doi.org/", "https://onlinelibrary.wiley.com/doi/",
                "https://onlinelibrary.wiley.com/doi/abs/", "https://onlinelibrary.wiley.com/doi/full/",
                "https://onlinelibrary.wiley.com/doi/pdf/", "https://onlinelibrary.wiley.com/doi/epdf/",
                "https://journals.sagepub.com/doi/pdf/", "http://www.tandfonline.com/doi/full/",
                "https://pubs.acs.org/doi/", "https://www.science.org/doi/epdf/"]
URL_SUFFIXES = ["", "?utm_source=x&utm_medium=email", "#sec-2", "?download=true#page=3"]
WRAPPERS = [("", ""), (" ", " "), ("\u200b", "\u200b"), ("\ufeff", ""), ('"', '"'), ("'", "'"), ("“", "”"),
            ("<", ">"), ("[", "]"), ("(", ")"), ("\t", "\n")]
TRAILERS = ["", ".", ";", ",", ":", "#", ").", ".;", "\u200b", "\u200d.", " .", "?utm_source=twitter",
            "?utm_source=a&utm_campaign=b", "/", "/.", "\u2013", "\u2014", " \u2013", "\u200e", "\u200f",
            " [doi]", "[doi]", " [DOI]"]


def _percent_encoded(doi: str) -> str:
    from urllib.parse import quote
    return quote(doi, safe="")


@pytest.mark.parametrize("doi", DOIS)
def test_every_written_form_of_a_doi_normalises_to_it(doi):
    expected = doi.lower()
    for prefix in PREFIXES:
        for before, after in WRAPPERS:
            for trailer in TRAILERS:
                written = f"{before}{prefix}{doi}{trailer}{after}"
                assert normalise_doi(written) == expected, written
    for prefix in URL_PREFIXES:
        for suffix in URL_SUFFIXES:
            # In an address the DOI's own '#', '?' and '<>' are percent-encoded; '/' may or may not be.
            for body in (doi.replace("#", "%23").replace("<", "%3C").replace(">", "%3E"), _percent_encoded(doi)):
                written = f"{prefix}{body}{suffix}"
                assert normalise_doi(written) == expected, written


@pytest.mark.parametrize("doi", DOIS)
def test_invisible_characters_inside_a_doi_are_removed(doi):
    # every format character (Unicode category Cf): zero-width ones, direction marks and embeddings
    for char in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u202a",
                 "\u202c", "\u2066", "\u2069"):
        for position in (3, len(doi) // 2, len(doi) - 1):
            assert normalise_doi(doi[:position] + char + doi[position:]) == doi.lower()


def test_what_can_end_a_doi_is_kept():
    # Balanced brackets, a SICI check character, and ';' '(' ')' '#' inside the DOI stay.
    assert normalise_doi("10.1016/S0166-4328(98)00079-5).") == "10.1016/s0166-4328(98)00079-5"
    assert normalise_doi("(10.1016/S0166-4328(98)00079-5)") == "10.1016/s0166-4328(98)00079-5"
    assert normalise_doi("10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-#") == \
        "10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-#"
    assert normalise_doi("10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-O;") == \
        "10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-o"
    assert normalise_doi("10.1000/a;b#c(d)") == "10.1000/a;b#c(d)"
    assert normalise_doi("10.1000/abc-") == "10.1000/abc-"
    # ...and a SICI DOI an export HTML-escaped is that DOI ("&" with no entity is part of a DOI)
    assert normalise_doi("10.1002/(SICI)1097-4571(199806)49:8&lt;693::AID-ASI4&gt;3.0.CO;2-#") == \
        "10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-#"
    assert normalise_doi("10.1000/a&b") == "10.1000/a&b"


# HTML copied with a DOI's address (an href with its markup, a tag after it): the markup is no part of the DOI.
MARKUP_AFTER = ['">link</a>', "'>link</a>", '" target="_blank">link</a>', '"', "</a>", "<br>", "<br/>", "<!-- x -->",
                '&quot;&gt;link&lt;/a&gt;']


@pytest.mark.parametrize("doi", DOIS)
@pytest.mark.parametrize("markup", MARKUP_AFTER)
def test_html_markup_after_a_doi_ends_it(doi, markup):
    # A SICI DOI's own '<' and '>' (…43:2<111::AID-AJP2>3.0.CO;2-#) start no tag: it stays whole.
    for prefix in ("https://doi.org/", "http://dx.doi.org/", "https://onlinelibrary.wiley.com/doi/full/", "doi:", ""):
        written = f"{prefix}{doi}{markup}"
        assert normalise_doi(written) == doi.lower(), written


@pytest.mark.parametrize("doi", DOIS)
def test_an_html_link_pasted_whole_is_its_address(doi):
    address = f"https://doi.org/{doi.replace('#', '%23').replace('<', '%3C').replace('>', '%3E')}"
    for written in (f'<a href="{address}">link</a>', f"<A class='x' HREF='{address}' target=_blank>{address}</A>.",
                    f'&lt;a href=&quot;{address}&quot;&gt;link&lt;/a&gt;', f'<a href="{address}">{doi}</a>'):
        assert normalise_doi(written) == doi.lower(), written
    # a link whose text names another DOI names two: which is the work's own cannot be told
    assert normalise_doi(f'<a href="{address}">10.1000/other</a>') is None


def test_a_field_with_several_dois_gives_one_only_when_they_agree():
    # Which of two different DOIs is the work's own cannot be told (the other is often a supplement's,
    # an erratum's or a cited work's): None, so the work is matched by its metadata, never by a guess.
    for separator in (",", ", ", ";", "; ", " ", "\n", " ; "):
        assert normalise_doi(f"10.1000/abc{separator}10.1000/def") is None
        assert normalise_doi(f"10.1000/ABC{separator}https://doi.org/10.1000/abc.") == "10.1000/abc"
    assert normalise_doi("doi: 10.1000/abc") == "10.1000/abc"  # a label is no second DOI
    assert normalise_doi("10.1000/abc [doi] 10.1000/def [doi]") is None
    # a ';' or ',' inside a DOI stays (SICI DOIs have ';'): only one followed by another DOI separates
    assert normalise_doi("10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-#") == \
        "10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-#"
    assert normalise_doi("10.1000/a,b") == "10.1000/a,b"


# MEDLINE's AID/LID values, and exports copying them into one DOI field (RIS DO, CSV doi, BibTeX doi), in either
# order and with any separator: the value tagged [doi] is the DOI, a value tagged as another id never is.
PII = "S0140-6736(20)30183-5"
TAGGED_FIELDS = [
    ("10.1000/abc [doi] S0140-6736(20)30183-5 [pii]", "10.1000/abc"),
    ("S0140-6736(20)30183-5 [pii] 10.1000/abc [doi]", "10.1000/abc"),
    ("10.1000/ABC [DOI]; S0140-6736(20)30183-5 [PII]", "10.1000/abc"),
    ("S0140-6736(20)30183-5 [pii];10.1000/abc [doi]", "10.1000/abc"),
    ("10.1000/abc [doi], S0140-6736(20)30183-5 [pii]", "10.1000/abc"),
    ("10.1000/abc [doi]\nS0140-6736(20)30183-5 [pii]", "10.1000/abc"),
    ("31234567 [pmid] 10.1000/abc [doi] PMC1234567 [pmc]", "10.1000/abc"),
    ("10.1000/abc [doi] 10.1000/abc", "10.1000/abc"),  # the same DOI twice is that DOI
    ("S0140-6736(20)30183-5 [pii]", None),
    ("10.1016/S0140-6736(20)30183-5 [pii]", None),  # shaped like a DOI, but tagged as a PII
    ("10.1016/S0140-6736(20)30183-5 [pii] 10.1000/abc [doi]", "10.1000/abc"),
    ("10.1000/abc [doi] S0140-6736(20)30183-5 [pii] 10.1000/def [doi]", None),  # two DOIs: ambiguous
    ("10.1000/def [doi]; 10.1000/abc [doi]; S0140-6736(20)30183-5 [pii]", None),
]


@pytest.mark.parametrize(("field", "doi"), TAGGED_FIELDS)
def test_the_doi_tagged_doi_is_read_wherever_it_stands_and_no_other_tagged_id_is(field, doi):
    assert normalise_doi(field) == doi


# A note that exports and databases write after (or before) a DOI, apart from it by white space, is no part of it:
# the DOI beside it is read. A DOI's own brackets stand with no space before them and stay (SICI DOIs).
SICI = "10.1002/(SICI)1097-4636(199606)31:2<217::AID-JBM9>3.0.CO;2-T"
SICI_HASH = "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-#"
NOTED_FIELDS = [
    ("10.1000/abc [Online]", "10.1000/abc"),
    ("doi: 10.1000/abc [Review]", "10.1000/abc"),
    ("https://doi.org/10.1000/ABC [Epub ahead of print]", "10.1000/abc"),
    ("10.1000/abc [doi] [Epub ahead of print]", "10.1000/abc"),
    ("10.1000/abc\t[Online].", "10.1000/abc"),
    ("<10.1000/abc> [Online]", "10.1000/abc"),
    ("[Online] 10.1000/abc", "10.1000/abc"),
    ("10.1000/abc [Online]; S0140-6736(20)30183-5 [pii]", "10.1000/abc"),
    ("10.1000/abc [Online] 10.1000/def [Online]", None),  # still two DOIs: ambiguous
    ("10.1016/S0140-6736(20)30183-5 [pii]", None),  # a tag of another id is no note
    (f"{SICI} [Online]", SICI.lower()),
    (f"{SICI_HASH} [Epub ahead of print]", SICI_HASH.lower()),
    (SICI, SICI.lower()),
    (SICI_HASH, SICI_HASH.lower()),
    ("10.1016/S0140-6736(98)[12]0001-X", "10.1016/s0140-6736(98)[12]0001-x"),  # brackets inside a DOI stay
    ("10.1000/abc[Online]", "10.1000/abc[online]"),  # no space before it: part of the DOI as written
    ("10.1016/S0140-6736(98)[12]0001-X [Online]", "10.1016/s0140-6736(98)[12]0001-x"),
    # A note in round brackets is read by the same rule: apart from the DOI by white space, it is no part of it.
    ("10.1000/abc (Epub ahead of print)", "10.1000/abc"),
    ("doi: 10.1000/abc (Review).", "10.1000/abc"),
    ("(Online) 10.1000/abc", "10.1000/abc"),
    ("10.1000/abc (Epub 2020 Jan 5) [Review]", "10.1000/abc"),
    ("10.1000/abc (see [12])", "10.1000/abc"),
    ("10.1000/abc (Online) 10.1000/def (Online)", None),  # still two DOIs: ambiguous
    ("10.1000/abc (10.1000/def)", None),  # a bracketed DOI is no note
    (f"{SICI} (Online)", SICI.lower()),
    (f"{SICI_HASH} (Epub ahead of print)", SICI_HASH.lower()),
    ("10.1016/S0140-6736(20)30183-5 (Epub ahead of print)", "10.1016/s0140-6736(20)30183-5"),
    ("10.1016/S0140-6736(20)30183-5", "10.1016/s0140-6736(20)30183-5"),  # round brackets inside a DOI stay
    ("10.1000/abc(Online)", "10.1000/abc(online)"),  # no space before it: part of the DOI as written
    # Notes on both sides: the first and last characters are brackets, but of two notes, not one pair around the DOI.
    ("[Online] 10.1000/abc [Review]", "10.1000/abc"),
    ("(Epub) 10.1000/abc (print)", "10.1000/abc"),
    ("(Epub) 10.1000/abc [Review].", "10.1000/abc"),
    ("[Online] 10.1016/S0140-6736(20)30183-5 [Review]", "10.1016/s0140-6736(20)30183-5"),
    ("(Online) 10.1000/abc (10.1000/def)", None),  # still two DOIs: ambiguous
    # A pair that does enclose the whole value is unwrapped, brackets inside the DOI kept.
    ("(10.1016/S0140-6736(20)30183-5)", "10.1016/s0140-6736(20)30183-5"),
    ("[10.1016/S0140-6736(98)[12]0001-X]", "10.1016/s0140-6736(98)[12]0001-x"),
]


@pytest.mark.parametrize(("field", "doi"), NOTED_FIELDS)
def test_a_bracketed_note_apart_from_a_doi_is_no_part_of_it(field, doi):
    assert normalise_doi(field) == doi


@pytest.mark.parametrize(("field", "doi"), [
    ("DOI: 10.1000/abc, PMID: 12345", "10.1000/abc"), ("10.1000/abc PMID: 12345", "10.1000/abc"),
    ("PMCID: PMC678; doi:10.1000/abc", "10.1000/abc"), ("10.1000/abc arXiv:2101.00001", "10.1000/abc"),
    ("10.1000/abc ISSN: 1234-5678", "10.1000/abc"), (f"{SICI}; PMID: 12345", SICI.lower()),
    ("10.1000/abc PMID: 12345 10.1000/def", None),  # still two DOIs: ambiguous
    ("PMID: 12345", None), ("10.1000/pmid:123", "10.1000/pmid:123"),  # part of the DOI: no space before it
    ("https://doi.org/10.1000/abc\u3001", "10.1000/abc")])  # an ideographic comma after it
def test_another_labelled_identifier_beside_a_doi_is_no_part_of_it(field, doi):
    # Exports join a record's identifiers into one field: the DOI was lost for the PMID written after it.
    assert normalise_doi(field) == doi


def test_an_arxiv_id_in_a_doi_field_is_no_doi_but_is_an_arxiv_id():
    for written in ("arXiv:2101.00001", "2101.00001v2", "arXiv:hep-th/9901001v1", "https://arxiv.org/abs/2101.00001"):
        assert normalise_doi(written) is None
        assert normalise_arxiv(written) in ("2101.00001", "hep-th/9901001")


def test_not_dois_stay_rejected():
    for text in ("", "doi:", "https://doi.org/", "https://example.org/doi/", "https://example.org/doi/abs/11.1/x",
                 "10.12/too-short", "10.1234/../../etc/passwd", "10.1234/a b", "doi: not a doi", "10.1234/",
                 "https://example.org/10.1234/x", "\u200b", "[]", "10.1234/x\\y"):
        assert normalise_doi(text) is None, text


ARXIV_IDS = [("2312.07559", "2312.07559"), ("1605.08386v2", "1605.08386"), ("0704.0001", "0704.0001"),
             ("hep-th/9901001", "hep-th/9901001"), ("math.GT/0309136v1", "math.GT/0309136")]


@pytest.mark.parametrize(("written", "expected"), ARXIV_IDS)
def test_an_arxiv_id_and_its_datacite_doi_are_one_identifier(written, expected):
    from sitegen.records.ids import arxiv_of_doi
    forms = [written, f"arXiv:{written}", f"arxiv: {written}", f"https://arxiv.org/abs/{written}",
             f"http://export.arxiv.org/abs/{written}", f"arxiv.org/pdf/{written}", f"10.48550/arXiv.{written}",
             f"https://doi.org/10.48550/arXiv.{written}", f"doi:10.48550/ARXIV.{written}"]
    for form in forms:
        assert normalise_arxiv(form) == expected, form
    for form in forms[6:]:
        assert arxiv_of_doi(form) == expected, form
    assert arxiv_of_doi("10.1103/PhysRevD.1.1") is None and arxiv_of_doi(None) is None


def test_an_identifier_wrapped_in_a_sentence_and_followed_by_its_punctuation_is_that_identifier():
    # copied from running text: "see <https://doi.org/10.1000/abc>." or "(arXiv:1501.00001v2),"
    for before, after in WRAPPERS:
        if before.strip() and after.strip():
            for punctuation in ".,;:":
                assert normalise_doi(f"{before}https://doi.org/10.1016/S0166-4328(98)00079-5{after}{punctuation}") \
                    == "10.1016/s0166-4328(98)00079-5"
                for written, expected in ARXIV_IDS:
                    assert normalise_arxiv(f"{before}arXiv:{written}{after}{punctuation}") == expected
                    assert normalise_arxiv(f"arXiv:{written}{punctuation}") == expected


@pytest.mark.parametrize(("written", "doi"), [
    ("10.1016/j.bbr.2020\u201001\u2010001", "10.1016/j.bbr.2020-01-001"),  # Unicode hyphens, as word processors write
    ("10.1016/j.bbr.2020\u201101\u2011001", "10.1016/j.bbr.2020-01-001"),  # non-breaking hyphens
    ("10.1016/j.bbr.2020\u201301\u2013001", "10.1016/j.bbr.2020-01-001"),  # en dashes between digits
    ("10.1000/abc\u2014", "10.1000/abc"),  # an em dash after it is running text's
    ("\uff11\uff10.\uff11\uff10\uff10\uff10/ABC", "10.1000/abc"),  # full-width
    ("10.1000/abc\u3002", "10.1000/abc"),  # an ideographic full stop ends the sentence
    ("https://doi.org/10.1016/j.bbr.2020%E2%80%9001%E2%80%90001", "10.1016/j.bbr.2020-01-001"),  # percent-encoded
    ("10.1016/j.bbr.2020%E2%80%9001%E2%80%90001", "10.1016/j.bbr.2020-01-001"),
])
def test_a_doi_written_with_unicode_stand_ins_is_the_ascii_doi(written, doi):
    # Two copies of one work, one with U+2010 hyphens in its DOI, became two records the matcher even ruled
    # different (their DOIs differ).
    assert normalise_doi(written) == doi


@pytest.mark.parametrize(("written", "pmid"), [("12345678\u200b", "12345678"), ("12345678.", "12345678"),
                                               ("\uff11\uff12\uff13\uff14", "1234"), ("PMID: 123.", "123"),
                                               ("23389958.0", "23389958")])
def test_a_pmid_is_cleaned_as_a_doi_is(written, pmid):
    # A PMID with an invisible character or a full stop after it was left out, so the record could not match
    # the same work from PubMed.
    assert normalise_pmid(written) == pmid
    assert normalise_pmcid(f"PMC{pmid}\u200b.") == f"PMC{pmid}"


def test_a_doi_kept_with_unicode_hyphens_by_an_earlier_sitegen_stays_a_valid_record_id():
    # Its record id is on the append-only ledger: reading stand-ins as ASCII must not make the review invalid.
    from sitegen.records.model import Record

    kept = "10.1016/j.bbr.2020\u201001\u2010001"
    assert record_id_problem(kept) is None and parse_record_id(kept) == ("doi", kept)
    assert Record.model_validate({"id": kept, "DOI": kept, "title": "T"}).id == kept
    assert normalise_doi(kept) == "10.1016/j.bbr.2020-01-001"  # what is read now is the ASCII DOI
    assert record_id_problem("10.1016/J.BBR.2020-01-001") is not None  # other unnormalised forms stay refused


def test_a_list_of_record_ids_is_checked_as_each_id_is():
    from sitegen.records.ids import first_record_id_problem, record_id_problem
    from sitegen.records.model import check_record_ids

    ids = ["10.1000/xyz", "pmid:123", "openalex:W1"]
    assert first_record_id_problem(ids) is None and check_record_ids(ids) == ids
    for bad in ("10.1000/XYZ", "", "../etc", "pmid:12a", "10.1000/a b"):
        assert first_record_id_problem([*ids, bad, "also bad"]) == record_id_problem(bad) is not None
        with pytest.raises(ValueError, match="record id"):
            check_record_ids([*ids, bad])


@pytest.mark.parametrize("written", ["W2741809807", "w2741809807", "openalex:W2741809807", "OpenAlex:w2741809807",
                                     "https://openalex.org/W2741809807", "http://openalex.org/W2741809807/",
                                     "https://openalex.org/works/w2741809807",
                                     "https://api.openalex.org/works/W2741809807"])
def test_every_written_form_of_an_openalex_work_id_is_its_w_id(written):
    assert normalise_openalex(written) == "W2741809807"
    assert record_id({"openalex": normalise_openalex(written)}) == "openalex:W2741809807"


@pytest.mark.parametrize("written", ["A5023888391", "https://openalex.org/A5023888391", "W", "W12x", "2741809807"])
def test_an_openalex_id_of_no_work_is_no_openalex_record_id(written):
    assert normalise_openalex(written) is None


@pytest.mark.parametrize(("written", "pmid"), [("PMID: 23389958", "23389958"), ("pmid:23389958", "23389958"),
                                               ("https://www.ncbi.nlm.nih.gov/pubmed/23389958", "23389958"),
                                               ("https://pubmed.ncbi.nlm.nih.gov/23389958/", "23389958")])
def test_every_written_form_of_a_pmid_is_its_number(written, pmid):
    assert normalise_pmid(written) == pmid and record_id({"pmid": pmid}) == f"pmid:{pmid}"


@pytest.mark.parametrize("written", [
    "PMID 23389958", "PMID- 23389958", "PubMed: 23389958", "MED:23389958", "MED/23389958",
    "https://europepmc.org/abstract/MED/23389958", "https://europepmc.org/article/MED/23389958/",
    "23389958 [pubmed]", "PMID: 23389958 [PubMed - indexed for MEDLINE]", "PMID: 23389958 [PubMed]",
    "PMID: 23389958.2", "PMID:23389958.1."])  # PubMed's PMID.version of a versioned citation, when labelled a PMID
def test_a_pmid_as_exports_and_pubmed_label_tag_or_version_it_is_its_number(written):
    assert normalise_pmid(written) == "23389958"


@pytest.mark.parametrize("written", ["PMID", "PMID: 0", "PMID 12a", "[pubmed]", "23389958 [doi]", "23389958 [pmc]",
                                     "PMID: 23389958.1234", "12.5", "PMC23389958", "PMID: 1 2"])
def test_a_pmid_field_holding_no_pmid_gives_none(written):
    assert normalise_pmid(written) is None


@pytest.mark.parametrize("written", [
    "PMC3258128", "pmc3258128", "3258128", "PMCID: PMC3258128", "PMC 3258128", "PMC3258128.1", "PMC3258128 [pmc]",
    "https://europepmc.org/article/PMC/PMC3258128", "https://europepmc.org/abstract/PMC/PMC3258128"])
def test_every_written_form_of_a_pmcid_is_its_pmc_id(written):
    # PMC's article versions (PMC3258128.1) are one article; PubMed tags the id "[pmc]" in its ArticleIdList.
    assert normalise_pmcid(written) == "PMC3258128"


@pytest.mark.parametrize("written", ["0", "PMC0", "PMC000", "PMC", "PMC3258128v2", "PMCPMC1", "PMC3258128 [doi]",
                                     "3258128.1", "PMC 12 34"])
def test_a_pmcid_field_holding_no_pmcid_gives_none(written):
    # A zero was read as the PMCID "PMC0", which no article has: it could join every record so written.
    assert normalise_pmcid(written) is None
