"""The Findings page's multiplicity control: Benjamini–Yekutieli over every claim it states.

The page states many claims at once (each dataset × classifier's leading source, classifiers
compared, each source against all combined, seed 004's claims, the variance shares' leaders:
hundreds for a full study); each at 5 % would leave about one in twenty of the true nulls "told
apart". Each distinct claim enters once, with one p-value (:mod:`modelvar.findings.paired`: an
intersection-union claim such as "X moved it more than every other source" with the largest of
its comparisons' p-values; a comparison that may end told apart or practically equivalent with
the smaller of its two p-values).

The claims are dependent, and not all positively: comparisons sharing a cell (A − C and C − B)
are negatively correlated, so the condition under which Benjamini–Hochberg controls the
false-discovery rate (positive regression dependence) does not hold. The page uses the
**Benjamini–Yekutieli** step-up procedure (*Ann. Statist.* 29:1165, 2001, Theorem 1.3), which
controls it at q under any dependence: with the m p-values sorted, p_(1) ≤ … ≤ p_(m), the claims
with p ≤ p_(k) hold, k the largest i with p_(i) ≤ i · q / (m · c(m)), c(m) = Σ_{j=1..m} 1/j.
The adjusted p-value is p̃_(i) = min_{j ≥ i} m · c(m) · p_(j) / j (capped at 1). Claims without a
p-value (too few repeats; identical values) are not counted. Why BY and not BH or a
family-wise rate (Holm), and what the calibration benchmark measured: docs/decisions.md,
"Multiplicity".
"""

from __future__ import annotations

import numpy as np

#: the false-discovery rate the page controls
FDR = 0.05
METHOD = "Benjamini–Yekutieli"


def _harmonic(m: int) -> float:
    return float((1.0 / np.arange(1, m + 1)).sum()) if m else 1.0


def adjusted(p_values) -> np.ndarray:
    """The Benjamini–Yekutieli adjusted p-values (module docstring), NaN where ``p_values`` is
    NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(np.isfinite(p))
    m = len(defined)
    if not m:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    scaled = p[order] * m * _harmonic(m) / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


def threshold(p_values, q: float = FDR) -> float:
    """The largest p-value that holds under Benjamini–Yekutieli at ``q`` (p ≤ it holds), or
    −inf when none does."""
    p = np.asarray(p_values, dtype=float)
    p = np.sort(p[np.isfinite(p)])
    m = len(p)
    passing = np.flatnonzero(p <= q * np.arange(1, m + 1) / (max(m, 1) * _harmonic(m)))
    return float(p[passing[-1]]) if len(passing) else -np.inf


def next_boundary(p_values, q: float = FDR) -> float:
    """The level a claim that does not hold yet must reach to be the next that holds: with k
    of the m p-values holding, Benjamini–Yekutieli's boundary of rank k + 1, q (k + 1) /
    (m c(m)), c(m) = Σ_{i≤m} 1/i (NaN without a p-value)."""
    p = np.asarray(p_values, dtype=float)
    p = p[np.isfinite(p)]
    m = len(p)
    if not m:
        return np.nan
    held = int((p <= threshold(p, q)).sum())
    return q * min(held + 1, m) / (m * _harmonic(m))


def summary(p_values, q: float = FDR) -> tuple[int, int]:
    """(claims made, claims that hold) under the control."""
    p = np.asarray(p_values, dtype=float)
    p = p[np.isfinite(p)]
    return len(p), int((p <= threshold(p, q)).sum())
