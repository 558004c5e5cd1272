"""A draft manuscript (Markdown and a BibTeX file) and the evidence loop around it (seed 001).

`claims.py` reads the draft deterministically: its sentences with their locations, the citations each
makes, and which sentences state a finding without citing anything. `loop.py` runs a round: citation
verification of every BibTeX entry (through `sitegen.verify`), the claim check, targeted searches for
each problem, and the round's files; it applies only what a confirmation file accepts.

Above `sources/`, `records/`, `references/`, `review/` and `verify/`; nothing below imports it.
"""
