"""What a study's workflow makes, and what each of its rules may use: decided here, once.

The rules (``rules/*.smk``) ask this module while the workflow loads; the jobs and
``modelvar plan`` ask it too, so that the two never decide apart:

* :data:`RULES`: one row per rule: the job command it runs (``python -m modelvar COMMAND``,
  whose import closure is its code version), its resource group, and the wildcards its
  manifest is keyed by;
* :func:`resources`: the threads, memory and time limit of a resource group (the config's
  ``resources.<group>``, else :data:`RESOURCE_DEFAULTS`);
* :data:`FINDINGS_TABLES`: the tables the findings job writes (its figures:
  :func:`modelvar.findings.figures.findings_figures`);
* :func:`planned_tables`, :func:`planned_manifests`: every table the plan's jobs write, and
  every job's manifest (what ``all`` asks for).

Imports no plotting or machine-learning library: the workflow reads it while it loads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelvar.pipeline import result_tables

#: a study's plan (:class:`modelvar.planning.plan.StudyPlan`, which imports this module)
StudyPlan = Any


@dataclass(frozen=True)
class Rule:
    """One rule of the workflow: its ``name``, the ``command`` of ``python -m modelvar`` it
    runs, its resource ``group`` (:func:`resources`) and the ``wildcards`` that key its
    manifest (none: one job)."""

    name: str
    command: str
    group: str
    wildcards: tuple[str, ...] = ()


#: every rule but ``all``, in the order data flows (``modelvar verify`` lists problems upstream
#: first, so that the first fix command regenerates the cause before what was made from it)
RULES: tuple[Rule, ...] = (
    Rule("prepare_dataset", "prepare", "prepare", ("dataset",)),
    Rule("design", "design", "prepare", ("dataset",)),
    Rule("tune", "tune", "tune", ("dataset", "classifier")),
    Rule("tune_gpu", "tune", "tune_gpu", ("dataset", "classifier")),
    Rule("probe_data", "probe-data", "fit", ("dataset", "classifier")),
    Rule("fit", "fit", "fit", ("dataset", "classifier", "job")),
    Rule("fit_mlp", "fit", "fit_mlp", ("dataset", "classifier", "job")),
    Rule("pairwise_metrics", "pairwise", "pairwise", ("dataset", "classifier", "job")),
    Rule("grouped_metrics", "grouped", "grouped", ("dataset", "classifier", "job")),
    Rule("dataset_overview", "dataset-overview", "plot"),
    Rule("figures", "figures", "plot", ("dataset",)),
    Rule("group_disparities_figure", "figures", "plot", ("dataset",)),
    Rule("findings", "findings", "aggregate"),
    Rule("simulate_metrics", "simulate", "simulate", ("n_classes",)),
    Rule("evaluate_simulation", "evaluate-simulation", "simulate"),
    Rule("dirichlet_simulation", "dirichlet", "simulate"),
)
_RULES = {r.name: r for r in RULES}
#: the job commands of the rules (each rule's code version is its command's import closure)
JOB_COMMANDS: tuple[str, ...] = tuple(dict.fromkeys(r.command for r in RULES))

#: (threads, mem_mb, runtime in minutes) of each resource group, unless the config's
#: ``resources.<group>`` says otherwise. Fit, metrics and grouped jobs get mem_mb and runtime
#: from the plan (its cost model), which the config's values can raise but not lower.
RESOURCE_DEFAULTS: dict[str, tuple[int, int, int]] = {
    "prepare": (1, 1000, 10),
    "tune": (1, 2000, 240),
    "tune_gpu": (1, 2000, 240),
    "fit": (1, 0, 0),
    "fit_mlp": (1, 0, 0),
    "pairwise": (1, 0, 0),
    "grouped": (1, 0, 0),
    "aggregate": (1, 4000, 30),
    "plot": (1, 2000, 20),
    "simulate": (1, 2000, 30),
}
#: the groups of the GPU-tagged rules, and the CPU group whose configured values they take
#: where the config gives them none
GPU_GROUPS = {"fit_mlp": "fit", "tune_gpu": "tune"}


def rule(name: str) -> Rule:
    try:
        return _RULES[name]
    except KeyError:
        raise ValueError(f"unknown rule {name!r}; known: {list(_RULES)}") from None


def resources(config: dict, group: str) -> dict[str, int]:
    """``threads``, ``mem_mb`` and ``runtime`` (minutes) of a resource group: the config's
    ``resources.<group>``, for a GPU group else its CPU group's (:data:`GPU_GROUPS`), else
    :data:`RESOURCE_DEFAULTS`."""
    configured = config["resources"]
    fallback = configured.get(GPU_GROUPS.get(group, group), {})
    own = configured.get(group, {})
    return {key: own.get(key, fallback.get(key, default))
            for key, default in zip(("threads", "mem_mb", "runtime"), RESOURCE_DEFAULTS[group],
                                    strict=True)}


def fit_threads(config: dict, classifier: str) -> int:
    """The threads of a classifier's fit jobs (its fit rule's group)."""
    from modelvar.models.registry import fit_rule

    return resources(config, rule(fit_rule(classifier, config["classifier_settings"])).group)[
        "threads"]


def design_path(results: str | Path, dataset: str) -> str:
    """Where a dataset's design (:class:`modelvar.study.design.DatasetDesign`) is written."""
    return f"{results}/design/{dataset}.json"


def manifest_path(results: str | Path, rule_name: str) -> str:
    """Where a rule's job records what it wrote (:class:`modelvar.table_files.Manifest`;
    ``modelvar verify`` reads it), with the rule's wildcards as ``{placeholders}``."""
    wildcards = rule(rule_name).wildcards
    key = Path(*(f"{{{w}}}" for w in wildcards)).as_posix() if wildcards else "job"
    return f"{results}/.modelvar/manifests/{rule_name}/{key}.json"


# ------------------------------------------------------------------------------- the findings
#: the study tables the findings job writes (``RESULTS/aggregated/study/<name>.parquet``)
FINDINGS_TABLES = ("sources", "study_sources", "margins", "comparison", "study_comparison",
                   "study_leaders",
                   "combined", "dose_response", "dose_summary", "components", "study_components",
                   "claims", "verdicts", "blocks", "strength")
#: the aggregated tables the findings job reads, of every dataset
FINDINGS_INPUT_TABLES = ("summary", "agreement", "runs")


# ---------------------------------------------------------------------- what the jobs write
def _classifier_plans(plan: StudyPlan) -> Iterable[tuple[str, str, object]]:
    for ds, dataset_plan in plan.datasets.items():
        for clf, clf_plan in dataset_plan.classifiers.items():
            yield ds, clf, clf_plan


def dataset_tables(results: str | Path, plan: StudyPlan, dataset: str,
                   table: str) -> list[str]:
    """Every file of one table of a dataset: per (classifier, job) of the plan (the runs
    table per fit job, the others per metrics job)."""
    out = []
    for clf, clf_plan in plan.datasets[dataset].classifiers.items():
        jobs = clf_plan.fit_jobs if table == "runs" else clf_plan.metrics_jobs
        out += [result_tables.table_path(results, table, dataset, clf, job.id) for job in jobs]
    return out


def planned_tables(results: str | Path, plan: StudyPlan, grouped: Iterable[str]) -> list[str]:
    """Every table and predictions file the plan's fit, metrics and grouped jobs write
    (``grouped``: the datasets with metrics by group)."""
    grouped = set(grouped)
    out = []
    for ds, clf, clf_plan in _classifier_plans(plan):
        for job in clf_plan.fit_jobs:
            out += [result_tables.predictions_path(results, ds, clf, job.id),
                    result_tables.table_path(results, "runs", ds, clf, job.id)]
        names = result_tables.METRIC_TABLES + (
            result_tables.GROUPED_TABLES if ds in grouped else ())
        out += [result_tables.table_path(results, t, ds, clf, job.id)
                for job in clf_plan.metrics_jobs for t in names]
    return out


def planned_manifests(results: str | Path, config: dict, plan: StudyPlan) -> list[str]:
    """The manifest of every job (each records every output of its job but the log), in the
    order of :data:`RULES` (the order data flows): what ``all`` asks for, and what
    :func:`job_counts` counts."""
    from modelvar.models.registry import classifier_names, fit_rule, tune_rule

    settings = config["classifier_settings"]
    datasets = list(config["datasets"])
    grouped = config["grouped"]["by"]
    simulation = config["simulation"]
    by_rule: dict[str, list[dict]] = {r.name: [] for r in RULES}
    for ds in datasets:
        by_rule["prepare_dataset"].append({"dataset": ds})
        by_rule["design"].append({"dataset": ds})
        by_rule["figures"].append({"dataset": ds})
        if ds in grouped:
            by_rule["group_disparities_figure"].append({"dataset": ds})
        if config["hparams"] == "tuned":
            for clf in classifier_names(config):
                by_rule[tune_rule(clf, settings)].append({"dataset": ds, "classifier": clf})
    by_rule["probe_data"] += [{"dataset": ds, "classifier": clf} for ds, clf in plan.probe_jobs]
    by_rule["dataset_overview"].append({})
    by_rule["findings"].append({})
    for ds, clf, clf_plan in _classifier_plans(plan):
        key = {"dataset": ds, "classifier": clf}
        by_rule[fit_rule(clf, settings)] += [{**key, "job": j.id} for j in clf_plan.fit_jobs]
        metrics = [{**key, "job": j.id} for j in clf_plan.metrics_jobs]
        by_rule["pairwise_metrics"] += metrics
        if ds in grouped:
            by_rule["grouped_metrics"] += metrics
    if simulation["enabled"]:
        by_rule["simulate_metrics"] += [{"n_classes": c} for c in simulation["n_classes"]]
        by_rule["evaluate_simulation"].append({})
        by_rule["dirichlet_simulation"].append({})
    return [manifest_path(results, rule_name).format(**wildcards)
            for rule_name, jobs in by_rule.items() for wildcards in jobs]


def job_counts(results: str | Path, config: dict, plan: StudyPlan) -> dict[str, int]:
    """How many jobs each rule runs (the rules in :data:`RULES`' order, those with none left
    out): counted from :func:`planned_manifests`, the list ``all`` asks for."""
    from modelvar.table_files import rule_of_manifest

    counts: dict[str, int] = {}
    for path in planned_manifests(results, config, plan):
        rule_name = rule_of_manifest(path)
        counts[rule_name] = counts.get(rule_name, 0) + 1
    return counts


# ---------------------------------------------------------------------- a run's end, its report
def stale_tables_messages(results: str | Path, plan: StudyPlan, grouped: Iterable[str], *,
                          warn_foreign: bool) -> list[str]:
    """Set aside the jobs no longer in the plan whose partitions' planned tables all exist
    (:func:`modelvar.pipeline.result_tables.set_aside_stale`; at a run's start, for an earlier
    interrupted run, and at its end): nothing is deleted, and a config that plans them again
    gets them back; returns what to tell the user."""
    aside = result_tables.set_aside_stale(
        results, planned_tables(results, plan, grouped),
        [(ds, clf) for ds, dataset_plan in plan.datasets.items()
         for clf in dataset_plan.classifiers])
    out = []
    if aside.jobs:
        where = Path(results) / result_tables.SET_ASIDE_DIR
        out.append(f"set aside {len(aside.files)} file(s) of {len(aside.jobs)} job(s) that the "
                   f"config no longer plans (fewer repeats, a level removed, or fits regrouped), "
                   f"e.g. {aside.files[0] if aside.files else aside.jobs[0]}, in {where}: "
                   "nothing was deleted, and a config that plans them again reuses them")
    if aside.foreign and warn_foreign:
        out.append(f"warning: {len(aside.foreign)} parquet file(s) in the results' table "
                   f"folders were not written by this workflow, e.g. {aside.foreign[0]}; they "
                   "are left alone and not read, but pandas.read_parquet of the folder would "
                   "read them")
    return out


def run_summary(results: str | Path, plan: StudyPlan, notes: Iterable[str] = ()) -> str:
    """What a finished run holds (:func:`modelvar.pipeline.result_tables.study_summary`), with
    the plan's estimate of every fit job (scaled by its probe job's measurement where one ran),
    and ``notes`` of the run (e.g. the jobs Snakemake restarted,
    :func:`modelvar.running.snakemake_log.restarts_line`)."""
    from modelvar.planning.probe_jobs import ProbeResult, probe_path

    def factor(ds: str, clf: str) -> float:  # a probe job's measurement replaces the profile's
        path = Path(probe_path(results, ds, clf))
        return ProbeResult.read(path).factor if (ds, clf) in plan.probe_jobs \
            and path.is_file() else 1.0

    estimates = {
        result_tables.table_path(results, "runs", ds, clf, job.id):
            (f"{ds} {clf} {job.id}", job.seconds * factor(ds, clf))
        for ds, clf, clf_plan in _classifier_plans(plan) for job in clf_plan.fit_jobs}
    runs = [p for ds in plan.datasets for p in dataset_tables(results, plan, ds, "runs")]
    summary = result_tables.study_summary(runs, results, estimates)
    if plan.schedule is not None:
        summary += "".join(f"\n  sequential: {line}" for line in sequential_lines(results))
    return summary + "".join(f"\n  note: {note}" for note in notes)


def sequential_lines(results: str | Path) -> list[str]:
    """A sequential study's repeats per block and why each stopped, from its findings
    (:func:`modelvar.study.stopping.block_lines`); where blocks are still open, what runs the
    next round (a run of Snakemake alone is one round)."""
    import pandas as pd

    from modelvar.study.stopping import OPEN, block_lines

    path = Path(results) / "aggregated" / "study" / "blocks.parquet"
    if not path.is_file():
        return []
    blocks = pd.read_parquet(path)
    lines = block_lines(blocks)
    if (blocks["status"] == OPEN).any():
        lines.append("this round is done and blocks are still open: scripts/run.sh runs the "
                     "rounds to the end (by hand: python -m modelvar sequential next -- ARGS, "
                     "then Snakemake with the same ARGS, until it exits with 0)")
    return lines


def report_landing(results: str | Path, guide: Path) -> str:
    """The path of the report's first page (Snakemake's global description): the findings'
    answer (``RESULTS/findings/answer.rst``: headline sentences and figure) above the reading
    ``guide``, written to ``RESULTS/.modelvar/report-landing.rst`` when it changes; the guide
    alone before the findings exist."""
    from modelvar.table_files import write_text

    answer = Path(results, "findings", "answer.rst")
    if not answer.is_file():
        return str(guide)
    landing = Path(results, ".modelvar", "report-landing.rst").resolve()
    text = (answer.read_text() + "\nHow to read this report\n-----------------------\n\n"
            + guide.read_text())
    if not landing.is_file() or landing.read_text() != text:
        write_text(text, landing)
    return str(landing)


def design_change_lines(results: str | Path, config: dict, plan: StudyPlan) -> list[str]:
    """Where the plan's cells of a dataset × classifier differ from those its design file
    records (``RESULTS/design/NAME.json``: a changed ``design`` or level): a line saying so
    before any job, with how many of its fit jobs are not done under the new plan. Fit jobs
    hold chunks of cells, so a design that drops cells (``both`` → ``factorial``) regroups the
    jobs that held the dropped cells beside others: those others are fitted again (the same
    runs, the same predictions), and the jobs the plan no longer has are set aside
    (:func:`stale_tables_messages`), never deleted."""
    from modelvar.models.registry import fit_rule
    from modelvar.study.design import DatasetDesign

    settings = config["classifier_settings"]
    out = []
    for ds, dataset_plan in plan.datasets.items():
        path = Path(design_path(results, ds))
        try:
            before = DatasetDesign.from_json(path.read_text())
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for clf, clf_plan in dataset_plan.classifiers.items():
            old = before.classifiers.get(clf)
            now = {c for job in clf_plan.fit_jobs for c in job.cells}
            if old is None or set(old.cells) == now:
                continue
            pattern = manifest_path(results, fit_rule(clf, settings))
            todo = [job for job in clf_plan.fit_jobs if not Path(pattern.format(
                dataset=ds, classifier=clf, job=job.id)).is_file()]
            gone, added = set(old.cells) - now, now - set(old.cells)
            out.append(f"{ds}, {clf}: the config's cells differ from those the study fitted "
                       f"({len(gone)} dropped, {len(added)} added): {len(todo)} of its "
                       f"{len(clf_plan.fit_jobs)} fit jobs run, fits of cells it had already "
                       "fitted among them where a job's cells changed (fit jobs hold chunks of "
                       "cells; the same runs give the same predictions); jobs no longer "
                       "planned are set aside, not deleted")
    return out
