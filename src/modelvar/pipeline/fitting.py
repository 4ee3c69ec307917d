"""The fit job: for one dataset × classifier, fit the runs of several repeats of several cells.

For repeat r: the test set comes from :func:`modelvar.data.splits.split_test_set`; for run j the
training rows are the (downsampled) pool, perturbed by the cell (:mod:`modelvar.data.perturb`,
training rows only), preprocessing is fit on those rows only, the classifier is fit with its
model seed, and the test set is predicted. One job fits many runs so that the cost of starting
Python and importing the ML stack is paid once per job, not once per fit; it reads the dataset
and writes its tables with pyarrow (no pandas: its start-up is the classifier library's import).

A job writes one predictions file (:class:`~modelvar.pipeline.predictions.PredictionsWriter`, one
row group per (cell, repeat, runs)) and one runs table, one row per run, with the cell's levels.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import math
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from modelvar import __version__
from modelvar.data.arrays import DataArrays
from modelvar.data.preprocess import EncodedDataset, transform_run
from modelvar.data.splits import downsample, split_test_set
from modelvar.metrics.probabilistic import probability_stats
from modelvar.models import hparams as hp
from modelvar.models.registry import make_classifier, spec
from modelvar.pipeline.predictions import PROBA_PREFIX, PredictionsWriter
from modelvar.seeding import stream
from modelvar.study import families
from modelvar.study.cells import Cell
from modelvar.table_files import Manifest, TableStream
from modelvar.timing import Stopwatch

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("modelvar.fit")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def library_versions(classifier: str) -> dict[str, str]:
    """Versions of what a run used, from the installed packages' metadata (no imports): the
    classifier's libraries are its spec's."""
    out = {"modelvar": __version__, "python": platform.python_version()}
    for package in ("numpy", "pyarrow", *spec(classifier).libraries):
        out[package] = importlib.metadata.version(package)
    return out


def platform_record(classifier: str, threads: int) -> dict:
    """What a run's bits may depend on beyond its seeds and versions (docs/decisions.md,
    "Determinism"): the machine's architecture and CPU, the BLAS and its kernel (threadpoolctl),
    the job's threads, and for the MLP the vector instructions torch uses and its intra-op
    threads (fixed: :data:`modelvar.models.mlp.CPU_THREADS`) — for every classifier that uses
    torch."""
    from threadpoolctl import threadpool_info

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh
                        if line.startswith("model name")), cpu)
    except OSError:
        pass
    blas = sorted({f"{i.get('internal_api')} {i.get('version')} {i.get('architecture', '')}".strip()
                   for i in threadpool_info() if i.get("user_api") == "blas"})
    out = {"machine": platform.machine(), "cpu": cpu, "blas": blas, "threads": int(threads)}
    if "torch" in spec(classifier).libraries:
        import torch

        from modelvar.models.mlp import CPU_THREADS

        out["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        out["torch_threads"] = CPU_THREADS
    return out


def run_hparams(
    classifier: str, base: dict, cell: Cell, *, dataset: str, root_seed: int, repeat: int,
    run: int, n_runs: int,
) -> tuple[dict, dict]:
    """The realised hparams of one run: ``base`` perturbed by the cell's hparam scheme.

    Returns (hparams, stream names). For the categorical resampling (see
    :mod:`modelvar.models.hparams`) the fraction of runs is p for ``rel``/``abs`` and 10^(−d) for
    ``sig<d>``.
    """
    if cell.hparam is None:
        return dict(base), {}
    kind, value = cell.hparam
    scheme = cell.levels()["hparam"]
    keys = dict(dataset=dataset, classifier=classifier, scheme=scheme, repeat=repeat)
    cat_stream = stream(root_seed, "hparam-categorical", **keys)
    run_stream = stream(root_seed, "hparam-perturbation", run=run, **keys)
    frac = 10.0 ** (-value) if kind == "sig" else value
    chosen = hp.categorical_runs(n_runs, frac, cat_stream.generator())
    realised = hp.perturb(spec(classifier).space, base, kind, value, run_stream.generator(),
                          resample_categorical=run in chosen)
    return realised, {"hparam-perturbation": str(run_stream),
                      "hparam-categorical": str(cat_stream)}


def model_stream(root_seed, cell: Cell, dataset: str, classifier: str, repeat: int, run: int):
    if cell.model_seed == "per-run":
        return stream(root_seed, "model", dataset=dataset, classifier=classifier,
                      repeat=repeat, run=run)
    return stream(root_seed, "model", dataset=dataset, classifier=classifier)


def perturb_training_rows(
    ds, enc: EncodedDataset, rows: np.ndarray, cell: Cell, *, root_seed: int,
    repeat: int, run: int, y: np.ndarray | None = None, n_classes: int | None = None,
) -> tuple[families.TrainingRows, dict, dict]:
    """Apply the cell's training-rows families (:func:`modelvar.study.families.
    training_rows_families`: data, categorical, and any registered one) to the training rows
    only, in the registry's order; a family whose reach the dataset lacks is skipped.

    Streams are keyed by (dataset, level, repeat, run) — not by classifier — so every
    classifier sees the same perturbed training data. Returns (the perturbed training rows,
    family → what it did, stream names).
    """
    y = ds.class_index()[rows] if y is None else y
    training = families.TrainingRows(
        numeric=enc.numeric[rows], codes=enc.codes[rows], y=y,
        numeric_columns=list(enc.numeric_columns), n_levels=list(enc.n_levels),
        n_classes=int(n_classes if n_classes is not None else len(ds.classes)))
    info: dict = {}
    streams: dict = {}
    levels = cell.levels()
    reach = {"numeric": training.numeric.shape[1], "categorical": training.codes.shape[1]}
    for family in families.training_rows_families():
        level = cell[family.name]
        if level == family.none or (family.reach is not None and not reach[family.reach]):
            continue
        name = stream(root_seed, f"{family.name}-perturbation", dataset=ds.name,
                      scheme=levels[family.name], repeat=repeat, run=run)
        training, info[family.name] = family.perturb(training, level, name.generator())
        streams[f"{family.name}-perturbation"] = str(name)
    return training, info, streams


def strength_row(perturbation: dict) -> dict:
    """The runs table's realised-strength columns of one run (0, or ``{}`` for a mapping,
    where a family did not act); mappings leave ``perturbation`` for their own JSON column."""
    row = {}
    for family, strength in families.strengths():
        record = perturbation.get(family.name, {})
        if strength.as_json:
            row[strength.column] = json.dumps(record.pop(strength.record_key, {}))
        else:
            row[strength.column] = record.get(strength.record_key, 0.0)
    return row


def _as_arrays(data) -> DataArrays:
    return data if isinstance(data, DataArrays) else DataArrays.from_dataset(data)


@dataclass
class RepeatFit:
    """What the runs of one repeat predicted: ``preds`` (k, n) class indices and either
    ``proba`` (k, n, C) or, in the compact form, only their per-sample statistics ``stats``
    (name → (k, n)), for the test ``samples`` (n,) with truth ``y_true`` (n,); one runs-table
    row per run."""

    samples: np.ndarray
    y_true: np.ndarray
    runs: np.ndarray
    preds: np.ndarray
    proba: np.ndarray | None
    run_rows: list[dict]
    stats: dict | None = None


@dataclass
class PreparedRun:
    """One run, ready to fit: its training rows after perturbation and preprocessing, its test
    rows preprocessed the same way, its realised hparams and what it drew from which stream."""

    run: int
    rows: np.ndarray
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    hparams: dict
    seed: int
    perturbation: dict
    streams: dict


def prepare_run(data: DataArrays, *, classifier: str, cell: Cell, repeat: int, run: int,
                n_runs: int, pool: np.ndarray, test: np.ndarray, root_seed: int,
                base: dict) -> PreparedRun:
    """Downsample the pool, perturb the training rows, fit preprocessing on them, realise the
    hparams and the model seed (module docstring)."""
    y_all = data.y
    rows = downsample(y_all[pool], pool, cell.downsample, root_seed=root_seed,
                      dataset=data.name, repeat=repeat, run=run)
    training, perturbation, p_streams = perturb_training_rows(
        data, data.encoded, rows, cell, root_seed=root_seed, repeat=repeat, run=run,
        y=y_all[rows], n_classes=len(data.classes))
    X_train, X_test, _ = transform_run(data.encoded, rows, test, num_train=training.numeric,
                                       codes_train=training.codes)
    mstream = model_stream(root_seed, cell, data.name, classifier, repeat, run)
    realised, h_streams = run_hparams(classifier, base, cell, dataset=data.name,
                                      root_seed=root_seed, repeat=repeat, run=run,
                                      n_runs=n_runs)
    streams = {
        "test-split": str(stream(root_seed, "test-split", dataset=data.name, repeat=repeat)),
        "downsample": str(stream(root_seed, "downsample", dataset=data.name, repeat=repeat,
                                 run=run)),
        "model": {"name": str(mstream), "int_seed": mstream.int_seed()},
        **p_streams,
        **h_streams,
    }
    return PreparedRun(run, rows, X_train, training.y, X_test, realised, mstream.int_seed(),
                       perturbation, streams)


def _warmed_up(prepared: PreparedRun, classifier: str, n_classes: int, threads: int,
               epochs: int | None):
    """The run's model, after its ``warm_up`` (if it has one: the spec's interface) did this
    process's one-time loading — a library's import, compiled kernels, a GPU's context — which
    is not the fit's time."""
    model = make_classifier(classifier, prepared.hparams, seed=prepared.seed, threads=threads,
                            epochs=epochs)
    warm_up = getattr(model, "warm_up", None)
    if warm_up is not None:
        warm_up(prepared.X_train, prepared.y_train, n_classes)
    return model


class FitFailed(RuntimeError):
    """A classifier's fit raised: the message names the classifier and the run (dataset, cell,
    repeat, run, model seed); the estimator's own error is its cause (``__cause__``), whose
    traceback the job writes to its log."""


def _fit_alone(prepared: PreparedRun, classifier: str, n_classes: int, threads: int,
               epochs: int | None, where: str = ""):
    """(class probabilities, labels, the time of fit + predict (a Span), realised hparams,
    device); a fit that raises is a :class:`FitFailed` naming ``where`` it was."""
    model = _warmed_up(prepared, classifier, n_classes, threads, epochs)
    with Stopwatch() as watch:
        try:
            model.fit(prepared.X_train, prepared.y_train, n_classes)
        except Exception as exc:
            raise FitFailed(f"{classifier}.fit failed on {where}run {prepared.run} (model "
                            f"seed {prepared.seed}): {type(exc).__name__}: {exc}") from exc
        proba = model.predict_proba(prepared.X_test)
        pred = model.predict(prepared.X_test)
    return proba, pred, watch.span, model.hparams, model.device


def _fit_mlp_together(group: list[PreparedRun], n_classes: int,
                      epochs: int | None, device: str) -> list[tuple]:
    """The runs of ``group`` (equal widths and rows) as one batched model
    (:mod:`modelvar.models.mlp`); each run's seconds (wall and CPU) are the group's divided
    among them."""
    from modelvar.models import mlp

    with Stopwatch() as watch:
        models = mlp.train([r.X_train for r in group], [r.y_train for r in group],
                           n_classes=n_classes, hparams=[r.hparams for r in group],
                           seeds=[r.seed for r in group], epochs=epochs or mlp.MLP_EPOCHS,
                           device=device)
        proba = mlp.predict_proba(models, [r.X_test for r in group], device=device)
    share = watch.span.per(len(group))
    return [(proba[j], proba[j].argmax(axis=1).astype(np.int64), share, dict(r.hparams),
             device) for j, r in enumerate(group)]


def batch_mlp_runs(device: str | None = None) -> bool:
    """Whether the MLP's runs train as one batched model: on a GPU (where one small network
    leaves the device idle); on the CPU, which the arithmetic already saturates, one at a time
    (batching gains nothing there: ``make bench-mlp``; the results are identical)."""
    from modelvar.models.classifiers import torch_device

    return (device or torch_device()) == "cuda"


def fit_repeat_arrays(
    data: DataArrays,
    *,
    classifier: str,
    cell: Cell,
    repeat: int,
    runs: Sequence[int],
    n_runs: int,
    test_fraction: float,
    root_seed: int,
    base_hparams: dict | None = None,
    threads: int = 1,
    on_run_done: Callable[[int], None] | None = None,
    epochs: int | None = None,
    versions: str | None = None,
    platform_json: str | None = None,
    batch_mlp: bool | None = None,
    form: str = "dense",
) -> RepeatFit:
    """Fit the given runs (of ``n_runs``) of one repeat of one cell (module docstring). MLP runs
    train in stacks (one batched model each) when ``batch_mlp`` (default: on a GPU,
    :func:`batch_mlp_runs`): the stacks are fixed by the design alone
    (:func:`modelvar.models.mlp.stack_size`), a job trains each stack that holds one of its
    runs whole, and each run records its stack (runs table: ``stack``, the runs trained with
    it; ``[run]`` alone). On the CPU every run gets the same model either way. In the
    ``compact`` form each run's probabilities are reduced to their per-sample statistics as
    soon as it is predicted, so a job holds one run's n × C probabilities, not k of them."""
    base = {**spec(classifier).defaults(), **(base_hparams or {})}
    y_all = data.y
    n_classes = len(data.classes)
    pool, test = split_test_set(y_all, test_fraction, root_seed=root_seed, dataset=data.name,
                                repeat=repeat, labels=data.classes)
    versions = versions or json.dumps(library_versions(classifier), sort_keys=True)
    platform_json = platform_json or json.dumps(platform_record(classifier, threads),
                                                sort_keys=True)
    keys = dict(classifier=classifier, cell=cell, repeat=repeat, n_runs=n_runs, pool=pool,
                test=test, root_seed=root_seed, base=base)
    fitted: dict[int, tuple] = {}
    prepared: dict[int, PreparedRun] = {}
    stack_of: dict[int, list[int]] = {}
    if spec(classifier).batched and (batch_mlp if batch_mlp is not None else batch_mlp_runs()):
        from modelvar.models.classifiers import torch_device
        from modelvar.models.mlp import groups_of, stack_size, stacks

        device = torch_device()
        wanted = set(runs)
        first = prepare_run(data, run=runs[0], **keys)  # its encoded columns size the stacks
        _warmed_up(first, classifier, n_classes, threads, epochs)
        size = stack_size(len(pool), first.X_train.shape[1], n_runs)
        for stack in stacks(n_runs, size):
            if wanted.isdisjoint(stack):
                continue
            # the whole stack trains, whichever of its runs the job holds; it keeps its own
            order = [first if run == first.run else prepare_run(data, run=run, **keys)
                     for run in stack]
            for group in groups_of([r.hparams for r in order], [len(r.rows) for r in order]):
                members = [order[j] for j in group]
                results = _fit_mlp_together(members, n_classes, epochs, device)
                for r, result in zip(members, results, strict=True):
                    if r.run in wanted:
                        fitted[r.run], prepared[r.run] = result, r
                        stack_of[r.run] = [m.run for m in members]
                        if on_run_done is not None:
                            on_run_done(r.run)
    preds, probas, run_rows = [], [], []
    trained_epochs = None if spec(classifier).epochs is None else (epochs or
                                                                  spec(classifier).epochs)
    for run in runs:
        if run in fitted:
            current = prepared[run]
            proba, pred, timed, realised, device = fitted[run]
        else:  # one at a time: prepare, fit, let go
            current = prepare_run(data, run=run, **keys)
            proba, pred, timed, realised, device = _fit_alone(
                current, classifier, n_classes, threads, epochs,
                where=f"{data.name}, cell {cell.id}, repeat {repeat}, ")
            if on_run_done is not None:
                on_run_done(run)
        preds.append(pred)
        probas.append(probability_stats(y_all[test], proba) if form == "compact" else proba)
        perturbation = current.perturbation
        run_rows.append({
            "cell": cell.id, "repeat": repeat, "run": run, "n_train": len(current.rows),
            "n_test": len(test), "accuracy": float(np.mean(pred == y_all[test])),
            "fit_seconds": timed.wall, "fit_cpu_seconds": timed.cpu, "epochs": trained_epochs,
            **strength_row(perturbation),
            "perturbation": json.dumps(perturbation, sort_keys=True),
            "hparams": json.dumps(realised, sort_keys=True),
            "device": device,
            "stack": json.dumps(stack_of.get(run, [run])),
            "streams": json.dumps(current.streams, sort_keys=True),
            "versions": versions,
            "platform": platform_json,
        })
        prepared.pop(run, None)
    preds = np.array(preds, dtype=np.int64)
    common = dict(samples=test.astype(np.int64), y_true=y_all[test], runs=np.asarray(runs),
                  preds=preds, run_rows=run_rows)
    if form == "compact":
        return RepeatFit(proba=None, stats={k: np.stack([p[k] for p in probas])
                                            for k in probas[0]}, **common)
    return RepeatFit(proba=np.array(probas), **common)


def fit_repeat(
    ds,
    *,
    classifier: str,
    cell: Cell,
    repeat: int,
    n_runs: int,
    test_fraction: float,
    root_seed: int,
    base_hparams: dict | None = None,
    threads: int = 1,
    epochs: int | None = None,
    batch_mlp: bool | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every run of one repeat as (predictions, runs) DataFrames: labels and every class's
    probability, one row per (run, test sample); one row per run (the runs table's columns)."""
    import pandas as pd

    data = _as_arrays(ds)
    fit = fit_repeat_arrays(data, classifier=classifier, cell=cell, repeat=repeat,
                            runs=range(n_runs), n_runs=n_runs, test_fraction=test_fraction,
                            root_seed=root_seed, base_hparams=base_hparams, threads=threads,
                            epochs=epochs, batch_mlp=batch_mlp)
    k, n = fit.preds.shape
    labels = np.asarray(data.classes, dtype=object)
    frame = pd.DataFrame({"dataset": data.name, "classifier": classifier, "cell": cell.id,
                          "repeat": np.int32(repeat), "run": np.repeat(fit.runs, n).astype(
                              np.int32), "sample": np.tile(fit.samples, k),
                          "y_true": labels[np.tile(fit.y_true, k)],
                          "y_pred": labels[fit.preds.ravel()]})
    for c, name in enumerate(data.classes):
        frame[f"{PROBA_PREFIX}{name}"] = fit.proba[:, :, c].ravel()
    runs = pd.DataFrame(fit.run_rows)
    runs.insert(0, "classifier", classifier)
    runs.insert(0, "dataset", data.name)
    return frame, runs


def weak_features(runs, threshold: float) -> dict[str, float]:
    """Features whose cells a data perturbation changed in fewer than ``threshold`` of the
    cases, over the given runs (their ``data_per_feature`` records)."""
    records = runs["data_per_feature"] if not isinstance(runs, list) else \
        [r["data_per_feature"] for r in runs]
    shares: dict[str, list[float]] = {}
    for record in records:
        for feature, (changed, _shift) in json.loads(record).items():
            shares.setdefault(feature, []).append(changed)
    return {f: float(np.mean(v)) for f, v in shares.items() if np.mean(v) < threshold}


def _warn_weak_data_perturbation(dataset: str, cell: Cell, run_rows: list[dict],
                                 threshold: float) -> None:
    share = float(np.mean([r["data_changed_frac"] for r in run_rows]))
    if share >= threshold:
        return
    weak = weak_features(run_rows, threshold)
    listed = ", ".join(f"{f} ({v:.0%})" for f, v in sorted(weak.items(), key=lambda t: t[1]))
    log.warning(
        "%s: data perturbation %s changes %.0f%% of the numeric training cells (below "
        "perturbation.warn_changed_below = %.0f%%); (almost) never changed: %s. (Relative noise "
        "leaves zeros alone, percentile noise features whose low quantile of |x| is 0; the sd "
        "levels act on every feature with a spread.)", dataset, cell.levels()["data"],
        100 * share, 100 * threshold, listed or "none")


def fit_job(
    data,
    *,
    classifier: str,
    cells: list[Cell],
    repeats: list[int],
    n_runs: int,
    test_fraction: float,
    root_seed: int,
    predictions_out: Path,
    runs_out: Path,
    runs: tuple[int, int] | None = None,
    form: str = "dense",
    base_hparams: dict | None = None,
    threads: int = 1,
    epochs: int | None = None,
    manifest: Manifest | None = None,
    progress_seconds: float = 30.0,
    warn_changed_below: float = 0.5,
) -> None:
    """Fit every (cell, repeat) of a job — the runs ``runs`` = [start, stop) of each repeat
    (default all ``n_runs``) — into one predictions file and one runs table, each written
    atomically and recorded in ``manifest``.

    Progress (runs done / total, elapsed, ETA) goes to the log after the first run, then at most
    every ``progress_seconds``, and after the last; each cell's accuracy over its repeats gets one
    line, and a data perturbation that changes fewer than ``warn_changed_below`` of the numeric
    training cells is warned about once per level (from the first cell with that level),
    naming the features it (almost) never changes.
    """
    data = _as_arrays(data)
    start_run, stop_run = runs or (0, n_runs)
    run_ids = list(range(start_run, stop_run))
    total = len(cells) * len(repeats) * len(run_ids)
    versions = json.dumps(library_versions(classifier), sort_keys=True)
    platform_json = json.dumps(platform_record(classifier, threads), sort_keys=True)
    done, logged = 0, -math.inf
    warned: set[str] = set()  # data levels already checked for weak perturbation
    start = time.perf_counter()

    def progress(_run: int) -> None:
        nonlocal done, logged
        done += 1
        now = time.perf_counter()
        if done in (1, total) or now - logged >= progress_seconds:
            logged = now
            elapsed = now - start
            log.info("runs done %d/%d (%.0f %%), elapsed %s, ETA %s", done, total,
                     100 * done / total, _duration(elapsed),
                     _duration(elapsed / done * (total - done)))

    manifest = manifest if manifest is not None else Manifest(None, rule="fit")
    # what modelvar.pipeline.refit needs to fit any run of the file again
    fit_args = {"n_runs": n_runs, "test_fraction": test_fraction, "root_seed": root_seed,
                "base_hparams": base_hparams, "epochs": epochs}
    if not spec(classifier).built_in:  # a declared classifier: what it is built from
        fit_args["declared"] = spec(classifier).settings
    writer = PredictionsWriter(predictions_out, dataset=data.name, classifier=classifier,
                               classes=data.classes, form=form, n_rows=len(data.y),
                               fit=fit_args)
    runs_table = TableStream(runs_out, manifest=manifest)
    try:
        for cell in cells:
            levels = cell.levels()
            accuracies = []
            for repeat in repeats:
                fit = fit_repeat_arrays(
                    data, classifier=classifier, cell=cell, repeat=repeat, runs=run_ids,
                    n_runs=n_runs, test_fraction=test_fraction, root_seed=root_seed,
                    base_hparams=base_hparams, threads=threads, on_run_done=progress,
                    epochs=epochs, versions=versions, platform_json=platform_json, form=form)
                writer.write(cell.id, repeat, fit.runs, fit.samples, fit.y_true, fit.preds,
                             fit.proba, stats=fit.stats)
                rows = fit.run_rows
                runs_table.write({**{c: [r[c] for r in rows] for c in rows[0]},
                                  **{f: [v] * len(rows) for f, v in levels.items()}})
                accuracies.append(np.mean([r["accuracy"] for r in rows]))
                level = cell.levels()["data"]
                if repeat == repeats[0] and cell.data is not None and level not in warned \
                        and data.encoded.numeric.shape[1]:
                    warned.add(level)
                    _warn_weak_data_perturbation(data.name, cell, rows, warn_changed_below)
            if len(accuracies) == 1:
                log.info("%s: repeat %d, mean accuracy %.4f", cell.id, repeats[0],
                         accuracies[0])
            else:
                log.info("%s: %d repeats, mean accuracy %.4f (repeat means %.4f to %.4f)",
                         cell.id, len(accuracies), np.mean(accuracies), np.min(accuracies),
                         np.max(accuracies))
        manifest.record(writer.close(), writer.rows)
        runs_table.close()
    except BaseException:
        writer.abort()
        runs_table.abort()
        raise
    log.info("fit job finished: %d fits in %.1f s; the job's CPU so far %.1f s (start-up and "
             "imports included)", total, time.perf_counter() - start, time.process_time())
    from modelvar.models.kernel_cache import kernel_summary

    kernels = kernel_summary()
    if kernels:
        log.info(kernels)
