"""What the `sitegen` program's process holds until it ends (`cli.main` ends it at once, without freeing it).

Freeing a review's objects one by one (a million at 100,000 records) took a third of a second at the end of
every command; ended with the process, they cost nothing. Only the program sets `held`: a library caller's
reviews are freed as usual.
"""

from __future__ import annotations

held: list[object] | None = None


def hold_to_exit(value: object | None) -> None:
    """Hold `value` (the review read last; None: hold nothing) to the end of the program's process. Only the
    last: a command that reads its review again must not hold two."""
    if held is not None:
        held[:] = [] if value is None else [value]
