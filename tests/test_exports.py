"""Downloads: every format reads back as it was written, names split, identifiers where readers look,
and no value can break out of its field (CSV formulas, RIS tags, BibTeX braces and entries)."""

from __future__ import annotations

import csv
import io
import json
import re

import bibtexparser
import jsonschema
import rispy
from bibtexparser.middlewares import SeparateCoAuthors, SplitNameParts
from conftest import EXAMPLE, FIXTURES
from pydantic import TypeAdapter
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from pylatexenc.latexwalker import LatexWalker
from pylatexenc.latexwalker import get_default_latex_context_db as parsing_context

from sitegen.records.model import CslName, Record, RecordMeta
from sitegen.site.exports import (
    CSV_COLUMNS,
    authors,
    citation_keys,
    one_line,
    records_bibtex,
    records_csl_json,
    records_csv,
    records_ris,
    safe_cell,
)

EXAMPLE_RECORDS = [Record.model_validate_json(line) for line in (EXAMPLE / "records.jsonl").read_text().splitlines()]


def record(**fields) -> Record:
    base = {"id": "10.1234/abcd", "DOI": "10.1234/abcd", "title": "A title", "custom": RecordMeta(sources=["openalex"])}
    return Record(**{**base, **fields})


# An independent reader of LaTeX text (pylatexenc), told the four text-mode commands the export writes
# for characters that would otherwise unbalance braces or act as commands.
_latex_context = get_default_latex_context_db()
_latex_context.add_context_category("sitegen-export", prepend=True, macros=[
    MacroTextSpec("textbraceleft", "{"), MacroTextSpec("textbraceright", "}"), MacroTextSpec("textbackslash", "\\"),
    MacroTextSpec("textasciicircum", "^"), MacroTextSpec("textasciitilde", "~")])
_latex = LatexNodes2Text(latex_context=_latex_context, math_mode="verbatim", strict_latex_spaces=True)
_parsing = parsing_context()  # built once: pylatexenc would build it again for every value


def latex(value: str) -> str:
    if not re.search(r"[\\{}~$%&#_^]|--|``|''", value):  # nothing LaTeX would read as other than itself
        return value
    nodes, _, _ = LatexWalker(value, latex_context=_parsing, tolerant_parsing=False).get_latex_nodes()
    return _latex.nodelist_to_text(nodes)


def read_bibtex(text: str) -> bibtexparser.Library:
    library = bibtexparser.parse_string(text, append_middleware=[SeparateCoAuthors(), SplitNameParts()])
    assert not library.failed_blocks, library.failed_blocks
    return library


def bibtex_names(entry) -> list[CslName]:
    names = []
    for parts in entry["author"]:
        family = latex(" ".join(parts.von + parts.last))
        if not parts.first and not parts.von and parts.last[0].startswith("{"):
            names.append(CslName(literal=family))
        else:
            names.append(CslName(family=family, given=latex(" ".join(parts.first)) or None,
                                 suffix=latex(" ".join(parts.jr)) or None))
    return names


def ris_name(name: CslName) -> str:
    return name.literal or ", ".join(p for p in (name.family, name.given, name.suffix) if p)


# --------------------------------------------------------------------------- CSV


def test_formula_cells_are_neutralised():
    for hostile in ("=HYPERLINK(\"http://evil\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "|calc"):
        assert safe_cell(hostile).startswith("'")
    assert safe_cell("Normal title") == "Normal title"
    rows = list(csv.reader(io.StringIO(records_csv([record(title="=cmd|' /C calc'!A0",
                                                           author=[CslName(literal="=1+1 Evil")])], {}))))
    assert rows[0] == CSV_COLUMNS
    assert rows[1][1] == "'=cmd|' /C calc'!A0"
    assert rows[1][2] == "'=1+1 Evil"


def test_csv_keeps_newlines_inside_quoted_cells():
    text = records_csv([record(title="line one\nline two")], {"10.1234/abcd": ("include", "")})
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 2
    assert rows[1][1] == "line one\nline two"
    assert rows[1][15] == "include"


def test_csv_of_the_example_has_split_authors_and_the_shared_keys():
    keys = citation_keys(EXAMPLE_RECORDS)
    rows = list(csv.DictReader(io.StringIO(records_csv(EXAMPLE_RECORDS, {}, keys))))
    assert len(rows) == len(EXAMPLE_RECORDS)
    for row, original in zip(rows, EXAMPLE_RECORDS, strict=True):
        assert row["citation_key"] == keys[original.id]
        assert row["authors"] == "; ".join(name.display() for name in authors(original))
        assert row["pmid"] == (original.PMID or "") and row["doi"] == (original.DOI or "")


# --------------------------------------------------------------------------- RIS


def test_ris_title_with_newline_cannot_inject_fields():
    hostile = record(title="Harmless\nER  - \nTY  - JOUR\nTI  - Injected record", abstract="Abstract\r\nAU  - Fake Author",
                     author=[CslName(family="Doe", given="Jane\nKW  - injected")])
    entries = rispy.loads(records_ris([hostile]))
    assert len(entries) == 1
    [entry] = entries
    assert entry["title"] == "Harmless ER - TY - JOUR TI - Injected record"
    assert entry["authors"] == ["Doe, Jane KW - injected"]
    assert "keywords" not in entry


def test_ris_puts_each_field_where_reference_managers_read_it():
    original = record(author=[CslName(family="Krab", given="Lianne C."), CslName(family="King", given="M. L.", suffix="Jr."),
                              CslName(literal="ENIGMA Consortium")],
                      container_title="Journal", volume="300", issue="3", page="10-20", PMID="18632543",
                      PMCID="PMC2664742", abstract="An abstract.", issued={"date-parts": [[2008, 7, 16]]},
                      custom=RecordMeta(retracted=True), URL="https://doi.org/10.1234/abcd")
    text = records_ris([original], {original.id: "krab2008title"})
    tags = dict(re.findall(r"^([A-Z][A-Z0-9])  - (.*)$", text, flags=re.MULTILINE))
    assert re.findall(r"^AU  - (.*)$", text, flags=re.MULTILINE) == ["Krab, Lianne C.", "King, M. L., Jr.",
                                                                      "ENIGMA Consortium"]
    assert tags["TY"] == "JOUR" and tags["ID"] == "krab2008title" and tags["TI"] == "A title"
    assert tags["DO"] == "10.1234/abcd" and tags["AN"] == "18632543" and tags["C2"] == "PMC2664742"
    assert tags["T2"] == tags["JF"] == "Journal" and tags["VL"] == "300" and tags["IS"] == "3"
    assert tags["SP"] == "10" and tags["EP"] == "20" and tags["PY"] == "2008" and tags["DA"] == "2008/07/16/"
    assert tags["AB"] == "An abstract." and tags["UR"] == "https://doi.org/10.1234/abcd" and tags["N1"] == "RETRACTED"
    assert not records_ris([]).strip()


def test_ris_of_every_example_record_reads_back():
    keys = citation_keys(EXAMPLE_RECORDS)
    entries = rispy.loads(records_ris(EXAMPLE_RECORDS, keys))
    assert len(entries) == len(EXAMPLE_RECORDS) == 271
    for entry, original in zip(entries, EXAMPLE_RECORDS, strict=True):
        assert entry["id"] == keys[original.id]
        assert entry["title"] == one_line(original.title)
        assert entry.get("doi") == original.DOI and entry.get("accession_number") == original.PMID
        assert entry.get("custom2") == original.PMCID
        assert entry.get("year") == (str(original.year) if original.year else None)
        assert entry.get("authors", []) == [ris_name(name) for name in authors(original)]
        assert all(", " in name for name in entry.get("authors", []) if " " in name)  # every person split


# --------------------------------------------------------------------------- BibTeX


def test_bibtex_of_every_example_record_reads_back():
    """bibtexparser reads all 271 records back: titles, DOIs, PMIDs, years and names split as exported."""
    keys = citation_keys(EXAMPLE_RECORDS)
    library = read_bibtex(records_bibtex(EXAMPLE_RECORDS, keys))
    assert len(library.entries) == len(EXAMPLE_RECORDS)
    for entry, original in zip(library.entries, EXAMPLE_RECORDS, strict=True):
        assert entry.key == keys[original.id]
        assert latex(entry["title"]) == one_line(original.title)
        assert entry["doi"] == original.DOI and entry.fields_dict.get("pmid", None) is not None
        assert entry["pmid"] == original.PMID
        assert entry["year"] == str(original.year)
        assert bibtex_names(entry) == authors(original)
        if original.container_title:
            assert latex(entry["journal"]) == original.container_title


HOSTILE = record(
    title="Evil } @article{pwned, title={x}} \\input{/etc/passwd} 100% $x$ #1 a_b ^ ~ {",
    author=[CslName(family="Doe}", given="J@ne{"), CslName(family="Smith and Jones", given="Al"),
            CslName(literal="Research and Development Group, Inc."), CslName(family="van der Berg", given="Jan")],
    container_title="J & K}\n@misc{second,", abstract="Line one\n@comment{ x }\nLine two }}}",
    URL="https://example.org/a{b}\\c", custom=RecordMeta(sources=["openalex"]))


def balanced(value: str) -> bool:
    depth = 0
    for char in value:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def test_no_brace_at_sign_or_command_breaks_out_of_a_bibtex_field():
    text = records_bibtex([HOSTILE])
    library = read_bibtex(text)
    [entry] = library.entries
    assert len(library.blocks) == 1  # no second entry, comment or string smuggled in
    assert set(entry.fields_dict) == {"author", "title", "journal", "doi", "url", "abstract"}
    for line in text.splitlines()[1:-1]:
        value = line.split(" = {", 1)[1].removesuffix("},")
        assert balanced(value), line
        # A backslash only ever opens one of the export's escapes, never a command from the data.
        assert not re.search(r"\\(?!text(?:backslash|braceleft|braceright|asciicircum|asciitilde)\{\}|[$&%#_])",
                             value), line
    assert latex(entry["title"]) == one_line(HOSTILE.title)
    assert latex(entry["journal"]) == "J & K} @misc{second,"
    assert latex(entry["abstract"]) == one_line(HOSTILE.abstract)
    assert bibtex_names(entry) == [CslName(family="Doe}", given="J@ne{"), CslName(family="Smith and Jones", given="Al"),
                                   CslName(literal="Research and Development Group, Inc."),
                                   CslName(family="van der Berg", given="Jan")]
    assert entry["url"] == "https://example.org/a%7Bb%7D%5Cc"


def test_a_family_name_given_alone_is_all_the_last_name():
    # Written bare, "Garcia Marquez" was read by BibTeX as given name Garcia, family name Marquez.
    names = [CslName(family="Garcia Marquez"), CslName(family="Bill and Melinda Gates Foundation"),
             CslName(family="van der Berg")]
    [entry] = read_bibtex(records_bibtex([record(title="x", author=names)])).entries
    assert [(parts.first, latex(" ".join(parts.von + parts.last))) for parts in entry["author"]] == \
        [([], "Garcia Marquez"), ([], "Bill and Melinda Gates Foundation"), ([], "van der Berg")]


def test_bibtex_protects_acronyms_from_lower_casing_styles():
    text = records_bibtex([record(title="Simvastatin and NF1: mGluR5 in McDonald's rats")])
    assert "title = {Simvastatin and {NF1:} {mGluR5} in {McDonald's} rats}" in text


# --------------------------------------------------------------------------- citation keys


def test_citation_keys_are_unique_safe_and_never_move():
    keys = citation_keys(EXAMPLE_RECORDS)
    assert len(set(keys.values())) == len(EXAMPLE_RECORDS)
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[0-9]+)?", key) for key in keys.values())
    # A record found later with the same author, year and first title word gets a new key; none moves.
    first = EXAMPLE_RECORDS[0]
    twin = first.model_copy(update={"id": "10.9999/twin", "DOI": "10.9999/twin"})
    later = citation_keys([*EXAMPLE_RECORDS, twin])
    assert {rid: later[rid] for rid in keys} == keys
    assert later["10.9999/twin"] == f"{keys[first.id]}-2"


def test_a_key_is_built_from_author_year_and_title():
    keyed = record(author=[CslName(family="Krab", given="Lianne C.")], issued={"date-parts": [[2008]]},
                   title="The effect of simvastatin on cognitive functioning")
    organisation = record(id="10.1234/org", DOI="10.1234/org", author=[CslName(literal="The ENIGMA Consortium")],
                          title="Über Gedächtnis")
    anonymous = record(id="10.1234/anon", DOI="10.1234/anon", title="?")
    assert citation_keys([keyed, organisation, anonymous]) == {
        "10.1234/abcd": "krab2008effect", "10.1234/org": "enigmanduber", "10.1234/anon": "anonnduntitled"}


# --------------------------------------------------------------------------- CSL-JSON

CSL_SCHEMA = json.loads((FIXTURES / "csl" / "csl-data.json").read_text())


def test_csl_json_is_valid_csl_with_the_names_as_held():
    keys = citation_keys(EXAMPLE_RECORDS)
    items = json.loads(records_csl_json(EXAMPLE_RECORDS, keys))
    jsonschema.validate(items, CSL_SCHEMA)
    for item, original in zip(items, EXAMPLE_RECORDS, strict=True):
        assert item["id"] == original.id and item["citation-key"] == keys[original.id]
        assert item["title"] == original.title and item.get("DOI") == original.DOI and item.get("PMID") == original.PMID
        assert [TypeAdapter(CslName).validate_python(name) for name in item.get("author", [])] == original.author
