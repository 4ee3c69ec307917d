"""Preprocessing fit on training rows only (never on a repeat's test rows).

Per run, after downsampling and perturbation:

* numeric columns: median imputation (a column with no observed training value is imputed with 0
  and kept, so the design matrix has the same columns in every run), then standardisation with
  the training mean and SD (a constant column maps to 0; SD = 0 is treated as 1, as sklearn's
  ``StandardScaler``);
* categorical columns: missing cells become the level ``"<missing>"``, then one-hot encoding with
  the levels fixed from the dataset schema plus ``"<missing>"``, so every run has the same
  columns.

The categorical part fits nothing (its levels come from the schema, its imputation is a constant),
so :class:`EncodedDataset` encodes every row once per job as integer codes; per run only the
numeric statistics are computed, from the training rows. This is numerically identical to
sklearn's ``ColumnTransformer`` of ``SimpleImputer`` + ``StandardScaler`` / ``OneHotEncoder``
(``tests/test_preprocess.py`` checks it against that oracle) and much faster per run
(``make bench-fit``; docs/measurements/design-choices.md), which keeps the per-fit overhead
small.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from modelvar.data.canonical import Dataset

MISSING_LEVEL = "<missing>"


@dataclass
class EncodedDataset:
    """All rows of a dataset as arrays: numeric values (NaN = missing) and categorical codes
    (0..L−1 for the schema's levels, −1 = missing)."""

    numeric: np.ndarray
    codes: np.ndarray
    n_levels: list[int]
    numeric_columns: list[str]
    categorical_columns: list[str]
    levels: list[list[str]]

    @classmethod
    def from_frame(cls, ds: Dataset, X: pd.DataFrame) -> EncodedDataset:
        import pandas as pd

        num = ds.numeric_columns
        cat = ds.categorical_columns
        numeric = X[num].to_numpy(np.float64) if num else np.empty((len(X), 0))
        codes = np.empty((len(X), len(cat)), dtype=np.int32)
        for j, c in enumerate(cat):
            values = pd.Categorical(X[c], categories=ds.categories[c])
            codes[:, j] = values.codes
        return cls(numeric=numeric, codes=codes,
                   n_levels=[len(ds.categories[c]) for c in cat], numeric_columns=num,
                   categorical_columns=cat, levels=[list(ds.categories[c]) for c in cat])

    @classmethod
    def from_dataset(cls, ds: Dataset) -> EncodedDataset:
        return cls.from_frame(ds, ds.X)

    def feature_names(self) -> list[str]:
        names = list(self.numeric_columns)
        for c, lev in zip(self.categorical_columns, self.levels, strict=True):
            names += [f"{c}={v}" for v in [*lev, MISSING_LEVEL]]
        return names


@dataclass
class NumericStats:
    """What preprocessing learned from the training rows (recorded for inspection/tests)."""

    median: np.ndarray
    mean: np.ndarray
    scale: np.ndarray


def _design(num: np.ndarray, stats: NumericStats, codes: np.ndarray,
            n_levels: list[int]) -> np.ndarray:
    """The design matrix of some rows: their standardised numeric columns, then the one-hot
    columns of each categorical column's levels and ``<missing>``, written into one C-ordered
    array (no stacking copies: the per-run cost of small tables is these copies)."""
    widths = np.asarray(n_levels, dtype=np.int64) + 1  # + the <missing> level
    n_num = num.shape[1]
    out = np.zeros((len(num), n_num + int(widths.sum())))
    out[:, :n_num] = apply_numeric(num, stats)
    if codes.size:
        offsets = n_num + np.concatenate([[0], np.cumsum(widths)[:-1]])
        col = np.where(codes < 0, widths - 1, codes) + offsets
        out[np.arange(len(codes))[:, None], col] = 1.0
    return out


def fit_numeric(num_train: np.ndarray) -> NumericStats:
    """Medians of the observed training values (0 for a column with none), then mean and SD of
    the imputed columns (module docstring). Without missing values ``np.median`` gives the same
    bits as ``np.nanmedian`` at a third of its cost (``tests/test_preprocess.py``)."""
    if not len(num_train):
        d = num_train.shape[1]
        return NumericStats(median=np.zeros(d), mean=np.zeros(d), scale=np.ones(d))
    missing = np.isnan(num_train)
    if missing.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN column: median is NaN → 0
            median = np.nanmedian(num_train, axis=0)
        median = np.where(np.isnan(median), 0.0, median)
        filled = np.where(missing, median, num_train)
    else:
        median = np.median(num_train, axis=0)
        filled = num_train
    mean = filled.mean(axis=0)
    sd = filled.std(axis=0)
    scale = np.where(sd < 10 * np.finfo(np.float64).eps * np.maximum(np.abs(mean), 1.0), 1.0, sd)
    return NumericStats(median=median, mean=mean, scale=scale)


def apply_numeric(num: np.ndarray, stats: NumericStats) -> np.ndarray:
    return (np.where(np.isnan(num), stats.median, num) - stats.mean) / stats.scale


def transform_run(
    enc: EncodedDataset,
    train_rows: np.ndarray,
    test_rows: np.ndarray,
    *,
    num_train: np.ndarray | None = None,
    codes_train: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, NumericStats]:
    """Design matrices of one run. Statistics come from the training rows only — their
    perturbed values when ``num_train``/``codes_train`` are given; test rows are read from
    ``enc`` as they are (never perturbed)."""
    num_train = enc.numeric[train_rows] if num_train is None else num_train
    codes_train = enc.codes[train_rows] if codes_train is None else codes_train
    stats = fit_numeric(num_train)
    return (_design(num_train, stats, codes_train, enc.n_levels),
            _design(enc.numeric[test_rows], stats, enc.codes[test_rows], enc.n_levels), stats)


def fit_transform(
    ds: Dataset, X_train: pd.DataFrame, X_test: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, NumericStats]:
    """DataFrame convenience: fit on ``X_train`` only, transform both."""
    tr = EncodedDataset.from_frame(ds, X_train)
    te = EncodedDataset.from_frame(ds, X_test)
    stats = fit_numeric(tr.numeric)
    return (_design(tr.numeric, stats, tr.codes, tr.n_levels),
            _design(te.numeric, stats, te.codes, te.n_levels), stats)
