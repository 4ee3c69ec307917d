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
from modelvar.data.perturb import (
    categorical_label_level,
    categorical_sample_level,
    nearest_neighbour,
    percentile,
    relative,
    scaled_noise,
    significant_digit,
)
from modelvar.data.preprocess import EncodedDataset, transform_run
from modelvar.data.splits import downsample, split_test_set
from modelvar.models import hparams as hp
from modelvar.models.classifiers import make_classifier
from modelvar.pipeline.cells import Cell
from modelvar.pipeline.predictions import PROBA_PREFIX, PredictionsWriter
from modelvar.seeding import stream
from modelvar.table_files import Manifest, TableStream

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("modelvar.fit")
LIBRARIES = {"lr-sgd": ("scikit-learn",), "svm-sgd": ("scikit-learn",),
             "xgb": ("scikit-learn", "xgboost"), "mlp": ("torch",)}


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def library_versions(classifier: str) -> dict[str, str]:
    """Versions of what a run used, from the installed packages' metadata (no imports)."""
    out = {"modelvar": __version__, "python": platform.python_version()}
    for package in ("numpy", "pyarrow", *LIBRARIES.get(classifier, ())):
        out[package] = importlib.metadata.version(package)
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
    realised = hp.perturb(classifier, base, kind, value, run_stream.generator(),
                          resample_categorical=run in chosen)
    return realised, {"hparam-perturbation": str(run_stream),
                      "hparam-categorical": str(cat_stream)}


def model_stream(root_seed, cell: Cell, dataset: str, classifier: str, repeat: int, run: int):
    if cell.model_seed == "per-run":
        return stream(root_seed, "model", dataset=dataset, classifier=classifier,
                      repeat=repeat, run=run)
    return stream(root_seed, "model", dataset=dataset, classifier=classifier)


_DATA_FUNCS = {"sig": lambda X, v, rng: significant_digit(X, int(v), rng),
               "nn": nearest_neighbour, "rel": relative, "pct": percentile,
               "sd": scaled_noise,
               "rsd": lambda X, v, rng: scaled_noise(X, v, rng, robust=True)}
_CAT_FUNCS = {
    "label": categorical_label_level,
    "sample": categorical_sample_level,
    "labelmiss": lambda C, n, v, rng: categorical_label_level(C, n, v, rng, missing="as_level"),
    "samplemiss": lambda C, n, v, rng: categorical_sample_level(C, n, v, rng, missing="as_level"),
}


def perturb_training_rows(
    ds, enc: EncodedDataset, rows: np.ndarray, cell: Cell, *, root_seed: int,
    repeat: int, run: int,
) -> tuple[np.ndarray, np.ndarray, dict, dict]:
    """Apply the cell's data and categorical perturbations to the training rows only.

    Streams are keyed by (dataset, scheme level, repeat, run) — not by classifier — so every
    classifier sees the same perturbed training data. Returns (numeric values, categorical
    codes, what was done, stream names) of the training rows.
    """
    num, codes = enc.numeric[rows], enc.codes[rows]
    info: dict = {}
    streams: dict = {}
    levels = cell.levels()
    if cell.data is not None and num.shape[1]:
        name = stream(root_seed, "data-perturbation", dataset=ds.name, scheme=levels["data"],
                      repeat=repeat, run=run)
        kind, value = cell.data
        num, info["data"] = _DATA_FUNCS[kind](num, value, name.generator())
        per_feature = info["data"].pop("per_feature", None)
        if per_feature is not None:  # recorded with the features' names
            info["data_per_feature"] = {
                col: [round(c, 4), None if np.isnan(s) else round(s, 4)]
                for col, c, s in zip(enc.numeric_columns, per_feature["changed_frac"],
                                     per_feature["mean_abs_shift_sd"], strict=True)}
        streams["data-perturbation"] = str(name)
    if cell.categorical is not None and codes.shape[1]:
        name = stream(root_seed, "categorical-perturbation", dataset=ds.name,
                      scheme=levels["categorical"], repeat=repeat, run=run)
        kind, value = cell.categorical
        codes, info["categorical"] = _CAT_FUNCS[kind](codes, enc.n_levels, value,
                                                      name.generator())
        streams["categorical-perturbation"] = str(name)
    return num, codes, info, streams


def _as_arrays(data) -> DataArrays:
    return data if isinstance(data, DataArrays) else DataArrays.from_dataset(data)


@dataclass
class RepeatFit:
    """What the runs of one repeat predicted: ``preds`` (k, n) class indices and ``proba``
    (k, n, C) for the test ``samples`` (n,) with truth ``y_true`` (n,); one runs-table row per
    run."""

    samples: np.ndarray
    y_true: np.ndarray
    runs: np.ndarray
    preds: np.ndarray
    proba: np.ndarray
    run_rows: list[dict]


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
) -> RepeatFit:
    """Fit the given runs (of ``n_runs``) of one repeat of one cell (module docstring)."""
    base = {**hp.defaults(classifier), **(base_hparams or {})}
    y_all = data.y
    n_classes = len(data.classes)
    pool, test = split_test_set(y_all, test_fraction, root_seed=root_seed, dataset=data.name,
                                repeat=repeat, labels=data.classes)
    enc = data.encoded
    versions = versions or json.dumps(library_versions(classifier), sort_keys=True)
    preds, probas, run_rows = [], [], []
    for run in runs:
        rows = downsample(y_all[pool], pool, cell.downsample, root_seed=root_seed,
                          dataset=data.name, repeat=repeat, run=run)
        num_train, codes_train, perturbation, p_streams = perturb_training_rows(
            data, enc, rows, cell, root_seed=root_seed, repeat=repeat, run=run)
        X_train, X_test, _ = transform_run(enc, rows, test, num_train=num_train,
                                           codes_train=codes_train)
        mstream = model_stream(root_seed, cell, data.name, classifier, repeat, run)
        realised, h_streams = run_hparams(classifier, base, cell, dataset=data.name,
                                          root_seed=root_seed, repeat=repeat, run=run,
                                          n_runs=n_runs)
        model = make_classifier(classifier, realised, seed=mstream.int_seed(), threads=threads,
                                epochs=epochs)
        t0 = time.perf_counter()
        model.fit(X_train, y_all[rows], n_classes)
        proba = model.predict_proba(X_test)
        pred = model.predict(X_test)
        fit_seconds = time.perf_counter() - t0
        preds.append(pred)
        probas.append(proba)
        streams = {
            "test-split": str(stream(root_seed, "test-split", dataset=data.name, repeat=repeat)),
            "downsample": str(stream(root_seed, "downsample", dataset=data.name,
                                     repeat=repeat, run=run)),
            "model": {"name": str(mstream), "int_seed": mstream.int_seed()},
            **p_streams,
            **h_streams,
        }
        run_rows.append({
            "cell": cell.id, "repeat": repeat, "run": run, "n_train": len(rows),
            "n_test": len(test), "accuracy": float(np.mean(pred == y_all[test])),
            "fit_seconds": fit_seconds,
            "data_changed_frac": perturbation.get("data", {}).get("changed_frac", 0.0),
            "data_mean_abs_shift_sd": perturbation.get("data", {}).get("mean_abs_shift_sd", 0.0),
            "data_per_feature": json.dumps(perturbation.pop("data_per_feature", {})),
            "cat_changed_frac": perturbation.get("categorical", {}).get("changed_frac", 0.0),
            "cat_missing_to_level_frac": perturbation.get("categorical", {}).get(
                "missing_to_level", 0.0),
            "cat_level_to_missing_frac": perturbation.get("categorical", {}).get(
                "level_to_missing", 0.0),
            "perturbation": json.dumps(perturbation, sort_keys=True),
            "hparams": json.dumps(model.hparams, sort_keys=True),
            "device": model.device,
            "streams": json.dumps(streams, sort_keys=True),
            "versions": versions,
        })
        if on_run_done is not None:
            on_run_done(run)
    return RepeatFit(samples=test.astype(np.int64), y_true=y_all[test], runs=np.asarray(runs),
                     preds=np.array(preds, dtype=np.int64), proba=np.array(probas),
                     run_rows=run_rows)


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
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every run of one repeat as (predictions, runs) DataFrames: labels and every class's
    probability, one row per (run, test sample); one row per run (the runs table's columns)."""
    import pandas as pd

    data = _as_arrays(ds)
    fit = fit_repeat_arrays(data, classifier=classifier, cell=cell, repeat=repeat,
                            runs=range(n_runs), n_runs=n_runs, test_fraction=test_fraction,
                            root_seed=root_seed, base_hparams=base_hparams, threads=threads,
                            epochs=epochs)
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
    training cells is warned about once per cell, naming the features it (almost) never changes.
    """
    data = _as_arrays(data)
    start_run, stop_run = runs or (0, n_runs)
    run_ids = list(range(start_run, stop_run))
    total = len(cells) * len(repeats) * len(run_ids)
    versions = json.dumps(library_versions(classifier), sort_keys=True)
    done, logged = 0, -math.inf
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
    writer = PredictionsWriter(predictions_out, dataset=data.name, classifier=classifier,
                               classes=data.classes, form=form, n_rows=len(data.y))
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
                    epochs=epochs, versions=versions)
                writer.write(cell.id, repeat, fit.runs, fit.samples, fit.y_true, fit.preds,
                             fit.proba)
                rows = fit.run_rows
                runs_table.write({**{c: [r[c] for r in rows] for c in rows[0]},
                                  **{f: [v] * len(rows) for f, v in levels.items()}})
                accuracies.append(np.mean([r["accuracy"] for r in rows]))
                if repeat == repeats[0] and cell.data is not None:
                    _warn_weak_data_perturbation(data.name, cell, rows, warn_changed_below)
            log.info("%s: %d repeats, mean accuracy %.4f (repeat means %.4f to %.4f)", cell.id,
                     len(accuracies), np.mean(accuracies), np.min(accuracies),
                     np.max(accuracies))
        manifest.record(writer.close(), writer.rows)
        runs_table.close()
    except BaseException:
        writer.abort()
        runs_table.abort()
        raise
    log.info("fit job finished: %d fits in %.1f s", total, time.perf_counter() - start)
