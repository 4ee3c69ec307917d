"""Reproducibility, agreement and per-run metrics (see each module's docstring for formulas).

* :mod:`~modelvar.metrics.pairwise`: pairwise reproducibility metrics of k runs, each declared
  in :mod:`~modelvar.metrics.registry`;
* :mod:`~modelvar.metrics.agreement`: agreement across all runs, per-sample instability;
* :mod:`~modelvar.metrics.probabilistic`, :mod:`~modelvar.metrics.tau`: per-run metrics;
* :mod:`~modelvar.metrics.summary`, :mod:`~modelvar.metrics.inference`: per-repeat summaries,
  jackknife intervals, independence null;
* :mod:`~modelvar.metrics.grouped`: metrics by group (seed 003, on fairlearn's MetricFrame).

The grouped API (``GroupedMetric``, ``reproducibility_by_group``, …) is importable from here;
it is loaded on first use, so importing the pairwise metrics does not import fairlearn.
"""

# Loaded on first use (as modelvar.data's): importing one metrics module, as a fit job imports
# the probabilistic metrics, does not import the others, so a job's import closure, and with it
# its code version (modelvar.running.code_hash), holds only what it uses; the grouped API does
# not import fairlearn until asked for.
_GROUPED = (
    "GroupedMetric",
    "GroupedMetricError",
    "make_derived_metric",
    "make_grouped_scorer",
    "reproducibility_by_group",
    "reproducibility_ci_by_group",
)
_EXPORTS = {
    "ALL_METRICS": "modelvar.metrics.pairwise", "ERROR_METRICS": "modelvar.metrics.pairwise",
    "LABEL_METRICS": "modelvar.metrics.pairwise", "MetricInputError": "modelvar.metrics.errors",
    "disagreement_mask": "modelvar.metrics.pairwise", "encode_labels": "modelvar.metrics.pairwise",
    "pairwise_metrics": "modelvar.metrics.pairwise", "STATS": "modelvar.metrics.summary",
    "summarise": "modelvar.metrics.summary",
    **{name: "modelvar.metrics.grouped" for name in _GROUPED},
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'modelvar.metrics' has no attribute {name!r}")
