"""Benchmark: a repeat's per-run metrics and grouped tables, vectorised vs the library calls they
replace (issue 13: sklearn's per-call validation was 58 % of a repeat's table time, fairlearn's
per-group overhead ≈ 80 % of the grouped job).

    python benchmarks/bench_tables.py [--rounds 5]

One repeat of 10 runs on 2,000 test samples, 5 classes, with probabilities: per-run metrics by
`per_run_columns` (all runs at once) vs one sklearn call per metric and run (accuracy,
balanced accuracy, log loss, Brier); grouped tables by `grouped_columns` (numpy, per group) vs
the MetricFrame computation of the same numbers (`GroupedMetric` per run, then
`reproducibility_by_group`), for two groupings (one feature, an intersection). Both sides run
back to back in each round; min and median of the ratio.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import statistics
import time

import numpy as np
import pandas as pd
import sklearn.metrics as skm

from modelvar.metrics import grouped
from modelvar.metrics.probabilistic import per_run_columns, probability_stats
from modelvar.pipeline.grouped_tables import grouped_columns
from modelvar.pipeline.predictions import RunsMatrix

K, N, C = 10, 2000, 5


def data():
    rng = np.random.default_rng(0)
    y = rng.integers(0, C, N)
    proba = rng.dirichlet(np.ones(C), size=(K, N))
    proba[np.arange(K)[:, None], np.arange(N), y] += 1.0
    proba /= proba.sum(axis=2, keepdims=True)
    preds = proba.argmax(axis=2)
    sex = rng.choice(["f", "m"], N)
    job = rng.choice(["a", "b", "c"], N)
    return y, preds, proba, sex, job


def per_run_sklearn(y, preds, proba):
    out = []
    for j in range(K):
        out.append((skm.accuracy_score(y, preds[j]), skm.balanced_accuracy_score(y, preds[j]),
                    skm.log_loss(y, proba[j], labels=range(C)),
                    np.mean(((proba[j] - np.eye(C)[y]) ** 2).sum(axis=1))))
    return out


def grouped_metricframe(y, preds, sex, job):
    labels = np.array(list("vwxyz"))
    for features in (pd.Series(sex, name="sex"), pd.DataFrame({"sex": sex, "job": job})):
        for j in range(K):
            gm = grouped.GroupedMetric(skm.accuracy_score, labels[y], labels[preds[j]],
                                       sensitive_features=features)
            gm.by_group, gm.difference(), gm.ratio()
        grouped.reproducibility_ci_by_group(labels[y], labels[preds],
                                            sensitive_features=features,
                                            metrics=["ec_global", "pa"])


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    y, preds, proba, sex, job = data()
    samples = np.arange(N)
    matrix = RunsMatrix(y_true=y, preds=preds, runs=np.arange(K), samples=samples,
                        classes=list("vwxyz"), proba=proba, keys={"cell": "c", "repeat": 0})
    columns = {"sex": sex.astype(object), "job": job.astype(object)}
    sides = {
        "per-run metrics": (lambda: per_run_columns(y, preds, probability_stats(y, proba), C),
                            lambda: per_run_sklearn(y, preds, proba)),
        "grouped tables": (lambda: grouped_columns(matrix, columns,
                                                   groupings=["sex", ["sex", "job"]],
                                                   metrics=["ec_global", "pa"],
                                                   categorical={"sex", "job"}),
                           lambda: grouped_metricframe(y, preds, sex, job)),
    }
    print(f"one repeat: {K} runs x {N} samples, {C} classes")
    for name, (ours, theirs) in sides.items():
        ratios, fast, slow = [], [], []
        for _ in range(args.rounds):
            fast.append(timed(ours))
            slow.append(timed(theirs))
            ratios.append(slow[-1] / fast[-1])
        print(f"{name:16s} ours {statistics.median(fast) * 1e3:7.1f} ms, library calls "
              f"{statistics.median(slow) * 1e3:7.1f} ms (medians); speed-up min "
              f"{min(ratios):.1f}x, median {statistics.median(ratios):.1f}x")


if __name__ == "__main__":
    main()
