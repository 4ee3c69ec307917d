"""Uncertainty of a repeat's mean pairwise value, and what independent runs would give.

**Confidence interval: jackknife over runs.** The mean of a metric over the k(k−1)/2 pairs of a
repeat is a U-statistic of order 2 in the runs: pairs sharing a run are dependent, so the naive
SD/sqrt(#pairs) is far too narrow. Leaving run i out gives θ_(i), the mean over the pairs that do
not involve i; the jackknife variance (k−1)/k · Σ_i (θ_(i) − θ̄_(·))² is a consistent variance
estimate for U-statistics (Arvesen 1969), and the interval is mean ± t_{k−2, 1−α/2}·SE (k − 2
degrees of freedom for k runs, conservative). It is computed from row sums of the k×k pair
matrix, so it costs O(k²), not a refit or a resampling loop. It treats the test set as fixed:
test-set variability is what the distribution over repeats shows. Pairs whose value is undefined
(NaN) are left out of every mean; fewer than 3 runs give no interval. For a bounded metric
(``bounds``, its range in :mod:`modelvar.metrics.registry`) the interval is intersected with the
metric's range: mean ± t·SE reaches past 1 when runs nearly always agree (local EC upper limits of
1.13 were seen), a value the metric cannot take; the clipped interval covers the true mean
whenever the unclipped one does (the coverage test checks both).

Why not a bootstrap over runs and samples: resampling runs with replacement creates pairs of a run
with itself (agreement 1), biasing every agreement metric upwards; the jackknife has no such
artefact and needs no random numbers.

**Independence null (analytic).** If runs i and j erred independently at their observed error
rates p_i = 1 − a_i (each sample wrong with probability p_i), then E[I_ij]/n = p_i p_j and

* ec_global_null = p_i p_j
* ec_local_null  = p_i p_j / (p_i + p_j − p_i p_j)   (ratio of expectations; NaN if both 0)
* ec_agree_null  = p_i p_j + (1 − p_i)(1 − p_j)
* ec_corr_null = ec_kappa_null = 0
* accuracy-normalised ECs: the formulas of :mod:`modelvar.metrics.pairwise` applied to the nulls
* pa_null = a_i a_j + p_i p_j / (C − 1): both right, or both wrong with the same label when a
  wrong prediction is uniform over the C − 1 other classes (exact for C = 2);
  churn_null = 1 − pa_null.
  (Σ_c q_ic q_jc, the chance agreement of independent *predictions*, is not this null: runs that
  both track the truth agree more than that without any shared errors.)
Cohen's κ and the other label metrics get no null.

``excess = mean − null_mean`` is the repeat's consistency beyond chance. It is reported on the
full test set only: the disagreement subset is chosen by the runs' own predictions (the samples
where they differ), so runs that err independently would not match the null there either, and
the excess would be biased (it went down to −0.017 for global EC).
"""

from __future__ import annotations

import numpy as np

from modelvar.metrics.student_t import t_quantile


def jackknife_ci(
    run_i: np.ndarray, run_j: np.ndarray, values: np.ndarray, level: float = 0.95,
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> tuple[float, float, float]:
    """(standard error, low, high) of the mean pairwise value by the jackknife over runs; the
    interval is intersected with ``bounds``, the metric's range."""
    runs = np.unique(np.concatenate([run_i, run_j]))
    k = len(runs)
    values = np.asarray(values, dtype=np.float64)
    defined = ~np.isnan(values)
    if k < 3 or defined.sum() < 2:
        return np.nan, np.nan, np.nan
    index = {r: n for n, r in enumerate(runs)}
    ii = np.array([index[r] for r in run_i])
    jj = np.array([index[r] for r in run_j])
    v = np.where(defined, values, 0.0)
    row_sum = np.bincount(ii, v, k) + np.bincount(jj, v, k)
    row_cnt = np.bincount(ii, defined, k) + np.bincount(jj, defined, k)
    total, count = v.sum(), defined.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = (total - row_sum) / (count - row_cnt)
    theta = theta[np.isfinite(theta)]
    if len(theta) < 3:
        return np.nan, np.nan, np.nan
    se = float(np.sqrt((len(theta) - 1) / len(theta) * np.sum((theta - theta.mean()) ** 2)))
    mean = total / count
    half = t_quantile(0.5 + level / 2, k - 2) * se
    low, high = bounds
    return se, float(max(mean - half, low)), float(min(mean + half, high))


def independence_null(
    acc_i: np.ndarray, acc_j: np.ndarray, n_classes: int | None = None
) -> dict[str, np.ndarray]:
    """Per-pair values of each metric under independent errors (see module docstring), as
    arrays keyed by metric, for every registered metric that has a null
    (:class:`modelvar.metrics.registry.PairwiseMetric` ``null``; pa and churn need
    ``n_classes`` ≥ 2)."""
    from modelvar.metrics import registry

    rates = registry.Accuracies(1.0 - np.asarray(acc_i, float), 1.0 - np.asarray(acc_j, float),
                                n_classes)
    out = {}
    for metric in registry.metrics():
        value = metric.null(rates) if metric.null is not None else None
        if value is not None:
            out[metric.name] = value
    return out
