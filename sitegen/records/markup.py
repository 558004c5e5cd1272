"""Provider markup as plain text: the one normaliser every provider applies to titles, containers and abstracts.

Providers send titles such as "GABA<sub>A</sub> receptor", JATS abstracts
("<jats:title>Background</jats:title><jats:p>…"), HTML entities, and even
escaped tags ("&lt;b&gt;Background:&lt;/b&gt;"). Readers, RIS, BibTeX and CSV
would show them literally, so a record holds only their text: inline markup
goes without a trace ("GABAA receptor"), but an italic or bold set against
the words beside it parts them ("of<i>Camellia</i>teas": "of Camellia teas"), also from a bracket
after it or a full stop, semicolon or bracket before it ("at<i>TERT</i>(linkage": "at TERT (linkage"),
a block (paragraph, section title, line break) ends with a space, and
whitespace is collapsed.

Only markup is removed: a tag sitegen does not know as markup ("x<y and y>z",
"p < 0.05") stays as written, and so does a known one written as no markup is: with a
word that is no attribute ("ASA class <I and >III", "$1<p \\le n$ ... $p>n$" are comparisons,
not an italic and a paragraph), or standing apart without its other half ("a <b> c": see
`tags.markup_tags`, the rule titles are compared by too). A formula given twice (MathML's TeX annotation, JATS
alternatives) is read once. Control characters and code points no record may hold become spaces.
A structured abstract's section headings (HTML's, JATS's) become the labels of their parts (`labelled_sections`).
Pure: a string in, a string out.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from sitegen.records.model import CONTROL_CHARACTER, visible_text
from sitegen.records.tags import BLOCKS, HIDDEN, INLINE, NAMESPACES, VOID, markup_tags

# Type styles, set around whole words ("of <i>Camellia sinensis</i> teas"). Publishers' deposits often lost the
# spaces beside them ("of<i>Camellia sinensis</i>teas", "targeting<jats:italic>SMARCB1</jats:italic>for"): a style's
# start or end between two words is a space. Within a word a style meets a hyphen or a quote ("c-<i>fos</i>",
# "<i>E. coli</i>'s"); small capitals set parts of words ("<sc>d</sc>-glucose"), so are no style here. A subscript or
# superscript is part of the word it follows, whatever it holds: a style never parts it from that word
# ("<i>K</i><sub>d</sub>", "<i>Shank3</i><sup>−/−</sup>"), and where it ends its word ends, so a style ending or
# starting after it parts it from the next ("<i>CO<sub>2</sub></i>emissions", "<sup><i>−/−</i></sup>and").
STYLES = frozenset({"b", "bold", "em", "i", "italic", "strong", "u", "underline"})
SCRIPTS = frozenset({"sub", "sup"})
# Where a style starts or ends, and where a script starts and where it ends, in the text read; no text holds them
# (control characters go first).
STYLE_EDGE, SCRIPT_START, SCRIPT_END = "\0", "\1", "\2"
EDGES = re.compile(f"[{STYLE_EDGE}{SCRIPT_START}{SCRIPT_END}]+")
WORD_CHARACTER = re.compile(r"\w")
# MathML's layout elements, which hold other elements and no text of their own: whitespace directly in one is
# the layout of the markup, not the formula's (MathML ignores it). PubMed sends formulas pretty-printed, and read
# as text its indentation parted every symbol ("V . O 2 m a x" for V̇O2max). Text is in the tokens (mi, mn, mo,
# mtext, ms), and a table's rows and cells are blocks.
MATH_LAYOUT = frozenset({
    "math", "mrow", "msub", "msup", "msubsup", "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mstyle",
    "semantics", "mfenced", "mtable", "mtr", "mtd", "mlabeledtr", "mpadded", "menclose", "mphantom",
    "mmultiscripts", "mprescripts", "merror", "maction",
})
ALTERNATIVES = "alternatives"  # JATS: one formula in several notations, of which the first is read


# What the parser would take for the start of a tag (a "<" before a letter or a "/") or of a comment, a CDATA
# section, a declaration or a processing instruction ("<!", "<?"), and what ends each of those.
TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
DECLARATION_ENDS = (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<", ">"))


def _unpaired_as_text(text: str) -> str:
    """`text` with the "<" of each would-be tag that is no markup (see `markup_tags`), and of each comment or
    declaration that never ends, escaped, so the parser reads it as text. Nor does the parser see an unclosed one:
    it searched the rest of the text for the end of each, and a title of thousands ("<i a=b <i a=b ...",
    "<!-- <!-- ...") took minutes."""
    if "<" not in text:  # most titles and abstracts: nothing to look for
        return text
    kept = {tag.start() for tag in markup_tags(text)}
    last_ends = {end: text.rfind(end) for _, end in DECLARATION_ENDS}

    def written(start: re.Match[str]) -> str:
        at = start.start()
        if text[at + 1] in "!?":
            end = next(end for opening, end in DECLARATION_ENDS if text.startswith(opening, at))
            return "<" if last_ends[end] > at else "&lt;"
        return "<" if at in kept else "&lt;"

    return TAG_START.sub(written, text)


class _Text(HTMLParser):
    def __init__(self, hiding: bool = True) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0
        self.hiding = hiding  # whether a <script>, <style> or annotation hides its content (see `_once`)
        # The markup elements open around the reading (but void ones), and for each <alternatives> among them its
        # place there and whether its first notation was read (whatever follows in it is another notation of the
        # same formula, not read).
        self.open: list[str] = []
        self.alternatives: list[list[int | bool]] = []

    def set_cdata_mode(self, *args: Any, **kwargs: Any) -> None:
        # HTMLParser reads what follows <script> or <style> as raw text up to its end tag, and keeps back all of it
        # when there is none: not hiding, it is read as the rest of the text is.
        if self.hiding:
            super().set_cdata_mode(*args, **kwargs)

    def _markup(self, tag: str, attrs: list) -> str | None:
        """The kind of a tag as markup; None when it is none, or is written as no markup is: an attribute
        without a value is a word ("<I and >III"), and in a title or an abstract no element needs one."""
        kind = self._kind(tag)
        return None if kind is None or any(value is None for _, value in attrs) else kind

    def _enter(self, tag: str) -> None:
        local = tag.rpartition(":")[2]
        if local in VOID:
            return
        self.open.append(local)
        if local == ALTERNATIVES:
            self.alternatives.append([len(self.open), False])

    def _leave(self, tag: str) -> None:
        """An end tag closes the element it names and every one opened inside it (an end tag that names no open
        element is ignored): an <alternatives> left open closes with its enclosing element."""
        local = tag.rpartition(":")[2]
        if local in VOID or local not in self.open:
            return
        del self.open[len(self.open) - 1 - self.open[::-1].index(local):]
        while self.alternatives and self.alternatives[-1][0] > len(self.open):
            self.alternatives.pop()
        if self.alternatives and self.alternatives[-1][0] == len(self.open):
            self.alternatives[-1][1] = True  # a notation of the innermost one closed: its first is read

    def _kind(self, tag: str) -> str | None:
        prefix, _, local = tag.rpartition(":")
        if local in HIDDEN:
            return "hidden" if self.hiding else None
        if local in BLOCKS:
            return "block"
        if local in INLINE or (prefix and prefix in NAMESPACES):
            return "inline"
        return None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        kind = self._markup(tag, attrs)
        if kind is None:
            self.handle_data(self.get_starttag_text() or "")
            return
        self._enter(tag)
        if kind == "hidden":
            self.hidden += 1
        elif kind == "block":
            self.parts.append(" ")
        self._style_edge(tag)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        kind = self._markup(tag, attrs)
        if kind is None:
            self.handle_data(self.get_starttag_text() or "")
        elif kind == "block":
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        kind = self._kind(tag)
        if kind is None:
            self.handle_data(f"</{tag}>")
            return
        if kind == "hidden":
            self.hidden = max(0, self.hidden - 1)
        elif kind == "block":
            self.parts.append(" ")
        self._style_edge(tag, end=True)
        self._leave(tag)

    def _style_edge(self, tag: str, end: bool = False) -> None:
        """Marks where a style or a script starts or ends (`end`), for `_edge_as_text`; an end tag that closes
        nothing marks nothing."""
        local = tag.rpartition(":")[2]
        edge = STYLE_EDGE if local in STYLES else (SCRIPT_END if end else SCRIPT_START) if local in SCRIPTS else None
        if edge and local in self.open and self._reading():
            self.parts.append(edge)

    def _reading(self) -> bool:
        # Text inside a further notation of a formula is not read; text directly in the <alternatives> is no
        # notation (a truncated one's rest), so it is.
        return not self.hidden and not any(read and len(self.open) > place for place, read in self.alternatives)

    def handle_data(self, data: str) -> None:
        if self.open and self.open[-1] in MATH_LAYOUT and not data.strip():
            return  # a formula's layout, not its text (see MATH_LAYOUT)
        if self._reading():
            self.parts.append(data)

    def unknown_decl(self, data: str) -> None:  # <![CDATA[…]]>: its text
        if data.startswith("CDATA[") and not self.hidden:
            self.parts.append(data[len("CDATA["):])


# Punctuation a space follows but never precedes, and brackets a space precedes but never follows: a style that lost
# its spaces there parts them from the word beside them as it parts two words ("at<i>TERT</i>(linkage",
# "mice;<i>in vivo</i>", "<i>S.</i><i>aureus</i>"), after the punctuation only before a letter ("0.<i>05</i>" is a
# number). Quotes, hyphens, slashes and apostrophes go either way ("<i>E. coli</i>'s", "c-<i>fos</i>"), so does a
# comma between a chemical name's locants ("<i>N</i>,<i>N</i>-dimethyl"), and a space never follows an opening
# bracket or precedes a closing one ("(<i>n</i> = 5)"): no space there.
CLOSING = frozenset(")]};:!?.")
OPENING = frozenset("([{")


def _edge_as_text(edges: re.Match[str]) -> str:
    """A run of style and script edges in the text read as what it is in the text: a space where a style starts or
    ends between two words, or between a word and the punctuation on the side a space goes (CLOSING, OPENING),
    nothing elsewhere (see STYLES)."""
    run, text = edges.group(), edges.string
    before, after = text[edges.start() - 1:edges.start()], text[edges.end():edges.end() + 1]
    after_a_word = SCRIPT_END in run or WORD_CHARACTER.match(before) is not None
    before_a_word = WORD_CHARACTER.match(after) is not None
    # A number and one letter set in a style after it are one word: a chemical name's locant or configuration
    # ("1<i>H</i>-indole", "17<i>β</i>-estradiol", "(2<i>R</i>,3<i>S</i>)"), not two words the style parts.
    locant = before.isdigit() and after.isalpha() and EDGES.match(text, edges.end() + 1) is not None
    parted = (after_a_word and (before_a_word or after in OPENING)) or (before in CLOSING and after.isalpha())
    return " " if STYLE_EDGE in run and SCRIPT_START not in run and parted and not locant else ""


# An underlined comparison sign is a typewriter's ≤ or ≥, as publishers send them to PubMed ("normal TSH
# (0.4-<u>&lt;</u>4.5 mIU/L)"): its underline dropped, the range read a different one.
UNDERLINED_COMPARISON = re.compile(r"<((?:jats:)?(?:u|underline))>\s*(&lt;|&gt;)\s*</\1>", re.IGNORECASE)
AT_MOST_OR_LEAST = {"&lt;": "≤", "&gt;": "≥"}


def _once(text: str) -> str:
    text = CONTROL_CHARACTER.sub(" ", text)
    text = UNDERLINED_COMPARISON.sub(lambda sign: AT_MOST_OR_LEAST[sign.group(2).lower()], text)
    text = _unpaired_as_text(text)
    parser = _Text()
    parser.feed(text)
    parser.close()
    if parser.hidden:
        # An element hiding its content that never closes is no markup but a title naming one ("The <script>
        # element in HTML5", escaped by its source): hidden, it would take every word after it.
        parser = _Text(hiding=False)
        parser.feed(text)
        parser.close()
    text = EDGES.sub(_edge_as_text, "".join(parser.parts))
    # An entity can name what no record may hold (&#x85;, &#xFFFE;): as good as a space.
    return " ".join(CONTROL_CHARACTER.sub(" ", text).split())


def plain_text(markup: Any) -> str | None:
    """The text of a title, container or abstract with its markup and entities resolved, whitespace collapsed;
    None when it is not text or holds none a reader can see (a zero-width space or a byte-order mark alone is
    no title: the record format refuses it). Escaped markup ("&lt;i&gt;") is markup too: a second pass reads
    what the first unescaped."""
    if not isinstance(markup, str):
        return None
    if "<" not in markup and "&" not in markup:  # no tag and no entity: what the parser would give, at once
        text = " ".join(CONTROL_CHARACTER.sub(" ", markup).split())
    else:
        text = _once(markup)
        if text != " ".join(markup.split()):
            text = _once(text)
    return text if visible_text(text) else None


# A section heading in an abstract as Europe PMC sends it ("<h4>Objective</h4>This study..."), and as Crossref's JATS
# does ("<jats:title>Background</jats:title>"); exports of either keep them.
HTML_HEADING = re.compile(r"<h[1-6]\b[^>]*>(.*?)</h[1-6]\s*>", re.IGNORECASE | re.DOTALL)
JATS_TITLE = re.compile(r"<(?:jats:)?title\b[^>]*>(.*?)</(?:jats:)?title>", re.IGNORECASE | re.DOTALL)


# "Abstract" heading an abstract: no part of its text.
_ABSTRACT_HEADING = re.compile(r"\W*abstract\W*", re.IGNORECASE)


def labelled_sections(markup: Any, heading: re.Pattern[str]) -> Any:
    """A structured abstract's markup with each section's heading (`heading`, its text the first group) made the
    label of the part it heads, as PubMed writes one ("Background: ..."); a leading "Abstract" is dropped. Left
    without its headings, the label ran into the text ("Objective This study...")."""
    if not isinstance(markup, str):
        return markup
    first = heading.search(markup)
    if first is None:
        return markup
    if _ABSTRACT_HEADING.fullmatch(plain_text(first.group(1)) or "") and not plain_text(markup[:first.start()]):
        markup = markup[first.end():]
    return heading.sub(lambda title: f" {text.rstrip(':.').strip()}: "
                       if (text := plain_text(title.group(1))) else " ", markup)
