"""Deduplicating a search export: entries in, duplicate sets and probable pairs out.

The entries come from a reference file (records CSV, RIS or BibTeX; `sitegen.references` reads
them). Entries with a DOI become sitegen Records for the identity graph (a record's id must be
one of its identifiers, so entries without one cannot be Records); every entry then goes to the
metadata matcher (`sitegen.records.matching`).
"""

from __future__ import annotations

from sitegen.records.entry import Entry
from sitegen.records.identity import deduplicate
from sitegen.records.ids import normalise_arxiv, normalise_doi, record_id
from sitegen.records.matching import Matches, Work, find_duplicates, work
from sitegen.records.model import Record, RecordMeta, publication_year
from sitegen.records.names import AUTHORS_AND


def identifiers(row: Entry) -> dict[str, str]:
    """The entry's identifier: its DOI, or the arXiv id an export wrote in the DOI field
    ("arXiv:2101.00001", "2101.00001v2"), which names the same work as its 10.48550/arXiv. DOI."""
    if doi := normalise_doi(row.get("doi")):
        return {"doi": doi}
    if arxiv := normalise_arxiv(row.get("doi")):
        return {"arxiv": arxiv}
    return {}


def to_work(row: Entry) -> Work:
    authors = [name for name in AUTHORS_AND.split(row.get("author")) if name.strip()]
    return work(row.id, row.get("title"), authors, publication_year(row.get("year")), row.get("journal"),
                row.get("volume"), row.get("number"), row.get("pages"), None, row.get("abstract"),
                identifiers(row), (row.get("ENTRYTYPE"),),  # an "Erratum" document type (Scopus) is a notice
                entry_type=row.get("ENTRYTYPE"))


def identity_sets(rows: list[Entry]) -> list[list[str]]:
    """Sets of entry IDs the identity graph joins (rows sharing a DOI or arXiv id, unless their titles
    are unrelated)."""
    known = [(row.id, found, row.get("title")) for row in rows if (found := identifiers(row))]
    records = [Record(id=record_id(ids), DOI=ids.get("doi"), custom=RecordMeta(arxiv=ids.get("arxiv")),
                      title=title or "untitled") for _, ids, title in known]
    return [sorted(known[i][0] for i in members) for members in deduplicate(records).members.values()
            if len(members) > 1]


def dedupe_rows(rows: list[Entry]) -> Matches:
    return find_duplicates([to_work(row) for row in rows], identity_sets(rows))
