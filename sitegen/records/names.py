"""Author names: a display name such as "Lianne C. Krab" split into CSL family and given parts.

Some providers (OpenAlex, arXiv) give each author only as one display string. A
reference manager needs the family name apart from the given names to sort,
abbreviate and cite, so sitegen splits such strings when it normalises a record,
and again when it exports a record stored before it did.

The rules are BibTeX's ("First von Last", "von Last, First", "von Last, Jr, First")
widened for what bibliographic sources really write:

- "Family, Given" and "Family, Given, Jr." as written by reference managers;
- particles start the family name: lower-case ones anywhere after the first word
  ("Jan van der Berg", "Maria dos Santos"), capitalised ones only directly before
  the last word ("Vincenzo Di Marzo");
- the Spanish and Portuguese "y"/"e" joins two family names ("José Ortega y Gasset");
- a trailing suffix (Jr., Sr., II, III, IV) is kept apart;
- MEDLINE's "Family Initials" ("Krab LC", "Bouton M.E.") puts the family first;
- Chinese, Japanese and Korean names written in their own script put the family
  first ("王 小明"); without a space there is nothing to split on;
- a single word, an organisation or consortium ("The ENIGMA Consortium") and
  anything else that is not a person's name in these shapes stays a CSL literal,
  so nothing is split on a guess.
"""

from __future__ import annotations

import re

from sitegen.records.model import CslName

SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "2nd", "3rd"})
# Capitalised, these are family-name particles only right before the last word: "Di Marzo",
# "De Niro"; elsewhere ("Van Morrison") they may be given names.
PARTICLES = frozenset({"van", "vanden", "vander", "von", "vonder", "de", "der", "den", "del", "dela", "della", "delle",
                       "dei", "degli", "di", "da", "dal", "dalla", "das", "do", "dos", "du", "des", "le", "la", "les",
                       "ter", "ten", "te", "op", "zu", "zur", "st", "st.", "al", "el", "bin", "ibn", "ben"})
CONJUNCTIONS = frozenset({"y", "e", "i"})  # "Ortega y Gasset": both family names
# Words that name a body, not a person, and that no person's name is made of.
ORGANISATION_WORDS = frozenset({
    "academy", "agency", "alliance", "association", "authors", "board", "centre", "center", "clinic", "coalition",
    "collaboration", "collaborative", "collaborators", "college", "commission", "committee", "company", "consortia",
    "consortium", "corporation", "council", "department", "faculty", "federation", "foundation", "gmbh", "group",
    "groups", "hospital", "inc", "inc.", "initiative", "institute", "institution", "investigators", "laboratories",
    "laboratory", "llc", "ltd", "ltd.", "members", "ministry", "network", "organisation", "organization", "panel",
    "partners", "programme", "program", "project", "registry", "school", "society", "studies", "study", "team",
    "trialists", "universidad", "universidade", "university", "université", "università", "universität",
    "working",
})
# Lower-case words that join the parts of a body's name and are no particle of a person's.
JOINING_WORDS = frozenset({"and", "&", "of", "the", "for", "on", "behalf"})
_CJK = re.compile("[\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# Characters no person's name is written with; U+FFFD marks text a source garbled, which is no base for a split.
_NOT_IN_A_NAME = re.compile(r'[0-9@()\[\]{}/;:<>|\\#*=+_"' + "\ufffd]")


def _is_initials(token: str) -> bool:
    """"J.", "J.R.", "J.-P.", "Ch." or MEDLINE's undotted "LC": a given name written as initials."""
    if re.fullmatch(r"(?:[^\W\d_][^\W\d_]?\.-?)+", token):
        return all(part[:1].isupper() for part in re.split(r"[.-]", token) if part)
    return len(token) <= 3 and token.isalpha() and token.isupper()


def _is_suffix(text: str) -> bool:
    return text.lower() in SUFFIXES


def _organisation(words: list[str]) -> bool:
    folded = [word.lower().strip(".,") for word in words]
    return any(word in ORGANISATION_WORDS for word in folded) or any(
        word in JOINING_WORDS for word in words[1:])


def _given_first(words: list[str]) -> tuple[str, str]:
    """(family, given) of "Given [particles] Family": the family is the last word, with the particles before it
    and, from the first lower-case particle on, everything after that (BibTeX's "von Last")."""
    start = next((index for index in range(1, len(words) - 1) if words[index][:1].islower()), len(words) - 1)
    if words[start] in CONJUNCTIONS and start > 1:  # "Ortega y Gasset"
        start -= 1
    while start > 1 and words[start - 1].lower() in PARTICLES:  # "Van der Meer", "Di Marzo"
        start -= 1
    return " ".join(words[start:]), " ".join(words[:start])


def _person(words: list[str], suffix: str | None) -> CslName | None:
    """A person's name written without commas, or None when it cannot be told apart safely."""
    if suffix is None and len(words) > 2 and _is_suffix(words[-1]):
        suffix, words = words[-1], words[:-1]
    if len(words) < 2:
        return None
    if any(_CJK.search(word) for word in words):
        return CslName(family=words[0], given=" ".join(words[1:]), suffix=suffix)
    initials = len(words)
    while initials > 0 and _is_initials(words[initials - 1]):
        initials -= 1
    if 0 < initials < len(words) and not _is_initials(words[0]):  # "Krab LC": MEDLINE's family first
        return CslName(family=" ".join(words[:initials]), given=" ".join(words[initials:]), suffix=suffix)
    family, given = _given_first(words)
    return CslName(family=family, given=given, suffix=suffix)


def split_name(display: str) -> CslName:
    """A CSL name for one author as a source writes it; a literal when it is no splittable person's name."""
    text = " ".join(display.split())
    if not text:
        raise ValueError("an author's name is blank")
    literal = CslName(literal=text)
    words = text.replace(",", " , ").split()
    if _NOT_IN_A_NAME.search(text) or _organisation([w for w in words if w != ","]):
        return literal
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        return literal
    if len(parts) == 1:
        return _person(parts[0].split(), None) or literal
    if len(parts) == 2 and _is_suffix(parts[1]):  # "Martin Luther King, Jr."
        return _person(parts[0].split(), parts[1]) or literal
    if len(parts) == 2:  # "Family, Given"
        return CslName(family=parts[0], given=parts[1])
    if len(parts) == 3 and _is_suffix(parts[1]):  # BibTeX's "von Last, Jr, First"
        return CslName(family=parts[0], given=parts[2], suffix=parts[1])
    if len(parts) == 3 and _is_suffix(parts[2]):  # "Family, Given, Jr." (RIS)
        return CslName(family=parts[0], given=parts[1], suffix=parts[2])
    return literal


def split(name: CslName) -> CslName:
    """`name` with a literal person's name split; a name already split, or an organisation, as it is."""
    return split_name(name.literal) if name.literal else name
