"""Benchmark: MLP fits per second, the runs of a repeat trained as one batched model vs one after
another (issue 13), on the CPU (one thread) and on a GPU when there is one.

    python benchmarks/bench_mlp.py [--epochs 5] [--rounds 3]

Ten runs of vehicle (the fit job's preprocessing, 75 % training pool, per-run model seeds, the
default widths 512/256 and dropout 0.1): batched (modelvar.models.mlp.train on all ten) and
sequential (ten calls with one model each), back to back in each round; fits/s with fit +
predict, min and median over rounds, and the ratio. The two give identical predictions on the
CPU (tests/test_mlp.py). With a GPU it also prints the measured GPU speed-up for the plan: the
GPU's batched fits/s over one CPU core's sequential ones (the cost model's MLP constants are
one-at-a-time fits on one core), the value for the config's ``jobs.gpu_speedup``.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import statistics
import time

import numpy as np

from modelvar.data import load
from modelvar.data.arrays import DataArrays
from modelvar.data.preprocess import transform_run
from modelvar.data.splits import downsample, split_test_set
from modelvar.models import mlp
from modelvar.models.hparams import defaults

RUNS = 10


def runs_of_vehicle():
    data = DataArrays.from_dataset(load("vehicle", {"source": "embedded"}))
    pool, test = split_test_set(data.y, 0.25, root_seed=1, dataset="vehicle", repeat=0,
                                labels=data.classes)
    X, Xt, y = [], [], []
    for run in range(RUNS):
        rows = downsample(data.y[pool], pool, 1.0, root_seed=1, dataset="vehicle", repeat=0,
                          run=run)
        a, b, _ = transform_run(data.encoded, rows, test)
        X.append(a.astype(np.float32))
        Xt.append(b.astype(np.float32))
        y.append(data.y[rows])
    return X, y, Xt, len(data.classes)


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y, Xt, c = runs_of_vehicle()
    h = defaults("mlp")
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"{RUNS} runs of vehicle ({len(y[0])} training rows, {X[0].shape[1]} columns, {c} "
          f"classes), widths {h['width1']}/{h['width2']}, {args.epochs} epochs, fit + predict")
    speed = {}
    for device in devices:
        batched, sequential = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            models = mlp.train(X, y, n_classes=c, hparams=[h] * RUNS, seeds=list(range(RUNS)),
                               epochs=args.epochs, device=device)
            mlp.predict_proba(models, Xt, device=device)
            batched.append(RUNS / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            for j in range(RUNS):
                one = mlp.train([X[j]], [y[j]], n_classes=c, hparams=[h], seeds=[j],
                                epochs=args.epochs, device=device)
                mlp.predict_proba(one, [Xt[j]], device=device)
            sequential.append(RUNS / (time.perf_counter() - t0))
        ratios = [b / s for b, s in zip(batched, sequential, strict=True)]
        print(f"{device}: batched {min(batched):.2f} / {statistics.median(batched):.2f} fits/s "
              f"(min / median), sequential {min(sequential):.2f} / "
              f"{statistics.median(sequential):.2f}; batched/sequential min "
              f"{min(ratios):.2f}, median {statistics.median(ratios):.2f}")
        speed[device] = statistics.median(batched), statistics.median(sequential)
        per_20 = statistics.median(sequential) * args.epochs / mlp.MLP_EPOCHS
        print(f"  at the default {mlp.MLP_EPOCHS} epochs: ≈ {per_20:.2f} fits/s sequential")
    if "cuda" not in devices:
        print("no GPU here: the GPU side of the comparison was not measured; the plan's MLP "
              "hours stay 'GPU speed-up unmeasured' (jobs.gpu_speedup: 1)")
    else:
        print(f"GPU speed-up for the plan: {speed['cuda'][0] / speed['cpu'][1]:.1f} (GPU batched "
              "/ one CPU core sequential, medians): set jobs.gpu_speedup to it")


if __name__ == "__main__":
    main()
