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
  at least one run), as counts and fractions of n;
* ``unstable_frac``: the fraction of samples not predicted alike by all k runs;
* the **0-1 loss bias/variance decomposition** (Kohavi & Wolpert 1996; Domingos 2000, "A
  unified bias-variance decomposition"): sample u's *main prediction* m_u is the majority vote of
  its k runs (ties to the smallest class index); ``bias_01`` = mean_u [m_u ≠ y_u] (the majority
  is wrong), ``variance_01`` = mean_u (1/k) Σ_i [ŷ_iu ≠ m_u] (the runs' disagreement with the
  majority). The runs' mean 0-1 loss is exactly bias + V_unbiased − V_biased, with V_unbiased the
  variance on the samples whose majority is right (every run off the majority is wrong there) and
  V_biased, on the samples whose majority is wrong, the share of runs that predict the true label
  (Domingos's c·V: with two classes all of the variance there, with more only the part that
  lands on the truth).

Per-sample instability (one value per test sample, across the k runs):

* ``frac_wrong`` = (runs wrong)/k; ``n_labels`` = number of distinct predicted labels;
* ``flips`` = number of label changes between consecutive runs in run order (run order is
  arbitrary; it is stated, and ``n_labels``/``label_entropy`` do not depend on it);
* ``label_entropy`` = −Σ_c f_c log f_c / log C over the predicted-label frequencies f_c = n_uc/k,
  normalised by log C (C ≥ 2 classes), 0·log 0 = 0.

All of these need only, per sample, the counts n_uc of the labels it *does* get (at most k of
them), and the overall class counts: Σ_c o_cc = Σ_u (Σ_c n_uc² − k)/(k − 1) and n_c = Σ_u n_uc
for α, the same sums for κ. Sorting each sample's k labels gives them in O(k·n) memory — never the
n × C table, which for 400,000 test samples of 355 classes alone was 1.1 GB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from modelvar.metrics.pairwise import check_runs

if TYPE_CHECKING:
    import pandas as pd


def label_runs(preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample, the counts of the distinct labels its k runs predict: returns (counts, valid),
    both (k, n); ``counts[j, u]`` is the j-th distinct label's count for sample u where
    ``valid[j, u]``, 0 elsewhere."""
    k, n = preds.shape
    ordered = np.sort(preds, axis=0)
    starts = np.ones((k, n), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    group = np.cumsum(starts, axis=0) - 1  # 0, 0, 1, 1, 1, 2 … down each column
    counts = np.zeros((k, n), dtype=np.int64)
    np.add.at(counts, (group, np.broadcast_to(np.arange(n), (k, n))), 1)
    return counts, counts > 0


def majority_vote(preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample, the majority label of its k runs (ties: the smallest class index) and the
    number of runs that predict it."""
    k, n = preds.shape
    ordered = np.sort(preds, axis=0)
    counts, _ = label_runs(preds)
    best = counts.argmax(axis=0)  # the first of the largest groups: the smallest label
    starts = np.ones((k, n), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    group = np.cumsum(starts, axis=0) - 1
    row = (group == best[None, :]).argmax(axis=0)
    cols = np.arange(n)
    return ordered[row, cols], counts[best, cols]


def bias_variance_01(y_true: np.ndarray, preds: np.ndarray) -> dict[str, float]:
    """The 0-1 loss decomposition of k runs (module docstring): ``bias_01``, ``variance_01``,
    ``variance_01_unbiased`` and ``variance_01_biased``, each a mean over all n samples; the
    runs' mean 0-1 loss is ``bias_01 + variance_01_unbiased − variance_01_biased``."""
    y_true, preds, _ = check_runs(y_true, preds)
    k, n = preds.shape
    if n == 0:
        return dict.fromkeys(("bias_01", "variance_01", "variance_01_unbiased",
                              "variance_01_biased"), np.nan)
    main, top = majority_vote(preds)
    biased = main != y_true
    variance = 1.0 - top / k
    return {"bias_01": float(biased.mean()), "variance_01": float(variance.mean()),
            "variance_01_unbiased": float(np.where(biased, 0.0, variance).mean()),
            "variance_01_biased": float(np.where(biased, (preds == y_true).mean(axis=0),
                                                 0.0).mean())}


def _sum_squares(preds: np.ndarray) -> np.ndarray:
    counts, _ = label_runs(preds)
    return (counts.astype(np.float64) ** 2).sum(axis=0)


def _checked_runs(preds: np.ndarray, n_classes: int | None) -> tuple[np.ndarray, int]:
    """``preds`` (k runs × n samples) validated as class indices, and the class count."""
    _, preds, n_classes = check_runs(np.zeros(np.shape(preds)[-1], dtype=np.int64), preds,
                                     n_classes)
    return preds, n_classes


def fleiss_kappa(preds: np.ndarray, n_classes: int | None = None) -> float:
    """Fleiss' κ of the k runs (rows of ``preds``) as raters of every sample (Fleiss 1971;
    formula in the module docstring); NaN when there are no samples or one label everywhere."""
    preds, n_classes = _checked_runs(preds, n_classes)
    k, n = preds.shape
    if n == 0:
        return np.nan
    p_u = (_sum_squares(preds) - k) / (k * (k - 1))
    p_c = np.bincount(preds.ravel(), minlength=n_classes) / (n * k)
    p_e = float((p_c**2).sum())
    if np.isclose(p_e, 1.0):
        return np.nan
    return float((p_u.mean() - p_e) / (1.0 - p_e))


def kripp_alpha(preds: np.ndarray, n_classes: int | None = None) -> float:
    """Krippendorff's nominal α of the k runs (rows of ``preds``), every sample coded by all
    runs (Krippendorff 2011; formula in the module docstring); NaN on single-valued data."""
    preds, n_classes = _checked_runs(preds, n_classes)
    k, n = preds.shape
    if n == 0:
        return np.nan
    trace = float(((_sum_squares(preds) - k) / (k - 1)).sum())
    n_c = np.bincount(preds.ravel(), minlength=n_classes).astype(np.float64)
    big_n = n_c.sum()
    denom = big_n**2 - (n_c**2).sum()
    if denom == 0:
        return np.nan
    return float(1.0 - (big_n - 1.0) * (big_n - trace) / denom)


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
    """Fleiss' κ, Krippendorff's α, the error-set intersection/union for k runs, the 0-1 loss
    bias and variance (:func:`bias_variance_01`), the fraction
    of samples that some runs predict differently (``unstable_frac``: per-sample ``n_labels`` > 1)
    and whether all runs predict exactly the same labels (``all_runs_identical``)."""
    y_true, preds, n_classes = check_runs(y_true, preds, n_classes)
    return {
        "fleiss_kappa": fleiss_kappa(preds, n_classes),
        "kripp_alpha": kripp_alpha(preds, n_classes),
        **error_sets(y_true, preds),
        **bias_variance_01(y_true, preds),
        "unstable_frac": float((preds != preds[:1]).any(axis=0).mean()),
        "all_runs_identical": bool((preds == preds[:1]).all()),
    }


def per_sample_columns(y_true: np.ndarray, preds: np.ndarray,
                       n_classes: int | None = None) -> dict[str, np.ndarray]:
    """One value per sample: frac_wrong, n_labels, flips, label_entropy (module docstring)."""
    y_true, preds, n_classes = check_runs(y_true, preds, n_classes)
    k, n = preds.shape
    counts, valid = label_runs(preds)
    freq = counts / k
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(valid, np.log(np.where(valid, freq, 1.0)), 0.0)
    entropy = -(freq * logs).sum(axis=0) / np.log(n_classes) if n_classes >= 2 else np.zeros(n)
    return {
        "frac_wrong": (preds != y_true).mean(axis=0),
        "n_labels": valid.sum(axis=0),
        "flips": (preds[1:] != preds[:-1]).sum(axis=0),
        "label_entropy": np.abs(entropy),
    }


def per_sample_instability(
    y_true: np.ndarray, preds: np.ndarray, n_classes: int | None = None
) -> pd.DataFrame:
    """:func:`per_sample_columns` as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(per_sample_columns(y_true, preds, n_classes))
