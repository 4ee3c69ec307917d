"""Discrete class distributions for the metric simulation study (seed 000, Appendix A).

Each generator returns a sorted (non-increasing), strictly positive vector p₁ ≥ … ≥ p_c summing
to 1: :func:`uniform_random`, :func:`variably_exponential`, :func:`multi_modal`, :func:`step_like`.
They implement the appendix's pseudo-code for its intent; the slips fixed are noted per function.
"""

from __future__ import annotations

import math

import numpy as np

DISTRIBUTIONS = ("uniform", "exponential", "multimodal", "step")


def _normalised_sorted(raw: np.ndarray) -> np.ndarray:
    raw = np.asarray(raw, dtype=float)
    if (raw <= 0).any():
        raise ValueError("class weights must be positive")
    return np.sort(raw)[::-1] / raw.sum()


def _check_classes(n_classes: int) -> None:
    if int(n_classes) < 2:
        raise ValueError(f"need at least 2 classes, got {n_classes}")


def uniform_random(n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """p′ᵢ ~ U(0, 1) i.i.d., p = sort(p′)/Σp′ (seed 000: the pseudo-code sorts then divides)."""
    _check_classes(n_classes)
    raw = rng.uniform(0, 1, n_classes)
    return _normalised_sorted(np.maximum(raw, np.finfo(float).tiny))


def variably_exponential(n_classes: int, rng: np.random.Generator,
                         scale: float | None = None) -> np.ndarray:
    """p′ = linspace(1/c, 1, c)^scale, scale ~ U(0.1, 20): near-uniform for small scale, skewed for
    large. (The appendix uses linspace(0, 1, c), whose first value 0 would give a class of
    probability 0 for every scale; starting at 1/c keeps every class present.)"""
    _check_classes(n_classes)
    if scale is None:
        scale = rng.uniform(0.1, 20)
    raw = np.linspace(1 / n_classes, 1, n_classes) ** float(scale)
    return _normalised_sorted(raw)


def multi_modal(n_classes: int, rng: np.random.Generator,
                n_modes: int | None = None) -> np.ndarray:
    """``n_modes`` equally likely dominant classes, each c/n_modes times as likely as the others.

    (The appendix sorts an undefined ``p_raw``; the intent is to sort the mode vector ``p``.)
    n_modes is drawn from 1 … c − 1 (c modes would be the uniform distribution)."""
    _check_classes(n_classes)
    if n_modes is None:
        n_modes = int(rng.integers(1, n_classes))
    if not 1 <= n_modes <= n_classes:
        raise ValueError(f"n_modes must be in 1..{n_classes}, got {n_modes}")
    raw = np.ones(n_classes)
    raw[:n_modes] = n_classes / n_modes
    return _normalised_sorted(raw)


def step_like(n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Random plateaus: ≥ 1 run of ≥ 2 classes with exactly equal probability, others random.

    The appendix's version never makes a step for c ≤ 10 (its widths need ``wmax > 2`` with
    ``max_width = ceil(c/5) ≤ 2``) and returns an undefined name; here a plateau is 2 … max(2,
    ⌈c/5⌉) classes wide, and 1 … max(1, c // 4) plateaus are placed while classes remain."""
    _check_classes(n_classes)
    max_width = max(2, math.ceil(n_classes / 5))
    n_steps = int(rng.integers(1, max(1, n_classes // 4) + 1))
    values: list[float] = []
    for _ in range(n_steps):
        room = n_classes - len(values)
        if room < 2:
            break
        width = int(rng.integers(2, min(max_width, room) + 1))
        values += [rng.uniform(0.05, 1.0)] * width
    values += list(rng.uniform(0.05, 1.0, n_classes - len(values)))
    return _normalised_sorted(np.array(values))


GENERATORS = {
    "uniform": uniform_random,
    "exponential": variably_exponential,
    "multimodal": multi_modal,
    "step": step_like,
}


def class_distribution(kind: str, n_classes: int, rng: np.random.Generator) -> np.ndarray:
    if kind not in GENERATORS:
        raise ValueError(f"unknown distribution type {kind!r}; known: {list(GENERATORS)}")
    return GENERATORS[kind](n_classes, rng)
