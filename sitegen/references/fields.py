"""The fields every reader fills, and the pieces of them more than one format writes alike.

Entries carry the bib-dedupe benchmark's fields (ID, ENTRYTYPE, author, title, year, journal,
volume, number, pages, doi, abstract) and the ones an import needs besides (identifiers, links,
screening labels). Values stay as the file wrote them, trimmed: identifiers are normalised by
whoever turns entries into records, so a reader never guesses. `date` is the one exception: each
format writes a full date its own way ("2008/07/16/", [[2008, 7, 16]]), so readers give it in ISO
form ("2008", "2008-07", "2008-07-16"), and `year` holds its year too. `retracted` is "yes" when the
entry says the work is retracted, as each format says it: sitegen's exports (CSV's column, CSL-JSON's
custom.retracted, RIS's "N1  - RETRACTED", BibTeX's note "Retracted") and MEDLINE's publication type.
`type` is a CSL type where the file names one (sitegen's records CSV, CSL-JSON; another CSV's `type`
column only where it cannot mean another sense, see `table`); ENTRYTYPE is BibTeX's.
`updates` is the notices a file lists against the work (sitegen's CSL-JSON export: custom.updates) as that
JSON list of objects ({"kind": "retraction", "doi": ..., "pmid": ...}), and `notice_of` the works a notice is
about (custom.notice_of) as that JSON list ({"kind": "retraction", "doi": ..., "pmid": ..., "date": [2019, 3, 1]},
a DOI or a PMID or both), and
`reinstatements` the reinstatements a file lists against the work (custom.reinstatements) as that JSON list
({"doi": ..., "date": [2021, 6, 30], "retracted_on": [2019, 3, 1]}), and `stated_versions` the other versions of the
study its source states (custom.stated_versions) as that JSON list ({"doi": ..., "pmid": ...}): LISTS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from sitegen.records.model import calendar_date
from sitegen.records.names import name_word, order_unknown

FIELDS = ("author", "title", "year", "journal", "volume", "number", "pages", "doi", "abstract",
          "pmid", "pmcid", "arxiv", "openalex", "url", "issn", "keywords", "language", "publisher", "note",
          "month", "date", "label", "database", "retracted", "type", "open_access", "license", "fulltext_url",
          "publication_types", "updates", "notice_of", "reinstatements", "stated_versions")
# The lists under a record's `custom` that sitegen's exports carry and its readers read back, each as a JSON list in
# the field of its name: CSL-JSON as they are, the others as statements in words (`read_standing`).
LISTS = ("updates", "notice_of", "reinstatements", "stated_versions")

ISSN = re.compile(r"(?<![\dA-Za-z])\d{4}-?\d{3}[\dXx](?![\dA-Za-z-])")
PMCID = re.compile(r"\bPMC\d+\b")
# A second RIS tag glued to the end of a tag line after a run of spaces, as Rayyan's RIS export writes its U2 after
# the UR and its LK after the DO ("DO  - 10.1002/ar.25299     LK  - https://..."), and its CSV export keeps in the
# url and doi cells: read as part of the value, it made the DOI and the address invalid and both were lost.
GLUED_RIS_TAG = re.compile(r"[ \t]{2,}(?=[A-Z][A-Z0-9]  - )")
# Embase.com gives each record its address there (https://www.embase.com/search/results?...&id=L...), which the tools
# a record passes through keep (Rayyan's RIS UR and CSV url, EPPI-Reviewer's UR): a record at that address is Embase's,
# the database searched, whatever else the export says of it (Embase.com's RIS DB names the sources that index it,
# "Medline"; Rayyan's CSV names none), so one export is counted alike in PRISMA whichever format it was saved in.
EMBASE_ADDRESS = re.compile(r"^https?://(?:www\.)?embase\.com/", re.IGNORECASE)
EMBASE = "Embase"
# A note is free text ("Comment in: Lancet. 2020;395:e5. PMID: 32222222" names another article): only a
# note line that is the label and the number alone, as Zotero (its Extra field) and sitegen write it, is the
# record's PMID.
NOTE_PMID = re.compile(r"PMID:?\s*(\d+)", re.IGNORECASE)
AND = re.compile(r"\sand\s", re.IGNORECASE)
# A name written "Family Initials" ("Smolen J.", "Landewé R.B.M.", "de Oliveira Filho ASB", "Chien C. T."), as
# PubMed, Covidence, Embase and Vancouver lists write one: the initials are one run, or a few runs each after one
# space (Embase's "R. P. F."), so that the family name is "Chien", not "Chien C.". The family name ends in a
# non-space, so the spaces before the initials are tried from the start of their run only: from each of its spaces,
# a cell of a few hundred kilobytes of spaces took hours; the runs after the first are few, so a cell of thousands
# of initials ("A A A …") is not read again from each of them.
FAMILY_INITIALS = re.compile(r"(.*?\S)\s+((?:[A-Z]\.?-?)+(?:\s(?:[A-Z]\.?-?)+){0,5})")
INITIALS_RUN = re.compile(r"(?:[A-Z]\.?-?)+")  # one run of FAMILY_INITIALS's initials


def family_initials(name: str) -> tuple[str, str] | None:
    """`name` read as "Family Initials" (FAMILY_INITIALS): its family name and its initials, or None when it is not
    one. In a name wholly in capitals, the case says nothing, so initials are one or two letters or dotted
    (`names.name_word`): the initials are the runs after the last word that is a name ("VAN DER BERG J", whose "DER
    BERG J" were read as initials), and a name with two such words and no comma is none ("CAIZHI SHEN", "JUNCHANG
    LÜ", as EBSCOhost writes Chinese authors given names first, "SMITH JOHN": `names.order_unknown`)."""
    found = FAMILY_INITIALS.fullmatch(name)
    words = name.split()
    if not found or not name.isupper():
        return (found[1], found[2]) if found else None
    at = len(words)
    while at > 1 and INITIALS_RUN.fullmatch(words[at - 1]) and not name_word(words[at - 1]):
        at -= 1
    return None if at == len(words) or order_unknown(words) else (" ".join(words[:at]), " ".join(words[at:]))


# Rayyan writes a record's screening state into its notes, as
# 'RAYYAN-INCLUSION: {"Kofi"=>"Included", "Ama"=>"Maybe"} | RAYYAN-LABELS: ML | USER-NOTES: {...}'.
RAYYAN_INCLUSION = re.compile(r"RAYYAN-INCLUSION:\s*(\{[^{}]*\})")


# An accession number that is a PMID: PubMed's numbers have at most eight digits (40 million so far). The other
# databases a screening tool keeps the accession number of write longer numbers (CINAHL nine or ten digits,
# Embase ten, or "L" and nine) or other forms ("WOS:…", PsycINFO's "2015-12345-001"): none of those is a PMID.
ACCESSION_PMID = re.compile(r"[1-9][0-9]{0,7}")


# The label an accession number is written after when it is PubMed's (the Cochrane Library's "PUBMED 21314913").
PUBMED_LABEL = re.compile(r"(?:pubmed|pmid)\s*:?\s*", re.IGNORECASE)


def accession_pmid(accession: str) -> str:
    """The PMID an accession number is (Covidence's "Accession Number" column holds the accession number of the
    database a reference was imported from; the Cochrane Library's "PubMed ID" labels it, "PUBMED 21314913"), or ""
    when it is another database's."""
    number = PUBMED_LABEL.sub("", accession.strip(), count=1) if PUBMED_LABEL.match(accession.strip()) else accession
    return number.strip() if ACCESSION_PMID.fullmatch(number.strip()) else ""


def at_embase(addresses: Iterable[str]) -> bool:
    """Whether a record's addresses say it is Embase's (see EMBASE_ADDRESS)."""
    return any(EMBASE_ADDRESS.match(address.strip()) for address in addresses)


def fields(values: dict[str, str]) -> dict[str, str]:
    """ID, ENTRYTYPE and every field in FIELDS, from `values` (trimmed, whitespace runs as one space)
    or empty; the Rayyan inclusion text in a note is the label unless `values` names one."""
    filled = {name: " ".join(str(values.get(name) or "").split()) for name in ("ID", "ENTRYTYPE", *FIELDS)}
    if not filled["label"] and (found := RAYYAN_INCLUSION.search(filled["note"])):
        filled["label"] = found.group(1)
    return filled


def iso_date(parts: Iterable[object]) -> str:
    """Year, month and day (as many as given, numbers or digit strings) as an ISO date; "" unless they are one
    ("2008", "2008-07", "2008-07-16"): a month or day out of range ends the date there."""
    numbers: list[object] = []
    for part in parts:
        text = str(part).strip()
        if not (text.isascii() and text.isdigit()) or not (numbers or len(text) == 4):
            break
        numbers.append(int(text))
    written = calendar_date(numbers)  # a day the month has not (30 February) ends the date, as a provider's does
    return "-".join(f"{part:0{4 if index == 0 else 2}d}" for index, part in enumerate(written))


def author_list(names: Iterable[str]) -> str:
    """Names given one by one (RIS's AU lines, a CSV cell's "; "-separated names) as BibTeX's author list,
    "Family, Given and Family2, Given2": a name that holds "and" is braced so that the list is not split
    inside it (see `one_author`). A name given twice stays twice: two co-authors can be written alike."""
    return " and ".join(one_author(name) for name in (name.strip() for name in names) if name)


# The names sitegen's RIS and records CSV write: one whose own text holds the CSV's separator, ";" (an organisation's
# "Group A; Group B", one literal), braced whole as BibTeX braces one, which their readers take as one name.
NAME_SEPARATOR = re.compile(r";(?![^{}]*\})")  # a ";" outside braces


def braced_name(name: str) -> str:
    """`name` as sitegen's RIS and records CSV write it: braced whole when it holds a ";" (see NAME_SEPARATOR)."""
    return f"{{{name}}}" if ";" in name else name


def one_author(name: str) -> str:
    """`name` as one item of an author list: braced when it holds "and", which would split it there
    ("Bill and Melinda Gates Foundation", "Department of Health and Social Care, UK"). A value whose every
    part between its "and"s is "Family, Given" ("Smith, J and Jones, A", as Rayyan writes a CSV cell) is a
    list of several authors, and is left to be split."""
    if name.startswith("{") or not AND.search(name) or all("," in part for part in AND.split(name)):
        return name
    return f"{{{name}}}"


def joined(values: Iterable[str], separator: str = "; ") -> str:
    """The values that are not blank, without repeats, joined."""
    return separator.join(dict.fromkeys(value.strip() for value in values if value and value.strip()))


def issns(values: Iterable[str]) -> str:
    """The ISSNs written in `values` ("1467-5463 (Print)", "ISSN-1234-4567"), joined by "; ";
    an ISBN in the same tag is left out."""
    return joined(found for value in values for found in ISSN.findall(value))


def keywords(value: str) -> str:
    """Keywords written in one value ("a; b; c", or "a, b, c" when there is no semicolon), joined by "; "."""
    return joined(value.split(";" if ";" in value else ","))


# --------------------------------------------------------------------------- a record's standing, in words

# sitegen's RIS, BibTeX and CSV exports say what a notice is and what notices a work has in words their readers
# read (RIS's notes, BibTeX's note, the CSV's cells), one statement each, which sitegen's readers read back:
#   "Publication types: journal-article; retraction-notice"   what a notice is (RIS writes it as its type, M3)
#   "Retracted"                                                 the work is retracted (RIS: "RETRACTED")
#   "Retraction notice: doi:10.1/x PMID:123 (2019-03-01)"       a notice against the work (custom.updates)
#   "Retraction notice for: doi:10.1/y PMID:456 (2019-03-01)"   the work a notice is about (custom.notice_of)
#   "Reinstatement notice: doi:10.1/z (2021-06-30, lifting a retraction of 2019-03-01)"
#                                                               a reinstatement of the work (custom.reinstatements)
#   "Other version: doi:10.1101/w PMID:789"                     another version of the study its source states
#                                                               (custom.stated_versions)
# The date in brackets, where the record knows it, is when the notice was issued: a retraction dated no later than
# a reinstatement is lifted (`retraction_lifted`), so a download read back without it would retract the work again.
NOTICE_LABELS = {"retraction": "Retraction notice", "correction": "Correction notice",
                 "expression-of-concern": "Expression of concern", "reinstatement": "Reinstatement notice"}
RETRACTED = "Retracted"
TYPES_STATEMENT = "Publication types: "
LIFTING = "lifting a retraction of "
VERSION_LABEL = "Other version"
_ISO_DATE = r"\d{4}(?:-\d{2}(?:-\d{2})?)?"
# The identifiers are the shortest run that leaves a bracketed date, if there is one, to end the statement: a DOI
# holds no space, so " (" after the identifiers always starts the date.
STATEMENT = re.compile(f"(?P<label>{'|'.join(NOTICE_LABELS.values())})(?P<about> for)?(?::\\s+(?P<ids>.+?))?"
                       f"(?:\\s+\\((?:(?P<date>{_ISO_DATE})(?:,\\s+{LIFTING}(?P<lifted>{_ISO_DATE}))?"
                       f"|{LIFTING}(?P<lifted_alone>{_ISO_DATE}))\\))?")
VERSION_STATEMENT = re.compile(f"{VERSION_LABEL}:\\s+(?P<ids>\\S+(?:\\s+\\S+)?)")
# Statements are written one after another, each after ". ": a DOI holds no space, so ". " before a statement's
# start always ends the one before, even after a DOI that ends in a full stop (or holds a semicolon).
_NEXT_STATEMENT = re.compile(f"\\.\\s+(?=(?:{RETRACTED}|{TYPES_STATEMENT.strip()}|{VERSION_LABEL}|"
                             f"{'|'.join(NOTICE_LABELS.values())})(?:\\W|$))")
_KINDS_BY_LABEL = {label: kind for kind, label in NOTICE_LABELS.items()}


def _dated(statement: str, date: Sequence[int] | None, lifted: Sequence[int] | None = None) -> str:
    """The statement with the notice's date and the retraction it lifted in brackets, as far as they are known."""
    said = [*([iso_date(date)] if date else []), *([LIFTING + iso_date(lifted)] if lifted else [])]
    return f"{statement} ({', '.join(said)})" if said else statement


def _ids_written(doi: str | None, pmid: str | None) -> str:
    return " ".join([*([f"doi:{doi}"] if doi else []), *([f"PMID:{pmid}"] if pmid else [])])


def update_statement(kind: str, doi: str | None, pmid: str | None, date: Sequence[int] | None = None,
                     lifted: Sequence[int] | None = None) -> str:
    """A notice against the work (an update, or a reinstatement with the retraction it lifted), with its date."""
    ids = _ids_written(doi, pmid)
    return _dated(f"{NOTICE_LABELS[kind]}: {ids}" if ids else NOTICE_LABELS[kind], date, lifted)


def notice_of_statement(kind: str, doi: str | None, pmid: str | None, date: Sequence[int] | None = None) -> str:
    """The work a notice is about, by its DOI or PMID or both, with the notice's date."""
    return _dated(f"{NOTICE_LABELS[kind]} for: {_ids_written(doi, pmid)}", date)


def version_statement(doi: str | None, pmid: str | None) -> str:
    """Another version of the study its source states, by its DOI or PMID or both."""
    return f"{VERSION_LABEL}: {_ids_written(doi, pmid)}"


def statements(text: str) -> list[str]:
    """The statements of a note or cell written as `joined_statements` writes them."""
    return [part.strip() for part in _NEXT_STATEMENT.split(text.strip()) if part.strip()]


def joined_statements(written: Iterable[str]) -> str:
    return ". ".join(written)


def read_standing(written: Iterable[str]) -> dict[str, str] | None:
    """The fields (`retracted`, `publication_types` and the LISTS: see FIELDS) that
    statements sitegen writes give; None when any of `written` is no such statement (a note of the user's own,
    which says nothing sitegen reads). A notice's identifiers and dates are kept as written: `entry_record` checks
    them, and notes one that is none."""
    said = [_statement_read(statement) for statement in written]
    return None if None in said else _standing(item for item in said if item is not None)


def standing_among(written: Iterable[str]) -> dict[str, str]:
    """What the statements sitegen writes among `written` give (`read_standing`), any other (a note of the user's
    own) skipped."""
    return _standing(said for statement in written if (said := _statement_read(statement)) is not None)


def _standing(said: Iterable[tuple[str, list]]) -> dict[str, str]:
    read: dict[str, list] = {"retracted": [], "publication_types": [], **{name: [] for name in LISTS}}
    for field, values in said:
        read[field] += values
    return {"retracted": "yes" if read["retracted"] else "",
            "publication_types": "; ".join(kind for kind in read["publication_types"] if kind),
            **{name: json.dumps(read[name], ensure_ascii=False) if read[name] else ""
               for name in LISTS}}


def _statement_read(statement: str) -> tuple[str, list] | None:
    """The field of `read_standing` one statement sitegen writes adds to, and what it adds; None when `statement`
    is no such statement."""
    if statement == RETRACTED or statement == "RETRACTED":
        return "retracted", ["yes"]
    if statement.startswith(TYPES_STATEMENT):
        return "publication_types", [kind.strip() for kind in statement[len(TYPES_STATEMENT):].split("; ")]
    if found := VERSION_STATEMENT.fullmatch(statement):
        return "stated_versions", [_notice_ids(found["ids"].split())]
    if not (found := STATEMENT.fullmatch(statement)):
        return None
    kind = _KINDS_BY_LABEL[found["label"]]
    ids = _notice_ids((found["ids"] or "").split())
    date = {"date": _date_parts(found["date"])} if found["date"] else {}
    lifted = found["lifted"] or found["lifted_alone"]
    if lifted and (kind != "reinstatement" or found["about"]):
        return None  # only a reinstatement of the work says which retraction it lifted
    if found["about"]:
        return "notice_of", [{"kind": kind, **ids, **date}]
    if kind == "reinstatement":
        return "reinstatements", [{**ids, **date,
                                   **({"retracted_on": _date_parts(lifted)} if lifted else {})}]
    return "updates", [{"kind": kind, **ids, **date}]


def _date_parts(written: str) -> list[int]:
    """"2019-03-01" as [2019, 3, 1]: `entry_record` checks it is a date of the calendar."""
    return [int(part) for part in written.split("-")]


def _notice_ids(tokens: list[str]) -> dict[str, str]:
    """"doi:10.1/x" and "PMID:123" as {"doi": ..., "pmid": ...}; a token of neither form is taken for a DOI, which
    `entry_record` refuses with a note unless it is one."""
    ids: dict[str, str] = {}
    for token in tokens:
        prefix, colon, value = token.partition(":")
        namespace = prefix.lower() if colon and prefix.lower() in ("doi", "pmid") else "doi"
        ids.setdefault(namespace, value if namespace == prefix.lower() else token)
    return ids
