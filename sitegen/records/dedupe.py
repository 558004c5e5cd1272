"""Deduplicating a search export: entries in, duplicate sets and probable pairs out.

The entries come from a reference file (records CSV, RIS or BibTeX; `sitegen.references` reads
them). Entries with an identifier (DOI, arXiv id, PMID, PMCID) become sitegen Records for the identity graph (a record's id must be
one of its identifiers, so entries without one cannot be Records); every entry then goes to the
metadata matcher (`sitegen.records.matching`).
"""

from __future__ import annotations

from sitegen.records.entry import Entry
from sitegen.records.identity import deduplicate
from sitegen.records.ids import normalise_arxiv, normalise_doi, normalise_pmcid, normalise_pmid, record_id
from sitegen.records.matching import Matches, Work, find_duplicates, work
from sitegen.records.model import Record, RecordMeta, publication_year
from sitegen.records.names import AUTHORS_AND
from sitegen.records.preprints import is_preprint


def identifiers(row: Entry) -> dict[str, str]:
    """The entry's identifiers: its DOI, or the arXiv id an export wrote in the DOI field ("arXiv:2101.00001",
    "2101.00001v2"), which names the same work as its 10.48550/arXiv. DOI; its PMID and PMCID (PubMed's and
    Embase's exports give them); its arXiv id. Entries sharing one are one work; two of a kind that differ, two works."""
    found: dict[str, str] = {}
    if doi := normalise_doi(row.get("doi")):
        found["doi"] = doi
    elif arxiv := normalise_arxiv(row.get("doi")):
        found["arxiv"] = arxiv
    for namespace, normalise in (("pmid", normalise_pmid), ("pmcid", normalise_pmcid)):
        if value := normalise(row.get(namespace)):
            found[namespace] = value
    if "arxiv" not in found and (arxiv := normalise_arxiv(row.get("arxiv"))) and not (
            "doi" in found and not is_preprint(found["doi"])):
        # The entry's own arXiv id (an eprint), as import reads it: beside a journal's DOI it names the article's
        # preprint, another record, and is left out, so that the two are linked as versions, never merged.
        found["arxiv"] = arxiv
    return found


def to_work(row: Entry) -> Work:
    authors = [name for name in AUTHORS_AND.split(row.get("author")) if name.strip()]
    return work(row.id, row.get("title"), authors, publication_year(row.get("year")), row.get("journal"),
                row.get("volume"), row.get("number"), row.get("pages"), None, row.get("abstract"),
                identifiers(row), (row.get("ENTRYTYPE"),),  # an "Erratum" document type (Scopus) is a notice
                entry_type=row.get("ENTRYTYPE"))


def identity_sets(rows: list[Entry]) -> list[list[str]]:
    """Sets of entry IDs the identity graph joins (rows sharing a DOI, arXiv id, PMID or PMCID, unless their
    titles are unrelated)."""
    known = [(row.id, found, row.get("title")) for row in rows if (found := identifiers(row))]
    records = [Record(id=record_id(ids), DOI=ids.get("doi"), PMID=ids.get("pmid"), PMCID=ids.get("pmcid"),
                      custom=RecordMeta(arxiv=ids.get("arxiv")), title=title or "untitled") for _, ids, title in known]
    return [sorted(known[i][0] for i in members) for members in deduplicate(records).members.values()
            if len(members) > 1]


def dedupe_rows(rows: list[Entry]) -> Matches:
    return find_duplicates([to_work(row) for row in rows], identity_sets(rows))
