"""Author names: a display name such as "Lianne C. Krab" split into CSL family and given parts.

Some providers (OpenAlex, arXiv) give each author only as one display string. A
reference manager needs the family name apart from the given names to sort,
abbreviate and cite, so sitegen splits such strings when it normalises a record
(a name a source gave as one field stays whole: see `site.exports.one_field_name`).

The rules are BibTeX's ("First von Last", "von Last, First", "von Last, Jr, First")
widened for what bibliographic sources really write:

- "Family, Given" and "Family, Given, Jr." as written by reference managers, and "Family," for a
  family name with no given names, kept whole ("Family, Jr.," and "Family, , Jr." with a suffix);
- particles start the family name: lower-case ones anywhere after the first word
  ("Jan van der Berg", "Maria dos Santos"), capitalised ones only directly before
  the last word ("Vincenzo Di Marzo");
- the Spanish and Portuguese "y"/"e" joins two family names ("José Ortega y Gasset");
- a trailing suffix (Jr., Sr., II, III, IV) is kept apart, also one written before the comma ("Wright Jr., T C");
- MEDLINE's "Family Initials" ("Krab LC", "Bouton M.E.") puts the family first;
- Chinese, Japanese and Korean names written in their own script put the family
  first ("王 小明"); without a space there is nothing to split on;
- a name wholly in capitals with two words or more that are no initials ("CAIZHI SHEN", "SMITH JOHN") says
  nothing of which is the family name: it stays a literal, compared in either order (`same_person`), and in
  capitals initials are one or two letters ("SMITH JM") or dotted ("SMITH J.R.");
- a single word, an organisation or consortium ("The ENIGMA Consortium") and
  anything else that is not a person's name in these shapes stays a CSL literal,
  so nothing is split on a guess.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from rapidfuzz.distance import Levenshtein

from sitegen.records.model import CslName, visible_text
from sitegen.records.scripts import main_script, transliterates
from sitegen.records.titles import folded

SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "2nd", "3rd"})
# Capitalised, these are family-name particles only right before the last word: "Di Marzo",
# "De Niro"; elsewhere ("Van Morrison") they may be given names.
PARTICLES = frozenset({"van", "vanden", "vander", "von", "vonder", "de", "der", "den", "del", "dela", "della", "delle",
                       "dei", "degli", "di", "da", "dal", "dalla", "das", "do", "dos", "du", "des", "le", "la", "les",
                       "ter", "ten", "te", "op", "zu", "zur", "st", "st.", "al", "el", "bin", "ibn", "ben"})
# Particles that are also family names, or words of names, alone: De, Le, Da, Do, Di, Du, La and Te are Bengali,
# Vietnamese and Chinese family names ("Le, Minh T"), Del, Dal, Dalla, Dei, Al, El, Ben and Bin others. St, Op, Les,
# Dela and Ibn are here too: a name in capitals counts them as words, and "St, John A" is not read as split.
PARTICLES_ALSO_NAMES = frozenset({"de", "le", "da", "do", "di", "du", "la", "te", "del", "dal", "dalla", "dei", "al",
                                  "el", "ben", "bin", "st", "st.", "op", "les", "dela", "ibn"})
# Particles that are never a family name alone (`order_unknown`, `_family_among_given`): every other one, derived
# so that a particle added to PARTICLES is one unless named above.
LONE_PARTICLES = PARTICLES - PARTICLES_ALSO_NAMES
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


# What lists stand in for the authors they leave out (BibTeX's "and others", RIS's "AU  - et al."): no author.
NAMES_LEFT_OUT = re.compile(r"others|et\.? ?al\.?", re.IGNORECASE)
# What sources write where an article names no author, folded (`titles.folded`): an editorial's or a meeting's
# abstracts' "Anonymous" ("[Anonymous]", "Anon."), PubMed's "[No authors listed]", PsycINFO's "No authorship
# indicated" (also split as a name: "No authorship, indicated"), Scopus's "[No author name available]". A record
# keeps it as its source wrote it; compared, it names no one (`person`).
PLACEHOLDERS = frozenset({
    "anonymous", "anon", "anonym", "no authors listed", "no author listed", "no authorship indicated",
    "no author name available", "no author", "no authors", "author unknown", "unknown author", "unknown", "n a",
    "not available",
})


def names_no_one(name: str) -> bool:
    """Whether an author list's item stands where no author is named: a placeholder ("Anonymous", "[No authors
    listed]") or a mark for authors left out ("et al.")."""
    return folded(name) in PLACEHOLDERS or bool(NAMES_LEFT_OUT.fullmatch(folded(name)))


# The " and " between the names of an author list, with the whitespace around it. It matches only from the start of
# a whitespace run: `\s+and\s+` alone is tried again from every space of a run not followed by "and", so a cell
# of a few hundred kilobytes of spaces took hours to read.
AUTHORS_AND = re.compile(r"(?<!\s)\s+and\s+")


def _is_initials(token: str) -> bool:
    """"J.", "J.R.", "J.-P.", "Ch.", MEDLINE's undotted "LC", or hyphenated without dots ("J-P", for Jean-Pierre): a
    given name written as initials."""
    if re.fullmatch(r"(?:[^\W\d_][^\W\d_]?\.-?)+", token):
        return all(part[:1].isupper() for part in re.split(r"[.-]", token) if part)
    if re.fullmatch(r"[^\W\d_]{1,2}(?:-[^\W\d_]{1,2})+", token):
        return token.isupper()
    return len(token) <= 3 and token.isalpha() and token.isupper()


def _is_suffix(text: str) -> bool:
    return text.lower() in SUFFIXES


def _organisation(words: list[str]) -> bool:
    # a name braced whole ("{ALTS Group}", as BibTeX and sitegen's MEDLINE reader write a group author) keeps its
    # braces on its first and last words; a name may be joined into one word by hyphens ("-ALTS-Study-Group", as
    # an Embase export writes a group author)
    folded = [part for word in words for part in word.lower().strip(".,{}").split("-")]
    return any(word in ORGANISATION_WORDS for word in folded) or any(
        word in JOINING_WORDS for word in words[1:])


# One syllable as Chinese, Korean and Cantonese family names are romanised ("LI", "WU", "NG", "HO", "ZHANG", "KIM",
# "HWANG", "CHOI", "LEUNG"): an initial consonant, a glide, a vowel or two and a nasal or stop; without an initial,
# one of a few ("AN", "OU", "OH", "AHN"). A body's initials stand for several words and rarely spell one such
# syllable: a consonant pair no romanisation has ("WHO", "NHS"), two syllables ("NICE", "EMA", "AHA"), an end no
# romanisation has ("CDC", "ESC", "NIH", "FDA"), a vowel first ("UN", "EU", "IOM", "AO").
_SYLLABLE_SURNAME = re.compile(
    r"ng|an|ang|ahn|oh|ou|(?:(?:zh|ch|sh|ts|[bcdfghjklmnpqrstxz])[wy]?|[wy])"
    r"(?:iao|uai|ai|ao|ae|ei|eo|eu|ee|ia|ie|iu|io|oi|ou|oo|ua|ue|ui|uo|a|e|i|o|u)(?:ng|n|m|p|k)?")


def _acronym(literal: str) -> bool:
    """A name written as one word of two to six capitals, as indexes write a body known by its initials ("WHO",
    "NICE", "EORTC"). Not a person's family name written alone in capitals: indexes write that with a comma
    ("SMITH,", read as a family name) or with given names or initials ("SMITH, J", "SMITH J"), but a Chinese,
    Korean or Cantonese family name of one syllable they also write alone ("LI", "WU", "NG", as in some exports
    and PubMed's lists of a group's members), and few bodies' initials spell one (`_SYLLABLE_SURNAME`)."""
    word = literal.strip("{}")
    return 2 <= len(word) <= 6 and word.isalpha() and word.isupper() and not (
        word == literal and _SYLLABLE_SURNAME.fullmatch(word.lower()))


def name_word(token: str) -> bool:
    """In a name written wholly in capitals, a word that is a name and no initials: three letters or more without a
    full stop ("SHEN", "JOHN", "O'BRIEN"), or two that spell a syllable as Chinese, Korean and Cantonese names are
    romanised (`_SYLLABLE_SURNAME`: "LI", "LÜ", "WU"). Initials are one letter, two that spell none ("JM", "AD"),
    or letters each followed by a full stop ("J.", "J.R.")."""
    letters = re.sub(r"[-'’]", "", token)
    return letters.isalpha() and (len(letters) >= 3 or len(letters) == 2
                                  and bool(_SYLLABLE_SURNAME.fullmatch(folded(letters))))


def order_unknown(words: list[str]) -> bool:
    """Whether a name written without a comma wholly in Latin capitals holds two words or more that are names
    (`name_word`): "CAIZHI SHEN", "JUNCHANG LÜ", "SMITH JOHN". Nothing says which is the family name: EBSCOhost
    writes Chinese authors given names first in capitals, some indexes Western ones family name first. A name
    with one such word and initials ("SMITH JM", "J. SMITH", "VAN DER BERG J": a particle that is never a family
    name alone, LONE_PARTICLES, is part of one) says it by where the initials stand."""
    text = " ".join(words)
    return text.isupper() and main_script(text) == "latin" and sum(
        name_word(word) and word.lower() not in LONE_PARTICLES for word in words) >= 2


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
    if order_unknown(words):  # "CAIZHI SHEN": either word may be the family name, so neither is said to be
        return None
    capitals = " ".join(words).isupper()

    def is_initials(word: str) -> bool:  # in capitals, "LI" of "LI XM" is a name
        return _is_initials(word) and not (capitals and name_word(word))
    initials = len(words)
    while initials > 0 and is_initials(words[initials - 1]):
        initials -= 1
    if 0 < initials < len(words) and not is_initials(words[0]):  # "Krab LC": MEDLINE's family first
        return CslName(family=" ".join(words[:initials]), given=" ".join(words[initials:]), suffix=suffix)
    family, given = _given_first(words)
    return CslName(family=family, given=given, suffix=suffix)


# Degrees, licences and fellowships written after a name, as written without their dots: in capitals but for the
# mixed-case degrees ("Ma", "Do" are family names, "MA" and "DO" degrees).
CREDENTIALS = frozenset({
    "PhD", "EdD", "DrPH", "ScD", "PsyD", "PharmD", "DPhil", "MPhil", "MBChB", "MSc", "BSc", "MEd", "DNSc",
    "MD", "DO", "DNP", "DNS", "MBBS", "MPH", "MSN", "MN", "MS", "MA", "MBA", "MHS", "BSN", "BN", "BS", "BA", "RN", "RGN",
    "RM", "LPN", "NP", "APRN", "FNP", "FNP-BC", "FNP-C", "ANP", "CNP", "ACNP", "CPNP", "CNS", "CNM", "CRNA", "CCRN",
    "CNE", "IBCLC", "RD", "PT", "DPT", "OT", "OTR", "SLP", "FAAN", "FACHE", "FACP", "FACS", "FRCP", "FRCS", "FRCPC",
    "MRCP"})
_DEGREE = re.compile(r",?\s+(?:PhD|Ph\.D\.|MSc|BSc|DPhil|MPhil|PharmD|MBChB|DrPH|ScD|EdD|PsyD|MSN|BSN|FRCP|FRCS|FACS|"
                     r"FACP)\.?\s*$")


def split_name(display: str) -> CslName:
    """A CSL name for one author as a source writes it; a literal when it is no splittable person's name."""
    # A word with nothing visible in it (a zero-width space, a soft hyphen) is no part of a name: kept, it
    # could become a family name no one can see, which no record may hold.
    text = " ".join(word for word in display.split() if visible_text(word))
    if not text:
        raise ValueError("an author's name is blank")
    # An academic degree after a name ("John Smith PhD", "Jane Doe, MSc") is no part of it: kept, it was read as
    # the given name or the family name. Only degrees no one's initials could be (written in mixed case).
    while (degree := _DEGREE.search(text)) and len(text[:degree.start()].split()) >= 2:
        text = text[:degree.start()]
    # "Family," is the "Family, Given" form with no given names: a name to keep whole, as EndNote writes an
    # organisation and sitegen a family name given alone ("van der Berg,", "Garcia Marquez,").
    alone = len(text) > 1 and text.endswith(",") and text.count(",") == 1
    if alone:
        text = text[:-1].rstrip()
    literal = CslName(literal=text)
    words = text.replace(",", " , ").split()
    if _NOT_IN_A_NAME.search(text) or _organisation([w for w in words if w != ","]):
        return literal
    if alone:
        return CslName(family=text)
    parts = [part.strip() for part in text.split(",")]
    if len(parts) == 3 and parts[0] and "" in parts[1:] and _is_suffix(parts[1] or parts[2]):
        # A family name and a suffix with no given names: BibTeX's "von Last, Jr, First" and RIS's "Last, First,
        # Suffix" with the First left empty ("Doe, Jr.," and "Doe, , Jr.", as sitegen's exports write it)
        return CslName(family=parts[0], suffix=parts[1] or parts[2])
    if not all(parts):
        return literal
    if len(parts) == 2 and parts[1] == "null":
        # A tool's JSON null written for the given names it lacks, as Mendeley's RIS export writes it ("van den
        # Hoven, null"): the family name alone. Kept, "null" was read as the person's given name.
        return CslName(family=parts[0])
    # Credentials after "Family, Given" each after a comma, as CINAHL writes nurses' names ("Hall, Joanne M., PhD,
    # RN, FAAN"): no part of the name. Only from the third part on, where no given name or initials stand.
    while len(parts) > 2 and parts[-1].replace(".", "") in CREDENTIALS:
        parts.pop()
    if len(parts) == 1:
        return _person(parts[0].split(), None) or literal
    if len(parts) == 2 and _is_suffix(parts[1]):  # "Martin Luther King, Jr."
        return _person(parts[0].split(), parts[1]) or literal
    if len(parts) == 2 and (moved := _family_among_given(parts[0], parts[1])):
        return CslName(family=moved[0], given=moved[1])
    if len(parts) in (2, 3):  # the particles of the family name after the given names: "Doesschate, T. ten"
        parts[0], parts[1] = _particles_after_given(parts[0], parts[1])
    if len(parts) == 2:  # "Family, Given"
        family, _, last = parts[0].rpartition(" ")
        # "Wright Jr., T C", "Leath III, C A": the suffix before the comma, as Ovid and EndNote exports write it. Not
        # after a name in capitals alone, which is a trial's or a group's ("FUTURE II, I."), not a person's.
        if family and _is_suffix(last) and any(char.islower() for char in family):
            return CslName(family=family, given=parts[1], suffix=last)
        return CslName(family=parts[0], given=parts[1])
    if len(parts) == 3 and _is_suffix(parts[1]):  # BibTeX's "von Last, Jr, First"
        return CslName(family=parts[0], given=parts[2], suffix=parts[1])
    if len(parts) == 3 and _is_suffix(parts[2]):  # "Family, Given, Jr." (RIS)
        return CslName(family=parts[0], given=parts[1], suffix=parts[2])
    return literal


def _family_among_given(family: str, given: str) -> tuple[str, str] | None:
    """(family, given) of "van, Ballegooijen M": an index that split MEDLINE's "van Ballegooijen M" at its first space
    left the particle alone as the family name and put the rest of it before the initials (the cytology set's
    exports, some sixty times: "Van, Doorn L.-J.", "van, Kemenade F"). None for any other name."""
    words = given.split()
    if family.lower() not in LONE_PARTICLES or len(words) < 2 or _is_initials(words[0]):
        return None
    if not words[0][:1].isupper() or not all(_is_initials(word) for word in words[1:]):
        return None
    return f"{family} {words[0]}", " ".join(words[1:])


def _particles_after_given(family: str, given: str) -> tuple[str, str]:
    """(family, given) of a name whose family name's particles follow its initials, as Zotero writes lens.org's
    authors ("Doesschate, T. ten" is T. ten Doesschate): the particles, in lower case as written, moved before the
    family name. After given names written out ("Beethoven, Ludwig van", "Berg, Jan van der") the particle is the
    one CSL drops when the family name stands alone (its "dropping-particle"), and stays with them, as CSL-JSON gives
    it. A capitalised word is a given name ("Smith, Jan Van") and stays one, and so does all after it when it could be
    a particle ("Meer, Van der")."""
    words = given.split()
    start = len(words)
    while start > 1 and words[start - 1] in PARTICLES:
        start -= 1
    if start == len(words) or words[start - 1].lower() in PARTICLES \
            or not all(_is_initials(word) for word in words[:start]):  # given names written out: CSL's own form
        return family, given
    return " ".join([*words[start:], family]), " ".join(words[:start])


def written(name: CslName) -> str:
    """A split name as "Family, Given" ("Family," without given names; a literal as it is), the form `split_name`
    and `person` read back as it was."""
    if not name.family:
        return name.display()
    return f"{name.family}, {name.given}" if name.given else f"{name.family},"


# Embase and some other exports glue authors together: "Akita K.Isoda K.Isobe S." An initial's full stop followed
# at once by a capital and a lower-case letter starts the next name (also one with an apostrophe after its first
# letter: "Crean D.O'Reilly M."); a name's own full stop does not ("St.John, T L").
_GLUED_NAMES = re.compile(r"(?<=[\s.-][A-Z]\.)(?=[A-Z](?:['’][A-Z])?[a-z])")


@dataclass(frozen=True, order=True)
class Person:
    """An author as deduplication compares them."""

    family: str  # folded: lower case, no accents or punctuation; an organisation's whole name
    given: str
    # a group or body ("ASCUS-LSIL Triage Study Group", "-ALTS-Group"), or its initials in capitals ("WHO"), not a person
    organisation: bool = False
    # The family name as written, and the script it is written in (`scripts.main_script`): "Иванов" folds to no
    # Latin letters, and "Παπαδόπουλος" to the names of Greek letters, so another script is compared as written.
    written: str = field(default="", compare=False)
    script: str = field(default="latin", compare=False)
    # a name in capitals that does not say which word is the family name ("CAIZHI SHEN": `order_unknown`), whole in
    # `family`: compared as its first name word or its last one
    order_unknown: bool = field(default=False, compare=False)


@functools.lru_cache(maxsize=65536)  # exports repeat the same authors on many records
def person(name: str) -> Person:
    """An author as the matcher compares them, from any written form ("Bouton, Mark E.", "Bouton ME"); one with no
    family name (`work` leaves it out) for a placeholder that names no one (`names_no_one`): two anonymous
    editorials share no author, and an anonymous one and Smith's differ in none."""
    if names_no_one(name):
        return Person("", "")
    split = split_name(name)
    family = split.family or split.literal or name
    organisation = bool(split.literal) and (_organisation(split.literal.replace(",", " ").split())
                                            or _acronym(split.literal))
    return Person(folded(family), folded(split.given or ""), organisation, family, main_script(family),
                  bool(split.literal) and not organisation and "," not in split.literal
                  and order_unknown(split.literal.split()))


def readings(name: Person) -> list[Person]:
    """The ways a name can be read: one whose order is unknown (`Person.order_unknown`) with its first name word as
    the family name or with its last, the other words given names; any other name as it is."""
    if not name.order_unknown:
        return [name]
    words = name.written.split()
    at = [index for index, word in enumerate(words) if name_word(word)]
    return [Person(folded(words[index]), folded(" ".join(words[:index] + words[index + 1:])), written=words[index],
                   script=name.script) for index in (at[0], at[-1])]


def author_names(authors: list[str]) -> list[str]:
    """Authors as separate names, also where an export glued them together ("Akita K.Isoda K."); an entry
    with nothing visible in it (a zero-width space, a soft hyphen) is no name. Glued names are written "Family
    Initials" without a comma: a name with one ("Vidal, I.Bel") or braced whole (BibTeX's) is one name."""
    return [part for author in authors
            for part in ([author] if "," in author or author.startswith("{") else _GLUED_NAMES.split(author))
            if visible_text(part)]


def same_person(a: Person, b: Person) -> bool:
    """Whether two author entries can be one person as exports write names: the same family name; family and
    given names swapped ("Wu, C. Y." and "Ching-yi, Wu", "Kang, S. H." and "Si Hyun, Kang", "Tong, H" and
    "Hua, T"), also with the initials run together as the family name ("LA, Lucci De Angelo Andrade" and "Lucci De
    Angelo Andrade, L A"); a family name put among the given names ("Santos, A L" and "Luis Ferreira, Santos A") or cut, its
    second part read as a given name ("Bar-Am, A" and "Bar, Am A"); one part of a compound family name ("Fernandes
    Brenna" and "Brenna"), or the name without its particles ("De Wit" and "Wit"); or one typing slip ("Sefcikova"
    and "Sefcikov"; in a short name only with the same initials: "Chen, L" and "Che, L"); a name in Cyrillic or Greek
    letters and its transliteration ("Иванов" and "Ivanov", `scripts.transliterates`). An organisation is never
    one person with a person, whatever their words share ("Smith Study Group" and "Smith, J": `incomparable`);
    two organisations are one by the same rules, their whole names taken as family names ("Group, ASCUS-LSIL
    Traige Study (ALTS)" and "ASCUS-LSIL, Traige Study"), or by the same words in another order ("Group, ALTS
    Study" and "ALTS Study Group"). A name in capitals that does not say which word is its family name ("CAIZHI
    SHEN", `order_unknown`) is one with another when it is read either way (`readings`)."""
    if not a.family or not b.family or a.organisation != b.organisation:
        return False
    if a.order_unknown or b.order_unknown:
        others = readings(b)  # read once, not again for each reading of `a`
        return any(same_person(x, y) for x in readings(a) for y in others)
    if a.family == b.family:
        return True
    if a.script != b.script:  # one name in two scripts: one a standard transliteration of the other, or no telling
        return transliterates(a.written, b.written) or transliterates(b.written, a.written)
    if a.given and b.given and (_names_one(a.family, b.given) and _names_one(b.family, a.given)
                                or _misplaced(a, b) or _misplaced(b, a) or _cut(a, b) or _cut(b, a)
                                or _initials_for_family(a, b) or _initials_for_family(b, a)):
        return True
    words_a, words_b = set(a.family.split()), set(b.family.split())
    if a.organisation and words_a == words_b:
        # a body's name with its words in another order: an index inverts a group's name as it inverts a person's
        # ("Group, ALTS Study", "ALTS Study Group", "-ALTS-Study-group", all three in the cytology set's duplicates)
        return True
    if words_a < words_b or words_b < words_a:
        # a short family name is one with another only by particles ("Wit, L." and "De Wit, Liesbet": an index sorts
        # Dutch names by their last word and leaves "de" out or after the given names)
        return min(len(a.family), len(b.family)) >= 4 or words_a ^ words_b <= PARTICLES
    if Levenshtein.distance(a.family, b.family, score_cutoff=1) > 1:
        return False
    return min(len(a.family), len(b.family)) >= 5 or (
        min(len(a.family), len(b.family)) >= 3 and bool(a.given) and _initials(a.given) == _initials(b.given))


def _initials(names: str) -> str:
    return "".join(word[0] for word in names.split())


def _names_one(family: str, given: str) -> bool:
    """A family name written where the given names go, in full or as initials."""
    return family == given or _initials(family) == given.replace(" ", "")


def _cut(a: Person, b: Person) -> bool:
    """`b` holds `a`'s family name cut at a hyphen or space, its second part read as the first given name ("Bar,
    Am A" for "Bar-Am, A", in the cytology set), and `a`'s initials after it."""
    first, _, rest = b.given.partition(" ")
    return a.family == f"{b.family} {first}" and _initials(a.given) == _initials(rest)


def _initials_for_family(a: Person, b: Person) -> bool:
    """`b` holds `a`'s whole family name as its given names and `a`'s initials, or the first of them, run together as
    its family name ("LA, Lucci De Angelo Andrade" for "Lucci De Angelo Andrade, L A" and "MA, de Queiroz Mauricio
    Filho" for "de Queiroz Mauricio Filho, M A F", in the cytology set): an index swapped the two parts."""
    return a.family == b.given and len(b.family) <= 3 and a.given.replace(" ", "").startswith(b.family)


def _misplaced(a: Person, b: Person) -> bool:
    """`a`'s family name among `b`'s given names, and `b`'s family name starting with one of `a`'s initials."""
    return a.family in b.given.split() and b.family[0] in _initials(a.given)


def in_two_scripts(a: Person, b: Person) -> bool:
    """Whether two names are written in two scripts (`scripts.main_script`); a name without letters is in none."""
    return bool(a.script and b.script) and a.script != b.script


def incomparable(a: Person, b: Person) -> bool:
    """Whether two names cannot be compared, to deduplication and verification alike: neither an agreement nor a
    discrepancy, unless `same_person` finds them one.

    - Written in two scripts, and no standard transliteration of one spells the other: Chinese characters and their
      pinyin ("张伟" and "Zhang, W", as CNKI and Crossref write one author) name one person or two for all sitegen
      can tell. A name without letters is in no script, so compared as it is.
    - An organisation and any other name: a trial's group is listed first by one index and its first named member
      by another ("ASCUS-LSIL Triage Study Group" and "Solomon, D": MEDLINE keeps a group author, CN, where the
      article lists it, other indexes move it last or leave it out), and a group goes by many names ("ALTS Group")."""
    return (a.organisation or b.organisation or in_two_scripts(a, b)) and not same_person(a, b)
