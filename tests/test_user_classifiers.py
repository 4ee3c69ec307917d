"""A user's own classifiers, declared in the config (issue 21): checked before any job, then
treated like the built-ins by every stage."""

from __future__ import annotations

import copy
import json
import re
import textwrap

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import CONFIGS, REPO, job_counts, snakemake
from modelvar.models import registry
from modelvar.models.hparams import HParam, perturb_numeric
from modelvar.planning.config_check import ConfigProblems, check_config

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
RF = {"name": "rf", "estimator": "sklearn.ensemble.RandomForestClassifier",
      "params": {"n_estimators": 5}, "seed_param": "random_state", "threads_param": "n_jobs",
      "hparams": {"max_features": {"type": "float", "low": 0.05, "high": 1.0, "default": 0.5},
                  "min_samples_leaf": {"type": "int", "low": 1, "high": 50, "scale": "log"},
                  "criterion": {"type": "categorical", "values": ["gini", "entropy"]}}}
CENTROID_SOURCE = textwrap.dedent('''
    import numpy as np


    class ShrunkCentroid:
        """Nearest class centroid, shrunk toward the overall mean (no seed, no probabilities)."""

        def __init__(self, shrink=0.1):
            self.shrink = shrink

        def fit(self, X, y):
            self.classes_ = np.unique(y)
            centre = X.mean(axis=0)
            self.centroids_ = np.array([(1 - self.shrink) * X[y == c].mean(axis=0)
                                        + self.shrink * centre for c in self.classes_])
            return self

        def predict(self, X):
            d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
            return self.classes_[d.argmin(axis=1)]
''')
CENTROID = {"name": "centroid", "estimator": "my_models.py:ShrunkCentroid",
            "hparams": {"shrink": {"type": "float", "low": 0.0, "high": 0.9}}}


@pytest.fixture(autouse=True)
def _forget_declared():
    yield
    registry.declare({"classifiers": []})


def tiny(classifiers):
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["classifiers"] = copy.deepcopy(classifiers)
    return config


def test_every_bad_declaration_is_named_with_its_key_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_models.py").write_text(CENTROID_SOURCE)
    bad = [
        {**RF, "name": "typo", "estimator": "sklearn.ensemble.RandomForestClassifer"},
        {"name": "dict", "estimator": "collections.OrderedDict"},
        {**RF, "name": "rf2", "hparams": {"depth": {"type": "int", "low": 1, "high": 9}}},
        {**RF, "name": "rf3", "hparams": {"max_features": {"type": "float", "low": 1.0,
                                                           "high": 0.1, "default": 0.5}}},
        {**RF, "name": "xgb"},
        {**RF, "name": "rf4", "hparams": {"max_features": {"type": "float", "low": 0.05,
                                                           "high": 1.0}}},
        {**CENTROID, "name": "gone", "estimator": "missing.py:ShrunkCentroid"},
        {**CENTROID, "name": "nofit", "estimator": "my_models.py:np"},
        {**RF, "name": "rf5", "params": {"random_state": 1}},
    ]
    with pytest.raises(ConfigProblems) as caught:
        check_config(tiny(["lr-sgd", *bad]), SCHEMA)
    text = str(caught.value)
    for expected in [
        "classifiers[1].estimator: 'sklearn.ensemble.RandomForestClassifer' does not import: "
        "ImportError: sklearn.ensemble has no 'RandomForestClassifer'",
        "classifiers[2].estimator: OrderedDict has no fit or predict method",
        "classifiers[3].hparams: RandomForestClassifier() takes no argument 'depth'",
        "classifiers[4].hparams.max_features: bounds out of order: low 1.0 must be below high "
        "0.1",
        "classifiers[5].name: 'xgb' is the name of a built-in classifier",
        "classifiers[6].hparams.max_features: its default 'sqrt' is not a number in "
        "[0.05, 1.0]; give `default:`",
        "classifiers[7].estimator: 'missing.py:ShrunkCentroid' does not import: ImportError: "
        "missing.py is not a file",
        "classifiers[8].estimator: 'my_models.py:np' is not a class",
        "classifiers[9]: 'random_state' is set by modelvar",
    ]:
        assert expected in text, f"{expected!r} not in:\n{text}"
    assert "hparams.depth" not in text  # one problem, said once
    assert "rf2" not in registry.names()


def test_the_workflow_stops_before_any_job_on_a_bad_declaration(tmp_path):
    config = tiny(["lr-sgd", {**RF, "estimator": "sklearn.ensemble.RandomForestClassifer"}])
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, path, "-n", check=False)
    assert proc.returncode != 0
    assert "classifiers[1].estimator: 'sklearn.ensemble.RandomForestClassifer' does not " \
        "import" in proc.stderr
    assert not (tmp_path / "results").exists()


def test_a_declared_estimator_predicts_every_class_of_the_dataset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_models.py").write_text(CENTROID_SOURCE)
    assert registry.declare({"classifiers": [RF, CENTROID]}) == []
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((60, 3)), np.repeat([0, 2], 30)  # class 1 absent from training
    rf = registry.make_classifier("rf", seed=4).fit(X, y, 3)
    proba = rf.predict_proba(X)
    assert proba.shape == (60, 3) and np.allclose(proba.sum(axis=1), 1)
    assert (proba[:, 1] == 0).all() and set(rf.predict(X)) <= {0, 2}
    same = registry.make_classifier("rf", seed=4).fit(X, y, 3).predict_proba(X)
    assert np.array_equal(proba, same)
    centroid = registry.make_classifier("centroid", {"shrink": 0.5}, seed=0).fit(X, y, 3)
    one_hot = centroid.predict_proba(X)  # no predict_proba: the prediction's one-hot vector
    assert set(np.unique(one_hot)) == {0.0, 1.0}
    assert np.array_equal(one_hot.argmax(axis=1), centroid.predict(X))
    assert not registry.spec("centroid").seeded and registry.spec("rf").seeded
    assert registry.spec("centroid").one_hot_probabilities({})
    assert registry.spec("rf").libraries == ("scikit-learn",)
    single = registry.make_classifier("rf", seed=0).fit(X[:5], np.full(5, 2), 3)
    assert (single.predict(X) == 2).all()


def test_log_scale_integers_stay_whole_and_inside_their_bounds():
    h = HParam("min_samples_leaf", "log-ordinal", 1, 1, 50)
    rng = np.random.default_rng(1)
    for scheme, p in (("rel", 0.5), ("abs", 0.3), ("sig", 1)):
        values = [perturb_numeric(h, 1, scheme, p, rng) for _ in range(500)]
        assert all(isinstance(v, int) and 1 <= v <= 50 for v in values)
        assert len(set(values)) > 1, scheme
    samples = [h.sample(rng) for _ in range(2000)]
    assert min(samples) == 1 and max(samples) == 50
    assert np.median(samples) < 12  # log-uniform: the median near sqrt(50), not 25


def test_declared_classifiers_run_through_every_stage(tmp_path):
    """rf (scikit-learn) and a class from the user's own file: runs table, metrics, figures,
    findings; the control agrees with itself exactly, a seed per run moves the forest, hparam
    draws stay inside the declared bounds, the plan sizes their jobs, refit reproduces them;
    editing the local file reruns only its classifier's jobs."""
    (tmp_path / "my_models.py").write_text(CENTROID_SOURCE)
    config = tiny(["lr-sgd", RF, CENTROID])
    config.update(hparams="default", grouped={"metrics": ["pa"], "by": {}})
    config["simulation"] = {"enabled": False}
    config["split"].update(repeats=2, runs=3)
    config["perturbation"] = {"hparam": ["none", {"rel": 0.3}], "downsample": [1.0],
                              "model_seed": ["fixed", "per-run"]}
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake(tmp_path, path, "--cores", "2")
    results = tmp_path / "results"
    runs = pd.read_parquet(results / "aggregated" / "runs")
    assert sorted(runs["classifier"].unique()) == ["centroid", "lr-sgd", "rf"]
    rf = runs[runs["classifier"] == "rf"]
    assert "scikit-learn" in json.loads(rf["versions"].iloc[0])
    drawn = pd.DataFrame([json.loads(h) for h in rf["hparams"]])
    assert drawn["max_features"].between(0.05, 1.0).all()
    assert drawn["min_samples_leaf"].between(1, 50).all()
    assert drawn["max_features"].nunique() > 1
    summary = pd.read_parquet(results / "aggregated" / "summary")
    pa = summary[(summary["metric"] == "pa") & (summary["subset"] == "all")]
    control = pa[pa["cell"] == "hnone_down100_seedfix"] if (
        pa["cell"] == "hnone_down100_seedfix").any() else \
        pa[pa["cell"].str.endswith("hnone_down100_seedfix")]
    assert (control.groupby("classifier", observed=True)["mean"].min() == 1.0).all()
    assert len(control["classifier"].unique()) == 3
    seeded = pa[pa["cell"].str.endswith("hnone_down100_seedrun")]
    by_clf = seeded.groupby("classifier", observed=True)["mean"].max()
    # a seed per run moves the forest; the centroid takes no seed: its per-run cells collapsed
    assert by_clf["rf"] < 1.0 and "centroid" not in by_clf
    assert runs.loc[runs["classifier"] == "centroid", "model_seed"].eq("seedfix").all()
    figures = list((results / "vehicle" / "figures").glob("*.png"))
    assert len(figures) > 5
    assert "rf" in (results / "findings" / "findings.html").read_text()
    # the plan sized their jobs: the probe fits of rf were cached where the plan said
    assert "rf" in json.loads((results / ".modelvar" / "probe-costs.json").read_text())
    from modelvar.cli import main

    assert main(["verify", str(results), "--refit", "4"]) == 0
    # a comment in the user's file reruns nothing; editing what it does reruns its
    # classifier's jobs (its batch of both repeats), and no other classifier's
    (tmp_path / "my_models.py").write_text(CENTROID_SOURCE + "\n# shrink harder next time\n")
    quiet = snakemake(tmp_path, path, "-n")
    assert "Nothing to be done" in quiet.stdout + quiet.stderr
    (tmp_path / "my_models.py").write_text(CENTROID_SOURCE.replace("shrink=0.1", "shrink=0.2"))
    proc = snakemake(tmp_path, path, "-n")
    counts = job_counts(proc.stdout)
    assert counts.get("fit") == 1 and counts.get("pairwise_metrics") == 1, proc.stdout
    assert set(re.findall(r"wildcards: .*classifier=([\w-]+)", proc.stdout)) == {"centroid"}


def test_the_plan_says_where_a_declared_classifiers_cost_comes_from(tmp_path, monkeypatch):
    from modelvar.planning.plan import plan_study
    from modelvar.planning.plan_report import format_plan

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_models.py").write_text(CENTROID_SOURCE)
    config = tiny(["lr-sgd", RF, {**CENTROID, "seconds_per_fit": 0.25}])
    study = check_config(config, SCHEMA)
    first = plan_study(config, study.schemas)
    assert first.cost_notes["centroid"] == "declared seconds_per_fit 0.25 s"
    assert first.cost_notes["rf"].startswith("probe fits made now")
    again = plan_study(config, study.schemas)  # every load of the workflow: the same plan
    assert again.cost_notes["rf"].startswith("probe fits of ")
    # the cache says how its constants count classes (two classes: one binary problem)
    cached = json.loads((tmp_path / "results/.modelvar/probe-costs.json").read_text())["rf"]
    assert cached["classes_feature"] == "problems"
    assert [j.seconds for j in again.datasets["vehicle"].classifiers["rf"].fit_jobs] == \
        [j.seconds for j in first.datasets["vehicle"].classifiers["rf"].fit_jobs]
    centroid = first.datasets["vehicle"].classifiers["centroid"]
    assert centroid.fit_seconds == pytest.approx(0.25 * centroid.fits, rel=0.1)
    text = format_plan(first, config)
    assert "cost of centroid: declared seconds_per_fit 0.25 s" in text
    assert "cost of rf: probe fits" in text


def test_a_classifier_without_a_seed_gets_no_per_run_seed_cells(tmp_path, monkeypatch):
    """Model seed per run cannot act on a classifier that takes no seed: its cells collapse to
    a fixed seed (no duplicate fits), the others keep theirs, and the plan says so."""
    from modelvar.planning.plan import plan_study
    from modelvar.planning.plan_report import format_plan

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_models.py").write_text(CENTROID_SOURCE)
    config = tiny(["lr-sgd", {**CENTROID, "seconds_per_fit": 0.1}])
    config["design"] = "both"
    config["perturbation"] = {"downsample": [1.0, 0.5], "model_seed": ["fixed", "per-run"]}
    study = check_config(config, SCHEMA)
    assert any("centroid: it takes no model seed" in w and "collapse" in w
               for w in study.warnings)
    plan = plan_study(config, study.schemas).datasets["vehicle"]

    def cells(clf):
        return sorted({c for job in plan.classifiers[clf].fit_jobs for c in job.cells})

    assert sorted(c.split("_")[-1] for c in cells("lr-sgd")) == [
        "seedfix", "seedfix", "seedrun", "seedrun"]
    assert [c.split("_")[-1] for c in cells("centroid")] == ["seedfix", "seedfix"]
    assert plan.classifiers["centroid"].collapsed == ["model_seed"]
    assert plan.classifiers["lr-sgd"].collapsed == []
    assert "model_seed for centroid collapsed" in format_plan(
        plan_study(config, study.schemas), config)


DEVICE_SOURCE = CENTROID_SOURCE + textwrap.dedent('''

    class DeviceCentroid(ShrunkCentroid):
        """A centroid model that takes a device, as GPU-capable estimators do; it refuses to
        fit on any device but the one this test expects (MODELVAR_TEST_DEVICE)."""

        def __init__(self, shrink=0.1, device="unset"):
            super().__init__(shrink)
            self.device = device

        def fit(self, X, y):
            import os

            expected = os.environ["MODELVAR_TEST_DEVICE"]
            if self.device != expected:
                raise RuntimeError(f"device {self.device!r}, expected {expected!r}")
            return super().fit(X, y)
''')
ON_DEVICE = {"name": "centroid-dev", "estimator": "my_models.py:DeviceCentroid",
             "device_param": "device", "seconds_per_fit": 0.01,
             "hparams": {"shrink": {"type": "float", "low": 0.0, "high": 0.9}}}


def test_a_declared_device_param_gets_the_device_and_lets_a_study_tag_it(tmp_path,
                                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_models.py").write_text(DEVICE_SOURCE)
    config = tiny([ON_DEVICE, CENTROID])
    config["classifier_settings"] = {"centroid-dev": {"gpu": True}, "centroid": {"gpu": True}}
    with pytest.raises(ConfigProblems) as caught:
        check_config(config, SCHEMA)
    problems = str(caught.value)
    assert "classifier_settings.centroid.gpu: centroid cannot fit on a GPU" in problems
    assert "`device_param`" in problems and "centroid-dev.gpu" not in problems
    del config["classifier_settings"]["centroid"]
    check_config(config, SCHEMA)
    assert registry.spec("centroid-dev").gpu_capable
    assert registry.fit_rule("centroid-dev", config["classifier_settings"]) == "fit_mlp"
    assert registry.tune_rule("centroid-dev", config["classifier_settings"]) == "tune_gpu"
    assert not registry.spec("centroid").gpu_capable
    # the device reaches the constructor: "cuda" where a GPU is visible, else "cpu"
    for visible, device in ((False, "cpu"), (True, "cuda")):
        monkeypatch.setattr("modelvar.models.user.nvidia_gpu_visible", lambda v=visible: v)
        model = registry.make_classifier("centroid-dev", seed=1)
        assert model.arguments()["device"] == device and model.device == device
    assert registry.make_classifier("centroid-dev", seed=1, device="cpu").device == "cpu"
    assert registry.make_classifier("centroid", seed=1).device == "cpu"
    # it is set by modelvar: not in params, and not one of the other two
    bad = [{**ON_DEVICE, "name": "a", "params": {"device": "cuda"}},
           {**ON_DEVICE, "name": "b", "device_param": "colour"},
           {**ON_DEVICE, "name": "c", "seed_param": "device"}]
    with pytest.raises(ConfigProblems) as caught:
        check_config(tiny(bad), SCHEMA)
    problems = str(caught.value)
    assert "classifiers[0]: 'device' is set by modelvar" in problems
    assert "classifiers[1].device_param: DeviceCentroid() takes no argument 'colour'" in problems
    assert "classifiers[2]: 'device' is named by more than one of seed_param" in problems


@pytest.mark.workflow
def test_a_declared_classifier_tagged_for_a_gpu_runs_in_the_gpu_rules(tmp_path, monkeypatch):
    """Its tuning and fit jobs run (on the CPU here: the test hides any GPU) in tune_gpu and
    fit_mlp, and its estimator gets device "cpu"."""
    (tmp_path / "my_models.py").write_text(DEVICE_SOURCE)
    config = tiny([ON_DEVICE])
    config.update(hparams="tuned", tuning={"trials": 2, "folds": 2},
                  classifier_settings={"centroid-dev": {"gpu": True}})
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml.safe_dump(config))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("MODELVAR_TEST_DEVICE", "cpu")
    snakemake(tmp_path, path, "--cores", "2", "--until", "fit_mlp")
    manifests = tmp_path / "results" / ".modelvar" / "manifests"
    tune = json.loads((manifests / "tune_gpu/vehicle/centroid-dev.json").read_text())
    assert tune["rule"] == "tune_gpu"
    fit, *_ = (manifests / "fit_mlp/vehicle/centroid-dev").glob("*.json")
    assert json.loads(fit.read_text())["rule"] == "fit_mlp"
    runs = pd.concat(pd.read_parquet(p) for p in
                     (tmp_path / "results").rglob("runs/**/classifier=centroid-dev/*.parquet"))
    assert set(runs["device"]) == {"cpu"} and len(runs) > 0


def test_a_seedless_classifier_is_in_every_figure_and_the_sources_table(tmp_path, monkeypatch):
    """Issue 54: a classifier that takes no seed and gives no probabilities (the centroid) in a
    study whose model seed varies per run: the plan collapses its seed family, and the design it
    decides (the dataset's design file) is what every figure and the sources table read, so
    its cells are drawn and it gets its own all-combined row."""
    import matplotlib.text

    from modelvar.pipeline.result_tables import read_table
    from modelvar.plots import common, findings, study
    from modelvar.study import figures as registry
    from modelvar.study.design import DatasetDesign

    (tmp_path / "my_models.py").write_text(CENTROID_SOURCE)
    config = tiny(["lr-sgd", {**CENTROID, "seconds_per_fit": 0.01}])
    config.update(design="both", hparams="default", grouped={"metrics": ["pa"], "by": {}})
    config["simulation"] = {"enabled": False}
    config["split"].update(repeats=2, runs=3)
    config["perturbation"] = {"data": ["none", {"rel": 0.2}], "downsample": [0.5, 1.0],
                              "model_seed": ["per-run"]}
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake(tmp_path, path, "--cores", "2")
    results = tmp_path / "results"
    design = DatasetDesign.from_json((results / "design/vehicle.json").read_text())
    centroid = design.classifiers["centroid"]
    assert centroid.collapsed == ("model_seed",)
    assert all(c.endswith("seedfix") for c in centroid.cells)
    assert centroid.of_role("factorial") and centroid.of_role("one-at-a-time")
    # the sources table: the centroid's control, each source alone and its all-combined row
    sources = pd.read_parquet(results / "aggregated/study/sources.parquet")
    mine = sources[sources["classifier"] == "centroid"]
    assert set(mine["source"]) >= {"control", "data", "downsample", "all combined"}
    combined = mine[mine["source"] == "all combined"].iloc[0]
    assert combined["cell"] == "rel0p2_cnone_hnone_down050_seedfix"
    assert (results / "findings/findings.html").read_text().count("centroid") > 5
    # every dataset figure draws it: its name is among each figure's texts
    drawn = []
    for module in (study, findings):
        monkeypatch.setattr(module, "save_figure", lambda fig, paths: drawn.append(fig))
    for spec in registry.DATASET_FIGURES:
        if spec.part == "grouped":
            continue
        frames = [read_table(results, t, "vehicle") for t in spec.tables]
        getattr(study, spec.name)(*frames, design.roles(), "vehicle", [tmp_path / "x.png"])
        texts = {t.get_text() for t in drawn[-1].findobj(matplotlib.text.Text)}
        assert any("centroid" in t for t in texts), (spec.name, sorted(texts))
    assert common.classifier_colours(["lr-sgd", "centroid"])["centroid"]
