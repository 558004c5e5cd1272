"""Agreement statistics, checked against hand-computed examples and their edge cases."""

from __future__ import annotations

import math
import shutil

import pytest
from conftest import EXAMPLE, ROOT

from sitegen.screening.agreement import Agreement, agreement, cohen, fleiss


def pairs(counts: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    return [pair for pair, n in counts.items() for _ in range(n)]


def test_cohen_hand_computed():
    # 50 records: both include 20, both exclude 15, A include / B exclude 5, A exclude / B include 10.
    # p_o = 35/50 = 0.70; p_e = 0.5*0.6 + 0.5*0.4 = 0.50; kappa = 0.20/0.50 = 0.40;
    # SE of Fleiss, Cohen and Everitt (1969), shares A: include 0.5, exclude 0.5; B: include 0.6, exclude 0.4;
    # 1 - kappa = 0.6:
    #   agreeing  0.4 * (1 - (0.5 + 0.6) * 0.6)^2 + 0.3 * (1 - (0.5 + 0.4) * 0.6)^2 = 0.04624 + 0.06348 = 0.10972
    #   disagreeing 0.36 * (0.1 * (0.6 + 0.5)^2 + 0.2 * (0.4 + 0.5)^2) = 0.36 * (0.121 + 0.162) = 0.10188
    #   less (0.4 - 0.5 * 0.6)^2 = 0.01; variance = 0.2016 / (50 * 0.25) = 0.016128, SE = 0.12700
    # (Cohen's 1960 approximation, sqrt(0.7*0.3 / (50 * 0.25)) = 0.12961, is not the one used);
    # 95% CI = 0.40 +- 1.96*SE = (0.151, 0.649); PABAK over the three choices (include, exclude, maybe) = (3*0.7 - 1) / 2.
    result = cohen(pairs({("include", "include"): 20, ("exclude", "exclude"): 15, ("include", "exclude"): 5,
                          ("exclude", "include"): 10}), ["a", "b"])
    assert result.records == 50 and result.percent_agreement == pytest.approx(0.70)
    assert result.kappa == pytest.approx(0.40)
    assert result.ci_low == pytest.approx(0.40 - 1.959964 * math.sqrt(0.016128), abs=1e-6)
    assert result.ci_high == pytest.approx(0.40 + 1.959964 * math.sqrt(0.016128), abs=1e-6)
    assert result.pabak == pytest.approx(0.55)


def test_cohen_with_maybe_has_the_large_sample_interval_over_three_categories():
    # 20 records, A's decision by row, B's by column (include, exclude, maybe):
    #   include 6 1 1 / exclude 1 6 1 / maybe 0 1 3; shares A .4 .4 .2, B .35 .4 .25.
    # p_o = 15/20 = 0.75; p_e = .4*.35 + .4*.4 + .2*.25 = 0.35; kappa = 0.40/0.65 = 8/13; 1 - kappa = 5/13.
    # 169 * agreeing = .3 * 9.25^2 + .3 * 9^2 + .15 * 10.75^2 = 67.303125
    # disagreeing = .05 * (.75^2 + .55^2 + .8^2 + .6^2 + .65^2) = 0.114375, times 25/169: 169 * it = 2.859375
    # 169 * (kappa - p_e (1 - kappa))^2 = (8 - 1.75)^2 = 39.0625
    # variance = (67.303125 + 2.859375 - 39.0625) / 169 / (20 * 0.65^2) = 31.1 / 1428.05 = 0.0217779
    table = {("include", "include"): 6, ("include", "exclude"): 1, ("include", "maybe"): 1,
             ("exclude", "include"): 1, ("exclude", "exclude"): 6, ("exclude", "maybe"): 1,
             ("maybe", "exclude"): 1, ("maybe", "maybe"): 3}
    result = cohen(pairs(table), ["a", "b"])
    assert result.kappa == pytest.approx(8 / 13)
    error = math.sqrt(31.1 / 1428.05)
    assert result.ci_low == pytest.approx(8 / 13 - 1.959964 * error, abs=1e-6)
    assert result.ci_high == pytest.approx(8 / 13 + 1.959964 * error, abs=1e-6)
    assert result.pabak == pytest.approx((3 * 0.75 - 1) / 2)


def test_pabak_counts_the_choices_not_the_categories_used():
    # Agreement on 9 of 10 either way: one record both called "maybe" instead of "exclude" must not change PABAK,
    # which counts the categories reviewers choose from (three), not those that happened to occur.
    without_maybe = cohen(pairs({("include", "include"): 8, ("exclude", "exclude"): 1, ("include", "exclude"): 1}),
                          ["a", "b"])
    with_maybe = cohen(pairs({("include", "include"): 8, ("maybe", "maybe"): 1, ("include", "exclude"): 1}),
                       ["a", "b"])
    assert without_maybe.pabak == with_maybe.pabak == pytest.approx((3 * 0.9 - 1) / 2)


def test_perfect_agreement_with_two_categories():
    # The large-sample error is 0 when the reviewers agree on every record: an interval "1.00 to 1.00" from two
    # records would claim a certainty they cannot give, so none is given, and the note says why.
    result = cohen(pairs({("include", "include"): 1, ("exclude", "exclude"): 1}), ["a", "b"])
    assert result.kappa == 1.0 and result.ci_low is None and result.ci_high is None and result.pabak == 1.0
    assert "no confidence interval: the reviewers agreed on every record" in result.note


def test_all_one_category_leaves_kappa_undefined():
    result = cohen(pairs({("exclude", "exclude"): 12}), ["a", "b"])
    assert result.kappa is None and "undefined" in result.note
    assert result.percent_agreement == 1.0 and result.pabak == 1.0


def test_the_command_reports_agreement_and_pabak_where_kappa_is_undefined():
    # Every record excluded by both: the prevalence extreme where kappa says nothing and PABAK is the number to read.
    from sitegen.cli import _agreement_line

    line = _agreement_line(cohen(pairs({("exclude", "exclude"): 12}), ["a", "b"]))
    assert line.startswith("a × b: kappa not available (kappa is undefined") and "agreement 100.0%, PABAK 1.00" in line
    assert _agreement_line(cohen([], ["a", "b"])).endswith("(no record was decided by both reviewers), n = 0")


def test_no_shared_records():
    assert cohen([], ["a", "b"]).kappa is None


def test_worse_than_chance_is_negative():
    result = cohen(pairs({("include", "exclude"): 5, ("exclude", "include"): 4, ("include", "include"): 1}),
                   ["a", "b"])
    assert result.kappa < 0 and -1.0 <= result.ci_low < result.kappa < result.ci_high
    never = cohen(pairs({("include", "exclude"): 5, ("exclude", "include"): 5}), ["a", "b"])
    assert never.kappa == pytest.approx(-1.0) and never.ci_low is None and "on no record" in never.note


def test_fleiss_matches_the_textbook_example():
    # Fleiss (1971) as reproduced widely: 10 subjects, 14 raters, 5 categories; kappa = 0.210.
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    ratings = [[f"c{j}" for j, n in enumerate(row) for _ in range(n)] for row in table]
    result = fleiss(ratings, [f"r{i}" for i in range(14)])
    assert result.kappa == pytest.approx(0.210, abs=0.001)
    assert result.percent_agreement == pytest.approx(0.378, abs=0.001)  # P-bar, as the worked example has it


def test_three_reviewers_get_fleiss_and_every_pair():
    decisions = {"a": {"1": "include", "2": "exclude", "3": "exclude"},
                 "b": {"1": "include", "2": "exclude", "3": "include"},
                 "c": {"1": "include", "2": "exclude"}}
    results = agreement(decisions)
    assert [r.kappa_method for r in results] == ["fleiss", "cohen", "cohen", "cohen"]
    assert results[0].records == 2 and results[0].kappa == 1.0
    assert [r.reviewers for r in results[1:]] == [["a", "b"], ["a", "c"], ["b", "c"]]
    # Record 3, which c left undecided, is not in Fleiss' kappa: the note says so rather than let 1.00 stand for it.
    assert results[0].note == ("1 record decided by fewer than all 3 reviewers left out: Fleiss' kappa needs the same "
                               "number of decisions on every record (each pair's Cohen's kappa counts them)")
    # a x b: include/include, exclude/exclude, exclude/include: p_o = 2/3, p_e = (1/3)(2/3) + (2/3)(1/3) = 4/9,
    # kappa = (2/3 - 4/9) / (5/9) = 0.4; a x c on records 1 and 2 only: kappa 1.
    assert results[1].records == 3 and results[1].kappa == pytest.approx(0.4)
    assert results[2].records == 2 and results[2].kappa == 1.0


def test_fleiss_over_three_reviewers_with_maybe_hand_computed():
    # 4 records, 3 reviewers: (i, i, i), (i, i, e), (e, e, m), (m, m, m).
    # P_i = (sum n_ij^2 - 3) / 6: 1, 2/6, 2/6, 1 -> P-bar = (2 + 2/3) / 4 = 2/3.
    # shares of 12 decisions: include 5, exclude 3, maybe 4 -> P_e = (25 + 9 + 16) / 144 = 50/144.
    # kappa = (2/3 - 50/144) / (1 - 50/144) = (96 - 50) / (144 - 50) = 46/94. The observed agreement reported is
    # P-bar, 2/3, the agreement kappa corrects; the share of records decided alike by all three (2 of 4) is not.
    decisions = {"a": {"1": "include", "2": "include", "3": "exclude", "4": "maybe"},
                 "b": {"1": "include", "2": "include", "3": "exclude", "4": "maybe"},
                 "c": {"1": "include", "2": "exclude", "3": "maybe", "4": "maybe"}}
    result = agreement(decisions)[0]
    assert result.kappa_method == "fleiss" and result.records == 4 and result.note is None
    assert result.kappa == pytest.approx(46 / 94) and result.percent_agreement == pytest.approx(2 / 3)


def test_fleiss_observed_agreement_is_p_bar_not_the_unanimous_share():
    # Record 1: a, b, c all include: 3 of 3 pairs agree, P_1 = 1. Record 2: include, include, exclude: 1 of 3 pairs
    # (a-b) agrees, P_2 = 1/3. P-bar = (1 + 1/3) / 2 = 2/3, not the 1 of 2 records decided alike by all three.
    # Shares of 6 decisions: include 5/6, exclude 1/6: P_e = 26/36; kappa = (24/36 - 26/36) / (10/36) = -0.2.
    decisions = {"a": {"1": "include", "2": "include"}, "b": {"1": "include", "2": "include"},
                 "c": {"1": "include", "2": "exclude"}}
    result = agreement(decisions)[0]
    assert result.kappa_method == "fleiss" and result.percent_agreement == pytest.approx(2 / 3)
    assert result.kappa == pytest.approx(-0.2)


def test_fleiss_observed_agreement_for_two_decisions_a_record_is_cohens():
    # With two decisions a record P_i is 1 when they agree and 0 when not: P-bar is Cohen's p_o, one quantity.
    table = pairs({("include", "include"): 3, ("exclude", "exclude"): 4, ("include", "exclude"): 2,
                   ("maybe", "exclude"): 1})
    assert fleiss([list(pair) for pair in table], ["a", "b"]).percent_agreement \
        == cohen(table, ["a", "b"]).percent_agreement == pytest.approx(0.7)


def test_rotating_reviewers_get_fleiss_over_the_records_of_the_usual_number_of_decisions():
    # Each record screened by two of three reviewers, none by all three: Fleiss (1971) needs the same number of
    # decisions on every record, not the same reviewers. Records 1-2 a, b; 3-4 a, c; 5-6 b, c:
    #   1 include/include, 2 exclude/exclude, 3 include/exclude, 4 exclude/exclude, 5 include/include,
    #   6 exclude/include: P-bar = 4/6; shares of 12 decisions include 6, exclude 6: P_e = 1/2;
    #   kappa = (2/3 - 1/2) / (1/2) = 1/3.
    # Record 7 (a alone, awaiting its second reviewer) and record 8 (all three) are left out, and said to be.
    decisions = {"a": {"1": "include", "2": "exclude", "3": "include", "4": "exclude", "7": "include",
                       "8": "include"},
                 "b": {"1": "include", "2": "exclude", "5": "include", "6": "exclude", "8": "include"},
                 "c": {"3": "exclude", "4": "exclude", "5": "include", "6": "include", "8": "exclude"}}
    results = agreement(decisions)
    fleiss_row = results[0]
    assert fleiss_row.kappa_method == "fleiss" and fleiss_row.records == 6
    assert fleiss_row.reviewers == ["a", "b", "c"]
    assert fleiss_row.kappa == pytest.approx(1 / 3) and fleiss_row.percent_agreement == pytest.approx(2 / 3)
    assert fleiss_row.note == ("each record decided by 2 of the 3 reviewers; 1 record decided by fewer than 2 "
                               "reviewers and 1 record decided by more than 2 reviewers left out: Fleiss' kappa needs "
                               "the same number of decisions on every record (each pair's Cohen's kappa counts them)")
    # Every pair keeps its Cohen's kappa, record 8 included: a x b on records 1, 2 and 8.
    assert [(r.reviewers, r.records) for r in results[1:]] == [(["a", "b"], 3), (["a", "c"], 3), (["b", "c"], 3)]
    from sitegen.cli import _agreement_line

    assert _agreement_line(fleiss_row).startswith("a × b × c: Fleiss' kappa 0.33, observed agreement 66.7%, n = 6 (")


def test_the_json_rows_are_documented():
    # `screen kappa --json` prints these rows: the README names every field, and says which agreement it is.
    row = ROOT.joinpath("README.md").read_text().split("| `sitegen screen kappa DIR [--json]` |")[1].split("\n")[0]
    assert all(f"`{field}`" in row for field in Agreement.model_fields)
    assert "`percent_agreement` (the observed agreement, 0 to 1)" in row


def test_fleiss_textbook_example_with_rotating_reviewers():
    # The worked example again (P-bar = 0.378, P_e = 0.213, kappa = 0.210), each patient seen by 14 of 16
    # psychiatrists, a different 14 for each: the same kappa, as Fleiss' kappa does not ask who rated.
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    decisions: dict[str, dict[str, str]] = {}
    for record, row in enumerate(table):
        ratings = [f"c{j}" for j, n in enumerate(row) for _ in range(n)]
        for seat, rating in enumerate(ratings):
            decisions.setdefault(f"r{(record + seat) % 16:02}", {})[str(record)] = rating
    result = agreement(decisions)[0]
    assert result.kappa_method == "fleiss" and result.records == 10 and len(result.reviewers) == 16
    assert result.kappa == pytest.approx(0.210, abs=0.001)
    assert result.percent_agreement == pytest.approx(0.378, abs=0.001)
    assert result.note == "each record decided by 14 of the 16 reviewers"


def test_no_record_decided_twice_has_no_fleiss_kappa():
    result = agreement({"a": {"1": "include"}, "b": {"2": "include"}, "c": {"3": "exclude"}})[0]
    assert result.kappa is None and result.records == 0 and result.note == "no record was decided by two or more reviewers"


def test_commands_on_the_example(sitegen, tmp_path):
    code, out, _ = sitegen("screen", "kappa", EXAMPLE)
    assert code == 0
    assert "overall, title-abstract: reviewer-a × reviewer-b: Cohen's kappa" in out
    code, out, _ = sitegen("screen", "conflicts", EXAMPLE)
    assert code == 0 and "1 conflict awaiting adjudication" in out  # one conflict, never "1 conflict(s)"
    # What to do about it: the very file to add a row to, in the folder as given, not a pattern to fill in.
    adjudication = EXAMPLE / "screening" / "title-abstract" / "adjudication.csv"
    assert f"Settle each at title-abstract with a row in {adjudication}" in out
    assert "adjudicated" not in out and "note" not in out
    code, out, _ = sitegen("screen", "status", EXAMPLE, "--json")
    assert code == 0 and '"batches"' in out


def test_an_adjudication_settles_a_conflict(sitegen, tmp_path):
    # A pull-request-style change: the adjudicator adds one line to their own file.
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    code, out, _ = sitegen("screen", "conflicts", review, "--json")
    import json

    [conflict] = json.loads(out)
    with (review / "screening" / conflict["stage"] / "adjudication.csv").open("a") as handle:
        handle.write(f"{conflict['record_id']},exclude,,settled in review meeting\n")
    code, out, _ = sitegen("check", review)
    assert code == 0, out
    code, out, _ = sitegen("screen", "conflicts", review)
    assert "0 conflicts awaiting adjudication" in out and "Settle" not in out


def test_one_reviewers_decision_awaits_the_second(sitegen, tmp_path):
    # Title/abstract screening is dual in the example: drop reviewer-b's decision on one record.
    review = tmp_path / "example"
    shutil.copytree(EXAMPLE, review)
    path = review / "screening" / "title-abstract" / "reviewer-b.csv"
    lines = path.read_text().splitlines(keepends=True)
    adjudicated = {line.split(",")[0] for line in (review / "screening" / "title-abstract" / "adjudication.csv")
                   .read_text().splitlines()[1:]}
    index = next(n for n, line in enumerate(lines[1:], 1) if ",exclude," in line
                 and line.split(",")[0] not in adjudicated)
    del lines[index]
    path.write_text("".join(lines))
    import json

    code, out, _ = sitegen("prisma", review, "--json")
    assert json.loads(out)["awaiting_screening"] == 2  # the open conflict and this one
    code, out, _ = sitegen("screen", "status", review)
    assert "1 pending" in out


def test_exclusion_reasons_that_differ_at_full_text_are_a_conflict():
    from sitegen.review.folder import DecisionRow
    from sitegen.review.models import Decision
    from sitegen.screening.outcomes import stage_outcomes

    rows = [DecisionRow("full-text", reviewer, "f.csv", 2, {}, Decision(record_id="10.1000/x", decision="exclude",
                                                                          reason=reason))
            for reviewer, reason in (("a", "non-rodent"), ("b", "no-control-group"))]
    assert stage_outcomes(rows, "full-text", 2, reasons_must_agree=True)["10.1000/x"].decision == "conflict"
    assert stage_outcomes(rows, "full-text", 2)["10.1000/x"].decision == "exclude"  # without the rule


def test_records_decided_alike_share_one_outcome():
    # 100,000 records decided alike by two reviewers made 100,000 equal outcomes, a third of the time of combining
    # their decisions: an outcome is a frozen value, made once and shared.
    from sitegen.review.folder import DecisionRow
    from sitegen.review.models import Decision
    from sitegen.screening.outcomes import Outcome, stage_outcomes

    rows = [DecisionRow("full-text", reviewer, f"{reviewer}.csv", line, {},
                        Decision(record_id=record_id, decision="exclude", reason="non-rodent"))
            for line, record_id in enumerate(("10.1000/x", "10.1000/y"), start=2) for reviewer in ("b", "a")]
    outcomes = stage_outcomes(rows, "full-text", 2, reasons_must_agree=True)
    assert outcomes["10.1000/x"] == outcomes["10.1000/y"] == Outcome("exclude", "non-rodent", ("a", "b"))
    assert outcomes["10.1000/x"] is outcomes["10.1000/y"]


def test_with_three_required_reviewers_two_who_disagree_still_await_the_third(example_copy, sitegen):
    # Blind screening: a disagreement shown before the third required reviewer decided told them what the others
    # did (the record page and `screen conflicts` named each decision), and an adjudication then stood in for them.
    from sitegen.review.folder import DecisionRow
    from sitegen.review.models import Decision
    from sitegen.screening.outcomes import stage_outcomes

    def rows(*decided):
        return [DecisionRow("title-abstract", reviewer, f"{reviewer}.csv", 2, {},
                            Decision(record_id="10.1000/x", decision=decision)) for reviewer, decision in decided]
    assert stage_outcomes(rows(("a", "exclude"), ("b", "include")), "title-abstract", 3)["10.1000/x"].decision \
        == "awaiting"
    assert stage_outcomes(rows(("a", "exclude"), ("b", "include"), ("c", "include")), "title-abstract",
                          3)["10.1000/x"].decision == "conflict"
    config = example_copy / "review.yaml"
    config.write_text(config.read_text().replace("title_abstract_reviewers: 2", "title_abstract_reviewers: 3"))
    code, out, _ = sitegen("check", example_copy)  # the example's adjudications would stand in for a third reviewer
    assert code == 1 and "it still awaits a required reviewer" in out and "[needless-adjudication]" in out


def test_a_conflict_on_the_reason_alone_says_so_and_keeps_the_reasons_hidden(example_copy, sitegen, tmp_path):
    # Two exclusions for different reasons were shown as "(reviewer-a: exclude, reviewer-b: exclude)": the
    # adjudicator could not tell why it was a conflict at all.
    folder = example_copy / "screening" / "full-text"
    rows = (folder / "reviewer-a.csv").read_text().splitlines()
    record_id = rows[1].split(",")[0]
    (folder / "reviewer-a.csv").write_text("\n".join([rows[0], f"{record_id},exclude,non-rodent,", *rows[2:]]) + "\n")
    (folder / "reviewer-b.csv").write_text(f"{rows[0]}\n{record_id},exclude,no-control-group,SECRET\n")
    code, out, err = sitegen("screen", "conflicts", example_copy)
    assert code == 0, err
    assert f"full-text  {record_id}  (reviewer-a: exclude, reviewer-b: exclude, for different reasons" in out
    assert "non-rodent" not in out and "no-control-group" not in out
    code, _, err = sitegen("build", example_copy, "--out", tmp_path / "site")
    assert code == 0, err
    from sitegen.site.pages import page_slug

    text = (tmp_path / "site" / "records" / f"{page_slug(record_id)}.html").read_text()
    assert "the reviewers excluded it for different reasons" in text and "SECRET" not in text
    assert "Non-rodent" not in text.split("Screening history")[1]


def test_a_reviewer_who_made_one_decision_throughout_has_kappa_0_without_an_interval():
    # Five records: a included three and excluded or kept one each, b included all five. Agreement is then what
    # chance gives, so kappa is 0, and its error 0 too: the screening page drew "0.00 (-0.00 to 0.00)".
    result = cohen(pairs({("include", "include"): 3, ("maybe", "include"): 1, ("exclude", "include"): 1}),
                   ["a", "b"])
    assert result.kappa == 0.0 and result.ci_low is None and result.ci_high is None
    assert result.note.startswith("no confidence interval: b decided every record 'include'")
    assert result.percent_agreement == pytest.approx(0.6) and result.pabak == pytest.approx(0.4)
