"""Benchmark: MLP fit seconds, the runs of a repeat trained as one batched model vs one after
another (issue 13), on the CPU (one thread) and on a GPU when there is one; with a GPU, the
measured speed-up for the plan (issue 23, item 5) and whether its predictions are reproducible.

    python benchmarks/bench_mlp.py [--shapes vehicle,higgs-like,dionis-like] [--rounds 3]

Shapes (``SHAPES``): vehicle, the embedded dataset (the fit job's preprocessing, 75 % training
pool, per-run model seeds; 634 training rows: batches of 64), and two synthetic ones in the
regime of batches of 1,024 rows that holds the full study's MLP hours: ``higgs-like`` (100,000
training rows × 28 columns, 2 classes: the full study's binary datasets from 34,000 rows hold half
its MLP hours) and ``dionis-like`` (300,000 × 60, 355 classes: its dearest dataset). The default
widths 512/256 and dropout 0.1; fit + predict of a test set of a third of the training rows.

Per shape and device: batched (``modelvar.models.mlp.train`` on the repeat's ``RUNS`` runs) and
sequential (one call per run), back to back in each round; seconds per fit, min and median over
rounds, and the ratio. On the CPU the large shapes time only ``cpu_runs`` sequential fits, whose
seconds stand for all, and no batched one (ten such fits take minutes). The plan's GPU speed-up
divides the cost model's seconds (one-at-a-time fits on one core of our build machine), so the
benchmark prints the GPU's batched seconds per fit against the cost model's for the same shape:
the values for the config's ``jobs.gpu_speedup``, keyed by a fit's seconds on one core (the
cost model's estimate at the study's epochs; small fits leave a GPU idle: take the smallest of
the shapes in a range), and, where both sides ran, against one core of the same machine. On the
CPU batched and sequential give identical predictions (``tests/test_mlp.py``); on the GPU this
benchmark checks it, and whether two identical trainings give the same bits.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import statistics
import time
from dataclasses import dataclass

import numpy as np

from modelvar.data import load
from modelvar.data.arrays import DataArrays
from modelvar.data.preprocess import transform_run
from modelvar.data.splits import downsample, split_test_set
from modelvar.models import mlp
from modelvar.models.registry import spec
from modelvar.planning.cost_model import load as load_cost_model

RUNS = 10


@dataclass(frozen=True)
class Shape:
    name: str
    n_train: int        # 0: the embedded dataset's own
    d: int
    n_classes: int
    epochs: int         # per fit in this benchmark (time per fit is linear in them)
    cpu_runs: int       # sequential fits timed on the CPU


SHAPES = {
    "vehicle": Shape("vehicle", 0, 0, 0, epochs=5, cpu_runs=RUNS),
    "higgs-like": Shape("higgs-like", 100_000, 28, 2, epochs=2, cpu_runs=1),
    "dionis-like": Shape("dionis-like", 300_000, 60, 355, epochs=1, cpu_runs=1),
}


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


def synthetic_runs(shape: Shape):
    """Standardised Gaussian features, labels from a random linear map plus noise (every class
    present); each run its own resample of the rows, all runs one test set."""
    rng = np.random.default_rng(23)
    n_test = shape.n_train // 3
    n = shape.n_train + n_test
    X = rng.standard_normal((n, shape.d), dtype=np.float32)
    W = rng.standard_normal((shape.d, shape.n_classes), dtype=np.float32)
    scores = X @ W + rng.standard_normal((n, shape.n_classes), dtype=np.float32)
    y = scores.argmax(axis=1)
    y[:shape.n_classes] = np.arange(shape.n_classes)
    train, test = np.arange(shape.n_train), np.arange(shape.n_train, n)
    runs = [rng.choice(train, shape.n_train) for _ in range(RUNS)]
    return [X[r] for r in runs], [y[r] for r in runs], [X[test]] * RUNS, shape.n_classes


def fit_and_predict(X, y, Xt, c, h, seeds, epochs, device):
    models = mlp.train(X, y, n_classes=c, hparams=[h] * len(X), seeds=seeds, epochs=epochs,
                       device=device)
    return mlp.predict_proba(models, Xt, device=device)


def synchronize(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def time_shape(shape: Shape, devices, rounds: int) -> dict:
    """{device: (batched seconds per fit or None, sequential seconds per fit)}, medians over
    rounds."""
    X, y, Xt, c = runs_of_vehicle() if shape.n_train == 0 else synthetic_runs(shape)
    h = spec("mlp").defaults()
    print(f"{shape.name}: {len(y[0]):,} training rows, {X[0].shape[1]} columns, {c} classes, "
          f"{len(Xt[0]):,} test rows; widths {h['width1']}/{h['width2']}, {shape.epochs} "
          f"epoch(s), fit + predict", flush=True)
    out = {}
    for device in devices:
        seq_runs = shape.cpu_runs if device == "cpu" else RUNS
        batches = device != "cpu" or shape.cpu_runs == RUNS
        batched, sequential = [], []
        for _ in range(rounds):
            if batches:
                synchronize(device)
                t0 = time.perf_counter()
                fit_and_predict(X, y, Xt, c, h, list(range(RUNS)), shape.epochs, device)
                synchronize(device)
                batched.append((time.perf_counter() - t0) / RUNS)
            t0 = time.perf_counter()
            for j in range(seq_runs):
                fit_and_predict([X[j]], [y[j]], [Xt[j]], c, h, [j], shape.epochs, device)
            synchronize(device)
            sequential.append((time.perf_counter() - t0) / seq_runs)
        line = (f"  {device}: s per fit sequential {min(sequential):.3f} / "
                f"{statistics.median(sequential):.3f} (min / median, {seq_runs} fits)")
        if batches:
            ratios = [s / b for b, s in zip(batched, sequential, strict=True)]
            line += (f", batched {min(batched):.3f} / {statistics.median(batched):.3f}; batched "
                     f"speed-up min {min(ratios):.2f}, median {statistics.median(ratios):.2f}")
        print(line, flush=True)
        out[device] = (statistics.median(batched) if batches else None,
                       statistics.median(sequential))
    if "cuda" in out and "cpu" in out:
        print(f"  GPU batched vs one CPU core sequential here: "
              f"{out['cpu'][1] / out['cuda'][0]:.1f}x (medians)", flush=True)
    if "cuda" in out:
        check_gpu_bits(X, y, Xt, c, h, shape.epochs, with_cpu="cpu" in out)
    return out


def shape_of(shape: Shape) -> tuple[int, int, int]:
    """(training rows, columns, classes) of a shape (vehicle's: of its embedded data)."""
    if shape.n_train:
        return shape.n_train, shape.d, shape.n_classes
    X, y, _, c = runs_of_vehicle()
    return len(y[0]), X[0].shape[1], c


def check_gpu_bits(X, y, Xt, c, h, epochs, with_cpu: bool) -> None:
    """Are the GPU's predictions the same bits when trained twice, and when a run trains alone
    rather than with the repeat's other runs? And how far from the CPU's?"""
    first = fit_and_predict(X, y, Xt, c, h, list(range(RUNS)), epochs, "cuda")
    again = fit_and_predict(X, y, Xt, c, h, list(range(RUNS)), epochs, "cuda")
    alone = fit_and_predict([X[0]], [y[0]], [Xt[0]], c, h, [0], epochs, "cuda")[0]
    labels = [p.argmax(axis=1) for p in (first[0], alone)]
    line = (f"  GPU bits: trained twice {'identical' if np.array_equal(first, again) else 'DIFFER'}"
            f" (max |dp| {np.abs(first - again).max():.2e}); run 0 alone vs with the repeat "
            f"{'identical' if np.array_equal(first[0], alone) else 'DIFFER'} (max |dp| "
            f"{np.abs(first[0] - alone).max():.2e}, labels differ on "
            f"{np.mean(labels[0] != labels[1]):.2%})")
    if with_cpu:
        cpu = fit_and_predict([X[0]], [y[0]], [Xt[0]], c, h, [0], epochs, "cpu")[0]
        line += (f"; vs the CPU max |dp| {np.abs(first[0] - cpu).max():.2e}, labels differ on "
                 f"{np.mean(labels[0] != cpu.argmax(axis=1)):.2%}")
    print(line, flush=True)


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="vehicle",
                        help=f"comma-separated, of {', '.join(SHAPES)} (default: vehicle)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--devices", default="cpu,cuda",
                        help="of cpu, cuda (default both; cuda where there is a GPU)")
    args = parser.parse_args()
    unknown = set(args.shapes.split(",")) - set(SHAPES)
    if unknown:
        parser.error(f"unknown shapes {sorted(unknown)}; known: {', '.join(SHAPES)}")
    torch.set_num_threads(1)
    devices = [d for d in args.devices.split(",")
               if d == "cpu" or (d == "cuda" and torch.cuda.is_available())]
    if "cuda" in devices:
        print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    speedups = {}
    cost = load_cost_model()
    for name in args.shapes.split(","):
        shape = SHAPES[name]
        out = time_shape(shape, devices, args.rounds)
        n, d, c = shape_of(shape)
        model = cost.seconds("mlp", n, d, c, shape.epochs)
        if "cpu" in out:
            per_default = out["cpu"][1] / shape.epochs * mlp.MLP_EPOCHS
            print(f"  one CPU core at the default {mlp.MLP_EPOCHS} epochs: ≈ {per_default:.1f} s "
                  f"per fit; the cost model (our build machine's core) {model:.2f} s per fit at "
                  f"{shape.epochs} epoch(s), {model / out['cpu'][1]:.2f}x this core's", flush=True)
        if "cuda" in out:
            speedups[name] = model / out["cuda"][0]
            print(f"  GPU batched vs the cost model: {speedups[name]:.1f}x; one fit at a time "
                  f"(sequential; classifier_settings.mlp.gpu_speedup_alone, for its tuning) "
                  f"{model / out['cuda'][1]:.1f}x", flush=True)
    if not speedups:
        print("no GPU here: the GPU side of the comparison was not measured; the plan's MLP "
              "hours stay 'GPU speed-up unmeasured' (jobs.gpu_speedup: 1)")
    else:
        table = ", ".join(f"{k} {v:.1f}" for k, v in speedups.items())
        print(f"GPU speed-up over the cost model per shape: {table}; the smallest, "
              f"{min(speedups.values()):.1f}, is the one jobs.gpu_speedup may take without "
              "overstating")


if __name__ == "__main__":
    main()
