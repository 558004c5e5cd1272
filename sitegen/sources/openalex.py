"""OpenAlex: /works search with cursor paging, exact lookups, the citation graph,
and Work objects turned into normalised CSL-JSON records.

API: https://developers.openalex.org. Since February 2026 OpenAlex wants an API
key (`api_key`); list and search calls are metered, singleton lookups are free.
"""

from __future__ import annotations

from typing import Any

from sitegen.records.ids import (
    normalise_arxiv,
    normalise_doi,
    normalise_openalex,
    normalise_pmcid,
    normalise_pmid,
    record_id,
)
from sitegen.records.markup import plain_text
from sitegen.records.model import Record, RecordMeta
from sitegen.records.names import split_name
from sitegen.records.providers import label
from sitegen.sources.base import (
    Items,
    Malformed,
    Pager,
    Trace,
    as_dict,
    as_list,
    check_status,
    parse_date,
    parse_json,
    require_title,
    run_call,
    text_value,
    to_record,
)
from sitegen.sources.http import Fetcher, Provider, Secrets, SourceError
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings

BASE = "https://api.openalex.org"
PROVIDER = Provider(label("openalex"), frozenset({"api.openalex.org"}), min_interval=0.1)
IDS_PER_REQUEST = 50  # OpenAlex accepts up to 50 values in one OR filter
WORKS = Items("work(s)", "no identifier",
              lambda work: normalise_openalex(work.get("id")) if isinstance(work, dict) else None)

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


def abstract_from_inverted_index(index: Any) -> str | None:
    """Rebuild the abstract text OpenAlex ships as {word: [positions]}; None when it is anything else."""
    if not isinstance(index, dict) or not index:
        return None
    positions: dict[int, str] = {}
    for word, places in index.items():
        if not isinstance(word, str) or not isinstance(places, list):
            return None
        for place in places:
            if not isinstance(place, int) or isinstance(place, bool) or not 0 <= place < MAX_ABSTRACT_WORDS:
                return None
            positions[place] = word
    text = " ".join(positions[i] for i in sorted(positions))
    return text.strip() or None


def _open_access_location(work: dict[str, Any]) -> dict[str, Any] | None:
    # Licence and full-text URL must come from the same location, never mixed.
    for key in ("best_oa_location", "primary_location"):
        location = as_dict(work.get(key))
        if location.get("is_oa") is True and _fulltext_url(location):
            return location
    return None


def _fulltext_url(location: dict[str, Any]) -> str | None:
    return text_value(location.get("pdf_url")) or text_value(location.get("landing_page_url"))


def work_to_record(work: dict[str, Any]) -> Record | None:
    """A Record for one OpenAlex Work, None when it has no usable identifier; Unreadable without a title."""
    ids = as_dict(work.get("ids"))
    identifiers = {
        "doi": normalise_doi(work.get("doi") or ids.get("doi")),
        "openalex": normalise_openalex(work.get("id") or ids.get("openalex")),
        "pmid": normalise_pmid(ids.get("pmid")),
        "pmcid": normalise_pmcid(ids.get("pmcid")),
    }
    doi = identifiers["doi"] or ""
    arxiv = normalise_arxiv(doi) if doi.startswith("10.48550/") else None  # arXiv's own DOIs name the preprint
    rid = record_id(identifiers)
    if rid is None:
        return None
    titles = (work.get("title"), work.get("display_name"))
    title = require_title(plain_text(titles[0]) or plain_text(titles[1]), rid,
                          malformed=any(value is not None and not isinstance(value, str) for value in titles))
    source = as_dict(as_dict(work.get("primary_location")).get("source")) or as_dict(work.get("host_venue"))
    biblio = as_dict(work.get("biblio"))
    first, last = text_value(biblio.get("first_page")), text_value(biblio.get("last_page"))
    pages = first if first == last or not last else f"{first}-{last}" if first else None
    location = _open_access_location(work)
    work_type = text_value(work.get("type")) or ""
    is_oa = as_dict(work.get("open_access")).get("is_oa")
    return Record(
        id=rid,
        type=CSL_TYPES.get(work_type, "article"),
        title=title,
        # OpenAlex gives each author only as a display name: split it as a reference manager needs.
        author=[split_name(name) for a in as_list(work.get("authorships"))
                if (name := text_value(as_dict(as_dict(a).get("author")).get("display_name")))],
        container_title=plain_text(source.get("display_name")),
        issued=parse_date(work.get("publication_date"), work.get("publication_year")),
        volume=text_value(biblio.get("volume")),
        issue=text_value(biblio.get("issue")),
        page=pages or None,
        DOI=identifiers["doi"],
        PMID=identifiers["pmid"],
        PMCID=identifiers["pmcid"],
        URL=f"https://doi.org/{identifiers['doi']}" if identifiers["doi"] else f"https://openalex.org/{identifiers['openalex']}",
        abstract=plain_text(abstract_from_inverted_index(work.get("abstract_inverted_index"))),
        custom=RecordMeta(
            openalex=identifiers["openalex"],
            arxiv=arxiv,
            sources=["openalex"],
            publication_types=[work_type] if work_type else [],
            open_access=is_oa if isinstance(is_oa, bool) else None,
            license=text_value(location.get("license")) if location else None,
            fulltext_url=_fulltext_url(location) if location else None,
            retracted=work.get("is_retracted") is True,  # only JSON true: the string "false" is not a retraction
        ),
    )


# --------------------------------------------------------------------------- requests


def secrets(settings: SourceSettings) -> Secrets:
    params, headers = {}, {}
    if settings.openalex_api_key:
        if settings.openalex_key_in == "header":
            headers["Authorization"] = f"Bearer {settings.openalex_api_key}"
        else:
            params["api_key"] = settings.openalex_api_key
    if settings.contact_email:
        params["mailto"] = settings.contact_email
    return Secrets(params, headers)


def search(fetcher: Fetcher, settings: SourceSettings, query: dict[str, str], since: int | None = None) -> SourceOutcome:
    """All works matching `query` (search/filter parameters), paged with cursors."""
    params = dict(query)
    if since is not None:
        params["filter"] = ",".join(p for p in (params.get("filter"), f"from_publication_date:{since}-01-01") if p)
    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)),
                    lambda trace: _paged(trace, params, settings))


def works_by_ids(fetcher: Fetcher, settings: SourceSettings, openalex_ids: list[str]) -> SourceOutcome:
    """The works with these OpenAlex ids (e.g. a work's references or related works)."""
    def call(trace: Trace) -> SourceOutcome:
        records, total, truncated = [], 0, False
        for start in range(0, len(openalex_ids), IDS_PER_REQUEST):
            batch = openalex_ids[start:start + IDS_PER_REQUEST]
            outcome = _paged(trace, {"filter": "openalex:" + "|".join(batch)}, settings)
            records += outcome.records
            total += outcome.total or 0
            truncated = truncated or outcome.truncated
        missing = sorted(set(openalex_ids) - {r.custom.openalex for r in records})
        if missing:
            trace.warnings.append(f"OpenAlex has no record for {len(missing)} requested id(s): {', '.join(missing[:5])}")
        return trace.outcome("ok", records, total, truncated=truncated)
    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)), call)


def citing(fetcher: Fetcher, settings: SourceSettings, openalex_id: str) -> SourceOutcome:
    """Works that cite the given work (the `cites:` filter)."""
    return search(fetcher, settings, {"filter": f"cites:{openalex_id}"})


def lookup(fetcher: Fetcher, settings: SourceSettings, identifier: str) -> SourceOutcome:
    """One work by OpenAlex id, DOI or PMID. Not found is an empty `ok`, not an outage."""
    path = _lookup_path(identifier)

    def call(trace: Trace) -> SourceOutcome:
        response = trace.get(f"{BASE}/works/{path}", [])
        check_status(response, PROVIDER.name)
        if response.status == 404:
            return trace.outcome("ok", [], 0)
        work = parse_json(response)
        record = to_record(work, work_to_record, "the work") if isinstance(work, dict) else None
        if record is None:
            raise Malformed("the work has no identifier or title")
        if not _is_the_work(record, identifier):
            raise Malformed(f"asked for {identifier} but received {record.id}: a response for a different record")
        return trace.outcome("ok", [record], 1)
    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)), call)


def related_ids(work: dict[str, Any], key: str) -> list[str]:
    """OpenAlex ids listed under `referenced_works` or `related_works` of a Work object."""
    return [i for i in (normalise_openalex(value) for value in as_list(work.get(key))) if i]


def _lookup_path(identifier: str) -> str:
    if openalex := normalise_openalex(identifier):
        return openalex
    if doi := normalise_doi(identifier):
        return f"doi:{doi}"
    if pmid := normalise_pmid(identifier):
        return f"pmid:{pmid}"
    raise ValueError(f"{identifier!r} is not an OpenAlex id, DOI or PMID")


def _is_the_work(record: Record, identifier: str) -> bool:
    asked = {name: normalise(identifier) for name, normalise in
             (("openalex", normalise_openalex), ("doi", normalise_doi), ("pmid", normalise_pmid))}
    have = record.identifiers()
    return any(value and have.get(name) == value for name, value in asked.items())


def _paged(trace: Trace, query: dict[str, str], settings: SourceSettings) -> SourceOutcome:
    pager = Pager(PROVIDER.name, WORKS, settings.max_records, settings.openalex_per_page)
    cursor: Any = "*"
    while pager.proceed(cursor):
        params = sorted(query.items()) + [("per_page", str(settings.openalex_per_page)), ("cursor", cursor)]
        response = trace.get(f"{BASE}/works", params)
        if response.status == 404:
            raise SourceError("unavailable", "OpenAlex answered 404 for a list request")
        check_status(response, PROVIDER.name)
        page = parse_json(response)
        if not isinstance(page, dict) or "error" in page:
            raise Malformed(f"expected a list of works, got {str(page)[:200]!r}")
        meta, results = page.get("meta"), page.get("results")
        if not isinstance(meta, dict) or not isinstance(results, list):
            raise Malformed("the response has no meta or no results list")
        pager.add(meta.get("count"), results, work_to_record, dict)
        cursor = meta.get("next_cursor")
    return pager.outcome(trace)
