"""Paired differences over repeats (or datasets), and when they may carry an interval.

The runs of a repeat share their test set and training pool, so the per-repeat difference of
two cells (or of two classifiers in one cell) removes what the repeat itself contributes. For a
difference d_r over R repeats with mean d̄ and SD s_d:

* the **interval** is Student's, d̄ ± t(0.975, R − 1) · s_d / √R, drawn only from
  :data:`MIN_FOR_INTERVAL` repeats on (with 2, the whole spread is one difference of two values
  and t(0.975, 1) = 12.7: the interval says more about the repeat count than the data), and
  never with s_d = 0 (identical differences in every repeat make an interval of width 0, which
  would read as certainty);
* the **p-value** (two-sided, of d̄ = 0) is the paired t-test's, 2 · (1 − F_t(|d̄| √R / s_d,
  R − 1)); where every difference is the same (s_d = 0, d̄ ≠ 0) it is the exact sign test's,
  2 · 0.5^R (R differences of one sign), since there is no spread for a t statistic; NaN below
  :data:`MIN_FOR_INTERVAL` repeats.

A difference is *told apart* from 0 when its p-value holds under the page's multiplicity
control (:mod:`modelvar.findings.multiplicity`: a threshold at most :data:`ALPHA`); the verdict
words are ``supported`` (above 0), ``contradicted`` (below 0) and ``inconclusive``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from modelvar.metrics.student_t import t_cdf, t_quantile

#: the fewest repeats (or datasets) a t-interval or test is drawn from (module docstring)
MIN_FOR_INTERVAL = 3
#: the level of one comparison before the multiplicity control
ALPHA = 0.05
SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTED = (
    "supported", "contradicted", "inconclusive", "not tested")
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTED)
#: the most repeats a "would need about" statement names (beyond: "more than")
MAX_REPEATS_NAMED = 1000


@dataclass(frozen=True)
class Paired:
    """A per-repeat difference expected to be positive: mean, SD, count, interval and test."""

    label: str
    mean: float
    sd: float
    n: int

    @classmethod
    def of(cls, label: str, differences) -> Paired:
        d = np.asarray(differences, dtype=float)
        d = d[np.isfinite(d)]
        return cls(label, float(d.mean()) if len(d) else np.nan,
                   float(d.std(ddof=1)) if len(d) > 1 else np.nan, len(d))

    @classmethod
    def between(cls, label: str, a: pd.Series, b: pd.Series) -> Paired:
        """a − b over the repeats both have (series indexed by repeat)."""
        joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
        return cls.of(label, joined["a"] - joined["b"])

    @property
    def has_interval(self) -> bool:
        return self.n >= MIN_FOR_INTERVAL and np.isfinite(self.sd) and self.sd > 0

    def half_width(self, n: int | None = None) -> float:
        n = self.n if n is None else n
        return t_quantile(0.975, n - 1) * self.sd / math.sqrt(n) if n > 1 else np.nan

    @property
    def low(self) -> float:
        return self.mean - self.half_width() if self.has_interval else np.nan

    @property
    def high(self) -> float:
        return self.mean + self.half_width() if self.has_interval else np.nan

    @property
    def p_value(self) -> float:
        """Two-sided p of a zero mean difference (module docstring); NaN with too few."""
        if self.n < MIN_FOR_INTERVAL or not np.isfinite(self.mean):
            return np.nan
        if not self.sd > 0:
            return 1.0 if self.mean == 0 else min(1.0, 2 * 0.5 ** self.n)
        t = abs(self.mean) * math.sqrt(self.n) / self.sd
        return min(1.0, 2 * (1 - t_cdf(t, self.n - 1)))

    def verdict(self, threshold: float = ALPHA) -> str:
        """``supported``/``contradicted`` when the p-value is at most ``threshold`` (the
        multiplicity control's), by the sign of the mean; ``inconclusive`` otherwise."""
        p = self.p_value
        if not np.isfinite(p) or p > threshold:
            return INCONCLUSIVE
        return SUPPORTED if self.mean > 0 else CONTRADICTED

    def repeats_needed(self) -> int | None:
        """The smallest R at which a difference of this mean and SD would have an interval
        clear of 0 (``MAX_REPEATS_NAMED + 1`` when beyond; None without an SD or a
        difference)."""
        if self.n < 2 or not np.isfinite(self.sd) or self.sd == 0 or self.mean == 0:
            return None
        for n in range(MIN_FOR_INTERVAL, MAX_REPEATS_NAMED + 1):
            if self.half_width(n) < abs(self.mean):
                return n
        return MAX_REPEATS_NAMED + 1

    def text(self) -> str:
        """The difference with its interval, or why it has none."""
        if self.n < MIN_FOR_INTERVAL:
            return (f"{self.label} {self.mean:+.4f} (too few repeats for an interval: "
                    f"{self.n}; run ≥ {MIN_FOR_INTERVAL})")
        if not self.has_interval:
            return f"{self.label} {self.mean:+.4f} (the same in every repeat: no interval)"
        return f"{self.label} {self.mean:+.4f} [{self.low:+.4f}, {self.high:+.4f}]"


def too_few(n: int, what: str = "repeats") -> str:
    """The words for a count below :data:`MIN_FOR_INTERVAL`."""
    return f"too few {what} for an interval ({n}): run ≥ {MIN_FOR_INTERVAL}"


def per_repeat(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, classifier, cell, repeat): ``accuracy`` (the runs' mean), ``sd`` (their
    within-repeat SD) and ``disagreement`` (mean pairwise churn), from the summary table's
    full-test-set rows."""
    rows = summary[summary["subset"] == "all"] if "subset" in summary else summary
    keys = ["dataset", "classifier", "cell", "repeat"]
    acc = rows[rows["metric"] == "accuracy"].set_index(keys)
    churn = rows[rows["metric"] == "churn"].set_index(keys)
    out = pd.DataFrame({"accuracy": acc["mean"], "sd": acc["sd"]})
    return out.join(churn["mean"].rename("disagreement"), how="outer")


def between_cells(values: pd.DataFrame, dataset, classifier, cell_a: str, cell_b: str,
                  column: str, label: str) -> Paired | None:
    """``cell_a`` − ``cell_b`` of one dataset × classifier, paired over the repeats both have,
    from :func:`per_repeat`'s ``column``; None where either cell has no values."""
    try:
        a = values.loc[(dataset, classifier, cell_a), column]
        b = values.loc[(dataset, classifier, cell_b), column]
    except KeyError:
        return None
    return Paired.between(label, a, b)
