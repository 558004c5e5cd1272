"""Provider settings: contact address, keys and limits, read from the environment.

Credentials are never read from the review folder (it is public and in Git) and
never written anywhere: they live in environment variables, e.g. repository
secrets in GitHub Actions.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from sitegen.errors import SitegenError

ENVIRONMENT = {
    "contact_email": "SITEGEN_CONTACT_EMAIL",
    "openalex_api_key": "OPENALEX_API_KEY",
    "openalex_key_in": "SITEGEN_OPENALEX_KEY_IN",
    "openalex_per_page": "SITEGEN_OPENALEX_PER_PAGE",
    "ncbi_api_key": "NCBI_API_KEY",
    "crossref_plus_token": "CROSSREF_PLUS_TOKEN",
    "max_records": "SITEGEN_MAX_RECORDS",
}


def _one_word(value: str) -> str:
    if any(char.isspace() or not char.isprintable() for char in value):
        raise ValueError("holds a space, line break or other character no key or token has: set it again as the "
                         "provider gave it")
    return value


def _email(value: str) -> str:
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
        raise ValueError("is no e-mail address: set it to one the providers may write to about your requests, "
                         "such as you@example.org, or leave it unset")
    return value


# A key or token as set: a secret pasted with its line's end ("KEY\n") is the key, the white space around it dropped.
# Kept, it would be sent with the key, and a provider echoing the key without it would have the key written unredacted
# (redaction looks for the value as given). White space or a control character inside is no key's: refused, unshown.
Credential = Annotated[str, StringConstraints(strip_whitespace=True, min_length=8), AfterValidator(_one_word)]


def unset_key_note(sources: list[str], settings: SourceSettings, mode: str) -> str | None:
    """Said before a run asks a source whose key is not set: its refusal (HTTP 401) names the variable too, but
    only after the requests, and a newcomer's first run otherwise reads as an outage. Not recorded: a replay asks
    nothing, and is run without keys."""
    if "openalex" in sources and mode != "replay" and not settings.openalex_api_key:
        return (f"note: {ENVIRONMENT['openalex_api_key']} is not set; OpenAlex has required a key since February "
                "2026, so it will most likely refuse this run: set it to your OpenAlex key")
    return None


class SourceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contact_email: Annotated[str, AfterValidator(_email)] | None = Field(
        None, description="sent to OpenAlex, Crossref and NCBI as their polite-pool contact")
    # Keys are at least 8 characters: a shorter value is a mistake, and redacting it from
    # responses would mangle them.
    openalex_api_key: Credential | None = None
    # OpenAlex documents `api_key` as a query parameter (required since February 2026);
    # "header" sends it as `Authorization: Bearer` instead, should their rules change again.
    openalex_key_in: Literal["query", "header"] = "query"
    openalex_per_page: int = Field(100, ge=1, le=200)  # the documented maximum has been 200 and 100
    ncbi_api_key: Credential | None = None
    crossref_plus_token: Credential | None = None
    max_records: int = Field(10_000, ge=1, description="stop paging a search after this many records")

    @classmethod
    def from_environment(cls, environ: dict[str, str] | None = None) -> SourceSettings:
        environ = os.environ if environ is None else environ
        values = {name: environ[variable] for name, variable in ENVIRONMENT.items() if environ.get(variable)}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            variable = ENVIRONMENT.get(str(first["loc"][0]), str(first["loc"][0]))
            said = str(first["ctx"]["error"]) if first["type"] == "value_error" else first["msg"]  # not "Value error, "
            raise SitegenError(f"environment variable {variable}: {said}") from None
