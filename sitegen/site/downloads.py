"""The site's record downloads: every record and the included studies alone, in each format, and the ledger.

The files are listed once, in `FORMATS`, for the page group that writes them, for
the home page that links them and for `sitegen export`, which writes the same
files on their own. One citation key per record is shared by all formats and by
every set, so a study keeps its key in `included.bib` and in `records.bib`, and
from one version of the review to the next.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import chain, filterfalse, islice
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

from sitegen.living.facts import ReviewFacts
from sitegen.records.model import Record
from sitegen.review import kept
from sitegen.review.folder import Review
from sitegen.review.models import ImportPayload, RetrievalPayload
from sitegen.screening.outcomes import NOT_RETRIEVED, TO_FULL_TEXT, Outcome
from sitegen.site import exports
from sitegen.site.keys import Keys, code_digest
from sitegen.site.output import Page, Part
from sitegen.site.templates import templates_dir

if TYPE_CHECKING:  # pages.py lists this module's page group, so it cannot be imported from here at run time
    from sitegen.site.pages import Files, Site

LEDGER = "downloads/ledger.jsonl"


@dataclass(frozen=True)
class Format:
    extension: str
    name: str
    use: str
    option: str  # its name in `sitegen export --format`


FORMATS = (
    Format("ris", "RIS", "for EndNote, Zotero, Mendeley and other reference managers", "ris"),
    Format("bib", "BibTeX", "for LaTeX, JabRef and Zotero", "bibtex"),
    Format("json", "CSL-JSON", "for citation processors (Pandoc, Zotero) and programs", "csl-json"),
    Format("csv", "CSV", "for spreadsheets, with each record's screening outcomes", "csv"),
)
SETS = {"records": "Records after duplicates removed", "included": "Included studies"}  # as PRISMA names them
# The sets `sitegen export --records` offers: the site's two and the records sent on to full text.
Selection = Literal["all", "screened-in", "included"]
SELECTIONS: dict[str, Selection] = {"records": "all", "included": "included"}


@dataclass(frozen=True)
class Download:
    path: str
    label: str  # what it holds
    count: int  # how many records


def first_seen(review: Review) -> list[Record]:
    """The review's records in the order its ledger first names them; any it does not name last, by id.
    Records one event names are in id order, not the order of its file: the same file in another order
    (an export imported again) gives the same citation keys."""
    records = review.records
    order = dict.fromkeys(chain.from_iterable(sorted(payload.record_ids) for payload in review.payloads
                                              if isinstance(payload, RetrievalPayload | ImportPayload)))
    return list(map(records.__getitem__, chain(filter(records.__contains__, order),
                                               sorted(records.keys() - order.keys()))))


def selected(review: Review, facts: ReviewFacts, selection: Selection) -> list[Record]:
    """The records of a set in the order of records.jsonl (by id): all of them but the confirmed duplicates
    (the records PRISMA counts; a duplicate's work is its canonical record), those included or maybe at title
    and abstract (sent on to full text), or the included studies (included at full text)."""
    records = review.records  # by id: each set is its ids filtered and looked up in C (100,000 records)
    if selection == "all":
        return list(map(records.__getitem__, filterfalse(facts.duplicates.__contains__, records)))
    if selection == "included":
        chosen = set(facts.included)
    else:
        chosen = {rid for rid, outcome in facts.outcomes["title-abstract"].items() if outcome.decision in TO_FULL_TEXT}
    return list(map(records.__getitem__, filter(chosen.__contains__, records)))


@dataclass(frozen=True)
class RecordWriters:
    """The writers of a set of the review's records in each format, with the review's citation keys and,
    in CSV, each record's screening outcomes."""

    keys: dict[str, str]  # record id -> citation key
    outcomes: dict[str, tuple[str, str]]  # record id -> (title/abstract, full-text) decision

    def parts(self, extension: str, records: list[Record]) -> Iterator[str]:
        """The file a few hundred records at a time, as the site writes it (a download of 100,000 records is
        never held whole)."""
        return _grouped(self._record_parts(extension, records))

    def keyed_parts(self, extension: str, records: list[Record], lines: list[bytes], code: str) -> Iterator[Part]:
        """The file of `records` (whose lines' digests are `lines`) as keyed parts of about PART_RECORDS records, so
        that the site's writer renders only the parts whose records, citation keys or (in the CSV) outcomes changed
        and copies the others from the file it has (a decision: one part of the CSV's 100,000 rows). A part ends after
        a record whose line's digest says so: a record added or removed moves no other part's ends."""
        ends = _part_ends(lines)
        for start, end in zip([0, *ends], ends, strict=False):
            chunk, span = records[start:end], exports.Span(after_others=start > 0, before_others=end < len(records))
            digest = hashlib.blake2b(f"{code}\0{extension}\0{span}".encode(), digest_size=20)
            digest.update(b"".join(lines[start:end]))
            digest.update(pickle.dumps((list(map(self.keys.get, map(_ID, chunk))), self.shown_outcomes(extension, chunk)),
                                       protocol=5))
            yield Part(digest.hexdigest(), partial(self.write, extension, chunk, span))

    def write(self, extension: str, records: list[Record], span: exports.Span = exports.WHOLE) -> str:
        return "".join(self._record_parts(extension, records, span))

    def _record_parts(self, extension: str, records: list[Record], span: exports.Span = exports.WHOLE) -> Iterator[str]:
        if extension == "ris":
            return exports.records_ris_parts(records, self.keys, span)
        if extension == "bib":
            return exports.records_bibtex_parts(records, self.keys, span)
        if extension == "json":
            return exports.records_csl_json_parts(records, self.keys, span)
        return exports.records_csv_parts(records, self.outcomes, self.keys, span)

    def inputs(self, records: list[Record], page_keys: Keys) -> tuple:
        """What every format's file of `records` is written from but the screening outcomes: the records (as page
        keys count them, each by its line: `Keys.as_lines`) and their citation keys, each a list gathered in C
        (100,000 records' keys looked up one by one in Python took a tenth of a second)."""
        return page_keys.as_lines(records), list(map(self.keys.get, map(_ID, records)))

    def shown_outcomes(self, extension: str, records: list[Record]) -> list[tuple[str, str] | None] | None:
        """The screening outcomes the file of `records` in this format shows: only the CSV shows them, so only
        it changes with a decision."""
        return list(map(self.outcomes.get, map(_ID, records))) if extension == "csv" else None


_ID = attrgetter("id")


# Records written as one part: the build encodes, hashes, writes and looks over each part on its own, which a record
# at a time cost more than the joining (100,000 CSV rows: 0.48 s of CPU a row at a time, 0.29 s by 200 rows). A part
# of 200 records is about half a megabyte at the example review's record sizes.
PART_RECORDS = 200


def _grouped(parts: Iterator[str]) -> Iterator[str]:
    """The parts joined `PART_RECORDS` at a time."""
    while group := list(islice(parts, PART_RECORDS)):
        yield "".join(group)


MOST_PART_RECORDS = 4 * PART_RECORDS  # a part ends here whatever its records' digests say


def _part_ends(lines: list[bytes]) -> list[int]:
    """Where the site's keyed parts of a file of records end (`RecordWriters.keyed_parts`): after a record whose
    line's digest is a multiple of PART_RECORDS (one in PART_RECORDS, by chance), or MOST_PART_RECORDS after the
    last end, and at the last record."""
    ends, start = [], 0
    for index, line in enumerate(lines, start=1):
        if index - start >= MOST_PART_RECORDS or int.from_bytes(line[:4], "big") % PART_RECORDS == 0:
            ends.append(index)
            start = index
    if start < len(lines):
        ends.append(len(lines))
    return ends


def record_writers(review: Review, facts: ReviewFacts) -> RecordWriters:
    """The review's writers. A report whose full text was not retrieved is `not-retrieved` at full text, as the
    site's lists and PRISMA say: it was not assessed, so not excluded."""
    record_ids = list(review.records)
    title_abstract = _as_shown(facts.outcomes["title-abstract"], _DECISION, record_ids)
    full_text = _as_shown(facts.outcomes["full-text"], _full_text, record_ids)
    return RecordWriters(citation_keys(review),
                         dict(zip(record_ids, zip(title_abstract, full_text, strict=True), strict=True)))


def citation_keys(review: Review) -> dict[str, str]:
    """Every record's citation key (`exports.citation_keys` of the records as the ledger first saw them), kept
    between commands (`kept.kept_value`) by what it is made from: the records' lines in that order. 100,000 keys took
    half a second to make, and a decision, or any change but to a record, leaves every one as it was."""
    records = first_seen(review)
    make = partial(exports.citation_keys, records)
    lines = list(map(review.record_digests.get, map(_ID, records)))
    if None in lines:  # a record with no line to be known by (none in a review read from its folder): made
        return make()
    # Each line's digest names its record's id and fields (its line holds them); pickled, the list is one
    # unambiguous string of them, in order, written in C.
    inputs = hashlib.sha256(pickle.dumps(lines, protocol=5)).hexdigest()
    return kept.kept_value("citation-keys", inputs, kept.cache_folder(os.environ, review.root), make, dict,
                           libraries=(), kept=CITATION_KEYS_KEPT, forked=False)


CITATION_KEYS_KEPT = 6  # a few reviews (or branches of one) read in turn; one value is about 5 MB at 100,000 records


def _as_shown(outcomes: dict[str, Outcome], shown: Callable[[Outcome], str], record_ids: list[str]) -> list[str]:
    """Each record's outcome as the CSV shows it ("" for none), in the order of `record_ids`. An outcome is a few
    values shared by many records (`screening.outcomes`): each one held is shown once, and the records' are looked
    up by the outcome's identity, in C (a Python step for each of 100,000 records took a tenth of a second)."""
    held = list(outcomes.values())  # held for as long as their ids are used: no other object takes one meanwhile
    by_identity = {key: shown(outcome) for key, outcome in dict(zip(map(id, held), held, strict=True)).items()}
    by_identity[id(None)] = ""  # a record without an outcome
    return list(map(by_identity.__getitem__, map(id, map(outcomes.get, record_ids))))


_DECISION = attrgetter("decision")


def _full_text(outcome: Outcome) -> str:
    return NOT_RETRIEVED if outcome.not_retrieved else outcome.decision


def record_sets(site: Site) -> dict[str, list[Record]]:
    """Each set of records offered for download."""
    return {name: selected(site.review, site.facts, selection) for name, selection in SELECTIONS.items()}


def download_path(set_name: str, form: Format) -> str:
    return f"downloads/{set_name}.{form.extension}"


def listing(site: Site) -> list[tuple[Format, list[Download]]]:
    """Every record download, format by format, as the home page lists them."""
    sets = record_sets(site)
    return [(form, [Download(download_path(name, form), SETS[name], len(records))
                    for name, records in sets.items()]) for form in FORMATS]


def record_downloads(site: Site) -> Files:
    writers = record_writers(site.review, site.facts)
    for name, records in record_sets(site).items():
        # A page's key is a digest of what its file is written from. The four formats of a set are written from
        # the same records and citation keys, which are digested once for the four and stand in each key as
        # their digest: at 100,000 records each digest of them cost a quarter of a second.
        lines, citation_keys = writers.inputs(records, site.keys)
        written_from = site.keys.of("download", (lines, citation_keys))
        code = code_digest(templates_dir())
        for form in FORMATS:
            # In keyed parts when every record is known by its line (a review read from its folder), and has any
            render: Callable[[], Iterator[str] | Iterator[Part]] = (
                partial(writers.keyed_parts, form.extension, records, lines, code)
                if records and all(isinstance(line, bytes) for line in lines)
                else partial(writers.parts, form.extension, records))
            yield Page(download_path(name, form), render,
                       site.keys.of("download", form.extension, written_from, writers.shown_outcomes(form.extension, records)),
                       alone=True)
    # The ledger as the review stores it, byte for byte, so a reader can check its hash chain. The build
    # holds the review's lock, so the file is the one the review was loaded from.
    ledger = site.review.root / "ledger.jsonl"
    yield LEDGER, ledger.read_bytes() if ledger.is_file() else b""
