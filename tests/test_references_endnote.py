"""EndNote XML exports read as entries: each field where EndNote writes it (styled text runs joined, ref-types by
name or number, the DOI among an electronic-resource-num's lines, a PubMed record's accession number as its PMID,
the database it came from), the same references exported as RIS read as the same records, and every bad input
(malformed XML, entities, depth, XML that is not EndNote's, a record with nothing to tell it by) refused or skipped
with its line."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import pytest
from conftest import tree_bytes

from sitegen.references import ReferenceProblem, read_references, sniff
from sitegen.references.records import entry_record

FIXTURES = Path(__file__).parent / "fixtures" / "endnote"
AT = "2026-06-01T00:00:00Z"


def record_xml(number: int, body: str) -> str:
    return f'<record><rec-number>{number}</rec-number><ref-type name="Journal Article">17</ref-type>{body}</record>'


def endnote(*records: str) -> str:
    return '<?xml version="1.0" encoding="UTF-8" ?><xml><records>' + "".join(records) + "</records></xml>"


def test_an_endnote_xml_export_is_read_field_by_field():
    entries = {entry.id: entry for entry in read_references(FIXTURES / "library.xml")}
    assert list(entries) == [str(number) for number in range(101, 110)]  # the rec-numbers
    pubmed = entries["101"]
    # three <style> runs, the middle one italic, are one title
    assert pubmed.get("title") == "Object-in-context memory in Rattus norvegicus after perirhinal lesions"
    assert pubmed.get("author") == "Okafor, Chinwe A. and Lindqvist, Björn and Tanaka, H."
    assert pubmed.get("journal") == "Behavioural Brain Research"  # the periodical's full title
    assert pubmed.get("pages") == "221-228"  # a PubMed record's shortened range, in full as MEDLINE's
    assert (pubmed.get("doi"), pubmed.get("pmid"), pubmed.get("pmcid")) == (
        "10.1016/j.bbr.2016.06.021", "27311283", "PMC5012345")  # the PII line is no DOI; custom2 the PMCID
    assert (pubmed.get("database"), pubmed.get("issn"), pubmed.get("month")) == ("PubMed", "0166-4328", "Oct")
    assert pubmed.get("keywords") == "Animals; Perirhinal Cortex/*physiology; Recognition, Psychology"
    assert pubmed.line == 4
    embase = entries["102"]
    assert embase.get("pmid") == "" and embase.get("database") == "Embase"  # Embase's accession number is no PMID
    records = {entry.id: entry_record(entry) for entry in entries.values()}
    assert records["102"].DOI == "10.1002/hipo.23501"
    assert [name.display() for name in records["102"].author] == ["Costa, Maria Fernanda", "de Vries, Pieter"]
    assert [name.display() for name in records["103"].author] == ["Ennaceur, A."]  # the editors are not authors
    assert records["103"].container_title == "Handbook of Object Novelty Recognition"
    assert records["104"].author[0].literal == "World Health Organization"  # EndNote's corporate comma
    assert records["108"].DOI == "10.31234/osf.io/abc12"  # one DOI written twice, a line each
    assert [records[str(number)].type for number in range(101, 110)] == [
        "article-journal", "article-journal", "chapter", "report", "thesis", "paper-conference", "webpage",
        "article-journal", "book"]  # the last by its number alone
    assert records["106"].issued.date_parts == [[2023, 7, 26]]


def test_the_same_references_as_endnote_xml_and_as_ris_are_the_same_records():
    xml, ris = read_references(FIXTURES / "library.xml"), read_references(FIXTURES / "library.ris")
    assert [entry_record(entry) for entry in xml] == [entry_record(entry) for entry in ris]
    assert [entry.get("database") for entry in xml] == [entry.get("database") for entry in ris]


def test_an_export_on_one_line_in_utf16_reads_as_the_same_records(tmp_path):
    # EndNote writes a whole export on one line; on Windows, some save it as UTF-16 with its byte-order mark
    text = (FIXTURES / "library.xml").read_text(encoding="utf-8-sig")
    path = tmp_path / "one-line.xml"
    one_line = re.sub(r">\r?\n<", "><", text)  # a line break inside a field stays: EndNote writes it so
    path.write_bytes(codecs.BOM_UTF16_LE + one_line.encode("utf-16-le"))
    assert [entry_record(entry) for entry in read_references(path)] == [
        entry_record(entry) for entry in read_references(FIXTURES / "library.xml")]


def test_an_export_of_thousands_of_records_is_read_whole():
    records = [record_xml(number, f"<titles><title><style face=\"normal\">Study {number}</style></title></titles>"
                                  f"<dates><year>2020</year></dates>") for number in range(1, 6001)]
    entries = read_references(endnote(*records), "endnote-xml")
    assert len(entries) == 6000 and entries[-1].id == "6000" and entries[-1].get("title") == "Study 6000"


def test_endnote_xml_is_known_by_its_start_and_other_xml_is_refused_by_name(tmp_path):
    assert sniff("\ufeff" + endnote(record_xml(1, ""))) is None  # read_references strips the mark first
    assert sniff(endnote(record_xml(1, ""))) == "endnote-xml"
    assert sniff('<?xml version="1.0"?>\n<!-- EndNote -->\n<xml>\n<records>\n</records></xml>') == "endnote-xml"
    pubmed = '<?xml version="1.0"?>\n<PubmedArticleSet><PubmedArticle/></PubmedArticleSet>'
    assert sniff(pubmed) is None
    with pytest.raises(ReferenceProblem, match="XML other than EndNote's is not read: export the references as RIS"):
        read_references(pubmed)
    path = tmp_path / "pubmed.xml"  # .xml is read as EndNote's, and other XML said to be none by its root
    path.write_text(pubmed, encoding="utf-8")
    with pytest.raises(ReferenceProblem, match=r"root element is <PubmedArticleSet>, not EndNote XML") as error:
        read_references(path)
    assert error.value.line == 2


def test_a_malformed_export_stops_the_import_naming_the_file_and_line(tmp_path, sitegen, example_copy):
    path = tmp_path / "broken.xml"
    path.write_text(endnote(record_xml(1, "<titles><title>A study</title></titles>")).replace("><", ">\n<")
                    .replace("</titles>", "</title>", 1), encoding="utf-8")
    with pytest.raises(ReferenceProblem, match="not well-formed XML: Opening and ending tag mismatch") as error:
        read_references(path)
    assert error.value.line == 9
    before = tree_bytes(example_copy)
    code, _, err = sitegen("import", example_copy, path, "--at", AT)
    assert code != 0 and "broken.xml:9: not well-formed XML" in err and "nothing was imported" in err
    assert tree_bytes(example_copy) == before


@pytest.mark.parametrize(("xml", "said"), [
    # a billion laughs: entities declared to expand each other
    ('<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
     "<xml><records><record><titles><title>&b;</title></titles></record></records></xml>", "declares a document type"),
    # an external entity (a file of the machine) and a DTD over the network
    ('<!DOCTYPE xml [<!ENTITY secret SYSTEM "file:///etc/passwd">]><xml><records><record><titles><title>&secret;'
     "</title></titles></record></records></xml>", "declares a document type"),
    ('<!DOCTYPE xml SYSTEM "http://example.com/endnote.dtd"><xml><records></records></xml>', "declares a document type"),
    ("<xml><records>" + "<record>" * 300 + "</record>" * 300 + "</records></xml>", "elements nested more than 256 deep"),
    ("<xml><records><record><titles><title>&unknown;</title></titles></record></records></xml>",
     "Entity 'unknown' not defined"),
])
def test_entities_dtds_and_deep_nesting_are_refused(xml, said):
    with pytest.raises(ReferenceProblem, match=said) as error:
        read_references(xml, "endnote-xml")
    assert error.value.line == 1


def laughs(levels: int) -> str:
    """Entities each of ten of the one before: 10**levels characters, were they expanded."""
    declared = "".join(f'<!ENTITY l{level} "{f"&l{level - 1};" * 10}">' for level in range(1, levels + 1))
    return (f'<?xml version="1.0"?>\n<!-- exported -->\n<!DOCTYPE xml [<!ENTITY l0 "lol">{declared}]>\n'
            f"<xml><records>{record_xml(1, f'<titles><title>&l{levels};</title></titles>')}</records></xml>")


def test_a_document_type_is_refused_at_its_line_before_its_entities_are_read():
    # Nine levels pass libxml2's amplification limit: it is the document type that is named, whatever its size.
    for levels in (2, 9):
        with pytest.raises(ReferenceProblem, match="declares a document type") as error:
            read_references(laughs(levels), "endnote-xml")
        assert error.value.line == 3


@pytest.mark.parametrize("xml", [
    endnote(record_xml(1, f"<titles><title>{'a' * 10_000_001}</title></titles>")),
    endnote(record_xml(1, "").replace('name="Journal Article"', f'name="{"J" * 10_000_001}"')),
])
def test_a_text_or_attribute_past_the_parsers_limit_is_said_in_words_not_the_librarys_switches(xml):
    with pytest.raises(ReferenceProblem, match="over 10,000,000 characters, which no reference has") as error:
        read_references(xml, "endnote-xml")
    assert "XML_PARSE_HUGE" not in error.value.message and error.value.line == 1


@pytest.mark.parametrize("start", ["<!--a-->", "<?pi?>"])
def test_a_file_opening_with_many_comments_is_sniffed_at_once(start):
    # Tried at every split of its comments, the start of a file with 500 comments and no <xml> would never end.
    text = start * 500 + "\nnot XML at all\n"
    assert sniff(text) is None
    with pytest.raises(ReferenceProblem, match="not well-formed XML"):
        read_references(text, "endnote-xml")


def test_a_record_with_nothing_to_tell_it_by_is_skipped_with_its_line(tmp_path, sitegen, example_copy):
    text = endnote(record_xml(1, "<titles><title>A study of recall</title></titles><dates><year>2021</year></dates>"),
                   record_xml(2, "<dates><year>2021</year></dates><language>eng</language>"),
                   record_xml(3, "<electronic-resource-num>10.1000/no.title</electronic-resource-num>")
                   ).replace("<record>", "\n<record>")
    with pytest.raises(ReferenceProblem, match="entry '2' has no field") as error:
        read_references(text, "endnote-xml")
    assert error.value.line == 3
    skipped: list[tuple[int, str]] = []
    assert [entry.id for entry in read_references(text, "endnote-xml", skipped=skipped)] == ["1", "3"]
    assert [line for line, _ in skipped] == [3]
    path = tmp_path / "library.xml"
    path.write_text(text, encoding="utf-8")
    before = tree_bytes(example_copy)
    code, _, err = sitegen("import", example_copy, path, "--at", AT)
    assert code != 0 and "library.xml:3:" in err and tree_bytes(example_copy) == before
    code, out, _ = sitegen("import", example_copy, path, "--at", AT, "--skip-bad", "--source", "Embase")
    assert code == 0 and "skipped line 3" in out and "skipped line 4 (entry 3): the entry has no title" in out


def test_a_year_that_is_none_names_the_record_and_a_date_without_a_year_is_no_problem():
    text = endnote(record_xml(7, "<titles><title>A</title></titles><dates><year>in the spring</year></dates>"),
                   record_xml(8, "<titles><title>B</title></titles><dates><pub-dates><date>Spring</date></pub-dates>"
                                 "</dates>"))
    with pytest.raises(ReferenceProblem, match=r"record 1 \(rec-number 7\): year 'in the spring' holds no four-digit"):
        read_references(text, "endnote-xml")
    skipped: list[tuple[int, str]] = []
    (entry,) = read_references(text, "endnote-xml", skipped=skipped)
    assert entry.id == "8" and entry.get("year") == ""


def test_repeated_rec_numbers_name_every_record_by_position():
    warnings: list[str] = []
    text = endnote(record_xml(1, "<titles><title>A</title></titles>"), record_xml(1, "<titles><title>B</title></titles>"))
    assert [entry.id for entry in read_references(text, "endnote-xml", warnings)] == ["endnote-1", "endnote-2"]
    assert "ID '1'" in warnings[0]
