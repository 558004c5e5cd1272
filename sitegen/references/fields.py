"""The fields every reader fills, and the pieces of them more than one format writes alike.

Entries carry the bib-dedupe benchmark's fields (ID, ENTRYTYPE, author, title, year, journal,
volume, number, pages, doi, abstract) and the ones an import needs besides (identifiers, links,
screening labels). Values stay as the file wrote them, trimmed: identifiers are normalised by
whoever turns entries into records, so a reader never guesses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

FIELDS = ("author", "title", "year", "journal", "volume", "number", "pages", "doi", "abstract",
          "pmid", "pmcid", "arxiv", "openalex", "url", "issn", "keywords", "language", "publisher", "note",
          "month", "label", "database")

ISSN = re.compile(r"(?<![\dA-Za-z])\d{4}-?\d{3}[\dXx](?![\dA-Za-z-])")
PMCID = re.compile(r"\bPMC\d+\b")
# Rayyan writes a record's screening state into its notes, as
# 'RAYYAN-INCLUSION: {"Kofi"=>"Included", "Ama"=>"Maybe"} | RAYYAN-LABELS: ML | USER-NOTES: {...}'.
RAYYAN_INCLUSION = re.compile(r"RAYYAN-INCLUSION:\s*(\{[^{}]*\})")


def fields(values: dict[str, str]) -> dict[str, str]:
    """ID, ENTRYTYPE and every field in FIELDS, from `values` (trimmed, whitespace runs as one space)
    or empty; the Rayyan inclusion text in a note is the label unless `values` names one."""
    filled = {name: " ".join(str(values.get(name) or "").split()) for name in ("ID", "ENTRYTYPE", *FIELDS)}
    if not filled["label"] and (found := RAYYAN_INCLUSION.search(filled["note"])):
        filled["label"] = found.group(1)
    return filled


def joined(values: Iterable[str], separator: str = "; ") -> str:
    """The values that are not blank, without repeats, joined."""
    return separator.join(dict.fromkeys(value.strip() for value in values if value and value.strip()))


def issns(values: Iterable[str]) -> str:
    """The ISSNs written in `values` ("1467-5463 (Print)", "ISSN-1234-4567"), joined by "; ";
    an ISBN in the same tag is left out."""
    return joined(found for value in values for found in ISSN.findall(value))


def keywords(value: str) -> str:
    """Keywords written in one value ("a; b; c", or "a, b, c" when there is no semicolon), joined by "; "."""
    return joined(value.split(";" if ";" in value else ","))
