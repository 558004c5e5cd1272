"""Ranked batches, the weekly digest, and what the site shows of screening."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLE

from sitegen.commands import build


def test_rank_prints_the_screening_order(sitegen):
    # `screen rank` is the screening order now (tests/test_ranking.py); the seed-002 shape is the digest's.
    code, out, _ = sitegen("screen", "rank", EXAMPLE, "--batch", "2", "--json")
    assert code == 0
    order = json.loads(out)
    assert set(order) == {"method", "learned", "includes", "excludes", "rows"}
    assert order["rows"] == [] and order["learned"]  # every record of the example has its decision


def test_ranking_never_writes_a_decision(sitegen, tmp_path):
    import shutil

    from conftest import tree_bytes

    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    before = tree_bytes(review)
    sitegen("screen", "rank", review, "--batch", "1")
    sitegen("digest", review, "--week", "2023-W16")
    assert tree_bytes(review) == before


def test_weekly_digest_sections(sitegen, tmp_path):
    code, out, _ = sitegen("digest", EXAMPLE, "--week", "2023-W16", "--out", tmp_path / "digest.md")
    assert code == 0
    text = (tmp_path / "digest.md").read_text()
    for heading in ("# Weekly digest 2023-W16", "## Keep", "## Review", "## Dropped", "## Already covered",
                    "## Calibration"):
        assert heading in text
    assert "screening batch 2" in text
    code, out, _ = sitegen("digest", EXAMPLE, "--week", "2023-W02")
    assert code == 0 and "0 new records" in out
    code, _, err = sitegen("digest", EXAMPLE, "--week", "last week")
    assert code == 1 and "is not an ISO week" in err


def test_the_site_shows_screening_batches_and_digests(tmp_path):
    site = tmp_path / "site"
    build(EXAMPLE, site, environ={})
    home = (site / "index.html").read_text()
    assert 'href="digests/2023-W16.html"' in home and 'href="screening.html"' in home
    screening = (site / "screening.html").read_text()
    assert "Kappa (95% CI)" in screening and "0.90 (0.83 to 0.97)" in screening
    assert "1 conflict</strong> awaits adjudication" in screening
    batch = (site / "batches" / "2.html").read_text()
    assert "screened under protocol version 2" in batch and "The ranking decides nothing" in batch
    assert (site / "digests" / "2023-W16.html").is_file() and (site / "downloads" / "digest-2023-W16.md").is_file()
    protocol = (site / "protocol.html").read_text()
    assert "Lock and amendments" in protocol and "Genetically modified rodents" in protocol


@pytest.mark.parametrize("week", ["2026-02", "2026-13-1", "26-W02", "2026-W54"])
def test_a_week_that_is_no_iso_week_is_refused(week):
    # "2026-02" reads as February as much as week 2: only YYYY-Www (or ISO's basic YYYYWww) is a week.
    from sitegen.errors import SitegenError
    from sitegen.screening.digest import week_start
    with pytest.raises(SitegenError, match="is not an ISO week such as 2026-W23"):
        week_start(week)
    assert week_start("2026W02") == week_start("2026-W02")
