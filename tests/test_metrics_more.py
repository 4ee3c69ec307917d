"""Multi-run agreement, per-sample instability, probabilistic metrics and tauW vs oracles."""

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import entropy as scipy_entropy
from sklearn.metrics import balanced_accuracy_score, brier_score_loss
from sklearn.metrics import log_loss as sk_log_loss

from modelvar.metrics import MetricInputError
from modelvar.metrics.agreement import (
    bias_variance_01,
    error_sets,
    fleiss_kappa,
    kripp_alpha,
    per_sample_instability,
)
from modelvar.metrics.probabilistic import (
    brier,
    check_proba,
    class_representation,
    confusion_index,
    entropy,
    log_loss,
    per_run_metrics,
    purity,
)
from modelvar.metrics.tau import tau_w


def fleiss_oracle(preds, c):
    """Fleiss (1971) from the textbook formulas, loops and all."""
    k, n = preds.shape
    table = np.array([[np.sum(preds[:, u] == j) for j in range(c)] for u in range(n)], float)
    p_j = table.sum(axis=0) / (n * k)
    p_i = (np.sum(table * table, axis=1) - k) / (k * (k - 1))
    return (p_i.mean() - np.sum(p_j**2)) / (1 - np.sum(p_j**2))


@pytest.mark.parametrize("seed", range(5))
def test_multi_run_agreement_matches_oracles(seed):
    rng = np.random.default_rng(seed)
    c = int(rng.integers(2, 6))
    y = rng.integers(0, c, 120)
    preds = np.where(rng.random((7, 120)) < 0.6, y, rng.integers(0, c, (7, 120)))
    assert fleiss_kappa(preds, c) == pytest.approx(fleiss_oracle(preds, c), rel=1e-12)
    want = krippendorff.alpha(preds.astype(float), level_of_measurement="nominal")
    assert kripp_alpha(preds, c) == pytest.approx(want, rel=1e-12)


def test_multi_run_agreement_edges():
    same = np.zeros((4, 10), dtype=int)
    assert np.isnan(fleiss_kappa(same)) and np.isnan(kripp_alpha(same))
    varied = np.tile(np.arange(5), (3, 2))
    assert fleiss_kappa(varied) == pytest.approx(1.0)
    assert kripp_alpha(varied) == pytest.approx(1.0)


def test_error_set_intersection_and_union():
    y = np.array([0, 0, 0, 0, 0])
    preds = np.array([[1, 1, 0, 0, 0], [1, 0, 1, 0, 0], [1, 0, 0, 0, 0]])
    out = error_sets(y, preds)
    assert out["always_wrong"] == 1 and out["ever_wrong"] == 3
    assert out["ever_wrong_frac"] == pytest.approx(0.6)


def test_bias_variance_01_equals_a_hand_computation():
    """Five samples, four runs. Majorities: 0 (3 of 4), 1 (2 of 4: the tie 1,1,2,2 goes to the
    smaller label), 2 (4 of 4), 0 (2 of 4 against 1 and 2), 1 (3 of 4)."""
    y = np.array([0, 2, 2, 1, 1])
    preds = np.array([[0, 1, 2, 0, 1],
                      [0, 1, 2, 0, 1],
                      [0, 2, 2, 1, 1],
                      [1, 2, 2, 2, 0]])
    out = bias_variance_01(y, preds)
    # majority wrong on samples 1 (1 ≠ 2) and 3 (0 ≠ 1): bias 2/5
    assert out["bias_01"] == pytest.approx(2 / 5)
    # off-majority shares 1/4, 2/4, 0, 2/4, 1/4
    assert out["variance_01"] == pytest.approx((0.25 + 0.5 + 0 + 0.5 + 0.25) / 5)
    # where the majority is wrong, the runs that hit the truth: 2/4 on sample 1, 1/4 on 3
    assert out["variance_01_biased"] == pytest.approx((0.5 + 0.25) / 5)
    # the decomposition adds up to the runs' mean 0-1 loss
    loss = (preds != y).mean()
    assert out["bias_01"] + out["variance_01_unbiased"] - out["variance_01_biased"] == \
        pytest.approx(loss)


@pytest.mark.parametrize("seed", range(3))
def test_bias_variance_01_adds_up_to_the_loss_on_random_runs(seed):
    """Exact for any number of classes (Domingos 2000), on random runs."""
    rng = np.random.default_rng(seed)
    c = 2 + seed
    y = rng.integers(0, c, 200)
    preds = np.where(rng.random((9, 200)) < 0.5, y, rng.integers(0, c, (9, 200)))
    out = bias_variance_01(y, preds)
    assert out["bias_01"] + out["variance_01_unbiased"] - out["variance_01_biased"] == \
        pytest.approx((preds != y).mean(), abs=1e-12)


def test_per_sample_instability():
    y = np.array([0, 1, 2])
    preds = np.array([[0, 1, 0], [0, 2, 1], [0, 1, 2], [0, 2, 0]])
    t = per_sample_instability(y, preds, 3)
    np.testing.assert_allclose(t["frac_wrong"], [0, 0.5, 0.75])
    np.testing.assert_array_equal(t["n_labels"], [1, 2, 3])
    np.testing.assert_array_equal(t["flips"], [0, 3, 3])
    want = [scipy_entropy(np.bincount(preds[:, u], minlength=3) / 4, base=3) for u in range(3)]
    np.testing.assert_allclose(t["label_entropy"], want, atol=1e-12)


def random_proba(rng, n, k):
    p = rng.dirichlet(np.ones(k), size=n)
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("k", [2, 3, 7])
def test_probabilistic_metrics_match_sklearn_and_scipy(k):
    rng = np.random.default_rng(k)
    proba = random_proba(rng, 200, k)
    y = rng.integers(0, k, 200)
    assert log_loss(y, proba) == pytest.approx(sk_log_loss(y, proba, labels=range(k)))
    want = brier_score_loss(y, proba, labels=range(k), scale_by_half=False)
    assert brier(y, proba) == pytest.approx(want)
    np.testing.assert_allclose(entropy(proba), scipy_entropy(proba, base=k, axis=1))
    srt = np.sort(proba, axis=1)
    np.testing.assert_allclose(confusion_index(proba), 1 - (srt[:, -1] - srt[:, -2]))
    pred = proba.argmax(axis=1)
    m = per_run_metrics(y, pred, proba, k)
    assert m["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, pred))
    assert m["entropy_mean"] == pytest.approx(entropy(proba).mean())


def test_seed_002_example_values():
    # aqp: p = (.25, .25, .4, .05, .05): entropy base 2 = 1.960964, CI = 0.85
    p = np.array([[0.25, 0.25, 0.4, 0.05, 0.05]])
    assert entropy(p)[0] * np.log2(5) == pytest.approx(1.960964, abs=1e-6)
    assert confusion_index(p)[0] == pytest.approx(0.85)
    # seed 001's three "algorithms": mean cross-entropy of the true-class probabilities
    y = np.array([0, 1, 1, 2, 2, 0, 2])
    best_true = np.array([0.833, 0.762, 0.711, 0.82, 0.723, 0.745, 0.502])
    assert np.mean(-np.log(best_true)) == pytest.approx(0.3288480606756968)
    proba = np.full((7, 3), 0.0)
    proba[np.arange(7), y] = best_true
    proba[np.arange(7), (y + 1) % 3] = 1 - best_true
    assert log_loss(y, proba) == pytest.approx(0.3288480606756968)


def test_entropy_edges():
    assert entropy(np.array([[1.0, 0.0, 0.0]]))[0] == 0.0
    assert entropy(np.full((1, 4), 0.25))[0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("proba", "message"),
    [
        (np.array([[0.5, 0.6]]), "do not sum to 1"),
        (np.array([[1.2, -0.2]]), r"outside \[0, 1\]"),
        (np.array([[np.nan, 1.0]]), "NaN"),
        (np.array([[1.0]]), "at least 2 classes"),
        (np.array([0.5, 0.5]), "2-D"),
    ],
)
def test_bad_probabilities(proba, message):
    with pytest.raises(MetricInputError, match=message):
        check_proba(proba)


def test_purity_and_class_representation():
    y = np.array([0, 0, 1, 1, 2, 2])
    pred = np.array([0, 0, 0, 1, 1, 1])
    assert purity(y, pred, 3) == pytest.approx(4 / 6)
    rep = class_representation(y, pred, 3)
    np.testing.assert_allclose(rep["ratio"], [1.5, 1.5, 0.0])


# aqp::tauW manual-page example (seed 002): rows = allocation (predicted), columns = reference
CROSSCLASS = np.array([
    [2, 1, 0, 5, 0, 0],
    [1, 74, 2, 1, 3, 6],
    [0, 5, 8, 6, 1, 3],
    [6, 1, 3, 91, 0, 0],
    [0, 4, 0, 0, 0, 4],
    [0, 6, 2, 2, 4, 38],
])
WEIGHTS = np.array([
    [1.00, 0.05, 0.05, 0.15, 0.05, 0.15],
    [0.05, 1.00, 0.05, 0.05, 0.05, 0.35],
    [0.05, 0.05, 1.00, 0.20, 0.15, 0.15],
    [0.15, 0.05, 0.25, 1.00, 0.10, 0.25],
    [0.05, 0.10, 0.15, 0.10, 1.00, 0.15],
    [0.20, 0.30, 0.10, 0.25, 0.20, 1.00],
])


def test_tau_w_matches_aqp_published_outputs():
    naive = tau_w(CROSSCLASS)
    assert naive.overall_naive == pytest.approx(0.7634, abs=5e-5)
    assert naive.tau == pytest.approx(0.7161, abs=5e-5)
    np.testing.assert_allclose(naive.producers_naive,
                               [0.2222, 0.8132, 0.5333, 0.8667, 0, 0.7451], atol=5e-5)
    ref = tau_w(CROSSCLASS, priors="reference")
    assert ref.tau == pytest.approx(0.6686, abs=5e-5)
    weighted = tau_w(CROSSCLASS, WEIGHTS)
    assert weighted.overall_weighted == pytest.approx(0.8039, abs=5e-5)
    assert weighted.tau_w == pytest.approx(0.7253, abs=5e-5)
    np.testing.assert_allclose(weighted.users_weighted,
                               [0.3500, 0.8787, 0.4370, 0.9178, 0.1250, 0.7942], atol=5e-5)
    assert tau_w(CROSSCLASS, WEIGHTS, priors="reference").tau_w == pytest.approx(0.6744,
                                                                               abs=5e-5)


def test_tau_w_bad_input():
    with pytest.raises(MetricInputError, match="square"):
        tau_w(np.ones((2, 3)))
    with pytest.raises(MetricInputError, match="diagonal"):
        tau_w(np.ones((2, 2)), weights=np.full((2, 2), 0.5))
    with pytest.raises(MetricInputError, match="priors"):
        tau_w(np.ones((2, 2)), priors=np.array([0.9, 0.9]))


def test_repeat_tables_of_identical_perfect_runs_emit_no_warnings():
    """Undefined nulls (no error anywhere) are NaN without numpy's 'Mean of empty slice'."""
    import warnings

    from modelvar.pipeline.metric_tables import repeat_tables

    y = np.array(["a", "b"] * 20)
    frame = pd.concat([pd.DataFrame({"run": r, "sample": np.arange(40), "y_true": y,
                                     "y_pred": y}) for r in range(4)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tables = repeat_tables(frame)
    summary = tables["summary"].set_index(["subset", "metric"])
    assert np.isnan(summary.loc[("all", "ec_local"), "null_mean"])
    assert summary.loc[("all", "pa"), "mean"] == 1.0
