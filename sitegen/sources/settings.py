"""Provider settings: contact address, keys and limits, read from the environment.

Credentials are never read from the review folder (it is public and in Git) and
never written anywhere: they live in environment variables, e.g. repository
secrets in GitHub Actions.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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


class SourceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contact_email: str | None = Field(None, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
                                      description="sent to OpenAlex, Crossref and NCBI as their polite-pool contact")
    # Keys are at least 8 characters: a shorter value is a mistake, and redacting it from
    # responses would mangle them.
    openalex_api_key: str | None = Field(None, min_length=8)
    # OpenAlex documents `api_key` as a query parameter (required since February 2026);
    # "header" sends it as `Authorization: Bearer` instead, should their rules change again.
    openalex_key_in: Literal["query", "header"] = "query"
    openalex_per_page: int = Field(100, ge=1, le=200)  # the documented maximum has been 200 and 100
    ncbi_api_key: str | None = Field(None, min_length=8)
    crossref_plus_token: str | None = Field(None, min_length=8)
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
            raise SitegenError(f"environment variable {variable}: {first['msg']}") from None
