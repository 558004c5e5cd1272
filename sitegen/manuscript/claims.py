"""The deterministic claim check of a Markdown draft: sentences, their citations, and claims without any.

Pure: text in, findings out. The rules (docs/manuscript-loop.md lists them for users):

- Prose only. Front matter, fenced and indented code, block quotes, tables, HTML blocks and headings
  are not read; neither is the reference list (a section headed References, Bibliography, Works cited
  or Literature cited, up to the next heading of the same or a higher level).
- A citation is pandoc's `[@key]`, `[see @a, p. 3; @b]`, `[-@key]` or in-text `@key` (an `@` after a
  letter or digit is an e-mail address, not a citation), or LaTeX's `\\cite{a,b}` family (`\\citep`,
  `\\textcite`, `\\parencite`, …).
- Sentences end at `.`, `!` or `?` followed by a space and a capital letter, a digit, a quote, `[` or
  `@`, except after common abbreviations (e.g., i.e., et al., Fig., vs., …) and single initials, and
  never inside brackets.
- A sentence is claim-like when it states a finding: a percentage, a decimal figure, a p-value, a
  confidence interval, an n-fold change; a comparison ("higher than", "outperforms"); a report of
  research ("studies show", "has been shown", "evidence suggests", "the literature"); or an effect or
  association ("is associated with", "increases", "reduces", "leads to", "predicts", "risk of").
  Questions and sentences about the authors' own work ("we", "our", "this study") are not claims
  that need a citation.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

REFERENCE_HEADINGS = re.compile(r"(references?|bibliography|works cited|literature cited|reference list)\s*:?",
                                re.IGNORECASE)
HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
LIST_MARKER = re.compile(r"\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# pandoc's citation key: starts with a letter, digit or _, and may hold :.#$%&-+?<>~/ between them.
KEY = r"([A-Za-z0-9_](?:\w|[:.#$%&\-+?<>~/](?=\w))*|\{[^{}]+\})"
AT_KEY = re.compile(r"(?<![\w@])-?@" + KEY)
LATEX_CITE = re.compile(r"\\[A-Za-z]*cite[A-Za-z]*\*?(?:\[[^\]]*\]){0,2}\{([^}]*)\}")
ABBREVIATIONS = {"e.g", "i.e", "al", "fig", "figs", "vs", "cf", "etc", "approx", "eq", "no", "ref", "refs", "dr",
                 "prof", "st", "resp", "ca", "vol", "pp", "p", "ed", "eds", "viz", "mr", "ms", "mrs", "jr", "sr"}
SENTENCE_END = re.compile(r"[.!?][\"'”’)]*\s+(?=[A-Z0-9\"'“‘\[@(\\])")

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
OWN_WORK = re.compile(r"\b(?:we|our|us)\b|\bthis (?:study|paper|review|article|manuscript|chapter|work)\b",
                      re.IGNORECASE)


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

    @property
    def location(self) -> str:
        return f"{self.section} / paragraph {self.paragraph} / sentence {self.number}"


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


@dataclass
class _Block:
    section: str
    lines: list[tuple[int, int, str]]  # line number, offset of the text in the draft, the text


def sentences(text: str) -> list[Sentence]:
    """The prose sentences of a Markdown draft, in order, with their locations."""
    found: list[Sentence] = []
    paragraphs: dict[str, int] = {}
    for block in _paragraphs(text):
        paragraphs[block.section] = paragraphs.get(block.section, 0) + 1
        for number, (line, span, sentence) in enumerate(_split(block.lines), start=1):
            found.append(Sentence(section=block.section, paragraph=paragraphs[block.section], number=number,
                                  line=line, text=sentence, keys=cited_keys(sentence), span=span))
    return found


def cited_keys(sentence: str) -> tuple[str, ...]:
    """The citation keys a sentence cites, in order, each once."""
    text = INLINE_CODE.sub(" ", sentence)
    keys = [match.group(1).strip("{}") for match in AT_KEY.finditer(text)]
    keys += [key.strip() for match in LATEX_CITE.finditer(text) for key in match.group(1).split(",")]
    return tuple(dict.fromkeys(key for key in keys if key))


def claim_rules(sentence: Sentence) -> tuple[str, ...]:
    """The claim rules a sentence matches (none for questions and the authors' own statements)."""
    text = INLINE_CODE.sub(" ", sentence.text)
    if text.rstrip().endswith("?") or OWN_WORK.search(text) or len(text.split()) < 4:
        return ()
    return tuple(name for name, pattern in CLAIM_RULES if pattern.search(text))


def check(text: str, bib_keys: list[str]) -> ClaimReview:
    """The claim check of a draft against the keys of its BibTeX file."""
    read = sentences(text)
    known = set(bib_keys)
    findings: list[ClaimFinding] = []
    for sentence in read:
        findings += [ClaimFinding(kind="citation with no entry", key=key, sentence=sentence)
                     for key in sentence.keys if key not in known]
        if not sentence.keys and (rules := claim_rules(sentence)):
            findings.append(ClaimFinding(kind="unsupported claim", sentence=sentence, rules=rules))
    cited = tuple(dict.fromkeys(key for sentence in read for key in sentence.keys))
    findings += [ClaimFinding(kind="uncited entry", key=key) for key in bib_keys if key not in cited]
    return ClaimReview(sentences=len(read), cited_keys=cited, citing=tuple(s for s in read if s.keys),
                       findings=tuple(findings))


def _paragraphs(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    section, skipping_level = "(untitled)", 0
    current: list[tuple[int, int, str]] = []
    fence: str | None = None
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    lines = [line.rstrip("\r\n") for line in lines]
    start = _after_front_matter(lines)

    def flush() -> None:
        if current and not skipping_level:
            blocks.append(_Block(section, list(current)))
        current.clear()

    previous_blank = True
    for number, line in enumerate(lines[start:], start=start + 1):
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        if opening := FENCE.match(line):
            flush()
            fence = opening.group(1)[0] * 3
            continue
        if heading := HEADING.match(line):
            flush()
            level, title = len(heading.group(1)), heading.group(2)
            if skipping_level and level > skipping_level:
                continue  # a subsection of the reference list
            skipping_level = level if REFERENCE_HEADINGS.fullmatch(title) else 0
            section = title
            previous_blank = True
            continue
        blank = not line.strip()
        not_prose = line.lstrip().startswith((">", "|", "<")) or (previous_blank and line.startswith(("    ", "\t")))
        if blank or not_prose:
            flush()
            previous_blank = blank or (previous_blank and not_prose)
            continue
        previous_blank = False
        marker = LIST_MARKER.match(line)
        rest = line[marker.end() if marker else 0:]
        column = len(line) - len(rest) + len(rest) - len(rest.lstrip())
        current.append((number, offsets[number - 1] + column, rest.strip()))
    flush()
    return blocks


def _after_front_matter(lines: list[str]) -> int:
    """The index of the first line after YAML front matter (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        for index, line in enumerate(lines[1:], start=1):
            if line.strip() in ("---", "..."):
                return index + 1
    return 0


def _split(lines: list[tuple[int, int, str]]) -> list[tuple[int, tuple[int, int], str]]:
    """A paragraph's sentences, each with the line it starts on and its span in the draft."""
    text, starts = "", []
    for number, offset, line in lines:
        starts.append((len(text), number, offset))
        text += line + " "

    def segment(position: int) -> tuple[int, int, int]:
        return max(start for start in starts if start[0] <= position)

    cuts = [0]
    for match in SENTENCE_END.finditer(text):
        if _depth(text[cuts[-1]:match.start()]) == 0 and not _abbreviation(text, match.start()):
            cuts.append(match.end())
    cuts.append(len(text))
    result = []
    for begin, end in itertools.pairwise(cuts):
        sentence = text[begin:end].strip()
        if sentence:
            first = begin + len(text[begin:end]) - len(text[begin:end].lstrip())
            last = first + len(sentence) - 1
            (joined, line, offset), (last_joined, _, last_offset) = segment(first), segment(last)
            span = (offset + first - joined, last_offset + last - last_joined + 1)
            result.append((line, span, sentence))
    return result


def _depth(text: str) -> int:
    return text.count("[") - text.count("]") + text.count("(") - text.count(")")


def _abbreviation(text: str, end: int) -> bool:
    """Whether the full stop at `end` closes an abbreviation or an initial, not a sentence."""
    if text[end] != ".":
        return False
    word = re.search(r"([\w.]+)$", text[:end])
    if word is None:
        return False
    token = word.group(1)
    return token.lower() in ABBREVIATIONS or (len(token) == 1 and token.isupper())
