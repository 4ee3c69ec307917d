"""Reproducibility, agreement and per-run metrics (see each module's docstring for formulas).

* :mod:`~modelvar.metrics.pairwise`: pairwise reproducibility metrics of k runs;
* :mod:`~modelvar.metrics.agreement`: agreement across all runs, per-sample instability;
* :mod:`~modelvar.metrics.probabilistic`, :mod:`~modelvar.metrics.tau`: per-run metrics;
* :mod:`~modelvar.metrics.summary`, :mod:`~modelvar.metrics.inference`: per-repeat summaries,
  jackknife intervals, independence null;
* :mod:`~modelvar.metrics.grouped`: metrics by group (seed 003, on fairlearn's MetricFrame).

The grouped API (``GroupedMetric``, ``reproducibility_by_group``, …) is importable from here;
it is loaded on first use, so importing the pairwise metrics does not import fairlearn.
"""

from modelvar.metrics.pairwise import (
    ALL_METRICS,
    ERROR_METRICS,
    LABEL_METRICS,
    MetricInputError,
    disagreement_mask,
    encode_labels,
    pairwise_metrics,
)
from modelvar.metrics.summary import STATS, summarise

_GROUPED = (
    "GroupedMetric",
    "GroupedMetricError",
    "make_derived_metric",
    "make_grouped_scorer",
    "reproducibility_by_group",
    "reproducibility_ci_by_group",
)

__all__ = [
    "ALL_METRICS",
    "ERROR_METRICS",
    "LABEL_METRICS",
    "STATS",
    "MetricInputError",
    "disagreement_mask",
    "encode_labels",
    "pairwise_metrics",
    "summarise",
    *_GROUPED,
]


def __getattr__(name: str):
    if name in _GROUPED:
        from modelvar.metrics import grouped

        return getattr(grouped, name)
    raise AttributeError(f"module 'modelvar.metrics' has no attribute {name!r}")
