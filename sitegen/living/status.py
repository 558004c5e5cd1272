"""Read-only views of a review for the CLI: saved searches, probable duplicates."""

from __future__ import annotations

from pathlib import Path

from sitegen.errors import SitegenError
from sitegen.records.model import Record
from sitegen.records.probable import ProbablePair, candidate, probable_duplicates
from sitegen.review.check import load_valid_review
from sitegen.review.models import SavedSearch


def saved_searches(root: Path, monitor_id: str | None = None) -> list[SavedSearch]:
    review = load_valid_review(root)
    if monitor_id is None:
        return list(review.searches.values())
    if monitor_id not in review.searches:
        known = ", ".join(review.searches) or "none"
        raise SitegenError(f"no saved search {monitor_id!r} in {root} (saved searches: {known})")
    return [review.searches[monitor_id]]


def probable_pairs(root: Path, threshold: float) -> tuple[list[ProbablePair], dict[str, Record]]:
    """Candidate duplicate pairs among the review's records, for a reviewer to look at."""
    review = load_valid_review(root)
    return probable_duplicates([candidate(r) for r in review.records.values()], threshold), review.records
