"""Preprints, told apart from journal articles by DOI, publication type or the server that holds them.

A preprint and its journal version are two records of one study (seed 002's journal-version rule): the
matcher links them as versions and never merges them, and the digest scores a journal version of a
preprint it covered before as such.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# DOI prefixes of preprint servers: arXiv, Research Square, SSRN, Preprints.org.
PREPRINT_DOI_PREFIXES = ("10.48550/", "10.21203/", "10.2139/", "10.20944/")
# bioRxiv and medRxiv share 10.1101 with Cold Spring Harbor's journals (10.1101/lm.…, 10.1101/gr.…):
# only their dated (2019.12.11.123456) or plain six-digit suffixes are preprints.
BIORXIV_DOI = re.compile(r"^10\.1101/(?:\d{4}\.\d{2}\.\d{2}\.)?\d{6,}(?:v\d+)?$")
PREPRINT_TYPES = frozenset({"preprint", "posted-content"})
# Servers as exports name them in the journal field.
PREPRINT_SERVERS = re.compile(r"^\s*(?:biorxiv|medrxiv|arxiv|chemrxiv|psyarxiv|socarxiv|osf preprints|ssrn"
                              r"|research square|preprints(?:\.org)?|zenodo)\b", re.IGNORECASE)


# The label a database gives a preprint's title ("[Preprint] ...", "... (Preprint)", PubMed's and Europe PMC's
# records of preprints): the database says what the record is.
PREPRINT_LABEL = re.compile(r"[\[(]\s*preprint\s*[\])]", re.IGNORECASE)


def is_preprint(doi: str | None, publication_types: Iterable[str] = (), container: str | None = None,
                arxiv: str | None = None, title: str | None = None) -> bool:
    doi = doi or ""
    # An arXiv id beside a journal's DOI (an ADS or INSPIRE export's eprint) names the article's preprint, another
    # record of the study: the DOI says what this record is. An arXiv id alone is the preprint's own.
    return (doi.startswith(PREPRINT_DOI_PREFIXES) or BIORXIV_DOI.match(doi) is not None or bool(arxiv and not doi)
            or any(" ".join(kind.casefold().split()) in PREPRINT_TYPES for kind in publication_types)
            or bool(container and PREPRINT_SERVERS.match(container))
            or bool(title and PREPRINT_LABEL.search(title)))
