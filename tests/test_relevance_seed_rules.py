"""Seed 002 (paper-relevance-filter), rule by rule: each test pins one rule of the seed with hand-made records,
beside tests/test_relevance.py's worked examples."""

from __future__ import annotations

import pytest
from test_relevance import ABSTRACT, PLM, PROTOCOL, paper, protocol

from sitegen.records.model import Record
from sitegen.review.models import Thresholds
from sitegen.screening.relevance import score_batch


def linked(record: Record, *others: Record) -> Record:
    """The record as the matcher leaves it when it links it to `others` as versions of one study."""
    return record.model_copy(update={"custom": record.custom.model_copy(
        update={"other_versions": sorted(other.id for other in others)})})


# --------------------------------------------------------------------------- axis 3: journal version of a preprint

PREPRINT_TITLE = "Zero-shot enzyme engineering with a protein language model"
JOURNAL_RETITLED = "Protein language models guide protein design of thermostable lipases without training data"


def test_a_journal_version_linked_to_a_covered_preprint_is_one_however_it_was_retitled():
    # Seed 002: novelty 0.5 "if a prior preprint version exists in prior_ids". Journals retitle preprints; the matcher
    # links the two (custom.other_versions), and that link, not the title alone, says the preprint is this paper's.
    preprint = paper(PREPRINT_TITLE, doi="10.1101/2025.03.01.600001", types=("posted-content",))
    journal = linked(paper(JOURNAL_RETITLED, ABSTRACT, ("Journal Article",), pmid="39000001"), preprint)
    [scored] = score_batch([journal], PROTOCOL, [preprint], covered_in={preprint.id: "2025-W10"}).decisions
    assert (scored.axes.novelty, scored.decision, scored.tags) == (0.5, "KEEP", [f"journal-version-of:{preprint.id}"])
    assert f"journal version of preprint {preprint.id} covered 2025-W10" in scored.rationale


def test_a_preprint_linked_to_a_covered_journal_version_is_not_novel_nor_forced_to_drop():
    journal = paper(JOURNAL_RETITLED, ABSTRACT, ("Journal Article",), pmid="39000001")
    preprint = linked(paper(PREPRINT_TITLE, ABSTRACT, ("posted-content",), doi="10.1101/2025.03.01.600001"), journal)
    [scored] = score_batch([preprint], PROTOCOL, [journal]).decisions
    assert (scored.axes.novelty, scored.tags) == (0.0, [f"version-of:{journal.id}"])
    assert scored.decision != "DROP" and f"another version of prior {journal.id}" in scored.rationale


def test_a_version_link_to_a_record_outside_the_prior_changes_nothing():
    preprint = paper(PREPRINT_TITLE, doi="10.1101/2025.03.01.600001", types=("posted-content",))
    journal = linked(paper(JOURNAL_RETITLED, ABSTRACT, ("Journal Article",), pmid="39000001"), preprint)
    assert score_batch([journal], PROTOCOL, []).decisions[0].axes.novelty == 1.0
    assert f"'{PLM}'" in score_batch([journal], PROTOCOL, []).decisions[0].rationale


# --------------------------------------------------------------------------- guardrail 2: no abstract, no KEEP


@pytest.mark.parametrize("abstract", ["No abstract available.", "[No abstract available]", "Abstract not available",
                                      "N/A", "—", "...", "ABSTRACT", " none "])
def test_an_abstract_that_only_stands_in_for_one_is_missing_so_never_kept(abstract):
    # Title alone: match 0.7 (title once) with weight 1, criteria 1.0 (protein design in the title), novel: 41.5 + 45 +
    # 10 = 87 on score. A placeholder is "an empty abstract", the seed's signal that something went wrong upstream.
    scored = score_batch([paper(f"A {PLM} for protein design of lipases", abstract)], PROTOCOL, []).decisions[0]
    assert (scored.score, scored.decision, scored.tags) == (87, "REVIEW", ["no-abstract"])


@pytest.mark.parametrize("abstract", [f"A {PLM} for protein design of lipases", f"A {PLM.upper()} for protein design "
                                      "of lipases.", f"A {PLM}: for protein-design of lipases"])
def test_an_abstract_that_only_repeats_the_title_is_missing_so_the_title_alone_never_decides(abstract):
    # Some sources fill the abstract with the title. Counted as an abstract, the title's terms would be "in the title
    # AND abstract" (match 1.0, 100) and KEEP on the title alone: it scores, and is decided, as no abstract is.
    scored = score_batch([paper(f"A {PLM} for protein design of lipases", abstract)], PROTOCOL, []).decisions[0]
    assert (scored.score, scored.decision, scored.tags) == (87, "REVIEW", ["no-abstract"])


def test_a_short_real_abstract_is_an_abstract():
    scored = score_batch([paper(f"A {PLM} for protein design of lipases", "Lipases were designed.")], PROTOCOL,
                         []).decisions[0]
    assert (scored.decision, scored.tags) == ("KEEP", [])


# --------------------------------------------------------------------------- guardrail 5: the watchlist's blind spots


def test_the_calibration_surfaces_papers_in_scope_that_name_no_watchlist_term_and_the_watchlist_is_untouched():
    # "If you notice the criteria are pulling in a class of papers the watchlist doesn't anticipate, surface it in
    # the calibration summary; the user owns the watchlist edit." Protein design twice, no watchlist term: match 0.
    unwatched = paper("Protein design of cold-active lipases", "Protein design gave three active lipases.",
                      pmid="39000031")
    watched = paper(f"A {PLM} for protein design", f"A {PLM} ranked lipases.", pmid="39000032")
    before = PROTOCOL.model_dump()
    ranking = score_batch([unwatched, watched], PROTOCOL, [])
    assert ranking.calibration.in_scope_without_watchlist_term == 1 and PROTOCOL.model_dump() == before
    assert "in_scope_without_watchlist_term" not in score_batch([watched], PROTOCOL, []).calibration.model_dump()


def test_the_digest_calibration_summary_says_the_watchlist_may_not_anticipate_them():
    from sitegen.screening.digest import Digest, calibration_summary

    ranking = score_batch([paper("Protein design of lipases", "Protein design, twice: protein design.")], PROTOCOL,
                          [])
    summary = calibration_summary(Digest(week="2026-W01", batches=[1], ranking=ranking))
    assert summary.startswith("Kept 0, review 1, dropped 0; force-dropped as already covered 0; demoted to review "
                              "for the cap 0; stricter criteria pass applied: no.")
    assert "1 record the relevance criteria find in scope names no watchlist term" in summary


# --------------------------------------------------------------------------- thresholds: 70-100 KEEP, 50-69 REVIEW


def test_a_score_of_exactly_50_is_review():
    # A review article (criteria 0.7), the journal version of a covered preprint (novelty 0.5), its keyword once in
    # the abstract at weight 0.6 (match 0.3): 13.5 + 31.5 + 5 = 50 exactly, the lowest REVIEW score.
    preprint = paper("Protein design of thermostable lipases", doi="10.1101/2025.01.02.123456")
    review = paper("Protein design of thermostable lipases.", f"A {PLM} ranked candidates.",
                   ("Review", "Journal Article"), pmid="39000041")
    [scored] = score_batch([review], protocol(watch=((PLM, 0.6),)), [preprint]).decisions
    assert scored.axes.model_dump() == {"match": 0.3, "criteria": 0.7, "novelty": 0.5}
    assert (scored.score, scored.decision) == (50, "REVIEW") and "REVIEW: score 50 in 50-69" in scored.rationale


# --------------------------------------------------------------------------- thresholds overridden (state.json)

# Criteria 1.0 (protein design in the title), the keyword once in the abstract at weight 0.45 (match 0.225), novel:
# 10.125 + 45 + 10 = 65.125, a score of 65.
SIXTY_FIVE = paper("Protein design of thermostable lipases", f"A {PLM} ranked candidates.")
WEIGHED = protocol(watch=((PLM, 0.45),))


def test_a_score_of_65_is_review_by_default_and_keep_with_keep_from_60():
    # Seed 002: "Decision thresholds (default; the calling agent may override)". The rationale names the one in force.
    [default] = score_batch([SIXTY_FIVE], WEIGHED, []).decisions
    assert (default.score, default.decision) == (65, "REVIEW") and "REVIEW: score 65 in 50-69" in default.rationale
    [lowered] = score_batch([SIXTY_FIVE], WEIGHED, [], thresholds=Thresholds(keep_from=60)).decisions
    assert (lowered.score, lowered.decision) == (65, "KEEP") and lowered.rationale.endswith("KEEP: score 65 ≥ 60")
    assert lowered.axes == default.axes and lowered.tags == default.tags  # only the decision moves
    [raised] = score_batch([SIXTY_FIVE], WEIGHED, [], thresholds=Thresholds(keep_from=90, review_from=66)).decisions
    assert raised.decision == "REVIEW" and "REVIEW: score 65 < 66, but no exclusion fired" in raised.rationale


def test_review_from_moves_where_an_excluded_paper_is_dropped():
    # The seed's look-alike: the keyword once in the abstract of a clinical trial report: 22.5 + 0 + 10 = 33.
    trap = paper("Enrollment of a clinical trial", f"A {PLM} was mentioned during patient enrollment in a clinical "
                 "trial; clinical trial sites enrolled patients.")
    [default] = score_batch([trap], PROTOCOL, []).decisions
    assert (default.score, default.decision) == (33, "DROP") and "DROP: score 33 < 50" in default.rationale
    [lowered] = score_batch([trap], PROTOCOL, [], thresholds=Thresholds(keep_from=70, review_from=30)).decisions
    assert lowered.decision == "REVIEW" and "REVIEW: score 33 in 30-69" in lowered.rationale


def test_under_the_cap_nothing_that_scored_from_keep_from_is_dropped():
    # "Never demote to DROP what scored ≥ 70" with keep_from 60: what scored 65 is demoted to REVIEW, never DROP.
    papers = [paper(f"Protein design of thermostable lipases, part {n}", f"A {PLM} ranked candidates.",
                    pmid=f"3900020{n}") for n in range(3)]
    ranking = score_batch(papers, WEIGHED, [], max_kept=1, thresholds=Thresholds(keep_from=60, review_from=60))
    assert [(s.score, s.decision) for s in ranking.decisions] == [(65, "KEEP"), (65, "REVIEW"), (65, "REVIEW")]
    assert all("demoted-for-cap" in s.tags for s in ranking.decisions[1:]) and ranking.calibration.demoted_for_cap == 2


@pytest.mark.parametrize(("keep_from", "review_from"), [(50, 51), (101, 50), (70, -1)])
def test_thresholds_out_of_order_rank_nothing(keep_from, review_from):
    with pytest.raises(ValueError, match="review_from <= keep_from"):
        score_batch([SIXTY_FIVE], WEIGHED, [], thresholds=Thresholds(keep_from=keep_from, review_from=review_from))


# --------------------------------------------------------------------------- tie-breakers under max_kept


def tied(count: int) -> list[Record]:
    """Papers that score alike (100: both keywords, in scope, novel) and differ only in id."""
    return [paper(f"A {PLM} for protein design", f"We trained a {PLM} on lipases.", pmid=f"3900010{n}")
            for n in range(count)]


def test_a_week_where_every_paper_ties_keeps_the_lowest_ids_and_demotes_the_rest_to_review():
    ranking = score_batch(list(reversed(tied(5))), PROTOCOL, [], max_kept=2)
    assert [(s.id, s.score, s.decision) for s in ranking.decisions] == [
        ("pmid:39000100", 100, "KEEP"), ("pmid:39000101", 100, "KEEP"), ("pmid:39000102", 100, "REVIEW"),
        ("pmid:39000103", 100, "REVIEW"), ("pmid:39000104", 100, "REVIEW")]
    assert all(s.tags == ["demoted-for-cap"] and "over the cap of 2" in s.rationale for s in ranking.decisions[2:])
    assert ranking.calibration.model_dump() == {
        "kept": 2, "review": 3, "dropped": 0, "force_dropped_already_covered": 0, "demoted_for_cap": 3,
        "stricter_pass_applied": True}


@pytest.mark.parametrize(("max_kept", "stricter", "kept"), [(1, True, 1), (4, True, 4), (5, False, 5),
                                                             (10_000, False, 5)])
def test_the_tie_breakers_run_only_when_more_papers_are_kept_than_max_kept(max_kept, stricter, kept):
    # "When more papers score >= 70 than max_kept": five KEEPs under a cap of five (or 10,000, the most state.json
    # takes) are all kept, with no stricter pass.
    calibration = score_batch(tied(5), PROTOCOL, [], max_kept=max_kept).calibration
    assert (calibration.stricter_pass_applied, calibration.kept, calibration.demoted_for_cap) == (
        stricter, kept, 5 - kept)


def test_the_stricter_pass_comes_first_and_the_cap_then_demotes_by_score():
    # Three KEEPs: 100, a review article at 86.5 (stricter: 0.4, 73) and a partial fit at 73 (stricter: 0.2, 64).
    # Cap 1: the stricter pass leaves two KEEPs (100 and 73), then the cap demotes the 73; nothing is dropped.
    best = tied(1)[0]
    review = paper(f"A {PLM} for protein design: a review", f"A {PLM} ranked lipases.", ("Review",), pmid="39000051")
    partial = paper(f"{PLM.capitalize()} maps of capsids", f"A {PLM}; notes on protein design.", pmid="39000052")
    ranking = score_batch([best, review, partial], PROTOCOL, [], max_kept=1)
    decisions = {s.id: (s.score, s.decision, s.tags) for s in ranking.decisions}
    assert decisions == {best.id: (100, "KEEP", []), review.id: (73, "REVIEW", ["borderline", "demoted-for-cap"]),
                         partial.id: (64, "REVIEW", [])}
    assert (ranking.calibration.stricter_pass_applied, ranking.calibration.demoted_for_cap) == (True, 1)
