"""Seed 004's stated findings as checks on a run's numbers, with their uncertainty.

The seed reports what its preliminary grid showed. Each statement becomes a set of **paired
comparisons over repeats** between one-at-a-time cells of one dataset × classifier
(:class:`~modelvar.findings.paired.Paired`: the per-repeat difference, its t-interval from 3
repeats on and its p-value). A comparison that the claim expects positive is

* ``supported`` when its p-value holds under the page's multiplicity control (``threshold``,
  :mod:`modelvar.findings.multiplicity`) and the difference is above 0, ``contradicted`` when
  it holds and is below 0, and ``inconclusive`` otherwise (or with fewer than 3 repeats: no
  test);

a claim is ``supported`` when every comparison it needs is (an intersection-union test),
``contradicted`` when any is, ``inconclusive`` otherwise, and ``not tested`` when the run lacks
the levels it needs. Every comparison's p-value is in the table (``p_values``), so that the
page's control counts them. For an inconclusive comparison the evidence says how many repeats
would make a difference of the observed size and spread have an interval clear of 0 (the
smallest R with t(0.975, R − 1) · s_d / √R < |d̄|): a planning figure, not a promise. The
claims (measures per repeat: ``accuracy`` the runs' mean accuracy, ``SD`` their
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
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from modelvar.findings.paired import (
    ALPHA,
    CONTRADICTED,
    INCONCLUSIVE,
    MAX_REPEATS_NAMED,
    MIN_FOR_INTERVAL,
    NOT_TESTED,
    SUPPORTED,
    VERDICTS,
    Paired,
    per_repeat,
    too_few,
)
from modelvar.findings.sources import alone as single_sources
from modelvar.study.cells import Cell

__all__ = ["CLAIMS", "VERDICTS", "Outcome", "Paired", "check_claims", "per_repeat"]

CLAIMS = {
    "sig0_data": "Data perturbation at the zeroth significant digit moves accuracy most.",
    "hparam_strength": "Stronger hparam perturbation widens the accuracy distribution.",
    "downsampling_largest": "Train downsampling is the largest source of variance.",
    "categorical_label_vs_sample": "Label-level categorical noise matters at p = 0.1; "
                                   "sample-level barely does at p = 0.2.",
}


@dataclass(frozen=True)
class Outcome:
    """One claim on one dataset × classifier: its status, the evidence, and the p-values of
    the comparisons it rests on."""

    status: str
    evidence: str
    p_values: tuple[float, ...] = ()


def combine(comparisons: list[Paired], weak: list[str], threshold: float) -> Outcome:
    """The claim's verdict from its comparisons (module docstring) and the evidence text."""
    verdicts = [c.verdict(threshold) for c in comparisons]
    status = SUPPORTED if all(v == SUPPORTED for v in verdicts) else \
        CONTRADICTED if CONTRADICTED in verdicts else INCONCLUSIVE
    if weak and status != INCONCLUSIVE:
        status = INCONCLUSIVE
    n = max(c.n for c in comparisons)
    parts = ["; ".join(c.text() for c in comparisons) + f" ({n} repeat{'s' * (n != 1)})"]
    open_ = [c for c, v in zip(comparisons, verdicts, strict=True) if v == INCONCLUSIVE]
    if status == INCONCLUSIVE and open_ and not weak:
        needed = [c.repeats_needed() for c in open_]
        if n < MIN_FOR_INTERVAL:
            parts.append(too_few(n))
        elif any(r is None for r in needed):
            parts.append("no difference seen")
        else:
            most = max(needed)
            parts.append(f"too few repeats to tell: about {most} would, if the differences "
                         "are as large as seen" if most <= MAX_REPEATS_NAMED else
                         f"the differences are too small to tell with fewer than "
                         f"{MAX_REPEATS_NAMED} repeats")
    parts += weak
    return Outcome(status, "; ".join(parts), tuple(c.p_value for c in comparisons))


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


def _sig0(c: _Cells, threshold: float) -> Outcome:
    levels = c.levels("data")
    sig0 = [row for scheme, row in levels if scheme == ("sig", 0.0)]
    if c.control is None or len(levels) < 2 or not sig0:
        return Outcome(NOT_TESTED, "needs data sig 0, another data level and the control")
    control = c.series(c.control, "accuracy")
    shift = {row["level"]: (c.series(row["cell"], "accuracy") - control).abs()
             for _, row in levels}
    comparisons = [Paired.between(f"|shift| sig 0 − {name.removeprefix('data ')}",
                                  shift["data sig 0"], s)
                   for name, s in shift.items() if name != "data sig 0"]
    weak = [w for w in (c.weak(sig0[0]),) if w]
    return combine(comparisons, weak, threshold)


def _hparam(c: _Cells, threshold: float) -> Outcome:
    by_kind: dict[str, list] = {}
    for (kind, value), row in c.levels("hparam"):
        by_kind.setdefault(kind, []).append((-value if kind == "sig" else value, row))
    tested = {k: sorted(v, key=lambda t: t[0]) for k, v in by_kind.items() if len(v) >= 2}
    if not tested:
        return Outcome(NOT_TESTED, "needs two strengths of one hparam scheme alone")
    comparisons = []
    for levels in tested.values():
        for (_, weaker), (_, stronger) in itertools.pairwise(levels):
            comparisons.append(Paired.between(
                f"SD {stronger['level'].removeprefix('hparam ')} − "
                f"{weaker['level'].removeprefix('hparam ')}",
                c.series(stronger["cell"], "sd"), c.series(weaker["cell"], "sd")))
    return combine(comparisons, [], threshold)


def _downsampling(c: _Cells, threshold: float) -> Outcome:
    alone = single_sources(c.rows)
    down = alone[alone["source"] == "downsample"]
    others = alone[alone["source"] != "downsample"]
    if down.empty or others.empty:
        return Outcome(NOT_TESTED,
                       "needs a training fraction below 100 % and another source alone")
    comparisons = []
    for measure, column, name in (("sd", "accuracy_sd", "SD"),
                                  ("disagreement", "disagreement", "disagreement")):
        top = down.loc[down[column].idxmax()]
        for _, other in others.iterrows():
            comparisons.append(Paired.between(f"{name} {top['level']} − {other['level']}",
                                              c.series(top["cell"], measure),
                                              c.series(other["cell"], measure)))
    return combine(comparisons, [], threshold)


def _categorical(c: _Cells, threshold: float) -> Outcome:
    levels = {row["level"]: row for _, row in c.rows[c.rows["source"] == "categorical"]
              .iterrows()}
    label, sample = levels.get("categorical label 0.1"), levels.get("categorical sample 0.2")
    if c.control is None or label is None or sample is None:
        return Outcome(NOT_TESTED, "needs categorical label 0.1, sample 0.2 and the control")
    base = c.series(c.control, "disagreement")
    label_adds = c.series(label["cell"], "disagreement") - base
    sample_adds = c.series(sample["cell"], "disagreement") - base
    return combine([Paired.between("disagreement label 0.1 − control", label_adds,
                                   0 * label_adds),
                    Paired.between("½ label's added − sample 0.2's added", 0.5 * label_adds,
                                   sample_adds)], [], threshold)


def check_claims(sources: pd.DataFrame, summary: pd.DataFrame, *,
                 weak_below: float, threshold: float = ALPHA) -> pd.DataFrame:
    """One row per dataset × classifier × claim: ``status`` (supported, contradicted,
    inconclusive, not tested) and ``evidence`` (module docstring). ``sources``: the sources
    table (:func:`~modelvar.findings.sources.sources_of_variance`), ``summary``: the summary
    table's rows it was made from (per cell and repeat); ``weak_below``: the share of changed
    cells under which a data level is too weak to judge (config
    ``perturbation.warn_changed_below``); ``threshold``: the largest p-value that holds (the
    page's multiplicity control; :data:`ALPHA` for one claim alone)."""
    values = per_repeat(summary)
    out = []
    for (dataset, classifier), rows in sources.groupby(["dataset", "classifier"], sort=False):
        try:
            mine = values.xs((dataset, classifier), level=("dataset", "classifier"))
        except KeyError:
            mine = values.iloc[:0].droplevel(["dataset", "classifier"])
        cells = _Cells(rows, mine, weak_below)
        results = {"sig0_data": _sig0, "hparam_strength": _hparam,
                   "downsampling_largest": _downsampling,
                   "categorical_label_vs_sample": _categorical}
        for claim, check in results.items():
            outcome = check(cells, threshold)
            out.append({"dataset": dataset, "classifier": classifier, "claim": claim,
                        "statement": CLAIMS[claim], "status": outcome.status,
                        "evidence": outcome.evidence,
                        "p_values": json.dumps([None if not np.isfinite(p) else p
                                                for p in outcome.p_values])})
    return pd.DataFrame(out, columns=["dataset", "classifier", "claim", "statement", "status",
                                      "evidence", "p_values"])
