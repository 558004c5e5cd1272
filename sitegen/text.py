"""Text made safe for the places sitegen writes it outside HTML templates."""

from __future__ import annotations


def markdown_safe(text: str) -> str:
    """One line of Markdown that shows `text` literally: no markup, links, tables or HTML."""
    # "@" as an entity too, so a record title cannot mention (notify) people in a pull request.
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "&#64;")
    for char in "\\`*_{}[]()#+-.!|~":
        escaped = escaped.replace(char, "\\" + char)
    return " ".join(escaped.split())
