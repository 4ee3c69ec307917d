"""Benchmark: CPU seconds a job spends before its work, per job type (issue 13: a metrics job's
start-up <= 0.3 s CPU, a fit job's <= its classifier library's own import).

    python benchmarks/bench_startup.py

Each job command of the workflow runs on a tiny input (vehicle, one cell, one repeat, two runs:
its work is a few milliseconds; the MLP trains one epoch), in a fresh process; the CPU time
(user + sys, from the child's rusage) is the minimum over 5 runs, interleaved with the reference
of `python -c "import LIBRARY"` for the library the job cannot do without.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from modelvar.data import load, write

ROUNDS = 5
CELL = "dnone_cnone_hnone_down100_seedrun"


def cpu(cmd: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    py = [sys.executable]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write(load("vehicle", {"source": "embedded"}), tmp / "v.parquet", tmp / "v.json")
        res = tmp / "results"

        def fit(clf):
            out = res / "predictions" / "dataset=vehicle" / f"classifier={clf}"
            return py + ["-m", "modelvar", "fit", "--data", str(tmp / "v.parquet"), "--meta",
                         str(tmp / "v.json"), "--classifier", clf, "--cells", CELL,
                         "--repeats", "0", "--runs", "2", "--test-fraction", "0.25",
                         "--root-seed", "1", "--predictions", str(out / "j.parquet"),
                         "--runs-out", str(tmp / f"runs-{clf}.parquet"),
                         *(["--settings", json.dumps({"epochs": 1})] if clf == "mlp" else [])]

        metrics = py + ["-m", "modelvar", "pairwise", "--predictions",
                        str(res / "predictions/dataset=vehicle/classifier=lr-sgd/j.parquet"),
                        "--meta", str(tmp / "v.json"), "--results", str(res), "--dataset",
                        "vehicle", "--classifier", "lr-sgd", "--job", "j"]
        grouped = py + ["-m", "modelvar", "grouped", "--predictions",
                        str(res / "predictions/dataset=vehicle/classifier=lr-sgd/j.parquet"),
                        "--data", str(tmp / "v.parquet"), "--meta", str(tmp / "v.json"),
                        "--results", str(res), "--dataset", "vehicle", "--classifier",
                        "lr-sgd", "--job", "j", "--groupings", '["@class"]']
        jobs = {
            "fit lr-sgd": (fit("lr-sgd"), "sklearn.linear_model"),
            "fit xgb": (fit("xgb"), "xgboost"),
            "fit mlp": (fit("mlp"), "torch"),
            "metrics (pairwise)": (metrics, None),
            "grouped": (grouped, None),
        }
        for cmd, _ in jobs.values():  # outputs for the metrics jobs, and warm file caches
            subprocess.run(cmd, check=True, capture_output=True, env=env)
        bare = min(cpu(py + ["-c", "pass"], env) for _ in range(ROUNDS))
        print(f"python itself: {bare:.3f} s CPU")
        print(f"{'job':20s} {'CPU s':>7s} {'library import':>28s} {'job/import':>10s}")
        for name, (cmd, library) in jobs.items():
            job, ref = [], []
            for _ in range(ROUNDS):
                job.append(cpu(cmd, env))
                if library:
                    ref.append(cpu(py + ["-c", f"import {library}"], env))
            if library:
                print(f"{name:20s} {min(job):7.3f} {library + ' ' + format(min(ref), '.3f'):>28s}"
                      f" {min(job) / min(ref):10.2f}")
            else:
                print(f"{name:20s} {min(job):7.3f} {'(goal 0.300 s)':>28s} "
                      f"{min(job) / 0.3:10.2f}")


if __name__ == "__main__":
    main()
