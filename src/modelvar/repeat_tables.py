"""From prediction tables to pairwise metric tables and per-repeat summaries.

Input: the long prediction tables of one or more (dataset, classifier, cell, repeat) groups
(:mod:`modelvar.predictions`). For each group the runs matrix is built and all pairwise metrics
are computed on the full test set and on the disagreement set. Outputs:

* pairwise table: one row per (group, subset, pair) with the key columns, ``run_i``, ``run_j``,
  ``n``, ``acc_i``, ``acc_j`` and one column per metric;
* summary table (long): one row per (group, subset, metric) with mean, sd, min, max, range,
  count and n_undefined over the repeat's pairs; the metric ``accuracy`` summarises per-run
  accuracy over the repeat's runs (subset ``all``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.metrics.pairwise import ALL_METRICS, SUBSETS, pairwise_metrics
from modelvar.metrics.summary import STATS, summarise
from modelvar.predictions import KEY_COLUMNS, to_runs_matrix


def repeat_tables(
    predictions: pd.DataFrame,
    *,
    classes: list[str] | None = None,
    ec_local_undefined: str = "nan",
    keys: tuple[str, ...] = KEY_COLUMNS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    keys = tuple(k for k in keys if k in predictions.columns)
    pair_frames, summary_rows = [], []
    groups = predictions.groupby(list(keys), sort=True) if keys else [((), predictions)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        key_values = dict(zip(keys, key, strict=True))
        m = to_runs_matrix(group, classes)
        for subset in SUBSETS:
            pairs = pairwise_metrics(
                m.y_true, m.preds, n_classes=len(m.classes), subset=subset,
                ec_local_undefined=ec_local_undefined, run_ids=m.runs,
            )
            for k, v in reversed(key_values.items()):
                pairs.insert(0, k, v)
            pair_frames.append(pairs)
            for metric in ALL_METRICS:
                summary_rows.append(
                    {**key_values, "subset": subset, "metric": metric,
                     "n_samples": int(pairs["n"].iloc[0]), **summarise(pairs[metric])}
                )
        acc = (m.preds == m.y_true).mean(axis=1)
        summary_rows.append(
            {**key_values, "subset": "all", "metric": "accuracy",
             "n_samples": len(m.samples), **summarise(acc)}
        )
    pairwise = pd.concat(pair_frames, ignore_index=True)
    summary = pd.DataFrame(summary_rows, columns=[*keys, "subset", "metric", "n_samples", *STATS])
    summary["count"] = summary["count"].astype(np.int64)
    return pairwise, summary
