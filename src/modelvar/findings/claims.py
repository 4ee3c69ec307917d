"""Seed 004's stated findings as checks on a run's numbers, with their uncertainty.

The seed reports what its preliminary grid showed. Each statement becomes a set of **paired
comparisons over repeats** between one-at-a-time cells of one dataset × classifier
(:class:`~modelvar.findings.paired.Paired`: the per-repeat difference, its t-interval from 3
repeats on and its p-value). A comparison that the claim expects positive is

* ``supported`` when its p-value holds under the page's multiplicity control (``threshold``,
  :mod:`modelvar.findings.multiplicity`) and the difference is above 0, ``contradicted`` when
  it holds and is below 0, and ``inconclusive`` otherwise (or with fewer than 3 repeats: no
  test);

a claim is ``supported`` when every comparison it needs is (an intersection-union test: its
p-value is the largest of theirs), ``contradicted`` when any is contradicted (its p-value the
smallest of theirs times their number, Bonferroni within the claim) — the evidence then names
the comparison that went the other way —, ``inconclusive`` otherwise, and ``not tested`` when
the run lacks the levels it needs. The claim's two nulls (not every comparison above 0; no
comparison below 0) enter the page's control (exploratory tier, :mod:`modelvar.findings.kinds`)
with their p-values; a claim that restates the leading sources (downsampling is the only
downsampling level, leads both measures and no level was left out of the ranking: its
comparisons are the leaders') is judged from them and not counted again. For an inconclusive
claim the evidence says how many repeats would give a difference of the observed size and
spread 80 % power at the level the claim faces on the page
(:func:`~modelvar.findings.paired.repeats_for`): a planning figure, not a promise.
The claims (measures per repeat: ``accuracy`` the runs' mean accuracy, ``SD`` their
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
    MIN_FOR_INTERVAL,
    NOT_TESTED,
    POWER,
    SUPPORTED,
    VERDICTS,
    Paired,
    PerRepeat,
    per_repeat,
    repeats_phrase,
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
    """One claim on one dataset × classifier: its status, the evidence, the p-values of the
    comparisons it rests on and its own (NaN: not counted: untested, or restating another
    claim of the page), and the p-values of its two verdicts (:func:`claim_p`)."""

    status: str
    evidence: str
    p_values: tuple[float, ...] = ()
    p_value: float = np.nan
    p_supported: float = np.nan
    p_contradicted: float = np.nan


@dataclass(frozen=True)
class Evidence:
    """What a claim on one dataset × classifier rests on, whatever the threshold: its
    comparisons (None: not tested, ``untested`` says why), the levels too weak to judge, and
    whether it restates the leading sources (:func:`_restates`)."""

    comparisons: tuple[Paired, ...] | None
    weak: tuple[str, ...] = ()
    untested: str = ""
    restates: bool = False


def claim_p(comparisons: list[Paired]) -> tuple[float, float]:
    """(p of "supported", p of "contradicted") of a claim resting on ``comparisons`` (module
    docstring); NaN where a comparison has no p-value."""
    ps = np.array([c.p_value for c in comparisons], dtype=float)
    if not len(ps) or not np.isfinite(ps).all():
        return np.nan, np.nan
    means = np.array([c.mean for c in comparisons])
    supported = float(ps.max()) if (means > 0).all() else 1.0
    below = ps[means < 0]
    contradicted = float(min(1.0, below.min() * len(ps))) if len(below) else 1.0
    return supported, contradicted


def outcome(evidence: Evidence, threshold: float, leaders: list[str] | None = None,
            text: bool = True) -> Outcome:
    """The claim's verdict at ``threshold`` (module docstring) with its evidence text (none
    where ``text`` is false); ``leaders``: the verdicts of the leading sources a restating
    claim is judged from."""
    if evidence.comparisons is None:
        return Outcome(NOT_TESTED, evidence.untested)
    said = combine(list(evidence.comparisons), list(evidence.weak), threshold, text)
    if not evidence.restates:
        return said
    status = SUPPORTED if leaders and all(v == SUPPORTED for v in leaders) else INCONCLUSIVE
    return Outcome(status, evidence_text(evidence, status, threshold) if text else "",
                   said.p_values)


def combine(comparisons: list[Paired], weak: list[str], threshold: float,
            text: bool = True) -> Outcome:
    """The claim's verdict from its comparisons at ``threshold`` (module docstring) and the
    evidence text."""
    p_sup, p_con = claim_p(comparisons)
    status = SUPPORTED if p_sup <= threshold else CONTRADICTED if p_con <= threshold else \
        INCONCLUSIVE
    if weak:
        status = INCONCLUSIVE
    p_claim = np.nanmin([p_sup, p_con]) if not weak and np.isfinite([p_sup, p_con]).any() \
        else np.nan
    evidence = Evidence(tuple(comparisons), tuple(weak))
    return Outcome(status, evidence_text(evidence, status, threshold) if text else "",
                   tuple(c.p_value for c in comparisons), float(p_claim),
                   p_sup if not weak else np.nan, p_con if not weak else np.nan)


def evidence_text(evidence: Evidence, status: str, level: float) -> str:
    """The numbers a claim rests on, for its verdict ``status`` at ``level`` (the level it
    faces on the page): every comparison with its interval; where it is contradicted, which
    comparison went the other way; where it is inconclusive, why — too few repeats, no
    difference seen, or the repeats that would give 80 % power at ``level`` if the
    differences are as large as seen; the levels too weak to judge."""
    if evidence.comparisons is None:
        return evidence.untested
    comparisons = list(evidence.comparisons)
    n = max(c.n for c in comparisons)
    parts = ["; ".join(c.text() for c in comparisons) + f" ({n} repeat{'s' * (n != 1)})"]
    if status == CONTRADICTED:
        against = [c.label for c in comparisons if c.mean < 0 and np.isfinite(c.p_value)]
        if against:
            parts.append(f"contradicted: {_listed(against)} went the other way (below 0, "
                         "told apart)")
    if status == INCONCLUSIVE and not evidence.weak:
        open_ = [c for c in comparisons if not c.p_value <= level]
        needed = [c.repeats_needed(alpha=level) for c in open_]
        if n < MIN_FOR_INTERVAL:
            parts.append(too_few(n))
        elif open_ and any(r is None for r in needed):
            parts.append("no difference seen")
        elif open_ and np.isfinite(level):
            parts.append(f"too few repeats to tell: {repeats_phrase(max(needed))} would give "
                         f"{POWER * 100:.0f} % power at p ≤ {level:.2g} (the level this claim "
                         "faces on the page), if the differences are as large as seen")
    parts += evidence.weak
    if evidence.restates:
        parts.append("the leading sources' comparisons: judged there, not counted again")
    return "; ".join(parts)


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class _Cells:
    """One dataset × classifier's one-at-a-time rows and per-repeat values."""

    def __init__(self, rows: pd.DataFrame, values: PerRepeat, weak_below: float,
                 margins: pd.DataFrame | None = None):
        self.rows, self.values, self.weak_below = rows, values, weak_below
        self.margins = margins
        self.dataset, self.classifier = rows["dataset"].iloc[0], rows["classifier"].iloc[0]
        control = rows[rows["source"] == "control"]
        self.control = control.iloc[0]["cell"] if len(control) else None

    def series(self, cell: str, measure: str) -> pd.Series:
        return self.values.series(self.dataset, self.classifier, cell, measure)

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


def _sig0(c: _Cells) -> Evidence:
    levels = c.levels("data")
    sig0 = [row for scheme, row in levels if scheme == ("sig", 0.0)]
    if c.control is None or len(levels) < 2 or not sig0:
        return Evidence(None, untested="needs data sig 0, another data level and the control")
    control = c.series(c.control, "accuracy")
    shift = {row["level"]: (c.series(row["cell"], "accuracy") - control).abs()
             for _, row in levels}
    comparisons = [Paired.between(f"|shift| sig 0 − {name.removeprefix('data ')}",
                                  shift["data sig 0"], s)
                   for name, s in shift.items() if name != "data sig 0"]
    weak = tuple(w for w in (c.weak(sig0[0]),) if w)
    return Evidence(tuple(comparisons), weak)


def _hparam(c: _Cells) -> Evidence:
    by_kind: dict[str, list] = {}
    for (kind, value), row in c.levels("hparam"):
        by_kind.setdefault(kind, []).append((-value if kind == "sig" else value, row))
    tested = {k: sorted(v, key=lambda t: t[0]) for k, v in by_kind.items() if len(v) >= 2}
    if not tested:
        return Evidence(None, untested="needs two strengths of one hparam scheme alone")
    comparisons = []
    for levels in tested.values():
        for (_, weaker), (_, stronger) in itertools.pairwise(levels):
            comparisons.append(Paired.between(
                f"SD {stronger['level'].removeprefix('hparam ')} − "
                f"{weaker['level'].removeprefix('hparam ')}",
                c.series(stronger["cell"], "sd"), c.series(weaker["cell"], "sd")))
    return Evidence(tuple(comparisons))


def _downsampling(c: _Cells) -> Evidence:
    alone = single_sources(c.rows)
    down = alone[alone["source"] == "downsample"]
    others = alone[alone["source"] != "downsample"]
    if down.empty or others.empty:
        return Evidence(None, untested="needs a training fraction below 100 % and another "
                        "source alone")
    comparisons = []
    for measure, column, name in (("sd", "accuracy_sd", "SD"),
                                  ("disagreement", "disagreement", "disagreement")):
        top = down.loc[down[column].idxmax()]
        for _, other in others.iterrows():
            comparisons.append(Paired.between(f"{name} {top['level']} − {other['level']}",
                                              c.series(top["cell"], measure),
                                              c.series(other["cell"], measure)))
    return Evidence(tuple(comparisons), restates=_restates(c, down))


def _leaders(margins: pd.DataFrame | None, dataset, classifier) -> pd.DataFrame:
    if margins is None:
        return pd.DataFrame()
    return margins[margins["dataset"].eq(dataset) & margins["classifier"].eq(classifier)]


def _restates(c: _Cells, down: pd.DataFrame) -> bool:
    """Whether the downsampling claim restates the leading sources (module docstring): the
    only downsampling level leads both measures, nothing left out of the ranking."""
    mine = _leaders(c.margins, c.dataset, c.classifier)
    return len(down) == 1 and len(mine) == 2 and bool(
        (mine["leader"] == down["level"].iloc[0]).all()) and not \
        mine["left_out"].fillna("").astype(bool).any()


def _categorical(c: _Cells) -> Evidence:
    levels = {row["level"]: row for _, row in c.rows[c.rows["source"] == "categorical"]
              .iterrows()}
    label, sample = levels.get("categorical label 0.1"), levels.get("categorical sample 0.2")
    if c.control is None or label is None or sample is None:
        return Evidence(None, untested="needs categorical label 0.1, sample 0.2 and the "
                        "control")
    base = c.series(c.control, "disagreement")
    label_adds = c.series(label["cell"], "disagreement") - base
    sample_adds = c.series(sample["cell"], "disagreement") - base
    return Evidence((Paired.between("disagreement label 0.1 − control", label_adds,
                                    0 * label_adds),
                     Paired.between("½ label's added − sample 0.2's added", 0.5 * label_adds,
                                    sample_adds)))


CHECKS = {"sig0_data": _sig0, "hparam_strength": _hparam,
          "downsampling_largest": _downsampling, "categorical_label_vs_sample": _categorical}


def gather_claims(sources: pd.DataFrame, summary: pd.DataFrame, *, weak_below: float,
                  margins: pd.DataFrame | None = None,
                  values: PerRepeat | None = None) -> list[tuple[str, str, str, Evidence]]:
    """(dataset, classifier, claim, its evidence) of every claim on every dataset ×
    classifier: what :func:`claims_at` judges at a threshold."""
    values = per_repeat(summary) if values is None else values
    out = []
    for (dataset, classifier), rows in sources.groupby(["dataset", "classifier"], sort=False):
        cells = _Cells(rows, values, weak_below, margins)
        out += [(dataset, classifier, claim, check(cells)) for claim, check in CHECKS.items()]
    return out


def claims_at(gathered: list[tuple[str, str, str, Evidence]], threshold: float,
              margins: pd.DataFrame | None = None, text: bool = True) -> pd.DataFrame:
    """The claims table (:func:`check_claims`) of gathered evidence at ``threshold``, the
    restating claims judged from ``margins``' verdicts; ``text``: with the evidence's
    words (without: the verdicts and p-values alone)."""
    out = []
    for dataset, classifier, claim, evidence in gathered:
        leaders = list(_leaders(margins, dataset, classifier)["verdict"]) \
            if evidence.restates else None
        said = outcome(evidence, threshold, leaders, text)
        out.append({"dataset": dataset, "classifier": classifier, "claim": claim,
                    "statement": CLAIMS[claim], "status": said.status,
                    "evidence": said.evidence,
                    "p_values": json.dumps([None if not np.isfinite(p) else p
                                            for p in said.p_values]),
                    "p_value": said.p_value, "p_supported": said.p_supported,
                    "p_contradicted": said.p_contradicted,
                    "restates": evidence.restates, "effect": effect(evidence),
                    "room": np.nan,
                    "repeats_needed": repeats_for_all(evidence, threshold) if text
                    else np.nan})
    return pd.DataFrame(out, columns=CLAIM_COLUMNS)


CLAIM_COLUMNS = ["dataset", "classifier", "claim", "statement", "status", "evidence",
                 "p_values", "p_value", "p_supported", "p_contradicted", "restates", "effect",
                 "room", "repeats_needed"]


def effect(evidence: Evidence) -> float:
    """The claim's standardised effect: the smallest of its comparisons' (every one must be
    told apart); NaN where one has no spread or difference."""
    if evidence.comparisons is None:
        return np.nan
    effects = [c.effect for c in evidence.comparisons]
    return float(min(effects)) if effects and np.isfinite(effects).all() else np.nan


def repeats_for_all(evidence: Evidence, alpha: float) -> float:
    """The repeats at which every comparison of the claim would have 80 % power at ``alpha``
    (the largest of theirs; NaN where one has no spread or difference): a planning figure."""
    if evidence.comparisons is None:
        return np.nan
    counts = [c.repeats_needed(alpha=alpha) for c in evidence.comparisons]
    return float(max(counts)) if counts and all(n is not None for n in counts) else np.nan


def check_claims(sources: pd.DataFrame, summary: pd.DataFrame, *,
                 weak_below: float, threshold: float = ALPHA,
                 margins: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per dataset × classifier × claim: ``status`` (supported, contradicted,
    inconclusive, not tested), ``evidence`` (module docstring), each comparison's p-value
    (``p_values``) and the claim's (``p_value``; NaN: not counted). ``sources``: the sources
    table (:func:`~modelvar.findings.sources.sources_of_variance`), ``summary``: the summary
    table's rows it was made from (per cell and repeat); ``weak_below``: the share of changed
    cells under which a data level is too weak to judge (config
    ``perturbation.warn_changed_below``); ``threshold``: the largest p-value that holds (the
    page's multiplicity control; :data:`ALPHA` for one claim alone); ``margins``: the leading
    sources (:func:`~modelvar.findings.comparison.leader_margins`), which a claim may
    restate."""
    gathered = gather_claims(sources, summary, weak_below=weak_below, margins=margins)
    return claims_at(gathered, threshold, margins)
