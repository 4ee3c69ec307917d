"""Benchmark: the default metric-simulation grid (issue 7's target: <= 2 minutes on 2 cores).

Runs the default config's grid (3 class counts x 4 distribution types x 2 error sets x
dependent/independent x matched/mismatched x 20 replicates = 1,920 simulations of 10 runs x 500
samples, every pairwise metric) in one process and prints its wall time against the target, plus
the time the same metrics take for 20 simulations with a per-pair sklearn loop (accuracy,
Cohen's kappa, Jaccard of the error sets), extrapolated to the grid, side by side.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import time

import numpy as np
from sklearn.metrics import accuracy_score, cohen_kappa_score, jaccard_score

from modelvar.simulation.metric_study import (
    evaluate,
    run_simulations,
    simulate_runs,
    simulation_grid,
)

TARGET_S = 120.0


def main() -> None:
    design = simulation_grid(n_classes=(2, 5, 10), replicates=20)
    t0 = time.perf_counter()
    sims = run_simulations(design, n_samples=500, n_runs=10, rng=np.random.default_rng(0))
    evaluate(sims)
    grid_s = time.perf_counter() - t0

    rng = np.random.default_rng(1)
    t0 = time.perf_counter()
    for _ in range(20):
        y = rng.integers(0, 5, 500)
        runs = simulate_runs(y, 10, accuracy=0.8, rng=rng, n_classes=5)
        for i in range(10):
            for j in range(i + 1, 10):
                accuracy_score(runs[i], runs[j])
                cohen_kappa_score(runs[i], runs[j])
                jaccard_score(runs[i] != y, runs[j] != y, zero_division=0.0)
    loop_s = (time.perf_counter() - t0) / 20 * len(design)
    print(f"default grid: {len(design)} simulations, all 15 metrics: {grid_s:.1f} s "
          f"({grid_s / TARGET_S:.2f} of the {TARGET_S:.0f} s target)")
    print(f"per-pair sklearn loop, only 3 metrics, extrapolated: {loop_s:.1f} s "
          f"({loop_s / grid_s:.1f}x the vectorised grid)")


if __name__ == "__main__":
    main()
