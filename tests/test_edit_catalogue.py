"""Code versions that follow results, and repeats that add (issue 54): each edit of the
catalogue (tests/edit_catalogue.py), made to a copy of the workflow after the tiny study has
run, schedules exactly the jobs whose outputs it changes: no fit or metrics job for a colour,
a comment, a docstring, a caption or a resource default; the findings alone for a sentence;
every fit for a real change to a fit; only the new repeat's fits for one more repeat."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml

from conftest import CONFIGS, REPO, copy_workflow, dry_run_jobs, snakemake
from edit_catalogue import CATALOGUE

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A copy of the workflow and the tiny study run with it (both repeats, every rule but
    the simulation's)."""
    root = tmp_path_factory.mktemp("catalogue")
    workflow = copy_workflow(root / "workflow")
    work = root / "work"
    work.mkdir()
    config = work / "study.yaml"
    shutil.copy(CONFIGS / "tiny.yaml", config)
    snakemake(work, config, "--cores", "2", snakefile=workflow / "Snakefile")
    return workflow, work, config


def scheduled(workflow, work, config) -> list[tuple[str, list[str]]]:
    proc = snakemake(work, config, "-n", "--cores", "1", snakefile=workflow / "Snakefile")
    text = proc.stdout + proc.stderr
    if "Nothing to be done" in text:
        return []
    return [(rule, outputs) for rule, _, outputs in dry_run_jobs(proc.stdout) if rule != "all"]


def fit_jobs(jobs) -> list[tuple[str, str, str]]:
    """(dataset, classifier, job) of the scheduled fit jobs, from their predictions files."""
    out = []
    for rule, outputs in jobs:
        if rule in ("fit", "fit_mlp"):
            path = next(p for p in outputs if "/predictions/" in p)
            dataset, classifier, job = re.search(
                r"dataset=([^/]+)/classifier=([^/]+)/(.+)\.parquet$", path).groups()
            out.append((dataset, classifier, job))
    return out


@pytest.mark.parametrize("edit", CATALOGUE, ids=[e.name for e in CATALOGUE])
def test_an_edit_reruns_what_it_changes_and_nothing_else(finished, edit, tmp_path):
    from modelvar.planning.config_check import check_config, read_schema
    from modelvar.planning.plan import plan_study

    workflow, work, config = finished
    saved = {p: p.read_bytes() for p in [*workflow.rglob("*.py"), *workflow.rglob("*.rst"),
                                         config]}
    try:
        edit.apply(workflow, config)
        jobs = scheduled(workflow, work, config)
    finally:
        for path, data in saved.items():
            path.write_bytes(data)
    rules = {rule for rule, _ in jobs}
    if edit.reruns is not None:
        assert rules == set(edit.reruns), (edit.name, sorted(rules))
    fits = fit_jobs(jobs)
    if edit.name == "one more repeat":
        # only the new repeat's fits: a third of the three repeats', every one of repeat 2
        data = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
        data["split"]["repeats"] += 1
        data["results_dir"] = str(work / "results")  # its recorded batches of repeats
        study = check_config(data, read_schema(REPO / "workflow/schemas/config.schema.yaml"))
        plan = plan_study(data, study.schemas)
        assert fits and all(job.endswith(".r2") for _, _, job in fits), fits
        counted = sum(plan.fit_job(*key).fits for key in fits)
        total = sum(cp.fits for ds in plan.datasets.values() for cp in ds.classifiers.values())
        assert counted * 3 == total
    elif edit.name == "one more dataset":
        assert fits and {ds for ds, _, _ in fits} == {"iris"}
        assert {"prepare_dataset", "design", "findings", "dataset_overview"} <= rules
    elif edit.name == "one more classifier":
        assert fits and {clf for _, clf, _ in fits} == {"xgb"}
        # every dataset's design now holds it: its figures and the findings draw it
        assert {"design", "figures", "findings"} <= rules
