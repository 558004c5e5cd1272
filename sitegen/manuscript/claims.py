"""The deterministic claim check of a Markdown draft: sentences, their citations, and claims without any.

Pure: text in, findings out. The rules (docs/manuscript-loop.md lists them for users):

- Prose only. Front matter, fenced and indented code, block quotes, tables, HTML blocks and comments,
  and headings (ATX and setext) are not read; neither is the reference list (a section headed
  References, Bibliography, 参考文献, Literaturverzeichnis, … in several languages, or a line (bold or
  plain, as a draft exported from Word heads it) naming it, up to the next heading of the same or a higher level). Each list item is a paragraph.
- A LaTeX draft (`latex`) is read through `latex_prose`: the same text with what is not prose blanked, its
  sections as headings and its items as list items, so every line and offset stays the draft's.
- A citation is pandoc's `[@key]`, `[see @a, p. 3; @b]`, `[-@key]` or in-text `@key` (an `@` after a
  letter or digit is an e-mail address, not a citation), or LaTeX's `\\cite{a,b}` family (`\\citep`,
  `\\textcite`, `\\parencite`, …). `remove_key` and `rename_key` edit citations by the same grammar. A numbered,
  superscript, footnote or author-year citation (`OTHER_CITATION`) names no key: its sentence cites, but no entry
  (a footnote whose text cites by key only is read as a paragraph, and a reference to it names its keys).
- Sentences end at `.`, `!` or `?` followed by a space and a capital letter, a digit, a quote, `[` or
  `@`, except after common abbreviations (e.g., i.e., et al., Fig., vs., …) and single initials, or at
  the full-width `。！？`; never inside a matched bracket pair (one never closed is ignored).
- A sentence is claim-like when it states a finding: a percentage, a decimal figure, a p-value, a
  confidence interval, an n-fold change; a comparison ("higher than", "outperforms"); a report of
  research ("studies show", "has been shown", "evidence suggests", "the literature"); or an effect or
  association ("is associated with", "increases", "reduces", "leads to", "predicts", "risk of"); the
  same kinds in Chinese. Questions and sentences about the authors' own work ("we", "our", "this
  study", 我们, 本研究) are not claims that need a citation.
- An entry is uncited when the draft cites it nowhere (tables, quotes and footnotes included) and cites nothing
  in a style naming no key.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

# Reference-list headings in the languages drafts are written in (English, Chinese, Japanese, Korean, German,
# French, Spanish, Portuguese, Italian, Dutch, Russian), optionally bold or numbered.
REFERENCE_HEADINGS = re.compile(
    r"(?:\d+(?:\.\d+)*\.?\s+)?(references?|bibliography|works cited|literature cited|reference list|sources|"
    r"参考文献|参考资料|引用文献|文献|참고\s?문헌|literatur(?:verzeichnis)?|quellen(?:verzeichnis)?|références|"
    r"bibliographie|referencias|bibliografía|referências|bibliografia|riferimenti bibliografici|literatuur|"
    r"referenties|литература|список литературы|источники)\s*[:：]?", re.IGNORECASE)
HEADING = re.compile(r"(#{1,6})\s+(.*)")  # an ATX heading: its level, and its text with any closing #s
# A line that is only bold text, and a colon. The colon is matched with the spaces after it ((?:[:：]\s*)?): optional
# between two runs of spaces, a run after the bold text was split every way (300 KB: for ever).
BOLD_HEADING = re.compile(r"\s{0,3}(?:\*\*|__)(.+?)(?:\*\*|__)\s*(?:[:：]\s*)?$")
SETEXT_UNDERLINE = re.compile(r"\s{0,3}(=+|-+)\s*$")
FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
LIST_MARKER = re.compile(r"\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+")
# A footnote's definition ("[^1]: As @doe2020 showed, ..."): its label is no citation, and its text is a paragraph.
FOOTNOTE_DEFINITION = re.compile(r"\s{0,3}\[\^([^\]\s]+)\]:\s*")
FOOTNOTE_REFERENCE = re.compile(r"\[\^([^\]\s]+)\]")
BACKTICKS_OR_LINE_END = re.compile(r"`+|\n")  # what opens or closes inline code, and where it must close
# pandoc's citation key: starts with a letter, digit or _, and may hold :.#$%&-+?<>~/ between them.
KEY = r"([A-Za-z0-9_](?:\w|[:.#$%&\-+?<>~/](?=\w))*|\{[^{}]+\})"
# Not an @ in a web address (medium.com/@name, ?user=@name) or escaped (\@, a literal @ to pandoc).
AT_KEY = re.compile(r"(?<![\w@/\\=])-?@" + KEY)
# A LaTeX citation: a command whose name holds "cite" (\cite, \citep, \parencite, \nocite, ...), up to two notes in
# brackets, and its keys in braces. A note holds no bracket and a key list no brace (BibTeX keys hold none), so one
# never closed is read up to the next command's, not to the end of the text: from every unclosed \cite{ or \cite[
# of a pasted line the rest of it was read (300 KB: minutes). The name is found by a lookahead, once: as
# [A-Za-z]*cite[A-Za-z]*, a long word holding "cite" again and again was split at each of them.
# As TeX reads arguments, spaces (and one line break, a space too) may come before a note or the keys, and a note may
# hold a bracket inside braces (`[{see [3]}]`); natbib's capitalised commands (\Citet, \Citep) cite as well.
_SPACE = r"[ \t]*(?:\r?\n[ \t]*)?"
_NOTES = r"(?:" + _SPACE + r"\[(?:[^\[\]{}]|\{[^{}]*\})*\]){0,2}" + _SPACE
LATEX_CITE = re.compile(r"\\(?=[A-Za-z]*?[cC]ite)[A-Za-z]+\*?" + _NOTES + r"\{([^{}]*)\}")
# biblatex's multicite commands (\cites, \autocites, \parencites...) cite a group of keys after each note:
# LATEX_CITE reads the first group, this the others.
LATEX_MORE_CITES = re.compile(r"\\[A-Za-z]*[cC]ites\*?(?:\([^()]*\)){0,2}" + _NOTES + r"\{[^{}]*\}"
                              r"((?:\s*" + _NOTES + r"\{[^{}]*\})+)")
EVERY_ENTRY = "*"  # \nocite{*}: every entry of the .bib is in the bibliography
ABBREVIATIONS = {"e.g", "i.e", "al", "fig", "figs", "vs", "cf", "etc", "approx", "eq", "no", "ref", "refs", "dr",
                 "prof", "st", "resp", "ca", "vol", "pp", "p", "ed", "eds", "viz", "mr", "ms", "mrs", "jr", "sr"}
# Citations the loop cannot link to a .bib key: numbered ("[1]", "[1-3, 7]", "[see 3, p. 4]"), superscript numbers ("^2,3^",
# "<sup>2</sup>", "crisis.¹"), footnote references ("[^1]", where a notes style cites), and author-year ("(Smith et
# al., 2020; Jones 2019a, p. 12)", "Smith and Jones (2019)"). A sentence holding one cites something, so it is no
# unsupported claim; and since which entry such a citation names cannot be told, no entry is called uncited.
_NUMBERS = r"[0-9]{1,4}(?:\s*[-–—,;]\s*[0-9]{1,4})*"
NUMBERED_CITATION = (r"\[\s*(?:(?:see|cf\.)\s+)?" + _NUMBERS + r"(?:,?\s*pp?\.\s*[0-9]+(?:\s*[-–][0-9]+)?)?\s*\]")
SUPERSCRIPT_CITATION = (r"\^" + _NUMBERS.replace(r"\s*", "") + r"\^|<sup>\s*" + _NUMBERS + r"\s*</sup>"
                        r"|(?<=[.,;:!?)\]])[¹²³⁰⁴⁵⁶⁷⁸⁹]+(?:[⁻,–-][¹²³⁰⁴⁵⁶⁷⁸⁹]+)*")
_NOT_A_NAME = (r"(?!(?:In|On|At|By|Since|From|Until|Before|After|During|Between|Circa|About|Around|Early|Late|Mid"
               r"|Spring|Summer|Autumn|Fall|Winter|January|February|March|April|May|June|July|August|September"
               r"|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|The|And|Or|See|Also"
               r"|Table|Figure|Fig|Version|Wave|Year|Phase|Up|To)\b)")
# A name with the particles before it ("van der Berg", "de la Cruz"): at most four, twice what real names hold. As
# many as came, a run of them no name followed was read to its end again from each of them (a line of 10 KB of
# "de de de" took a second to check, 300 KB a quarter of an hour); a name after a longer run is read from its last four.
# The name itself is read to at most a hundred characters, and never given back ({1,100}+: a space or a comma follows
# it, never a letter, so a shorter name never matched): from every capital of a hyphenated word ("A-B-C-…") the rest
# of the word was read and given back a character at a time (30 KB took 12 s to check, 300 KB twenty minutes).
_NAME = (r"(?:(?:van|von|de|der|den|da|di|du|le|la)\s+){0,4}" + _NOT_A_NAME + r"[A-ZÀ-ÖØ-Þ][\w'’-]{1,100}+")
_AUTHORS = _NAME + r"(?:\s+et\s+al\.?|\s+(?:and|&)\s+" + _NAME + r")?"
_YEAR = r"(?:1[6-9]|20)[0-9]{2}[a-z]?\b"
AUTHOR_YEAR_CITATION = (r"\((?=[^()]*?\b" + _AUTHORS + r",?\s+" + _YEAR + r")[^()]*\)"
                        r"|\b" + _AUTHORS + r"\s+\(" + _YEAR + r"[^()]*\)")
OTHER_CITATION = re.compile("|".join((NUMBERED_CITATION, SUPERSCRIPT_CITATION, r"\[\^[^\]\s]+\]",
                                      AUTHOR_YEAR_CITATION)))
# A sentence ends at . ! ? before a space and what starts a sentence, or at the full-width 。！？ (and a
# closing quote or bracket) whatever follows: Chinese and Japanese put no space between sentences. A numbered
# or superscript citation set after the full stop ("shown.[2,3] Later", "shown.^2^ Later") is the sentence's.
SENTENCE_END = re.compile(r"[.!?][\"'”’)]*(?:" + NUMBERED_CITATION + "|" + SUPERSCRIPT_CITATION + r")?"
                          r"\s+(?=[A-Z0-9\"'“‘\[@(\\])|[。！？][”’」』）)]*\s*")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

# Claim rules: (name shown in the evidence, pattern). General statements of findings, never words of one text.
CLAIM_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in (
    ("a percentage", r"\d+(?:[.,]\d+)?\s?(?:%|per\s?cent\b|percent\b)"),
    ("a decimal figure", r"(?<![\w.])\d+\.\d+(?![\w.])"),
    ("a statistical test", r"\bp\s?[<>=≤≥]\s?0?\.\d|\b(?:95|99)\s?%\s?ci\b|\bconfidence interval|"
                           r"\b(?:odds|hazard|risk) ratio|\beffect size"),
    ("an n-fold change", r"\b\d+(?:\.\d+)?[- ]?(?:fold|times)\b"),
    ("a comparison", r"\b(?:more|less|higher|lower|greater|fewer|better|worse|larger|smaller|faster|slower|"
                     r"stronger|weaker)\s+than\b|\boutperform|\b(?:superior|inferior)\s+to\b"),
    ("a report of research", r"\b(?:studies|research|trials|reviews|experiments|analyses|authors)\s+(?:have\s+)?"
                             r"(?:show|shown|showed|find|found|suggest|suggested|demonstrate|demonstrated|"
                             r"indicate|indicated|report|reported|confirm|confirmed)\b|"
                             r"\b(?:has|have|had)\s+been\s+(?:shown|found|demonstrated|reported|established|"
                             r"observed|proposed)\b|\bit is (?:well[- ])?(?:known|established)\b|"
                             r"\bevidence\b|\b(?:previous|prior|earlier|recent) (?:work|studies|research)\b|"
                             r"\bthe literature\b"),
    ("an effect or association", r"\b(?:is|are|was|were)\s+(?:strongly\s+|positively\s+|negatively\s+)?"
                                 r"(?:associated|correlated|linked)\s+with\b|\bassociated with\b|"
                                 r"\bcorrelat(?:es|ed)\s+with\b|\blinked to\b|\bleads? to\b|\bresults? in\b|"
                                 r"\b(?:increase|reduce|decrease|improve|impair|predict|prevent|cause|enhance|"
                                 r"lower|raise)(?:s|d|ed)?\b|\bcontributes? to\b|\brisk of\b"),
))
OWN_WORK = re.compile(r"\b(?:we|our|us)\b|\bthis (?:study|paper|review|article|manuscript|chapter|work)\b|"
                      r"我们|本研究|本文|本综述", re.IGNORECASE)
# The same kinds of statement in Chinese (no word boundaries there): reports of research, effects, associations.
CJK_CLAIM_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a report of research", re.compile(r"(?:研究|文献|试验|调查|证据|报告)(?:表明|显示|发现|证实|提示|指出)|已有研究|有证据")),
    ("an effect or association", re.compile(r"与.{1,30}?(?:相关|有关|关联)|导致|提高|降低|增加|减少|改善|预测|风险")),
    ("a comparison", re.compile(r"(?:高于|低于|优于|劣于|多于|少于|快于|慢于)")),
)
# What `remove_key` takes out, with the spaces before it. Those spaces are matched from the start of their run only
# ((?<!\s)), as records.names.AUTHORS_AND, and the spaces in parentheses as one run: a run of spaces no citation
# followed was matched from each of its spaces (a sentence holding 4,000 took 0.6 s to edit, 300 KB for ever).
BRACKET_CITATION = re.compile(r"(?<!\s)(\s*)\[([^\[\]]*)\]")
SPACED_AT_KEY = re.compile(r"(?<!\s)\s*" + AT_KEY.pattern)
# A LaTeX citation goes with the spaces and the ties (~, a space that never breaks) before it: "summaries~\cite{a}."
# left "summaries~." (a stray tie before the full stop).
SPACED_LATEX_CITE = re.compile(r"(?<![\s~])([\s~]*)" + LATEX_CITE.pattern)
EMPTY_PARENTHESES = re.compile(r"(?<!\s)\s*[(（]\s*(?:[,;，；]\s*)?[)）]")
BRACKETS = {")": "(", "]": "[", "）": "（"}
# A table's delimiter row (|---|:--:|). Each pipe is matched with the spaces after it ((?:\|\s*)?): with the pipe
# optional between two runs of spaces, a line of spaces after a paragraph was split every way (300 KB: for ever).
TABLE_DELIMITER = re.compile(r"\s*(?:\|\s*)?:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+(?:\|\s*)?$")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Sentence(Strict):
    """One sentence of the draft's prose, where it is, and the keys it cites."""

    section: str
    paragraph: int  # 1-based, within its section
    number: int  # 1-based, within its paragraph
    line: int  # the draft's line the sentence starts on
    text: str
    keys: tuple[str, ...]
    span: tuple[int, int]  # where it is in the draft's text: [start, end) character offsets
    # citations in a style with no key ("[2]", "(Smith et al., 2020)", "[^1]"): it cites, but not an entry by name
    other_citations: tuple[str, ...] = ()
    note: str | None = None  # the label of the footnote whose text the sentence is in ("[^1]: ...")
    # the file a LaTeX draft includes (`\\input{file}`) that the sentence is in, from the draft's folder; `line` is
    # then that file's (None: the draft's own)
    file: str | None = None

    @property
    def location(self) -> str:
        return f"{self.section} / paragraph {self.paragraph} / sentence {self.number}"

    @property
    def where(self) -> str:
        """Its line, and its file when it is one the draft includes: "line 7", "chapters/intro.tex, line 3"."""
        return f"{self.file}, line {self.line}" if self.file else f"line {self.line}"


class ClaimFinding(Strict):
    """One finding of the claim check: a sentence citing a key with no entry, a claim-like sentence
    without a citation, or an entry nothing cites (then `sentence` is None)."""

    kind: str  # "citation with no entry", "unsupported claim", "uncited entry"
    key: str | None = None
    sentence: Sentence | None = None
    rules: tuple[str, ...] = ()  # the claim rules an unsupported claim matched


class ClaimReview(Strict):
    """claim-review.json: every sentence read, and what the check found."""

    sentences: int
    cited_keys: tuple[str, ...]
    citing: tuple[Sentence, ...]  # the sentences that cite something, with the keys each cites
    findings: tuple[ClaimFinding, ...]
    # sentences citing in a style with no key: while there are any, no entry is called uncited
    other_citations: int = 0


@dataclass
class _Block:
    section: str
    lines: list[tuple[int, int, str]]  # line number, offset of the text in the draft, the text
    note: str | None = None  # the footnote's label, when the block is a footnote's text


def sentences(text: str, latex: bool = False) -> list[Sentence]:
    """The prose sentences of a Markdown draft (a LaTeX one with `latex`: see `latex_prose`), in order, with their
    locations."""
    found: list[Sentence] = []
    paragraphs: dict[str, int] = {}
    for block in _paragraphs(latex_prose(text) if latex else text, indented_code=not latex):
        paragraphs[block.section] = paragraphs.get(block.section, 0) + 1
        for number, (line, span, sentence) in enumerate(_split(block.lines), start=1):
            found.append(Sentence(section=block.section, paragraph=paragraphs[block.section], number=number,
                                  line=line, text=sentence, keys=cited_keys(sentence), span=span,
                                  other_citations=other_citations(sentence), note=block.note))
    return found


def cited_keys(sentence: str) -> tuple[str, ...]:
    """The citation keys a sentence cites, in order, each once."""
    text = _without_inline_code(sentence)
    keys = [match.group(1).strip("{}") for match in AT_KEY.finditer(text)]
    keys += [key.strip() for match in LATEX_CITE.finditer(text) for key in match.group(1).split(",")]
    keys += [key.strip() for match in LATEX_MORE_CITES.finditer(text)
             for group in re.findall(r"\{([^}]*)\}", match.group(1)) for key in group.split(",")]
    return tuple(dict.fromkeys(key for key in keys if key))


def _without_inline_code(text: str) -> str:
    """`text` with each inline code span as a space: a run of backticks up to the next run of the same length on its
    line (CommonMark's code span); a run none closes is text. In linear time, each run is paired with the next of
    its length, found in one pass from the end: the regex (`+)(.+?)\\1 tried each backtick with each shorter
    length against every later place, so a line of 4,000 backticks took 5 s, and a pasted 300 KB one for ever."""
    if "`" not in text:  # most sentences: a scan in C
        return text
    runs = list(BACKTICKS_OR_LINE_END.finditer(text))
    closing: dict[int, int] = {}  # a run's index in `runs` -> the index of the run that closes it
    next_of_length: dict[int, int] = {}  # a run length -> the index of the next run of that length on the line
    for index in range(len(runs) - 1, -1, -1):
        run = runs[index].group()
        if run == "\n":
            next_of_length.clear()
            continue
        if len(run) in next_of_length:
            closing[index] = next_of_length[len(run)]
        next_of_length[len(run)] = index
    pieces, kept_from, index = [], 0, 0
    while index < len(runs):
        if index in closing:
            pieces += [text[kept_from:runs[index].start()], " "]
            kept_from = runs[closing[index]].end()
            index = closing[index] + 1
        else:
            index += 1
    return "".join(pieces) + text[kept_from:]


def other_citations(sentence: str) -> tuple[str, ...]:
    """The citations of a sentence in a style that names no key (`OTHER_CITATION`), in order."""
    return tuple(match.group(0) for match in OTHER_CITATION.finditer(_without_inline_code(sentence)))


def remove_key(text: str, key: str) -> str:
    """`text` without its citations of `key`, in every form `cited_keys` reads: an item of a bracketed
    citation (the bracket goes when nothing is left in it), an in-text `@key`, a key of a `\\cite{…}`
    (the command goes when it cites nothing else), and parentheses left empty."""

    def bracket(match: re.Match[str]) -> str:
        items = match.group(2).split(";")
        kept = [item for item in items if not any(_is(at, key) for at in AT_KEY.finditer(item))]
        if len(kept) == len(items):
            return match.group(0)
        if not any(AT_KEY.search(item) for item in kept):
            return ""
        return f"{match.group(1)}[{';'.join(kept).strip()}]"

    def latex(match: re.Match[str]) -> str:
        keys = [part for part in match.group(2).split(",") if part.strip() != key]
        if not any(part.strip() for part in keys):
            return ""
        return _with_keys(match, 2, ",".join(keys))

    edited = BRACKET_CITATION.sub(bracket, text)
    edited = SPACED_LATEX_CITE.sub(latex, edited)
    edited = SPACED_AT_KEY.sub(lambda m: "" if _is(m, key) else m.group(0), edited)
    if edited != text and len(EMPTY_PARENTHESES.findall(edited)) > len(EMPTY_PARENTHESES.findall(text)):
        edited = EMPTY_PARENTHESES.sub("", edited)
    return edited


def rename_key(text: str, key: str, new_key: str) -> str:
    """`text` citing `new_key` wherever it cited `key`, in every form `cited_keys` reads."""
    text = AT_KEY.sub(lambda m: _with_keys(m, 1, new_key) if _is(m, key) else m.group(0), text)
    return LATEX_CITE.sub(lambda m: _with_keys(m, 1, ",".join(
        part.replace(key, new_key) if part.strip() == key else part for part in m.group(1).split(","))), text)


def _is(match: re.Match[str], key: str) -> bool:
    return match.group(1).strip("{}") == key


def _with_keys(match: re.Match[str], group: int, keys: str) -> str:
    """The citation `match` with its group of keys replaced by `keys`."""
    whole, begin = match.group(0), match.start(0)
    return whole[:match.start(group) - begin] + keys + whole[match.end(group) - begin:]


def claim_rules(sentence: Sentence) -> tuple[str, ...]:
    """The claim rules a sentence matches (none for questions and the authors' own statements)."""
    text = _without_inline_code(sentence.text)
    words = len(text.split()) + len(CJK.findall(text)) // 2  # a Chinese word is about two characters
    if text.rstrip().endswith(("?", "？")) or OWN_WORK.search(text) or words < 4:
        return ()
    rules = [name for name, pattern in CLAIM_RULES if pattern.search(text)]
    if CJK.search(text):
        rules += [name for name, pattern in CJK_CLAIM_RULES if pattern.search(text) and name not in rules]
    return tuple(rules)


def check(text: str, bib_keys: list[str], in_use: Collection[str] = (), latex: bool = False) -> ClaimReview:
    """The claim check of a draft (a LaTeX one with `latex`) against the keys of its BibTeX file; `in_use`: entries
    the draft cites through another entry (a crossref's), never uncited."""
    read = sentences(text, latex)
    known = {*bib_keys, EVERY_ENTRY}
    findings: list[ClaimFinding] = []
    for sentence in read:
        findings += [ClaimFinding(kind="citation with no entry", key=key, sentence=sentence)
                     for key in sentence.keys if key not in known]
        if not sentence.keys and not sentence.other_citations and (rules := claim_rules(sentence)):
            findings.append(ClaimFinding(kind="unsupported claim", sentence=sentence, rules=rules))
    cited = tuple(dict.fromkeys(key for sentence in read for key in sentence.keys))
    # An entry cited anywhere (a table, a block quote, a footnote the prose rules skip) is in use; and any
    # entry may be what a numbered or author-year citation names.
    anywhere = set(cited) | set(cited_keys(latex_citing(text) if latex else text)) | set(in_use)
    # A key cited in another case ("@Smith2020", entry smith2020) has no entry to a tool matching case (biber, pandoc),
    # but names that entry (BibTeX matches it, with a warning): never an entry to remove as uncited.
    by_case = {key.casefold(): key for key in bib_keys}
    anywhere |= {by_case[key.casefold()] for key in list(anywhere) if key.casefold() in by_case}
    notes = _notes_citing_keys(read)
    otherwise = sum(1 for sentence in read if any(not _cites_through(citation, notes)
                                                  for citation in sentence.other_citations))
    if EVERY_ENTRY not in anywhere and not otherwise:
        findings += [ClaimFinding(kind="uncited entry", key=key) for key in bib_keys if key not in anywhere]
    return ClaimReview(sentences=len(read), cited_keys=cited,
                       citing=tuple(s for s in read if s.keys or s.other_citations), findings=tuple(findings),
                       other_citations=otherwise)


def _notes_citing_keys(read: list[Sentence]) -> set[str]:
    """The labels of the draft's footnotes whose text cites by key only ("[^1]: As @doe2020 showed."): a reference to
    one cites what its text cites, which the check reads there, so it is no citation in a style naming no key (a note
    citing in words, "Smith, Memory, 2020, 33.", may name any entry, and still is one)."""
    keyed = {sentence.note for sentence in read if sentence.note is not None and sentence.keys}
    otherwise = {sentence.note for sentence in read if sentence.note is not None and sentence.other_citations}
    return keyed - otherwise


def _cites_through(citation: str, notes: set[str]) -> bool:
    return (reference := FOOTNOTE_REFERENCE.fullmatch(citation)) is not None and reference.group(1) in notes


def _paragraphs(text: str, indented_code: bool = True) -> list[_Block]:
    blocks: list[_Block] = []
    section, skipping_level = "(untitled)", 0
    current: list[tuple[int, int, str]] = []
    fence: str | None = None
    in_comment = in_table = False
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    lines = [line.rstrip("\r\n") for line in lines]
    start = _after_front_matter(lines)

    note: str | None = None

    def flush() -> None:
        nonlocal note
        if current and not skipping_level:
            blocks.append(_Block(section, list(current), note))
        current.clear()
        note = None

    def heading(level: int, title: str) -> None:
        nonlocal section, skipping_level
        flush()
        if skipping_level and level > skipping_level:
            return  # a subsection of the reference list
        skipping_level = level if REFERENCE_HEADINGS.fullmatch(title) else 0
        section = title

    previous_blank = True
    for number, line in enumerate(lines[start:], start=start + 1):
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        if in_comment:
            in_comment = "-->" not in line
            continue
        if in_table:
            in_table = bool(line.strip())
            previous_blank = not in_table
            continue
        if opening := FENCE.match(line):
            flush()
            fence = opening.group(1)[0] * 3
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            flush()
            in_comment = True
            continue
        if atx := HEADING.match(line):
            # The closing #s are stripped, not matched: as `(.*?)\s*#*\s*$` after the text, a run of spaces in a
            # heading was split every way from each of its characters (a thousand spaces took 2 s, 4,000 for ever).
            heading(len(atx.group(1)), atx.group(2).rstrip().rstrip("#").rstrip())
            previous_blank = True
            continue
        if current and TABLE_DELIMITER.match(line):
            current.pop()  # the table's header row, read as prose until its delimiter row came
            flush()
            in_table = True
            continue
        if current and not previous_blank and SETEXT_UNDERLINE.match(line):
            title = " ".join(part for _, _, part in current)
            current.clear()
            heading(1 if "=" in line else 2, title)
            previous_blank = True
            continue
        if (previous_blank or _ends_sentence(current)) and (title := _reference_list_line(line)):
            heading(7, title)  # a line naming the reference list, bold or plain: below every real heading
            continue
        blank = not line.strip()
        not_prose = line.lstrip().startswith((">", "|", "<")) or (
            indented_code and previous_blank and line.startswith(("    ", "\t")))
        if blank or not_prose:
            flush()
            previous_blank = blank or (previous_blank and not_prose)
            continue
        previous_blank = False
        marker = LIST_MARKER.match(line)
        if marker:
            flush()  # each list item is its own paragraph, whether or not it ends with a full stop
        elif marker := FOOTNOTE_DEFINITION.match(line):
            flush()  # a footnote's text is a paragraph, without its label
            note = marker.group(1)
        rest = line[marker.end() if marker else 0:]
        column = len(line) - len(rest) + len(rest) - len(rest.lstrip())
        current.append((number, offsets[number - 1] + column, rest.strip()))
    flush()
    return blocks


LATEX_SUFFIXES = (".tex", ".ltx", ".latex")
# What is no prose in a LaTeX draft: a comment (an unescaped % to the end of its line), a label, and from an opening of
# display math or of an environment of math, floats, code or the bibliography to its closing (`_blank_spans`).
# An even run of backslashes before it (none, or `\\`, a line break) leaves % a comment; an odd one escapes it (`\%`).
LATEX_COMMENT = re.compile(r"(?<!\\)(?:\\\\)*%[^\n]*")
LATEX_LABEL = re.compile(r"\\label\{[^{}\n]*\}")
LATEX_NOT_PROSE = re.compile(
    r"\\begin\{((?:equation|align|gather|multline|eqnarray|displaymath|math|figure|table|tabular[xy]?|longtable|"
    r"verbatim|lstlisting|minted|tikzpicture|algorithm|algorithmic|thebibliography|filecontents)\*?)\}|\\\[|\$\$")
# Text LaTeX never reads as commands: the comment package's environment, what `\iffalse` skips to its `\fi` (an \if
# nested inside ends it early: more is read, never less), and code shown verbatim (a `\cite` or `\input` there is text).
LATEX_COMMENTED_OUT = re.compile(r"\\begin\{(comment|verbatim\*?|Verbatim|lstlisting|minted)\}|\\iffalse(?![A-Za-z])")
LATEX_VERB = re.compile(r"\\verb\*?([^A-Za-z\s*])[^\n]*?\1")
LATEX_SECTION = re.compile(r"^[ \t]*\\(part|chapter|section|subsection|subsubsection|paragraph)\*?"
                           r"(?:\[[^\]\n]*\])?\{([^{}\n]*)\}", re.MULTILINE)
LATEX_LEVELS = {"part": 1, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4, "paragraph": 5}
LATEX_ITEM = re.compile(r"^([ \t]*)\\item\b(?:\[[^\]\n]*\])?", re.MULTILINE)
LATEX_ENVIRONMENT_LINE = re.compile(r"^[ \t]*\\(?:begin|end)\{[^{}\n]*\}[ \t]*$", re.MULTILINE)


def _blank(match: re.Match[str]) -> str:
    """What a match is replaced with to read as nothing: spaces, its line breaks kept (so every line and offset of
    the draft stays where it is, and a sentence's span and line are the draft's)."""
    return re.sub(r"[^\n]", " ", match.group(0))


def _blank_spans(text: str, openings: re.Pattern[str] = LATEX_NOT_PROSE) -> str:
    """`text` with each span `openings` opens blanked to its closing. In linear time: a closing not found
    after one opening is not looked for again (from each of a pasted run of unclosed openings the rest of the text
    was searched)."""
    pieces, kept_from, missing = [], 0, set()
    for opening in openings.finditer(text):
        if opening.start() < kept_from:
            continue  # inside a span blanked already
        closing = f"\\end{{{opening.group(1)}}}" if opening.group(1) else "\\]" if opening.group() == "\\[" else \
            "\\fi" if opening.group().startswith("\\if") else "$$"
        # \fi as a command of its own (not the start of \figure); \end{…} may have a word right after it
        found = None if closing in missing else \
            re.compile(re.escape(closing) + (r"(?![A-Za-z])" if closing == "\\fi" else "")).search(text, opening.end())
        if found is None:
            missing.add(closing)
            continue
        end = found.end()
        pieces += [text[kept_from:opening.start()], re.sub(r"[^\n]", " ", text[opening.start():end])]
        kept_from = end
    return "".join(pieces) + text[kept_from:]


def latex_uncommented(text: str) -> str:
    """A LaTeX text with what LaTeX never reads as commands blanked: its comments, a comment environment,
    `\\iffalse … \\fi`, verbatim code (`\\verb|…|` too)."""
    return _blank_spans(LATEX_COMMENT.sub(_blank, LATEX_VERB.sub(_blank, text)), LATEX_COMMENTED_OUT)


def latex_citing(text: str) -> str:
    """A LaTeX draft as it cites: its comments (a comment environment and `\\iffalse … \\fi` too), the preamble and
    anything after \\end{document} blanked."""
    text = latex_uncommented(text)
    begin, end = text.find("\\begin{document}"), text.find("\\end{document}")
    if begin >= 0:
        text = re.sub(r"[^\n]", " ", text[:begin + len("\\begin{document}")]) + text[begin + len("\\begin{document}"):]
    if end >= 0:
        text = text[:end] + re.sub(r"[^\n]", " ", text[end:])
    return text


def latex_prose(text: str) -> str:
    """A LaTeX draft as Markdown the prose rules read, of the same length and lines: what cites no prose blanked
    (`latex_citing`, `LATEX_NOT_PROSE`, lines only opening or closing an environment), each \\section-like command
    a heading of its level (`\\section*{References}` names the reference list), each \\item a list item."""

    def heading(match: re.Match[str]) -> str:
        title = "#" * LATEX_LEVELS[match.group(1)] + " " + match.group(2)
        return title + " " * (len(match.group(0)) - len(title))

    text = LATEX_LABEL.sub(_blank, _blank_spans(latex_citing(text)))
    text = LATEX_ENVIRONMENT_LINE.sub(_blank, text)
    text = LATEX_SECTION.sub(heading, text)
    return LATEX_ITEM.sub(lambda match: match.group(1) + "-" + " " * (len(match.group(0)) - len(match.group(1)) - 1),
                          text)


def _reference_list_line(line: str) -> str | None:
    """The name of the reference list, when a line is only that: bold (`**References**`), or plain text, as a draft
    exported from Word or as plain text heads it ("References", "参考文献："), which has no heading markup."""
    bold = BOLD_HEADING.match(line)
    title = bold.group(1) if bold else line.strip()
    return title if REFERENCE_HEADINGS.fullmatch(title) else None


def _ends_sentence(current: list[tuple[int, int, str]]) -> bool:
    """Whether the paragraph read so far ends a sentence on its last line: in a draft exported with one line per
    paragraph and no blank line between them, the line after it starts a paragraph (a reference list's name too)."""
    return bool(current) and current[-1][2].endswith((".", "!", "?", "。", "！", "？"))


def _after_front_matter(lines: list[str]) -> int:
    """The index of the first line after YAML front matter (0 when there is none; a byte-order mark first
    is no text)."""
    if lines and lines[0].lstrip("\ufeff").strip() == "---":
        for index, line in enumerate(lines[1:], start=1):
            if line.strip() in ("---", "..."):
                return index + 1
    return 0


def _split(lines: list[tuple[int, int, str]]) -> list[tuple[int, tuple[int, int], str]]:
    """A paragraph's sentences, each with the line it starts on and its span in the draft. Linear in the
    paragraph's length."""
    parts, starts = [], []
    length = 0
    for number, offset, line in lines:
        starts.append((length, number, offset))
        parts.append(line + " ")
        length += len(line) + 1
    text = "".join(parts)
    joined = [start[0] for start in starts]

    def segment(position: int) -> tuple[int, int, int]:
        return starts[bisect.bisect_right(joined, position) - 1]

    inside = _bracketed(text)
    opens = [begin for begin, _ in inside]

    def bracketed(position: int) -> bool:
        index = bisect.bisect_right(opens, position) - 1
        return index >= 0 and position < inside[index][1]

    cuts = [0]
    for match in SENTENCE_END.finditer(text):
        if not bracketed(match.start()) and not _abbreviation(text, match.start()):
            cuts.append(match.end())
    cuts.append(len(text))
    result = []
    for begin, end in itertools.pairwise(cuts):
        sentence = text[begin:end].strip()
        if sentence:
            first = begin + len(text[begin:end]) - len(text[begin:end].lstrip())
            last = first + len(sentence) - 1
            (joined_at, line, offset), (last_joined, _, last_offset) = segment(first), segment(last)
            span = (offset + first - joined_at, last_offset + last - last_joined + 1)
            result.append((line, span, sentence))
    return result


def _bracketed(text: str) -> list[tuple[int, int]]:
    """The outermost matched bracket pairs of a paragraph, [open, close) in order. A bracket never
    closed matches nothing, so it cannot keep the rest of the paragraph from splitting into sentences."""
    stack: list[tuple[str, int]] = []
    pairs: list[tuple[int, int]] = []
    for index, char in enumerate(text):
        if char in "([（":
            stack.append((char, index))
        elif char in BRACKETS:
            while stack and stack[-1][0] != BRACKETS[char]:
                stack.pop()  # an opener never closed inside this pair
            if stack:
                opened = stack.pop()[1]
                while pairs and pairs[-1][0] > opened:
                    pairs.pop()  # nested in this pair
                pairs.append((opened, index + 1))
    return pairs


def _abbreviation(text: str, end: int) -> bool:
    """Whether the full stop at `end` closes an abbreviation or an initial, not a sentence."""
    if text[end] != ".":
        return False
    word = re.search(r"([\w.]+)$", text[max(0, end - 24):end])  # abbreviations are short: stay linear
    if word is None:
        return False
    token = word.group(1)
    return token.lower() in ABBREVIATIONS or (len(token) == 1 and token.isupper())
