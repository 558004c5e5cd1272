"""Exports of the bibliographic databases a systematic review searches beyond PubMed (EBSCOhost's CINAHL and
MEDLINE, Cochrane CENTRAL, Ovid), read field by field as `sitegen import` files them.

The files in tests/fixtures are written for these tests in each exporter's layout (its tags, header lines and
quirks), with a few records each: see tests/fixtures/README.md."""

from __future__ import annotations

from conftest import FIXTURES

from sitegen.references import read_references
from sitegen.references.records import entry_record


def records(name: str) -> list:
    return [entry_record(entry) for entry in read_references(FIXTURES / name)]


def test_ebscohost_ris_authors_without_the_credentials_cinahl_writes_after_them():
    first, second = records("ris/ebsco_cinahl.ris")
    assert [(name.family, name.given) for name in first.author] == [("Hall", "Joanne M."), ("Fields", "Becky")]
    assert (first.title, first.container_title, first.volume, first.issue, first.page) == (
        "Continuing the conversation in nursing on race and racism.", "Nursing Outlook", "61", "3", "164-172")
    assert (first.DOI, first.issued.date_parts[0]) == ("10.1016/j.outlook.2012.11.006", [2013, 5])
    assert [(name.family, name.given) for name in second.author] == [("Smith", "Anne"), ("Jones", "Barry")]


def test_ebscohost_ris_pmids_of_cinahl_notes_and_of_medline_accession_numbers():
    cinahl, medline = records("ris/ebsco_cinahl.ris")
    assert cinahl.PMID == "23809603"  # "PMID: NLM23809603." in the note; its accession number is CINAHL's own
    assert medline.PMID == "30765433"  # DB cmedm: EBSCOhost's MEDLINE, whose accession number is the PMID


def test_cochrane_library_ris_with_its_header_is_read():
    entries = read_references(FIXTURES / "ris" / "cochrane_central.ris")
    assert [entry.id for entry in entries] == ["CN-01646457", "CN-02012345"]
    first = entry_record(entries[0])
    assert [(name.family, name.given) for name in first.author] == [("van der Vaart", "T"), ("Plasschaert", "E")]
    assert (first.container_title, first.volume, first.issue, first.page, first.DOI) == (
        "Lancet neurology", "12", "11", "1076-1083", "10.1016/s1474-4422(13)70227-8")
    assert first.URL == "https://www.cochranelibrary.com/central/doi/10.1002/central/CN-01646457/full"
