"""Datasets: sources (embedded, scikit-learn, user files) producing one canonical form."""

from modelvar.datasets.canonical import CATEGORICAL, NUMERIC, Dataset, DatasetError, read, write
from modelvar.datasets.sources import list_available, load

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
