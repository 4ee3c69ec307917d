"""The pairwise-metric registry (issue 21): every list of metrics derives from it, and a new
metric declared once — one entry plus its function — reaches the pairwise and summary tables
(with its interval clipped to its range and its null), the grouped API and the figures' names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from modelvar.metrics import registry
from modelvar.metrics.pairwise import pairwise_arrays


def both_right(e: registry.PairCounts) -> np.ndarray:
    """The rate at which both runs are right: (n − U_ij)/n."""
    return e.nan_if_empty(lambda: (e.n - e.union) / e.n)


@pytest.fixture
def both_right_metric():
    metric = registry.register(registry.PairwiseMetric(
        "both_right", "rate both right", "errors", both_right,
        null=lambda a: a.ai * a.aj, subsets=("all",), source="a test's metric"))
    try:
        yield metric
    finally:
        registry.unregister("both_right")


def predictions(seed: int = 0, k: int = 5, n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    rows = []
    for run in range(k):
        pred = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n))
        rows += [{"repeat": 0, "run": run, "sample": i, "y_true": y[i], "y_pred": pred[i]}
                 for i in range(n)]
    return pd.DataFrame(rows)


def test_the_registry_holds_what_the_tables_and_intervals_used():
    assert registry.names("labels") == ("pa", "churn", "kappa", "cramer_v", "kripp_alpha",
                                        "gwet_ac1")
    assert {m.name for m in registry.metrics() if m.signed} == {
        "ec_corr", "ec_kappa", "kappa", "kripp_alpha", "gwet_ac1"}
    assert not registry.metric("churn").higher_is_more_alike
    with pytest.raises(ValueError, match="taken"):
        registry.register(registry.metric("pa"))
    with pytest.raises(ValueError, match="basis"):
        registry.PairwiseMetric("x", "x", "probabilities", both_right)
    with pytest.raises(ValueError, match="built-in"):
        registry.unregister("pa")


def test_a_new_metric_declared_once_reaches_the_tables_grouped_api_and_figures(
        both_right_metric):
    from modelvar.metrics.grouped import mean_pairwise
    from modelvar.pipeline.metric_tables import repeat_tables
    from modelvar.plots.common import metric_name

    frame = predictions()
    tables = repeat_tables(frame)
    pairs = tables["pairwise"]
    everyone = pairs[pairs["subset"] == "all"]
    # by hand: both right = 1 − (errors of i) − (errors of j) + (both wrong)
    expected = 1 - (1 - everyone["acc_i"]) - (1 - everyone["acc_j"]) + everyone["ec_global"]
    np.testing.assert_allclose(everyone["both_right"], expected)
    # declared for the full test set only: NaN on the disagreement subset, no summary row there
    assert pairs.loc[pairs["subset"] == "disagree", "both_right"].isna().all()
    summary = tables["summary"]
    row = summary[summary["metric"] == "both_right"]
    assert list(row["subset"]) == ["all"]
    row = row.iloc[0]
    assert 0 <= row["ci_low"] <= row["mean"] <= row["ci_high"] <= 1
    null = (everyone["acc_i"] * everyone["acc_j"]).mean()
    assert row["null_mean"] == pytest.approx(null)
    assert mean_pairwise("both_right")(frame[frame.run == 0]["y_true"].to_numpy(),
                                       frame.pivot(index="sample", columns="run",
                                                   values="y_pred").to_numpy()) == \
        pytest.approx(everyone["both_right"].mean())
    assert metric_name("both_right") == "rate both right"
    assert "both_right" in pairwise_arrays(np.array([0, 1, 1]), np.array([[0, 1, 0], [0, 0, 1]]))


def test_a_metric_reads_only_the_counts_it_declares():
    """A registered metric gets the counts of its ``needs`` (issue 57): one that reads a count
    it did not declare is told which need to add; one on the tables (the default for the
    labels basis) gets the tables with their agreement and margins."""
    def off_diagonal(t: registry.PairCounts) -> np.ndarray:
        return (t.T.sum(axis=(1, 2)) - t.diag) / t.n + 0 * t.r.sum(axis=1)

    def agreement_with_margins(t: registry.PairCounts) -> np.ndarray:
        return t.agree / t.n + 0 * t.r.sum(axis=1)

    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 120)
    P = np.where(rng.random((4, 120)) < 0.7, y, rng.integers(0, 3, (4, 120)))
    registry.register(registry.PairwiseMetric("off_diag", "off diagonal", "labels",
                                              off_diagonal, higher_is_more_alike=False))
    registry.register(registry.PairwiseMetric("thin", "thin", "labels", agreement_with_margins,
                                              needs=("agreement",)))
    try:
        table = pairwise_arrays(y, P, metrics=["off_diag", "churn"])
        np.testing.assert_allclose(table["off_diag"], table["churn"], rtol=1e-15)
        with pytest.raises(registry.MissingCount, match=r"needs=\('margins'"):
            pairwise_arrays(y, P, metrics=["thin"])
    finally:
        registry.unregister("off_diag")
        registry.unregister("thin")
    with pytest.raises(ValueError, match="needs must name"):
        registry.PairwiseMetric("x", "x", "labels", both_right, needs=("probabilities",))
