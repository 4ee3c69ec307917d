"""The Snakemake workflow: DAG shape, config validation, and a tiny end-to-end run."""

import json

import numpy as np
import pandas as pd
import pytest

from conftest import CONFIGS, job_counts, snakemake

pytestmark = pytest.mark.workflow


def test_dry_run_job_counts(tmp_path):
    proc = snakemake(tmp_path, CONFIGS / "small.yaml", "-n", "--cores", "1")
    # 3 datasets; 3 downsampling levels x 2 model-seed levels = 6 cells; 1 classifier
    assert job_counts(proc.stdout) == {
        "prepare_dataset": 3,
        "fit": 18,
        "pairwise_metrics": 18,
        "repeat_means_violin": 3,
        "all": 1,
        "total": 43,
    }


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: c.update(colour="red"), "colour"),
        (lambda c: c["split"].update(runs=1), "runs"),
        (lambda c: c["split"].update(test_fraction=1.5), "test_fraction"),
        (lambda c: c["perturbation"].update(downsample=[0.0]), "downsample"),
        (lambda c: c.update(classifiers=["random-forest"]), "classifiers"),
        (lambda c: c["perturbation"].update(nosuch=[1]), "nosuch"),
    ],
)
def test_bad_config_fails_before_any_job_naming_the_key(tmp_path, tmp_config, mutate, message):
    config = tmp_config("tiny.yaml", mutate)
    proc = snakemake(tmp_path, config, "-n", "--cores", "1", check=False)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "ValidationError" in output or "validation" in output.lower()
    assert message in output
    assert not (tmp_path / "results").exists()


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tiny")
    snakemake(workdir, CONFIGS / "tiny.yaml", "--cores", "2")
    return workdir / "results"


def test_end_to_end_tables(tiny_run):
    cells = ["dnone_cnone_hnone_down050_seedfix", "dnone_cnone_hnone_down100_seedfix"]
    meta = json.loads((tiny_run / "datasets" / "vehicle.json").read_text())
    assert meta["classes"] == ["bus", "opel", "saab", "van"]
    for cell in cells:
        base = tiny_run / "vehicle" / "lr-sgd" / cell
        tests_sets = []
        for r in (0, 1):
            preds = pd.read_parquet(base / "predictions" / f"repeat-{r:03d}.parquet")
            runs = pd.read_parquet(base / "runs" / f"repeat-{r:03d}.parquet")
            assert set(preds["run"]) == {0, 1, 2} and (preds["repeat"] == r).all()
            # every run of a repeat predicts the same test set (25 % of 846, stratified)
            per_run = preds.groupby("run")["sample"].apply(lambda s: tuple(sorted(s)))
            assert per_run.nunique() == 1 and len(per_run.iloc[0]) == 212
            tests_sets.append(set(per_run.iloc[0]))
            proba = preds[[f"proba:{c}" for c in meta["classes"]]].to_numpy()
            assert np.allclose(proba.sum(axis=1), 1.0) and (proba >= 0).all()
            assert set(preds["y_pred"]) <= set(meta["classes"])
            assert len(runs) == 3 and runs["accuracy"].between(0.5, 1.0).all()
            test_counts = preds[preds["run"] == 0]["y_true"].value_counts()
            pool = {c: meta["class_counts"][c] - test_counts[c] for c in meta["classes"]}
            fraction = 1.0 if "down100" in cell else 0.5
            expected_train = sum(int(np.ceil(fraction * v)) for v in pool.values())
            assert (runs["n_train"] == expected_train).all()
            streams = json.loads(runs["streams"].iloc[0])
            assert streams["test-split"].endswith(f"dataset=vehicle/repeat={r}")
        assert tests_sets[0] != tests_sets[1]  # repeats draw different test sets
        pairwise = pd.read_parquet(base / "metrics" / "pairwise.parquet")
        assert len(pairwise) == 2 * 2 * 3  # repeats x subsets x pairs
        for metric in ("ec_global", "ec_local", "pa"):
            values = pairwise[metric].dropna()
            assert values.between(0, 1).all()
        summary = pd.read_parquet(base / "metrics" / "summary.parquet")
        acc = summary[summary["metric"] == "accuracy"]
        assert len(acc) == 2 and (acc["count"] == 3).all()


def test_end_to_end_fixed_seed_full_pool_runs_are_identical(tiny_run):
    # No perturbation at all (100 % of the pool, one model seed): runs must coincide.
    base = tiny_run / "vehicle/lr-sgd"
    pairwise = pd.read_parquet(base / "dnone_cnone_hnone_down100_seedfix/metrics/pairwise.parquet")
    full = pairwise[pairwise["subset"] == "all"]
    assert (full["pa"] == 1.0).all()
    down = pd.read_parquet(base / "dnone_cnone_hnone_down050_seedfix/metrics/pairwise.parquet")
    assert (down[down["subset"] == "all"]["pa"] < 1.0).all()


def test_end_to_end_figures_and_logs(tiny_run):
    fig = tiny_run / "vehicle" / "figures" / "repeat_means_violin.png"
    assert fig.stat().st_size > 10_000
    assert (fig.with_suffix(".pdf")).read_bytes().startswith(b"%PDF")
    log = (tiny_run / "logs/fit/vehicle/lr-sgd/dnone_cnone_hnone_down050_seedfix.log").read_text()
    assert "runs done 6/6" in log and "fit job finished" in log


def test_rerun_is_deterministic_and_nothing_to_do(tiny_run, tmp_path):
    # a second workdir with the same config produces byte-identical prediction tables
    snakemake(tmp_path, CONFIGS / "tiny.yaml", "--cores", "2",
              "results/vehicle/lr-sgd/dnone_cnone_hnone_down050_seedfix/metrics/pairwise.parquet")
    for r in ("000", "001"):
        a = (tiny_run / "vehicle/lr-sgd/dnone_cnone_hnone_down050_seedfix/predictions"
             / f"repeat-{r}.parquet")
        b = (tmp_path / "results/vehicle/lr-sgd/dnone_cnone_hnone_down050_seedfix/predictions"
             / f"repeat-{r}.parquet")
        assert a.read_bytes() == b.read_bytes()
    proc = snakemake(tiny_run.parent, CONFIGS / "tiny.yaml", "-n", "--cores", "1")
    assert "Nothing to be done" in proc.stdout + proc.stderr


@pytest.mark.parametrize("ids", ["kadra.yaml", "seed-study.yaml"])
def test_openml_study_configs_dry_run(tmp_path, ids):
    from conftest import REPO

    proc = snakemake(tmp_path, CONFIGS / "tiny.yaml", "-n", "--cores", "1", "--configfile",
                     str(CONFIGS / "tiny.yaml"), str(REPO / "config" / "openml" / ids))
    counts = job_counts(proc.stdout)
    assert counts["prepare_dataset"] == 37 and counts["fit"] == 37 * 2
