"""Seed 004's stated findings as checks on a run's numbers, with their uncertainty.

The seed reports what its preliminary grid showed. Each statement becomes a set of **paired
comparisons over repeats** between one-at-a-time cells of one dataset × classifier: the runs of
a repeat share their test set and training pool, so the per-repeat difference of two cells
removes what the repeat itself contributes. For a difference d_r over R repeats, the 95 % Student
t-interval is d̄ ± t(0.975, R − 1) · s_d / √R (:class:`Paired`). A comparison that the claim
expects positive is

* ``supported`` when the interval lies above 0, ``contradicted`` when it lies below 0, and
  ``inconclusive`` when it holds 0 (or R < 2: no interval);

a claim is ``supported`` when every comparison it needs is (an intersection-union test: each at
5 % makes the whole at 5 %), ``contradicted`` when any is, ``inconclusive`` otherwise, and
``not tested`` when the run lacks the levels it needs. For an inconclusive comparison the
evidence says how many repeats would make a difference of the observed size and spread
significant (the smallest R with t(0.975, R − 1) · s_d / √R < |d̄|): a planning figure, not a
promise. The claims (measures per repeat: ``accuracy`` the runs' mean accuracy, ``SD`` their
within-repeat SD, ``disagreement`` the mean pairwise churn):

``sig0_data``
    "perturbation at the zeroth significant digit has the most dramatic / obvious effect" on
    accuracy: for every other data level alone, |acc(sig 0) − acc(control)| −
    |acc(level) − acc(control)| > 0. Needs ``{sig: 0}``, another data level and the control.
``hparam_strength``
    "the stronger the hparam perturbation (larger p), the wider the global accuracy
    distributions": for every hparam scheme with two or more strengths alone (``rel``, ``abs``:
    larger p is stronger; ``sig``: fewer digits is stronger), SD(stronger) − SD(weaker) > 0 for
    each step.
``downsampling_largest``
    "train downsampling [is] the largest source of variance in model performance and
    performance consistency": the downsampling level alone with the largest SD, against every
    other source's level alone, SD difference > 0; and the one with the largest disagreement,
    disagreement difference > 0.
``categorical_label_vs_sample``
    label-level categorical noise matters at p = 0.1 while sample-level barely does at 0.2:
    dis(label 0.1) − dis(control) > 0, and ½ · (dis(label 0.1) − dis(control)) −
    (dis(sample 0.2) − dis(control)) > 0.

**Weak levels.** A data level whose runs changed fewer than ``weak_below`` of the numeric
training cells (the config's ``perturbation.warn_changed_below``, the fit jobs' warning) says
little about its source: the evidence names it ("data rel 0.1 changed 0.8 % of the cells: too
weak to judge"), and a claim whose verdict rests on such a level is at most inconclusive.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from modelvar.metrics.student_t import t_quantile
from modelvar.study.cells import Cell

CLAIMS = {
    "sig0_data": "Data perturbation at the zeroth significant digit moves accuracy most.",
    "hparam_strength": "Stronger hparam perturbation widens the accuracy distribution.",
    "downsampling_largest": "Train downsampling is the largest source of variance.",
    "categorical_label_vs_sample": "Label-level categorical noise matters at p = 0.1; "
                                   "sample-level barely does at p = 0.2.",
}
SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTED = (
    "supported", "contradicted", "inconclusive", "not tested")
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTED)
#: the most repeats a "would need about" statement names (beyond: "more than")
MAX_REPEATS_NAMED = 1000


@dataclass(frozen=True)
class Paired:
    """A per-repeat difference expected to be positive: mean, SD and 95 % t-interval."""

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

    def half_width(self, n: int | None = None) -> float:
        n = self.n if n is None else n
        return t_quantile(0.975, n - 1) * self.sd / math.sqrt(n) if n > 1 else np.nan

    @property
    def low(self) -> float:
        return self.mean - self.half_width()

    @property
    def high(self) -> float:
        return self.mean + self.half_width()

    @property
    def verdict(self) -> str:
        if self.n < 2 or not np.isfinite(self.sd):
            return INCONCLUSIVE
        if self.sd == 0:
            return SUPPORTED if self.mean > 0 else CONTRADICTED if self.mean < 0 else \
                INCONCLUSIVE
        return SUPPORTED if self.low > 0 else CONTRADICTED if self.high < 0 else INCONCLUSIVE

    def repeats_needed(self) -> int | None:
        """The smallest R at which a difference of this mean and SD would be significant
        (``MAX_REPEATS_NAMED + 1`` when beyond; None without an SD or a difference)."""
        if self.n < 2 or not np.isfinite(self.sd) or self.mean == 0:
            return None
        for n in range(2, MAX_REPEATS_NAMED + 1):
            if self.half_width(n) < abs(self.mean):
                return n
        return MAX_REPEATS_NAMED + 1

    def text(self) -> str:
        if self.n < 2:
            return f"{self.label} {self.mean:+.4f} (one repeat: no interval)"
        return f"{self.label} {self.mean:+.4f} [{self.low:+.4f}, {self.high:+.4f}]"


def combine(comparisons: list[Paired], weak: list[str]) -> tuple[str, str]:
    """The claim's verdict from its comparisons (module docstring) and the evidence text."""
    verdicts = [c.verdict for c in comparisons]
    status = SUPPORTED if all(v == SUPPORTED for v in verdicts) else \
        CONTRADICTED if CONTRADICTED in verdicts else INCONCLUSIVE
    if weak and status != INCONCLUSIVE:
        status = INCONCLUSIVE
    n = max(c.n for c in comparisons)
    parts = ["; ".join(c.text() for c in comparisons) + f" ({n} repeat{'s' * (n != 1)})"]
    open_ = [c for c in comparisons if c.verdict == INCONCLUSIVE]
    if status == INCONCLUSIVE and open_ and not weak:
        needed = [c.repeats_needed() for c in open_]
        if n < 2:
            parts.append("too few repeats for an interval: run 2 or more")
        elif any(r is None for r in needed):
            parts.append("no difference seen")
        else:
            most = max(needed)
            parts.append(f"too few repeats to tell: about {most} would, if the differences "
                         "are as large as seen" if most <= MAX_REPEATS_NAMED else
                         f"the differences are too small to tell with fewer than "
                         f"{MAX_REPEATS_NAMED} repeats")
    parts += weak
    return status, "; ".join(parts)


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


class _Cells:
    """One dataset × classifier's one-at-a-time rows and per-repeat values."""

    def __init__(self, rows: pd.DataFrame, values: pd.DataFrame, weak_below: float):
        self.rows, self.values, self.weak_below = rows, values, weak_below
        control = rows[rows["source"] == "control"]
        self.control = control.iloc[0]["cell"] if len(control) else None

    def series(self, cell: str, measure: str) -> pd.Series:
        if cell not in self.values.index.get_level_values("cell"):
            return pd.Series(dtype=float)
        return self.values.xs(cell, level="cell")[measure]

    def levels(self, family: str) -> list[tuple[tuple, pd.Series]]:
        """(scheme, row) of one family's levels alone."""
        return [(getattr(Cell.parse(row["cell"]), family), row)
                for _, row in self.rows[self.rows["source"] == family].iterrows()]

    def weak(self, row: pd.Series) -> str | None:
        share = row.get("data_changed_frac", np.nan)
        if row["source"] == "data" and np.isfinite(share) and share < self.weak_below:
            return (f"{row['level']} changed {share:.1%} of {row['dataset']}'s numeric training "
                    "cells: too weak to judge")
        return None


def _sig0(c: _Cells) -> tuple[str, str]:
    levels = c.levels("data")
    sig0 = [row for scheme, row in levels if scheme == ("sig", 0.0)]
    if c.control is None or len(levels) < 2 or not sig0:
        return NOT_TESTED, "needs data sig 0, another data level and the control"
    control = c.series(c.control, "accuracy")
    shift = {row["level"]: (c.series(row["cell"], "accuracy") - control).abs()
             for _, row in levels}
    comparisons = [Paired.between(f"|shift| sig 0 − {name.removeprefix('data ')}",
                                  shift["data sig 0"], s)
                   for name, s in shift.items() if name != "data sig 0"]
    weak = [w for w in (c.weak(sig0[0]),) if w]
    return combine(comparisons, weak)


def _hparam(c: _Cells) -> tuple[str, str]:
    by_kind: dict[str, list] = {}
    for (kind, value), row in c.levels("hparam"):
        by_kind.setdefault(kind, []).append((-value if kind == "sig" else value, row))
    tested = {k: sorted(v, key=lambda t: t[0]) for k, v in by_kind.items() if len(v) >= 2}
    if not tested:
        return NOT_TESTED, "needs two strengths of one hparam scheme alone"
    comparisons = []
    for levels in tested.values():
        for (_, weaker), (_, stronger) in itertools.pairwise(levels):
            comparisons.append(Paired.between(
                f"SD {stronger['level'].removeprefix('hparam ')} − "
                f"{weaker['level'].removeprefix('hparam ')}",
                c.series(stronger["cell"], "sd"), c.series(weaker["cell"], "sd")))
    return combine(comparisons, [])


def _downsampling(c: _Cells) -> tuple[str, str]:
    alone = c.rows[~c.rows["source"].isin(["control", "test set"])]
    down = alone[alone["source"] == "downsample"]
    others = alone[alone["source"] != "downsample"]
    if down.empty or others.empty:
        return NOT_TESTED, "needs a training fraction below 100 % and another source alone"
    comparisons = []
    for measure, column, name in (("sd", "accuracy_sd", "SD"),
                                  ("disagreement", "disagreement", "disagreement")):
        top = down.loc[down[column].idxmax()]
        for _, other in others.iterrows():
            comparisons.append(Paired.between(f"{name} {top['level']} − {other['level']}",
                                              c.series(top["cell"], measure),
                                              c.series(other["cell"], measure)))
    return combine(comparisons, [])


def _categorical(c: _Cells) -> tuple[str, str]:
    levels = {row["level"]: row for _, row in c.rows[c.rows["source"] == "categorical"]
              .iterrows()}
    label, sample = levels.get("categorical label 0.1"), levels.get("categorical sample 0.2")
    if c.control is None or label is None or sample is None:
        return NOT_TESTED, "needs categorical label 0.1, sample 0.2 and the control"
    base = c.series(c.control, "disagreement")
    label_adds = c.series(label["cell"], "disagreement") - base
    sample_adds = c.series(sample["cell"], "disagreement") - base
    return combine([Paired.between("disagreement label 0.1 − control", label_adds,
                                   0 * label_adds),
                    Paired.between("½ label's added − sample 0.2's added", 0.5 * label_adds,
                                   sample_adds)], [])


def check_claims(sources: pd.DataFrame, summary: pd.DataFrame, *,
                 weak_below: float) -> pd.DataFrame:
    """One row per dataset × classifier × claim: ``status`` (supported, contradicted,
    inconclusive, not tested) and ``evidence`` (module docstring). ``sources``: the sources
    table (:func:`~modelvar.findings.sources.sources_of_variance`), ``summary``: the summary
    table's rows it was made from (per cell and repeat); ``weak_below``: the share of changed
    cells under which a data level is too weak to judge (config
    ``perturbation.warn_changed_below``)."""
    values = per_repeat(summary)
    out = []
    for (dataset, classifier), rows in sources.groupby(["dataset", "classifier"], sort=False):
        try:
            mine = values.xs((dataset, classifier), level=("dataset", "classifier"))
        except KeyError:
            mine = values.iloc[:0].droplevel(["dataset", "classifier"])
        cells = _Cells(rows, mine, weak_below)
        results = {"sig0_data": _sig0(cells), "hparam_strength": _hparam(cells),
                   "downsampling_largest": _downsampling(cells),
                   "categorical_label_vs_sample": _categorical(cells)}
        for claim, (status, evidence) in results.items():
            out.append({"dataset": dataset, "classifier": classifier, "claim": claim,
                        "statement": CLAIMS[claim], "status": status, "evidence": evidence})
    return pd.DataFrame(out, columns=["dataset", "classifier", "claim", "statement", "status",
                                      "evidence"])
