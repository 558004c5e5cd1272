"""The sitegen search-query grammar and its compilers to each provider's syntax.

A review states its search once, in one small Boolean language, and sitegen
writes it out for every provider. Each compiler either produces a query with
the same meaning or refuses with `UnsupportedQuery` saying why: a search that
silently lost a field, an OR or a NOT would make the review's record counts
wrong without anyone noticing.

Grammar: terms are runs of non-space characters other than parentheses and
double quotes; "quoted phrases" allow the escapes \\" and \\\\; `title:`,
`abstract:` and `author:` (any case) attach to the one term or phrase that
follows them; AND, OR and NOT (upper case only) bind NOT > AND > OR, two
operands side by side mean AND, and parentheses group. Other providers' syntax
outside quotes (PubMed's [tiab] field tags, arXiv's ANDNOT, the lowercase or
and proximity operators of Ovid and Cochrane strategies, their field suffixes,
subject headings and wildcards) is an error, not text to search for; the
wildcards * and ? are errors inside quotes too, as providers would drop or
apply them there (a ? plainly a question mark, "is it safe?" or "is it safe? a review", is text). Ovid's
truncation $ is an error outside quotes only: inside them it is text ("US$ 100", "cost $ per patient"), as no
provider reads it as syntax there and, ending a word, it is as often a currency's sign (US$, A$) as a truncation.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from sitegen.records.model import verbatim_query_problem
from sitegen.review.models import QUERY_MAX_LENGTH

MAX_LENGTH = QUERY_MAX_LENGTH  # characters: a saved strategy's limit
MAX_TOKENS = 200  # terms, phrases, operators and parentheses
MAX_DEPTH = 16  # nested parentheses

FIELDS = ("title", "abstract", "author")
OPERATORS = ("AND", "OR", "NOT")
_WHITESPACE_CONTROLS = "\t\n\r"  # the control characters a multi-line query may contain
_FIELD_PREFIX = re.compile(r"([A-Za-z][A-Za-z_]*):")  # Europe PMC's own fields hold '_' (PUB_YEAR:)
# A PubMed field tag ending a word: cancer[tiab], "heart failure"[mh] (read as the phrase, then [mh]), [MeSH Terms]
# (read as [MeSH, then Terms]). A tag starts with a letter, so a chemical name such as [18F]FDG stays a term.
_FIELD_TAG = re.compile(r"\[[A-Za-z][^\[\]]*\]?$")
# Other databases' operators, as a whole unquoted word, and what they are there. Sent as text they would search
# for the word: a strategy copied from Ovid, "a or b", ANDed the word "or" with a and b.
_OTHER_OPERATORS = (
    (re.compile(r"ANDNOT"), "arXiv's operator; sitegen's is NOT, as in a NOT b"),
    (re.compile(r"and|or|not"), "a lowercase operator (Ovid's, Embase's); sitegen's are upper case: AND, OR, NOT"),
    (re.compile(r"(?i:adj)\d*|NEAR(?:/\d+)?|NEXT|[WP]/\d+|PRE/\d+"),
     "a proximity operator (Ovid's adj, Cochrane's NEAR and NEXT, Scopus's W/ and PRE/), which sitegen's grammar "
     'has not: write the words as a phrase in double quotes, "heart attack"'),
    (re.compile(r"#\d+"), "a reference to a numbered search line (Cochrane's, Ovid's): write that line's query "
     "in its place, in parentheses"),
)
# Other databases' syntax within an unquoted word (its first group, when it has one, is the syntax itself), with
# the error's code and what it is there. Sent as text, "(heart attack).ti,ab." searched for the word ".ti,ab.".
_OTHER_TERM_SYNTAX = (
    (re.compile(r"\.[a-z]{2}(?:,[a-z]{2})*\.$"), "field", "an Ovid field suffix (.tw., .ti,ab.): use title: or "
     "abstract: on each term"),
    (re.compile(r"(?:^|')(:[a-z]{2}(?:,[a-z]{2})*)$"), "field", "a Cochrane Library or Embase field suffix "
     "(:ti,ab,kw): use title: or abstract: on each term"),
    (re.compile(r"(?:'(/(?:exp|de|mj))|(/))$"), "field", "the mark of a subject heading (Ovid's Heading/, Embase's "
     "'heading'/exp), which sitegen's grammar cannot search"),
    (re.compile(r"^'(?=[^\W\d_])"), "quote", "Embase's quote for a phrase (or a curly ‘ pasted from a document); "
     'sitegen\'s phrases are in double quotes, "heart attack"'),
    (re.compile(r"[$]"), "wildcard", "a wildcard or truncation (Ovid's $), which sitegen's grammar has not: write "
     "out each form of the word"),
)
# How an error says to send a query verbatim: `search`'s flag. A saved search says it its own way (`native_said`).
VERBATIM_HINT = "with --native"


# Cochrane's and Ovid's wildcard for a character within a word (randomi?ed, wom?n, canc?). Providers drop a '?'
# from the text they search, in quotes or not, so "canc? therapy" searched for "canc therapy": it is refused in a
# phrase too, unless it is plainly a question mark (see _question_mark).
_WILDCARD_REASON = ("is a wildcard (Cochrane's ?, Ovid's ?), which sitegen's grammar has not, and providers drop it "
                    "from the text they search, in quotes too: write out each form of the word, or write the "
                    f"provider's own syntax {VERBATIM_HINT}")

# Scopus's fields, written before a parenthesised group (TITLE-ABS-KEY("heart attack")), and Web of Science's tags
# before '=' (TS=("heart attack"), AU=Smith): sent as text, a search looked for the word TITLE-ABS-KEY.
_SCOPUS_FIELD = re.compile(r"(?i:title-abs-key|title-abs|title|abs|key|authkey|auth|authlastname|authfirst|"
                           r"srctitle|pubyear|doctype|language|subjarea|affil|affilorg|indexterms|all|ref|fund-all)")
_WOS_FIELD = re.compile(r"(?:TS|TI|AB|AU|AK|KP|SO|PY|DO|WC|SU|OG|LA|DT|ALL)=")


class QuerySyntaxError(ValueError):
    """The query does not follow the grammar; `position` and `end` (1-based) mark the offending text."""

    def __init__(self, reason: str, *, position: int, end: int, code: str):
        super().__init__(f"position {position}: {reason}")
        self.reason = reason
        self.position = position
        self.end = end
        # empty, length, control, invisible, quote, escape, field, wildcard, term, operator, group or complexity
        self.code = code


class UnsupportedQuery(ValueError):
    """The query is valid but the named provider cannot express it; the message says what and why."""

    def __init__(self, provider: str, message: str):
        super().__init__(message)
        self.provider = provider


@dataclass(frozen=True)
class Term:
    text: str
    field: str | None = None  # None searches all fields; otherwise one of FIELDS
    phrase: bool = False  # written in double quotes


@dataclass(frozen=True)
class Not:
    child: Node


@dataclass(frozen=True)
class And:
    children: tuple[Node, ...]  # at least two, none of them an And


@dataclass(frozen=True)
class Or:
    children: tuple[Node, ...]  # at least two, none of them an Or


Node = Term | Not | And | Or


# --------------------------------------------------------------------------- tokens


@dataclass(frozen=True)
class _Token:
    kind: str  # "term", "(", ")" or one of OPERATORS
    start: int  # 0-based index of the first character
    end: int  # 0-based index just past the last character
    term: Term | None = None


def native_said(message: str, how: str) -> str:
    """An error of the grammar as a saved search's strategy gets it: `monitor add` sends a query verbatim with
    `--syntax native`, a searches/<id>.json with `"syntax": "native"`; neither has `--native`."""
    return message.replace(VERBATIM_HINT, f"with {how}")


def _error(code: str, reason: str, start: int, end: int) -> QuerySyntaxError:
    return QuerySyntaxError(reason, position=start + 1, end=end + 1, code=code)


def _check_characters(text: str) -> None:
    if len(text) > MAX_LENGTH:
        raise _error("length", f"the query is {len(text)} characters long; the limit is {MAX_LENGTH}", MAX_LENGTH, len(text))
    for index, char in enumerate(text):
        if unicodedata.category(char) in ("Cc", "Cs") and char not in _WHITESPACE_CONTROLS:
            raise _error("control", f"control character U+{ord(char):04X} is not allowed in a query", index, index + 1)
    if not text.strip():
        raise _error("empty", "the query is empty", 0, len(text))


# Text pasted from a word processor or a PDF writes the grammar's own characters typographically: a phrase in
# curly quotes (“heart attack”, „…“, «…»), a group in full-width parentheses (（a OR b）), a hyphenated term with a
# non-breaking hyphen or an en dash (COVID‑19), a word broken by a soft hyphen or joined by a zero-width space.
# Read as they stand, the quotes and parentheses were letters of a word (a phrase became two words ANDed, a group
# a word) and the invisible characters letters of the word searched for. Each is read as the character it stands
# for, or dropped when it stands for none; errors still name positions in the text as written.
_TYPOGRAPHIC = {
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u00ab\u00bb\uff02", '"'),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\uff07", "'"),
    "\uff08": "(", "\uff09": ")", "\uff1a": ":",
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d", "-"),
    # invisible: a soft hyphen marks where a word may break; the others join words or set the text's direction
    **dict.fromkeys("\u00ad\u200b\u2060\ufeff\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e"
                    "\u2066\u2067\u2068\u2069", ""),
}
_JOINERS = "\u200c\u200d"  # zero-width non-joiner and joiner: part of how Persian and Indic words are spelt, kept


def _normalised(text: str) -> tuple[str, list[int]]:
    """`text` with the typographic forms of the grammar's characters read as those characters, and the index in
    `text` of each of its characters (and, last, the length of `text`)."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        stands_for = _TYPOGRAPHIC.get(char, char)
        if stands_for == char and unicodedata.category(char) == "Cf" and char not in _JOINERS:
            name = unicodedata.name(char, "unnamed").lower()
            raise _error("invisible", f"invisible formatting character U+{ord(char):04X} ({name}) is not allowed in "
                         "a query: a provider would search for it as part of the word; delete it", index, index + 1)
        if stands_for:
            chars.append(stands_for)
            origin.append(index)
    origin.append(len(text))
    return "".join(chars), origin


def _as_written(error: QuerySyntaxError, origin: list[int]) -> QuerySyntaxError:
    """`error`, raised on the normalised text, with its positions in the text as written."""
    start, end = error.position - 1, error.end - 1
    last = origin[end - 1] + 1 if end > start else origin[end]
    return QuerySyntaxError(error.reason, position=origin[start] + 1, end=last + 1, code=error.code)


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    index = 0
    while index < len(text):
        if text[index].isspace():
            index += 1
            continue
        token = _read_token(text, index)
        if token.term is not None:
            _check_term(text, token)
        if len(tokens) == MAX_TOKENS:
            raise _error("complexity", f"the query has more than {MAX_TOKENS} terms, operators and parentheses",
                         token.start, token.end)
        tokens.append(token)
        index = token.end
    return tokens


def _check_term(text: str, token: _Token) -> None:
    """Raise QuerySyntaxError when a term holds a wildcard or nothing a provider searches for."""
    # PubMed truncates at '*' even inside quotes, Europe PMC only outside them, OpenAlex never: the grammar has
    # no wildcard rather than one that means something else in each provider. (No escape makes '*' another
    # character, so its index in the text is where it stands.)
    if (star := text.find("*", token.start, token.end)) >= 0:
        raise _error("wildcard", "* is a truncation wildcard in some providers (PubMed's even in quotes) and a "
                     "character in others, and sitegen's grammar has none: write out each form of the word, or "
                     f"write the provider's own syntax {VERBATIM_HINT}", star, star + 1)
    if (mark := _wildcard_mark(text, token)) is not None:
        word = _word_around(text, mark, token)
        raise _error("wildcard", f"? in {word} {_WILDCARD_REASON}", mark, mark + 1)
    if not any(char.isalnum() for char in token.term.text):
        raise _error("term", f"{_term_text(token.term)} has no letter or digit: providers drop such a term "
                     "from a query, so the query would mean something else; delete it", token.start, token.end)


def _wildcard_mark(text: str, token: _Token) -> int | None:
    """The index of the first '?' in a term's text that is a wildcard, or None. (No escape makes '?' another
    character, so its index in the text is where it stands.)"""
    for index in range(token.start, token.end):
        if text[index] == "?" and not (token.term.phrase and _question_mark(text, index, token)):
            return index
    return None


def _question_mark(text: str, index: int, token: _Token) -> bool:
    """Whether the '?' at `index`, inside a phrase, is punctuation rather than a wildcard: one standing apart from
    the words (French puts a space before it: "est-ce sûr ? une revue"), or one ending a question of several
    words, at the end of the phrase ("is it safe?") or before more words, as in a title ("Is exercise safe? A
    review"). A wildcard stands in a word: "randomi?ed", or ends the phrase's first word, "canc?" and "canc?
    therapy", which no question of several words ends."""
    beside = text[index - 1] + text[index + 1]
    if not any(char.isalnum() for char in beside):
        return True
    if text[index + 1].isalnum():
        return False  # a letter or a digit follows: the '?' is inside a word
    opening = text.index('"', token.start)  # after a field prefix, if any
    return len(text[opening + 1:index].split()) > 1  # the question has a word before the one the '?' ends


def _word_around(text: str, index: int, token: _Token) -> str:
    """The run of non-space characters of `token` around `index`, to name the word a wildcard stands in."""
    start, end = index, index + 1
    while start > token.start and not text[start - 1].isspace() and text[start - 1] != '"':
        start -= 1
    while end < token.end and not text[end].isspace() and text[end] != '"':
        end += 1
    return text[start:end]


def _read_token(text: str, start: int) -> _Token:
    if text[start] in "()":
        return _Token(text[start], start, start + 1)
    if text[start] == '"':
        phrase, end = _read_phrase(text, start)
        return _Token("term", start, end, Term(phrase, None, True))
    return _read_word(text, start)


def _read_phrase(text: str, start: int) -> tuple[str, int]:
    """The unescaped phrase whose opening quote is at `start`, and the index just past its closing quote."""
    chars: list[str] = []
    index = start + 1
    while index < len(text) and text[index] != '"':
        if text[index] == "\\" and index + 1 < len(text):
            escaped = text[index + 1]
            if escaped not in '"\\':
                raise _error("escape", f'unknown escape \\{escaped} inside quotes; only \\" and \\\\ are allowed',
                             index, index + 2)
            chars.append(escaped)
            index += 2
        else:
            chars.append(text[index])
            index += 1
    if index == len(text):
        raise _error("quote", 'unclosed quote (") starting here', start, start + 1)
    # A line break, a non-breaking space or two spaces between the words of a phrase are one space to every
    # provider's phrase search; PubMed would look up the phrase with them as written.
    phrase = " ".join("".join(chars).split())
    if not phrase:
        raise _error("quote", "empty quotes match nothing; put a word or phrase between them", start, index + 1)
    return phrase, index + 1


def _read_word(text: str, start: int) -> _Token:
    """An operator, a plain term, or a field-prefixed term or phrase starting at `start`."""
    end = start
    while end < len(text) and not text[end].isspace() and text[end] not in '()"':
        end += 1
    word = text[start:end]
    if word in OPERATORS:
        return _Token(word, start, end)
    # Another provider's syntax, sent as text, would search for its letters: say so, as for an unknown field.
    for operator, what in _OTHER_OPERATORS:
        if operator.fullmatch(word):
            raise _error("operator", f"{word} is {what} (put it in double quotes to search for the word, or write "
                         f"the provider's own syntax {VERBATIM_HINT})", start, end)
    for pattern, code, what in _OTHER_TERM_SYNTAX:
        if found := pattern.search(word):
            group = next((index for index in range(1, pattern.groups + 1) if found.group(index)), 0)
            syntax = found.group(group) or word
            shown = syntax if syntax == word else f"{syntax} in {word}"
            raise _error(code, f"{shown} is {what} (put the term in double quotes to search for it as text, or "
                         f"write the provider's own syntax {VERBATIM_HINT})",
                         start + found.start(group), start + found.end(group))
    scopus = end < len(text) and text[end] == "(" and _SCOPUS_FIELD.fullmatch(word)
    if scopus or (wos := _WOS_FIELD.match(word)):
        shown, whose = (f"{word}(", "a Scopus field") if scopus else (wos.group(), "a Web of Science field tag")
        raise _error("field", f"{shown} is {whose}, which no provider sitegen searches reads: use title:, abstract: "
                     "or author: on each term (put the term in double quotes to search for it as text)",
                     start, start + len(shown))
    if tag := _FIELD_TAG.search(word):
        raise _error("field", f"{tag.group(0)} looks like a PubMed field tag, which sitegen's grammar does not read: "
                     f"use title:, abstract: or author:, or write PubMed's own syntax {VERBATIM_HINT} (put the term "
                     "in double quotes to search for the brackets themselves)", start + tag.start(), end)
    prefix = _FIELD_PREFIX.match(word)
    if prefix is None:  # only letters-then-colon is a field prefix, so a DOI such as 10.1000/x:y stays a term
        return _Token("term", start, end, Term(word, None, False))
    field = prefix.group(1).lower()
    attached = word[prefix.end():]
    follows = text[end] if end < len(text) and text[end] in '("' else ""
    if not (attached or follows or field in FIELDS):  # a word that merely ends in a colon, e.g. Background:
        return _Token("term", start, end, Term(word, None, False))
    prefix_end = start + prefix.end()
    if field not in FIELDS:
        raise _error("field", f"unknown field {prefix.group(0)} - the fields are title:, abstract: and author: "
                     "(put the term in double quotes to search for the colon itself)", start, prefix_end)
    if attached:
        return _Token("term", start, end, Term(attached, field, False))
    if follows == '"':
        phrase, phrase_end = _read_phrase(text, end)
        return _Token("term", start, phrase_end, Term(phrase, field, True))
    if follows == "(":
        raise _error("field", f"a field applies to one term or phrase: repeat it on each term, as in "
                     f"{field}:a OR {field}:b, instead of {field}:(a OR b)", start, end + 1)
    raise _error("field", f"{prefix.group(0)} must be attached to a term or phrase, as in {field}:cancer "
                 f'or {field}:"heart failure"', start, prefix_end)


# --------------------------------------------------------------------------- parsing


def parse_query(text: str) -> Node:
    """The query's syntax tree; raises QuerySyntaxError saying where and why the text is not a query."""
    _check_characters(text)
    normal, origin = _normalised(text)
    if not normal.strip():
        raise _error("empty", "the query holds nothing but invisible characters", 0, len(text))
    try:
        return _parse(normal)
    except QuerySyntaxError as error:
        raise _as_written(error, origin) from None


def _parse(text: str) -> Node:
    tokens = _tokens(text)
    node, index = _parse_or(tokens, 0, 0)
    if index < len(tokens):  # _parse_or stops only at the end or at a ")" it did not open
        raise _error("group", "this closing parenthesis has no opening one", tokens[index].start, tokens[index].end)
    if not _matches_something(node):
        first_not = next(token for token in tokens if token.kind == "NOT")
        raise _error("operator", "a query must match something; NOT needs something to exclude from, "
                     "as in cancer NOT review", first_not.start, first_not.end)
    canonical = to_text(node)
    # to_text may add a space where the query had none, e.g. between ")(" or '""'; keep it storable.
    if len(canonical) > MAX_LENGTH:
        raise _error("length", f"the query is {len(canonical)} characters long once written out with spaces "
                     f"between terms; the limit is {MAX_LENGTH}", 0, len(text))
    return node


def _parse_or(tokens: list[_Token], index: int, depth: int) -> tuple[Node, int]:
    node, index = _parse_and(tokens, index, depth)
    children = [node]
    while index < len(tokens) and tokens[index].kind == "OR":
        node, index = _parse_and(tokens, index + 1, depth)
        children.append(node)
    return _combine(Or, children), index


def _parse_and(tokens: list[_Token], index: int, depth: int) -> tuple[Node, int]:
    node, index = _parse_not(tokens, index, depth)
    children = [node]
    while index < len(tokens) and tokens[index].kind in ("AND", "NOT", "term", "("):
        if tokens[index].kind == "AND":
            index += 1
        node, index = _parse_not(tokens, index, depth)  # side by side means AND
        children.append(node)
    return _combine(And, children), index


def _parse_not(tokens: list[_Token], index: int, depth: int) -> tuple[Node, int]:
    if index < len(tokens) and tokens[index].kind == "NOT":
        child, index = _parse_not(tokens, index + 1, depth)
        return Not(child), index
    return _parse_operand(tokens, index, depth)


def _parse_operand(tokens: list[_Token], index: int, depth: int) -> tuple[Node, int]:
    token = tokens[index] if index < len(tokens) else None
    if token is not None and token.term is not None:
        return token.term, index + 1
    if token is None or token.kind != "(":
        raise _missing_operand(tokens, index)
    if depth == MAX_DEPTH:
        raise _error("complexity", f"parentheses are nested more than {MAX_DEPTH} deep", token.start, token.end)
    node, after = _parse_or(tokens, index + 1, depth + 1)
    if after == len(tokens):
        raise _error("group", "this parenthesis is never closed", token.start, token.end)
    return node, after + 1


def _missing_operand(tokens: list[_Token], index: int) -> QuerySyntaxError:
    """Why there is no term at `index`, where the grammar needs one."""
    previous = tokens[index - 1] if index > 0 else None
    token = tokens[index] if index < len(tokens) else None
    if previous is not None and previous.kind in OPERATORS:
        if token is not None and token.kind in OPERATORS:
            return _error("operator", f"{token.kind} cannot follow {previous.kind}; put a term between them",
                          token.start, token.end)
        return _error("operator", f"{previous.kind} needs a term after it", previous.start, previous.end)
    if token is None:  # the query ends straight after an opening parenthesis
        return _error("group", "this parenthesis is never closed", previous.start, previous.end)
    if token.kind == ")" and previous is not None:
        return _error("group", "empty parentheses () match nothing", previous.start, token.end)
    if token.kind == ")":
        return _error("group", "this closing parenthesis has no opening one", token.start, token.end)
    return _error("operator", f"{token.kind} needs a term before it", token.start, token.end)


def _combine(kind: type[And] | type[Or], children: list[Node]) -> Node:
    """One node for `children` joined by `kind`, flattened so a AND (b AND c) is And(a, b, c)."""
    if len(children) == 1:
        return children[0]
    flat: list[Node] = []
    for child in children:
        flat.extend(child.children if isinstance(child, kind) else (child,))
    return kind(tuple(flat))


def _matches_something(node: Node) -> bool:
    """False for queries such as NOT a, or a OR NOT b, that match everything except some records."""
    if isinstance(node, Term):
        return True
    if isinstance(node, Not):
        return not _matches_something(node.child)
    if isinstance(node, And):
        return any(_matches_something(child) for child in node.children)
    return all(_matches_something(child) for child in node.children)


# --------------------------------------------------------------------------- canonical text


def to_text(node: Node) -> str:
    """The query in canonical sitegen syntax.

    AND is written as adjacency and parentheses only where precedence needs
    them, so the text never has more tokens or deeper nesting than the query
    it was parsed from and always parses back to the same tree.
    """
    if isinstance(node, Term):
        return _term_text(node)
    if isinstance(node, Not):
        return "NOT " + (f"({to_text(node.child)})" if isinstance(node.child, And | Or) else to_text(node.child))
    if isinstance(node, And):
        return " ".join(f"({to_text(child)})" if isinstance(child, Or) else to_text(child) for child in node.children)
    return " OR ".join(to_text(child) for child in node.children)


def _term_text(term: Term) -> str:
    prefix = f"{term.field}:" if term.field else ""
    if term.phrase:
        return prefix + '"' + term.text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return prefix + term.text


# --------------------------------------------------------------------------- provider compilers


@dataclass(frozen=True)
class _Dialect:
    """How one provider writes terms and NOT; everything else is AND, OR and parentheses."""

    provider: str  # the source name in review.yaml
    name: str  # as people write it, for messages
    term: Callable[[Term], str]
    binary_not: str | None  # "NOT" for a NOT b, "ANDNOT" for a ANDNOT b; None for a AND NOT b
    not_rule: str  # why a NOT that is not ANDed with something to exclude from cannot be sent


_LUCENE_NOT_RULE = ("its Lucene-style parser applies NOT to the clauses beside it (a OR NOT b is read as a NOT b), "
                    "so a NOT is only sent when it is ANDed with something to exclude from")
# What OpenAlex and arXiv read as one word without quotes: letters and digits, with an apostrophe or a full stop
# between them (children's, U.S.), which their analysers keep within the word. A hyphen splits the word there
# (covid-19 is covid and 19), and the words of an unquoted term are ANDed anywhere in the text, not the phrase the
# other providers search for: such a term is quoted, as a word in a script written without spaces between words is.
_PLAIN_WORD = re.compile(r"[^\W_](?:[^\W_]|['.])*")
# Scripts written without spaces between words, which analysers split into characters or dictionary words.
_UNSPACED_SCRIPTS = ("CJK ", "HIRAGANA ", "KATAKANA ", "HALFWIDTH KATAKANA ", "THAI ", "LAO ", "KHMER ", "MYANMAR ",
                     "TIBETAN ")


def _unspaced(text: str) -> bool:
    """Whether `text` holds a character of a script written without spaces between words (癌症 is two words to
    an analyser that splits Chinese into characters)."""
    return any(unicodedata.name(char, "").startswith(_UNSPACED_SCRIPTS) for char in text)


def _compile(node: Node, dialect: _Dialect) -> str:
    if isinstance(node, Term):
        return dialect.term(node)
    if isinstance(node, Or):
        return " OR ".join(_grouped(child, dialect) for child in node.children)
    if isinstance(node, Not):
        raise _misplaced_not(node, dialect)
    kept = [_grouped(child, dialect) for child in node.children if not isinstance(child, Not)]
    excluded = [child.child for child in node.children if isinstance(child, Not)]
    if not kept:
        raise _misplaced_not(node, dialect)
    if dialect.binary_not is None:
        return " AND ".join(kept + [f"NOT {_grouped(child, dialect)}" for child in excluded])
    if not excluded:
        return " AND ".join(kept)
    included = kept[0] if len(kept) == 1 else "(" + " AND ".join(kept) + ")"
    exclusion = excluded[0] if len(excluded) == 1 else Or(tuple(excluded))  # a NOT b NOT c == a NOT (b OR c)
    return f"{included} {dialect.binary_not} {_grouped(exclusion, dialect)}"


def _grouped(node: Node, dialect: _Dialect) -> str:
    compiled = _compile(node, dialect)
    return f"({compiled})" if isinstance(node, And | Or) else compiled


def _misplaced_not(node: Node, dialect: _Dialect) -> UnsupportedQuery:
    return UnsupportedQuery(dialect.provider, f"{dialect.name} cannot express '{to_text(node)}': {dialect.not_rule}; "
                            "rewrite it so each NOT follows an AND, as in a AND NOT b")


def _terms(node: Node) -> Iterator[Term]:
    return (term for term, _ in _signed_terms(node))


def _signed_terms(node: Node, negated: bool = False) -> Iterator[tuple[Term, bool]]:
    """Each term with whether an odd number of NOTs stands over it."""
    if isinstance(node, Term):
        yield node, negated
    elif isinstance(node, Not):
        yield from _signed_terms(node.child, not negated)
    else:
        for child in node.children:
            yield from _signed_terms(child, negated)


def positive_words(text: str) -> str:
    """The words of a query's terms that are not negated, without operators, field prefixes or quotes, each
    once, in order: what a meaning-based (embedding) search can be sent. QuerySyntaxError as `parse_query`."""
    terms = [term.text for term, negated in _signed_terms(parse_query(text)) if not negated]
    return " ".join(dict.fromkeys(terms))


def negative_terms(text: str) -> list[str]:
    """The terms a query negates (NOT ...), which a meaning-based search cannot exclude."""
    return list(dict.fromkeys(term.text for term, negated in _signed_terms(parse_query(text)) if negated))


def _require_sendable(term: Term, provider: str, name: str, forbidden: str, why: str) -> None:
    for char in forbidden:
        if char in term.text:
            raise UnsupportedQuery(provider, f"{name} cannot take the term '{_term_text(term)}': "
                                   f"it contains '{char}', which {why}")


def _quoted_if_needed(term: Term) -> str:
    """A term bare when it is one plain word, else in double quotes, so no character acts as an operator."""
    plain = (not term.phrase and _PLAIN_WORD.fullmatch(term.text) and not _unspaced(term.text)
             and term.text not in ("AND", "OR", "NOT", "ANDNOT"))
    return term.text if plain else f'"{term.text}"'


def compile_openalex(node: Node) -> dict[str, str]:
    """Query parameters for GET https://api.openalex.org/works.

    All-field queries go to `search`; a query whose terms all share one field
    becomes that field's search filter. OpenAlex has no way to mix fields in
    one Boolean expression.
    """
    fields = {term.field for term in _terms(node)}
    if len(fields) > 1:
        names = sorted(field or "all fields" for field in fields)
        raise UnsupportedQuery("openalex", "OpenAlex cannot combine different fields in one Boolean query; "
                               f"this one uses {', '.join(names)}. Its search parameter covers all fields and each "
                               "field filter (title.search, abstract.search, raw_author_name.search) takes one "
                               "field's expression: write one strategy per field")
    (field,) = fields
    forbidden, why = '"\\', "cannot be escaped inside an OpenAlex search"
    if field is not None:
        forbidden, why = '"\\,|', "cannot appear in an OpenAlex filter value (commas separate filters, | means OR)"
    for term in _terms(node):
        _require_sendable(term, "openalex", "OpenAlex", forbidden, why)
    expression = _compile(node, _Dialect("openalex", "OpenAlex", _quoted_if_needed, None, _LUCENE_NOT_RULE))
    if field is None:
        return {"search": expression}
    name = {"title": "title.search", "abstract": "abstract.search", "author": "raw_author_name.search"}[field]
    return {"filter": f"{name}:{expression}"}


def _europepmc_term(term: Term) -> str:
    _require_sendable(term, "europepmc", "Europe PMC", '"\\', "cannot be escaped inside a quoted Europe PMC term")
    prefix = {None: "", "title": "TITLE:", "abstract": "ABSTRACT:", "author": "AUTH:"}[term.field]
    return f'{prefix}"{term.text}"'


def compile_europepmc(node: Node) -> str:
    """The `query` parameter of the Europe PMC REST search; every term is quoted so none is read as syntax."""
    return _compile(node, _Dialect("europepmc", "Europe PMC", _europepmc_term, None, _LUCENE_NOT_RULE))


def _pubmed_term(term: Term) -> str:
    if term.field == "abstract":
        raise UnsupportedQuery("pubmed", f"PubMed cannot search '{_term_text(term)}': it has no abstract-only field "
                               "([tiab] is title and abstract together); use title: or no field instead")
    _require_sendable(term, "pubmed", "PubMed", '"', "cannot be escaped inside a quoted PubMed term")
    if term.field == "author":
        return _pubmed_author(term)
    tag = {None: "All Fields", "title": "ti"}[term.field]
    return f'"{term.text}"[{tag}]'


# A name PubMed reads as one author without quotes: words of letters joined by spaces, hyphens, apostrophes or
# periods (Bussey, Bussey TJ, O'Brien J, van der Berg A, Smith-Jones A).
_PUBMED_AUTHOR = re.compile(r"[^\W\d_]+(?:[-' .]+[^\W\d_]+)*\.?")


def _pubmed_author(term: Term) -> str:
    """An author search, unquoted: PubMed matches any further initials of a name written without quotes (Bussey[au]
    finds Bussey TJ), and in quotes that name alone ("Bussey"[au] finds only authors with no initials at all)."""
    words = term.text.split()
    if not _PUBMED_AUTHOR.fullmatch(term.text) or any(word in OPERATORS for word in words):
        raise UnsupportedQuery("pubmed", f"PubMed cannot search '{_term_text(term)}' as an author: a name is sent "
                               "without quotes, so that PubMed matches its further initials, and this one holds "
                               "characters or an AND, OR or NOT it would read as syntax; write the name as last name "
                               "and initials, as in author:\"Bussey TJ\"")
    return f"{' '.join(words)}[au]"


def compile_pubmed(node: Node) -> str:
    """The `term` parameter of PubMed E-utilities esearch.

    PubMed reads operators strictly left to right and its NOT is binary, so
    every group is parenthesised and And(a, Not(b), c) becomes (a AND c) NOT b.
    """
    not_rule = "PubMed's NOT is binary (a NOT b), so a NOT must be ANDed with something to exclude from"
    return _compile(node, _Dialect("pubmed", "PubMed", _pubmed_term, "NOT", not_rule))


def _arxiv_term(term: Term) -> str:
    _require_sendable(term, "arxiv", "arXiv", '"\\', "cannot be escaped in an arXiv search_query")
    prefix = {None: "all", "title": "ti", "abstract": "abs", "author": "au"}[term.field]
    return f"{prefix}:{_quoted_if_needed(term)}"


def compile_arxiv(node: Node) -> str:
    """The `search_query` parameter of the arXiv API; its only negation is the binary ANDNOT."""
    not_rule = "arXiv's only negation is the binary ANDNOT (a ANDNOT b), so a NOT must be ANDed with something"
    return _compile(node, _Dialect("arxiv", "arXiv", _arxiv_term, "ANDNOT", not_rule))


# Letters and digits: one word to Crossref's analyser, split nowhere. The punctuation that ends a word in a
# sentence (mice. or Background:, a term copied from a text) follows it: Crossref strips punctuation, so the word
# alone is sent, the word every other provider searches for such a term.
_CROSSREF_WORD = re.compile(r"([^\W_]+)[.,;:!]*")


def compile_crossref(node: Node) -> dict[str, str]:
    """Query parameters for Crossref /works.

    Crossref's query is relevance-ranked free text: it returns every work
    matching any of a query's words (and any of its field queries), ranked,
    so "a b", a phrase, a hyphenated word or a text and an author query all
    ask for a OR b. Only one word, in all fields or the author's, means what
    it says there.
    """
    if not isinstance(node, Term):
        negates = isinstance(node, Not) or isinstance(node, And) and any(isinstance(c, Not) for c in node.children)
        operator = "OR" if isinstance(node, Or) else "NOT" if negates else "AND"
        raise UnsupportedQuery("crossref", f"Crossref cannot express {operator} (in '{to_text(node)}'): its query is "
                               "relevance-ranked free text with no Boolean logic that returns works matching any of "
                               "its words, so only a query of one word can be sent")
    if node.field in ("title", "abstract"):
        raise UnsupportedQuery("crossref", f"Crossref cannot search '{_term_text(node)}': it has no title or "
                               "abstract query (query.title was retired); use no field or author:")
    word = _CROSSREF_WORD.fullmatch(node.text)
    if word is None or len(word.group(1)) > 1 and _unspaced(word.group(1)):
        raise UnsupportedQuery("crossref", f"Crossref cannot search '{_term_text(node)}': it splits the text into "
                               "words and returns works matching any of them, so a phrase, a word joined by "
                               "punctuation or a word in a script written without spaces (Chinese, Japanese, Thai), "
                               "which it splits into characters, would be searched as any of its parts; only a "
                               "query of one word can be sent")
    return {"query.author" if node.field == "author" else "query.bibliographic": word.group(1)}


# --------------------------------------------------------------------------- saved native strategies

OPENALEX_NATIVE_KEYS = ("search", "filter")
CROSSREF_FIELDS = re.compile(r"^query(\.[a-z-]+)?=")


def native_openalex(text: str) -> dict[str, str]:
    """A saved OpenAlex strategy, verbatim: `search=…&filter=…` as written, or else plain search text."""
    if text.startswith(tuple(f"{key}=" for key in OPENALEX_NATIVE_KEYS)):
        if "+" in text:  # parse_qsl would read it as a space, so search=C++ searched for C
            raise UnsupportedQuery("openalex", "a '+' in an OpenAlex strategy written as search=…&filter=… is "
                                               "ambiguous (a space in a copied address, a plus sign in a query): "
                                               "write a space as a space and a plus sign as %2B")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False)
        unknown = [key for key, _ in pairs if key not in OPENALEX_NATIVE_KEYS]
        if unknown:
            raise UnsupportedQuery("openalex", f"only {' and '.join(OPENALEX_NATIVE_KEYS)} may be given in an "
                                               f"OpenAlex strategy, not {unknown}")
        repeated = sorted({key for key, _ in pairs if [name for name, _ in pairs].count(key) > 1})
        if repeated:  # a dict would keep only the last value, silently dropping part of the strategy
            raise UnsupportedQuery("openalex", f"{' and '.join(repeated)} is given twice in the OpenAlex strategy; "
                                               "combine the values into one (filters are separated by commas)")
        return dict(pairs)
    return {"search": text}


def native_crossref(text: str) -> dict[str, str]:
    """`query.author=…&query.bibliographic=…` as written (not URL-decoded), or else free bibliographic text."""
    if not CROSSREF_FIELDS.match(text):
        return {"query.bibliographic": text}
    params: dict[str, str] = {}
    for part in text.split("&"):
        name, equals, value = part.partition("=")
        if not equals or not (name == "filter" or CROSSREF_FIELDS.match(part)):
            raise UnsupportedQuery("crossref", f"{part!r}: a Crossref strategy may set only query, "
                                               "query.<field> and filter")
        if name in params:
            raise UnsupportedQuery("crossref", f"{name} is given twice in the Crossref strategy")
        params[name] = value
    return params


# How each provider takes a saved native strategy, and a query in sitegen's grammar.
NATIVE: dict[str, Callable[[str], Any]] = {"openalex": native_openalex, "europepmc": str, "pubmed": str,
                                           "crossref": native_crossref, "arxiv": str}
COMPILERS: dict[str, Callable[[Node], Any]] = {"openalex": compile_openalex, "europepmc": compile_europepmc,
                                               "pubmed": compile_pubmed, "crossref": compile_crossref,
                                               "arxiv": compile_arxiv}


def check_verbatim(text: str) -> None:
    """Raise QuerySyntaxError at the first invisible format character of a query sent as written (a native one): the
    provider would search for it as part of the query. Only the joiners, which spell words, are kept."""
    if found := verbatim_query_problem(text):
        place, reason = found
        raise QuerySyntaxError(reason, position=place, end=place + 1, code="invisible")


def provider_query(source: str, text: str, *, native: bool) -> Any:
    """The query as `source` takes it: a native strategy verbatim, or the grammar compiled. UnsupportedQuery
    when the provider cannot express it, QuerySyntaxError when it breaks the grammar (or, native, holds an
    invisible character). Pure: checking a saved strategy loads no provider code."""
    if native:
        check_verbatim(text)
        return NATIVE[source](text)
    return COMPILERS[source](parse_query(text))

