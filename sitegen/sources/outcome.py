"""What one call to one provider produced, as a typed outcome.

A provider call never raises past the source boundary (except for programming
errors and a replay asked for a response that was never recorded): it returns
an outcome. Only `ok` is a complete answer; every other status means the
source's slice of the results is unknown this run, never "nothing found".
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from sitegen.records.model import Record
from sitegen.records.providers import Source
from sitegen.review.models import SourceStatus as Status


class SourceOutcome(BaseModel):
    source: Source
    status: Status
    records: list[Record] = Field(default_factory=list)
    # The provider's own count of matches; a citation search's is the distinct works its seeds lead to, None
    # when unknown (see sitegen.sources.openalex.citation_search).
    total: int | None = None
    warnings: list[str] = Field(default_factory=list)
    executed_query: list[str] = Field(default_factory=list)  # every request, without credentials
    snapshot_hashes: list[str] = Field(default_factory=list)
    retry_after: float | None = None
    # More matches than sitegen was allowed to read (max_records, or a provider's own ceiling):
    # the records are real but not all of them, so the slice is incomplete.
    truncated: bool = False
    # Identified works the provider sent that could not be read as records: they exist, sitegen
    # lost them, so the slice is incomplete (never "no new records") until a human looks.
    dropped: int = 0
    # Why an answer that looks whole cannot be taken as whole (e.g. it contradicts the source's last run).
    doubt: str | None = None
    # The work an exact lookup was answered with in place of the one asked for (OpenAlex merged the two, or
    # reassigned an id): never among `records`, as it is not the work asked for, but what the source gave, for a
    # caller to judge (sitegen.verify.identity); `doubt` says so.
    instead: Record | None = Field(default=None, exclude=True)
    # Why a call failed, in words, for a sentence that names the source and what happened already: the last
    # warning without "<label> <what happened>: " where it says so, else the whole warning. Set where the failure
    # is recorded (sitegen.sources.base.run_call); kept out of what is printed as JSON, which has the warning.
    cause: str | None = Field(default=None, exclude=True)

    @property
    def complete(self) -> bool:
        return self.status == "ok" and not self.truncated and not self.dropped and self.doubt is None
