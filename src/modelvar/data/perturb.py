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
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.neighbors import NearestNeighbors


def _info(before: np.ndarray, after: np.ndarray, scale: np.ndarray) -> dict[str, float]:
    finite = ~np.isnan(before)
    delta = np.abs(after - before)
    changed = finite & (delta > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(scale > 0, delta / np.where(scale > 0, scale, 1.0), 0.0)
    return {
        "cells": int(finite.sum()),
        "changed_frac": float(changed.sum() / max(finite.sum(), 1)),
        "mean_abs_shift_sd": float(np.nanmean(np.where(finite, rel, np.nan)))
        if finite.any() else 0.0,
    }


def _sd(X: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        sd = np.nanstd(X, axis=0) if len(X) else np.zeros(X.shape[1])
    return np.nan_to_num(sd)


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


def _replace(C: np.ndarray, chosen: np.ndarray, n_levels: list[int], rng) -> np.ndarray:
    out = C.copy()
    for j, n_lev in enumerate(n_levels):
        rows = np.flatnonzero(chosen[:, j])
        if len(rows) and n_lev:
            out[rows, j] = rng.integers(0, n_lev, len(rows))
    return out


def _cat_info(C, out, chosen, scheme):
    cells = C.size
    return {"scheme": scheme, "cells": int(cells),
            "selected_frac": float(chosen.sum() / max(cells, 1)),
            "changed_frac": float((C != out).sum() / max(cells, 1))}


def categorical_label_level(C: np.ndarray, n_levels: list[int], p: float, rng):
    if not 0 <= p <= 1:
        raise ValueError(f"label-level probability p must be in [0, 1], got {p}")
    C = np.asarray(C)
    chosen = rng.random(C.shape) < p
    out = _replace(C, chosen, n_levels, rng)
    return out, _cat_info(C, out, chosen, f"label{p:g}")


def categorical_sample_level(C: np.ndarray, n_levels: list[int], p: float, rng):
    if not 0 <= p <= 1:
        raise ValueError(f"sample-level proportion p must be in [0, 1], got {p}")
    C = np.asarray(C)
    n, c = C.shape
    chosen = np.zeros(C.shape, dtype=bool)
    if n and c:
        rows = rng.choice(n, size=min(n, math.ceil(p * n)), replace=False)
        chosen[rows] = rng.random((len(rows), c)) < 1.0 / c
    out = _replace(C, chosen, n_levels, rng)
    return out, _cat_info(C, out, chosen, f"sample{p:g}")
