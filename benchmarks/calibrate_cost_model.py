"""Calibrate the fit cost model (modelvar.pipeline.cost_model) on this machine, one core.

Times fit + predict (what the runs table's fit_seconds measures) of every classifier on synthetic
classification data over a grid of training rows n, encoded columns d and classes C (and MLP
epochs), fits the log-linear model, prints how well it predicts the measured fits, and with
--write stores the constants as the shipped src/modelvar/pipeline/cost_model.json.

    python benchmarks/calibrate_cost_model.py [--write]
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import itertools
import platform
import time

import numpy as np

from modelvar.models.classifiers import make_classifier
from modelvar.pipeline.cost_model import SHIPPED, fit

GRID = {
    "lr-sgd": dict(n=[500, 2000, 8000, 32000], d=[10, 40, 160], c=[2, 5, 20], epochs=[1]),
    "svm-sgd": dict(n=[500, 2000, 8000, 32000], d=[10, 40, 160], c=[2, 5, 20], epochs=[1]),
    "xgb": dict(n=[500, 2000, 8000], d=[10, 40, 160], c=[2, 5, 12], epochs=[1]),
    "mlp": dict(n=[300, 1000, 3000], d=[10, 80], c=[2, 10], epochs=[1, 3]),
}


def data(n, d, c, rng):
    centers = rng.normal(0, 1.5, (c, d))
    y = rng.integers(0, c, n)
    X = centers[y] + rng.normal(0, 1, (n, d))
    return X, y


def time_fit(clf, n, d, c, epochs, rng) -> float:
    X, y = data(n + n // 3, d, c, rng)
    Xtr, ytr, Xte = X[:n], y[:n], X[n:]
    model = make_classifier(clf, seed=1, threads=1, epochs=epochs if clf == "mlp" else None)
    start = time.perf_counter()
    model.fit(Xtr, ytr, c)
    model.predict_proba(Xte)
    model.predict(Xte)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store as the shipped constants")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    samples = {}
    for clf, grid in GRID.items():
        rows = []
        for n, d, c, e in itertools.product(grid["n"], grid["d"], grid["c"], grid["epochs"]):
            seconds = min(time_fit(clf, n, d, c, e, rng) for _ in range(2))
            rows.append((n, d, c, e, seconds))
        samples[clf] = np.array(rows)
        print(f"{clf}: {len(rows)} fits, {sum(r[4] for r in rows):.1f} s", flush=True)
    model = fit(samples, source=f"benchmarks/calibrate_cost_model.py on {platform.node()}, "
                f"{time.strftime('%Y-%m-%d')}, one core")
    print("\nclassifier  exponents (n, d, C, epochs)   predicted/measured: median, min, max")
    for clf, rows in samples.items():
        ratio = np.array([model.seconds(clf, *r[:4]) / r[4] for r in rows])
        exps = ", ".join(f"{e:+.2f}" for e in model.classifiers[clf].exponents)
        print(f"{clf:10s}  {exps:28s}  {np.median(ratio):.2f}, {ratio.min():.2f}, "
              f"{ratio.max():.2f}")
    if args.write:
        SHIPPED.write_text(model.to_json())
        print(f"\nwrote {SHIPPED}")


if __name__ == "__main__":
    main()
