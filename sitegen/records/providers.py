"""The bibliographic services sitegen knows: the one list every layer reads.

Names are the ids written in files (`review.yaml` sources, strategies, ledger
events); labels are what people read. The provider *code* (requests, paging,
parsing) lives in `sitegen.sources`; this registry holds only the facts that
records, the review folder and the site need without loading any of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# PRISMA 2020 counts records from bibliographic databases apart from those from study registers
# (such as ClinicalTrials.gov); every provider sitegen knows today is a database.
Kind = Literal["database", "register"]
# Study registers an imported export may name (none is a provider): their records count under "Registers".
# Named precisely, so that the Cochrane Central Register of Controlled Trials, a database of trial reports as
# PRISMA counts it, stays a database.
REGISTER_NAMES = re.compile(r"\b(?:clinicaltrials\.gov|ictrp|isrctn|anzctr|chictr|drks|ctri|ctis|prospero|"
                            r"trials? regist(?:er|ry)|registry platform)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ProviderInfo:
    name: str  # as written in files
    label: str  # as shown to people
    search_endpoint: str  # the only address a saved strategy's `endpoint` may name
    # Where the provider says what its data may be reused under: what it sends (abstracts above all) is mostly its
    # publishers' copyright, which the review's own licence does not cover. Every page names it for each source.
    terms: str
    # The identifier namespaces the provider files works under (its own ids for them): a work it returns again
    # under one of them is the work it returned before, whatever else it now says of it (a corrected DOI).
    own_ids: tuple[str, ...] = ()
    kind: Kind = "database"


# In the order sitegen lists them. Adding one here is the first step of adding a provider.
PROVIDERS: dict[str, ProviderInfo] = {info.name: info for info in (
    # OpenAlex files a preprint and its journal version under one W id, and arXiv's DOI names the journal version
    # of a preprint: under either, another DOI may be another report of the study, which the review must see as a
    # record of its own (identity decides: new, and a probable pair). A PMID or PMCID names one article.
    ProviderInfo("openalex", "OpenAlex", "https://api.openalex.org/works",
                 "https://help.openalex.org/hc/en-us/articles/24397285563671-About-the-data"),
    ProviderInfo("europepmc", "Europe PMC", "https://www.ebi.ac.uk/europepmc/webservices/rest/search",
                 "https://europepmc.org/Copyright", ("pmid", "pmcid")),
    ProviderInfo("pubmed", "PubMed", "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi",
                 "https://www.nlm.nih.gov/databases/download.html", ("pmid",)),
    ProviderInfo("crossref", "Crossref", "https://api.crossref.org/works",  # its id for a work is the DOI itself
                 "https://www.crossref.org/documentation/retrieve-metadata/rest-api/rest-api-metadata-license-information/"),
    ProviderInfo("arxiv", "arXiv", "https://export.arxiv.org/api/query", "https://info.arxiv.org/help/api/tou.html"),
)}
SOURCES = tuple(PROVIDERS)
# pydantic needs the names as a Literal type; it lists exactly the registry's names (a test checks).
Source = Literal["openalex", "europepmc", "pubmed", "crossref", "arxiv"]

# When records of one work are merged, the curated bibliographic databases' metadata comes first.
MERGE_PRIORITY = ("pubmed", "europepmc", "crossref", "openalex", "arxiv")
# The providers that give every work a full day, filling in what they do not know: OpenAlex's `publication_date` is
# "1983-07-01" for a work of July 1983, "2001-01-01" for one Crossref dates [2001, 2]. Its day 1 (and a month 1 before
# it) yields to another source of the work that stops before it or says otherwise (`identity.merged_issued`). Europe
# PMC fills in too, where its own record says so, and its provider keeps only what was given (`europepmc._issued`).
DATES_FILLED_IN = ("openalex",)


def label(source: str) -> str:
    """The display name of a provider; any other source (one an imported file names) by its own name."""
    return PROVIDERS[source].label if source in PROVIDERS else source


def terms(source: str) -> str:
    """Where a provider says what its data may be reused under."""
    return PROVIDERS[source].terms


def kind(source: str) -> Kind:
    """Whether a provider is a bibliographic database or a study register; a source outside the registry (one an
    imported export names) is a register when its name is one (REGISTER_NAMES), else a database."""
    if source in PROVIDERS:
        return PROVIDERS[source].kind
    return "register" if REGISTER_NAMES.search(source) else "database"
