"""Benchmark: the pairwise metrics against the loops a user would write and the counting floor.

Run with ``make bench-metrics`` (or ``python benchmarks/bench_metrics.py [--quick]``). BLAS threads
are pinned to 1 before numpy is imported. Every side runs on the same data, in CPU time, the
sides alternating round by round; each line prints min / median over the rounds and the ratios
of those medians. The sides:

* **project** — :func:`modelvar.metrics.pairwise_arrays` with all 15 built-in metrics, and with
  the count metrics only (pa, κ, error κ; accuracies are always columns);
* **sklearn loop** — per pair, scikit-learn / scipy / krippendorff for every metric;
* **numpy loop** — per pair, lean numpy on the caller's int64 arrays: count_nonzero of a == b
  and of e_i & e_j, κ from per-run bincount margins, a bincount C × C table for Cramér's V; the
  "counts" variant computes accuracy, agreement, κ and error κ only;
* **popcount floor** — the k × k agreement and error co-occurrence counts alone, from int8
  compares and bit-packed popcounts (no margins, no formulas): what any implementation of the
  count metrics must at least do.

Then n = 10⁴ → 10⁵ → 10⁶ (k = 10) and k = 5 → 50 (n = 10⁵) for the project, and the peak traced
memory of one call against its int64 input. Values are checked equal to the sklearn loop first.
Goals (issue 57): all 15 ≥ 40× the sklearn loop and ≥ 1× the numpy loop; the count metrics ≥ 3×
the numpy counts loop and within 3× of the floor; n 10⁵ → 10⁶ ≤ ×11; peak ≤ 1.2× the input.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import sys
import time
import tracemalloc

import krippendorff
import numpy as np
from scipy.stats.contingency import association, crosstab
from sklearn.metrics import cohen_kappa_score, jaccard_score, matthews_corrcoef

from modelvar.metrics import ALL_METRICS
from modelvar.metrics.pairwise import pairwise_arrays

COUNT_METRICS = ["pa", "kappa", "ec_kappa"]


def sklearn_loop(y, P, C):
    """Every metric per pair with scikit-learn, scipy and krippendorff."""
    rows = []
    k, n = P.shape
    for i in range(k):
        for j in range(i + 1, k):
            a, b = P[i], P[j]
            ei, ej = a != y, b != y
            acc_i, acc_j = 1 - ei.mean(), 1 - ej.mean()
            ec_local = jaccard_score(ei, ej)
            ec_global = np.logical_and(ei, ej).sum() / n
            po = np.mean(a == b)
            q = np.unique(np.concatenate([a, b]))
            pi = np.array([(np.sum(a == c) + np.sum(b == c)) / (2 * n) for c in q])
            pe = np.sum(pi * (1 - pi)) / (len(q) - 1)
            rows.append({
                "ec_local": ec_local, "ec_global": ec_global, "ec_agree": np.mean(ei == ej),
                "ec_corr": matthews_corrcoef(ei, ej), "ec_kappa": cohen_kappa_score(ei, ej),
                "ec_local_accnorm_sqrt": np.sqrt(np.sqrt(acc_i * acc_j) * ec_local),
                "ec_local_accnorm_cbrt": np.cbrt(acc_i * acc_j * ec_local),
                "ec_global_accnorm_sqrt": np.sqrt(np.sqrt(acc_i * acc_j) * ec_global),
                "ec_global_accnorm_cbrt": np.cbrt(acc_i * acc_j * ec_global),
                "pa": po, "churn": 1 - po, "kappa": cohen_kappa_score(a, b),
                "cramer_v": association(crosstab(a, b).count, method="cramer"),
                "kripp_alpha": krippendorff.alpha(np.vstack([a, b]).astype(float),
                                                  level_of_measurement="nominal"),
                "gwet_ac1": (po - pe) / (1 - pe)})
    return rows


def numpy_counts_loop(y, P, C):
    """Accuracy, agreement, κ and error κ per pair: the 15-line loop a user writes."""
    k, n = P.shape
    E = P != y
    s = E.sum(axis=1)
    margins = [np.bincount(p, minlength=C) for p in P]
    out = []
    for i in range(k):
        for j in range(i + 1, k):
            po = np.count_nonzero(P[i] == P[j]) / n
            pe = margins[i] @ margins[j] / n**2
            inter = np.count_nonzero(E[i] & E[j])
            ea = (n - s[i] - s[j] + 2 * inter) / n
            epe = (s[i] * s[j] + (n - s[i]) * (n - s[j])) / n**2
            out.append((1 - s[i] / n, 1 - s[j] / n, po, (po - pe) / (1 - pe),
                        (ea - epe) / (1 - epe)))
    return out


def numpy_loop(y, P, C):
    """All 15 metrics per pair in lean numpy (no guards for the degenerate cases)."""
    k, n = P.shape
    E = P != y
    s = E.sum(axis=1).astype(float)
    margins = [np.bincount(p, minlength=C).astype(float) for p in P]
    out = []
    for i in range(k):
        for j in range(i + 1, k):
            a, b, si, sj = P[i], P[j], s[i], s[j]
            inter = float(np.count_nonzero(E[i] & E[j]))
            ai, aj = 1 - si / n, 1 - sj / n
            local, glob = inter / (si + sj - inter), inter / n
            ea = (n - si - sj + 2 * inter) / n
            epe = (si * sj + (n - si) * (n - sj)) / n**2
            po = np.count_nonzero(a == b) / n
            r, c = margins[i], margins[j]
            pe = r @ c / n**2
            T = np.bincount(a * C + b, minlength=C * C).reshape(C, C).astype(float)
            rr, cc = r[r > 0], c[c > 0]
            chi2 = n * ((T[r > 0][:, c > 0] ** 2 / np.outer(rr, cc)).sum() - 1)
            nc = r + c
            pi = nc[nc > 0] / (2 * n)
            pe_g = (pi * (1 - pi)).sum() / (len(pi) - 1)
            out.append({
                "ec_local": local, "ec_global": glob, "ec_agree": ea,
                "ec_corr": (n * inter - si * sj) / np.sqrt(si * (n - si) * sj * (n - sj)),
                "ec_kappa": (ea - epe) / (1 - epe),
                "ec_local_accnorm_sqrt": np.sqrt(np.sqrt(ai * aj) * local),
                "ec_local_accnorm_cbrt": np.cbrt(ai * aj * local),
                "ec_global_accnorm_sqrt": np.sqrt(np.sqrt(ai * aj) * glob),
                "ec_global_accnorm_cbrt": np.cbrt(ai * aj * glob),
                "pa": po, "churn": 1 - po, "kappa": (po - pe) / (1 - pe),
                "cramer_v": np.sqrt(chi2 / (n * (min(len(rr), len(cc)) - 1))),
                "kripp_alpha": 1 - (2 * n - 1) * (2 * n - 2 * po * n) / (4 * n**2 - nc @ nc),
                "gwet_ac1": (po - pe_g) / (1 - pe_g)})
    return out


def popcount_floor(y, P, C):
    """The k × k agreement and error co-occurrence counts: int8 compares, bit-packed errors."""
    k, n = P.shape
    L = P.astype(np.int8)
    bits = np.packbits(L != y.astype(np.int8), axis=1)
    bits = np.pad(bits, ((0, 0), (0, -bits.shape[1] % 8))).view(np.uint64)
    agree = np.zeros((k, k), np.int64)
    inter = np.zeros((k, k), np.int64)
    for i in range(k - 1):
        inter[i, i + 1:] = np.bitwise_count(bits[i + 1:] & bits[i]).sum(axis=1)
        for j in range(i + 1, k):
            agree[i, j] = np.count_nonzero(L[i] == L[j])
    return agree, inter


def data(k, n, c, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    return y, np.where(rng.random((k, n)) < 0.7, y, rng.integers(0, c, (k, n)))


def cpu(fn):
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def alternate(sides: dict, rounds: int) -> dict[str, list[float]]:
    """CPU seconds of each side, the sides taking turns in every round."""
    times = {name: [] for name in sides}
    for r in range(rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for name in order:
            times[name].append(cpu(sides[name]))
    return times


def line(name, ts):
    return f"  {name:<34} min {min(ts) * 1e3:8.2f} ms   median {np.median(ts) * 1e3:8.2f} ms"


def check_values(y, P, C):
    table = pairwise_arrays(y, P, n_classes=C)
    rows = sklearn_loop(y, P, C)
    lean = numpy_loop(y, P, C)
    for m in ALL_METRICS:
        np.testing.assert_allclose(table[m], [r[m] for r in rows], rtol=1e-9, err_msg=m)
        np.testing.assert_allclose(table[m], [r[m] for r in lean], rtol=1e-9, err_msg=m)
    counts = pairwise_arrays(y, P, n_classes=C, metrics=COUNT_METRICS)
    lean4 = np.array(numpy_counts_loop(y, P, C))
    for col, name in enumerate(["acc_i", "acc_j", "pa", "kappa", "ec_kappa"]):
        np.testing.assert_allclose(counts[name], lean4[:, col], rtol=1e-9, err_msg=name)


def peak_memory(y, P, C, metrics=None):
    tracemalloc.start()
    pairwise_arrays(y, P, n_classes=C, metrics=metrics)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main(quick: bool = False):
    rounds = 3 if quick else 7
    k, n, C = 10, 100_000, 10
    y, P = data(k, n, C)
    check_values(y, P, C)
    print(f"k = {k}, n = {n:,}, C = {C} (values equal to the sklearn and numpy loops); CPU time, "
          f"{rounds} alternating rounds:")
    times = alternate({
        "project, all 15": lambda: pairwise_arrays(y, P, n_classes=C),
        "project, count metrics": lambda: pairwise_arrays(y, P, n_classes=C,
                                                          metrics=COUNT_METRICS),
        "numpy loop, all 15": lambda: numpy_loop(y, P, C),
        "numpy loop, count metrics": lambda: numpy_counts_loop(y, P, C),
        "popcount floor (k x k counts)": lambda: popcount_floor(y, P, C),
    }, rounds)
    sk = alternate({"sklearn loop, all 15": lambda: sklearn_loop(y, P, C)},
                   1 if quick else 3)["sklearn loop, all 15"]
    times["sklearn loop, all 15"] = sk
    for name, ts in times.items():
        print(line(name, ts))
    med = {name: np.median(ts) for name, ts in times.items()}
    print(f"  all 15: {med['sklearn loop, all 15'] / med['project, all 15']:.0f}x the sklearn "
          f"loop (goal >= 40x), {med['numpy loop, all 15'] / med['project, all 15']:.2f}x the "
          f"numpy loop (goal >= 1x)")
    counts = med["project, count metrics"]
    print(f"  count metrics: {med['numpy loop, count metrics'] / counts:.2f}x"
          f" the numpy counts loop (goal >= 3x), "
          f"{med['project, count metrics'] / med['popcount floor (k x k counts)']:.2f}x the floor "
          f"(goal <= 3x)")

    print("scaling in n (k = 10, C = 10), project all 15 / count metrics, median CPU:")
    prev = None
    for n_ in (10_000, 100_000, 1_000_000):
        y_, P_ = data(10, n_, C, seed=2)
        ts = alternate({"all": lambda y_=y_, P_=P_: pairwise_arrays(y_, P_, n_classes=C),
                        "counts": lambda y_=y_, P_=P_: pairwise_arrays(
                            y_, P_, n_classes=C, metrics=COUNT_METRICS)},
                       3 if quick else 5)
        cur = (np.median(ts["all"]), np.median(ts["counts"]))
        grow = "" if prev is None else (f"   x{cur[0] / prev[0]:.2f} / x{cur[1] / prev[1]:.2f} "
                                        "from the n before (goal 10^5 -> 10^6 <= x11)")
        print(f"  n = {n_:>9,}: {cur[0] * 1e3:9.2f} ms / {cur[1] * 1e3:8.2f} ms{grow}")
        prev = cur
        if n_ == 1_000_000:
            for what, metrics in (("all 15", None), ("count metrics", COUNT_METRICS)):
                peak = peak_memory(y_, P_, C, metrics)
                print(f"  peak traced memory at n = 10^6, {what}: {peak / 2**20:.1f} MiB = "
                      f"{peak / P_.nbytes:.2f}x the int64 input ({P_.nbytes / 2**20:.0f} MiB; "
                      "goal <= 1.2x)")
    print("scaling in k (n = 100,000, C = 10), project all 15, median CPU:")
    for k_ in (5, 10, 20, 50):
        y_, P_ = data(k_, 100_000, C, seed=3)
        ts = alternate({"all": lambda y_=y_, P_=P_: pairwise_arrays(y_, P_, n_classes=C)},
                       3)["all"]
        print(f"  k = {k_:>3} ({k_ * (k_ - 1) // 2:>5} pairs): {np.median(ts) * 1e3:9.2f} ms")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
