"""Text made safe for the places sitegen writes it outside HTML templates, and text as compared."""

from __future__ import annotations

import itertools
import re
import unicodedata

from sitegen.records.model import CONTROL_CHARACTER
from sitegen.records.titles import case_blind_key


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """A count with its noun in the number it needs: "1 record", "0 records", "2 studies" (`plural` when it is
    not the singular with an s). Every sentence a reader sees that counts something says it this way."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def markdown_safe(text: str) -> str:
    """One line of Markdown that shows `text` literally: no markup, links, tables, math or HTML."""
    escaped = text
    for char in "\\`*_{}[]()#+-.!|~":
        escaped = escaped.replace(char, "\\" + char)
    # Entities after the backslashes (whose '#' would be shown): "@" as one too, so a record title cannot
    # mention (notify) people in a pull request; and "$", which GitHub reads as math between two of them
    # ("rat$ or mouse$", an Ovid truncation, or "US$ 5 to US$ 10" in a title) even after a backslash.
    escaped = (escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "&#64;")
               .replace("$", "&#36;"))
    return " ".join(escaped.split())


def markdown_code(text: str) -> str:
    """`text` as an inline code span that none of its characters can end early (CommonMark): the
    fence is one backtick longer than any run of backticks inside, so a DOI holding backticks,
    links or @mentions shows literally."""
    text = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def xml_safe(text: str) -> str:
    """`text` with every character XML 1.0 or HTML cannot hold (the record format's one rule, which also
    refuses terminal controls) replaced by a space (escaping is the writer's)."""
    return CONTROL_CHARACTER.sub(" ", text)


def normalise_whitespace(text: str) -> str:
    """`text` in NFC with every run of whitespace one space and its ends trimmed: how a quoted passage and
    the text it quotes are compared (line wrapping in YAML or XML, and composed or decomposed accents,
    do not matter)."""
    return " ".join(unicodedata.normalize("NFC", text).split())  # str.split's whitespace is the regex \s's


class _Translation:
    """A `str.translate` table, applied only to text holding a character it maps: translating looks each
    character of the text up in the table, and most text (2,000 abstracts, checked at every command) holds
    none of them, which a regular expression finds in a small part of that time."""

    def __init__(self, table: dict[int, str | None]):
        self.table = table
        self.holds_one = re.compile("[" + "".join(re.escape(chr(code)) for code in table) + "]").search

    def __call__(self, text: str) -> str:
        return text.translate(self.table) if self.holds_one(text) else text


# A Greek letter's name as a word of its own ("TGF-beta", "beta-blockers", "kappa"), as an abstract or a keyboard
# without Greek type spells it: the letter ("TGF-β"). Not the short names that are words or abbreviations too ("Pi",
# "Nu", "Xi", "Eta"), nor a name inside a word ("Abeta", "alphabet").
_GREEK_NAMES = dict(zip(("alpha beta gamma delta epsilon zeta theta kappa lambda mu sigma tau phi psi omega").split(),
                        "αβγδεζθκλμστφψω", strict=True))
_SPELLED_GREEK = re.compile(rf"(?<![^\W\d_])(?:{'|'.join(_GREEK_NAMES)})(?![^\W\d_])", re.IGNORECASE)
# A unit's micro spelled "u" or "mc" after its number ("5 ug", "10 uM", "200 mcg"): "μ".
_SPELLED_MICRO = re.compile(r"(?<=\d)( ?)(?:u|mc)(?=(?:g|L|l|M|m|mol)(?![^\W\d_]))")


def _greek_letters(text: str) -> str:
    text = _SPELLED_GREEK.sub(lambda name: _GREEK_NAMES[case_blind_key(name.group())], text)
    return _SPELLED_MICRO.sub("\\1\u03bc", text)


# Characters that change nothing a reader sees (soft hyphens, zero-width spaces and joiners, the byte-order
# mark) and typographic variants of quotes, dashes and the tilde ("∼10 min", as abstracts set "about"): a passage
# typed or copied by a person and the text it quotes differ in these without differing in a word. Signs a keyboard
# has no key for are read as they are typed: "±" as "+/-", "≤" as "<=", "≥" as ">=".
_INVISIBLE_AND_TYPOGRAPHY = _Translation({
    **dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff")),
    **str.maketrans({**dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc", "'"),
                     **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
                     **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
                     **dict.fromkeys("\u223c\u301c\u02dc", "~"),
                     "\u00b1": "+/-", "\u2264": "<=", "\u2265": ">="})})


# Read before NFKC, which would make them into something else. Superscript and subscript characters keep a mark, so
# NFKC cannot make "10⁵" read as "105" or "m²" as "m2"; an acute accent set as an apostrophe ("Cronbach´s", as PDFs
# of some typesetters give it), which NFKC makes a space and a combining accent, is the apostrophe.
_BEFORE_NFKC = _Translation(str.maketrans({
    **{c: "^" + d for c, d in zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ", "0123456789+-=()ni", strict=True)},
    **{c: "_" + d for c, d in zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎", "0123456789+-=()", strict=True)},
    "\u00b4": "'"}))


# A space beside a sign of arithmetic, a dash or a unit's sign: typesetters set "57.1 ± 12.2", "P < 0.01",
# "0.82 – 0.97" and "68.9 %" with spaces (often thin ones) or without, and a PDF or a reviewer gives either, so no
# such space decides whether a passage occurs.
_SIGNS = "=<>+/~%°×-"


def _without_spaces_beside_signs(text: str) -> str:
    """`text` (its whitespace collapsed: one space at most) with no space before or after a sign. (str.replace for
    each sign the text holds: a regular expression looking for either space stops at every character, several
    times slower on abstracts.)"""
    for sign in _SIGNS:
        if sign in text:
            text = text.replace(" " + sign, sign).replace(sign + " ", sign)
    return text


def _double_quotes_as_single(text: str) -> str:
    """Each double quotation mark as a single one: a reviewer quoting a passage that quotes turns its double quotes
    into single ones (or the reverse, by house style), which changes no word. Not one after a digit that closes no
    quotation: that is a unit's sign (5" inches or seconds, 5' feet or minutes), which tells a different quantity;
    the closing mark of '"group 2"' is a quotation's."""
    if '"' not in text:
        return text
    parts = text.split('"')
    folded, opened = [parts[0]], False
    for part in parts[1:]:
        unit = not opened and folded[-1][-1:].isdigit()
        folded += ['"' if unit else "'", part]
        opened ^= not unit
    return "".join(folded)


# A hyphen between two letters: text copied from a typeset page breaks "assessment" as "assess-\nment" and
# "well-known" as "well-\nknown", and which hyphen was the typesetter's cannot be told from the text, so no hyphen
# between letters decides whether a passage occurs. Between digits ("10-20") a hyphen is kept: it is a range, never
# a line break's. (The letter before it is looked behind from the hyphen, so the regex engine looks for hyphens, not
# at every character.)
_HYPHEN_BETWEEN_LETTERS = re.compile(r"-(?<=[^\W\d_]-)(?=[^\W\d_])")


def comparable_passage(text: str) -> str:
    """`text` as a quoted passage is compared with its source: NFKC (ligatures such as "ﬁ" read as "fi",
    full-width forms as plain ones; superscripts and subscripts keep a mark, "10⁵" is "10^5"), invisible
    characters dropped, curly quotes and dashes as plain ones, "±", "≤" and "≥" as typed ("+/-", "<=", ">="),
    a Greek letter's name as the letter ("TGF-beta" is "TGF-β", "5 ug" is "5 μg"), whitespace collapsed and dropped beside a sign ("P < 0.01" is "P<0.01"), a double quotation mark as a single one
    (not a unit's sign after a digit, `_double_quotes_as_single`), and a hyphen between letters (a line break's or a compound's: "assess- ment",
    "well-known") dropped. Letters, digits, words and their order still have to match exactly."""
    plain = _double_quotes_as_single(_greek_letters(normalise_whitespace(_INVISIBLE_AND_TYPOGRAPHY(
        unicodedata.normalize("NFKC", _BEFORE_NFKC(text))))))
    return _HYPHEN_BETWEEN_LETTERS.sub("", _without_spaces_beside_signs(plain))


# Where a reviewer's quotation leaves the source's words: an ellipsis for words left out ("…" is "..." after NFKC),
# and words of the reviewer's own in square brackets ("[the rats]"). A bracketed letter starting a word ("[R]ats")
# is the source's word with its first letter's case changed: it starts a new part of the quotation, and the case of
# a part's first letter is not compared.
_ELISION = re.compile(r"\.\.\.|\[[^\[\]]*\]")
_BRACKETED_INITIAL = re.compile(r"\[([^\W\d_])\](?=[^\W\d_])")
# What a reviewer puts around a quotation or where it stops mid-sentence: quotes, a full stop, a comma.
_QUOTATION_ENDS = " \"'.,;:!?"


# How a source ends an abstract it cut short: MEDLINE kept only 250 or 400 words of a long abstract until the 1990s,
# ending it "(ABSTRACT TRUNCATED AT 250 WORDS)" (or "(ABSTRACT TRUNCATED)"), and exports that cut one end it with an
# ellipsis. Looked for in its last characters only.
_CUT_SHORT = re.compile(r"(?:\(?\s*ABSTRACT\s+TRUNCATED(?:\s+AT\s+\d+\s+WORDS)?\s*\)?|\.\.\.|\u2026)[\s.]*$",
                        re.IGNORECASE)


def cut_short(abstract: str | None) -> str | None:
    """The mark with which `abstract` says its source cut it short ("(ABSTRACT TRUNCATED AT 250 WORDS)", "…"), or
    None: such an abstract is not the whole, and a passage absent from it may be in the part left out."""
    found = _CUT_SHORT.search(abstract[-80:]) if abstract else None
    return found.group().strip() if found else None


def holds_passage(text: str, passage: str) -> bool:
    """Whether `passage` occurs in `text` (both already `comparable_passage`), as `passage_start` finds it."""
    return passage_start(text, passage) is not None


def passage_start(text: str, passage: str, elisions: bool = True) -> int | None:
    """Where `passage` starts in `text` (both already `comparable_passage`), occurring as whole words and whole
    numbers: "by 2" is not in "by 25%", nor "1" in "1.0"; None when it does not occur. An empty passage occurs
    nowhere.

    When it does not occur as written, it is read as a reviewer quotes: quotes and a full stop or comma around it
    are not the source's, the first letter's case may be changed to fit the reviewer's sentence, a superscript or
    subscript may be the source's plain digits (a record's and a JATS text's <sup> and <sub> are dropped, so "10⁵"
    reads "105" there; the source's superscript is never plain digits in the passage), and, with `elisions`, an
    ellipsis or a bracketed insertion stands for words of the source left out or replaced: the parts around it
    must occur in the order quoted."""
    if not passage:
        return None
    if (start := _start_as_written(text, passage)) is not None:
        return start
    parts = _ELISION.split(_BRACKETED_INITIAL.sub(r"...\1", passage)) if elisions else [passage]
    patterns = [_part_pattern(stripped) for part in parts
                if any(map(str.isalnum, stripped := part.strip(_QUOTATION_ENDS)))]
    starts, position = [], 0
    for pattern in patterns:
        match = pattern.search(text, position)
        if match is None:
            return None
        starts.append(match.start())
        position = match.end()
    return starts[0] if starts else None


def _start_as_written(text: str, passage: str) -> int | None:
    start = text.find(passage)
    while start >= 0:
        if _starts_word(text, start, passage[0]) and _ends_word(text, start + len(passage), passage[-1]):
            return start
        start = text.find(passage, start + 1)
    return None


def _starts_word(text: str, start: int, first: str) -> bool:
    """Whether a quotation starting with `first` may start at `start` of `text`: not inside a word, nor inside a
    number ("5" of "0.5", "000" of "1,000"), nor after its minus sign (`_after_minus`)."""
    if not first.isalnum() or start == 0:
        return True
    before = text[start - 1]
    return not before.isalnum() and not (first.isdigit() and before in ".," and start > 1 and text[start - 2].isdigit()) \
        and not (first.isdigit() and _after_minus(text, start))


def _after_minus(text: str, start: int) -> bool:
    """Whether the number at `start` of `text` has a minus sign: a hyphen before it that no digit precedes ("-0.5",
    "by -0.5", which `comparable_passage` makes "by-0.5"; a hyphen after a digit is a range's, "0.70-0.97"). "0.5 kg"
    quoted from "−0.5 kg" is another number, as "5 mg" of "0.5 mg" is. (A compound's "COVID-19" reads so too: a
    quotation starting inside it starts inside a word.)"""
    return text[start - 1] == "-" and (start < 2 or not text[start - 2].isdigit())


def _ends_word(text: str, end: int, last: str) -> bool:
    """Whether a quotation ending with `last` may end at `end` of `text`: not inside a word, nor inside a number
    ("1" of "1.0", "1" of "1,000")."""
    if not last.isalnum() or end == len(text):
        return True
    after = text[end]
    return not after.isalnum() and not (last.isdigit() and after in ".," and end + 1 < len(text)
                                        and text[end + 1].isdigit())


def _part_pattern(part: str) -> re.Pattern[str]:
    """A part of a quotation as the source may hold it: its first letter in either case, each superscript or
    subscript mark optional, a space where a word turns from letters to digits or from one alphabet to another
    ("10mg" is "10 mg", "β₂" the "β 2" a record's dropped <sub> leaves, "μg" the "μ g" of an italic μ), and whole
    words and numbers at its ends. Letters of one alphabet are never parted: "notable" is not "not able"."""
    first, last = part[0], part[-1]
    pattern = f"[{re.escape(first.lower())}{re.escape(first.upper())}]" if first.isalpha() else re.escape(first)
    for before, char in itertools.pairwise(part):
        if _kind(before) != _kind(char) and before.isalnum() and (char.isalnum() or char in "^_"):
            pattern += " ?"
        pattern += re.escape(char) + ("?" if char in "^_" else "")
    if first.isalnum():
        pattern = r"(?<![^\W_])" + (r"(?<!\d[.,])(?<!(?<!\d)-)" if first.isdigit() else "") + pattern
    if last.isalnum():
        pattern += r"(?![^\W_])" + (r"(?![.,]\d)" if last.isdigit() else "")
    return re.compile(pattern)


def _kind(char: str) -> str:
    """Digit, Latin letter, or another alphabet's letter (Greek, mostly): what a space may part in a source."""
    return "digit" if char.isdigit() else "latin" if char < "\u0250" else "other"
