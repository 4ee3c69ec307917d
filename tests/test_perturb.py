"""Statistical properties of the training-data perturbations (seed 004)."""

import json

import numpy as np
import pytest
from scipy import stats
from sklearn.neighbors import NearestNeighbors

from modelvar.data import load
from modelvar.data.perturb import (
    categorical_label_level,
    categorical_sample_level,
    nearest_neighbour,
    percentile,
    relative,
    scaled_noise,
    significant_digit,
)
from modelvar.data.preprocess import EncodedDataset
from modelvar.pipeline import fitting
from modelvar.seeding import stream
from modelvar.study.cells import Cell, grid


def rng(name="t", **kw):
    return stream(1, "data-perturbation", scheme=name, **kw).generator()


@pytest.mark.parametrize("d", [0, 1, 2, 3])
def test_significant_digit_bounds_uniformity_and_zero_rule(d):
    gen = np.random.default_rng(0)
    X = gen.lognormal(0, 3, (4000, 3)) * gen.choice([-1, 1], (4000, 3))
    X[:50, 0] = 0.0
    X[50:60, 1] = np.nan
    out, info = significant_digit(X, d, rng())
    finite = np.isfinite(X) & (X != 0)
    width = 10.0 ** (np.floor(np.log10(np.abs(X[finite]))) - d)
    scaled = (out[finite] - X[finite]) / width
    assert np.abs(scaled).max() <= 1.0
    assert stats.kstest(scaled, stats.uniform(-1, 2).cdf).pvalue > 1e-3
    assert (out[:50, 0] == 0).all() and np.isnan(out[50:60, 1]).all()
    assert info["changed_frac"] == pytest.approx(finite.sum() / np.isfinite(X).sum())


@pytest.mark.parametrize("c", [0.25, 0.5, 1.0])
def test_nearest_neighbour_inside_ball_and_uniform_in_it(c):
    gen = np.random.default_rng(1)
    X = gen.normal(size=(3000, 4)) * np.array([1.0, 10.0, 0.1, 5.0]) + 3
    out, info = nearest_neighbour(X, c, rng())
    sd, med = X.std(axis=0), np.median(X, axis=0)
    Z, Zp = (X - med) / sd, (out - med) / sd
    dist = NearestNeighbors(n_neighbors=2).fit(Z).kneighbors(Z)[0][:, 1]
    moved = np.linalg.norm(Zp - Z, axis=1)
    assert (moved <= c * dist + 1e-9).all()
    # uniform in a D-ball: (r / R)^D ~ U(0, 1)
    u = (moved / (c * dist)) ** X.shape[1]
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # direction uniform: mean unit vector near 0
    unit = (Zp - Z) / moved[:, None]
    assert np.abs(unit.mean(axis=0)).max() < 0.06
    assert info["mean_radius_sd"] == pytest.approx(c * dist.mean())


def test_nearest_neighbour_half_keeps_each_points_neighbour_set_near():
    gen = np.random.default_rng(2)
    X = gen.normal(size=(500, 3))
    out, _ = nearest_neighbour(X, 0.5, rng())
    Z, Zp = X / X.std(axis=0), out / X.std(axis=0)
    idx = NearestNeighbors(n_neighbors=2).fit(Z).kneighbors(Z)[1][:, 1]
    # at c = 0.5 the moved point is still closer to its own origin than to its old neighbour
    d_self = np.linalg.norm(Zp - Z, axis=1)
    d_nb = np.linalg.norm(Zp - Z[idx], axis=1)
    assert (d_self <= d_nb + 1e-12).all()


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_relative_bounds(p):
    X = np.random.default_rng(3).normal(5, 3, (2000, 2))
    out, _ = relative(X, p, rng())
    ratio = (out - X) / np.abs(X)
    assert np.abs(ratio).max() <= p + 1e-12
    assert stats.kstest((out / X - 1).ravel() / p, stats.uniform(-1, 2).cdf).pvalue > 1e-3


def test_percentile_noise_scale_and_clamping():
    gen = np.random.default_rng(4)
    X = np.column_stack([gen.uniform(0, 1, 5000), gen.exponential(10, 5000)])
    out, info = percentile(X, 0.2, rng())
    s = np.quantile(np.abs(X), 0.2, axis=0)
    assert (np.abs(out - X) <= s / 2 + 1e-12).all()
    assert (out >= X.min(axis=0)).all() and (out <= X.max(axis=0)).all()
    inside = (X > X.min(axis=0) + s) & (X < X.max(axis=0) - s)
    assert (out != X)[inside].mean() == 1.0  # away from the bounds nothing is clamped
    assert info["mean_noise_scale"] == pytest.approx(s.mean())


def binomial_ok(successes, n, p, z=5):
    return abs(successes - n * p) <= z * np.sqrt(n * p * (1 - p)) + 1


@pytest.mark.parametrize("p", [0.02, 0.1, 0.3])
def test_label_level_rate_is_cellwise(p):
    levels = [3, 2, 4]
    C = np.zeros((5000, 3), dtype=np.int32)
    C[:100, 1] = -1  # missing cells may be replaced too
    out, info = categorical_label_level(C, levels, p, rng())
    selected = round(info["selected_frac"] * C.size)
    assert binomial_ok(selected, C.size, p)
    # a selected cell keeps its value with probability 1/levels: expected changed rate
    want = p * np.mean([1 - 1 / v for v in levels])
    assert binomial_ok(round(info["changed_frac"] * C.size), C.size, want, z=6)
    for j, n_lev in enumerate(levels):
        assert set(np.unique(out[100:, j])) <= set(range(n_lev))
    # cell-wise: rows with one changed cell usually keep the others
    changed = out != C
    assert (changed.sum(axis=1) == 1).sum() > (changed.sum(axis=1) == 3).sum()


def test_sample_level_touches_ceil_pn_rows_and_one_cell_per_row_on_average():
    levels = [2] * 4
    C = np.zeros((1001, 4), dtype=np.int32)
    out, info = categorical_sample_level(C, levels, 0.2, rng())
    touched_max = int(np.ceil(0.2 * 1001))
    selected_cells = round(info["selected_frac"] * C.size)
    assert binomial_ok(selected_cells, touched_max * 4, 0.25)  # 1/c per cell of chosen rows
    assert ((out != C).any(axis=1)).sum() <= touched_max


def test_same_stream_same_output_and_streams_independent():
    X = np.random.default_rng(5).normal(size=(1000, 3))
    a, _ = relative(X, 0.2, rng(repeat=0, run=1))
    b, _ = relative(X, 0.2, rng(repeat=0, run=1))
    c, _ = relative(X, 0.2, rng(repeat=0, run=2))
    np.testing.assert_array_equal(a, b)
    assert abs(np.corrcoef((a / X).ravel(), (c / X).ravel())[0, 1]) < 0.1


@pytest.mark.parametrize(
    ("func", "args", "message"),
    [
        (significant_digit, (-1,), "non-negative integer"),
        (nearest_neighbour, (0,), "> 0"),
        (relative, (1.5,), r"\(0, 1\)"),
        (percentile, (0.7,), r"\(0, 0.5\]"),
    ],
)
def test_bad_parameters(func, args, message):
    with pytest.raises(ValueError, match=message):
        func(np.ones((3, 2)), *args, rng())


def test_cell_ids_round_trip_and_grid():
    cells = grid({"data": ["none", {"sig": 1}, {"nn": 0.5}, {"rel": 0.1}, {"pct": 0.05}],
                  "categorical": ["none", {"label": 0.1}, {"sample": 0.2}],
                  "downsample": [0.25, 1.0], "model_seed": ["fixed", "per-run"]})
    assert len(cells) == 5 * 3 * 2 * 2
    for cell in cells:
        assert Cell.parse(cell.id) == cell
    assert Cell(data=("nn", 0.5), categorical=("label", 0.05)).id == \
        "nn0p5_label0p05_hnone_down100_seedfix"
    for bad in ("nn0p5_label0p05_down100", "xx1_cnone_hnone_down100_seedfix",
                "sig01_cnone_hnone_down100_seedfix", "dnone_cnone_hnone_down100_seedmaybe"):
        with pytest.raises(ValueError):
            Cell.parse(bad)


def test_fit_never_perturbs_or_preprocesses_on_test_rows(monkeypatch):
    ds = load("credit-g", {"source": "embedded"})
    seen = []
    original = fitting.transform_run

    def spy(enc, train_rows, test_rows, *, num_train, codes_train):
        seen.append((train_rows.copy(), test_rows.copy(), num_train.copy(), codes_train.copy()))
        return original(enc, train_rows, test_rows, num_train=num_train,
                        codes_train=codes_train)

    monkeypatch.setattr(fitting, "transform_run", spy)
    cell = Cell(data=("sig", 0), categorical=("label", 0.3), downsample=0.5)
    preds, runs = fitting.fit_repeat(ds, classifier="lr-sgd", cell=cell, repeat=0, n_runs=3,
                                     test_fraction=0.25, root_seed=3)
    test_rows = np.sort(preds["sample"].unique())
    enc = EncodedDataset.from_dataset(ds)
    for train_rows, tests, num_train, codes_train in seen:
        np.testing.assert_array_equal(tests, test_rows)
        assert len(np.intersect1d(train_rows, test_rows)) == 0
        # the training rows were perturbed, the encoded dataset (source of test rows) was not
        assert not np.array_equal(num_train, enc.numeric[train_rows])
        assert not np.array_equal(codes_train, enc.codes[train_rows])
    assert (runs["data_changed_frac"] > 0.5).all() and (runs["cat_changed_frac"] > 0.05).all()


def test_perturbation_is_paired_across_classifiers_and_cells():
    ds = load("vehicle", {"source": "embedded"})
    enc = EncodedDataset.from_dataset(ds)
    rows = np.arange(200)
    a = fitting.perturb_training_rows(ds, enc, rows, Cell(data=("rel", 0.2)), root_seed=1,
                                      repeat=0, run=0)
    b = fitting.perturb_training_rows(ds, enc, rows, Cell(data=("rel", 0.2), downsample=0.5,
                                                          model_seed="per-run"),
                                      root_seed=1, repeat=0, run=0)
    np.testing.assert_array_equal(a[0].numeric, b[0].numeric)
    assert a[2] == b[2]


# ------------------------------------------------------------------ issue 15: honest strength
def anneal_codes():
    ds = load("anneal", {"source": "embedded"})
    enc = EncodedDataset.from_dataset(ds)
    return enc.codes, enc.n_levels


@pytest.mark.parametrize("func", [categorical_label_level, categorical_sample_level])
def test_categorical_noise_leaves_missing_values_missing_by_default(func):
    codes, n_levels = anneal_codes()
    assert (codes < 0).mean() > 0.7  # anneal: 77 % of categorical cells are missing
    out, info = func(codes, n_levels, 0.3, rng("m"))
    assert info["missing_to_level"] == 0 and info["level_to_missing"] == 0
    assert ((out < 0) == (codes < 0)).all()  # the same cells missing, never imputed
    assert info["level_to_level"] > 0
    assert info["missing_frac_after"] == pytest.approx(info["missing_frac_before"])
    out, info = func(codes, n_levels, 0.3, rng("m"), missing="as_level")
    assert info["missing_to_level"] > 0 and info["level_to_missing"] > 0
    assert info["changed_frac"] == pytest.approx(
        info["level_to_level"] + info["missing_to_level"] + info["level_to_missing"])


def test_missing_as_a_level_is_a_cell_level_of_its_own():
    cell = grid({"categorical": ["none", {"label": 0.1}, {"label": 0.1, "missing": "as_level"},
                                 {"sample": 0.2, "missing": "keep"}]})
    ids = [c.levels()["categorical"] for c in cell]
    assert ids == ["cnone", "label0p1", "labelmiss0p1", "sample0p2"]
    assert all(Cell.parse(c.id) == c for c in cell)


def skewed_numeric(n=800, seed=5):
    gen = np.random.default_rng(seed)
    X = np.column_stack([gen.lognormal(0, 1.5, n), gen.exponential(3, n) + 100,
                         np.where(gen.random(n) < 0.7, 0.0, gen.gamma(2, 5, n))])
    X[gen.random(X.shape) < 0.05] = np.nan
    return X


@pytest.mark.parametrize("s", [0.1, 0.5])
def test_sd_level_has_the_same_realised_strength_on_every_dataset(s):
    """rel 0.2 moved vehicle by 0.84 SDs and anneal by 0.08: sd s moves every dataset by
    s·√(2/π) SDs (within 10 %)."""
    strengths = {}
    for name in ("anneal", "vehicle"):
        enc = EncodedDataset.from_dataset(load(name, {"source": "embedded"}))
        strengths[name] = scaled_noise(enc.numeric, s, rng(name))[1]["mean_abs_shift_sd"]
    strengths["skewed"] = scaled_noise(skewed_numeric(), s, rng("x"))[1]["mean_abs_shift_sd"]
    want = s * np.sqrt(2 / np.pi)
    for name, value in strengths.items():
        assert value == pytest.approx(want, rel=0.1), (name, strengths)
    enc = EncodedDataset.from_dataset(load("anneal", {"source": "embedded"}))
    rel = {n: relative(EncodedDataset.from_dataset(load(n, {"source": "embedded"})).numeric,
                       0.2, rng(n))[1]["mean_abs_shift_sd"] for n in ("anneal", "vehicle")}
    assert rel["vehicle"] > 5 * rel["anneal"]  # the seed's relative noise is not comparable


def test_robust_sd_level_ignores_heavy_tails():
    gen = np.random.default_rng(2)
    X = gen.standard_t(1.5, (5000, 1))  # heavy tails: the SD is dominated by a few values
    _, info = scaled_noise(X, 1.0, rng("t"), robust=True)
    _, plain = scaled_noise(X, 1.0, rng("t"))
    assert info["mean_noise_scale_sd"] < 0.5 and plain["mean_noise_scale_sd"] == 1.0


def test_weak_data_perturbation_is_warned_about_naming_the_features(caplog, tmp_path):
    import logging

    ds = load("anneal", {"source": "embedded"})
    with caplog.at_level(logging.WARNING, logger="modelvar.fit"):
        fitting.fit_job(ds, classifier="lr-sgd", repeats=[0], n_runs=2, test_fraction=0.25,
                        cells=[Cell(data=("pct", 0.1)), Cell(data=("pct", 0.1), downsample=0.5)],
                        root_seed=1, predictions_out=tmp_path / "p.parquet",
                        runs_out=tmp_path / "r.pq")
    warnings = [r.message for r in caplog.records if "never changed" in r.message]
    assert len(warnings) == 1  # once per level, not once per cell with that level
    warning = warnings[0]
    assert "pct0p1" in warning and "warn_changed_below" in warning
    import pandas as pd

    runs = pd.read_parquet(tmp_path / "r.pq")
    weak = fitting.weak_features(runs, 0.5)
    assert weak and all(f in warning for f in weak)
    assert set(json.loads(runs["data_per_feature"].iloc[0])) == set(
        EncodedDataset.from_dataset(ds).numeric_columns)
