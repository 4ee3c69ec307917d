"""A user's estimator that returns what the study cannot use stops with one line naming the
classifier, the method and what was wrong, at its first fit: in a fit job, and in the plan's
probe fits (so a dry run finds it); a fit that raises names where it was (issue 49, item 1)."""

from __future__ import annotations

import copy
import re
import textwrap

import numpy as np
import pytest
import yaml

from conftest import CENTROID_SOURCE, CONFIGS, REPO, snakemake
from modelvar.models import registry
from modelvar.models.user import EstimatorContractError

BROKEN_SOURCE = CENTROID_SOURCE + textwrap.dedent('''

    class Base(Centroid):
        def __init__(self, shift=0.0):
            self.shift = shift


    class Shorty(Base):
        def predict(self, X):
            return super().predict(X)[:-1]


    class Outside(Base):
        def predict(self, X):
            return super().predict(X) + 100


    class Texty(Base):
        def predict(self, X):
            return np.array([f"x{c}" for c in super().predict(X)])


    class Halves(Base):
        def predict_proba(self, X):
            return np.full((len(X), 2), 0.5)


    class Scores(Base):
        def predict_proba(self, X):
            return np.full((len(X), len(self.classes_)), 2.0)


    class NanLabels(Base):
        def predict(self, X):
            labels = super().predict(X).astype(float)
            labels[[5, 7, 9]] = np.nan
            return labels


    class NanProba(Base):
        def predict_proba(self, X):
            proba = np.full((len(X), len(self.classes_)), 1 / len(self.classes_))
            proba[4:, 2] = np.nan
            return proba


    class Raises(Base):
        def fit(self, X, y):
            raise ValueError("singular matrix")
''')
SHAPE = {"shift": {"type": "float", "low": 0.0, "high": 1.0}}


def declared(name: str, cls: str, **extra) -> dict:
    return {"name": name, "estimator": f"broken.py:{cls}", "hparams": SHAPE, **extra}


@pytest.fixture
def broken(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.py").write_text(BROKEN_SOURCE)
    yield tmp_path
    registry.declare({"classifiers": []})


def fitted(name: str, cls: str):
    """A fitted ``cls`` on 212 rows of 4 classes (every class present)."""
    assert registry.declare({"classifiers": [declared(name, cls)]}) == []
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((212, 3)), np.arange(212) % 4
    return registry.make_classifier(name, seed=1).fit(X, y, 4), X


@pytest.mark.parametrize("name, cls, method, message", [
    ("shorty", "Shorty", "predict",
     "shorty.predict returned 211 labels for 212 rows (one label per row)"),
    ("outside", "Outside", "predict",
     "outside.predict returned 100, 101, 102, 103, not among the 4 classes it was fitted on "
     "(0, 1, 2, 3)"),
    ("texty", "Texty", "predict",
     "texty.predict returned labels such as 'x3': it must return the class indices "
     "it was fitted on (0, 1, 2, 3)"),
    ("halves", "Halves", "predict_proba",
     "halves.predict_proba returned shape (212, 2) for 212 rows of 4 fitted classes (one column "
     "per class)"),
    ("scores", "Scores", "predict_proba",
     "scores.predict_proba returned values outside [0, 1] (probabilities, not scores)"),
    ("nanlabels", "NanLabels", "predict",
     "nanlabels.predict returned NaN (not a number) as the label of 3 of 212 rows (the first: "
     "row 5)"),
    ("nanproba", "NanProba", "predict_proba",
     "nanproba.predict_proba returned NaN (not a number) as a probability of 208 of 212 rows "
     "(the first: row 4, class 2)"),
])
def test_a_broken_estimator_is_named_with_its_method_and_fault(broken, name, cls, method,
                                                               message):
    model, X = fitted(name, cls)
    with pytest.raises(EstimatorContractError) as caught:
        getattr(model, method)(X)
    assert str(caught.value) == message


def test_a_sound_estimator_passes_the_contract(broken):
    model, X = fitted("base", "Base")
    assert set(model.predict(X)) <= {0, 1, 2, 3}
    proba = model.predict_proba(X)  # no predict_proba: the one-hot of its labels
    assert proba.shape == (212, 4) and np.allclose(proba.sum(axis=1), 1)


def tiny(classifiers) -> dict:
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["classifiers"] = copy.deepcopy(classifiers)
    config["simulation"] = {"enabled": False}
    return config


def test_the_plan_finds_a_broken_estimator_before_any_job(broken, capsys):
    """The probe fits call predict and predict_proba: `modelvar plan` and a run stop before
    any job. A dry run fits nothing (issue 69): it says it planned shorty without probes."""
    from modelvar.cli import main

    config = tiny(["lr-sgd", declared("shorty", "Shorty")])
    config["jobs"] = {"probe_budget_seconds": 2}
    path = broken / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    dry = snakemake(broken, path, "-n", check=False)
    assert dry.returncode == 0 and "no cached probe of shorty" in dry.stderr
    proc = snakemake(broken, path, "--cores", "1", check=False)
    assert proc.returncode != 0
    assert "Select jobs to execute" not in proc.stdout + proc.stderr  # no job started
    assert "shorty.predict returned " in proc.stderr
    assert "found by the plan's probe fits of shorty" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list((broken / "results").glob("*/predictions*"))
    assert main(["plan", "--configfile", str(path)]) != 0
    err = capsys.readouterr().err
    assert "classifiers: shorty.predict returned " in err and "Traceback" not in err


def test_a_probe_fit_that_raises_says_so_and_how_to_skip_probes(broken, capsys):
    from modelvar.planning.config_check import check_config
    from modelvar.planning.plan import PlanError, plan_study

    config = tiny(["lr-sgd", declared("raises", "Raises")])
    config["jobs"] = {"probe_budget_seconds": 2}
    study = check_config(config, yaml.safe_load(
        (REPO / "workflow/schemas/config.schema.yaml").read_text()))
    with pytest.raises(PlanError) as caught:
        plan_study(config, study.schemas)
    text = str(caught.value)
    assert "raises raised on a probe fit of " in text
    assert "ValueError: singular matrix" in text
    assert "declare it to skip them" in text


def test_a_fit_that_raises_names_the_run_and_keeps_its_traceback_in_the_log(broken):
    """seconds_per_fit skips the probes: the fit job meets the error and names the dataset,
    cell, repeat, run and seed in one line after the estimator's own traceback."""
    config = tiny([declared("raises", "Raises", seconds_per_fit=0.01)])
    path = broken / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(broken, path, "--cores", "1", check=False)
    assert proc.returncode != 0
    logs = list((broken / "results" / "logs" / "fit" / "vehicle" / "raises").glob("*.log"))
    assert logs, proc.stderr
    text = logs[0].read_text()
    assert 'raise ValueError("singular matrix")' in text  # the estimator's own frame
    last = text.strip().splitlines()[-1]
    assert last.startswith("modelvar fit: error: raises.fit failed on vehicle, cell "), last
    # one fit job per repeat: whichever ran first names its own repeat
    assert re.search(r", repeat [01], run 0 \(model seed \d+\): ValueError: singular matrix$",
                     last), last
