"""Records from reference-file entries: what `sitegen import` files in a review's records.

An entry (`sitegen.records.entry.Entry`, in the benchmark's field names) becomes a CSL-JSON
`Record`: identifiers normalised (`sitegen.records.ids`), authors split into family and given
names (`sitegen.records.names`), the BibTeX entry type read as a CSL type, the date as `issued` (the
full date the reader gives, else the year and month).
A reference with no published identifier (DOI, PMID, PMCID, OpenAlex or arXiv id) gets a content
key (`ref`, see `sitegen.records.ids.content_ref`), so the same reference imported again is the
same record by identity.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import get_args

from pydantic import TypeAdapter, ValidationError

from sitegen.records.copyright import without_abstract_heading, without_copyright_statement
from sitegen.records.entry import Entry
from sitegen.records.ids import (
    NAMESPACE_LABELS,
    arxiv_of_doi,
    content_ref,
    normalise_arxiv,
    normalise_doi,
    normalise_openalex,
    normalise_pmcid,
    normalise_pmid,
    record_id,
)
from sitegen.records.markup import HTML_HEADING, JATS_TITLE, labelled_sections, plain_text
from sitegen.records.model import (
    CONTROL_CHARACTER,
    MONTH_NAMES,
    PUBLICATION_YEARS,
    TITLE_LIMIT,
    CslName,
    NoticeDate,
    NoticeOf,
    Record,
    RecordMeta,
    Reinstatement,
    StatedVersion,
    Update,
    calendar_date,
    overlong_abstract,
    publication_year,
    stated_versions_once,
    visible_text,
    web_address,
    web_address_problem,
)
from sitegen.records.names import NAMES_LEFT_OUT, author_names, split_name
from sitegen.records.pages import as_range
from sitegen.records.preprints import is_preprint
from sitegen.records.providers import Source
from sitegen.references.fields import GLUED_RIS_TAG
from sitegen.text import counted

# BibTeX entry types (the readers give RIS's TY as these too) as CSL types. An entry of no type or of another
# (a CSV row, most often) is a journal article when it names a journal, else CSL's "article" (a preprint, a
# working paper: sitegen's own type for a work not published in a journal).
CSL_TYPES = {
    "article": "article-journal", "inproceedings": "paper-conference", "conference": "paper-conference",
    "proceedings": "book", "book": "book", "inbook": "chapter", "incollection": "chapter",
    "phdthesis": "thesis", "mastersthesis": "thesis", "thesis": "thesis", "techreport": "report",
    "report": "report", "unpublished": "manuscript", "online": "webpage", "dataset": "dataset", "misc": "article",
    "software": "software", "patent": "patent", "standard": "standard", "inreference": "entry-encyclopedia",
    "movie": "motion_picture", "jurisdiction": "legal_case",  # biblatex's
    # Scopus's "Document Type" and Web of Science's document types, as exports write them
    "conference paper": "paper-conference", "conference review": "paper-conference", "book chapter": "chapter",
    "review": "article-journal", "letter": "article-journal", "editorial": "article-journal",
    "note": "article-journal", "erratum": "article-journal", "short survey": "article-journal",
    # Zotero's item types, as its CSV writes them (lower-cased here)
    "journalarticle": "article-journal", "booksection": "chapter", "conferencepaper": "paper-conference",
    "magazinearticle": "article-magazine", "newspaperarticle": "article-newspaper", "preprint": "article",
    "webpage": "webpage", "computerprogram": "software",
    # OpenAlex's and Crossref's work types, as OpenAlex's CSV writes them (its provider reads them alike)
    "journal-article": "article-journal", "book-chapter": "chapter", "monograph": "book", "dissertation": "thesis",
    "proceedings-article": "paper-conference", "posted-content": "article",
    "journal article": "article-journal",  # The Lens's
}
# Every item type CSL names (CSL-JSON's schema, version 1.0), and "preprint" as some files write a preprint's. A
# file that names a record's CSL type gives it that type, whatever it is: sitegen's records CSV in its `type` column,
# CSL-JSON (Zotero's a newspaper article's, Crossref's a peer review's "review").
CSL_TYPE_NAMES = frozenset({
    "article", "article-journal", "article-magazine", "article-newspaper", "bill", "book", "broadcast", "chapter",
    "classic", "collection", "dataset", "document", "entry", "entry-dictionary", "entry-encyclopedia", "event",
    "figure", "graphic", "hearing", "interview", "legal_case", "legislation", "manuscript", "map", "motion_picture",
    "musical_score", "pamphlet", "paper-conference", "patent", "performance", "periodical", "personal_communication",
    "post", "post-weblog", "regulation", "report", "review", "review-book", "software", "song", "speech", "standard",
    "thesis", "treaty", "webpage", "preprint"})
# The CSL types CSL names by a plain word that another CSV's `type` column may use in another sense (a database's
# "Review" of a review article, "Document", "Event"): such a column is read as the record's CSL type only when it
# names one of the others (see `references.table`).
CSL_TYPES_OF_OTHER_SENSES = frozenset({
    "bill", "broadcast", "classic", "collection", "document", "event", "figure", "graphic", "hearing", "interview",
    "legislation", "map", "pamphlet", "performance", "periodical", "regulation", "review", "song", "speech",
    "treaty"})
# Entry types that say what the record is, kept as its publication type (a notice is told by it).
PUBLICATION_TYPES = {"review", "letter", "editorial", "erratum", "note", "retracted", "conference paper",
                     "conference review", "short survey"}
_BRACE = re.compile("[{}]")
_BRACE_OR_AND = re.compile(r"[{}]|(?<!\s)\s+and\s+")  # from a run's start only: see AUTHORS_AND
_ISO_DATE = re.compile(r"(\d{4})(?:-(0[1-9]|1[0-2])(?:-(0[1-9]|[12]\d|3[01]))?)?(?!\d)")
_MARKUP = re.compile(r"<[A-Za-z/!?]|&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);")  # a tag or an entity
_FIRST_PAGE = re.compile(r"^\s*([^-\u2010-\u2015\s]+)")


def entry_record(entry: Entry, source: Source | None = None, warnings: list[str] | None = None) -> Record:
    """The record an entry describes, with `source` (a registry provider, when the file is its export) among
    its sources. ValueError, saying why, when the entry cannot be a record (it has no title). What was left
    out (an identifier that is not one, characters no text may hold) is appended to `warnings`."""
    notes = warnings if warnings is not None else []
    # Markup is turned into text as providers' is (Scopus writes CO<inf>2</inf>, databases <i>…</i>): a record
    # holds none.
    title = plain_text(_text(entry.get("title"), "title", notes)) or ""
    if not visible_text(title):
        raise ValueError("the entry has no title")
    if len(title) > TITLE_LIMIT:
        raise ValueError(f"the title is {len(title)} characters long, more than a title can be ({TITLE_LIMIT})")
    identifiers = _identifiers(entry, notes)
    authors = [_author(name) for name in author_names(_authors(_text(entry.get("author"), "author", notes)))
               if _a_name(name)]
    year = publication_year(entry.get("year"))
    if year is None and entry.get("year").strip():
        notes.append(f"year {entry.get('year').strip()!r} is not a year from {PUBLICATION_YEARS[0]} to "
                     f"{PUBLICATION_YEARS[-1]}; left out")
    date = _date(entry.get("date"), year) or ([year] if year else [])
    if len(date) == 1 and (month := month_of(entry.get("month"))):  # the year alone, and the month apart
        date.append(month)
    container = plain_text(_text(entry.get("journal"), "journal", notes)) or ""
    # As the file says them: a volume or issue "Forthcoming" is kept, as providers' records keep it (so sitegen's
    # own exports come back with it); matching reads only an issue's number, so it never tells two records apart.
    volume, issue = (_numbering(_text(entry.written(field), field, notes), field, notes) for field in ("volume", "number"))
    page = as_range(_text(entry.get("pages"), "pages", notes))
    written_type = entry.get("type").lower()
    csl_type = written_type if written_type in CSL_TYPE_NAMES else CSL_TYPES.get(entry.get("ENTRYTYPE").lower()) or (
        "article-journal" if container else "article")
    url, abstract = _address(entry, "url", notes), _abstract(entry, notes)
    if not identifiers:
        # Made of what the record holds (as `identity.record_ref` makes it of a record), so that the record
        # exported and imported again has the same content key, and so the same id.
        identifiers["ref"] = content_ref(title, year, [name.display() for name in authors], container, volume, issue,
                                         page, abstract or "", csl_type, url or "")
    kind = entry.get("ENTRYTYPE").strip().lower()
    return Record.model_validate({
        "id": record_id(identifiers),
        "type": csl_type,
        "title": title,
        "author": authors,
        "container-title": container or None,
        "issued": {"date-parts": [date]} if date else None,
        "volume": volume or None,
        "issue": issue or None,
        "page": page or None,
        "DOI": identifiers.get("doi"), "PMID": identifiers.get("pmid"), "PMCID": identifiers.get("pmcid"),
        "URL": url,
        "abstract": abstract,
        "custom": RecordMeta(openalex=identifiers.get("openalex"), arxiv=identifiers.get("arxiv"),
                             ref=identifiers.get("ref"), sources=[source] if source else [],
                             # as a file lists them ("; "), else the entry's kind when it says what a record is
                             publication_types=[listed for listed in entry.get("publication_types").split("; ")
                                                if listed] or ([kind] if kind in PUBLICATION_TYPES else []),
                             # Scopus's document type "Retracted" says it too
                             retracted=entry.get("retracted").strip().lower() in ("yes", "true") or kind == "retracted",
                             open_access={"yes": True, "true": True, "no": False, "false": False}.get(
                                 entry.get("open_access").strip().lower()),
                             license=_text(entry.get("license"), "license", notes) or None,
                             fulltext_url=_address(entry, "fulltext_url", notes),
                             updates=_notices(entry, notes),
                             notice_of=_works_noticed(entry, notes),
                             reinstatements=_reinstatements(entry, notes),
                             stated_versions=_stated_versions(entry, identifiers, notes),
                             ).model_dump(),
    })


NOTICE_KINDS = get_args(Update.model_fields["kind"].annotation)
NOTICE_OF_KINDS = get_args(NoticeOf.model_fields["kind"].annotation)  # a reinstatement notice's too


def _listed_notices(entry: Entry, field: str, notes: list[str],
                    kinds: tuple[str, ...] = NOTICE_KINDS) -> list[tuple[str, dict]]:
    """The notices (kind and object) a JSON list in `field` gives (see `references.fields`); one that is no notice
    sitegen knows, or not one at all, is left out with a note, as an id that is none."""
    written = entry.get(field)
    listed = _json_list(written)
    if listed is None:
        notes.append(f"{field} {written[:80]!r} is not a list of notices; left out")
        return []
    found = []
    for notice in listed:
        kind = notice.get("kind") if isinstance(notice, dict) else None
        if kind not in kinds:
            notes.append(f"{field}: {kind if kind is not None else notice!r} is not a notice sitegen knows "
                         f"({', '.join(kinds)}); left out")
            continue
        found.append((kind, notice))
    return found


def _json_list(written: str) -> list | None:
    """The JSON list a field holds ([] for an empty field), or None when it holds anything else."""
    try:
        listed = json.loads(written) if written else []
    except json.JSONDecodeError:
        return None
    return listed if isinstance(listed, list) else None


def _listed_objects(entry: Entry, field: str, what: str, notes: list[str]) -> list[dict]:
    """The JSON objects a field lists ([] for an empty field); [] with a note when it holds anything else."""
    written = entry.get(field)
    listed = _json_list(written)
    if listed is None or not all(isinstance(item, dict) for item in listed):
        notes.append(f"{field} {written[:80]!r} is not a list of {what}; left out")
        return []
    return listed


def _notices(entry: Entry, notes: list[str]) -> list[Update]:
    """The notices the entry lists against the work, their ids normalised (see `_listed_notices`)."""
    found: list[Update] = []
    for kind, notice in _listed_notices(entry, "updates", notes):
        ids = _notice_ids(notice, f"updates: the {kind}'s {{label}}", notes)
        update = Update(kind=kind, **ids, **_notice_date(notice, f"updates: the {kind}'s", notes))
        if update not in found:
            found.append(update)
    return found


def _notice_ids(notice: dict, which: str, notes: list[str]) -> dict[str, str | None]:
    """The DOI and PMID a listed notice gives, normalised: one that is none is left out with a note, which `which`
    begins (its "{label}" the identifier's: DOI, PMID). A PMID written as a JSON number is read as its digits, as a
    record's own is (`references.csl`)."""
    ids: dict[str, str | None] = {}
    for namespace, normalise in (("doi", normalise_doi), ("pmid", normalise_pmid)):
        given = notice.get(namespace)
        ids[namespace] = normalise(given) if given is not None else None
        if given is not None and ids[namespace] is None:
            label = NAMESPACE_LABELS[namespace]
            notes.append(f"{which.format(label=label)} {given!r} is not a valid {label}; left out")
    return ids


def _works_noticed(entry: Entry, notes: list[str]) -> list[NoticeOf]:
    """For a notice, the works the entry says it is about, each by its DOI or PMID or both, normalised: an
    identifier that is none is left out with a note, and a work left without one too (see `_listed_notices`)."""
    found: list[NoticeOf] = []
    for kind, work in _listed_notices(entry, "notice_of", notes, NOTICE_OF_KINDS):
        ids = {namespace: value for namespace, value in _notice_ids(work, f"notice_of: the {kind} notice's work",
                                                                    notes).items() if value}
        if not ids:
            if work.get("doi") is None and work.get("pmid") is None:
                notes.append(f"notice_of: the {kind} notice names no work (no DOI or PMID); left out")
            continue
        noticed = NoticeOf(kind=kind, **ids, **_notice_date(work, f"notice_of: the {kind} notice's", notes))
        if noticed not in found:
            found.append(noticed)
    return found


_NOTICE_DATE = TypeAdapter(NoticeDate)  # built once: a TypeAdapter compiles its validator when made


def _notice_date(notice: dict, which: str, notes: list[str]) -> dict[str, list[int]]:
    """The notice's `date` as a keyword for its model ({} without one, or with one that is no date)."""
    date = _given_date(notice.get("date"), which, notes)
    return {"date": date} if date is not None else {}


def _given_date(given: object, which: str, notes: list[str]) -> list[int] | None:
    """A notice's date as given (None without one); one that is no date is left out with a note: the notice is
    kept, its order against a reinstatement then unknown (the retraction stands)."""
    if given is None:
        return None
    try:
        return _NOTICE_DATE.validate_python(given)
    except ValidationError:
        notes.append(f"{which} date {given!r} is not a date ([year, month, day]); left out")
        return None


def _reinstatements(entry: Entry, notes: list[str]) -> list[Reinstatement]:
    """The reinstatements the entry lists against the work (a JSON list, see `references.fields`), each with its
    DOI and PMID normalised (`_notice_ids`) and its date: an identifier that is none is left out, with a note."""
    listed = _listed_objects(entry, "reinstatements", "reinstatements", notes)
    found: list[Reinstatement] = []
    for item in listed:
        ids = {namespace: value for namespace, value in _notice_ids(item, "reinstatements: the {label}", notes).items()
               if value}
        retracted_on = _given_date(item.get("retracted_on"), "reinstatements: a lifted retraction's", notes)
        reinstatement = Reinstatement(**ids, **_notice_date(item, "reinstatements: a", notes),
                                      **({"retracted_on": retracted_on} if retracted_on is not None else {}))
        if reinstatement not in found:
            found.append(reinstatement)
    return found


def _stated_versions(entry: Entry, own: dict[str, str], notes: list[str]) -> list[StatedVersion]:
    """The other versions of the study the entry says its source states (a JSON list, see `references.fields`), each
    by its DOI or PMID or both, normalised (`_notice_ids`): an identifier that is none is left out with a note, and a
    version left without one too; each version once, none the record itself (`stated_versions_once`)."""
    listed = _listed_objects(entry, "stated_versions", "versions", notes)
    found: list[StatedVersion] = []
    for item in listed:
        ids = {namespace: value for namespace, value in
               _notice_ids(item, "stated_versions: the {label}", notes).items() if value}
        if ids:
            found.append(StatedVersion(**ids))
        elif item.get("doi") is None and item.get("pmid") is None:
            notes.append("stated_versions: a version names no DOI or PMID; left out")
    return stated_versions_once(found, own)


def _address(entry: Entry, field: str, notes: list[str]) -> str | None:
    """A web address the entry gives in `field`; any other text there (javascript:, a bare www. name) is left
    out with a note: a record links only to web addresses."""
    url = _text(_unglued(entry.get(field)), field, notes)
    if len(several := url.split()) > 1 and all(web_address(part) for part in several):
        # several addresses in one field, each after a space (EPPI-Reviewer's UR: the database's record and the
        # DOI's address): the first is the entry's. Read whole, none was a web address and the field was lost.
        url = several[0]
    address = web_address(url)  # as a browser reads it: a host outside ASCII in its xn-- form (see web_address)
    if url and address is None:
        notes.append(f"{field} {url[:80]!r} {web_address_problem(url)}; left out")
    return address


def _unglued(value: str | None) -> str | None:
    """An identifier's or address's value without the RIS tag a CSV export kept glued to its end (see
    GLUED_RIS_TAG): "10.1002/ar.25299     LK  - https://..." is the DOI 10.1002/ar.25299."""
    return GLUED_RIS_TAG.split(value, 1)[0] if value else value


def _abstract(entry: Entry, notes: list[str]) -> str | None:
    """The abstract, without the publisher's copyright statement that closes it and the "Abstract" heading that
    opens it, as a provider's is read (`records.copyright`): Scopus, Embase and Web of Science export the statement
    in the abstract, PubMed's MEDLINE file apart (its CI tag), and Wiley's RIS export the heading as its first
    word, so one work imported from two databases has one abstract. One longer than a record
    holds (a whole file pasted into one field, a mistake the user should see) is left out with a note, as a
    provider's is (`records.model.overlong_abstract`)."""
    abstract = _text(entry.get("abstract"), "abstract", notes)
    if _NOTHING_WRITTEN.fullmatch(abstract):
        abstract = ""
    if _MARKUP.search(abstract):  # as a title's; an abstract without markup keeps its line breaks
        # Its section headings (Europe PMC's <h4>, Crossref's <jats:title>, which their exports keep) label the parts
        # they head ("Background: ..."), as those providers' readers label them
        abstract = plain_text(labelled_sections(labelled_sections(abstract, HTML_HEADING), JATS_TITLE)) or ""
    abstract = without_copyright_statement(without_abstract_heading(abstract)) or ""
    if note := overlong_abstract(abstract, "the entry"):
        notes.append(note)
        return None
    return abstract or None


# Identifiers an entry gives only as its address (a PubMed export's UR line, a tool's url column, Europe PMC's
# BibTeX url): PubMed's and PubMed Central's pages, new and old, Europe PMC's of either (europepmc.org/articles/PMC…,
# /article/PMC/PMC…, /abstract/MED/…, /article/MED/…), and arXiv's abstract page.
ADDRESSES = (
    ("pmid", re.compile(r"https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed|"
                        r"europepmc\.org/(?:abstract|article)/MED)/(\d{1,9})/?(?:[?#].*)?", re.IGNORECASE), normalise_pmid),
    ("pmcid", re.compile(r"https?://(?:www\.)?(?:(?:pmc\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pmc)/articles|"
                         r"europepmc\.org/(?:articles|article/PMC))/(PMC\d{1,9})/?(?:[?#].*)?", re.IGNORECASE),
     normalise_pmcid),
    ("arxiv", re.compile(r"(https?://(?:www\.|export\.)?arxiv\.org/abs/[^?#\s]+)(?:[?#].*)?", re.IGNORECASE),
     normalise_arxiv),
)


def ids_at(addresses: Iterable[str]) -> dict[str, str]:
    """The PMID and PMCID that `addresses` give as their pages' addresses (see ADDRESSES), each only when they
    give one: a PubMed page and another's PubMed page name no PMID. For a format that lists a record's addresses
    (Zotero's RIS writes each page it knows of a work in L2, after its own address in UR)."""
    found: dict[str, set[str]] = {}
    for namespace, address, normalise in ADDRESSES:
        if namespace in ("pmid", "pmcid"):
            for written in addresses:
                if (match := address.match(written.strip())) and (value := normalise(match[1])):
                    found.setdefault(namespace, set()).add(value)
    return {namespace: next(iter(values)) for namespace, values in found.items() if len(values) == 1}


def _identifiers(entry: Entry, notes: list[str]) -> dict[str, str]:
    """The entry's published identifiers, normalised; a value that is none is left out with a note. A DOI
    written only as the entry's address (doi.org or a publisher's /doi/ page) counts as its DOI, and an arXiv
    id written in the DOI field ("arXiv:2101.00001") as its arXiv id."""
    found: dict[str, str] = {}
    for namespace, normalise in (("doi", normalise_doi), ("pmid", normalise_pmid), ("pmcid", normalise_pmcid),
                                 ("openalex", normalise_openalex), ("arxiv", normalise_arxiv)):
        written = _unglued(entry.get(namespace))
        if written and (value := normalise(written)):
            found[namespace] = value
        elif namespace == "doi" and (arxiv := normalise_arxiv(written)):
            found["arxiv"] = arxiv
        elif written:
            notes.append(f"{namespace} {written!r} is not a valid {NAMESPACE_LABELS[namespace]}; left out")
    url = _unglued(entry.get("url")) or ""
    if "doi" not in found and (doi := normalise_doi(url)):
        found["doi"] = doi
    for namespace, address, normalise in ADDRESSES:
        if namespace not in found and (written := address.match(url.strip())) and (value := normalise(written[1])):
            found[namespace] = value
    if "arxiv" not in found and (arxiv := arxiv_of_doi(found.get("doi"))):
        found["arxiv"] = arxiv
    if "arxiv" in found and "doi" in found and not is_preprint(found["doi"]):
        # A journal article's arXiv id (an ADS or INSPIRE export's eprint) names its preprint, another record of the
        # study, as the arXiv source says of its journal DOI: taken as this one's, it merged the preprint into the
        # journal article (its type and year then the preprint's), where the two are linked as versions.
        notes.append(f"arXiv id {found.pop('arxiv')} names the preprint of the journal article {found['doi']}, "
                     "another record of the study; left out, so that the two are linked as versions, never merged")
    return found


# What exports write where they have no value: Scopus's "[No abstract available]" and "[No author name available]"
# hold no abstract or author. ("[No title available]" stays a record's title: a record needs one, and the words
# say what its source holds.)
_NOTHING_WRITTEN = re.compile(r"\[\s*no\b[^\]]*\bavailable\s*\]", re.IGNORECASE)


def _text(value: str, field: str, notes: list[str]) -> str:
    """A field's text with the characters no record text may hold (control characters) replaced by spaces."""
    cleaned, count = CONTROL_CHARACTER.subn(" ", value)
    if count:
        notes.append(f"{field}: {counted(count, 'control character')} replaced by spaces")
    return cleaned.strip()


# Embase's list of its authors' addresses, each after the authors it is theirs as Embase names them, family name and
# initials ("(Boisvert C.) Brigham Young University, Provo, UT, United States(Wedel M., mathew.wedel@gmail.com)
# Western University ...", "(Fawcett M.J.; Lautenschlager S., ...) School of ..."): Covidence's RIS of Embase records
# writes it as the issue (IS). Only that form, an address with its commas after the names: a volume or issue is text
# as any other (a supplement's name, "(2)", "(Part A.) Abstracts"). The address may hold a name in brackets before its
# first comma ("(Jalil N.-E.) Museum of Marrakech (Museum of Natural History of Marrakesh, Univ. Cadi Ayyad), ...").
EMBASE_ADDRESSES = re.compile(r"\(\s*[^\W\d_][\w'’-]*(?:\s[\w'’-]+)*?\s[A-Z]\.(?:-?[A-Z]\.)*\s*(?:\)|[,;][^()]*\))"
                              r"\s*\w[^(),]*(?:\([^()]*\)[^(),]*)*,")


# An issue's number with its month after it, as Embase writes the issues of journals that publish all year ("IS  - 12
# December" for PLoS ONE 18(12), in Embase.com's, EndNote's, RefWorks' and Covidence's exports of its records).
ISSUE_MONTH = re.compile(rf"(\d+)\s+(?:{'|'.join(MONTH_NAMES)})", re.IGNORECASE)


def _numbering(value: str, field: str, notes: list[str]) -> str:
    """A volume's or issue's text, or "" with a note when it is the authors' addresses (see EMBASE_ADDRESSES):
    kept, the site showed them as the issue. An issue with its month after it is the issue's number (see
    ISSUE_MONTH): the same issue as every other source's "12"."""
    if EMBASE_ADDRESSES.match(value):
        notes.append(f"{field} {value[:60]!r} is the authors' addresses, not a volume or issue; left out")
        return ""
    if field == "number" and (month := ISSUE_MONTH.fullmatch(value)):
        return month[1]
    return value


def _a_name(written: str) -> bool:
    """Whether an author list's item names someone: not empty, not "et al.", and holding a letter (not ",")."""
    name = written.strip()
    return bool(name) and not (NAMES_LEFT_OUT.fullmatch(name) or _NOTHING_WRITTEN.fullmatch(name)) \
        and any(char.isalpha() for char in name)


def _authors(text: str) -> list[str]:
    """BibTeX's author list split at " and " outside braces: "{Bill and Melinda Gates Foundation}" is one name.
    A brace that no other closes or opens groups nothing: one in a name ("Smith {Jr", which every export writes as
    it is or escaped) held every name after it in one."""
    unpaired = _unpaired_braces(text)
    names, depth, start = [], 0, 0
    for found in _BRACE_OR_AND.finditer(text):
        token = found.group()
        if token in "{}":
            depth += 0 if found.start() in unpaired else 1 if token == "{" else -1
        elif depth == 0:
            names.append(text[start:found.start()])
            start = found.end()
    return [*names, text[start:]]


def _unpaired_braces(text: str) -> set[int]:
    """The places of the braces in `text` that pair with none: a "}" with no "{" open before it, a "{" never closed."""
    if "{" not in text and "}" not in text:  # most author lists: one scan each tells
        return set()
    opened: list[int] = []
    unpaired: set[int] = set()
    for found in _BRACE.finditer(text):
        if found.group() == "{":
            opened.append(found.start())
        elif opened:
            opened.pop()
        else:
            unpaired.add(found.start())
    return unpaired | set(opened)


def _date(value: str, year: int | None) -> list[int]:
    """An ISO date's parts ("2008-07-16" as [2008, 7, 16]) when its year is the entry's, else []."""
    found = _ISO_DATE.match(value)
    parts = calendar_date([int(part) for part in found.groups() if part]) if found else []
    return parts if parts and parts[0] == year else []


def month_of(value: str) -> int | None:
    """A month written as a number (1-12) or an English name or abbreviation ("Jul", "july"), else None; a day
    or a second month after it is left (Web of Science writes "MAR 1" and "MAR-APR")."""
    text = re.split(r"[\s/-]", value.strip().lower().rstrip("."), maxsplit=1)[0].rstrip(".")
    if text.isdigit():
        return int(text) if 1 <= int(text) <= 12 else None
    return next((number for number, name in enumerate(MONTH_NAMES, start=1) if name.startswith(text)), None) \
        if len(text) >= 3 else None


# An author's e-mail address in brackets after the name, as BIOSIS and Zoological Record write the corresponding
# author's ("Stillman, Andrew N. (andrew.stillman@uconn.edu)"): no part of the name.
# Tried from the start of a run of spaces only, as AUTHORS_AND.
_EMAIL_AFTER_NAME = re.compile(r"(?<!\s)\s*\(\s*[^()\s@]+@[^()\s@]+\s*\)")


def _author(name: str) -> CslName:
    name = _EMAIL_AFTER_NAME.sub("", name).strip()
    if name.startswith("{") and name.endswith("}"):  # BibTeX's literal: an organisation, never split
        return CslName(literal=name[1:-1].strip() or name)
    return split_name(name)
