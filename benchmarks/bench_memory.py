"""Benchmark: peak memory of a metrics job on a synthetic 400,000-row x 355-class test set
(issue 13: <= 2 GB, independent of the number of repeats).

    python benchmarks/bench_memory.py [--rows 400000] [--classes 355] [--repeats 1 3]

Writes compact prediction files (10 runs per repeat; labels right 70 % of the time, the
statistics random) for each number of repeats, runs `python -m modelvar pairwise` on each in a
fresh process and reports its maximum resident set size (GNU time), its wall time, and the plan's
declared mem_mb for such a job.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from modelvar.pipeline.predictions import PredictionsWriter
from modelvar.planning.plan import Shape, _mem_metrics

RUNS = 10
GOAL_MB = 2048


def write_predictions(path: Path, rows: int, classes: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    writer = PredictionsWriter(path, dataset="big", classifier="mlp",
                               classes=[f"c{i}" for i in range(classes)], form="compact",
                               n_rows=rows * 4)
    for repeat in range(repeats):
        y = rng.integers(0, classes, rows)
        right = rng.random((RUNS, rows)) < 0.7
        preds = np.where(right, y, rng.integers(0, classes, (RUNS, rows)))
        stats = {name: rng.random((RUNS, rows)).astype(np.float32)
                 for name in ("p_true", "sum_sq", "entropy", "confusion_index")}
        writer.write("dnone_cnone_hnone_down100_seedrun", repeat, np.arange(RUNS),
                     np.sort(rng.choice(rows * 4, rows, replace=False)), y, preds, None,
                     stats=stats)
    writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--classes", type=int, default=355)
    parser.add_argument("--repeats", type=int, nargs="+", default=[1, 3])
    args = parser.parse_args()
    shape = Shape(args.rows * 4, 60, args.classes, True, False, "data", 60)
    declared = _mem_metrics(shape, {"split": {"runs": RUNS, "test_fraction": 0.25}}, "compact")
    print(f"metrics job on {args.rows:,} test rows x {args.classes} classes x {RUNS} runs "
          f"(compact predictions); the plan declares mem_mb {declared:,}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        meta = tmp / "big.json"
        meta.write_text(json.dumps({"name": "big",
                                    "classes": [f"c{i}" for i in range(args.classes)]}))
        for repeats in args.repeats:
            preds = tmp / f"p{repeats}.parquet"
            write_predictions(preds, args.rows, args.classes, repeats)
            cmd = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "modelvar", "pairwise",
                   "--predictions", str(preds), "--meta", str(meta), "--results",
                   str(tmp / "out"), "--dataset", "big", "--classifier", "mlp", "--job",
                   f"r{repeats}"]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            seconds = time.perf_counter() - t0
            if proc.returncode != 0:
                sys.exit(proc.stderr[-3000:])
            peak_mb = int(proc.stderr.strip().splitlines()[-1]) / 1024
            print(f"{repeats} repeat(s): peak {peak_mb:,.0f} MB ({peak_mb / GOAL_MB:.2f} of the "
                  f"{GOAL_MB} MB goal), {seconds:.1f} s ({preds.stat().st_size / 1e6:.0f} MB "
                  "of predictions)")


if __name__ == "__main__":
    main()
