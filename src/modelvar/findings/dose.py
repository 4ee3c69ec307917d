"""Dose-response: a source's effect against its strength, where a config runs two or more
strengths of it alone (issue 22, item 4).

One strength per source is one point of a curve: which source "matters most" depends on the
strengths chosen. For each dataset × classifier and each *curve* — a family's levels alone that
share a strength axis — the one-at-a-time rows of the sources table become points
(strength, run-to-run accuracy SD, disagreement), the control added at strength 0:

* **Axis.** The family's realised strength where the runs record one (data noise: mean |Δx| of
  the changed cells in training SDs, ``data_shift_sd``, so that every data scheme lies on one
  axis; categorical noise: the share of categorical cells changed); else the nominal strength
  per scheme (hparam ``rel``/``abs``: p; ``sig``: −digits, fewer digits being stronger, and no
  control point, which lies at −∞; downsampling: the share of the pool left out). Model seeds
  have no strength.
* **Shape** (:func:`dose_summary`): Spearman's ρ of each measure against strength over the
  points, and whether it never falls as strength grows (``monotone``).
* **The yardstick.** The strength at which the accuracy SD reaches the test-set yardstick (the
  control's between-repeat SD), by linear interpolation between the first two points that
  bracket it; NaN when no strength run reaches it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.findings.sources import alone as single_sources
from modelvar.study.cells import Cell

#: the sources-table columns each point carries
MEASURE_COLUMNS = ["accuracy_sd", "accuracy_sd_low", "accuracy_sd_high", "disagreement",
                   "disagreement_low", "disagreement_high"]
COLUMNS = ["dataset", "classifier", "family", "scheme", "axis", "level", "strength",
           *MEASURE_COLUMNS, "yardstick"]
SUMMARY_COLUMNS = ["dataset", "classifier", "family", "scheme", "axis", "points",
                   "rho_accuracy_sd", "rho_disagreement", "monotone_accuracy_sd",
                   "monotone_disagreement", "max_strength", "yardstick", "strength_at_yardstick"]
#: the sources-table column of each family's realised strength on the dose axis, and its words
REALISED_AXIS = {"data": ("data_shift_sd", "mean |Δx| of changed cells, training SDs"),
                 "categorical": ("cat_changed_frac", "share of categorical cells changed")}


def _nominal(family: str, level) -> tuple[str, str, float] | None:
    """(scheme, axis words, strength) of a level without a realised strength; None for a
    family without a strength (model seeds)."""
    if isinstance(level, tuple) and len(level) == 2:
        kind, value = level
        return (kind, "−significant digits", -float(value)) if kind == "sig" else \
            (kind, f"nominal {kind} p", float(value))
    if family == "downsample" and isinstance(level, float):
        return ("fraction", "share of the training pool left out", 1.0 - level)
    return None


def dose_response(sources: pd.DataFrame) -> pd.DataFrame:
    """The points of every curve with two or more strengths alone (module docstring)."""
    rows = []
    alone = single_sources(sources)
    for (dataset, classifier), part in alone.groupby(["dataset", "classifier"], sort=False):
        mine = sources[(sources["dataset"] == dataset) & (sources["classifier"] == classifier)]
        control = mine[mine["source"] == "control"]
        yard = mine.loc[mine["source"] == "test set", "accuracy_sd"]
        yard = float(yard.iloc[0]) if len(yard) else np.nan
        curves: dict[tuple[str, str, str], list] = {}
        for _, row in part.iterrows():
            family = row["source"]
            realised = REALISED_AXIS.get(family)
            if realised and realised[0] in row and np.isfinite(row[realised[0]]):
                key, strength = (family, "realised", realised[1]), float(row[realised[0]])
            else:
                nominal = _nominal(family, Cell.parse(row["cell"])[family])
                if nominal is None:
                    continue
                key, strength = (family, nominal[0], nominal[1]), nominal[2]
            curves.setdefault(key, []).append((strength, row))
        for (family, scheme, axis), points in curves.items():
            if len(points) < 2:
                continue
            if len(control) and scheme != "sig":  # sig's control lies at −∞ digits
                points = [(0.0, control.iloc[0]), *points]
            for strength, row in sorted(points, key=lambda p: p[0]):
                rows.append({"dataset": dataset, "classifier": classifier, "family": family,
                             "scheme": scheme, "axis": axis, "level": row["level"],
                             "strength": strength, "yardstick": yard,
                             **{c: row[c] for c in MEASURE_COLUMNS}})
    return pd.DataFrame(rows, columns=COLUMNS)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(y[ok]) == 0:
        return np.nan
    return float(pd.Series(x[ok]).rank().corr(pd.Series(y[ok]).rank()))


def crossing(strength: np.ndarray, value: np.ndarray, level: float) -> float:
    """The strength at which ``value`` first reaches ``level`` as strength grows, by linear
    interpolation between the two points that bracket it; NaN if it never does."""
    if not np.isfinite(level):
        return np.nan
    for i in range(len(strength)):
        if value[i] >= level:
            if i == 0:
                return float(strength[0])
            s0, s1, v0, v1 = strength[i - 1], strength[i], value[i - 1], value[i]
            return float(s0 + (level - v0) * (s1 - s0) / (v1 - v0)) if v1 != v0 else float(s1)
    return np.nan


def dose_summary(dose: pd.DataFrame) -> pd.DataFrame:
    """Per curve: its points, Spearman's ρ and monotonicity of each measure, and the strength
    at which the accuracy SD reaches the test-set yardstick (module docstring)."""
    rows = []
    keys = ["dataset", "classifier", "family", "scheme", "axis"]
    for key, part in dose.groupby(keys, sort=False):
        part = part.sort_values("strength", kind="stable")
        s = part["strength"].to_numpy(dtype=float)
        out = dict(zip(keys, key, strict=True))
        out["points"] = len(part)
        for measure in ("accuracy_sd", "disagreement"):
            v = part[measure].to_numpy(dtype=float)
            out[f"rho_{measure}"] = _spearman(s, v)
            out[f"monotone_{measure}"] = bool(np.all(np.diff(v[np.isfinite(v)]) >= 0))
        yard = float(part["yardstick"].iloc[0])
        out.update(max_strength=float(s.max()), yardstick=yard,
                   strength_at_yardstick=crossing(s, part["accuracy_sd"].to_numpy(float), yard))
        rows.append(out)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def dose_sentences(summary: pd.DataFrame) -> dict[str, list[str]]:
    """Per dataset, a sentence per curve: how the source's effect grows with its strength and
    where it matches the test-set yardstick."""
    out: dict[str, list[str]] = {}
    for _, r in summary.iterrows():
        what = f"{r['family']} ({r['scheme']})" if r["scheme"] != "realised" else r["family"]
        trend = ("rises with strength" if r["monotone_accuracy_sd"] else
                 "does not rise steadily with strength")
        rho = "" if not np.isfinite(r["rho_accuracy_sd"]) else \
            f", Spearman ρ {r['rho_accuracy_sd']:+.2f}"
        text = (f"{r['classifier']}'s accuracy SD under {what} {trend} ({r['points']} points "
                f"with the control{rho}; axis: {r['axis']})")
        if np.isfinite(r["strength_at_yardstick"]):
            text += (f" and reaches the test-set yardstick ({r['yardstick']:.3f}) at "
                     f"{r['strength_at_yardstick']:.3g}")
        elif np.isfinite(r["yardstick"]):
            text += (f" and stays below the test-set yardstick ({r['yardstick']:.3f}) up to "
                     f"the strongest level run ({r['max_strength']:.3g})")
        out.setdefault(r["dataset"], []).append(text + ".")
    return out
