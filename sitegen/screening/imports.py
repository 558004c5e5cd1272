"""Screening decisions made in another tool (Rayyan, Covidence, ASReview LAB) as a reviewer's decision file.

Each tool's CSV export is read as one `Exported` decision per row, with the row's reference as an
`Entry`. Each is matched to a record of the review by DOI, then PMID (each only when the row and the
record are one work as the identity graph requires: titles alike, both notices or neither), then by the
content key `sitegen import` gives a reference without identifiers, then by the metadata matcher's `same`
verdict, always as the canonical record of a confirmed duplicate, when exactly one canonical record
qualifies (never by anything looser: a wrong match puts a decision on another paper). The decisions are appended to `screening/<stage>/<reviewer>.csv`; a row
already there is never changed (a different decision is reported as a conflict, also when the row is on a
confirmed duplicate of the record: the reviewer decided that work), and a row the review's
screening rules would refuse (a full-text exclusion without a reason code, a record not screened in at
title/abstract) is left out and reported, so `sitegen check` passes afterwards.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from rapidfuzz import fuzz

from sitegen.errors import SitegenError
from sitegen.records.entry import Entry
from sitegen.records.ids import NAMESPACE_LABELS, normalise_doi, normalise_pmid
from sitegen.records.matching import TITLE_FLOOR, Work, classify, record_work, work
from sitegen.records.model import CONTROL_CHARACTER, Record, without_hidden_format
from sitegen.records.mojibake import encoded_twice, encoded_twice_message
from sitegen.records.notices import notice_kind
from sitegen.records.titles import folded, matched_title
from sitegen.references.fields import accession_pmid
from sitegen.references.records import entry_record
from sitegen.references.table import exported_authors
from sitegen.review.folder import DecisionRow, Review
from sitegen.review.models import DECISION_COLUMNS, NOTE_LIMIT, Decision
from sitegen.review.problems import Problem
from sitegen.review.write import with_rows_added
from sitegen.screening.checks import defined_reasons, screening_problems
from sitegen.screening.status import ScreeningFacts, screening_facts
from sitegen.text import counted

Tool = Literal["rayyan", "covidence", "asreview"]

# Each export's column (lower-cased) for each entry field, in order of preference. ASReview LAB exports a
# dataset under the columns it was uploaded with, which it reads by its own alternatives (a RIS upload's
# `primary_title` and `first_authors`), so those are read too.
COLUMNS: dict[str, tuple[str, ...]] = {
    "title": ("title", "primary_title"),
    "author": ("authors", "author", "first_authors", "author names"),
    "year": ("year", "published year", "publication_year"),
    "journal": ("journal", "journal_name", "secondary_title"),
    "volume": ("volume",),
    "number": ("issue", "number"),
    "pages": ("pages",),
    "doi": ("doi",),
    "pmid": ("pubmed_id", "pmid", "pubmed id"),
    "abstract": ("abstract", "abstract note", "notes_abstract"),
    "url": ("url",),
}
# ASReview LAB 2 writes its labels to `asreview_label`; version 1 wrote them to the dataset's own label column,
# whichever of ASReview's names for it the upload had (its own order of preference, after `asreview_label`).
ASREVIEW_LABELS = ("asreview_label", "final_included", "label", "label_included", "included_label", "included_final",
                   "included", "included_flag", "include")
# Covidence's column of accession numbers: a reference's PMID where it came from PubMed (accession_pmid).
ACCESSION = "accession number"
# Rayyan's three decisions. Its Maybe (unsure, from the title and abstract) is sitegen's maybe: one at title/abstract
# sends the record on to full text as an include does, and a reviewer's maybe beside another's include is a conflict
# to adjudicate, as for sitegen's own screeners (screening.outcomes.TO_FULL_TEXT).
RAYYAN_DECISIONS = {"included": "include", "excluded": "exclude", "maybe": "maybe"}
READ_COLUMNS = frozenset({*(name for names in COLUMNS.values() for name in names), *ASREVIEW_LABELS, "notes",
                          "asreview_note", ACCESSION})  # and any column with "reason" or "decision" in its name
# Problems that are no one row's: importing is refused whole rather than row by row.
WHOLE_REVIEW = {"protocol-unlocked"}


class ExportProblem(Exception):
    """A file that is not the tool's export, or a row that cannot be read, at a line of the file."""

    def __init__(self, line: int, message: str):
        super().__init__(f"{line}: {message}")
        self.line, self.message = line, message


@dataclass(frozen=True)
class Exported:
    """One row of a tool's export: its reference, and the reviewer's decision (None: none made)."""

    entry: Entry
    decision: str | None
    reasons: tuple[str, ...] = ()  # the tool's exclusion reasons, as written there
    note: str = ""
    why_undecided: str = ""
    reasons_of: int = 1  # how many reviewers' reasons `reasons` lists (Rayyan's are all its excluders')


@dataclass(frozen=True)
class Skipped:
    line: int  # of the export
    title: str
    why: str


@dataclass
class DecisionImport:
    """What an import did: `written` rows appended to `path`, and every row it did not write, with why."""

    path: str
    rows: int = 0
    matched: int = 0
    written: list[Decision] = field(default_factory=list)
    already: int = 0  # rows the decision file already held, with the same decision
    repeated: list[Skipped] = field(default_factory=list)  # rows deciding as an earlier row of the export does
    undecided: list[Skipped] = field(default_factory=list)
    unmatched: list[Skipped] = field(default_factory=list)
    ambiguous: list[Skipped] = field(default_factory=list)
    conflicts: list[Skipped] = field(default_factory=list)
    refused: list[Skipped] = field(default_factory=list)  # rows the review's screening rules refuse
    unmapped_reasons: list[Skipped] = field(default_factory=list)
    other_reasons: list[Skipped] = field(default_factory=list)  # reasons given beside the one a row holds
    notes_left_out: list[Skipped] = field(default_factory=list)  # rows written without a note too long to hold


# --------------------------------------------------------------------------- reading the exports


def read_export(text: str, tool: Tool, reviewer: str, decision: str | None = None) -> list[Exported]:
    """The rows of `tool`'s CSV export. `reviewer` is the name Rayyan records decisions under;
    `decision` says what a Covidence export holds when the file does not say. ExportProblem names the
    line of a file that is not the tool's export or cannot be read."""
    header, rows = _table(text)
    if not any(name in header for columns in (COLUMNS["title"], COLUMNS["doi"], COLUMNS["pmid"]) for name in columns):
        raise ExportProblem(1, f"no title, DOI or PMID column: not an export of references by {tool}"
                               + (f" (its first line: {', '.join(list(header)[:6])})" if header else " (it is empty)"))
    if tool == "rayyan":
        _require(header, ("notes",), "Rayyan's CSV export (its notes column holds RAYYAN-INCLUSION)")
        return [_rayyan(line, row, reviewer) for line, row in rows]
    if tool == "asreview":
        label = next((name for name in ASREVIEW_LABELS if name in header), None)
        if label is None:
            raise ExportProblem(1, f"no label column ({' or '.join(ASREVIEW_LABELS)}): not an ASReview LAB export")
        return [_asreview(line, row, label) for line, row in rows]
    reason, given = _one_column(header, "reason"), _one_column(header, "decision")
    # Covidence's own export of excluded studies has no reason column: each row's Notes say "Exclusion reason: …;".
    in_notes = reason is None and bool(rows) and all(COVIDENCE_REASON.search(row.get("notes", "")) for _, row in rows)
    if decision is None and reason is None and given is None and not in_notes:
        raise ExportProblem(1, "a Covidence export of included or excluded studies does not say which; "
                         "give --decision include or --decision exclude")
    return [_covidence(line, row, decision, reason, given) for line, row in rows]


def _one_column(header: dict[str, int], word: str) -> str | None:
    """The column whose name holds `word` (a spreadsheet's "Decision", "Exclusion reason"), None when none does;
    several (one per reviewer: "Reviewer 1 decision", "Reviewer 2 decision") are refused: whose is not known."""
    named = [name for name in header if word in name]
    if len(named) > 1:
        raise ExportProblem(1, f"{len(named)} columns name a {word} ({', '.join(named)}): which of them is the "
                               "reviewer's is not known; keep that one alone")
    return named[0] if named else None


# A spreadsheet's decision column (a Covidence export holds one decision, said by --decision or its reasons).
DECISION_WORDS = {"include": "include", "included": "include", "exclude": "exclude", "excluded": "exclude",
                  "maybe": "maybe"}  # as Rayyan's Maybe is (RAYYAN_DECISIONS)


COVIDENCE_REASON = re.compile(r"Exclusion reason:\s*([^;\n]*);?\s*", re.IGNORECASE)


def _covidence(line: int, row: dict[str, str], decision: str | None, reason: str | None,
               given: str | None) -> Exported:
    """A row of a Covidence export (or of a spreadsheet in its columns): its decision is the row's own, in a
    decision column, else --decision's, else an exclusion (an export that gives reasons is of excluded studies)."""
    notes = row.get("notes", "")
    if reason:
        written, note = tuple(_split_reasons(row.get(reason, ""))), notes
    else:
        written = tuple(found.strip() for found in COVIDENCE_REASON.findall(notes) if found.strip())
        note = COVIDENCE_REASON.sub("", notes).strip()
    said = row.get(given, "").strip() if given else ""
    own = DECISION_WORDS.get(said.casefold())
    if said and own is None:
        return Exported(_entry(line, row), None, why_undecided=f"{given} {said!r} is not Include, Exclude or Maybe")
    if own and decision and own != decision:
        raise ExportProblem(line, f"its {given} is {said!r}, but --decision {decision} says every row is one")
    final = own or decision or ("exclude" if written or not given else None)
    if final is None:
        return Exported(_entry(line, row), None, why_undecided=f"its {given} is empty")
    if written and final == "include":  # a row giving an exclusion reason is no inclusion: the file is misread
        raise ExportProblem(line, f"this row gives an exclusion reason ({'; '.join(written)}), but "
                                  + (f"its {given} is {said!r}" if own else "--decision include says the file holds "
                                     "included studies: it is an export of excluded ones"))
    return Exported(_entry(line, row), final, written, note)


def _table(text: str) -> tuple[dict[str, int], list[tuple[int, dict[str, str]]]]:
    """The header (lower-cased column name -> place), and (line, row by column name) for each non-blank row;
    ExportProblem names the line. Columns are separated by commas, or by what the header is separated by
    where it holds none (a spreadsheet in German or French settings writes ';', ASReview's TSV a tab)."""
    # The first line ends at any line break: Excel for Mac's "CSV (Macintosh)" ends its lines in CR alone.
    first, rest = re.fullmatch(r"([^\r\n]*)(?:\r\n|\r|\n)?(.*)", text, re.DOTALL).groups()
    skipped = 0
    if re.fullmatch(r"sep=(.)", first):  # Excel's line naming the separator, before the header
        delimiter, text, skipped = first[4], rest, 1
    else:
        delimiter = "," if "," in first else max(";\t", key=first.count) if (";" in first or "\t" in first) else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows = []
    line = 1
    try:
        header = [name.strip().lower() for name in next(reader, [])]
        read = [name for name in header if name in READ_COLUMNS or "reason" in name or "decision" in name]
        twice = next((name for name in read if read.count(name) > 1), None)
        if twice is not None:
            raise ExportProblem(1 + skipped, f"column {twice!r} appears twice in the header (names are read "
                                             "without regard to case): which of them a row's value is in is not known")
        while True:
            line = reader.line_num + 1
            values = next(reader, None)
            if values is None:
                break
            if not any(value.strip() for value in values):
                continue
            if len(values) != len(header):
                raise ExportProblem(line + skipped, f"{counted(len(values), 'field')} where the header has {len(header)}")
            # A character no text may hold (a NUL, a C1 control where cp1252 was read as Latin-1) is a space, as
            # in a provider's answer: a title or a note holding one is still the reviewer's row.
            rows.append((line + skipped, {name: CONTROL_CHARACTER.sub(" ", value) if not value.isprintable() else value
                                          for name, value in zip(header, values, strict=True)}))
    except csv.Error as error:
        if reader.line_num > line and "unexpected end of data" in str(error):  # where the quote opened
            raise ExportProblem(line + skipped, "a quoted field of this row is never closed (a '\"' missing), so "
                                                "the rest of the file was read into it") from None
        raise ExportProblem(reader.line_num + skipped, str(error)) from None
    return {name: place for place, name in enumerate(header)}, rows


def _require(header: dict[str, int], names: tuple[str, ...], what: str) -> None:
    missing = [name for name in names if name not in header]
    if missing:
        raise ExportProblem(1, f"no {', '.join(missing)} column: not {what}")


def _entry(line: int, row: dict[str, str]) -> Entry:
    fields = {name: next((row[column] for column in columns if row.get(column, "").strip()), "")
              for name, columns in COLUMNS.items()}
    fields["author"] = exported_authors(fields["author"])
    fields["pmid"] = fields["pmid"] or accession_pmid(row.get(ACCESSION, ""))
    return Entry(str(line), fields, line)


def _rayyan(line: int, row: dict[str, str], reviewer: str) -> Exported:
    notes = row.get("notes", "")
    found = re.search(r"RAYYAN-INCLUSION:\s*\{(.*?)\}", notes)
    votes = [(name.strip().casefold(), vote) for name, vote in re.findall(r'"([^"]*)"\s*=>\s*"([^"]*)"',
                                                                          found.group(1) if found else "")]
    # Two collaborators may share a display name: their votes are then nobody's in particular.
    cast = {vote for name, vote in votes if name == reviewer.casefold()}
    vote = cast.pop() if len(cast) == 1 else None
    reasons = re.search(r"RAYYAN-EXCLUSION-REASONS:\s*(.*?)\s*(?:\|\s*[A-Z][A-Z-]+:|$)", notes)
    decision = RAYYAN_DECISIONS.get((vote or "").casefold())
    why = "" if decision else (
        f"{reviewer!r} names several reviewers in it, who decided otherwise" if cast
        else f"{reviewer!r} has no decision in it" + (
            f" (decisions by: {', '.join(sorted({name for name, _ in votes}))}); if one of them is {reviewer!r}, give "
            "their name in Rayyan with --rayyan-reviewer" if votes
            else " (no RAYYAN-INCLUSION in its notes)")
        if vote is None else f"decision {vote!r} is not Included, Excluded or Maybe")
    # Rayyan lists every excluding reviewer's reasons together, without saying whose: none is the reviewer's
    # unless they excluded it.
    excluding = sum(1 for _, cast_vote in votes if cast_vote.casefold() == "excluded")
    given = tuple(_split_reasons(reasons.group(1))) if reasons and decision == "exclude" else ()
    return Exported(_entry(line, row), decision, given,
                    note=_rayyan_notes(notes, reviewer), why_undecided=why, reasons_of=max(1, excluding))


# One of Ruby's inspected strings, as Rayyan writes them: quotes and backslashes inside are escaped.
RAYYAN_STRING = re.compile(r'\s*"((?:[^"\\]|\\.)*)"\s*,?')


def _rayyan_notes(notes: str, reviewer: str) -> str:
    """The reviewer's own notes in Rayyan's USER-NOTES: {"Alice"=>["a note", "another"], "Bob"=>[...]}. Each
    list is read string by string (a regular expression repeating strings and spaces backtracks exponentially
    on a list never closed)."""
    found = re.search(r"USER-NOTES:\s*\{(.*)\}", notes, re.DOTALL)
    body = found.group(1) if found else ""
    for name in re.finditer(r'"([^"]*)"\s*=>\s*\[', body):
        if name.group(1).strip().casefold() != reviewer.casefold():
            continue
        written, at = [], name.end()
        while item := RAYYAN_STRING.match(body, at):
            written.append(re.sub(r"\\(.)", lambda escaped: " " if escaped.group(1) in "nrt" else escaped.group(1),
                                  item.group(1)).strip())
            at = item.end()
        return " ".join(note for note in written if note)
    return ""


def _asreview(line: int, row: dict[str, str], label: str) -> Exported:
    value = row.get(label, "").strip()
    decision = {"1": "include", "1.0": "include", "0": "exclude", "0.0": "exclude"}.get(value)
    # ASReview LAB 2 writes the reviewer's note to asreview_note; version 1 wrote exported_notes_1, _2, ...
    notes = [row["asreview_note"]] if "asreview_note" in row else [
        row[name] for name in sorted(row, key=_notes_number) if _notes_number(name)]
    return Exported(_entry(line, row), decision, note=" ".join(note.strip() for note in notes if note.strip()),
                    why_undecided="" if decision else "not labelled" if value in ("", "-1", "nan")
                    else f"label {value!r} is not 1 or 0")


def _notes_number(column: str) -> int:
    """n for ASReview LAB 1's note column exported_notes_<n>, else 0."""
    found = re.fullmatch(r"exported_notes_(\d{1,6})", column)
    return int(found.group(1)) if found else 0


def _split_reasons(text: str) -> list[str]:
    """A tool's reasons, as it wrote them: a list cut at ';' (the parts mapped later, `mapped_reasons`)."""
    return [reason.strip() for reason in text.split(";") if reason.strip()]


def mapped_reasons(written: tuple[str, ...], reasons: dict[str, str]) -> list[tuple[str, str | None]]:
    """Each reason a tool wrote with the protocol's code for it (None: none). Tools separate reasons with
    commas too, and a label may hold commas of its own ("modified OIC task, odour, fear"): the longest run
    of comma-separated parts that is a reason is one reason. A run is at most twice as long as the longest
    code or label (a tool may double a comma), so a cell of many commas is read in one pass, not cubed."""
    codes = _reason_codes(tuple(sorted(reasons.items())))
    longest = 2 * max((len(name.split(",")) for item in reasons.items() for name in item), default=1)
    found: list[tuple[str, str | None]] = []
    for text in written:
        parts = [part.strip() for part in text.split(",")]
        start = 0
        while start < len(parts):
            end = next((end for end in range(min(len(parts), start + longest), start, -1)
                        if _plain(", ".join(parts[start:end])) in codes), start + 1)
            reason = ", ".join(parts[start:end])
            if reason:
                found.append((reason, codes.get(_plain(reason))))
            start = end
    return found


def reason_code(reason: str, reasons: dict[str, str]) -> str | None:
    """The protocol's code for a tool's exclusion reason: one whose code or label it is, letter case,
    spacing and punctuation aside (`reasons` maps code to label)."""
    return _reason_codes(tuple(sorted(reasons.items()))).get(_plain(reason))


@lru_cache(maxsize=8)
def _reason_codes(reasons: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Each code and label in its plain form -> the code (the first code, in order, that has it)."""
    codes: dict[str, str] = {}
    for code, label in reasons:
        codes.setdefault(_plain(code), code)
        codes.setdefault(_plain(label), code)
    return codes


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", folded(text)).split())


# --------------------------------------------------------------------------- matching


class RecordIndex:
    """The review's records by DOI, PMID and content key, and their matcher views by block. A record a
    reviewer confirmed a duplicate (`canonical` maps it to its canonical record) is found as its canonical."""

    def __init__(self, records: dict[str, Record], canonical: dict[str, str] | None = None):
        self.records = records
        self.canonical = canonical or {}
        self.by_identifier: dict[tuple[str, str], set[str]] = {}
        self.blocks: dict[str, list[Work]] = {}
        for record in records.values():
            for namespace, value in record.identity_keys().items():
                if namespace in ("doi", "pmid", "ref"):
                    self.by_identifier.setdefault((namespace, value), set()).add(record.id)
            view = record_work(record)
            for block in view.blocks:
                self.blocks.setdefault(block, []).append(view)

    def match(self, entry: Entry) -> tuple[list[str], str, str]:
        """The ids of the canonical records `entry` is (one: a match; more: ambiguous), how they were found,
        and, when none is found, why the records holding its DOI or PMID are not it."""
        doi, pmid = normalise_doi(entry.get("doi") or entry.get("url")), normalise_pmid(entry.get("pmid"))
        disagreeing: list[str] = []
        for namespace, value in (("doi", doi), ("pmid", pmid), ("ref", imported_ref(entry))):
            holders = sorted(self.by_identifier.get((namespace, value), ())) if value else []
            agreeing = [record_id for record_id in holders if not _why_other(entry, self.records[record_id])]
            if agreeing:
                return self._canonical(agreeing), namespace, ""
            disagreeing += [f"{record_id} has its {NAMESPACE_LABELS[namespace]} but is another work "
                            f"({_why_other(entry, self.records[record_id])})" for record_id in holders]
        year = entry.get("year")[:4]
        view = work(entry.id, entry.get("title"), [n for n in entry.get("author").split(" and ") if n],
                    int(year) if year.isdigit() else None, entry.get("journal"), entry.get("volume"),
                    entry.get("number"), entry.get("pages"), doi, entry.get("abstract"),
                    {"pmid": pmid} if pmid else None)
        candidates = {other.key: other for block in view.blocks for other in self.blocks.get(block, ())}
        same = [key for key, other in candidates.items() if classify(view, other)[0] == "same"]
        return self._canonical(same), "metadata", "; ".join(disagreeing)

    def _canonical(self, ids: list[str]) -> list[str]:
        return sorted({self.canonical.get(record_id, record_id) for record_id in ids})


def imported_ref(entry: Entry) -> str | None:
    """The content key `sitegen import` gives the record of `entry` (None when the entry has a published
    identifier or cannot be a record): taken from `entry_record` itself, so the two never disagree."""
    try:
        return entry_record(entry).custom.ref
    except ValueError:
        return None


def _why_other(entry: Entry, record: Record) -> str:
    """Why a row and a record sharing an identifier are not one work as the identity graph requires ("" when
    they are): one is a notice about another work (erratum, retraction, reply, comment) and the other not, or
    the row's title and the record's, compared, are less than TITLE_FLOOR alike."""
    row_notice = notice_kind(entry.get("title"))
    record_notice = notice_kind(record.title, record.custom.publication_types)
    if bool(row_notice) != bool(record_notice):
        return f"{'the row' if row_notice else 'the record'} is a notice about another work (an {row_notice or record_notice})"
    # Compared as the identity graph compares two records sharing an identifier (records.identity): a
    # tool's "[Preprint] ..." or MEDLINE's "[Translated title]. [Review] [33 refs]" is the record's title.
    title = matched_title(entry.get("title"))
    if title and fuzz.ratio(title, matched_title(record.title)) < TITLE_FLOOR:
        return "its title is another"
    return ""


# --------------------------------------------------------------------------- the decision file


def import_decisions(review: Review, duplicates: dict[str, str], exported: list[Exported], stage: str,
                     reviewer: str) -> tuple[DecisionImport, str | None]:
    """What importing `exported` does to `reviewer`'s decision file at `stage`: the report, and the
    file's new text (None when nothing is to be written). `duplicates` maps each record a reviewer
    confirmed a duplicate to its canonical record, which takes the decision (a duplicate's counts no more)."""
    rel = f"screening/{stage}/{reviewer}.csv"
    report = DecisionImport(rel, rows=len(exported))
    reasons = {r.code: r.label for r in review.protocol.meta.exclusion_reasons} if review.protocol else {}
    # The file's decisions by the record they now stand for: a confirmed duplicate's row is the reviewer's word on
    # its canonical record too (the record the export's row is matched to), though it counts no more.
    existing: dict[str, list[Decision]] = {}
    for row in review.decisions:
        if row.stage == stage and row.reviewer == reviewer:
            record_id = row.decision.record_id
            existing.setdefault(duplicates.get(record_id, record_id), []).append(row.decision)
    index = RecordIndex(review.records, duplicates)
    rows_of: dict[str, list[tuple[Decision, Skipped]]] = {}  # the export's rows of records the file does not decide
    for item in exported:
        skipped = Skipped(item.entry.line, item.entry.get("title"), "")
        if item.decision is None:
            report.undecided.append(dataclasses.replace(skipped, why=item.why_undecided))
            continue
        if not (item.entry.get("title") or item.entry.get("doi") or item.entry.get("pmid")):
            report.unmatched.append(dataclasses.replace(skipped, why="no DOI, PMID or title to match by"))
            continue
        ids, how, disagreeing = index.match(item.entry)
        if len(ids) > 1:
            report.ambiguous.append(dataclasses.replace(skipped, why=f"by {how} it could be any of {', '.join(ids)}"))
            continue
        if not ids:
            report.unmatched.append(dataclasses.replace(skipped, why=disagreeing or (
                "no record of the review has its DOI, PMID or content, and the matcher finds no record that is the "
                "same work")))
            continue
        report.matched += 1
        record_id = ids[0]
        decision = _decision(record_id, item, reasons, skipped, report)
        # The record's own row when the file has one (it is the one that counts), else its duplicates' rows.
        earlier = [row for row in existing.get(record_id, []) if row.record_id == record_id] or existing.get(record_id, [])
        if other := next((row for row in earlier if not _agree([row, decision])), None):
            of = "," if other.record_id == record_id else f" of {other.record_id}, a confirmed duplicate of it,"
            report.conflicts.append(dataclasses.replace(skipped, why=(
                f"{record_id}: the decision file says {_said(other)}{of} the export {_said(decision)}; "
                "left as it was")))
        elif any(row.record_id == record_id for row in earlier):
            report.already += 1  # the same decision (a reason one of them does not give is no disagreement)
        else:  # undecided, or decided alike only as a duplicate, whose decision counts no more: the record's own row
            rows_of.setdefault(record_id, []).append((decision, skipped))
    new = [row for rows in rows_of.values() if (row := _one_row(rows, report)) is not None]
    accepted = _acceptable(review, frozenset(duplicates), rel, stage, reviewer, new, report)
    report.written = [decision for decision, _ in accepted]
    written_at = {skipped.line for _, skipped in accepted}  # a note is left out of a row only if it is written
    report.notes_left_out = [skipped for skipped in report.notes_left_out if skipped.line in written_at]
    for listed in (report.conflicts, report.repeated, report.refused):
        listed.sort(key=lambda skipped: skipped.line)
    if not accepted:
        return report, None
    path = review.root / rel
    # The file's bytes are kept as they are (its line breaks and the notes' own), and the rows added end
    # their lines as its first line does: a reviewer's file written on Windows stays CRLF in Git's eyes.
    text = path.read_bytes().decode("utf-8") if path.exists() else ""
    return report, with_rows_added(text, DECISION_COLUMNS, [
        {"record_id": d.record_id, "decision": d.decision, "reason": d.reason, "note": d.note} for d, _ in accepted], rel)


def _agree(decisions: list[Decision]) -> bool:
    """Whether `decisions` are one decision: the same, with at most one reason among them (a reason one of them
    does not give is no disagreement)."""
    return len({d.decision for d in decisions}) == 1 and len({d.reason for d in decisions if d.reason}) <= 1


def _said(decision: Decision) -> str:
    return f"{decision.decision!r}" + (f" ({decision.reason})" if decision.reason else "")


def _one_row(rows: list[tuple[Decision, Skipped]], report: DecisionImport) -> tuple[Decision, Skipped] | None:
    """The row to write of an export's rows deciding one record (a duplicate the tool kept): the first giving a
    reason, else the first, when they agree; each other row is reported as repeating it. When they disagree
    none is the reviewer's word and each is reported as a conflict (the file's order must not decide)."""
    record_id = rows[0][0].record_id
    if _agree([decision for decision, _ in rows]):
        chosen = next((row for row in rows if row[0].reason), rows[0])
        report.repeated += [dataclasses.replace(skipped, why=(
            f"{record_id}: line {chosen[1].line} of the export decides it the same way; that row is the one taken"))
            for decision, skipped in rows if skipped is not chosen[1]]
        return chosen
    (first, at), other = rows[0], next((d, s) for d, s in rows if not _agree([rows[0][0], d]))
    report.conflicts.append(dataclasses.replace(at, why=(
        f"{record_id}: line {other[1].line} of the export says {_said(other[0])}, this row {_said(first)}; neither "
        "was written")))
    lines = ", ".join(str(skipped.line) for _, skipped in rows)
    report.conflicts += [dataclasses.replace(skipped, why=(
        f"{record_id}: rows of the export disagree on it (lines {lines}); none was written"))
        for _, skipped in rows[1:]]
    return None


def _decision(record_id: str, item: Exported, reasons: dict[str, str], skipped: Skipped,
              report: DecisionImport) -> Decision:
    code, lost = "", bool(item.reasons)  # lost: a reason of the reviewer's that the row's code does not say
    mapped: list[tuple[str, str | None]] = [(reason, None) for reason in item.reasons]  # a maybe's: the row holds none
    if item.decision == "exclude":
        mapped = mapped_reasons(item.reasons, reasons)
        if item.reasons_of > 1 and len({found or reason for reason, found in mapped}) > 1:
            # Several reviewers' reasons, several of them: which is this reviewer's is a guess (one reviewer's
            # given to another would hide a disagreement at full text), so none is taken.
            report.unmapped_reasons.append(dataclasses.replace(skipped, why=(
                f"{record_id}: the tool lists the reasons {', '.join(repr(r) for r, _ in mapped)} of "
                f"{item.reasons_of} reviewers who excluded it without saying whose: none was taken")))
            mapped = []
        codes = list(dict.fromkeys(found for _, found in mapped if found))
        code = codes[0] if codes else ""
        if len(codes) > 1:  # a decision row holds one reason: PRISMA counts each exclusion under one
            report.other_reasons.append(dataclasses.replace(skipped, why=(
                f"{record_id}: excluded for {', '.join(codes)}; a decision holds one reason, so {code} (given "
                "first) was written, and the tool's reasons kept in the row's note")))
        unmapped = [reason for reason, found in mapped if not found]
        if unmapped:
            report.unmapped_reasons.append(dataclasses.replace(skipped, why=(
                f"{record_id}: {', '.join(repr(r) for r in unmapped)} is no exclusion reason of the protocol "
                f"({defined_reasons(reasons)}); the tool's words are kept in the row's note")))
        lost = len(codes) > 1 or bool(unmapped)
    # A reason the row cannot hold (no code of the protocol's, or a second one) is kept in the row's note, in the
    # tool's words and said to be the tool's, with the others beside it: nothing the reviewer wrote is lost.
    said = f"Exclusion reason{'s' * (len(mapped) > 1)} in the tool: {'; '.join(item.reasons)}." if lost else ""
    return Decision(record_id=record_id, decision=item.decision, reason=code,
                    note=_note(record_id, said, item.note, skipped, report))


def _note(record_id: str, said: str, written: str, skipped: Skipped, report: DecisionImport) -> str:
    """The row's note: what import says of the tool's reasons (`said`), then the reviewer's note, on one line (a
    tool's note may hold line breaks and tabs), without the invisible format characters no reviewer's note may hold
    (`hand_written`: the tool's, not typed in the file, and `check` would refuse the row). A note longer than a row
    holds is left out, not cut (its missing end would be read as the note), and the report says so."""
    said, written = (" ".join(without_hidden_format(text).split()) for text in (said, written))
    note = f"{said} {written}".strip()
    if garbled := encoded_twice(note):  # `check` would refuse it (`hand_written`); mending it is the reviewer's
        kept = "" if encoded_twice(said) else said
        left_out = "the export's note, keeping only the tool's reasons" if kept else "it"
        report.notes_left_out.append(dataclasses.replace(skipped, why=(
            f"{record_id}: its note {encoded_twice_message(garbled)}; the row is written without {left_out}")))
        return kept
    if len(note) <= NOTE_LIMIT:
        return note
    kept = said if len(said) <= NOTE_LIMIT else ""
    left_out = "the export's note, keeping only the tool's reasons" if kept else "it"
    report.notes_left_out.append(dataclasses.replace(skipped, why=(
        f"{record_id}: its note is {len(note):,} characters long, more than a decision's note holds ({NOTE_LIMIT:,}); "
        f"the row is written without {left_out} (the whole note is in the export)")))
    return kept


def _acceptable(review: Review, duplicates: frozenset[str], rel: str, stage: str, reviewer: str,
                new: list[tuple[Decision, Skipped]], report: DecisionImport) -> list[tuple[Decision, Skipped]]:
    """The new rows the review's screening rules accept; each refused one is reported with the rule's
    message. First the rows a rule refuses on their own line (a full-text exclusion without a reason);
    then, by halving, the rows that break others (a title/abstract decision that puts a record already
    assessed in full text in conflict). A protocol never locked refuses the whole import."""
    rows = _RowsCheck(review, duplicates, rel, stage, reviewer)
    while True:
        added = rows.added(new)
        if whole := [p for p in added if p.code in WHOLE_REVIEW]:
            raise SitegenError(f"{whole[0].path}:{whole[0].line}: {whole[0].message}; nothing was written")
        own = {p.line - rows.first_line: p.message for p in added
               if p.path == rel and 0 <= p.line - rows.first_line < len(new)}
        if not own:
            own = rows.of_records(added, new)
        if not own:
            break
        for n, message in sorted(own.items()):
            report.refused.append(dataclasses.replace(new[n][1], why=f"{new[n][0].record_id}: {message}"))
        new = [item for n, item in enumerate(new) if n not in own]
    return _without_breaking(rows, [], new, report)


def _without_breaking(rows: _RowsCheck, accepted: list[tuple[Decision, Skipped]],
                      candidates: list[tuple[Decision, Skipped]],
                      report: DecisionImport) -> list[tuple[Decision, Skipped]]:
    """The `candidates` that, added after `accepted`, break no rule: all of them when together they
    break none, else those of each half (a handful of checks per refused row)."""
    if not candidates:
        return []
    added = rows.added(accepted + candidates)
    if not added:
        return candidates
    if len(candidates) == 1:
        decision, skipped = candidates[0]
        report.refused.append(dataclasses.replace(skipped, why=(
            f"{decision.record_id}: it would break the review's screening rules ({added[0].path}:{added[0].line}: "
            f"{added[0].message})")))
        return []
    half = len(candidates) // 2
    first = _without_breaking(rows, accepted, candidates[:half], report)
    return first + _without_breaking(rows, accepted + first, candidates[half:], report)


# Problems on a decision row that only the decisions of the same record can cause.
OF_THE_RECORDS_OWN_ROWS = frozenset({"not-screened-in", "needless-adjudication"})


class _RowsCheck:
    """The screening problems that new rows of one decision file would add to the review."""

    def __init__(self, review: Review, duplicates: frozenset[str], rel: str, stage: str, reviewer: str):
        self.review, self.duplicates, self.rel, self.stage, self.reviewer = review, duplicates, rel, stage, reviewer
        before, self.facts = _problems(review, duplicates)  # facts: of the review with the last rows checked
        self.before = set(before)
        self.first_line = 1 + max((row.line for row in review.decisions if row.path == rel), default=1)

    def of_records(self, added: list[Problem], new: list[tuple[Decision, Skipped]]) -> dict[int, str]:
        """The new rows to refuse for problems they cause on other rows, with the problem: a record's full-text
        row that its new title/abstract decision leaves not screened in (the record's new rows), and a batch's
        full-text rows that new title/abstract decisions leave with unsettled conflicts (the new rows of the
        batch's records now in conflict). One check for any number of refused rows, where halving re-checks
        the whole review a dozen times for each (hours for a large review's import); halving finds the rows
        breaking any other rule. `added` must have checked `new` last (its outcomes are used)."""
        record_at = {(row.path, row.line): row.decision.record_id for row in self.review.decisions}
        rows_of: dict[str, list[int]] = {}
        for n, (decision, _) in enumerate(new):
            rows_of.setdefault(decision.record_id, []).append(n)
        batch_of = {record_id: batch for batch in self.facts.batches for record_id in batch.record_ids}
        in_conflict = self.facts.outcomes["title-abstract"]
        refused: dict[int, str] = {}
        for problem in added:
            record_id = record_at.get((problem.path, problem.line))
            if problem.code in OF_THE_RECORDS_OWN_ROWS:
                culprits = [record_id]
            elif problem.code == "batch-unsettled" and record_id in batch_of:
                culprits = [other for other in batch_of[record_id].record_ids if other in rows_of
                            and (outcome := in_conflict.get(other)) is not None and outcome.decision == "conflict"]
            else:
                continue
            for n in (n for culprit in culprits for n in rows_of.get(culprit, [])):
                refused.setdefault(n, f"it would break the review's screening rules ({problem.path}:{problem.line}: "
                                      f"{problem.message})")
        return refused

    def added(self, new: list[tuple[Decision, Skipped]]) -> list[Problem]:
        rows = [DecisionRow(self.stage, self.reviewer, self.rel, self.first_line + n, {"record_id": 1, "reason": 3},
                            decision) for n, (decision, _) in enumerate(new)]
        after, self.facts = _problems(dataclasses.replace(self.review, decisions=self.review.decisions + rows),
                                      self.duplicates)
        return [problem for problem in after if problem not in self.before]


def _problems(review: Review, duplicates: frozenset[str]) -> tuple[list[Problem], ScreeningFacts]:
    facts = screening_facts(review, duplicates)
    return screening_problems(review, facts.outcomes, duplicates), facts
