"""OpenAlex: /works search with cursor paging, exact lookups, the citation graph,
and Work objects turned into normalised CSL-JSON records.

API: https://developers.openalex.org. Since February 2026 OpenAlex wants an API
key (`api_key`); list and search calls are metered, singleton lookups are free.
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any
from urllib.parse import quote, urlencode

from sitegen.records.citations import CitationQuery
from sitegen.records.copyright import without_abstract_heading, without_copyright_statement
from sitegen.records.ids import (
    normalise_arxiv,
    normalise_doi,
    normalise_openalex,
    normalise_pmcid,
    normalise_pmid,
    record_id,
)
from sitegen.records.markup import plain_text
from sitegen.records.model import Record, RecordMeta, web_address
from sitegen.records.names import split_name
from sitegen.records.providers import label
from sitegen.sources.base import (
    CROSSREF_CSL_TYPES,
    Items,
    Malformed,
    Pager,
    Trace,
    Unsupported,
    UntitledAnswer,
    as_dict,
    as_list,
    check_status,
    lookup_outcome,
    no_record,
    not_found,
    own_id,
    parse_date,
    parse_json,
    read_identifier,
    require_title,
    run_call,
    said,
    text_value,
    to_record,
    to_records,
)
from sitegen.sources.http import Fetcher, Provider, Secrets, SourceError, redirect_target
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import ENVIRONMENT, SourceSettings
from sitegen.sources.snapshots import SnapshotDamaged, SnapshotMissing
from sitegen.text import counted

BASE = "https://api.openalex.org"
PROVIDER = Provider(label("openalex"), frozenset({"api.openalex.org"}), min_interval=0.1)
# OpenAlex has required a key since February 2026: a refusal says which variable holds it.
KEY_VARIABLE = ENVIRONMENT["openalex_api_key"]
# How OpenAlex answers a work it does not have: a 404 page of its web framework (as recorded). Any other 404
# (a proxy's or gateway's JSON {"error": "Not Found"} among them) says nothing of the work: an outage.
NOT_FOUND = (b"The requested URL was not found on the server",)
IDS_PER_REQUEST = 50  # OpenAlex accepts up to 50 values in one OR filter
MAX_IDS_PER_SEED = 2000  # of one seed's referenced or related works, as many as a run follows
# What a URL path holds as it is (RFC 3986's pchar less the unreserved characters quote() keeps anyway): anything
# else in a DOI ('?', '#', '%', a space, non-ASCII letters) is percent-encoded, so the DOI stays in the path.
PATH_SAFE = "/:@!$&'()*+,;="
WORKS = Items("work", "no identifier",
              lambda work: own_id(work.get("id") or as_dict(work.get("ids")).get("openalex"), normalise_openalex)
              if isinstance(work, dict) else None, "OpenAlex id")

# OpenAlex work types to CSL item types: its older vocabulary was Crossref's (a "book-part" is a chapter, a
# "journal-issue" a periodical, never an unpublished article), then its own.
CSL_TYPES = {
    **CROSSREF_CSL_TYPES,
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
    "reference-entry": "entry",  # as Crossref's
    "peer-review": "review",
    "standard": "standard",
}

MAX_ABSTRACT_WORDS = 100_000  # an inverted index claiming more positions is not an abstract


def abstract_from_inverted_index(index: Any) -> str | None:
    """Rebuild the abstract text OpenAlex ships as {word: [positions]}; None when it is anything else, or when two
    words claim one position: either would be a guess, and an abstract is what evidence passages are checked against."""
    if not isinstance(index, dict) or not index:
        return None
    positions: dict[int, str] = {}
    for word, places in index.items():
        if not isinstance(word, str) or not isinstance(places, list):
            return None
        for place in places:
            if not isinstance(place, int) or isinstance(place, bool) or not 0 <= place < MAX_ABSTRACT_WORDS:
                return None
            if positions.setdefault(place, word) != word:
                return None
    text = " ".join(positions[i] for i in sorted(positions))
    return without_abstract_heading(text.strip()) or None


def _open_access_location(work: dict[str, Any]) -> dict[str, Any] | None:
    # Licence and full-text URL must come from the same location, never mixed.
    for key in ("best_oa_location", "primary_location"):
        location = as_dict(work.get(key))
        if location.get("is_oa") is True and _fulltext_url(location):
            return location
    return None


def _fulltext_url(location: dict[str, Any]) -> str | None:
    return web_address(text_value(location.get("pdf_url"))) or web_address(text_value(location.get("landing_page_url")))


def work_to_record(work: dict[str, Any]) -> Record | None:
    """A Record for one OpenAlex Work, None when it has no usable identifier; Unreadable without a title."""
    ids = as_dict(work.get("ids"))
    identifiers = {
        "doi": read_identifier("doi", normalise_doi, work.get("doi"), ids.get("doi")),
        "openalex": read_identifier("openalex", normalise_openalex, work.get("id"), ids.get("openalex")),
        "pmid": read_identifier("pmid", normalise_pmid, ids.get("pmid")),
        "pmcid": read_identifier("pmcid", normalise_pmcid, ids.get("pmcid")),
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
        # The author as OpenAlex resolved them, else as the work printed the name (an author OpenAlex could not
        # resolve has no display name, but is an author all the same).
        author=[split_name(name) for a in map(as_dict, as_list(work.get("authorships")))
                if (name := text_value(as_dict(a.get("author")).get("display_name")) or text_value(a.get("raw_author_name")))],
        container_title=plain_text(source.get("display_name")),
        issued=parse_date(work.get("publication_date"), work.get("publication_year")),
        volume=text_value(biblio.get("volume")),
        issue=text_value(biblio.get("issue")),
        page=pages or None,
        DOI=identifiers["doi"],
        PMID=identifiers["pmid"],
        PMCID=identifiers["pmcid"],
        URL=f"https://doi.org/{identifiers['doi']}" if identifiers["doi"] else f"https://openalex.org/{identifiers['openalex']}",
        abstract=without_copyright_statement(plain_text(abstract_from_inverted_index(work.get("abstract_inverted_index")))),
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


# OpenAlex answers a request whose address is longer than 4,094 bytes with HTTP 400 ("Request URL too long";
# developers.openalex.org/guides/searching), and takes no POST. A later page's address is longer than the first's
# (its cursor in place of "*"), and the key and contact address may ride in it too: a query that left less room
# than this would fail part-way through the reading, on every run, reported as an outage.
MAX_ADDRESS_BYTES = 4094
ADDRESS_ROOM = 400  # bytes kept for a later page's cursor, an api_key and a mailto


def _fits_the_address(params: dict[str, str]) -> None:
    """Raise Unsupported, before any request, when `params` leave no room in OpenAlex's address limit."""
    first_page = sorted(params.items()) + [("per_page", "200"), ("cursor", "*")]
    length = len(f"{BASE}/works?{urlencode(first_page)}")
    if length > MAX_ADDRESS_BYTES - ADDRESS_ROOM:
        raise Unsupported(f"the query makes a request address of {length:,} bytes, and OpenAlex refuses one over "
                          f"{MAX_ADDRESS_BYTES:,} (with {ADDRESS_ROOM} kept for a later page's cursor and the "
                          "credentials): split the strategy into several, each with part of a long OR list, whose "
                          "results are combined")


def search(fetcher: Fetcher, settings: SourceSettings, query: dict[str, str], since: int | None = None) -> SourceOutcome:
    """All works matching `query` (search/filter parameters), paged with cursors."""
    params = dict(query)
    if since is not None:
        params["filter"] = ",".join(p for p in (params.get("filter"), f"from_publication_date:{since}-01-01") if p)

    def call(trace: Trace) -> SourceOutcome:
        _fits_the_address(params)
        return _paged(trace, params, settings)

    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)), call)


# OpenAlex's semantic search (`search.semantic` on /works, developers.openalex.org/guides/semantic-search) ranks
# works by embedding similarity: a bounded candidate list, with no total and no complete set to page through.
SEMANTIC_CANDIDATES = 50
SEMANTIC_QUERY_CHARS = 2000  # OpenAlex matches on the first 2,000 characters and drops the rest
SHORTLIST_NOTE = (f"OpenAlex semantic shortlist: the {SEMANTIC_CANDIDATES} works at most whose meaning is closest to "
                  "the query, ranked by similarity; not a database search, so it is never counted in PRISMA "
                  "and never saved as a strategy")


def semantic_shortlist(fetcher: Fetcher, settings: SourceSettings, text: str, *, since: int | None = None,
                       ignored: list[str] | None = None) -> SourceOutcome:
    """At most SEMANTIC_CANDIDATES works nearest in meaning to `text` (plain words), published from `since` on, in
    OpenAlex's order (one request). `ignored` are the query's NOT terms, which similarity cannot exclude: the
    outcome warns that they were not applied."""
    if len(text) > SEMANTIC_QUERY_CHARS:
        return SourceOutcome(source="openalex", status="unsupported", warnings=[
            f"OpenAlex matches a semantic query on its first {SEMANTIC_QUERY_CHARS} characters only; this one has "
            f"{len(text)}, so it was not sent"])

    def call(trace: Trace) -> SourceOutcome:
        params = [("search.semantic", text), ("per_page", str(SEMANTIC_CANDIDATES))]
        if since is not None:
            params.append(("filter", f"from_publication_date:{since}-01-01"))
        response = trace.get(f"{BASE}/works", params)
        check_status(response, PROVIDER.name, KEY_VARIABLE)
        page = parse_json(response)
        results = page.get("results") if isinstance(page, dict) else None
        if not isinstance(results, list):
            raise Malformed(f"expected a list of works, got {said(page)}")
        # a work listed twice is one candidate, at its first place
        firsts: dict[object, Any] = {}
        for place, work in enumerate(results):
            firsts.setdefault(WORKS.readable_id(work) or place, work)
        converted = to_records(list(firsts.values())[:SEMANTIC_CANDIDATES], work_to_record, dict, WORKS)
        trace.warnings += converted.left_out
        outcome = trace.outcome("ok", converted.records, warning=SHORTLIST_NOTE,
                                dropped=len(converted.unreadable) + len(converted.untitled))
        if ignored:
            outcome.warnings.append(f"the semantic shortlist cannot exclude NOT terms ({', '.join(ignored)}): "
                                    "they were not applied to it")
        return outcome

    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)), call)


def works_by_ids(fetcher: Fetcher, settings: SourceSettings, openalex_ids: list[str]) -> SourceOutcome:
    """The works with these OpenAlex ids (e.g. a work's references or related works)."""
    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)),
                    lambda trace: _by_ids(trace, openalex_ids, settings))


def citing(fetcher: Fetcher, settings: SourceSettings, openalex_id: str) -> SourceOutcome:
    """Works that cite the given work (the `cites:` filter), newest first."""
    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)),
                    lambda trace: _citing(trace, openalex_id, settings))


def lookup(fetcher: Fetcher, settings: SourceSettings, identifier: str) -> SourceOutcome:
    """One work by OpenAlex id, DOI or PMID. Not found is an empty `ok`, not an outage. Another work in its place
    (OpenAlex merged the two, or reassigned an id) is an answer too, but never the work asked for: an `ok` without
    records whose `doubt` names it, the work kept as `instead` for a caller to say what OpenAlex gave
    (`lookup_outcome`)."""
    def call(trace: Trace) -> SourceOutcome:
        try:
            found = _work(trace, identifier)
        except _OtherWork as exc:
            return _answer(trace, identifier, exc.work)
        except SourceError as exc:  # an OpenAlex id merged into another work redirects to it: that work answers
            moved = normalise_openalex(target.rstrip("/").rsplit("/", 1)[-1]) if (target := redirect_target(exc)) else None
            if moved is None or (merged := _work(trace, moved)) is None:
                raise
            # Checked against the identifier asked for, as any answer: the work asked for only when it carries it,
            # else another work in its place (`_answer`).
            return _answer(trace, identifier, merged[1])
        return _answer(trace, identifier, found[1]) if found else trace.outcome("ok", [], 0)
    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)), call)


def _answer(trace: Trace, identifier: str, work: Record) -> SourceOutcome:
    """A lookup answered with `work`: the work asked for when it carries the identifier, else another in its place."""
    return lookup_outcome(trace, identifier, [work], partial(_is_the_work, identifier=identifier),
                          lambda other: other.custom.openalex or other.id)


def citation_search(fetcher: Fetcher, settings: SourceSettings, query: CitationQuery) -> SourceOutcome:
    """The works a citation search finds from its seeds (see sitegen.records.citations), in an order that does not
    depend on how the seeds were listed: for references, related and shared works, most seeds first, then by id;
    for citing works, those citing most seeds first, then newest first (as OpenAlex sorts them), then by id.

    Every seed must resolve to itself and bring its lists: a seed OpenAlex does not know, answers with another
    work (merged or redirected), or lists nothing usable for leaves the search's slice unknown, so the outcome is
    not complete (`doubt` names the seed) while the other seeds are still followed; an error anywhere is the
    outcome's status. `total` is the number of distinct works found, None when it is not known.
    """
    def call(trace: Trace) -> SourceOutcome:
        works, doubts = _seed_works(trace, query)
        if query.mode == "citing":
            outcome = _citing_all(trace, list(works), settings)
        else:
            outcome = _listed(trace, list(works.values()),
                              "related_works" if query.mode == "related" else "referenced_works",
                              2 if query.mode == "shared" else 1, settings, doubts)
        return outcome.model_copy(update={"doubt": "; ".join(doubts) or None})
    return run_call(Trace("openalex", fetcher, PROVIDER, secrets(settings)), call)


def _seed_works(trace: Trace, query: CitationQuery) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Each distinct seed's work by its OpenAlex id (a DOI and the id of one work count once), and why any seed
    could not be followed."""
    works: dict[str, dict[str, Any]] = {}
    written: dict[str, str] = {}  # OpenAlex id -> the seed as first written
    unknown, doubts, repeated = [], [], []
    for seed in query.seeds:
        try:
            found = _work(trace, seed.openalex or seed.doi or "")
        except _OtherWork as exc:
            doubts.append(f"OpenAlex answers the seed {seed.written} with another work, {exc.received} (the two were "
                          "merged, or the id was reassigned), so nothing was followed from it; check which work is "
                          "meant and save the search anew")
            continue
        except UntitledAnswer as exc:  # an answer, not an outage: asked again, OpenAlex answers the same
            doubts.append(f"OpenAlex answers the seed {seed.written} with {exc}, so nothing was followed from it")
            continue
        except SourceError as exc:
            if (target := redirect_target(exc)) is None:
                raise
            moved = normalise_openalex(target.rstrip("/").rsplit("/", 1)[-1])
            doubts.append(f"OpenAlex redirects the seed {seed.written}{f' to {moved}' if moved else ''} (merged into "
                          "another work), so nothing was followed from it; check which work is meant and save the "
                          "search anew")
            continue
        if found is None:
            unknown.append(seed.written)
        elif (openalex_id := _openalex_id(found[0])) in works:
            repeated.append(f"{written[openalex_id]} and {seed.written} are one work, {openalex_id}")
            trace.warnings.append(f"the seed {seed.written} is {openalex_id}, given already as "
                                  f"{written[openalex_id]}: it counts once")
        else:
            works[openalex_id], written[openalex_id] = found[0], seed.written
    if unknown:
        many = len(unknown) > 1
        doubts.insert(0, f"OpenAlex has no work for the seed{'s' if many else ''} {', '.join(unknown)}, so nothing "
                         f"was followed from {'them' if many else 'it'}; correct the seed or save the search anew")
    if query.mode == "shared" and len(works) < 2 and repeated:
        doubts.append(f"the seeds {'; '.join(repeated)}: 'shared' needs at least two different works, so none can "
                      "be shared; save the search with another seed")
    return works, doubts


def _seed_list(work: dict[str, Any], key: str, doubts: list[str]) -> list[str]:
    """The OpenAlex ids a seed lists under `referenced_works` or `related_works`, once each. A list that is missing,
    not a list, or (for references) empty or shorter than OpenAlex's own count is reference data OpenAlex lacks,
    never "cites nothing": `doubts` says so, naming the seed."""
    seed, value, what = _openalex_id(work), work.get(key), key.replace("_", " ")
    if not isinstance(value, list):
        doubts.append(f"OpenAlex sent {'no' if value is None else 'unreadable'} {what} for {seed}, so nothing was "
                      "followed from it")
        return []
    listed = related_ids(work, key)
    if len(listed) < len(value):
        doubts.append(f"{len(value) - len(listed)} of the {what} OpenAlex lists for {seed} "
                      f"{'is' if len(value) - len(listed) == 1 else 'are'} no OpenAlex work id")
    ids = list(dict.fromkeys(listed))
    count = work.get(f"{key}_count")
    if key == "referenced_works" and not ids:
        doubts.append(f"OpenAlex lists no references for {seed}: its reference data may be missing")
    elif isinstance(count, int) and not isinstance(count, bool) and count > len(value):
        doubts.append(f"OpenAlex counts {count} {what} for {seed} but lists {len(value)}: its data may be incomplete")
    return ids


def related_ids(work: dict[str, Any], key: str) -> list[str]:
    """OpenAlex ids listed under `referenced_works` or `related_works` of a Work object."""
    return [i for i in (normalise_openalex(value) for value in as_list(work.get(key))) if i]


def _work(trace: Trace, identifier: str) -> tuple[dict[str, Any], Record] | None:
    """One work by OpenAlex id, DOI or PMID: as OpenAlex sent it and as a record; None when OpenAlex has none."""
    response = trace.get(f"{BASE}/works/{_lookup_path(identifier)}", [])
    check_status(response, PROVIDER.name, KEY_VARIABLE)
    if not_found(response, PROVIDER.name, *NOT_FOUND):
        return None
    work = parse_json(response)
    if not isinstance(work, dict):
        raise Malformed("the work is not a JSON object")
    if (record := to_record(work, work_to_record, trace.warnings, "the work")) is None:
        raise no_record(WORKS, work, "the work")
    if not _is_the_work(record, identifier):
        raise _OtherWork(identifier, record)
    return work, record


class _OtherWork(Malformed):
    """OpenAlex answered a lookup with another work than the one asked for (merged, or an id reassigned)."""

    def __init__(self, asked: str, work: Record):
        self.work, self.received = work, work.custom.openalex or work.id
        super().__init__(f"asked for {asked} but received {self.received}: a response for a different record")


def _by_ids(trace: Trace, openalex_ids: list[str], settings: SourceSettings) -> SourceOutcome:
    batches = [openalex_ids[start:start + IDS_PER_REQUEST] for start in range(0, len(openalex_ids), IDS_PER_REQUEST)]
    outcome = _combined(trace, [_paged(trace, {"filter": "openalex:" + "|".join(batch)}, settings)
                                for batch in batches])
    # A work the filter did not name is no answer to it (a response meant for another request): left out, said so.
    asked = {normalise_openalex(openalex_id) for openalex_id in openalex_ids}
    others = [record.id for record in outcome.records if record.custom.openalex not in asked]
    if others:
        outcome = outcome.model_copy(update={"records": [r for r in outcome.records if r.custom.openalex in asked]})
        outcome.warnings.append(f"OpenAlex also sent {counted(len(others), 'work')} not asked for, left out: "
                                f"{', '.join(others[:5])}{' …' if len(others) > 5 else ''}")
    missing = sorted(set(openalex_ids) - {r.custom.openalex for r in outcome.records})
    if missing:
        outcome.warnings.append(f"OpenAlex has no record for {counted(len(missing), 'requested id')}: {', '.join(missing[:5])}")
    return outcome


def _citing(trace: Trace, openalex_id: str, settings: SourceSettings) -> SourceOutcome:
    return _paged(trace, {"filter": f"cites:{openalex_id}", "sort": "publication_date:desc"}, settings)


def _combined(trace: Trace, reads: list[SourceOutcome]) -> SourceOutcome:
    """Several reads of one call as one outcome: their records in order, totals summed, any truncation kept."""
    return trace.outcome("ok", [record for read in reads for record in read.records],
                         sum(read.total or 0 for read in reads), truncated=any(read.truncated for read in reads),
                         dropped=sum(read.dropped for read in reads))


def _listed(trace: Trace, works: list[dict[str, Any]], key: str, at_least: int, settings: SourceSettings,
            doubts: list[str]) -> SourceOutcome:
    """The works the seeds list under `key`, named by at least `at_least` seeds, most seeds first, then by id;
    its total is how many distinct works they are, None when a seed lists more than a run follows."""
    counts: Counter[str] = Counter()
    truncated = False
    for work in works:
        listed = _seed_list(work, key, doubts)
        if len(listed) > MAX_IDS_PER_SEED:
            truncated = True
            trace.warnings.append(f"{_openalex_id(work)} lists {len(listed)} {key.replace('_', ' ')}; "
                                  f"only the first {MAX_IDS_PER_SEED} were followed")
        counts.update(listed[:MAX_IDS_PER_SEED])
    ranked = [work_id for work_id, count in sorted(counts.items(), key=lambda item: (-item[1], _id_order(item[0])))
              if count >= at_least]
    if len(ranked) > settings.max_records:
        truncated = True
        trace.warnings.append(f"the seeds lead to {len(ranked)} works; only the first {settings.max_records} were "
                              "read (raise SITEGEN_MAX_RECORDS)")
    outcome = _by_ids(trace, ranked[:settings.max_records], settings)
    if ranked and not outcome.records:  # a work OpenAlex merged away may be missing; every one is no answer
        doubts.append(f"OpenAlex sent none of the {counted(len(ranked[:settings.max_records]), 'work')} the seeds list under "
                      f"{key.replace('_', ' ')}: taken for a fault, not an answer")
    place = {work_id: index for index, work_id in enumerate(ranked)}
    records = sorted(outcome.records, key=lambda record: place.get(record.custom.openalex or "", len(place)))
    return outcome.model_copy(update={"records": records, "total": None if truncated else len(ranked),
                                      "truncated": truncated or outcome.truncated})


def _citing_all(trace: Trace, openalex_ids: list[str], settings: SourceSettings) -> SourceOutcome:
    """The works citing any of these works, once each: those citing most of them first, then newest first, then by id.

    The seeds share one run's `max_records` (as the works the other modes read do): each seed is read with what
    is left of it, and seeds past it are not read (the outcome is then truncated). Its total is how many distinct
    works cite the seeds when every seed's citing works were read whole, else None."""
    reads, found, left = [], set(), []
    for openalex_id in openalex_ids:
        budget = settings.max_records - len(found)
        if budget <= 0:
            left.append(openalex_id)
            continue
        reads.append(_citing(trace, openalex_id, settings.model_copy(update={"max_records": budget})))
        found.update(record.id for record in reads[-1].records)
    if left:
        trace.warnings.append(f"the works citing {', '.join(left)} were not read: the seeds before them led to "
                              f"{settings.max_records} works, as many as a run reads (raise SITEGEN_MAX_RECORDS)")
    outcome = _combined(trace, reads)
    counts = Counter(record.id for record in outcome.records)
    distinct = list({record.id: record for record in outcome.records}.values())
    distinct.sort(key=lambda record: (-counts[record.id], _newest_first(record), _id_order(record.custom.openalex)))
    whole = not left and all(read.total == len(read.records) and not read.truncated and not read.dropped
                             for read in reads)
    return outcome.model_copy(update={"records": distinct, "total": len(distinct) if whole else None,
                                      "truncated": outcome.truncated or bool(left)})


def _openalex_id(work: dict[str, Any]) -> str:
    if openalex_id := normalise_openalex(work.get("id")):
        return openalex_id
    raise Malformed("a seed work came without its OpenAlex id")


def _newest_first(record: Record) -> tuple[int, ...]:
    parts = record.issued.date_parts[0] if record.issued and record.issued.date_parts else []
    return (0, *(-part for part in parts), *[0] * (3 - len(parts))) if parts else (1,)


def _id_order(openalex_id: str | None) -> tuple[int, str]:
    """OpenAlex ids in numeric order (W99 before W100); anything else after them."""
    digits = (openalex_id or "")[1:]
    return (int(digits), "") if digits.isdigit() else (1 << 62, openalex_id or "")


def _lookup_path(identifier: str) -> str:
    if openalex := normalise_openalex(identifier):
        return openalex
    if doi := normalise_doi(identifier):
        return f"doi:{quote(doi, safe=PATH_SAFE)}"
    if pmid := normalise_pmid(identifier):
        return f"pmid:{pmid}"
    raise Unsupported(f"{identifier[:80]!r} is not an OpenAlex id, DOI or PMID")


def _is_the_work(record: Record, identifier: str) -> bool:
    asked = {name: normalise(identifier) for name, normalise in
             (("openalex", normalise_openalex), ("doi", normalise_doi), ("pmid", normalise_pmid))}
    have = record.identifiers()
    return any(value and have.get(name) == value for name, value in asked.items())


def _paged(trace: Trace, query: dict[str, str], settings: SourceSettings) -> SourceOutcome:
    pager = Pager(PROVIDER.name, WORKS, settings.max_records, settings.openalex_per_page, trace=trace)
    cursor: Any = "*"
    wholes: list[str] = []  # the works read on their own so far
    while pager.proceed(cursor):
        total, results, cursor = pager.within_the_cap(partial(_page, trace, query, cursor=cursor))
        pager.add(total, [_with_every_author(trace, work, wholes) for work in results], work_to_record, dict)
    return pager.outcome(trace)


def _page(trace: Trace, query: dict[str, str], per_page: int, cursor: str) -> tuple[Any, list[Any], Any]:
    """One page of a list: (count, works, next_cursor); the pager checks the count and the cursor."""
    response = trace.get(f"{BASE}/works", sorted(query.items()) + [("per_page", str(per_page)), ("cursor", cursor)])
    if response.status == 404:
        raise SourceError("unavailable", "OpenAlex answered 404 for a list request")
    check_status(response, PROVIDER.name, KEY_VARIABLE)
    page = parse_json(response)
    if not isinstance(page, dict) or "error" in page:
        raise Malformed(f"expected a list of works, got {said(page)}")
    meta, results = page.get("meta"), page.get("results")
    if not isinstance(meta, dict) or not isinstance(results, list):
        raise Malformed("the response has no meta or no results list")
    return meta.get("count"), results, meta.get("next_cursor")


WHOLE_WORKS = 200  # works read on their own for their whole author list, at most, in one read of a list


def _with_every_author(trace: Trace, work: Any, wholes: list[str]) -> Any:
    """A work of a list as OpenAlex holds it whole: a list cuts a work's authors at 100 (`is_authors_truncated`),
    and the work read on its own has them all (`wholes`: those read so far, up to WHOLE_WORKS). When it cannot
    be read, the list's work, with a warning."""
    if not isinstance(work, dict) or work.get("is_authors_truncated") is not True:
        return work
    openalex_id = normalise_openalex(work.get("id"))
    whole, why = None, "it was not found on its own"
    if len(wholes) >= WHOLE_WORKS:
        why = f"{WHOLE_WORKS} works were read on their own already"
    else:
        wholes.append(openalex_id or "")
        try:
            whole = _work(trace, openalex_id) if openalex_id else None
        except SnapshotDamaged:  # recorded, then deleted or edited: never read as a run that did not ask
            raise
        except SnapshotMissing:  # a run recorded before works were read whole, replayed: as it ran then
            return work
        except (SourceError, Malformed) as exc:
            why = str(exc)
    if whole is None:
        trace.warnings.append(f"OpenAlex lists only the first {len(as_list(work.get('authorships')))} authors of "
                              f"{openalex_id or 'a work'}, and the whole list could not be read ({why})")
        return work
    return whole[0]
