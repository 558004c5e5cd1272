"""OpenAlex: turn Work objects into normalised CSL-JSON records."""

from __future__ import annotations

from typing import Any

from sitegen.records.ids import normalise_doi, normalise_openalex, normalise_pmcid, normalise_pmid, record_id
from sitegen.review.models import CslDate, CslName, Record, RecordMeta

# OpenAlex work types (old and new vocabularies) to CSL item types.
CSL_TYPES = {
    "journal-article": "article-journal",
    "article": "article-journal",
    "review": "article-journal",
    "letter": "article-journal",
    "editorial": "article-journal",
    "erratum": "article-journal",
    "retraction": "article-journal",
    "book-chapter": "chapter",
    "book": "book",
    "monograph": "book",
    "dissertation": "thesis",
    "proceedings-article": "paper-conference",
    "posted-content": "article",
    "preprint": "article",
    "report": "report",
    "dataset": "dataset",
}

MAX_ABSTRACT_WORDS = 100_000  # an inverted index claiming more positions is not an abstract


def abstract_from_inverted_index(index: dict[str, list[int]] | None) -> str | None:
    """Rebuild the abstract text OpenAlex ships as {word: [positions]}."""
    if not index:
        return None
    positions: dict[int, str] = {}
    for word, places in index.items():
        for place in places:
            if not isinstance(place, int) or not 0 <= place < MAX_ABSTRACT_WORDS:
                return None
            positions[place] = word
    text = " ".join(positions[i] for i in sorted(positions))
    return text.strip() or None


def _date_parts(work: dict[str, Any]) -> CslDate | None:
    date = work.get("publication_date") or ""
    parts = [int(p) for p in date.split("-") if p.isdigit()][:3]
    if not parts and isinstance(work.get("publication_year"), int):
        parts = [work["publication_year"]]
    return CslDate(date_parts=[parts]) if parts else None


def _open_access_location(work: dict[str, Any]) -> dict[str, Any] | None:
    # Licence and full-text URL must come from the same location, never mixed.
    for key in ("best_oa_location", "primary_location"):
        location = work.get(key)
        if isinstance(location, dict) and location.get("is_oa") and (location.get("pdf_url") or location.get("landing_page_url")):
            return location
    return None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def work_to_record(work: dict[str, Any]) -> Record | None:
    """A Record for one OpenAlex Work, or None when it has no usable identifier or title."""
    ids = work.get("ids") or {}
    identifiers = {
        "doi": normalise_doi(work.get("doi") or ids.get("doi")),
        "openalex": normalise_openalex(work.get("id") or ids.get("openalex")),
        "pmid": normalise_pmid(ids.get("pmid")),
        "pmcid": normalise_pmcid(ids.get("pmcid")),
    }
    title = _text(work.get("title")) or _text(work.get("display_name"))
    rid = record_id(identifiers)
    if rid is None or title is None:
        return None
    source = ((work.get("primary_location") or {}).get("source") or {}) or (work.get("host_venue") or {})
    biblio = work.get("biblio") or {}
    first, last = _text(biblio.get("first_page")), _text(biblio.get("last_page"))
    pages = first if first == last or not last else f"{first}-{last}" if first else None
    location = _open_access_location(work)
    work_type = work.get("type") or ""
    return Record(
        id=rid,
        type=CSL_TYPES.get(work_type, "article"),
        title=title,
        author=[CslName(literal=name) for a in work.get("authorships") or []
                if (name := _text((a.get("author") or {}).get("display_name")))],
        container_title=_text(source.get("display_name")),
        issued=_date_parts(work),
        volume=_text(biblio.get("volume")),
        issue=_text(biblio.get("issue")),
        page=pages or None,
        DOI=identifiers["doi"],
        PMID=identifiers["pmid"],
        PMCID=identifiers["pmcid"],
        URL=f"https://doi.org/{identifiers['doi']}" if identifiers["doi"] else f"https://openalex.org/{identifiers['openalex']}",
        abstract=abstract_from_inverted_index(work.get("abstract_inverted_index")),
        custom=RecordMeta(
            openalex=identifiers["openalex"],
            sources=["openalex"],
            publication_types=[work_type] if work_type else [],
            open_access=(work.get("open_access") or {}).get("is_oa"),
            license=_text(location.get("license")) if location else None,
            fulltext_url=_text(location.get("pdf_url") or location.get("landing_page_url")) if location else None,
            retracted=bool(work.get("is_retracted")),
        ),
    )
