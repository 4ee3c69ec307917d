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
    assert list(itertools.islice(null, 3)) == ["ec_local", "ec_global", "ec_agree"]  # tables' order


def test_t_quantile_equals_scipy():
    from modelvar.metrics.student_t import t_quantile

    for df in [*range(1, 60), 100, 200, 500, 1000, 2.5, 0.7]:
        for p in (0.0013, 0.3, 0.5001, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999):
            assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), abs=2e-9), (p, df)


def test_intervals_stay_in_the_metrics_range_and_keep_their_coverage():
    """Five runs that nearly always agree (2 % flips): mean ± t·SE reaches past 1; the clipped
    interval does not, and covers E[pa] = 1 − 2q(1 − q) as often as the unclipped one."""
    rng = np.random.default_rng(3)
    k, n, q, sims = 5, 100, 0.02, 300
    truth = 1 - 2 * q * (1 - q)
    y = np.zeros(n, dtype=np.int64)
    iu, ju = np.triu_indices(k, 1)
    hits = hits_clipped = beyond = 0
    for _ in range(sims):
        preds = (rng.random((k, n)) < q).astype(np.int64)
        values = pairwise_metrics(y, preds, metrics=["pa"])["pa"].to_numpy()
        _, low, high = jackknife_ci(iu, ju, values)
        _, c_low, c_high = jackknife_ci(iu, ju, values, bounds=(0.0, 1.0))
        beyond += high > 1
        assert 0 <= c_low <= c_high <= 1
        hits += low <= truth <= high
        hits_clipped += c_low <= truth <= c_high
    assert beyond > sims / 10  # the problem is real
    assert hits_clipped == hits and hits / sims >= 0.9


def test_summary_intervals_in_range_and_no_null_on_the_disagreement_subset():
    import pandas as pd

    from modelvar.metrics.pairwise import METRIC_RANGES
    from modelvar.pipeline.metric_tables import repeat_tables

    rng = np.random.default_rng(4)
    n, k = 200, 10
    y = rng.integers(0, 2, n)
    frame = pd.concat([pd.DataFrame({"run": r, "sample": np.arange(n), "y_true": y,
                                     "y_pred": np.where(rng.random(n) < 0.02, 1 - y, y)})
                       for r in range(k)])
    summary = repeat_tables(frame)["summary"]
    pairwise = summary[summary["metric"].isin(list(METRIC_RANGES))]
    for metric, (lo, hi) in METRIC_RANGES.items():
        rows = pairwise[pairwise["metric"] == metric].dropna(subset=["ci_low"])
        assert (rows["ci_low"] >= lo).all() and (rows["ci_high"] <= hi).all(), metric
    disagree = pairwise[pairwise["subset"] == "disagree"]
    assert disagree["null_mean"].isna().all() and disagree["excess"].isna().all()
    full = pairwise[(pairwise["subset"] == "all") & (pairwise["metric"] == "ec_global")]
    assert full["null_mean"].notna().all()
