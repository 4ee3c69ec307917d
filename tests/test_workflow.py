"""The Snakemake workflow: DAG shape, config validation, and a tiny end-to-end run."""

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import CONFIGS, dry_run_jobs, job_counts, manifest_of, snakemake

pytestmark = pytest.mark.workflow


def test_dry_run_job_counts(tmp_path):
    proc = snakemake(tmp_path, CONFIGS / "small.yaml", "-n", "--cores", "1")
    # 3 datasets; 3 downsampling x 2 model-seed levels = 6 cells (the one-at-a-time cells are
    # among them), cheap enough for one fit job and one metrics job per dataset holding its 4
    # repeats (a batch: issue 67); 1 classifier; grouped metrics for credit-g only; a design
    # job per dataset
    assert job_counts(proc.stdout) == {
        "prepare_dataset": 3,
        "design": 3,
        "fit": 3,
        "pairwise_metrics": 3,
        "grouped_metrics": 1,
        "figures": 3,
        "group_disparities_figure": 1,
        "dataset_overview": 1,
        "findings": 1,
        "all": 1,
        "total": 20,
    }


def test_a_study_puts_xgb_on_a_gpu(tmp_path, monkeypatch):
    """classifier_settings.xgb.gpu: xgb's fit and tuning jobs ask for a GPU (fit_mlp, tune_gpu:
    gpu=1), lr-sgd's stay on the CPU; the plan counts the same jobs (`modelvar plan`'s probe
    fits, cached in the results_dir, are the ones the dry run then reads: a dry run fits
    nothing)."""

    from modelvar.planning.outputs import job_counts as planned_counts
    from modelvar.running.workflow_config import plan_of_command_line

    config = yaml.safe_load((CONFIGS / "small.yaml").read_text())
    config.update(classifiers=["lr-sgd", "xgb"], hparams="tuned",
                  classifier_settings={"xgb": {"gpu": True}})
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml.safe_dump(config))
    monkeypatch.chdir(tmp_path)
    plan, plan_config = plan_of_command_line(["--configfile", str(path)])
    assert plan.data_notes and (tmp_path / "out" / ".modelvar" / "data-probes.json").is_file()
    proc = snakemake(tmp_path, path, "-n", "--cores", "1", "--printshellcmds")
    assert "planned without probe fits" not in proc.stderr
    jobs = dry_run_jobs(proc.stdout)
    fits = {(rule, out[0].split("classifier=")[1].split("/")[0]) for rule, _, out in jobs
            if rule in ("fit", "fit_mlp")}
    assert fits == {("fit", "lr-sgd"), ("fit_mlp", "xgb")}
    tunes = {(rule, out[0].split("tuning/")[1].split("/")[1]) for rule, _, out in jobs
             if rule.startswith("tune")}
    assert tunes == {("tune", "lr-sgd"), ("tune_gpu", "xgb")}
    gpu = re.findall(r"rule (tune\w*):.*?resources: ([^\n]*)", proc.stdout, re.S)
    assert {rule: "gpu=1" in resources for rule, resources in gpu} == \
        {"tune": False, "tune_gpu": True}
    counts = job_counts(proc.stdout)
    assert {rule: counts[rule] for rule in planned_counts("results", plan_config, plan)} == \
        planned_counts("results", plan_config, plan)


def test_xgb_tagged_for_a_gpu_tunes_and_fits_where_there_is_none(tmp_path):
    """The GPU rules' jobs run for real (on the CPU here: no GPU): the fit job takes the
    classifier's gpu setting, the plan-only gpu_speedup does not reach it, and the manifests
    record the rules the jobs ran in."""
    import json


    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config.update(classifiers=["lr-sgd", "xgb"], hparams="tuned",
                  tuning={"trials": 2, "folds": 2},
                  classifier_settings={"xgb": {"gpu": True, "gpu_speedup": {0: 2, 15: 5}}})
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake(tmp_path, path, "--cores", "2", "--until", "fit", "fit_mlp")
    manifests = tmp_path / "results" / ".modelvar" / "manifests"
    assert json.loads((manifests / "tune_gpu/vehicle/xgb.json").read_text())["rule"] == \
        "tune_gpu"
    assert json.loads((manifests / "tune/vehicle/lr-sgd.json").read_text())["rule"] == "tune"
    assert json.loads((manifests / f"fit_mlp/vehicle/xgb/{JOB}.json").read_text())["rule"] == \
        "fit_mlp"
    runs = every_row(tmp_path / "results", "runs", "xgb")
    assert set(runs["device"]) == {"cpu"} and len(runs) == 2 * 3 * 2


def test_the_tune_job_gets_the_epochs_its_fits_train_for(tmp_path):
    """every-rule.yaml fits the MLP for 1 epoch: its tuning job's settings say so (the plan
    counts tuning at those epochs too); lr-sgd, which has no epochs, gets none."""
    out = snakemake(tmp_path, CONFIGS / "every-rule.yaml", "-n", "-p", "--cores", "1").stdout
    commands = [line for line in out.splitlines() if " -m modelvar tune " in line]
    (mlp,) = [c for c in commands if "--classifier mlp" in c]
    assert '"epochs": 1' in mlp
    assert commands and all('"epochs"' not in c for c in commands if c is not mlp)


@pytest.mark.parametrize("config", ["small.yaml", "every-rule.yaml"])
def test_all_asks_for_the_manifest_of_every_job_and_nothing_else(tmp_path, config):
    """Snakemake reruns a job whose output is missing only where some job asks for that file:
    every job declares one manifest, the last file it writes, and `all` asks for exactly
    these (a missing file that no job reads loses its job's manifest at the load,
    test_a_deleted_output_that_no_job_reads_runs_its_job_again; the manifests record every
    output, test_every_manifest_records_every_output_of_its_job)."""
    jobs = dry_run_jobs(snakemake(tmp_path, CONFIGS / config, "-n", "--cores", "1").stdout)
    (wanted,) = [inputs for rule, inputs, _ in jobs if rule == "all"]
    manifests = [manifest_of(outputs) for rule, _, outputs in jobs if rule != "all"]
    assert len(jobs) > 10
    assert sorted(wanted) == sorted(manifests)


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


JOB = "dnone_cnone_hnone.r0-1"  # the tiny study's fit and metrics job: its batch of repeats 0-1


def table(results, name, classifier="lr-sgd", job=JOB):
    return results / "aggregated" / name / "dataset=vehicle" / f"classifier={classifier}" / \
        f"{job}.parquet"


def predictions(results, classifier="lr-sgd", job=JOB):
    return results / "predictions" / "dataset=vehicle" / f"classifier={classifier}" / \
        f"{job}.parquet"


def every_row(results, name, classifier="lr-sgd") -> pd.DataFrame:
    """One classifier's rows of a table, every job's (one job per repeat)."""
    folder = table(results, name, classifier).parent
    return pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))],
                     ignore_index=True)


def every_prediction(results, classifier="lr-sgd") -> pd.DataFrame:
    from modelvar.pipeline.predictions import read_predictions

    folder = predictions(results, classifier).parent
    return pd.concat([read_predictions(p) for p in sorted(folder.glob("*.parquet"))],
                     ignore_index=True)


def test_end_to_end_tables(tiny_run):
    cells = ["dnone_cnone_hnone_down050_seedfix", "dnone_cnone_hnone_down100_seedfix"]
    meta = json.loads((tiny_run / "datasets" / "vehicle.json").read_text())
    assert meta["classes"] == ["bus", "opel", "saab", "van"]
    assert table(tiny_run, "runs", "svm-sgd").exists()
    preds_all = every_prediction(tiny_run)
    runs_all = every_row(tiny_run, "runs")
    for cell in cells:
        tests_sets = []
        for r in (0, 1):
            preds = preds_all.query("cell == @cell and repeat == @r")
            runs = runs_all.query("cell == @cell and repeat == @r")
            assert set(preds["run"]) == {0, 1, 2}
            # every run of a repeat predicts the same test set (25 % of 846, stratified)
            per_run = preds.groupby("run")["sample"].apply(lambda s: tuple(sorted(s)))
            assert per_run.nunique() == 1 and len(per_run.iloc[0]) == 212
            tests_sets.append(set(per_run.iloc[0]))
            proba = preds[[f"proba:{c}" for c in meta["classes"]]].to_numpy()
            assert np.allclose(proba.sum(axis=1), 1.0, atol=1e-5) and (proba >= 0).all()
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
        pairwise = every_row(tiny_run, "pairwise").query("cell == @cell")
        assert len(pairwise) == 2 * 2 * 3  # repeats x subsets x pairs
        for metric in ("ec_global", "ec_local", "pa"):
            values = pairwise[metric].dropna()
            assert values.between(0, 1).all()
        summary = every_row(tiny_run, "summary").query("cell == @cell")
        acc = summary[summary["metric"] == "accuracy"]
        assert len(acc) == 2 and (acc["count"] == 3).all()


def test_prediction_files_are_compact(tiny_run):
    import pyarrow.parquet as pq

    schema = pq.read_schema(predictions(tiny_run))
    types = {f.name: str(f.type) for f in schema}
    # labels as the smallest unsigned type, C - 1 float32 probabilities (the predicted class's
    # is implied)
    assert types["y_true"] == types["y_pred"] == "uint8"
    assert [n for n in types if n.startswith("p_other:")] == ["p_other:0", "p_other:1",
                                                                "p_other:2"]
    assert {types[n] for n in types if n.startswith("p_other:")} == {"float"}
    assert "dataset" not in types and "classifier" not in types  # partition keys, in the path


def test_plan_storage_matches_the_files_of_a_run(tiny_run):
    """The plan's storage estimate (issue 13: within 20 %) against the tiny run's files: lr-sgd's
    dense probabilities and svm-sgd's one-hot ones, small row groups, streamed metric tables."""
    from modelvar.planning.plan_report import storage_on_disk
    from modelvar.running.workflow_config import plan_of_command_line

    plan, _ = plan_of_command_line(["--configfile", str(CONFIGS / "tiny.yaml")])
    rows = pd.DataFrame(storage_on_disk(plan, tiny_run))
    assert (rows["pred_bytes"] > 0).all() and (rows["table_bytes"] > 0).all()
    ratio = rows["pred_bytes_estimate"] / rows["pred_bytes"]
    assert ratio.between(0.75, 1.33).all(), rows
    total = (rows["pred_bytes_estimate"] + rows["table_bytes_estimate"]).sum() / (
        rows["pred_bytes"] + rows["table_bytes"]).sum()
    assert 0.8 <= total <= 1.2, rows


def test_end_to_end_control_cell_runs_are_identical(tiny_run):
    # The control cell (no perturbation, 100 % of the pool, one model seed): runs coincide.
    pairs = pd.read_parquet(table(tiny_run, "pairwise")).query("subset == 'all'")
    assert (pairs[pairs["cell"].str.contains("down100")]["pa"] == 1.0).all()
    assert (pairs[pairs["cell"].str.contains("down050")]["pa"] < 1.0).all()
    agreement = pd.read_parquet(table(tiny_run, "agreement"))
    identical = agreement.set_index("cell")["all_runs_identical"]
    assert identical[identical.index.str.contains("down100")].all()
    assert not identical[identical.index.str.contains("down050")].any()


FIGURES = ["sources_of_variance", "accuracy_by_source", "reproducibility_vs_chance",
           "gross_accuracy_grid", "accuracy_by_data_perturbation", "repeat_accuracy_ranges",
           "ec_distributions", "reproducibility_by_cell", "repeat_ec_ranges",
           "per_sample_instability", "group_disparities"]


def test_end_to_end_figures_and_logs(tiny_run):
    for name in FIGURES:
        fig = tiny_run / "vehicle" / "figures" / f"{name}.png"
        assert fig.stat().st_size > 10_000, name
        assert (fig.with_suffix(".pdf")).read_bytes().startswith(b"%PDF")
    log = (tiny_run / f"logs/fit/vehicle/lr-sgd/{JOB}.log").read_text()
    # one fit job: 2 cells x 2 repeats x 3 runs, with progress and ETA after every run
    assert "runs done 1/12" in log and "runs done 12/12" in log and "ETA" in log
    assert log.count("runs done") <= 3  # throttled: first, every 30 s, last
    assert "dnone_cnone_hnone_down050_seedfix: 2 repeats, mean accuracy" in log
    assert "fit job finished: 12 fits" in log
    for rule in (f"pairwise_metrics/vehicle/svm-sgd/{JOB}", "figures/vehicle",
                 f"grouped_metrics/vehicle/lr-sgd/{JOB}"):
        assert (tiny_run / "logs" / f"{rule}.log").exists(), rule
    # every figure of every job: no tick labels drawn over each other (save_figure checks
    # and logs any it cannot thin)
    logs = list((tiny_run / "logs").rglob("*.log"))
    assert {"vehicle.log", "findings.log"} <= {p.name for p in logs}
    crowded = [line for p in logs for line in p.read_text().splitlines()
               if "tick labels overlap" in line or "text below" in line
               or "wider than the figure set" in line]
    assert crowded == []


def test_every_figure_has_its_source_data_and_keeps_the_figure_rules(tiny_run):
    """Issue 65, item 8: beside every figure of the run (a dataset's, the Findings', the
    simulations') its source data, one row per drawn mark with its panel's axis limits; no
    figure breaks the set's rules (modelvar.plots.figure_rules: nothing cut, densities from
    enough distinct values, global EC on its own scale, a page's size)."""
    from modelvar.findings.figures import verdict_figures
    from modelvar.plots.common import WIDTHS
    from modelvar.plots.figure_rules import check_results, figures_of

    figures = figures_of(tiny_run)
    assert len(figures) >= len(FIGURES) + 3
    for path in figures:
        marks = pd.read_csv(path)
        assert {"panel", "kind", "x_low", "y_high", "figure_height"} <= set(marks), path.name
        # only a kind of claim with no claim on the page draws nothing (its figure says so,
        # and the page does not show it)
        assert len(marks) or path.stem in verdict_figures("both", 1), path.name
    broken = {name: found for name, found in check_results(tiny_run, WIDTHS["double"]).items()
              if found}
    assert broken == {}


def pdf_fonts_and_sizes(path) -> tuple[set[str], set[float]]:
    """The font subtypes a PDF embeds and the sizes its text is set in (its content streams'
    ``Tf`` operators), read with the standard library."""
    import zlib

    data = path.read_bytes()
    kinds = {k.decode() for k in re.findall(rb"/Subtype\s*/(\w+)", data)}
    sizes = set()
    for stream in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S):
        try:
            text = zlib.decompress(stream)
        except zlib.error:
            continue
        sizes |= {float(x) for x in re.findall(rb"/[\w.+-]+ ([0-9.]+) Tf", text)}
    return kinds, sizes


def test_every_figure_pdf_embeds_truetype_fonts_and_no_text_below_7_pt(tiny_run):
    """Journal submission systems reject or flag Type 3 fonts; text is at least 7 pt at the
    size the figure is printed at (every PDF of the run: the dataset's figures, the
    findings' headline figures)."""
    pdfs = sorted(tiny_run.rglob("*.pdf"))
    assert len(pdfs) >= len(FIGURES) + 2
    for pdf in pdfs:
        kinds, sizes = pdf_fonts_and_sizes(pdf)
        assert "Type3" not in kinds, pdf
        assert {"Type0", "CIDFontType2"} <= kinds or "TrueType" in kinds, (pdf, kinds)
        assert sizes and min(sizes) >= 7.0, (pdf, sorted(sizes))


def test_the_font_check_sees_type_3_fonts_and_small_text(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"pdf.fonttype": 3}):
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.set_title("tiny", fontsize=5)
        fig.savefig(tmp_path / "type3.pdf")
        plt.close(fig)
    kinds, sizes = pdf_fonts_and_sizes(tmp_path / "type3.pdf")
    assert "Type3" in kinds and 5.0 in sizes


def test_end_to_end_aggregated_dataset(tiny_run):
    from modelvar.pipeline.result_tables import read_table

    summary = pd.read_parquet(tiny_run / "aggregated" / "summary")
    assert set(summary["dataset"].astype(str)) == {"vehicle"}
    assert set(summary["classifier"]) == {"lr-sgd", "svm-sgd"}
    assert set(summary["downsample"]) == {"down050", "down100"}
    assert set(summary["repeat"]) == {0, 1}
    runs = read_table(tiny_run, "runs", "vehicle")
    assert len(runs) == 2 * 2 * 2 * 3  # classifiers x cells x repeats x runs
    assert list(runs.columns[:2]) == ["dataset", "classifier"]
    per_sample = read_table(tiny_run, "per_sample")
    assert per_sample.groupby(["classifier", "cell", "repeat"]).size().eq(212).all()


def test_end_to_end_grouped_metrics(tiny_run):
    grouped = pd.read_parquet(tiny_run / "aggregated" / "grouped")
    disparities = pd.read_parquet(tiny_run / "aggregated" / "disparities")
    assert set(grouped["grouping"]) == {"@class"}
    assert set(grouped["group"]) == {"overall", "bus", "opel", "saab", "van"}
    per_run = grouped[(grouped["run"] >= 0) & (grouped["group"] != "overall")]
    # per-run accuracy by class, weighted by class sizes, gives the run's overall accuracy
    weighted = per_run.assign(w=per_run["value"] * per_run["n"]).groupby(
        ["classifier", "cell", "repeat", "run"], observed=True)[["w", "n"]].sum()
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
    # a second workdir with the same config produces byte-identical prediction files
    target = predictions(tiny_run).relative_to(tiny_run.parent)
    snakemake(tmp_path, CONFIGS / "tiny.yaml", "--cores", "2", str(target))
    assert predictions(tiny_run).read_bytes() == (tmp_path / target).read_bytes()
    proc = snakemake(tiny_run.parent, CONFIGS / "tiny.yaml", "-n", "--cores", "1")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_a_deleted_output_that_no_job_reads_runs_its_job_again(tiny_run, tmp_path):
    """A findings figure and a study table are read by no later job: the load finds them
    missing from the findings job's manifest and deletes it, and `all` asks for the manifest,
    so deleting one reruns the findings job (and nothing else)."""
    import shutil

    manifest = tiny_run / ".modelvar" / "manifests" / "findings" / "job.json"
    for rel in ("findings/accuracy_vs_reproducibility.png", "aggregated/study/claims.parquet"):
        path = tiny_run / rel
        saved = [(p, tmp_path / p.name) for p in (path, manifest)]
        for source, copy in saved:
            shutil.copy2(source, copy)
        path.unlink()
        try:
            proc = snakemake(tiny_run.parent, CONFIGS / "tiny.yaml", "-n", "--cores", "1")
            assert job_counts(proc.stdout) == {"findings": 1, "all": 1, "total": 2}
            assert f"missing or damaged output: findings/job: {rel} is missing; the job runs " \
                "again" in proc.stderr
            reason = re.search(r"rule findings:.*?reason: (.*?)$", proc.stdout, re.S | re.M)
            assert str(manifest.relative_to(tiny_run.parent)) in reason.group(1)
        finally:
            for source, copy in saved:
                shutil.copy2(copy, source)


def test_regrouped_jobs_replace_their_tables(tmp_path, tmp_config):
    """A config that splits the fits into other jobs sets the old jobs' tables aside at the next
    run (issue 66: nothing is deleted), so that a partition never holds two plans' rows."""
    config = tmp_config("tiny.yaml", lambda c: c.update(classifiers=["lr-sgd"]))
    snakemake(tmp_path, config, "--cores", "2", "results/aggregated/summary/dataset=vehicle/"
              f"classifier=lr-sgd/{JOB}.parquet")
    # a tiny target (minutes) puts every fit in its own job
    split = tmp_config("tiny.yaml", lambda c: c.update(classifiers=["lr-sgd"],
                                                       jobs={"target_minutes": 0.0001}))
    proc = snakemake(tmp_path, split, "--cores", "2")
    results = tmp_path / "results"
    summary = pd.read_parquet(results / "aggregated" / "summary")
    counts = summary.groupby(["cell", "repeat", "metric", "subset"], observed=True).size()
    assert (counts == 1).all()  # no row twice
    assert "set aside" in proc.stderr and "fits regrouped" in proc.stderr
    assert "nothing was deleted" in proc.stderr
    files = sorted(p.name for p in (results / "predictions/dataset=vehicle/classifier=lr-sgd")
                   .iterdir())
    assert JOB + ".parquet" not in files and len(files) == 2 * 2 * 3  # cells x repeats x runs
    assert "dnone_cnone_hnone.c1.r0.k2-2.parquet" in files
    from modelvar.pipeline.result_tables import SET_ASIDE_DIR
    from modelvar.table_files import verify

    aside = results / SET_ASIDE_DIR / "predictions/dataset=vehicle/classifier=lr-sgd"
    assert (aside / (JOB + ".parquet")).exists()

    problems, _ = verify(results)
    assert problems == []


@pytest.mark.parametrize("ids", ["kadra.yaml", "seed-study.yaml"])
def test_openml_study_configs_dry_run(tmp_path, ids):
    from conftest import REPO

    proc = snakemake(tmp_path, CONFIGS / "tiny.yaml", "-n", "--cores", "1", "--configfile",
                     str(CONFIGS / "tiny.yaml"), str(REPO / "config" / "openml" / ids))
    counts = job_counts(proc.stdout)
    # one fit job per dataset and classifier at tiny's size: with the joint one-vs-rest SGD
    # fit even dionis and aloi (355 and 1,000 classes) stay within jobs.target_minutes
    assert counts["prepare_dataset"] == 37 and counts["figures"] == 37
    assert 37 * 2 <= counts["fit"] < 37 * 2 * 4


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
    """A real change to a module (a comment would change no code version)."""
    path.write_text(path.read_text() + "\nEDITED_BY_A_TEST = 1\n")


def test_unchanged_copy_has_nothing_to_do(tiny_run, workflow_copy):
    assert _dry_counts(tiny_run.parent, workflow_copy / "Snakefile", CONFIGS / "tiny.yaml") == {}


def test_editing_metrics_code_reruns_metrics_and_figures_not_fits(tiny_run, workflow_copy):
    _edit(workflow_copy / "src/modelvar/metrics/pairwise.py")
    counts = _dry_counts(tiny_run.parent, workflow_copy / "Snakefile", CONFIGS / "tiny.yaml")
    assert "fit" not in counts and "prepare_dataset" not in counts
    # a metrics job per classifier and batch of repeats (both repeats: issue 67)
    assert counts["pairwise_metrics"] == 2 and counts["grouped_metrics"] == 2
    assert counts["figures"] == 1 and counts["group_disparities_figure"] == 1


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
    assert counts["fit"] == 1 and counts["pairwise_metrics"] == 1  # its batch of both repeats
    assert counts["grouped_metrics"] == 1
    assert "wildcards: dataset=vehicle, classifier=svm-sgd" in proc.stdout
    assert "wildcards: dataset=vehicle, classifier=lr-sgd" not in proc.stdout


def test_adding_a_dataset_adds_only_its_jobs(tiny_run, tmp_config):
    config = tmp_config("tiny.yaml", lambda c: c["datasets"].update(iris={"source": "sklearn"}))
    proc = snakemake(tiny_run.parent, config, "-n", "--cores", "1")
    # the report's dataset overview lists the new dataset too
    assert job_counts(proc.stdout) == {
        "prepare_dataset": 1, "design": 1, "fit": 2, "pairwise_metrics": 2, "figures": 1,
        "dataset_overview": 1, "findings": 1, "all": 1, "total": 10,
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
    # the simulation's figures too: no tick labels drawn over each other (save_figure's log)
    logs = [p for p in (tmp_path / "results" / "logs").rglob("*.log")
            if "simulation" in p.name or "dirichlet" in p.name]
    assert len(logs) >= 2
    assert [line for p in logs for line in p.read_text().splitlines()
            if "tick labels overlap" in line] == []
    off = tmp_config("tiny.yaml", lambda c: None)
    assert "simulate_metrics" not in job_counts(
        snakemake(tmp_path, off, "-n", "--cores", "1").stdout)


def test_preliminary_and_full_study_configs_dry_run(tmp_path):
    from conftest import REPO

    proc = snakemake(tmp_path, REPO / "config" / "preliminary.yaml", "-n", "--cores", "1")
    counts = job_counts(proc.stdout)
    # 2 datasets x 70 cells (8 data x 7 hparam levels, plus the control and the 13 sources
    # alone with a fixed model seed); the cheap CPU classifiers in batches of their 10
    # repeats (issue 67: fewer jobs than datasets x classifiers x repeats), the MLP (GPU-tagged
    # rule) in jobs of at most an hour
    assert 2 * 3 < counts["fit"] < 2 * 3 * 10 and counts["fit_mlp"] >= 2 * 10
    assert "the categorical" not in proc.stderr  # no family collapses: nothing to warn
    proc = snakemake(tmp_path, REPO / "config" / "full-study.yaml", "-n", "--cores", "1",
                     "--configfile", str(REPO / "config" / "full-study.yaml"),
                     str(REPO / "config" / "openml" / "seed-study.yaml"))
    counts = job_counts(proc.stdout)
    assert counts["prepare_dataset"] == 37
    assert counts["tune"] == 37 * 2 and counts["tune_gpu"] == 37 * 2  # xgb and mlp on GPUs
    assert counts["total"] <= 5_000
    # `modelvar plan` counts the same jobs as the workflow makes
    from modelvar.planning.outputs import job_counts as planned_counts
    from modelvar.running.workflow_config import plan_of_command_line

    plan, config = plan_of_command_line(["--configfile", str(REPO / "config/full-study.yaml"),
                                         str(REPO / "config/openml/seed-study.yaml")])
    planned = planned_counts("results", config, plan)
    assert {rule: counts[rule] for rule in planned} == planned
    # every all-numeric dataset's categorical levels collapse, once each, and are said so
    assert proc.stderr.count("categorical perturbation levels cannot act") == 24
    assert "car: no numeric features, so its data perturbation levels" in proc.stderr


def test_every_column_is_documented(tiny_run):
    """docs/results.md lists every column of every table the pipeline writes."""
    from conftest import REPO

    doc = (REPO / "docs" / "results.md").read_text()
    sections = dict(re.findall(r"^### (\w+)\n(.*?)(?=^##)", doc + "\n##", re.S | re.M))
    tables = {"predictions": predictions(tiny_run),
              **{t: table(tiny_run, t) for t in ("runs", "pairwise", "summary", "per_run",
                                                 "agreement", "per_sample", "grouped",
                                                 "disparities")}}
    # keys and level columns are documented once, above the tables
    keys = {"dataset", "classifier", "cell", "repeat", "run", "data", "categorical", "hparam",
            "downsample", "model_seed"}
    assert all(f"`{k}`" in doc.split("### predictions")[0] for k in keys)
    missing = []
    for name, path in tables.items():
        for column in pd.read_parquet(path).columns:
            shown = "`p_other:<i>`" if column.startswith("p_other:") else f"`{column}`"
            if column not in keys and shown not in sections[name]:
                missing.append(f"{name}.{column}")
    # the study tables of the findings
    findings = sections["findings"]
    for name in ("sources", "study_sources", "components", "study_components", "claims",
                 "strength"):
        for column in pd.read_parquet(tiny_run / "aggregated" / "study" /
                                      f"{name}.parquet").columns:
            base = re.sub(r"_(low|high)$", "", column)
            if f"`{base}`" not in findings and base not in keys:
                missing.append(f"study/{name}.{column}")
    assert missing == []


def test_end_to_end_findings(tiny_run):
    """The control (all runs identical for lr-sgd and svm-sgd) against 50 % of the training
    pool alone, the test-set yardstick, and the report's pages."""
    sources = pd.read_parquet(tiny_run / "aggregated/study/sources.parquet")
    assert set(sources["level"]) == {"control", "50 % train", "test set (between repeats)"}
    control = sources[sources["level"] == "control"]
    assert (control["identical_repeats"] == control["repeats"]).all()
    assert (control["disagreement"] == 0).all()
    half = sources[sources["level"] == "50 % train"]
    assert (half["disagreement"] > 0).all() and (half["accuracy_sd"] > 0).all()
    components = pd.read_parquet(tiny_run / "aggregated/study/components.parquet")
    assert set(components["component"]) >= {"training fraction", "repeat (test set)"}
    page = (tiny_run / "findings" / "findings.html").read_text()
    assert "varied within a repeat under 50 % train (run-to-run SD" in page
    assert "the only source studied alone" in page
    assert (tiny_run / "vehicle" / "summary.html").read_text().count("<tr>") == 2 * 2  # rows
    assert (tiny_run / "findings" / "sources_of_variance.png").stat().st_size > 10_000


def _rewrite_run(path, row_group: int, run: int, change) -> None:
    """Rewrite a predictions file with ``change(columns)`` applied to one run's rows of one row
    group, keeping its row groups and metadata (what a tampering hand would do)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pq.ParquetFile(path)
    schema = source.schema_arrow.with_metadata(source.metadata.metadata)
    groups = [source.read_row_group(i) for i in range(source.num_row_groups)]
    table = groups[row_group]
    mask = table.column("run").to_numpy() == run
    columns = {name: table.column(name).to_numpy(zero_copy_only=False).copy() for name in
               table.column_names if name != "cell"}
    change(columns, mask)
    groups[row_group] = pa.Table.from_arrays(
        [table.column("cell")] + [pa.array(columns[f.name], type=f.type)
                                  for f in schema if f.name != "cell"], schema=schema)
    with pq.ParquetWriter(path, schema) as writer:
        for group in groups:
            writer.write_table(group, row_group_size=len(group))


def test_verify_refit_reproduces_honest_runs_and_catches_tampered_ones(tiny_run, tmp_path,
                                                                       capsys):
    """`modelvar verify --refit N` (issue 20): recorded runs fitted again from their recorded
    seeds and hparams reproduce their stored predictions bit for bit; flipped labels and
    reordered rows in a file whose metadata is intact are caught and described."""
    import shutil

    from modelvar.cli import main
    from modelvar.pipeline.refit import recorded_runs, refit_sample

    results = tmp_path / "results"
    shutil.copytree(tiny_run, results)
    runs = recorded_runs(results)
    assert len(runs) == 24  # 2 classifiers x 2 cells x 2 repeats x 3 runs
    honest = refit_sample(results, 6, seed=1)
    assert len(honest) == 6 and all(r.exact for r in honest), [r.describe() for r in honest]
    assert main(["verify", str(results), "--refit", "3"]) == 0
    assert "refit 3 of 24 recorded runs (sample seed 0): 3 reproduce their stored " \
        "predictions exactly, 0 differ" in capsys.readouterr().out

    path = predictions(results)

    def flip(columns, mask):
        columns["y_pred"][np.flatnonzero(mask)[:20]] = \
            (columns["y_pred"][np.flatnonzero(mask)[:20]] + 1) % 4

    def shuffle(columns, mask):
        rows = np.flatnonzero(mask)
        for name in columns:
            if name not in ("repeat", "run"):
                columns[name][rows] = columns[name][rows[::-1]]

    _rewrite_run(path, 0, 1, flip)
    _rewrite_run(path, 1, 2, shuffle)
    found = {(r.cell, r.repeat, r.run): r for r in refit_sample(results, len(runs))
             if r.path.endswith(path.name) and "lr-sgd" in r.path}
    assert sum(not r.exact for r in found.values()) == 2
    flipped = next(r for r in found.values() if not r.exact and not r.reordered)
    assert 0 < flipped.labels_changed <= 20 / 212 + 1e-9
    reordered = next(r for r in found.values() if r.reordered)
    assert reordered.labels_changed == 0 and "out of order" in reordered.describe()
    assert main(["verify", str(results), "--refit", "24"]) == 1
    out = capsys.readouterr().out
    assert "22 reproduce their stored predictions exactly, 2 differ" in out
    # the metrics jobs' reader refuses the reordered rows instead of pairing wrong predictions
    from modelvar.pipeline.predictions import iter_repeats
    from modelvar.table_files import TableReadError

    with pytest.raises(TableReadError, match="not in the order the fit job writes"):
        list(iter_repeats([path]))
    assert len(list(iter_repeats([predictions(results, "svm-sgd")]))) == 4  # cells x repeats


def test_changes_rerun_from_the_results_folders_own_record(tmp_path):
    """Issue 20's fault battery: Snakemake's metadata gone, a dataset replaced by content with an
    older time, a truncated table, a deleted manifest, a log-only setting changed."""
    import os
    import shutil

    from conftest import REPO

    source = tmp_path / "mine.csv"
    shutil.copy(REPO / "src/modelvar/data/embedded/vehicle.csv", source)
    study = {"root_seed": 7, "results_dir": "results",
             "datasets": {"mine": {"source": "file", "path": str(source), "target": "Class"}},
             "classifiers": ["lr-sgd"], "split": {"repeats": 2, "runs": 3},
             "perturbation": {"downsample": [1.0], "model_seed": ["fixed"]},
             "simulation": {"enabled": False}}

    def config(**changes):
        path = tmp_path / "study.yaml"
        path.write_text(yaml.safe_dump({**study, **changes}))
        return path

    def dry_run(**changes):
        proc = snakemake(tmp_path, config(**changes), "-n", "--cores", "1")
        output = proc.stdout + proc.stderr
        return ({} if "Nothing to be done" in output else job_counts(proc.stdout)), output

    snakemake(tmp_path, config(), "--cores", "2")
    assert dry_run()[0] == {}
    # the fit logs' warning threshold reruns no fit, only the findings, whose claims it changes
    perturbation = {**study["perturbation"], "warn_changed_below": 0.9}
    assert dry_run(perturbation=perturbation)[0] == {"findings": 1, "all": 1, "total": 2}
    # Snakemake's records gone, then a metrics setting changed: the metrics jobs rerun, no fit
    shutil.rmtree(tmp_path / ".snakemake")
    jobs, _ = dry_run(metrics={"ec_local_undefined": "zero"})
    assert jobs.get("pairwise_metrics") == 1 and "fit" not in jobs  # the batch of repeats
    assert dry_run()[0] == {}  # a dry run records nothing: back to the study's value
    # the dataset's content replaced by a copy dated 2001 (cp -p, rsync -a, unzip)
    replacement = tmp_path / "replacement.csv"
    lines = source.read_text().splitlines()
    first = lines[1].split(",")
    first[0] = str(float(first[0]) + 50)
    replacement.write_text("\n".join([lines[0], ",".join(first), *lines[2:]]) + "\n")
    os.utime(replacement, (1e9, 1e9))
    shutil.copy2(replacement, source)
    jobs, _ = dry_run()
    assert jobs.get("prepare_dataset") == 1 and jobs.get("fit") == 1  # the batch of repeats
    snakemake(tmp_path, config(), "--cores", "2")
    # a truncated table, a deleted manifest (both of the batch of repeats 0-1): their jobs rerun
    results = tmp_path / "results"
    summary = next((results / "aggregated" / "summary").rglob("*.r0-1.parquet"))
    with open(summary, "r+b") as fh:
        fh.truncate(100)
    next((results / ".modelvar" / "manifests" / "fit").rglob("*.r0-1.json")).unlink()
    jobs, output = dry_run()
    assert "missing or damaged output: pairwise_metrics/mine/lr-sgd" in output
    assert jobs.get("pairwise_metrics") == 1 and jobs.get("fit") == 1
    snakemake(tmp_path, config(), "--cores", "2")
    from modelvar.table_files import verify

    assert verify(results)[0] == []


@pytest.mark.parametrize("files", [
    ["config/config.yaml"], ["config/preliminary.yaml"],
    ["config/full-study.yaml", "config/openml/seed-study.yaml"],
    ["config/full-study.yaml", "config/openml/kadra.yaml"],
])
def test_the_rules_and_the_findings_job_agree_on_its_figures(files, tmp_path):
    """For every shipped config, the findings job's figures as the rule declares them (its
    outputs) are what the job draws from the arguments the rule gives it
    (modelvar.findings.figures.findings_figures, asked by both), and the job gets the config's
    warn_changed_below and equivalence margin."""
    import shlex

    from conftest import REPO, completed
    from modelvar.findings.figures import findings_figures
    from modelvar.models.registry import classifier_names
    from modelvar.running.workflow_config import resolve

    paths = [str(REPO / f) for f in files]
    config = completed(resolve(["--configfile", *paths]).config)
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
         str(tmp_path), "--configfile", *paths, "-n", "-p", "--forceall", "--cores", "1"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (job,) = [(rule, out) for rule, _, out in dry_run_jobs(proc.stdout) if rule == "findings"]
    declared = sorted(re.sub(r"\.png$", "", f.rsplit("/", 1)[1]) for f in job[1]
                      if "/findings/" in f and f.endswith(".png"))
    # the findings job's arguments reach it in a file (modelvar.running.job_commands)
    (command,) = [line for line in proc.stdout.splitlines()
                  if "printf '%s\\0' findings " in line]
    words = shlex.split(command.split("printf '%s\\0' findings ", 1)[1]
                        .split(' > "$args_file"')[0])

    def arg(name):
        return words[words.index(name) + 1]

    drawn = findings_figures(arg("--design"), classifier_names(config),
                             json.loads(arg("--perturbation")),
                             datasets=sum(w.endswith(".json") and "/datasets/" in w
                                          for w in words))
    assert declared == sorted(drawn)
    assert float(arg("--warn-changed-below")) == config["perturbation"]["warn_changed_below"]
    assert float(arg("--equivalence-ratio")) == config["findings"]["equivalence_ratio"]


def _drawn(monkeypatch):
    """Capture the figures the plotting functions save (their Figure objects and paths)."""
    from modelvar.plots import common, findings, study

    saved = []

    def keep(fig, out_paths):
        saved.append(fig)
        real_save(fig, out_paths)

    real_save = common.save_figure
    for module in (study, findings):
        monkeypatch.setattr(module, "save_figure", keep)
    return saved


def test_figures_at_a_journals_single_column_fit_it_and_show_few_values_as_dots(
        tiny_run, tmp_path, monkeypatch):
    """At ``figures.width: single`` every dataset figure of the tiny study is at most 3.5 in
    (+0.15) wide with no text below 7 pt; its groups of 6 runs are drawn as dots, never as
    violins (a density of 6 values invents its shape); its palette is the Okabe–Ito one."""

    from matplotlib.collections import PolyCollection
    from PIL import Image

    from modelvar.pipeline.result_tables import read_table
    from modelvar.plots import common, study
    from modelvar.study import figures as registry
    from modelvar.study.design import DatasetDesign

    saved = _drawn(monkeypatch)
    roles = DatasetDesign.from_json(
        (tiny_run / "design" / "vehicle.json").read_text()).roles()
    common.set_width("single")
    try:
        for spec in registry.DATASET_FIGURES:
            if spec.part == "grouped":
                continue
            frames = [read_table(tiny_run, t, "vehicle") for t in spec.tables]
            path = tmp_path / f"{spec.name}.png"
            getattr(study, spec.name)(*frames, roles, "vehicle", [path])
            width = Image.open(path).size[0] / 150
            assert width <= 3.5 + common.WIDTH_SLACK_IN, (spec.name, width)
            assert common.small_text(saved[-1]) == [], spec.name
    finally:
        common.set_width("double")
    grid = saved[[s.name for s in registry.DATASET_FIGURES if s.part != "grouped"].index(
        "gross_accuracy_grid")]
    assert not any(isinstance(c, PolyCollection) for ax in grid.axes for c in ax.collections)
    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
                 "#000000"}
    names = ["lr-sgd", "svm-sgd", "xgb", "mlp", "a", "b", "c", "d"]
    colours = common.classifier_colours(names)
    assert set(colours.values()) == okabe_ito and len(set(colours.values())) == 8
    assert len(set(common.classifier_markers(names).values())) == 8
