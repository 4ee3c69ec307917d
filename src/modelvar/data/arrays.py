"""A canonical dataset as the arrays a fit job needs, read without pandas.

A fit job needs the class index of every row and the encoded features (numeric values and
categorical codes, :class:`~modelvar.data.preprocess.EncodedDataset`). :func:`read_arrays` reads
them from the canonical parquet with pyarrow (numeric columns as float64 with NaN, categorical
columns as codes into the metadata's levels, −1 for missing), after the same sha256 check as
:func:`modelvar.data.canonical.read`: a fit job does not import pandas, a start-up cost beside
its classifier library's own import (docs/measurements/design-choices.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from modelvar.data.errors import DatasetError, check_prepared_file
from modelvar.data.preprocess import EncodedDataset


@dataclass
class DataArrays:
    name: str
    classes: list[str]
    y: np.ndarray            # class index of every row (int64)
    encoded: EncodedDataset

    def class_index(self) -> np.ndarray:
        return self.y

    @classmethod
    def from_dataset(cls, ds) -> DataArrays:
        """From an in-memory :class:`~modelvar.data.canonical.Dataset`."""
        return cls(ds.name, list(ds.classes), ds.class_index(), EncodedDataset.from_dataset(ds))


def read_arrays(parquet_path: str | Path, meta_path: str | Path) -> DataArrays:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from modelvar.table_files import read_json

    meta = read_json(meta_path)
    check_prepared_file(parquet_path, meta)
    table = pq.read_table(parquet_path)
    n = table.num_rows
    numeric_cols = [f["name"] for f in meta["features"] if f["type"] == "numeric"]
    categorical = [f for f in meta["features"] if f["type"] == "categorical"]
    numeric = np.empty((n, len(numeric_cols)))
    for j, col in enumerate(numeric_cols):
        numeric[:, j] = table.column(col).to_numpy(zero_copy_only=False).astype(np.float64)
    codes = np.empty((n, len(categorical)), dtype=np.int32)
    for j, feature in enumerate(categorical):
        values = table.column(feature["name"]).cast("string")
        index = pc.index_in(values, value_set=_strings(feature["levels"]))
        codes[:, j] = index.fill_null(-1).to_numpy(zero_copy_only=False)
    target = table.column(meta["target"]).cast("string")
    y = pc.index_in(target, value_set=_strings(meta["classes"]))
    if y.null_count:
        raise DatasetError(f"{parquet_path}: labels outside the metadata's classes")
    encoded = EncodedDataset(
        numeric=numeric, codes=codes, n_levels=[len(f["levels"]) for f in categorical],
        numeric_columns=numeric_cols, categorical_columns=[f["name"] for f in categorical],
        levels=[list(f["levels"]) for f in categorical])
    return DataArrays(meta["name"], list(meta["classes"]),
                      y.to_numpy(zero_copy_only=False).astype(np.int64), encoded)


def _strings(values):
    import pyarrow as pa

    return pa.array([str(v) for v in values], type=pa.string())
