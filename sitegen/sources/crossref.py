"""Crossref: /works search with cursor deep paging, exact DOI lookups, and Crossref
work items turned into normalised CSL-JSON records.

API: https://api.crossref.org (REST, JSON envelope {status, message-type, message}).
`mailto` puts requests in the polite pool; a Metadata Plus token, when there is
one, travels in the `Crossref-Plus-API-Token` header.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import quote

from sitegen.records.copyright import without_copyright_statement
from sitegen.records.ids import normalise_doi
from sitegen.records.markup import JATS_TITLE, labelled_sections, plain_text
from sitegen.records.model import (
    TITLE_LIMIT,
    CslDate,
    CslName,
    NoticeOf,
    Record,
    RecordMeta,
    Reinstatement,
    StatedVersion,
    Update,
    retraction_lifted,
    stated_versions_once,
    web_address,
    with_lifted,
)
from sitegen.records.providers import label
from sitegen.sources.base import (
    CROSSREF_CSL_TYPES,
    Items,
    Malformed,
    Pager,
    Trace,
    as_dict,
    as_list,
    check_status,
    date_from_parts,
    lookup_outcome,
    no_record,
    not_found,
    own_id,
    parse_json,
    require_title,
    run_call,
    said,
    text_value,
    to_record,
)
from sitegen.sources.http import Fetcher, Provider, Response, Secrets, SourceError
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings

BASE = "https://api.crossref.org"
PROVIDER = Provider(label("crossref"), frozenset({"api.crossref.org"}), min_interval=0.1)
NOT_FOUND = b"Resource not found"  # how Crossref answers a DOI it does not know: a 404 in plain text
MAX_ROWS = 1000  # Crossref's documented maximum for `rows`
# What a list asks for per page: a work with its reference list is 20-60 kB (real PLOS items average 24 kB),
# so a page of Crossref's maximum comes near the 25 MB a response may hold (`Provider.max_bytes`), and a
# page over it is refused: the search would be incomplete on every run. 200 works stay near 5-12 MB.
PAGE_ROWS = 200
WORKS = Items("work", "no DOI",
              lambda item: own_id(item.get("DOI"), normalise_doi) if isinstance(item, dict) else None, "DOI")


# CSL types whose container is a book (a proceedings volume too). Crossref lists the series such a book belongs to
# before the book itself (["Lecture Notes in Computer Science", "Cryptographic Hardware and Embedded Systems – CHES
# 2017"]), so the book, the work's container, is the last title.
IN_A_BOOK = frozenset({"chapter", "paper-conference"})

DATE_KEYS = ("published-print", "published-online", "issued")  # most to least specific about the version of record
RETRACTION = "retraction"

def _first(values: Any) -> Any:
    return values[0] if isinstance(values, list) and values else None


def _texts(value: Any) -> list[Any]:
    """A field Crossref sends as a list of strings (`title`, `subtitle`, `container-title`), as a list: one string
    sent bare is the list of it (a bare title was read as none, and the work refused for "a title that is not
    text"); anything but a string or a list, an empty one."""
    return [value] if isinstance(value, str) else as_list(value)


def _text_list(value: Any) -> bool:
    """Whether a field Crossref sends as a list of strings holds only text (`_texts`)."""
    return isinstance(value, (str, list)) and all(isinstance(text, str) for text in _texts(value))


def _container(item: dict[str, Any], csl_type: str) -> str | None:
    titles = [title for value in _texts(item.get("container-title")) if (title := plain_text(value))]
    if not titles:
        return None
    return titles[-1] if csl_type in IN_A_BOOK else titles[0]


def _issued(item: dict[str, Any]) -> CslDate | None:
    """The date of the version of record, as precisely as Crossref gives it: a print date of a year alone
    ([[2017]]) is the online date when that is the same date more precisely ([[2017, 8, 25]])."""
    # Crossref sends [[null]] for an unknown date; only leading whole numbers count.
    dates = [date.date_parts[0] for key in DATE_KEYS
             if (date := date_from_parts(as_list(_first(as_dict(item.get(key)).get("date-parts")))))]
    if not dates:
        return None
    chosen = dates[0]
    for other in dates[1:]:
        if len(other) > len(chosen) and other[:len(chosen)] == chosen:
            chosen = other
    return CslDate(date_parts=[chosen])


def _names(item: dict[str, Any]) -> list[CslName]:
    names = []
    for author in map(as_dict, as_list(item.get("author"))):
        family, given = text_value(author.get("family")), text_value(author.get("given"))
        if family:
            names.append(CslName(family=family, given=given, suffix=text_value(author.get("suffix"))))
        elif literal := (text_value(author.get("name")) or given):  # organisations, or a single-name person
            names.append(CslName(literal=literal))
    return names


# Crossref licences by the version of the work they govern, most to least telling of who may read it: the version of
# record, a version the publisher did not name, the accepted manuscript. A "tdm" licence governs only text and data
# mining (Elsevier and Wiley send theirs for closed articles too): it is no licence to read the work.
LICENCE_VERSIONS = ("vor", "unspecified", "am")
# Links for machines: publishers' text-mining interfaces (api.elsevier.com, api.wiley.com) answer only a subscriber's
# token, so such a link is no full text for a reader.
TEXT_MINING = "text-mining"


def _licence(item: dict[str, Any]) -> str | None:
    by_version: dict[str, str] = {}
    for entry in map(as_dict, as_list(item.get("license"))):
        version = text_value(entry.get("content-version")) or "unspecified"
        if url := web_address(text_value(entry.get("URL"))):
            by_version.setdefault(version, url)
    return next((by_version[version] for version in LICENCE_VERSIONS if version in by_version), None)


def _fulltext_url(item: dict[str, Any]) -> str | None:
    return _first([url for entry in map(as_dict, as_list(item.get("link")))
                   if entry.get("intended-application") != TEXT_MINING
                   and (url := web_address(text_value(entry.get("URL"))))])


# Crossref update types (https://www.crossref.org/documentation/crossmark/) as the notices sitegen reports;
# others (new_version, addendum, ...) say nothing of a work's standing.
UPDATE_KINDS = {
    "retraction": "retraction", "partial_retraction": "retraction", "withdrawal": "retraction",
    "removal": "retraction", "correction": "correction", "erratum": "correction", "corrigendum": "correction",
    "expression_of_concern": "expression-of-concern",
}
# A notice undoing an earlier retraction (Retraction Watch's data, which Crossref adds to `updated-by`, lists one
# after the retraction it undoes): the retraction no longer stands, though both stay in Crossref's lists.
REINSTATEMENT = "reinstatement"
NOTICE_KINDS = ("retraction", "correction", "expression-of-concern")  # UPDATE_KINDS's values, gravest first


@dataclass(frozen=True)
class _Notice:
    kind: str  # an UPDATE_KINDS value, or REINSTATEMENT
    doi: str | None  # the notice's DOI; None for a publisher marking the work itself
    date: tuple[int, ...]  # when Crossref says it was issued, as far as it says; () when it does not


def _kind(update_type: Any) -> str | None:
    name = str(update_type).lower().replace("-", "_")
    return REINSTATEMENT if name == REINSTATEMENT else UPDATE_KINDS.get(name)


def _update_date(update: dict[str, Any]) -> tuple[int, ...]:
    date = date_from_parts(as_list(_first(as_dict(update.get("updated")).get("date-parts"))))
    return tuple(date.date_parts[0]) if date else ()


def _retracts_another(item: dict[str, Any], doi: str | None) -> bool:
    """Whether the item is a retraction notice: its `update-to` retracts another work."""
    return any(_kind(update.get("type")) == RETRACTION and (target := normalise_doi(update.get("DOI")))
               and target != doi for update in map(as_dict, as_list(item.get("update-to"))))


def notice_of(item: dict[str, Any], doi: str | None) -> list[NoticeOf]:
    """The works the item is a notice about: those its `update-to` names, other than itself, with a notice's kind
    (a reinstatement too: met beside its work in deduplication, it lifts the retraction it undoes), and the notice's
    date (its `updated`) where Crossref gives one: a reinstatement of the work dated no earlier
    lifts a retraction (`retraction_lifted`)."""
    found: dict[tuple[str, str], tuple[int, ...]] = {}
    for update in map(as_dict, as_list(item.get("update-to"))):
        if (kind := _kind(update.get("type"))) in (*NOTICE_KINDS, REINSTATEMENT) \
                and (target := normalise_doi(update.get("DOI"))) and target != doi:
            found[kind, target] = found.get((kind, target)) or _update_date(update)
    return [NoticeOf(kind=kind, doi=target, **({"date": list(date)} if date else {}))
            for (kind, target), date in sorted(found.items())]


def notice_types(works: list[NoticeOf]) -> list[str]:
    """The publication types that say the item is a notice about another work (`notice_of`): one per kind
    ("retraction-notice", "correction-notice", "expression-of-concern-notice", "reinstatement-notice"). A
    correction notice may carry the very title of the article it corrects: its type keeps the two apart."""
    kinds = {work.kind for work in works}
    return [f"{kind}-notice" for kind in (*NOTICE_KINDS, REINSTATEMENT) if kind in kinds]


def _notices_about(item: dict[str, Any]) -> list[_Notice]:
    """The notices Crossref lists against the work, each once: its `updated-by` entries, an `update-to` naming
    the work itself (a publisher marking the work in place), and for a work that is no retraction notice the
    `relation` entries Crossref mirrors updates into (a real PLOS record shows relation.correction beside
    updated-by correction). A relation asserted by the work itself ("asserted-by": "subject") is the work being
    the notice, never a notice against it."""
    doi = normalise_doi(item.get("DOI"))
    found: dict[tuple[str, str | None], _Notice] = {}

    def add(kind: str | None, notice: str | None, date: tuple[int, ...] = ()) -> None:
        notice = None if notice == doi else notice
        if kind:
            found.setdefault((kind, notice), _Notice(kind, notice, date))
    for update in map(as_dict, as_list(item.get("updated-by"))):
        add(_kind(update.get("type")), normalise_doi(update.get("DOI")), _update_date(update))
    for update in map(as_dict, as_list(item.get("update-to"))):
        if normalise_doi(update.get("DOI")) == doi:
            add(_kind(update.get("type")), doi, _update_date(update))
    if not _retracts_another(item, doi):
        for name, related in as_dict(item.get("relation")).items():
            for entry in map(as_dict, as_list(related)):
                if entry.get("asserted-by") != "subject":
                    add(_kind(name), normalise_doi(entry.get("id")))
    return list(found.values())


def _lifted(retraction: _Notice, reinstatements: list[_Notice]) -> bool:
    """Whether a reinstatement undoes the retraction: the rule deduplication applies too (`retraction_lifted`)."""
    return retraction_lifted(retraction.date, [reinstatement.date for reinstatement in reinstatements])


def reinstatements_of(item: dict[str, Any]) -> list[Reinstatement]:
    """The reinstatements Crossref lists against the work, each with its DOI and date where it gives them, and the
    date of the retraction it lifted: kept on the record, so that a retraction notice met beside it is known for one
    they lifted, and a page says when the work was retracted and reinstated."""
    notices = _notices_about(item)
    return with_lifted([Reinstatement(**({"doi": notice.doi} if notice.doi else {}),
                                      **({"date": list(notice.date)} if notice.date else {}))
                        for notice in notices if notice.kind == REINSTATEMENT],
                       [_update(notice) for notice in notices if notice.kind == RETRACTION])


def standing_notices(item: dict[str, Any]) -> list[_Notice]:
    """The notices against the work that still stand: every one but a retraction a later reinstatement undid (the
    same notice mirrored under `relation`, without a date, goes with it)."""
    notices = _notices_about(item)
    reinstatements = [notice for notice in notices if notice.kind == REINSTATEMENT]
    undone = {notice.doi for notice in notices if notice.kind == RETRACTION and _lifted(notice, reinstatements)}
    return [notice for notice in notices if notice.kind != REINSTATEMENT
            and not (notice.kind == RETRACTION and notice.doi in undone)]


def retraction_status(item: dict[str, Any]) -> tuple[bool, bool]:
    """(is retracted, is a retraction notice) for a Crossref work item.

    A retracted work is `updated-by` a retraction (Crossref adds Retraction Watch's data there too) that no later
    reinstatement undid. A notice carries `update-to` a retraction of another work; when `update-to` names the
    work itself, the publisher has marked the work retracted in place.
    """
    is_notice = _retracts_another(item, normalise_doi(item.get("DOI")))
    return any(notice.kind == RETRACTION for notice in standing_notices(item)), is_notice


def updates(item: dict[str, Any]) -> list[Update]:
    """The notices against a work that still stand (`standing_notices`), each with its date where Crossref gives
    one: a reinstatement notice met beside the work in deduplication lifts a retraction dated no later."""
    return [_update(notice) for notice in standing_notices(item)]


def _update(notice: _Notice) -> Update:
    return Update(kind=notice.kind, doi=notice.doi, **({"date": list(notice.date)} if notice.date else {}))


# Crossref's relations between a preprint and its journal version, each naming the other (asserted by either side).
VERSION_RELATIONS = ("has-preprint", "is-preprint-of")


def stated_versions(item: dict[str, Any], doi: str) -> list[StatedVersion]:
    """The other versions of the study Crossref relates the work to: its preprint (`has-preprint`) or its journal
    version (`is-preprint-of`), by DOI."""
    relation = as_dict(item.get("relation"))
    return stated_versions_once((StatedVersion(doi=other) for name in VERSION_RELATIONS
                                 for entry in map(as_dict, as_list(relation.get(name)))
                                 if str(entry.get("id-type")).lower() == "doi" and (other := normalise_doi(entry.get("id")))),
                                {"doi": doi})


def with_subtitle(title: str, subtitle: str | None) -> str:
    """A title with the subtitle Crossref keeps apart ("X" and "a systematic review"), as other indexes
    and the work itself give it: "X: a systematic review". A subtitle that would make the title longer than a record
    holds is a deposit's error, left out: the work keeps its title (it was refused as having an invalid title)."""
    if not subtitle or subtitle.casefold() in title.casefold():
        return title
    whole = f"{title} {subtitle}" if title[-1] in ":;.?!-\u2013\u2014" else f"{title}: {subtitle}"
    return whole if len(whole) <= TITLE_LIMIT else title


def work_to_record(item: dict[str, Any]) -> Record | None:
    """A Record for one Crossref work item, None when it has no DOI; Unreadable without a title."""
    doi = normalise_doi(item.get("DOI"))
    if doi is None:
        return None
    # The title, else the one in the work's original language: a work deposited with that alone has a title all the
    # same (it was left out as having none). Each a list of strings, usually of one.
    fields = (item.get("title"), item.get("original-title"))
    title = require_title(next(filter(None, (plain_text(_first(_texts(field))) for field in fields)), None), doi,
                          malformed=any(field is not None and not _text_list(field) for field in fields))
    title = with_subtitle(title, plain_text(_first(_texts(item.get("subtitle")))))
    work_type = text_value(item.get("type"))
    retracted, is_notice = retraction_status(item)
    about = notice_of(item, doi)
    publication_types = ([work_type] if work_type else []) + notice_types(about)
    csl_type = CROSSREF_CSL_TYPES.get(work_type or "", "article")
    return Record(
        id=doi,
        type=csl_type,
        title=title,
        author=_names(item),
        container_title=_container(item, csl_type),
        issued=_issued(item),
        volume=text_value(item.get("volume")),
        issue=text_value(item.get("issue")),
        # A journal that numbers its articles (Scientific Reports, Nature Communications, eLife) deposits the number
        # as `article-number` and no page: where PubMed and OpenAlex give it as the page, so does the record.
        page=text_value(item.get("page")) or text_value(item.get("article-number")),
        DOI=doi,
        URL=f"https://doi.org/{doi}",
        abstract=without_copyright_statement(plain_text(labelled_sections(item.get("abstract"), JATS_TITLE))),
        custom=RecordMeta(
            sources=["crossref"],
            publication_types=publication_types,
            # Licence and full-text link both come from this one record, never mixed with another source's.
            license=_licence(item),
            fulltext_url=_fulltext_url(item),
            retracted=retracted,
            updates=[] if is_notice else updates(item),
            notice_of=about,
            reinstatements=[] if is_notice else reinstatements_of(item),
            stated_versions=stated_versions(item, doi),
        ),
    )


# --------------------------------------------------------------------------- requests


def secrets(settings: SourceSettings) -> Secrets:
    params, headers = {}, {}
    if settings.contact_email:
        params["mailto"] = settings.contact_email
    if settings.crossref_plus_token:
        headers["Crossref-Plus-API-Token"] = f"Bearer {settings.crossref_plus_token}"
    return Secrets(params, headers)


def search(fetcher: Fetcher, settings: SourceSettings, query: dict[str, str], since: int | None = None,
           rows: int = PAGE_ROWS) -> SourceOutcome:
    """All works matching `query` (e.g. query.bibliographic, filter), read with deep-paging cursors."""
    params = dict(query)
    if since is not None:
        params["filter"] = ",".join(p for p in (params.get("filter"), f"from-pub-date:{since}-01-01") if p)
    # Never ask for more per page than Crossref allows or than will be kept.
    size = min(rows, MAX_ROWS, settings.max_records)
    return run_call(Trace("crossref", fetcher, PROVIDER, secrets(settings)),
                    lambda trace: _paged(trace, params, size, settings))


def lookup(fetcher: Fetcher, settings: SourceSettings, doi: str) -> SourceOutcome:
    """One work by DOI. Not found is an empty `ok`, not an outage; another work in its place is kept apart
    (`lookup_outcome`)."""
    asked = normalise_doi(doi)
    if asked is None:
        raise ValueError(f"{doi!r} is not a DOI")
    # DOIs may hold '#', '?', ';' or spaces: escape all but the '/' separators.
    url = f"{BASE}/works/{quote(asked, safe='/')}"

    def call(trace: Trace) -> SourceOutcome:
        response = trace.get(url, [])
        check_status(response, PROVIDER.name)
        if not_found(response, PROVIDER.name, NOT_FOUND):
            return trace.outcome("ok", [], 0)
        message = _envelope_message(response, "work")
        record = to_record(message, work_to_record, trace.warnings, "the work")
        if record is None:
            raise no_record(WORKS, message, "the work")
        # Crossref answers an alias DOI with the work under its primary DOI: another record, for a caller to judge
        return lookup_outcome(trace, asked, [record], lambda found: found.DOI == asked)
    return run_call(Trace("crossref", fetcher, PROVIDER, secrets(settings)), call)


def agency(fetcher: Fetcher, settings: SourceSettings, doi: str) -> tuple[str | None, SourceOutcome]:
    """The registration agency of a DOI (`crossref`, `datacite`, `medra`, ...) as Crossref's agency lookup
    names it, with the lookup's outcome. A DOI another agency registered is one Crossref cannot know, so its
    "not found" there says nothing; no agency at all (404) says no agency knows the DOI. An outage is never
    either."""
    asked = normalise_doi(doi)
    if asked is None:
        raise ValueError(f"{doi!r} is not a DOI")
    found: list[str] = []

    def call(trace: Trace) -> SourceOutcome:
        response = trace.get(f"{BASE}/works/{quote(asked, safe='/')}/agency", [])
        check_status(response, PROVIDER.name)
        if not_found(response, PROVIDER.name, NOT_FOUND):
            return trace.outcome("ok", [], 0)
        message = _envelope_message(response, "work-agency")
        name = text_value(as_dict(message.get("agency")).get("id"))
        if not name:
            raise Malformed("the agency message names no agency")
        found.append(name.lower())
        return trace.outcome("ok")
    outcome = run_call(Trace("crossref", fetcher, PROVIDER, secrets(settings)), call)
    return (found[0] if found else None), outcome


def _envelope_message(response: Response, kind: str) -> dict[str, Any]:
    """The `message` of a Crossref envelope, which must say status "ok" and carry a `kind` message."""
    envelope = parse_json(response)
    if not isinstance(envelope, dict) or envelope.get("status") != "ok":
        status = envelope.get("status") if isinstance(envelope, dict) else None
        raise Malformed(f"the response status is {said(repr(status))}, not 'ok': {said(envelope)}")
    message = envelope.get("message")
    if envelope.get("message-type") != kind or not isinstance(message, dict):
        raise Malformed(f"expected a {kind} message, got {said(repr(envelope.get('message-type')))}")
    return message


def _paged(trace: Trace, query: dict[str, str], size: int, settings: SourceSettings) -> SourceOutcome:
    # Crossref often returns the same next-cursor for every page, so unlike OpenAlex a repeated
    # cursor does not mean the end: a page with nothing new, or everything read, does.
    pager = Pager(PROVIDER.name, WORKS, settings.max_records, size, cursors_repeat=True, trace=trace)
    cursor: Any = "*"
    while pager.proceed(cursor):
        total, items, cursor = pager.within_the_cap(partial(_page, trace, query, cursor=cursor))
        pager.add(total, items, work_to_record, dict)
    return pager.outcome(trace)


def _page(trace: Trace, query: dict[str, str], rows: int, cursor: str) -> tuple[Any, list[Any], Any]:
    """One page of a list: (total-results, items, next-cursor); the pager checks the total and the cursor."""
    response = trace.get(f"{BASE}/works", sorted(query.items()) + [("rows", str(rows)), ("cursor", cursor)])
    if response.status == 404:
        raise SourceError("unavailable", "Crossref answered 404 for a list request")
    check_status(response, PROVIDER.name)
    message = _envelope_message(response, "work-list")
    items = message.get("items")
    if not isinstance(items, list):
        raise Malformed("the response has no items list")
    return message.get("total-results"), items, message.get("next-cursor")
