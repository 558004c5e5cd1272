"""Does the cited work exist as cited, and what is its standing? Axes (a) identity and (b) status.

Each index is asked for the record by the identifier it holds works under (Crossref by DOI; OpenAlex by
its id, a DOI or a PMID; PubMed by PMID); a reference with no identifier the index knows is looked up by
its title instead. What comes back is compared with what is cited (title, first author, year, journal),
and the answers make the verdicts, never a boolean:

- identity: `mismatch` when an identifier resolves to another work (and no index asked by it holds the work
  as cited); `verified` when two indexes or more hold the work as cited, every index asked answered, and none
  does not know an identifier cited; `unresolvable` when every index asked answered and none holds it;
  otherwise `inconclusive` (a source errored or was rate limited, only one index holds the paper, the indexes
  disagree on what an identifier names, or the work found agrees only in part), an open item for a human,
  never a refusal.
- status: `retracted`, `expression-of-concern` or `corrected` when any index holding the work says so
  (with the notice's identifier); `current` when every index asked answered and those holding the work list
  nothing; otherwise `inconclusive`. A failed or rate-limited lookup is never read as "not retracted".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from rapidfuzz import fuzz

from sitegen.errors import quoted_text
from sitegen.records.joins import joined
from sitegen.records.matching import (
    PROBABLE_TITLE,
    SAME_TITLE,
    Work,
    authors_agree,
    first_pages,
    journals_differ,
    record_work,
    subtitle_only,
    title_score,
    volumes,
)
from sitegen.records.model import Record, Reinstatement, identifier_keys, lifted, reinstatement_keys, with_lifted
from sitegen.records.names import in_two_scripts, incomparable, names_no_one, written
from sitegen.records.notices import NOTICE_TYPES, OWN_KINDS, notice_kind
from sitegen.records.preprints import is_preprint
from sitegen.records.providers import label
from sitegen.records.scripts import TRANSLITERATED, main_script, script_words
from sitegen.records.titles import matched_title, translated
from sitegen.references.fields import LIFTING, iso_date
from sitegen.review.models import REFUSAL_GRADE, SourceAnswer, VerificationPayload
from sitegen.sources import crossref, openalex, pubmed
from sitegen.sources.http import Fetcher
from sitegen.sources.outcome import SourceOutcome
from sitegen.sources.settings import SourceSettings

SOURCES = ("crossref", "openalex", "pubmed")
TITLE_SEARCH_RESULTS = 5  # works read from a title search: the cited work, if indexed, is among the first
UNRELATED_TITLE = 60.0  # below this normalised-title similarity two titles name two works
UPDATE_ORDER = ("retraction", "expression-of-concern", "correction")  # the gravest notice decides the status
STATUS_OF_UPDATE = {"retraction": "retracted", "expression-of-concern": "expression-of-concern",
                    "correction": "corrected"}

# "related": another work the cited one is bound to (its book or chapter, another version of it): not the work, not a
# mis-citation of an unrelated one, and never holding the work for its status.
Agreement = Literal["same", "different", "unclear", "related"]


@dataclass(frozen=True)
class Answer:
    """One index's answer about one cited record: the work it holds under the identifier (or the closest
    by title), how that work agrees with the citation, and the outcome the answer rests on."""

    source: str
    asked: str  # "DOI 10.1/x", "PMID 123", "title …"
    by_title: bool
    outcome: SourceOutcome
    found: Record | None = None
    agreement: Agreement | None = None
    details: list[str] = field(default_factory=list)
    elsewhere: str | None = None  # the agency that registered the DOI, when it is not this index's
    # The index answered the identifier with another record, one that does not carry it (OpenAlex merged a preprint
    # into its journal version, or reassigned an id): what it gave is judged, but never holds the work as cited.
    instead: bool = False

    @property
    def answered(self) -> bool:
        """The index said what it holds under what was asked: an `ok` outcome, unless it holds something there no
        record could be made of (a work without a title: `doubt`, nothing found), which is no "not found"."""
        return self.outcome.status == "ok" and (self.found is not None or self.outcome.doubt is None)

    @property
    def negative(self) -> bool:
        """The index answered that it does not know the identifier it was asked for, and could have known it."""
        return self.answered and self.found is None and not self.by_title and self.elsewhere is None

    @property
    def holds_the_work(self) -> bool:
        """The index holds the work cited: found as cited, or found by the cited identifier agreeing in part
        (an identifier names one work, whatever a citation says of its pages or journal)."""
        return self.found is not None and not self.instead and (self.agreement == "same" or (
            self.agreement == "unclear" and not self.by_title))

    def as_payload(self) -> SourceAnswer:
        if self.outcome.status == "rate_limited":
            answer = "rate-limited"
        elif not self.answered:
            answer = "no-answer"
        elif self.elsewhere:
            answer = "elsewhere"
        elif self.found is None:
            answer = "not-found"
        else:
            answer = {"same": "found", "unclear": "partial", "related": "partial",
                      "different": "different-work"}[self.agreement]
        warning = "; ".join(filter(None, [*self.outcome.warnings, self.outcome.doubt]))[:2000] or None
        detail = "; ".join(self.details)[:2000] or (warning if not self.answered else None)
        return SourceAnswer(source=self.source, answer=answer, asked=self.asked[:500], detail=detail)


@dataclass(frozen=True)
class CitationVerdicts:
    """The identity and status verdicts on one cited record, and each index's answer."""

    record: Record
    identity: VerificationPayload
    status: VerificationPayload
    answers: list[Answer]

    @property
    def rate_limited(self) -> bool:
        """Some index was rate limited: ask again later rather than act on an open verdict."""
        return any(answer.outcome.status == "rate_limited" for answer in self.answers)

    @property
    def refused_access(self) -> list[str]:
        """The indexes that refused access (HTTP 401/403, most likely a missing or wrong key): as a rate limit, a
        reason to check again once that is fixed rather than to act on an open verdict."""
        return sorted({answer.source for answer in self.answers if answer.outcome.status == "auth_error"})

    @property
    def refusal_grade(self) -> bool:
        return self.identity.refusal_grade or self.status.refusal_grade

    @property
    def resolved(self) -> Record | None:
        """For a mismatch, the work the cited identifier resolves to (what the citation should say)."""
        return next((a.found for a in self.answers if a.agreement == "different" and not a.by_title), None)


# --------------------------------------------------------------------------- comparing a citation with a work


def _describe(record: Record) -> str:
    author = record.author[0].family or record.author[0].literal if record.author else None
    parts = [quoted_text(record.title[:200]), author, str(record.year) if record.year else None, record.container_title]
    return ", ".join(part for part in parts if part)


# How publishers mark a retracted work in its own title ("RETRACTED ARTICLE: …", "Retracted: …", "WITHDRAWN: …"):
# the work itself, retracted, not a notice about it. The spaces around a bracket are one run when there is no
# bracket: as two (\s*[\[(]?\s*), a run was split every way, so a 5,000-character title took a second.
RETRACTED_TITLE = re.compile(r"^\s*(?:[\[(]\s*)?(?:retracted(?:\s+article)?|withdrawn)\s*(?:[\])]\s*)?[:.\-–—]\s*",
                             re.IGNORECASE)


def marked_retracted(record: Record) -> bool:
    return bool(RETRACTED_TITLE.match(record.title))


def _unmarked(record: Record) -> Record:
    """The record with a retraction mark taken off its title, so that the title compares as the work's."""
    title = RETRACTED_TITLE.sub("", record.title, count=1)
    return record.model_copy(update={"title": title}) if title != record.title and title.strip() else record


# notice_kind's kinds in words: its "retraction" is a withdrawal's, an expression of concern's or a reinstatement's
# notice too, so these words are for a notice told only by its title ("Withdrawal: …"); see `notice_words`.
NOTICE_WORDS = {"retraction": "retraction, withdrawal or expression of concern", "erratum": "correction"}
# A notice's own kind in words, as a publication type (OWN_KINDS) or the works it is about (a `NoticeOf` kind, as
# Crossref's `update-to`) name it: a reinstatement notice, which lifts a retraction, is never called a retraction's,
# withdrawal's or concern's.
OWN_NOTICE_WORDS = {name: own.replace("-", " ")
                    for name, own in {**{own: own for own in OWN_KINDS.values()}, **OWN_KINDS}.items()}
# The own kinds each of `notice`'s kinds stands for, in the order they are said.
NOTICE_FAMILIES = {"retraction": ("retraction", "expression of concern", "reinstatement"), "erratum": ("correction",)}


def notice(record: Record) -> str:
    """The kind of notice a record is ("retraction", "erratum", ...), told by its title or an unambiguous
    publication type (NOTICE_TYPES: others, such as "Comment", "Letter" or "Editorial", differ between indexes
    for one work, so they never decide); "" for a work."""
    return notice_kind(record.title, [t for t in record.custom.publication_types if t.strip().lower() in NOTICE_TYPES])


def notice_words(record: Record) -> str:
    """The kind of notice the record is, in words ("reinstatement", "retraction and expression of concern"): its
    own kinds where its publication types or the works it is about name them, else its `notice` kind's words (a
    title's "Withdrawal:" says no finer); "" for a work."""
    kind = notice(record)
    if not kind:
        return ""
    named = {OWN_NOTICE_WORDS.get(said.strip().lower()) for said in
             [*record.custom.publication_types, *(work.kind for work in record.custom.notice_of)]}
    family = NOTICE_FAMILIES.get(kind, ())  # only the kinds of the notice `notice` told: a reply is a reply
    return " and ".join(words for words in family if words in named) or NOTICE_WORDS.get(kind, kind)


def agreement(cited: Record, found: Record) -> tuple[Agreement, list[str]]:
    """Whether the work an index holds is the work cited: `same` (title, year, first author, and where both
    give them journal, volume and first page agree), `different` (an unrelated title, or a notice where a work
    is cited), `related` (the book of a cited chapter, or a chapter of a cited book) or `unclear` (they agree only
    in part: a human looks). An unrelated title stays `unclear`, not `different`, only when everything else
    corroborates one work: first author, year, volume and first page, or first author and year where one title is
    marked a translation (MEDLINE's "[Translated title]." beside the work's title in its own language)."""
    return _agreement(_compared(cited, found))


class _Compared(NamedTuple):
    """A citation and a work found, each without a retraction mark on its title, as works, and how their authors
    agree: worked out once for every comparison of the two (`authors_agree` compares every name fuzzily)."""

    cited: Record
    found: Record
    a: Work
    b: Work
    people: Literal["all", "first", "none", "unknown"]
    apart: str | None  # why the first authors cannot be compared, when they do not agree (`_incomparable_first_authors`)


def _compared(cited: Record, found: Record) -> _Compared:
    cited, found = _unmarked(cited), _unmarked(found)
    a, b = record_work(cited), record_work(found)
    people = authors_agree(a, b)
    return _Compared(cited, found, a, b, people,
                     _incomparable_first_authors(a, b) if people in ("none", "unknown") else None)


def _agreement(compared: _Compared) -> tuple[Agreement, list[str]]:
    cited, found, a, b, people, apart = compared
    if not a.title or not b.title:
        return "unclear", ["a title is missing, so the works cannot be compared"]
    score = title_score(a, b)
    details = [f"title similarity {score:.0f}/100"]
    # first authors that cannot be compared (an organisation, another script) are no discrepancy, but corroborate
    # nothing either
    if apart:
        details.append(apart)
    if notice(cited) != notice(found):
        kind = notice_words(found)
        return "different", [f"it is {f'a notice ({kind})' if kind else 'a work, not a notice'}: {_describe(found)}"]
    problems = _discrepancies(compared)
    corroborated = not problems and people not in ("none", "unknown") and a.year is not None and b.year is not None
    either_translated = translated(cited.title) or translated(found.title)
    if score < UNRELATED_TITLE and corroborated and either_translated:
        return "unclear", details + [f"the titles differ, one marked a translation: indexed as {_describe(found)}; "
                                     "a human checks that one translates the other"]
    if score < UNRELATED_TITLE and (scripts := _title_scripts(cited.title, found.title)):
        # a title in Cyrillic and its English translation share no letter: dissimilar, they still may be one work's
        return "unclear", details + [f"the titles are written in {scripts}, so they cannot be compared: indexed as "
                                     f"{_describe(found)}; a human checks that one translates the other"] + problems
    if score < UNRELATED_TITLE and (part := _book_and_part(cited, found) or _stated_version(cited, found)):
        return "related", details + [part]
    if score < UNRELATED_TITLE and not (corroborated and volumes(a, b) == first_pages(a, b) == "equal"):
        return "different", [f"it is {_describe(found)} (title similarity {score:.0f}/100)"]
    subtitle = subtitle_only(a.title, b.title) and people not in ("none", "unknown") and a.year is not None
    # first authors in two scripts that do not agree by transliteration are an open item, never an agreement
    scripts_apart = people in ("none", "unknown") and _scripts_apart(a, b) is not None
    if score >= SAME_TITLE or (subtitle and not problems):
        return ("same", details) if not problems and not scripts_apart else ("unclear", details + problems)
    return "unclear", details + [f"the titles differ: indexed as {_describe(found)}"] + problems


def _other_version(cited: Record, found: Work) -> list[str]:
    """Where the citation names a journal and the identifier a preprint, or the other way round: two versions of
    one study, which a DOI shared by both cannot tell apart (the cited record's own DOI makes it a preprint, so
    only the journal it names says which version the citation means)."""
    if not cited.container_title:
        return []
    cited_preprint = is_preprint(None, cited.custom.publication_types, cited.container_title)
    if cited_preprint == found.preprint:
        return []
    return [f"the citation names {'a preprint server' if cited_preprint else 'a journal'} "
            f"({cited.container_title[:200]}), the work indexed is {'a preprint' if found.preprint else 'not a preprint'}"
            ": another version of the study"]


def _book_and_part(cited: Record, found: Record) -> str | None:
    """Whether the citation and the work found are a book and a part of it (a chapter, a conference paper): the DOI
    of the book given for its chapter, or a chapter's for the book. One work inside the other, not a fabrication:
    a human sees which DOI the citation means."""
    def same(one: str | None, other: str | None) -> bool:
        return bool(one and other) and fuzz.ratio(matched_title(one), matched_title(other)) >= SAME_TITLE
    if same(cited.title, found.container_title):
        return f"the identifier names a part of the work cited (a chapter or paper in it): {_describe(found)}"
    if same(cited.container_title, found.title):
        return f"the identifier names the work the cited part appears in (the book, not the chapter): {_describe(found)}"
    return None


def _stated_version(cited: Record, found: Record) -> str | None:
    """Whether a source states the work found another version of the work cited, or the reverse (`stated_versions`:
    PubMed's "Update of", Crossref's `is-preprint-of`): a preprint and its journal version, which a journal often
    retitles, so their titles tell nothing. The same study, not a mis-citation of an unrelated work: a human sees
    which version the citation means."""
    for one, other, says in ((found, cited, "the index"), (cited, found, "the citation's record")):
        named = set(identifier_keys(other.DOI, other.PMID))
        if any(named & set(version.work_keys()) for version in one.custom.stated_versions):
            return (f"{says} states the two are versions of one study (a preprint and its journal version): "
                    f"indexed as {_describe(found)}")
    return None


def _incomparable_first_authors(a: Work, b: Work) -> str | None:
    """Why the first authors cannot be compared (`names.incomparable`, as deduplication reads them), when either is
    an organisation: two groups go by too many names, and a group cited where the index lists a person (its first
    named member), or the reverse, names no one the other does. So too for names written in two scripts that no
    standard transliteration of one into the other makes agree (`same_person`): Chinese characters and their pinyin
    are one name or two, for all sitegen can tell. Neither an agreement nor a discrepancy; None when they can be
    compared."""
    if (apart := _scripts_apart(a, b)) is not None:
        return apart
    if not a.authors or not b.authors or not incomparable(a.authors[0], b.authors[0]):
        return None
    if a.authors[0].organisation and b.authors[0].organisation:
        return "the first authors are organisations, named too differently to compare"
    cited, indexed = ("an organisation", "a person") if a.authors[0].organisation else ("a person", "an organisation")
    return (f"the first author cannot be compared: the citation names {cited} ({a.authors[0].family}), the index "
            f"{indexed} ({b.authors[0].family})")


def _title_scripts(cited: str, indexed: str) -> str | None:
    """"Cyrillic and Latin letters" when the two titles are written in two scripts, else None."""
    scripts = main_script(cited), main_script(indexed)
    return f"{script_words(scripts[0])} and {script_words(scripts[1])}" if all(scripts) and len(set(scripts)) > 1 \
        else None


def _scripts_apart(a: Work, b: Work) -> str | None:
    """Why the first authors, written in two scripts and not agreeing by a standard transliteration, cannot be
    compared (`names.incomparable`); None when they can be, or either work names none."""
    if not a.authors or not b.authors:
        return None
    cited, indexed = a.authors[0], b.authors[0]
    if not (in_two_scripts(cited, indexed) and incomparable(cited, indexed)):
        return None
    scripts = {cited.script, indexed.script}
    how = ("no standard transliteration of one spells the other" if "latin" in scripts and scripts & TRANSLITERATED
           else "sitegen does not transliterate names from that script")
    return (f"the first author cannot be compared: the citation writes it in {script_words(cited.script)} "
            f"({cited.written}), the index in {script_words(indexed.script)} ({indexed.written}), and {how}; a "
            "human checks that they name one person")


def _discrepancies(compared: _Compared) -> list[str]:
    """Where a citation and the work found disagree, beyond the title: each makes the citation a
    mis-description a human looks at."""
    a, b = compared.a, compared.b
    found = []
    if a.numbers != b.numbers:
        found.append("the titles name different numbers (a part, a phase, a type)")
    if a.year is not None and b.year is not None and abs(a.year - b.year) > 1:
        found.append(f"year cited as {a.year}, indexed as {b.year}")
    if compared.people == "none" and not compared.apart:
        found.append(f"first author cited as {a.authors[0].family}, indexed as {b.authors[0].family}")
    if journals_differ(a.journal, b.journal) and not volumes(a, b) == first_pages(a, b) == "equal":
        # a journal goes by many names ("PNAS", a translated name): one volume and page settle it
        found.append("the journal cited is not the journal indexed")
    if volumes(a, b) == "differ":
        found.append(f"volume cited as {a.volume}, indexed as {b.volume}")
    if first_pages(a, b) == "differ":
        found.append(f"first page cited as {a.first_page}, indexed as {b.first_page}")
    return found


# --------------------------------------------------------------------------- asking the indexes


def _from_lookup(source: str, asked: str, cited: Record, outcome: SourceOutcome) -> Answer:
    found = outcome.records[0] if outcome.records else outcome.instead
    if outcome.status != "ok" or found is None:
        return Answer(source, asked, False, outcome)
    merged = []
    if found is outcome.instead:
        # Another record, but one carrying another identifier cited (OpenAlex merged the id cited into the record of
        # the work under its DOI): the work as cited under that identifier. Else it is no answer for the work cited.
        shared = sorted(name.upper() for name, value in found.identifiers().items()
                        if name != "openalex" and cited.identifiers().get(name) == value)
        if not shared:
            return _answered_instead(source, asked, cited, outcome, found)
        merged = [f"{label(source)} answers {asked} with {found.custom.openalex or found.id}, merged with it, which "
                  f"carries the {' and '.join(shared)} cited"]
    verdict, details = agreement(cited, found)
    details = merged + details
    if verdict in ("same", "unclear") and (version := _other_version(cited, record_work(found))):
        verdict, details = "related", details + version  # a title search tells versions apart its own way
    return Answer(source, asked, False, outcome, found, verdict, details)


def _answered_instead(source: str, asked: str, cited: Record, outcome: SourceOutcome, other: Record) -> Answer:
    """An index that answers the identifier with another record, one not carrying it (OpenAlex merged a preprint
    into its journal version, or reassigned an id): an answer, not an outage, and asked again it answers the same.
    It is no proof the identifier names another work, nor is it the work cited: a version of the work (`agreement`
    finds it the same, in part or in whole) is `related`, anything else `unclear`, both open items naming it."""
    verdict, details = agreement(cited, other)
    gave = (f"{label(source)} answers {asked} with another record, {other.id}, not carrying it (the two were "
            f"merged, or the identifier reassigned): {_describe(other)}")
    return Answer(source, asked, False, outcome, other, "unclear" if verdict == "different" else "related",
                  [gave, *details], instead=True)


def _from_title_search(source: str, cited: Record, outcome: SourceOutcome) -> Answer:
    """The closest work a title search found; a title search that finds only other works found nothing."""
    # In repr's quotes, as ever: what was asked is part of a recorded verdict's essence, which a replay compares.
    asked = f"title {cited.title[:200]!r}"
    if outcome.status != "ok":
        return Answer(source, asked, True, outcome)
    rated = [(found, *_title_agreement(cited, found)) for found in outcome.records[:TITLE_SEARCH_RESULTS]]
    rank = {"same": 0, "unclear": 1}
    cited_work = record_work(cited)
    # A namesake found by author and year under another title is not the work: a title search finds by title. Each
    # title is scored once; the order found breaks a tie.
    best = min(((rank[verdict], -score, index) for index, (found, verdict, _) in enumerate(rated)
                if verdict in rank and (score := title_score(cited_work, record_work(found))) >= PROBABLE_TITLE),
               default=None)
    if best is None:
        closest = [f"closest: {_describe(found)}" for found, _, _ in rated[:1]]
        return Answer(source, asked, True, outcome, details=closest)
    found, verdict, details = rated[best[2]]
    return Answer(source, asked, True, outcome, found, verdict, details)


def _title_agreement(cited: Record, found: Record) -> tuple[Agreement, list[str]]:
    """`agreement` for a work found by a title search: `same` only when nothing is left unconfirmed."""
    compared = _compared(cited, found)
    verdict, details = _agreement(compared)
    if verdict == "same" and (unconfirmed := _unconfirmed(compared)):
        return "unclear", details + [reason for reason in unconfirmed if reason not in details]  # said once
    return verdict, details


def _unconfirmed(compared: _Compared) -> list[str]:
    """What a work found by its title alone leaves unconfirmed: a title search finds works of like titles (another
    paper of that title, the preprint of a journal article), so the work found is the work cited only when the first
    author and the year (one apart at most) agree too, and both are a preprint or neither is. A citation or a work
    without them is not contradicted, but not confirmed either."""
    a, b = compared.a, compared.b
    missing = []
    if not a.authors or not b.authors:
        missing.append(f"the first author cannot be compared: {'the citation' if not a.authors else 'the index'} "
                       "gives none")
    elif compared.apart:
        missing.append(compared.apart)
    if a.year is None or b.year is None:
        missing.append(f"the year cannot be compared: {'the citation' if a.year is None else 'the index'} gives none")
    if a.preprint != b.preprint:
        missing.append(f"the work found is {'a preprint' if b.preprint else 'not a preprint'}, the work cited "
                       f"{'is' if a.preprint else 'is not'}: another version of it")
    return missing


def _held_as_cited(cited: Record, answer: Answer) -> str:
    """What an index holding the work as cited was compared on, in words: only what both sides give and agree
    on, and what could not be compared. A work found by its identifier is the work whatever a citation leaves
    out (the identifier backs the match), so a citation without a year is still verified: the reason then must
    not say that a year agreed."""
    _, _, a, b, people, apart = _compared(cited, answer.found)
    agreed = ["title" if title_score(a, b) >= SAME_TITLE else "title (but for a subtitle)"]
    lacking: dict[str, list[str]] = {"the citation": [], "the index": []}
    unchecked = []
    if not a.authors or not b.authors:
        lacking["the citation" if not a.authors else "the index"].append("no first author")
    elif people in ("none", "unknown"):  # an organisation, another script: not a discrepancy, nor an agreement
        unchecked.append(apart or "the first authors cannot be compared")
    else:
        agreed.append("first author")
    if a.year is None or b.year is None:
        lacking["the citation" if a.year is None else "the index"].append("no year")
    else:
        agreed.append("year" if a.year == b.year else "year (one apart: online and in print)")
    unchecked += [f"{side} gives {' and '.join(missing)} to compare" for side, missing in lacking.items() if missing]
    fields = agreed[0] if len(agreed) == 1 else f"{', '.join(agreed[:-1])} and {agreed[-1]}"
    found = (f"a title search of {label(answer.source)} finds" if answer.by_title else
             f"in {label(answer.source)}, {answer.asked} resolves to")
    return ", ".join([f"{found} a work whose {fields} agree{'s' if len(agreed) == 1 else ''} with the citation's",
                      *unchecked])


def _title_query(record: Record) -> str:
    """The words a title search asks for: the title, the first author's family name (not a placeholder's words:
    "No authorship, indicated" names no one, `names.names_no_one`) and the year."""
    first = record.author[0] if record.author else None
    author = first.family or "" if first and not names_no_one(written(first)) else ""
    return " ".join(part for part in (record.title, author, str(record.year or "")) if part)


def ask(fetcher: Fetcher, settings: SourceSettings, record: Record, source: str) -> Answer | None:
    """One index's answer about `record`, or None when the index is not asked (PubMed without a PMID:
    it holds biomedical literature only, so its silence on another work says nothing)."""
    searching = settings.model_copy(update={"max_records": TITLE_SEARCH_RESULTS})
    if source == "crossref":
        if record.DOI:
            answer = _from_lookup(source, f"DOI {record.DOI}", record, crossref.lookup(fetcher, settings, record.DOI))
            if answer.negative:  # Crossref cannot know a DOI another agency registered: ask which one did
                registered, outcome = crossref.agency(fetcher, settings, record.DOI)
                hashes = answer.outcome.snapshot_hashes + outcome.snapshot_hashes
                both = answer.outcome.model_copy(update={"snapshot_hashes": hashes})
                if outcome.status != "ok":
                    return Answer(source, answer.asked, False, both, details=[
                        "not in Crossref, and its agency lookup did not answer: the DOI may be another agency's"])
                if registered and registered != "crossref":
                    return Answer(source, answer.asked, False, both, elsewhere=registered,
                                  details=[f"registered with {registered}, not Crossref"])
                detail = "no registration agency knows this DOI" if registered is None else "not in Crossref"
                return Answer(source, answer.asked, False, both, details=[detail])
            return answer
        outcome = crossref.search(fetcher, searching, {"query.bibliographic": _title_query(record)},
                                  rows=TITLE_SEARCH_RESULTS)
        return _from_title_search(source, record, outcome)
    if source == "openalex":
        for namespace, value in (("OpenAlex id", record.custom.openalex), ("DOI", record.DOI),
                                 ("PMID", record.PMID)):
            if value:
                return _from_lookup(source, f"{namespace} {value}", record, openalex.lookup(fetcher, settings, value))
        return _from_title_search(source, record, openalex.search(fetcher, searching, {"search": record.title}))
    if source == "pubmed":
        if record.PMID:
            return _from_lookup(source, f"PMID {record.PMID}", record, pubmed.lookup(fetcher, settings, record.PMID))
        return None
    raise ValueError(f"sitegen does not verify citations against {source!r}")


def verify_citation(fetcher: Fetcher, settings: SourceSettings, record: Record, sources: tuple[str, ...] = SOURCES,
                    progress: Callable[[str], None] = lambda message: None) -> CitationVerdicts:
    """The identity and status verdicts on `record`, from the answers of `sources`."""
    answers = []
    for source in sources:
        progress(f"{record.id}: asking {label(source)}...")
        if (answer := ask(fetcher, settings, record, source)) is not None:
            answers.append(answer)
    return CitationVerdicts(record, identity_verdict(record, answers), status_verdict(record, answers), answers)



# The fields of a cited entry that identity compares or asks the indexes by. One given but left out of the entry's
# record (`entry_record` notes "doi '…' is not a valid DOI; left out") was never checked; `entry_record`'s other notes
# (control characters replaced, an address that is none, a notice list) change nothing identity compares.
CHECKED_FIELDS = frozenset({"doi", "pmid", "pmcid", "arxiv", "openalex", "year"})


def with_unread(identity: VerificationPayload, notes: list[str]) -> VerificationPayload:
    """The identity verdict on a cited entry of which sitegen could not read everything (`notes`: what `entry_record`
    said of it, among them an identifier that is no identifier or a year that is no year, left out of its record).
    What was left out was never checked, so the entry is not verified as cited: `verified` is `inconclusive`, and
    each is said first."""
    unread = [note for note in notes if note.endswith("; left out") and note.split(" ", 1)[0] in CHECKED_FIELDS]
    if not unread:
        return identity
    said = [f"the entry's {note}: what it says was never checked"[:2000] for note in unread]
    verdict = "inconclusive" if identity.verdict == "verified" else identity.verdict
    return identity.model_copy(update={"verdict": verdict, "reasons": said + identity.reasons})


# --------------------------------------------------------------------------- the verdicts


def _payload(record: Record, axis: str, verdict: str, reasons: list[str], answers: list[Answer],
             notice: str | None = None) -> VerificationPayload:
    hashes = sorted({digest for answer in answers for digest in answer.outcome.snapshot_hashes})
    return VerificationPayload(record_id=record.id, axis=axis, verdict=verdict, refusal_grade=verdict in REFUSAL_GRADE,
                               reasons=[reason[:2000] for reason in reasons], snapshot_hashes=hashes,
                               answers=[answer.as_payload() for answer in answers], notice=notice)


def _unanswered(answers: list[Answer]) -> list[str]:
    return [f"{label(a.source)} did not answer ({a.outcome.status.replace('_', ' ')}): a failed lookup is "
            "never a negative" if a.outcome.status != "ok" else f"{a.outcome.doubt}: never a negative"
            for a in answers if not a.answered]


def _disputed(answer: Answer, answers: list[Answer]) -> bool:
    """Whether another index asked by the same identifier holds the work as cited under it: the indexes then
    disagree on what the identifier names (one has merged or mislinked it), which shows no citation wrong."""
    return any(other.asked == answer.asked and other.holds_the_work for other in answers if not other.by_title)


def identity_verdict(record: Record, answers: list[Answer]) -> VerificationPayload:
    holding = [a for a in answers if a.agreement == "same"]
    resolved_elsewhere = [a for a in answers if a.agreement == "different" and not a.by_title]
    different = [a for a in resolved_elsewhere if not _disputed(a, answers)]
    disputed = [a for a in resolved_elsewhere if a not in different]
    unclear = [a for a in answers if a.agreement in ("unclear", "related")]
    unanswered = _unanswered(answers)
    if different:
        return _payload(record, "identity", "mismatch", [
            f"{a.asked} resolves in {label(a.source)} to another work: {'; '.join(a.details)}" for a in different],
            answers)
    if not answers:
        return _payload(record, "identity", "inconclusive", ["no index could be asked for this record"], answers)
    negatives = [a for a in answers if a.negative]
    # Two indexes holding the work verify it only when no index able to hold an identifier the citation gives
    # says it does not know it: a PMID PubMed lacks, or a DOI no agency registered, is cited wrongly.
    if len(holding) >= 2 and not unclear and not unanswered and not disputed and not negatives:
        names = " and ".join(label(a.source) for a in holding)
        return _payload(record, "identity", "verified", [
            f"{names} hold the work as cited: {'; '.join(_held_as_cited(record, a) for a in holding)}"], answers)
    if not holding and not unclear and not unanswered and len(negatives) >= 2:
        # Only identifiers that two indexes or more, each able to hold them, do not know make a work
        # unresolvable, as two must agree to verify it: a title search that finds nothing says little (a
        # report, a book, a thesis may be in none of these indexes), and Crossref cannot know a DOI another
        # agency registered.
        return _payload(record, "identity", "unresolvable", [
            f"no index knows it: {', '.join(f'{label(a.source)} ({a.asked})' for a in negatives)} found nothing"],
            answers)
    reasons = unanswered + ["; ".join(a.details) if a.instead else
                            f"{label(a.source)} holds a work that agrees only in part: {'; '.join(a.details)}"
                            for a in unclear]
    reasons += [f"the indexes disagree on what {a.asked} names: {label(a.source)} resolves it to another work "
                f"({'; '.join(a.details)}), where another index holds the work as cited under it; a human decides "
                "which is right" for a in disputed]
    if holding or unclear:
        reasons += [f"{label(a.source)} does not know {a.asked}, which the citation gives" for a in negatives]
    if len(holding) == 1 and not unclear:
        reasons.append(f"only one index holds the paper ({label(holding[0].source)})" if len(answers) > 1 else
                       f"only one index was asked ({label(holding[0].source)}): a second must hold the work as "
                       "cited before its identity is verified")
    if not holding and not unclear and not reasons:
        reasons.append("the one index able to hold its identifier does not know it: a second must agree before "
                       "it is called unresolvable" if negatives else
                       "no index found it by its title: a work outside these indexes (a report, a book, a thesis) "
                       "may still exist, so a human checks it")
    reasons += [f"{label(a.source)} cannot hold it: the DOI is registered with {a.elsewhere}" for a in answers
                if a.elsewhere]
    return _payload(record, "identity", "inconclusive", reasons, answers)


def _reinstatements(holding: list[Answer]) -> list[tuple[list[str], Reinstatement]]:
    """Each reinstatement the indexes holding the work list, once, with the indexes that list it: two indexes name one
    by its DOI and by its PMID (`with_lifted` joins their listings, with every date and identifier either gives)."""
    listings = [(label(answer.source), r) for answer in holding for r in answer.found.custom.reinstatements]
    updates = [update for answer in holding for update in answer.found.custom.updates]
    return [(list(dict.fromkeys(source for source, _ in group)), *with_lifted([r for _, r in group], updates))
            for group in joined(listings, lambda listing: reinstatement_keys(listing[1]))]


def _reinstatement_words(reinstatement: Reinstatement) -> str:
    """" (10.1/x, 2021-06-30, lifting a retraction of 2019-03-01)", as far as the reinstatement says ("PMID 123"
    when it gives no DOI)."""
    said = [*([reinstatement.named_by] if reinstatement.named_by else []),
            *([iso_date(reinstatement.date)] if reinstatement.date else []),
            *([LIFTING + iso_date(reinstatement.retracted_on)] if reinstatement.retracted_on else [])]
    return f" ({', '.join(said)})" if said else ""


def status_verdict(record: Record, answers: list[Answer]) -> VerificationPayload:
    """The standing of the work, from the indexes that hold it (`Answer.holds_the_work`): a notice any of them
    lists decides, whatever else a citation gets wrong. `current` needs the answer of Crossref (which carries
    Retraction Watch's data) or of two indexes: one index's silence could miss what another lists."""
    holding = [a for a in answers if a.holds_the_work]
    notices: dict[str, list[tuple[str, str | None]]] = {kind: [] for kind in UPDATE_ORDER}
    # Reinstatements any index lists (Crossref): a retraction dated no later is lifted (`retraction_lifted`); one
    # given without a date beside them is neither retracted nor current, but an open item naming both.
    reinstated = _reinstatements(holding)
    undated: list[str] = []
    # A dated retraction beside a reinstatement giving no date: which came last is unknown too (the pages call the
    # work's retraction disputed, `retraction_disputed`).
    unordered: list[str] = []
    reinstated_undated = any(not reinstatement.date for _, reinstatement in reinstated)
    if marked_retracted(record):
        notices["retraction"].append(("the citation's own title marks the work retracted", None))
        undated.append(notices["retraction"][-1][0])
    for answer in holding:
        found = answer.found
        for update in found.custom.updates:
            if lifted(update, [r for _, r in reinstated]):
                continue
            notices[update.kind].append((f"{label(answer.source)} lists {_a_notice(update.kind, update.named_by)}",
                                         update.doi))
            if update.kind == "retraction" and not update.date:
                undated.append(notices["retraction"][-1][0])
            elif update.kind == "retraction" and reinstated_undated:
                unordered.append(notices["retraction"][-1][0])
        if marked_retracted(found):
            notices["retraction"].append((f"{label(answer.source)} titles the work as retracted", None))
            undated.append(notices["retraction"][-1][0])
        elif found.custom.retracted and not any(u.kind == "retraction" for u in found.custom.updates):
            notices["retraction"].append((f"{label(answer.source)} marks the work retracted", None))
            undated.append(notices["retraction"][-1][0])
    if reinstated and notices["retraction"] and len(undated) + len(unordered) == len(notices["retraction"]):
        return _payload(record, "status", "inconclusive", [
            *(f"{reason}, giving no date" for reason in undated), *unordered,
            *(f"{' and '.join(sources)} list{'s' if len(sources) == 1 else ''} a reinstatement"
              f"{_reinstatement_words(r)}" for sources, r in reinstated),
            "a retraction without a date may be the one the reinstatement lifted: a human decides whether it "
            "stands" if undated else "a reinstatement without a date may have lifted the retraction: a human "
            "decides whether it stands"], answers)
    for kind in UPDATE_ORDER:
        if notices[kind]:
            doi = next((doi for _, doi in notices[kind] if doi), None)
            return _payload(record, "status", STATUS_OF_UPDATE[kind], [reason for reason, _ in notices[kind]],
                            answers, doi)
    if kind := notice_words(record):
        return _payload(record, "status", "inconclusive", [
            f"the record cited is itself a notice ({kind}): a human decides whether the notice or the work it is "
            "about is meant"], answers)
    unanswered = _unanswered(answers)
    if unanswered:
        return _payload(record, "status", "inconclusive", unanswered + _unconfirmed_notices(answers), answers)
    names = " and ".join(label(a.source) for a in holding)
    if len(holding) >= 2 or any(a.source == "crossref" for a in holding):
        return _payload(record, "status", "current", [f"no retraction, correction or expression of concern "
                                                      f"listed by {names}"], answers)
    if holding:
        return _payload(record, "status", "inconclusive", [
            f"only {names} holds the work and lists no notice: a retraction another index lists could be "
            "missed"], answers)
    return _payload(record, "status", "inconclusive", ["no index holds the work, so its standing cannot be checked",
                                                       *_unconfirmed_notices(answers)], answers)


def _unconfirmed_notices(answers: list[Answer]) -> list[str]:
    """The notices on a work found by its title that agrees only in part: not the work cited until a human confirms
    it, but a retraction on it must reach that human, never be dropped with the work (`_title_agreement`)."""
    reasons = []
    for answer in answers:
        found = answer.found
        if found is None or answer.holds_the_work:
            continue
        listed = [(u.kind, u.named_by) for u in found.custom.updates]
        if (found.custom.retracted or marked_retracted(found)) and not any(u.kind == "retraction"
                                                                             for u in found.custom.updates):
            listed.append(("retraction", None))
        reasons += [f"{label(answer.source)} holds a work of that title not confirmed as the one cited, which lists "
                    f"{_a_notice(kind, where)}: a human decides whether it is the work" for kind, where in listed]
    return reasons


def _a_notice(kind: str, where: str | None) -> str:
    """A notice of `kind` (an `Update.kind`) in words, with where it is: "an expression of concern (10.1/x)"."""
    words = kind.replace("-", " ")
    return f"{'an' if words[0] in 'aeiou' else 'a'} {words}{f' ({where})' if where else ''}"
