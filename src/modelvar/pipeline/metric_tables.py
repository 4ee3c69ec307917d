"""From prediction tables to the metric tables of each repeat.

Input: long prediction tables (:mod:`modelvar.pipeline.predictions`) of one or more groups keyed by
(dataset, classifier, cell, repeat) — whichever of these columns exist. Per group the runs matrix
is built and :func:`repeat_tables` returns five tables:

``pairwise``   one row per (group, subset, pair): ``run_i``, ``run_j``, ``n``, ``acc_i``,
               ``acc_j`` and every pairwise metric, on the full test set (``subset=all``) and on
               the disagreement set (``subset=disagree``).
``summary``    one row per (group, subset, metric): mean, sd, min, max, range, count,
               n_undefined over the repeat's pairs, the jackknife SE and 95 % CI of the mean, the
               independence-null mean and the excess over it (:mod:`modelvar.metrics.inference`);
               per-run metrics (accuracy, balanced accuracy, log loss, Brier, entropy, …) are
               summarised over the repeat's runs with the same statistics (no CI / null).
``per_run``    one row per (group, run): the per-run metrics (:mod:`~.probabilistic`).
``agreement``  one row per group: Fleiss' κ, Krippendorff's α over all runs, and the
               "always wrong" / "ever wrong" error-set sizes (:mod:`~.agreement`).
``per_sample`` one row per (group, sample): fraction of runs wrong, distinct labels, flips,
               label entropy, and (with probabilities) the sample's normalised Shannon entropy
               and confusion index averaged over runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.metrics.agreement import multi_run_agreement, per_sample_instability
from modelvar.metrics.inference import independence_null, jackknife_ci
from modelvar.metrics.pairwise import ALL_METRICS, METRIC_RANGES, SUBSETS, pairwise_metrics
from modelvar.metrics.probabilistic import confusion_index, entropy, per_run_metrics
from modelvar.metrics.summary import STATS, summarise
from modelvar.pipeline.predictions import KEY_COLUMNS, to_runs_matrix

INFERENCE = ("se", "ci_low", "ci_high", "null_mean", "excess")
TABLES = ("pairwise", "summary", "per_run", "agreement", "per_sample")


def _with_keys(frame: pd.DataFrame, key_values: dict) -> pd.DataFrame:
    for k, v in reversed(key_values.items()):
        frame.insert(0, k, v)
    return frame


def repeat_tables(
    predictions: pd.DataFrame,
    *,
    classes: list[str] | None = None,
    ec_local_undefined: str = "nan",
    keys: tuple[str, ...] = KEY_COLUMNS,
) -> dict[str, pd.DataFrame]:
    keys = tuple(k for k in keys if k in predictions.columns)
    out: dict[str, list] = {name: [] for name in TABLES}
    groups = predictions.groupby(list(keys), sort=True) if keys else [((), predictions)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        key_values = dict(zip(keys, key, strict=True))
        m = to_runs_matrix(group, classes)
        n_classes = len(m.classes)
        k = len(m.runs)
        iu, ju = np.triu_indices(k, 1)
        for subset in SUBSETS:
            pairs = pairwise_metrics(
                m.y_true, m.preds, n_classes=n_classes, subset=subset,
                ec_local_undefined=ec_local_undefined, run_ids=m.runs,
            )
            # the null only where it is unbiased: the full test set (modelvar.metrics.inference)
            null = (independence_null(pairs["acc_i"], pairs["acc_j"], n_classes)
                    if subset == "all" else {})
            out["pairwise"].append(_with_keys(pairs, key_values))
            for metric in ALL_METRICS:
                stats_ = summarise(pairs[metric])
                se, low, high = jackknife_ci(iu, ju, pairs[metric].to_numpy(),
                                             bounds=METRIC_RANGES[metric])
                defined = null[metric].dropna() if metric in null else ()
                null_mean = float(np.mean(defined)) if len(defined) else np.nan
                out["summary"].append({
                    **key_values, "subset": subset, "metric": metric,
                    "n_samples": int(pairs["n"].iloc[0]), **stats_,
                    "se": se, "ci_low": low, "ci_high": high, "null_mean": null_mean,
                    "excess": stats_["mean"] - null_mean,
                })
        proba = m.proba
        run_rows = []
        for i, run in enumerate(m.runs):
            row = per_run_metrics(
                m.y_true, m.preds[i], None if proba is None else proba[i], n_classes
            )
            run_rows.append({**key_values, "run": run, **row})
        per_run = pd.DataFrame(run_rows)
        out["per_run"].append(per_run)
        for metric in per_run.columns.difference([*keys, "run"], sort=False):
            out["summary"].append({
                **key_values, "subset": "all", "metric": metric,
                "n_samples": len(m.samples), **summarise(per_run[metric]),
                **dict.fromkeys(INFERENCE, np.nan),
            })
        out["agreement"].append({**key_values, "n_runs": k,
                                 **multi_run_agreement(m.y_true, m.preds, n_classes)})
        per_sample = per_sample_instability(m.y_true, m.preds, n_classes)
        per_sample.insert(0, "sample", m.samples)
        if proba is not None:
            flat = proba.reshape(-1, n_classes)
            per_sample["entropy_mean"] = entropy(flat).reshape(k, -1).mean(axis=0)
            per_sample["confusion_index_mean"] = (
                confusion_index(flat).reshape(k, -1).mean(axis=0)
            )
        out["per_sample"].append(_with_keys(per_sample, key_values))
    columns = [*keys, "subset", "metric", "n_samples", *STATS, *INFERENCE]
    return {
        "pairwise": pd.concat(out["pairwise"], ignore_index=True),
        "summary": pd.DataFrame(out["summary"], columns=columns),
        "per_run": pd.concat(out["per_run"], ignore_index=True),
        "agreement": pd.DataFrame(out["agreement"]),
        "per_sample": pd.concat(out["per_sample"], ignore_index=True),
    }
