"""``modelvar plan``: the study's compute plan as text, before anything runs.

For the jobs that :mod:`modelvar.planning.plan` makes, it prints the jobs per rule and why there
are as many fit jobs (:func:`why_the_fit_jobs`); per dataset its shape, cells, fits, estimated CPU
core-hours (fits, tuning and metrics) and MLP hours, storage (prediction files and metric tables),
the largest declared memory of a job and the longest job; the totals; and the biggest items (the
datasets that cost most time and storage, the longest jobs).
Estimates come from the cost model; check them against a finished run with
``benchmarks/bench_plan.py`` and recalibrate with ``modelvar plan --calibrate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from modelvar.models.registry import classifier_names, fit_rule, spec
from modelvar.planning.cost_model import onehot_share
from modelvar.planning.outputs import job_counts
from modelvar.planning.plan import (
    STARTUP_SECONDS,
    FitJob,
    StudyPlan,
    epochs_of,
    few_valued_share,
    gpu_speedup_at,
    noisy_share,
    speedup_setting,
)
from modelvar.planning.repeat_batches import STARTUP_MULTIPLE
from modelvar.study import families


def _speedup_text(speedup: float | dict[int, float]) -> str:
    """'8 x one CPU core', or by a fit's seconds on one core ({from seconds: speed-up}): '5.3 x
    one CPU core for fits below 200 s of one core, 46 x from 200 s'."""
    if not isinstance(speedup, dict):
        return f"{speedup:g} x one CPU core"
    keys = sorted(speedup)
    if len(keys) == 1:
        return f"{speedup[0]:g} x one CPU core"
    parts = [f"{speedup[0]:g} x one CPU core for fits below {keys[1]:,} s of one core"]
    for k, upper in zip(keys[1:], keys[2:] + [None], strict=True):
        parts.append(f"{speedup[k]:g} x from {k:,} s" + (f" to {upper:,} s" if upper else ""))
    return ", ".join(parts)


def _gpu_text(plan: StudyPlan, config: dict) -> str:
    """What the GPU hours are: the speed-ups they assume, per classifier on a GPU."""
    speedups = plan.gpu_speedups
    if all(v == 1 for v in speedups.values()):
        return ("CPU core; GPU speed-up unmeasured (jobs.gpu_speedup = 1; make bench-mlp on a "
                "GPU measures it)")
    settings = config["classifier_settings"]
    own = any("gpu_speedup" in settings.get(clf, {}) for clf in speedups)
    source = "jobs.gpu_speedup" + (", classifier_settings.NAME.gpu_speedup" if own else "")
    parts = [(f"{clf} " if len(speedups) > 1 else "")
             + (_speedup_text(v) if v != 1 else "unmeasured: 1 x one CPU core")
             for clf, v in speedups.items()]
    # tuning fits its trials one at a time, with their own widths: not the batched fits that a
    # batched classifier's gpu_speedup measures, but its gpu_speedup_alone (default: one core)
    tuned = []
    for clf in speedups:
        if spec(clf).batched and config.get("hparams") == "tuned":
            alone = alone_speedup(config, clf)
            tuned.append(f"; {clf} tuning one fit at a time: " + (
                f"{_speedup_text(alone)} (classifier_settings.{clf}.gpu_speedup_alone)"
                if alone != 1 else "at one CPU core's speed (its gpu_speedup_alone unmeasured)"))
    return f"GPU ({source}: {'; '.join(parts)}{''.join(tuned)})"


def _hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:,.0f} h" if hours >= 100 else f"{hours:,.1f} h" if hours >= 0.1 else \
        f"{seconds / 60:.1f} min"


def _bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:.0f} B"


@dataclass
class DatasetTotals:
    name: str
    rows: int
    d: int
    classes: int
    form: str
    cells: int
    collapsed: list[str]
    fits: int = 0
    fit_jobs: int = 0
    metrics_jobs: int = 0
    cpu_seconds: float = 0.0   # CPU classifiers' fits, tuning, metrics
    gpu_seconds: float = 0.0   # GPU-tagged classifiers' fits (at jobs.gpu_speedup)
    storage: float = 0.0       # bytes: predictions + tables
    prediction_bytes: float = 0.0
    max_mem_mb: int = 0
    longest: tuple[float, str] = (0.0, "")
    per_classifier: dict[str, float] = field(default_factory=dict)


def tuning_seconds(plan: StudyPlan, config: dict, dataset: str, classifier: str) -> float:
    """Random-search tuning: trials × folds fits on (1 − 1/folds) of the tuning pool, one at a
    time; on a GPU at the classifier's speed-up, or for one whose fit jobs train their runs
    together (the MLP), whose ``gpu_speedup`` is that of a batch, at its ``gpu_speedup_alone``
    (default 1: one core's speed)."""
    from modelvar.planning.cost_model import load

    if config.get("hparams") != "tuned":
        return 0.0
    trials, folds = config["tuning"]["trials"], config["tuning"]["folds"]
    shape = plan.datasets[dataset].shape
    n = shape.n_rows * (1 - config["split"]["test_fraction"]) * (1 - 1 / folds)
    cost = load(config["jobs"].get("cost_model"))
    epochs = epochs_of(classifier, config)
    seconds = cost.seconds(classifier, n, shape.d, shape.n_classes, epochs,
                           onehot_share=onehot_share(shape.n_numeric, shape.d),
                           few_valued_share=few_valued_share(None, shape.n_few_valued, shape.d))
    if classifier in plan.gpu_speedups:
        speedup = (alone_speedup(config, classifier) if spec(classifier).batched
                   else plan.gpu_speedups[classifier])
        seconds /= gpu_speedup_at(speedup, seconds)
    return trials * folds * seconds


def alone_speedup(config: dict, classifier: str) -> float | dict[int, float]:
    """``classifier_settings.NAME.gpu_speedup_alone``: the GPU speed-up of one fit at a time of a
    classifier whose fit jobs batch their runs (1 unless measured: ``make bench-mlp`` prints
    it as "sequential")."""
    own = config["classifier_settings"].get(classifier, {})
    return speedup_setting(own.get("gpu_speedup_alone", 1.0))


def dataset_totals(plan: StudyPlan, config: dict) -> list[DatasetTotals]:
    out = []
    for name, ds in plan.datasets.items():
        collapsed = [*ds.collapsed, *(f"{family} for {clf}" for clf, cp in ds.classifiers.items()
                                      for family in cp.collapsed)]
        t = DatasetTotals(name, ds.shape.n_rows, ds.shape.d, ds.shape.n_classes,
                          ds.probabilities, len(ds.cells), collapsed)
        for clf, cp in ds.classifiers.items():
            tune = tuning_seconds(plan, config, name, clf)
            fit = cp.fit_seconds + STARTUP_SECONDS * len(cp.fit_jobs)
            metrics = sum(j.seconds for j in cp.metrics_jobs)
            if clf in plan.gpu_speedups:
                t.gpu_seconds += fit + tune
            else:
                t.cpu_seconds += fit + tune
            t.cpu_seconds += metrics
            t.per_classifier[clf] = fit + tune
            t.fits += cp.fits
            t.fit_jobs += len(cp.fit_jobs)
            t.metrics_jobs += len(cp.metrics_jobs)
            t.prediction_bytes += cp.prediction_bytes
            t.storage += cp.prediction_bytes + cp.table_bytes
            for job in [*cp.fit_jobs, *cp.metrics_jobs]:
                t.max_mem_mb = max(t.max_mem_mb, job.mem_mb)
            for job in cp.fit_jobs:
                if job.seconds > t.longest[0]:
                    t.longest = (job.seconds, f"{clf} {job.id}")
        out.append(t)
    return out


def why_the_fit_jobs(plan: StudyPlan) -> str:
    """Why the plan has its fit jobs (:func:`modelvar.planning.plan._plan_classifier`): per
    dataset × classifier block, batches of whole repeats (each at least
    ``STARTUP_MULTIPLE`` start-ups of fitting where the block has the repeats, at most the
    target: :mod:`modelvar.planning.repeat_batches`), counted by their repeats, and the parts of
    repeats too long for one job (split by cells and runs); a metrics job per batch or split
    repeat."""
    jobs: list[FitJob] = [job for ds in plan.datasets.values()
                          for cp in ds.classifiers.values() for job in cp.fit_jobs]
    batches = [job for job in jobs if job.metrics_job == job.id]
    one = sum(len(job.repeats) == 1 for job in batches)
    longer = sorted(len(job.repeats) for job in batches if len(job.repeats) > 1)
    blocks = sum(len(ds.classifiers) for ds in plan.datasets.values())
    metrics = sum(len(cp.metrics_jobs) for ds in plan.datasets.values()
                  for cp in ds.classifiers.values())
    counted = [f"{one:,} of one repeat"] if one else []
    if longer:
        counted.append(f"{len(longer):,} of {longer[0]}" + (
            f"-{longer[-1]}" if longer[-1] > longer[0] else "") + " repeats")
    parts = len(jobs) - len(batches)
    return (
        f"  why {len(jobs):,} fit jobs ({blocks:,} dataset x classifier blocks): "
        f"{len(batches):,} batches of whole repeats ({', '.join(counted)}), each sized to at "
        f"least {STARTUP_MULTIPLE} fit-job start-ups ({STARTUP_SECONDS:g} s each) of estimated "
        "fitting unless its block has fewer repeats, and to at most jobs.target_minutes"
        + (f"; {parts:,} parts of repeats longer than jobs.target_minutes, split by cells and "
           "runs" if parts else "")
        + f"; a metrics job per batch or split repeat ({metrics:,})")


def sequential_lines(plan: StudyPlan, config: dict) -> list[str]:
    """A sequential study's looks and prices (:func:`modelvar.planning.rounds.price_lines`)."""
    if plan.schedule is None:
        return []
    from modelvar.planning.rounds import price_lines

    return ["  " + line for line in price_lines(plan, config)]


def format_plan(plan: StudyPlan, config: dict, *, top: int = 5) -> str:
    """The plan as text (module docstring)."""
    totals = dataset_totals(plan, config)
    counts = job_counts(config["results_dir"], config, plan)
    n_clf = len(classifier_names(config))
    gpu_tagged = list(plan.gpu_speedups)
    gpu_col = bool(gpu_tagged)
    gpu_label = gpu_tagged[0].upper() if len(gpu_tagged) == 1 else "GPU"
    lines = [
        f"modelvar plan: {len(plan.datasets)} dataset(s) x {n_clf} classifier(s), design "
        f"{config['design']}, "
        + (f"{plan.repeats} repeats" if plan.schedule is None else
           "sequential repeats (this round's below)") + f" x {plan.runs} runs",
        f"  cost model: {plan.cost_source}",
        *(f"  cost of {clf}: {note}" for clf, note in plan.cost_notes.items()),
        *(f"  cost of {clf} on {name}: the cost model {note}"
          for (name, clf), note in plan.data_notes.items()),
        f"  fit jobs sized to <= {plan.target_minutes:g} min of estimated fitting "
        "(jobs.target_minutes); a job's runtime limit is its estimate x its bound + "
        f"{config['jobs']['runtime_margin_minutes']:g} min: {limit_bounds(plan)}",
        *sequential_lines(plan, config),
        "",
        "jobs per rule: " + ", ".join(f"{rule} {n:,}" for rule, n in counts.items())
        + f"; {sum(counts.values()):,} in all",
        why_the_fit_jobs(plan),
        "",
        f"{'dataset':<28}{'rows':>9}{'d':>6}{'C':>6} {'probs':<8}{'cells':>6}{'fits':>10}"
        f"{'jobs':>7}{'CPU':>10}" + (f"{gpu_label:>10}" if gpu_col else "")
        + f"{'storage':>11}{'mem/job':>9}  longest fit job",
    ]
    for t in totals:
        note = f" ({', '.join(t.collapsed)} collapsed)" if t.collapsed else ""
        lines.append(
            f"{t.name[:27]:<28}{t.rows:>9,}{t.d:>6,}{t.classes:>6} {t.form:<8}{t.cells:>6}"
            f"{t.fits:>10,}{t.fit_jobs + t.metrics_jobs:>7,}{_hours(t.cpu_seconds):>10}"
            + (f"{_hours(t.gpu_seconds):>10}" if gpu_col else "")
            + f"{_bytes(t.storage):>11}{t.max_mem_mb:>7,}MB  "
            f"{_hours(t.longest[0])} ({t.longest[1]}){note}")
    cpu = sum(t.cpu_seconds for t in totals)
    gpu_total = sum(t.gpu_seconds for t in totals)
    storage = sum(t.storage for t in totals)
    predictions = sum(t.prediction_bytes for t in totals)
    longest = max(totals, key=lambda t: t.longest[0])
    mem = max(totals, key=lambda t: t.max_mem_mb)
    gpu = _gpu_text(plan, config)
    gpu_text = f"{gpu_label} {_hours(gpu_total)} on one {gpu}; " if gpu_col else ""
    lines += [
        "",
        f"total: {sum(t.fits for t in totals):,} fits; CPU {_hours(cpu)} (core-hours: fits, "
        f"tuning, metrics); {gpu_text}storage {_bytes(storage)} "
        f"({_bytes(predictions)} of predictions); largest job memory {mem.max_mem_mb:,} MB "
        f"({mem.name}); longest fit job {_hours(longest.longest[0])} ({longest.name} "
        f"{longest.longest[1]})",
        "",
        "biggest items:",
    ]
    for label, key, fmt in (("CPU time", lambda t: t.cpu_seconds, _hours),
                            (f"{gpu_label} time", lambda t: t.gpu_seconds, _hours),
                            ("storage", lambda t: t.storage, _bytes)):
        whole = sum(key(t) for t in totals)
        if whole <= 0:
            continue
        ranked = sorted(totals, key=key, reverse=True)[:top]
        lines.append(f"  {label}: " + ", ".join(
            f"{t.name} {fmt(key(t))} ({100 * key(t) / whole:.0f} %)" for t in ranked))
    lines.append("  " + classifier_shares(totals, gpu_label, gpu_tagged))
    return "\n".join(lines)


def classifier_shares(totals: list[DatasetTotals], gpu_label: str,
                      on_gpu: list[str]) -> str:
    """Fit and tuning hours per classifier, the CPU ones as shares of all CPU fitting and
    tuning (which classifier a cheaper study would change), those ``on_gpu`` apart."""
    hours: dict[str, float] = {}
    for t in totals:
        for clf, seconds in t.per_classifier.items():
            hours[clf] = hours.get(clf, 0.0) + seconds
    cpu = sum(s for clf, s in hours.items() if clf not in on_gpu)
    parts = []
    for clf, seconds in sorted(hours.items(), key=lambda item: -item[1]):
        share = (f"{gpu_label} time" if clf in on_gpu
                 else f"{100 * seconds / cpu:.0f} %" if cpu > 0 else "CPU")
        parts.append(f"{clf} {_hours(seconds)} ({share})")
    return "fitting and tuning by classifier: " + ", ".join(parts)


def format_jobs(plan: StudyPlan, config: dict) -> str:
    """One line per fit, metrics and grouped-metrics job of the plan: its rule, dataset,
    classifier and id (the ``{job}`` of its output paths), what it holds, its estimated time
    and its memory."""
    grouped = config["grouped"]["by"]

    def line(rule, name, clf, job, runs="", fits=""):
        seconds = f"{job.seconds:.0f} s" if job.seconds < 60 else _hours(job.seconds)
        return (f"{rule:<18}{name[:23]:<24}{clf:<11}{job.id:<22}{len(job.cells):>6}"
                f"{len(job.repeats):>8}{runs:>8}{fits:>9}{seconds:>10}{job.mem_mb:>7,}MB")

    lines = [f"{'rule':<18}{'dataset':<24}{'classifier':<11}{'job':<22}{'cells':>6}"
             f"{'repeats':>8}{'runs':>8}{'fits':>9}{'estimate':>10}{'mem':>9}"]
    for name, ds in plan.datasets.items():
        for clf, cp in ds.classifiers.items():
            for job in cp.fit_jobs:
                lines.append(line(fit_rule(clf, config.get("classifier_settings")), name, clf,
                                  job,
                                  f"{job.runs[0]}-{job.runs[1] - 1}", f"{job.fits:,}"))
            for rule in ("pairwise_metrics", "grouped_metrics"):
                if rule == "grouped_metrics" and name not in grouped:
                    continue
                lines += [line(rule, name, clf, job) for job in cp.metrics_jobs]
    return "\n".join(lines)


def limit_bounds(plan: StudyPlan) -> str:
    """The time limits' bounds over the estimates, per classifier: 2 where probe fits measured
    the data, else its worst miss measured on realistic data."""
    bounds: dict[str, set[float]] = {}
    for ds in plan.datasets.values():
        for clf, cp in ds.classifiers.items():
            bounds.setdefault(clf, set()).update(job.limit_factor for job in cp.fit_jobs)
    return ", ".join(f"{clf} {' / '.join(f'{b:g}' for b in sorted(values))}"
                     for clf, values in bounds.items() if values) + \
        " (2: estimated from probe fits on the data, or no worse miss measured; more: from the " \
        "shape alone, by the classifier's worst miss measured on realistic data)"


def calibrate_from_results(results: str | Path, out: str | Path) -> str:
    """Fit the cost model to a finished run's runs tables and dataset metadata; write it to
    ``out`` and return a summary of how well it predicts the measured fits."""
    import json

    import numpy as np
    import pandas as pd

    from modelvar.data.schema import count_few_valued
    from modelvar.pipeline.result_tables import fit_cost, read_table
    from modelvar.planning.cost_model import calibrate, fit_epochs, load
    from modelvar.table_files import write_text

    results = Path(results)
    runs = read_table(results, "runs")
    # each fit's CPU seconds, which a busy machine barely changes (wall time where a runs
    # table predates them); the GPU's fits are left out below
    seconds, clock = fit_cost(runs)
    runs = runs.assign(fit_seconds=seconds)
    shapes = {}
    for name in runs["dataset"].unique():
        meta = json.loads((results / "datasets" / f"{name}.json").read_text())
        numeric = [f["name"] for f in meta["features"] if f["type"] == "numeric"]
        values = pd.read_parquet(results / "datasets" / f"{name}.parquet", columns=numeric)
        shapes[name] = {"d": encoded_width(meta), "n_classes": len(meta["classes"]),
                        "n_numeric": len(numeric), "n_few_valued": count_few_valued(values)}
    # each fit's data level (none in a runs table without the column), for the shares of its
    # columns that data noise gave new values and that are few-valued
    levels = [None] * len(runs)
    if "data" in runs.columns:
        data_family = families.family("data")
        parsed = {level_id: data_family.from_id(level_id) for level_id in runs["data"].unique()}
        levels = [parsed[level_id] for level_id in runs["data"]]
    fits = list(zip(runs["dataset"], levels, strict=True))
    runs = runs.assign(
        noisy_share=[noisy_share(level, shapes[ds]["n_numeric"], shapes[ds]["d"])
                     for ds, level in fits],
        few_valued_share=[few_valued_share(level, shapes[ds]["n_few_valued"], shapes[ds]["d"])
                          for ds, level in fits])
    runs = runs.assign(epochs=fit_epochs(runs, shapes))  # calibrate() reads the column as it is
    on_cpu = runs if "device" not in runs.columns else runs[runs["device"] == "cpu"]
    base = load()
    model = calibrate(runs, shapes, source=f"calibrated on {results} ({len(on_cpu)} fits)",
                      base=base)
    write_text(model.to_json(), out)
    ratios = []
    columns = ["dataset", "classifier", "n_train", "fit_seconds", "noisy_share",
               "few_valued_share", "epochs"]
    for row in on_cpu[columns].itertuples():
        shape = shapes[row.dataset]
        ratios.append(model.seconds(
            row.classifier, row.n_train, shape["d"], shape["n_classes"], row.epochs,
            noisy_share=row.noisy_share, onehot_share=onehot_share(shape["n_numeric"], shape["d"]),
            few_valued_share=row.few_valued_share)
            / max(row.fit_seconds, 1e-6))
    summary = f"cost model of {len(on_cpu)} fits ({clock}) written to {out}"
    if ratios:
        q = np.quantile(ratios, [0.05, 0.5, 0.95])
        summary += (f"; predicted / measured fit seconds: median {q[1]:.2f}, 90 % between "
                    f"{q[0]:.2f} and {q[2]:.2f}")
    on_gpu = runs.loc[runs.index.difference(on_cpu.index)]
    if len(on_gpu):
        by_clf = on_gpu["classifier"].value_counts()
        kept = sorted(set(by_clf.index) - set(on_cpu["classifier"]))
        summary += (f"\nleft out {len(on_gpu):,} fits that ran on a GPU ("
                    + ", ".join(f"{clf} {n:,}" for clf, n in by_clf.items())
                    + "): the constants are one CPU core's, which the plan divides by "
                    "jobs.gpu_speedup")
        if kept:
            summary += (f"; {', '.join(kept)} {'keeps' if len(kept) == 1 else 'keep'} the "
                        "shipped constants")
    return summary


def encoded_width(meta: dict) -> int:
    """Design-matrix columns of a prepared dataset: numeric features + one-hot levels (each
    categorical feature also gets a missing-value column)."""
    return sum(1 if f["type"] == "numeric" else len(f["levels"]) + 1 for f in meta["features"])


def storage_on_disk(plan: StudyPlan, results: str | Path) -> list[dict]:
    """Per dataset × classifier of a finished run: the plan's bytes of prediction files and of
    metric tables next to the files on disk (``*_estimate`` and measured; jobs whose files are
    missing count as 0 bytes measured)."""
    from modelvar.pipeline.result_tables import METRIC_TABLES, table_path

    def size(path: Path) -> int:
        return path.stat().st_size if path.is_file() else 0

    rows = []
    for name, ds in plan.datasets.items():
        for clf, cp in ds.classifiers.items():
            folder = Path(results) / "predictions" / f"dataset={name}" / f"classifier={clf}"
            rows.append({
                "dataset": name, "classifier": clf,
                "pred_bytes_estimate": cp.prediction_bytes,
                "pred_bytes": sum(size(folder / f"{job.id}.parquet") for job in cp.fit_jobs),
                "table_bytes_estimate": cp.table_bytes,
                "table_bytes": sum(size(Path(table_path(results, t, name, clf, job.id)))
                                   for job in cp.metrics_jobs for t in METRIC_TABLES)})
    return rows

