"""Benchmark: the pipeline's amortised CPU time per fit vs the bare fit-and-predict time.

Run with ``make bench-fit``. For lr-sgd, svm-sgd and xgb on anneal and vehicle, one fit job
(``python -m modelvar fit``, a fresh process: start-up, imports, data loading, splits,
preprocessing, fits, predictions and table writes, all included) runs R repeats × k runs; its
CPU time (the child process's, user + system) divided by R·k is set next to the CPU time of
``fit`` + ``predict_proba`` + ``predict`` alone on the same preprocessed training sets, measured
in this process after one untimed fit (the libraries are imported before any timing, and a
classifier's one-time loading is not a fit's). The three are measured back to back in
alternating rounds (:data:`ROUNDS`); the table gives each ratio's min and median over them
(a shared machine's speed drifts). Target (issue 5): ratio ≤ 1.5 (the original study: ≈ 5 s
median per fit where the bare fit took milliseconds). The MLP's training speed is reported as
epochs per second on the CPU (and on a GPU if present).
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import resource
import statistics
import subprocess
import sys
import tempfile
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
from modelvar.timing import Stopwatch

REPEATS, RUNS, ROOT = 10, 10, 1
ROUNDS = 3
CELL = Cell(downsample=0.75, model_seed="per-run")


def job_seconds(tmp: Path, dataset: str, classifier: str) -> float:
    reps = [str(r) for r in range(REPEATS)]
    cmd = [sys.executable, "-m", "modelvar", "fit", "--data", str(tmp / f"{dataset}.parquet"),
           "--meta", str(tmp / f"{dataset}.json"), "--classifier", classifier,
           "--cells", CELL.id, "--repeats", *reps, "--runs", str(RUNS), "--test-fraction", "0.25",
           "--root-seed", str(ROOT), "--predictions", str(tmp / "p.parquet"),
           "--runs-out", str(tmp / "runs.parquet")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bare_seconds(data: DataArrays, classifier: str) -> float:
    y = data.y
    total = 0.0
    warm = transform_run(data.encoded, np.arange(len(y)), np.arange(10))[0]
    make_classifier(classifier, seed=0).fit(warm, y, len(data.classes))  # untimed
    for r in range(REPEATS):
        pool, test = split_test_set(y, 0.25, root_seed=ROOT, dataset=data.name, repeat=r)
        for run in range(RUNS):
            rows = downsample(y[pool], pool, CELL.downsample, root_seed=ROOT,
                              dataset=data.name, repeat=r, run=run)
            Xtr, Xte, _ = transform_run(data.encoded, rows, test)
            seed = model_stream(ROOT, CELL, data.name, classifier, r, run).int_seed()
            with Stopwatch() as watch:
                model = make_classifier(classifier, seed=seed).fit(Xtr, y[rows],
                                                                   len(data.classes))
                model.predict_proba(Xte)
                model.predict(Xte)
            total += watch.span.cpu
    return total / (REPEATS * RUNS)


def in_job_seconds(tmp: Path, data: DataArrays, classifier: str) -> float:
    """The job's work without process start-up: splits, perturbation, preprocessing, fits,
    predictions, tables and their writes, in this (warm) process."""
    with Stopwatch() as watch:
        fit_job(data, classifier=classifier, cells=[CELL], repeats=list(range(REPEATS)),
                n_runs=RUNS, test_fraction=0.25, root_seed=ROOT,
                predictions_out=tmp / "x.parquet", runs_out=tmp / "y.parquet",
                progress_seconds=1e9)
    return watch.span.cpu


def main():
    fits = REPEATS * RUNS
    print(f"fit job = {REPEATS} repeats x {RUNS} runs = {fits} fits, cell {CELL.id}, 1 thread; "
          f"CPU seconds, {ROUNDS} alternating rounds: min / median")
    print("per fit: job = whole `python -m modelvar fit` CPU / fits; in-job = the same work "
          "without process start-up; bare = fit + predict_proba + predict")
    print(f"{'dataset':8s} {'classifier':10s} {'job':>9s} {'in-job':>9s} {'bare':>9s} "
          f"{'job/bare':>13s} {'in-job/bare':>13s} {'start-up':>9s}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for dataset in ("anneal", "vehicle"):
            ds = load(dataset, {"source": "embedded"})
            write(ds, tmp / f"{dataset}.parquet", tmp / f"{dataset}.json")
            data = DataArrays.from_dataset(ds)
            for classifier in ("lr-sgd", "svm-sgd", "xgb"):
                rounds = []
                for _ in range(ROUNDS):
                    bare = bare_seconds(data, classifier)
                    inside = in_job_seconds(tmp, data, classifier) / fits
                    job = job_seconds(tmp, dataset, classifier) / fits
                    rounds.append((job, inside, bare))
                job, inside, bare = (statistics.median(r[i] for r in rounds) for i in range(3))
                ratio = [r[0] / r[2] for r in rounds]
                in_ratio = [r[1] / r[2] for r in rounds]
                startup = max((job - inside) * fits, 0.0)
                print(f"{dataset:8s} {classifier:10s} {job * 1e3:6.1f} ms {inside * 1e3:6.1f} ms "
                      f"{bare * 1e3:6.1f} ms {min(ratio):6.2f}/{statistics.median(ratio):5.2f} "
                      f"{min(in_ratio):6.2f}/{statistics.median(in_ratio):5.2f} "
                      f"{startup:7.2f} s", flush=True)
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
