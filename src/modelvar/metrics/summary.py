"""Per-repeat summaries of pairwise metrics and per-run accuracies.

Seed 004's figures pooled all repeats together; the intended unit is the *repeat*: each repeat's
k(k−1)/2 pairwise values (or k per-run accuracies) are summarised first, and figures then show the
distribution of those summaries over repeats.
"""

from __future__ import annotations

import numpy as np

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
