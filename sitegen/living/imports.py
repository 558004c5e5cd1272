"""Import reference files (RIS, BibTeX, records CSV, ...) into a review: `sitegen import`.

Each file's entries become records (`sitegen.references.records.entry_record`) and are folded into
the review's records exactly as a saved-search run's results are (`sitegen.living.merge.integrate`):
by identity, keeping ids stable; a metadata match becomes a `same` row of duplicates.csv by reviewer
"sitegen", probable pairs are listed, a preprint and its journal version are linked. Then, in one
transaction: one `import` event per file (its name, hash, format and counts), records.jsonl,
duplicates.csv and, when asked, a saved search's `seen_ids` (only grows, in file order).

The files of one command share its time, so PRISMA takes them for one run: a record two files hold
is identified by both and counted once. Each file has its own source when one is given per file (two
databases searched the same day whose exports do not name them), and its own method by it. Each entry is an
identification (the event keeps each entry's record id under the database the entry names), so a record a file holds twice is a duplicate removed; a file
given twice (or two copies of one) is imported once, with a warning. An imported record is handed to reviewers by its import
event (`in_review`); it forms no screening batch, but is ranked with the other records imported outside one
(`screen rank --imported`) and is a new record of the digest of the week it was first imported in. PRISMA counts it under "identification from
databases" when the import's method is "database", under "other methods" otherwise.

A malformed record, an entry that cannot be a record (it has no title) or a file the reader cannot
read at all stops the import with FILE:LINE and nothing is written; with `skip_bad` each is skipped
and listed instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from sitegen.errors import OptionInvalid, SitegenError, cannot_read, shown_path
from sitegen.living.ledger import append, given_search_id, given_text
from sitegen.living.merge import integrate
from sitegen.living.update import check_run_time, decided, require_lock, write_integrated
from sitegen.records.model import Record, model_data
from sitegen.records.mojibake import encoded_twice, encoded_twice_said
from sitegen.records.providers import PROVIDERS, Source, kind
from sitegen.references import Format, ReferenceProblem, read_reference_file
from sitegen.references.records import entry_record
from sitegen.review.folder import Review
from sitegen.review.models import ImportedFile, ImportPayload
from sitegen.review.transaction import Transaction
from sitegen.review.write import json_kept_form
from sitegen.text import counted

Method = Literal["database", "other"]
MAX_SOURCE, MAX_DESCRIPTION = 200, 2000  # characters, as ImportPayload's source and description hold



# Bibliographic databases by the names reviews give them, in any of their platforms' spellings (`--source Embase`,
# "Embase (Ovid)", "Ovid MEDLINE", "CINAHL Complete", "Cochrane Central Register of Controlled Trials"): an import
# from one is identified from databases in PRISMA unless --method says otherwise (any other name is an other method).
DATABASE_NAMES = re.compile(r"\b(?:embase|scopus|web of science|medline|pubmed|cinahl|psycinfo|cochrane|central|eric|"
                            r"lilacs|global health|biosis|africa-wide)\b", re.IGNORECASE)
# A route by other methods that names the database it went through ("Citation searching (Scopus)", "Reference lists
# of Cochrane reviews"): other methods, as PRISMA counts them.
OTHER_ROUTES = re.compile(r"\b(?:citation|citing|cited|reference lists?|references|hand[- ]?search\w*|websites?|"
                          r"experts?|snowball\w*|grey|gray|personal)\b", re.IGNORECASE)
def _as_named_before(review: Review, source: str | None) -> str | None:
    """The name an earlier import of the review gave the source `source` names, written otherwise only in case or
    spacing ("EMBASE" after "Embase"), else `source`."""
    if source is None:
        return None
    folded = _folded(source)
    earlier = (name for payload in review.payloads if isinstance(payload, ImportPayload)
               for name in (payload.source, *(payload.file.entry_ids or () if payload.file else ())))
    return next((name for name in earlier if _folded(name) == folded), source)


@dataclass(frozen=True)
class Skipped:
    file: str
    line: int
    entry_id: str  # "" when a whole file was skipped
    reason: str


@dataclass
class FileImport:
    path: Path
    payload: ImportPayload
    ids: list[str]  # the record ids the file's entries are known by, each once, in file order
    new: list[str]  # of them, those new to the review
    skipped: list[Skipped]
    warnings: list[str]
    # Of the ids not new, those the review did not hold before this file: records matched by metadata to a record new
    # in the same file (one work twice in one export). The ledger counts them with those it held (`already`); the
    # report says which is which, since "already in the review" is untrue of them on a first import.
    duplicates: int = 0


@dataclass
class ImportResult:
    at: str
    files: list[FileImport]
    skipped_files: list[Skipped]  # files the reader could not read (with skip_bad)
    repeated: list[str] = field(default_factory=list)  # files given twice, each imported once
    records: dict[str, Record] = field(default_factory=dict)
    matched: list[tuple[str, str, float]] = field(default_factory=list)  # (new record, canonical record, score)
    probable: list[tuple[str, str, float]] = field(default_factory=list)
    versions: list[tuple[str, str]] = field(default_factory=list)  # (preprint id, journal version id)
    seen: tuple[str, int] | None = None  # (saved search, ids added to its seen_ids)

    def summary(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "files": [{
                "file": str(item.path), **model_data(item.payload.file),
                "source": item.payload.source, "method": item.payload.method, "new_ids": item.new,
                "duplicates_of_new": item.duplicates,
                "skipped_entries": [{"line": s.line, "id": s.entry_id, "reason": s.reason} for s in item.skipped],
                "warnings": item.warnings,
            } for item in self.files],
            "skipped_files": [{"file": s.file, "line": s.line, "reason": s.reason} for s in self.skipped_files],
            "repeated_files": self.repeated,
            "matched": [{"record_id": new, "duplicate_of": canonical, "score": round(score, 1)}
                        for new, canonical, score in self.matched],
            "probable_duplicates": [{"first": first, "second": second, "score": round(score, 1)}
                                    for first, second, score in self.probable],
            "versions": [{"preprint": preprint, "published": published} for preprint, published in self.versions],
            "seen": {"monitor_id": self.seen[0], "added": self.seen[1]} if self.seen else None,
        }


@dataclass
class _Read:
    path: Path
    name: str
    sha256: str
    format: str
    entries: int
    records: list[Record]
    databases: list[str]  # the database each record's entry names ("" when none), parallel to `records`
    lines: list[int]  # the line each record's entry starts on, parallel to `records`
    skipped: list[Skipped]
    warnings: list[str]
    database: str  # the one database the export's entries name, else ""
    source: str | None  # the source the caller gave for this file (None: the export's database, else its name)


def import_files(review: Review, paths: list[Path], at: str, format: Format | None = None,
                 source: str | Sequence[str] | None = None, method: Method | None = None,
                 description: str | None = None, seen: str | None = None, skip_bad: bool = False,
                 encoding: str | None = None, columns: dict[str, str] | None = None) -> ImportResult:
    """Import reference files into the review at the caller-supplied time `at` (see the module docstring).

    `source` names where the records come from (a registry provider, or a database such as "Embase"; by default
    the database the export's entries name, else the file's name): one name for every file, or one name per file
    in the order of `paths` (two databases searched the same day whose exports do not name them); `method` is
    "database" by default when a file's source is a registry provider or the database the export names, "other"
    otherwise (each file's by its own source)."""
    # Kept on the ledger for good and shown in PRISMA: checked before any file is read.
    sources = _sources_by_file(paths, source)
    description = given_text(description, "--description", MAX_DESCRIPTION) if description is not None else None
    seen = given_search_id(seen, "--seen") if seen is not None else None
    require_lock(review)
    check_run_time(review, at)
    by_file = _as_named(review, sources)
    if seen is not None and seen not in review.searches:
        raise SitegenError(f"--seen {seen!r}: {shown_path(review.root)} has no saved search of that id "
                           f"({', '.join(sorted(review.searches)) or 'it has none'})")
    read: list[_Read] = []
    skipped_files: list[Skipped] = []
    repeated: list[str] = []
    for path, (source, respelled) in zip(paths, by_file, strict=True):
        # One file given twice (by two spellings of its path, or two copies of one export) is imported once:
        # twice would count its entries twice in PRISMA. Under the source given first: one export is of one source.
        if first := next((item for item in read if path.resolve() == item.path.resolve()), None):
            repeated.append(f"{shown_path(path)}: given more than once; imported once{_under(first, source)}")
            continue
        try:
            item = _read(path, format, encoding, source, skip_bad, columns)
            item.warnings[:0] = respelled
            if first := next((earlier for earlier in read if earlier.sha256 == item.sha256), None):
                repeated.append(f"{shown_path(path)}: the same content as {shown_path(first.path)}; imported "
                                f"once{_under(first, source)}")
                continue
            read.append(item)
        except ReferenceProblem as problem:
            if not skip_bad:
                raise SitegenError(f"{shown_path(path)}:{problem.line}: {problem.message}; nothing was imported") from None
            skipped_files.append(Skipped(str(path), problem.line, "", problem.message))
        except OSError as error:
            raise SitegenError(f"{cannot_read(path, error)}; nothing was imported") from None
        except LookupError as error:  # `encoding` is no text encoding (references.text_codec)
            raise OptionInvalid("--encoding", f"{error}; nothing was imported") from None
    retrieved = [record for item in read for record in item.records]
    skipped = [*skipped_files, *(entry for item in read for entry in item.skipped)]
    if skipped and not retrieved:  # --skip-bad asked to import the rest: there is none, which is no success
        first = skipped[0]
        raise SitegenError(f"nothing was imported: every file and entry given was skipped ({len(skipped)} in all; "
                           f"the first, {shown_path(first.file)}:{first.line}: {first.reason})")
    merged = integrate(review.records, retrieved, decided(review))
    result = ImportResult(at, [], skipped_files, repeated, merged.records, merged.matched, merged.probable,
                          merged.versions)
    # A file's record is new to the review when neither it nor the record it was matched to as a duplicate was
    # held before: by the review, or by a file given before it in this command (in the order given, as if
    # imported one after another). One work is new once, whichever file holds it under whichever id.
    canonical = {record_id: kept for record_id, kept, _ in merged.matched}
    known = set(review.records)
    position = 0
    for item in read:
        entry_ids = merged.ids[position:position + len(item.records)]
        position += len(item.records)
        ids = list(dict.fromkeys(entry_ids))
        # What this file made known that was not held before it (as if the files were imported one after another):
        # its own, not `known` copied per file.
        added: set[str] = set()
        new = []
        for record_id in ids:
            work = canonical.get(record_id, record_id)
            if record_id not in known and work not in known:
                new.append(record_id)
            added.update(name for name in (record_id, work) if name not in known)
            known.update((record_id, work))
        source = item.source
        item.warnings.extend(_one_record(entry_ids, item.lines))
        if any(item.databases) and not all(item.databases):
            unnamed = sum(not name for name in item.databases)
            item.warnings.append(f"{counted(unnamed, 'entry names', 'entries name')} no database while "
                                 "others do; they are counted under " + repr(source or item.database or item.name)
                                 + " (give --source to name it)")
        name = source or item.database or item.name
        named = not source and any(item.databases)  # the export names the database of its entries
        chosen = method or ("database" if source in PROVIDERS or named or (
            (DATABASE_NAMES.search(source or "") or kind(source or "") == "register")
            and not OTHER_ROUTES.search(source or "")) else "other")
        by_database: dict[str, list[str]] = {}
        for record_id, database in zip(entry_ids, item.databases, strict=True):
            by_database.setdefault(source or database or name, []).append(record_id)
        try:
            payload = ImportPayload(
                source=name, method=chosen, record_ids=ids,
                description=description or f"Imported from the file {item.name}", seen=seen,
                file=ImportedFile(name=item.name, sha256=item.sha256, format=item.format, entries=item.entries,
                                  skipped=len(item.skipped), new=len(new), already=len(ids) - len(new),
                                  entry_ids=by_database))
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            raise SitegenError(f"{shown_path(item.path)}: the import cannot be recorded ({'.'.join(map(str, error['loc']))}: "
                               f"{error['msg']}); nothing was imported") from None
        fresh = set(new)
        duplicates = sum(record_id not in fresh and record_id in added and canonical.get(record_id, record_id) in added
                         for record_id in ids)
        result.files.append(FileImport(item.path, payload, ids, new, item.skipped, item.warnings, duplicates))
    transaction = Transaction(review.root)
    append(transaction, review, at, [item.payload for item in result.files])
    if seen is not None:
        search = review.searches[seen]
        before = set(search.seen_ids)
        added = [i for i in dict.fromkeys(i for item in result.files for i in item.ids) if i not in before]
        advanced = search.model_copy(update={"seen_ids": search.seen_ids + added})
        transaction.write(f"searches/{seen}.json", json_kept_form(review.root / f"searches/{seen}.json",
                                                                 model_data(advanced)))
        result.seen = (seen, len(added))
    write_integrated(transaction, review, at, merged)
    transaction.commit()
    return result


def _sources_by_file(paths: list[Path], source: str | Sequence[str] | None) -> list[str | None]:
    """The source each file of `paths` is imported from, as given: one for every file, or one per file in their
    order (each checked as text the ledger keeps); OptionInvalid for any other count, before any file is read:
    which file is which database cannot be guessed."""
    given = [source] if isinstance(source, str) else list(source or ())
    checked = [given_text(name, "--source", MAX_SOURCE, one_line=True) for name in given]
    if len(checked) > 1 and len(checked) != len(paths):
        raise OptionInvalid("--source", f"is given {len(checked)} times for {counted(len(paths), 'file')}: "
                                        "give it once (every file's source) or once per file, in the order of the "
                                        "files; nothing was read or written")
    return checked * len(paths) if len(checked) == 1 else checked or [None] * len(paths)


def _folded(name: str) -> str:
    return " ".join(name.casefold().split())


def _as_named(review: Review, sources: list[str | None]) -> list[tuple[str | None, list[str]]]:
    """Each file's source as PRISMA will count it, with the warning saying so when it is not as given: a provider
    by its name ("PubMed" is pubmed), else as an earlier import, or a file before it in this command, spells it
    (PRISMA counts a source by its name: "EMBASE" beside "Embase" would be two boxes)."""
    named: list[tuple[str | None, list[str]]] = []
    for given in sources:
        source = _provider(given) or given
        if source is None:
            named.append((None, []))
            continue
        where, spelled = "an earlier import names it", _as_named_before(review, source)
        if spelled == source:
            where, spelled = "a file before it names it", next(
                (name for name, _ in named if name is not None and _folded(name) == _folded(source)), source)
        named.append((spelled, [] if spelled == source else [f"--source {source!r} is counted as {spelled!r}, as {where}"]))
    return named


def _under(first: _Read, source: str | None) -> str:
    """What a repeated file's message says of the source it is imported under, when it was given another (sources
    differ only when one is given per file, so the first has one)."""
    return "" if source == first.source else f", under {first.source!r}, the source given with it first"


def _one_record(entry_ids: list[str], lines: list[int]) -> list[str]:
    """Warnings naming the entries of one file that are one record (by a shared identifier or content key)."""
    at: dict[str, list[int]] = {}
    for record_id, line in zip(entry_ids, lines, strict=True):
        at.setdefault(record_id, []).append(line)
    return [f"the entries on lines {', '.join(map(str, found))} are one record, {record_id} (a shared identifier "
            "or the same content): counted once, the others as duplicates removed"
            for record_id, found in at.items() if len(found) > 1]


def _read(path: Path, format: Format | None, encoding: str | None, source: str | None, skip_bad: bool,
          columns: dict[str, str] | None = None) -> _Read:
    """A file's entries as records. ReferenceProblem when the reader cannot read it, or, without `skip_bad`,
    when a record in it is malformed or an entry cannot be a record; with `skip_bad` those are skipped."""
    warnings: list[str] = []
    unread: list[tuple[int, str]] = []  # (line, why) of each record the reader skipped
    entries, chosen, sha256 = read_reference_file(path, format, warnings, encoding=encoding, columns=columns,
                                                  skipped=unread if skip_bad else None)
    provider = _provider(source)
    records, databases, lines = [], [], []
    skipped = [Skipped(str(path), line, "", why) for line, why in unread]
    count = len(entries)
    entries.reverse()  # taken from the end: each entry is let go as its record is made, not held beside them all
    while entries:
        entry = entries.pop()
        notes: list[str] = []
        try:
            records.append(entry_record(entry, provider, notes))
            notes += _encoded_twice(records[-1])
            database = entry.get("database").strip()
            databases.append(_provider(database) or database)  # "PubMed" in an export is the provider pubmed
            lines.append(entry.line)
        except ValueError as error:
            reason = _reason(error)
            if not skip_bad:
                raise ReferenceProblem(entry.line, f"entry {entry.id!r}: {reason}") from None
            skipped.append(Skipped(str(path), entry.line, entry.id, reason))
        warnings += [f"line {entry.line}: entry {entry.id!r}: {note}" for note in notes]
    named = set(databases)
    # The name as the ledger keeps it and the site shows it: a file's name need not be UTF-8 nor printable text,
    # which every field of the ledger is: such a name is kept as messages show it (quoted, escaped).
    return _Read(path, shown_path(path.name), sha256, chosen, count + len(unread),
                 records, databases, lines, skipped, warnings, named.pop() if len(named) == 1 else "", source)


def _encoded_twice(record: Record) -> list[str]:
    """A warning for each of a record's title, abstract and journal holding text encoded twice (`encoded_twice`: an
    export opened in Excel as Windows-1252 and saved again), kept as exported: the file's text is the record's."""
    fields = (("title", record.title), ("abstract", record.abstract), ("journal", record.container_title))
    return [f"its {name} {encoded_twice_said(found)}: kept as exported; if the export was opened and saved in a "
            "spreadsheet, export it again from the database and import that file instead"
            for name, text in fields if text and (found := encoded_twice(text))]


def _provider(name: str | None) -> Source | None:
    """The registry provider a source names, by its name or its label in any case ("PubMed", "pubmed")."""
    wanted = (name or "").strip().casefold()
    return next((info.name for info in PROVIDERS.values() if wanted in (info.name, info.label.casefold())), None)


def _reason(error: ValueError) -> str:
    if isinstance(error, ValidationError):
        first = error.errors(include_url=False)[0]
        return f"{'.'.join(map(str, first['loc'])) or 'record'}: {first['msg']}"
    return str(error)


def report(result: ImportResult) -> str:
    """What the import did, for people: per file its counts, every skipped entry, then matches and pairs."""
    lines = [f"sitegen import at {result.at}"]
    for item in result.files:
        counts = item.payload.file
        lines.append(f"- {shown_path(item.path)}: {counted(counts.entries, 'entry', 'entries')} read ({counts.format}), "
                     f"{counts.skipped} skipped, {counted(counts.new, 'record')} new to the review, "
                     f"{counts.already - item.duplicates} already in it"
                     + (f", {counted(item.duplicates, 'duplicate')} of records new in this file"
                        if item.duplicates else "") + "; counted as "
                     f"{f'a {kind(item.payload.source)}' if item.payload.method == 'database' else 'other methods'} "
                     f"({', '.join(counts.entry_ids or [item.payload.source])})")
        lines += [f"  - skipped line {s.line}{f' (entry {s.entry_id})' if s.entry_id else ''}: {s.reason}"
                  for s in item.skipped]
        lines += [f"  - note: {warning}" for warning in item.warnings]
    lines += [f"- {shown_path(s.file)}:{s.line}: skipped, not read: {s.reason}" for s in result.skipped_files]
    lines += [f"- warning: {repeated}" for repeated in result.repeated]
    if result.seen:
        lines.append(f"- saved search {result.seen[0]}: {counted(result.seen[1], 'id')} added to its seen ids")
    if result.matched:
        lines += ["", "Matched by metadata (recorded in duplicates.csv as `same`, reviewer `sitegen`):"]
        lines += [f"- {new} is {canonical} (titles {score:.0f}% alike)" for new, canonical, score in result.matched]
    if result.versions:
        lines += ["", "Preprints linked to their journal versions:"]
        lines += [f"- {preprint} is a preprint of {published}" for preprint, published in result.versions]
    if result.probable:
        lines += ["", "Possible duplicates (nothing merged; decide them in duplicates.csv):"]
        lines += [f"- {first} and {second} (titles {score:.0f}% alike)" for first, second, score in result.probable]
    return "\n".join(lines) + "\n"
