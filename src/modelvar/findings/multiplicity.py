"""The Findings page's multiplicity control: Benjamini–Hochberg over every comparison it makes.

The page makes many comparisons at once (each source's lead over the runner-up, classifiers
compared under each source, seed 004's claims, the variance shares' ranking: hundreds for a full
study); each at 5 % would leave about one in twenty of the true nulls "told apart". The page
controls the **false-discovery rate** at :data:`FDR` with the Benjamini–Hochberg step-up
procedure (Benjamini & Hochberg 1995, *JRSS B* 57:289): with the m p-values sorted,
p_(1) ≤ … ≤ p_(m), the comparisons with p ≤ p_(k) hold, k the largest i with
p_(i) ≤ i · q / m. Equivalently, the BH-adjusted p-value p̃_(i) = min_{j ≥ i} m · p_(j) / j
(capped at 1) is at most q. Comparisons without a p-value (too few repeats) are not counted.
Why FDR and not a family-wise rate (Holm): docs/decisions.md, "Multiplicity".
"""

from __future__ import annotations

import numpy as np

#: the false-discovery rate the page controls
FDR = 0.05


def bh_adjusted(p_values) -> np.ndarray:
    """The Benjamini–Hochberg adjusted p-values (module docstring), NaN where ``p_values`` is
    NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(np.isfinite(p))
    m = len(defined)
    if not m:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    scaled = p[order] * m / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


def bh_threshold(p_values, q: float = FDR) -> float:
    """The largest p-value that holds under Benjamini–Hochberg at ``q`` (p ≤ it holds), or
    −inf when none does."""
    p = np.sort(np.asarray(p_values, dtype=float)[np.isfinite(p_values)])
    passing = np.flatnonzero(p <= q * np.arange(1, len(p) + 1) / max(len(p), 1))
    return float(p[passing[-1]]) if len(passing) else -np.inf


def summary(p_values, q: float = FDR) -> tuple[int, int]:
    """(comparisons made, comparisons that hold) under the control."""
    p = np.asarray(p_values, dtype=float)
    p = p[np.isfinite(p)]
    return len(p), int((p <= bh_threshold(p, q)).sum())
