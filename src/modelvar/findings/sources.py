"""Sources of variance, one at a time: each source alone against the control (seed 004's
question: *which source changes accuracy and predictions most?*).

For one dataset × classifier, the one-at-a-time cells (:mod:`modelvar.study.design`) are the
control — nothing perturbed, 100 % of the training pool, one fixed model seed — and each level
of each family alone. For each such cell, over its R repeats:

* ``accuracy``: the mean run accuracy, with a 95 % t-interval over the repeats' means;
* ``accuracy_sd``: the **within-repeat** run-to-run SD of accuracy (summary ``sd``, ddof 1),
  averaged over repeats, with a t-interval over repeats — how much this source alone moves a
  run's accuracy when the test set is held fixed;
* ``disagreement`` (mean pairwise churn = 1 − percent agreement), ``ec_global``, ``ec_local``,
  ``kappa``: the repeat's mean over its run pairs, averaged over repeats, with t-intervals —
  how much the source changes individual predictions;
* ``bias_01``, ``variance_01``: the 0-1 loss decomposition of the cell's runs
  (:func:`modelvar.metrics.agreement.bias_variance_01`: bias = the runs' majority vote is wrong,
  variance = a run's disagreement with the majority), averaged over repeats, with t-intervals;
* ``independent_flips``: 2 · n_test · SD² / disagreement per repeat, averaged over repeats (SD:
  the within-repeat run-to-run accuracy SD; disagreement: mean pairwise churn). If runs flipped
  test samples independently of each other, two runs' accuracies would differ by a sum of
  ±1/n_test steps over the n_test · disagreement samples they disagree on, so the ratio is near 1
  (below 1 with more than two classes: a flip between two wrong labels moves no accuracy); well
  above 1 means whole models shift together (a run is better or worse on many samples at once).
  NaN where the runs never disagree;
* ``identical_repeats``: repeats in which every run predicted every sample alike (the source did
  not move the predictions at all: a deterministic classifier's control, or a model seed that
  the classifier ignores);
* the realised strength of the perturbation in the runs beside its nominal level: each
  family's summarised strength columns (:class:`modelvar.study.families.Strength`; for the
  built-ins ``data_changed_frac``, ``cat_changed_frac``: shares of cells changed;
  ``data_shift_sd``: mean |Δx| in training SDs), NaN on other sources' rows.

The **all combined** row (``source = "all combined"``) is the factorial cell in which every
source that acts on the dataset is away from its control at once (each family's first level
in the config: e.g. data rel 0.2 · categorical label 0.1 · hparam rel 0.1 · 50 % train · seed
per run), with the same measures: what each source alone is compared with, to check Summers &
Dinneen (ICML 2021: for neural networks any single source of nondeterminism gives about as much
prediction variability as all together; :func:`single_against_combined`). Only where the design
has that cell (``factorial`` or ``both``).

The **yardstick** row (``source = "test set"``) is the between-repeat SD of the control's
repeat-mean accuracy: what drawing another test set and training pool does (a repeat draws
both), with a chi-square interval. Intervals over R values use Student's t with R − 1 degrees
of freedom (:mod:`modelvar.metrics.student_t`) and are clipped to the metric's range; below
:data:`~modelvar.findings.paired.MIN_FOR_INTERVAL` values, or where every value is the same
(an interval of width 0 would read as certainty), they are NaN and the tables print the
estimate alone.

:func:`study_sources` summarises the table over datasets: per classifier, source and level, the
mean over datasets of ``accuracy_sd`` and ``disagreement`` with a t-interval over datasets.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from modelvar.findings.paired import (
    ALPHA,
    EQUIVALENCE_RATIO,
    MIN_FOR_INTERVAL,
    ROUNDING,
    SAME,
    PerRepeat,
    between_cells,
    per_repeat,
)
from modelvar.metrics import registry as metric_registry
from modelvar.metrics.student_t import t_quantile
from modelvar.study import families
from modelvar.study.cells import Cell, cell_label, level_label
from modelvar.study.design import active_sources

#: the sources table's rows that are not one source alone
CONTROL, COMBINED, YARDSTICK = "control", "all combined", "test set"


def source_names() -> tuple[str, ...]:
    """The sources in the tables' order: the control, every family, all of them combined, the
    test-set yardstick."""
    return (CONTROL, *families.names(), COMBINED, YARDSTICK)


def alone(sources: pd.DataFrame) -> pd.DataFrame:
    """The rows of single sources alone (not the control, all combined or the yardstick)."""
    return sources[~sources["source"].isin([CONTROL, COMBINED, YARDSTICK])]


def strength_summaries() -> list[tuple[str, families.Strength]]:
    """(family, strength) of every realised-strength number the sources table carries."""
    return [(f.name, s) for f, s in families.strengths() if s.sources]


#: summary metric → its column in the sources table
PAIRWISE = {"churn": "disagreement", "ec_global": "ec_global", "ec_local": "ec_local",
            "kappa": "kappa"}
MEASURES = ("accuracy", "accuracy_sd", "disagreement", "ec_global", "ec_local", "kappa",
            "bias_01", "variance_01")


def independent_flips(n_test, sd, disagreement) -> np.ndarray:
    """2 · n_test · SD² / disagreement (module docstring), NaN where disagreement is 0."""
    n_test, sd, dis = (np.asarray(v, dtype=float) for v in (n_test, sd, disagreement))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dis > 0, 2 * n_test * sd ** 2 / np.where(dis > 0, dis, 1), np.nan)


def all_same(values: np.ndarray) -> bool:
    """Every value the same: their spread within :data:`~modelvar.findings.paired.SAME` of
    their scale or below :data:`~modelvar.findings.paired.ROUNDING` (rounding noise: module
    :mod:`~modelvar.findings.paired`)."""
    return not float(np.std(values)) > max(SAME * float(np.abs(values).max()), ROUNDING)


def mean_ci(values, bounds: tuple[float, float] | None = None,
            level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean of the defined values with a Student-t interval, clipped to
    ``bounds``; NaN interval below :data:`MIN_FOR_INTERVAL` values or when they are all the
    same (module docstring)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return (np.nan, np.nan, np.nan)
    mean = float(v.mean())
    if len(v) < MIN_FOR_INTERVAL or all_same(v):
        return (mean, np.nan, np.nan)
    half = t_quantile(0.5 + level / 2, len(v) - 1) * float(v.std(ddof=1)) / math.sqrt(len(v))
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return (mean, low, high)


def sd_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """(SD, low, high) of the values (ddof 1) with the chi-square interval of a normal SD (NaN
    below :data:`MIN_FOR_INTERVAL` values or for an SD of 0)."""
    from scipy.stats import chi2

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return (np.nan, np.nan, np.nan)
    sd, df = float(v.std(ddof=1)), len(v) - 1
    if len(v) < MIN_FOR_INTERVAL or all_same(v):
        return (sd, np.nan, np.nan)
    return (sd, sd * math.sqrt(df / chi2.ppf(0.5 + level / 2, df)),
            sd * math.sqrt(df / chi2.ppf(0.5 - level / 2, df)))


def combined_cell(roles: dict[str, tuple]) -> str | None:
    """The all-combined cell of a dataset (module docstring): the first factorial cell in which
    every family that acts anywhere in the grid is away from its control; None without one."""
    grid = [c for c, r in roles.items() if "factorial" in r]
    acting = {f for c in grid for f in active_sources(Cell.parse(c))}
    if len(acting) < 2:
        return None
    return next((c for c in grid if set(active_sources(Cell.parse(c))) == acting), None)


def source_of(cell_id: str) -> tuple[str, str]:
    """(source, level label) of a one-at-a-time cell."""
    cell = Cell.parse(cell_id)
    active = active_sources(cell)
    if not active:
        return "control", "control"
    if len(active) > 1:
        raise ValueError(f"{cell_id} is not a one-at-a-time cell: it perturbs {active}")
    family = active[0]
    return family, level_label(family, cell.levels()[family])


def _put(row: dict, name: str, triple) -> None:
    row[name], row[f"{name}_low"], row[f"{name}_high"] = triple


def sources_of_variance(summary: pd.DataFrame, agreement: pd.DataFrame, runs: pd.DataFrame,
                        roles: dict[tuple[str, str], dict[str, tuple]]) -> pd.DataFrame:
    """The sources table (module docstring) of every dataset × classifier in the tables;
    ``roles[(dataset, classifier)]``: cell id → its parts of the design
    (:class:`~modelvar.study.design.StudyDesign`)."""
    rows = []
    summary = summary[summary["subset"] == "all"]
    keys = ["dataset", "classifier", "cell"]
    by_cell = dict(list(summary.groupby(keys, sort=False, observed=True)))
    agree_by_cell = dict(list(agreement.groupby(keys, sort=False, observed=True)))
    strengths = [(family, s) for family, s in strength_summaries() if s.column in runs]
    fit_strength = runs.groupby(keys, sort=False, observed=True)[
        [s.column for _, s in strengths]].mean() if strengths else None
    for (dataset, classifier), part in summary.groupby(["dataset", "classifier"], sort=False,
                                                        observed=True):
        mine = roles.get((str(dataset), str(classifier)), {})
        oat = [c for c, r in mine.items() if "one-at-a-time" in r]
        together = combined_cell(mine) if oat else None
        present = set(part["cell"].astype(str))
        control_means = None
        for cell in [c for c in [*oat, together] if c in present]:
            source, level = source_of(cell) if cell != together else (
                COMBINED, "all combined: " + cell_label(cell, active_sources(Cell.parse(cell))))
            s = by_cell[(dataset, classifier, cell)]
            metric = s["metric"].to_numpy()
            acc = s[metric == "accuracy"].sort_values("repeat")
            row = {"dataset": str(dataset), "classifier": str(classifier), "source": source,
                   "level": level, "cell": cell, "repeats": len(acc)}
            _put(row, "accuracy", mean_ci(acc["mean"], (0.0, 1.0)))
            _put(row, "accuracy_sd", mean_ci(acc["sd"], (0.0, 1.0)))
            for name_of, name in PAIRWISE.items():
                _put(row, name, mean_ci(s["mean"].to_numpy()[metric == name_of],
                                        metric_registry.metric(name_of).value_range))
            cell_agree = agree_by_cell.get((dataset, classifier, cell), agreement.iloc[:0])
            cell_agree = cell_agree.sort_values("repeat")
            for name in ("bias_01", "variance_01"):
                _put(row, name, mean_ci(cell_agree[name], (0.0, 1.0)) if name in cell_agree
                     else (np.nan,) * 3)
            churn = s[metric == "churn"].set_index("repeat")["mean"]
            n_test = cell_agree.set_index("repeat")["n"] if "n" in cell_agree else None
            row["independent_flips"] = float(np.nanmean(independent_flips(
                n_test.reindex(acc["repeat"]), acc["sd"], churn.reindex(acc["repeat"])))) \
                if n_test is not None and len(acc) and (churn > 0).any() else np.nan
            row["identical_repeats"] = int(cell_agree["all_runs_identical"].sum())
            for family, strength in strength_summaries():
                key = (dataset, classifier, cell)
                row[strength.sources] = float(fit_strength.loc[key, strength.column]) \
                    if source == family and fit_strength is not None and \
                    strength.column in fit_strength and key in fit_strength.index else np.nan
            rows.append(row)
            if source == "control":
                control_means = acc["mean"].to_numpy()
        if control_means is not None:
            row = {"dataset": str(dataset), "classifier": str(classifier), "source": "test set",
                   "level": "test set (between repeats)", "cell": "",
                   "repeats": len(control_means)}
            row["accuracy"], row["accuracy_low"], row["accuracy_high"] = (np.nan,) * 3
            _put(row, "accuracy_sd", sd_ci(control_means))
            rows.append(row)
    columns = ["dataset", "classifier", "source", "level", "cell", "repeats",
               *[f"{m}{s}" for m in MEASURES for s in ("", "_low", "_high")],
               "independent_flips", "identical_repeats",
               *(s.sources for _, s in strength_summaries())]
    out = pd.DataFrame(rows, columns=columns)
    out["source"] = pd.Categorical(out["source"], categories=source_names(), ordered=True)
    return out.sort_values(["dataset", "classifier", "source"], kind="stable",
                           ignore_index=True).astype({"source": str})


def no_effect(sources: pd.DataFrame) -> pd.DataFrame:
    """Rows of sources alone that left every run of every repeat identical."""
    single = alone(sources)
    return single[(single["repeats"] > 0)
                  & (single["identical_repeats"] == single["repeats"])]


def single_against_combined(sources: pd.DataFrame, summary: pd.DataFrame,
                            threshold: float = ALPHA, margin: float = EQUIVALENCE_RATIO, *,
                            values: PerRepeat | None = None) -> pd.DataFrame:
    """Each source alone against all sources combined in disagreement (Summers & Dinneen's
    check, module docstring), per dataset × classifier × level: the two means, the ratio
    alone / combined with its interval (the geometric mean of the per-repeat ratios), and the
    per-repeat difference alone − combined paired over repeats with its interval, the p of the
    claim it can make and its verdict at ``threshold``
    (:class:`~modelvar.findings.paired.Compared`): ``equivalent`` — the source alone moves
    predictions about as much as all together, within ``margin`` (S&D's finding) —,
    ``contradicted`` (less than all together), ``supported`` (more), or ``inconclusive``."""
    values = per_repeat(summary) if values is None else values
    rows = []
    for (dataset, classifier), part in sources.groupby(["dataset", "classifier"], sort=False):
        together = part[part["source"] == COMBINED]
        if together.empty:
            continue
        together = together.iloc[0]
        for _, single in alone(part).iterrows():
            c = between_cells(values, dataset, classifier, single["cell"], together["cell"],
                              "disagreement", "alone − combined", margin)
            if c is None:
                continue
            rows.append({"dataset": dataset, "classifier": classifier,
                         "source": single["source"], "level": single["level"],
                         "cell": single["cell"], "combined_cell": together["cell"],
                         "measure": "disagreement", "alone": single["disagreement"],
                         "combined": together["disagreement"], **c.row(),
                         "equivalence_ratio": margin,
                         "verdict": c.verdict(threshold)})
    return pd.DataFrame(rows, columns=COMBINED_COLUMNS)


COMBINED_COLUMNS = ["dataset", "classifier", "source", "level", "cell", "combined_cell",
                    "measure", "alone", "combined", "repeats", "difference", "difference_low",
                    "difference_high", "ratio", "ratio_low", "ratio_high", "equivalence_ratio",
                    "identical", "p_difference", "p_equivalent", "p_value", "effect", "room",
                    "margin_sds", "repeats_needed", "verdict"]


def study_sources(sources: pd.DataFrame) -> pd.DataFrame:
    """Per classifier, source and level: the mean over datasets of ``accuracy_sd`` and
    ``disagreement``, with t-intervals over datasets (module docstring)."""
    rows = []
    for (classifier, source, level), part in sources.groupby(
            ["classifier", "source", "level"], sort=False):
        row = {"classifier": classifier, "source": source, "level": level,
               "datasets": part["dataset"].nunique()}
        _put(row, "accuracy_sd", mean_ci(part["accuracy_sd"], (0.0, 1.0)))
        _put(row, "disagreement", mean_ci(part["disagreement"], (0.0, 1.0)))
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["order"] = out["source"].map({s: i for i, s in enumerate(source_names())})
    return out.sort_values(["classifier", "order"], kind="stable", ignore_index=True).drop(
        columns="order")
