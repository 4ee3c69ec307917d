"""Dirichlet simulation of predicted class probabilities (seed ``002_72892a0c5ccf0dc9.txt``).

n × K probability vectors are drawn from Dir(α); for each vector the normalised Shannon entropy
H = −Σ_k p_k log_K p_k (Kempen et al. 2009) and the confusion index CI = 1 − (p_(1) − p_(2))
(Burrough et al. 1997) are computed with :mod:`modelvar.metrics.probabilistic`. The seed's three
cases (n = 1000, K = 10) are :data:`SEED_CASES`; its outputs are the class-probability densities
per case, the H and CI densities per case, a CI-vs-H scatter, and the Spearman correlation of CI
and H per case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from modelvar.metrics.probabilistic import confusion_index, entropy

SEED_CASES: dict[str, list[float]] = {
    "Case 1": [1, 10, 2, 20, 25, 3, 5, 6, 3, 2],
    "Case 2": [1, 1, 2, 3, 3, 3, 5, 6, 3, 25],
    "Case 3": [1, 1, 1, 1, 1, 1, 1, 1, 1, 50],
}


def simulate(alpha: Sequence[float], n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, K) probability vectors drawn from Dir(alpha)."""
    alpha = np.asarray(alpha, dtype=float)
    if alpha.ndim != 1 or len(alpha) < 2 or (alpha <= 0).any():
        raise ValueError(f"alpha must be ≥ 2 positive concentrations, got {alpha.tolist()}")
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n}")
    return rng.dirichlet(alpha, size=int(n))


def simulate_cases(cases: Mapping[str, Sequence[float]], n: int,
                   rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(probabilities, stats): the long table ``case, sample, class, probability`` and the
    per-sample table ``case, sample, H, CI``."""
    probs, per_sample = [], []
    for case, alpha in cases.items():
        p = simulate(alpha, n, rng)
        k = p.shape[1]
        probs.append(pd.DataFrame({
            "case": case, "sample": np.repeat(np.arange(n), k),
            "class": np.tile([f"class {i + 1}" for i in range(k)], n),
            "probability": p.ravel(),
        }))
        per_sample.append(pd.DataFrame({"case": case, "sample": np.arange(n),
                                        "H": entropy(p), "CI": confusion_index(p)}))
    return pd.concat(probs, ignore_index=True), pd.concat(per_sample, ignore_index=True)


def spearman_table(per_sample: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation of CI and H per case (the seed's ``ddply(..., cor(CI, H))``)."""
    from scipy import stats  # here, not at import: the workflow reads SEED_CASES when it loads

    rows = []
    for case, part in per_sample.groupby("case", sort=False):
        rho = stats.spearmanr(part["CI"], part["H"]).statistic
        rows.append({"case": case, "n": len(part), "spearman_CI_H": float(rho),
                     "mean_H": float(part["H"].mean()), "mean_CI": float(part["CI"].mean())})
    return pd.DataFrame(rows)
