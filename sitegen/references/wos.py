"""Web of Science plain-text exports (savedrecs.txt, .ciw) as entries.

A file starts with "FN" and "VR" header lines and ends with "EF"; a record runs from its "PT" line
to its "ER" line; a tag is two characters and a space ("TI Gel electrophoresis"), and lines
starting with three spaces continue the field above (for authors, each such line is one author).
An entry's ID is its accession number (UT, "WOS:000311971500044") or "wos-N" by position; repeated
accession numbers name every record by position, with a warning, as in RIS.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from sitegen.records.entry import Entry
from sitegen.references.fields import fields, issns, joined, keywords
from sitegen.references.problems import ReferenceProblem, Skipped, checked, each, named, written_year
from sitegen.references.tagged import Layout, TaggedRecord, tagged_records

LAYOUT = Layout("Web of Science", re.compile(r"(?P<tag>[A-Z][A-Z0-9])(?: (?P<value>.*))?$"), "   ",
                start="PT", end="ER", outside=frozenset({"FN", "VR", "EF"}))
# What BIOSIS writes before an article number in its page span ("Article No.: e0191645").
ARTICLE_NUMBER_LABEL = re.compile(r"^Article No\.?:\s*", re.IGNORECASE)
# A record of Web of Science's MEDLINE database: its accession number is the PMID.
MEDLINE_ACCESSION = re.compile(r"MEDLINE:(\d+)", re.IGNORECASE)
# PT, the publication type: Journal, Book, book in a Series, Conference, Patent
ENTRY_TYPES = {"J": "article", "B": "book", "S": "incollection", "C": "inproceedings", "P": "misc"}


def read_wos(text: str | Iterable[str], warnings: list[str] | None = None, skipped: Skipped | None = None) -> list[Entry]:
    """The records of a Web of Science plain-text export (its text, or its lines as they are read); ReferenceProblem
    names the line of the first malformed one (with `skipped`, each is listed there instead). Each record is read
    as it ends and let go: what is held is the entries."""
    headers: dict[str, str] = {}
    items: list[Entry | ReferenceProblem] = []
    given: list[tuple[str, int]] = []
    for item in tagged_records(text, LAYOUT, headers):
        items.extend(each(lambda record: _entry(record, _database(headers)), [item]))
        given.append(("", 0) if isinstance(item, ReferenceProblem) else (item.first("UT"), item.line("UT")))
    if not items:
        raise ReferenceProblem(1, "no Web of Science record (a record runs from a 'PT J' line to an 'ER' line)")
    # The file's header names the database of every record: one written only after records (exports joined, the
    # first without its header) names theirs too.
    database = " ".join(_database(headers).split())
    items = [dataclasses.replace(item, fields={**item.fields, "database": database})
             if isinstance(item, Entry) and item.fields["database"] != database else item for item in items]
    return checked(named(items, given, "wos", warnings), skipped)


def _database(headers: dict[str, str]) -> str:
    """The database the file's header (FN) names: "FN Clarivate Analytics Web of Science", "FN Thomson Reuters Web
    of Knowledge" are one, by its name."""
    named = headers.get("FN", "")
    return "Web of Science" if re.search(r"web of (?:science|knowledge)", named, re.I) else named


def kind_fields(publication_type: str, document_types: str) -> dict[str, str]:
    """What a record's publication type PT ("J") and document types DT ("Article; Proceedings Paper",
    "Correction", "Article; Retracted Publication") say, as the plain-text and the tab-delimited exports
    write them: its entry type, its publication types (what tells a correction or a retraction notice from
    a study whose title does not say so) and whether it is retracted (not its notice: DT "Retraction")."""
    kind = ENTRY_TYPES.get(publication_type.strip().upper(), "misc")
    listed = [listed.strip().lower() for listed in document_types.split(";")]
    return {"ENTRYTYPE": "inproceedings" if kind == "article" and "proceedings paper" in listed else kind,
            "publication_types": joined(document_types.split(";")),
            "retracted": "yes" if "retracted publication" in listed else ""}


def page_span(written: str) -> str:
    """The pages of PS, the page span the databases other than the Core Collection write instead of BP and EP
    (BIOSIS "1484-1496", Zoological Record "i-iv, 1-74", MEDLINE "4348-64"), without BIOSIS' label of an
    article number."""
    return ARTICLE_NUMBER_LABEL.sub("", written.strip(), count=1)


def pubmed_id(accession: str) -> str:
    """The PMID an accession number (UT) names: a MEDLINE record's ("MEDLINE:24340177") is its PMID, and no PM
    field repeats it; "" for the other databases' ("WOS:…", "BIOSIS:…")."""
    found = MEDLINE_ACCESSION.fullmatch(accession.strip())
    return found.group(1) if found else ""


def _entry(record: TaggedRecord, database: str) -> Entry:
    year = written_year(record.first("PY"), record.line("PY"), "PY")
    start, end = record.first("BP"), record.first("EP")
    return Entry("", fields({
        **kind_fields(record.first("PT"), record.first("DT")),
        "author": " and ".join(record.items("AF") or record.items("AU")),
        "title": record.first("TI"),
        "year": year,
        "month": record.first("PD").split()[0] if record.first("PD") else "",
        "journal": record.first("SO", "SE"),
        "volume": record.first("VL"),
        "number": record.first("IS"),
        "pages": f"{start}-{end}" if start and end and start != end else start or end or (
            page_span(record.first("PS")) or record.first("AR")),
        "doi": record.first("DI"),
        "abstract": record.first("AB"),
        "pmid": record.first("PM") or pubmed_id(record.first("UT")),
        "issn": issns([*record.values("SN"), *record.values("EI")]),
        "keywords": joined(keyword for tag in ("DE", "ID") for value in record.values(tag)
                           for keyword in keywords(value).split("; ")),
        "language": record.first("LA"),
        "publisher": record.first("PU"),
        "database": database,
    }), record.start)
