"""Preprocessing fit on training rows only (never on a repeat's test rows).

Per run, after downsampling and perturbation, a :class:`sklearn.compose.ColumnTransformer` is fit
on the training rows and then applied to the test rows:

* numeric columns: median imputation (a column with no observed training value is imputed with 0
  and kept, so the design matrix has the same columns in every run), then standardisation
  (``StandardScaler`` maps a constant column to 0);
* categorical columns: missing cells become the level ``"<missing>"``, then one-hot encoding with
  the levels fixed from the dataset schema (plus ``"<missing>"``), so every run has the same
  columns; a level unseen in the schema is encoded as all zeros (``handle_unknown="ignore"``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from modelvar.datasets.canonical import Dataset

MISSING_LEVEL = "<missing>"


def make_preprocessor(ds: Dataset) -> ColumnTransformer:
    numeric = ds.numeric_columns
    categorical = ds.categorical_columns
    transformers = []
    if numeric:
        transformers.append(
            (
                "numeric",
                make_pipeline(
                    SimpleImputer(strategy="median", keep_empty_features=True),
                    StandardScaler(),
                ),
                numeric,
            )
        )
    if categorical:
        levels = [[*ds.categories[c], MISSING_LEVEL] for c in categorical]
        transformers.append(
            (
                "categorical",
                make_pipeline(
                    SimpleImputer(
                        strategy="constant", fill_value=MISSING_LEVEL, keep_empty_features=True
                    ),
                    OneHotEncoder(
                        categories=levels,
                        handle_unknown="ignore",
                        sparse_output=False,
                        dtype=np.float64,
                    ),
                ),
                categorical,
            )
        )
    return ColumnTransformer(transformers, remainder="drop", sparse_threshold=0.0)


def as_object_frame(X: pd.DataFrame, ds: Dataset) -> pd.DataFrame:
    """Categoricals as object columns (with NaN for missing), as the imputer expects."""
    out = X.copy()
    for c in ds.categorical_columns:
        out[c] = out[c].astype(object).where(out[c].notna(), np.nan)
    return out


def fit_transform(
    ds: Dataset, X_train: pd.DataFrame, X_test: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, ColumnTransformer]:
    """Fit on ``X_train`` only; return the transformed train and test matrices."""
    pre = make_preprocessor(ds)
    Xtr = pre.fit_transform(as_object_frame(X_train, ds))
    Xte = pre.transform(as_object_frame(X_test, ds))
    return np.ascontiguousarray(Xtr), np.ascontiguousarray(Xte), pre
