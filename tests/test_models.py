"""Classifiers, hyperparameter perturbation, tuning isolation and byte-identical reruns."""

import io
import json
import math

import numpy as np
import pytest

from modelvar.data import load
from modelvar.data.preprocess import fit_transform
from modelvar.models import hparams, tuning
from modelvar.models.registry import built_in_names, make_classifier, spec
from modelvar.pipeline import fitting
from modelvar.study.cells import Cell


@pytest.fixture(scope="module")
def vehicle():
    return load("vehicle", {"source": "embedded"})


@pytest.fixture(scope="module")
def anneal():
    return load("anneal", {"source": "embedded"})


def split_fit(ds, name, seed=0, hp=None):
    y = ds.class_index()
    idx = np.random.default_rng(0).permutation(len(y))
    tr, te = idx[: int(0.75 * len(y))], idx[int(0.75 * len(y)):]
    Xtr, Xte, _ = fit_transform(ds, ds.X.iloc[tr], ds.X.iloc[te])
    model = make_classifier(name, hp, seed=seed).fit(Xtr, y[tr], len(ds.classes))
    return model, Xte, y[te]


@pytest.mark.parametrize("name", built_in_names())
@pytest.mark.parametrize(("dataset", "floor"), [("vehicle", 0.6), ("anneal", 0.85)])
def test_classifiers_fit_with_sensible_accuracy(request, name, dataset, floor):
    ds = request.getfixturevalue(dataset)
    model, Xte, yte = split_fit(ds, name)
    proba = model.predict_proba(Xte)
    assert proba.shape == (len(yte), len(ds.classes))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    assert np.mean(model.predict(Xte) == yte) >= floor
    np.testing.assert_array_equal(model.predict(Xte), proba.argmax(axis=1))
    assert model.hparams == {**spec(name).defaults()}


def test_hinge_svm_probability_columns_are_one_hot(vehicle):
    model, Xte, _ = split_fit(vehicle, "svm-sgd")
    proba = model.predict_proba(Xte)
    assert set(np.unique(proba)) == {0.0, 1.0}
    np.testing.assert_array_equal(proba.argmax(axis=1), model.predict(Xte))
    huber, Xte, _ = split_fit(vehicle, "svm-sgd", hp={"loss": "modified_huber"})
    assert len(np.unique(huber.predict_proba(Xte))) > 2


def test_mlp_uses_its_width_and_dropout(vehicle):
    import torch

    from modelvar.models.mlp import _dropout_masks

    model, Xte, _ = split_fit(vehicle, "mlp", hp={"width1": 40, "width2": 33, "dropout": 0.3})
    params = model.model.params
    assert params["in.w"].shape[2] == 40 and params["out.w"].shape[1] == 33
    assert params["r2b.w"].shape[1:] == (33, 33)
    masks = _dropout_masks([torch.Generator().manual_seed(0)], np.array([0.3]), 2000, (40, 33),
                           "cpu", torch.float32)
    kept = masks["r1a"][0]
    np.testing.assert_allclose(np.unique(kept.numpy()), [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((kept > 0).float().mean().item() - 0.7) < 0.01
    plain, _, _ = split_fit(vehicle, "mlp", hp={"width1": 40, "width2": 33, "dropout": 0.0})
    assert not np.allclose(model.predict_proba(Xte), plain.predict_proba(Xte))


def test_unknown_classifier_and_hparam():
    with pytest.raises(ValueError, match="unknown classifier"):
        make_classifier("rf", seed=0)
    with pytest.raises(ValueError, match="unknown hyperparameter"):
        make_classifier("xgb", {"depth": 3}, seed=0)


@pytest.mark.parametrize(("hp", "message"), [
    ({"min_child_weight": 20.000000000000004}, r"min_child_weight: 20.000000000000004 is outside"
                                               r" \[0.1, 20\]"),
    ({"max_depth": 2.5}, "max_depth: 2.5 must be a whole number"),
    ({"subsample": "all"}, "subsample: 'all' is not a number"),
])
def test_a_model_refuses_hparams_outside_its_space(hp, message):
    outside = r"xgb: hyperparameter\(s\) outside its space: "
    with pytest.raises(ValueError, match=outside + message):
        make_classifier("xgb", hp, seed=0)
    with pytest.raises(ValueError, match="penalty: 'l3' is not one of"):
        make_classifier("lr-sgd", {"penalty": "l3"}, seed=0)
    make_classifier("xgb", {"min_child_weight": 20.0, "max_depth": 20}, seed=0)  # the bounds


# ------------------------------------------------------------------ hparam perturbation
def draws(h, value, scheme, p, n=2000):
    rng = np.random.default_rng(0)
    return np.array([hparams.perturb_numeric(h, value, scheme, p, rng) for _ in range(n)])


@pytest.mark.parametrize("classifier", built_in_names())
@pytest.mark.parametrize(("scheme", "p"), [("sig", 0), ("sig", 1), ("rel", 0.1), ("abs", 0.2)])
def test_perturbed_values_stay_in_range_and_ordinals_are_integers(classifier, scheme, p):
    for h in spec(classifier).space:
        if h.kind == "categorical":
            continue
        values = draws(h, h.default, scheme, p, n=300)
        assert (values >= h.low).all() and (values <= h.high).all(), h.name
        if h.kind == "ordinal":
            assert np.array_equal(values, np.round(values)), h.name


def test_log_scale_relative_moves_one_and_stays_within_p_decades():
    h = hparams.HParam("x", "log", 1.0, 1e-3, 1e3)
    values = draws(h, 1.0, "rel", 0.1)
    assert np.ptp(values) > 0.3  # 1.0 moves (the seed's formula would not move it)
    decades = np.abs(np.log10(values))
    assert decades.max() <= 0.1 + 1e-12
    assert abs(np.mean(np.log10(values))) < 0.01  # symmetric in log space


def test_absolute_width_is_a_fraction_of_the_range():
    h = hparams.HParam("x", "continuous", 0.5, 0.0, 1.0)
    values = draws(h, 0.5, "abs", 0.1)
    assert np.abs(values - 0.5).max() <= 0.1 and np.abs(values - 0.5).max() > 0.09
    hl = hparams.HParam("y", "log", 1e-2, 1e-4, 1.0)  # 4 decades wide
    decades = np.abs(np.log10(draws(hl, 1e-2, "abs", 0.1)) + 2)
    assert decades.max() <= 0.4 + 1e-12 and decades.max() > 0.35


def test_ordinal_rounding_and_clipping():
    h = hparams.HParam("depth", "ordinal", 1, 1, 20)
    values = draws(h, 1, "rel", 0.9)
    assert set(np.unique(values)) <= {1, 2} and values.min() == 1


@pytest.mark.parametrize(("k", "p"), [(10, 0.1), (10, 0.25), (5, 0.01), (10, 1.0)])
def test_categorical_resampling_is_scaled_to_runs(k, p):
    rng = np.random.default_rng(1)
    for _ in range(20):
        chosen = hparams.categorical_runs(k, p, rng)
        assert len(chosen) == min(k, max(1, math.ceil(p * k)))
    base = spec("svm-sgd").defaults()
    out = hparams.perturb(spec("svm-sgd").space, base, "rel", 0.1, rng, resample_categorical=True)
    cats = [h.name for h in spec("svm-sgd").space if h.kind == "categorical"]
    assert sum(out[c] != base[c] for c in cats) == 1
    same = hparams.perturb(spec("svm-sgd").space, base, "rel", 0.1, rng, resample_categorical=False)
    assert all(same[c] == base[c] for c in cats)


def test_realised_hparams_vary_within_a_repeat_and_are_recorded(vehicle):
    cell = Cell(hparam=("rel", 0.1))
    _, runs = fitting.fit_repeat(vehicle, classifier="svm-sgd", cell=cell, repeat=0, n_runs=10,
                                 test_fraction=0.25, root_seed=2)
    hps = [json.loads(h) for h in runs["hparams"]]
    assert len({h["alpha"] for h in hps}) == 10
    base = spec("svm-sgd").defaults()
    changed = [r for r, h in enumerate(hps)
               if any(h[c] != base[c] for c in ("penalty", "average", "loss"))]
    assert len(changed) == 1  # ceil(0.1 * 10) runs resample one categorical
    streams = json.loads(runs["streams"].iloc[0])
    assert "hparam-perturbation" in streams and "hparam-categorical" in streams


# ------------------------------------------------------------------ tuning
def test_tuning_never_touches_its_held_out_rows(vehicle, monkeypatch):
    from modelvar.data.splits import split_test_set

    seen = []
    original = tuning.fit_transform

    def spy(ds, X_train, X_val):
        seen.append(np.concatenate([X_train.index.to_numpy(), X_val.index.to_numpy()]))
        return original(ds, X_train, X_val)

    monkeypatch.setattr(tuning, "fit_transform", spy)
    trials, best = tuning.tune(vehicle, "lr-sgd", n_trials=3, folds=3, test_fraction=0.25,
                               root_seed=5)
    _, held_out = split_test_set(vehicle.class_index(), 0.25, root_seed=5, dataset="vehicle",
                                 repeat=None, purpose="tuning-split")
    used = np.unique(np.concatenate(seen))
    assert len(np.intersect1d(used, held_out)) == 0 and len(used) == len(vehicle.y) - len(held_out)
    assert len(trials) == 3 and json.loads(trials["hparams"].iloc[0]) == \
        spec("lr-sgd").defaults()
    assert best["cv_accuracy"] == trials["cv_accuracy"].max()
    assert best["held_out_rows"] == len(held_out)


def test_tuning_trains_for_the_epochs_the_fits_will(vehicle, monkeypatch):
    """classifier_settings.mlp.epochs reaches the tuning trials (tuning a 20-epoch model for a
    study that fits 1-epoch models would pick its hparams for another model)."""
    seen = []
    original = tuning.make_classifier

    def spy(*args, **kwargs):
        seen.append(kwargs.get("epochs"))
        return original(*args, **kwargs)

    monkeypatch.setattr(tuning, "make_classifier", spy)
    kw = dict(n_trials=1, folds=2, test_fraction=0.25, root_seed=5)
    one, _ = tuning.tune(vehicle, "mlp", epochs=1, **kw)
    assert seen == [1, 1]
    three, _ = tuning.tune(vehicle, "mlp", epochs=3, **kw)
    assert seen[2:] == [3, 3]
    assert one["cv_accuracy"].iloc[0] != three["cv_accuracy"].iloc[0]


# ------------------------------------------------------------------ seeds and determinism
def table_bytes(frame):
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


@pytest.mark.parametrize("name", built_in_names())
def test_byte_identical_prediction_tables_on_rerun(vehicle, name):
    cell = Cell(data=("rel", 0.1), hparam=("rel", 0.1), downsample=0.5, model_seed="per-run")
    kw = dict(classifier=name, cell=cell, repeat=1, n_runs=2, test_fraction=0.25, root_seed=9)
    first, _ = fitting.fit_repeat(vehicle, **kw)
    second, _ = fitting.fit_repeat(vehicle, **kw)
    assert table_bytes(first) == table_bytes(second)


@pytest.mark.parametrize("name", ["lr-sgd", "mlp"])
def test_model_seed_fixed_vs_per_run(vehicle, name):
    kw = dict(classifier=name, repeat=0, n_runs=2, test_fraction=0.25, root_seed=4)
    fixed, _ = fitting.fit_repeat(vehicle, cell=Cell(model_seed="fixed"), **kw)
    per_run, runs = fitting.fit_repeat(vehicle, cell=Cell(model_seed="per-run"), **kw)
    p = [g.filter(like="proba:").to_numpy() for _, g in fixed.groupby("run")]
    np.testing.assert_array_equal(p[0], p[1])  # nothing else varies: identical runs
    q = [g.filter(like="proba:").to_numpy() for _, g in per_run.groupby("run")]
    assert not np.array_equal(q[0], q[1])
    seeds = [json.loads(s)["model"]["int_seed"] for s in runs["streams"]]
    assert seeds[0] != seeds[1]


@pytest.mark.parametrize("classifier", ["lr-sgd", "svm-sgd", "xgb", "mlp"])
@pytest.mark.parametrize(("scheme", "p"), [("rel", 0.1), ("rel", 0.2), ("abs", 0.05),
                                           ("abs", 0.1), ("sig", 0), ("sig", 1)])
def test_hparam_perturbation_reflects_at_bounds_and_moves_every_hparam(classifier, scheme, p):
    """No pile-up on the bounds (issue 15: 44–55 % of xgb draws were clipped to a bound), and
    every numeric hyperparameter moves, also from zero (max_delta_step) and by less than one
    ordinal step."""
    rng = np.random.default_rng(17)
    base = spec(classifier).defaults()
    for h in spec(classifier).space:
        if h.kind == "categorical":
            continue
        draws = np.array([hparams.perturb_numeric(h, base[h.name], scheme, p, rng)
                          for _ in range(1500)])
        assert ((draws >= h.low) & (draws <= h.high)).all(), h.name
        assert np.mean(draws != base[h.name]) > 0.04, f"{h.name} does not move"
        for bound, inside in ((h.low, h.low + 1), (h.high, h.high - 1)):
            share = np.mean(draws == bound)
            if h.kind == "ordinal":  # a bound is a level: no more often than its neighbour
                if bound != base[h.name]:
                    assert share <= max(np.mean(draws == inside), 0.01), f"{h.name} at {bound}"
            else:  # continuous: reflection puts no mass on a bound, even a default one
                assert share == 0, f"{h.name} piles up at {bound}"


def test_reflection_and_zero_rule():
    assert hparams.reflect(1.2, 0.0, 1.0) == pytest.approx(0.8)
    assert hparams.reflect(-0.3, 0.0, 1.0) == pytest.approx(0.3)
    assert hparams.reflect(2.3, 0.0, 1.0) == pytest.approx(0.3)  # far past: folded again
    h = hparams.HParam("x", "continuous", 0.0, 0.0, 4.0)
    draws = [hparams.perturb_numeric(h, 0.0, "rel", 0.1, np.random.default_rng(s))
             for s in range(400)]
    assert 0 < max(draws) <= 0.4 and min(draws) >= 0  # zero moves by up to p x the range width


def test_a_log_scale_draw_on_its_bound_stays_inside():
    """A draw (a perturbation, or tuning's sample) that lands exactly on a log-scale bound is
    that bound, not 10 ** log10(bound) (for xgb's min_child_weight, 20.000000000000004 > 20),
    which make_classifier would refuse."""

    class OnTheTop:  # a generator whose draw is the largest the scheme allows
        def uniform(self, low, high):
            return high

    h = hparams.HParam("min_child_weight", "log", 1.0, 0.1, 20.0)
    assert 10 ** np.log10(20.0) > 20.0  # what the draw would be without the clamp
    p = np.log10(20.0)  # rel in log10 space: the step reaches the top exactly
    assert hparams.perturb_numeric(h, 1.0, "rel", p, OnTheTop()) == 20.0
    assert h.sample(OnTheTop()) == 20.0  # tuning's random search draws the same way


_THREADS_PROBE = """
import hashlib, json, sys
import numpy as np
from modelvar.data import load
from modelvar.models.registry import built_in_names
from modelvar.study.cells import Cell
from modelvar.pipeline.fitting import fit_repeat

threads = int(sys.argv[1])
ds = load("vehicle", {"source": "embedded"})
out = {}
for name in built_in_names():
    frame, _ = fit_repeat(ds, classifier=name, repeat=1, n_runs=2, test_fraction=0.25,
                          root_seed=3, threads=threads, epochs=2 if name == "mlp" else None,
                          cell=Cell(data=("rel", 0.2), downsample=0.5, model_seed="per-run"))
    proba = np.ascontiguousarray(frame.filter(like="proba:").to_numpy())
    out[name] = hashlib.sha256(proba.tobytes()).hexdigest()
print(json.dumps(out))
"""


def test_every_classifier_predicts_the_same_bits_with_1_and_2_threads():
    """The determinism contract (docs/decisions.md): a job's thread count (its --threads and
    OMP/BLAS threads, as the fit rule sets them) does not change any classifier's
    probabilities. Each side runs in a fresh process, as fit jobs do."""
    import os
    import subprocess
    import sys

    digests = []
    for threads in (1, 2):
        env = {**os.environ, "OMP_NUM_THREADS": str(threads),
               "OPENBLAS_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
        proc = subprocess.run([sys.executable, "-c", _THREADS_PROBE, str(threads)],
                              capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        digests.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert set(digests[0]) == set(built_in_names())
    assert digests[0] == digests[1]


def test_a_models_warm_up_is_not_counted_as_fit_time(vehicle, monkeypatch):
    """A model's one-time loading (``warm_up``: numba's kernels for many-class SGD) runs before
    the fit's timed span, with the run's training rows; fit_seconds (wall) and fit_cpu_seconds
    are fit + predict only. The clocks are counters: a warm-up advances them by 1,000 s, each
    fit, predict_proba and predict by 1 s (CPU: twice that, as two threads would)."""
    from modelvar import timing
    from modelvar.models import mlp

    clock = {"t": 0.0}
    monkeypatch.setattr(timing, "wall", lambda: clock["t"])
    monkeypatch.setattr(timing, "cpu", lambda: 2 * clock["t"])

    def tick(seconds):
        clock["t"] += seconds

    calls = []

    class SlowToWarm:
        def __init__(self, inner):
            self.inner, self.hparams, self.device = inner, inner.hparams, inner.device

        def warm_up(self, X, y, n_classes):
            calls.append((X.shape, len(y), n_classes))
            tick(1000)

        def fit(self, X, y, n_classes):
            tick(1)
            self.inner.fit(X, y, n_classes)
            return self

        def predict_proba(self, X):
            tick(1)
            return self.inner.predict_proba(X)

        def predict(self, X):
            tick(1)
            return self.inner.predict(X)

    real = fitting.make_classifier
    monkeypatch.setattr(fitting, "make_classifier",
                        lambda *a, **kw: SlowToWarm(real(*a, **kw)))
    _, runs = fitting.fit_repeat(vehicle, classifier="lr-sgd", cell=Cell(), repeat=0, n_runs=2,
                                 test_fraction=0.25, root_seed=2)
    assert len(calls) == 2 and clock["t"] == 2 * 1003
    assert [n for _, n, _ in calls] == list(runs["n_train"])
    assert {c for *_, c in calls} == {4}  # vehicle's classes
    assert list(runs["fit_seconds"]) == [3.0, 3.0]
    assert list(runs["fit_cpu_seconds"]) == [6.0, 6.0]
    # runs trained as one batched model (the MLP on a GPU): one warm-up before the batch, whose
    # training (10 s on the counters) the two runs share
    real_train = mlp.train

    def train(*args, **kwargs):
        tick(10)
        return real_train(*args, **kwargs)

    monkeypatch.setattr(mlp, "train", train)
    _, runs = fitting.fit_repeat(vehicle, classifier="mlp", cell=Cell(), repeat=0, n_runs=2,
                                 test_fraction=0.25, root_seed=2, epochs=1, batch_mlp=True)
    assert len(calls) == 3
    assert list(runs["fit_seconds"]) == [5.0, 5.0]
    assert list(runs["fit_cpu_seconds"]) == [10.0, 10.0]


WARM_UP_BITS = """
import hashlib, sys
import numpy as np
from modelvar.data import load
from modelvar.data.arrays import DataArrays
from modelvar.models.registry import make_classifier

name, warm = sys.argv[1], sys.argv[2] == "warm"
data = DataArrays.from_dataset(load("vehicle", {"source": "embedded"}))
X = np.asarray(data.encoded.numeric, dtype=float)
X = (X - X.mean(axis=0)) / X.std(axis=0)
model = make_classifier(name, seed=5, threads=1, epochs=2 if name == "mlp" else None)
library = {"xgb": "xgboost", "mlp": "torch", "lr-sgd": "sklearn.linear_model"}[name]
before = library in sys.modules
if warm:
    model.warm_up(X, data.y, len(data.classes))
loaded = library in sys.modules
model.fit(X, data.y, len(data.classes))
print(before, loaded, hashlib.sha256(model.predict_proba(X).tobytes()).hexdigest())
"""


@pytest.mark.parametrize("name", ["xgb", "mlp", "lr-sgd"])
def test_warm_up_loads_the_library_and_changes_no_bit(name):
    """xgb's warm-up imports xgboost (1.2-1.5 s: a fit job's first vehicle fit took 1.29 s,
    the others 0.07 s), lr-sgd's scikit-learn's linear models on few classes (a user's run:
    1.79 s against 0.03 s), the MLP's runs torch's kernels once; in fresh processes, a
    warmed-up model predicts the same bits as a cold one."""
    import subprocess
    import sys

    out = {}
    for mode in ("cold", "warm"):
        done = subprocess.run([sys.executable, "-c", WARM_UP_BITS, name, mode],
                              capture_output=True, text=True, check=True, timeout=300)
        out[mode] = done.stdout.split()
    if name != "mlp":  # (building the MLP's model imports torch, to pick its device)
        assert out["cold"][:2] == ["False", "False"]
        assert out["warm"][:2] == ["False", "True"]
    assert out["warm"][2] == out["cold"][2]


def test_the_runs_of_a_hyperparameter_perturbation_share_one_warm_up(vehicle, monkeypatch):
    """An SGD model warms up once per process for each code path and kind of hyperparameters,
    not once per value: the ten runs of a cell that perturbs the learning rate (ten values)
    pay one warm-up fit, and a choice that picks another path (another penalty) pays its own."""
    from modelvar.models import classifiers

    tiny_fits = []
    real_fit = classifiers.SGDModel.fit

    def fit(self, X, y, n_classes):
        if len(X) <= 2 * classifiers.MANY_CLASSES:  # the warm-up's copy: 2 rows per class
            tiny_fits.append(dict(self.hparams))
        return real_fit(self, X, y, n_classes)

    monkeypatch.setattr(classifiers.SGDModel, "fit", fit)
    monkeypatch.setattr(classifiers, "_WARMED", set())
    from modelvar.data.arrays import DataArrays

    data = DataArrays.from_dataset(vehicle)
    X = np.asarray(data.encoded.numeric, dtype=float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    base = spec("lr-sgd").defaults()
    for j in range(10):
        model = make_classifier("lr-sgd", {**base, "eta0": base["eta0"] * (1 + j / 10)}, seed=j,
                                threads=1)
        model.warm_up(X, data.y, len(data.classes))
    assert len(tiny_fits) == 1
    other = make_classifier("lr-sgd", {**base, "penalty": "l1"}, seed=0, threads=1)
    other.warm_up(X, data.y, len(data.classes))
    assert len(tiny_fits) == 2 and tiny_fits[1]["penalty"] == "l1"
