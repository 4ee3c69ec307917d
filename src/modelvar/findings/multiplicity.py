"""The Findings page's two promises: its headline claims under family-wise control, the rest
under false-discovery-rate control.

A reader takes one sentence into a paper, not the page's average; so the claims a reader is
most likely to take — each dataset × classifier's leading source, the largest variance share,
classifiers compared, and every statement over datasets (the **headline** tier, declared per
kind of claim in :mod:`modelvar.findings.kinds`) — are held to a **family-wise** error rate:
the chance that *any* of them is false is at most :data:`FWER`. The detail (each source
against all combined, seed 004's claims, per-dataset comparisons beside a statement over
datasets: the **exploratory** tier) is held to a false-discovery rate of :data:`FDR`: on
average at most that share of the exploratory claims stated is false. The two promises are
separate: each tier is its own family, and a near-certain exploratory claim (alone against all
combined at p ≈ 1e-12) cannot lower the bar of a headline one.

**Elementary hypotheses.** A claim may rest on more than one null: a comparison that can end
told apart (null: no difference) or practically equivalent (null: a ratio beyond the margin),
a leading source told apart from every other (an intersection-union null) or about equal to
the runner-up. Each null enters its tier's family with its own p-value, and a verdict is a
rejection of the null it names (:mod:`modelvar.findings.kinds`), so a false statement is a
rejection of a true null — which is what both procedures bound.

**Headline: Holm's step-down procedure** (Holm 1979, *Scand. J. Statist.* 6:65): with the m
p-values sorted, p_(1) ≤ … ≤ p_(m), reject H_(1), …, H_(k−1), k the first i with
p_(i) > α / (m − i + 1). It controls the family-wise error rate at α under **any** dependence
(it rests on Bonferroni's inequality only), which the page needs: comparisons sharing a cell
are negatively correlated. Adjusted p: p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j)). A
graphical procedure passing α from primary to secondary claims (Bretz et al. 2009) was
considered: it needs a priority order between claims of equal standing (which dataset's
leader comes first?) that the page has no reason to choose; Holm treats them alike.

**Exploratory: Benjamini–Yekutieli's step-up procedure** (*Ann. Statist.* 29:1165, 2001,
Theorem 1.3), valid under any dependence: the hypotheses with p ≤ p_(k) are rejected, k the
largest i with p_(i) ≤ i · q / (m · c(m)), c(m) = Σ_{j=1..m} 1/j; p̃_(i) = min_{j ≥ i}
m · c(m) · p_(j) / j (capped at 1).

**The level a claim faces** (:attr:`Decision.level`): a rejected hypothesis, the bound at its
step (Holm: α / (m − i + 1); BY: k q / (m c(m)), k the rejections); one not rejected, the bound
it would have to reach to be the next rejected (Holm: α / (m − k); BY: (k + 1) q / (m c(m))).
"About N repeats" (:func:`modelvar.findings.paired.claim_repeats`) is computed at that level.

Null p-values (NaN: too few repeats, identical values) are not counted. Why two tiers, and what
the calibration benchmark measured: docs/decisions.md, "Verdicts that stand on their own".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: the family-wise error rate of the headline claims
FWER = 0.05
#: the false-discovery rate of the exploratory claims
FDR = 0.05
HEADLINE, EXPLORATORY = "headline", "exploratory"
TIERS = (HEADLINE, EXPLORATORY)


def _harmonic(m: int) -> float:
    return float((1.0 / np.arange(1, m + 1)).sum()) if m else 1.0


def _defined(p_values) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p_values, dtype=float)
    return p, np.flatnonzero(np.isfinite(p))


def holm_adjusted(p_values) -> np.ndarray:
    """Holm's adjusted p-values (module docstring), NaN where ``p_values`` is NaN."""
    p, defined = _defined(p_values)
    out = np.full(p.shape, np.nan)
    m = len(defined)
    if not m:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def holm_levels(p_values, alpha: float = FWER) -> np.ndarray:
    """The level each hypothesis faces under Holm at ``alpha`` (module docstring)."""
    p, defined = _defined(p_values)
    out = np.full(p.shape, np.nan)
    m = len(defined)
    if not m:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    bounds = alpha / (m - np.arange(m))
    passing = p[order] <= bounds
    k = int(np.argmin(passing)) if not passing.all() else m  # rejections: the first k
    out[order[:k]] = bounds[:k]
    out[order[k:]] = bounds[k] if k < m else np.nan
    return out


def adjusted(p_values) -> np.ndarray:
    """The Benjamini–Yekutieli adjusted p-values (module docstring), NaN where ``p_values``
    is NaN."""
    p, defined = _defined(p_values)
    out = np.full(p.shape, np.nan)
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


def by_levels(p_values, q: float = FDR) -> np.ndarray:
    """The level each hypothesis faces under Benjamini–Yekutieli at ``q`` (module
    docstring)."""
    p, defined = _defined(p_values)
    out = np.full(p.shape, np.nan)
    m = len(defined)
    if not m:
        return out
    held = p[defined] <= threshold(p[defined], q)
    k = int(held.sum())
    bound = q / (m * _harmonic(m))
    out[defined] = np.where(held, bound * k, bound * min(k + 1, m))
    return out


@dataclass(frozen=True)
class Procedure:
    """A multiplicity procedure: its name, the rate it controls and at what level, and its
    adjusted p-values and levels (a hypothesis holds where its adjusted p is at most
    ``level``)."""

    name: str
    rate: str
    level: float
    adjust: Callable[[np.ndarray], np.ndarray]
    levels: Callable[[np.ndarray, float], np.ndarray]


HOLM = Procedure("Holm", "family-wise error rate", FWER, holm_adjusted, holm_levels)
BENJAMINI_YEKUTIELI = Procedure("Benjamini–Yekutieli", "false-discovery rate", FDR, adjusted,
                                by_levels)
#: each tier's procedure (module docstring)
PROCEDURES = {HEADLINE: HOLM, EXPLORATORY: BENJAMINI_YEKUTIELI}


@dataclass(frozen=True)
class Decision:
    """One family's hypotheses decided: per hypothesis its adjusted p, whether it holds, and
    the level it faces (module docstring)."""

    adjusted: np.ndarray
    holds: np.ndarray
    level: np.ndarray


def decide(p_values, procedure: Procedure) -> Decision:
    """Every hypothesis of one family under ``procedure`` (NaN p-values: not counted, never
    hold)."""
    p = np.asarray(p_values, dtype=float)
    adj = procedure.adjust(p)
    holds = np.isfinite(adj) & (adj <= procedure.level)
    return Decision(adj, holds, procedure.levels(p, procedure.level))
