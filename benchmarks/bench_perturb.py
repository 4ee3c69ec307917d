"""Benchmark: perturbation and preprocessing next to an LR-SGD fit on the same 50,000 × 50 data.

Run with ``make bench-perturb``. Issue 4: they should be negligible next to fitting. The
nearest-neighbour search uses sklearn's NearestNeighbors ("auto" = brute force in chunks for
D > 15: O(N·chunk) memory, not O(N²)); on i.i.d. data in 45 dimensions no exact method is fast
(kd-tree 167 s, ball tree 86 s, brute 7.8 s measured here), so this case is reported, not hidden.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import time

import numpy as np
import pandas as pd

from modelvar.data.canonical import build
from modelvar.data.perturb import (
    categorical_label_level,
    categorical_sample_level,
    nearest_neighbour,
    percentile,
    relative,
    significant_digit,
)
from modelvar.data.preprocess import EncodedDataset, fit_transform, transform_run
from modelvar.models.registry import make_classifier


def timed(fn, repeat=3):
    """Best of ``repeat`` calls (the first call pays one-off warm-up costs)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    rng = np.random.default_rng(0)
    n, f_num, f_cat = 50_000, 45, 5
    Xn = rng.normal(size=(n, f_num)) * rng.uniform(0.1, 100, f_num)
    cats = {f"c{j}": rng.choice(list("abcdef"), n) for j in range(f_cat)}
    y = (Xn[:, 0] + Xn[:, 1] / 50 + rng.normal(size=n) > 0).astype(int)
    frame = pd.DataFrame(Xn, columns=[f"x{j}" for j in range(f_num)]).assign(**cats, y=y)
    ds = build("bench", frame, "y", list(cats))
    enc = EncodedDataset.from_dataset(ds)
    Xc, levels = enc.codes, enc.n_levels
    g = np.random.default_rng(1)
    rows = [
        ("significant digit d=1", lambda: significant_digit(Xn, 1, g)),
        ("nearest neighbour c=0.5", lambda: nearest_neighbour(Xn, 0.5, g)),
        ("relative p=0.2", lambda: relative(Xn, 0.2, g)),
        ("percentile p=0.1", lambda: percentile(Xn, 0.1, g)),
        ("categorical label p=0.1", lambda: categorical_label_level(Xc, levels, 0.1, g)),
        ("categorical sample p=0.2", lambda: categorical_sample_level(Xc, levels, 0.2, g)),
        ("preprocess (fit on train, apply to test)",
         lambda: transform_run(enc, np.arange(37_500), np.arange(37_500, n))),
    ]
    Xtr, _, _ = fit_transform(ds, ds.X.iloc[:37_500], ds.X.iloc[37_500:])
    yi = ds.class_index()[:37_500]
    fit = timed(lambda: make_classifier("lr-sgd", seed=0).fit(Xtr, yi, 2))
    print(f"data: {n:,} x {f_num + f_cat} ({f_cat} categorical); LR-SGD fit on 37,500 rows: "
          f"{fit:.3f} s")
    for name, fn in rows:
        t = timed(fn, repeat=1 if name.startswith("nearest") else 3)
        print(f"  {name:42s} {t:7.3f} s  = {t / fit:6.1%} of the fit")


if __name__ == "__main__":
    main()
