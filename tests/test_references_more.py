"""The readers `sitegen import` builds on: MEDLINE, Web of Science, CSL-JSON and CSV with a column
mapping beside RIS and BibTeX; the fields beyond the benchmark's (PMID, PMCID, URL, ISSN, keywords,
Rayyan labels, database); encodings; and skipping bad records instead of stopping at the first."""

from __future__ import annotations

import codecs

import pytest
from conftest import FIXTURES, ROOT, tree_bytes

from sitegen.references import ReferenceProblem, read_references, sniff, text_codec
from sitegen.references.records import entry_record
from sitegen.text import counted

# --------------------------------------------------------------------------- real files


@pytest.mark.parametrize(("name", "count", "index", "expected"), [
    ("medline/pubmed_result1.txt", 1, 0, {
        "ID": "12230038", "pmid": "12230038", "author": "Mangalam, Harry", "journal": "Briefings in bioinformatics",
        "title": "The Bio* toolkits--a brief overview.", "year": "2002", "month": "Sep", "volume": "3", "number": "3",
        "pages": "296-302", "issn": "1467-5463", "language": "eng", "database": "PubMed", "ENTRYTYPE": "article"}),
    ("medline/pubmed_result3.txt", 1, 0, {
        "ID": "23039619", "doi": "10.1118/1.4748329", "pages": "5795-5813", "issn": "0094-2405",  # PG 5795-813
        "author": "Qiao, Shan and Shen, Guofeng and Bai, Jingfeng and Chen, Yazhu", "journal": "Medical physics"}),
    ("medline/eric_nbib.nbib", 1, 0, {
        "ID": "medline-1", "pmid": "", "author": "Smith, Tom and Hunter, Shawn", "title": "Paper title", "year": "2000",
        "doi": "10.1000/123456789", "url": "http://eric.ed.gov/?id=EJ1131633", "issn": "1234-4567",
        "keywords": "Keyword 1; Keyword 2", "database": "ERIC", "journal": "Journal Name", "pages": "1-9"}),
    ("medline/nbib_data.nbib", 1, 0, {"keywords": "Keyword 1; Keyword 2; Keyword 3", "volume": "10", "number": "1"}),
    ("csl/manubot_bibliography.json", 3, 0, {
        "ID": "s33GCagP", "ENTRYTYPE": "techreport", "year": "2018", "month": "6", "doi": "10.1088/1402-4896/ab0811",
        "author": "{Trang T. Le} and {Zach Osman} and {D. K. Watson} and {Martin Dunn} and {B. A. McKinney}",
        "url": "https://arxiv.org/abs/1806.05726v1", "journal": "arXiv"}),
    ("csl/manubot_bibliography.json", 3, 1, {
        "ID": "5thZNGfr", "ENTRYTYPE": "article", "author": "Smith, Michael L.", "pmid": "24765572",
        "pmcid": "PMC3994616", "journal": "PeerJ", "pages": "e338", "volume": "2", "year": "2014"}),
    ("csl/manubot_bibliography.json", 3, 2, {"pmid": "29618526", "number": "141", "issn": "1742-5662",
                                             "journal": "Journal of the Royal Society, Interface"}),
    ("ris/psycinfo_ris.ris", 1, 0, {
        "pmid": "33355555", "issn": "1999-7777; 0222-6666", "publisher": "Publisher",
        "keywords": "*Keyword one; *Keyword two; *Keyword three; *Keyword four; *Keyword five; Keyword six without "
                    "asterisk; Keyword seven without asterisk; Keyword eight without asterisk"}),
    ("ris/jstor_ris.ris", 4, 1, {"url": "http://www.jstor.org/stable/10.1111/something.2014.3.4.56",
                                 "issn": "21111112; 2777777X", "database": "JSTOR", "pmid": ""}),
    ("ris/jstor_ris.ris", 4, 2, {"issn": ""}),  # SN holds a 13-digit ISBN there
    ("ris/example_utf_chars.ris", 1, 0, {"note": "Ä,Ö,Ü,ä,ö,ü,ß", "label": ""}),
    ("bibtex/scopus_bib.bib", 11, 0, {"database": "Scopus", "note": "cited By 0",
                                      "url": "https://www.scopus.com/inward/record.uri?eid=11111111111111111111"}),
    ("bibtex/scopus_bib.bib", 11, 1, {"pages": "333444"}),  # its art_number, as the CSV export's Art. No. is read
    ("bibtex/europe_pmc_bib.bib", 2, 0, {"pmid": "18888888", "issn": "1111-2222", "month": "February"}),
])
def test_real_files_read_with_the_import_fields(name, count, index, expected):
    entries = read_references(FIXTURES / name)
    assert len(entries) == count
    assert {key: entries[index].get(key) for key in expected} == expected


@pytest.mark.parametrize("address", [
    "https://europepmc.org/articles/PMC7777777", "https://europepmc.org/article/PMC/PMC7777777",
    "https://europepmc.org/abstract/MED/18888888", "https://europepmc.org/article/MED/18888888"])
def test_europe_pmcs_address_of_a_work_names_its_pmcid_or_pmid(address):
    """Europe PMC's BibTeX export (real structure, europe_pmc_bib.bib) gives a work's PMCID only as its url; its
    other pages (as sitegen's Europe PMC source links a work) name the PMID or PMCID as PubMed's pages do."""
    [record] = [entry_record(entry) for entry in read_references(FIXTURES / "bibtex" / "europe_pmc_bib.bib")
                if entry.get("url").startswith("https://europepmc.org/")]
    assert record.PMCID == "PMC7777777"
    [entry] = read_references(f"TY  - JOUR\nTI  - A work\nUR  - {address}\nER  - \n", "ris")
    record = entry_record(entry)
    assert (record.PMCID, record.PMID) == (("PMC7777777", None) if "PMC" in address else (None, "18888888"))


@pytest.mark.parametrize(("name", "dates"), [
    ("ris/ieee_ris.ris", [[2020, 8], [2017, 3]]),  # Y1 "4-8 Aug. 2020", "Mar. 2017" beside PY's year
    ("ris/jstor_ris.ris", [[2016, 7], [2014], [2019], [2018]]),  # C1 "Full publication date: July-August 2016",
                                                                 # "Winter 2014" (a season: no month)
])
def test_a_ris_date_written_in_words_gives_the_month(name, dates):
    """IEEE Xplore and JSTOR write a record's month only in words (real export structures): it is the record's."""
    assert [entry_record(entry).issued.date_parts[0] for entry in read_references(FIXTURES / name)] == dates


@pytest.mark.parametrize(("written", "date"), [("NOV", [2021, 11]), ("MAR 15", [2021, 3, 15]), ("MAR-APR", [2021, 3])])
def test_web_of_sciences_ris_month_beside_the_year_is_the_records(written, date):
    """Web of Science's RIS export writes the month apart from PY, in words ("DA  - NOV"); no real export of it is
    among the fixtures, so the record is written in its layout (T2 in capitals, C7, AN, WE)."""
    text = (f"TY  - JOUR\nAU  - Maxwell, BD\nTI  - Scientific floras can be reliable sources\nT2  - JOURNAL OF "
            f"VEGETATION SCIENCE\nDA  - {written}\nPY  - 2021\nVL  - 32\nIS  - 4\nC7  - e12990\n"
            f"DO  - 10.1111/jvs.12990\nAN  - WOS:000220133300004\nWE  - Science Citation Index Expanded\nER  -\n")
    [entry] = read_references(text, "ris")
    assert entry_record(entry).issued.date_parts[0] == date


def test_authors_an_export_glued_together_are_each_an_author():
    """The benchmark's diabetes search (ASySD's, from Embase; GPL-3, so not among the fixtures) glues the authors of
    1,731 of its 1,845 records into one ("Akita K.Isoda K.Isobe S.Niida T."), which was imported as one author named
    so. Each is an author of its own, as the duplicate matcher already reads them; a name's own full stop in the real
    cytology export ("St.John, T L") parts nothing."""
    text = 'ID,author,title,year\nid_1,"Akita K.Isoda K.Isobe S.Niida T.",Glued authors,2019\n'
    [entry] = read_references(text, "csv")
    assert [(name.family, name.given) for name in entry_record(entry).author] == [
        ("Akita", "K."), ("Isoda", "K."), ("Isobe", "S."), ("Niida", "T.")]
    cytology = [entry_record(entry) for entry in read_references(
        FIXTURES / "dedupe" / "cytology_screening" / "records_pre_merged.csv") if "St.John" in entry.get("author")]
    assert len(cytology) == 3
    assert all(("St.John", "T L") in [(name.family, name.given) for name in record.author] for record in cytology)


def test_glued_authors_with_several_initials_keep_them_all_as_given_names():
    """Embase's glued lists write most names with two or three initials, each after a space ("Chien C. T.Jou M.
    J."): each name's family is the word before its initials ("Chien", not "Chien C." given "T."), and a name with an
    apostrophe after its first letter starts a name of its own ("Crean D.O'Reilly M.")."""
    text = ('ID,author,title,year\nid_1,"Chien C. T.Jou M. J.Dullaart R. P. F.El Hachmane M.Crean D.O\'Reilly M.",'
            'Glued authors,2015\n')
    [entry] = read_references(text, "csv")
    assert [(name.family, name.given) for name in entry_record(entry).author] == [
        ("Chien", "C. T."), ("Jou", "M. J."), ("Dullaart", "R. P. F."), ("El Hachmane", "M."), ("Crean", "D."),
        ("O'Reilly", "M.")]


def test_scopus_bibtex_names_the_pmid_as_pubmed_id():
    """Scopus's BibTeX export writes a PubMed record's PMID as pubmed_id (before language); the real export's
    structure (scopus_bib.bib) with the field added to its first entry, as Scopus adds it."""
    text = (FIXTURES / "bibtex" / "scopus_bib.bib").read_text(encoding="utf-8")
    text = text.replace("   document_type                 = {Article},",
                        "   pubmed_id                     = {30311064},\n   document_type                 = {Article},", 1)
    entries = read_references(text, "bibtex")
    assert [entry_record(entry).PMID for entry in entries[:2]] == ["30311064", None]


def test_medline_abstracts_and_mesh_terms_are_whole_across_continuation_lines():
    entry = read_references(FIXTURES / "medline" / "pubmed_result3.txt")[0]
    assert entry.get("abstract").startswith("PURPOSE: High-intensity focused ultrasound is a promising method for the "
                                            "noninvasive treatment")
    assert entry.get("abstract").endswith("to ensure the success and safety of ablation treatment.")
    assert "High-Intensity Focused Ultrasound Ablation/adverse effects/instrumentation/*methods" in entry.get("keywords")
    assert entry.line == 2  # the file starts with a blank line


# Web of Science: no real plain-text export under a licence that allows copying was found, so this
# follows the layout of one (header, one author a line, continued title, ER/EF) without its text.
WOS = """FN Clarivate Analytics Web of Science
VR 1.0
PT J
AU Chung, CYS
   Yam, VWW
AF Chung, Clive Yik-Sham
   Yam, Vivian Wing-Wah
TI Selective label-free detection of G-quadruplex structure of human
   telomere
SO CHEMICAL SCIENCE
LA English
DT Article
DE Concentration-dependent permittivity; Double-layer polarization;
   Electrophoresis
SN 2041-6520
PD DEC 24
PY 2013
VL 4
IS 1
BP 377
EP 387
DI 10.1039/c2sc20897k
PM 23039619
UT WOS:000311971500044
ER

PT S
AU Hsu, JP
TI A book chapter in a series
SO LECTURE NOTES
PY 2012
AR 574
UT WOS:000310782600054
ER

EF
"""


def test_web_of_science_plain_text(tmp_path):
    source = tmp_path / "savedrecs.txt"
    source.write_text(WOS, encoding="utf-8-sig")  # Web of Science writes a byte-order mark
    first, second = read_references(source)
    assert (first.id, first.line, second.id) == ("WOS:000311971500044", 3, "WOS:000310782600054")
    assert {key: first.get(key) for key in ("author", "title", "journal", "year", "month", "pages", "doi", "pmid",
                                            "issn", "keywords", "database", "ENTRYTYPE")} == {
        "author": "Chung, Clive Yik-Sham and Yam, Vivian Wing-Wah", "ENTRYTYPE": "article",
        "title": "Selective label-free detection of G-quadruplex structure of human telomere",
        "journal": "CHEMICAL SCIENCE", "year": "2013", "month": "DEC", "pages": "377-387", "doi": "10.1039/c2sc20897k",
        "pmid": "23039619", "issn": "2041-6520", "database": "Web of Science",
        "keywords": "Concentration-dependent permittivity; Double-layer polarization; Electrophoresis"}
    assert (second.get("ENTRYTYPE"), second.get("pages"), second.get("author")) == ("incollection", "574", "Hsu, JP")


# --------------------------------------------------------------------------- RIS: identifiers and labels

RIS = "TY  - JOUR\nTI  - A trial\n{tags}ER  - \n"


@pytest.mark.parametrize(("tags", "pmid", "pmcid"), [
    ("AN  - 31234567\nDB  - Ovid MEDLINE(R)\n", "31234567", ""),
    ("AN  - 31234567\nDP  - NLM\nC2  - PMC6543210\n", "31234567", "PMC6543210"),  # EndNote from PubMed
    ("AN  - 612345678\nDB  - Embase\n", "", ""),  # an Embase accession number is no PMID
    ("AN  - 107840001\n", "", ""),  # nor is a number from an export that does not say PubMed
    ("AN  - 104263355\nDB  - ccm\n", "", ""),  # nor a CINAHL accession number (EBSCOhost's database code)
    ("N1  - Comment in: Lancet. 2020;395:e5. PMID: 32222222.\n", "", ""),  # a note citing another work
    ("N1  - PMID: 29618526\n", "29618526", ""),  # Zotero writes its Extra field as a note
    ("M1  - PMID:29618526 PMCID: PMC5938574\n", "29618526", "PMC5938574"),
])
def test_ris_pmids_only_where_the_export_says_so(tags, pmid, pmcid):
    entry = read_references(RIS.format(tags=tags))[0]
    assert (entry.get("pmid"), entry.get("pmcid")) == (pmid, pmcid)


@pytest.mark.parametrize(("tags", "pages"), [
    ("SP  - 221-8\nDP  - NLM\n", "221-228"),  # EndNote's RIS of a PubMed record
    ("SP  - 221\nEP  - 8\nDB  - PubMed\n", "221-228"),
    ("SP  - S12-4\nDB  - Ovid MEDLINE(R)\n", "S12-S14"),
    ("SP  - 1865\nEP  - 1876\nDB  - PubMed\n", "1865-1876"),  # written in full already
    ("SP  - 221-8\nDB  - Embase\n", "221-8"),  # the export does not say the record is MEDLINE's: as written
    ("SP  - 221-8\n", "221-8"),
])
def test_ris_pages_of_a_pubmed_record_have_their_last_page_in_full(tags, pages):
    # MEDLINE shortens a range's last page, and reference managers importing from PubMed keep it so: RIS and
    # BibTeX exports, and dedupe, read 8 as the last page of 221-8.
    assert read_references(RIS.format(tags=tags))[0].get("pages") == pages


def test_rayyan_inclusion_decisions_in_notes_are_the_label():
    note = 'RAYYAN-INCLUSION: {"Kofi"=>"Included", "Ama"=>"Maybe"} | RAYYAN-LABELS: ML,Hospital'
    entry = read_references(RIS.format(tags=f"N1  - {note}\nUR  - https://a.org/1\nL2  - https://b.org/2\n"))[0]
    assert entry.get("label") == '{"Kofi"=>"Included", "Ama"=>"Maybe"}'
    assert entry.get("note") == note and entry.get("url") == "https://a.org/1"
    second_note = read_references(RIS.format(tags='N1  - RAYYAN-INCLUSION: {"Kofi"=>"Excluded"}\nN1  - call back\n'))[0]
    assert second_note.get("label") == '{"Kofi"=>"Excluded"}'
    csv_entry = read_references(f'ID,title,note\nr1,A trial,"{note.replace(chr(34), chr(34) * 2)}"\n', "csv")[0]
    assert csv_entry.get("label") == entry.get("label")


def test_a_csl_literal_name_is_one_author_in_braces():
    csl = read_references('[{"id": "a", "title": "T", "author": [{"literal": "World Health Organization"}]}]')[0]
    assert csl.get("author") == "{World Health Organization}"


# --------------------------------------------------------------------------- CSV with a column mapping

SCOPUS_LIKE = ('Authors,Title,Year,Source title,DOI,PubMed ID,EID\n'
               '"Phillips J.C., Braun R.",Scalable molecular dynamics with NAMD,2005,Journal of Computational '
               'Chemistry,10.1002/jcc.20289,16222654,2-s2.0-27344436659\n')
COLUMNS = {"ID": "EID", "author": "Authors", "title": "Title", "year": "Year", "journal": "Source title",
           "doi": "DOI", "pmid": "PubMed ID"}


def test_csv_with_a_column_mapping():
    entry = read_references(SCOPUS_LIKE, columns=COLUMNS)[0]
    assert (entry.id, entry.get("title"), entry.get("pmid"), entry.get("journal")) == (
        "2-s2.0-27344436659", "Scalable molecular dynamics with NAMD", "16222654", "Journal of Computational Chemistry")
    without_id = read_references(SCOPUS_LIKE, columns={key: value for key, value in COLUMNS.items() if key != "ID"})
    assert [entry.id for entry in without_id] == ["csv-1"]  # by position
    with pytest.raises(ReferenceProblem, match="no column 'Article Title'") as error:
        read_references(SCOPUS_LIKE, columns={"title": "Article Title"})
    assert error.value.line == 1


def test_a_mapped_column_wins_over_a_column_of_the_fields_name():
    entry = read_references("key,title,Article Title\na,Short,The full title\n",
                            columns={"ID": "key", "title": "Article Title"})[0]
    assert entry.get("title") == "The full title"


# --------------------------------------------------------------------------- malformed input, with its line


@pytest.mark.parametrize(("format", "text", "line", "message"), [
    ("medline", "PMID- 1\nTI  - One\n\nPMID- 2\nTI  - Two\nthis line has no tag\n", 6, "not a MEDLINE tag line"),
    ("medline", "PMID- 1\nTI  - One\nDP  - spring\n", 3, "DP 'spring' holds no four-digit year"),
    ("medline", "PMID- 1\nTI  - One\n\nPMID- 2\nTI  - Two\n\nOWN - NLM\nLA  - eng\n", 7,
     "entry 'medline-3' has no field"),
    ("medline", "\n\n", 1, "no MEDLINE record"),
    ("wos", "FN x\nVR 1.0\nPT J\nTI One\nPT J\nTI Two\nER\nEF\n", 3, r"no ER line before the next PT \(line 5\)"),
    ("wos", "FN x\nPT J\nTI One\n", 2, "no ER line before the end of the file"),
    ("wos", "FN x\nTI One\nPT J\nTI Two\nER\n", 2, "TI outside a record"),
    ("wos", "PT J\nTI One\nPY 20x1\nER\n", 3, "PY '20x1' holds no four-digit year"),
    ("csl-json", '[\n  {"id": "a", "title": "One"},\n  {"id": "b", "title": "Two",}\n]\n', 3, "not valid JSON"),
    ("csl-json", '[\n  {"id": "a", "title": "One"},\n  "b"\n]\n', 3, "not a CSL-JSON item: a str"),
    ("csl-json", '[{"id": "a", "title": "One"}] x', 1, "text after the closing ']'"),
    ("csl-json", '[\n{"id": "a",\n "title": "One", "author": "Smith"}]', 2, "author is not a list of names"),
    ("csl-json", '[{"id": "a", "title": {"x": 1}}]', 1, "title is not text"),
    ("csl-json", '[{"id": "a", "title": "One", "issued": {"date-parts": [["20x1"]]}}]', 1, "year '20x1'"),
    ("csl-json", '"a"', 1, "expected an array of items"),
    ("csl-json", "[]", 1, "no CSL-JSON item"),
    ("ris", "TY  - JOUR\nER  - \n", 1, "entry 'ris-1' has no field"),
    ("csv", "ID,title\na,One\nb,\n", 3, "entry 'b' has no field"),
])
def test_malformed_entries_name_their_line(format, text, line, message):
    with pytest.raises(ReferenceProblem, match=message) as error:
        read_references(text, format)
    assert error.value.line == line


def test_repeated_pmids_and_csl_ids_name_every_record_by_position():
    warnings: list[str] = []
    entries = read_references("PMID- 7\nTI  - One\n\nPMID- 8\nTI  - Two\n\nPMID- 7\nTI  - One again\n",
                              warnings=warnings)
    assert [entry.id for entry in entries] == ["medline-1", "medline-2", "medline-3"]
    assert warnings == ["ID '7' on line 7 was already used on line 1; every record is named by its position instead "
                        "(medline-1 to medline-3)"]
    entries = read_references('[{"id": 1, "title": "One"}, {"id": 1, "title": "Two"}, {"title": "Three"}]')
    assert [entry.id for entry in entries] == ["csl-1", "csl-2", "csl-3"]


def test_entries_without_a_title_are_reported_as_a_warning():
    warnings: list[str] = []
    entries = read_references('[{"id": "a", "DOI": "10.1000/1"}, {"id": "b", "title": "Two"}]', warnings=warnings)
    assert len(entries) == 2 and warnings == ["1 of 2 entries has no title (line 1)"]


def test_format_by_content_and_suffix(tmp_path):
    assert sniff("\nPMID- 12345678\nOWN - NLM\n") == "medline"
    assert sniff("OWN - ERIC\nTI  - Paper title\n") == "medline"
    assert sniff("FN Clarivate Analytics Web of Science\nVR 1.0\n") == "wos"
    assert sniff('  [\n  {"id": "a"}]') == "csl-json" and sniff('{"id": "a"}') == "csl-json"
    for suffix in (".nbib", ".medline"):
        (tmp_path / f"a{suffix}").write_text("PMID- 1\nTI  - One\n", encoding="utf-8")
        assert read_references(tmp_path / f"a{suffix}")[0].id == "1"
    (tmp_path / "a.ciw").write_text("PT J\nTI One\nER\n", encoding="utf-8")
    (tmp_path / "a.json").write_text('{"id": "x", "title": "One"}', encoding="utf-8")
    assert [read_references(tmp_path / name)[0].id for name in ("a.ciw", "a.json")] == ["wos-1", "x"]


# --------------------------------------------------------------------------- encodings

MEDLINE = "PMID- 1\nTI  - Caf\u00e9 au lait\nAU  - M\u00fcller H\n\nPMID- 2\nTI  - \u2018Quoted\u2019 title\n"


@pytest.mark.parametrize("encoded", [
    codecs.BOM_UTF16_LE + MEDLINE.replace("\n", "\r\n").encode("utf-16-le"),  # EndNote on Windows
    codecs.BOM_UTF16_BE + MEDLINE.encode("utf-16-be"),
    codecs.BOM_UTF8 + MEDLINE.replace("\n", "\r").encode("utf-8"),  # old Mac line ends
])
def test_utf16_with_its_mark_and_any_line_ends_are_read(tmp_path, encoded):
    source = tmp_path / "pubmed.nbib"
    source.write_bytes(encoded)
    entries = read_references(source)
    assert [entry.get("title") for entry in entries] == ["Café au lait", "\u2018Quoted\u2019 title"]
    assert entries[0].get("author") == "Müller, H" and [entry.line for entry in entries] == [1, 5]


def test_latin1_and_cp1252_only_when_named(tmp_path):
    source = tmp_path / "latin.ris"
    source.write_bytes("TY  - JOUR\nTI  - Caf\u00e9 \u2013 au lait\nER  - \n".encode("cp1252"))
    with pytest.raises(ReferenceProblem, match="not UTF-8 text.*--encoding cp1252") as error:
        read_references(source)  # 0x96 is Windows-1252's en dash (a control character as Latin-1): cp1252 named
    assert error.value.line == 2
    (source.parent / "plain.ris").write_bytes("TY  - JOUR\nTI  - Caf\u00e9\nER  - \n".encode("latin-1"))
    with pytest.raises(ReferenceProblem, match="not UTF-8 text.*--encoding latin-1"):
        read_references(source.parent / "plain.ris")
    assert read_references(source, encoding="cp1252")[0].get("title") == "Café \u2013 au lait"
    # Latin-1 has no character at 0x96 (a control character no text holds): Windows-1252's en dash, as browsers
    # read a page labelled Latin-1.
    assert read_references(source, encoding="latin-1")[0].get("title") == "Café \u2013 au lait"
    source.write_bytes(b"TY  - JOUR\nTI  - A\nER  - \nTY  - JOUR\nTI  - \x81\nER  - \n")
    with pytest.raises(ReferenceProblem, match="not cp1252 text") as error:
        read_references(source, encoding="cp1252")  # 0x81 is no cp1252 letter
    assert error.value.line == 5
    with pytest.raises(LookupError):
        read_references(source, encoding="klingon")


# --------------------------------------------------------------------------- skipping bad records

SKIPPING = [
    ("ris", "TY  - JOUR\nTI  - One\nER  - \nTY  - JOUR\nTI  - Two\nAU - Smith\nER  - \nTY  - JOUR\nTI  - Three\n"
            "TY  - JOUR\nTI  - Four\nPY  - 2001\nER  - \nstray text\nTY  - JOUR\nTI  - Five\nPY  - soon\nER  - \n",
     ["One", "Four"], [(6, "not a RIS tag line"), (8, "no ER line before the next TY (line 10)"),
                       (14, "text outside a record"), (17, "PY 'soon' holds no four-digit year")]),
    ("bibtex", "@article{a, title={One}}\n@article{b, title={Two\n\n@article{c, title={Three}}\n"
               "@article{a, title={Four}}\n@article{d, title={Five}, year={20x1}}\n",
     ["One", "Three"], [(2, "not valid BibTeX"), (5, "ID 'a' was already used on line 1"), (6, "year '20x1'")]),
    ("csv", "ID,title,year\na,One,2001\nb,Two\nc,Three,2003\nc,Four,2004\n",
     ["One", "Three"], [(3, "2 fields where the header has 3"), (5, "ID 'c' was already used on line 4")]),
    ("medline", "PMID- 1\nTI  - One\n\nPMID- 2\nTI  - Two\nno tag\n\nPMID- 3\nTI  - Three\nDP  - 2003 Jan\n",
     ["One", "Three"], [(6, "not a MEDLINE tag line")]),
    ("wos", "FN x\nPT J\nTI One\nER\nPT J\nTI Two\nPT J\nTI Three\nER\nEF\n",
     ["One", "Three"], [(5, "no ER line before the next PT (line 7)")]),
    ("csl-json", '[{"id": "a", "title": "One"},\n 7,\n {"id": "c", "title": "Three"},\n {"id": "d", "author": 1}]',
     ["One", "Three"], [(2, "not a CSL-JSON item: a int"), (4, "author is not a list of names")]),
]


@pytest.mark.parametrize(("format", "text", "titles", "problems"), SKIPPING)
def test_skipped_lists_every_bad_record_and_the_rest_are_read(format, text, titles, problems):
    skipped: list[tuple[int, str]] = []
    entries = read_references(text, format, skipped=skipped)
    assert [entry.get("title") for entry in entries] == titles
    assert [line for line, _ in skipped] == [line for line, _ in problems]
    for (_, why), (_, expected) in zip(skipped, problems, strict=True):
        assert expected in why
    with pytest.raises(ReferenceProblem) as error:  # without a list: the first problem
        read_references(text, format)
    assert error.value.line == problems[0][0]


def test_a_file_broken_beyond_one_record_raises_even_when_skipping():
    with pytest.raises(ReferenceProblem, match="is never closed") as error:
        read_references('ID,title\na,"unclosed\nb,Two\n', "csv", skipped=[])
    assert error.value.line == 2
    with pytest.raises(ReferenceProblem, match="not valid JSON"):
        read_references('[{"id": "a", "title": "One"}, {"id": ]', "csl-json", skipped=[])


def test_positions_stay_the_ids_of_good_records_when_others_are_skipped():
    text = "TY  - JOUR\nTI  - One\nER  - \nTY  - JOUR\nAU - Bad\nER  - \nTY  - JOUR\nTI  - Three\nER  - \n"
    assert [entry.id for entry in read_references(text, skipped=[])] == ["ris-1", "ris-3"]


# --------------------------------------------------------------------------- `sitegen dedupe`


@pytest.mark.parametrize("name", ["medline/pubmed_result3.txt", "medline/eric_nbib.nbib",
                                  "csl/manubot_bibliography.json"])
def test_dedupe_reads_the_new_formats(tmp_path, sitegen, name):
    code, stdout, err = sitegen("dedupe", FIXTURES / name, "--out", tmp_path / "predicted.csv")
    assert code == 0, err
    assert stdout.startswith(counted(len(read_references(FIXTURES / name)), "record") + ":")


def test_dedupe_encoding_option(tmp_path, sitegen):
    source = tmp_path / "savedrecs.ciw"
    source.write_bytes(WOS.replace("Hsu, JP", "H\u00f8st, JP").encode("latin-1"))
    code, _, err = sitegen("dedupe", source, "--out", tmp_path / "p.csv")
    assert code == 1 and f"{source}:28: not UTF-8 text" in err and not (tmp_path / "p.csv").exists()
    code, stdout, err = sitegen("dedupe", source, "--encoding", "latin-1", "--out", tmp_path / "p.csv")
    assert code == 0 and stdout.startswith("2 records:"), err
    code, _, err = sitegen("dedupe", source, "--encoding", "klingon", "--out", tmp_path / "q.csv")
    assert code == 2 and "'--encoding': 'klingon' is not a text encoding" in err and not (tmp_path / "q.csv").exists()


def test_biblatex_and_reference_managers_bibtex_is_read_as_they_mean_it():
    # Zotero writes a title's Greek letters and sub- and superscripts as inline math; biblatex (Better BibLaTeX,
    # JabRef) names the journal `journaltitle` and dates with `date`; Web of Science writes months "MAR 1".
    from sitegen.references.records import entry_record

    text = r"""@article{zotero,
  title = {{$\beta$}-Amyloid and {CO$_2$}: a {$^{13}$C} study of \$5 kits},
  journaltitle = {Lancet Diabetes \& Endocrinology},
  date = {2019-07-04},
  author = {Smith, Jo}
}
@article{wos,
  title = {A second study},
  journal = {Brain},
  year = {2018},
  month = {MAR 1},
  author = {Doe, Ann}
}
"""
    zotero, wos = (entry_record(entry) for entry in read_references(text, "bibtex"))
    assert zotero.title == "β-Amyloid and CO2: a 13C study of $5 kits"
    assert (zotero.container_title, zotero.issued.date_parts) == ("Lancet Diabetes & Endocrinology", [[2019, 7, 4]])
    assert wos.issued.date_parts == [[2018, 3]]


def test_xml_other_than_endnotes_is_named_with_the_way_out(tmp_path):
    # EndNote XML is read (test_references_endnote.py); other XML, given as text of no suffix, is named
    source = tmp_path / "library.txt"
    source.write_text('<?xml version="1.0" encoding="UTF-8"?><rdf:RDF xmlns:rdf="x"><bib:Article/></rdf:RDF>',
                      encoding="utf-8")
    with pytest.raises(ReferenceProblem, match="XML other than EndNote's is not read: export the references as RIS") \
            as error:
        read_references(source)
    assert error.value.line == 1
    assert "(sitegen reads a records CSV with an ID column, RIS, EndNote XML, BibTeX, MEDLINE" in error.value.message


def test_a_ris_export_header_naming_its_database_names_the_database_of_its_records():
    # APA's and EBSCO's RIS exports open with "Database: PsycINFO": their records name none themselves, and
    # an import would count them under other methods.
    entries = read_references(FIXTURES / "ris" / "psycinfo_ris.ris")
    assert {entry.get("database") for entry in entries} == {"PsycINFO"}
    named = "Database: PsycINFO\n\nTY  - JOUR\nTI  - A study\nDB  - MEDLINE\nER  - \n"
    assert read_references(named, "ris")[0].get("database") == "MEDLINE"  # a record's own DB wins


def test_csl_json_items_one_after_another_are_each_read():
    # A file of items one per line (records.jsonl's form) was read as its first item alone, the rest dropped
    # without a word; text after an item, and a key given twice, were taken silently.
    from sitegen.references.csl import read_csl_json

    lines = (ROOT / "reviews" / "object-in-context" / "records.jsonl").read_text(encoding="utf-8").splitlines()[:5]
    assert len(read_csl_json("\n".join(lines) + "\n")) == 5
    with pytest.raises(ReferenceProblem, match="line 2: not CSL-JSON: text after an item"):
        read_csl_json(lines[0] + "\nnot an item\n")
    with pytest.raises(ReferenceProblem, match="the key 'title' is given twice"):
        read_csl_json('{"id": "a", "title": "One", "title": "Two"}')
    # A service's answer wrapping the items ({"items": [...]}) is named as such (it was "entry 'csl-1' has no
    # field"); an item holding lists of objects (its authors) is an item.
    with pytest.raises(ReferenceProblem, match="line 1: an object holding a list of items under 'items'"):
        read_csl_json('{"items": [{"id": "a", "type": "book", "title": "T"}]}')
    assert len(read_csl_json('{"id": "a", "title": "T", "author": [{"family": "Doe"}]}')) == 1


def test_web_of_science_and_biblatex_article_numbers_are_the_pages_of_an_entry_without_them(tmp_path):
    # Web of Science's BibTeX export (litsearchr's inst/extdata/borealis/final_search/bibs/WoS_*.bib) and biblatex
    text = ("@article{ ISI:000458747000001,\nAuthor = {Maphisa, David H.},\nTitle = {{Dynamic occupancy models}},\n"
            "Journal = {{PEERJ}},\nYear = {{2019}},\nDOI = {{10.7717/peerj.6276}},\nArticle-Number = {{e6276}},\n}\n"
            "@article{b, author = {Doe, Ann}, title = {Paged}, journaltitle = {PLOS ONE}, date = {2020}, "
            "eid = {e0230000}, pages = {1-12}}\n")
    assert [entry.get("pages") for entry in read_references(text, "bibtex")] == ["e6276", "1-12"]


def test_a_scopus_book_chapter_exported_as_a_book_is_a_chapter_as_in_the_csv_export():
    entries = read_references(FIXTURES / "bibtex" / "scopus_bib.bib")
    (chapter,) = [entry for entry in entries if entry.id == "Bookchapterwriter202150"]  # document_type Book Chapter
    assert entry_record(chapter).type == "chapter"  # Scopus writes it @book, with the book's title as `journal`


def test_a_codec_of_no_files_text_is_refused_before_any_file_is_read(tmp_path, sitegen, example_copy):
    # Punycode, a text encoding Python knows (of domain names), refused a file's bytes with a bare UnicodeError
    # (no byte named), which went up as a traceback from dedupe and import; then it was read as an encoding whose
    # text did not decode. It is no encoding of a file: the option is wrong in itself.
    encoding = "punycode"
    source = FIXTURES / "ris" / "example_full.ris"
    before = tree_bytes(example_copy)
    code, _, err = sitegen("dedupe", source, "--encoding", encoding, "--out", tmp_path / "sets.csv")
    assert code == 2 and "not an encoding of text files" in err and "utf-8, utf-16, cp1252" in err, err
    assert "Traceback" not in err and not (tmp_path / "sets.csv").exists()
    code, _, err = sitegen("import", example_copy, source, "--at", "2024-01-01T00:00:00Z", "--encoding", encoding)
    assert code == 2 and "not an encoding of text files" in err and tree_bytes(example_copy) == before


@pytest.mark.parametrize("encoding", ["idna", "punycode", "unicode_escape", "raw_unicode_escape", "charmap",
                                      "undefined", "rot13", "base64", "hex", "klingon"])
def test_only_encodings_of_text_files_are_codecs_of_text(encoding):
    with pytest.raises(LookupError, match="cp1252"):
        text_codec(encoding)


@pytest.mark.parametrize("encoding", ["utf-8", "UTF-16LE", "latin-1", "windows-1252", "mac_roman", "cp437", "utf-7",
                                      "shift_jis", "gb18030"])
def test_the_encodings_files_are_written_in_are_codecs_of_text(encoding):
    assert text_codec(encoding).name


@pytest.mark.parametrize(("note", "pmid"), [
    ("PMID: 12345678", "12345678"),  # Zotero's BibTeX export writes its Extra field as the note
    ("pmid 12345678", "12345678"),
    ("Comment in: Lancet. 2020;395:e5. PMID: 32222222", ""),  # another article's PMID, named in free text
])
def test_a_bibtex_note_that_is_a_pmid_alone_gives_the_pmid(note, pmid):
    [entry] = read_references(f"@article{{p, title={{T}}, author={{Doe, J}}, year=2020, note={{{note}}}}}",
                              "bibtex", [])
    assert entry.fields["pmid"] == pmid
