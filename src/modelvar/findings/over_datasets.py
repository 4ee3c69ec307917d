"""Statements over datasets: claims about data of the kind, which repeats cannot make (they are
all drawn from one dataset), each dataset one observation.

For each headline question the page asks per dataset, one question over datasets:

* **classifiers compared** (:func:`study_comparison`): per pair of classifiers, source level
  and measure, the per-dataset mean differences a − b (each a mean over the dataset's repeats,
  :func:`modelvar.findings.comparison.classifier_comparison`);
* **the leading source** (:func:`study_leaders`): per classifier and measure, the source alone
  with the largest mean over datasets, against every other source alone by its per-dataset
  differences (an intersection-union test: its p is the largest of those comparisons');
* **the largest variance share** (:func:`study_shares`): per classifier and response, the factor
  with the largest mean share over datasets, against every other factor by its per-dataset
  share differences (intersection-union, as above).

**The test** is the one-sample t-test of the K per-dataset differences, d̄ √K / s_d against
t(K − 1), two-sided, with its t-interval (:class:`~modelvar.findings.paired.Paired`: the same
rules for differences the same everywhere and for identical ones). Each dataset's difference
is a mean over its repeats, so its within-dataset error is part of the spread over datasets:
the test needs no per-dataset standard errors, only that the datasets' differences scatter
about their mean without heavy tails. It was chosen over the Wilcoxon signed-rank test
(Demšar 2006), which the page used before: the exact two-sided Wilcoxon p has a floor of
2 / 2^K (0.031 at 6 datasets, 0.0078 at 8), so under the headline tier's family-wise control
(:mod:`~modelvar.findings.multiplicity`: a first claim faces 0.05 / m, m ≈ 50–250 hypotheses)
no statement over fewer than about 12 datasets could ever hold, whatever the data. The t-test's
p has no floor: a large and consistent effect holds from :data:`MIN_DATASETS` datasets (at 6,
a mean difference 3 SDs of the datasets' differences from 0 gives |t| = 7.3, p ≈ 7e-4). The
Wilcoxon p is still shown beside it (``p_wilcoxon``), as a check that needs no normality.

Statements over datasets are made from :data:`MIN_DATASETS` datasets on: below that the t
quantile a headline level asks for is too large for any real effect to reach (t(0.9995, 4) =
8.6 at 5 datasets against 6.9 at 6) and the spread over datasets is too few values to judge.
The page says "not tested (needs ≥ 6 datasets)" and states the per-dataset claims instead; from
6 datasets on it states both.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.findings.components import NOT_FACTORS
from modelvar.findings.paired import (
    ALPHA,
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_TESTED,
    SUPPORTED,
    Paired,
)
from modelvar.findings.sources import YARDSTICK, alone

#: the fewest datasets a statement over datasets is tested from (module docstring)
MIN_DATASETS = 6

STUDY_COLUMNS = ["source", "level", "classifier_a", "classifier_b", "measure", "datasets",
                 "a_lower", "difference", "difference_low", "difference_high", "identical",
                 "p_value", "p_wilcoxon", "effect", "verdict"]
LEADER_COLUMNS = ["classifier", "measure", "leader", "runner_up", "against", "datasets",
                  "leader_value", "runner_up_value", "margin", "margin_low", "margin_high",
                  "ahead", "p_lead", "p_value", "effect", "verdict"]
SHARE_COLUMNS = ["runner_up", "lead_against", "lead_datasets", "lead_margin",
                 "lead_margin_low", "lead_margin_high", "lead_p", "lead_effect"]


def over(differences) -> Paired:
    """The per-dataset differences as a :class:`~modelvar.findings.paired.Paired` (its test
    is the module docstring's), with no test below :data:`MIN_DATASETS`."""
    d = np.asarray(differences, dtype=float)
    return Paired.of("over datasets", d[np.isfinite(d)])


def p_over(paired: Paired) -> float:
    """The claim's p-value over datasets: the t-test's, NaN below :data:`MIN_DATASETS`."""
    return paired.p_value if paired.n >= MIN_DATASETS else np.nan


def wilcoxon_p(differences) -> float:
    """The two-sided Wilcoxon signed-rank p of the differences (shown beside the t-test's); NaN
    below :data:`MIN_DATASETS` or where every difference is 0."""
    d = np.asarray(differences, dtype=float)
    d = d[np.isfinite(d)]
    if len(d) < MIN_DATASETS or not np.any(d != 0):
        return np.nan
    from scipy.stats import wilcoxon

    return float(wilcoxon(d, alternative="two-sided").pvalue)


def study_comparison(comparison: pd.DataFrame, threshold: float = ALPHA) -> pd.DataFrame:
    """Classifiers compared over datasets (module docstring): per level, pair and measure, the
    mean of the per-dataset differences with its t-interval, the t-test's p and the verdict at
    ``threshold`` from :data:`MIN_DATASETS` datasets (else ``not tested``), the Wilcoxon p, and
    on how many datasets a was below b."""
    rows = []
    keys = ["source", "level", "classifier_a", "classifier_b", "measure"]
    for key, part in comparison[comparison["source"] != YARDSTICK].groupby(keys, sort=False):
        d = part["difference"].to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        if not len(d):
            continue
        mean = over(d)
        p = p_over(mean)
        tested = len(d) >= MIN_DATASETS
        verdict = (NOT_TESTED if not tested else
                   INCONCLUSIVE if not np.isfinite(p) or p > threshold else
                   SUPPORTED if mean.mean > 0 else CONTRADICTED)
        rows.append({**dict(zip(keys, key, strict=True)), "datasets": len(d),
                     "a_lower": int((d < 0).sum()), "difference": mean.mean,
                     "difference_low": mean.low if tested else np.nan,
                     "difference_high": mean.high if tested else np.nan,
                     "identical": mean.identical, "p_value": p,
                     "p_wilcoxon": wilcoxon_p(d), "effect": mean.effect if tested else np.nan,
                     "verdict": verdict})
    return pd.DataFrame(rows, columns=STUDY_COLUMNS)


def study_leaders(sources: pd.DataFrame) -> pd.DataFrame:
    """The leading source over datasets (module docstring), per classifier and measure
    (``accuracy_sd``, ``disagreement``): the source alone with the largest mean over the
    datasets, the runner-up, the leader's margin over it (mean of the per-dataset differences,
    with its t-interval), ``p_lead`` (the largest p of the leader against every other source
    alone, over the datasets both have; NaN where one has fewer than :data:`MIN_DATASETS`) and
    whether the leader is ahead of every other. Levels a dataset calls too weak to judge are
    left out on that dataset. No row below :data:`MIN_DATASETS` datasets."""
    rows = []
    single = alone(sources)
    if single["dataset"].nunique() < MIN_DATASETS:
        return pd.DataFrame(columns=LEADER_COLUMNS)
    if "weak" in single:
        single = single[~single["weak"].fillna(False).astype(bool)]
    for classifier, part in single.groupby("classifier", sort=False):
        if part["dataset"].nunique() < MIN_DATASETS:
            continue
        for measure in ("accuracy_sd", "disagreement"):
            values = part.pivot_table(index="dataset", columns="level", values=measure,
                                      aggfunc="first")
            values = values.loc[:, values.notna().sum() >= MIN_DATASETS]
            if values.shape[1] < 2:
                continue
            ranked = values.mean().sort_values(ascending=False, kind="stable")
            lead = ranked.index[0]
            compared = [over(values[lead] - values[other]) for other in ranked.index[1:]]
            ps = [p_over(c) for c in compared]
            top = compared[0]
            effects = [c.effect for c in compared]
            rows.append({"classifier": classifier, "measure": measure, "leader": lead,
                         "runner_up": ranked.index[1], "against": len(compared),
                         "datasets": int(values[lead].notna().sum()),
                         "leader_value": float(ranked.iloc[0]),
                         "runner_up_value": float(ranked.iloc[1]), "margin": top.mean,
                         "margin_low": top.low, "margin_high": top.high,
                         "ahead": all(c.mean > 0 for c in compared),
                         "p_lead": max(ps) if np.isfinite(ps).all() else np.nan,
                         "p_value": max(ps) if np.isfinite(ps).all() else np.nan,
                         "effect": float(min(effects)) if np.isfinite(effects).all()
                         else np.nan, "verdict": INCONCLUSIVE})
    return pd.DataFrame(rows, columns=LEADER_COLUMNS)


def study_shares(components: pd.DataFrame, study: pd.DataFrame) -> pd.DataFrame:
    """``study`` (the mean shares over datasets, :func:`~modelvar.findings.components.
    study_components`) with the largest share over datasets tested (module docstring): on the
    leading factor's row of each classifier and response, the runner-up, the number of other
    factors (``lead_against``), the margin over the runner-up (mean of the per-dataset share
    differences, with its t-interval), ``lead_p`` (the largest p against every other factor;
    NaN below :data:`MIN_DATASETS` datasets) and ``lead_effect``; ``lead_held`` is set by the
    page's control."""
    out = study.copy()
    for column in SHARE_COLUMNS:
        out[column] = np.nan if column != "runner_up" else None
    out["lead_against"] = 0
    out["lead_held"] = False
    if components.empty or out.empty or components["dataset"].nunique() < MIN_DATASETS:
        return out
    factors = components[~components["component"].isin(NOT_FACTORS)]
    for (classifier, response), part in factors.groupby(["classifier", "response"],
                                                        sort=False):
        values = part.pivot_table(index="dataset", columns="component",
                                  values="share_estimate", aggfunc="first")
        values = values.loc[:, values.notna().sum() >= MIN_DATASETS]
        if values.shape[1] < 2:
            continue
        ranked = values.mean().sort_values(ascending=False, kind="stable")
        lead = ranked.index[0]
        compared = [over(values[lead] - values[other]) for other in ranked.index[1:]]
        ps = [p_over(c) for c in compared]
        effects = [c.effect for c in compared]
        where = out.index[(out["classifier"] == classifier) & (out["response"] == response)
                          & (out["component"] == lead)]
        if not len(where):
            continue
        ahead = all(c.mean > 0 for c in compared)
        out.loc[where, "runner_up"] = ranked.index[1]
        out.loc[where, "lead_against"] = len(compared)
        out.loc[where, "lead_datasets"] = int(values[lead].notna().sum())
        out.loc[where, ["lead_margin", "lead_margin_low", "lead_margin_high"]] = \
            [compared[0].mean, compared[0].low, compared[0].high]
        out.loc[where, "lead_p"] = max(ps) if np.isfinite(ps).all() and ahead else \
            (1.0 if np.isfinite(ps).all() else np.nan)
        out.loc[where, "lead_effect"] = float(min(effects)) if np.isfinite(effects).all() \
            else np.nan
    return out
