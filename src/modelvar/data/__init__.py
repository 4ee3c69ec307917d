"""Data: dataset sources producing one canonical form, and what happens to a dataset's rows
before a model sees them.

* :mod:`~modelvar.data.canonical`, :mod:`~modelvar.data.sources`, :mod:`~modelvar.data.readers`,
  :mod:`~modelvar.data.openml_source`: OpenML, embedded, scikit-learn and user-file datasets;
* :mod:`~modelvar.data.splits`: per-repeat test sets and per-run downsampling;
* :mod:`~modelvar.data.perturb`: training-data perturbations;
* :mod:`~modelvar.data.preprocess`: preprocessing fit on training rows only.
"""

from modelvar.data.canonical import CATEGORICAL, NUMERIC, Dataset, DatasetError, read, write
from modelvar.data.sources import list_available, load

__all__ = [
    "CATEGORICAL",
    "NUMERIC",
    "Dataset",
    "DatasetError",
    "list_available",
    "load",
    "read",
    "write",
]
