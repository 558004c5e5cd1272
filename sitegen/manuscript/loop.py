"""The evidence loop of seed 001 for a draft manuscript: at most two rounds of verify → problems →
targeted searches → suggestions, and changes to the draft and its .bib only through a confirmation file.

A round's files go to `<out>/<slug>/<R>/` (`citation-review.json`, `claim-review.json`, `problems.md`,
`queries.md`, `candidates.json`, `suggestions.json`, `revision-suggestions.md`); `final-summary.md` sits
beside the rounds and is rewritten after every step. Every file is written atomically.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

import httpx
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sitegen.errors import EXIT_INCOMPLETE, OptionInvalid, SitegenError, cannot_read, shown_path, symbolic_link
from sitegen.files import read_file
from sitegen.manuscript import bib, claims, inputs
from sitegen.records.matching import SAME_TITLE, record_work, title_score
from sitegen.records.model import Record
from sitegen.records.providers import label
from sitegen.references import ReferenceProblem, read_references
from sitegen.references.records import entry_record
from sitegen.review.models import UNANSWERED, VerificationPayload
from sitegen.review.write import atomic_write, pretty_json
from sitegen.sources.base import FAILURES, unnamed
from sitegen.sources.http import Fetcher
from sitegen.sources.search import check_sources, open_fetcher
from sitegen.sources.search import search as search_sources
from sitegen.sources.settings import SourceSettings
from sitegen.sources.snapshots import SnapshotMissing
from sitegen.text import counted
from sitegen.verify.identity import verify_citation, with_unread

Item = TypeVar("Item")

MAX_ROUNDS = 2
HITS_PER_QUERY = 5  # candidates kept per query, in the source's relevance order
# Searches a round sends at most (`--max-searches`): a long draft has one problem per unsupported sentence, and
# thousands of requests in one run break the providers' fair-use limits (OpenAlex's polite pool, PubMed's 3 a second).
# The problems over it are said to be not searched, and the next round searches them first.
MAX_SEARCHES = 50
# .bib entries a round verifies at most (`--max-lookups`; each is a request or a few to each index), for the same
# reason: a thesis's .bib holds thousands. The entries over it are not verified (never counted as checked), and the
# next round, or a repeat of a paused one, verifies them first.
MAX_LOOKUPS = 200
CJK_TERM = 6  # characters of a Chinese or Japanese run used as one search term
CANDIDATES_PER_PROBLEM = 2  # new evidence suggested per problem (seed 001: "1-2 篇最相关文献")
STOPWORDS = frozenset("""a about above after again against all also although among an and any are as at be because been
before being between both but by can could did do does doing during each either et al few for from further had has
have having here how however if in into is it its itself may might more most much must no nor not of on once only or
other our out over own per same several should shown show shows since so some such than that the their them then
there these they this those through thus to too under until upon very via was we were what when where whether which
while who whom why will with within would yet study studies research evidence found find finds suggest suggests
suggested demonstrate demonstrated report reported reports indicate indicated known well many often less
higher lower greater fewer better worse larger smaller increase increases increased reduce reduces reduced
decrease decreases decreased improve improves improved associated linked leads lead results result""".split())

Problem = Literal["conflicting citation", "no match", "retracted citation", "to check by hand",
                  "citation with no entry", "unsupported claim", "uncited entry"]
Verifier = Callable[[Fetcher, SourceSettings, Record], object]  # -> sitegen.verify.identity.CitationVerdicts


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- file models


class CitationCheck(Strict):
    """One .bib entry as verified this round (citation-review.json holds one per entry)."""

    key: str
    line: int
    record: Record | None = None
    identity: VerificationPayload | None = None
    status: VerificationPayload | None = None
    rate_limited: bool = False
    # The indexes that refused access while checking it (HTTP 401/403, most likely a missing or wrong key): as a
    # rate limit, nothing to act on but a reason to check it again once the key is fixed.
    refused_access: list[str] = Field(default_factory=list)
    note: str | None = None  # why the entry was not verified (it cannot be read as a record)
    resolved: Record | None = None  # for a conflict: the work its DOI resolves to
    crossref: str | None = None  # the entry this one's `crossref` names: in use while this one is
    # Why it was not verified though it reads as a record: over the round's limit of lookups (`--max-lookups`). Kept
    # apart to re-check later, as a rate-limited entry is: never a problem found, never searched, never checked.
    not_verified: str | None = None
    # Answered in full by the earlier run of this round (a paused round repeated), the entry unchanged since: its
    # answer is kept and nothing is asked again, as a search the round answered is kept.
    kept: bool = False


class ProblemRow(Strict):
    id: str  # "P1"
    type: Problem
    location: str  # "Introduction / paragraph 2 / sentence 1 (line 7)" or the entry's key
    evidence: str
    action: str
    key: str | None = None
    sentence: claims.Sentence | None = None
    query: str | None = None
    carried: bool = False  # left from the last round: the same problem, not resolved by a confirmed suggestion
    not_searched: str | None = None  # why its query was not sent: over the round's limit of searches


class CandidateSearch(Strict):
    """One targeted search (candidates.json holds every round's, appended)."""

    round: int
    problem: str
    query: str
    source: str
    status: str  # "ok", or why the source gave no answer: never read as "no literature"
    warnings: list[str] = Field(default_factory=list)
    records: list[Record] = Field(default_factory=list)


class Suggestion(Strict):
    """One change the user may accept in the confirmation file."""

    id: str  # "S1"
    problem: str
    action: Literal["remove-citation", "cite-candidate", "replace-entry", "remove-entry"]
    key: str | None = None  # the entry (or the missing key) the change is about
    sentence: claims.Sentence | None = None
    record: Record | None = None  # the candidate cited, or the metadata an entry is replaced with
    new_key: str | None = None  # the key a cited candidate gets in the .bib
    to_confirm: bool = False  # new evidence: the user must check it supports the sentence


class Accepted(Strict):
    id: str
    sentence: str | None = Field(None, min_length=1)  # the sentence as the user wants it instead


class Confirmation(Strict):
    """confirm.yaml: the suggestions the user accepts (an empty list accepts none)."""

    accept: list[Accepted | str]


class Applied(Strict):
    """applied.json: what a confirmation changed, so it is never applied twice."""

    accepted: list[str]
    draft_changed: bool
    bib_changed: bool


class StagedFile(Strict):
    path: Path  # absolute, so a run from another working folder finishes the same file
    before: str  # sha256 of the file's bytes before the apply
    after: str  # sha256 of `text` encoded as UTF-8
    text: str


class ApplyJournal(Strict):
    """applying.json: an apply in progress, written before the draft or .bib is touched. A later run finishes
    it (each file still as it was before gets its new text; one already new is left) or refuses when a file
    is neither, so an interrupted apply never leaves the draft and .bib disagreeing or adds an entry twice."""

    applied: Applied
    files: list[StagedFile]


# --------------------------------------------------------------------------- slug and manuscript


def read_source(path: Path) -> str:
    """A draft, .bib or confirm.yaml as text: UTF-8 (a byte-order mark allowed), line endings kept as they
    are; SitegenError naming the file, line and byte of anything else and of a NUL byte."""
    try:
        data = read_file(path)
    except OSError as error:
        raise SitegenError(cannot_read(path, error)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SitegenError(f"{shown_path(path)}:{line}: byte {exc.start} (0x{data[exc.start]:02x}) is not UTF-8; save the file "
                           "as UTF-8 and run again") from None
    if "\x00" in text:
        raise SitegenError(f"{shown_path(path)}:{text.count(chr(10), 0, text.index(chr(0))) + 1}: the file holds a NUL byte "
                           "(binary, or UTF-16); save it as UTF-8 text")
    return text


def topic_slug(topic: str) -> str:
    """The first 8 hex digits of sha1 of the topic, NFKC-normalised, lower-cased, trimmed, spaces collapsed."""
    normal = " ".join(unicodedata.normalize("NFKC", topic).lower().split())
    if not normal:
        raise OptionInvalid("--topic", "is empty")
    return hashlib.sha1(normal.encode("utf-8")).hexdigest()[:8]


class Manuscript(BaseModel):
    draft: Path
    bib: Path
    base: Path  # <out>/<slug>

    def round_dir(self, number: int) -> Path:
        return self.base / str(number)

    @property
    def latex(self) -> bool:
        """Whether the draft is LaTeX (by its name): read by LaTeX's rules, and cited in with `\\cite{key}`."""
        return self.draft.suffix.lower() in claims.LATEX_SUFFIXES

    def citing(self, draft: str) -> str:
        """The draft's text as it cites (a LaTeX draft without its comments and preamble)."""
        return claims.latex_citing(draft) if self.latex else draft

    def document(self, draft: str) -> inputs.Document:
        """The draft's whole text: a LaTeX draft with the files it includes in place (`inputs.expand`)."""
        if not self.latex:
            return inputs.Document(draft, (inputs.Piece(0, self.draft, 1, draft),))
        return inputs.expand(self.draft, lambda path: draft if path == self.draft else read_source(path))

    def own_sentences(self, draft: str) -> list[claims.Sentence]:
        """The sentences of the draft itself, read as the round read them (with the files it includes in place), at
        the draft's own lines and offsets: the ones an apply may edit."""
        document = self.document(draft)
        if not document.included:
            return claims.sentences(draft, self.latex)
        own = []
        for sentence in claims.sentences(document.text, self.latex):
            span = document.span_in(self.draft, sentence.span)
            if span is not None:
                own.append(sentence.model_copy(update={"span": span, "line": draft.count("\n", 0, span[0]) + 1}))
        return own

    def across_includes(self, draft: str) -> dict[tuple[int, str], str]:
        """The sentences that begin in the draft itself and run on across an included file's boundary (an
        `\\input` inside a paragraph), by line and text as the round read them: where, in words. An apply cannot
        edit one: it lies in two files, and the loop writes the draft alone."""
        document = self.document(draft)
        folder = self.draft.resolve().parent
        across = {}
        for sentence in claims.sentences(document.text, self.latex) if document.included else []:
            path, line = document.origin(sentence.span[0])
            crossing = document.crossing(sentence.span) if path == self.draft else None
            if crossing is not None:
                other = crossing[0].resolve().relative_to(folder).as_posix()
                across[(line, sentence.text)] = f"runs on across the boundary of {other}, which line {crossing[1]} " \
                                                f"of {self.draft.name} includes in the middle of it"
        return across

    def located(self, review: claims.ClaimReview, document: inputs.Document) -> claims.ClaimReview:
        """The claim review of the whole text with each sentence at its own file's line (`Sentence.file`)."""
        if not document.included:  # the draft alone: its sentences are where the check read them
            return review
        folder = self.draft.resolve().parent

        def place(sentence: claims.Sentence | None) -> claims.Sentence | None:
            if sentence is None:
                return None
            path, line = document.origin(sentence.span[0])
            file = None if path == self.draft else path.resolve().relative_to(folder).as_posix()
            return sentence.model_copy(update={"line": line, "file": file})

        return review.model_copy(update={
            "citing": tuple(place(sentence) for sentence in review.citing),
            "findings": tuple(finding.model_copy(update={"sentence": place(finding.sentence)})
                              for finding in review.findings)})

    def rounds(self) -> list[int]:
        """The rounds run, counted by the round folders present; a last folder without problems.md is a
        round that was interrupted (it runs again). SitegenError for a gap, a folder of a round the loop
        never runs, or an earlier round without its problems.md."""
        present = sorted(int(p.name) for p in self.base.iterdir() if p.is_dir() and p.name.isdigit()) \
            if self.base.is_dir() else []
        if present != list(range(1, len(present) + 1)) or len(present) > MAX_ROUNDS:
            raise SitegenError(f"{self.base} holds the round folders {', '.join(map(str, present))}; the loop runs "
                               f"rounds 1 to {MAX_ROUNDS} in order, so one was removed or added by hand: restore it")
        done = [number for number in present if (self.round_dir(number) / "problems.md").is_file()]
        if done != present[:len(done)] or len(present) - len(done) > 1:
            missing = next(number for number in present if number not in done)
            raise SitegenError(f"{self.round_dir(missing) / 'problems.md'} is missing but a later round exists; "
                               "restore it (the loop never runs a round twice)")
        return done


def find_manuscript(directory: Path, topic: str, draft: Path | None = None, bib_file: Path | None = None,
                    out: Path | None = None) -> Manuscript:
    """The draft and .bib of MANUSCRIPT_DIR (the only .md and .bib there unless named)."""
    # A path that is not there, or not of the kind wanted, is a wrong command line (exit 2, naming its option), as the
    # CLI says when it parses a path: it cannot tell these, a relative --draft, --bib or --out being in DIRECTORY.
    if not directory.is_dir():
        raise OptionInvalid("DIRECTORY", f"{shown_path(directory)} is not a folder")
    if out is not None and (directory / out).exists() and not (directory / out).is_dir():
        raise OptionInvalid("--out", f"{shown_path(directory / out)} is not a folder")
    if out is not None and (directory / out).is_symlink() and not (directory / out).exists():  # no folder to make
        raise OptionInvalid("--out", f"{shown_path(directory / out)} is {symbolic_link(directory / out)}")
    chosen = []
    for given, suffix, option in ((draft, ".md", "--draft"), (bib_file, ".bib", "--bib")):
        if given is not None:
            path = directory / given  # a relative path is in MANUSCRIPT_DIR (an absolute one stays as it is)
            if not path.is_file():  # a missing file said as such: "is not a file" read as a folder's name
                why = "is not a file" if path.exists() else f"is {symbolic_link(path)}" if path.is_symlink() else (
                    "does not exist" + (f" (a relative {option} is in {shown_path(directory)})"
                                        if not given.is_absolute() else ""))
                raise OptionInvalid(option, f"{shown_path(path)} {why}")
        else:
            found = sorted(path for path in directory.glob(f"*{suffix}") if path.is_file()
                           and path.name.lower() != "readme.md")
            if len(found) != 1:
                raise SitegenError(f"{shown_path(directory)} holds {len(found)} {suffix} files"
                                   f"{': ' + ', '.join(p.name for p in found) if found else ''}; name one with {option}")
            path = found[0]
        chosen.append(path)
    return Manuscript(draft=chosen[0], bib=chosen[1],
                      base=(directory / out if out else directory / "output" / "evidence-loop") / topic_slug(topic))


# --------------------------------------------------------------------------- a round


def verify_entries(fetcher: Fetcher, settings: SourceSettings, bib_path: Path, verify: Verifier,
                   limit: int = MAX_LOOKUPS, over: str = "", earlier: Iterable[CitationCheck] = (),
                   verified_before: Collection[str] = ()) -> list[CitationCheck]:
    """Each .bib entry through the citation verifier, at most `limit` of them (the others are `not_verified`, with
    `over` as why): first the ones `verified_before` (the last round) did not verify, each in the .bib's order. An
    entry `earlier` (this round's earlier run) answered in full is kept as it was when it reads as the same record,
    asking nothing. A conflict also gets the work its DOI resolves to."""
    try:
        entries = read_references(read_source(bib_path), "bibtex", [])
    except ReferenceProblem as exc:
        raise SitegenError(f"{shown_path(bib_path)}:{exc.line}: {exc.message}") from None
    answered = {check.key: check for check in earlier if _answered_in_full(check)}
    records: list[Record | str] = []  # each entry's record, or why it cannot be one
    notes: list[list[str]] = []  # what reading each entry into its record said (`entry_record`)
    for entry in entries:
        notes.append([])
        try:
            records.append(entry_record(entry, warnings=notes[-1]))
        except ValueError as exc:
            records.append(f"not verified: {exc}")
    kept = {index for index, (entry, record) in enumerate(zip(entries, records, strict=True))
            if entry.id in answered and answered[entry.id].record == record}
    wanted = [index for index, record in enumerate(records) if isinstance(record, Record) and index not in kept]
    chosen = _first_new(wanted, lambda index: entries[index].id in verified_before, limit)
    checks = []
    for index, (entry, record) in enumerate(zip(entries, records, strict=True)):
        parent = entry.parent or None
        if isinstance(record, str):
            checks.append(CitationCheck(key=entry.id, line=entry.line, note=record, crossref=parent))
        elif index in kept:
            checks.append(answered[entry.id].model_copy(update={"line": entry.line, "crossref": parent, "kept": True}))
        elif index not in chosen:
            checks.append(CitationCheck(key=entry.id, line=entry.line, record=record, not_verified=over, crossref=parent))
        else:
            try:
                verdicts = verify(fetcher, settings, record)
            except SnapshotMissing as missing:  # a replay stops without a response: say for which entry
                raise type(missing)(f"{shown_path(bib_path)}:{entry.line}: {entry.id}: {missing}") from None
            check = CitationCheck(key=entry.id, line=entry.line, record=record,
                                  identity=with_unread(verdicts.identity, notes[index]),
                                  status=verdicts.status, rate_limited=verdicts.rate_limited,
                                  refused_access=verdicts.refused_access, crossref=parent)
            if check.identity.verdict == "mismatch":
                check.resolved = verdicts.resolved
            checks.append(check)
    return checks


def _answered_in_full(check: CitationCheck) -> bool:
    """Whether every index asked about an entry answered (no rate limit, refusal or outage): an answer to keep."""
    payloads = [payload for payload in (check.identity, check.status) if payload is not None]
    return check.identity is not None and not _open_for_now(check) and all(
        answer.answer not in UNANSWERED for payload in payloads for answer in payload.answers)


def problems_of(checks: list[CitationCheck], review: claims.ClaimReview) -> tuple[list[ProblemRow], list[CitationCheck]]:
    """The round's problems, one per entry and one per location (a second problem of the same entry or
    sentence is added to the first one's evidence, so their suggestions can never edit one target twice),
    and the entries kept apart to re-check later.

    A refusal-grade verdict (a mismatch, no record anywhere, a retraction) is a problem whatever another
    index answered; an entry whose verdict stays open because an index was rate limited or refused access is
    kept apart (seed 001: rate_limited / auth_error → pause, re-verify later), never read as checked."""
    rows: dict[str, ProblemRow] = {}
    citing = _citing_sentences(review)
    by_case = {check.key.casefold(): check.key for check in checks}
    apart = []

    def add(type_: Problem, where: str, evidence: str, action: str, key: str | None = None,
            sentence: claims.Sentence | None = None) -> None:
        slot = f"entry {key}" if key is not None and sentence is None else where
        if slot in rows:
            first = rows[slot]
            if type_ != first.type or evidence != first.evidence:
                rows[slot] = first.model_copy(update={"evidence": f"{first.evidence}; also {type_}: {evidence}"})
            return
        rows[slot] = ProblemRow(id="", type=type_, location=where, evidence=evidence, action=action, key=key,
                                sentence=sentence)

    for check in checks:
        if check.not_verified:  # over the round's limit of lookups: not checked, so nothing is known of it
            apart.append(check)
            continue
        if _open_for_now(check) and "inconclusive" in (
                check.identity.verdict, check.status.verdict if check.status else "inconclusive"):
            apart.append(check)
        if check.record is None:
            add("to check by hand", check.key, check.note or "", "check the entry by hand", check.key)
            continue
        reasons = "; ".join(check.identity.reasons) or _answers(check.identity)
        cited = f" (cited in {citing[check.key][0].location}, {citing[check.key][0].where})" \
            if citing.get(check.key) else ""
        if check.identity.verdict == "mismatch":
            add("conflicting citation", check.key, reasons + cited, "replace with the correct entry", check.key)
        elif check.identity.verdict == "unresolvable":
            add("no match", check.key, reasons + cited, "find the real work or remove the citation", check.key)
        elif check.identity.verdict == "inconclusive" and not _open_for_now(check):
            add("to check by hand", check.key, reasons + cited, "check the entry by hand", check.key)
        if check.status is not None and check.status.verdict == "retracted":
            notice = f" (notice {check.status.notice})" if check.status.notice else ""
            add("retracted citation", check.key, "; ".join(check.status.reasons) + notice + cited,
                "remove the citation or cite other evidence", check.key)
        elif check.status is not None and check.status.verdict in ("corrected", "expression-of-concern"):
            add("to check by hand", check.key, f"{check.status.verdict}: " + "; ".join(check.status.reasons),
                "read the notice and check the claim still holds", check.key)
    for finding in review.findings:
        sentence = finding.sentence
        where = f"{sentence.location} ({sentence.where})" if sentence else finding.key or ""
        if finding.kind == "citation with no entry":
            other_case = by_case.get(finding.key.casefold())
            add("citation with no entry", f"{where}: @{finding.key}", _quote(sentence.text) + (
                f" (the .bib has {other_case}, which differs only in case: cite it as @{other_case})" if other_case else ""),
                # Markdown reads any "@word" as a citation (a handle, "@jdoe", too): escaped, "\\@", it is text
                f"cite a real work, remove the citation, or write it \\@{finding.key} if it is no citation",
                finding.key, sentence)
        elif finding.kind == "unsupported claim":
            add("unsupported claim", where, f"{_quote(sentence.text)} ({', '.join(finding.rules)})",
                "search and insert a citation", None, sentence)
        else:
            add("uncited entry", where, "no sentence of the draft cites it", "cite it or remove it", finding.key)
    numbered = [row.model_copy(update={"id": f"P{number}"}) for number, row in enumerate(rows.values(), start=1)]
    return numbered, apart


def _open_for_now(check: CitationCheck) -> bool:
    """Whether an entry could not be checked for now: an index was rate limited, or refused access (a key), or it was
    over the round's limit of lookups."""
    return check.record is not None and (check.rate_limited or bool(check.refused_access) or bool(check.not_verified))


def query_for(row: ProblemRow, checks: dict[str, CitationCheck]) -> str | None:
    """The targeted search for a problem (None for an entry nothing cites: there is nothing to find)."""
    if row.type == "unsupported claim":
        return " ".join(keywords(row.sentence.text, 4))
    if row.type == "citation with no entry":
        return " ".join(word for word in re.split(r"[^A-Za-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", row.key))
                        if len(word) > 1 and word.lower() not in STOPWORDS).lower() or None
    check = checks.get(row.key)
    if row.type == "uncited entry" or check is None or check.record is None:
        return None
    record = check.resolved if row.type == "conflicting citation" and check.resolved else check.record
    surname = next((name.family or name.literal or "" for name in record.author), "")
    return " ".join([*keywords(record.title, 4), *([surname] if surname else [])])


def keywords(text: str, count: int) -> list[str]:
    """`count` content words of a text, longest first chosen, kept in the text's order. Chinese and Japanese
    are not split into words: a run of their characters between punctuation counts as one, cut to
    CJK_TERM characters (an approximate term the providers' full-text search still matches)."""
    plain = claims.AT_KEY.sub(" ", claims.LATEX_CITE.sub(" ", text))
    found = re.findall(r"[A-Za-z][A-Za-z-]{2,}|" + claims.CJK.pattern + "{2,}", plain)
    words = list(dict.fromkeys(word.lower() if word.isascii() else word[:CJK_TERM] for word in found
                               if word.lower() not in STOPWORDS))
    chosen = set(sorted(words, key=len, reverse=True)[:count])
    return [word for word in words if word in chosen]


def _retracted(check: CitationCheck) -> bool:
    return check.status is not None and check.status.verdict == "retracted"


def same_title(hit: Record, cited: Record) -> bool:
    """Whether a search hit is, by its title, the work an entry cites (a hit on other words is not)."""
    return title_score(record_work(hit), record_work(cited)) >= SAME_TITLE


def suggestions_for(rows: list[ProblemRow], checks: dict[str, CitationCheck], found: dict[str, list[Record]],
                    keys: set[str]) -> list[Suggestion]:
    """The changes to offer for each problem (new evidence comes only from this round's searches)."""
    made: list[Suggestion] = []
    new_keys = bib.NewKeys(set(keys))

    def offer(row: ProblemRow, action: str, **fields) -> None:
        made.append(Suggestion(id=f"S{len(made) + 1}", problem=row.id, action=action, **fields))

    def cite(row: ProblemRow, sentence: claims.Sentence, replaces: str | None) -> None:
        for record in found.get(row.id, [])[:CANDIDATES_PER_PROBLEM]:
            key = new_keys.key(record)
            offer(row, "cite-candidate", key=replaces, sentence=sentence, record=record, new_key=key, to_confirm=True)

    for row in rows:
        check = checks.get(row.key) if row.key else None
        if row.type == "unsupported claim":
            cite(row, row.sentence, None)
        elif row.type == "citation with no entry":
            offer(row, "remove-citation", key=row.key, sentence=row.sentence)
            cite(row, row.sentence, row.key)
        elif row.type == "conflicting citation" and check and check.resolved and not _retracted(check):
            offer(row, "replace-entry", key=row.key, record=check.resolved)
        elif row.type == "conflicting citation" and check and check.resolved:
            offer(row, "remove-entry", key=row.key)  # the work its DOI resolves to is retracted: never cite it
        elif row.type in ("no match", "retracted citation", "uncited entry"):
            offer(row, "remove-entry", key=row.key)
            if row.type == "no match" and check and check.record:
                for record in [hit for hit in found.get(row.id, []) if same_title(hit, check.record)][:1]:
                    offer(row, "replace-entry", key=row.key, record=record, to_confirm=True)
    return made


# --------------------------------------------------------------------------- running


def run_round(manuscript: Manuscript, fetcher: Fetcher, settings: SourceSettings, sources: list[str],
              verify: Verifier, search: Callable, max_searches: int = MAX_SEARCHES,
              max_lookups: int = MAX_LOOKUPS) -> int:
    """Run the next round (applying the last round's confirmation first), verifying at most `max_lookups` entries
    and sending at most `max_searches` searches; its number."""
    done = manuscript.rounds()
    if converged_round(manuscript) is not None:
        raise SitegenError(f"the loop converged in round {done[-1]}; see {manuscript.base / 'final-summary.md'}")
    if done and paused_round(manuscript) == done[-1]:
        done = done[:-1]  # the round could not check or search everything, and nothing later would: it runs again
    elif len(done) >= MAX_ROUNDS:
        write_summary(manuscript)  # as the last round is now: settled by its confirm.yaml, if that was written since
        raise SitegenError(f"{MAX_ROUNDS} rounds have been run, the most the evidence loop runs; what is left is "
                           f"listed in {manuscript.base / 'final-summary.md'} for checking by hand")
    elif done:
        previous = manuscript.round_dir(done[-1])
        if not (previous / "confirm.yaml").is_file():
            raise SitegenError(f"round {done[-1]} is waiting for your decisions: list the suggestions you accept in "
                               f"{previous / 'confirm.yaml'} (`accept: []` accepts none), then run again")
        if not (previous / "applied.json").is_file():
            apply_confirmation(manuscript, done[-1])
    number = (done[-1] + 1) if done else 1
    folder = manuscript.round_dir(number)
    draft = read_source(manuscript.draft)  # read first: a draft that cannot be read stops the round before any request
    document = manuscript.document(draft)  # before any request too: an \input that cannot be followed stops it
    beyond = f"over round {number}'s limit of {counted(max_lookups, 'lookup')} (--max-lookups)"
    earlier_run = _read_checks(folder) if (folder / "citation-review.json").is_file() else []  # a paused round repeated
    verified_last = {c.key for c in _read_checks(manuscript.round_dir(done[-1])) if c.identity} if done else set()
    checks = verify_entries(fetcher, settings, manuscript.bib, verify, max_lookups, beyond, earlier_run, verified_last)
    review = claims.check(document.text, [check.key for check in checks],
                          _crossref_parents(checks, manuscript.citing(document.text)), manuscript.latex)
    review = manuscript.located(review, document)
    rows, apart = problems_of(checks, review)
    by_key = {check.key: check for check in checks}
    rows = [row.model_copy(update={"query": query_for(row, by_key)}) for row in rows]
    if done:
        rows = _mark_carried(rows, manuscript.round_dir(done[-1]))
    # A search this round answered in full before it was paused is kept, not asked again (its hits are not lost if
    # the source fails this time, and a rate-limited source is asked only what it did not answer).
    answered = {s.query: s for s in _read_candidates(folder) if s.round == number and s.status == "ok"
                and s.source == ",".join(sources)} if (folder / "candidates.json").is_file() else {}
    earlier = _read_candidates(manuscript.round_dir(done[-1])) if done else []
    asked = _to_ask(rows, answered, {s.query for s in earlier}, max_searches)
    over = f"over round {number}'s limit of {counted(max_searches, 'search', 'searches')} (--max-searches)"
    rows = [row if not row.query or row.query in answered or row.query in asked else
            row.model_copy(update={"not_searched": over}) for row in rows]
    # A query is sent once a round, however many problems ask it (the same claim in two places, one entry's title):
    # it counts once toward the limit, and each problem asking it gets its hits.
    sent = {query: (found, True) for query, found in answered.items()}
    sent |= {query: _search(search, fetcher, settings, sources, number, query) for query in asked}
    searched = [(sent[row.query][0].model_copy(update={"problem": row.id}), sent[row.query][1]) for row in rows
                if row.query and not row.not_searched]
    searches = [candidates for candidates, _ in searched]
    cited_dois = {check.record.DOI for check in checks if check.record and check.record.DOI}
    found: dict[str, list[Record]] = {}
    for result in searches:  # a hit the .bib already holds is no new evidence
        found.setdefault(result.problem, []).extend(record for record in result.records
                                                    if not (record.DOI and record.DOI in cited_dois))
    if rows and _nothing_reached(checks, [answered for _, answered in searched]):  # without problems, a rate-limited round pauses (`paused_round`)
        refused = refusals(checks, searches)
        why = ("; ".join(f"{name} refused access ({cause})" for name, cause in refused.items())
               + ": fix that, then run it again") if refused else \
            f"(every entry's lookup and every search failed: {'; '.join(incomplete_sources(checks, searches))}); run " \
            "it again when the indexes can be reached"
        raise SourcesUnreached(f"no index answered this round (round {number}), so it was not counted as one of the "
                               f"loop's rounds and none of its files were written: {why}")
    made = suggestions_for(rows, by_key, found, set(by_key))
    for stale in ("problems.md", "confirm.yaml", "applied.json"):  # of the paused run being repeated
        (folder / stale).unlink(missing_ok=True)

    atomic_write(folder / "citation-review.json", pretty_json([c.model_dump(mode="json", by_alias=True,
                                                                             exclude_none=True) for c in checks]))
    atomic_write(folder / "claim-review.json", pretty_json(review.model_dump(mode="json")))
    atomic_write(folder / "queries.md", render_queries(rows, apart))
    atomic_write(folder / "candidates.json", pretty_json([s.model_dump(mode="json", by_alias=True, exclude_none=True)
                                                          for s in [*earlier, *searches]]))
    atomic_write(folder / "suggestions.json", pretty_json([s.model_dump(mode="json", by_alias=True,
                                                                        exclude_none=True) for s in made]))
    repeats = number >= MAX_ROUNDS and left_undone(checks, searches, rows)  # paused (`paused_round`)
    atomic_write(folder / "revision-suggestions.md", render_suggestions(rows, made, searches, by_key, number, repeats))
    atomic_write(folder / "problems.json", pretty_json([row.model_dump(mode="json", by_alias=True, exclude_none=True)
                                                       for row in rows]))
    before = len(read_problems(manuscript.round_dir(done[-1]))) if done else None
    atomic_write(folder / "problems.md",  # last: marks the round done
                 render_problems(number, rows, apart, before, review.other_citations,
                                 [check.key for check in checks if check.kept]))
    write_summary(manuscript)
    return number


class SourcesUnreached(SitegenError):
    """A round in which no index answered: an outage, not a round (exit status 3, as any source not reached)."""

    exit_code = EXIT_INCOMPLETE


def _to_ask(rows: list[ProblemRow], answered: dict[str, CandidateSearch], searched_before: set[str],
            limit: int) -> list[str]:
    """The queries a round sends, each once, at most `limit`, in the order of the problems asking them: first the
    ones no earlier round searched (so the problems a round left over its limit are searched by the next). A search
    this round already answered (`answered`: a paused round repeated) is kept and sends nothing."""
    wanted = list(dict.fromkeys(row.query for row in rows if row.query and row.query not in answered))
    chosen = _first_new(wanted, lambda query: query in searched_before, limit)
    return [query for query in wanted if query in chosen]


def _first_new(wanted: list[Item], done_before: Callable[[Item], bool], limit: int) -> set[Item]:
    """At most `limit` of `wanted`: first those an earlier round did not do, then the others, each in the order of
    `wanted` (the sort is stable), so that what a round leaves over its limit comes first in the next."""
    return set(sorted(wanted, key=done_before)[:limit])


def _crossref_parents(checks: list[CitationCheck], draft: str) -> set[str]:
    """The entries a cited entry's `crossref` names (a paper's proceedings, a chapter's book): in use, as
    BibTeX lists them and the cited entry takes its fields from them, so never an uncited entry to remove."""
    cited = set(claims.cited_keys(draft))
    by_key = {check.key: check for check in checks}
    parents: set[str] = set()
    for key in cited:
        while (check := by_key.get(key)) is not None and check.crossref and check.crossref not in parents:
            parents.add(key := check.crossref)
    return parents


def _nothing_reached(checks: list[CitationCheck], searches_answered: list[bool]) -> bool:
    """Whether the round asked some index and none answered: every lookup of a .bib entry and every search
    (`searches_answered`: for each search, whether any of its sources answered)."""
    lookups = [check.identity for check in checks if check.identity is not None]
    asked = bool(searches_answered) or any(identity.answers for identity in lookups)
    answered = any(searches_answered) or any(
        answer.answer not in UNANSWERED for identity in lookups for answer in identity.answers)
    return asked and not answered


def _search(search: Callable, fetcher: Fetcher, settings: SourceSettings, sources: list[str], number: int,
            query: str) -> tuple[CandidateSearch, bool]:
    """The search for a query (its `problem` is set for each problem asking it), and whether any of its sources
    answered."""
    narrow = settings.model_copy(update={"max_records": HITS_PER_QUERY,
                                         "openalex_per_page": min(HITS_PER_QUERY, settings.openalex_per_page)})
    result = search(fetcher, query, sources, native=True, settings=narrow)
    statuses = sorted({o.status for o in result.outcomes})
    candidates = CandidateSearch(round=number, problem="", query=query, source=",".join(sources),
                                 status="ok" if statuses == ["ok"] else "failed: " + ", ".join(
                                     f"{o.source} {o.status}" for o in result.outcomes if o.status != "ok"),
                                 warnings=[w for o in result.outcomes for w in o.warnings],
                                 records=result.records[:HITS_PER_QUERY])
    return candidates, any(o.status == "ok" for o in result.outcomes)


def converged_round(manuscript: Manuscript) -> int | None:
    """The round that found no problem and checked every entry, if the loop has converged."""
    done = manuscript.rounds()
    last = manuscript.round_dir(done[-1]) if done else None
    return done[-1] if last and not read_problems(last) and not rate_limited_keys(last) else None


def paused_round(manuscript: Manuscript) -> int | None:
    """The last round, when the loop is paused until a later run repeats it (seed 001: rate_limited → pause,
    re-verify later): it found no problem but kept entries apart as rate-limited (nothing to confirm), or it is
    the last round the loop runs and left something undone (`left_undone`), while its confirm.yaml is not written
    (no later round would ever check or search what it could not, and the user has not settled for it)."""
    done = manuscript.rounds()
    last = manuscript.round_dir(done[-1]) if done else None
    if last is None:
        return None
    if not read_problems(last):
        return done[-1] if rate_limited_keys(last) else None
    unsettled = done[-1] >= MAX_ROUNDS and not (last / "confirm.yaml").exists()
    return done[-1] if unsettled and left_undone(*round_files(last, done[-1]), read_problems(last)) else None


def left_undone(checks: list[CitationCheck], searches: list[CandidateSearch], rows: list[ProblemRow]) -> bool:
    """Whether a round left undone what a run of it could still do: an index did not answer it in full, or entries
    over its limit of lookups were not verified, or problems over its limit of searches were not searched (a repeat
    does them, keeping the answers and searches it had in full)."""
    return bool(incomplete_sources(checks, searches)) or any(check.not_verified for check in checks) or \
        any(row.not_searched for row in rows)


def incomplete_sources(checks: list[CitationCheck], searches: list[CandidateSearch]) -> list[str]:
    """Each index that did not answer a round in full (rate limited, refused access, unreachable), as `update`
    names a source it did not reach: what it was and what it left undone, the entries it did not answer for and
    the problems it could not search for. Empty when every index answered every request."""
    missed: dict[tuple[str, str], list[str]] = {}
    for check in checks:
        for payload in (check.identity, check.status):
            for answer in payload.answers if payload is not None else []:
                if answer.answer in UNANSWERED:
                    how = FAILURES["auth_error"] if answer.source in check.refused_access else \
                        {"rate-limited": FAILURES["rate_limited"]}.get(answer.answer, "did not answer")
                    lookups = missed.setdefault((label(answer.source), how), [])
                    if f"the entry {check.key}" not in lookups:
                        lookups.append(f"the entry {check.key}")
    for search in searches:
        for source, status in _failed_sources(search).items():
            if status in FAILURES:  # not "unsupported": a query a source cannot run fails again whenever it is asked
                missed.setdefault((label(source), FAILURES[status]), []).append(f"the search for {search.problem}")
    return [f"{name} {how} ({', '.join(what)})" for (name, how), what in missed.items()]


def _failed_sources(search: CandidateSearch) -> dict[str, str]:
    """The sources of a failed search, each with its status (`_search` writes them "failed: openalex rate_limited, …")."""
    if not search.status.startswith("failed: "):
        return {}
    return dict(part.split(" ", 1) for part in search.status.removeprefix("failed: ").split(", ") if " " in part)


def rate_limited_keys(folder: Path) -> list[str]:
    """The entries a round kept apart as rate-limited or refused access (to re-check later)."""
    return [check.key for check in _kept_apart(_read_checks(folder))]


def _kept_apart(checks: list[CitationCheck]) -> list[CitationCheck]:
    return [check for check in checks if _open_for_now(check)]


def refusals(checks: list[CitationCheck], searches: list[CandidateSearch]) -> dict[str, str]:
    """Each index that refused access in a round (HTTP 401/403), by name, with its first reason: the likely cause
    (which key) and what it answered. Later requests to it were not sent (`sources.http.Fetcher`)."""
    said = [answer.detail for check in checks if check.identity is not None for answer in check.identity.answers
            if answer.source in check.refused_access and answer.detail]
    said += [warning for search in searches if "auth_error" in search.status for warning in search.warnings]
    found: dict[str, str] = {}
    for text in said:
        for part in text.split("; "):  # an answer's detail joins its warnings
            name, refused, cause = part.partition(f" {FAILURES['auth_error']}: ")
            if refused and name not in found:
                found[name] = cause
    return found


def round_files(folder: Path, number: int) -> tuple[list[CitationCheck], list[CandidateSearch]]:
    """Round `number`'s citation checks and its own targeted searches (candidates.json holds every round's), each
    file read once."""
    return _read_checks(folder), [search for search in _read_candidates(folder) if search.round == number]


def read_problems(folder: Path) -> list[ProblemRow]:
    return _read(folder / "problems.json", ProblemRow)


def _read_checks(folder: Path) -> list[CitationCheck]:
    return _read(folder / "citation-review.json", CitationCheck)


def _read_candidates(folder: Path) -> list[CandidateSearch]:
    return _read(folder / "candidates.json", CandidateSearch)


def _read_suggestions(folder: Path) -> list[Suggestion]:
    return _read(folder / "suggestions.json", Suggestion)


def _read(path: Path, model: type[Strict]) -> list:
    """A round's file as sitegen wrote it (a list of `model`)."""
    return [model.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]


def _signature(row: ProblemRow) -> tuple[str, str]:
    return row.type, row.sentence.text if row.sentence else (row.key or row.location)


def _mark_carried(rows: list[ProblemRow], previous: Path) -> list[ProblemRow]:
    """Problems the last round also had and no accepted suggestion addressed are left from it."""
    accepted = set(Applied.model_validate_json((previous / "applied.json").read_text()).accepted)
    addressed = {s.problem for s in _read_suggestions(previous) if s.id in accepted}
    left = {_signature(row) for row in read_problems(previous) if row.id not in addressed}
    return [row.model_copy(update={"carried": _signature(row) in left}) for row in rows]


# --------------------------------------------------------------------------- confirmation


class _UniqueKeyLoader(yaml.SafeLoader):
    """Safe YAML that refuses a key given twice in one mapping (PyYAML would keep the last one silently)."""

    def construct_mapping(self, node, deep=False):
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key_node.value!r} is given twice (write it once)", key_node.start_mark)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)


def read_confirmation(path: Path, offered: list[Suggestion]) -> list[tuple[Accepted, int]]:
    """The accepted suggestions of confirm.yaml, each with its line; SitegenError naming the file and line
    of a mistake."""
    text = read_source(path)
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # safe: a SafeLoader subclass
    except yaml.YAMLError as exc:
        line = exc.problem_mark.line + 1 if getattr(exc, "problem_mark", None) else 1
        raise SitegenError(f"{shown_path(path)}:{line}: YAML syntax error: {getattr(exc, 'problem', exc)}") from None
    try:
        confirmation = Confirmation.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"] if part not in ("Accepted", "str"))
        raise SitegenError(f"{shown_path(path)}:{_line_of(text, first['loc'])}: {where}: {first['msg']} (write `accept:` "
                           "followed by a list of suggestion ids such as `- S1`, or `- id: S1` with `sentence:`)") from None
    known = {s.id: s for s in offered}
    accepted, problems_seen = [], {}
    for index, item in enumerate(confirmation.accept):
        item = Accepted(id=item) if isinstance(item, str) else item
        line = _line_of(text, ("accept", index))
        if item.id not in known:
            raise SitegenError(f"{shown_path(path)}:{line}: {item.id!r} is not a suggestion of this round "
                               f"(they are {', '.join(known) or 'none'})")
        suggestion = known[item.id]
        if any(earlier.id == item.id for earlier, _ in accepted):
            raise SitegenError(f"{shown_path(path)}:{line}: {item.id} is accepted twice; list it once")
        if suggestion.problem in problems_seen:
            raise SitegenError(f"{shown_path(path)}:{line}: {item.id} and {problems_seen[suggestion.problem]} are two answers to "
                               f"problem {suggestion.problem}; accept one")
        if item.sentence is not None:
            _check_wording(item, suggestion, f"{shown_path(path)}:{line}")
        problems_seen[suggestion.problem] = item.id
        accepted.append((item, line))
    return accepted


def _check_wording(item: Accepted, suggestion: Suggestion, where: str) -> None:
    """A sentence the user words must still do what the suggestion does: cite the new work, drop the key."""
    if suggestion.sentence is None:
        raise SitegenError(f"{where}: {item.id} changes the .bib, not a sentence; it takes no `sentence:`")
    if "\n" in item.sentence or "\r" in item.sentence:
        raise SitegenError(f"{where}: {item.id}'s `sentence:` spans several lines; write the one sentence on one line")
    keys = claims.cited_keys(item.sentence)
    if suggestion.action == "cite-candidate" and suggestion.new_key not in keys:
        raise SitegenError(f"{where}: {item.id}'s `sentence:` does not cite @{suggestion.new_key}, the work the "
                           "suggestion adds; cite it in the sentence, or accept the suggestion without `sentence:`")
    if suggestion.key is not None and suggestion.key in keys:
        raise SitegenError(f"{where}: {item.id}'s `sentence:` still cites @{suggestion.key}, which the suggestion "
                           "takes out; drop it from the sentence")


def _line_of(text: str, location: tuple) -> int:
    """The line of the YAML node at `location` (keys and list indexes), or of the deepest one there is."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return 1
    for part in location:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            following = next((value for key, value in node.value if key.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            following = node.value[part]
        else:
            following = None  # a union's member name, or a key that is missing
        if following is not None:
            node = following
    return node.start_mark.line + 1 if node is not None else 1


APPLY_JOURNAL = "applying.json"


def apply_confirmation(manuscript: Manuscript, number: int) -> Applied:
    """Apply round `number`'s confirm.yaml to the draft and .bib: exactly the accepted suggestions, both
    files as one unit (an interrupted apply is finished by the next run; see `ApplyJournal`)."""
    folder = manuscript.round_dir(number)
    if (folder / APPLY_JOURNAL).is_file():
        return _finish_apply(manuscript, folder)
    path = folder / "confirm.yaml"
    if not path.is_file():
        raise SitegenError(f"there is no {shown_path(path)}: list the suggestions you accept there (`accept: [S1, S3]`)")
    if (folder / "applied.json").is_file():
        raise SitegenError(f"round {number}'s confirmation was applied already ({folder / 'applied.json'})")
    offered = _read_suggestions(folder)
    accepted = read_confirmation(path, offered)
    for target in (manuscript.draft, manuscript.bib):
        if target.is_symlink():
            raise SitegenError(f"{shown_path(target)} is a symbolic link; the loop does not write through links (an edit would "
                               "replace the link with a file): name the file it points to with --draft or --bib; "
                               "nothing was changed")
    known = {s.id: s for s in offered}
    draft, bib_text = read_source(manuscript.draft), read_source(manuscript.bib)
    new_draft, new_bib = revise(draft, bib_text, [(known[a.id], a.sentence, line) for a, line in accepted],
                                manuscript, path, {check.key: check.record for check in _read_checks(folder)})
    applied = Applied(accepted=[a.id for a, _ in accepted], draft_changed=new_draft != draft,
                      bib_changed=new_bib != bib_text)
    staged = [StagedFile(path=target.resolve(), before=_sha256(old.encode("utf-8")), after=_sha256(new.encode("utf-8")), text=new)
              for target, old, new in ((manuscript.bib, bib_text, new_bib), (manuscript.draft, draft, new_draft))
              if new != old]
    atomic_write(folder / APPLY_JOURNAL, pretty_json(ApplyJournal(applied=applied, files=staged).model_dump(mode="json")))
    return _finish_apply(manuscript, folder)


def _finish_apply(manuscript: Manuscript, folder: Path) -> Applied:
    """Give every file of the apply journal its new text, record applied.json, drop the journal. Safe to run
    again after any interruption: a file already new is left, one still as before is written."""
    journal_path = folder / APPLY_JOURNAL
    try:
        journal = ApplyJournal.model_validate_json(read_source(journal_path))
    except ValidationError as exc:
        raise SitegenError(f"{shown_path(journal_path)} is not an apply journal sitegen wrote ({counted(exc.error_count(), 'problem')}); "
                           "check the draft and .bib by hand, then remove it") from None
    ours = {manuscript.draft.resolve(), manuscript.bib.resolve()}
    pending = []
    for staged in journal.files:
        if staged.path.resolve() not in ours:
            raise SitegenError(f"{shown_path(journal_path)} names {shown_path(staged.path)}, which is not this loop's draft or .bib; "
                               "nothing was changed")
        now = _sha256(staged.path.read_bytes())
        if now == staged.after:
            continue
        if now != staged.before:
            raise SitegenError(f"{shown_path(staged.path)} changed while round {folder.name}'s confirmation was being applied "
                               f"(the interrupted apply is recorded in {shown_path(journal_path)}); restore the file, or remove "
                               "the journal and apply again; nothing was changed")
        pending.append(staged)
    for staged in pending:
        atomic_write(staged.path, staged.text)
    atomic_write(folder / "applied.json", pretty_json(journal.applied.model_dump(mode="json")))
    journal_path.unlink()
    write_summary(manuscript)
    return journal.applied


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class _Edit:
    """One accepted suggestion's change of one sentence, and what the sentence must cite after it."""

    suggestion: Suggestion
    line: int  # of the suggestion in confirm.yaml
    change: Callable[[str], str] | str  # a function of the sentence's text, or the user's wording
    cites: str | None = None  # a key the sentence must cite after the change
    drops: str | None = None  # a key it must no longer cite


def revise(draft: str, bib_text: str, accepted: list[tuple[Suggestion, str | None, int]], manuscript: Manuscript,
           confirmation: Path, verified: dict[str, Record | None] | None = None) -> tuple[str, str]:
    """The draft and .bib with the accepted suggestions made (the user's wording where given, each with
    its line in `confirmation`). Entries are found by key, sentences by their line and text; every edit
    is checked after it is made. Pure; SitegenError, and nothing changed, if the files moved on (a sentence, or an
    entry no longer as the round read it: `verified`, its entries by key) or an edit would not do what it says."""
    current = {(s.line, s.text): s for s in manuscript.own_sentences(draft)}
    keys_before = _bib_keys(bib_text, manuscript.bib)
    keys = set(keys_before)
    entries_now = _bib_records(bib_text, manuscript.bib) if verified is not None else {}
    edits: dict[tuple[int, int], list[_Edit]] = {}  # span of a sentence in the draft -> its changes
    removed: dict[str, tuple[Suggestion, int]] = {}
    added: set[str] = set()
    cited_as: dict[str, str] = {}  # a candidate's DOI (or id) -> the key this apply cites it by

    def refuse(suggestion: Suggestion, line: int, why: str) -> SitegenError:
        return SitegenError(f"{confirmation}:{line}: {suggestion.id}: {why}; nothing was changed")

    def sentence_now(suggestion: Suggestion, line: int) -> claims.Sentence:
        if suggestion.sentence.file is not None:  # the loop writes the draft and .bib alone, as one unit
            raise refuse(suggestion, line, f"its sentence is in {suggestion.sentence.file} ({suggestion.sentence.where}), "
                                           f"a file {manuscript.draft.name} includes; the loop edits only the draft "
                                           "itself: make the change there by hand and accept the suggestion no more")
        found = current.get((suggestion.sentence.line, suggestion.sentence.text))
        if found is None and (where := manuscript.across_includes(draft).get(
                (suggestion.sentence.line, suggestion.sentence.text))):
            raise refuse(suggestion, line, f"the sentence on line {suggestion.sentence.line} of {manuscript.draft.name} "
                                           f"{where}; the loop edits a sentence only within the draft itself: make "
                                           "the change by hand and accept the suggestion no more")
        if found is None:
            raise refuse(suggestion, line, f"the sentence on line {suggestion.sentence.line} of {manuscript.draft.name} "
                                           "changed since the round was run")
        return found

    def edit_bib(suggestion: Suggestion, line: int, change: Callable[[str], str]) -> str:
        if suggestion.key not in keys:
            raise refuse(suggestion, line, f"the entry {suggestion.key!r} is no longer in {manuscript.bib.name}")
        # An entry edited since the round (corrected by hand, or another file's under the same key) is not the one the
        # suggestion was made for: replacing or removing it would lose that edit.
        if verified is not None and suggestion.key in verified and \
                entries_now.get(suggestion.key) != verified[suggestion.key]:
            raise refuse(suggestion, line, f"the entry {suggestion.key!r} of {manuscript.bib.name} changed since the "
                                           "round was run (the suggestion is about the entry as it was); run the next "
                                           "round on it as it is")
        try:
            return change(bib_text)
        except SitegenError as exc:
            raise refuse(suggestion, line, str(exc)) from None

    for suggestion, wording, line in accepted:
        if suggestion.action == "remove-citation":
            sentence = sentence_now(suggestion, line)
            edits.setdefault(sentence.span, []).append(_Edit(
                suggestion, line, wording or (lambda text, key=suggestion.key: claims.remove_key(text, key)),
                drops=suggestion.key))
        elif suggestion.action == "cite-candidate":
            sentence = sentence_now(suggestion, line)
            work = (suggestion.record.DOI or suggestion.record.id).lower()
            key = cited_as.get(work)
            if key is None:  # the first accepted suggestion citing this work adds its entry; others cite it
                if suggestion.new_key in keys:
                    raise refuse(suggestion, line, f"the key {suggestion.new_key!r} is in {manuscript.bib.name} "
                                                   "already (it changed since the round was run); run the round again")
                bib_text = bib.append_entry(bib_text, suggestion.record, suggestion.new_key)
                key = cited_as[work] = suggestion.new_key
                keys.add(key)
                added.add(key)
            if wording is not None:
                change = claims.rename_key(wording, suggestion.new_key, key)
            else:
                def change(text: str, old: str | None = suggestion.key, new: str = key) -> str:
                    return claims.rename_key(text, old, new) if old else add_citation(text, new, manuscript.latex)
            edits.setdefault(sentence.span, []).append(_Edit(suggestion, line, change, cites=key,
                                                             drops=suggestion.key))
        elif suggestion.action == "replace-entry":
            bib_text = edit_bib(suggestion, line, lambda text, s=suggestion: bib.replace_entry(text, s.key, s.record))
        elif suggestion.action == "remove-entry":
            bib_text = edit_bib(suggestion, line, lambda text, s=suggestion: bib.remove_entry(text, s.key))
            keys.discard(suggestion.key)
            removed[suggestion.key] = (suggestion, line)
            for sentence in current.values():
                if suggestion.key in sentence.keys:
                    edits.setdefault(sentence.span, []).append(_Edit(
                        suggestion, line, lambda text, key=suggestion.key: claims.remove_key(text, key),
                        drops=suggestion.key))

    for (start, end), changes in sorted(edits.items(), reverse=True):
        text = _edited(draft[start:end], changes, draft.count("\n", 0, start) + 1, manuscript, confirmation)
        draft = draft[:start] + text + draft[end:]
    whole = manuscript.document(draft) if removed else None  # the files the draft includes cite too
    for key, (suggestion, line) in removed.items():
        if key in claims.cited_keys(manuscript.citing(whole.text)):
            worded = next((change for changes in edits.values() for change in changes
                           if isinstance(change.change, str) and key in claims.cited_keys(change.change)), None)
            if worded is not None:  # the sentence confirm.yaml gives still cites the entry removed
                raise refuse(suggestion, line, f"the sentence {worded.suggestion.id} gives (line {worded.line}) still "
                                               f"cites @{key}, whose entry this removes: take it out of that sentence")
            citing, offset = manuscript.citing(whole.text), 0
            for text in citing.splitlines(keepends=True):
                if key in claims.cited_keys(text):
                    break
                offset += len(text)
            path, where = whole.origin(offset)
            raise refuse(suggestion, line, f"{path.name} still cites @{key} on line {where}, outside the sentences the "
                                           "loop edits (a table, quote, footnote, heading, a file the draft "
                                           "includes or a sentence running across one's boundary): take that citation out by hand, then apply again")
    expected = sorted((set(keys_before) - set(removed)) | added)
    if sorted(_bib_keys(bib_text, manuscript.bib)) != expected:
        raise SitegenError(f"{shown_path(confirmation)}: the edited {manuscript.bib.name} would not hold exactly the entries it "
                           "should (a bug, or an entry sitegen cannot find by its key); nothing was changed")
    return draft, bib_text


def _edited(text: str, changes: list[_Edit], line: int, manuscript: Manuscript, confirmation: Path) -> str:
    """A sentence with its changes made in turn, each checked: a worded sentence cannot share its sentence."""
    worded = [change for change in changes if isinstance(change.change, str)]
    if worded and len(changes) > 1:
        other = next(change for change in changes if change is not worded[0])
        raise SitegenError(f"{confirmation}:{worded[0].line}: {worded[0].suggestion.id} words the sentence on line "
                           f"{line} of {manuscript.draft.name}, which {other.suggestion.id} (line {other.line}) "
                           "changes too; accept one of them; nothing was changed")
    for change in changes:
        text = change.change if isinstance(change.change, str) else change.change(text)
    keys = claims.cited_keys(text)
    for change in changes:
        wrong = (f"still cites @{change.drops}" if change.drops and change.drops in keys else
                 f"does not cite @{change.cites}" if change.cites and change.cites not in keys else None)
        if wrong:
            raise SitegenError(f"{confirmation}:{change.line}: {change.suggestion.id}: after the edit the sentence on "
                               f"line {line} of {manuscript.draft.name} {wrong}; edit it by hand (or word it "
                               "with `sentence:`); nothing was changed")
    return text


def _bib_records(text: str, path: Path) -> dict[str, Record | None]:
    """Each entry of a .bib as the round reads it (None for one that cannot be a record), by key."""

    def record(entry) -> Record | None:
        try:
            return entry_record(entry)
        except ValueError:
            return None

    try:
        return {entry.id: record(entry) for entry in read_references(text, "bibtex", [])}
    except ReferenceProblem as exc:
        raise SitegenError(f"{shown_path(path)}:{exc.line}: {exc.message}") from None


def _bib_keys(text: str, path: Path) -> list[str]:
    try:
        return [entry.id for entry in read_references(text, "bibtex", [])]
    except ReferenceProblem as exc:
        raise SitegenError(f"{shown_path(path)}:{exc.line}: {exc.message}") from None


def add_citation(text: str, key: str, latex: bool = False) -> str:
    """The sentence citing `key` before its closing punctuation: `[@key]`, or in a LaTeX draft `~\\cite{key}`
    (pandoc's form is text to LaTeX, printed as it is)."""
    match = re.search(r"[.!?。！？][\"'”’)」』）]*\s*$", text)
    end = match.start() if match else len(text.rstrip())
    citation = f"~\\cite{{{key}}}" if latex else f" [@{key}]"
    return f"{text[:end]}{citation}{text[end:]}"


# --------------------------------------------------------------------------- rendering


def _quote(text: str, limit: int = 160) -> str:
    return '"' + (text if len(text) <= limit else text[:limit - 1] + "…") + '"'


# What Markdown reads as syntax inside a line: code spans, emphasis, links and images, table cells, strikethrough
# (values never start a line, so list and heading markers there need no escape).
MARKDOWN_SYNTAX = re.compile(r"([\\`*_\[\]|~])")


def _md(text: object) -> str:
    """Any value from a draft, a .bib or a provider made plain text in Markdown: on one line, every
    character Markdown reads as syntax backslash-escaped (no table breaks, links, code spans or emphasis)
    and no HTML. Every value the round's .md files show goes through here."""
    plain = " ".join(str(text).split()).replace("&", "&amp;").replace("<", "&lt;")
    return MARKDOWN_SYNTAX.sub(r"\\\1", plain)


def _code(text: str) -> str:
    """A value shown as a code span (read literally, HTML too), fenced by more backticks than it holds."""
    plain = " ".join(text.split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", plain)), default=0) + 1)
    pad = " " if plain.startswith("`") or plain.endswith("`") else ""
    return f"{fence}{pad}{plain}{pad}{fence}"


def _answers(payload: VerificationPayload) -> str:
    """Each index's answer, named once: its detail is most often a sentence about it ("Crossref unavailable: …")."""
    return "; ".join(f"{label(a.source)}: {a.answer}{f' ({unnamed(label(a.source), a.detail)})' if a.detail else ''}"
                     for a in payload.answers)


def _citing_sentences(review: claims.ClaimReview) -> dict[str, list[claims.Sentence]]:
    citing: dict[str, list[claims.Sentence]] = {}
    for sentence in review.citing:
        for key in sentence.keys:
            citing.setdefault(key, []).append(sentence)
    return citing


def render_problems(number: int, rows: list[ProblemRow], apart: list[CitationCheck], before: int | None,
                    unlinked: int = 0, kept: list[str] = ()) -> str:
    """problems.md: the seed's table, the trend since the last round (`before` problems), entries kept apart,
    how many sentences cite in a style naming no key (`unlinked`), and the entries whose answers were kept from the
    round's earlier run (`kept`)."""
    lines = [f"# Problems, round {number}", ""]
    if before is not None:
        lines += [f"Round {number - 1}: {counted(before, 'problem')}; round {number}: {len(rows)}.", ""]
    lines += ["| # | type | location | evidence | action |", "| --- | --- | --- | --- | --- |"]
    for row in rows:
        left = " (left from the last round)" if row.carried else ""
        lines.append(f"| {row.id} | {row.type}{left} | {_md(row.location)} | {_md(row.evidence)} | "
                     f"{_md(row.action)} |")
    if not rows:
        lines.append("| – | none | | | |")
    if unlinked:
        lines += ["", f"{unlinked} sentence{'s' if unlinked > 1 else ''} cite{'' if unlinked > 1 else 's'} in a "
                  "style naming no .bib key (numbered, author-year or a footnote): such a sentence is taken as "
                  "cited, and no entry is called uncited, as which entry it names cannot be told. Cite with "
                  "`[@key]` for the loop to check each citation against its entry."]
    if kept:
        lines += ["", f"{counted(len(kept), 'entry', 'entries')} answered in full by the earlier run of round {number} "
                  "and unchanged since kept that answer (not asked again): " + ", ".join(_md(key) for key in kept)]
    if apart:
        lines += ["", f"## Re-check later ({_why_apart(apart)}, not searched)", ""]
        lines += [f"- {_md(check.key)} (line {check.line}): {_md(check.not_verified or _answers(check.identity))}"
                  for check in apart]
    return "\n".join(lines) + "\n"


def _why_apart(apart: list[CitationCheck]) -> str:
    """Why entries were kept apart to re-check later, in words."""
    return " or ".join(why for why, flag in (("rate-limited", any(check.rate_limited for check in apart)),
                                             ("refused access", any(check.refused_access for check in apart)),
                                             (OVER_LOOKUPS, any(check.not_verified for check in apart))) if flag)


OVER_LOOKUPS = "not verified, over the limit of lookups"  # why entries were kept apart (`_why_apart`)


def render_queries(rows: list[ProblemRow], apart: list[CitationCheck]) -> str:
    lines = ["# Targeted searches", ""]
    for row in rows:
        if row.query and row.not_searched:
            lines.append(f"- {row.id} ({row.type}): {_code(row.query)}: not searched, {_md(row.not_searched)}")
        elif row.query:
            lines.append(f"- {row.id} ({row.type}): {_code(row.query)}")
        elif row.type in ("unsupported claim", "citation with no entry"):
            lines.append(f"- {row.id} ({row.type}): no search: the text holds no words to search with; "
                         "search by hand")
        else:
            lines.append(f"- {row.id} ({row.type}): no search (nothing to find for it)")
    if apart:
        why = _why_apart(apart)
        lines += ["", ("Rate-limited entries" if why == "rate-limited" else f"Entries kept apart ({why})")
                  + " are not searched: " + ", ".join(_md(c.key) for c in apart)]
    return "\n".join(lines) + "\n"


def again(number: int, left: int, repeats: bool = False) -> str:
    """How what round `number` (leaving `left` problems) could not check or search is tried again, as the loop
    does it: a round with problems is never run twice (the next one verifies and searches anew), and none follows
    the last, which a later run repeats only while it is paused (`repeats`: see `paused_round`); one with no
    problem but entries kept apart runs again."""
    if not left:
        return "run the loop again later"
    if number < MAX_ROUNDS:
        return (f"round {number + 1} verifies and searches again once round {number}'s confirm.yaml lists what you "
                "accept (`accept: []` accepts none)")
    if not repeats:  # settled (its confirm.yaml is written), or nothing a repeat would answer: no run checks it again
        return f"check by hand: the loop runs no round after round {MAX_ROUNDS}"
    return (f"check by hand: the loop runs no round after round {MAX_ROUNDS}, or run it again later: until round "
            f"{MAX_ROUNDS}'s confirm.yaml is written, it repeats round {MAX_ROUNDS} (not a third round)")


def render_suggestions(rows: list[ProblemRow], made: list[Suggestion], searches: list[CandidateSearch],
                       checks: dict[str, CitationCheck], number: int, repeats: bool = False) -> str:
    """revision-suggestions.md (`repeats`: whether a later run repeats round `number`, see `again`)."""
    lines = ["# Revision suggestions", "",
             "Nothing is changed until you list the suggestions you accept in `confirm.yaml` in this folder",
             "(`accept: [S1, S3]`, or `- id: S1` with `sentence: ...` to word the sentence yourself) and run",
             "`sitegen loop ... --apply` or the next round. New evidence is marked **[to confirm]**: check that",
             "the work really supports the sentence before you accept it.", ""]
    failed = {s.problem: s for s in searches if s.status != "ok"}
    for row in rows:
        lines += [f"## {row.id}: {row.type}: {_md(row.location)}", "", f"Evidence: {_md(row.evidence)}", ""]
        offered = [s for s in made if s.problem == row.id]
        for suggestion in offered:
            lines.append(f"- **{suggestion.id}** {_describe(suggestion, checks)}")
        if row.id in failed:
            lines.append(f"- the search {_code(row.query)} failed ({_md(failed[row.id].status)}): this says nothing about "
                         f"whether literature exists; {again(number, len(rows), repeats)}")
        elif row.not_searched:
            lines.append(f"- the search {_code(row.query)} was not sent, {_md(row.not_searched)}: this says nothing "
                         f"about whether literature exists; {again(number, len(rows), repeats)}, or search by hand")
        elif row.query and not any(s.record for s in offered) and row.type != "conflicting citation":
            hits = [record for search in searches if search.problem == row.id for record in search.records]
            seen = _md("; ".join(f"{_first_author(r)} ({r.year or 'n.d.'}) {r.title}" for r in hits))
            lines.append(f"- the search {_code(row.query)} found nothing to suggest" +
                         (f" (its hits are other works: {seen})" if seen else "") +
                         "; search by hand (no hit is not proof that no literature exists)")
        if not offered:
            lines.append(f"- [to check by hand] {row.action}")
        lines.append("")
    return "\n".join(lines)


def _describe(suggestion: Suggestion, checks: dict[str, CitationCheck]) -> str:
    record = suggestion.record
    work = _md(f"{_first_author(record)} ({record.year or 'n.d.'}) {record.title}" +
                 (f", doi:{record.DOI}" if record.DOI else "")) if record else ""
    if suggestion.action == "remove-citation":
        return f"remove the citation @{_md(suggestion.key)} from the sentence"
    if suggestion.action == "cite-candidate":
        instead = f"instead of @{_md(suggestion.key)}" if suggestion.key else "in the sentence"
        return f"cite {work} as @{_md(suggestion.new_key)} {instead} **[to confirm]**"
    if suggestion.action == "remove-entry":
        return f"remove the entry {_md(suggestion.key)} from the .bib and its citations from the draft"
    check = checks.get(suggestion.key)
    diff = field_diff(check.record, record) if check and check.record else []
    changes = _md("; ".join(f"{name}: {old!r} → {new!r}" for name, old, new in diff) or "no field differs")
    mark = " **[to confirm]**" if suggestion.to_confirm else ""
    return f"replace the entry {_md(suggestion.key)} with {work} ({changes}){mark}"


def _first_author(record: Record | None) -> str:
    if record is None or not record.author:
        return "Anonymous"
    first = record.author[0]
    return (first.family or first.literal or "") + (" et al." if len(record.author) > 1 else "")


def field_diff(cited: Record, correct: Record) -> list[tuple[str, str, str]]:
    """The fields that differ between the entry as cited and the correct record."""
    fields = {"title": lambda r: r.title, "first author": lambda r: _first_author(r).removesuffix(" et al."),
              "year": lambda r: str(r.year or ""), "container": lambda r: r.container_title or "",
              "volume": lambda r: r.volume or "", "pages": lambda r: r.page or "", "DOI": lambda r: r.DOI or ""}
    return [(name, get(cited), get(correct)) for name, get in fields.items()
            if get(cited).casefold() != get(correct).casefold() and get(correct)]


def write_summary(manuscript: Manuscript) -> None:
    """final-summary.md: rounds run, problems per round, what was revised, what is left."""
    rounds = manuscript.rounds()
    lines = ["# Evidence loop: summary", "",
             f"Draft: {_md(manuscript.draft.name)}; bibliography: {_md(manuscript.bib.name)}.",
             f"Rounds run: {len(rounds)} of at most {MAX_ROUNDS}.", "",
             "| round | problems | not searched | re-check later | revised |", "| --- | --- | --- | --- | --- |"]
    last_rows, last_apart, last_why, failed, refused, incomplete, unsearched = [], "", "", [], {}, [], []
    for number in rounds:
        folder = manuscript.round_dir(number)
        last_rows = read_problems(folder)
        checks, searches = round_files(folder, number)
        apart = _kept_apart(checks)
        last_apart, last_why = ", ".join(_md(check.key) for check in apart), _why_apart(apart)
        failed = [search for search in searches if search.status != "ok"]
        refused = refusals(checks, searches)
        incomplete = incomplete_sources(checks, searches)
        revised = "waiting for confirm.yaml"
        if (folder / "applied.json").is_file():
            applied = Applied.model_validate_json((folder / "applied.json").read_text(encoding="utf-8"))
            revised = ", ".join(applied.accepted) or "none accepted"
        unsearched = [row for row in last_rows if row.not_searched]
        lines.append(f"| {number} | {len(last_rows)} | {len(unsearched)} | {len(apart)} | {revised} |")
    lines.append("")
    then = again(len(rounds), len(last_rows), bool(rounds) and paused_round(manuscript) == rounds[-1])
    if rounds and not last_rows and last_apart:
        said = {"rate-limited": "an index was rate limited", "refused access": "an index refused access",
                OVER_LOOKUPS: "entries were over its limit of lookups, --max-lookups"}
        lines.append("Paused: the last round found no problem, but could not check every entry ("
                     + " or ".join(said[why] for why in last_why.split(" or ")) + "). Nothing unchecked counts as "
                     "verified: run the loop again later to re-verify.")
    elif rounds and not last_rows:
        lines.append("Converged: the last round found no problem.")
    elif rounds:
        final = len(rounds) >= MAX_ROUNDS
        lines += ["Left after the last round" + (" [to check by hand]:" if final else ":"), ""]
        lines += [f"- {row.id} {row.type}: {_md(row.location)}" + (" [to check by hand]" if final else "")
                  for row in last_rows]
    if last_apart:
        lines += ["", f"Re-check later ({last_why}, never searched): {last_apart}. To re-check them: "
                  f"{then}."]
    for name, cause in refused.items():  # seed 001: auth_error, said as it is, with what to fix
        lines += ["", f"{_md(name)} refused access in the last round, so it was asked nothing more: {_md(cause)}. Fix "
                  f"that; then, to check what it could not, {then}."]
    if incomplete:  # as `update` names a source it did not reach: nothing it missed is checked or "no literature"
        lines += ["", f"Incomplete sources in round {rounds[-1]}: " + "; ".join(_md(said) for said in incomplete) + "."]
    if failed:  # seed 001: say so when the last round only checked and could not search
        lines += ["", "Only checked, not searched: the targeted searches for "
                  + ", ".join(f"{search.problem} ({_md(search.status)})" for search in failed)
                  + f" failed, which says nothing about whether literature exists; {then}."]
    if unsearched:  # over the round's limit of searches: never dropped without a word
        lines += ["", f"Not searched in round {rounds[-1]}: {counted(len(unsearched), 'problem')} ("
                  + ", ".join(row.id for row in unsearched) + f"), {_md(unsearched[0].not_searched)}; their queries are "
                  f"in queries.md. Not searched says nothing about whether literature exists; {then}, or search by hand."]
    atomic_write(manuscript.base / "final-summary.md", "\n".join(lines) + "\n")


def problems_left(manuscript: Manuscript) -> int:
    rounds = manuscript.rounds()
    return len(read_problems(manuscript.round_dir(rounds[-1]))) if rounds else 0


@dataclass
class LoopResult:
    manuscript: Manuscript
    round: int | None  # the round run, None when only a confirmation was applied
    applied: Applied | None  # when a confirmation was applied
    left: int  # problems the last round left
    rounds: int  # rounds run so far
    recheck: list[str]  # entries kept apart as rate-limited or refused access in the last round: re-check later
    refused: dict[str, str] = field(default_factory=dict)  # indexes that refused access in the last round: why
    incomplete: list[str] = field(default_factory=list)  # indexes that did not answer the last round in full: what they left
    paused: bool = False  # the next run repeats the last round (`paused_round`)
    unsearched: list[str] = field(default_factory=list)  # problems of the last round over its limit of searches
    unverified: list[str] = field(default_factory=list)  # entries of the last round over its limit of lookups


def step(directory: Path, topic: str, *, sources: list[str], mode: str, draft: Path | None = None,
         bib: Path | None = None, out: Path | None = None, apply: bool = False, verify: Verifier | None = None,
         transport: httpx.BaseTransport | None = None, max_searches: int = MAX_SEARCHES,
         max_lookups: int = MAX_LOOKUPS) -> LoopResult:
    """One step of a manuscript's evidence loop: apply the last round's confirmation (`apply`), or run
    the next round, verifying at most `max_lookups` entries and sending at most `max_searches` searches (snapshots
    under the loop's own folder, so a loop replays offline)."""
    manuscript = find_manuscript(directory, topic, draft, bib, out)

    def result(number: int | None, applied: Applied | None = None) -> LoopResult:
        rounds = manuscript.rounds()
        checks, searches = round_files(manuscript.round_dir(rounds[-1]), rounds[-1]) if rounds else ([], [])
        recheck = [check.key for check in _kept_apart(checks) if not check.not_verified]
        unverified = [check.key for check in checks if check.not_verified]
        unsearched = [row.id for row in read_problems(manuscript.round_dir(rounds[-1])) if row.not_searched] \
            if rounds else []
        return LoopResult(manuscript, number, applied, problems_left(manuscript), len(rounds), recheck,
                          refusals(checks, searches), incomplete_sources(checks, searches),
                          bool(rounds) and paused_round(manuscript) == rounds[-1], unsearched, unverified)

    if apply:
        rounds = manuscript.rounds()
        if not rounds:
            raise SitegenError(f"no round has been run for this topic in {manuscript.base}; nothing to apply")
        return result(None, apply_confirmation(manuscript, rounds[-1]))
    if converged_round(manuscript) is not None:
        return result(None)
    check_sources(sources)
    settings = SourceSettings.from_environment()
    with open_fetcher(mode, manuscript.base / "snapshots", transport=transport) as fetcher:
        number = run_round(manuscript, fetcher, settings, sources, verify or verify_citation, search_sources,
                           max_searches, max_lookups)
    return result(number)
