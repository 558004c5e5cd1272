"""The site's record downloads: every record and the included studies alone, in each format, and the ledger.

The files are listed once, in `FORMATS`, for the page group that writes them and
for the home page that links them. One citation key per record is shared by all
formats and by both sets, so a study keeps its key in `included.bib` and in
`records.bib`, and from one version of the review to the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sitegen.records.model import Record
from sitegen.review.folder import Review
from sitegen.review.models import ImportPayload, RetrievalPayload
from sitegen.site import exports

if TYPE_CHECKING:  # pages.py lists this module's page group, so it cannot be imported from here at run time
    from sitegen.site.pages import Files, Site

LEDGER = "downloads/ledger.jsonl"


@dataclass(frozen=True)
class Format:
    extension: str
    name: str
    use: str


FORMATS = (
    Format("ris", "RIS", "for EndNote, Zotero, Mendeley and other reference managers"),
    Format("bib", "BibTeX", "for LaTeX, JabRef and Zotero"),
    Format("json", "CSL-JSON", "for citation processors (Pandoc, Zotero) and programs"),
    Format("csv", "CSV", "for spreadsheets, with each record's screening outcomes"),
)
SETS = {"records": "All records", "included": "Included studies"}


@dataclass(frozen=True)
class Download:
    path: str
    label: str  # what it holds
    count: int  # how many records


def first_seen(review: Review) -> list[Record]:
    """The review's records in the order its ledger first names them; any it does not name last, by id."""
    order = dict.fromkeys(record_id for payload in review.payloads
                          if isinstance(payload, RetrievalPayload | ImportPayload)
                          for record_id in payload.record_ids if record_id in review.records)
    return [review.records[record_id] for record_id in order] + \
        [record for record_id, record in sorted(review.records.items()) if record_id not in order]


def record_sets(site: Site) -> dict[str, list[Record]]:
    """Each set of records offered for download, in the order of records.jsonl (by id)."""
    included = set(site.facts.included)
    records = list(site.review.records.values())
    return {"records": records, "included": [record for record in records if record.id in included]}


def download_path(set_name: str, form: Format) -> str:
    return f"downloads/{set_name}.{form.extension}"


def listing(site: Site) -> list[tuple[Format, list[Download]]]:
    """Every record download, format by format, as the home page lists them."""
    sets = record_sets(site)
    return [(form, [Download(download_path(name, form), SETS[name], len(records))
                    for name, records in sets.items()]) for form in FORMATS]


def record_downloads(site: Site) -> Files:
    keys = exports.citation_keys(first_seen(site.review))
    outcomes = {v.record.id: (v.title_abstract.decision if v.title_abstract else "",
                              v.full_text.decision if v.full_text else "") for v in site.views}
    writers = {"ris": lambda records: exports.records_ris(records, keys),
               "bib": lambda records: exports.records_bibtex(records, keys),
               "json": lambda records: exports.records_csl_json(records, keys),
               "csv": lambda records: exports.records_csv(records, outcomes, keys)}
    for name, records in record_sets(site).items():
        for form in FORMATS:
            yield download_path(name, form), writers[form.extension](records)
    # The ledger as the review stores it, byte for byte, so a reader can check its hash chain. The build
    # holds the review's lock, so the file is the one the review was loaded from.
    ledger = site.review.root / "ledger.jsonl"
    yield LEDGER, ledger.read_bytes() if ledger.is_file() else b""
