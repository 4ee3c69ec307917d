"""Verdicts a referee accepts (issue 53): shares that can be ranked, one honest family,
equivalence as a verdict, not tested ≠ not told apart, no exact-zero branches, power said
properly, the estimand on the page, plain sentences, and the calibration's scoring."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from modelvar.calibration import pages as calibration
from modelvar.findings.components import MIN_CLUSTERS, REPEAT, Grid, variance_components
from modelvar.findings.paired import (
    CONTRADICTED,
    EQUIVALENT,
    IDENTICAL,
    INCONCLUSIVE,
    SUPPORTED,
    Compared,
    Paired,
    repeats_phrase,
    signed_ci,
    with_ci,
)
from test_findings import CONTROL, claim_tables, comparison_tables


# ------------------------------------------------------------------ 1. shares that can be ranked
def grid(rng, repeats, effects, repeat_sd=0.0, interaction_sd=0.0, runs=4, noise_sd=0.01):
    """Run accuracies of a full 2 × 2 × 2 grid (data, hparam, training fraction)."""
    levels = {"data": ("dnone", "rel0p2"), "hparam": ("hnone", "hrel0p1"),
              "downsample": ("down100", "down050")}
    rows = []
    b = rng.normal(0, repeat_sd, repeats)
    for r in range(repeats):
        slope = {f: effects[f] + rng.normal(0, interaction_sd) for f in levels}
        for cell in np.ndindex(2, 2, 2):
            mean = 0.8 + b[r] + sum((on - 0.5) * slope[f]
                                    for f, on in zip(levels, cell, strict=True))
            for _ in range(runs):
                rows.append({**{f: levels[f][on] for f, on in zip(levels, cell, strict=True)},
                             "repeat": r, "accuracy": mean + rng.normal(0, noise_sd)})
    return pd.DataFrame(rows)


def test_the_sums_of_squares_are_statsmodels_type_ii_ones():
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    frame = grid(np.random.default_rng(0), 6, {"data": 0.02, "hparam": 0.0, "downsample": 0.04},
                 repeat_sd=0.01)
    fit = smf.ols("accuracy ~ C(data) + C(hparam) + C(downsample) + C(repeat)", frame).fit()
    table = sm.stats.anova_lm(fit, typ=2)
    g = Grid.of(frame, "accuracy")
    M, n = g.means, g.n
    grand = M.mean()
    assert n * M.shape[0] * ((M.mean(axis=0) - grand) ** 2).sum() == pytest.approx(
        table.loc["C(repeat)", "sum_sq"], rel=1e-10)
    for family, name in (("data", "C(data)"), ("downsample", "C(downsample)")):
        codes = g.levels[family]
        by_level = np.array([M[codes == lv].mean() for lv in (0, 1)])
        ss = n * (M.shape[0] / 2) * M.shape[1] * ((by_level - grand) ** 2).sum()
        assert ss == pytest.approx(table.loc[name, "sum_sq"], rel=1e-10)


def test_a_factor_without_effect_estimates_zero_whatever_its_degrees_of_freedom():
    """η² gave the repeat R − 1 degrees of freedom against a family's 1: where nothing acts it
    was the point-estimate leader in 95–99 % of studies. The df-adjusted components are not."""
    rng = np.random.default_rng(1)
    leaders, repeat_shares = [], []
    for _ in range(60):
        table = variance_components(grid(rng, 10, dict.fromkeys(
            ("data", "hparam", "downsample"), 0.0)), "accuracy", replicated=True)
        factors = table[~table["component"].isin(["interactions", "runs (seed, draws)"])]
        leaders.append(factors.loc[factors["share_estimate"].idxmax(), "component"])
        repeat_shares.append(float(table.set_index("component").loc[REPEAT, "share_estimate"]))
    # four factors, none acting: the repeat leads about a quarter of the time, not always
    assert leaders.count(REPEAT) / len(leaders) < 0.5
    assert abs(np.mean(repeat_shares)) < 0.01


def test_the_largest_share_is_told_apart_from_every_other_factor():
    """The ranking's p is the largest of the leader's tests against each other factor, each a
    jackknife t-test over repeats — against the repeat with the heavy-tail allowance κ₀ / R ·
    V_m² (raw) and κ₀ / R · (V_m / θ_R)² (log) added to its variance —, recomputed here by
    hand."""
    from scipy import stats

    from modelvar.findings.components import KURTOSIS_ALLOWANCE

    frame = grid(np.random.default_rng(2), 8, {"data": 0.05, "hparam": 0.002,
                                               "downsample": 0.03}, repeat_sd=0.004,
                 interaction_sd=0.004)
    table = variance_components(frame, "accuracy", replicated=True)
    lead = table.dropna(subset=["lead_p"]).iloc[0]
    assert lead["component"] == "data perturbation" and lead["lead_against"] == 3
    g = Grid.of(frame, "accuracy")
    point = g.estimates()
    drops = [g.estimates(np.delete(np.arange(8), r)) for r in range(8)]
    repeat_means = frame.groupby("repeat")["accuracy"].mean().to_numpy()
    v_m = repeat_means.var(ddof=1)

    def p_of(diff, jack, extra=0.0):
        se = np.sqrt(7 / 8 * ((jack - jack.mean()) ** 2).sum() + extra)
        return 2 * stats.t.sf(abs(diff) / se, 7)

    ps = []
    for other in ("hparam", "downsample", REPEAT):
        allowance = other == REPEAT
        raw = KURTOSIS_ALLOWANCE / 8 * v_m ** 2 if allowance else 0.0
        log = KURTOSIS_ALLOWANCE / 8 * (v_m / point[REPEAT]) ** 2 if allowance else 0.0
        both = [point["data"], point[other], *(d["data"] for d in drops),
                *(d[other] for d in drops)]
        p = p_of(point["data"] - point[other], np.array([d["data"] - d[other] for d in drops]),
                 raw)
        if min(both) > 0:  # on both scales: the larger p
            p = max(p, p_of(np.log(point["data"]) - np.log(point[other]),
                            np.array([np.log(d["data"]) - np.log(d[other]) for d in drops]),
                            log))
        ps.append(p)
    assert lead["lead_p"] == pytest.approx(max(ps), rel=1e-9)
    names = {"hparam": "hparam perturbation", "downsample": "training fraction",
             REPEAT: REPEAT}
    by_name = dict(zip(lead["others"], lead["p_others"], strict=True))
    assert [by_name[names[o]] for o in ("hparam", "downsample", REPEAT)] == pytest.approx(
        ps, rel=1e-9)
    # without the allowance the repeat's comparison would have been the stricter one's p
    assert ps[2] > p_of(point["data"] - point[REPEAT],
                        np.array([d["data"] - d[REPEAT] for d in drops]))


def test_a_tie_at_the_top_is_rarely_ranked():
    """The leader test's size with two tied families (the benchmark's full table:
    docs/measurements/verdicts.md): at most 5 % (binomial margin for 200 simulations)."""
    rng = np.random.default_rng(3)
    rejected = 0
    for _ in range(200):
        table = variance_components(grid(rng, 8, {"data": 0.02, "hparam": 0.005,
                                                  "downsample": 0.02}, repeat_sd=0.005,
                                         interaction_sd=0.004), "accuracy", replicated=True)
        rejected += bool((table["lead_p"].dropna() <= 0.05).any())
    assert rejected / 200 <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 200)


def test_an_incomplete_grid_gets_no_shares_and_says_why():
    frame = grid(np.random.default_rng(4), MIN_CLUSTERS, dict.fromkeys(
        ("data", "hparam", "downsample"), 0.01))
    missing = frame[~((frame["repeat"] == 1) & (frame["data"] == "rel0p2"))]
    with pytest.raises(ValueError, match=r"4 of 40 cell × repeat combinations have no "
                                         r"accuracy"):
        variance_components(missing, "accuracy", replicated=True)


# ------------------------------------------------------------------ 2. one honest family
def judged_page(seed=0, repeats=8, scenario="tie"):
    from modelvar.findings.study import judge_study

    tables, truth = calibration.simulate_page(calibration.SCENARIOS[scenario], repeats=repeats,
                                              rng=np.random.default_rng(seed))
    return judge_study(tables["summary"], tables["agreement"], tables["runs"], tables["roles"],
                       weak_below=0.5), truth


def test_every_claim_enters_its_tiers_family_once_with_its_hypotheses():
    from statsmodels.stats.multitest import multipletests

    judged, _ = judged_page()
    t = judged.tables
    verdicts = t["verdicts"]
    assert not verdicts.duplicated(["table", "row"]).any()
    # each leading source is one claim (against every other level), not one per runner-up
    assert (verdicts["kind"] == "leader").sum() == len(t["margins"])
    # two datasets: the classifiers are compared per dataset (headline), nothing over datasets
    assert "classifiers over datasets" not in set(verdicts["kind"])
    assert set(verdicts.loc[verdicts["kind"] == "classifiers", "tier"]) == {"headline"}
    assert set(verdicts.loc[verdicts["kind"] == "combined", "tier"]) == {"exploratory"}
    # each tier's adjusted p-values are its procedure's, over its hypotheses
    for tier, method in (("headline", "holm"), ("exploratory", "fdr_by")):
        mine = verdicts[verdicts["tier"] == tier]
        flat = np.concatenate([np.asarray(p, float) for p in mine["p_values"]])
        adjusted = np.concatenate([np.asarray(a, float) for a in mine["adjusted"]])
        finite = np.isfinite(flat)
        assert adjusted[finite] == pytest.approx(
            multipletests(flat[finite], method=method)[1], abs=1e-15)
        assert mine["p_adjusted"].to_numpy() == pytest.approx(
            [np.nanmin(a) for a in mine["adjusted"]], abs=0)
        assert (mine["holds"] == (mine["p_adjusted"] <= 0.05)).all()
    assert judged.multiplicity.comparisons == len(verdicts)
    assert judged.multiplicity.held == int(verdicts["holds"].sum())
    # a comparison's hypotheses: told apart, and practically equivalent
    combined = t["combined"]
    mine = verdicts[verdicts["kind"] == "combined"].set_index("row")
    for i, row in combined.iterrows():
        assert mine.loc[i, "p_values"] == pytest.approx(
            [row["p_difference"], row["p_equivalent"]], nan_ok=True)


def test_a_claim_that_restates_the_leading_sources_is_not_counted_again():
    down, rel = "dnone_cnone_hnone_down050_seedfix", "rel0p2_cnone_hnone_down100_seedfix"
    sources, summary = claim_tables({down: (.78, .03, .20), rel: (.79, .01, .05)})
    from modelvar.findings.study import judge

    tables, control = judge(sources, summary, pd.DataFrame(), weak_below=0.5)
    claim = tables["claims"].set_index("claim").loc["downsampling_largest"]
    assert claim["status"] == SUPPORTED and np.isnan(claim["p_value"])
    assert "judged there, not counted again" in claim["evidence"]
    assert "seed claim" not in set(tables["verdicts"]["kind"])
    assert control.comparisons == 2  # the two leading sources
    assert control.tier("headline").claims == 2 and control.tier("headline").hypotheses == 4


# ------------------------------------------------------------------ 3. equivalence
def test_two_one_sided_tests_of_a_ratio_within_the_margin():
    from scipy import stats

    rng = np.random.default_rng(5)
    a = pd.Series(0.1 * np.exp(rng.normal(0, 0.05, 10)))
    b = pd.Series(0.1 * np.exp(rng.normal(0, 0.05, 10)))
    c = Compared.between("a − b", a, b, 1.25)
    logs = np.log(a) - np.log(b)
    se = logs.std(ddof=1) / np.sqrt(10)
    p = max(stats.t.sf((logs.mean() + np.log(1.25)) / se, 9),
            stats.t.cdf((logs.mean() - np.log(1.25)) / se, 9))
    assert c.p_equivalent == pytest.approx(p, rel=1e-9)
    assert c.verdict() == EQUIVALENT
    assert c.ratio == pytest.approx(np.exp(logs.mean()), rel=1e-12)
    # the same values a quarter apart: not equivalent within 1.25, told apart instead
    far = Compared.between("a − b", 1.4 * a, b, 1.25)
    assert far.verdict() == SUPPORTED and far.p_equivalent > 0.05
    # a wider margin, declared in the config, makes them equivalent
    assert Compared.between("a − b", 1.1 * a, b, 1.5).verdict() == EQUIVALENT


def test_a_source_alone_about_as_much_as_all_combined_is_said_with_its_ratio():
    from modelvar.findings.report import combined_sentence
    from modelvar.findings.sources import single_against_combined

    seed, combined = "dnone_cnone_hnone_down100_seedrun", "rel0p2_cnone_hnone_down050_seedrun"
    sources, summary = claim_tables({seed: (.8, .01, .10), combined: (.8, .012, .101)})
    sources.loc[sources["cell"] == combined, ["source", "level"]] = [
        "all combined", "all combined: data rel 0.2 · 50 % train · seed per run"]
    table = single_against_combined(sources, summary)
    row = table.iloc[0]
    assert row["verdict"] == EQUIVALENT and row["ratio_low"] > 0.8 and row["ratio_high"] < 1.25
    said = combined_sentence(table, "d", "lr-sgd")
    assert "seed per run 0.10" in said and "about as much)" in said
    assert said.endswith("seed per run alone gave about as much as all sources together "
                         "(Summers & Dinneen's finding)")


def test_the_equivalence_margin_is_a_config_key_the_findings_rule_passes():
    import yaml

    from conftest import REPO

    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    key = schema["properties"]["findings"]["properties"]["equivalence_ratio"]
    assert key["default"] == 1.25 and key["exclusiveMinimum"] == 1
    rule = (REPO / "rules/plots.smk").read_text()
    assert 'margin=config["findings"]["equivalence_ratio"]' in rule
    assert "--equivalence-ratio {params.margin:q}" in rule


# ------------------------------------------------------------------ 4. not tested ≠ not told apart
def test_two_datasets_say_not_tested_over_datasets_and_give_the_per_dataset_verdicts():
    from modelvar.findings.comparison import classifier_comparison, comparison_sentences
    from modelvar.findings.over_datasets import study_comparison

    table = classifier_comparison(*comparison_tables(datasets=("a", "b")))
    over = study_comparison(table)
    assert set(over["verdict"]) == {"not tested"} and over["p_value"].isna().all()
    said = comparison_sentences(table, over)
    assert said[0] == ("Classifiers over datasets: not tested (a statement over datasets needs "
                       "≥ 6 datasets, this study has 2); per dataset instead.")
    assert any(s.startswith("On a, xgb's predictions changed less") for s in said)
    assert any(s.startswith("On b, xgb's predictions changed less") for s in said)
    assert not any("not told apart" in s for s in said)


# ------------------------------------------------------------------ 5. no exact-zero branches
def test_rounding_noise_is_identical_and_not_tested():
    rng = np.random.default_rng(6)
    a = pd.Series(0.8 + rng.normal(0, 0.01, 10))
    noise = pd.Series(a + rng.normal(0, 1.2e-16, 10))
    p = Paired.between("x", noise, a)
    assert p.identical and np.isnan(p.p_value) and p.verdict() == IDENTICAL
    assert p.text() == "x 0 (identical in every repeat)"


def test_ten_equal_differences_get_the_sign_test_and_no_interval():
    a = pd.Series(np.linspace(0.7, 0.8, 10))
    p = Paired.between("x", a + 0.01, a)  # np.std of the differences: ~1e-17, not 0
    assert p.p_value == pytest.approx(2 * 0.5 ** 10)
    assert np.isnan(p.low) and np.isnan(p.high)
    assert p.text() == "x +0.010 (the same in every repeat: no interval)"


def test_a_told_apart_difference_never_prints_as_zero():
    assert signed_ci(0.000295, 0.000101, 0.000490) == "+0.00030 [+0.00010, +0.00049]"
    assert with_ci(0.000295, 0.000101, 0.000490) == "0.00030 [0.00010, 0.00049]"
    assert signed_ci(0.011, 0.008, 0.013) == "+0.011 [+0.008, +0.013]"
    assert signed_ci(0.0123, -0.002, 0.026) == "+0.012 [-0.002, +0.026]"


# ------------------------------------------------------------------ 6. power said properly
def test_repeats_needed_are_for_80_percent_power_and_rounded_when_large():
    small = Paired.of("x", [0.01, 0.012, 0.008, 0.011, 0.009])
    assert small.repeats_needed() == 3  # a large effect: the fewest repeats already do
    faint = Paired.of("x", [0.001, -0.004, 0.006, 0.002, -0.001])
    assert faint.repeats_needed() > 40
    assert repeats_phrase(29) == "about 29 repeats"
    assert repeats_phrase(547) == "about 550 repeats"
    assert repeats_phrase(1001) == "more than 1,000 repeats"


# ------------------------------------------------------------------ 7. the estimand
def test_the_page_says_what_its_verdicts_are_about():
    from modelvar.findings.report import _sentences_html

    sources, summary = claim_tables({"dnone_cnone_hnone_down050_seedfix": (.78, .03, .2)})
    page = _sentences_html(sources, pd.DataFrame())
    assert ("What the verdicts are about: a dataset&#x27;s verdicts are about test sets and "
            "training pools drawn from that dataset (its repeats). A statement about new data "
            "of the kind needs datasets, not repeats: the page makes one (a t-test over the "
            "datasets&#x27; mean differences) from 6 datasets on.") in page


# ------------------------------------------------------------------ 8. plain sentences
def test_a_level_too_weak_to_judge_is_left_out_of_the_ranking_and_named():
    from modelvar.findings.comparison import leader_margins
    from modelvar.findings.report import sentences

    down, weak = "dnone_cnone_hnone_down050_seedfix", "rel0p1_cnone_hnone_down100_seedfix"
    seed = "dnone_cnone_hnone_down100_seedrun"
    sources, summary = claim_tables({down: (.78, .02, .20), weak: (.79, .05, .30),
                                     seed: (.8, .005, .02)}, changed={weak: 0.01})
    sources["weak"] = (sources["source"] == "data") & (sources["data_changed_frac"] < 0.5)
    margins = leader_margins(sources, summary).set_index("measure")
    # the weak level had the largest spread, but it is not ranked: the next one leads
    assert margins.loc["accuracy_sd", "leader"] == "50 % train"
    assert margins.loc["accuracy_sd", "left_out"] == "data rel 0.1"
    said = sentences(sources, pd.DataFrame(), margins.reset_index())["d"][0]
    assert said.endswith("Data rel 0.1 is too weak to judge and not ranked.")


def test_the_landing_names_the_runner_up_in_short_sentences():
    from modelvar.findings.comparison import leader_margins
    from modelvar.findings.report import headline_sentences

    down, rel = "dnone_cnone_hnone_down050_seedfix", "rel0p2_cnone_hnone_down100_seedfix"
    sources, summary = claim_tables({down: (.78, .03, .20), rel: (.79, .01, .05)})
    said = headline_sentences(sources, pd.DataFrame(), leader_margins(sources, summary))
    assert said[1].startswith("lr-sgd's predictions changed most under 50 % train "
                              "(disagreement 0.20")
    assert "told apart from the other source" in said[1]
    assert "the runner-up, data rel 0.2, had 0.05" in said[1]
    assert all(len(sentence) < 220 for s in said for sentence in s.split(". "))


# ------------------------------------------------------------------ 9. the calibration's scoring
def test_the_calibration_scores_a_false_leader_as_false():
    """A leader said to be told apart in a tie is scored false, and a true one true: the
    benchmark's false-claim rates count what they say."""
    judged, truth = judged_page(scenario="tie")
    verdicts = judged.tables["verdicts"].copy()
    leaders = verdicts["kind"] == "leader"
    verdicts.loc[leaders, "holds"] = True
    verdicts.loc[leaders, "verdict"] = SUPPORTED  # every tie called told apart
    scored = calibration.score(judged.tables, verdicts, truth)
    assert scored[scored["kind"] == "leader"]["false"].all()
    # an undeclared kind is an error, never skipped
    verdicts.loc[verdicts.index[0], "kind"] = "hunch"
    with pytest.raises(ValueError, match="claim kind 'hunch' is not declared"):
        calibration.score(judged.tables, verdicts, truth)
    judged, truth = judged_page(scenario="planted")
    scored = calibration.score(judged.tables, judged.tables["verdicts"], truth)
    made = scored[(scored["kind"] == "leader") & scored["made"]]
    assert len(made) and not made["false"].any() and made["possible"].all()


def test_the_calibrated_page_makes_no_false_most_in_a_tie():
    scored = calibration.run_pages("tie", pages=6, repeats=8, seed=53)
    rates = calibration.rates(scored)
    assert rates["pages"] == 6 and rates["false per leader"] == 0
    assert rates["headline: pages with a false claim"] == 0
    assert rates["exploratory: FDR"] <= 0.05


def test_contradicted_and_inconclusive_stay_distinct_in_claims():
    """The seed claims' status words are the verdicts', with their p of the claim made."""
    weaker, stronger = "dnone_cnone_hrel0p1_down100_seedfix", "dnone_cnone_hrel0p2_down100_seedfix"
    from modelvar.findings.claims import check_claims

    false = check_claims(*claim_tables({weaker: (.8, .020, .05), stronger: (.8, .010, .06)}),
                         weak_below=0.5).set_index("claim").loc["hparam_strength"]
    assert false["status"] == CONTRADICTED and false["p_value"] <= 0.05
    assert json.loads(false["p_values"])[0] == pytest.approx(false["p_value"])
    equal = check_claims(*claim_tables({weaker: (.8, .002, .05), stronger: (.8, .002, .06)}),
                         weak_below=0.5).set_index("claim").loc["hparam_strength"]
    assert equal["status"] == INCONCLUSIVE
    assert CONTROL  # the control cell every claim table has
