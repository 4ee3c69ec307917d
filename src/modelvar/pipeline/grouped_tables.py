"""Per-repeat grouped-metric tables of one (dataset, classifier, cell): the pipeline's use of
:mod:`modelvar.metrics.grouped`.

For each configured *grouping* (one categorical feature, the true class ``@class``, or an
intersection of several) and each repeat:

* per run: accuracy by group, and its disparities (``run`` = run index);
* per repeat: mean run accuracy and the mean of each configured pairwise reproducibility metric
  by group, with the jackknife-over-runs interval, and their disparities (``run`` = −1).

Two tidy tables come out:

``grouped``: ``dataset, classifier, cell, repeat, run, grouping, group, n, metric, value, se,
ci_low, ci_high`` (``group`` = ``overall`` for the whole test set; intervals only for pairwise
metrics);

``disparities``: ``dataset, classifier, cell, repeat, run, grouping, metric, aggregate, value`` with
``aggregate`` in ``difference_minmax, difference_to_overall, ratio_minmax, ratio_to_overall,
group_min, group_max`` (ratios only for metrics that cannot be negative).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.metrics.grouped import (
    SIGNED_PAIRWISE,
    GroupedMetric,
    GroupedMetricError,
    reproducibility_by_group,
    reproducibility_ci_by_group,
)
from modelvar.pipeline.predictions import KEY_COLUMNS, to_runs_matrix

CLASS_GROUPING = "@class"
AGGREGATE_COLUMNS = (
    ("difference", "minmax"), ("difference", "to_overall"),
    ("ratio", "minmax"), ("ratio", "to_overall"),
    ("group_min", None), ("group_max", None),
)


def grouping_name(grouping: str | list[str]) -> str:
    return grouping if isinstance(grouping, str) else " × ".join(grouping)


def group_features(
    by_sample: pd.DataFrame, samples: np.ndarray, y_true: np.ndarray, grouping: str | list[str],
    categorical: set[str],
) -> pd.DataFrame:
    """The grouping columns for the given test samples (``@class`` is the true class);
    ``by_sample`` is the canonical dataset indexed by its ``sample`` id."""
    columns = [grouping] if isinstance(grouping, str) else list(grouping)
    out = {}
    for col in columns:
        if col == CLASS_GROUPING:
            out["class"] = np.asarray(y_true, dtype=object)
            continue
        if col not in by_sample.columns:
            raise GroupedMetricError(
                f"grouping column {col!r} is not in the dataset; columns: "
                f"{sorted(c for c in by_sample.columns)}"
            )
        if col not in categorical:
            raise GroupedMetricError(
                f"grouping column {col!r} is numeric: group by categorical features (or "
                f"{CLASS_GROUPING!r} for the true class)"
            )
        values = by_sample.loc[samples, col]
        if values.isna().any():
            raise GroupedMetricError(
                f"grouping column {col!r} has {int(values.isna().sum())} missing value(s) in "
                "the test set"
            )
        out[col] = values.astype(str).to_numpy(dtype=object)
    return pd.DataFrame(out)


def _label(key) -> str:
    return " × ".join(map(str, key)) if isinstance(key, tuple) else str(key)


def _disparities(gm: GroupedMetric, names: list[str], signed: set[str]) -> list[dict]:
    rows = []
    for aggregate, method in AGGREGATE_COLUMNS:
        usable = [m for m in names if not (aggregate == "ratio" and m in signed)]
        if not usable:
            continue
        values = gm.aggregate(aggregate, method=method or "minmax", metrics=usable)
        label = aggregate if method is None else f"{aggregate}_{method}"
        rows += [{"metric": m, "aggregate": label, "value": float(values[m])} for m in usable]
    return rows


def grouped_tables(
    frame: pd.DataFrame,
    data: pd.DataFrame,
    *,
    groupings: list,
    metrics: list[str],
    categorical: set[str],
    classes: list[str] | None = None,
    ec_local_undefined: str = "nan",
) -> dict[str, pd.DataFrame]:
    """Grouped and disparity tables for all repeats in ``frame`` (see module docstring)."""
    grouped_rows, disparity_rows = [], []
    by_sample = data.set_index("sample")
    for _repeat, part in frame.groupby("repeat", sort=True):
        keys = {c: part[c].iloc[0] for c in KEY_COLUMNS}
        rm = to_runs_matrix(part, classes=classes)
        labels = np.asarray(rm.classes, dtype=object)
        y_true = labels[rm.y_true]
        preds = labels[rm.preds]  # (k runs × n samples)
        runs = preds.T  # (n samples × k runs), sliced by rows in the per-run accuracies
        for grouping in groupings:
            name = grouping_name(grouping)
            feats = group_features(by_sample, rm.samples, y_true, grouping, categorical)
            base = {**keys, "grouping": name}
            # per run: accuracy by group
            per_run = {
                f"run{j}": (lambda yt, r, j=j: float(np.mean(r[:, j] == yt)))
                for j in range(runs.shape[1])
            }
            gm = GroupedMetric(per_run, y_true, runs, sensitive_features=feats)
            sizes = feats.groupby(list(feats.columns)).size()
            for j, run in enumerate(rm.runs):
                col = f"run{j}"
                grouped_rows.append({**base, "run": int(run), "group": "overall", "n": len(y_true),
                                     "metric": "accuracy", "value": gm.overall[col].iloc[0]})
                for key, value in gm.by_group[col].items():
                    grouped_rows.append({**base, "run": int(run), "group": _label(key),
                                         "n": int(sizes.get(key, 0)), "metric": "accuracy",
                                         "value": value})
                for row in _disparities(gm, [col], set()):
                    disparity_rows.append({**base, "run": int(run), **row, "metric": "accuracy"})
            # per repeat: reproducibility by group, with jackknife intervals
            rep = reproducibility_by_group(y_true, preds, sensitive_features=feats,
                                           metrics=metrics, ec_local_undefined=ec_local_undefined)
            ci = reproducibility_ci_by_group(y_true, preds, sensitive_features=feats,
                                             metrics=metrics, ec_local_undefined=ec_local_undefined)
            ci = ci.set_index(["group", "metric"])
            for metric in rep.metric_names:
                short = metric.removeprefix("mean_")
                for group, value in [("overall", rep.overall[metric].iloc[0]),
                                     *rep.by_group[metric].items()]:
                    label = _label(group)
                    row = {**base, "run": -1, "group": label, "metric": metric, "value": value,
                           "n": len(y_true) if label == "overall" else int(sizes.get(group, 0))}
                    if (label, short) in ci.index:
                        row.update(ci.loc[(label, short), ["se", "ci_low", "ci_high"]].to_dict())
                    grouped_rows.append(row)
            signed = {f"mean_{m}" for m in metrics if m in SIGNED_PAIRWISE}
            for row in _disparities(rep, rep.metric_names, signed):
                disparity_rows.append({**base, "run": -1, **row})
    grouped = pd.DataFrame(grouped_rows)
    for col in ("se", "ci_low", "ci_high"):
        if col not in grouped:
            grouped[col] = np.nan
    order = [*KEY_COLUMNS, "run", "grouping", "group", "n", "metric", "value", "se", "ci_low",
             "ci_high"]
    disparities = pd.DataFrame(disparity_rows)[
        [*KEY_COLUMNS, "run", "grouping", "metric", "aggregate", "value"]
    ]
    return {"grouped": grouped[order], "disparities": disparities}
