"""Variance components over the factorial grid: each source's share of the variance of run
accuracy, and of per-repeat agreement, with an uncertainty.

**Model.** For one dataset × classifier and one response y (run accuracy, one value per run; or
the repeat's mean percent agreement over its run pairs, one value per cell × repeat), an
ordinary least-squares model with the main effects of every family that varies in the grid and
of the repeat (the test set and training pool drawn for it), as categorical factors, fitted
with statsmodels::

    y = μ + data + categorical + hparam + downsample + model seed + repeat + ε

A factor's sum of squares is type II: the residual SS of the model without it minus that of the
full model (for the balanced grid, the between-level SS n Σ_l (ȳ_l − ȳ)²). What the main
effects do not explain is split, for run accuracy, into *interactions* (between the cells'
and repeats' means and the main effects) and *runs* — the variation between the runs of one
cell and repeat: the model seed and the perturbations' own random draws; for per-repeat
agreement (no replicate) it is one *interactions and residual* component. Shares are
SS / total SS (η², Cohen 1973), the usual descriptive decomposition of a balanced design; they
sum to 1 for a complete grid.

**Uncertainty.** A cluster bootstrap over repeats (the units that are sampled: Field & Welsh
2007): B resamples of the repeats with replacement, each drawn repeat a new level of the repeat
factor, the shares recomputed; the 2.5 % and 97.5 % percentiles are the interval. R repeats
give at most C(2R − 1, R) distinct resamples (10 for R = 3, 126 for R = 5): below
:data:`MIN_CLUSTERS` repeats the percentiles are too coarse to be an interval, so there is none.
The bootstrap's random draws come from the named stream ``variance-components`` of the study's
root seed, so the intervals are reproducible.

**Ranking.** Which factor explains the *largest* share is a separate claim: the leader's margin
over the runner-up (share difference) is recomputed in every resample, and its two-sided
bootstrap p-value is 2 · (min(#{Δ* ≤ 0}, #{Δ* ≥ 0}) + 1) / (B + 1) (capped at 1; Davison &
Hinkley 1997, §4.4). The Findings name a leader only where that p-value holds under the page's
multiplicity control, and rank nothing below :data:`MIN_CLUSTERS` repeats.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.study import families

REPEAT = "repeat (test set)"
INTERACTIONS, RUNS, REST = "interactions", "runs (seed, draws)", "interactions and residual"
#: the fewest repeats (clusters) a bootstrap interval or ranking is drawn from (docstring)
MIN_CLUSTERS = 8


def _component_name(component: str) -> str:
    """How a component is named in the tables: a family by its title."""
    return families.family(component).title if component in families.names() else component


def _dummies(codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Treatment coding (first level dropped) of integer codes."""
    out = np.zeros((len(codes), max(n_levels - 1, 0)))
    rows = np.flatnonzero(codes > 0)
    out[rows, codes[rows] - 1] = 1.0
    return out


def _ssr(y: np.ndarray, blocks: list[np.ndarray], weights: np.ndarray) -> float:
    """Weighted residual sum of squares of the least-squares fit of y on an intercept and the
    blocks (statsmodels' WLS)."""
    from statsmodels.regression.linear_model import WLS

    X = np.column_stack([np.ones(len(y)), *blocks]) if blocks else np.ones((len(y), 1))
    return float(WLS(y, X, weights=weights).fit(method="qr").ssr)


def _shares(y: np.ndarray, codes: dict[str, np.ndarray], levels: dict[str, int],
            groups: np.ndarray | None) -> dict[str, float]:
    """SS share of every factor (type II), interactions and the residual (module docstring).

    With runs (``groups``: each row's cell × repeat), the fits use the groups' means weighted
    by their sizes: the factors are constant within a group, so the coefficients are those of
    the fit to every run, and its residual SS is the weighted one plus the within-group SS."""
    total = float(((y - y.mean()) ** 2).sum())
    if total == 0:
        return {}
    within = 0.0
    weights = np.ones(len(y))
    if groups is not None:
        index, first, counts = np.unique(groups, return_index=True, return_counts=True)
        inverse = np.searchsorted(index, groups)
        sums = np.bincount(inverse, weights=y)
        means = sums / counts
        within = float(((y - means[inverse]) ** 2).sum())
        y, weights = means, counts.astype(float)
        codes = {f: c[first] for f, c in codes.items()}
    blocks = {f: _dummies(c, levels[f]) for f, c in codes.items()}
    full = _ssr(y, list(blocks.values()), weights) + within
    out = {f: (_ssr(y, [b for g, b in blocks.items() if g != f], weights) + within - full)
           / total for f in blocks}
    if groups is not None:
        out[INTERACTIONS] = max(full - within, 0.0) / total
        out[RUNS] = within / total
    else:
        out[REST] = full / total
    return out


def variance_components(frame: pd.DataFrame, response: str, *, replicated: bool,
                        n_boot: int = 200, rng: np.random.Generator | None = None,
                        level: float = 0.95) -> pd.DataFrame:
    """Shares of ``response`` (a column of ``frame``, with the family level columns and
    ``repeat``) by factor, with bootstrap intervals over repeats. ``replicated``: several rows
    (runs) per cell × repeat."""
    rng = rng or np.random.default_rng(0)
    factors = [f for f in families.names() if f in frame and frame[f].nunique() > 1]
    frame = frame.dropna(subset=[response]).reset_index(drop=True)
    if frame.empty or frame["repeat"].nunique() < 2:
        return pd.DataFrame()
    y = frame[response].to_numpy(float)
    codes = {f: pd.factorize(frame[f], sort=True)[0] for f in factors}
    levels = {f: int(codes[f].max()) + 1 for f in factors}
    repeats = frame["repeat"].to_numpy()
    repeat_ids = np.unique(repeats)
    cells = frame[factors].astype(str).agg("|".join, axis=1).to_numpy() if factors else \
        np.zeros(len(frame), dtype=str)

    def shares_of(rows: np.ndarray, repeat_codes: np.ndarray) -> dict[str, float]:
        c = {f: v[rows] for f, v in codes.items()}
        c[REPEAT] = repeat_codes
        lv = {**levels, REPEAT: int(repeat_codes.max()) + 1}
        groups = (np.char.add(cells[rows].astype(str), repeat_codes.astype(str))
                  if replicated else None)
        return _shares(y[rows], c, lv, groups)

    point = shares_of(np.arange(len(y)), np.searchsorted(repeat_ids, repeats))
    by_repeat = {r: np.flatnonzero(repeats == r) for r in repeat_ids}
    boots: dict[str, list[float]] = {k: [] for k in point}
    for _ in range(n_boot if len(repeat_ids) >= MIN_CLUSTERS else 0):
        drawn = rng.choice(repeat_ids, size=len(repeat_ids), replace=True)
        rows = np.concatenate([by_repeat[r] for r in drawn])
        repeat_codes = np.concatenate([np.full(len(by_repeat[r]), i)
                                       for i, r in enumerate(drawn)])
        for k, v in shares_of(rows, repeat_codes).items():
            boots[k].append(v)
    q = (0.5 - level / 2, 0.5 + level / 2)
    enough = len(repeat_ids) >= MIN_CLUSTERS
    # the leader among the factors (not the rest) and its margin over the runner-up
    effects = sorted((k for k in point if k not in (INTERACTIONS, RUNS, REST)),
                     key=lambda k: point[k], reverse=True)
    lead = {}
    if len(effects) >= 2:
        first, second = effects[:2]
        margin = np.asarray(boots[first]) - np.asarray(boots[second])
        lead[first] = {"runner_up": _component_name(second),
                       "lead_margin": point[first] - point[second]}
        if enough and len(margin):
            below, above = int((margin <= 0).sum()), int((margin >= 0).sum())
            low, high = np.quantile(margin, q)
            lead[first].update(lead_margin_low=float(low), lead_margin_high=float(high),
                               lead_p=min(1.0, 2 * (min(below, above) + 1) / (len(margin) + 1)))
    rows_out = []
    for component, share in point.items():
        low, high = np.quantile(boots[component], q) if boots[component] and enough else \
            (np.nan,) * 2
        rows_out.append({"component": _component_name(component),
                         "levels": levels.get(
            component, len(repeat_ids) if component == REPEAT else np.nan),
            "share": share, "share_low": float(low), "share_high": float(high),
            "runner_up": None, "lead_margin": np.nan, "lead_margin_low": np.nan,
            "lead_margin_high": np.nan, "lead_p": np.nan, **lead.get(component, {})})
    out = pd.DataFrame(rows_out)
    out.insert(0, "response", response)
    out["rows"], out["repeats"], out["boot"] = len(y), len(repeat_ids), n_boot
    return out


def grid_components(runs: pd.DataFrame, summary: pd.DataFrame,
                    roles: dict[str, dict[str, tuple]], *, root_seed: int,
                    n_boot: int = 200) -> pd.DataFrame:
    """Variance components of run accuracy (runs table) and per-repeat percent agreement
    (summary, full test set) over the factorial cells of every dataset × classifier."""
    from modelvar.seeding import stream

    parts = []
    pa = summary[(summary["subset"] == "all") & (summary["metric"] == "pa")]
    for (dataset, classifier), fits in runs.groupby(["dataset", "classifier"], sort=False,
                                                    observed=True):
        grid = {c for c, r in roles.get(str(dataset), {}).items() if "factorial" in r}
        rng = stream(root_seed, "variance-components", dataset=str(dataset),
                     classifier=str(classifier)).generator()
        acc = fits[fits["cell"].isin(grid)]
        agree = pa[(pa["dataset"] == dataset) & (pa["classifier"] == classifier)
                   & pa["cell"].isin(grid)]
        for frame, response, replicated in ((acc, "accuracy", True),
                                            (agree.rename(columns={"mean": "pa"}), "pa", False)):
            table = variance_components(frame, response, replicated=replicated,
                                        n_boot=n_boot, rng=rng)
            if not table.empty:
                table.insert(0, "classifier", str(classifier))
                table.insert(0, "dataset", str(dataset))
                parts.append(table)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def study_components(components: pd.DataFrame) -> pd.DataFrame:
    """Per classifier, response and component: the mean share over datasets with a t-interval
    over datasets."""
    from modelvar.findings.sources import mean_ci

    rows = []
    for (classifier, response, component), part in components.groupby(
            ["classifier", "response", "component"], sort=False):
        mean, low, high = mean_ci(part["share"], (0.0, 1.0))
        rows.append({"classifier": classifier, "response": response, "component": component,
                     "datasets": part["dataset"].nunique(), "share": mean, "share_low": low,
                     "share_high": high})
    return pd.DataFrame(rows)
