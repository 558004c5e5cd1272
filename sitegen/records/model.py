"""The bibliographic record: CSL-JSON with every known identifier, sitegen's ground floor.

Every layer speaks of records in this one model: providers produce them,
deduplication merges them, `records.jsonl` stores one per line, and the site
shows them. It depends on nothing else of sitegen but identifier normalisation
and the provider registry, so any layer can use it.
"""

from __future__ import annotations

import calendar
import html
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, ClassVar, Literal, Self, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic import Strict as StrictValue
from pydantic.dataclasses import dataclass

from sitegen.records.ids import (
    NORMALISERS,
    first_record_id_problem,
    is_normal_arxiv,
    is_normal_doi,
    normalise_arxiv,
    parse_record_id,
    record_id,
    record_id_problem,
)
from sitegen.records.joins import joined
from sitegen.records.mojibake import encoded_twice, encoded_twice_message
from sitegen.records.providers import Source


class Strict(BaseModel):
    """The base of every file format: unknown keys are errors and values are not coerced."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)


def model_data(model: BaseModel) -> dict[str, Any]:
    """A model as the JSON data sitegen writes: aliases as field names, unset optional fields left out."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


# Code points XML 1.0 cannot hold, escaped or not (a feed or SVG holding one is not well-formed): C0 controls
# but tab and line breaks, lone UTF-16 surrogates, U+FFFE and U+FFFF. The one definition (sitegen.text uses it).
NOT_XML = "\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff"
# Noncharacters, which HTML reports as parse errors: U+FDD0-U+FDEF and the last two code points of every plane.
NONCHARACTER = "\ufdd0-\ufdef" + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}"
                                        for plane in range(1, 17))
# Characters no text a person reads may hold: those above, and DEL and the C1 controls, which XML tolerates but
# a terminal would obey. Every record and review-file text field refuses them; writers replace them.
CONTROL_CHARACTER = re.compile(f"[{NOT_XML}\x7f-\x9f{NONCHARACTER}]")


def printable(value: str) -> str:
    """`value`, refused when it holds a character no text a person reads may hold, without direction
    controls it leaves open (`contained_direction`)."""
    # Every character CONTROL_CHARACTER names is a control (Cc), a surrogate (Cs) or a noncharacter (Cn,
    # permanently unassigned), none of which str.isprintable() accepts: text it accepts (most text, and a
    # scan far quicker than the regex's) holds none, nor any direction control (a format character, Cf).
    # Line breaks and tabs are no "printable" characters but are allowed: such text is searched.
    if value.isprintable():
        return value
    if found := CONTROL_CHARACTER.search(value):
        char = found.group()
        if unicodedata.category(char) == "Cc":
            raise ValueError(f"holds the control character U+{ord(char):04X}, which no text needs")
        raise ValueError(f"holds U+{ord(char):04X}, a code point that XML and HTML cannot hold (a noncharacter "
                         "or a lone surrogate)")
    return contained_direction(value)


# Unicode's explicit direction controls: embeddings and overrides (LRE, RLE, LRO, RLO) end at PDF; isolates
# (LRI, RLI, FSI) at PDI.
EMBEDDINGS, POP_EMBEDDING = "\u202a\u202b\u202d\u202e", "\u202c"
ISOLATES, POP_ISOLATE = "\u2066\u2067\u2068", "\u2069"
DIRECTION_CONTROL = re.compile(f"[{EMBEDDINGS}{POP_EMBEDDING}{ISOLATES}{POP_ISOLATE}]")
PARAGRAPH_ENDS = "\n\r\x1c\x1d\x1e\x85\u2029"


def contained_direction(text: str) -> str:
    """`text` without the direction controls it leaves open (an opening with no close before the end of its
    paragraph) or closes without an opening. A text left open (a title ending in U+202E, RIGHT-TO-LEFT
    OVERRIDE) would reverse what a page or a download shows after it, up to the end of the paragraph: another
    study's title, a decision, a count. Balanced, a text can change only how itself reads; and dropping, never
    adding, keeps it within the length its field allows."""
    if not DIRECTION_CONTROL.search(text):
        return text
    dropped: set[int] = set()
    open_controls: list[tuple[str, int]] = []  # ("e" embedding or override, or "i" isolate; its place)
    for place, char in enumerate(text):
        if char in EMBEDDINGS or char in ISOLATES:
            open_controls.append(("e" if char in EMBEDDINGS else "i", place))
        elif char == POP_EMBEDDING:
            if open_controls and open_controls[-1][0] == "e":
                open_controls.pop()
            else:
                dropped.add(place)  # closes nothing of this text (Unicode: within an isolate it closes nothing)
        elif char == POP_ISOLATE:
            if any(kind == "i" for kind, _ in open_controls):
                while open_controls.pop()[0] != "i":  # a PDI closes the embeddings opened inside its isolate
                    pass
            else:
                dropped.add(place)
        elif char in PARAGRAPH_ENDS:  # Unicode ends every embedding at a paragraph's end: those open there go
            dropped.update(place for _, place in open_controls)
            open_controls.clear()
    dropped.update(place for _, place in open_controls)
    return "".join(char for place, char in enumerate(text) if place not in dropped)


Printable = AfterValidator(printable)
Text = Annotated[str, Printable]

# Joiners are how Persian and Indic words and emoji are spelt, and a soft hyphen (which PDFs leave in copied words)
# shows at most as a hyphen at a line's end: no other format character belongs in what a reviewer writes.
HAND_WRITTEN_FORMAT = frozenset("\u200c\u200d\u00ad")


def hidden_format(value: str, allowed: frozenset[str] = HAND_WRITTEN_FORMAT) -> tuple[int, str] | None:
    """The first invisible format character (Unicode's Cf) of `value` other than a joiner or a soft hyphen, with its
    1-based place, else None: direction overrides, embeddings and isolates (U+202A-U+202E, U+2066-U+2069),
    direction marks, zero-width spaces. Text a person writes in a review file needs none, and each can make it
    display otherwise than it is (the "Trojan Source" class: a note reading "include" that holds "edulcni"
    reversed), on a page, in a diff, in a terminal."""
    if value.isascii():  # no format character is ASCII: most text is told at once
        return None
    return next(((place, char) for place, char in enumerate(value, start=1)
                 if char not in allowed and unicodedata.category(char) == "Cf"), None)


def without_hidden_format(value: str) -> str:
    """`value` without the characters `hidden_format` finds: a tool's text made a reviewer's (an exported note)."""
    return value if hidden_format(value) is None else "".join(
        char for char in value if char in HAND_WRITTEN_FORMAT or unicodedata.category(char) != "Cf")


# A query sent to a provider verbatim keeps only the joiners, which spell words: a provider would search for a soft
# hyphen or a zero-width space as a letter of the word (sitegen's grammar drops them instead: sitegen.sources.query).
VERBATIM_QUERY_FORMAT = frozenset("\u200c\u200d")


def verbatim_query_problem(query: str) -> tuple[int, str] | None:
    """Why a query sent to a provider as written (a native strategy) cannot be sent: the 1-based place of the first
    invisible format character it holds, and a reason naming it; None when it holds none."""
    if not (found := hidden_format(query, VERBATIM_QUERY_FORMAT)):
        return None
    place, char = found
    return place, (f"invisible character U+{ord(char):04X} ({unicodedata.name(char, 'unnamed format character')}) "
                   "would be sent to the provider as part of the query, which would then search for something other "
                   "than what is shown; delete it (sitegen's grammar, syntax sitegen, reads a soft hyphen, "
                   "zero-width space or direction mark as nothing)")


# A character reference of HTML and Markdown: decimal, hexadecimal or named ("&#x202E;", "&#8238;", "&rlm;").
# A Markdown code span: a run of backticks to the next run of as many (CommonMark's rule, near enough).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_CHARACTER_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def hidden_format_reference(value: str) -> tuple[int, str, str] | None:
    """The first character reference in Markdown a reviewer writes (a title, the protocol) that a page shows as an
    invisible format character (`hidden_format`), as its 1-based place, its text and the character: "&#x202E;" is
    the direction override the rule refuses typed, written so that a check of the characters typed does not see it."""
    if "&" not in value:
        return None
    code = [span.span() for span in _CODE_SPAN.finditer(value)]  # a code span shows a reference as it is written
    for found in _CHARACTER_REFERENCE.finditer(value):
        if any(start <= found.start() < end for start, end in code):
            continue
        char = html.unescape(found.group())
        if len(char) == 1 and char not in HAND_WRITTEN_FORMAT and unicodedata.category(char) == "Cf":
            return found.start() + 1, found.group(), char
    return None


def hidden_format_reference_message(found: tuple[int, str, str]) -> str:
    place, reference, char = found
    return (f"holds {reference} at character {place}, which a page shows as U+{ord(char):04X} "
            f"({unicodedata.name(char, 'unnamed format character')}), an invisible character that can make the text "
            "display otherwise than it is; delete it")


def hand_written_markdown(value: str) -> str:
    """Markdown a reviewer writes (a review's title and question), refused when a character reference in it is an
    invisible format character: the page shows the character, not the reference."""
    if found := hidden_format_reference(value):
        raise ValueError(hidden_format_reference_message(found))
    return value


def hidden_format_message(char: str, place: int) -> str:
    return (f"holds U+{ord(char):04X} ({unicodedata.name(char, 'unnamed format character')}) at character {place}, "
            "an invisible character that can make the text display otherwise than it is; delete it")


def hand_written(value: str) -> str:
    """`value`, refused when it holds an invisible format character (`hidden_format`) or text encoded twice
    (`encoded_twice`: a note Excel read as Windows-1252 would be published garbled). A provider's text keeps its
    direction controls (`printable` contains them): it is no reviewer's."""
    if garbled := encoded_twice(hand_copied(value)):
        raise ValueError(encoded_twice_message(garbled))
    return value


def hand_copied(value: str) -> str:
    """`value`, a reviewer's copy of a source's words (an evidence passage), refused when it holds an invisible
    format character (`hidden_format`). Not when it holds text encoded twice: a passage is the source's words
    verbatim, and a provider's abstract may itself be garbled so (Crossref's often is); the copy must match it."""
    if found := hidden_format(value):
        raise ValueError(hidden_format_message(found[1], found[0]))
    return value


# The validation context that reads text sitegen kept before `hand_written` was a rule (a protocol version locked on
# the append-only ledger) under the rule it was written under: `Printable` alone. Only the files a reviewer can still
# edit are held to it.
KEPT_BEFORE_THE_RULE = {"kept": True}


def _hand_written_unless_kept(value: str, info: ValidationInfo) -> str:
    return value if info.context and info.context.get("kept") else hand_written(value)


def _hand_copied_unless_kept(value: str, info: ValidationInfo) -> str:
    return value if info.context and info.context.get("kept") else hand_copied(value)


# Before `Printable` (which drops a direction control left open): a reviewer's text is refused, never mended unseen.
HandWritten = AfterValidator(_hand_written_unless_kept)
HandCopied = AfterValidator(_hand_copied_unless_kept)  # a source's words copied (see `hand_copied`)


def visible_text(value: str) -> bool:
    """Whether a reader can see `value`: not only spaces, line breaks or invisible format characters (U+200B)."""
    if value.isascii():  # no format character is ASCII
        return not value.isspace() and value != ""
    return any(not char.isspace() and unicodedata.category(char) != "Cf" for char in value)


def visible(value: str) -> str:
    if not visible_text(value):
        raise ValueError("holds no visible text (only spaces or invisible characters)")
    return value


Visible = AfterValidator(visible)


_WEB_ADDRESS = re.compile(r"https?://\S", re.IGNORECASE)
# What may follow the scheme: an optional port after the host, a host that is a bracketed IPv6 address or a name.
_AUTHORITY = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^:\[\]]+)(?::(?P<port>[0-9]{1,5}))?")
# A host name as DNS and browsers spell one in ASCII (an internationalised name as its xn-- form).
_HOST_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?")


def web_address_problem(value: str) -> str | None:
    """Why `value` is not a web address a record may hold, as the record would hold it (`web_address`), or None."""
    cleaned, problem = _cleaned_web_address(value)
    if problem:
        return f"is not a web address: {problem}"
    if cleaned != value:
        return f"is not a web address as sitegen writes one: {cleaned} (a host outside ASCII in its xn-- form)"
    return None


def web_address(value: str | None) -> str | None:
    """`value` as a web address a page may link and a download may hold, else None: text from a provider or a file
    could say javascript:, or hide where it leads. Cleaned as a browser would read it (`_cleaned_web_address`)."""
    return _cleaned_web_address(value)[0] if value else None


def _cleaned_web_address(value: str) -> tuple[str | None, str]:
    """(the http(s) address `value` written so that it reads as where it leads, "") or (None, why it cannot be).

    Refused: an address naming a user or a password before its host (https://www.nature.com@evil.example/
    leads to evil.example, and https://user:pass@host/ would publish a password); one holding a space, a line
    break, a control or an invisible character (which a page could not show and a download would split at);
    a backslash before the path, which browsers read as "/" and other programs do not, so they disagree on
    the host (https://evil.example\\@doi.org/ leads browsers to evil.example, Python's urllib to doi.org). Cleaned,
    as a browser would send it: a host outside ASCII as its IDNA form (a look-alike, www.nаture.com with a
    Cyrillic а, shows as the xn-- name it is). What follows the host is kept as written: every writer escapes
    it for its format (a page's attribute, BibTeX's braces), and a DOI's address holds what its DOI holds
    (a SICI DOI's '<' and '>')."""
    if not _WEB_ADDRESS.match(value):
        return None, "it does not start http:// or https://"
    if not value.isprintable() or any(char.isspace() for char in value):
        return None, "it holds a space, a line break, a control or an invisible character"
    scheme, _, rest = value.partition("://")
    authority_end = next((place for place, char in enumerate(rest) if char in "/?#"), len(rest))
    authority, after = rest[:authority_end], rest[authority_end:]
    if "\\" in authority:
        return None, "it holds a backslash before its path, which browsers read as '/' and other programs do not"
    if "@" in authority:
        return None, ("it names a user or a password before its host (user@host), which hides where it leads "
                      "and can publish a password")
    found = _AUTHORITY.fullmatch(authority)
    if found is None or (found["port"] and int(found["port"]) > 65535):
        return None, "it names no host, or a host or port that cannot be"
    host = found["host"]
    if not host.startswith("["):
        if not host.isascii():
            try:
                host = host.encode("idna").decode("ascii")
            except UnicodeError:
                return None, "its host is not a name the internet's naming system can hold"
        if not _HOST_NAME.fullmatch(host):
            return None, "its host is not a name the internet's naming system can hold"
    port = f":{found['port']}" if found["port"] else ""
    return f"{scheme}://{host}{port}{after}", ""


def _a_web_address(value: str) -> str:
    if problem := web_address_problem(value):
        raise ValueError(problem)
    return value


# The addresses a record holds are linked from its pages and written into every download (RIS UR, BibTeX
# url, CSV, CSL-JSON): only web addresses as `web_address` cleans them, so no download or page can carry a
# javascript: or data: link, a user or password before a host, or a host that looks like another.
WebAddress = Annotated[str, Printable, AfterValidator(_a_web_address)]


def check_record_id(value: str) -> str:
    problem = record_id_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def check_record_ids(values: list[str]) -> list[str]:
    """`values`, each checked as `check_record_id` checks one (ValueError for the first that is no record id)."""
    problem = first_record_id_problem(values)
    if problem:
        raise ValueError(problem)
    return values


# The small values a record holds many of (its authors, its date) are pydantic dataclasses with slots:
# a sixth of a model's memory each, having no dictionary and no set of the fields given per value (the
# 100,000 records of a large review hold 800,000 names). Unknown keys are refused as by every model;
# each field is strict in itself, as a strict dataclass would refuse the dicts JSON gives.
SMALL_VALUE = ConfigDict(extra="forbid", populate_by_name=True)
StrictText = Annotated[str, StrictValue(), Printable]


@dataclass(slots=True, config=SMALL_VALUE)
class CslName:
    family: StrictText | None = None  # with its particles, as sources write it: "van der Berg"
    given: StrictText | None = None
    suffix: StrictText | None = None  # "Jr.", "III"
    literal: StrictText | None = None  # an organisation, or a name no one could split

    @model_validator(mode="after")
    def _some_name(self) -> CslName:
        if not ((self.family and visible_text(self.family)) or (self.literal and visible_text(self.literal))):
            raise ValueError("an author needs 'family' or 'literal' with visible text")
        return self

    def display(self) -> str:
        if self.literal:
            return self.literal
        return ", ".join(part for part in (self.family, self.given, self.suffix) if part)

    def __reduce__(self) -> tuple:
        # Pickled as its four parts, and unpickled by `_name` (a kept parse holds every record's authors, 450,000
        # names at 100,000 records): as a class with slots, a name was pickled with a dictionary of its fields,
        # which unpickling made and then set each field from, one by one, in nearly twice the time.
        return _name, (self.family, self.given, self.suffix, self.literal)


def _name(family: str | None, given: str | None, suffix: str | None, literal: str | None) -> CslName:
    """The CslName pickled (`CslName.__reduce__`): valid when it was pickled, so not validated again."""
    name = object.__new__(CslName)
    name.family, name.given, name.suffix, name.literal = family, given, suffix, literal
    return name


DATE_PARTS = (("year", 1, 9999), ("month", 1, 12), ("day", 1, 31))  # what a record may hold (records.jsonl)
# The years a publication can have when a source or a file gives one: the printing press to a few years ahead.
# A provider's year 1 or 9999 is its error, and an export of it could not be imported again.
PUBLICATION_YEARS = range(1450, 2101)
# A year as every reader finds one: four digits not part of a longer number (`publication_year`,
# `references.problems.written_year`).
FOUR_DIGITS = re.compile(r"(?<!\d)\d{4}(?!\d)")
# The months' English names, January first: the one table every reader of a month written in words reads.
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
               "november", "december")
# A month by its name's first three letters, as providers' XML and RIS's worded dates are read: the three letters
# of any word, so German "Juni" and "Marz" are June and March too (`references.records.month_of` is stricter).
MONTH_BY_ABBREVIATION = {name[:3]: number for number, name in enumerate(MONTH_NAMES, start=1)}


def publication_year(written: str) -> int | None:
    """The year a file's year field gives: its first four digits not part of a longer number ("2019-05-01",
    "c2019", "2019/2020"), when that is in PUBLICATION_YEARS. How import and dedupe read every file's years."""
    found = FOUR_DIGITS.search(written)
    return int(found.group()) if found and int(found.group()) in PUBLICATION_YEARS else None


def calendar_date(parts: Sequence[object]) -> list[int]:
    """[year, month, day] as far as they are a real date in PUBLICATION_YEARS: a month out of range or a day the
    month has not (30 February) ends the date there; [] without a publication year. The one rule every reader
    (providers, reference files) builds a record's date with."""
    usable: list[int] = []
    for index, part in enumerate(parts[:3]):
        if not isinstance(part, int) or isinstance(part, bool):
            break
        last = (PUBLICATION_YEARS[-1], 12, index == 2 and calendar.monthrange(usable[0], usable[1])[1])[index]
        if not (PUBLICATION_YEARS[0] if index == 0 else 1) <= part <= last:
            break
        usable.append(part)
    return usable


@dataclass(slots=True, config=SMALL_VALUE)
class CslDate:
    date_parts: list[list[Annotated[int, StrictValue()]]] = Field(alias="date-parts", min_length=1)

    @model_validator(mode="after")
    def _in_the_calendar(self) -> CslDate:
        # A date is written into exports and pages as it is ("DA  - 2020/13/40/"): only one a calendar has.
        for parts in self.date_parts:
            if not 1 <= len(parts) <= 3:
                raise ValueError("a date is [year], [year, month] or [year, month, day]")
            for value, (part, low, high) in zip(parts, DATE_PARTS, strict=False):
                if not low <= value <= high:
                    raise ValueError(f"{part} {value} is not from {low} to {high}")
            if len(parts) == 3 and parts[2] > (last := calendar.monthrange(parts[0], parts[1])[1]):  # 30 February
                raise ValueError(f"day {parts[2]} is not from 1 to {last}, the days of {parts[0]}-{parts[1]:02d}")
        return self

    @property
    def year(self) -> int | None:
        return self.date_parts[0][0] if self.date_parts and self.date_parts[0] else None

    def __reduce__(self) -> tuple:
        return _date, (self.date_parts,)  # as `CslName.__reduce__`: one date per record


def _date(date_parts: list[list[int]]) -> CslDate:
    """The CslDate pickled (`CslDate.__reduce__`): valid when it was pickled, so not validated again."""
    date = object.__new__(CslDate)
    date.date_parts = date_parts
    return date


def _a_calendar_date(parts: list[int]) -> list[int]:
    if calendar_date(parts) != parts:
        raise ValueError("a date is [year], [year, month] or [year, month, day] of a calendar")
    return parts


def identifier_problem(namespace: str, value: str) -> str | None:
    """What is wrong with an identifier a record holds in `namespace` (not in the normalised form its normaliser
    gives, `sitegen.records.ids.NORMALISERS`), or None: the one check for a record's own identifiers and for those of
    the notices it lists."""
    if NORMALISERS[namespace](value) == value or (namespace == "doi" and is_normal_doi(value)) \
            or (namespace == "arxiv" and is_normal_arxiv(value)):
        return None
    return f"{namespace} {value!r} is not in normalised form ({NORMALISERS[namespace](value) or 'not a valid identifier'})"


def _normalised(namespace: str) -> AfterValidator:
    def check(value: str) -> str:
        if problem := identifier_problem(namespace, value):
            raise ValueError(problem)
        return value
    return AfterValidator(check)


# A notice's identifiers, held as a record's own are (normalised): what a page links and an export writes.
NoticeDoi = Annotated[str, _normalised("doi")]
NoticePmid = Annotated[str, _normalised("pmid")]


# When a notice was issued, as far as its source says: [year], [year, month] or [year, month, day].
NoticeDate = Annotated[list[Annotated[int, StrictValue()]], Field(min_length=1, max_length=3),
                       AfterValidator(_a_calendar_date)]


class Update(Strict):
    """A notice a source lists against the work: a retraction, a correction or an expression of concern,
    the notice's own identifier where the source gives one, and when it was issued where the source says (Crossref's
    `updated`): a retraction dated no later than a reinstatement of the work is lifted (`retraction_lifted`), met
    in whichever record (the work's own, a notice beside it, another source's)."""

    kind: Literal["retraction", "correction", "expression-of-concern"]
    doi: NoticeDoi | None = None
    pmid: NoticePmid | None = None
    date: NoticeDate | None = Field(default=None, exclude_if=lambda date: date is None)

    @property
    def named_by(self) -> str | None:
        """The notice as a sentence names it: its DOI, else "PMID 123"; None when it gives neither."""
        return self.doi or (f"PMID {self.pmid}" if self.pmid else None)


def retraction_lifted(retracted_on: Sequence[int] | None, reinstated_on: Iterable[Sequence[int] | None]) -> bool:
    """Whether a reinstatement dated no earlier than the retraction undoes it (dates compared as far as both go).
    Without both dates the order is unknown and the retraction stands: a work wrongly shown retracted is checked by
    a human, one wrongly shown current is not. The one rule for a work's own record (Crossref's `updated-by`) and
    for a retraction notice met beside it (deduplication)."""
    def not_earlier(later: Sequence[int] | None) -> bool:
        common = min(len(later or ()), len(retracted_on or ()))
        return common > 0 and tuple(later[:common]) >= tuple(retracted_on[:common])  # type: ignore[index]
    return any(map(not_earlier, reinstated_on))


def identifier_keys(doi: str | None, pmid: str | None) -> list[tuple[str, str]]:
    """(namespace, value) for a DOI and a PMID, those given: what a work and its notices are joined by."""
    return [(namespace, value) for namespace, value in (("doi", doi), ("pmid", pmid)) if value]


class _NamesAWork(Strict):
    """Another work named by its DOI or PMID or both, at least one (its subclasses declare `doi` and `pmid`, in the
    order their files write them): a notice's work, another version of the study."""

    # Its schema says what `_names_the_work` checks, for an editor to show.
    model_config = ConfigDict(json_schema_extra={"anyOf": [{"required": ["doi"]}, {"required": ["pmid"]}]})
    unnamed: ClassVar[str]  # what a value naming neither is told; `doi` and `pmid` are each subclass's fields

    @model_validator(mode="after")
    def _names_the_work(self) -> Self:
        # A work named by nothing is no work: no reader makes one.
        if self.doi is None and self.pmid is None:
            raise ValueError(self.unnamed)
        return self

    def work_keys(self) -> list[tuple[str, str]]:
        """The identifiers (namespace, value) the work is named by: what the review finds it by."""
        return identifier_keys(self.doi, self.pmid)


class NoticeOf(_NamesAWork):
    """The work a notice is about, as the notice's source says (Crossref's `update-to` naming another work, PubMed's
    "Retraction of", "Erratum for" or "Expression of concern for"): the kind of notice, that work's DOI or PMID or
    both, as the source names it, and when the notice was issued (`update-to`'s `updated`) where the source says:
    a retraction is lifted only by a reinstatement of the work dated no earlier (`retraction_lifted`)."""

    unnamed: ClassVar[str] = "a notice's work is named by its DOI or its PMID"

    kind: Literal["retraction", "correction", "expression-of-concern", "reinstatement"]
    doi: NoticeDoi | None = Field(default=None, exclude_if=lambda doi: doi is None)
    pmid: NoticePmid | None = Field(default=None, exclude_if=lambda pmid: pmid is None)
    date: NoticeDate | None = Field(default=None, exclude_if=lambda date: date is None)


class Reinstatement(Strict):
    """A reinstatement the source lists against the work (Crossref's `updated-by` of type reinstatement, or a
    reinstatement notice met beside the work): the notice's DOI and PMID as far as known (neither when the publisher
    marked the work itself) and its date where the source gives one. Kept so that a retraction notice met later
    (deduplication) is known for one it lifted (`retraction_lifted`)."""

    doi: NoticeDoi | None = Field(default=None, exclude_if=lambda doi: doi is None)
    # A notice known by its PMID alone (a PubMed record) is named by it, never taken for the publisher's own mark.
    pmid: NoticePmid | None = Field(default=None, exclude_if=lambda pmid: pmid is None)
    date: NoticeDate | None = Field(default=None, exclude_if=lambda date: date is None)
    # The date of the (latest) retraction it lifted, where known: "retracted on D, reinstated on D2".
    retracted_on: NoticeDate | None = Field(default=None, exclude_if=lambda date: date is None)

    @property
    def named_by(self) -> str | None:
        """The notice as a sentence names it: its DOI, else "PMID 123"; None when it gives neither."""
        return self.doi or (f"PMID {self.pmid}" if self.pmid else None)


class StatedVersion(_NamesAWork):
    """Another version of the same study, as the record's source states it outright: a preprint's journal version or
    a journal article's preprint (PubMed's "Update of" and "Update in" between a preprint and its article, Crossref's
    `has-preprint` and `is-preprint-of`, the journal DOI arXiv gives a preprint), by its DOI or PMID or both. A
    journal often retitles a preprint, so the matcher (which compares titles) misses the pair; a record of the review
    holding one of these identifiers is linked to this one as another version (`other_versions`), never merged."""

    unnamed: ClassVar[str] = "another version is named by its DOI or its PMID"

    doi: NoticeDoi | None = Field(default=None, exclude_if=lambda doi: doi is None)
    pmid: NoticePmid | None = Field(default=None, exclude_if=lambda pmid: pmid is None)


def stated_versions_once(versions: Iterable[StatedVersion], own: dict[str, str]) -> list[StatedVersion]:
    """Each other version once: listings sharing a DOI or a PMID are one version (PubMed names it by both, Crossref by
    its DOI), with every identifier any of them gives, the first's where they differ. A version naming one of the
    record's `own` identifiers (namespace -> value) is the record itself (two versions merged as one work), none other."""
    mine = set(own.items())
    return [filled(group, ("doi", "pmid")) for group in joined(list(versions), StatedVersion.work_keys)
            if not any(set(version.work_keys()) & mine for version in group)]


def lifted(update: Update, reinstatements: Iterable[Reinstatement]) -> bool:
    """Whether the notice is a retraction one of the reinstatements lifted (`retraction_lifted`)."""
    return update.kind == "retraction" and retraction_lifted(update.date, [r.date for r in reinstatements])


def with_lifted(reinstatements: Iterable[Reinstatement], retractions: Iterable[Update]) -> list[Reinstatement]:
    """Each reinstatement once, with the date of the latest of `retractions` it lifted where it names none yet: what
    a page says as "retracted on D, reinstated on D2". Listings sharing a DOI or a PMID are one reinstatement,
    directly or through others (Crossref names it by DOI, PubMed by PMID, a third listing by both, in whatever order
    they come), with every identifier and date any of them gives, the first's where they differ; those naming
    neither (a publisher's mark in place) are one by their date."""
    dated = [r.date for r in retractions if r.kind == "retraction" and r.date]
    kept = []
    for group in joined(list(reinstatements), reinstatement_keys):
        known = filled(group, ("doi", "pmid", "date", "retracted_on"))
        retracted_on = known.retracted_on or max(
            (date for date in dated if retraction_lifted(date, [known.date])), default=None)
        kept.append(known.model_copy(update={"retracted_on": retracted_on}))
    return kept


def reinstatement_keys(reinstatement: Reinstatement) -> list[tuple]:
    """What listings of one reinstatement share (`with_lifted`): its DOI and PMID, else its date."""
    return identifier_keys(reinstatement.doi, reinstatement.pmid) or [("date", tuple(reinstatement.date or ()))]


Listing = TypeVar("Listing", bound=BaseModel)


def filled(group: Sequence[Listing], fields: Iterable[str]) -> Listing:
    """The first of `group` (listings of one notice), with each of `fields` it lacks from the first of the others
    giving it."""
    first = group[0]
    missing = {name: value for name in fields if getattr(first, name) is None
               and (value := next((getattr(n, name) for n in group if getattr(n, name) is not None), None)) is not None}
    return first.model_copy(update=missing) if missing else first


def retraction_stands(retracted: bool, updates: Iterable[Update], reinstatements: Iterable[Reinstatement]) -> bool:
    """Whether a record's `retracted`, with its `updates`, still stands beside the reinstatements (its own, or those a notice or
    another source gives): by `retraction_lifted`, as for a listed retraction, whether one source or several gave
    the record. A record marked retracted that lists no retraction (OpenAlex's `is_retracted`, PubMed's "Retracted
    Publication") gives no date: its retraction stands, and a record holding it and a reinstatement says both, for a
    human to decide (`retraction_disputed`), never silently either. Such a flag joining records that list
    retractions is kept as one of them, giving no notice or date (`with_undated_flag`)."""
    if not retracted:
        return False
    listed = [update for update in updates if update.kind == "retraction"]
    reinstatements = list(reinstatements)
    return not listed or not all(lifted(update, reinstatements) for update in listed)


def lists_retraction(updates: Iterable[Update]) -> bool:
    return any(update.kind == "retraction" for update in updates)


# A record's mark of retraction that lists no retraction (OpenAlex's `is_retracted`), as a listed retraction.
UNDATED_RETRACTION = Update(kind="retraction")


def with_undated_flag(updates: list[Update], flagged_undated: bool) -> list[Update]:
    """The retractions, corrections and expressions of concern of a record made of others (a merge, a work marked
    by a notice seen beside it), with UNDATED_RETRACTION where one of them was marked retracted listing no
    retraction (`flagged_undated`) and the record lists retractions all the same: otherwise the flag would be taken
    for one of those, and lifted with it by a reinstatement, where alone it stands (`retraction_stands`)."""
    if flagged_undated and lists_retraction(updates) and UNDATED_RETRACTION not in updates:
        return [*updates, UNDATED_RETRACTION]
    return updates


def retracted_again(meta: RecordMeta) -> list[Update]:
    """The retractions the record lists that stand after every reinstatement it holds: dated, with every
    reinstatement dated, and lifted by none (`lifted`). Each makes the work retracted again, whatever else a source
    says; with a reinstatement or a retraction giving no date the order is unknown and none is known to."""
    if not all(reinstatement.date for reinstatement in meta.reinstatements):
        return []
    return [update for update in meta.updates
            if update.kind == "retraction" and update.date and not lifted(update, meta.reinstatements)]


def retraction_disputed(meta: RecordMeta) -> bool:
    """A record marked retracted (as `retraction_stands` decided) that holds a reinstatement all the same, with no
    retraction known to come after it (`retracted_again`): one source (giving no date) says it is retracted, another
    that a retraction was lifted, and the flag may be that very retraction. An open item for a human. One retracted
    again after its reinstatement is retracted, not disputed; one not marked retracted was reinstated."""
    return meta.retracted and bool(meta.reinstatements) and not retracted_again(meta)


class RecordMeta(Strict):
    """sitegen's own metadata about a record, kept under CSL-JSON's `custom`."""

    model_config = ConfigDict(frozen=True)  # as Record's

    openalex: str | None = None
    arxiv: str | None = None
    # A content key (sitegen.records.ids.content_ref) for an imported reference with no published identifier.
    ref: str | None = None
    sources: list[Source] = Field(default_factory=list)
    publication_types: list[Text] = Field(default_factory=list)
    open_access: bool | None = None
    license: Text | None = None
    fulltext_url: WebAddress | None = None
    retracted: bool = False
    # Retractions, corrections and expressions of concern the source lists for this work (Crossref's
    # `updated-by`, PubMed's comments and corrections); omitted when there are none.
    updates: list[Update] = Field(default_factory=list, exclude_if=lambda updates: not updates)
    # For a notice, the works it is about (deduplication marks each such work with it: a retraction notice seen
    # is a retracted work known, whatever the work's own record says); omitted when there are none.
    notice_of: list[NoticeOf] = Field(default_factory=list, exclude_if=lambda works: not works)
    # Reinstatements the source lists against the work (a retraction they lifted is neither in `updates` nor makes
    # the work `retracted`, whether the source lists it or a retraction notice seen does); omitted when none.
    reinstatements: list[Reinstatement] = Field(default_factory=list, exclude_if=lambda listed: not listed)
    # Notes left by deduplication when sources disagree about identifiers; omitted when there are none.
    conflicts: list[Text] = Field(default_factory=list, exclude_if=lambda notes: not notes)
    # Ids of the other records of the same study in another version: a preprint's journal version, or
    # the preprint of a journal article (seed 002). Linked, never merged; omitted when there are none.
    other_versions: list[Text] = Field(default_factory=list, exclude_if=lambda ids: not ids)
    # Other versions of the same study that the source states (`StatedVersion`), whether or not the review holds
    # them: the review links those it holds (`other_versions`); omitted when there are none.
    stated_versions: list[StatedVersion] = Field(default_factory=list, exclude_if=lambda listed: not listed)


TITLE_LIMIT = 5000  # the most characters a record's title holds: far more than any work's

# The most characters a record's abstract holds. A longer one is no abstract but a whole paper or a file pasted into
# the field: a record read from a provider or a reference file is kept without it, and the run or import says so
# (`leaving_out_overlong_abstracts`). It is left out, not cut: an abstract is taken for the record's own, whole (a
# passage said to be from it and missing from it is a contradiction), and its missing end would be read as such.
ABSTRACT_LIMIT = 200_000
_overlong_abstracts: ContextVar[list[str] | None] = ContextVar("overlong_abstracts", default=None)


def overlong_abstract(abstract: str | None, work: str) -> str | None:
    """What to say of `work` when `abstract` is longer than a record holds (ABSTRACT_LIMIT), else None."""
    if abstract is None or len(abstract) <= ABSTRACT_LIMIT:
        return None
    return (f"the abstract of {work} is {len(abstract):,} characters long, more than an abstract can be "
            f"({ABSTRACT_LIMIT:,}); the record is kept without it")


@contextmanager
def leaving_out_overlong_abstracts() -> Iterator[list[str]]:
    """Records made within it that are given an abstract longer than ABSTRACT_LIMIT are made without it, and
    the list it gives says so of each (`overlong_abstract`). Outside it such a record is refused, as a line of
    records.jsonl holding one is (sitegen never writes one). A context rather than an argument: every provider's
    converter makes its records with `Record(...)`, which takes no validation context, and each is called
    within one (sources.base.to_records and to_record), so no provider needs to know of the limit."""
    notes: list[str] = []
    token = _overlong_abstracts.set(notes)
    try:
        yield notes
    finally:
        _overlong_abstracts.reset(token)


class Record(Strict):
    """One bibliographic record as CSL-JSON, with every known identifier kept."""

    # Frozen: a record is changed by making another (`model_copy(update=...)`), never in place, which lets
    # records read from one file share their sets of fields given (`share_fields_sets`).
    model_config = ConfigDict(frozen=True)

    id: str
    type: Text = "article-journal"
    title: Annotated[str, StringConstraints(min_length=1, max_length=TITLE_LIMIT), Printable, Visible]
    author: list[CslName] = Field(default_factory=list, max_length=10_000)
    container_title: Text | None = Field(default=None, alias="container-title")
    issued: CslDate | None = None
    volume: Text | None = None
    issue: Text | None = None
    page: Text | None = None
    DOI: str | None = None
    PMID: str | None = None
    PMCID: str | None = None
    URL: WebAddress | None = None
    abstract: Annotated[str, StringConstraints(max_length=ABSTRACT_LIMIT), Printable] | None = None
    custom: RecordMeta = Field(default_factory=RecordMeta)  # a factory: a default instance is deep-copied

    @field_validator("abstract", mode="before")
    @classmethod
    def _overlong_abstract_left_out(cls, abstract: Any, info: ValidationInfo) -> Any:
        notes = _overlong_abstracts.get()
        if notes is not None and isinstance(abstract, str):
            if note := overlong_abstract(abstract, info.data.get("id", "the work")):
                notes.append(note)
                return None
        return abstract

    def identifiers(self) -> dict[str, str]:
        """The identifiers the work is published under (what is exported and what the matcher compares)."""
        values = {"doi": self.DOI, "pmid": self.PMID, "pmcid": self.PMCID,
                  "openalex": self.custom.openalex, "arxiv": self.custom.arxiv}
        return {namespace: value for namespace, value in values.items() if value}

    def identity_keys(self) -> dict[str, str]:
        """Its identifiers and its content key: what the identity graph joins records by and what its id is
        chosen from. A ref is kept out of `identifiers`: two refs differ whenever a page or a year does,
        which says nothing against two references being one work."""
        keys = self.identifiers()
        if self.custom.ref:
            keys["ref"] = self.custom.ref
        return keys

    @property
    def year(self) -> int | None:
        return self.issued.year if self.issued else None

    def keys_given(self) -> int:
        """How many keys the JSON this record was read from gave, at least: the fields given to it and
        to its metadata and notices, its date's one, each name part of its authors that is not null.
        (`sitegen.review.parsing.model_lines` compares it with the keys the line names.) A field the
        record gains must be counted here only when a reader cannot have made it up."""
        custom = self.custom
        count = len(self.model_fields_set) + len(custom.model_fields_set) + (self.issued is not None)
        for update in custom.updates:
            count += len(update.model_fields_set)
        for work in custom.notice_of:
            count += len(work.model_fields_set)
        for reinstatement in custom.reinstatements:
            count += len(reinstatement.model_fields_set)
        for version in custom.stated_versions:
            count += len(version.model_fields_set)
        for name in self.author:
            count += ((name.family is not None) + (name.given is not None) + (name.suffix is not None)
                      + (name.literal is not None))
        return count

    @model_validator(mode="after")
    def _identifiers_normalised_and_id_derived(self) -> Record:
        check_record_id(self.id)
        keys = self.identity_keys()
        for namespace, value in keys.items():
            if problem := identifier_problem(namespace, value):
                raise ValueError(problem)
        # The id is chosen once, when the record is first seen (the highest-priority identifier
        # then known), and never changes: decisions and evidence refer to it. A record that
        # later gains a DOI keeps its id; it must only ever be one of the record's own identifiers.
        # It is record_id({namespace: value}) of one of them exactly when it names that value in its
        # namespace: a prefixed id has its ':' before any '/', a DOI none there.
        id_namespace, id_native = parse_record_id(self.id)  # well-formed, as checked first
        if keys.get(id_namespace) != id_native and not (id_namespace == "arxiv" and _same_arxiv_paper(id_native, keys)):
            own = {record_id({namespace: value}) for namespace, value in keys.items()}
            raise ValueError(f"id {self.id!r} is not one of the record's own identifiers "
                             f"({', '.join(sorted(own)) or 'it has none'})")
        return self


def _same_arxiv_paper(id_native: str, keys: dict[str, str]) -> bool:
    """Whether the arXiv id `id_native` names the arXiv paper among the record's identity `keys`, written another
    way: an arXiv id kept lower-cased by an earlier sitegen (math.gt/0309136) names the paper its record now holds
    as arXiv writes it (math.GT/0309136)."""
    return "arxiv" in keys and normalise_arxiv(keys["arxiv"]) == normalise_arxiv(id_native)


def share_fields_sets(record: Record, shared: dict[frozenset[str], set[str]]) -> Record:
    """`record`, its set of the fields it was given (pydantic's, which `model_copy` copies before changing) and
    its metadata's each the one set in `shared` holding those fields. A review's records are given the same few
    sets of fields: at 100,000 records their own sets were 90 MB, a tenth of a loaded review, and a copy in each
    process forked to render the site. The kept parse (`sitegen.review.kept`) pickles a shared set once."""
    for model in (record, record.custom):
        fields = model.__pydantic_fields_set__
        object.__setattr__(model, "__pydantic_fields_set__", shared.setdefault(frozenset(fields), fields))
    return record
