"""Findings that never overclaim (issue 46): no interval from too few repeats or of width 0, no
"largest" without a separation, one multiplicity control over the page, each source against all
combined, hyperparameter levels that do more than their name says flagged."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from modelvar.findings.components import MIN_CLUSTERS, variance_components
from modelvar.findings.multiplicity import adjusted, threshold
from modelvar.findings.paired import IDENTICAL, INCONCLUSIVE, SUPPORTED, Paired
from modelvar.findings.report import components_sentence, headline_sentences, with_ci
from modelvar.findings.sources import mean_ci, single_against_combined, sources_of_variance
from test_findings import synthetic_tables


# ------------------------------------------------------------------ adequacy before intervals
def test_two_repeats_give_estimates_without_intervals_and_the_page_says_why():
    from modelvar.findings.study import adequacy_lines

    summary_, agreement, runs, roles, _ = synthetic_tables(np.random.default_rng(1), repeats=2)
    sources = sources_of_variance(summary_, agreement, runs, {("d", "xgb"): roles})
    lows = sources.filter(like="_low")
    assert lows.isna().all().all()  # no interval anywhere
    assert sources["disagreement"].notna().any()  # the estimates are there
    lines = adequacy_lines(sources, runs, agreement, pd.DataFrame())
    assert lines == ["What this study can tell: 2 repeats per cell: too few for any interval "
                     "or test over repeats (run ≥ 3), so the sentences give estimates only and "
                     "nothing is told apart; 3 runs per repeat: each run-to-run SD rests on that "
                     "many values."]
    said = headline_sentences(sources, pd.DataFrame(), adequacy=lines)
    assert said[0] == lines[0] and not any("[" in s for s in said[1:])


def test_equal_paired_differences_never_make_an_interval_of_width_zero():
    two = Paired.of("x", [0.022, 0.022])
    assert np.isnan(two.low) and np.isnan(two.p_value) and two.verdict() == INCONCLUSIVE
    assert two.text() == "x +0.022 (too few repeats for an interval: 2; run ≥ 3)"
    same = Paired.of("x", [0.02] * 4)
    assert np.isnan(same.low) and np.isnan(same.high)
    assert same.text() == "x +0.020 (the same in every repeat: no interval)"
    # no spread for a t statistic: the exact sign test, 2 · 0.5^R
    assert same.p_value == pytest.approx(0.125) and same.verdict() == INCONCLUSIVE
    assert Paired.of("x", [0.02] * 6).verdict() == SUPPORTED
    # identical values: nothing to test, no p-value (not counted by the page's control)
    zero = Paired.of("x", [0.0] * 6)
    assert np.isnan(zero.p_value) and zero.verdict() == IDENTICAL
    mean, low, high = mean_ci([0.5, 0.5, 0.5])
    assert mean == 0.5 and np.isnan(low) and np.isnan(high)
    assert with_ci(0.5, 0.5, 0.5) == "0.500" and with_ci(1e-17, 0, 0) == "0"


# ------------------------------------------------------------------ variance shares ranked
def grid_frame(rng, repeats, data_effect, down_effect, runs=4):
    """Run accuracies of a 2 × 2 grid (data, downsampling) with the given effects, a repeat
    effect and run noise."""
    rows = []
    shift = rng.normal(0, 0.01, repeats)
    for r in range(repeats):
        for data in ("dnone", "rel0p2"):
            for down in ("down100", "down050"):
                for run in range(runs):
                    acc = (0.8 + shift[r] + data_effect * (data == "rel0p2")
                           + down_effect * (down == "down050") + rng.normal(0, 0.01))
                    rows.append({"data": data, "downsample": down, "repeat": r, "run": run,
                                 "accuracy": acc})
    return pd.DataFrame(rows)


def _components(frame):
    table = variance_components(frame, "accuracy", replicated=True)
    table["lead_held"] = table["lead_p"] <= 0.05
    return table


def test_variance_shares_are_ranked_only_when_the_leader_is_told_apart():
    rng = np.random.default_rng(4)
    separated = _components(grid_frame(rng, 10, data_effect=0.005, down_effect=-0.05))
    said = components_sentence(separated, "xgb", "accuracy")
    assert said.startswith("Over the factorial grid, training fraction has the largest share "
                           "of the variance of xgb's run accuracy: "), said
    assert ", told apart from both other factors; the runner-up, " in said
    alike = _components(grid_frame(rng, 10, data_effect=-0.02, down_effect=-0.02))
    said = components_sentence(alike, "xgb", "accuracy")
    assert said.startswith("Over the factorial grid, no factor of xgb's run accuracy is ranked "
                           "first: the largest estimate, "), said
    # too few repeats for the jackknife: no interval, no ranking
    few = _components(grid_frame(rng, MIN_CLUSTERS - 1, data_effect=0.0, down_effect=-0.05))
    assert few["share_low"].isna().all() and few["lead_p"].isna().all()
    said = components_sentence(few, "xgb", "accuracy")
    assert said.startswith("Over the factorial grid, no factor of xgb's run accuracy is ranked "
                           f"first with {MIN_CLUSTERS - 1} repeats (run ≥ {MIN_CLUSTERS})")


# ------------------------------------------------------------------ multiplicity
def test_the_multiplicity_control_recovers_a_planted_effect_among_nulls():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(11)
    nulls = [Paired.of(f"null {i}", rng.normal(0, 0.01, 10)) for i in range(60)]
    planted = Paired.of("planted", rng.normal(0.03, 0.01, 10))
    p = np.array([c.p_value for c in [*nulls, planted]])
    held = threshold(p)
    assert planted.verdict(held) == SUPPORTED
    assert sum(c.verdict(held) != INCONCLUSIVE for c in nulls) == 0
    assert int((p <= held).sum()) == 1
    # single tests at 5 % would have called some nulls told apart
    assert sum(c.verdict() != INCONCLUSIVE for c in nulls) >= 1
    # the adjusted p-values are statsmodels' Benjamini-Yekutieli ones; NaN stays NaN
    with_nan = np.append(p, np.nan)
    expected = multipletests(p, method="fdr_by")[1]
    assert adjusted(with_nan)[:-1] == pytest.approx(expected, abs=1e-15)
    assert np.isnan(adjusted(with_nan)[-1])
    assert ((adjusted(p) <= 0.05) == (p <= held)).all()


def test_the_page_states_both_promises_in_one_line():
    from modelvar.findings.judging import Multiplicity, TierSummary
    from modelvar.findings.report import multiplicity_line

    line = multiplicity_line(Multiplicity((
        TierSummary("headline", "Holm", "family-wise error rate", 0.05, 40, 72, 6,
                    ("leading sources", "classifiers compared per dataset")),
        TierSummary("exploratory", "Benjamini–Yekutieli", "false-discovery rate", 0.05, 21,
                    42, 19, ("each source against all combined",)))))
    assert line.startswith("Headline claims (leading sources, classifiers compared per "
                           "dataset): 6 of 40 hold, under Holm's control of the family-wise "
                           "error rate: the chance that any of them is false is at most 5 %.")
    assert ("Exploratory claims (each source against all combined): 19 of 21 hold, under "
            "Benjamini–Yekutieli's control of the false-discovery rate: on average at most 5 % "
            "of them are false.") in line
    assert "\n" not in line


# ------------------------------------------------------------------ all combined
def test_each_source_alone_against_all_combined_by_hand():
    summary_, agreement, runs, roles, _ = synthetic_tables(np.random.default_rng(3))
    sources = sources_of_variance(summary_, agreement, runs, {("d", "xgb"): roles})
    table = single_against_combined(sources, summary_)
    row = table[table["level"] == "50 % train"].iloc[0]
    churn = summary_[summary_["metric"] == "churn"].set_index(["cell", "repeat"])["mean"]
    alone = churn.loc["dnone_cnone_hnone_down050_seedfix"]
    combined = churn.loc["rel0p2_cnone_hnone_down050_seedrun"]
    assert row["alone"] == pytest.approx(alone.mean(), abs=1e-15)
    assert row["combined"] == pytest.approx(combined.mean(), abs=1e-15)
    # the ratio: the geometric mean of the per-repeat ratios
    assert row["ratio"] == pytest.approx(np.exp(np.mean(np.log(alone / combined))), abs=1e-15)
    d = (alone - combined).to_numpy()
    assert row["difference"] == pytest.approx(d.mean(), abs=1e-15)
    assert row["verdict"] == SUPPORTED  # 0.15 alone against 0.1 combined, built in
    assert set(table["level"]) == {"data rel 0.2", "50 % train", "seed per run"}
    assert set(table["measure"]) == {"disagreement"}  # what Summers & Dinneen measured


# ------------------------------------------------------------------ realised hparam levels
def test_hparam_levels_that_do_more_than_their_name_says_are_flagged():
    from modelvar.findings.study import hparam_strength

    base = {"max_delta_step": 0, "penalty": "l2", "eta": 0.3, "average": False}
    level = [{**base, "max_delta_step": 1, "eta": 0.33}, {**base, "max_delta_step": 1},
             {**base, "max_delta_step": 1, "penalty": "none"}, base, base]
    runs = pd.DataFrame({"dataset": "d", "classifier": "xgb",
                         "hparam": ["hnone"] * 2 + ["hrel0p1"] * 5,
                         "hparams": [json.dumps(h) for h in [base, base, *level]]})
    [row] = hparam_strength(runs).to_dict("records")
    assert row["level"] == "hparam rel 0.1" and row["runs"] == 5
    assert row["max_relative_change"] == pytest.approx(0.1)
    assert row["note"] == "max_delta_step left 0 in 60% of runs; penalty changed in 20% of runs"
