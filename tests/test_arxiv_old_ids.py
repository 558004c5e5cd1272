"""Old-style arXiv identifiers (before April 2007: archive, optional subject class, YYMMNNN) read wherever an arXiv
id is read: the ids module, the arXiv provider, reference imports, identity matching, the site's links. Each keeps
the archive in lower case and the subject class as arXiv writes it, drops the version as a new-style id does, and
never makes two papers one."""

from __future__ import annotations

import pytest

from sitegen.living.merge import integrate
from sitegen.records.identity import deduplicate
from sitegen.records.ids import (
    arxiv_address,
    arxiv_of_doi,
    arxiv_paper,
    normalise_arxiv,
    normalise_doi,
    parse_record_id,
    record_id_problem,
)
from sitegen.records.matching import conflict, record_work
from sitegen.records.model import Record, RecordMeta
from sitegen.references.bibtex import read_bibtex
from sitegen.references.records import entry_record
from sitegen.references.ris import read_ris

# (written, the id) for both styles, bare, prefixed, versioned, as addresses and in other cases.
WRITTEN = [
    ("hep-th/9901001", "hep-th/9901001"),
    ("hep-th/9901001v3", "hep-th/9901001"),
    ("arXiv:hep-th/9901001", "hep-th/9901001"),
    ("Hep-Th/9901001V2", "hep-th/9901001"),
    ("math.GT/0309136", "math.GT/0309136"),
    ("math.GT/0309136v2", "math.GT/0309136"),
    ("arXiv:math.GT/0309136v1", "math.GT/0309136"),
    ("math.gt/0309136", "math.GT/0309136"),
    ("MATH.GT/0309136", "math.GT/0309136"),
    ("cs.AI/0101001", "cs.AI/0101001"),
    ("cond-mat/0102536v2", "cond-mat/0102536"),
    ("arXiv:cond-mat/0102536v2", "cond-mat/0102536"),
    ("https://arxiv.org/abs/cond-mat/0102536v2", "cond-mat/0102536"),
    ("https://arxiv.org/pdf/math.GT/0309136v2.pdf", "math.GT/0309136"),
    ("10.48550/arXiv.math/0309136", "math/0309136"),
    ("2101.00001", "2101.00001"),
    ("arXiv:2101.00001v2", "2101.00001"),
    ("0704.0001V1", "0704.0001"),
    ("https://arxiv.org/abs/1605.08386v1", "1605.08386"),
]


@pytest.mark.parametrize(("written", "expected"), WRITTEN)
def test_both_styles_are_read_without_version_and_with_the_subject_class_as_arxiv_writes_it(written, expected):
    assert normalise_arxiv(written) == expected
    assert normalise_arxiv(expected) == expected  # its own normal form
    assert parse_record_id(f"arxiv:{expected}") == ("arxiv", expected)
    assert record_id_problem(f"arxiv:{expected}") is None
    assert normalise_doi(written) is None or written.startswith("10.48550/")
    assert arxiv_address(written) == f"https://arxiv.org/abs/{expected}"


@pytest.mark.parametrize("written", ["hep-th/990100", "hep-th/99010011", "math.GTX/0309136", "-th/9901001",
                                     "hep-/9901001", "math./0309136", "2101.001", "arXiv:"])
def test_what_is_no_arxiv_id_is_none(written):
    assert normalise_arxiv(written) is None


# Pairs that are different papers: never one id.
DIFFERENT = [("hep-th/9901001", "hep-ph/9901001"), ("math.GT/0309136", "math.AG/0309137"),
             ("cond-mat/0102536", "cond-mat/0102537"), ("hep-th/9901001", "9901.0001"),
             ("math/0309136", "math-ph/0309136")]


@pytest.mark.parametrize(("one", "other"), DIFFERENT)
def test_two_papers_stay_two(one, other):
    assert normalise_arxiv(one) != normalise_arxiv(other)
    records = [Record(id=f"arxiv:{normalise_arxiv(arxiv)}", type="article", title=f"Paper {arxiv}",
                      custom=RecordMeta(arxiv=normalise_arxiv(arxiv), sources=["arxiv"])) for arxiv in (one, other)]
    assert len(deduplicate(records).records) == 2


def test_an_id_kept_lower_cased_by_an_earlier_sitegen_stays_valid_and_is_the_same_paper():
    # Records written before the subject class kept its capitals hold math.gt/0309136: still a valid record (its id
    # is on the append-only ledger), the same paper as math.GT/0309136 when a provider returns it, linked as arXiv
    # writes it.
    assert parse_record_id("arxiv:math.gt/0309136") == ("arxiv", "math.gt/0309136")
    kept = Record(id="arxiv:math.gt/0309136", type="article", title="Knots",
                  custom=RecordMeta(arxiv="math.gt/0309136", sources=["arxiv"]))
    found = Record(id="arxiv:math.GT/0309136", type="article", title="Knots",
                   custom=RecordMeta(arxiv="math.GT/0309136", sources=["openalex"]))
    assert len(deduplicate([kept, found]).records) == 1
    merged = integrate({kept.id: kept}, [found])
    assert list(merged.records) == [kept.id] and merged.ids == [kept.id]  # its id, once chosen, never changes
    assert arxiv_address("math.gt/0309136") == "https://arxiv.org/abs/math.GT/0309136"
    assert parse_record_id("arxiv:Math.gt/0309136") is None  # no form any sitegen wrote


def test_an_arxiv_doi_names_the_old_style_id():
    assert arxiv_of_doi("https://doi.org/10.48550/arXiv.hep-th/9901001") == "hep-th/9901001"
    assert arxiv_of_doi("10.48550/ARXIV.MATH.GT/0309136") == "math.GT/0309136"


@pytest.mark.parametrize(("written", "expected"), [("math.GT/0309136v2", "math.GT/0309136"),
                                                   ("hep-th/9901001v1", "hep-th/9901001"),
                                                   ("cond-mat/0102536v2", "cond-mat/0102536")])
def test_imports_read_old_style_ids(written, expected):
    bib = read_bibtex("@article{k,\n  title = {A paper},\n  eprint = {" + written + "},\n"
                      "  archivePrefix = {arXiv}\n}\n")
    scholar = read_bibtex("@article{k,\n  title = {A paper},\n  journal = {arXiv preprint arXiv:" + written + "}\n}\n")
    ris = read_ris(f"TY  - JOUR\nTI  - A paper\nUR  - https://arxiv.org/abs/{written}\nER  - \n")
    for entries in (bib, scholar, ris):
        [entry] = entries
        record = entry_record(entry)
        assert record.custom.arxiv == expected and record.id == f"arxiv:{expected}"


@pytest.mark.parametrize("other", ["math/0309136", "math.gt/0309136", "arXiv:math/0309136v3"])
def test_an_old_style_id_names_one_paper_with_or_without_its_subject_class(other):
    # arXiv's API and most indexes give math/0309136; a citation copied from a listing gives math.GT/0309136. The
    # class is a listing's, the number unique within its archive: one paper, merged, and no conflict for the matcher.
    cited = Record(id="arxiv:math.GT/0309136", type="article", title="Knots in three-manifolds",
                   custom=RecordMeta(arxiv="math.GT/0309136", sources=["openalex"]))
    arxiv = normalise_arxiv(other)
    found = Record(id=f"arxiv:{arxiv}", type="article", title="Knots in three-manifolds",
                   custom=RecordMeta(arxiv=arxiv, sources=["arxiv"]))
    assert len(deduplicate([cited, found]).records) == 1
    assert conflict(record_work(cited), record_work(found)) is None
    assert arxiv_paper(other) == arxiv_paper("math.GT/0309136") == "math/0309136"
    assert arxiv_paper("math.GT/0309136") != arxiv_paper("math-ph/0309136")
    assert arxiv_paper("2101.00001v2") == "2101.00001" and arxiv_paper("no id") is None
