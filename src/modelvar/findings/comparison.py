"""Classifiers compared, per source of variance: which one is more reproducible, by how much.

For a pair of classifiers (a, b) of one dataset, each source's level alone (and the control),
and each measure — ``disagreement`` (mean pairwise churn of a repeat's runs) and ``accuracy_sd``
(their within-repeat accuracy SD) — the per-repeat difference m_a,r − m_b,r is **paired over
repeats**: repeat r draws the same test set and training pool for every classifier (the split's
seed stream names the dataset and repeat, never the classifier), so the difference removes what
the repeat contributes. Its mean over the R repeats has the 95 % Student t-interval
d̄ ± t(0.975, R − 1) · s_d / √R and a p-value (:class:`modelvar.findings.paired.Paired`: from 3
repeats on, never an interval of width 0).

Over datasets (:func:`study_comparison`), per pair, level and measure: the mean of the
datasets' mean differences with a t-interval and p-value over datasets (each dataset one
observation, from 3 datasets on), and on how many datasets a's mean was below b's. Negative
differences mean *a* is the more reproducible (fewer changed predictions, a narrower accuracy
distribution). A difference is told apart (``verdict`` not ``inconclusive``) when its p-value
holds under the page's multiplicity control (``threshold``).

The test-set yardstick (between-repeat SD of the control's accuracy) is one number per dataset
and classifier, not a per-repeat value: it is compared over datasets only.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from modelvar.findings.paired import (
    ALPHA,
    INCONCLUSIVE,
    MIN_FOR_INTERVAL,
    Paired,
    between_cells,
    per_repeat,
)
from modelvar.findings.sources import CONTROL, YARDSTICK, alone

MEASURES = {"disagreement": "disagreement", "accuracy_sd": "sd"}
COLUMNS = ["dataset", "source", "level", "classifier_a", "classifier_b", "measure", "repeats",
           "difference", "difference_low", "difference_high", "p_value", "verdict"]
STUDY_COLUMNS = ["source", "level", "classifier_a", "classifier_b", "measure", "datasets",
                 "a_lower", "difference", "difference_low", "difference_high", "p_value",
                 "verdict"]


def _pairs(classifiers) -> list[tuple[str, str]]:
    return list(itertools.combinations(sorted(classifiers), 2))


def classifier_comparison(sources: pd.DataFrame, summary: pd.DataFrame,
                          threshold: float = ALPHA) -> pd.DataFrame:
    """Per dataset, one-at-a-time level (and the control), pair of classifiers and measure:
    the paired mean difference a − b over repeats with its 95 % interval, p-value and verdict
    at ``threshold`` (module docstring)."""
    values = per_repeat(summary)
    rows = []
    compared = sources[sources["source"] != YARDSTICK]
    for (dataset, level), part in compared.groupby(["dataset", "level"], sort=False):
        cells = dict(zip(part["classifier"], part["cell"], strict=True))
        source = part["source"].iloc[0]
        for a, b in _pairs(cells):
            for measure, column in MEASURES.items():
                try:
                    va = values.loc[(dataset, a, cells[a]), column]
                    vb = values.loc[(dataset, b, cells[b]), column]
                except KeyError:
                    continue
                p = Paired.between(f"{a} − {b}", va, vb)
                rows.append({"dataset": dataset, "source": source, "level": level,
                             "classifier_a": a, "classifier_b": b, "measure": measure,
                             "repeats": p.n, "difference": p.mean,
                             "difference_low": p.low, "difference_high": p.high,
                             "p_value": p.p_value, "verdict": p.verdict(threshold)})
    yard = sources[sources["source"] == YARDSTICK]
    for dataset, part in yard.groupby("dataset", sort=False):
        sd = dict(zip(part["classifier"], part["accuracy_sd"], strict=True))
        for a, b in _pairs(sd):
            rows.append({"dataset": dataset, "source": YARDSTICK, "level": YARDSTICK,
                         "classifier_a": a, "classifier_b": b, "measure": "accuracy_sd",
                         "repeats": int(part["repeats"].iloc[0]),
                         "difference": sd[a] - sd[b], "difference_low": np.nan,
                         "difference_high": np.nan, "p_value": np.nan,
                         "verdict": INCONCLUSIVE})
    return pd.DataFrame(rows, columns=COLUMNS)


def study_comparison(comparison: pd.DataFrame, threshold: float = ALPHA) -> pd.DataFrame:
    """Over datasets (module docstring): per level, pair and measure, the mean difference with
    a t-interval and p-value over datasets, its verdict at ``threshold``, and the datasets on
    which a was below b."""
    rows = []
    keys = ["source", "level", "classifier_a", "classifier_b", "measure"]
    for key, part in comparison.groupby(keys, sort=False):
        d = part["difference"].to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        if not len(d):
            continue
        p = Paired.of("over datasets", d)
        rows.append({**dict(zip(keys, key, strict=True)), "datasets": len(d),
                     "a_lower": int((d < 0).sum()), "difference": p.mean,
                     "difference_low": p.low, "difference_high": p.high,
                     "p_value": p.p_value, "verdict": p.verdict(threshold)})
    return pd.DataFrame(rows, columns=STUDY_COLUMNS)


def _interval(row, count: str = "repeats") -> str:
    """The difference with its interval, or why it has none."""
    n = row["datasets"] if count == "datasets" else row["repeats"]
    if not np.isfinite(row["difference_low"]):
        why = f"too few {count} for an interval" if n < MIN_FOR_INTERVAL else \
            f"the same in every {count[:-1]}: no interval"
        return f"{row['difference']:+.3f} ({why})"
    return (f"{row['difference']:+.3f} [{row['difference_low']:+.3f}, "
            f"{row['difference_high']:+.3f}]")


WHAT = {"disagreement": ("predictions changed less", "disagreement"),
        "accuracy_sd": ("accuracy varied less", "accuracy SD")}


def comparison_sentences(comparison: pd.DataFrame, study: pd.DataFrame) -> list[str]:
    """Which classifier was the more reproducible under each source, for the differences told
    apart (their ``verdict``, under the page's multiplicity control), with the numbers: over
    datasets when there are several ("A's predictions changed less than B's under data rel 0.2
    (mean difference in disagreement A − B over 5 datasets: −0.030 [−0.050, −0.010]; lower on
    4)"), else per dataset; then how many pairs were not told apart."""
    out = []
    several = comparison["dataset"].nunique() > 1
    table = study if several else comparison
    table = table[(table["source"] != CONTROL) & np.isfinite(table["difference"])]
    held = table[table["verdict"] != INCONCLUSIVE]
    for _, row in held.iterrows():
        better, worse = (row["classifier_a"], row["classifier_b"]) if row["difference"] < 0 \
            else (row["classifier_b"], row["classifier_a"])
        less, measure = WHAT[row["measure"]]
        where = f"under {row['level']}"
        if several:
            n = row["datasets"]
            count = row["a_lower"] if better == row["classifier_a"] else n - row["a_lower"]
            out.append(f"{better}'s {less} than {worse}'s {where} (mean difference in "
                       f"{measure} {row['classifier_a']} − {row['classifier_b']} over {n} "
                       f"datasets: {_interval(row, 'datasets')}; lower on {count}).")
        else:
            out.append(f"On {row['dataset']}, {better}'s {less} than {worse}'s {where} "
                       f"(difference in {measure} {row['classifier_a']} − "
                       f"{row['classifier_b']}: {_interval(row)}, paired over "
                       f"{row['repeats']} repeats).")
    rest = len(table) - len(held) - int((table["source"] == YARDSTICK).sum())
    if rest > 0:
        out.append(f"The other {rest} comparison{'s' * (rest != 1)} of classifiers "
                   f"{'were' if rest != 1 else 'was'} not told apart (the table below).")
    return out


LEADER_MEASURES = {"accuracy_sd": "sd", "disagreement": "disagreement"}


def leader_margins(sources: pd.DataFrame, summary: pd.DataFrame,
                   threshold: float = ALPHA) -> pd.DataFrame:
    """Per dataset × classifier × measure (``accuracy_sd``, ``disagreement``): the source level
    alone with the largest mean (the *leader*), the runner-up, and the leader's margin — the
    per-repeat difference leader − runner-up paired over repeats, with its 95 % t-interval,
    p-value and verdict at ``threshold`` (``supported``: the leader is ahead;
    ``inconclusive``: the data cannot tell them apart). What a "largest source" sentence rests
    on."""
    values = per_repeat(summary)
    rows = []
    for (dataset, classifier), part in alone(sources).groupby(["dataset", "classifier"],
                                                              sort=False):
        for measure, column in LEADER_MEASURES.items():
            ranked = part.dropna(subset=[measure]).sort_values(measure, ascending=False,
                                                                kind="stable")
            if len(ranked) < 2:
                continue
            lead, second = ranked.iloc[0], ranked.iloc[1]
            p = between_cells(values, dataset, classifier, lead["cell"], second["cell"],
                              column, "margin")
            if p is None:
                continue
            rows.append({"dataset": dataset, "classifier": classifier, "measure": measure,
                         "leader": lead["level"], "runner_up": second["level"],
                         "repeats": p.n, "margin": p.mean,
                         "margin_low": p.low, "margin_high": p.high, "p_value": p.p_value,
                         "verdict": p.verdict(threshold)})
    return pd.DataFrame(rows, columns=["dataset", "classifier", "measure", "leader",
                                       "runner_up", "repeats", "margin", "margin_low",
                                       "margin_high", "p_value", "verdict"])
