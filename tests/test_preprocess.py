"""Preprocessing: fit on training rows only, identical to sklearn's ColumnTransformer."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from modelvar.data import load
from modelvar.data.canonical import build
from modelvar.data.preprocess import MISSING_LEVEL, EncodedDataset, fit_transform, transform_run


def sklearn_oracle(ds, X_train, X_test):
    """The same preprocessing with sklearn's building blocks (the reference implementation)."""
    num, cat = ds.numeric_columns, ds.categorical_columns
    parts = []
    if num:
        parts.append(("num", make_pipeline(SimpleImputer(strategy="median",
                                                         keep_empty_features=True),
                                           StandardScaler()), num))
    if cat:
        parts.append(("cat", make_pipeline(
            SimpleImputer(strategy="constant", fill_value=MISSING_LEVEL,
                          keep_empty_features=True),
            OneHotEncoder(categories=[[*ds.categories[c], MISSING_LEVEL] for c in cat],
                          handle_unknown="ignore", sparse_output=False)), cat))
    ct = ColumnTransformer(parts, sparse_threshold=0.0)

    def objects(X):
        out = X.copy()
        for c in cat:
            out[c] = out[c].astype(object).where(out[c].notna(), np.nan)
        return out

    return ct.fit_transform(objects(X_train)), ct.transform(objects(X_test))


@pytest.mark.parametrize("name", ["anneal", "credit-g", "vehicle", "car"])
def test_equals_sklearn_column_transformer(name):
    ds = load(name, {"source": "embedded"})
    rng = np.random.default_rng(0)
    rows = rng.permutation(len(ds.y))
    tr, te = rows[: len(rows) // 3], rows[len(rows) // 3:]
    ours_tr, ours_te, _ = fit_transform(ds, ds.X.iloc[tr], ds.X.iloc[te])
    ref_tr, ref_te = sklearn_oracle(ds, ds.X.iloc[tr], ds.X.iloc[te])
    np.testing.assert_allclose(ours_tr, ref_tr, atol=1e-10)
    np.testing.assert_allclose(ours_te, ref_te, atol=1e-10)
    enc = EncodedDataset.from_dataset(ds)
    run_tr, run_te, _ = transform_run(enc, tr, te)
    np.testing.assert_allclose(run_tr, ref_tr, atol=1e-10)
    np.testing.assert_allclose(run_te, ref_te, atol=1e-10)
    assert len(enc.feature_names()) == ours_tr.shape[1]


def test_fit_on_training_rows_only():
    ds = load("vehicle", {"source": "embedded"})
    train, test = ds.X.iloc[:400], ds.X.iloc[400:]
    Xtr, Xte, stats = fit_transform(ds, train, test)
    np.testing.assert_allclose(stats.mean, train.to_numpy().mean(axis=0))
    assert not np.allclose(stats.mean, ds.X.to_numpy().mean(axis=0))
    np.testing.assert_allclose(Xtr.mean(axis=0), 0, atol=1e-12)
    # test rows are transformed with the training statistics, not re-centred
    assert np.abs(Xte.mean(axis=0)).max() > 1e-3


def test_columns_fixed_by_schema_whatever_the_training_rows():
    ds = load("anneal", {"source": "embedded"})
    widths = set()
    for rows in (slice(0, 50), slice(100, 400), slice(500, 898)):
        Xtr, Xte, _ = fit_transform(ds, ds.X.iloc[rows], ds.X.iloc[:10])
        assert np.isfinite(Xtr).all() and np.isfinite(Xte).all()
        widths.add(Xtr.shape[1])
    n_levels = sum(len(ds.categories[c]) + 1 for c in ds.categorical_columns)
    assert widths == {len(ds.numeric_columns) + n_levels}


def test_missing_categoricals_become_their_own_level():
    ds = load("credit-g", {"source": "embedded"})
    train = ds.X.iloc[:200].copy()
    test = ds.X.iloc[200:203].copy()
    train.loc[train.index[:5], "purpose"] = np.nan
    test["purpose"] = pd.Categorical([np.nan] * 3, categories=ds.categories["purpose"])
    _, Xte, _ = fit_transform(ds, train, test)
    names = EncodedDataset.from_dataset(ds).feature_names()
    col = names.index(f"purpose={MISSING_LEVEL}")
    np.testing.assert_array_equal(Xte[:, col], 1.0)


def test_constant_and_all_missing_numeric_columns_are_kept_finite():
    frame = pd.DataFrame({"const": [3.0] * 6, "empty": [np.nan] * 6,
                          "x": [1.0, 2, 3, 4, 5, 6], "y": list("ababab")})
    ds = build("c", frame, "y", [])
    Xtr, Xte, _ = fit_transform(ds, ds.X.iloc[:4], ds.X.iloc[4:])
    assert Xtr.shape == (4, 3) and np.isfinite(Xtr).all() and np.isfinite(Xte).all()
    np.testing.assert_array_equal(Xtr[:, 0], 0.0)  # constant column -> 0 after scaling
    ref_tr, ref_te = sklearn_oracle(ds, ds.X.iloc[:4], ds.X.iloc[4:])
    np.testing.assert_allclose(Xtr, ref_tr, atol=1e-12)
    np.testing.assert_allclose(Xte, ref_te, atol=1e-12)


def test_statistics_without_missing_values_are_the_bits_of_the_nan_aware_path():
    """``fit_numeric`` takes ``np.median`` where no training value is missing: on tables of
    every size on both sides of numpy's small-array median path (600 rows), odd and even
    counts, ties and scales from 1e-5 to 1e5, its statistics are the bits the NaN-aware path
    (``np.nanmedian``, imputation) gives."""
    from modelvar.data.preprocess import fit_numeric

    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 10, 599, 600, 601, 1201):
        for scale in (1e-5, 1.0, 1e5):
            X = rng.standard_normal((n, 4)) * scale
            X[:, 3] = np.round(X[:, 3], 1)  # ties
            fast = fit_numeric(X)
            with_nan = np.vstack([X, np.full((1, 4), np.nan)])  # one missing row: the NaN path
            slow_median = np.nanmedian(with_nan, axis=0)
            np.testing.assert_array_equal(fast.median, slow_median)
            np.testing.assert_array_equal(fast.median, np.median(X, axis=0))
            np.testing.assert_array_equal(fast.mean, X.mean(axis=0))
            np.testing.assert_array_equal(fast.scale, np.where(X.std(axis=0) > 0,
                                                               X.std(axis=0), 1.0))
