"""Benchmark: the pipeline's amortised wall time per fit vs the bare fit-and-predict time.

Run with ``make bench-fit``. For lr-sgd, svm-sgd and xgb on anneal and vehicle, one fit job
(``python -m modelvar fit``, a fresh process: start-up, imports, data loading, splits,
preprocessing, fits, predictions and table writes, all included) runs R repeats × k runs; its
wall time divided by R·k is set next to the time of ``fit`` + ``predict_proba`` + ``predict``
alone on the same preprocessed training sets, measured in this process. Target (issue 5):
ratio ≤ 1.5 (the original study: ≈ 5 s median per fit where the bare fit took milliseconds).
The MLP's training speed is reported as epochs per second on the CPU (and on a GPU if present).
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from modelvar.data import load, write
from modelvar.data.arrays import DataArrays
from modelvar.data.preprocess import transform_run
from modelvar.data.splits import downsample, split_test_set
from modelvar.models.classifiers import torch_device
from modelvar.models.registry import make_classifier
from modelvar.pipeline.fitting import fit_job, model_stream
from modelvar.study.cells import Cell

REPEATS, RUNS, ROOT = 10, 10, 1
CELL = Cell(downsample=0.75, model_seed="per-run")


def job_seconds(tmp: Path, dataset: str, classifier: str) -> float:
    reps = [str(r) for r in range(REPEATS)]
    cmd = [sys.executable, "-m", "modelvar", "fit", "--data", str(tmp / f"{dataset}.parquet"),
           "--meta", str(tmp / f"{dataset}.json"), "--classifier", classifier,
           "--cells", CELL.id, "--repeats", *reps, "--runs", str(RUNS), "--test-fraction", "0.25",
           "--root-seed", str(ROOT), "--predictions", str(tmp / "p.parquet"),
           "--runs-out", str(tmp / "runs.parquet")]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def bare_seconds(data: DataArrays, classifier: str) -> float:
    y = data.y
    total = 0.0
    for r in range(REPEATS):
        pool, test = split_test_set(y, 0.25, root_seed=ROOT, dataset=data.name, repeat=r)
        for run in range(RUNS):
            rows = downsample(y[pool], pool, CELL.downsample, root_seed=ROOT,
                              dataset=data.name, repeat=r, run=run)
            Xtr, Xte, _ = transform_run(data.encoded, rows, test)
            seed = model_stream(ROOT, CELL, data.name, classifier, r, run).int_seed()
            t0 = time.perf_counter()
            model = make_classifier(classifier, seed=seed).fit(Xtr, y[rows], len(data.classes))
            model.predict_proba(Xte)
            model.predict(Xte)
            total += time.perf_counter() - t0
    return total / (REPEATS * RUNS)


def in_job_seconds(tmp: Path, data: DataArrays, classifier: str) -> float:
    """The job's work without process start-up: splits, perturbation, preprocessing, fits,
    predictions, tables and their writes, in this (warm) process."""
    t0 = time.perf_counter()
    fit_job(data, classifier=classifier, cells=[CELL], repeats=list(range(REPEATS)),
            n_runs=RUNS, test_fraction=0.25, root_seed=ROOT,
            predictions_out=tmp / "x.parquet", runs_out=tmp / "y.parquet",
            progress_seconds=1e9)
    return time.perf_counter() - t0


def main():
    fits = REPEATS * RUNS
    print(f"fit job = {REPEATS} repeats x {RUNS} runs = {fits} fits, cell {CELL.id}, 1 thread")
    print("per fit: job = whole `python -m modelvar fit` wall / fits; in-job = the same work "
          "without process start-up; bare = fit + predict_proba + predict")
    print(f"{'dataset':8s} {'classifier':10s} {'job':>9s} {'in-job':>9s} {'bare':>9s} "
          f"{'job/bare':>9s} {'in-job/bare':>11s} {'start-up':>9s} {'fits for 1.5':>13s}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for dataset in ("anneal", "vehicle"):
            ds = load(dataset, {"source": "embedded"})
            write(ds, tmp / f"{dataset}.parquet", tmp / f"{dataset}.json")
            data = DataArrays.from_dataset(ds)
            for classifier in ("lr-sgd", "svm-sgd", "xgb"):
                bare = bare_seconds(data, classifier)
                inside = in_job_seconds(tmp, data, classifier) / fits
                wall = job_seconds(tmp, dataset, classifier)
                startup = max(wall - inside * fits, 0.0)
                spare = 1.5 * bare - inside
                needed = f"{startup / spare:10.0f}" if spare > 0 else "     never"
                print(f"{dataset:8s} {classifier:10s} {wall / fits * 1e3:6.1f} ms "
                      f"{inside * 1e3:6.1f} ms {bare * 1e3:6.1f} ms {wall / fits / bare:9.2f} "
                      f"{inside / bare:11.2f} {startup:7.2f} s {needed:>13s}")
        data = DataArrays.from_dataset(load("vehicle", {"source": "embedded"}))
        rows = np.arange(len(data.y))
        Xtr, _, _ = transform_run(data.encoded, rows, rows[:10])
        for device in ["cpu"] + (["cuda"] if torch_device() == "cuda" else []):
            model = make_classifier("mlp", seed=0, device=device).fit(Xtr, data.y,
                                                                       len(data.classes))
            print(f"mlp on vehicle ({len(data.y)} rows, batch 64, widths 512/256) on {device}: "
                  f"{1 / model.epoch_seconds:.1f} epochs/s")


if __name__ == "__main__":
    main()
