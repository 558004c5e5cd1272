"""Identifier normalisation and the stable record id.

A record's id is its lower-cased DOI when it has one, otherwise a source-prefixed
native id, in the priority order doi > openalex > arxiv > pmid > pmcid. The
normalisers accept the forms providers actually send (URLs, prefixes, odd case)
and return None for anything that is not a well-formed identifier, so a bad
value never becomes a graph key or a record id.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

NAMESPACES = ("doi", "openalex", "arxiv", "pmid", "pmcid")  # record-id priority order
NAMESPACE_LABELS = {"doi": "DOI", "openalex": "OpenAlex", "arxiv": "arXiv", "pmid": "PMID", "pmcid": "PMCID"}

_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_PREFIXES = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/|(?:dx\.)?doi\.org/)", re.IGNORECASE)
_PMID_PREFIXES = re.compile(
    r"^(?:pmid:\s*|med-|https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/)", re.IGNORECASE
)
_PMCID_PREFIXES = re.compile(
    r"^(?:pmcid:\s*|pmc-|https?://(?:www\.)?(?:ncbi\.nlm\.nih\.gov/pmc/articles/|europepmc\.org/articles?/|"
    r"pmc\.ncbi\.nlm\.nih\.gov/articles/))",
    re.IGNORECASE,
)
_OPENALEX_PREFIXES = re.compile(r"^(?:openalex:|oax-|https?://(?:api\.)?openalex\.org/(?:works/)?)", re.IGNORECASE)
_ARXIV_PREFIXES = re.compile(r"^(?:arxiv:\s*|https?://(?:export\.)?arxiv\.org/(?:abs|pdf)/)", re.IGNORECASE)
_ARXIV_NEW = re.compile(r"^(\d{4}\.\d{4,5})(?:v\d+)?$")
_ARXIV_OLD = re.compile(r"^([a-z-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$")
_UNSAFE = re.compile(r"[\x00-\x20\x7f\\]")


def _clean(value: object) -> str:
    return str(value).strip() if value is not None else ""


def normalise_doi(value: object) -> str | None:
    text = _DOI_PREFIXES.sub("", _clean(value))
    text = unquote(text).strip().lower()
    if len(text) > 512 or not _DOI.match(text) or _has_unsafe_path(text):
        return None
    return text


def normalise_pmid(value: object) -> str | None:
    text = _PMID_PREFIXES.sub("", _clean(value)).rstrip("/")
    return text if re.fullmatch(r"[1-9]\d{0,11}", text) else None


def normalise_pmcid(value: object) -> str | None:
    text = _PMCID_PREFIXES.sub("", _clean(value)).rstrip("/").upper()
    if re.fullmatch(r"\d{1,10}", text):  # OpenAlex gives bare digits in its PMC URL
        text = "PMC" + text
    return text if re.fullmatch(r"PMC\d{1,10}", text) else None


def normalise_openalex(value: object) -> str | None:
    text = _OPENALEX_PREFIXES.sub("", _clean(value)).rstrip("/").upper()
    return text if re.fullmatch(r"W\d{1,12}", text) else None


def normalise_arxiv(value: object) -> str | None:
    """The version-less arXiv id: 2101.00001 or hep-th/9901001."""
    text = _ARXIV_PREFIXES.sub("", _clean(value)).rstrip("/")
    doi = _ARXIV_DOI.match(text.lower())
    if doi:
        text = doi.group(1)
    for pattern in (_ARXIV_NEW, _ARXIV_OLD):
        match = pattern.match(text)
        if match:
            return match.group(1).lower()
    return None


NORMALISERS = {
    "doi": normalise_doi,
    "openalex": normalise_openalex,
    "arxiv": normalise_arxiv,
    "pmid": normalise_pmid,
    "pmcid": normalise_pmcid,
}


def _has_unsafe_path(text: str) -> bool:
    # DOIs contain '/', so a record id can reach a path; '.' and '..' segments,
    # backslashes, whitespace and control characters never belong in one.
    if _UNSAFE.search(text):
        return True
    # Cheap test first: a "." or ".." segment needs a leading dot or one after a slash.
    if not (text.startswith(".") or "/." in text):
        return False
    return any(part in (".", "..") for part in text.split("/"))


def record_id(identifiers: dict[str, str | None]) -> str | None:
    """The stable record id for already-normalised identifiers, or None if there are none."""
    for namespace in NAMESPACES:
        value = identifiers.get(namespace)
        if value:
            return value if namespace == "doi" else f"{namespace}:{value}"
    return None


def parse_record_id(value: str) -> tuple[str, str] | None:
    """(namespace, identifier) for a well-formed record id, else None."""
    if ":" in value.split("/", 1)[0]:
        namespace, _, native = value.partition(":")
        if namespace in NORMALISERS and namespace != "doi" and NORMALISERS[namespace](native) == native:
            return namespace, native
        return None
    return ("doi", value) if normalise_doi(value) == value else None


def record_id_problem(value: str) -> str | None:
    """Why `value` is not a valid record id, or None when it is."""
    if not value:
        return "record id is empty"
    if _has_unsafe_path(value):
        return f"record id {value!r} contains path or control characters ('..', '\\', whitespace)"
    if parse_record_id(value) is None:
        return (f"record id {value!r} is not a lower-case DOI (10.xxxx/...) or a prefixed id "
                "(openalex:W…, arxiv:…, pmid:…, pmcid:PMC…)")
    return None
