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

**Sufficient statistics** (:func:`probability_stats`): every probabilistic metric above needs, per
sample, only p_true (the probability of the true class: log loss), Σ_c p_c² (with p_true, the
Brier score: Σ_c (p_c − y_c)² = Σ p_c² − 2 p_true + 1), the normalised entropy H and the confusion
index CI. Prediction tables of many-class data store these four numbers per row instead of C
probabilities (:mod:`modelvar.pipeline.predictions`), and :func:`per_run_columns` computes every
per-run metric from them — for all runs of a repeat at once (confusion matrices of all runs in one
``bincount``; sklearn's per-call input validation was 58 % of a repeat's table time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from modelvar.metrics.errors import MetricInputError

if TYPE_CHECKING:
    import pandas as pd

PROBA_ATOL = 1e-6
STAT_COLUMNS = ("p_true", "sum_sq", "entropy", "confusion_index")


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


def confusion_matrices(y_true: np.ndarray, preds: np.ndarray, n_classes: int) -> np.ndarray:
    """(k, C, C) counts: ``[run, true class, predicted class]`` (sklearn's orientation), for
    every run at once."""
    preds = np.atleast_2d(preds)
    k = len(preds)
    codes = (np.arange(k)[:, None] * n_classes + y_true[None, :]) * n_classes + preds
    counts = np.bincount(codes.ravel(), minlength=k * n_classes * n_classes)
    return counts.reshape(k, n_classes, n_classes)


def purity(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> float:
    cm = confusion_matrices(np.asarray(y_true), np.asarray(y_pred), n_classes)[0]
    return float(cm.max(axis=0).sum() / cm.sum())


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> float:
    """Mean recall over the classes present in ``y_true`` (sklearn's balanced accuracy)."""
    cm = confusion_matrices(np.asarray(y_true), np.asarray(y_pred), n_classes)[0]
    support = cm.sum(axis=1)
    return float(np.mean(np.diag(cm)[support > 0] / support[support > 0]))


def class_representation(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> pd.DataFrame:
    import pandas as pd

    y_true = _check_labels(y_true, n_classes, "y_true")
    y_pred = _check_labels(y_pred, n_classes, "y_pred")
    true_frac = np.bincount(y_true, minlength=n_classes) / len(y_true)
    pred_frac = np.bincount(y_pred, minlength=n_classes) / len(y_pred)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(true_frac > 0, pred_frac / np.where(true_frac > 0, true_frac, 1), np.nan)
    return pd.DataFrame({"class": np.arange(n_classes), "true_frac": true_frac,
                         "pred_frac": pred_frac, "ratio": ratio})


def probability_stats(y_true: np.ndarray, proba: np.ndarray) -> dict[str, np.ndarray]:
    """Per-sample sufficient statistics (module docstring) of ``proba`` (..., n, C) for truth
    ``y_true`` (n,): arrays of shape (..., n)."""
    proba = np.asarray(proba, dtype=np.float64)
    shape = proba.shape
    flat = check_proba(proba.reshape(-1, shape[-1]))
    y = np.broadcast_to(np.asarray(y_true), shape[:-1]).reshape(-1)
    out = {"p_true": flat[np.arange(len(flat)), y], "sum_sq": (flat ** 2).sum(axis=1),
           "entropy": entropy(flat), "confusion_index": confusion_index(flat)}
    return {k: v.reshape(shape[:-1]) for k, v in out.items()}


def _quartiles(name: str, values: np.ndarray) -> dict[str, np.ndarray]:
    q1, med, q3 = np.quantile(values, [0.25, 0.5, 0.75], axis=1)
    return {f"{name}_mean": values.mean(axis=1), f"{name}_q25": q1, f"{name}_median": med,
            f"{name}_q75": q3}


def per_run_columns(y_true: np.ndarray, preds: np.ndarray, stats: dict | None,
                    n_classes: int) -> dict[str, np.ndarray]:
    """Every per-run metric of k runs at once: arrays of length k.

    ``preds`` (k, n) class indices; ``stats`` the runs' :func:`probability_stats` ((k, n) each)
    or ``None`` without probabilities. ``tau`` is aqp's tau with equal priors (Foody's modified
    κ), ``tau_reference_priors`` with the reference marginals as priors (:func:`modelvar.metrics.
    tau.tau_w` for one confusion matrix, with class weights)."""
    y_true = _check_labels(y_true, n_classes, "y_true")
    preds = _check_labels(np.atleast_2d(preds), n_classes, "y_pred")
    if preds.shape[1] != len(y_true):
        raise MetricInputError(f"y_true has {len(y_true)} samples but y_pred has "
                               f"{preds.shape[1]}")
    cm = confusion_matrices(y_true, preds, n_classes)  # [run, true, pred]
    n = len(y_true)
    accuracy = np.trace(cm, axis1=1, axis2=2) / n
    support = np.bincount(y_true, minlength=n_classes)
    present = support > 0
    recall = np.diagonal(cm, axis1=1, axis2=2)[:, present] / support[present]
    reference = support / n
    chance_ref = float((reference ** 2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        tau_ref = (accuracy - chance_ref) / (1.0 - chance_ref) if chance_ref != 1 else \
            np.full(len(preds), np.nan)
    out = {
        "accuracy": accuracy,
        "balanced_accuracy": recall.mean(axis=1),
        "tau": (accuracy - 1.0 / n_classes) / (1.0 - 1.0 / n_classes),
        "tau_reference_priors": tau_ref,
        "purity": cm.max(axis=1).sum(axis=1) / n,
    }
    if stats is not None:
        eps = np.finfo(np.float64).eps
        p_true = np.asarray(stats["p_true"], dtype=np.float64)
        sum_sq = np.asarray(stats["sum_sq"], dtype=np.float64)
        out["log_loss"] = -np.log(np.clip(p_true, eps, 1.0)).mean(axis=1)
        out["brier"] = (sum_sq - 2.0 * p_true + 1.0).mean(axis=1)
        out.update(_quartiles("entropy", np.asarray(stats["entropy"], dtype=np.float64)))
        out.update(_quartiles("confusion_index",
                              np.asarray(stats["confusion_index"], dtype=np.float64)))
    return out


def per_run_metrics(
    y_true: np.ndarray, y_pred: np.ndarray, proba: np.ndarray | None, n_classes: int
) -> dict[str, float]:
    """Scalar metrics of one run (:func:`per_run_columns` for a single run), with the
    probabilities ``proba`` (n, C) or ``None``."""
    y_true = _check_labels(y_true, n_classes, "y_true")
    stats = None
    if proba is not None:
        proba = check_proba(proba, len(y_true))
        if proba.shape[1] != n_classes:
            raise MetricInputError(f"{proba.shape[1]} probability columns for {n_classes} classes")
        stats = {k: v[None, :] for k, v in probability_stats(y_true, proba).items()}
    return {k: float(v[0]) for k, v in
            per_run_columns(y_true, np.asarray(y_pred)[None, :], stats, n_classes).items()}
