"""The review-folder contract: one pydantic model per file format.

These models are the single definition of every file sitegen reads or writes;
`docs/review-folder.md` explains them for people and `sitegen schema` exports
them as JSON Schema for editors. Unknown keys are errors (`extra="forbid"`), so
a misspelt field is reported instead of silently ignored.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic import Strict as StrictMode
from pydantic.dataclasses import dataclass
from pydantic_core import InitErrorDetails, PydanticCustomError

from sitegen.records.citations import SOURCE as CITATION_SOURCE
from sitegen.records.citations import parse_citation_query
from sitegen.records.ids import NORMALISERS, WRITTEN_ID_NAMESPACES, record_id_problem, written_record_id
from sitegen.records.ids import record_id as id_from_identifiers
from sitegen.records.model import (
    SMALL_VALUE,
    HandCopied,
    HandWritten,
    Printable,
    Strict,
    Visible,
    WebAddress,
    check_record_id,
    check_record_ids,
    hand_written_markdown,
    verbatim_query_problem,
)
from sitegen.records.providers import PROVIDERS, Source
from sitegen.review.parsing import worded_pattern
from sitegen.text import counted

REVIEW_SCHEMA_VERSION = 1  # review.yaml
SEARCH_SCHEMA_VERSION = "1.0"  # searches/<monitor_id>.json, as in the saved-search specification

STAGES = ("title-abstract", "full-text")
Stage = Literal["title-abstract", "full-text"]
DECISIONS = ("include", "exclude", "maybe")

# Its digits are ASCII's: fromisoformat reads other scripts' digits in a fraction of a second too (and dropped them).
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$", re.ASCII)
# Digits of a second's fraction past the sixth that are not all zeros: a datetime keeps microseconds, and
# fromisoformat drops the rest without a word (.9999999999 became .999999, another instant than the one given).
_BEYOND_MICROSECONDS = re.compile(r"\.\d{6}\d*[1-9]")
SLUG = r"^[a-z0-9][a-z0-9-]{0,79}$"

# Free text a reviewer writes by hand (review.yaml, protocol.md's front matter, evidence, notes): no invisible format
# character (`hand_written`). What sitegen itself keeps of it later (a version's title) is only `Printable`: a file
# written before the rule stays readable.
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000), HandWritten, Printable]
ShortText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300), HandWritten, Printable]
Question = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000), HandWritten,
                     Printable]
NOTE_LIMIT = 2000  # the most characters a row's note holds
Note = Annotated[str, StringConstraints(max_length=NOTE_LIMIT), HandWritten, Printable]  # a row's note: may be empty
# A review's title and question are inline Markdown (pages show "*Mus musculus*" in italics): a character reference in
# them ("&#x202E;") is shown as the character it names, which is held to the rule of the text typed.
MarkdownLine = AfterValidator(hand_written_markdown)
Slug = Annotated[str, worded_pattern(SLUG, "a name of lower-case letters, digits and hyphens (reviewer-a), at most 80")]
Sha256 = Annotated[str, worded_pattern(r"^[0-9a-f]{64}$", "a SHA-256 digest: 64 digits and letters a-f")]
ReasonCode = Annotated[str, worded_pattern(  # an exclusion reason's code
    r"^[a-z0-9][a-z0-9-]{0,39}$", "a code of lower-case letters, digits and hyphens (wrong-population), at most 40")]


def parse_timestamp(value: str) -> datetime:
    """An RFC 3339 timestamp as an aware datetime; ValueError for anything else (e.g. 2024-02-31)."""
    if not RFC3339.match(value):
        raise ValueError(f"{value!r} is not an RFC 3339 timestamp such as 2026-06-01T00:00:00Z")
    if _BEYOND_MICROSECONDS.search(value):
        raise ValueError(f"{value!r} gives a fraction of a second finer than a microsecond, which sitegen cannot keep: "
                         "write at most 6 digits after the seconds' point")
    try:
        moment = datetime.fromisoformat(value)
        moment.astimezone(UTC)  # every time is compared in UTC: one its offset moves past year 1 or 9999 cannot be
    except ValueError:
        raise ValueError(f"{value!r} is not a real date and time") from None
    except OverflowError:
        raise ValueError(f"{value!r} is outside the years 1 to 9999 in UTC") from None
    return moment


def utc_text(moment: datetime) -> str:
    """A moment as the review's files write it: RFC 3339 in UTC (Z), fractions of a second kept."""
    moment = moment.astimezone(UTC)
    fraction = f".{moment.microsecond:06d}".rstrip("0") if moment.microsecond else ""
    return f"{moment.date().isoformat()}T{moment:%H:%M:%S}{fraction}Z"  # isoformat: year 224 is "0224"


def utc_day(timestamp: str) -> str:
    """The UTC day of a timestamp (YYYY-MM-DD), as pages show when something happened: its text's first ten
    characters are another day for a time written with an offset (2024-12-30T03:00:00+05:30 is the 29th)."""
    try:
        return parse_timestamp(timestamp).astimezone(UTC).date().isoformat()
    except ValueError:
        return timestamp[:10]


def utc_minute(timestamp: str) -> str:
    """A timestamp as a reader reads it on a page, to the minute in UTC ("2024-01-30 14:05 UTC"); the exact
    time stays in the page's <time datetime> and in the downloads."""
    try:
        moment = parse_timestamp(timestamp).astimezone(UTC)
    except ValueError:
        return timestamp
    return f"{moment.date().isoformat()} {moment:%H:%M} UTC"


def _check_timestamp(value: str) -> str:
    parse_timestamp(value)
    return value


# --------------------------------------------------------------------------- review.yaml


class Author(Strict):
    name: ShortText
    orcid: Annotated[str, worded_pattern(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$", "an ORCID iD (0000-0002-1825-0097)")] | None = None
    affiliation: ShortText | None = None


class Theme(Strict):
    accent_color: Annotated[str, worded_pattern(r"^#[0-9a-fA-F]{6}$", "a colour written #1f5f8b")] = "#1f5f8b"


# An absolute http(s) address of a site: host (and port), then a path of RFC 3986 path characters only.
CLEAN_URL = re.compile(r"https?://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?"
                       r"(?:/(?:[A-Za-z0-9._~!$&()*+,;=:@/-]|%[0-9A-Fa-f]{2})*)?")


class SiteSettings(Strict):
    base_url: str | None = Field(
        default=None,
        description="Public address of the published site, e.g. https://user.github.io/repo/ for a "
        "GitHub Pages project site. Pages link to each other relatively; this is used for "
        "canonical links and citations.",
    )
    theme: Theme = Theme()
    search: bool = Field(
        default=True,
        description="Build a static site-search index with pagefind (pip install 'pagefind[extended]').",
    )

    @field_validator("base_url")
    @classmethod
    def _absolute_https(cls, value: str | None) -> str | None:
        if value is None:
            return None
        # Only the characters a URL may hold unencoded (RFC 3986): no control character, space, quote, angle
        # bracket, backslash or non-ASCII letter can reach a page's canonical link, feed or citation.
        if not CLEAN_URL.fullmatch(value):
            raise ValueError("base_url must be a clean absolute http(s) address such as https://user.github.io/repo/ "
                             "(no spaces, quotes, angle brackets, backslashes, control or non-ASCII characters: "
                             "percent-encode them; no query or fragment)")
        return value if value.endswith("/") else value + "/"


class ScreeningSettings(Strict):
    """How many reviewers must decide each record independently before their decision counts."""

    title_abstract_reviewers: int = Field(default=2, ge=1, le=10)
    full_text_reviewers: int = Field(default=2, ge=1, le=10)


class ReviewConfig(Strict):
    """review.yaml: what the review is and how its site looks."""

    schema_version: int
    title: Annotated[ShortText, MarkdownLine]
    question: Annotated[Question, MarkdownLine]
    authors: list[Author] = Field(min_length=1)
    licence: Annotated[str, worded_pattern(r"^[A-Za-z0-9.+-]{1,64}$", "an SPDX licence id (CC-BY-4.0)")] = Field(
        description="SPDX licence id for the review's content, e.g. CC-BY-4.0"
    )
    sources: list[Source] = Field(default_factory=list)
    screening: ScreeningSettings = ScreeningSettings()
    site: SiteSettings = SiteSettings()


# --------------------------------------------------------------------------- protocol.md


class ExclusionReason(Strict):
    code: ReasonCode
    label: ShortText


class WatchTerm(Strict):
    term: ShortText
    weight: float = Field(default=1.0, gt=0, le=1.0)


class Eligibility(Strict):
    in_scope: list[ShortText] = Field(default_factory=list)
    out_of_scope: list[ShortText] = Field(default_factory=list)
    required_minimums: list[ShortText] = Field(default_factory=list)


class RelevanceTerms(Strict):
    """Words that anchor relevance scoring to the eligibility criteria, so no judgement is a model's.

    The eligibility prose is for people; these terms are what the scorer looks
    for in titles and abstracts. Scores only order a screening batch: reviewers decide.
    """

    in_scope_terms: list[ShortText] = Field(default_factory=list)
    out_of_scope_terms: list[ShortText] = Field(default_factory=list)
    # Publication types (as sources name them, e.g. "editorial") that fail a required minimum
    # such as "primary research", and those that are in scope but borderline (e.g. "review").
    excluded_publication_types: list[ShortText] = Field(default_factory=list)
    borderline_publication_types: list[ShortText] = Field(default_factory=lambda: ["review"])


class ProtocolMeta(Strict):
    """The YAML front matter of protocol.md; the Markdown body follows it."""

    version: int = Field(ge=1)
    eligibility: Eligibility
    exclusion_reasons: list[ExclusionReason] = Field(default_factory=list)
    watchlist: list[WatchTerm] = Field(default_factory=list)
    relevance: RelevanceTerms = RelevanceTerms()
    # The relative recall a saved search must reach against the known-relevant studies (`sitegen monitor
    # validate`): below it the check warns and exits 7. 0.9 by default, a common bar for a search strategy.
    validation_recall: float = Field(default=0.9, ge=0, le=1)

    @field_validator("exclusion_reasons")
    @classmethod
    def _unique_codes(cls, reasons: list[ExclusionReason]) -> list[ExclusionReason]:
        codes = [reason.code for reason in reasons]
        duplicated = sorted({code for code in codes if codes.count(code) > 1})
        if duplicated:
            raise ValueError(f"exclusion reason code(s) defined twice: {', '.join(duplicated)}")
        return reasons


# --------------------------------------------------------------------------- searches/<id>.json


class LedgerAnchor(Strict):
    """An event a file depends on, by its place and hash: if the ledger loses it, `check` says so."""

    seq: int = Field(ge=1)
    hash: Sha256


# A saved strategy's query, in characters (sitegen.sources.query.MAX_LENGTH is the same limit).
QUERY_MAX_LENGTH = 4096
# A recorded request holds the query percent-encoded: up to 12 characters for each of its characters (4 UTF-8
# bytes, each %XX), plus what compiling sitegen's grammar adds (a field tag, quotes and brackets for each of its
# at most 200 tokens, percent-encoded too: under 120 characters each) and the address with its other parameters.
# Derived from the query's cap, so every strategy `check` accepts can be recorded.
REQUEST_MAX_LENGTH = 12 * QUERY_MAX_LENGTH + 200 * 120 + 4000


class Strategy(Strict):
    source: Source
    # "database": `query` searches the source; "citations": it follows the citation graph from seed works
    # (PRISMA 2020's citation searching, an "other method"), written `MODE: SEED, ...` (sitegen.records.citations).
    method: Literal["database", "citations"] = Field(default="database", exclude_if=lambda value: value == "database")
    query: Annotated[str, StringConstraints(min_length=1, max_length=QUERY_MAX_LENGTH), Printable, Visible]
    endpoint: str | None = None
    label: Annotated[str, StringConstraints(pattern=SLUG)] | None = None
    # "native": the query is the provider's own syntax, sent verbatim (the default, as in the
    # saved-search specification); "sitegen": it is sitegen's Boolean grammar, compiled per provider.
    syntax: Literal["native", "sitegen"] = Field(default="native", exclude_if=lambda value: value == "native")

    @model_validator(mode="after")
    def _known_endpoint(self) -> Strategy:
        # Kept for compatibility with the saved-search format, but sitegen calls only each
        # provider's own fixed address: a strategy can name it, never point elsewhere.
        endpoint = PROVIDERS[self.source].search_endpoint
        if self.endpoint is not None and self.endpoint != endpoint:
            raise ValueError(f"endpoint {self.endpoint!r} is not {self.source}'s search address "
                             f"({endpoint}); sitegen calls no other")
        return self

    @field_validator("query")
    @classmethod
    def _citation_query(cls, query: str, info: ValidationInfo) -> str:
        # Checked on the field (method and source come before it), so `check` points at the query's line.
        if info.data.get("method") == "citations":
            if info.data.get("source") != CITATION_SOURCE:
                raise ValueError(f"a citation search follows OpenAlex's citation graph: its source must be "
                                 f"{CITATION_SOURCE!r}")
            parse_citation_query(query)  # CitationQueryError is a ValueError: reported with the file and line
        return query

    @model_validator(mode="before")
    @classmethod
    def _shown_as_sent(cls, data: Any) -> Any:
        # A native query goes to the provider as written: an invisible character in it would be searched for, so it
        # is refused as written, before `Printable` drops a direction control left open. (In sitegen's grammar each
        # is read as nothing, or refused naming its position: `check` and `monitor add` compile the query.)
        if (isinstance(data, dict) and isinstance(query := data.get("query"), str)
                and data.get("method", "database") == "database" and data.get("syntax", "native") == "native"
                and (problem := verbatim_query_problem(query))):
            raise ValueError(f"query, character {problem[0]}: {problem[1]}")
        return data

    @model_validator(mode="after")
    def _citation_grammar_only(self) -> Strategy:
        if self.method == "citations" and self.syntax != "native":
            raise ValueError("a citation search is written in its own grammar ('MODE: SEED, ...'), not sitegen's "
                             "query grammar: leave out syntax")
        return self


class SavedSearch(Strict):
    """A saved search: verbatim strategies and the ids already reported (seen_ids only grows)."""

    schema_version: str
    monitor_id: Slug
    strategies: list[Strategy] = Field(min_length=1)
    seen_ids: list[str] = Field(default_factory=list)
    last_run: str = ""
    run_count: int = Field(default=0, ge=0)
    # The last ledger event the latest run appended: truncating the ledger cannot hide that run.
    last_event: LedgerAnchor | None = None

    @field_validator("seen_ids")
    @classmethod
    def _valid_unique_ids(cls, ids: list[str]) -> list[str]:
        if len(set(ids)) == len(ids):  # as it should be: each is checked at once
            return check_record_ids(ids)
        seen: dict[str, int] = {}  # the first of a bad id and a repeat is said
        for index, value in enumerate(ids):
            check_record_id(value)
            if value in seen:  # at the repeat, which is the item to remove, naming the first (`parsing.validate`)
                raise ValidationError.from_exception_data(cls.__name__, [InitErrorDetails(
                    type=PydanticCustomError("repeated", "{value} appears twice in seen_ids",
                                             {"value": repr(value), "first": seen[value]}),
                    loc=(index,), input=value)])
            seen[value] = index
        return ids

    @field_validator("last_run")
    @classmethod
    def _rfc3339_or_empty(cls, value: str) -> str:
        return _check_timestamp(value) if value else value


# --------------------------------------------------------------------------- ledger.jsonl

EventType = Literal["retrieval", "import", "protocol_lock", "amendment", "screening", "verification", "phase",
                    "version", "validation", "retirement", "reinstatement"]


class LedgerEvent(Strict):
    """One provenance event. `prev` is the hash of the previous event, `hash` of this one."""

    seq: int = Field(ge=1)
    type: EventType
    ts: str
    payload: dict[str, Any]
    prev: Sha256
    hash: Sha256

    @field_validator("ts")
    @classmethod
    def _rfc3339(cls, value: str) -> str:
        return _check_timestamp(value)


class RetrievalPayload(Strict):
    """A saved-search strategy was executed (or records were imported from a named source)."""

    monitor_id: Slug
    source: Source
    query: str
    label: str | None = None
    record_ids: list[str]
    total: int | None = None  # the provider's own count of matches; a citation search's: its distinct works
    snapshot_hashes: list[Sha256] = Field(default_factory=list)
    complete: bool = True
    note: str | None = None
    # PRISMA 2020's route: "other" for a citation search (counted under "Citation searching", identification via
    # other methods). Left out of the event when "database", so events written before it existed hash the same.
    method: Literal["database", "other"] = Field(default="database", exclude_if=lambda value: value == "database")
    # The SHA-256 of the run's manifest (runs/<time>-<monitor_id>.json), named by every retrieval event of
    # the run: the chained ledger then vouches for the file, so an edit shows. Absent for runs recorded
    # before sitegen wrote manifests.
    manifest: Sha256 | None = None

    @field_validator("record_ids")
    @classmethod
    def _valid_ids(cls, ids: list[str]) -> list[str]:
        return check_record_ids(ids)


class ImportedFile(Strict):
    """The reference file an import read (`sitegen import`): which file, exactly, and what became of its entries."""

    # The file's name, no folder, as messages show it (`errors.shown_path`): 255 bytes at most, each escaped in
    # at most four characters.
    name: Annotated[str, StringConstraints(min_length=1, max_length=1100), Printable]
    sha256: Sha256  # of the file's bytes as read
    format: Annotated[str, worded_pattern(r"^[a-z0-9-]{1,40}$", "a reader's name (ris, bibtex, csv)")]  # the reader used
    entries: int = Field(ge=0)  # entries in the file, read or skipped
    skipped: int = Field(ge=0)  # entries malformed or unable to be records, skipped (--skip-bad) and reported
    new: int = Field(ge=0)  # distinct records new to the review
    already: int = Field(ge=0)  # distinct records the review already held
    # Database (as the export names it per entry, else the import's source) -> the record id of each entry read
    # from it, in file order, repeats kept: PRISMA counts an identification per entry, so a record a file holds
    # twice is a duplicate removed, and a file exported from several databases counts under each. Absent from
    # imports recorded before sitegen kept it (each record then counts once, under the import's source).
    entry_ids: dict[Annotated[str, StringConstraints(min_length=1, max_length=200), Printable], list[str]] | None = None

    @field_validator("entry_ids")
    @classmethod
    def _valid_ids(cls, found: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
        return None if found is None else {source: check_record_ids(ids) for source, ids in found.items()}


class ImportPayload(Strict):
    """Records taken from an existing collection (a dataset, an export) rather than a saved search."""

    # A provider of the registry, or the name of the database or other source an export came from
    # ("Embase", "Citation searching"), as PRISMA's identification boxes show it.
    source: Annotated[str, StringConstraints(min_length=1, max_length=200), Printable]
    # PRISMA 2020 counts records from databases apart from those found by other methods
    # (citation searching, websites, experts).
    method: Literal["database", "other"] = "database"
    description: Annotated[str, StringConstraints(min_length=1, max_length=2000), Printable]
    record_ids: list[str]
    file: ImportedFile | None = None  # absent from imports recorded before `sitegen import` existed
    # The saved search whose seen_ids the import extended with these records (`sitegen import --seen`),
    # so that `check` finds them there later (absent from imports recorded before it was kept).
    seen: Slug | None = None

    @field_validator("record_ids")
    @classmethod
    def _valid_ids(cls, ids: list[str]) -> list[str]:
        return check_record_ids(ids)

    @model_validator(mode="after")
    def _counts_agree(self) -> ImportPayload:
        # PRISMA counts an import's identifications from `file.entry_ids` and screening takes `record_ids`: one
        # naming a record the other does not would leave it counted and never screened, or the reverse.
        if self.file is not None:  # as `sitegen import` writes one (events written before it are read as they are)
            if len(set(self.record_ids)) != len(self.record_ids):
                raise ValueError("record_ids names a record twice")
            if self.file.new + self.file.already != len(self.record_ids):
                raise ValueError(f"file.new ({self.file.new}) and file.already ({self.file.already}) do not add up to "
                                 f"the {len(self.record_ids)} record_ids")
            if self.file.entry_ids is not None and \
                    {i for ids in self.file.entry_ids.values() for i in ids} != set(self.record_ids):
                raise ValueError("file.entry_ids and record_ids name different records")
        return self


class ProtocolLockPayload(Strict):
    """The protocol was locked: its version, its hash, and the text itself for the trail."""

    version: int = Field(ge=1)
    sha256: Sha256
    # Why (the command's --reason, checked as it is given: `living.protocol`), shown on the site. Read as written:
    # an earlier sitegen recorded any text, on a ledger that can never be rewritten.
    reason: str | None = None
    text: str | None = None  # protocol.md as locked, so later amendments can show what changed
    diff: str | None = None  # for an amendment: unified diff from the previous version


class AmendmentPayload(ProtocolLockPayload):
    """A locked protocol was amended (PRISMA 2020 item 24b): the new version, its reason and the diff."""


class BatchPayload(Strict):
    """A new screening batch: the records a run reported as never seen before."""

    batch: int = Field(ge=1)
    monitor_id: Slug
    protocol_version: int = Field(ge=1)
    record_ids: list[str]
    # Absent from batches recorded before sitegen kept it: every record of theirs counts as new.
    matched: list[str] = Field(default_factory=list, exclude_if=lambda ids: not ids, description=(
        "records of the batch sitegen matched by metadata to a record the review had (a `same` row of "
        "duplicates.csv): in the batch, so that they are screened if a reviewer says `different`, but no new work"))

    @field_validator("record_ids", "matched")
    @classmethod
    def _valid_ids(cls, ids: list[str]) -> list[str]:
        return check_record_ids(ids)

    @property
    def new_ids(self) -> list[str]:
        """The records of the batch that are new works."""
        matched = set(self.matched)
        return [record_id for record_id in self.record_ids if record_id not in matched]


PHASES = ("protocol", "searching", "screening", "extraction", "synthesis", "published")
Phase = Literal["protocol", "searching", "screening", "extraction", "synthesis", "published"]


class PhasePayload(Strict):
    """The review moved to its next phase; `checks` are the gate predicates it passed."""

    from_phase: Phase
    to_phase: Phase
    checks: list[str]


VERIFICATION_AXES = ("identity", "status", "faithfulness")
VerificationAxis = Literal["identity", "status", "faithfulness"]
# The verdicts each axis can reach. Never a boolean: "inconclusive" and "insufficient-passage" are open
# items for a human (a source errored, only one index holds the paper, no open full text), not refusals.
AXIS_VERDICTS: dict[str, tuple[str, ...]] = {
    # (a) the work exists as cited: its identifiers resolve, in the indexes consulted, to this work
    "identity": ("verified", "mismatch", "unresolvable", "inconclusive"),
    # (b) its standing: a retraction, a correction or an expression of concern, or none found by any source
    "status": ("current", "corrected", "expression-of-concern", "retracted", "inconclusive"),
    # (c) each evidence passage occurs in the text it says it comes from
    "faithfulness": ("verified", "not-found", "contradicted", "insufficient-passage"),
}
# Refusal grade (withhold, or flag as fabricated or wrong) is exactly these four; every other verdict is
# either a pass or an open item.
REFUSAL_GRADE = frozenset({"unresolvable", "mismatch", "retracted", "contradicted"})
# Open items: neither a pass nor a refusal (a source did not answer, only one index holds the paper, no
# open full text to check a passage against, a passage not found where sitegen reads). A human decides.
OPEN_ITEMS = frozenset({"inconclusive", "insufficient-passage", "not-found"})
Verdict = Literal["verified", "mismatch", "unresolvable", "inconclusive", "current", "corrected",
                  "expression-of-concern", "retracted", "not-found", "contradicted", "insufficient-passage"]
Reason = Annotated[str, StringConstraints(min_length=1, max_length=2000), Printable]


class SourceAnswer(Strict):
    """What one index said when asked for the record: the work found (and whether it is the work cited),
    nothing found, or no answer (a rate limit, an error, a timeout: never a negative)."""

    source: Source
    # "rate-limited" and "no-answer" (an error, a timeout, an outage, or an answer no record could be made of: a
    # work without a title) are kept apart: a rate-limited source is asked again later, and neither is ever read
    # as "not found".
    # "partial": the work found agrees with the citation only in part (a human looks). "elsewhere": the
    # identifier is registered with another agency (a DataCite DOI asked of Crossref), so the index cannot
    # hold it: neither found nor a negative.
    answer: Literal["found", "partial", "different-work", "not-found", "elsewhere", "rate-limited", "no-answer"]
    asked: Annotated[str, StringConstraints(min_length=1, max_length=500), Printable]  # the identifier or title asked
    detail: Reason | None = None  # what matched or differed, or why there was no answer


# What an index said when it said nothing (a rate limit, an error, an outage): never a negative.
UNANSWERED = frozenset({"rate-limited", "no-answer"})


class PassageCheck(Strict):
    """Where one finding's passage was looked for (faithfulness), and the text it was checked against."""

    finding: int = Field(ge=0)  # index into the evidence file's findings
    source: Literal["abstract", "fulltext", "external"]  # where the passage says it comes from
    result: Literal["found", "not-found", "unchecked"]
    found_in: Literal["abstract", "fulltext"] | None = None
    section: Reason | None = None  # the full text's section path, e.g. "Methods › Cell culture"
    licence: Reason | None = None  # of the full text the passage was found in (or checked against)
    # The full text's, linked from the study's page: a web address as a record's are (`WebAddress`), and https.
    url: Annotated[WebAddress, worded_pattern(r"^https://", "an address starting https://")] | None = None


class VerificationPayload(Strict):
    """A record's citation was verified on one axis (identity: the work exists as cited; status:
    retracted, corrected or not; faithfulness: the evidence passages occur in its text): one verdict of
    that axis, never a boolean, with the snapshots the verdict rests on and what each source answered."""

    record_id: str
    axis: VerificationAxis
    verdict: Verdict
    refusal_grade: bool
    reasons: list[Reason] = Field(default_factory=list)
    snapshot_hashes: list[Sha256] = Field(default_factory=list)
    answers: list[SourceAnswer] = Field(default_factory=list)  # identity and status: each source consulted
    notice: Annotated[str, StringConstraints(min_length=1, max_length=300), Printable] | None = None  # its DOI
    passages: list[PassageCheck] = Field(default_factory=list)  # faithfulness: one per finding
    # Faithfulness: the SHA-256 of the evidence checked (canonical JSON of the Evidence model). Evidence
    # edited since then is not verified: the verdict stands for the findings as they were.
    evidence_sha256: Sha256 | None = None

    @field_validator("record_id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        return check_record_id(value)

    @model_validator(mode="after")
    def _verdict_of_its_axis(self) -> VerificationPayload:
        if self.verdict not in AXIS_VERDICTS[self.axis]:
            raise ValueError(f"{self.verdict!r} is not a verdict on the {self.axis} axis "
                             f"(one of {', '.join(AXIS_VERDICTS[self.axis])})")
        if self.refusal_grade != (self.verdict in REFUSAL_GRADE):
            raise ValueError(f"refusal_grade must be {str(self.verdict in REFUSAL_GRADE).lower()} for "
                             f"{self.verdict!r}: only {', '.join(sorted(REFUSAL_GRADE))} are refusal grade")
        return self


class VersionPayload(Strict):
    """A version of the review was published (`sitegen publish`): its number, and the SHA-256 of its
    file versions/<number>.json (of the file's canonical JSON), so the file cannot be edited unseen."""

    number: int = Field(ge=1)
    sha256: Sha256


MissCode = Literal["outside-dates", "no-term", "never-returned", "incomplete-runs", "not-in-records", "unknown"]


class MissReason(Strict):
    """Why a strategy may have missed a known-relevant study, where it can be told from the review's files."""

    code: MissCode
    detail: Reason  # the reason in words, as the site and the command line show it


class MissedStudy(Strict):
    study: str  # its record id; for a study no record holds, the record id its listed identifier gives
    reasons: list[MissReason] = Field(min_length=1)

    @field_validator("study")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        return check_record_id(value)


class StrategyRecall(Strict):
    """One strategy of a saved search (as its runs recorded it) against the known-relevant studies."""

    source: Source
    label: str | None = None
    query: str
    method: Literal["database", "other"] = Field(default="database", exclude_if=lambda value: value == "database")
    current: bool  # still one of the saved search's strategies (false: an earlier wording that ran)
    runs: int = Field(ge=0)  # recorded runs of it
    incomplete_runs: int = Field(ge=0)
    found: int = Field(ge=0)  # known-relevant studies it retrieved in any run
    # Why its recall could not be measured (it never ran, or no run got the source's answer in full): then the
    # studies it did not retrieve are not misses, `missed` is empty and `found` is a lower bound.
    not_measured: Reason | None = None
    missed: list[MissedStudy] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> StrategyRecall:
        if self.incomplete_runs > self.runs:
            raise ValueError(f"incomplete_runs ({self.incomplete_runs}) is more than runs ({self.runs})")
        if self.not_measured and self.missed:
            raise ValueError("a strategy whose recall was not measured lists no missed study")
        return self


class ValidationPayload(Strict):
    """A saved search was validated (`sitegen monitor validate`): the known-relevant studies (the included
    studies and validation.csv's) against what its strategies retrieved in their recorded runs. Relative
    recall is `found / len(known)` overall (union over the saved search's current strategies and their runs:
    earlier wordings are listed for information only) and per strategy."""

    monitor_id: Slug
    threshold: float = Field(ge=0, le=1)  # the protocol's validation_recall then
    known: list[str]  # the known-relevant studies, by record id
    listed: list[str] = Field(default_factory=list)  # of those, named by validation.csv
    found: int = Field(ge=0)
    strategies: list[StrategyRecall]
    missed: list[str] = Field(default_factory=list)  # the known studies no current strategy retrieved

    @field_validator("known", "listed", "missed")
    @classmethod
    def _valid_ids(cls, ids: list[str]) -> list[str]:
        return check_record_ids(ids)

    @model_validator(mode="after")
    def _consistent(self) -> ValidationPayload:
        """The numbers agree with each other: a tampered or miscomputed event is refused, not published."""
        known = set(self.known)
        for name, ids in (("listed", self.listed), ("missed", self.missed)):
            if not set(ids) <= known:
                raise ValueError(f"{name} names studies that are not in known: {sorted(set(ids) - known)}")
        if self.found + len(set(self.missed)) != len(known):
            raise ValueError(f"found ({self.found}) and missed ({len(set(self.missed))}) do not add up to the "
                             f"{counted(len(known), 'known study', 'known studies')}")
        for strategy in self.strategies:
            missed = {miss.study for miss in strategy.missed}
            if not missed <= known:
                raise ValueError(f"strategy {strategy.query!r} missed studies that are not in known: "
                                 f"{sorted(missed - known)}")
            if strategy.found > len(known):
                raise ValueError(f"strategy {strategy.query!r} found {strategy.found} of {counted(len(known), 'known study', 'known studies')}")
            if strategy.not_measured is None and strategy.found + len(missed) != len(known):
                raise ValueError(f"strategy {strategy.query!r}: found ({strategy.found}) and missed ({len(missed)}) "
                                 f"do not add up to the {counted(len(known), 'known study', 'known studies')}")
        return self

    @property
    def recall(self) -> float | None:
        """Relative recall of the current strategies over their runs (a lower bound when `not_measured`); None
        when no study is known to be relevant yet."""
        return self.found / len(self.known) if self.known else None

    @property
    def not_measured(self) -> list[StrategyRecall]:
        """The current strategies whose recall could not be measured: the overall recall is then a lower bound."""
        return [strategy for strategy in self.strategies if strategy.current and strategy.not_measured]

    @property
    def below_threshold(self) -> bool:
        """Measured below the protocol's threshold; never claimed on runs that did not get an answer in full."""
        return self.recall is not None and self.recall < self.threshold and not self.not_measured


class RetirementPayload(Strict):
    """A saved search was retired (`sitegen monitor retire`): `update` no longer runs it. Its file stays, with its
    seen_ids, and its runs stay on the ledger: the records they found stay identified, and a search reinstated
    reports none of them again."""

    monitor_id: Slug
    # Why (the command's --reason, checked as it is given: `living.ledger.given_text`), shown on the site.
    reason: str


class ReinstatementPayload(Strict):
    """A retired saved search was brought back (`sitegen monitor reinstate`): `update` runs it again."""

    monitor_id: Slug
    reason: str | None = None


Payload = (RetrievalPayload | ImportPayload | ProtocolLockPayload | AmendmentPayload | BatchPayload
           | VerificationPayload | PhasePayload | VersionPayload | ValidationPayload | RetirementPayload
           | ReinstatementPayload)
# Every event type and the one model of its payload; the ledger holds no untyped event.
PAYLOAD_MODELS: dict[str, type[Payload]] = {
    "retrieval": RetrievalPayload,
    "import": ImportPayload,
    "protocol_lock": ProtocolLockPayload,
    "amendment": AmendmentPayload,
    "screening": BatchPayload,
    "verification": VerificationPayload,
    "phase": PhasePayload,
    "version": VersionPayload,
    "validation": ValidationPayload,
    "retirement": RetirementPayload,
    "reinstatement": ReinstatementPayload,
}
EVENT_TYPES: dict[type[Payload], str] = {model: event_type for event_type, model in PAYLOAD_MODELS.items()}



# --------------------------------------------------------------------------- versions/<number>.json

VERSION_SCHEMA_VERSION = 1


class PublishedOutcome(Strict):
    """A record's outcome at one stage when a version was published: the decision and its reason code."""

    decision: Literal["include", "exclude", "maybe", "conflict", "awaiting"]
    reason: ReasonCode | None = None


# A record id as a version names it: as long as any record id may be (a DOI of 500 characters and more).
VersionRecordId = Annotated[str, StringConstraints(min_length=1, max_length=2100)]


class VersionRecord(Strict):
    """versions/<number>.json: what a published version of the review was, so that every version can
    be rebuilt from the folder. Its counts are not stored: they are derived again from the ledger up
    to `ledger_head` and these outcomes."""

    schema_version: int
    number: int = Field(ge=1, description="1, 2, 3… in publication order; equals the file name")
    published_at: str = Field(description="RFC 3339 time of publication: the build time `sitegen publish` used")
    ledger_head: LedgerAnchor = Field(description="the ledger's last event when the version was published")
    protocol_version: int = Field(ge=1)
    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300), Printable]
    question: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000), Printable]
    # Stage -> record id -> outcome, for every record with an outcome at that stage then.
    outcomes: dict[Stage, dict[str, PublishedOutcome]]
    # Included study id -> SHA-256 of its evidence (canonical JSON of `Evidence`), for each included study
    # with an evidence file then. Absent from versions published before sitegen recorded evidence.
    evidence: dict[str, Sha256] | None = Field(
        default=None, description="included study id -> SHA-256 of the canonical JSON of its evidence file's "
                                  "content, so that a change of evidence is a new version")
    # Absent from versions published before sitegen recorded them (their counts then remove none).
    duplicates: dict[VersionRecordId, VersionRecordId] | None = Field(
        default=None, description="each record a reviewer had confirmed to duplicate another (duplicates.csv) -> "
                                  "the record it duplicates: removed before screening in the version's counts, "
                                  "and a study it was included as is that record's, as they were then")
    # Absent from versions published before sitegen recorded it (their studies are then counted by the records'
    # links as records.jsonl holds them now).
    studies: dict[VersionRecordId, VersionRecordId] | None = Field(
        default=None, description="each record linked to another as a version of one study (a preprint and its "
                                  "journal article) -> the study it reports, named by the least id of its "
                                  "versions, as they were then: the version's counts of studies stay as published")
    # Absent from versions published before sitegen recorded it.
    records: Sha256 | None = Field(
        default=None, description="SHA-256 of records.jsonl's records as they were (each record's id and the "
                                  "digest of its line as sitegen writes it), so that a change to any record's metadata is a new "
                                  "version and this version's pages can say the records changed since")

    @field_validator("published_at")
    @classmethod
    def _rfc3339(cls, value: str) -> str:
        return _check_timestamp(value)

    @field_validator("outcomes")
    @classmethod
    def _valid_ids(cls, outcomes: dict[str, dict[str, PublishedOutcome]]) -> dict[str, dict[str, PublishedOutcome]]:
        for by_record in outcomes.values():
            for record_id in by_record:
                check_record_id(record_id)
        return outcomes

    @field_validator("evidence")
    @classmethod
    def _valid_evidence_ids(cls, evidence: dict[str, str] | None) -> dict[str, str] | None:
        for record_id in evidence or {}:
            check_record_id(record_id)
        return evidence


# --------------------------------------------------------------------------- state.json

STATE_SCHEMA_VERSION = 1
# Seed 002's decision thresholds, "default; the calling agent may override": a digest's score KEEPs from
# KEEP_FROM and REVIEWs from REVIEW_FROM unless state.json's keep_from and review_from say otherwise.
KEEP_FROM = 70
REVIEW_FROM = 50


class Thresholds(BaseModel):
    """The decision thresholds in force (`ReviewState.thresholds`): a score KEEPs from `keep_from` (inclusive) and
    REVIEWs from `review_from` (inclusive) up to it; below, only an exclusion drops a paper."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keep_from: int = KEEP_FROM
    review_from: int = REVIEW_FROM

    @property
    def seed_defaults(self) -> bool:
        return (self.keep_from, self.review_from) == (KEEP_FROM, REVIEW_FROM)


class ReviewState(Strict):
    """state.json: the few review settings a command may set directly (`sitegen state set`).

    The phase is not here: it advances only through `sitegen state advance`, which
    checks its gates and records the move on the ledger.
    """

    schema_version: int
    max_kept: int = Field(default=25, ge=1, le=10_000, description="most KEEP decisions in a weekly digest")
    status_note: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), HandWritten, Printable,
                           Visible] | None = Field(
        default=None, description="a short note shown on the site's home page, e.g. 'searches paused until May'")
    ledger_head: LedgerAnchor | None = Field(
        default=None, description="the ledger's last event when sitegen last appended to it (written by sitegen, "
        "never set by hand): a ledger that lost its tail no longer ends there")
    # Absent (None): seed 002's defaults, and a state.json without them is written without them, as before.
    keep_from: int | None = Field(
        default=None, ge=0, le=100, description=f"a weekly digest's score from which a paper is KEEP (0-100, at least "
        f"review_from; absent: seed 002's {KEEP_FROM})")
    review_from: int | None = Field(
        default=None, ge=0, le=100, description=f"a weekly digest's score from which a paper is REVIEW, up to keep_from "
        f"(0-100, at most keep_from; absent: seed 002's {REVIEW_FROM}); below it, only a paper an exclusion fired "
        "on is DROP")

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(keep_from=KEEP_FROM if self.keep_from is None else self.keep_from,
                          review_from=REVIEW_FROM if self.review_from is None else self.review_from)

    @model_validator(mode="after")
    def _review_before_keep(self) -> ReviewState:
        problem = threshold_problem(self.keep_from, self.review_from)
        if problem is not None:
            # Located at the field written (review_from when both are), so a hand edit is refused at its line.
            field = "keep_from" if self.review_from is None else "review_from"
            raise ValidationError.from_exception_data(type(self).__name__, [InitErrorDetails(
                type=PydanticCustomError("thresholds", problem), loc=(field,), input=getattr(self, field))])
        return self


def threshold_problem(keep_from: int | None, review_from: int | None) -> str | None:
    """Why state.json's keep_from and review_from (None: absent, seed 002's default) cannot stand together: a
    score must reach REVIEW no later than KEEP. None when they can."""
    keep = KEEP_FROM if keep_from is None else keep_from
    review = REVIEW_FROM if review_from is None else review_from
    if review <= keep:
        return None
    keep_said = f"keep_from {keep}" + (" (seed 002's default: state.json sets none)" if keep_from is None else "")
    review_said = f"review_from {review}" + (" (seed 002's default: state.json sets none)" if review_from is None
                                             else "")
    return f"{review_said} is above {keep_said}: review_from must be at most keep_from"


SETTABLE_FIELDS = ("max_kept", "status_note", "keep_from", "review_from")  # widening this is a decision about who may change what


# --------------------------------------------------------------------------- snapshots/index.jsonl


Method = Literal["GET", "POST"]


class SnapshotEntry(Strict):
    """One recorded provider response: which request, in which run, and what came back.

    The body lives at snapshots/<sha256[:2]>/<sha256>; credentials and contact
    addresses are removed from the request and the body before anything is hashed
    or stored. A request that got no HTTP response (a timeout, a refused
    connection) is recorded too, so replaying a run reproduces its outages.
    """

    fingerprint: Sha256  # of the canonical request: method, URL and sorted public parameters
    session: str = Field(default="", description="the run this response belongs to (its caller-supplied time)")
    occurrence: int = Field(default=0, ge=0, description="0 for the first identical request in the run, 1 for the next")
    method: Method = "GET"  # POST: the parameters went as a form body (a query too long for an address)
    url: str
    # JSON has no tuples: a [name, value] pair is read as one (the only lax field).
    params: list[Annotated[tuple[str, str], StrictMode(False)]] = Field(default_factory=list)
    status: int | None = None  # HTTP status, None when no response arrived
    # no response arrived: timed out, unreachable, or not sent to a provider that rate limited the run or refused
    # it access (auth_error: HTTP 401 or 403 to an earlier request, most often a missing or wrong key)
    error: Literal["timeout", "unavailable", "rate_limited", "auth_error"] | None = None
    message: str | None = None
    content_type: str | None = None
    retry_after: float | None = None
    sha256: Sha256 | None = None  # of the stored body

    @model_validator(mode="after")
    def _response_or_error(self) -> SnapshotEntry:
        if (self.status is None) == (self.error is None):
            raise ValueError("a snapshot records either an HTTP status or an error, not both or neither")
        return self


def describe_request(method: str, url: str, params: list[tuple[str, str]]) -> str:
    """A request as messages show it: "GET https://api.openalex.org/works?search=x"."""
    return f"{method} {url}" + (f"?{urlencode(params)}" if params else "")


def recorded_again(entry: SnapshotEntry, earlier: SnapshotEntry | None, line: int | None) -> str | None:
    """Why a line of the index that records the response to the same request of the same run as an `earlier` line
    (on `line`) cannot stand, or None. sitegen records each once; a second, other response (a hand edit, a merge
    of two branches' indexes) leaves which one the run got unknown, so a replay would read one of them unsaid."""
    if earlier is None or earlier == entry:  # a line merged in twice says nothing new
        return None
    repeat = f" (repeat {entry.occurrence + 1})" if entry.occurrence else ""
    request = describe_request(entry.method, entry.url, entry.params)
    return (f"it records another response to {request} in the run at {entry.session or 'no session'}{repeat} than "
            f"line {line} does: a run gets one response to each "
            "request; keep the line sitegen wrote (from version control), or record a new run")


# --------------------------------------------------------------------------- runs/<time>-<monitor_id>.json

RUN_MANIFEST_SCHEMA_VERSION = 1
# What one provider call came to (sitegen.sources.outcome): only "ok" can be a complete answer. auth_error: the
# provider refused access (HTTP 401 or 403), most often for a missing or wrong key: not asked again in that run.
SourceStatus = Literal["ok", "rate_limited", "timeout", "unavailable", "unsupported", "auth_error"]
# Query parameters that carry a credential or a contact address: never part of a recorded request.
CREDENTIAL_PARAMETER = re.compile(r"[?&](?:api_key|mailto|email)=", re.IGNORECASE)
Request = Annotated[str, StringConstraints(min_length=1, max_length=REQUEST_MAX_LENGTH), Printable]


class RunSource(Strict):
    """One strategy of a run: what was saved, what was sent, and what came back."""

    # source, label, strategy, total, note and snapshot_hashes as on the run's retrieval event
    source: Source
    label: str | None = None
    method: Literal["database", "other"] = Field(
        default="database", exclude_if=lambda value: value == "database",
        description="PRISMA 2020's route, as on the retrieval event: 'other' for a citation search")
    syntax: Literal["native", "sitegen", "citations"] | None = Field(
        default=None, description="how `strategy` is read: the provider's own syntax, sitegen's grammar, or a "
                                  "citation search's ('MODE: SEED, ...')")
    strategy: str = Field(description="the saved strategy, verbatim")
    provider_query: str | dict[str, str] | None = Field(
        default=None, description="the query as the provider received it (compiled for `syntax: sitegen`): its text, "
        "or its query parameters by name; absent when the provider cannot express the strategy")
    requests: list[Request] | None = Field(
        default=None, description="every request the run made, in order, without credentials or contact addresses; "
        "a request retried after a failure (HTTP 429 or 5xx, a timeout) is listed once, with the answer it finally got")
    status: SourceStatus | None = None
    complete: bool
    total: int | None = Field(default=None, description="the provider's own count of matches; for a citation search, the distinct works its "
                                "seeds lead to (absent when not known)")
    retrieved: int = Field(ge=0, description="distinct records this strategy returned")
    new: int = Field(ge=0, description="of those, records in the run's new screening batch")
    note: str | None = Field(default=None, description="why the source is incomplete, and what a complete answer "
                             "left out (as on the retrieval event)")
    snapshot_hashes: list[Sha256] = Field(default_factory=list)

    @field_validator("requests")
    @classmethod
    def _no_credentials(cls, requests: list[str] | None) -> list[str] | None:
        for request in requests or []:
            if CREDENTIAL_PARAMETER.search(request):
                raise ValueError("a request names a credential or contact parameter (api_key, mailto, email); "
                                 "recorded requests never hold one")
        return requests

    @model_validator(mode="after")
    def _consistent(self) -> RunSource:
        if self.new > self.retrieved:
            raise ValueError(f"new ({self.new}) cannot exceed retrieved ({self.retrieved})")
        if self.complete and self.status not in (None, "ok"):
            raise ValueError(f"a source with status {self.status!r} cannot be complete")
        return self


class RunCounts(Strict):
    """The run's records: returned by all strategies together, distinct among them, and new."""

    retrieved: int = Field(ge=0, description="records returned, summed over the strategies")
    distinct: int = Field(ge=0, description="distinct records among them")
    duplicates: int = Field(ge=0, description="records returned by more than one strategy: retrieved - distinct")
    new: int = Field(ge=0, description="records in the run's new screening batch")

    @model_validator(mode="after")
    def _add_up(self) -> RunCounts:
        if self.duplicates != self.retrieved - self.distinct:
            raise ValueError("duplicates must equal retrieved - distinct")
        if self.new > self.distinct:
            raise ValueError("new cannot exceed distinct")
        return self


class RunManifest(Strict):
    """runs/<time>-<monitor_id>.json: what one run of a saved search did, written once, by the run.

    `sitegen update` writes it in the run's own transaction and names its SHA-256 in the run's
    retrieval events; it is never rewritten. A run recorded before manifests existed has none: the
    site derives one from the ledger (`origin: ledger`), which lacks what only the run knew.
    """

    schema_version: int
    origin: Literal["run", "ledger"] = Field(
        description="run: written by the run itself; ledger: derived from the ledger later (never a file in runs/)")
    monitor_id: Slug
    at: str = Field(description="the run's caller-supplied RFC 3339 time, as on its ledger events")
    sitegen_version: Annotated[str, StringConstraints(min_length=1, max_length=100), Printable] | None = None
    snapshots: Literal["live", "record", "replay"] | None = Field(
        default=None, description="where responses came from: the network (live, record) or recorded ones (replay)")
    complete: bool = Field(description="every source answered in full: only then is 'no new records' a finding")
    sources: list[RunSource] = Field(min_length=1)
    counts: RunCounts
    batch: int | None = Field(default=None, ge=1, description="the screening batch the new records form")

    @field_validator("at")
    @classmethod
    def _rfc3339(cls, value: str) -> str:
        return _check_timestamp(value)

    @model_validator(mode="after")
    def _consistent(self) -> RunManifest:
        if self.complete != all(source.complete for source in self.sources):
            raise ValueError("complete must be true exactly when every source is complete")
        if self.counts.retrieved != sum(source.retrieved for source in self.sources):
            raise ValueError("counts.retrieved must be the sum of the sources' retrieved")
        if self.origin == "run":
            unrecorded = [name for name in ("sitegen_version", "snapshots") if getattr(self, name) is None]
            unrecorded += [f"sources[{index}].{name}" for index, source in enumerate(self.sources)
                           for name in ("syntax", "requests", "status") if getattr(source, name) is None]
            if unrecorded:
                raise ValueError(f"a manifest written by its run records {', '.join(unrecorded)}")
        return self


# --------------------------------------------------------------------------- screening/<stage>/<reviewer>.csv

DECISION_COLUMNS = ["record_id", "decision", "reason", "note"]


# A slotted pydantic dataclass, not a model, each field strict, as the record's names are (see SMALL_VALUE):
# a review of 100,000 records holds 200,000 decisions and more, each then a third of the memory.
@dataclass(slots=True, frozen=True, config=SMALL_VALUE)
class Decision:
    """One row of screening/<stage>/<reviewer>.csv: a reviewer's decision on a record."""

    record_id: Annotated[str, StrictMode()]
    decision: Literal["include", "exclude", "maybe"]  # a literal is matched exactly
    reason: Annotated[str, StrictMode()] = ""
    note: Annotated[str, StrictMode(), StringConstraints(max_length=NOTE_LIMIT), HandWritten, Printable] = ""  # characters

    @field_validator("record_id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        return check_record_id(value)


# --------------------------------------------------------------------------- duplicates.csv

DUPLICATE_COLUMNS = ["record_id", "duplicate_of", "decision", "reviewer", "note"]


class DuplicateDecision(Strict):
    """One row of duplicates.csv: a reviewer's decision on a pair of records that may be one work.

    `same` makes `record_id` a duplicate of `duplicate_of` (the canonical record, which keeps its
    screening); `different` keeps both, and stops `sitegen probable-duplicates` listing the pair.
    """

    record_id: str
    duplicate_of: str
    decision: Literal["same", "different"]
    reviewer: Annotated[str, StringConstraints(pattern=SLUG)]
    note: Note = ""

    @field_validator("record_id", "duplicate_of")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        return check_record_id(value)

    @model_validator(mode="after")
    def _two_records(self) -> DuplicateDecision:
        if self.record_id == self.duplicate_of:
            raise ValueError(f"record {self.record_id!r} is paired with itself")
        return self


# --------------------------------------------------------------------------- validation.csv

VALIDATION_COLUMNS = ["record_id", "note"]


def known_study_id(value: str) -> str:
    """A study named as a record id, or by a DOI, PMID, PMCID, OpenAlex or arXiv id in any written form
    (https://doi.org/10.…, PMID: 123), as the record id that identifier gives (10.…, pmid:123)."""
    if record_id_problem(value) is None:
        return value
    if value.strip().isascii() and value.strip().isdigit():  # a bare number is a PMID, never a PMCID
        pmid = NORMALISERS["pmid"](value)
        if pmid is None:
            raise ValueError(f"{value!r} is a bare number, read as a PMID, but no PMID is written so (a PMID is a "
                             "whole number from 1; write a PMCID as PMC…)")
        return id_from_identifiers({"pmid": pmid}) or value
    if found := written_record_id(value, WRITTEN_ID_NAMESPACES):
        return found
    raise ValueError(f"{value!r} is neither a record id nor a DOI, PMID, PMCID, OpenAlex or arXiv id")


class ValidationStudy(Strict):
    """One row of validation.csv: a study the protocol names as known to be relevant, which the saved
    searches should retrieve (`sitegen monitor validate`), beside the review's included studies."""

    record_id: str
    note: Note = ""

    @field_validator("record_id")
    @classmethod
    def _known_study(cls, value: str) -> str:
        return known_study_id(value)


# --------------------------------------------------------------------------- evidence/<study>.yaml


class Passage(Strict):
    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=8000), HandCopied, Printable]
    source: Literal["abstract", "fulltext", "external"]
    location: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), HandWritten,
                        Printable] | None = None

    @model_validator(mode="after")
    def _external_needs_location(self) -> Passage:
        if self.source == "external" and not self.location:
            raise ValueError("a passage with source 'external' needs a location (page, section or figure)")
        return self


class Finding(Strict):
    """The six evidence fields; only `finding` is required. Blank means 'not extracted'."""

    research_question: Text | None = None
    population: Text | None = Field(default=None, description="species, cell line or population")
    method: Text | None = Field(default=None, description="method or assay")
    intervention: Text | None = Field(default=None, description="intervention, concentration and exposure")
    finding: Text
    limitations: Text | None = None
    passage: Passage


class Evidence(Strict):
    """evidence/<study>.yaml: extracted findings for one study, each with a verbatim passage."""

    record_id: str
    findings: list[Finding] = Field(min_length=1, max_length=1000)  # more is no study's: refused before each is read

    @field_validator("record_id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        return check_record_id(value)
