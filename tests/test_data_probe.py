"""The plan's probe fits on a study's own data (issue 55, modelvar.planning.data_probe): the
data factor tells hard data from easy data of the same shape, reaches the plan's estimates,
is cached so that every load makes the same plan, and is off at 0 seconds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import SCHEMA_PATH, completed
from modelvar.planning import data_probe
from modelvar.planning.cost_model import load
from modelvar.planning.plan import plan_study


def test_row_counts_grow_to_the_full_fit_and_every_class_is_probed():
    assert data_probe.row_counts(3000, 2) == [256, 512, 1024, 2048, 3000]
    assert data_probe.row_counts(200, 2) == [200]
    assert data_probe.row_counts(5000, 120)[0] == 480  # 4 rows a class at least
    y = np.repeat(np.arange(10), [991] + [1] * 9)  # nine classes of one row each
    rows = data_probe.probe_rows(np.arange(1000), y, 20, np.random.default_rng(0))
    assert len(rows) == 20 and set(y[rows]) == set(range(10))


def blobs(n, d, noisy, rng):
    """Two classes: far apart (``noisy`` False) or overlapping with 20 % of labels flipped."""
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + (0.1 if noisy else 4.0) * y[:, None]
    if noisy:
        flip = rng.random(n) < 0.2
        y = np.where(flip, 1 - y, y)
    return X, y


def factor_of(X, y, budget=8.0):
    n = len(y)
    pool, test = np.arange(n * 3 // 4), np.arange(n * 3 // 4, n)
    model = load(None)
    return data_probe.probe_factor(
        "xgb", y, 2, lambda train, held: (X[train], X[held]), pool, test, len(pool),
        lambda rows, d: model.seconds("xgb", rows, d, 2), budget, threads=1, seed=1,
        label="blobs", say=lambda line: None)


def test_noisy_overlapping_classes_cost_xgb_more_than_separable_ones_of_the_same_shape():
    """The error the issue found: xgb's trees stay small on separable data and grow on noisy,
    overlapping classes; the shape alone cannot tell them apart, the probe fits can."""
    rng = np.random.default_rng(3)
    easy = factor_of(*blobs(2400, 150, False, rng))
    hard = factor_of(*blobs(2400, 150, True, rng))
    assert hard.rows == easy.rows == 1800  # both probed up to the full fit's rows
    assert hard.factor > 2.5 * easy.factor, (easy, hard)


def embedded_config(tmp_path, seconds):
    return completed({
        "root_seed": 5, "results_dir": str(tmp_path / "results"),
        "datasets": {"vehicle": {"source": "embedded"}, "credit-g": {"source": "embedded"}},
        "classifiers": ["lr-sgd", "xgb"],
        "split": {"test_fraction": 0.25, "repeats": 2, "runs": 3},
        "perturbation": {"downsample": [0.5, 1.0]},
        "jobs": {"data_probe_seconds": seconds},
    })


def schemas(config):
    from modelvar.planning.config_check import check_config, read_schema

    return check_config(config, read_schema(SCHEMA_PATH)).schemas


def test_the_plan_scales_its_estimates_by_the_factor_and_caches_it(tmp_path, monkeypatch):
    config = embedded_config(tmp_path, 5)
    found = schemas(config)
    calls = []
    real = data_probe.probe_factor

    def counted(classifier, *args, label, **kwargs):
        calls.append((classifier, label))
        return real(classifier, *args, label=label, **kwargs)

    monkeypatch.setattr(data_probe, "probe_factor", counted)
    plan = plan_study(config, found)
    assert sorted(calls) == sorted((c, d) for c in ("lr-sgd", "xgb")
                                   for d in ("vehicle", "credit-g"))
    cache = json.loads((tmp_path / "results" / data_probe.CACHE).read_text())
    assert set(cache) == {"vehicle/lr-sgd", "vehicle/xgb", "credit-g/lr-sgd", "credit-g/xgb"}
    note = plan.data_notes["credit-g", "xgb"]
    assert "probe fit(s) on its own rows, up to 750 of a full fit's 750" in note
    # a second load reads the cache: the same plan, no probe fit
    calls.clear()
    again = plan_study(config, found)
    assert calls == [] and again.data_notes == plan.data_notes
    # the estimates are the cost model's times the factor (set here to 3 and 1)
    for name in ("vehicle", "credit-g"):
        for clf in ("lr-sgd", "xgb"):
            cache[f"{name}/{clf}"]["factor"]["factor"] = 3.0 if clf == "xgb" else 1.0
    (tmp_path / "results" / data_probe.CACHE).write_text(json.dumps(cache))
    scaled = plan_study(config, found)
    off = plan_study(embedded_config(tmp_path / "off", 0), found)
    assert off.data_notes == {}
    from modelvar.planning.plan import FIT_OVERHEAD_SECONDS

    for name in ("vehicle", "credit-g"):
        for clf, factor in (("xgb", 3.0), ("lr-sgd", 1.0)):
            a = scaled.datasets[name].classifiers[clf]
            b = off.datasets[name].classifiers[clf]
            overhead = FIT_OVERHEAD_SECONDS * b.fits
            assert a.fit_seconds - overhead == pytest.approx(factor * (b.fit_seconds - overhead))


def test_a_change_of_the_budget_probes_again_and_zero_probes_nothing(tmp_path, monkeypatch):
    config = embedded_config(tmp_path, 2)
    found = schemas(config)
    plan_study(config, found)
    calls = []
    monkeypatch.setattr(data_probe, "probe_factor",
                        lambda *a, **k: calls.append(k["label"]) or data_probe.DataFactor(
                            1.0, 10, 1, 0.0))
    plan_study(embedded_config(tmp_path, 3), found)
    assert len(calls) == 4
    calls.clear()
    assert plan_study(embedded_config(tmp_path, 0), found).data_notes == {}
    assert calls == []


def test_time_limits_cover_the_measured_miss_where_only_the_shape_is_known(tmp_path):
    """Issue 55: a fit the shape alone misses by up to the classifier's measured worst miss
    keeps running: an OpenML dataset (no rows at hand) gets the cost model's miss bound, a
    probed dataset 2; the SLURM time limit is the estimate times that bound plus the margin."""
    from modelvar.planning import outputs
    from modelvar.planning.cost_model import LIMIT_FACTOR
    from modelvar.planning.plan import STARTUP_SECONDS, job_resources

    config = embedded_config(tmp_path, 5)
    config["datasets"]["far"] = {
        "source": "openml", "data_id": 1,
        "profile": {"rows": 3000, "numeric": 500, "categorical": 0, "classes": 2}}
    config = completed(config)
    plan = plan_study(config, schemas(config))
    cost = load(None)
    assert cost.miss_bound("xgb") > LIMIT_FACTOR  # measured on realistic data
    for name, want in (("far", cost.miss_bound("xgb")), ("credit-g", LIMIT_FACTOR)):
        job = plan.datasets[name].classifiers["xgb"].fit_jobs[0]
        assert job.limit_factor == want
        runtime = job_resources(config, "fit", 1, job)["runtime"]
        margin = config["jobs"]["runtime_margin_minutes"]
        own = outputs.resources(config, "fit")["runtime"]
        assert runtime == max(int(np.ceil(want * (job.seconds + STARTUP_SECONDS) / 60 + margin)),
                              own)


def test_the_readmes_plans_read_no_cached_probe(monkeypatch):
    """The README's plan blocks are the same on every machine: `make_readme_plans` plans with
    no probe fit and no cached one (a `snakemake --lint` of the checkout caches factors in its
    results folder, and CI's check then failed on the README)."""
    import os

    from conftest import REPO
    from modelvar.planning.config_check import read_schema
    from modelvar.running.workflow_config import plan_of_command_line

    def looked_up(*args, **kwargs):
        raise AssertionError("the probe cache was read")

    monkeypatch.setattr(data_probe, "_key", looked_up)
    monkeypatch.chdir(REPO)
    argv = ["--configfile", "config/config.yaml"]
    plan, config = plan_of_command_line(argv, probe_data=False, cached_probes=False)
    # the config shown is the user's (the schema's default), not the plan's copy without probes
    default = read_schema(SCHEMA_PATH)["properties"]["jobs"]["properties"]["data_probe_seconds"]
    assert config["jobs"]["data_probe_seconds"] == default["default"]
    assert plan.datasets
    with pytest.raises(AssertionError, match="probe cache was read"):
        plan_of_command_line(argv, probe_data=False)
    assert os.getcwd() == str(REPO)
