"""Test splits per repeat and train downsampling per run (the paired design of seed 004).

* :func:`split_test_set`: for repeat r, a stratified test set of a fixed fraction of the rows, drawn
  from the stream ``(test-split, dataset, repeat)``. Every run, classifier and perturbation cell of
  that repeat uses it. The test set has ⌈f·n⌉ rows; each class gets its share f·n_c rounded by the
  largest-remainder method (the rounding up going to the classes with the largest fractional
  parts, ties to the earlier class), at least one test and one training row, and its rows are
  picked from one permutation per class (numpy only: sklearn's ``model_selection`` would add to
  an MLP fit job's start-up). Rare-class rule: a class with fewer than 2 samples cannot be
  stratified into both parts; its rows stay in the training pool and a
  :class:`RareClassWarning` is issued.
* :func:`downsample`: for (repeat, run), a stratified subset of the repeat's training pool of
  fraction f, drawn from ``(downsample, dataset, repeat, run)``. Per class the pool is permuted
  once and the first ``ceil(f * n_c)`` rows are kept, so the subsets are *nested* (the 25 % subset
  of a run lies inside its 50 % subset) and *paired* (identical for every classifier and cell).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from modelvar.seeding import stream


class RareClassWarning(UserWarning):
    """A class is too small to be stratified into both the test set and the training pool."""


def rare_classes(class_counts: dict[str, int], need: int) -> dict[str, int]:
    """The classes (label: samples) with fewer than ``need`` samples, the fewest a class needs
    for the split (:func:`modelvar.planning.config_check.min_class_size`)."""
    return {label: n for label, n in class_counts.items() if n < need}


def kept_rare_classes_warning(name: str, rare: dict[str, int], class_counts: dict[str, int],
                              need: int) -> str:
    """What keeping ``rare`` classes (``split.rare_classes: keep``) does to a dataset's metrics:
    their rows train every run but are never tested."""
    tested = len(class_counts) - len(rare)
    return (f"{name}: {len(rare)} of its {len(class_counts)} classes ({sum(rare.values())} of "
            f"{sum(class_counts.values())} rows) have fewer than the {need} samples the split "
            f"needs: they are kept in every training pool and never tested, so the metrics "
            f"describe the other {tested} class(es) only"
            + (" (is the target an identifier?)" if len(rare) * 2 > len(class_counts) else ""))


def split_test_set(
    y: np.ndarray, test_fraction: float, *, root_seed: int, dataset: str, repeat: int | None,
    purpose: str = "test-split", labels: list | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return sorted (train_pool, test) row indices for one repeat (or, with
    ``purpose="tuning-split"`` and ``repeat=None``, for the dedicated tuning split).

    ``labels`` names the classes of the class indices ``y`` (for the rare-class warning)."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    y = np.asarray(y)
    present, counts = np.unique(y, return_counts=True)
    rare = present[counts < 2]
    rows = np.arange(len(y))
    rare_rows = rows[np.isin(y, rare)]
    if len(rare):
        names = [str(labels[int(c)]) if labels is not None else str(c) for c in rare]
        warnings.warn(
            f"{dataset}: class(es) {names} have fewer than 2 samples and cannot be "
            f"stratified; their {len(rare_rows)} row(s) stay in the training pool",
            RareClassWarning,
            stacklevel=2,
        )
    rest = rows[~np.isin(y, rare)]
    rng = stream(root_seed, purpose, dataset=dataset, repeat=repeat).generator()
    test = _stratified_sample(y[rest], rest, test_fraction, rng)
    return np.sort(np.setdiff1d(rows, test)), np.sort(test)


def training_rows(n: int, test_fraction: float) -> int:
    """About how many of a class's ``n`` rows (n ≥ 2) stay in the training pool: the split
    tests round(test_fraction·n) of them, at least 1 and at most n − 1 (as
    :func:`_stratified_sample`, up to its largest-remainder rounding)."""
    return n - min(max(round(test_fraction * n), 1), n - 1)


def _stratified_sample(y: np.ndarray, rows: np.ndarray, fraction: float,
                       rng: np.random.Generator) -> np.ndarray:
    """⌈fraction·n⌉ of ``rows``, stratified by ``y`` (module docstring); every class has ≥ 2."""
    labels, counts = np.unique(y, return_counts=True)
    total = math.ceil(fraction * len(rows))
    share = counts * total / len(rows)
    take = np.floor(share).astype(np.int64)
    order = np.argsort(-(share - take), kind="stable")
    take[order[: total - int(take.sum())]] += 1
    take = np.clip(take, 1, counts - 1)
    picked = []
    for label, n_test in zip(labels, take, strict=True):  # sorted labels: a fixed draw order
        members = rows[y == label]
        picked.append(members[rng.permutation(len(members))[:n_test]])
    return np.concatenate(picked)


def downsample(
    y_pool: np.ndarray,
    pool_rows: np.ndarray,
    fraction: float,
    *,
    root_seed: int,
    dataset: str,
    repeat: int,
    run: int,
) -> np.ndarray:
    """Return the sorted rows of ``pool_rows`` kept at ``fraction`` (stratified, nested)."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"downsampling fraction must be in (0, 1], got {fraction}")
    y_pool = np.asarray(y_pool)
    pool_rows = np.asarray(pool_rows)
    if len(y_pool) != len(pool_rows):
        raise ValueError("y_pool and pool_rows must have the same length")
    rng = stream(root_seed, "downsample", dataset=dataset, repeat=repeat, run=run).generator()
    keep = []
    for label in np.unique(y_pool):  # sorted: the draw order is fixed
        members = pool_rows[y_pool == label]
        order = rng.permutation(len(members))
        keep.append(members[order[: math.ceil(fraction * len(members))]])
    return np.sort(np.concatenate(keep))
