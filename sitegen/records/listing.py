"""How a message lists values: the first few and how many more. A module of its own, importing nothing, so that
the review's cheapest checks (`sitegen.review.transaction`) list folders as every other message lists records."""

from __future__ import annotations


def listed(values: list[str], most: int = 5) -> str:
    """The first `most` values, comma-separated, and how many more there are."""
    shown = ", ".join(values[:most])
    return shown + (f" and {len(values) - most} more" if len(values) > most else "")
