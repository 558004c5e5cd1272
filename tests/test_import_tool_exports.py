"""Exports of the reference managers and screening tools a review passes its records through (Rayyan, Zotero,
Mendeley, EndNote, ...), read field by field as `sitegen import` files them.

The files in tests/fixtures are excerpts of real exports of asreview/citation-file-formatting (CC0): see
tests/fixtures/README.md."""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from test_import import new_review, prisma

from sitegen.references import ReferenceProblem, read_reference_file, read_references
from sitegen.references.records import entry_record


def records(name: str) -> list:
    return [entry_record(entry) for entry in read_references(FIXTURES / name)]


def test_a_tag_glued_to_the_end_of_a_tag_line_is_a_tag_line_of_its_own():
    # Rayyan writes its U2 after the UR and its LK after the DO on one line, after a run of spaces: the DOI and the
    # address were read with the glued tag in them, were not valid and were lost.
    erratum, morphology = records("ris/rayyan.ris")
    assert (erratum.DOI, morphology.DOI) == ("10.1038/s41598-024-65283-y", "10.1002/ar.25299")
    assert morphology.URL == "https://www.embase.com/search/results?subaction=viewrecord&id=L2024893804&from=export"
    assert ([(name.family, name.given) for name in morphology.author][:2], morphology.container_title,
            morphology.volume, morphology.issue, morphology.page) == (
        [("Fawcett", "M.J."), ("Lautenschlager", "S.")], "Anat. Rec.", "307", "3", "549-565")
    # a run of spaces before what is not a tag ("B  -  C", "b  - c") is the value's
    [entry] = read_references("TY  - JOUR\nTI  - A   B  -  C   b  - c\nER  - \n", "ris")
    assert entry.get("title") == "A B - C b - c"


def test_a_ris_tag_glued_to_a_csv_cell_is_not_the_cells():
    # Rayyan's CSV export keeps the glued tags of its RIS in the url and doi cells ("10.1002/ar.25299     LK  - ...")
    erratum, morphology = records("spreadsheet/rayyan.csv")
    assert (erratum.DOI, morphology.DOI) == ("10.1038/s41598-024-65283-y", "10.1002/ar.25299")
    assert morphology.URL == "https://www.embase.com/search/results?subaction=viewrecord&id=L2024893804&from=export"
    assert ([(name.family, name.given) for name in erratum.author][:2], erratum.container_title, erratum.volume,
            erratum.issue, erratum.page, erratum.issued.date_parts[0]) == (
        [("Troiano", "L.P."), ("Dos Santos", "H.B.")], "Sci Rep", "14", "1", "14316", [2024])


def test_a_given_name_written_null_is_no_given_name():
    # Mendeley writes a JSON null for the given names it lacks ("van den Hoven, null"): "null" was the given name
    first, second = records("ris/mendeley.ris")
    assert [(name.family, name.given) for name in first.author][:2] == [
        ("van den Hoven", None), ("Smits", "Maarten L J")]
    assert (first.container_title, first.volume, first.issue, first.page, first.DOI) == (
        "Journal of Vascular and Interventional Radiology", "25", "3", "S105", "10.1016/j.jvir.2013.12.293")
    assert [(name.family, name.given) for name in second.author][1] == ("Meyerbröker", "K")
    # a family name Null is a name
    [entry] = read_references("TY  - JOUR\nTI  - A\nAU  - Null, Ann\nER  - \n", "ris")
    assert [(name.family, name.given) for name in entry_record(entry).author] == [("Null", "Ann")]


def test_several_addresses_in_one_url_field_give_the_first():
    # EPPI-Reviewer writes the database's record and the DOI's address in one UR, after a space: the field was lost
    morphology, erratum = records("ris/eppireviewer.ris")
    assert morphology.URL == "https://www.embase.com/search/results?subaction=viewrecord&id=L2024893804&from=export"
    assert (morphology.DOI, morphology.page, morphology.issued.date_parts[0]) == ("10.1002/ar.25299", "549-565", [2024])
    # text that is not all addresses is no address
    [entry] = read_references("TY  - JOUR\nTI  - A\nUR  - https://a.org/x see https://b.org\nER  - \n", "ris")
    assert entry_record(entry).URL is None


def test_an_ebscohost_doi_in_l3_is_the_doi():
    # EBSCOhost's RIS (here Academic Search Premier, as the asreview set calls its CINAHL export) writes the DOI in
    # L3 alone, a tag the reader left out: every record lost its DOI
    [plumage] = records("ris/ebscohost_aph.ris")
    assert (plumage.DOI, plumage.container_title, plumage.volume, plumage.issue, plumage.page,
            plumage.issued.date_parts[0]) == ("10.4202/pp.2023.6802", "Palaeontologia Polonica", "68", "2",
                                              "213-225", [2023, 4])
    # its authors in capitals, two given name first: kept as written, where "JUNCHANG LÜ" was split as "Junchang, Lü"
    assert [name.literal or (name.family, name.given) for name in plumage.author] == [
        ("CROUDACE", "ANGUS D."), "CAIZHI SHEN", "JUNCHANG LÜ", ("BRUSATTE", "STEPHEN L.")]
    # an L3 that is no DOI (a related record's address) is no DOI
    [entry] = read_references("TY  - JOUR\nTI  - A\nL3  - https://a.org/10.1234/b\nER  - \n", "ris")
    assert not entry.get("doi")


def test_a_pubmed_medline_file_saved_as_ris_is_read_as_medline(tmp_path):
    # a file named .ris whose content is PubMed's MEDLINE format was refused: "text outside a record"
    [entry], format, _ = read_reference_file(FIXTURES / "medline" / "pubmed_saved_as.ris")
    spinosaurus = entry_record(entry)
    assert format == "medline"
    assert (spinosaurus.PMID, spinosaurus.DOI, spinosaurus.container_title, spinosaurus.volume) == (
        "36448670", "10.7554/elife.80092", "eLife", "11")
    assert [(name.family, name.given) for name in spinosaurus.author] == [("Sereno", "Paul C"), ("Myhrvold", "Nathan")]
    # a RIS file stays RIS, and a format given is the format read
    ris = tmp_path / "a.ris"
    ris.write_text("TY  - JOUR\nTI  - A\nER  - \n")
    assert read_reference_file(ris)[1] == "ris"
    with pytest.raises(ReferenceProblem):
        read_reference_file(FIXTURES / "medline" / "pubmed_saved_as.ris", "ris")


def test_ebscohosts_copyright_statement_closing_an_abstract_is_no_part_of_it():
    # EBSCOhost writes its statement as a second AB ("Copyright of Palaeontologia Polonica is the property of ..."):
    # it was read as the end of the abstract
    [plumage] = records("ris/ebscohost_aph.ris")
    # and its mark of the abstract's source before it ("[ABSTRACT FROM AUTHOR]"), its words, not the authors'
    assert plumage.abstract == ("Colour reconstructions have provided new insights into the lives of dinosaurs and "
                                "other extinct animals.")
    # the words within a sentence are the abstract's
    [entry] = read_references("TY  - JOUR\nTI  - A\nAB  - We ask whether the copyright of a dataset is the property "
                              "of its authors.\nER  - \n", "ris")
    assert entry_record(entry).abstract.endswith("is the property of its authors.")


def test_a_family_name_and_its_initials_on_two_author_lines_are_one_name():
    # EPPI-Reviewer writes Embase's "Dos Santos, H.B." as two A1 lines, "Dos Santos" and "H B": two authors were read
    morphology, erratum = records("ris/eppireviewer.ris")
    assert [(name.family, name.given) for name in erratum.author] == [
        ("Troiano", "L P"), ("Dos Santos", "H B"), ("Aureliano", "T"), ("Ghilardi", "A M")]
    assert len(morphology.author) == 4

    def authors(*lines: str) -> list[tuple[str | None, str | None]]:
        text = "TY  - JOUR\nTI  - A\n" + "".join(f"A1  - {line}\n" for line in lines) + "ER  - \n"
        [entry] = read_references(text, "ris")
        return [(name.family, name.given) for name in entry_record(entry).author]

    # a particle's family name, a lone initial, initials with full stops or a hyphen
    assert authors("van der Berg", "A", "El Amrani", "J-P", "De Souza", "A.B.") == [
        ("van der Berg", "A"), ("El Amrani", "J-P"), ("De Souza", "A.B.")]
    # under a whole name, initials stay apart (two real authors are never one); a family name in capitals is a name
    assert len(authors("Smith J", "H B")) == 2
    assert len(authors("Smith, John", "H")) == 2
    [entry] = read_references("TY  - JOUR\nTI  - A\nA1  - Dos Santos\nA1  - LE\nA1  - Da Silva\nA1  - WU\nER  - \n", "ris")
    assert entry.get("author") == "Dos Santos and LE and Da Silva and WU"


@pytest.mark.parametrize("name", ["spreadsheet/rayyan.csv", "ris/rayyan.ris", "ris/eppireviewer.ris"])
def test_a_tools_export_of_embase_records_is_counted_under_embase_whichever_format(sitegen, tmp_path, name):
    # Rayyan's CSV names no database, but each record's url is its Embase.com address, as in its RIS twin: the RIS was
    # counted under Embase (identification from databases), the CSV under "other methods", by the file's name
    review = new_review(sitegen, tmp_path)
    code, out, err = sitegen("import", review, FIXTURES / name, "--at", "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert "counted as a database (Embase)" in out
    assert prisma(sitegen, review)["identified_by_source"] == {"Embase": 2}
def test_a_scopus_ris_export_is_read_field_by_field():
    # Scopus's RIS: the article number in C7 (no SP), the PMID in C2, the ISSN with "(ISSN)", "ER  -" with no space
    # after it, and the publisher's statement closing each abstract, in three forms
    communications, anatomy, peerj = records("ris/scopus.ris")
    assert (communications.page, communications.PMID, communications.volume, communications.issue) == (
        "2864", "38580657", "15", "1")
    assert (anatomy.page, anatomy.PMID, peerj.page, peerj.PMID, peerj.issue) == ("1084-1092", "36971057", "e15453",
                                                                                   None, None)
    assert [(name.family, name.given) for name in anatomy.author] == [
        ("Aureliano", "T."), ("Ghilardi", "A.M."), ("Müller", "R.T.")]
    assert communications.abstract.endswith("address longstanding ecological principles.")
    assert anatomy.abstract.endswith("Respiratory System of saurischian dinosaurs.")
    assert peerj.abstract.endswith("post-Cenomanian spinosaurid persistence.")
    assert {entry.get("database") for entry in read_references(FIXTURES / "ris" / "scopus.ris")} == {"Scopus"}


def test_the_pubmed_and_pmc_pages_among_a_records_addresses_give_its_ids():
    # Zotero (here of lens.org records) writes its own address in UR and each page it knows of the work in L2:
    # PubMed's, PubMed Central's, Europe PMC's. RIS has no tag for a PMID or PMCID, and they were lost.
    radiology, electrochemotherapy, diabetes, carbapenem = records("ris/zotero_lens.ris")
    assert (radiology.PMID, radiology.PMCID, radiology.URL) == ("22752652", None, "https://lens.org/000-463-679-101-319")
    assert (electrochemotherapy.PMID, electrochemotherapy.PMCID) == (None, "PMC7999968")
    assert (diabetes.PMID, diabetes.PMCID) == ("33796074", "PMC8008960")
    assert (carbapenem.PMID, carbapenem.DOI) == ("32795483", "10.1016/j.jinf.2020.08.008")
    # and writes a particle after the given names: "Doesschate, T. ten" is T. ten Doesschate
    assert any((name.family, name.given) == ("ten Doesschate", "T.") for name in carbapenem.author)
    # EndNote writes them in UR, one address a line below the tag, beside the same page's older addresses
    hodgkin, resistance = records("ris/endnote_lens.txt")
    assert (hodgkin.PMID, hodgkin.PMCID, hodgkin.URL) == ("26931115", None, "http://dspace.library.uu.nl/handle/1874/342747")
    assert (resistance.PMID, resistance.PMCID, resistance.issued.date_parts[0]) == ("33202025", "PMC8328216", [2021, 8, 2])
    # pages of two works name neither's id; a page elsewhere with a number is no PubMed page
    [entry] = read_references("TY  - JOUR\nTI  - A\nL2  - https://pubmed.ncbi.nlm.nih.gov/1/\n"
                              "L2  - https://pubmed.ncbi.nlm.nih.gov/2/\nUR  - https://example.org/pubmed/3\nER  - \n",
                              "ris")
    assert (entry_record(entry).PMID, entry_record(entry).URL) == (None, "https://example.org/pubmed/3")


def test_an_iso_date_in_a_ris_date_tag_is_the_full_date():
    # OpenAlex's RIS writes DA as an ISO date ("2024-02-01"), not RIS's "2024/02/01/": only the year was read
    charophytes, cephalopods = records("ris/openalex.ris")
    assert (charophytes.issued.date_parts[0], cephalopods.issued.date_parts[0]) == ([2024, 2, 1], [2024, 4, 3])
    assert [(name.family, name.given) for name in charophytes.author] == [
        ("Vicente", "Alba"), ("Sanjuan", "Josep"), ("Martín–Closas", "Carles")]
    assert cephalopods.abstract.startswith("Orthoconic cephalopods")  # the publisher's heading "Abstract" left out
    # each author's addresses, a C1 line each, are no second C1 left out (a note for every record with two)
    notes: list[str] = []
    read_references(FIXTURES / "ris" / "openalex.ris", warnings=notes)
    assert notes == []
    # a date that is none stays the year
    [entry] = read_references("TY  - JOUR\nTI  - A\nPY  - 2024\nDA  - 2024-13-01\nER  - \n", "ris")
    assert entry_record(entry).issued.date_parts[0] == [2024]


def test_a_database_written_one_name_a_line_is_the_first():
    # EndNote writes each value of a field on a line of its own: "DB  - Embase" with "Medline" below it, as Embase.com
    # says which sources index the record. The lines were read as one database, "Embase Medline", which also named
    # MEDLINE: its accession number was then read as a PMID and its page range as MEDLINE's shortened one.
    entries = read_references(FIXTURES / "ris" / "endnote_embase.ris")
    assert [entry.get("database") for entry in entries] == ["Embase"] * 4
    saurosuchus = entry_record(entries[3])
    assert (saurosuchus.page, saurosuchus.PMID, saurosuchus.issue) == ("549-565", None, "3")
    [entry] = read_references("TY  - JOUR\nTI  - A\nDB  - Embase\nMedline\nAN  - 2030246463\nSP  - 221\nEP  - 8\n"
                              "ER  - \n", "ris")
    assert (entry.get("database"), entry.get("pmid"), entry.get("pages")) == ("Embase", "", "221-8")
    [entry] = read_references("TY  - JOUR\nTI  - A\nDB  - Medline\nEmbase\nAN  - 2030246463\nER  - \n", "ris")
    assert (entry.get("database"), entry.get("pmid")) == ("Medline", "2030246463")


def test_embases_author_addresses_written_as_the_issue_are_no_issue():
    # Covidence's RIS of Embase records writes Embase's list of the authors' addresses in IS: it was the issue
    scales, erratum, strata, haplocanthosaurus = read_references(FIXTURES / "ris" / "covidence_embase.ris")
    notes: list[str] = []
    assert entry_record(haplocanthosaurus, warnings=notes).issue is None
    assert notes == ["number '(Boisvert C.) Brigham Young University, Provo, UT, United St' is the authors' "
                     "addresses, not a volume or issue; left out"]
    assert [entry_record(entry).issue for entry in (scales, erratum, strata)] == ["1", "1", "1"]
    assert (entry_record(erratum).page, entry_record(scales).abstract) == (
        "14316", "Fossil feathers have transformed our understanding of integumentary evolution in vertebrates.")
    # the other forms of each address list; an issue in brackets, or a part's name, is the issue
    for issue, kept in [("(Wedel M., mathew.wedel@gmail.com) Western University, Pomona, CA, United States", None),
                        ("(Fawcett M.J.; Lautenschlager S.) School of Geography, Birmingham, United Kingdom", None),
                        ("(Jalil N.-E.) Museum of Marrakech, Marrakesh, Morocco", None),
                        # a name in brackets before the address's first comma, as Embase writes one
                        ("(Jalil N.-E.) Museum of Marrakech (Museum of Natural History of Marrakesh, Univ. Cadi Ayyad)"
                         ", Marrakesh, Morocco", None),
                        ("(2)", "(2)"), ("(Part A.) Abstracts of the 2019 meeting", "(Part A.) Abstracts of the 2019 "
                                                                                     "meeting")]:
        [entry] = read_references(f"TY  - JOUR\nTI  - A\nIS  - {issue}\nER  - \n", "ris")
        assert entry_record(entry).issue == kept


def test_the_cochrane_librarys_ris_export_with_a_record_heading_is_read(sitegen, tmp_path):
    # The Cochrane Library heads each record of its RIS export "Record #3 of 18" (then its Provider and Content
    # lines): the file was refused, "text outside a record"; and its C3 labels the PMID "PUBMED 21314913", lost.
    trial, literacy = records("ris/cochrane_refman.ris")
    assert (trial.PMID, literacy.PMID) == ("21314913", "38407106")
    assert ([(name.family, name.given) for name in literacy.author], literacy.container_title, literacy.volume,
            literacy.issue, literacy.page, literacy.DOI) == (
        [("Kim", "JS"), ("Gilbert", "JB")], "Developmental psychology", "60", "7", "1279-1297", "10.1037/dev0001710")
    assert literacy.abstract.endswith("long‐term academic achievement outcomes.")  # the APA's statement left out
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2026-05-01T00:00:00Z")
    code, out, err = sitegen("import", review, FIXTURES / "ris" / "cochrane_refman.ris", "--at", "2026-06-01T00:00:00Z")
    assert code == 0, err
    assert "counted as a database (Cochrane CENTRAL)" in out
    # a heading of other words is still text outside a record, named by its line
    with pytest.raises(ReferenceProblem) as error:
        read_references("Record 3 of 18\nTY  - JOUR\nTI  - A\nER  - \n", "ris")
    assert error.value.line == 1


def test_a_medline_publication_date_keeps_its_day(tmp_path):
    # PubMed's MEDLINE export (saved as .txt) dates an article "DP  - 2006 Aug 7": the day was lost, where PubMed's
    # own records keep it ([2006, 8, 7]), so one article had two dates by the route it came by
    palaeoneurology, biomechanics, surgery = records("medline/pubmed_export.txt")
    assert [record.issued.date_parts[0] for record in (palaeoneurology, biomechanics, surgery)] == [
        [2024, 12], [2006, 8, 7], [2023, 4]]  # "2024 Dec", "2006 Aug 7", "2023 Apr-Jun"
    assert (biomechanics.PMID, biomechanics.PMCID, biomechanics.page, biomechanics.DOI) == (
        "16822743", "PMC1634776", "1849-1855", "10.1098/rspb.2006.3532")
    [entry] = read_references("PMID- 1\nDP  - 2006 Sep 31\nTI  - A\n", "medline")  # no 31 September: no day
    assert entry_record(entry).issued.date_parts[0] == [2006, 9]


def test_an_issue_with_its_month_after_it_is_the_issues_number():
    # Embase writes the issue of a journal publishing all year with its month ("IS  - 1 January" for PLoS ONE 19(1)),
    # in every export of its records here (EndNote's, Covidence's): the issue was "1 January", not 1
    strata = entry_record(read_references(FIXTURES / "ris" / "endnote_embase.ris")[2])
    assert (strata.container_title, strata.volume, strata.issue) == ("PLoS ONE", "19", "1")
    for issue, kept in [("12 December", "12"), ("3 may", "3"), ("1 Jan", "1 Jan"), ("Spring 2", "Spring 2"),
                        ("2 Suppl", "2 Suppl")]:
        [entry] = read_references(f"TY  - JOUR\nTI  - A\nIS  - {issue}\nER  - \n", "ris")
        assert entry_record(entry).issue == kept
    # a volume so written is as written
    [entry] = read_references("TY  - JOUR\nTI  - A\nVL  - 12 December\nER  - \n", "ris")
    assert entry_record(entry).volume == "12 December"


def test_refworks_placeholder_and_embases_addresses_in_a_note_are_no_note():
    # RefWorks writes its note as "undefined" (its placeholder for none) and Embase's address list, each address
    # labelled "M1: ": the whole was kept as the record's note
    eberth, erratum = read_references(FIXTURES / "ris" / "refworks.ris")
    assert eberth.get("note") == erratum.get("note") == ""
    for note, kept in [
            ("undefined", ""), ("undefined; Checked by hand", "Checked by hand"),
            ("Checked by hand; M1: (Wilhite R.) Auburn University, Auburn, AL, United States", "Checked by hand"),
            ("undefined; M1: (Bardet N.; Jalil N.-E.) CR2P, Centre de Recherche, Paris, France; M1: (Jalil N.-E.) "
             "Museum of Marrakech (Museum of Natural History of Marrakesh, Univ. Cadi Ayyad), Marrakesh, Morocco", ""),
            # not RefWorks' placeholder, and not an address: the note as written
            ("undefined behaviour of the device", "undefined behaviour of the device"),
            ("Comment in: Lancet. 2020; (2) 5", "Comment in: Lancet. 2020; (2) 5"),
            ("Export Date: 05 August 2024; Cited By: 2", "Export Date: 05 August 2024; Cited By: 2")]:
        [entry] = read_references(f"TY  - JOUR\nTI  - T\nN1  - {note}\nER  - \n", "ris")
        assert entry.get("note") == kept, note


def test_refworks_publication_types_in_m1_are_read_and_no_other_m1_is():
    # RefWorks writes a record's types in M1 ("M1  - Journal Article"); its RIS is known by its ids ("RefID:887-...")
    # and by its note, "undefined" before the affiliations. Other exports' M1 holds a number or an id: no type.
    eberth, erratum = records("ris/refworks.ris")
    assert eberth.custom.publication_types == erratum.custom.publication_types == ["Journal Article"]
    assert eberth.DOI == "10.1371/journal.pone.0292318"
    for text in ("TY  - JOUR\nTI  - T\nN1  - undefined\nM1  - 12\nER  - \n",  # RefWorks', but a number
                 "TY  - JOUR\nTI  - T\nID  - RefID:5-t\nM1  - 10.1000/x1\nER  - \n",
                 "TY  - JOUR\nTI  - T\nM1  - Journal Article\nER  - \n"):  # no RefWorks export recognisable
        [entry] = read_references(text, "ris")
        assert entry_record(entry).custom.publication_types == []
