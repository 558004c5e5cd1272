"""OpenAlex Work objects (real, from the SYNERGY dataset) become the example's records."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLE, FIXTURES

from sitegen.records.model import model_data
from sitegen.sources.base import Untitled
from sitegen.sources.openalex import abstract_from_inverted_index, work_to_record

WORKS = json.loads((FIXTURES / "openalex" / "synergy_sep2021_works_0_25.json").read_text())


def test_every_real_work_becomes_a_valid_record():
    records = [work_to_record(work) for work in WORKS]
    assert len(records) == 25 and all(records)
    first = records[0]
    assert first.id == "10.1037/0097-7403.9.3.248"
    assert first.custom.openalex == "W1979978981"
    assert first.PMID == "6886630"
    assert (first.author[0].family, first.author[0].given) == ("Bouton", "Mark E.")  # split from "Mark E. Bouton"
    assert first.year == 1983
    assert first.page == "248-265"


def test_parser_output_matches_the_committed_example():
    committed = {}
    for line in (EXAMPLE / "records.jsonl").read_text().splitlines():
        data = json.loads(line)
        committed[data["id"]] = data
    for work in WORKS:
        record = work_to_record(work)
        assert model_data(record) == committed[record.id]


def test_abstract_reconstruction():
    assert abstract_from_inverted_index({"world": [1], "Hello": [0], "again": [3], "hello": [2]}) == "Hello world hello again"
    assert abstract_from_inverted_index({}) is None
    assert abstract_from_inverted_index({"x": [10**9]}) is None  # absurd positions are not an abstract


def test_work_without_identifier_or_title_is_skipped():
    assert work_to_record({"title": "No ids"}) is None
    with pytest.raises(Untitled):
        work_to_record({"id": "https://openalex.org/W1", "title": None})


def test_an_author_openalex_could_not_resolve_keeps_the_name_the_work_printed():
    import copy

    work = copy.deepcopy(next(work for work in WORKS if len(work["authorships"]) >= 2))
    names = [a["author"]["display_name"] for a in work["authorships"]]
    work["authorships"][0]["author"]["display_name"] = None
    work["authorships"][0]["raw_author_name"] = "J. Q. Printed"
    authors = work_to_record(work).author
    assert len(authors) == len(names) and authors[0].display() == "Printed, J. Q."
    del work["authorships"][0]["raw_author_name"]
    assert len(work_to_record(work).author) == len(names) - 1  # no name at all: nothing to show
