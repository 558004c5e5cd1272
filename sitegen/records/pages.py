"""Page ranges, as the exports write them and the readers read them back.

RIS writes a range's two ends in SP and EP, BibTeX joins them with "--"; the readers join them again with one
hyphen, and read a range whose two ends are one page as that page. A record imported from a file holds its
page so (`as_range`), so that exporting it and importing it again gives back the page it had, and so the
content key (`ids.content_ref`) of a record without identifiers, which its page is part of.
"""

from __future__ import annotations

import re

# Between the first and last page of a range: a hyphen, an en dash (Crossref writes some), BibTeX's "--".
# Tried from the start of a run of spaces only: from each of its spaces, a record's page of a few hundred kilobytes
# of spaces held up its build for hours.
_PAGE_RANGE = re.compile(r"(?<!\s)\s*[-\u2010-\u2015]+\s*")


# A page as ranges write one: digits with at most a letter or a few before and one after (S12, e123, R45a), or
# a Roman numeral. An article number ("ENEURO.0284-16.2016", "1234-1238.e5") is no such page: a dash in it
# is no range.
_PAGE = re.compile(r"[A-Za-z]{0,3}[0-9]+[A-Za-z]?|[ivxlcdmIVXLCDM]+")


def first_and_last(page: str | None) -> tuple[str, str]:
    """The first and last page ("" when not given), however the range is written; a page that is not a range
    (an article number with a dash in it) is the first page, whole."""
    if not page:
        return "", ""
    written = page.strip()
    parts = [part for part in _PAGE_RANGE.split(written) if part]
    if len(parts) == 2 and all(_PAGE.fullmatch(part) for part in parts):
        return parts[0], parts[1]
    return (parts[0] if len(parts) == 1 else written), ""


def as_range(page: str) -> str:
    """The page as the RIS and BibTeX readers read back what the exports write of it: "first-last" with one
    hyphen ("47--65", "47 – 65" are "47-65"), a range of one page ("S77-S77") that page, anything else as it is."""
    first, last = first_and_last(page)
    return f"{first}-{last}" if last and last != first else first
