"""What crosses the boundary to each provider, for every kind of call sitegen makes (searches, single-work
lookups, full text, citation discovery, registration-agency checks): each credential reaches only the
provider it belongs to, nothing is sent to a host outside a provider's list, and every call waits its turn.

A literature workspace sent its OpenAlex key to Europe PMC on one search path, and metered its list searches
but not its single-work lookups; these tests hold every path of every provider to the same rules at once.
"""

from __future__ import annotations

import httpx
import pytest
from http_mocks import fetcher

from sitegen.sources import arxiv, crossref, europepmc, openalex, pubmed
from sitegen.sources.settings import SourceSettings

# Every credential sitegen knows of, all set at once.
EVERYTHING = SourceSettings(contact_email="team@example.org", openalex_api_key="oa-secret-key",
                            ncbi_api_key="ncbi-secret-key", crossref_plus_token="crossref-secret-token")
CONTACT = "team@example.org"
# What each provider's host may receive: its own key and, for the polite pools, the contact address.
OWN = {
    "api.openalex.org": {"oa-secret-key", CONTACT},
    "eutils.ncbi.nlm.nih.gov": {"ncbi-secret-key", CONTACT},
    "api.crossref.org": {"crossref-secret-token", CONTACT},
    "www.ebi.ac.uk": set(),
    "export.arxiv.org": set(),
}
SECRETS = {"oa-secret-key", "ncbi-secret-key", "crossref-secret-token", CONTACT}

# Every kind of call, per provider module, as the commands make them (settings given).
CALLS = {
    "openalex": [lambda f, s: openalex.search(f, s, {"search": "cancer"}),
                 lambda f, s: openalex.semantic_shortlist(f, s, "cancer in mice"),
                 lambda f, s: openalex.lookup(f, s, "10.1023/a:1007154515475"),
                 lambda f, s: openalex.works_by_ids(f, s, ["W2741809807"]),
                 lambda f, s: openalex.citing(f, s, "W2741809807")],
    "europepmc": [lambda f, s: europepmc.search(f, s, "cancer"),
                  lambda f, s: europepmc.lookup(f, s, "10.1016/s0140-6736(24)02600-x"),
                  lambda f, s: europepmc.pmcid_for(f, s, "29768149"),
                  lambda f, s: europepmc.fulltext(f, s, "PMC12124214")],
    "pubmed": [lambda f, s: pubmed.search(f, s, "cancer"),
               lambda f, s: pubmed.lookup(f, s, "29768149")],
    "crossref": [lambda f, s: crossref.search(f, s, {"query.bibliographic": "widget"}),
                 lambda f, s: crossref.lookup(f, s, "10.1371/journal.pone.0033693"),
                 lambda f, s: crossref.agency(f, s, "10.1371/journal.pone.0033693")],
    "arxiv": [lambda f, s: arxiv.search(f, s, "all:testing"),
              lambda f, s: arxiv.lookup(f, s, "1605.08386")],
}


def refused(request: httpx.Request) -> httpx.Response:
    """A refusal no call retries: each call sends its first request and stops, whatever it expected back."""
    return httpx.Response(400, text="bad request")


def sent(request: httpx.Request) -> str:
    return " ".join([str(request.url), request.content.decode("utf-8", "replace"),
                     *(f"{name}: {value}" for name, value in request.headers.items())])


@pytest.mark.parametrize("provider", sorted(CALLS))
def test_every_call_sends_a_host_only_its_own_credentials(provider):
    fetch, seen, _ = fetcher(refused)
    with fetch:
        for call in CALLS[provider]:
            call(fetch, EVERYTHING)
    assert len(seen.requests) >= len(CALLS[provider])  # every kind of call was made
    for request in seen.requests:
        foreign = SECRETS - OWN[request.url.host]
        assert not [secret for secret in foreign if secret in sent(request)], (request.url.host, sent(request))


def test_an_address_outside_the_providers_hosts_is_refused_before_any_credential_is_sent():
    fetch, seen, _ = fetcher(refused)
    with fetch, pytest.raises(ValueError, match="is not an address sitegen may call for OpenAlex"):
        fetch.request(openalex.PROVIDER, "https://www.ebi.ac.uk/europepmc/webservices/rest/search",
                      [("query", "cancer")], openalex.secrets(EVERYTHING))
    assert seen.requests == []


@pytest.mark.parametrize("provider", sorted(CALLS))
def test_every_kind_of_call_to_a_provider_waits_its_turn(provider):
    # The interval between two requests to one provider holds across kinds of call (a lookup after a search,
    # full text after a lookup), not only between the pages of one search.
    times: list[float] = []
    fetch, _, clock = fetcher(lambda request: times.append(clock.now) or refused(request))
    interval = (pubmed.provider(EVERYTHING) if provider == "pubmed" else globals()[provider].PROVIDER).min_interval
    with fetch:
        for call in CALLS[provider]:
            call(fetch, EVERYTHING)
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    assert gaps and all(gap >= interval - 1e-9 for gap in gaps), gaps

