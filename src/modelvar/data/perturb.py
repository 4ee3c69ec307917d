"""Training-data perturbations of seed 004 — pure functions of (data, random stream, parameters).

Only training rows are ever passed in; test rows are never perturbed. Every function returns the
perturbed copy and a dict of what it did (counts and realised magnitudes), recorded per run.
Missing values (NaN) stay missing; imputation happens later, in preprocessing.

Continuous features (``X`` is N × F float):

* :func:`significant_digit` (d = 0, 1, 2, …): for x = m·10^E (1 ≤ |m| < 10, E = ⌊log10|x|⌋),
  x' = x + U(−10^(E−d), 10^(E−d)) — "perturbation of the d-th digit" (seed 004; the original code's
  ``2·10^(N/10)`` was a bug). Rule for 0: an exact zero has no significant digit and is left
  unchanged (it often encodes "absent"; perturbing it would invent a magnitude).
* :func:`nearest_neighbour` (c ∈ {0.25, 0.5, 1}): each row x moves to a point uniform in the ball
  B(x, c·‖x − x_nn‖), x_nn its nearest *other* training row: direction uniform on the sphere,
  radius r·U^(1/D). Distances are computed in the training rows' standardised space (missing
  cells imputed with the median for the distance only), and the move is mapped back to the
  original units. Neighbours come from :class:`sklearn.neighbors.NearestNeighbors` (a tree, not
  O(N²) memory). At c = 0.5 a point's nearest neighbour cannot change.
* :func:`relative` (p ∈ {0.1, 0.2, …}): x' = x·(1 + U(−p, p)). The seed's formula
  "x + e, e ~ U(x(1 − p), x(1 + p))" would double every value; the multiplicative reading (the
  one the original code used) is taken: the noise is at most p·|x|.
* :func:`scaled_noise` (``sd``/``rsd`` s > 0): x' = x + s·σ_f·Z, Z ~ N(0, 1), σ_f the feature's
  training SD (``sd``) or robust spread 1.4826·MAD (``rsd``): the same strength, in training SDs,
  on every dataset — unlike the seed's schemes, whose strength depends on the data: ``rel`` scales
  with a feature's offset (``rel 0.2`` moved vehicle by 0.84 SDs and anneal by 0.08), ``pct``
  with its sparsity (a feature whose p-quantile of |x| is 0 never moves), ``sig`` leaves zeros
  alone. The realised strength of every level is recorded per run and per feature.
* :func:`percentile` (p ∈ (0, 0.5]): s_f = the p-quantile of |x| over the feature's training
  values, x' = clamp(x + U(−s_f/2, s_f/2), min_f, max_f) with the feature's observed training
  minimum and maximum (the original code passed a fraction to ``np.percentile``, which takes
  percent, and never clamped).

Categorical features (``C`` is N × c int array of level codes, −1 = missing; ``n_levels[j]`` the
number of levels of feature j in the schema):

* :func:`categorical_label_level` (p): each cell independently, with probability p, is replaced
  by a level drawn uniformly from its feature's levels (possibly the same one).
* :func:`categorical_sample_level` (p): ⌈pN⌉ rows are chosen; in each, each categorical cell is
  replaced with probability 1/c by a uniform level — cell-wise (the original code replaced every
  categorical value of a touched row).

**Missing values** (``missing``): by default (``keep``) a missing cell is never selected and the
missing value is never drawn, so noise changes present values only and missingness is the same
in the perturbed training rows as in the test rows. (Drawing levels into missing cells turns the
noise into imputation: on anneal, where 77 % of categorical cells are missing, 84.6 % of the
changed cells went from missing to a level and the training rows' missingness fell from 0.772 to
0.694 while the test rows kept theirs — a systematic shift.) With ``as_level`` the missing value
is one more level: any cell may be selected, and a selected cell gets a uniform draw among the
feature's levels and the missing value. Both record the changes by direction
(``level_to_level``, ``missing_to_level``, ``level_to_missing``, as shares of all cells).
"""

from __future__ import annotations

import math
import warnings

import numpy as np


def _info(before: np.ndarray, after: np.ndarray, scale: np.ndarray) -> dict:
    """What a perturbation did, overall and per feature: the share of present cells it changed
    and the mean |Δx| in training SDs (features with SD 0 cannot be measured in SDs and are left
    out of that mean; they are never changed by the SD-scaled levels)."""
    finite = ~np.isnan(before)
    delta = np.where(finite, np.abs(after - before), 0.0)
    changed = finite & (delta > 0)
    measurable = finite & (scale > 0)
    rel = np.where(measurable, delta / np.where(scale > 0, scale, 1.0), 0.0)
    cells, cells_f = finite.sum(), finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_changed = np.where(cells_f > 0, changed.sum(axis=0) / np.maximum(cells_f, 1), 0.0)
        per_shift = np.where(measurable.sum(axis=0) > 0,
                             rel.sum(axis=0) / np.maximum(measurable.sum(axis=0), 1), np.nan)
    return {
        "cells": int(cells),
        "changed_frac": float(changed.sum() / max(cells, 1)),
        "mean_abs_shift_sd": float(rel.sum() / measurable.sum()) if measurable.any() else 0.0,
        "per_feature": {"changed_frac": per_changed.tolist(),
                        "mean_abs_shift_sd": per_shift.tolist()},
    }


def _sd(X: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column: SD 0
        sd = np.nanstd(X, axis=0) if len(X) else np.zeros(X.shape[1])
    return np.nan_to_num(sd)


def _robust_scale(X: np.ndarray) -> np.ndarray:
    """1.4826 × the median absolute deviation (the SD for normal data, unmoved by heavy tails);
    the SD where the MAD is 0 (more than half of the values equal)."""
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        med = np.nanmedian(X, axis=0) if len(X) else np.zeros(X.shape[1])
        mad = 1.4826 * np.nanmedian(np.abs(X - med), axis=0) if len(X) else med
    mad = np.nan_to_num(mad)
    return np.where(mad > 0, mad, _sd(X))


def scaled_noise(X: np.ndarray, s: float, rng: np.random.Generator, *, robust: bool = False):
    """x' = x + s·σ_f·Z, Z ~ N(0, 1): noise of the same size on every dataset, in units of each
    feature's training spread σ_f — its SD (``sd``) or, for heavy tails, 1.4826·MAD (``rsd``;
    the SD where the MAD is 0). Realised mean |Δx| = s·√(2/π) ≈ 0.80·s training SDs for ``sd``;
    a feature with σ_f = 0 (constant) is not changed. Missing cells stay missing."""
    if not s > 0:
        raise ValueError(f"noise scale s must be > 0, got {s}")
    X = np.asarray(X, dtype=np.float64)
    scale = _robust_scale(X) if robust else _sd(X)
    out = X + s * scale * rng.standard_normal(X.shape)
    out = np.where(np.isnan(X), np.nan, out)
    return out, {"scheme": f"{'rsd' if robust else 'sd'}{s:g}", **_info(X, out, _sd(X)),
                 "mean_noise_scale_sd": float(np.mean(np.where(_sd(X) > 0, scale / np.where(
                     _sd(X) > 0, _sd(X), 1.0), 0.0))) if X.shape[1] else 0.0}


def significant_digit(X: np.ndarray, d: int, rng: np.random.Generator):
    if d < 0 or int(d) != d:
        raise ValueError(f"significant digit d must be a non-negative integer, got {d}")
    X = np.asarray(X, dtype=np.float64)
    nonzero = np.isfinite(X) & (X != 0)
    exponent = np.zeros_like(X)
    exponent[nonzero] = np.floor(np.log10(np.abs(X[nonzero])))
    half_width = np.where(nonzero, 10.0 ** (exponent - d), 0.0)
    noise = rng.uniform(-1.0, 1.0, size=X.shape) * half_width
    out = np.where(nonzero, X + noise, X)
    return out, {"scheme": f"sig{d}", **_info(X, out, _sd(X))}


def nearest_neighbour(X: np.ndarray, c: float, rng: np.random.Generator):
    if not c > 0:
        raise ValueError(f"neighbour scale c must be > 0, got {c}")
    X = np.asarray(X, dtype=np.float64)
    n, dim = X.shape
    if n < 2 or dim == 0:
        return X.copy(), {"scheme": f"nn{c:g}", **_info(X, X, _sd(X)), "mean_radius_sd": 0.0}
    from sklearn.neighbors import NearestNeighbors

    center = np.nanmedian(X, axis=0)
    center = np.where(np.isnan(center), 0.0, center)
    sd = _sd(X)
    scale = np.where(sd > 0, sd, 1.0)
    Z = (np.where(np.isnan(X), center, X) - center) / scale
    dist, _ = NearestNeighbors(n_neighbors=2).fit(Z).kneighbors(Z)
    radius = c * dist[:, 1]  # column 0 is the row itself (or an exact duplicate, distance 0)
    direction = rng.standard_normal((n, dim))
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    direction /= np.where(norms > 0, norms, 1.0)
    r = radius * rng.random(n) ** (1.0 / dim)
    moved = Z + direction * r[:, None]
    out = moved * scale + center
    out = np.where(np.isnan(X), np.nan, out)
    return out, {"scheme": f"nn{c:g}", **_info(X, out, sd),
                 "mean_radius_sd": float(radius.mean())}


def relative(X: np.ndarray, p: float, rng: np.random.Generator):
    if not 0 < p < 1:
        raise ValueError(f"relative perturbation p must be in (0, 1), got {p}")
    X = np.asarray(X, dtype=np.float64)
    out = X * (1.0 + rng.uniform(-p, p, size=X.shape))
    return out, {"scheme": f"rel{p:g}", **_info(X, out, _sd(X))}


def percentile(X: np.ndarray, p: float, rng: np.random.Generator):
    if not 0 < p <= 0.5:
        raise ValueError(f"percentile perturbation p must be in (0, 0.5], got {p}")
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        all_nan = np.isnan(X).all(axis=0)
        safe = np.where(all_nan, 0.0, X)
        s = np.nanquantile(np.abs(safe), p, axis=0)
        lo, hi = np.nanmin(safe, axis=0), np.nanmax(safe, axis=0)
    noise = rng.uniform(-0.5, 0.5, size=X.shape) * s
    out = np.clip(X + noise, lo, hi)
    out = np.where(np.isnan(X), np.nan, out)
    return out, {"scheme": f"pct{p:g}", **_info(X, out, _sd(X)),
                 "mean_noise_scale": float(np.mean(s)) if len(s) else 0.0}


MISSING_MODES = ("keep", "as_level")


def _check_missing(missing: str) -> None:
    if missing not in MISSING_MODES:
        raise ValueError(f"missing must be one of {MISSING_MODES}, got {missing!r}")


def _replace(C: np.ndarray, chosen: np.ndarray, n_levels: list[int], missing: str,
             rng) -> np.ndarray:
    out = C.copy()
    low = -1 if missing == "as_level" else 0  # code −1 is the missing value
    for j, n_lev in enumerate(n_levels):
        rows = np.flatnonzero(chosen[:, j])
        if len(rows) and n_lev:
            out[rows, j] = rng.integers(low, n_lev, len(rows))
    return out


def _cat_info(C, out, chosen, scheme):
    cells = max(C.size, 1)
    changed = C != out
    was_missing, is_missing = C < 0, out < 0
    return {"scheme": scheme, "cells": int(C.size),
            "selected_frac": float(chosen.sum() / cells),
            "changed_frac": float(changed.sum() / cells),
            "level_to_level": float((changed & ~was_missing & ~is_missing).sum() / cells),
            "missing_to_level": float((changed & was_missing).sum() / cells),
            "level_to_missing": float((changed & is_missing).sum() / cells),
            "missing_frac_before": float(was_missing.sum() / cells),
            "missing_frac_after": float(is_missing.sum() / cells)}


def categorical_label_level(C: np.ndarray, n_levels: list[int], p: float, rng,
                            missing: str = "keep"):
    if not 0 <= p <= 1:
        raise ValueError(f"label-level probability p must be in [0, 1], got {p}")
    _check_missing(missing)
    C = np.asarray(C)
    chosen = rng.random(C.shape) < p
    if missing == "keep":
        chosen &= C >= 0
    out = _replace(C, chosen, n_levels, missing, rng)
    suffix = "" if missing == "keep" else "miss"
    return out, _cat_info(C, out, chosen, f"label{suffix}{p:g}")


def categorical_sample_level(C: np.ndarray, n_levels: list[int], p: float, rng,
                             missing: str = "keep"):
    if not 0 <= p <= 1:
        raise ValueError(f"sample-level proportion p must be in [0, 1], got {p}")
    _check_missing(missing)
    C = np.asarray(C)
    n, c = C.shape
    chosen = np.zeros(C.shape, dtype=bool)
    if n and c:
        rows = rng.choice(n, size=min(n, math.ceil(p * n)), replace=False)
        chosen[rows] = rng.random((len(rows), c)) < 1.0 / c
    if missing == "keep":
        chosen &= C >= 0
    out = _replace(C, chosen, n_levels, missing, rng)
    suffix = "" if missing == "keep" else "miss"
    return out, _cat_info(C, out, chosen, f"sample{suffix}{p:g}")
