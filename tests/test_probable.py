"""Probable duplicates on real review searches with hand-identified duplicate sets (bib-dedupe data)."""

from __future__ import annotations

import csv
import itertools

from conftest import EXAMPLE, FIXTURES

from sitegen.records.probable import Candidate, normalise_title, probable_duplicates, surname


def load(name: str) -> tuple[list[Candidate], set[frozenset[str]]]:
    folder = FIXTURES / "dedupe" / name
    with open(folder / "records_pre_merged.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    candidates = [Candidate(row["ID"], normalise_title(row["title"]), surname(row["author"].split(" and ")[0]),
                            int(row["year"]) if row["year"].isdecimal() else None) for row in rows]
    with open(folder / "merged_record_ids.csv", newline="", encoding="utf-8") as handle:
        truth = {frozenset(pair) for row in csv.DictReader(handle)
                 for pair in itertools.combinations(row["merged_ids"].split(";"), 2)}
    return candidates, truth


def test_finds_most_true_duplicates_and_few_false_ones():
    candidates, truth = load("stroke")
    found = {frozenset((p.first, p.second)) for p in probable_duplicates(candidates)}
    precision = len(found & truth) / len(found)
    recall = len(found & truth) / len(truth)
    assert precision > 0.9 and recall > 0.9, (precision, recall)


def test_surnames_in_the_forms_sources_write_them():
    assert surname("Bouton, Mark E.") == surname("Mark E. Bouton") == surname("Bouton ME") == "bouton"
    assert surname("Adeli K.") == "adeli"
    assert normalise_title("Effect of  Simvastatin: a Trial!") == "effect of simvastatin a trial"


def test_the_command_lists_pairs_without_changing_anything(sitegen):
    code, out, _ = sitegen("probable-duplicates", EXAMPLE, "--json")
    assert code == 0 and out.strip() == "[]"  # the example's records are all different works
