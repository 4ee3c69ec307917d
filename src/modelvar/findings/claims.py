"""Seed 004's stated findings as checks on a run's numbers.

The seed reports what its preliminary grid showed. Each statement becomes a test on the
one-at-a-time sources table (:mod:`modelvar.findings.sources`) of one dataset × classifier,
with the status ``supported``, ``not supported`` or ``not tested`` (the run lacks the levels it
needs) and the numbers it rests on:

``sig0_data``
    "perturbation at the zeroth significant digit has the most dramatic / obvious effect" on
    accuracy: among the data levels alone, ``data sig 0`` moves the mean accuracy furthest from
    the control's. Needs ``{sig: 0}`` and another data level.
``hparam_strength``
    "the stronger the hparam perturbation (larger p), the wider the global accuracy
    distributions": for every hparam scheme with two or more strengths alone (``rel``, ``abs``:
    larger p is stronger; ``sig``: fewer digits is stronger), the within-repeat accuracy SD
    grows with the strength.
``downsampling_largest``
    "train downsampling [is] the largest source of variance in model performance and
    performance consistency": a downsampling level alone has the largest within-repeat accuracy
    SD *and* the largest disagreement of all sources alone. Needs a fraction below 1 and another
    source.
``categorical_label_vs_sample``
    label-level categorical noise matters at p = 0.1 while sample-level barely does at 0.2: the
    disagreement under ``categorical label 0.1`` exceeds the control's (its interval's lower end
    above the control's value), and ``categorical sample 0.2`` adds less than half of what label
    noise adds. Needs both levels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.pipeline.cells import Cell

CLAIMS = {
    "sig0_data": "Data perturbation at the zeroth significant digit moves accuracy most.",
    "hparam_strength": "Stronger hparam perturbation widens the accuracy distribution.",
    "downsampling_largest": "Train downsampling is the largest source of variance.",
    "categorical_label_vs_sample": "Label-level categorical noise matters at p = 0.1; "
                                   "sample-level barely does at p = 0.2.",
}
SUPPORTED, NOT_SUPPORTED, NOT_TESTED = "supported", "not supported", "not tested"


def _f(x: float) -> str:
    return "nan" if not np.isfinite(x) else f"{x:.3f}"


def _levels(rows: pd.DataFrame, family: str) -> list[tuple[tuple, pd.Series]]:
    """The rows of one family's levels alone with their (kind, value) scheme."""
    out = []
    for _, row in rows[rows["source"] == family].iterrows():
        scheme = getattr(Cell.parse(row["cell"]), family)
        out.append((scheme, row))
    return out


def _sig0(rows: pd.DataFrame, control: pd.Series | None) -> tuple[str, str]:
    levels = _levels(rows, "data")
    if control is None or len(levels) < 2 or not any(s == ("sig", 0.0) for s, _ in levels):
        return NOT_TESTED, "needs data sig 0, another data level and the control"
    shifts = {row["level"]: row["accuracy"] - control["accuracy"] for _, row in levels}
    top = max(shifts, key=lambda k: abs(shifts[k]))
    text = "accuracy − control: " + ", ".join(f"{k} {v:+.3f}" for k, v in shifts.items())
    return (SUPPORTED if top == "data sig 0" else NOT_SUPPORTED), text


def _hparam(rows: pd.DataFrame) -> tuple[str, str]:
    by_kind: dict[str, list] = {}
    for (kind, value), row in _levels(rows, "hparam"):
        strength = -value if kind == "sig" else value
        by_kind.setdefault(kind, []).append((strength, row))
    tested = {k: sorted(v, key=lambda t: t[0]) for k, v in by_kind.items() if len(v) >= 2}
    if not tested:
        return NOT_TESTED, "needs two strengths of one hparam scheme alone"
    parts, ok = [], True
    for levels in tested.values():
        sds = [row["accuracy_sd"] for _, row in levels]
        ok &= bool(np.all(np.diff(sds) > 0))
        parts.append(" < ".join(
            f"{row['level'].removeprefix('hparam ')} SD {_f(row['accuracy_sd'])}"
            for _, row in levels))
    return (SUPPORTED if ok else NOT_SUPPORTED), "weaker to stronger: " + "; ".join(parts)


def _downsampling(rows: pd.DataFrame) -> tuple[str, str]:
    alone = rows[~rows["source"].isin(["control", "test set"])]
    if not (alone["source"] == "downsample").any() or alone["source"].nunique() < 2:
        return NOT_TESTED, "needs a training fraction below 100 % and another source alone"
    best_sd = alone.loc[alone["accuracy_sd"].idxmax()]
    best_dis = alone.loc[alone["disagreement"].idxmax()]
    text = (f"largest accuracy SD: {best_sd['level']} ({_f(best_sd['accuracy_sd'])}); largest "
            f"disagreement: {best_dis['level']} ({_f(best_dis['disagreement'])})")
    ok = best_sd["source"] == "downsample" and best_dis["source"] == "downsample"
    return (SUPPORTED if ok else NOT_SUPPORTED), text


def _categorical(rows: pd.DataFrame, control: pd.Series | None) -> tuple[str, str]:
    levels = {row["level"]: row for _, row in rows[rows["source"] == "categorical"].iterrows()}
    label, sample = levels.get("categorical label 0.1"), levels.get("categorical sample 0.2")
    if control is None or label is None or sample is None:
        return NOT_TESTED, "needs categorical label 0.1, sample 0.2 and the control"
    base = control["disagreement"]
    label_adds, sample_adds = label["disagreement"] - base, sample["disagreement"] - base
    matters = label["disagreement_low"] > base
    text = (f"disagreement: control {_f(base)}, label 0.1 {_f(label['disagreement'])} "
            f"[{_f(label['disagreement_low'])}, {_f(label['disagreement_high'])}], sample 0.2 "
            f"{_f(sample['disagreement'])}")
    ok = bool(matters and sample_adds < 0.5 * label_adds)
    return (SUPPORTED if ok else NOT_SUPPORTED), text


def check_claims(sources: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset × classifier × claim: ``status`` and ``evidence`` (module
    docstring)."""
    out = []
    for (dataset, classifier), rows in sources.groupby(["dataset", "classifier"], sort=False):
        control = rows[rows["source"] == "control"]
        control = control.iloc[0] if len(control) else None
        results = {"sig0_data": _sig0(rows, control), "hparam_strength": _hparam(rows),
                   "downsampling_largest": _downsampling(rows),
                   "categorical_label_vs_sample": _categorical(rows, control)}
        for claim, (status, evidence) in results.items():
            out.append({"dataset": dataset, "classifier": classifier, "claim": claim,
                        "statement": CLAIMS[claim], "status": status, "evidence": evidence})
    return pd.DataFrame(out, columns=["dataset", "classifier", "claim", "statement", "status",
                                      "evidence"])
