"""The Snakemake workflow: DAG shape, config validation, and a tiny end-to-end run."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from conftest import CONFIGS, job_counts, snakemake

pytestmark = pytest.mark.workflow


def test_dry_run_job_counts(tmp_path):
    proc = snakemake(tmp_path, CONFIGS / "small.yaml", "-n", "--cores", "1")
    # 3 datasets; 3 downsampling x 2 model-seed levels = 6 cells in one fit job; 1 classifier;
    # grouped metrics for credit-g only
    assert job_counts(proc.stdout) == {
        "prepare_dataset": 3,
        "fit": 3,
        "pairwise_metrics": 3,
        "grouped_metrics": 1,
        "aggregate_dataset": 3,
        "aggregate_grouped": 1,
        "figures": 3,
        "group_disparities_figure": 1,
        "dataset_overview": 1,
        "all": 1,
        "total": 20,
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
        (lambda c: c["grouped"]["by"].update(nosuch=["@class"]), "nosuch"),
        (lambda c: c.update(classifier_settings={"lr-sgd": {"speed": 1}}), "speed"),
        (lambda c: c.update(simulation={"n_classes": [1]}), "n_classes"),
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
        assert (tiny_run / "vehicle" / "svm-sgd" / cell / "runs.parquet").exists()
        tests_sets = []
        for r in (0, 1):
            preds = pd.read_parquet(base / "predictions" / f"repeat-{r:03d}.parquet")
            runs = pd.read_parquet(base / "runs.parquet").query("repeat == @r")
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
        metrics = tiny_run / "vehicle" / "lr-sgd" / "metrics" / "dnone_cnone_hnone"
        pairwise = pd.read_parquet(metrics / "pairwise.parquet").query("cell == @cell")
        assert len(pairwise) == 2 * 2 * 3  # repeats x subsets x pairs
        for metric in ("ec_global", "ec_local", "pa"):
            values = pairwise[metric].dropna()
            assert values.between(0, 1).all()
        summary = pd.read_parquet(metrics / "summary.parquet").query("cell == @cell")
        acc = summary[summary["metric"] == "accuracy"]
        assert len(acc) == 2 and (acc["count"] == 3).all()


def test_end_to_end_fixed_seed_full_pool_runs_are_identical(tiny_run):
    # No perturbation at all (100 % of the pool, one model seed): runs must coincide.
    table = pd.read_parquet(tiny_run / "vehicle/lr-sgd/metrics/dnone_cnone_hnone/pairwise.parquet")
    table = table[table["subset"] == "all"]
    assert (table[table["cell"].str.contains("down100")]["pa"] == 1.0).all()
    assert (table[table["cell"].str.contains("down050")]["pa"] < 1.0).all()


FIGURES = ["gross_accuracy_grid", "accuracy_by_data_perturbation", "repeat_accuracy_ranges",
           "ec_distributions", "repeat_ec_means", "repeat_ec_ranges", "per_sample_instability",
           "group_disparities"]


def test_end_to_end_figures_and_logs(tiny_run):
    for name in FIGURES:
        fig = tiny_run / "vehicle" / "figures" / f"{name}.png"
        assert fig.stat().st_size > 10_000, name
        assert (fig.with_suffix(".pdf")).read_bytes().startswith(b"%PDF")
    log = (tiny_run / "logs/fit/vehicle/lr-sgd/dnone_cnone_hnone.log").read_text()
    # one fit job: 2 cells x 2 repeats x 3 runs, with progress and ETA after every run
    assert "runs done 1/12" in log and "runs done 12/12" in log and "ETA" in log
    assert log.count("runs done") <= 3  # throttled: first, every 30 s, last
    assert "dnone_cnone_hnone_down050_seedfix: 2 repeats, mean accuracy" in log
    assert "fit job finished: 12 fits" in log
    for rule in ("pairwise_metrics/vehicle/svm-sgd/dnone_cnone_hnone", "aggregate_dataset/vehicle",
                 "figures/vehicle", "grouped_metrics/vehicle/lr-sgd/dnone_cnone_hnone"):
        assert (tiny_run / "logs" / f"{rule}.log").exists(), rule


def test_end_to_end_aggregated_dataset(tiny_run):
    from modelvar.pipeline.aggregate import read_table

    summary = pd.read_parquet(tiny_run / "aggregated" / "summary")
    assert set(summary["dataset"].astype(str)) == {"vehicle"}
    assert set(summary["classifier"]) == {"lr-sgd", "svm-sgd"}
    assert set(summary["downsample"]) == {"down050", "down100"}
    assert set(summary["repeat"]) == {0, 1}
    runs = read_table(tiny_run / "aggregated", "runs", "vehicle")
    assert len(runs) == 2 * 2 * 2 * 3  # classifiers x cells x repeats x runs
    per_sample = read_table(tiny_run / "aggregated", "per_sample")
    assert per_sample.groupby(["classifier", "cell", "repeat"]).size().eq(212).all()


def test_end_to_end_grouped_metrics(tiny_run):
    grouped = pd.read_parquet(tiny_run / "aggregated" / "grouped")
    disparities = pd.read_parquet(tiny_run / "aggregated" / "disparities")
    assert set(grouped["grouping"]) == {"@class"}
    assert set(grouped["group"]) == {"overall", "bus", "opel", "saab", "van"}
    per_run = grouped[(grouped["run"] >= 0) & (grouped["group"] != "overall")]
    # per-run accuracy by class, weighted by class sizes, gives the run's overall accuracy
    weighted = per_run.assign(w=per_run["value"] * per_run["n"]).groupby(
        ["classifier", "cell", "repeat", "run"])[["w", "n"]].sum()
    overall = grouped[(grouped["run"] >= 0) & (grouped["group"] == "overall")].set_index(
        ["classifier", "cell", "repeat", "run"])["value"]
    assert np.allclose(weighted["w"] / weighted["n"], overall.loc[weighted.index])
    rep = grouped[(grouped["run"] < 0) & (grouped["metric"] == "mean_pa")]
    assert rep["value"].between(0, 1).all() and rep["ci_low"].notna().any()
    assert set(disparities["aggregate"]) == {
        "difference_minmax", "difference_to_overall", "ratio_minmax", "ratio_to_overall",
        "group_min", "group_max"}
    # kappa can be negative: it gets differences but never ratios
    kappa = disparities[disparities["metric"] == "mean_kappa"]
    assert not kappa.empty and not kappa["aggregate"].str.startswith("ratio").any()


def test_rerun_is_deterministic_and_nothing_to_do(tiny_run, tmp_path):
    # a second workdir with the same config produces byte-identical prediction tables
    snakemake(tmp_path, CONFIGS / "tiny.yaml", "--cores", "2",
              "results/vehicle/lr-sgd/dnone_cnone_hnone_down050_seedfix/predictions/"
              "repeat-000.parquet")
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
    assert counts["figures"] == 37


# ------------------------------------------------------------------ exact partial re-execution
@pytest.fixture
def workflow_copy(tmp_path):
    from conftest import copy_workflow

    return copy_workflow(tmp_path / "wf")


def _dry_counts(workdir, snakefile, config):
    proc = snakemake(workdir, config, "-n", "--cores", "1", snakefile=snakefile)
    text = proc.stdout + proc.stderr
    return {} if "Nothing to be done" in text else job_counts(proc.stdout)


def _edit(path):
    path.write_text(path.read_text() + "\n# edited by a test\n")


def test_unchanged_copy_has_nothing_to_do(tiny_run, workflow_copy):
    assert _dry_counts(tiny_run.parent, workflow_copy / "Snakefile", CONFIGS / "tiny.yaml") == {}


def test_editing_metrics_code_reruns_metrics_and_figures_not_fits(tiny_run, workflow_copy):
    _edit(workflow_copy / "src/modelvar/metrics/pairwise.py")
    counts = _dry_counts(tiny_run.parent, workflow_copy / "Snakefile", CONFIGS / "tiny.yaml")
    assert "fit" not in counts and "prepare_dataset" not in counts
    assert counts["pairwise_metrics"] == 2 and counts["grouped_metrics"] == 2
    assert counts["aggregate_dataset"] == 1 and counts["figures"] == 1
    assert counts["group_disparities_figure"] == 1


def test_editing_plotting_code_reruns_only_figures(tiny_run, workflow_copy):
    _edit(workflow_copy / "src/modelvar/plots/study.py")
    counts = _dry_counts(tiny_run.parent, workflow_copy / "Snakefile", CONFIGS / "tiny.yaml")
    assert counts == {"figures": 1, "group_disparities_figure": 1, "all": 1, "total": 3}


def test_changing_one_classifiers_settings_reruns_only_its_jobs(tiny_run, workflow_copy,
                                                                  tmp_config):
    config = tmp_config("tiny.yaml", lambda c: c.update(
        classifier_settings={"svm-sgd": {"hparams": {"alpha": 0.001}}}))
    proc = snakemake(tiny_run.parent, config, "-n", "--cores", "1")
    counts = job_counts(proc.stdout)
    assert counts["fit"] == 1 and counts["pairwise_metrics"] == 1
    assert counts["grouped_metrics"] == 1
    assert "wildcards: dataset=vehicle, classifier=svm-sgd" in proc.stdout
    assert "classifier=lr-sgd" not in proc.stdout


def test_adding_a_dataset_adds_only_its_jobs(tiny_run, tmp_config):
    config = tmp_config("tiny.yaml", lambda c: c["datasets"].update(iris={"source": "sklearn"}))
    proc = snakemake(tiny_run.parent, config, "-n", "--cores", "1")
    # the report's dataset overview lists the new dataset too
    assert job_counts(proc.stdout) == {
        "prepare_dataset": 1, "fit": 2, "pairwise_metrics": 2, "aggregate_dataset": 1,
        "figures": 1, "dataset_overview": 1, "all": 1, "total": 9,
    }
    assert "wildcards: dataset=vehicle" not in proc.stdout


# ------------------------------------------------------------------ the simulation branch
def test_simulation_branch_runs_and_joins_rule_all(tmp_path, tmp_config):
    config = tmp_config("tiny.yaml", lambda c: c.update(simulation={
        "enabled": True, "n_classes": [2, 3], "replicates": 2, "n_samples": 60, "runs": 4,
        "dirichlet": {"n": 80}}))
    dry = job_counts(snakemake(tmp_path, config, "-n", "--cores", "1").stdout)
    assert dry["simulate_metrics"] == 2 and dry["evaluate_simulation"] == 1
    assert dry["dirichlet_simulation"] == 1
    snakemake(tmp_path, config, "--cores", "2", "results/simulation/metrics/ranking.html",
              "results/simulation/dirichlet/spearman.html")
    sim = tmp_path / "results" / "simulation"
    ranking = pd.read_parquet(sim / "metrics" / "ranking.parquet")
    assert len(ranking) == 15 and ranking["mean_rank"].is_monotonic_increasing
    tidy = pd.read_parquet(sim / "metrics" / "simulations.parquet")
    assert set(tidy["n_classes"]) == {2, 3} and "value" in tidy
    assert "Best per criterion" in (sim / "metrics" / "ranking.html").read_text()
    spearman = pd.read_parquet(sim / "dirichlet" / "spearman.parquet")
    assert list(spearman["case"]) == ["Case 1", "Case 2", "Case 3"]
    for fig in ("metrics/metric_vs_accuracy", "metrics/metric_by_distribution",
                "dirichlet/class_densities", "dirichlet/h_ci_densities", "dirichlet/ci_vs_h"):
        assert (sim / f"{fig}.png").stat().st_size > 10_000, fig
    off = tmp_config("tiny.yaml", lambda c: None)
    assert "simulate_metrics" not in job_counts(
        snakemake(tmp_path, off, "-n", "--cores", "1").stdout)


def test_preliminary_and_full_study_configs_dry_run(tmp_path):
    from conftest import REPO

    proc = snakemake(tmp_path, REPO / "config" / "preliminary.yaml", "-n", "--cores", "1")
    counts = job_counts(proc.stdout)
    # 2 datasets x 56 chunks (8 data x 7 hparam); MLP fits in the GPU-tagged rule
    assert counts["fit"] == 2 * 3 * 56 and counts["fit_mlp"] == 2 * 56
    proc = snakemake(tmp_path, REPO / "config" / "full-study.yaml", "-n", "--cores", "1",
                     "--configfile", str(REPO / "config" / "full-study.yaml"),
                     str(REPO / "config" / "openml" / "seed-study.yaml"))
    counts = job_counts(proc.stdout)
    assert counts["prepare_dataset"] == 37 and counts["tune"] == 37 * 4
    assert counts["fit"] == 37 * 3 * 12 and counts["fit_mlp"] == 37 * 12
    assert counts["total"] <= 10_000


def test_every_column_is_documented(tiny_run):
    """docs/results.md lists every column of every table the pipeline writes."""
    from conftest import REPO

    doc = (REPO / "docs" / "results.md").read_text()
    sections = dict(re.findall(r"^### (\w+)\n(.*?)(?=^##)", doc + "\n##", re.S | re.M))
    cell = tiny_run / "vehicle" / "lr-sgd" / "dnone_cnone_hnone_down050_seedfix"
    metrics = tiny_run / "vehicle" / "lr-sgd" / "metrics" / "dnone_cnone_hnone"
    tables = {"predictions": cell / "predictions" / "repeat-000.parquet",
              "runs": cell / "runs.parquet",
              **{t: metrics / f"{t}.parquet" for t in ("pairwise", "summary", "per_run",
                                                        "agreement", "per_sample", "grouped",
                                                        "disparities")}}
    keys = {"dataset", "classifier", "cell", "repeat", "run"}
    missing = []
    for name, path in tables.items():
        for column in pd.read_parquet(path).columns:
            shown = "`proba:<class>`" if column.startswith("proba:") else f"`{column}`"
            if column not in keys and shown not in sections[name]:
                missing.append(f"{name}.{column}")
    assert missing == []
