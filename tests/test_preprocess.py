import numpy as np
import pandas as pd

from modelvar.datasets import load
from modelvar.preprocess import MISSING_LEVEL, fit_transform


def test_fit_on_training_rows_only():
    ds = load("vehicle", {"source": "embedded"})
    train, test = ds.X.iloc[:400], ds.X.iloc[400:]
    Xtr, Xte, pre = fit_transform(ds, train, test)
    scaler = pre.named_transformers_["numeric"][-1]
    np.testing.assert_allclose(scaler.mean_, train.to_numpy().mean(axis=0))
    assert not np.allclose(scaler.mean_, ds.X.to_numpy().mean(axis=0))
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


def test_missing_categoricals_become_their_own_level_and_unknowns_are_zero():
    ds = load("credit-g", {"source": "embedded"})
    train = ds.X.iloc[:200].copy()
    test = ds.X.iloc[200:203].copy()
    train.loc[train.index[:5], "purpose"] = np.nan
    test["purpose"] = pd.Categorical([np.nan] * 3, categories=ds.categories["purpose"])
    _, Xte, pre = fit_transform(ds, train, test)
    names = list(pre.get_feature_names_out())
    col = names.index(f"categorical__purpose_{MISSING_LEVEL}")
    np.testing.assert_array_equal(Xte[:, col], 1.0)


def test_constant_and_all_missing_numeric_columns_are_kept_finite():
    from modelvar.datasets.canonical import build

    frame = pd.DataFrame({"const": [3.0] * 6, "empty": [np.nan] * 6,
                          "x": [1.0, 2, 3, 4, 5, 6], "y": list("ababab")})
    ds = build("c", frame, "y", [])
    Xtr, Xte, _ = fit_transform(ds, ds.X.iloc[:4], ds.X.iloc[4:])
    assert Xtr.shape == (4, 3) and np.isfinite(Xtr).all() and np.isfinite(Xte).all()
    np.testing.assert_array_equal(Xtr[:, 0], 0.0)  # constant column -> 0 after scaling
