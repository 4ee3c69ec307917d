"""From predictions to the metric tables of each repeat.

Per repeat (one :class:`~modelvar.pipeline.predictions.RunsMatrix`), :func:`repeat_columns`
computes five tables as plain column arrays (no pandas, so that a metrics job starts in well
under a second):

``pairwise``   one row per (subset, pair): ``run_i``, ``run_j``, ``n``, ``acc_i``, ``acc_j``
               and every pairwise metric, on the full test set (``subset=all``) and on the
               disagreement set (``subset=disagree``).
``summary``    one row per (subset, metric): mean, sd, min, max, range, count, n_undefined over
               the repeat's pairs, the jackknife SE and interval of the mean (in the metric's
               range), the independence-null mean and the excess over it (full test set only;
               :mod:`modelvar.metrics.inference`); per-run metrics (accuracy, balanced accuracy,
               log loss, Brier, entropy, …) summarised over the repeat's runs the same way (no
               interval or null); and ``all_runs_identical`` on every row of the repeat.
``per_run``    one row per run: the per-run metrics (:mod:`~modelvar.metrics.probabilistic`).
``agreement``  one row: Fleiss' κ, Krippendorff's α over all runs, the "always wrong" /
               "ever wrong" error-set sizes, and ``all_runs_identical``.
``per_sample`` one row per sample: fraction of runs wrong, distinct labels, flips, label
               entropy, and (with probabilities) the sample's normalised Shannon entropy and
               confusion index averaged over runs.

:func:`metrics_job` streams the repeats of a fit job's prediction files through this, one at a
time (memory bounded by one repeat, whatever the number of repeats and cells), adding the cell's
perturbation levels as columns, and writes each table straight into the study's partitioned
tables (``RESULTS/aggregated/TABLE/dataset=D/classifier=K/JOB.parquet``,
:mod:`modelvar.pipeline.result_tables`). :func:`repeat_tables` is the
same for a DataFrame of a user's own predictions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from modelvar.metrics import registry
from modelvar.metrics.agreement import multi_run_agreement, per_sample_columns
from modelvar.metrics.inference import independence_null, jackknife_ci
from modelvar.metrics.pairwise import pairwise_arrays
from modelvar.metrics.probabilistic import per_run_columns
from modelvar.metrics.summary import STATS, summarise
from modelvar.pipeline.predictions import KEY_COLUMNS, RunsMatrix

if TYPE_CHECKING:
    import pandas as pd

INFERENCE = ("se", "ci_low", "ci_high", "null_mean", "excess")
TABLES = ("pairwise", "summary", "per_run", "agreement", "per_sample")
SUMMARY_COLUMNS = ("subset", "metric", "n_samples", *STATS, *INFERENCE, "all_runs_identical")


def _broadcast(keys: dict, rows: int) -> dict[str, list]:
    return {k: [v] * rows for k, v in keys.items()}


def _summary_row(subset: str, metric: str, n: int, values, identical: bool,
                 inference=(np.nan,) * 5) -> dict:
    return {"subset": subset, "metric": metric, "n_samples": n, **summarise(values),
            **dict(zip(INFERENCE, inference, strict=True)), "all_runs_identical": identical}


def repeat_columns(m: RunsMatrix, *, ec_local_undefined: str = "nan",
                   keys: dict | None = None) -> dict[str, dict]:
    """The five tables of one repeat as {table: {column: array}} (module docstring)."""
    keys = dict(m.keys if keys is None else keys)
    n_classes = len(m.classes)
    k, n = m.preds.shape
    iu, ju = np.triu_indices(k, 1)
    identical = bool((m.preds == m.preds[:1]).all())
    out: dict[str, dict] = {}
    pairs_parts, summary_rows = [], []
    every = registry.metrics()
    for subset in registry.SUBSETS:
        on_subset = [metric.name for metric in registry.metrics(subset=subset)]
        pairs = pairwise_arrays(m.y_true, m.preds, n_classes=n_classes, subset=subset,
                                ec_local_undefined=ec_local_undefined, run_ids=m.runs,
                                metrics=on_subset)
        # a metric not computed on this subset: NaN in its rows of the pairwise table
        pairs_parts.append({**pairs, **{metric.name: pairs.get(metric.name, np.full(
            len(iu), np.nan)) for metric in every}})
        # the null only where it is unbiased: the full test set (modelvar.metrics.inference)
        null = independence_null(pairs["acc_i"], pairs["acc_j"], n_classes) \
            if subset == "all" else {}
        n_used = int(pairs["n"][0]) if len(pairs["n"]) else 0
        for metric in on_subset:
            values = pairs[metric]
            se, low, high = jackknife_ci(iu, ju, values,
                                         bounds=registry.metric(metric).value_range)
            defined = null[metric][~np.isnan(null[metric])] if metric in null else ()
            null_mean = float(np.mean(defined)) if len(defined) else np.nan
            mean = summarise(values)["mean"]
            summary_rows.append(_summary_row(subset, metric, n_used, values, identical,
                                             (se, low, high, null_mean, mean - null_mean)))
    out["pairwise"] = {**_broadcast(keys, 2 * len(iu)),
                       **{c: np.concatenate([p[c] for p in pairs_parts])
                          for c in pairs_parts[0]}}
    per_run = per_run_columns(m.y_true, m.preds, m.probability_stats(), n_classes)
    out["per_run"] = {**_broadcast(keys, k), "run": m.runs, **per_run}
    for metric, values in per_run.items():
        summary_rows.append(_summary_row("all", metric, n, values, identical))
    out["summary"] = {**_broadcast(keys, len(summary_rows)),
                      **{c: [row[c] for row in summary_rows] for c in SUMMARY_COLUMNS}}
    agreement = multi_run_agreement(m.y_true, m.preds, n_classes)
    out["agreement"] = {**_broadcast(keys, 1), "n_runs": [k],
                        **{c: [v] for c, v in agreement.items()}}
    per_sample = {"sample": m.samples, **per_sample_columns(m.y_true, m.preds, n_classes)}
    stats = m.probability_stats()
    if stats is not None:
        per_sample["entropy_mean"] = stats["entropy"].mean(axis=0)
        per_sample["confusion_index_mean"] = stats["confusion_index"].mean(axis=0)
    out["per_sample"] = {**_broadcast(keys, n), **per_sample}
    return out


def _small(table: dict) -> dict:
    """per_sample's columns in compact types (the largest metric table)."""
    return {c: (np.asarray(v, np.float32) if c in ("frac_wrong", "label_entropy",
                                                   "entropy_mean", "confusion_index_mean")
                else np.asarray(v, np.int16) if c in ("n_labels", "flips") else v)
            for c, v in table.items()}


def metrics_job(prediction_paths: Sequence[str | Path], out_paths: dict[str, Path], *,
                classes: Sequence | None = None, ec_local_undefined: str = "nan",
                manifest=None) -> dict[str, int]:
    """Every repeat of the prediction files through :func:`repeat_columns`, one at a time,
    each table streamed into ``out_paths[table]`` with the cell's perturbation levels as
    columns. Returns the rows written per table."""
    from modelvar.pipeline.predictions import iter_repeats
    from modelvar.study.cells import Cell
    from modelvar.table_files import TableStream

    streams = {t: TableStream(out_paths[t], manifest=manifest) for t in TABLES}
    levels: dict[str, dict] = {}
    try:
        for matrix in iter_repeats(prediction_paths, classes):
            cell = matrix.keys["cell"]
            if cell not in levels:
                levels[cell] = Cell.parse(cell).levels()
            # dataset and classifier are the tables' partition keys: in the path, not the file
            keys = {"cell": cell, "repeat": matrix.keys["repeat"]}
            for table, columns in repeat_columns(
                    matrix, ec_local_undefined=ec_local_undefined, keys=keys).items():
                rows = len(next(iter(columns.values())))
                columns = {**columns, **_broadcast(levels[cell], rows)}
                streams[table].write(_small(columns) if table == "per_sample" else columns)
    except BaseException:
        for stream in streams.values():
            stream.abort()
        raise
    return {t: stream.close() for t, stream in streams.items()}


def repeat_tables(
    predictions: pd.DataFrame,
    *,
    classes: list | None = None,
    ec_local_undefined: str = "nan",
    keys: tuple[str, ...] = KEY_COLUMNS,
) -> dict[str, pd.DataFrame]:
    """The five tables of a long DataFrame of predictions (a user's own), per group of the
    ``keys`` columns it has (e.g. ``repeat``)."""
    import pandas as pd

    from modelvar.pipeline.predictions import to_runs_matrix

    keys = tuple(k for k in keys if k in predictions.columns)
    parts: dict[str, list] = {name: [] for name in TABLES}
    groups = predictions.groupby(list(keys), sort=True) if keys else [((), predictions)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        matrix = to_runs_matrix(group, classes)
        columns = repeat_columns(matrix, ec_local_undefined=ec_local_undefined,
                                 keys=dict(zip(keys, key, strict=True)))
        for name in TABLES:
            parts[name].append(pd.DataFrame(columns[name]))
    return {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items()}
