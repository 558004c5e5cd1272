"""A publisher's copyright statement closing an abstract is no part of a record's abstract, whichever provider gave
it (sitegen/records/copyright.py): real OpenAlex and Europe PMC abstracts that end in one, the same work's abstract
from each provider alike, imported ones too, and the rule's edges; and an imported abstract's headings are read as
providers' are."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import FIXTURES
from lxml import etree

from sitegen.records.copyright import MAX_STATEMENT, without_copyright_statement
from sitegen.records.markup import plain_text
from sitegen.references import read_references
from sitegen.references.records import entry_record
from sitegen.sources import arxiv, crossref, europepmc, openalex, pubmed
from sitegen.sources.base import parse_xml

# Five real SYNERGY works whose inverted-index abstract ends in Wiley's statement ("… © 2016 Wiley Periodicals, Inc.")
WILEY = json.loads((FIXTURES / "openalex" / "synergy_sep2021_copyright_statements.json").read_text())
EUROPEPMC = json.loads((FIXTURES / "europepmc" / "search_cancer_core.json").read_text())["resultList"]["result"]
# PMIDs 11748933, 11700088: MEDLINE keeps each one's statement apart, in <CopyrightInformation>
PUBMED = parse_xml((FIXTURES / "pubmed" / "pubmed2.xml").read_bytes()).findall("PubmedArticle")
CROSSREF = json.loads((FIXTURES / "crossref" / "crossref_work_10.1371_journal.pone.0033693.json").read_text())["message"]
ARXIV = parse_xml((FIXTURES / "arxiv" / "id_1605.08386_s0_m100_199195aa31ad.atom.xml").read_bytes()).find(
    "atom:entry", arxiv.NS)


def inverted_index(text: str) -> dict[str, list[int]]:
    """`text` as OpenAlex ships an abstract: {word: [positions]}."""
    index: dict[str, list[int]] = {}
    for place, word in enumerate(text.split()):
        index.setdefault(word, []).append(place)
    return index


def test_real_openalex_abstracts_lose_the_closing_statement_and_nothing_else():
    for work in WILEY:
        given = plain_text(openalex.abstract_from_inverted_index(work["abstract_inverted_index"]))
        read = openalex.work_to_record(work).abstract
        assert "©" not in read and read.endswith("."), work["id"]
        assert given.startswith(read) and given[len(read):].lstrip().startswith("© 20"), work["id"]
        assert "Wiley" in given[len(read):] or "Sons" in given[len(read):]


def test_a_real_europe_pmc_abstract_loses_the_closing_statement():
    # RSNA's statement ends the abstract after its keywords: "… Muscular, Oncology © RSNA, 2025."
    [result] = [result for result in EUROPEPMC if result.get("pmid") == "40476859"]
    read = europepmc.result_to_record(result).abstract
    assert read.endswith("Keywords: Molecular Imaging, Cancer, MRI, PET/CT, Ultrasound, Muscular, Oncology")
    assert plain_text(result["abstractText"]) == f"{read} © RSNA, 2025."


@pytest.mark.parametrize("article", PUBMED, ids=lambda article: article.findtext(".//PMID"))
def test_one_works_abstract_is_the_same_from_europe_pmc_and_openalex_as_from_pubmed(article):
    """Built from the real PubMed record: Europe PMC and OpenAlex give a MEDLINE work's abstract with the
    statement PubMed keeps apart closing it (as the real Europe PMC and OpenAlex abstracts above show), here its
    own <CopyrightInformation> ("Copyright 2001 Elsevier Science."), in real results of theirs."""
    from_pubmed = pubmed.article_to_record(article)
    statement = article.findtext(".//Abstract/CopyrightInformation")
    assert statement.startswith("Copyright 2001") and statement not in from_pubmed.abstract
    given = f"{article.findtext('.//Abstract/AbstractText')} {statement}"
    result = dict(EUROPEPMC[0], abstractText=given)
    work = dict(WILEY[0], abstract_inverted_index=inverted_index(given))
    assert europepmc.result_to_record(result).abstract == from_pubmed.abstract
    assert openalex.work_to_record(work).abstract == from_pubmed.abstract


def _pubmed_with(abstract: str) -> etree._Element:
    article = copy.deepcopy(PUBMED[0])
    article.find(".//Abstract/AbstractText").text = abstract
    return article


def _arxiv_with(abstract: str) -> etree._Element:
    entry = copy.deepcopy(ARXIV)
    entry.find("atom:summary", arxiv.NS).text = abstract
    return entry


# Each provider's real item given an abstract, as that provider sends it
PROVIDERS = {
    "openalex": lambda text: openalex.work_to_record(dict(WILEY[0], abstract_inverted_index=inverted_index(text))),
    "europepmc": lambda text: europepmc.result_to_record(dict(EUROPEPMC[0], abstractText=f"<p>{text}</p>")),
    "crossref": lambda text: crossref.work_to_record(dict(CROSSREF, abstract=f"<jats:p>{text}</jats:p>")),
    "pubmed": lambda text: pubmed.article_to_record(_pubmed_with(text)),
    "arxiv": lambda text: arxiv.entry_to_record(_arxiv_with(text)),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_every_provider_reads_an_abstract_without_its_closing_statement(provider):
    read = PROVIDERS[provider]
    assert read("Rats explored the object. © 2019 Elsevier B.V. All rights reserved.").abstract \
        == "Rats explored the object."
    # an abstract that is nothing but a statement is kept as given, not made empty
    assert read("© 2019 Elsevier B.V.").abstract == "© 2019 Elsevier B.V."


@pytest.mark.parametrize(("given", "read"), [
    # the forms statements take, and all that follows the mark
    ("Memory was spared. © 2016 Wiley Periodicals, Inc.", "Memory was spared."),
    ("Memory was spared. Copyright © 2020 Elsevier B.V. All rights reserved.", "Memory was spared."),
    ("Memory was spared. Copyright 2001 Elsevier Science.", "Memory was spared."),
    ("Memory was spared. (c) 2019 Elsevier Ltd.", "Memory was spared."),
    ("Memory was spared. (C)2019 Wiley-Liss, Inc.", "Memory was spared."),
    ("Memory was spared. Copyright (c) 2019 S. Karger AG, Basel.", "Memory was spared."),
    ("Memory was spared. © The Author(s) 2019. Published by Oxford University Press.", "Memory was spared."),
    ("Memory was spared. © 2019 The Authors. Published by Elsevier B.V.", "Memory was spared."),
    ("Memory was spared. Crown Copyright © 2019 Published by Elsevier Ltd. All rights reserved.", "Memory was spared."),
    ("Keywords: MRI, Oncology © RSNA, 2025.", "Keywords: MRI, Oncology"),
    # the APA's, in a parenthesis after the last sentence, verbatim from PMID 32437181 (metapub's
    # tests/fixtures/pmid_xml/32437181.xml, commit fc034a6390dc, Apache License 2.0); the older PsycINFO
    # form after it, built
    ("Finally, clinical and research implications are discussed. (PsycInfo Database Record (c) 2020 APA, all rights "
     "reserved).", "Finally, clinical and research implications are discussed."),
    ("Memory was spared. (PsycINFO Database Record (c) 2019 APA, all rights reserved)", "Memory was spared."),
    # exports lose the space after the sentence, and keep a line break before the statement
    ("Memory was spared.Copyright © 2018 Elsevier B.V.", "Memory was spared."),
    ("Memory was spared.\n\n© 2019 Elsevier Inc.", "Memory was spared."),
    # a licence after the statement goes with it (a real one, 264 characters)
    ("Memory was spared. Copyright © 2016 Bisgaard et al. This is an open access article distributed under the terms "
     "of the Creative Commons Attribution License which permits unrestricted use distribution and reproduction in any "
     "medium provided the original author and source are credited.", "Memory was spared."),
    # EBSCOhost's mark of the abstract's source, alone or before its statement, with any word after "FROM"
    ("Memory was spared. [ABSTRACT FROM AUTHOR]", "Memory was spared."),
    ("Memory was spared.[Abstract from publisher] ", "Memory was spared."),
    ("Memory was spared. [ABSTRACT FROM ARTICLE] Copyright of Hippocampus is the property of Wiley and its content "
     "may not be copied. (Copyright applies to all Abstracts.)", "Memory was spared."),
])
def test_a_closing_statement_goes(given, read):
    assert without_copyright_statement(given) == read


@pytest.mark.parametrize("given", [
    # a mark on a word is a trade mark; a statement in the middle is the abstract's own text
    "Patients took the MMSE© and the MoCA©. Scores fell.",
    "Sections were stained with Alexa Fluor© 488.",
    "Rats were fed (a) chow, (b) a cholesterol-rich diet or (c) a methionine-rich diet.",
    # "(c)" or "Copyright" with a year within a sentence is the abstract's own words
    "Rats were tested in (a) 2017, (b) 2018 and (c) 2019 cohorts.",
    "Rats were tested. (Cohorts were (a) 2017, (b) 2018 and (c) 2019.) Scores fell.",
    "Registries changed what they publish under the copyright 2019 directive.",
    "Copyright law changed what the registry could publish.",
    # a publisher's line with no copyright mark is words an abstract can end in
    "The guideline was revised. Published by Elsevier Ltd.",
    "The guideline was revised. All rights reserved.",
    # EBSCOhost's mark within the text, or not set apart from a word, is the abstract's own
    "Memory was spared [ABSTRACT FROM AUTHOR] in every rat.",
    "Memory was spared in rats[ABSTRACT FROM AUTHOR]",
    # a sentence saying only what is whose is no EBSCOhost statement, which goes on "and its content may not be copied"
    "Rats were tested. Copyright of the data is the property of the trial's sponsor.",
    # nothing but a statement: kept, never an empty abstract
    "© 2019 Elsevier B.V. All rights reserved.",
    "Copyright © 2020.",
    "[ABSTRACT FROM AUTHOR]",
    "",
])
def test_anything_else_stays(given):
    assert without_copyright_statement(given) == given


def test_a_mark_far_from_the_end_is_within_the_abstract():
    near = "Memory was spared. © 2019 " + "x" * (MAX_STATEMENT - len("© 2019 "))
    assert without_copyright_statement(near) == "Memory was spared."
    far = near.replace("© 2019 ", "© 2019 x")
    assert without_copyright_statement(far) == far
    assert without_copyright_statement(None) is None


# EBSCOhost's real export: an abstract, its source mark, and its statement naming the journal and its owner
EBSCOHOST = read_references(FIXTURES / "ris" / "ebscohost_aph.ris")[0].get("abstract")
EBSCOHOST_ABSTRACT = ("Colour reconstructions have provided new insights into the lives of dinosaurs and other extinct "
                      "animals.")
JOURNAL, OWNER = "Palaeontologia Polonica", "Polska Akademia Nauk, Instytut Paleobiologii"
# Names as long as real ones run: a journal with its subtitle and ISSN, an owner with its departments
LONG_JOURNAL = ("Journal of the International Society for the Study of Long Names: Official Journal of the European "
                "Federation of Societies, the Asian Association and the Pan-American Network for Research on Names, "
                "Titles and Their Owners (15320001)")
LONG_OWNER = ("Polska Akademia Nauk, Instytut Paleobiologii im. Romana Kozłowskiego, Zakład Paleozoologii, "
              "Wydawnictwa Naukowe i Czasopisma")


def ebscohost_with(journal: str, owner: str, closing: str | None = None) -> str:
    """The real EBSCOhost abstract with its statement naming `journal` and `owner` (and its fixed words after the
    names replaced by `closing`, where given)."""
    text = EBSCOHOST.replace(JOURNAL, journal).replace(OWNER, owner)
    fixed = text.index(" and its content may not be copied")
    return text if closing is None else text[:fixed] + closing


def test_ebscohosts_statement_goes_however_long_the_names_it_holds():
    # Only a mark in the last MAX_STATEMENT characters was a statement: EBSCOhost's fixed words are some 400, so a
    # long journal and owner left the whole statement in the abstract.
    assert len(LONG_JOURNAL) > 200 and len(LONG_JOURNAL) + len(LONG_OWNER) + 400 > MAX_STATEMENT
    for journal, owner in ((JOURNAL, OWNER), (LONG_JOURNAL, OWNER), (JOURNAL, LONG_OWNER), (LONG_JOURNAL, LONG_OWNER),
                           ("J" * 300, "P" * 300)):
        assert without_copyright_statement(ebscohost_with(journal, owner)) == EBSCOHOST_ABSTRACT, (journal, owner)
    # its other wordings, as EBSCOhost serves them with full texts (no listserv; a line on AI tools)
    for closing in (" and its content may not be copied or emailed to multiple sites without the copyright holder's "
                    "express written permission. Additionally, content may not be used with any artificial "
                    "intelligence tools or machine learning technologies. However, users may print, download, or "
                    "email articles for individual use.",
                    " and its content may not be copied or emailed to multiple sites or posted to a listserv without "
                    "the copyright holder’s express written permission. However, users may print, download, or email "
                    "articles for individual use."):
        assert without_copyright_statement(ebscohost_with(LONG_JOURNAL, LONG_OWNER, closing)) == EBSCOHOST_ABSTRACT
    # the publisher's own statement before EBSCOhost's goes too
    published = ebscohost_with(LONG_JOURNAL, LONG_OWNER).replace(
        "[ABSTRACT FROM AUTHOR]", "© 2023 The Authors. Published by Polska Akademia Nauk. [ABSTRACT FROM AUTHOR]")
    assert without_copyright_statement(published) == EBSCOHOST_ABSTRACT


def test_an_abstracts_own_text_is_never_taken_for_ebscohosts_long_statement():
    # words after the names that are not EBSCOhost's, however like its own they begin, are the abstract's (a mark
    # in the last MAX_STATEMENT characters takes what follows it, as any statement's does)
    own = ebscohost_with(LONG_JOURNAL, LONG_OWNER, " and its content may not be copied. We asked 40 editors why, "
                         "and what each journal's owner had asked of its authors." * 4)
    assert len(own) - own.index("Copyright of") > MAX_STATEMENT
    assert without_copyright_statement(own) == own
    unknown = ebscohost_with(LONG_JOURNAL, LONG_OWNER) + " We asked 40 editors why."
    assert without_copyright_statement(unknown) == unknown
    # an abstract's own sentence opening with "Copyright of" is no start of a journal's name
    asked = EBSCOHOST_ABSTRACT + " Copyright of data is the property of no one."
    assert without_copyright_statement(EBSCOHOST.replace(EBSCOHOST_ABSTRACT, asked)) == asked
    # names longer than any journal's or owner's are no names
    assert without_copyright_statement(ebscohost_with("J" * 301, OWNER)) == ebscohost_with("J" * 301, OWNER)


def test_one_works_abstract_is_the_same_imported_from_a_database_export_as_from_pubmeds_file(tmp_path):
    """Imports read the abstract as providers do. Built on the real MEDLINE record of pubmed_result3.txt (PubMed's
    file keeps a statement apart, in its CI tag): the same work as Scopus and Embase export it, their abstract
    closed by the publisher's statement, in RIS; imported, both have one abstract."""
    [medline] = read_references(FIXTURES / "medline" / "pubmed_result3.txt")
    from_pubmed = entry_record(medline)
    export = tmp_path / "scopus.ris"
    export.write_text(f"TY  - JOUR\nTI  - {medline.get('title')}\nAU  - Qiao, S.\nPY  - 2012\nDO  - {medline.get('doi')}\n"
                      f"AB  - {medline.get('abstract')} © 2012 American Association of Physicists in Medicine.\nER  - \n",
                      encoding="utf-8")
    [exported] = read_references(export)
    assert exported.get("abstract").endswith("Physicists in Medicine.")
    assert entry_record(exported).abstract == from_pubmed.abstract == medline.get("abstract")


def test_an_imported_abstract_is_read_without_the_heading_its_publisher_set_above_it():
    """Wiley's RIS export of a real paper (Haddaway et al. 2022) opens the abstract with its heading as a word,
    "Abstract Background Reporting standards…", as OpenAlex's index of Wiley's abstracts does: read without it, as
    the OpenAlex reader reads those, one work has one abstract from both."""
    [entry] = read_references(FIXTURES / "prisma" / "citation.ris")
    assert entry.get("abstract").startswith("Abstract Background Reporting standards")
    abstract = entry_record(entry).abstract
    assert abstract == entry.get("abstract").removeprefix("Abstract ")
    assert openalex.abstract_from_inverted_index(inverted_index(entry.get("abstract"))) == abstract


def test_an_imported_abstracts_section_headings_label_their_parts_as_europe_pmcs_reader_labels_them():
    """Europe PMC's BibTeX export (real structure, europe_pmc_bib.bib) keeps an abstract's section headings as HTML,
    "<h4>Background</h4>…": imported, the real Europe PMC abstracts that have them read as the Europe PMC source reads
    them ("Background: …"), where the heading ran into the text ("Background Smoking is…")."""
    [exported] = [entry for entry in read_references(FIXTURES / "bibtex" / "europe_pmc_bib.bib")
                  if "<h4>" in entry.get("abstract")]
    assert "<h4>" in exported.get("abstract") and "</h4>" in exported.get("abstract")
    structured = [result for result in EUROPEPMC if "<h4>" in result.get("abstractText", "")]
    assert len(structured) >= 5
    for result in structured:
        [entry] = read_references(f"@article{{PMID:{result['pmid']},\n\tTitle = {{{result['title']}}},\n"
                                  f"\tAbstract = {{{result['abstractText']}}},\n}}\n", "bibtex")
        from_europe_pmc = europepmc.result_to_record(result).abstract
        assert ": " in from_europe_pmc
        assert entry_record(entry).abstract == from_europe_pmc


def test_apas_psycinfo_record_statement_closing_an_exported_abstract_goes():
    # APA's statement closes every PsycInfo abstract, in Ovid's RIS and the Cochrane Library's CSV alike (real
    # exports): it was kept as the authors' words, and the same work's abstract differed by database.
    ovid = entry_record(read_references(FIXTURES / "ris" / "ovid_psycinfo.ris")[1])
    assert ovid.abstract.endswith("we know little about their effectiveness.")
    cochrane = entry_record(read_references(FIXTURES / "spreadsheet" / "cochrane_central.csv")[1])
    assert cochrane.abstract.endswith("long‐term academic achievement outcomes.")
    assert without_copyright_statement("Outcomes improve.(PsycINFO Database Record (c) 2016 APA, all rights "
                                       "reserved).") == "Outcomes improve."
    # the words within a sentence are the abstract's own
    kept = "We hand-searched each PsycInfo database record for outcomes."
    assert without_copyright_statement(kept) == kept
