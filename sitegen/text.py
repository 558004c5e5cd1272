"""Text made safe for the places sitegen writes it outside HTML templates, and text as compared."""

from __future__ import annotations

import re
import unicodedata

from sitegen.records.model import CONTROL_CHARACTER


def markdown_safe(text: str) -> str:
    """One line of Markdown that shows `text` literally: no markup, links, tables or HTML."""
    # "@" as an entity too, so a record title cannot mention (notify) people in a pull request.
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "&#64;")
    for char in "\\`*_{}[]()#+-.!|~":
        escaped = escaped.replace(char, "\\" + char)
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
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()
