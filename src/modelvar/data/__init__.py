"""Data: dataset sources producing one canonical form, and what happens to a dataset's rows
before a model sees them.

* :mod:`~modelvar.data.canonical`, :mod:`~modelvar.data.sources`, :mod:`~modelvar.data.readers`,
  :mod:`~modelvar.data.openml_source`: OpenML, embedded, scikit-learn and user-file datasets;
* :mod:`~modelvar.data.splits`: per-repeat test sets and per-run downsampling;
* :mod:`~modelvar.data.perturb`: training-data perturbations;
* :mod:`~modelvar.data.preprocess`: preprocessing fit on training rows only.
"""

# Loaded on first use, so that importing modelvar.data.errors (every job does) or the arrays of
# a dataset does not import pandas.
_EXPORTS = {
    "CATEGORICAL": "modelvar.data.canonical", "NUMERIC": "modelvar.data.canonical",
    "Dataset": "modelvar.data.canonical", "read": "modelvar.data.canonical",
    "write": "modelvar.data.canonical", "DatasetError": "modelvar.data.errors",
    "list_available": "modelvar.data.sources", "load": "modelvar.data.sources",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'modelvar.data' has no attribute {name!r}")
