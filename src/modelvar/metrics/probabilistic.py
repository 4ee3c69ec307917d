"""Per-run metrics from labels and class probabilities (seeds 001 and 002).

``proba`` is (n samples × K classes), rows summing to 1 within ``atol`` (checked, never silently
renormalised); ``y_true``/``y_pred`` are class indices in 0..K−1.

* ``log_loss`` (cross-entropy, seed 001): −(1/n) Σ_o Σ_c y_oc ln p_oc, natural log, p clipped to
  [ε, 1] with ε the float64 machine epsilon (as sklearn).
* ``brier`` (seed 002, Harrell 2001): (1/n) Σ_o Σ_c (p_oc − y_oc)², range [0, 2]. This unhalved
  multi-class form is returned for every K, so for K = 2 it is twice sklearn's default binary
  Brier score (``scale_by_half``).
* ``entropy`` per sample (seed 002, Kempen et al. 2009): H_o = −Σ_c p_oc log_K p_oc ∈ [0, 1],
  0·log 0 = 0.
* ``confusion_index`` per sample (seed 002, Burrough et al. 1997): CI_o = 1 − (p_(1) − p_(2)),
  the two largest probabilities; needs K ≥ 2.
* ``purity`` = (1/n) Σ_{predicted class q} max_c CM[q, c]: the share of samples whose predicted
  class's majority true class is their own (1 = every predicted class is pure).
* ``class_representation``: per class, its share among true labels, among predicted labels, and
  their ratio (predicted/true; 1 = represented as often as it occurs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score, confusion_matrix

from modelvar.metrics.pairwise import MetricInputError

PROBA_ATOL = 1e-6


def check_proba(proba: np.ndarray, n: int | None = None, atol: float = PROBA_ATOL) -> np.ndarray:
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim != 2:
        raise MetricInputError(f"probabilities must be 2-D (samples × classes), got {proba.ndim}-D")
    if n is not None and len(proba) != n:
        raise MetricInputError(f"{len(proba)} probability rows for {n} samples")
    if proba.shape[1] < 2:
        raise MetricInputError(f"need probabilities of at least 2 classes, got {proba.shape[1]}")
    if np.isnan(proba).any():
        raise MetricInputError("probabilities contain NaN")
    if (proba < -atol).any() or (proba > 1 + atol).any():
        bad = np.argwhere((proba < -atol) | (proba > 1 + atol))[0]
        raise MetricInputError(
            f"probability outside [0, 1] at sample {bad[0]}, class {bad[1]}: {proba[tuple(bad)]}"
        )
    sums = proba.sum(axis=1)
    off = np.abs(sums - 1.0) > atol
    if off.any():
        i = int(np.argmax(off))
        raise MetricInputError(
            f"probabilities of {int(off.sum())} sample(s) do not sum to 1 "
            f"(first: sample {i} sums to {sums[i]:.6g}; tolerance {atol})"
        )
    return np.clip(proba, 0.0, 1.0)


def _check_labels(y: np.ndarray, n_classes: int, name: str) -> np.ndarray:
    y = np.asarray(y)
    if not np.issubdtype(y.dtype, np.integer):
        raise MetricInputError(f"{name} must hold integer class indices, got dtype {y.dtype}")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise MetricInputError(f"{name} holds class indices outside 0..{n_classes - 1}")
    return y.astype(np.int64)


def log_loss(y_true: np.ndarray, proba: np.ndarray) -> float:
    proba = check_proba(proba)
    y = _check_labels(y_true, proba.shape[1], "y_true")
    if len(y) != len(proba):
        raise MetricInputError(f"{len(proba)} probability rows for {len(y)} samples")
    eps = np.finfo(np.float64).eps
    return float(-np.mean(np.log(np.clip(proba[np.arange(len(y)), y], eps, 1.0))))


def brier(y_true: np.ndarray, proba: np.ndarray) -> float:
    proba = check_proba(proba)
    y = _check_labels(y_true, proba.shape[1], "y_true")
    if len(y) != len(proba):
        raise MetricInputError(f"{len(proba)} probability rows for {len(y)} samples")
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(y)), y] = 1.0
    return float(np.mean(((proba - onehot) ** 2).sum(axis=1)))


def entropy(proba: np.ndarray) -> np.ndarray:
    proba = check_proba(proba)
    k = proba.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(proba > 0, proba * np.log(np.where(proba > 0, proba, 1.0)), 0.0)
    return np.clip(-terms.sum(axis=1) / np.log(k), 0.0, 1.0)


def confusion_index(proba: np.ndarray) -> np.ndarray:
    proba = check_proba(proba)
    top2 = -np.partition(-proba, 1, axis=1)[:, :2]
    return 1.0 - (top2[:, 0] - top2[:, 1])


def purity(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> float:
    cm = confusion_matrix(y_true, y_pred, labels=np.arange(n_classes))  # rows: true
    return float(cm.max(axis=0).sum() / cm.sum())


def class_representation(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> pd.DataFrame:
    y_true = _check_labels(y_true, n_classes, "y_true")
    y_pred = _check_labels(y_pred, n_classes, "y_pred")
    true_frac = np.bincount(y_true, minlength=n_classes) / len(y_true)
    pred_frac = np.bincount(y_pred, minlength=n_classes) / len(y_pred)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(true_frac > 0, pred_frac / np.where(true_frac > 0, true_frac, 1), np.nan)
    return pd.DataFrame({"class": np.arange(n_classes), "true_frac": true_frac,
                         "pred_frac": pred_frac, "ratio": ratio})


def per_run_metrics(
    y_true: np.ndarray, y_pred: np.ndarray, proba: np.ndarray | None, n_classes: int
) -> dict[str, float]:
    """Scalar metrics of one run; entropy and confusion index as their mean and quartiles.

    ``tau`` is aqp's tau with equal priors (Foody's modified κ), ``tau_reference_priors`` with
    the reference marginals as priors (:mod:`modelvar.metrics.tau`; weighted tau needs a
    class-similarity matrix, which a user passes to :func:`~modelvar.metrics.tau.tau_w`).
    """
    y_true = _check_labels(y_true, n_classes, "y_true")
    y_pred = _check_labels(y_pred, n_classes, "y_pred")
    if len(y_true) != len(y_pred):
        raise MetricInputError(f"y_true has {len(y_true)} samples but y_pred has {len(y_pred)}")
    from modelvar.metrics.tau import tau_w

    # aqp's orientation: rows = predicted, columns = reference
    cm = confusion_matrix(y_true, y_pred, labels=np.arange(n_classes)).T
    out = {
        "accuracy": float(np.mean(y_true == y_pred)),
        "balanced_accuracy": float(balanced_accuracy_score(y_true, y_pred)),
        "tau": tau_w(cm).tau,
        "tau_reference_priors": tau_w(cm, priors="reference").tau,
        "purity": purity(y_true, y_pred, n_classes),
    }
    if proba is not None:
        proba = check_proba(proba, len(y_true))
        if proba.shape[1] != n_classes:
            raise MetricInputError(f"{proba.shape[1]} probability columns for {n_classes} classes")
        h, ci = entropy(proba), confusion_index(proba)
        out.update(log_loss=log_loss(y_true, proba), brier=brier(y_true, proba))
        for name, values in (("entropy", h), ("confusion_index", ci)):
            q1, med, q3 = np.quantile(values, [0.25, 0.5, 0.75])
            out.update({f"{name}_mean": float(values.mean()), f"{name}_q25": float(q1),
                        f"{name}_median": float(med), f"{name}_q75": float(q3)})
    return out
