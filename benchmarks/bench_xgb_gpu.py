"""Benchmark: xgb's fits on one CPU core vs a GPU (``device="cuda"``), per boosting round, on
data shaped like the full study's dearest datasets (issue 23: xgb holds 93 % of its CPU plan).

    python benchmarks/bench_xgb_gpu.py [--shapes aloi-like,dionis-like,...] [--cpu-rounds 3]

Per shape: synthetic data (``calibrate_cost_model.synthetic``, dense) with the dataset's training
rows, encoded columns and classes; the project's :class:`~modelvar.models.classifiers.XGBModel`
at its default hyperparameters, fit + predict of a test set of a third of the training rows,
with ``trees`` boosting rounds: 1 and ``--cpu-rounds`` on one CPU thread (a full fit of 100
rounds costs up to 40 min there), 1 and ``--gpu-rounds`` on the GPU. A fit's time is linear in
its rounds after the first (each grows one tree per class on the same rows), so the two fits
give a fixed cost (the quantile sketch, the first round) and a cost per round: a full fit's
estimate. Printed per shape: both estimates, the GPU's speed-up over one core of the same
machine and over the shipped cost model (one core of our build machine), whether the GPU's
predictions are the same bits when a fit is repeated, and on how many test rows its labels
differ from the CPU's.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from modelvar.models.classifiers import XGB_TREES, XGBModel
from modelvar.models.registry import spec
from modelvar.planning.cost_model import load

sys.path.insert(0, str(Path(__file__).parent))
from calibrate_cost_model import synthetic

#: name: (training rows, encoded columns, classes) of the full study's datasets (75 % of rows)
SHAPES = {
    "aloi-like": (81_000, 128, 1000),
    "dionis-like": (312_141, 60, 355),
    "helena-like": (48_897, 27, 100),
    "volkert-like": (43_732, 180, 10),
    "adult-like": (36_631, 108, 2),
}


def timed_fit(device: str, rounds: int, data) -> tuple[float, np.ndarray]:
    X, y, Xt, c = data
    model = XGBModel(hparams=spec("xgb").defaults(), seed=1, threads=1, device=device, trees=rounds)
    start = time.perf_counter()
    model.fit(X, y, c)
    proba = model.predict_proba(Xt)
    return time.perf_counter() - start, proba


def full_fit(device: str, rounds: int, data) -> tuple[float, float, float, np.ndarray]:
    """Fixed seconds, seconds per round (from fits of 1 and ``rounds`` rounds), the estimated
    seconds of a full fit (``XGB_TREES`` rounds), and the probabilities of ``rounds`` rounds."""
    one, _ = timed_fit(device, 1, data)
    many, proba = timed_fit(device, rounds, data)
    per_round = max(many - one, 0.0) / (rounds - 1)
    fixed = max(one - per_round, 0.0)
    return fixed, per_round, fixed + XGB_TREES * per_round, proba


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--cpu-rounds", type=int, default=3)
    parser.add_argument("--gpu-rounds", type=int, default=10)
    args = parser.parse_args()
    unknown = set(args.shapes.split(",")) - set(SHAPES)
    if unknown:
        parser.error(f"unknown shapes {sorted(unknown)}; known: {', '.join(SHAPES)}")
    import xgboost

    gpu = bool(xgboost.build_info().get("USE_CUDA", False)) and os.path.exists("/dev/nvidiactl")
    print(f"xgboost {xgboost.__version__}, GPU {'yes' if gpu else 'no'}; default hparams, "
          f"one CPU thread; fit + predict", flush=True)
    cost = load()
    rows = []
    for name in args.shapes.split(","):
        n, d, c = SHAPES[name]
        X, y = synthetic("dense", n + n // 3, d, c, np.random.default_rng(23))
        data = X[:n].astype(np.float32), y[:n], X[n:].astype(np.float32), c
        cpu = full_fit("cpu", args.cpu_rounds, data)
        model = cost.seconds("xgb", n, d, c)
        line = (f"{name} ({n:,} x {d} x {c}): one core {cpu[0]:.1f} s + {cpu[1]:.2f} s/round "
                f"= {cpu[2]:.0f} s per fit (cost model, our build machine's core: {model:.0f} s)")
        if gpu:
            timed_fit("cuda", 1, data)  # warm-up: the context, the kernels
            fixed, per_round, full, proba = full_fit("cuda", args.gpu_rounds, data)
            _, again = timed_fit("cuda", args.gpu_rounds, data)
            _, gpu_short = timed_fit("cuda", args.cpu_rounds, data)
            differ = np.mean(gpu_short.argmax(axis=1) != cpu[3].argmax(axis=1))
            line += (f"\n  GPU {fixed:.2f} s + {per_round:.3f} s/round = {full:.1f} s per fit: "
                     f"{cpu[2] / full:.1f}x one core here, {model / full:.1f}x the cost model; "
                     f"a repeated fit {'identical' if np.array_equal(proba, again) else 'DIFFERS'};"
                     f" labels differ from the CPU's on {differ:.2%} ({args.cpu_rounds} rounds)")
            rows.append((name, cpu[2] / full, model / full))
        print(line, flush=True)
    if rows:
        print("GPU speed-up over one core: " + ", ".join(f"{r[0]} {r[1]:.1f} (vs the cost "
                                                          f"model {r[2]:.1f})" for r in rows))


if __name__ == "__main__":
    main()
