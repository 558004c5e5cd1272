"""The script a text is written in, and whether a name in Cyrillic or Greek letters is written in Latin letters by a
standard transliteration.

An index often gives a Russian, Ukrainian, Bulgarian, Serbian or Greek author's name in Latin letters where a
reference list gives it in the author's own script ("Иванов" and "Ivanov", "Παπαδόπουλος" and "Papadopoulos"); one
name in two scripts is no discrepancy. The systems in use write a letter several ways (ISO 9, BGN/PCGN, the Library
of Congress's, passports' ICAO, German and French ones: "ж" as "zh", "z" (ž), "j"; "ю" as "yu", "iu", "ju", "u" (û)),
so a name agrees with a Latin spelling when some choice of each letter's (or pair of letters') standard forms spells
it. Chinese, Japanese and Korean names (and other scripts) are never compared so: their romanisations do not follow
from the characters, so a name in them is neither agreement nor discrepancy with one in Latin letters.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

from sitegen.records.titles import folded

# Each letter's Latin forms in the standard systems, lower case and without the diacritics `folded` drops anyway
# (ISO 9's "ž", "č", "š", "ŝ", "û", "â" are "z", "c", "s", "s", "u", "a" folded).
_CYRILLIC = {
    "а": ("a",), "б": ("b",), "в": ("v", "w"), "г": ("g", "h", "gh"), "ґ": ("g",), "д": ("d",),
    "е": ("e", "ye", "je", "ie"), "ё": ("e", "yo", "jo", "io"), "є": ("ye", "ie", "je", "e"),
    "ж": ("zh", "z", "j", "sh"), "з": ("z", "s"), "и": ("i", "y"), "і": ("i",), "ї": ("yi", "i", "ji"),
    "й": ("y", "i", "j", ""), "к": ("k", "c"), "л": ("l",), "м": ("m",), "н": ("n",), "о": ("o",), "п": ("p",),
    "р": ("r",), "с": ("s", "ss"), "т": ("t",), "у": ("u", "ou"), "ф": ("f", "ph"), "х": ("kh", "h", "ch", "x"),
    "ц": ("ts", "c", "tz", "z"), "ч": ("ch", "c", "tch", "tsch", "cz"), "ш": ("sh", "s", "sch", "ch"),
    "щ": ("shch", "sch", "sc", "s", "sht"), "ъ": ("", "a", "u"), "ы": ("y", "i"), "ь": ("",), "э": ("e",),
    "ю": ("yu", "iu", "ju", "u"), "я": ("ya", "ia", "ja", "a"),
    # Serbian, Macedonian and Belarusian letters
    "ђ": ("dj", "d"), "ј": ("j", "y"), "љ": ("lj", "l"), "њ": ("nj", "n"), "ћ": ("c", "ch", "tj"),
    "џ": ("dz", "dzh", "dj", "j"), "ѓ": ("gj", "g"), "ќ": ("kj", "k"), "ѕ": ("dz",), "ў": ("u", "w"),
}
_CYRILLIC_PAIRS = {"кс": ("x", "ks"), "ий": ("y", "iy", "ii", "ij", "i"), "ый": ("y", "yi", "iy", "yy")}
_GREEK = {
    "α": ("a",), "β": ("b", "v"), "γ": ("g", "gh", "y"), "δ": ("d", "dh", "th"), "ε": ("e",), "ζ": ("z",),
    "η": ("i", "e"), "θ": ("th",), "ι": ("i", "y"), "κ": ("k", "c"), "λ": ("l",), "μ": ("m",), "ν": ("n",),
    "ξ": ("x", "ks"), "ο": ("o",), "π": ("p",), "ρ": ("r", "rh"), "σ": ("s", "ss"), "ς": ("s",), "τ": ("t",),
    "υ": ("y", "i", "u"), "φ": ("f", "ph"), "χ": ("ch", "kh", "h", "x"), "ψ": ("ps",), "ω": ("o",),
}
_GREEK_PAIRS = {
    "ου": ("ou", "u"), "αι": ("ai", "e"), "ει": ("ei", "i"), "οι": ("oi", "i"), "υι": ("yi", "i"),
    "αυ": ("av", "af", "au"), "ευ": ("ev", "ef", "eu"), "ηυ": ("iv", "if"), "μπ": ("b", "mb"), "ντ": ("d", "nt"),
    "γγ": ("ng", "gg"), "γκ": ("g", "gk", "nk"), "γχ": ("nch", "nkh"), "τσ": ("ts",), "τζ": ("tz", "dz"),
}
_TABLES = {"cyrillic": (_CYRILLIC, _CYRILLIC_PAIRS), "greek": (_GREEK, _GREEK_PAIRS)}
TRANSLITERATED = frozenset(_TABLES)  # the scripts `transliterates` compares with Latin letters
LONGEST_NAME = 64  # letters: a name is shorter; a longer text is never compared (the comparison is quadratic)
SCRIPT_WORDS = {"latin": "Latin letters", "cyrillic": "Cyrillic", "greek": "Greek letters",
                "cjk": "Chinese characters", "hiragana": "Japanese kana", "katakana": "Japanese kana",
                "hangul": "Hangul"}


def main_script(text: str) -> str:
    """The script most of the text's letters are written in, in lower case as Unicode names it ("latin", "cyrillic",
    "greek", "cjk", "hangul", ...); "" for a text without letters."""
    if text.isascii():  # most names and titles are
        return "latin" if any(char.isalpha() for char in text) else ""
    # compatibility forms are their letters' script: "Ｓｍｉｔｈ" (full width, as Japanese databases write it) is Latin
    text = unicodedata.normalize("NFKC", text)
    scripts = Counter(unicodedata.name(char, "").split(" ")[0].lower() for char in text if char.isalpha())
    return scripts.most_common(1)[0][0] if scripts else ""


def script_words(script: str) -> str:
    """The script in words: "Cyrillic", "Chinese characters"."""
    return SCRIPT_WORDS.get(script, f"{script.title()} script")


def transliterates(native: str, latin: str) -> bool:
    """Whether `latin` spells `native` (a name in Cyrillic or Greek letters) by the letters' standard Latin forms, one
    choice for each letter or pair of letters; False for any other script, or a name too long to compare."""
    script = main_script(native)
    if script not in _TABLES or main_script(latin) != "latin":
        return False
    letters, pairs = _TABLES[script]
    native = _bare(native, script)
    target = "".join(folded(latin).split())
    if not native or not target or max(len(native), len(target)) > LONGEST_NAME:
        return False
    # reached[i]: the positions in `target` up to which some spelling of native[:i] matches it
    reached: list[set[int]] = [set() for _ in range(len(native) + 1)]
    reached[0].add(0)
    for i, char in enumerate(native):
        steps = [(1, letters.get(char, (char,) if char.isascii() else ()))]  # a Latin letter in it is itself
        if native[i:i + 2] in pairs:
            steps.append((2, pairs[native[i:i + 2]]))
        for at in reached[i]:
            for width, forms in steps:
                reached[i + width].update(at + len(form) for form in forms if target.startswith(form, at))
    return len(target) in reached[len(native)]


def _bare(name: str, script: str) -> str:
    """The name's letters in lower case, without accents and stress marks (Greek's tonos, a stressed Cyrillic vowel),
    but for the marks that make Cyrillic letters of their own ("й", "ё", "ї", "ў")."""
    kept = "\u0306\u0308" if script == "cyrillic" else ""
    text = "".join(char for char in unicodedata.normalize("NFD", name.lower())
                   if not unicodedata.combining(char) or char in kept)
    return "".join(char for char in unicodedata.normalize("NFC", text) if char.isalpha())
