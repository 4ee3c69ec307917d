import warnings

import numpy as np
import pytest

from modelvar.data import load
from modelvar.data.splits import RareClassWarning, downsample, split_test_set


@pytest.fixture(scope="module")
def anneal_y():
    return load("anneal", {"source": "embedded"}).class_index()


def test_test_split_is_stratified_disjoint_and_reproducible(anneal_y):
    pool, test = split_test_set(anneal_y, 0.25, root_seed=1, dataset="anneal", repeat=0)
    assert len(np.intersect1d(pool, test)) == 0
    assert len(pool) + len(test) == len(anneal_y)
    assert abs(len(test) - 0.25 * len(anneal_y)) <= 1
    overall = np.bincount(anneal_y) / len(anneal_y)
    in_test = np.bincount(anneal_y[test], minlength=len(overall)) / len(test)
    assert np.abs(in_test - overall).max() < 0.01  # stratified to within rounding
    again = split_test_set(anneal_y, 0.25, root_seed=1, dataset="anneal", repeat=0)
    np.testing.assert_array_equal(again[1], test)
    other = split_test_set(anneal_y, 0.25, root_seed=1, dataset="anneal", repeat=1)
    assert not np.array_equal(other[1], test)


def test_rare_class_rule(anneal_y):
    y = anneal_y.copy()
    y[0] = 9  # a class with a single sample
    with pytest.warns(RareClassWarning, match=r"\['9'\]"):
        pool, test = split_test_set(y, 0.25, root_seed=1, dataset="x", repeat=0)
    assert 0 in pool and 0 not in test
    labels = [f"class {i}" for i in range(10)]
    with pytest.warns(RareClassWarning, match=r"\['class 9'\]"):  # the label, not an index
        split_test_set(y, 0.25, root_seed=1, dataset="x", repeat=0, labels=labels)


def test_downsample_nested_paired_and_stratified(anneal_y):
    pool, _ = split_test_set(anneal_y, 0.25, root_seed=3, dataset="anneal", repeat=2)
    kw = dict(root_seed=3, dataset="anneal", repeat=2, run=4)
    subsets = {f: downsample(anneal_y[pool], pool, f, **kw) for f in (0.25, 0.5, 0.75, 1.0)}
    np.testing.assert_array_equal(subsets[1.0], pool)
    for small, big in ((0.25, 0.5), (0.5, 0.75), (0.75, 1.0)):
        assert np.isin(subsets[small], subsets[big]).all()
    # every class keeps ceil(f * n_c) rows
    for f, rows in subsets.items():
        want = np.ceil(f * np.bincount(anneal_y[pool])).astype(int)
        np.testing.assert_array_equal(np.bincount(anneal_y[rows], minlength=len(want)), want)
    # same (repeat, run) -> same rows; another run -> other rows
    np.testing.assert_array_equal(downsample(anneal_y[pool], pool, 0.5, **kw), subsets[0.5])
    other = downsample(anneal_y[pool], pool, 0.5, **{**kw, "run": 5})
    assert not np.array_equal(other, subsets[0.5])


def test_bad_fractions(anneal_y):
    with pytest.raises(ValueError, match="test_fraction"):
        split_test_set(anneal_y, 1.0, root_seed=1, dataset="a", repeat=0)
    with pytest.raises(ValueError, match="downsampling fraction"):
        downsample(anneal_y, np.arange(len(anneal_y)), 0.0, root_seed=1, dataset="a",
                   repeat=0, run=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        split_test_set(anneal_y, 0.25, root_seed=1, dataset="a", repeat=0)  # no spurious warning
