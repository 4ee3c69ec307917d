"""Per-repeat grouped-metric tables: the pipeline's use of grouped metrics (seed 003).

For each configured *grouping* (one categorical feature, the true class ``@class``, or an
intersection of several) and each repeat:

* per run: accuracy by group, and its disparities (``run`` = run index);
* per repeat: mean run accuracy and the mean of each configured pairwise reproducibility metric
  by group, with the jackknife-over-runs interval, and their disparities (``run`` = −1).

Groups are those of fairlearn's ``MetricFrame`` (:mod:`modelvar.metrics.grouped`): the product of
each feature's sorted values, an empty intersection a row of NaN that every aggregate skips. The
job computes them with numpy (per-group sums by ``bincount``, pairwise metrics on each group's
samples) instead of through ``MetricFrame``, whose per-group, per-metric overhead was ≈ 80 % of
the job; ``tests/test_grouped.py`` checks the tables against the ``MetricFrame`` computation.

Two tidy tables come out:

``grouped``: ``cell, repeat, run, grouping, group, n, metric, value, se, ci_low, ci_high``
(``group`` = ``overall`` for the whole test set; intervals only for pairwise metrics);

``disparities``: ``cell, repeat, run, grouping, metric, aggregate, value`` with ``aggregate`` in
``difference_minmax`` (max − min over groups), ``difference_to_overall`` (max |group − overall|),
``ratio_minmax`` (min / max), ``ratio_to_overall`` (min over groups of the ratio ≤ 1 of group and
overall), ``group_min``, ``group_max`` (ratios only for metrics that cannot be negative).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from modelvar.metrics import registry
from modelvar.metrics.inference import jackknife_ci
from modelvar.metrics.pairwise import pairwise_arrays
from modelvar.pipeline.predictions import RunsMatrix
from modelvar.study.groups import CLASS_GROUPING, grouping_columns

AGGREGATES = ("difference_minmax", "difference_to_overall", "ratio_minmax", "ratio_to_overall",
              "group_min", "group_max")
GROUPED_COLUMNS = ("grouping", "group", "n", "metric", "value", "se", "ci_low", "ci_high")


class GroupingError(ValueError):
    """A grouping column is absent, numeric, or has missing values in a test set."""


def grouping_name(grouping: str | list[str]) -> str:
    return grouping if isinstance(grouping, str) else " × ".join(grouping)


def group_codes(columns: dict[str, np.ndarray], samples: np.ndarray, y_true_labels: np.ndarray,
                grouping, categorical: set[str]) -> tuple[np.ndarray, list[str]]:
    """Each test sample's group index and the group labels (the product of the features'
    sorted values, as fairlearn orders them)."""
    names = grouping_columns(grouping)
    per_feature = []
    for name in names:
        if name == CLASS_GROUPING:
            per_feature.append(np.asarray(y_true_labels, dtype=object).astype(str))
            continue
        if name not in columns:
            raise GroupingError(f"grouping column {name!r} is not in the dataset; columns: "
                                f"{sorted(columns)}")
        if name not in categorical:
            raise GroupingError(f"grouping column {name!r} is numeric: group by categorical "
                                f"features (or {CLASS_GROUPING!r} for the true class)")
        values = columns[name][samples]
        missing = np.array([v is None for v in values])
        if missing.any():
            raise GroupingError(f"grouping column {name!r} has {int(missing.sum())} missing "
                                "value(s) in the test set")
        per_feature.append(values.astype(str))
    uniques = [sorted(set(v)) for v in per_feature]
    code = np.zeros(len(samples), dtype=np.int64)
    for values, levels in zip(per_feature, uniques, strict=True):
        lookup = {v: i for i, v in enumerate(levels)}
        code = code * len(levels) + np.fromiter((lookup[v] for v in values), np.int64,
                                                len(values))
    labels = [" × ".join(combo) for combo in itertools.product(*uniques)]
    return code, labels


def disparities(values: np.ndarray, overall: float, signed: bool) -> dict[str, float]:
    """The aggregates of one metric's group values (NaN groups skipped)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if not len(v):
        return dict.fromkeys(AGGREGATES, np.nan)
    lo, hi = float(v.min()), float(v.max())
    out = {"difference_minmax": hi - lo,
           "difference_to_overall": float(np.max(np.abs(v - overall))),
           "group_min": lo, "group_max": hi}
    if not signed:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = overall / v
            ratio = np.where(ratio > 1, 1 / ratio, ratio)
            out["ratio_minmax"] = lo / hi if hi != 0 else np.nan
            out["ratio_to_overall"] = float(np.nanmin(ratio)) if np.isfinite(
                ratio).any() else np.nan
    return out


def grouped_columns(matrix: RunsMatrix, columns: dict[str, np.ndarray], *, groupings: list,
                    metrics: Sequence[str], categorical: set[str],
                    ec_local_undefined: str = "nan") -> tuple[dict, dict]:
    """The grouped and disparities rows of one repeat, as column dicts (module docstring)."""
    keys = {"cell": matrix.keys.get("cell"), "repeat": matrix.keys.get("repeat")}
    labels = np.asarray(matrix.classes, dtype=object)
    y, preds = matrix.y_true, matrix.preds
    k, n = preds.shape
    correct = preds == y
    grouped, disp = [], []
    for grouping in groupings:
        name = grouping_name(grouping)
        code, group_labels = group_codes(columns, matrix.samples, labels[y], grouping,
                                         categorical)
        n_groups = len(group_labels)
        sizes = np.bincount(code, minlength=n_groups)
        base = {**keys, "grouping": name}
        # per run: accuracy by group
        hits = np.bincount((np.arange(k)[:, None] * n_groups + code).ravel(),
                           weights=correct.ravel(), minlength=k * n_groups).reshape(k, n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            accuracy = np.where(sizes > 0, hits / np.maximum(sizes, 1), np.nan)
        overall_accuracy = correct.mean(axis=1)
        for j, run in enumerate(matrix.runs):
            grouped.append({**base, "run": int(run), "group": "overall", "n": n,
                            "metric": "accuracy", "value": float(overall_accuracy[j])})
            grouped += [{**base, "run": int(run), "group": g, "n": int(sizes[i]),
                         "metric": "accuracy", "value": float(accuracy[j, i])}
                        for i, g in enumerate(group_labels)]
            disp += [{**base, "run": int(run), "metric": "accuracy", "aggregate": a,
                      "value": v}
                     for a, v in disparities(accuracy[j], overall_accuracy[j], False).items()]
        # per repeat: mean accuracy and reproducibility by group, with jackknife intervals
        iu, ju = np.triu_indices(k, 1)
        members = [("overall", np.arange(n))] + [(g, np.flatnonzero(code == i))
                                                 for i, g in enumerate(group_labels)]
        values: dict[str, list] = {m: [] for m in ["mean_accuracy", *[f"mean_{x}"
                                                                       for x in metrics]]}
        for group, idx in members:
            size = len(idx)
            row = {**base, "run": -1, "group": group, "n": size}
            mean_acc = float(correct[:, idx].mean()) if size else np.nan
            values["mean_accuracy"].append(mean_acc)
            grouped.append({**row, "metric": "mean_accuracy", "value": mean_acc})
            table = pairwise_arrays(y[idx], preds[:, idx], n_classes=len(labels),
                                    metrics=list(metrics),
                                    ec_local_undefined=ec_local_undefined) if size else None
            for metric in metrics:
                if table is None:
                    mean, se, low, high = (np.nan,) * 4
                else:
                    pair_values = np.asarray(table[metric], dtype=np.float64)
                    mean = float(np.nanmean(pair_values)) if np.isfinite(
                        pair_values).any() else np.nan
                    se, low, high = jackknife_ci(iu, ju, pair_values,
                                                 bounds=registry.metric(metric).value_range)
                values[f"mean_{metric}"].append(mean)
                grouped.append({**row, "metric": f"mean_{metric}", "value": mean, "se": se,
                                "ci_low": low, "ci_high": high})
        # a signed metric (its registry range reaches below 0, e.g. κ) gets no ratios
        signed_of = {"mean_accuracy": False,
                     **{f"mean_{m}": registry.metric(m).signed for m in metrics}}
        for metric, vals in values.items():
            signed = signed_of[metric]
            disp += [{**base, "run": -1, "metric": metric, "aggregate": a, "value": v}
                     for a, v in disparities(np.array(vals[1:]), vals[0], signed).items()
                     if not (signed and a.startswith("ratio"))]
    grouped_cols = {c: [r.get(c, np.nan) for r in grouped]
                    for c in ("cell", "repeat", "run", *GROUPED_COLUMNS)}
    disp_cols = {c: [r[c] for r in disp]
                 for c in ("cell", "repeat", "run", "grouping", "metric", "aggregate", "value")}
    return grouped_cols, disp_cols


def dataset_columns(parquet_path: str | Path, meta: dict, groupings: list) -> dict:
    """The grouping columns of the canonical dataset, as arrays indexed by ``sample``."""
    import pyarrow.parquet as pq

    wanted = sorted({c for g in groupings for c in grouping_columns(g)} - {CLASS_GROUPING})
    present = {f["name"] for f in meta["features"]}
    table = pq.read_table(parquet_path, columns=[c for c in wanted if c in present])
    return {c: np.asarray(table.column(c).cast("string").to_pylist(), dtype=object)
            for c in table.column_names}


def grouped_job(prediction_paths, data_path, meta: dict, out_paths: dict, *, groupings: list,
                metrics: Sequence[str], ec_local_undefined: str = "nan",
                manifest=None) -> dict[str, int]:
    """Every repeat of the prediction files, one at a time, into the grouped and disparities
    tables (with the cells' levels)."""
    from modelvar.pipeline.predictions import iter_repeats
    from modelvar.study.cells import Cell
    from modelvar.table_files import TableStream

    categorical = {f["name"] for f in meta["features"] if f["type"] == "categorical"}
    columns = dataset_columns(data_path, meta, groupings)
    streams = {t: TableStream(out_paths[t], manifest=manifest) for t in ("grouped",
                                                                         "disparities")}
    try:
        for matrix in iter_repeats(prediction_paths, meta["classes"]):
            levels = Cell.parse(matrix.keys["cell"]).levels()
            tables = grouped_columns(matrix, columns, groupings=groupings, metrics=metrics,
                                     categorical=categorical,
                                     ec_local_undefined=ec_local_undefined)
            for name, table in zip(("grouped", "disparities"), tables, strict=True):
                rows = len(table["cell"])
                streams[name].write({**table, **{f: [v] * rows for f, v in levels.items()}})
    except BaseException:
        for stream in streams.values():
            stream.abort()
        raise
    return {t: s.close() for t, s in streams.items()}
