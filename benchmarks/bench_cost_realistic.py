"""Benchmark: the plan's estimate of a fit against the fit, on data the cost model never saw
(issue 55): noisy synthetic data with overlapping classes and flipped labels, and the embedded
real datasets, per built-in CPU classifier; the estimate from the shape alone (the cost model)
and with the plan's probe fits on the data (modelvar.planning.data_probe).

    python benchmarks/bench_cost_realistic.py [--classifiers lr-sgd svm-sgd xgb] [--quick]
        [--budget 20]

``--fresh`` probes each noisy shape in a new process, as the workflow's load does (its first fit
of a classifier is the probe's: issue 67 found that fit's start-up priced as the data); the
``--shapes`` option takes shapes of your own (e.g. ones the calibration never saw).

Each fit is one run as a fit job makes it: preprocessed as a fit job does (numeric columns
standardised on the training rows), fit + predict_proba + predict of the test rows, in CPU
seconds, one thread. The data (a seed stream the calibration never uses): ``d`` columns, of which
a fifth are one-hot levels of 4-level categorical features where d ≥ 20 (mixed types); a third of
the numeric columns carry the class (class centres 0.35 apart: the classes overlap), the rest
are noise; 10 % of the labels are flipped. The six shapes are the issue's (dataset rows × encoded
columns × classes; three quarters train). The probes get ``--budget`` CPU seconds per shape (the
default jobs.data_probe_seconds of a study of one dataset). Printed: per fit, the estimate / the
measured seconds without and with the probes, then per classifier how many are within 0.5–2×
and the worst ratio (the issue's goal: ≥ 5 of 6 shapes and the embedded datasets within 0.5–2×).
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse
import json
import time
from pathlib import Path

import numpy as np

from modelvar.models.registry import make_classifier
from modelvar.planning.cost_model import load, onehot_share
from modelvar.planning.data_probe import PredictingOn, probe_factor
from modelvar.planning.plan import few_valued_share
from modelvar.planning.probe_cost import fit_cpu_seconds
from modelvar.seeding import stream

SHAPES = ((3_000, 500, 2), (2_000, 2_000, 3), (8_000, 300, 5), (25_000, 60, 120),
          (12_000, 30, 40), (37_500, 8, 2))
QUICK_SHAPES = ((3_000, 500, 2), (12_000, 30, 40), (37_500, 8, 2))
EMBEDDED = ("anneal", "vehicle", "credit-g", "car", "blood-transfusion-service-center")
TEST_FRACTION = 0.25


def noisy(n, d, c, rng):
    """(X, y, numeric columns) of the module docstring's generator."""
    onehot_features = d // 20 if d >= 20 else 0
    numeric = d - 4 * onehot_features
    y = np.arange(n) % c
    rng.shuffle(y)
    informative = max(numeric // 3, 1)
    centres = rng.normal(0, 0.35, (c, informative))
    X = rng.normal(size=(n, numeric))
    X[:, :informative] += centres[y]
    if onehot_features:
        odds = rng.dirichlet(np.full(4, 2.0), (c, onehot_features))
        u = rng.random((n, onehot_features, 1))
        codes = (u > odds[y].cumsum(axis=2)).sum(axis=2).clip(max=3)
        onehot = np.zeros((n, 4 * onehot_features))
        onehot[np.arange(n)[:, None], np.arange(onehot_features) * 4 + codes] = 1.0
        X = np.hstack([X, onehot])
    flip = rng.random(n) < 0.1
    y = np.where(flip, rng.integers(0, c, n), y)
    y[:c] = np.arange(c)  # every class present
    return X, y, numeric


def standardise(X, numeric, train, test):
    mean, std = X[train, :numeric].mean(axis=0), X[train, :numeric].std(axis=0)
    std[std == 0] = 1.0
    out = X.copy()
    out[:, :numeric] = (X[:, :numeric] - mean) / std
    return out[train], out[test]


def probed_factor(clf, label, y, c, prepare, pool, test, model_seconds, budget, fresh):
    """The probe's factor, found here, or (``fresh``) in a new process whose first fit of the
    classifier is the probe's, as in the workflow's load (issue 67: that fit's start-up was
    measured as the data)."""
    if not fresh:
        found = probe_factor(clf, y, c, prepare, pool, test, len(pool), model_seconds, budget,
                             threads=1, seed=11, label=label, say=lambda line: None)
        return found.factor, found.cpu, found.rows
    import subprocess
    import sys

    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            "import bench_cost_realistic as b; "
            f"print(b.fresh_probe({clf!r}, {label!r}, {budget!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    return tuple(json.loads(out))


def fresh_probe(clf, label, budget):
    """In a new process: the probe of ``clf`` on the noisy shape ``label`` (JSON)."""
    n, d, c = (int(v.replace(",", "")) for v in label.removeprefix("noisy ").split(" x "))
    cost = load(None)
    y, prepare, pool, test, numeric = noisy_case(n, d, c)
    model_seconds = model_seconds_of(cost, clf, c, numeric, 0)
    found = probe_factor(clf, y, c, prepare, pool, test, len(pool), model_seconds, budget,
                         threads=1, seed=11, label=label, say=lambda line: None)
    return json.dumps([found.factor, found.cpu, found.rows])


def model_seconds_of(cost, clf, c, numeric, few):
    def model_seconds(rows, d_):
        return cost.seconds(clf, rows, d_, c, 1.0, onehot_share=onehot_share(numeric, d_),
                            few_valued_share=few_valued_share(None, few, d_))

    return model_seconds


def one_case(clf, label, y, c, prepare, pool, test, numeric, few, cost, budget, fresh=False):
    """(label, n_train, d, C, measured, model estimate, estimate with probes, probe CPU)."""
    model_seconds = model_seconds_of(cost, clf, c, numeric, few)
    factor, probe_cpu, probe_rows = probed_factor(clf, label, y, c, prepare, pool, test,
                                                  model_seconds, budget, fresh)
    X_train, X_test = prepare(pool, test)
    d = X_train.shape[1]
    measured, _ = fit_cpu_seconds(lambda: PredictingOn(make_classifier(clf, seed=0, threads=1),
                                                  X_test), X_train, y[pool], c)
    estimate = model_seconds(len(pool), d)
    return (label, len(pool), d, c, measured, estimate, estimate * factor, probe_cpu,
            probe_rows)


def noisy_case(n, d, c):
    """(y, prepare, training pool, test rows, numeric columns) of the noisy shape n × d × C."""
    rng = stream(20261127, "bench-cost-realistic", dataset=f"{n}x{d}x{c}").generator()
    X, y, numeric = noisy(n, d, c, rng)
    order = rng.permutation(n)
    cut = int(n * (1 - TEST_FRACTION))
    pool, test = np.sort(order[:cut]), np.sort(order[cut:])
    return (y, lambda tr, te, X=X, numeric=numeric: standardise(X, numeric, tr, te), pool, test,
            numeric)


def synthetic_cases(clf, shapes, cost, budget, fresh=False):
    for n, d, c in shapes:
        y, prepare, pool, test, numeric = noisy_case(n, d, c)
        yield one_case(clf, f"noisy {n:,} x {d:,} x {c}", y, c, prepare, pool, test, numeric,
                       0, cost, budget, fresh)


def embedded_cases(clf, cost, budget):
    from modelvar.data import load as load_data
    from modelvar.data.arrays import DataArrays
    from modelvar.data.preprocess import transform_run
    from modelvar.data.schema import count_few_valued
    from modelvar.data.splits import split_test_set

    for name in EMBEDDED:
        dataset = load_data(name, {"source": "embedded"})
        data = DataArrays.from_dataset(dataset)
        few = count_few_valued(dataset.X[dataset.numeric_columns])
        pool, test = split_test_set(data.y, TEST_FRACTION, root_seed=3, dataset=name,
                                    repeat=0, labels=data.classes)
        yield one_case(clf, name, data.y, len(data.classes),
                       lambda tr, te, data=data: transform_run(data.encoded, tr, te)[:2],
                       pool, test, data.encoded.numeric.shape[1], few, cost, budget)


def warm_up(clf):
    """A first fit of each kind (two and many classes) before any timed one: its imports and
    one-time loading are a fit job's start-up, not a fit's cost."""
    rng = np.random.default_rng(0)
    for c in (2, 5):
        X, y = rng.normal(size=(200, 6)), np.arange(200) % c
        model = make_classifier(clf, seed=0, threads=1)
        model.fit(X, y, c)
        model.predict_proba(X)


def summary(rows, column):
    ratios = np.array([r[column] / r[4] for r in rows])
    inside = int(((ratios >= 0.5) & (ratios <= 2)).sum())
    worst = ratios[np.argmax(np.abs(np.log(ratios)))]
    return inside, len(ratios), worst, ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classifiers", nargs="*", default=["lr-sgd", "svm-sgd", "xgb"])
    parser.add_argument("--quick", action="store_true", help="three shapes, not six")
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--save", metavar="JSON", help="also write every row there")
    parser.add_argument("--shapes", nargs="+", metavar="NxDxC",
                        help="noisy shapes of your own (e.g. shapes the calibration never saw)")
    parser.add_argument("--fresh", action="store_true",
                        help="each probe of a noisy shape in a new process, its first fit of the "
                        "classifier the probe's own (as the workflow's load makes it)")
    parser.add_argument("--no-embedded", action="store_true", help="the noisy shapes only")
    args = parser.parse_args()
    cost = load(None)
    shapes = QUICK_SHAPES if args.quick else SHAPES
    if args.shapes:
        shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes]
    print("estimate / measured CPU seconds of one fit (model: the shape alone; probed: times the "
          "data factor)")
    print(f"  {'classifier':9s} {'data':34s} {'n_train':>8s} {'d':>5s} {'C':>4s} "
          f"{'measured':>9s} {'model':>7s} {'probed':>7s} {'probe s':>7s} {'rows':>6s}")
    saved = {}
    for clf in args.classifiers:
        warm_up(clf)
        groups = {"noisy": [], "embedded": []}
        for group, cases in (("noisy", synthetic_cases(clf, shapes, cost, args.budget,
                                                       args.fresh)),
                             ("embedded", [] if args.no_embedded
                              else embedded_cases(clf, cost, args.budget))):
            for row in cases:
                groups[group].append(row)
                label, n, d, c, measured, model, probed, spent, rows = row
                print(f"  {clf:9s} {label:34s} {n:8,d} {d:5d} {c:4d} {measured:9.2f} "
                      f"{model / measured:7.2f} {probed / measured:7.2f} {spent:7.1f} "
                      f"{rows:6,d}", flush=True)
        for group, rows in groups.items():
            if not rows:
                continue
            for column, what in ((5, "model"), (6, "probed")):
                inside, total, worst, _ = summary(rows, column)
                print(f"  {clf} {group} {what}: {inside} of {total} within 0.5-2x, worst "
                      f"{worst:.2f}", flush=True)
        saved[clf] = groups
    if args.save:
        with open(args.save, "w") as fh:
            json.dump({"when": time.strftime("%Y-%m-%d %H:%M"), "rows": saved}, fh, indent=1)


if __name__ == "__main__":
    main()
