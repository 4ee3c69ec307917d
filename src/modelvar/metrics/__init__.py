"""Reproducibility, agreement and per-run metrics (see each module's docstring for formulas)."""

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
]
