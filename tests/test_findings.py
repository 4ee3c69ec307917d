"""Findings (issue 14): sources of variance against the control, variance components with known
shares recovered, seed 004's claims on tables where each holds and where it does not."""

import numpy as np
import pandas as pd
import pytest

from modelvar.findings.claims import NOT_SUPPORTED, NOT_TESTED, SUPPORTED, check_claims
from modelvar.findings.components import variance_components
from modelvar.findings.sources import no_effect, sources_of_variance, study_sources
from modelvar.pipeline.cells import Cell, cell_label, level_label
from modelvar.pipeline.design import cell_roles


# ------------------------------------------------------------------ variance components
def balanced(rng, effects: dict[str, dict[str, float]], repeats: int, runs: int,
             repeat_sd: float, noise_sd: float) -> tuple[pd.DataFrame, dict[str, float]]:
    """Run accuracies of a full factorial design with known effects; the population shares."""
    rep = rng.normal(0, repeat_sd, repeats)
    families = list(effects)
    grid = pd.MultiIndex.from_product([list(effects[f]) for f in families], names=families)
    rows = []
    for r in range(repeats):
        for levels in grid:
            mean = 0.8 + rep[r] + sum(effects[f][lv] for f, lv in zip(families, levels,
                                                                      strict=True))
            for _ in range(runs):
                rows.append({**dict(zip(families, levels, strict=True)), "repeat": r,
                             "accuracy": mean + rng.normal(0, noise_sd)})
    variances = {f: np.var(list(e.values())) for f, e in effects.items()}
    variances["repeat"] = np.var(rep)
    variances["noise"] = noise_sd ** 2
    total = sum(variances.values())
    return pd.DataFrame(rows), {k: v / total for k, v in variances.items()}


def test_variance_components_recover_known_shares():
    rng = np.random.default_rng(1)
    effects = {"data": {"dnone": 0.0, "rel0p2": -0.06, "sig0": 0.06},
               "hparam": {"hnone": 0.03, "hrel0p1": -0.03},
               "downsample": {"down050": -0.01, "down100": 0.01}}
    frame, truth = balanced(rng, effects, repeats=30, runs=10, repeat_sd=0.02, noise_sd=0.01)
    table = variance_components(frame, "accuracy", replicated=True, n_boot=100,
                                rng=np.random.default_rng(2)).set_index("component")
    names = {"data": "data perturbation", "hparam": "hparam perturbation",
             "downsample": "training fraction", "repeat": "repeat (test set)",
             "noise": "runs (seed, draws)"}
    for key, name in names.items():
        assert table.loc[name, "share"] == pytest.approx(truth[key], abs=0.02), name
        assert table.loc[name, "share_low"] <= truth[key] + 0.02
        assert table.loc[name, "share_high"] >= truth[key] - 0.02
    assert table.loc["interactions", "share"] < 0.01  # none were simulated
    assert table["share"].sum() == pytest.approx(1.0)
    # one value per cell × repeat (per-repeat agreement): interactions and residual together
    means = frame.groupby(["data", "hparam", "downsample", "repeat"], as_index=False)[
        "accuracy"].mean()
    coarse = variance_components(means, "accuracy", replicated=False, n_boot=50,
                                 rng=np.random.default_rng(3)).set_index("component")
    assert "interactions and residual" in coarse.index
    assert coarse.loc["data perturbation", "share"] > coarse.loc["hparam perturbation", "share"]


def test_a_factor_without_effect_gets_a_share_near_zero():
    rng = np.random.default_rng(4)
    effects = {"data": {"dnone": 0.0, "rel0p2": 0.05}, "hparam": {"hnone": 0.0, "hrel0p1": 0.0}}
    frame, truth = balanced(rng, effects, repeats=20, runs=5, repeat_sd=0.01, noise_sd=0.01)
    table = variance_components(frame, "accuracy", replicated=True, n_boot=50,
                                rng=np.random.default_rng(5)).set_index("component")
    assert table.loc["hparam perturbation", "share"] < 0.005
    assert table.loc["data perturbation", "share"] == pytest.approx(truth["data"], abs=0.03)


# ------------------------------------------------------------------ sources of variance
PERTURBATION = {"data": ["none", {"rel": 0.2}], "downsample": [0.5, 1.0],
                "model_seed": ["per-run"]}


def synthetic_tables(rng, repeats=6):
    """summary, agreement and runs tables of one dataset × classifier, as the pipeline writes
    them: accuracy means and SDs and mean churn per (cell, repeat) with known values."""
    roles = cell_roles(PERTURBATION, "both")
    # within-repeat SD and churn of each one-at-a-time cell
    spread = {"dnone_cnone_hnone_down100_seedfix": (0.0, 0.0),
              "rel0p2_cnone_hnone_down100_seedfix": (0.01, 0.05),
              "dnone_cnone_hnone_down050_seedfix": (0.03, 0.15),
              "dnone_cnone_hnone_down100_seedrun": (0.0, 0.0)}
    summary, agreement, runs = [], [], []
    repeat_acc = 0.8 + rng.normal(0, 0.02, repeats)
    for cell in roles:
        sd, churn = spread.get(cell, (0.02, 0.1))
        levels = Cell.parse(cell).levels()
        for r in range(repeats):
            base = {"dataset": "d", "classifier": "xgb", "cell": cell, "repeat": r, **levels}
            summary.append({**base, "subset": "all", "metric": "accuracy",
                            "mean": repeat_acc[r], "sd": sd + rng.normal(0, 0.001) if sd else 0.0,
                            "null_mean": np.nan})
            for metric, value in (("churn", churn), ("pa", 1 - churn), ("ec_global", 0.1),
                                  ("ec_local", 0.5), ("kappa", 0.8)):
                summary.append({**base, "subset": "all", "metric": metric,
                                "mean": value + (rng.normal(0, 0.002) if churn else 0.0),
                                "sd": 0.0, "null_mean": 0.05})
            agreement.append({**base, "all_runs_identical": churn == 0, "unstable_frac": churn})
            for run in range(3):
                runs.append({**base, "run": run, "accuracy": repeat_acc[r],
                             "data_mean_abs_shift_sd": 0.5 if levels["data"] != "dnone" else 0,
                             "data_changed_frac": 1.0 if levels["data"] != "dnone" else 0,
                             "cat_changed_frac": 0.0})
    return (pd.DataFrame(summary), pd.DataFrame(agreement), pd.DataFrame(runs), roles,
            repeat_acc)


def test_each_source_alone_against_the_control_and_the_test_set_yardstick():
    summary, agreement, runs, roles, repeat_acc = synthetic_tables(np.random.default_rng(6))
    table = sources_of_variance(summary, agreement, runs, {"d": roles}).set_index("level")
    assert list(table.index) == ["control", "data rel 0.2", "50 % train", "seed per run",
                                 "test set (between repeats)"]
    control = table.loc["control"]
    assert control["accuracy_sd"] == 0 and control["disagreement"] == 0
    assert control["identical_repeats"] == 6
    assert table.loc["50 % train", "accuracy_sd"] == pytest.approx(0.03, abs=0.002)
    assert table.loc["50 % train", "disagreement"] == pytest.approx(0.15, abs=0.002)
    low, high = table.loc["50 % train", ["disagreement_low", "disagreement_high"]]
    assert low < 0.15 < high
    assert table.loc["data rel 0.2", "data_shift_sd"] == pytest.approx(0.5)
    # the yardstick: the SD of the control's repeat means, with a chi-square interval
    yard = table.loc["test set (between repeats)"]
    assert yard["accuracy_sd"] == pytest.approx(np.std(repeat_acc, ddof=1))
    assert yard["accuracy_sd_low"] < yard["accuracy_sd"] < yard["accuracy_sd_high"]
    # a per-run model seed that changed nothing is flagged
    assert list(no_effect(table.reset_index())["level"]) == ["seed per run"]
    over = study_sources(table.reset_index())
    assert set(over["datasets"]) == {1}


# ------------------------------------------------------------------ seed 004's claims
def sources_frame(rows):
    base = {"dataset": "d", "classifier": "lr-sgd", "repeats": 5, "identical_repeats": 0,
            "accuracy_low": np.nan, "accuracy_high": np.nan}
    out = []
    for cell, acc, sd, dis, dis_low in rows:
        c = Cell.parse(cell)
        active = [f for f in ("data", "categorical", "hparam", "downsample", "model_seed")
                  if c.levels()[f] not in ("dnone", "cnone", "hnone", "down100", "seedfix")]
        source = active[0] if active else "control"
        level = "control" if not active else level_label(source, c.levels()[source])
        out.append({**base, "cell": cell, "source": source, "level": level, "accuracy": acc,
                    "accuracy_sd": sd, "disagreement": dis, "disagreement_low": dis_low,
                    "disagreement_high": dis + 0.01})
    return pd.DataFrame(out)


CONTROL = ("dnone_cnone_hnone_down100_seedfix", 0.80, 0.0, 0.0, 0.0)


def status(frame, claim):
    table = check_claims(frame)
    return table.loc[table["claim"] == claim, "status"].item()


def test_claim_sig0_moves_accuracy_most():
    holds = sources_frame([CONTROL, ("sig0_cnone_hnone_down100_seedfix", 0.70, .02, .1, .09),
                           ("rel0p1_cnone_hnone_down100_seedfix", 0.79, .01, .05, .04)])
    fails = sources_frame([CONTROL, ("sig0_cnone_hnone_down100_seedfix", 0.79, .02, .1, .09),
                           ("rel0p1_cnone_hnone_down100_seedfix", 0.70, .01, .05, .04)])
    untested = sources_frame([CONTROL, ("rel0p1_cnone_hnone_down100_seedfix", .7, .01, .05, 0)])
    assert status(holds, "sig0_data") == SUPPORTED
    assert status(fails, "sig0_data") == NOT_SUPPORTED
    assert status(untested, "sig0_data") == NOT_TESTED


def test_claim_stronger_hparam_widens_accuracy():
    rows = [("dnone_cnone_hrel0p1_down100_seedfix", .8, .01, .05, .04),
            ("dnone_cnone_hrel0p2_down100_seedfix", .8, .02, .06, .05),
            ("dnone_cnone_hsig1_down100_seedfix", .8, .01, .05, .04),
            ("dnone_cnone_hsig0_down100_seedfix", .8, .03, .06, .05)]  # sig 0 is stronger
    assert status(sources_frame([CONTROL, *rows]), "hparam_strength") == SUPPORTED
    rows[1] = ("dnone_cnone_hrel0p2_down100_seedfix", .8, .005, .06, .05)
    table = check_claims(sources_frame([CONTROL, *rows]))
    row = table[table["claim"] == "hparam_strength"].iloc[0]
    assert row["status"] == NOT_SUPPORTED and "rel 0.1 SD 0.010 < rel 0.2 SD 0.005" in \
        row["evidence"]
    assert status(sources_frame([CONTROL, rows[0]]), "hparam_strength") == NOT_TESTED


def test_claim_downsampling_is_the_largest_source():
    rows = [("dnone_cnone_hnone_down050_seedfix", .78, .03, .2, .18),
            ("rel0p2_cnone_hnone_down100_seedfix", .79, .01, .05, .04)]
    assert status(sources_frame([CONTROL, *rows]), "downsampling_largest") == SUPPORTED
    rows[1] = ("rel0p2_cnone_hnone_down100_seedfix", .79, .01, .3, .28)  # more disagreement
    assert status(sources_frame([CONTROL, *rows]), "downsampling_largest") == NOT_SUPPORTED
    assert status(sources_frame([CONTROL, rows[1]]), "downsampling_largest") == NOT_TESTED


def test_claim_label_noise_matters_sample_noise_barely():
    label = ("dnone_label0p1_hnone_down100_seedfix", .79, .02, .10, .08)
    sample = ("dnone_sample0p2_hnone_down100_seedfix", .80, .005, .02, .01)
    assert status(sources_frame([CONTROL, label, sample]),
                  "categorical_label_vs_sample") == SUPPORTED
    loud = ("dnone_sample0p2_hnone_down100_seedfix", .78, .02, .09, .08)
    assert status(sources_frame([CONTROL, label, loud]),
                  "categorical_label_vs_sample") == NOT_SUPPORTED
    assert status(sources_frame([CONTROL, label]), "categorical_label_vs_sample") == NOT_TESTED


# ------------------------------------------------------------------ the control
@pytest.mark.parametrize("classifier", ["lr-sgd", "svm-sgd", "xgb"])
def test_a_deterministic_classifiers_control_gives_percent_agreement_exactly_one(classifier):
    from modelvar.data import load
    from modelvar.pipeline.design import control
    from modelvar.pipeline.fitting import fit_repeat
    from modelvar.pipeline.metric_tables import repeat_tables

    preds, _ = fit_repeat(load("vehicle", {"source": "embedded"}), classifier=classifier,
                          cell=control(), repeat=0, n_runs=4, test_fraction=0.25,
                          root_seed=9)
    tables = repeat_tables(preds)
    pairs = tables["pairwise"].query("subset == 'all'")
    assert (pairs["pa"] == 1.0).all() and (pairs["churn"] == 0.0).all()
    assert tables["agreement"]["all_runs_identical"].all()


def test_readable_cell_labels():
    assert cell_label("rel0p2_cnone_hsig1_down050_seedrun") == (
        "data rel 0.2 · categorical none · hparam sig 1 · 50 % train · seed per run")
    assert cell_label("dnone_samplemiss0p2_hnone_down100_seedfix", ("categorical",)) == (
        "categorical sample 0.2 (missing as a level)")


# ------------------------------------------------------------------ the Findings page's sentences
def study_of(datasets: dict[str, tuple[float, ...]]) -> pd.DataFrame:
    """Per dataset (downsampling SD and disagreement, data noise SD and disagreement, the
    test-set SD): the one-at-a-time sources of one classifier, with the yardstick row."""
    frames = []
    for name, (down_sd, down_dis, data_sd, data_dis, test_sd) in datasets.items():
        frame = sources_frame([CONTROL,
                               ("dnone_cnone_hnone_down050_seedfix", .78, down_sd, down_dis, 0),
                               ("rel0p2_cnone_hnone_down100_seedfix", .79, data_sd, data_dis, 0)])
        yard = {**frame.iloc[0].to_dict(), "source": "test set", "level": "test set",
                "accuracy_sd": test_sd, "disagreement": np.nan}
        frame = pd.concat([frame, pd.DataFrame([yard])], ignore_index=True)
        frame["dataset"] = name
        for measure in ("accuracy_sd", "disagreement"):
            frame[f"{measure}_low"], frame[f"{measure}_high"] = frame[measure], frame[measure]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def test_study_sentences_count_the_largest_source_over_datasets():
    from modelvar.findings.report import study_sentences

    sources = study_of({"a": (.03, .20, .01, .05, .02), "b": (.03, .10, .01, .30, .05),
                        "c": (.01, .10, .02, .20, .01)})
    [text] = study_sentences(sources)
    assert text == ("For lr-sgd, the largest run-to-run accuracy SD came from 50 % train on 2, "
                    "data rel 0.2 on 1 of 3 datasets; the largest disagreement between runs from "
                    "data rel 0.2 on 2, 50 % train on 1 of 3 datasets; drawing another test set "
                    "moved accuracy more than any source did within a repeat on 1 of 3 datasets.")


def test_findings_sentences_are_grouped_by_dataset_and_fold_for_many_datasets():
    from modelvar.findings.report import _sentences_html, sentences

    few = study_of({"a": (.03, .2, .01, .05, .02), "b": (.03, .1, .01, .3, .05)})
    per_dataset = sentences(few, pd.DataFrame())
    assert list(per_dataset) == ["a", "b"]
    assert per_dataset["b"][0].startswith("lr-sgd's accuracy varied most within a repeat under "
                                          "50 % train (run-to-run SD 0.030")
    page = _sentences_html(few, pd.DataFrame())
    assert "Over the 2 datasets" in page and page.count("<details open>") == 2
    many = study_of({f"d{i}": (.03, .2, .01, .05, .02) for i in range(6)})
    page = _sentences_html(many, pd.DataFrame())
    assert page.count("<details>") == 6 and "<details open>" not in page
    one = _sentences_html(study_of({"a": (.03, .2, .01, .05, .02)}), pd.DataFrame())
    assert "Over the" not in one and one.count("<details open>") == 1
