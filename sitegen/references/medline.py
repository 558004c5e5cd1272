"""PubMed's MEDLINE format (.nbib, .medline, "PubMed" format .txt; ERIC writes it too) as entries.

A tag is up to four capitals, padded with spaces, then "- " ("PMID- ", "TI  - ", ERIC's "ISSN - "); lines
starting with spaces continue the field above; a blank line ends a record, and so does a second PMID
(files joined without the blank line between them). An entry's ID is its
PMID, or "medline-N" for the N-th record of a file without them (ERIC's); PMIDs that repeat (the
same article exported twice) name every record by position instead, with a warning, as in RIS.

Authors are the full names (FAU, "Mangalam, Harry") where the record has them, else the short
ones (AU, "Mangalam H" read "Mangalam, H"), author by author; a group author (CN) is kept whole, in braces, where it
stands among them. Publication types (PT) are kept: they tell an erratum or a retraction notice from
a study. The notices listed against an article (RIN, EIN, ...) are its `updates`, and the works a notice is about
(ROF, EFR, ECF) its `notice_of`, each by the PMID its citation ends with. A page range (PG) is read with its last page in full: MEDLINE shortens it to the digits that change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from sitegen.records.entry import Entry
from sitegen.records.ids import cited_doi
from sitegen.records.pages import medline_pages
from sitegen.references.fields import PMCID, fields, iso_date, issns, joined
from sitegen.references.problems import ReferenceProblem, Skipped, checked, each, named, written_year
from sitegen.references.records import month_of
from sitegen.references.tagged import Layout, TaggedRecord, tagged_records

LAYOUT = Layout("MEDLINE", re.compile(r"(?P<tag>[A-Z][A-Z0-9]{1,3}) *-(?: (?P<value>.*))?$"), " ", once="PMID")
DOI = re.compile(r"10\.\d{4,9}/\S+")
NOTICE_PMID = re.compile(r"\bPMID:\s*(\d+)\W*$")
ELECTRONIC_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})")
SHORT_NAME = re.compile(r"(.+) ([A-Z]{1,4})")  # "Mangalam H", "van der Berg JA"
# The tags naming a notice against the article, each its citation ending "PMID: 24990753" (PubMed's XML says them as
# CommentsCorrections, sitegen.sources.pubmed.UPDATE_REF_TYPES): Retraction In, Retracted and Republished In,
# Erratum In, Corrected and Republished In, Expression of Concern In.
NOTICE_TAGS = {"RIN": "retraction", "RRI": "retraction", "EIN": "correction", "CRI": "correction",
               "ECI": "expression-of-concern"}
# The tags on a notice naming the work it is about, cited alike: Retraction Of, Erratum For, Expression of Concern
# For (PubMed's XML: sitegen.sources.pubmed.NOTICE_OF_REF_TYPES). The citation's DOI names the work too.
NOTICE_OF_TAGS = {"ROF": "retraction", "EFR": "correction", "ECF": "expression-of-concern"}
ENTRY_TYPES = {"journal article": "article", "journal articles": "article", "book": "book",
               "books": "book", "book chapter": "incollection", "preprint": "misc"}


def read_medline(text: str | Iterable[str], warnings: list[str] | None = None,
                 skipped: Skipped | None = None) -> list[Entry]:
    """The records of a MEDLINE file (its text, or its lines as they are read); ReferenceProblem names the line
    of the first malformed one (with `skipped`, each is listed there instead). Each record is read as it ends and
    let go: what is held is the entries."""
    items: list[Entry | ReferenceProblem] = []
    given: list[tuple[str, int]] = []
    for item in tagged_records(text, LAYOUT):
        items.extend(each(_entry, [item]))
        given.append(("", 0) if isinstance(item, ReferenceProblem) else (item.first("PMID"), item.line("PMID")))
    if not items:
        raise ReferenceProblem(1, "no MEDLINE record (a record is lines like 'PMID- 12345678' and 'TI  - A title')")
    return checked(named(items, given, "medline", warnings), skipped)


def _full_date(year: str, after: list[str]) -> str:
    """The ISO date of a MEDLINE publication date with its month and day (DP's "2006 Aug 7"), or "": the day was
    lost, where PubMed's own records (its XML's PubDate) keep it, so one article differed by the route it came by."""
    if len(after) != 2:
        return ""
    month, day = after
    full = iso_date([year, month_of(month), day])
    return full if len(full) == 10 else ""


def _entry(record: TaggedRecord) -> Entry:
    # DP, the publication date ("2013 May 1"), else DEP, the electronic one, which MEDLINE writes "20130501"
    dated = "DP" if record.first("DP") else "DEP"
    date = record.first(dated)
    if dated == "DEP" and (found := ELECTRONIC_DATE.fullmatch(date)):
        date = " ".join(found.groups())
    year = written_year(date, record.line(dated), dated)
    after = date[date.index(year) + len(year):].split() if year else []  # "2013 May 1": the month
    links = [*record.values("LID"), *record.values("AID")]
    kinds = [ENTRY_TYPES[kind.lower()] for kind in record.values("PT") if kind.lower() in ENTRY_TYPES]
    notices, works = _notices(record), _works_noticed(record)
    return Entry("", fields({
        "ENTRYTYPE": kinds[0] if kinds else "article" if record.first("JT", "TA") else "misc",
        "author": " and ".join(_authors(record)),
        "title": record.first("TI", "BTI"),
        "year": year,
        "month": after[0] if after else "",
        "date": _full_date(year, after) if dated == "DP" else "",
        "journal": record.first("JT", "TA"),
        "volume": record.first("VI"),
        "number": record.first("IP"),
        "pages": medline_pages(record.first("PG")),  # "5795-813" is 5795-5813
        "doi": next((found.group().removesuffix(".") for link in links if (found := DOI.search(link))), ""),
        "abstract": record.first("AB"),
        "pmid": record.first("PMID"),
        "pmcid": record.first("PMC") or next((found.group() for link in links if (found := PMCID.search(link))), ""),
        "url": next((link for link in links if link.startswith("http") and not DOI.search(link)), ""),
        "issn": issns([*record.values("IS"), *record.values("ISSN")]),
        "keywords": joined([*record.values("MH"), *record.values("OT")]),
        "language": record.first("LA"),
        "publisher": record.first("PB"),
        "note": joined(record.values("GN"), " "),
        # "Journal Article; Published Erratum", "Retraction of Publication": what tells a notice from a study
        "publication_types": joined(record.values("PT")),
        "retracted": "yes" if any(kind.lower() == "retracted publication" for kind in record.values("PT"))
        or any(notice["kind"] == "retraction" for notice in notices) else "",
        "updates": json.dumps(notices) if notices else "",
        "notice_of": json.dumps(works) if works else "",
        # In a PubMed record OWN names the record's owner ("NLM", "PIP"), not the database: a record with a
        # PMID is PubMed's. Other exporters of the format (ERIC) name themselves there.
        "database": "PubMed" if record.first("PMID") else record.first("OWN"),
    }), record.start)


def _notices(record: TaggedRecord) -> list[dict[str, str]]:
    """The notices the record lists against the article (NOTICE_TAGS), each once, by the PMID its citation ends
    with, as `updates` holds them (see `fields`)."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for tag, kind in NOTICE_TAGS.items():
        for value in record.values(tag):
            pmid = _cited_pmid(value) or ""
            found.setdefault((kind, pmid), {"kind": kind, **({"pmid": pmid} if pmid else {})})
    return list(found.values())


def _works_noticed(record: TaggedRecord) -> list[dict[str, str]]:
    """For a notice, the works it is about (NOTICE_OF_TAGS), each once, by the PMID its citation ends with and the
    DOI it cites, as `notice_of` holds them (see `fields`); a citation naming neither names no work."""
    found: list[dict[str, str]] = []
    for tag, kind in NOTICE_OF_TAGS.items():
        for value in record.values(tag):
            ids = {"doi": cited_doi(value), "pmid": _cited_pmid(value)}
            work = {"kind": kind, **{namespace: value for namespace, value in ids.items() if value}}
            if len(work) > 1 and work not in found:
                found.append(work)
    return found


def _cited_pmid(citation: str) -> str | None:
    """The PMID a notice's citation ends with ("... 2014 Jul 3. PMID: 24990753"), or None."""
    return found.group(1) if (found := NOTICE_PMID.search(citation)) else None


def _authors(record: TaggedRecord) -> list[str]:
    """The authors in the order the record lists them: the full names (FAU) where it has them, else the short
    ones (AU), and the group authors (CN, braced) where they stand among them. Each FAU is followed by its
    author's AU (or, in files that group tags, the FAUs by the AUs in the same order): an AU beyond those is an
    author without a full name, kept (a record that gives only some authors' full names lost the others)."""
    authors, full_names = [], 0  # full names read whose AU has not come yet
    for tag, name in record.in_order("FAU", "AU", "CN"):
        if tag == "FAU":
            authors.append(name)
            full_names += 1
        elif tag == "CN":
            authors.append(f"{{{name}}}")
        elif full_names:
            full_names -= 1
        else:
            authors.append(_short_name(name))
    return authors


def _short_name(name: str) -> str:
    """MEDLINE's short form, "Family Initials", as "Family, Initials"."""
    found = SHORT_NAME.fullmatch(name.strip())
    return f"{found.group(1)}, {found.group(2)}" if found else name
