"""The bibliographic services sitegen knows: the one list every layer reads.

Names are the ids written in files (`review.yaml` sources, strategies, ledger
events); labels are what people read. The provider *code* (requests, paging,
parsing) lives in `sitegen.sources`; this registry holds only the facts that
records, the review folder and the site need without loading any of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# PRISMA 2020 counts records from bibliographic databases apart from those from study registers
# (such as ClinicalTrials.gov); every provider sitegen knows today is a database.
Kind = Literal["database", "register"]


@dataclass(frozen=True)
class ProviderInfo:
    name: str  # as written in files
    label: str  # as shown to people
    search_endpoint: str  # the only address a saved strategy's `endpoint` may name
    kind: Kind = "database"


# In the order sitegen lists them. Adding one here is the first step of adding a provider.
PROVIDERS: dict[str, ProviderInfo] = {info.name: info for info in (
    ProviderInfo("openalex", "OpenAlex", "https://api.openalex.org/works"),
    ProviderInfo("europepmc", "Europe PMC", "https://www.ebi.ac.uk/europepmc/webservices/rest/search"),
    ProviderInfo("pubmed", "PubMed", "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi"),
    ProviderInfo("crossref", "Crossref", "https://api.crossref.org/works"),
    ProviderInfo("arxiv", "arXiv", "https://export.arxiv.org/api/query"),
)}
SOURCES = tuple(PROVIDERS)
# pydantic needs the names as a Literal type; it lists exactly the registry's names (a test checks).
Source = Literal["openalex", "europepmc", "pubmed", "crossref", "arxiv"]

# When records of one work are merged, the curated bibliographic databases' metadata comes first.
MERGE_PRIORITY = ("pubmed", "europepmc", "crossref", "openalex", "arxiv")


def label(source: str) -> str:
    """The display name of a provider; any other source (one an imported file names) by its own name."""
    return PROVIDERS[source].label if source in PROVIDERS else source


def kind(source: str) -> Kind:
    """Whether a provider is a bibliographic database or a study register; a source outside the registry (one an
    imported export names) is taken for a database, the route PRISMA counts an import by when it is told so."""
    return PROVIDERS[source].kind if source in PROVIDERS else "database"
