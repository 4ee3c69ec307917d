"""Calibrate the fit cost model (modelvar.pipeline.cost_model) on this machine, one core.

Times fit + predict (what the runs table's fit_seconds measures) of every classifier on synthetic
classification data over a grid of training rows n, encoded columns d and classes C (and MLP
epochs), and on the embedded real datasets (preprocessed as in a fit job, at 50 % and 100 % of
the training pool), fits the log-linear model with synthetic and real fits weighted equally,
prints how well it predicts both, and with --write stores the constants as the shipped
src/modelvar/pipeline/cost_model.json.

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

from modelvar.models.registry import make_classifier
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


REAL = ("anneal", "vehicle", "credit-g", "car", "blood-transfusion-service-center")


def real_fits(clf: str) -> list[tuple]:
    """(n_train, d, C, epochs, seconds) of fits on the embedded datasets, as a fit job makes
    them (split, downsampling, preprocessing)."""
    from modelvar.data import load
    from modelvar.data.arrays import DataArrays
    from modelvar.data.preprocess import transform_run
    from modelvar.data.splits import downsample, split_test_set

    rows = []
    epochs = 2 if clf == "mlp" else 1
    for name in REAL:
        data = DataArrays.from_dataset(load(name, {"source": "embedded"}))
        pool, test = split_test_set(data.y, 0.25, root_seed=1, dataset=name, repeat=0,
                                    labels=data.classes)
        for fraction in (0.5, 1.0):
            train = downsample(data.y[pool], pool, fraction, root_seed=1, dataset=name,
                               repeat=0, run=0)
            Xtr, Xte, _ = transform_run(data.encoded, train, test)
            c = len(data.classes)
            best = np.inf
            for _ in range(2):
                model = make_classifier(clf, seed=1, threads=1,
                                        epochs=epochs if clf == "mlp" else None)
                start = time.perf_counter()
                model.fit(Xtr, data.y[train], c)
                model.predict_proba(Xte)
                model.predict(Xte)
                best = min(best, time.perf_counter() - start)
            rows.append((len(train), Xtr.shape[1], c, epochs, best))
    return rows


def xgb_noise_factor() -> float:
    """How much continuous noise on the numeric training values slows xgb: on each embedded
    dataset with numeric features, the time of a fit on `rel 0.2`-perturbed training rows over
    the time on clean ones, modelled as 1 + a · (numeric share of the encoded columns); returns
    a (least squares through the origin). Noise makes every value distinct, so the histogram
    has all its bins and trees split more."""
    from modelvar.data import load
    from modelvar.data.arrays import DataArrays
    from modelvar.data.perturb import relative
    from modelvar.data.preprocess import transform_run
    from modelvar.data.splits import split_test_set

    shares, excess = [], []
    for name in REAL:
        data = DataArrays.from_dataset(load(name, {"source": "embedded"}))
        n_numeric = data.encoded.numeric.shape[1]
        if not n_numeric:
            continue
        pool, test = split_test_set(data.y, 0.25, root_seed=1, dataset=name, repeat=0,
                                    labels=data.classes)
        noisy, _ = relative(data.encoded.numeric[pool], 0.2, np.random.default_rng(0))
        times = []
        for num in (None, noisy):
            Xtr, Xte, _ = transform_run(data.encoded, pool, test, num_train=num)
            best = np.inf
            for _ in range(3):
                model = make_classifier("xgb", seed=1, threads=1)
                start = time.perf_counter()
                model.fit(Xtr, data.y[pool], len(data.classes))
                model.predict_proba(Xte)
                best = min(best, time.perf_counter() - start)
            times.append(best)
        share = n_numeric / Xtr.shape[1]
        shares.append(share)
        excess.append(times[1] / times[0] - 1)
        print(f"xgb on {name}: noisy/clean {times[1] / times[0]:.2f}, numeric share {share:.2f}")
    shares, excess = np.array(shares), np.array(excess)
    return float(max(0.0, (shares @ excess) / (shares @ shares)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store as the shipped constants")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    samples, weights, kinds = {}, {}, {}
    for clf, grid in GRID.items():
        rows = []
        for n, d, c, e in itertools.product(grid["n"], grid["d"], grid["c"], grid["epochs"]):
            seconds = min(time_fit(clf, n, d, c, e, rng) for _ in range(2))
            rows.append((n, d, c, e, seconds))
        real = real_fits(clf)
        samples[clf] = np.array(rows + real)
        weights[clf] = np.array([1.0] * len(rows) + [len(rows) / len(real)] * len(real))
        kinds[clf] = np.array(["synthetic"] * len(rows) + ["real"] * len(real))
        print(f"{clf}: {len(rows)} synthetic, {len(real)} real fits, "
              f"{sum(r[4] for r in rows + real):.1f} s", flush=True)
    model = fit(samples, weights=weights,
                source=f"benchmarks/calibrate_cost_model.py on {platform.node()}, "
                f"{time.strftime('%Y-%m-%d')}, one core, synthetic + embedded datasets")
    model.data_noise = {"xgb": xgb_noise_factor()}
    print(f"xgb under data noise: x (1 + {model.data_noise['xgb']:.2f} * numeric share)")
    print("\nclassifier  exponents (n, d, C, epochs)   predicted/measured: median, min, max")
    for clf, rows in samples.items():
        ratio = np.array([model.seconds(clf, *r[:4]) / r[4] for r in rows])
        exps = ", ".join(f"{e:+.2f}" for e in model.classifiers[clf].exponents)
        for kind in ("synthetic", "real"):
            r = ratio[kinds[clf] == kind]
            print(f"{clf:10s}  {exps:28s}  {kind:9s} {np.median(r):.2f}, {r.min():.2f}, "
                  f"{r.max():.2f}")
    if args.write:
        SHIPPED.write_text(model.to_json())
        print(f"\nwrote {SHIPPED}")


if __name__ == "__main__":
    main()
