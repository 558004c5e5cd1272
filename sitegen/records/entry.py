"""One reference as a reference file gives it (records CSV, RIS, BibTeX, MEDLINE, ...), in the benchmark's fields.

The fields are the bib-dedupe benchmark's columns: ID, ENTRYTYPE, author, title, year, journal,
volume, number, pages, doi, abstract; readers of other formats add the ones an import needs (pmid,
pmcid, arxiv, openalex, url, issn, keywords, language, publisher, note, month, label, database).
Authors are BibTeX-style: "Family, Given and Family2, Given2".
The readers live in `sitegen.references`; deduplication (`sitegen.records.dedupe`) takes entries.
"""

from __future__ import annotations

from dataclasses import dataclass

# Words a spreadsheet writes in a cell that has no value (R's "NA", "n/a", "n.d."): read as empty in the cells of a
# CSV that sitegen did not write (`references.table`), where they stand for an empty cell. Nowhere else: in a reference
# file a field is what its source says (a title or a volume "NA"), as sitegen's own exports write a record's, and
# every export must read back as the record it wrote.
NOTHING = {"", "na", "n/a", "nd", "n.d.", "no pagination specified"}
# Words for "not yet": Crossref's "forthcoming" and "in press" for a year not yet known, Europe PMC's and
# publishers' "Forthcoming" for an issue not yet numbered. No value to compare or sort by, so `Entry.get` reads
# them as empty too; but an issue or volume that says so says something true of the work (see `Entry.written`).
NOT_YET = {"forthcoming", "in press"}
MISSING = NOTHING | NOT_YET
# A field's own words for no value, read as empty in every format (`Entry.get`): a year or a date is never a word
# ("n.d.", bibliographies' "no date"), Embase writes an article without pages so, and an issue or volume not yet
# numbered has no number to compare by.
NO_VALUE_IN = {"year": MISSING, "date": MISSING, "pages": {"no pagination specified"}, "volume": NOT_YET,
               "number": NOT_YET}

# Other names exports give benchmark fields; read as those when the file has no field of that name.
ALIASES = {"issue": "number", "booktitle": "journal", "journaltitle": "journal"}  # the last: biblatex's


@dataclass(frozen=True)
class Entry:
    """A reference: its ID (unique in its file), its fields by benchmark name, the line it starts on."""

    id: str
    fields: dict[str, str]
    line: int
    parent: str = ""  # the key of the entry this one's BibTeX `crossref` names (and takes fields from), if any

    def get(self, name: str) -> str:
        value = self.fields.get(name, "").strip()
        return "" if value.lower() in NO_VALUE_IN.get(name, ()) else value

    def written(self, name: str) -> str:
        """The field as the file says it, "Forthcoming" included."""
        return self.fields.get(name, "").strip()
