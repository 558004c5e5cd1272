"""Tags as sitegen reads them: which "<...>" in a title or an abstract is markup and which is text.

Providers and exports write markup of HTML, JATS and MathML in titles and abstracts, and science writes "<" and ">"
as signs ("p<0.05", "<or=", "x<y>z"). Only a known element's tag, written as markup is, is markup, and only where it
marks something up; `markup.plain_text` (a record's text) and `titles.unmarked` (titles as the matchers compare them)
both read tags by this one rule. Pure, and a leaf: the record model imports the modules that import this one.
"""

from __future__ import annotations

import re

# Inline markup of HTML, JATS and MathML: dropped without a trace, its text kept.
INLINE = frozenset({
    "a", "abbr", "b", "big", "bold", "cite", "code", "del", "dfn", "em", "email", "ext-link", "font", "i", "ins",
    "inf", "inline-formula", "inline-graphic", "italic", "kbd", "mark", "monospace", "named-content", "nobr",
    "overline",
    "q", "roman", "s", "samp", "sans-serif", "sc", "small", "small-caps", "span", "strike", "strong",
    "styled-content", "sub", "sup", "tt", "u", "underline", "uri", "var", "wbr", "xref",
    "math", "mi", "mn", "mo", "ms", "mtext", "mrow", "msub", "msup", "msubsup", "mfrac", "msqrt", "mroot",
    "mover", "munder", "munderover", "mstyle", "mspace", "semantics", "tex-math", "mfenced", "mtable", "mpadded", "menclose", "mphantom", "mglyph", "mmultiscripts", "mprescripts", "merror",
    "maction", "scp", "ovl", "alternatives",
})

# Blocks: each ends a run of text, so "Background</title><p>Rats" reads "Background Rats".
BLOCKS = frozenset({
    "abstract", "blockquote", "body", "br", "break", "caption", "dd", "disp-formula", "div", "dl", "dt", "h1",
    "h2", "h3", "h4", "h5", "h6", "hr", "label", "li", "list", "list-item", "ol", "p", "sec", "table", "td",
    "th", "title", "tr", "ul", "mtr", "mtd", "mlabeledtr",  # MathML's table rows and cells too
})

# Their content is no text, or text said once already: MathML's annotations of a formula (its TeX).
HIDDEN = frozenset({"script", "style", "annotation", "annotation-xml"})
VOID = frozenset({"br", "hr", "wbr", "break", "mspace", "mglyph", "inline-graphic", "graphic", "img"})  # no end tag
NAMESPACES = frozenset({"jats", "mml", "m", "xhtml", "html"})  # a prefixed tag of these is markup whatever its name
# HTML's elements whose end tag may be left out ("<p>one<p>two"): one without its end tag is markup still.
END_OPTIONAL = frozenset({"p", "li", "dt", "dd", "tr", "td", "th"})
_NAMES = "|".join(sorted(INLINE | BLOCKS | HIDDEN | VOID, key=len, reverse=True))
# A tag as markup is written: a known element's name (or any name of a markup namespace), then attributes each with
# a value. "p <or= 0.05", "x<y>z" and "ASA class <I and >III" hold none.
TAG = re.compile(rf"<(?P<end>/)?(?P<name>(?:(?:{'|'.join(NAMESPACES)}):)?(?:{_NAMES})(?![\w:.-])"
                 rf"|(?:{'|'.join(NAMESPACES)}):[A-Za-z][\w.-]*)"
                 r"(?(end)\s*|(?:\s+[A-Za-z_:][\w:.-]*\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'<>`]+))*\s*/?)>",
                 re.IGNORECASE)


def markup_tags(text: str) -> list[re.Match[str]]:
    """The tags of `text` that are markup, in order: a known element's (`TAG`) whose other half is there too (its
    end tag after it, its start tag before), or needs none (a void element, one closed in itself, a paragraph). A
    tag without its other half is markup still where it touches text or markup (a title cut short by an export's
    limit: "Effect of <i>Lactobacillus"); standing apart as a word of its own, it marks up nothing and is text
    ("a <b> c", "a </b> c"): read as a tag, that word would be lost, and a text read once would lose it again
    on each reading of it (a double-escaped "a &amp;lt;b&amp;gt; c" is read "a <b> c", and that read back "a c")."""
    tags = list(TAG.finditer(text)) if "<" in text else []
    unpaired: set[int] = set()
    starts: dict[str, list[int]] = {}
    for number, tag in enumerate(tags):
        local = tag.group("name").lower().rpartition(":")[2]
        if local in VOID or tag.group().endswith("/>"):
            continue
        if not tag.group("end"):
            starts.setdefault(local, []).append(number)
        elif starts.get(local):
            starts[local].pop()
        else:
            unpaired.add(number)
    unpaired.update(number for local, open_ in starts.items() if local not in END_OPTIONAL for number in open_)
    return [tag for number, tag in enumerate(tags) if number not in unpaired or not _stands_apart(tag)]


def _stands_apart(tag: re.Match[str]) -> bool:
    """Whether a tag stands as a word of its own: whitespace (or the text's edge) on both sides of it."""
    text = tag.string
    return text[tag.start() - 1:tag.start()].strip() == "" and text[tag.end():tag.end() + 1].strip() == ""
