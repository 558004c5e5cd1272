"""bench/make_review.py makes a review sitegen accepts, with what the issue asks of it: records from
several runs and a second source with overlapping identifiers, two reviewers, 2% included with evidence."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from sitegen.commands import build
from sitegen.workspace import open_review

ROOT = Path(__file__).resolve().parent.parent


def test_a_synthetic_review_is_valid_and_builds(tmp_path):
    review = tmp_path / "review"
    made = subprocess.run([sys.executable, str(ROOT / "bench" / "make_review.py"), "1000", "--out", str(review)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0, made.stderr
    workspace = open_review(review)  # every check passes
    records = workspace.review.records
    assert 1000 <= len(records) <= 1010  # the import's new entries are about 1% on top of the searched
    events = [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]
    assert sum(event["type"] == "retrieval" for event in events) == 5
    imported = next(event for event in events if event["type"] == "import")
    assert imported["payload"]["file"]["already"] > 0  # overlapping identifiers, merged on import
    reviewers = {path.stem for path in (review / "screening" / "title-abstract").glob("*.csv")}
    assert reviewers == {"reviewer-a", "reviewer-b", "adjudication"}
    included = workspace.facts.included
    assert 0.01 * len(records) <= len(included) <= 0.03 * len(records)
    assert len(list((review / "evidence").glob("*.yaml"))) == len(included)
    rows = list(csv.DictReader((review / "screening" / "title-abstract" / "reviewer-a.csv").open()))
    assert len(rows) < len(records)  # the latest batch is part screened
    result = build(review, tmp_path / "site", environ={})
    assert result.records == len(records)
