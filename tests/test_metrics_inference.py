"""Jackknife CI of the mean pairwise value, and the independence null."""

import itertools

import numpy as np
import pytest
from scipy import stats

from modelvar.metrics import pairwise_metrics
from modelvar.metrics.inference import independence_null, jackknife_ci


def test_jackknife_equals_explicit_leave_one_run_out():
    rng = np.random.default_rng(0)
    k = 7
    iu, ju = np.triu_indices(k, 1)
    values = rng.random(len(iu))
    values[3] = np.nan
    se, low, high = jackknife_ci(iu, ju, values)
    thetas = []
    for r in range(k):
        keep = (iu != r) & (ju != r)
        thetas.append(np.nanmean(values[keep]))
    thetas = np.array(thetas)
    want = np.sqrt((k - 1) / k * np.sum((thetas - thetas.mean()) ** 2))
    assert se == pytest.approx(want, rel=1e-12)
    mean = np.nanmean(values)
    assert (low + high) / 2 == pytest.approx(mean)
    assert high - mean == pytest.approx(stats.t.ppf(0.975, k - 2) * want)


def test_jackknife_needs_three_runs():
    assert np.isnan(jackknife_ci(np.array([0]), np.array([1]), np.array([0.5]))[0])


def test_jackknife_covers_where_naive_pair_sd_does_not():
    """Runs err independently with rate 0.2 on a fixed test set: E[ec_global] = 0.04."""
    rng = np.random.default_rng(1)
    k, n, sims, truth = 10, 200, 400, 0.04
    y = np.zeros(n, dtype=np.int64)
    iu, ju = np.triu_indices(k, 1)
    hits_jk = hits_naive = 0
    for _ in range(sims):
        preds = (rng.random((k, n)) < 0.2).astype(np.int64)
        values = pairwise_metrics(y, preds, metrics=["ec_global"])["ec_global"].to_numpy()
        _, low, high = jackknife_ci(iu, ju, values)
        hits_jk += low <= truth <= high
        half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
        hits_naive += abs(values.mean() - truth) <= half
    assert 0.91 <= hits_jk / sims <= 0.99
    assert hits_naive / sims < hits_jk / sims - 0.1


def test_independence_null_is_reached_by_independent_runs_and_exceeded_by_dependent_ones():
    rng = np.random.default_rng(2)
    k, n, c = 8, 20_000, 3
    y = rng.integers(0, c, n)
    noise = rng.integers(0, c, (k, n))
    independent = np.where(rng.random((k, n)) < 0.7, y, noise)
    base = np.where(rng.random(n) < 0.7, y, rng.integers(0, c, n))
    dependent = np.where(rng.random((k, n)) < 0.8, base, noise)
    for preds, dependent_errors in ((independent, False), (dependent, True)):
        t = pairwise_metrics(y, preds, n_classes=c)
        null = independence_null(t["acc_i"], t["acc_j"], c)
        for metric in ("ec_global", "ec_local", "ec_agree", "pa", "ec_kappa"):
            excess = t[metric].mean() - null[metric].mean()
            if dependent_errors:
                assert excess > 0.02, metric
            else:
                assert abs(excess) < 0.01, metric


def test_null_formulas():
    null = independence_null(np.array([0.8, 1.0]), np.array([0.9, 1.0]), 3)
    assert null["pa"][0] == pytest.approx(0.72 + 0.02 / 2)
    assert null["ec_global"][0] == pytest.approx(0.02)
    assert null["ec_local"][0] == pytest.approx(0.02 / (0.3 - 0.02))
    assert null["ec_agree"][0] == pytest.approx(0.02 + 0.72)
    assert np.isnan(null["ec_local"][1])  # neither run errs
    assert list(itertools.islice(null.columns, 3)) == ["ec_global", "ec_local", "ec_agree"]
