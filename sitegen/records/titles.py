"""Titles and names as sitegen compares them: folded to plain lower-case words, without the markup,
translation notes and index notes that sources add. The identity graph, the metadata matcher and the
digest's novelty rule all compare titles this one way.
"""

from __future__ import annotations

import html
import re
import unicodedata

from sitegen.records.tags import markup_tags

# re's IGNORECASE takes these for ASCII letters ("ı" and "İ" for "i", "ſ" for "s", the Kelvin sign for "k"), which
# lower() leaves as they are: a word a case-blind pattern found is looked up by the ASCII letters it was found as.
_CASE_BLIND_ASCII = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def case_blind_key(matched: str) -> str:
    """The text a case-blind (re.IGNORECASE) pattern of ASCII words matched, as the word it matched: in lower case,
    and in ASCII ("Corrıgendum", "ſigma", as a title or abstract may be typed, would otherwise be no word known)."""
    return matched.translate(_CASE_BLIND_ASCII).lower()


_NOT_WORD = re.compile(r"[^\w\s]|_")
# What indexes write where a title is missing (MEDLINE's "[Not Available]." for an untranslated one).
PLACEHOLDERS = {"not available", "title not available", "no title", "no title available", "untitled",
                "in process citation", "na", "n a", "none"}
GREEK_LETTERS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
                 "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega")
_GREEK = str.maketrans({**{chr(0x3B1 + n): f" {name} " for n, name in enumerate(GREEK_LETTERS[:17])},
                        "ς": " sigma ", **{chr(0x3C3 + n): f" {name} " for n, name in enumerate(GREEK_LETTERS[17:])},
                        "µ": " mu "})
# TeX mathematics in BibTeX titles: "CO$_2$" is CO2 and "$\\beta$-amyloid" beta-amyloid.
_TEX_MATH = re.compile(r"\$([^$]{1,60})\$")
_TEX_MARKS = re.compile(r"[_^{}\\]")
# Tags inside a word ("Ca<sup>2+</sup>", "H<sub>2</sub>O", "<i>in vivo</i>") join what they mark up, also Scopus's
# subscript ("CO<inf>2</inf>") and JATS's tags as Crossref writes them ("H<jats:sub>2</jats:sub>O"), as
# `markup.plain_text` reads them: read as a space, "K<inf>Ca</inf>3.1" was "k ca 3 1" to the matchers, another
# title than the "KCa3.1" of the same article's other records.
# These are the names of such tags; which "<...>" is a tag at all is `tags.markup_tags`'s rule, the records' own:
# "p <or= 0.05 and x >or= 3", "x<y>z" and "a <b> c" hold none.
_INLINE_TAG = re.compile(r"(?:jats:)?(?:sup|sub|inf|i|b|em|strong|u|span|sc|scp|italic|bold)|mml:[a-z]+", re.IGNORECASE)
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
# linked records ("[Erratum appears in Exp Brain Res 2010;203:245]", "[Comment on ...]", also cut short by an
# export's field limit: "[Erratum appears in Lancet Oncol. 201"). What separates them is one run of spaces and
# full stops, tried from its start only ((?<![\s.])): written as \s*\.?\s* before and \s*\.* after each note, a
# run of spaces could be split between them in every way, from every space of it, and a title holding a
# thousand spaces took seconds to compare, ten thousand hours.
_TRAILING_NOTE = re.compile(r"(?<![\s.])(?:[\s.]*(?:[\[(][A-Za-z' ,]{2,40}[\])]|\[\d+ refs?\]"
                            r"|\[(?:published\s+)?(?:erratum|comment|corrected|retraction|update)"
                            r"(?:[^\[\]]|\[[^\[\]]*\]){0,300}(?:\]|$)))+[\s.]*$",
                            re.IGNORECASE)
# Notes are looked for in a title's last characters only: an index adds a few (an erratum's is at most 300
# characters), and tried from each of thousands of bracketed words a title could hold, they took minutes.
_NOTES_WITHIN = 1_000


def folded(text: str) -> str:
    """Lower case, accents and punctuation removed, Greek letters spelt out ("IFN-γ" and "IFN-gamma" alike),
    whitespace collapsed. In the scripts of South and Southeast Asia (Devanagari, Thai, ...) a mark is a vowel or
    a tone, part of the word (ใช้ "use" and ใช่ "yes" differ by one): there it is kept as a letter is. Every other
    text folds as it always has, so the content keys made of folded texts (`ids.content_ref`) stay as they were."""
    if text.isascii():  # most titles are: they skip the decomposition, and are folded a byte at a time
        return b" ".join(text.encode().translate(_ASCII_FOLDED).split()).decode()
    if not _MARKS_ARE_LETTERS.search(text):
        text = "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))
        return " ".join(_NOT_WORD.sub(" ", text.lower().translate(_GREEK)).split())
    kept, accented = [], True  # a mark with no letter before it is dropped too
    for char in unicodedata.normalize("NFKD", text):
        if unicodedata.category(char).startswith("M"):
            if not accented:
                kept.append(char)
            elif not unicodedata.combining(char):  # an enclosing or spacing mark: punctuation to these scripts
                kept.append(" ")
            continue
        accented = not char.isalnum() or _takes_accents(char)  # a stray mark after a space or punctuation goes
        kept.append(char)
    text = "".join(kept).lower().translate(_GREEK)
    return " ".join("".join(char if char.isalnum() or char.isspace() or unicodedata.category(char).startswith("M")
                            else " " for char in text).split())


# Each ASCII character as the folding of other text reads it (lower case, `_NOT_WORD` a space, whitespace a space,
# as `str.split` splits at every whitespace character and `bytes.split` only at a space and five others): made from
# that rule itself, a character at a time, so an ASCII text folds in C alike, at a third of the cost of the pattern.
_ASCII_FOLDED = bytes(ord(" " if (char := _NOT_WORD.sub(" ", chr(code).lower())).isspace() else char)
                      for code in range(128)) + bytes(range(128, 256))


# Scripts whose marks are vowels and tones: Devanagari to Sinhala, Thai, Lao, Tibetan, Myanmar, Khmer, Balinese to
# Sundanese, and their extensions.
_MARKS_ARE_LETTERS = re.compile("[\u0900-\u0DFF\u0E00-\u0FFF\u1000-\u109F\u1780-\u17FF\u1B00-\u1BBF"
                                "\uA8E0-\uA8FF\uA9E0-\uA9FF\uAA60-\uAA7F]")


def _takes_accents(char: str) -> bool:
    """A letter whose marks are accents to fold away: any but one of the scripts `_MARKS_ARE_LETTERS` names."""
    return not _MARKS_ARE_LETTERS.match(char)


def unmarked(title: str) -> str:
    """A title with HTML entities decoded (twice: indexes escape escaped text) and tags (`tags.markup_tags`) replaced
    by spaces, inline ones (`_INLINE_TAG`) by nothing."""
    text = html.unescape(html.unescape(title))
    text = _TEX_MATH.sub(lambda found: _TEX_MARKS.sub("", found.group(1)), text)  # "CO$_2$", "$\\beta$"
    parts, end = [], 0
    for tag in markup_tags(text):
        parts += [text[end:tag.start()], "" if _INLINE_TAG.fullmatch(tag.group("name")) else " "]
        end = tag.end()
    return "".join(parts) + text[end:]


def comparable_title(title: str | None) -> str:
    """A title as sitegen compares it: HTML entities decoded, tags and translation markers removed, PubMed's
    [brackets] around a translated title dropped, index notes at its end removed ("[Review] [33 refs]"),
    then folded. A title that is nothing but a note keeps it; a placeholder ("[Not Available].") is no title."""
    return _compared(title, labelled=False)


def _compared(title: str | None, labelled: bool) -> str:
    """`comparable_title`, and with `labelled` without a database's labels too (`without_labels`), once the
    translation markers and notes are gone: "[Translated title]. [Japanese]" is a title, not a label before one."""
    whole = unmarked(title or "")
    if folded(whole) in PLACEHOLDERS:
        return ""
    text = _TRANSLATION_MARKER.sub(" ", whole).strip()
    if labelled and text[:1] in "[(":  # "[Preprint] [Translated title]": the label first, or it is taken for the title
        text = _KNOWN_LEADING_LABELS.sub("", text, count=1) or text
    if (inside := _wholly_bracketed(text)) is not None:
        text = inside
    elif labelled and (title_alone := _bracketed_before_notes(text)):
        if folded(title_alone) in PLACEHOLDERS:  # "[Not Available]. [Review]": no title either
            return ""
        text = title_alone
    head, tail = text[:-_NOTES_WITHIN], text[-_NOTES_WITHIN:]
    noted = head + _TRAILING_NOTE.sub("", tail)
    if labelled:
        noted = _SCRIPT_IN_BRACKETS.sub(r"\1", _MEDLINE_SIGN.sub(r"\1", without_labels(noted)))
        noted = _APOSTROPHE_IN_A_WORD.sub("", noted)
    return folded(noted) or folded(text) or folded(whole)


# An apostrophe inside a word ("symptom's", "Crohn’s", "O'Brien"), which some exports leave out ("symptoms", as the
# stroke set's duplicate of "symptom's" writes it): folded, it parted the word ("symptom s"). The matchers join it.
_APOSTROPHE_IN_A_WORD = re.compile(r"(?<=[^\W\d_])['’](?=[^\W\d_])")
# MEDLINE writes "≥" and "≤" in ASCII as "> or =" and "< or =" (">or=30 years", "aged > or = 50 years"), where other
# indexes write ">=" or the sign: folded, the "or" was a word the others' titles lack. The matchers read the sign.
_MEDLINE_SIGN = re.compile(r"([<>])\s*or\s*=")
# MEDLINE writes a superscript or subscript in brackets after its word ("p16(INK4a)", "Ca(2+)", "CO(2)"), where a
# publisher's or Embase's record joins it to the word ("p16INK4a", "Ca<sup>2+</sup>"): folded, the brackets parted
# the word ("p16 ink4a", "p16ink4a"). The matchers join them; only brackets directly after a word and holding no space.
_SCRIPT_IN_BRACKETS = re.compile(r"(?<=\w)\(([^\s()]{1,20})\)(?!\w)")


def translated(title: str | None) -> bool:
    """Whether a title says it is a translation of the work's own: a language note ("[Article in German]",
    "(author's transl)") or MEDLINE's brackets around the whole title ("[Effect of ...]." alone or before index
    notes). The index holding the work may give its title in the original language, as unlike the translation as
    another work's title is. Spaces around the title are none of it, as `_compared` has them."""
    text = unmarked(title or "").strip()
    if _TRANSLATION_MARKER.search(text):
        return True
    inside = _wholly_bracketed(text)
    return (inside is not None and folded(inside) not in PLACEHOLDERS) or _bracketed_before_notes(text) is not None


# MEDLINE's brackets around a whole title, a full stop or spaces after them ("[Effect of ...]."): nothing else.
_WHOLLY_BRACKETED = re.compile(r"\[([^\[\]]*)\][.\s]*")


def _wholly_bracketed(text: str) -> str | None:
    """The title inside MEDLINE's brackets when they hold the whole text, else None."""
    found = _WHOLLY_BRACKETED.fullmatch(text)
    return found.group(1) if found else None


# MEDLINE's translated title in brackets with index notes after it ("[Title in English]. [Review] [12 refs]").
_BRACKETED_TITLE = re.compile(r"\[([^\[\]]+)\][.\s]*(?=\[)")


def _bracketed_before_notes(text: str) -> str | None:
    """The title of `text` when it is a bracketed title followed by nothing but index notes (`_TRAILING_NOTE`), else
    None. Taken whole first: a short title ("[Short title]. [Review]") is no longer than a note, and the notes'
    pattern would drop it with them, leaving nothing but the whole text, its notes kept, to compare. Only the
    matchers ask (`matched_title`): `comparable_title` makes the content keys of records already filed."""
    found = _BRACKETED_TITLE.match(text)
    if found is None or len(text) - found.end() > _NOTES_WITHIN or _TRAILING_NOTE.sub("", text[found.end():]):
        return None
    return found.group(1)


# An ampersand between words: MEDLINE spells every one out ("Diet & exercise" is its "Diet and exercise").
_AMPERSAND = re.compile(r"\s*&\s*")


# A label a database puts before a title: up to five words in square brackets, the first of four letters or more, then
# a space ("[Preprint] ...", "[Retracted] ...", "[Article in Spanish] ...", "[Published online ahead of print] ...").
# A title's own brackets hold digits, a formula or element symbols, mostly with no space after ("[18F]FDG",
# "[Ca2+]i", "[3H]thymidine", "[FeFe] hydrogenases", "[Fe] complexes"): they stay.
_LEADING_LABEL = re.compile(r"^\s*(?:\[(?:[A-Z]?[a-z]{3,}|[A-Z]{4,})(?:[ ,-]+[A-Za-z']+){0,4}\][\s.:]+)+(?=\S)")
# The labels databases and screening tools put before a title, in square or round brackets, known by their words: a
# run of them is dropped before a bracketed (translated) title is looked for, which `_LEADING_LABEL` cannot tell from a
# label ("[Preprint] [Translated title]", "[Retracted] [Title]. [Review]": the first is the label, the second the
# title), and round brackets are a title's own often enough ("(Almost) everything", "(R)-ketamine") that only these
# words are a label in them.
_LABEL_WORDS = (r"preprint|retracted(?:\s+(?:article|publication))?|retraction(?:\s+notice)?|withdrawn|letter|editorial"
                r"|comment(?:ary)?|news|internet|online|in\s+press|erratum|correction|expression\s+of\s+concern"
                r"|not\s+peer[-\s]reviewed|epub(?:\s+ahead\s+of\s+print)?|(?:published\s+)?(?:online\s+)?ahead\s+of\s+print")
_KNOWN_LEADING_LABELS = re.compile(rf"^(?:[\[(]\s*(?:{_LABEL_WORDS})\s*[\])](?:[\s.:]+|(?=[\[(])))+(?=\S)",
                                   re.IGNORECASE)
# A version note an open-peer-review platform adds to the end of a title (F1000Research, Wellcome Open Research:
# "[version 2; peer review: 2 approved]"): it names the version and its reviews, not the work.
_VERSION_LABEL = re.compile(r"(?<![\s.])[\s.]*\[version\s+\d+\s*;[^\[\]]{0,120}\][\s.]*$", re.IGNORECASE)


def without_labels(title: str) -> str:
    """A title without the editorial labels a database adds before it or a platform after it (`_LEADING_LABEL`,
    `_VERSION_LABEL`); a title that is nothing but a label keeps it. The labels at its end that `comparable_title`
    drops ("[Preprint]", "(Preprint)", "[Internet]", "[published online ahead of print]") are dropped there, with the
    translation markers, before this is asked."""
    if "[" not in title:  # most titles
        return title
    return _VERSION_LABEL.sub("", _LEADING_LABEL.sub("", title[:_NOTES_WITHIN]) + title[_NOTES_WITHIN:]) or title


def matched_title(title: str | None) -> str:
    """A title as the matchers compare two records' titles: `comparable_title`, with "&" read as "and" (folding
    drops it, so a publisher's "Diet & exercise" and MEDLINE's "Diet and exercise" differed by a word) and without
    a database's labels (`without_labels`: "[Preprint] ..." and "..." are one title). Not `comparable_title`
    itself: the content keys of records already filed (ids.content_ref) are made with it."""
    if not title or "&" not in title:  # most titles: no markup to read first
        return _compared(title, labelled=True)
    text = unmarked(title)  # entities decoded first: "&amp;" is an ampersand, "&lt;" none
    return _compared(_AMPERSAND.sub(" and ", text) if "&" in text else title, labelled=True)


def title_key(title: str) -> tuple[str, str]:
    """A title as lists sort it: case, accents and leading quotes or brackets ignored ("Émotion" among the E's,
    however its accent is encoded); the title itself breaks ties."""
    # A letter or digit is a word character (`\w`): most titles start with one, and need not be searched.
    text = title if title[:1].isalnum() else _LEADING_NON_WORD.sub("", title)
    return folded(text), text.casefold()


_LEADING_NON_WORD = re.compile(r"^\W+")  # quotes and brackets a title starts with
