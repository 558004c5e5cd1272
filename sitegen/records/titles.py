"""Titles and names as sitegen compares them: folded to plain lower-case words, without the markup,
translation notes and index notes that sources add. The identity graph, the metadata matcher and the
digest's novelty rule all compare titles this one way.
"""

from __future__ import annotations

import html
import re
import unicodedata

_NOT_WORD = re.compile(r"[^\w\s]|_")
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")
# Markers that a title was translated or comes with a language note: "[Chinese]", "[Article in German]",
# "(author's transl)". They are dropped before titles are compared, wherever they are.
_LANGUAGES = ("chinese|japanese|korean|german|french|spanish|portuguese|italian|russian|polish|dutch|czech|"
              "slovak|hungarian|turkish|swedish|danish|norwegian|finnish|greek|hebrew|persian|arabic|croatian|"
              "serbian|slovenian|romanian|bulgarian|ukrainian|lithuanian|latvian|estonian|english|"
              "afrikaans|catalan|icelandic|indonesian|malay|thai|vietnamese")
_TRANSLATION_MARKER = re.compile(
    r"[\[(]\s*(?:(?:article|text|abstract|published|original)\s+)?(?:in\s+)?(?:" + _LANGUAGES + r")"
    r"(?:\s*(?:,|and|with)\s*(?:(?:an?\s+)?(?:english\s+)?(?:abstract|summary)|" + _LANGUAGES + r"))*\s*[\])]"
    r"|[\[(]\s*(?:author'?s\s+)?transl(?:\.|ation|ated)?\s*(?:by\s+author)?\s*[\])]",
    re.IGNORECASE,
)
# Trailing notes an index adds to a title: a few words without digits in brackets ("[Chinese]",
# "[Article in German]", "(author's transl)", "[Review]"), reference counts ("[33 refs]") and notes of
# linked records ("[Erratum appears in Exp Brain Res 2010;203:245]", "[Comment on ...]").
_TRAILING_NOTE = re.compile(r"(?:\s*\.?\s*(?:[\[(][A-Za-z' ,]{2,40}[\])]|\[\d+ refs?\]"
                            r"|\[(?:erratum|comment|corrected|retraction|update)[^\[\]]{0,200}\])\s*\.?)+\s*$",
                            re.IGNORECASE)


def folded(text: str) -> str:
    """Lower case, accents and punctuation removed, whitespace collapsed."""
    if not text.isascii():  # most titles are: they skip the decomposition
        text = "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


def unmarked(title: str) -> str:
    """A title with HTML entities decoded (twice: indexes escape escaped text) and tags replaced by spaces."""
    return _TAG.sub(" ", html.unescape(html.unescape(title)))


def comparable_title(title: str | None) -> str:
    """A title as sitegen compares it: HTML entities decoded, tags and translation markers removed, PubMed's
    [brackets] around a translated title dropped, index notes at its end removed ("[Review] [33 refs]"),
    then folded. A title that is nothing but a note keeps it."""
    whole = unmarked(title or "")
    text = _TRANSLATION_MARKER.sub(" ", whole).strip()
    bracketed = re.fullmatch(r"\[(.*)\][.\s]*", text, re.DOTALL)
    if bracketed and "[" not in bracketed.group(1) and "]" not in bracketed.group(1):
        text = bracketed.group(1)
    return folded(_TRAILING_NOTE.sub("", text)) or folded(text) or folded(whole)
