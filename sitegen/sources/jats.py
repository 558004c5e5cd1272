"""JATS full text read defensively: safe parsing within size and depth limits, the licence gate, and
paragraphs with their section paths.

Provider XML is untrusted: a body that declares entities, carries a DOCTYPE internal subset, is over
MAX_BYTES or nests elements deeper than MAX_DEPTH is refused as Malformed, never expanded or walked.
Only an article whose machine-readable licence is CC BY, CC BY-SA, CC0 or the Public Domain Mark may be
quoted; anything else (NC, ND, a licence stated only in prose) is refused by the gate.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from lxml import etree
from pydantic import BaseModel

from sitegen.records.model import CONTROL_CHARACTER
from sitegen.sources.base import Malformed, element_text, entity_character, parse_xml
from sitegen.text import comparable_passage, holds_passage, normalise_whitespace, passage_start

MAX_BYTES = 4_000_000
MAX_DEPTH = 80  # the root element is depth 1
MAX_PARAGRAPHS = 600
MAX_CHARACTERS = 240_000  # of paragraph text, in all
SECTION_SEPARATOR = " › "


# A licence URL the gate reads, and the ones it lets through: CC BY, CC BY-SA, CC0, Public Domain Mark.
_CREATIVE_COMMONS = re.compile(r"creativecommons\.org/(?:licenses|publicdomain)/")
QUOTABLE_LICENCE = re.compile(r"^https?://creativecommons\.org/(licenses/(by|by-sa)/|publicdomain/(zero|mark)/)")
QUOTABLE_NAMES = "CC BY, CC BY-SA, CC0, Public Domain Mark"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
LINKS = ("ext-link", "uri")

# Never part of a paragraph: blocks that are not running text (references, tables, figures,
# supplements, footnotes, scripts) and inline pieces that are not words (graphics, formulae). A footnote
# set inside a paragraph (<fn>) would otherwise split the sentence it is attached to.
LEFT_OUT = frozenset({"ref-list", "table-wrap", "table-wrap-group", "fig", "fig-group", "supplementary-material",
                      "fn", "fn-group", "script", "style", "inline-graphic", "tex-math",
                      "{http://www.w3.org/1998/Math/MathML}math"})
# Blocks a paragraph may hold (a list's items, a quotation, a displayed formula): each is set apart from the
# words around it, as it is shown, so that XML written without whitespace between them (<list-item><p>one</p>
# </list-item><list-item><p>two</p>…) never runs two words into one ("onetwo").
BLOCKS = frozenset({"p", "list", "list-item", "def-list", "def-item", "term", "def", "disp-quote", "boxed-text",
                    "disp-formula", "statement", "speech", "verse-group", "verse-line", "title", "label", "attrib",
                    "preformat", "code", "address", "array"})


class Paragraph(BaseModel):
    """One paragraph of an article's abstract or body, as quoted: whitespace collapsed, markup dropped."""

    id: str  # p1, p2, … in reading order, abstract first
    section: str | None = None  # "Methods › Cell culture", "Abstract › Background"; None outside any titled section
    text: str


def read_article(data: bytes) -> etree._Element:
    """The root of a JATS body, parsed with no entity, DTD or network access; Malformed when it is too large,
    declares entities, has a DOCTYPE internal subset, or nests deeper than MAX_DEPTH."""
    if len(data) > MAX_BYTES:
        raise Malformed(f"the full text is {len(data):,} bytes, over the {MAX_BYTES:,}-byte limit")
    # Refused before lxml sees the body, in linear time; the parsed tree is checked again for encodings
    # these bytes miss (UTF-16) and for a DOCTYPE hidden behind a decoy one in a comment.
    if b"<!ENTITY" in data:
        raise Malformed("the full text declares an entity (<!ENTITY): refused unread, nothing expanded")
    if _internal_subset(data):
        raise Malformed("the full text's DOCTYPE has an internal subset: refused unread, nothing expanded")
    root = parse_xml(data)  # which refuses an internal subset these bytes hid (a decoy DOCTYPE in a comment, UTF-16)
    depth = 0
    for event, _ in etree.iterwalk(root, events=("start", "end")):  # one pass, whatever the shape
        depth += 1 if event == "start" else -1
        if depth > MAX_DEPTH:
            raise Malformed(f"the full text nests elements more than {MAX_DEPTH} deep")
    return root


def _internal_subset(data: bytes) -> bool:
    """Whether the (first) DOCTYPE declaration opens an internal subset: a "[" before its closing ">"."""
    start = data.find(b"<!DOCTYPE")
    if start < 0:
        return False
    end = data.find(b">", start)
    return b"[" in data[start:end if end >= 0 else None]


# --------------------------------------------------------------------------- licence


def licence(meta: etree._Element) -> tuple[str | None, str | None]:
    """(licence, licence URL) of a JATS article-meta. The licence is its wording, else the URL, else its type;
    the URL is the first Creative Commons licence or public-domain URL it gives (the license's xlink:href
    or href, a nested ext-link, or ali:license_ref), in document order."""
    licences = list(meta.iter("license"))
    url = next((candidate for candidate in _licence_urls(meta) if _CREATIVE_COMMONS.search(candidate)), None)
    wording = " ".join(text for element in licences for child in element
                       if child.tag in ("license-p", "p") and (text := paragraph_text(child)))
    kind = next((kind.strip() for element in licences if (kind := element.get("license-type")) and kind.strip()), None)
    return wording or url or kind, url


def _licence_urls(meta: etree._Element) -> Iterator[str]:
    # ali:license_ref, whatever the prefix; an ext-link counts only inside a license (not the journal's site)
    for element in meta.iter("license", *LINKS, "{*}license_ref"):
        if element.tag in LINKS and next(element.iterancestors("license"), None) is None:
            continue
        linked = element.tag == "license" or element.tag in LINKS
        candidates = [element.get(XLINK_HREF), element.get("href")] if linked else [element_text(element)]
        yield from (value.strip() for value in candidates if value and value.strip())


def quotable(licence_url: str | None) -> bool:
    """Whether a licence URL lets sitegen quote the text: CC BY, CC BY-SA, CC0 or the Public Domain Mark."""
    return licence_url is not None and QUOTABLE_LICENCE.match(licence_url) is not None


# --------------------------------------------------------------------------- paragraphs


def paragraphs(article: etree._Element) -> tuple[list[Paragraph], bool]:
    """(paragraphs, truncated): every non-empty outermost <p> of the abstract(s), then of the body, with
    its section path, up to MAX_PARAGRAPHS and MAX_CHARACTERS; truncated when more text was left."""
    found: list[Paragraph] = []
    characters = 0
    for path, element in _blocks(article):
        text = paragraph_text(element)
        if not text:
            continue
        if len(found) == MAX_PARAGRAPHS or characters + len(text) > MAX_CHARACTERS:
            return found, True
        characters += len(text)
        found.append(Paragraph(id=f"p{len(found) + 1}", section=SECTION_SEPARATOR.join(path) or None, text=text))
    return found, False


def _blocks(article: etree._Element) -> Iterator[tuple[list[str], etree._Element]]:
    meta = article.find("front/article-meta")
    for abstract in meta.iterfind("abstract") if meta is not None else ():
        heading = element_text(abstract.find("title"))  # "Author Summary", or just "Abstract"
        yield from _walk(abstract, ["Abstract", heading] if heading and heading.casefold() != "abstract"
                         else ["Abstract"])
    body = article.find("body")
    if body is not None:
        yield from _walk(body, [])


def _walk(element: etree._Element, path: list[str]) -> Iterator[tuple[list[str], etree._Element]]:
    # recursion is bounded: read_article refused anything deeper than MAX_DEPTH
    for child in element:
        if not isinstance(child.tag, str) or child.tag in LEFT_OUT:
            continue
        if child.tag == "p":  # outermost: a <p> inside it (a list, a boxed quote) is part of its text
            yield path, child
        elif child.tag == "sec" and (title := element_text(child.find("title"))):
            yield from _walk(child, [*path, title])
        else:
            yield from _walk(child, path)


def paragraph_text(element: etree._Element) -> str:
    """The words of a paragraph: its text and its children's, without LEFT_OUT pieces (whose tails, the
    text after them, stay), comments or processing instructions; each of its BLOCKS set apart by a space; an
    empty link as its address (as it is shown); NFC, whitespace collapsed."""
    parts: list[str] = []

    def visit(node: etree._Element) -> None:
        parts.append(node.text or "")
        for child in node:
            if isinstance(child, etree._Entity):  # a named entity left unexpanded: the character it names
                parts.append(entity_character(child))
            elif isinstance(child.tag, str) and child.tag not in LEFT_OUT:
                apart = " " if child.tag in BLOCKS else ""
                parts.append(apart)
                visit(child)
                if child.tag in LINKS and not len(child) and not (child.text or "").strip():
                    parts.append(child.get(XLINK_HREF) or "")  # an empty link reads as its address
                parts.append(apart)
            parts.append(child.tail or "")
    visit(element)
    # XML holds no C0 control character, but DEL and the C1 ones it does: no record or passage holds them.
    return normalise_whitespace(CONTROL_CHARACTER.sub(" ", "".join(parts)))


def find_passage(text: str, found: list[Paragraph]) -> Paragraph | None:
    """The paragraph holding `text` verbatim (compared as `comparable_passage` has it, as passages are
    checked against abstracts), or, for a passage running on from one paragraph into the next, the paragraph
    it starts in; None when it is in none."""
    needle = comparable_passage(text)
    if not needle:
        return None
    texts = [comparable_passage(paragraph.text) for paragraph in found]
    if (within := next((p for p, t in zip(found, texts, strict=True) if holds_passage(t, needle)), None)) is not None:
        return within
    joined, starts = "", []
    for paragraph_text_ in texts:
        starts.append(len(joined))
        joined += paragraph_text_ + " "
    start = passage_start(joined, needle, elisions=False)  # words left out are left out of one paragraph
    if start is None:
        return None
    return found[bisect.bisect_right(starts, start) - 1]
