"""Identifier normalisation and record ids."""

from __future__ import annotations

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
    assert normalise_pmid("0123") is None
    assert normalise_pmcid("https://www.ncbi.nlm.nih.gov/pmc/articles/8284613") == "PMC8284613"
    assert normalise_pmcid("pmc12345") == "PMC12345"
    assert normalise_openalex("https://openalex.org/W2741809807") == "W2741809807"
    assert normalise_arxiv("https://arxiv.org/abs/1605.08386v2") == "1605.08386"
    assert normalise_arxiv("arXiv:hep-th/9901001") == "hep-th/9901001"
    assert normalise_arxiv("10.48550/arXiv.2312.07559") == "2312.07559"


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
