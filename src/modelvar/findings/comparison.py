"""Classifiers compared, per source of variance: which one is more reproducible, by how much.

For a pair of classifiers (a, b) of one dataset, each source's level alone (and the control),
and each measure — ``disagreement`` (mean pairwise churn of a repeat's runs) and ``accuracy_sd``
(their within-repeat accuracy SD) — the per-repeat difference m_a,r − m_b,r is **paired over
repeats**: repeat r draws the same test set and training pool for every classifier (the split's
seed stream names the dataset and repeat, never the classifier), so the difference removes what
the repeat contributes. Its mean over the R repeats has the 95 % Student t-interval
d̄ ± t(0.975, R − 1) · s_d / √R (:class:`modelvar.findings.claims.Paired`).

Over datasets (:func:`study_comparison`), per pair, level and measure: the mean of the
datasets' mean differences with a t-interval over datasets (each dataset one observation), and
on how many datasets a's mean was below b's. Negative differences mean *a* is the more
reproducible (fewer changed predictions, a narrower accuracy distribution).

The test-set yardstick (between-repeat SD of the control's accuracy) is one number per dataset
and classifier, not a per-repeat value: it is compared over datasets only.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from modelvar.findings.claims import Paired, per_repeat
from modelvar.metrics.student_t import t_quantile

MEASURES = {"disagreement": "disagreement", "accuracy_sd": "sd"}
COLUMNS = ["dataset", "source", "level", "classifier_a", "classifier_b", "measure", "repeats",
           "difference", "difference_low", "difference_high"]
STUDY_COLUMNS = ["source", "level", "classifier_a", "classifier_b", "measure", "datasets",
                 "a_lower", "difference", "difference_low", "difference_high"]


def _pairs(classifiers) -> list[tuple[str, str]]:
    return list(itertools.combinations(sorted(classifiers), 2))


def classifier_comparison(sources: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, one-at-a-time level (and the control), pair of classifiers and measure:
    the paired mean difference a − b over repeats with its 95 % interval (module docstring)."""
    values = per_repeat(summary)
    rows = []
    alone = sources[sources["source"] != "test set"]
    for (dataset, level), part in alone.groupby(["dataset", "level"], sort=False):
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
                             "difference_low": p.low, "difference_high": p.high})
    yard = sources[sources["source"] == "test set"]
    for dataset, part in yard.groupby("dataset", sort=False):
        sd = dict(zip(part["classifier"], part["accuracy_sd"], strict=True))
        for a, b in _pairs(sd):
            rows.append({"dataset": dataset, "source": "test set", "level": "test set",
                         "classifier_a": a, "classifier_b": b, "measure": "accuracy_sd",
                         "repeats": int(part["repeats"].iloc[0]),
                         "difference": sd[a] - sd[b], "difference_low": np.nan,
                         "difference_high": np.nan})
    return pd.DataFrame(rows, columns=COLUMNS)


def study_comparison(comparison: pd.DataFrame) -> pd.DataFrame:
    """Over datasets (module docstring): per level, pair and measure, the mean difference with
    a t-interval over datasets and the datasets on which a was below b."""
    rows = []
    keys = ["source", "level", "classifier_a", "classifier_b", "measure"]
    for key, part in comparison.groupby(keys, sort=False):
        d = part["difference"].to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        if not len(d):
            continue
        mean = float(d.mean())
        half = (t_quantile(0.975, len(d) - 1) * float(d.std(ddof=1)) / math.sqrt(len(d))
                if len(d) > 1 else np.nan)
        rows.append({**dict(zip(keys, key, strict=True)), "datasets": len(d),
                     "a_lower": int((d < 0).sum()), "difference": mean,
                     "difference_low": mean - half, "difference_high": mean + half})
    return pd.DataFrame(rows, columns=STUDY_COLUMNS)


def _interval(row) -> str:
    if not np.isfinite(row["difference_low"]):
        return f"{row['difference']:+.3f}"
    return (f"{row['difference']:+.3f} [{row['difference_low']:+.3f}, "
            f"{row['difference_high']:+.3f}]")


WHAT = {"disagreement": ("predictions changed less", "disagreement"),
        "accuracy_sd": ("accuracy varied less", "accuracy SD")}


def comparison_sentences(comparison: pd.DataFrame, study: pd.DataFrame) -> list[str]:
    """Which classifier was the more reproducible under each source, with the numbers: over
    datasets when there are several ("A's predictions changed less than B's under data rel 0.2
    on 4 of 5 datasets (mean difference in disagreement A − B: −0.030 [−0.050, −0.010])"),
    else per dataset where the interval over repeats excludes 0."""
    out = []
    several = comparison["dataset"].nunique() > 1
    table = study if several else comparison
    for _, row in table.iterrows():
        if row["source"] == "control" or not np.isfinite(row["difference"]):
            continue
        better, worse = (row["classifier_a"], row["classifier_b"]) if row["difference"] < 0 \
            else (row["classifier_b"], row["classifier_a"])
        less, measure = WHAT[row["measure"]]
        decided = np.isfinite(row["difference_low"]) and (
            row["difference_low"] > 0 or row["difference_high"] < 0)
        where = "between test sets (the yardstick)" if row["source"] == "test set" else \
            f"under {row['level']}"
        if several:
            n = row["datasets"]
            count = row["a_lower"] if better == row["classifier_a"] else n - row["a_lower"]
            if n < 2 or count * 2 <= n:
                continue
            out.append(f"{better}'s {less} than {worse}'s {where} on {count} of "
                       f"{n} datasets (mean difference in {measure} "
                       f"{row['classifier_a']} − {row['classifier_b']}: {_interval(row)}"
                       f"{'' if decided else '; the interval holds 0'}).")
        elif decided:
            out.append(f"On {row['dataset']}, {better}'s {less} than {worse}'s {where} "
                       f"(difference in {measure} {row['classifier_a']} − "
                       f"{row['classifier_b']}: {_interval(row)}, paired over "
                       f"{row['repeats']} repeats).")
    return out


LEADER_MEASURES = {"accuracy_sd": "sd", "disagreement": "disagreement"}


def leader_margins(sources: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset × classifier × measure (``accuracy_sd``, ``disagreement``): the source level
    alone with the largest mean (the *leader*), the runner-up, and the leader's margin — the
    per-repeat difference leader − runner-up paired over repeats, with its 95 % t-interval and
    verdict (``supported``: the leader is ahead; ``inconclusive``: the data cannot tell them
    apart). What a "largest source" sentence rests on."""
    values = per_repeat(summary)
    rows = []
    alone = sources[~sources["source"].isin(["control", "test set"])]
    for (dataset, classifier), part in alone.groupby(["dataset", "classifier"], sort=False):
        for measure, column in LEADER_MEASURES.items():
            ranked = part.dropna(subset=[measure]).sort_values(measure, ascending=False,
                                                                kind="stable")
            if len(ranked) < 2:
                continue
            lead, second = ranked.iloc[0], ranked.iloc[1]
            try:
                a = values.loc[(dataset, classifier, lead["cell"]), column]
                b = values.loc[(dataset, classifier, second["cell"]), column]
            except KeyError:
                continue
            p = Paired.between("margin", a, b)
            rows.append({"dataset": dataset, "classifier": classifier, "measure": measure,
                         "leader": lead["level"], "runner_up": second["level"],
                         "repeats": p.n, "margin": p.mean,
                         "margin_low": p.low, "margin_high": p.high, "verdict": p.verdict})
    return pd.DataFrame(rows, columns=["dataset", "classifier", "measure", "leader",
                                       "runner_up", "repeats", "margin", "margin_low",
                                       "margin_high", "verdict"])


def margin_phrase(row) -> str:
    """" (ahead of data rel 0.2 by +0.012 [+0.004, +0.020] over 10 repeats)" or " (not told
    apart from data rel 0.2: …)"."""
    if not np.isfinite(row["margin_low"]):
        return f" (ahead of {row['runner_up']} by {row['margin']:+.3f}; one repeat: no interval)"
    numbers = (f"{row['margin']:+.3f} [{row['margin_low']:+.3f}, {row['margin_high']:+.3f}], "
               f"paired over {row['repeats']} repeats")
    if row["verdict"] == "supported":
        return f" (ahead of {row['runner_up']} by {numbers})"
    return f" (not told apart from {row['runner_up']}: {numbers})"
