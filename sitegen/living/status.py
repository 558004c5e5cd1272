"""`sitegen monitor status`: the saved searches as they are on disk."""

from __future__ import annotations

from pathlib import Path

from sitegen.errors import SitegenError
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
