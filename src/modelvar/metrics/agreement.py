"""Agreement across all k runs at once, and per-sample instability across runs.

Notation as in :mod:`modelvar.metrics.pairwise`: ``preds`` is (k runs × n samples) of class
indices, C classes. For sample u, n_uc = number of runs predicting class c.

* ``fleiss_kappa`` (Fleiss 1971), k raters per sample:
  P_u = (Σ_c n_uc² − k) / (k(k − 1)), P̄ = mean_u P_u, p_c = Σ_u n_uc / (n k),
  P̄_e = Σ_c p_c², κ = (P̄ − P̄_e)/(1 − P̄_e); NaN when P̄_e = 1 (one label everywhere).
* ``kripp_alpha`` (nominal, Krippendorff 2011), every sample coded by all k runs:
  coincidences o_ck = Σ_u n_uc (n_uk − [c = k]) / (k − 1), n_c = Σ_k o_ck, N = Σ_c n_c = nk,
  α = 1 − (N − 1) (N − Σ_c o_cc) / (N² − Σ_c n_c²); NaN on single-valued data.
* error-set intersection ("always wrong": wrong in every run) and union ("ever wrong": wrong in
  at least one run), as counts and fractions of n.

Per-sample instability (one value per test sample, across the k runs):

* ``frac_wrong`` = (runs wrong)/k; ``n_labels`` = number of distinct predicted labels;
* ``flips`` = number of label changes between consecutive runs in run order (run order is
  arbitrary; it is stated, and ``n_labels``/``label_entropy`` do not depend on it);
* ``label_entropy`` = −Σ_c f_c log f_c / log C over the predicted-label frequencies f_c = n_uc/k,
  normalised by log C (C ≥ 2 classes), 0·log 0 = 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.metrics.pairwise import check_label_memory, check_runs


def label_counts(preds: np.ndarray, n_classes: int) -> np.ndarray:
    """n_uc: (n samples × C) number of runs predicting each class for each sample."""
    k, n = preds.shape
    check_label_memory(k, n, n_classes)
    codes = np.arange(n)[None, :] * n_classes + preds
    return np.bincount(codes.ravel(), minlength=n * n_classes).reshape(n, n_classes)


def _checked_counts(preds: np.ndarray, n_classes: int | None) -> tuple[int, int, np.ndarray]:
    """Validate a runs matrix; return (k, n, n_uc as float)."""
    preds = np.asarray(preds)
    _, preds, n_classes = check_runs(np.zeros(preds.shape[-1], dtype=np.int64), preds, n_classes)
    k, n = preds.shape
    return k, n, label_counts(preds, n_classes).astype(np.float64)


def fleiss_kappa(preds: np.ndarray, n_classes: int | None = None) -> float:
    k, n, counts = _checked_counts(preds, n_classes)
    if n == 0:
        return np.nan
    p_u = ((counts**2).sum(axis=1) - k) / (k * (k - 1))
    p_bar = p_u.mean()
    p_c = counts.sum(axis=0) / (n * k)
    p_e = float((p_c**2).sum())
    if np.isclose(p_e, 1.0):
        return np.nan
    return float((p_bar - p_e) / (1.0 - p_e))


def kripp_alpha(preds: np.ndarray, n_classes: int | None = None) -> float:
    k, n, counts = _checked_counts(preds, n_classes)
    if n == 0:
        return np.nan
    o = (counts.T @ counts - np.diag(counts.sum(axis=0))) / (k - 1)
    n_c = o.sum(axis=1)
    big_n = n_c.sum()
    denom = big_n**2 - (n_c**2).sum()
    if denom == 0:
        return np.nan
    return float(1.0 - (big_n - 1.0) * (big_n - np.trace(o)) / denom)


def error_sets(y_true: np.ndarray, preds: np.ndarray) -> dict[str, float]:
    y_true, preds, _ = check_runs(y_true, preds)
    wrong = preds != y_true
    n = preds.shape[1]
    always = int(wrong.all(axis=0).sum())
    ever = int(wrong.any(axis=0).sum())
    return {
        "n": n,
        "always_wrong": always,
        "ever_wrong": ever,
        "always_wrong_frac": always / n if n else np.nan,
        "ever_wrong_frac": ever / n if n else np.nan,
    }


def multi_run_agreement(y_true, preds, n_classes: int | None = None) -> dict[str, float]:
    """Fleiss' κ, Krippendorff's α and the error-set intersection/union for k runs."""
    y_true, preds, n_classes = check_runs(y_true, preds, n_classes)
    return {
        "fleiss_kappa": fleiss_kappa(preds, n_classes),
        "kripp_alpha": kripp_alpha(preds, n_classes),
        **error_sets(y_true, preds),
    }


def per_sample_instability(
    y_true: np.ndarray, preds: np.ndarray, n_classes: int | None = None
) -> pd.DataFrame:
    """One row per sample: frac_wrong, n_labels, flips, label_entropy (see module docstring)."""
    y_true, preds, n_classes = check_runs(y_true, preds, n_classes)
    k, n = preds.shape
    counts = label_counts(preds, n_classes)
    freq = counts / k
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(freq > 0, np.log(np.where(freq > 0, freq, 1.0)), 0.0)
    entropy = -(freq * logs).sum(axis=1) / np.log(n_classes) if n_classes >= 2 else np.zeros(n)
    return pd.DataFrame(
        {
            "frac_wrong": (preds != y_true).mean(axis=0),
            "n_labels": (counts > 0).sum(axis=1),
            "flips": (preds[1:] != preds[:-1]).sum(axis=0),
            "label_entropy": np.abs(entropy),
        }
    )
