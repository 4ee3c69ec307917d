"""The metric simulation study (seed 000) and the Dirichlet simulation (seed 002)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from modelvar import simulation as sm
from modelvar.metrics.pairwise import ALL_METRICS, pairwise_metrics
from modelvar.metrics.probabilistic import entropy
from modelvar.simulation import dirichlet


def rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------ class-distribution generators
@pytest.mark.parametrize("kind", sm.DISTRIBUTIONS)
@pytest.mark.parametrize("c", [2, 3, 7, 20])
def test_generators_give_sorted_positive_distributions(kind, c):
    g = rng(c)
    for _ in range(50):
        p = sm.class_distribution(kind, c, g)
        assert p.shape == (c,) and np.isclose(p.sum(), 1.0)
        assert (p > 0).all() and (np.diff(p) <= 1e-15).all()


def test_exponential_skew_grows_with_scale_and_keeps_every_class():
    ent = [entropy(sm.variably_exponential(10, rng(), scale=s)[None])[0] for s in (0.1, 2, 8, 20)]
    assert ent[0] > 0.99 and all(a > b for a, b in zip(ent, ent[1:], strict=False))
    assert sm.variably_exponential(10, rng(), scale=20).min() > 0  # the appendix's linspace(0,…)


def test_multi_modal_has_exactly_n_modes_dominant_classes():
    for n_modes in (1, 3, 5):
        p = sm.multi_modal(8, rng(), n_modes=n_modes)
        assert np.isclose(p[:n_modes], p[0]).all() and np.isclose(p[n_modes:], p[-1]).all()
        assert np.isclose(p[0] / p[-1], 8 / n_modes)
    with pytest.raises(ValueError, match="n_modes"):
        sm.multi_modal(4, rng(), n_modes=5)


def test_step_like_always_has_a_plateau_also_for_few_classes():
    g = rng(1)
    for c in (3, 5, 10, 30):
        for _ in range(30):
            p = sm.step_like(c, g)
            _, counts = np.unique(p, return_counts=True)
            assert counts.max() >= 2  # the appendix's version has none for c <= 10


def test_generators_reject_bad_input():
    with pytest.raises(ValueError, match="at least 2 classes"):
        sm.uniform_random(1, rng())
    with pytest.raises(ValueError, match="unknown distribution type"):
        sm.class_distribution("zipf", 5, rng())


# ------------------------------------------------------------------ the prediction process
@pytest.fixture
def truth():
    g = rng(2)
    return g.choice(4, size=2000, p=[0.4, 0.3, 0.2, 0.1])


def test_fixed_error_set_stays_within_one_subset(truth):
    runs = sm.simulate_runs(truth, 30, accuracy=0.9, max_error_set=0.15, error_set="fixed",
                            rng=rng(3), n_classes=4)
    wrong = runs != truth
    assert wrong.any(axis=0).sum() <= round(0.15 * len(truth))
    assert abs(wrong.mean() - 0.1) < 0.01


def test_variable_error_sets_never_exceed_s_and_spread(truth):
    runs = sm.simulate_runs(truth, 30, accuracy=0.9, max_error_set=0.1, error_set="variable",
                            rng=rng(4), n_classes=4)
    wrong = runs != truth
    assert (wrong.sum(axis=1) <= round(0.1 * len(truth))).all()
    assert wrong.any(axis=0).sum() > 0.5 * len(truth)  # not confined to one subset


def test_dependent_errors_are_more_consistent_at_equal_accuracy(truth):
    kw = dict(accuracy=0.8, error_set="variable", n_classes=4)
    ind = sm.simulate_runs(truth, 10, dependence=0.0, rng=rng(5), **kw)
    dep = sm.simulate_runs(truth, 10, dependence=0.6, rng=rng(5), **kw)
    acc_i, acc_d = (ind == truth).mean(), (dep == truth).mean()
    assert abs(acc_i - acc_d) < 0.02
    pi, pd_ = pairwise_metrics(truth, ind), pairwise_metrics(truth, dep)
    for metric in ("ec_local", "ec_kappa", "pa"):
        assert pd_[metric].mean() > pi[metric].mean() + 0.1
    assert abs(pi["ec_corr"].mean()) < 0.03  # independent errors are uncorrelated


def test_wrong_labels_follow_q_and_never_equal_truth(truth):
    q = np.array([0.1, 0.2, 0.3, 0.4])
    runs = sm.simulate_runs(truth, 20, accuracy=0.5, rng=rng(6), wrong_label_dist=q,
                            n_classes=4)
    wrong = runs != truth
    t0 = np.broadcast_to(truth, runs.shape)[wrong] == 0
    labels = runs[wrong][t0]  # wrong predictions for true class 0: q over classes 1..3
    observed = np.bincount(labels, minlength=4)[1:]
    expected = q[1:] / q[1:].sum() * len(labels)
    assert stats.chisquare(observed, expected).pvalue > 0.001


def test_random_process_percent_agreement_is_sum_of_squares():
    q = np.array([0.5, 0.3, 0.15, 0.05])
    y = rng(7).integers(0, 4, 5000)
    runs = sm.simulate_runs(y, 8, accuracy=0.0, process="random", wrong_label_dist=q,
                            rng=rng(8), n_classes=4)
    pa = pairwise_metrics(y, runs)["pa"].mean()
    assert pa == pytest.approx((q ** 2).sum(), abs=0.01)


def test_simulation_is_seeded(truth):
    a = sm.simulate_runs(truth, 5, accuracy=0.7, dependence=0.3, rng=rng(9), n_classes=4)
    b = sm.simulate_runs(truth, 5, accuracy=0.7, dependence=0.3, rng=rng(9), n_classes=4)
    c = sm.simulate_runs(truth, 5, accuracy=0.7, dependence=0.3, rng=rng(10), n_classes=4)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_simulate_runs_rejects_bad_parameters(truth):
    with pytest.raises(ValueError, match="max_error_set"):
        sm.simulate_runs(truth, 3, accuracy=0.7, max_error_set=0.1, rng=rng())
    with pytest.raises(ValueError, match="error_set"):
        sm.simulate_runs(truth, 3, accuracy=0.7, error_set="sometimes", rng=rng())
    with pytest.raises(ValueError, match="probability vector"):
        sm.simulate_runs(truth, 3, accuracy=0.7, wrong_label_dist=[0.5, 0.5], rng=rng())


# ------------------------------------------------------------------ the evaluation
@pytest.fixture(scope="module")
def sims():
    design = sm.simulation_grid(n_classes=(2, 5), replicates=6)
    return sm.run_simulations(design, n_samples=300, n_runs=6, rng=np.random.default_rng(11))


def test_grid_and_simulation_table(sims):
    assert len(sims) == 2 * 4 * 2 * 2 * 2 * 6
    assert set(ALL_METRICS) <= set(sims.columns)
    assert sims["mean_accuracy"].between(0.45, 1.0).all()
    assert (sims.loc[~sims["dependent"], "dependence"] == 0).all()


def test_evaluation_recovers_known_facts(sims):
    criteria, ranking = sm.evaluate(sims)
    crit = criteria.set_index("metric")
    assert set(crit.index) == set(ALL_METRICS)
    # ec_global = P(both wrong) falls with accuracy almost deterministically
    assert crit.loc["ec_global", "rho_accuracy"] < -0.7
    # pa and churn carry the same information: same moderation, mirrored direction
    assert crit.loc["pa", "accuracy_moderation"] == pytest.approx(
        crit.loc["churn", "accuracy_moderation"], abs=1e-3)  # float ties in the ranks
    assert crit.loc["pa", "dependence_direction"] == "higher"
    assert crit.loc["churn", "dependence_direction"] == "lower"
    # error indicators ignore which wrong label was predicted: error-based metrics cannot see a
    # mismatch between predicted and true distributions; label-based ones can
    error_based = crit.loc[["ec_local", "ec_global", "ec_corr"], "mismatch_sensitivity"].max()
    assert crit.loc["cramer_v", "mismatch_sensitivity"] > error_based
    # dependent runs are recognisable beyond chance
    assert crit["dependence_auroc"].min() > 0.6
    assert ranking["mean_rank"].is_monotonic_increasing
    best = sm.best_per_criterion(criteria)
    assert set(best) == set(sm.CRITERIA) and all(len(v) == 3 for v in best.values())


def test_a_simulate_job_imports_neither_scikit_learn_nor_scipy_stats(tmp_path):
    """The three simulate jobs of a study only simulate; the evaluation's libraries
    (scikit-learn's AUROC, scipy's Spearman correlation: ≈ 2.5 s CPU of imports a job) load in
    the evaluate-simulation job alone."""
    import json
    import subprocess
    import sys

    argv = ["simulate", "--root-seed", "1", "--n-classes", "2", "--distributions", "uniform",
            "--replicates", "1", "--n-samples", "50", "--runs", "3",
            "--out", str(tmp_path / "sims.parquet")]
    code = (f"import sys; from modelvar.cli import main; rc = main({json.dumps(argv)}); "
            "print(rc, 'sklearn' in sys.modules, 'scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.split()[-3:] == ["0", "False", "False"], out.stderr[-2000:]
    criteria, _ = sm.evaluate(pd.read_parquet(tmp_path / "sims.parquet"))
    assert set(criteria["metric"]) == set(ALL_METRICS)


# ------------------------------------------------------------------ Dirichlet (seed 002)
def test_dirichlet_draws_have_the_right_means():
    alpha = np.array(dirichlet.SEED_CASES["Case 2"], float)
    p = dirichlet.simulate(alpha, 20000, rng(12))
    assert np.allclose(p.sum(axis=1), 1.0)
    assert np.allclose(p.mean(axis=0), alpha / alpha.sum(), atol=0.005)
    with pytest.raises(ValueError, match="positive"):
        dirichlet.simulate([1.0, 0.0], 10, rng())


def test_dirichlet_cases_and_spearman_table():
    probs, per_sample = dirichlet.simulate_cases(dirichlet.SEED_CASES, 500, rng(13))
    assert len(probs) == 3 * 500 * 10 and len(per_sample) == 3 * 500
    assert per_sample[["H", "CI"]].stack().between(0, 1).all()
    table = dirichlet.spearman_table(per_sample)
    assert list(table["case"]) == ["Case 1", "Case 2", "Case 3"]
    # Case 3 (one dominant class) is the least uncertain
    assert table.set_index("case").loc["Case 3", "mean_H"] < table["mean_H"].max()
    # with two classes CI = 1 − |p1 − p2| and H are both monotone in |p1 − p2|: rho = 1
    _, two = dirichlet.simulate_cases({"two": [2.0, 3.0]}, 300, rng(14))
    assert dirichlet.spearman_table(two)["spearman_CI_H"].iloc[0] == pytest.approx(1.0)
    assert isinstance(table, pd.DataFrame)
