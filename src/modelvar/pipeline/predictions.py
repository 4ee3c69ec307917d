"""Prediction tables: the long-format record of what every run predicted for every test sample.

Per (dataset, classifier, cell) the fit job writes one predictions table per repeat and one runs
table:

``predictions/repeat-RRR.parquet`` — one row per (run, test sample), sorted by run then sample;
deterministic (byte-identical on rerun):

==============  ========  =========================================================
column          type      meaning
==============  ========  =========================================================
dataset         string    dataset name (config key)
classifier      string    classifier name
cell            string    perturbation cell id (:mod:`modelvar.pipeline.cells`)
repeat          int32     repeat index (one test set per repeat)
run             int32     run index within the repeat
sample          int64     row id in the canonical dataset
y_true          string    true label
y_pred          string    predicted label
proba:<class>   float64   predicted probability of each class, in the dataset's class
                          order (see :mod:`modelvar.models.classifiers` for what hinge losses hold)
==============  ========  =========================================================

``runs.parquet`` (one per cell, all repeats) — one row per run: ``dataset, classifier, cell,
repeat, run, n_train, n_test, accuracy, fit_seconds`` and JSON strings ``hparams`` (realised),
``streams`` (every random stream the run drew from, with its int seed) and ``versions``
(library versions).
Fit times vary, so this table is not byte-identical on rerun; the predictions table is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from modelvar.labels import sort_labels
from modelvar.metrics.pairwise import MetricInputError

KEY_COLUMNS = ("dataset", "classifier", "cell", "repeat")
PROBA_PREFIX = "proba:"


def proba_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith(PROBA_PREFIX)]


@dataclass
class RunsMatrix:
    """One repeat's predictions as arrays: ``preds[run_index, sample_index]`` class indices."""

    y_true: np.ndarray
    preds: np.ndarray
    runs: np.ndarray
    samples: np.ndarray
    classes: list[str]
    proba: np.ndarray | None = None  # (k, n, C) when probability columns exist


def to_runs_matrix(frame: pd.DataFrame, classes: list[str] | None = None) -> RunsMatrix:
    """Pivot one repeat's long table into arrays, checking that every run covers every sample."""
    for col in ("run", "sample", "y_true", "y_pred"):
        if col not in frame.columns:
            raise MetricInputError(f"predictions lack the required column {col!r}")
    if frame[["y_true", "y_pred"]].isna().any().any():
        raise MetricInputError("predictions hold missing (NaN) labels in y_true or y_pred")
    if frame.duplicated(["run", "sample"]).any():
        dup = frame.loc[frame.duplicated(["run", "sample"]), ["run", "sample"]].iloc[0]
        raise MetricInputError(
            f"run {dup['run']} has sample {dup['sample']} more than once"
        )
    runs = np.sort(frame["run"].unique())
    samples = np.sort(frame["sample"].unique())
    if len(runs) < 2:
        raise MetricInputError(f"need at least 2 runs, found {len(runs)}")
    counts = frame.groupby("run")["sample"].size()
    short = counts[counts != len(samples)]
    if len(short):
        raise MetricInputError(
            f"run(s) {list(short.index[:5])} lack predictions for some samples "
            f"({int(short.iloc[0])} of {len(samples)})"
        )
    truth = frame.groupby("sample")["y_true"].nunique()
    if (truth > 1).any():
        raise MetricInputError(
            f"sample(s) {list(truth[truth > 1].index[:5])} have different y_true across runs"
        )
    ordered = frame.sort_values(["run", "sample"])
    if classes is None:
        classes = sort_labels([*ordered["y_true"].unique(), *ordered["y_pred"].unique()])
    lookup = {c: i for i, c in enumerate(classes)}
    unknown = (set(ordered["y_true"]) | set(ordered["y_pred"])) - set(lookup)
    if unknown:
        raise MetricInputError(f"labels {sorted(map(str, unknown))[:5]} are not among the classes")
    k, n = len(runs), len(samples)
    preds = ordered["y_pred"].map(lookup).to_numpy(np.int64).reshape(k, n)
    y_true = ordered["y_true"].map(lookup).to_numpy(np.int64).reshape(k, n)[0]
    pcols = proba_columns(frame)
    proba = None
    if pcols:
        named = {c[len(PROBA_PREFIX):]: c for c in pcols}
        if set(named) != {str(c) for c in classes}:
            raise MetricInputError(
                f"probability columns {sorted(named)} do not match the classes "
                f"{sorted(map(str, classes))}"
            )
        ordered_cols = [named[str(c)] for c in classes]
        proba = ordered[ordered_cols].to_numpy(np.float64).reshape(k, n, len(classes))
    return RunsMatrix(y_true=y_true, preds=preds, runs=runs, samples=samples,
                      classes=list(classes), proba=proba)
