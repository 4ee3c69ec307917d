"""Classifiers compared, per source of variance, and each dataset × classifier's leading source.

**Classifiers compared.** For a pair of classifiers (a, b) of one dataset, each source's level
alone (and the control), and each measure — ``disagreement`` (mean pairwise churn of a repeat's
runs) and ``accuracy_sd`` (their within-repeat accuracy SD) — the per-repeat values are **paired
over repeats**: repeat r draws the same test set and training pool for every classifier (the
split's seed stream names the dataset and repeat, never the classifier), so the difference
removes what the repeat contributes. :class:`modelvar.findings.paired.Compared` gives the
difference a − b with its t-interval, the ratio a / b with its interval, and the verdict: told
apart (``supported``: a above b; ``contradicted``: below), ``equivalent`` (the ratio within the
equivalence margin), or ``inconclusive``.

**Over datasets** (:func:`modelvar.findings.over_datasets.study_comparison`): per pair,
level and measure, each dataset one observation (its mean difference over repeats), tested by a
t-test over datasets from :data:`~modelvar.findings.over_datasets.MIN_DATASETS` datasets on.
Negative differences mean *a* is the more reproducible.

The test-set yardstick (between-repeat SD of the control's accuracy) is one number per dataset
and classifier, not a per-repeat value: it is shown, never tested.

**The leading source** (:func:`leader_margins`), per dataset × classifier × measure: the source
level alone with the largest mean (the *leader*) is said to move the measure most only when it
is told apart from **every** other source level alone (an intersection-union test: its p is the
largest of the leader's comparisons' p-values); when the leader and the runner-up are
practically equivalent (their ratio within the margin) the page says they moved it about
equally; otherwise the source is not ranked, and the page names the sources it was not told
apart from (each comparison's p above the level the claim faces). Levels the page calls too
weak to judge their source (a data level that changed fewer than
``perturbation.warn_changed_below`` of the cells) are left out of the ranking and named.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from modelvar.findings.over_datasets import MIN_DATASETS
from modelvar.findings.paired import (
    ALPHA,
    CONTRADICTED,
    EQUIVALENCE_RATIO,
    EQUIVALENT,
    INCONCLUSIVE,
    MIN_FOR_INTERVAL,
    NOT_TESTED,
    SUPPORTED,
    Compared,
    PerRepeat,
    between_cells,
    per_repeat,
    series,
    signed_ci,
)
from modelvar.findings.sources import CONTROL, YARDSTICK, alone

MEASURES = {"disagreement": "disagreement", "accuracy_sd": "sd"}
COLUMNS = ["dataset", "source", "level", "classifier_a", "classifier_b", "cell_a", "cell_b",
           "measure", "repeats",
           "difference", "difference_low", "difference_high", "ratio", "ratio_low",
           "ratio_high", "identical", "p_difference", "p_equivalent", "p_value", "effect",
           "room", "margin_sds", "repeats_needed", "verdict"]


def _pairs(classifiers) -> list[tuple[str, str]]:
    return list(itertools.combinations(sorted(classifiers), 2))


def classifier_comparison(sources: pd.DataFrame, summary: pd.DataFrame,
                          threshold: float = ALPHA, margin: float = EQUIVALENCE_RATIO, *,
                          values: PerRepeat | None = None) -> pd.DataFrame:
    """Per dataset, one-at-a-time level (and the control), pair of classifiers and measure:
    a against b paired over repeats (module docstring) with its verdict at ``threshold``
    (the page's control gives it at its own, :mod:`modelvar.findings.judging`). ``values``: the
    summary's :func:`~modelvar.findings.paired.per_repeat` values, where already at hand."""
    values = per_repeat(summary) if values is None else values
    rows = []
    compared = sources[sources["source"] != YARDSTICK]
    for (dataset, level), part in compared.groupby(["dataset", "level"], sort=False):
        cells = dict(zip(part["classifier"], part["cell"], strict=True))
        source = part["source"].iloc[0]
        for a, b in _pairs(cells):
            for measure, column in MEASURES.items():
                va = series(values, dataset, a, cells[a], column)
                vb = series(values, dataset, b, cells[b], column)
                if va.empty or vb.empty:
                    continue
                c = Compared.between(f"{a} − {b}", va, vb, margin)
                rows.append({"dataset": dataset, "source": source, "level": level,
                             "classifier_a": a, "classifier_b": b, "cell_a": cells[a],
                             "cell_b": cells[b], "measure": measure,
                             **c.row(), "verdict": c.verdict(threshold)})
    yard = sources[sources["source"] == YARDSTICK]
    for dataset, part in yard.groupby("dataset", sort=False):
        sd = dict(zip(part["classifier"], part["accuracy_sd"], strict=True))
        for a, b in _pairs(sd):
            rows.append({"dataset": dataset, "source": YARDSTICK, "level": YARDSTICK,
                         "classifier_a": a, "classifier_b": b, "cell_a": "", "cell_b": "",
                         "measure": "accuracy_sd",
                         "repeats": int(part["repeats"].iloc[0]),
                         "difference": sd[a] - sd[b], "difference_low": np.nan,
                         "difference_high": np.nan, "ratio": np.nan, "ratio_low": np.nan,
                         "ratio_high": np.nan, "identical": False, "p_difference": np.nan,
                         "p_equivalent": np.nan, "p_value": np.nan, "effect": np.nan,
                         "room": np.nan, "margin_sds": np.nan, "repeats_needed": np.nan,
                         "verdict": NOT_TESTED})
    return pd.DataFrame(rows, columns=COLUMNS)


def _interval(row, count: str = "repeats") -> str:
    """The difference with its interval, or why it has none."""
    n = row["datasets"] if count == "datasets" else row["repeats"]
    if not np.isfinite(row["difference_low"]):
        why = f"too few {count} for an interval" if n < MIN_FOR_INTERVAL else \
            f"the same in every {count[:-1]}: no interval"
        return f"{signed_ci(row['difference'], np.nan, np.nan)} ({why})"
    return signed_ci(row["difference"], row["difference_low"], row["difference_high"])


WHAT = {"disagreement": ("predictions changed less", "disagreement", "predictions changed"),
        "accuracy_sd": ("accuracy varied less", "accuracy SD", "accuracy varied")}


def comparison_sentences(comparison: pd.DataFrame, study: pd.DataFrame) -> list[str]:
    """Which classifier was the more reproducible under each source, for the comparisons told
    apart or practically equivalent under the page's control, with the numbers: over datasets
    when there are :data:`MIN_DATASETS` or more ("A's predictions changed less than B's under
    data rel 0.2 over the 8 datasets (mean difference in disagreement A − B: −0.030 [−0.050,
    −0.010]; t-test over datasets p = 0.0004; lower on 7 of 8)"), else a sentence saying that
    the comparison over datasets was not tested and why; then per dataset (exploratory beside
    a statement over datasets); then how many comparisons were inconclusive."""
    out = []
    datasets = comparison["dataset"].nunique()
    tested = datasets >= MIN_DATASETS

    def shown(table: pd.DataFrame) -> pd.DataFrame:
        return table[(table["source"] != CONTROL) & (table["source"] != YARDSTICK)
                     & np.isfinite(table["difference"])]

    def ordered(held: pd.DataFrame) -> pd.DataFrame:
        return held[held["verdict"].isin([SUPPORTED, CONTRADICTED])].assign(
            better=lambda t: np.where(t["difference"] < 0, t["classifier_a"],
                                      t["classifier_b"]),
            worse=lambda t: np.where(t["difference"] < 0, t["classifier_b"],
                                     t["classifier_a"]))

    per_dataset = shown(comparison)
    if datasets > 1 and not tested:
        out.append(f"Classifiers over datasets: not tested (a statement over datasets needs ≥ "
                   f"{MIN_DATASETS} datasets, this study has {datasets}); per dataset "
                   "instead.")
    rest = 0
    if tested:
        over = shown(study)
        for _, row in ordered(over).iterrows():
            a, b, better = row["classifier_a"], row["classifier_b"], row["better"]
            less, measure, _ = WHAT[row["measure"]]
            n = row["datasets"]
            count = row["a_lower"] if better == a else n - row["a_lower"]
            out.append(f"{better}'s {less} than {row['worse']}'s under {_short(row['level'])} "
                       f"over the {n} datasets (mean difference in {measure} {a} − {b}: "
                       f"{_interval(row, 'datasets')}; t-test over datasets p = "
                       f"{row['p_value']:.2g}; lower on {count} of {n}).")
        rest += int((~over["verdict"].isin([SUPPORTED, CONTRADICTED])).sum())
    apart = ordered(per_dataset)
    scope = " (exploratory, beside the statements over datasets)" if tested else ""
    for (dataset, better, worse, measure), part in apart.groupby(
            ["dataset", "better", "worse", "measure"], sort=False):
        less, name, _ = WHAT[measure]
        a, b = part["classifier_a"].iloc[0], part["classifier_b"].iloc[0]
        levels = [_short(level) for level in part["level"]]
        numbers = ", ".join(_interval(row) for _, row in part.iterrows())
        out.append(f"On {dataset}, {better}'s {less} than {worse}'s under "
                   f"{_names(levels)} (difference in {name} {a} − {b} over "
                   f"{part['repeats'].max()} repeats: {numbers}){scope}.")
    equal = per_dataset[per_dataset["verdict"] == EQUIVALENT]
    for (level, a, b, measure), part in equal.groupby(
            ["level", "classifier_a", "classifier_b", "measure"], sort=False):
        _, name, moved = WHAT[measure]
        ratios = "; ".join(f"{_ratio(row)} on {row['dataset']}" for _, row in part.iterrows())
        out.append(f"{a}'s and {b}'s {moved} about equally under {_short(level)} (ratio {a} / "
                   f"{b} of the {name}: {ratios}; each within the equivalence margin){scope}.")
    rest += int((~per_dataset["verdict"].isin([SUPPORTED, CONTRADICTED, EQUIVALENT])).sum())
    if rest > 0:
        out.append(f"{rest} other comparison{'s' * (rest != 1)} of classifiers "
                   f"{'were' if rest != 1 else 'was'} inconclusive (the table below).")
    return out


def _short(level: str) -> str:
    """A level's name in a sentence: the all-combined cell without its list of levels."""
    return level.split(":")[0]


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ratio(row) -> str:
    from modelvar.findings.paired import fmt

    if np.isfinite(row["ratio_low"]):
        return f"{fmt(row['ratio'])} [{fmt(row['ratio_low'])}, {fmt(row['ratio_high'])}]"
    return fmt(row["ratio"])


LEADER_MEASURES = {"accuracy_sd": "sd", "disagreement": "disagreement"}
MARGIN_COLUMNS = ["dataset", "classifier", "measure", "leader", "runner_up", "against",
                  "left_out", "repeats", "margin", "margin_low", "margin_high", "ratio",
                  "ratio_low", "ratio_high", "equivalence_ratio", "ahead", "others",
                  "p_others", "p_lead", "p_equivalent", "p_value", "effect", "room",
                  "margin_sds", "repeats_needed", "verdict"]


def leader_verdict(p_lead: float, p_equivalent: float, ahead: bool,
                   threshold: float = ALPHA) -> str:
    """``equivalent`` where leader and runner-up are within the margin at ``threshold``, else
    ``supported`` where the leader is ahead of every other level and told apart from each,
    else ``inconclusive`` (module docstring)."""
    if np.isfinite(p_equivalent) and p_equivalent <= threshold:
        return EQUIVALENT
    if ahead and np.isfinite(p_lead) and p_lead <= threshold:
        return SUPPORTED
    return INCONCLUSIVE


def leader_margins(sources: pd.DataFrame, summary: pd.DataFrame,
                   threshold: float = ALPHA, margin: float = EQUIVALENCE_RATIO, *,
                   values: PerRepeat | None = None) -> pd.DataFrame:
    """Per dataset × classifier × measure (``accuracy_sd``, ``disagreement``), the leading
    source (module docstring): the leader, the runner-up, how many other levels it was
    compared with (``against``) and which were left out as too weak (``left_out``), its margin
    over the runner-up paired over repeats with its interval and the ratio leader / runner-up
    with its interval, ``p_lead`` (the largest p of the leader against every other level),
    ``p_equivalent`` (leader and runner-up within the margin), ``p_value`` (the smaller),
    ``others`` and ``p_others`` (every other level, by its value, and the p of the leader
    against it: which the leader is not told apart from), the standardised sizes its power
    follows from (``effect``: the smallest of its comparisons'; ``room``: the runner-up
    ratio's room to the margin; ``repeats_needed`` is the page's, at the level the claim
    faces) and the verdict at ``threshold``: ``supported`` (told apart
    from every other), ``equivalent`` (leader and runner-up about equal) or ``inconclusive``
    (not ranked)."""
    values = per_repeat(summary) if values is None else values
    rows = []
    for (dataset, classifier), part in alone(sources).groupby(["dataset", "classifier"],
                                                              sort=False):
        weak = part["weak"].fillna(False).astype(bool) if "weak" in part else \
            pd.Series(False, index=part.index)
        judged, left_out = part[~weak], list(part.loc[weak, "level"])
        for measure, column in LEADER_MEASURES.items():
            ranked = judged.dropna(subset=[measure]).sort_values(measure, ascending=False,
                                                                  kind="stable")
            if len(ranked) < 2:
                continue
            lead = ranked.iloc[0]
            compared = [between_cells(values, dataset, classifier, lead["cell"],
                                      other["cell"], column, "margin", margin)
                        for _, other in ranked.iloc[1:].iterrows()]
            if any(c is None for c in compared):
                continue
            top = compared[0]
            ps = [c.difference.p_value for c in compared]
            p_lead = max(ps) if all(np.isfinite(ps)) else np.nan
            ahead = all(c.difference.mean > 0 for c in compared)
            claim = [p for p in (p_lead, top.p_equivalent) if np.isfinite(p)]
            effects = [c.difference.effect for c in compared]
            effect = float(min(effects)) if np.isfinite(effects).all() else np.nan
            rows.append({"dataset": dataset, "classifier": classifier, "measure": measure,
                         "leader": lead["level"], "runner_up": ranked.iloc[1]["level"],
                         "against": len(compared), "left_out": "; ".join(left_out),
                         "repeats": top.difference.n, "margin": top.difference.mean,
                         "margin_low": top.difference.low, "margin_high": top.difference.high,
                         "ratio": top.ratio, "ratio_low": top.ratio_low,
                         "ratio_high": top.ratio_high, "equivalence_ratio": margin,
                         "ahead": ahead, "others": list(ranked["level"].iloc[1:]),
                         "p_others": [float(p) for p in ps], "p_lead": p_lead,
                         "p_equivalent": top.p_equivalent,
                         "p_value": min(claim) if claim else np.nan, "effect": effect,
                         "room": top.room, "margin_sds": top.margin_sds,
                         "repeats_needed": np.nan,
                         "verdict": leader_verdict(p_lead, top.p_equivalent, ahead,
                                                   threshold)})
    return pd.DataFrame(rows, columns=MARGIN_COLUMNS)
