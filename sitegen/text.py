"""Text made safe for the places sitegen writes it outside HTML templates."""

from __future__ import annotations


def markdown_safe(text: str) -> str:
    """One line of Markdown that shows `text` literally: no markup, links, tables or HTML."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for char in "\\`*_{}[]()#+-.!|~":
        escaped = escaped.replace(char, "\\" + char)
    return " ".join(escaped.split())
