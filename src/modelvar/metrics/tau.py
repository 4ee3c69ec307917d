"""Weighted tau (Rossiter, Zeng & Zhang 2017), exactly as the R package aqp's ``tauW``.

Seed 002 cites ``aqp::tauW``; the algorithm (``../shared/reference/metric-conventions.md``):
the confusion matrix CM has rows = predicted (allocation) and columns = reference (truth), i.e.
the transpose of sklearn's ``confusion_matrix(y_true, y_pred)``. N = ΣCM, p = CM/N, r and c its
row and column sums, cp = c/N. W: agreement weights (1 on the diagonal, off-diagonal in [−1, 1]);
P: prior class probabilities (default equal 1/k; ``"reference"`` means P = cp).

* overall naive Σ_i p_ii; user's naive CM_ii/r_i; producer's naive CM_ii/c_i
* overall weighted Σ_ij W_ij p_ij; user's weighted Σ_j W_ij p_ij/(r_i/N);
  producer's weighted Σ_i W_ij p_ij/cp_j
* θ1 = Σ_i p_ii, θ2 = Σ_i P_i cp_i, tau = (θ1 − θ2)/(1 − θ2)
* θw1 = Σ_ij W_ij p_ij, θw2 = Σ_ij W_ij P_i cp_j, tau_w = (θw1 − θw2)/(1 − θw2)

With P = reference marginals, tau is *not* Cohen's κ unless row and column marginals coincide.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from modelvar.metrics.errors import MetricInputError


@dataclass(frozen=True)
class TauW:
    overall_naive: float
    overall_weighted: float
    users_naive: np.ndarray
    producers_naive: np.ndarray
    users_weighted: np.ndarray
    producers_weighted: np.ndarray
    tau: float
    tau_w: float


def tau_w(
    cm: np.ndarray, weights: np.ndarray | None = None, priors: np.ndarray | str | None = None
) -> TauW:
    """aqp's ``tauW(CM, W, P)``; ``cm`` rows = predicted, columns = reference."""
    cm = np.asarray(cm, dtype=np.float64)
    if cm.ndim != 2 or cm.shape[0] != cm.shape[1]:
        raise MetricInputError(f"confusion matrix must be square, got shape {cm.shape}")
    if (cm < 0).any():
        raise MetricInputError("confusion matrix has negative counts")
    k = cm.shape[0]
    big_n = cm.sum()
    if big_n == 0:
        raise MetricInputError("confusion matrix is empty")
    w = np.eye(k) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (k, k):
        raise MetricInputError(f"weights must be {k}×{k}, got {w.shape}")
    if not np.allclose(np.diag(w), 1.0) or (w < -1).any() or (w > 1).any():
        raise MetricInputError("weights need 1 on the diagonal and values in [-1, 1]")
    p = cm / big_n
    r, c = cm.sum(axis=1), cm.sum(axis=0)
    cp = c / big_n
    if priors is None:
        prior = np.full(k, 1.0 / k)
    elif isinstance(priors, str):
        if priors != "reference":
            raise MetricInputError(f"priors must be an array or 'reference', got {priors!r}")
        prior = cp
    else:
        prior = np.asarray(priors, dtype=np.float64)
        if prior.shape != (k,) or not np.isclose(prior.sum(), 1.0) or (prior < 0).any():
            raise MetricInputError(f"priors must be {k} probabilities summing to 1")
    diag = np.diag(cm)
    with np.errstate(divide="ignore", invalid="ignore"):
        users_naive = diag / r
        producers_naive = diag / c
        wp = w * p
        users_weighted = wp.sum(axis=1) / (r / big_n)
        producers_weighted = wp.sum(axis=0) / cp
    theta1 = float(np.trace(p))
    theta2 = float((prior * cp).sum())
    theta_w1 = float(wp.sum())
    theta_w2 = float((w * np.outer(prior, cp)).sum())
    return TauW(
        overall_naive=theta1,
        overall_weighted=theta_w1,
        users_naive=users_naive,
        producers_naive=producers_naive,
        users_weighted=users_weighted,
        producers_weighted=producers_weighted,
        tau=(theta1 - theta2) / (1.0 - theta2) if theta2 != 1 else np.nan,
        tau_w=(theta_w1 - theta_w2) / (1.0 - theta_w2) if theta_w2 != 1 else np.nan,
    )
