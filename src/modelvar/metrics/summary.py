"""Per-repeat summaries of pairwise metrics and per-run accuracies.

Seed 004's figures pooled all repeats together; the intended unit is the *repeat*: each repeat's
k(k−1)/2 pairwise values (or k per-run accuracies) are summarised first, and figures then show the
distribution of those summaries over repeats.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

STATS = ("mean", "sd", "min", "max", "range", "count", "n_undefined")


def summarise(values: np.ndarray) -> dict[str, float]:
    """mean, SD (ddof=1), min, max, range over the defined values; count and undefined count."""
    values = np.asarray(values, dtype=np.float64)
    defined = values[~np.isnan(values)]
    out = {"count": int(defined.size), "n_undefined": int(values.size - defined.size)}
    if defined.size:
        out.update(
            mean=float(defined.mean()),
            sd=float(defined.std(ddof=1)) if defined.size > 1 else np.nan,
            min=float(defined.min()),
            max=float(defined.max()),
        )
        out["range"] = out["max"] - out["min"]
    else:
        out.update(mean=np.nan, sd=np.nan, min=np.nan, max=np.nan, range=np.nan)
    return out


def summarise_pairs(
    pairs: pd.DataFrame, metrics: Sequence[str], by: Sequence[str]
) -> pd.DataFrame:
    """Long table: a row per group of ``by`` (e.g. repeat, subset) and metric with its STATS."""
    rows = []
    for key, group in pairs.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            rows.append({**dict(zip(by, key, strict=True)), "metric": m, **summarise(group[m])})
    return pd.DataFrame(rows, columns=[*by, "metric", *STATS])
