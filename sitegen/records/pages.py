"""Page ranges: where a range is split (`range_parts`), MEDLINE's shortened last page read in full, and ranges as
the exports write them and the readers read them back.

MEDLINE writes a range's last page with only the digits that change ("113-25"); PubMed, Europe PMC and the
files exported from them pass that on (`medline_pages`), and the matcher reads it so too (`matching.pages`).

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
_RANGE_DASH = re.compile(r"(?<!\s)\s*[-\u2010-\u2015]+\s*")


def range_parts(text: str) -> list[str]:
    """The pages a range's dashes part, however many ("47--65" -> ["47", "65"]), none of them empty."""
    return [part for part in _RANGE_DASH.split(text.strip()) if part]


# A page as ranges write one: digits with at most a letter or a few before and one after (S12, e123, R45a), or
# a Roman numeral. An article number ("ENEURO.0284-16.2016", "1234-1238.e5") is no such page: a dash in it
# is no range.
_PAGE = re.compile(r"[A-Za-z]{0,3}[0-9]+[A-Za-z]?|[ivxlcdmIVXLCDM]+")


# A page of ASCII digits, or two joined by one hyphen: a range `first_and_last` reads as those two pages.
_PLAIN_RANGE = re.compile("([0-9]+)(?:-([0-9]+))?")


def first_and_last(page: str | None) -> tuple[str, str]:
    """The first and last page ("" when not given), however the range is written; a page that is not a range of
    two pages (an article number with a dash in it, "-2", "47-") is the first page, whole, as the source wrote it:
    a dash before or after one page ends no range it names, and dropped, the page came back from every export as
    another text than the record's."""
    if not page:
        return "", ""
    if plain := _PLAIN_RANGE.fullmatch(page):  # most pages ("47", "47-65"): what the general rule gives, quicker
        return plain[1], plain[2] or ""
    written = page.strip()
    parts = range_parts(written)
    if len(parts) == 2 and all(_PAGE.fullmatch(part) for part in parts):
        return parts[0], parts[1]
    return written, ""


def as_range(page: str) -> str:
    """The page as the RIS and BibTeX readers read back what the exports write of it: "first-last" with one
    hyphen ("47--65", "47 – 65" are "47-65"), a range of one page ("S77-S77") that page, anything else as it is."""
    first, last = first_and_last(page)
    return f"{first}-{last}" if last and last != first else first


# MEDLINE shortens the last page of a range to the digits that change, and drops a letter prefix with them
# ("113-25" is 113-125, "S12-4" is S12-S14, "R1-16" is R1-R16); PubMed, Europe PMC and the reference managers
# that import from them pass that on.
_NUMBERED_PAGE = re.compile(r"([A-Za-z]*)(\d+)")


def full_last_page(first: str, last: str) -> str:
    """The last page of the range `first`-`last` written in full: ("113", "25") -> "125", ("S12", "4") -> "S14",
    ("R1", "16") -> "R16". A last page that is more than digits, or that would not come after the first once
    expanded (no MEDLINE abbreviation), is as it is."""
    found = _NUMBERED_PAGE.fullmatch(first)
    if found is None or not last.isdecimal():
        return last
    prefix, number = found.groups()
    whole = number[:max(len(number) - len(last), 0)] + last
    return prefix + whole if _page_number(whole) > _page_number(number) else last


def _page_number(digits: str) -> tuple[int, str]:
    """Digits in the order of the number they write, compared as text (int() refuses thousands of digits)."""
    significant = digits.lstrip("0")
    return len(significant), significant


# A MEDLINE page range ("113-25", "S12-4"). Kept shortened, RIS gave the end page as 25 and BibTeX the range
# "113--25".
_MEDLINE_RANGE = re.compile(r"([A-Za-z]*[0-9]+)-([0-9]+)")


def medline_pages(text: str | None) -> str | None:
    """A MEDLINE page range with its last page written in full (`full_last_page`); anything else (a single page, a
    list of ranges, an article number) as it is. For PubMed's and Europe PMC's records and files exported from
    them (MEDLINE, and RIS whose record came from PubMed)."""
    found = _MEDLINE_RANGE.fullmatch(text or "")
    if found is None:
        return text
    first, last = found.groups()
    return f"{first}-{full_last_page(first, last)}"
