"""The canonical dataset every source produces: typed features, string labels, metadata.

On disk a canonical dataset is two files:

* ``<name>.parquet``: one row per sample; column ``sample`` (int64, 0..n-1, the sample id used in
  every later table), the feature columns (``float64`` for numeric, pandas ``category`` with the
  schema's levels for categorical), and the target column (string labels).
* ``<name>.json``: metadata: name, target, classes (in a fixed order: the class index used by
  models and probability columns), class counts, per-feature type and levels, missing-cell counts,
  provenance (source, file checksums, OpenML ids), and the sha256 of the parquet file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from modelvar.data.errors import DatasetError, check_prepared_file, not_found_message
from modelvar.labels import sort_labels
from modelvar.table_files import Manifest, read_json, sha256_file

NUMERIC = "numeric"
CATEGORICAL = "categorical"


@dataclass
class Dataset:
    """Features ``X`` (typed columns), labels ``y`` (strings) and what is known about them."""

    name: str
    X: pd.DataFrame
    y: pd.Series
    target: str
    feature_types: dict[str, str]
    categories: dict[str, list[str]]
    classes: list[str]
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        if len(self.X) != len(self.y):
            raise DatasetError(
                f"{self.name}: {len(self.X)} feature rows but {len(self.y)} target values"
            )
        if len(self.X) == 0:
            raise DatasetError(f"{self.name}: the dataset has no rows")
        if self.y.isna().any():
            n = int(self.y.isna().sum())
            raise DatasetError(f"{self.name}: target {self.target!r} has {n} missing value(s)")
        missing_types = [c for c in self.X.columns if c not in self.feature_types]
        if missing_types:
            raise DatasetError(f"{self.name}: no declared type for feature(s) {missing_types}")
        bad = {c: t for c, t in self.feature_types.items() if t not in (NUMERIC, CATEGORICAL)}
        if bad:
            raise DatasetError(f"{self.name}: unknown feature type(s) {bad}")
        present = set(self.y.unique())
        if present - set(self.classes):
            raise DatasetError(
                f"{self.name}: labels {sorted(present - set(self.classes))} are not in classes"
            )
        if len(present) < 2:
            raise DatasetError(f"{self.name}: needs at least 2 classes, found {sorted(present)}")

    # ------------------------------------------------------------------ views
    @property
    def numeric_columns(self) -> list[str]:
        return [c for c in self.X.columns if self.feature_types[c] == NUMERIC]

    @property
    def categorical_columns(self) -> list[str]:
        return [c for c in self.X.columns if self.feature_types[c] == CATEGORICAL]

    def class_index(self) -> np.ndarray:
        """Labels as int64 indices into :attr:`classes`."""
        lookup = {c: i for i, c in enumerate(self.classes)}
        return self.y.map(lookup).to_numpy(dtype=np.int64)

    def metadata(self) -> dict:
        counts = self.y.value_counts()
        return {
            "name": self.name,
            "target": self.target,
            "n_samples": len(self.X),
            "n_features": self.X.shape[1],
            "classes": list(self.classes),
            "class_counts": {c: int(counts.get(c, 0)) for c in self.classes},
            "features": [
                {
                    "name": c,
                    "type": self.feature_types[c],
                    "levels": self.categories.get(c),
                    "n_missing": int(self.X[c].isna().sum()),
                }
                for c in self.X.columns
            ],
            "n_missing_cells": int(self.X.isna().sum().sum()),
            "provenance": self.provenance,
        }


def build(
    name: str,
    frame: pd.DataFrame,
    target: str,
    categorical: list[str],
    *,
    categories: dict[str, list[str]] | None = None,
    class_order: list[str] | None = None,
    provenance: dict | None = None,
) -> Dataset:
    """Type a raw frame: declared categoricals become ``category``, the rest must be numeric."""
    if target not in frame.columns:
        raise DatasetError(
            f"{name}: " + not_found_message("target column", target, list(frame.columns)))
    unknown = [c for c in categorical if c not in frame.columns]
    if unknown:
        raise DatasetError(f"{name}: " + "; ".join(
            not_found_message("categorical column", c, list(frame.columns)) for c in unknown))
    if target in categorical:
        raise DatasetError(f"{name}: the target {target!r} cannot also be a categorical feature")
    categories = dict(categories or {})
    columns: dict[str, object] = {}  # built at once: inserting 800 columns one by one is slow
    types: dict[str, str] = {}
    non_numeric = []
    for col in frame.columns:
        if col == target:
            continue
        values = frame[col]
        if col in categorical:
            as_str = values.astype("string").astype(object).where(values.notna(), None)
            levels = categories.get(col)
            if levels is None:
                levels = sorted({v for v in as_str if v is not None})
            undeclared = {v for v in as_str if v is not None} - set(levels)
            if undeclared:
                raise DatasetError(
                    f"{name}: column {col!r} has values {sorted(undeclared)[:5]} "
                    f"outside its declared levels"
                )
            categories[col] = [str(v) for v in levels]
            columns[col] = pd.Categorical(as_str, categories=categories[col])
            types[col] = CATEGORICAL
        else:
            numeric = pd.to_numeric(values, errors="coerce")
            if (numeric.isna() & values.notna()).any():
                non_numeric.append(col)
                continue
            columns[col] = numeric.astype("float64").to_numpy()
            types[col] = NUMERIC
    infinite = {col: int(np.isinf(v).sum()) for col, v in columns.items()
                if types[col] == NUMERIC and np.isinf(v).any()}
    if infinite:
        raise DatasetError(
            f"{name}: column(s) hold infinite values, which no classifier can fit (cells: "
            f"{infinite}); replace them (e.g. by a missing value) or drop the column(s)")
    X = pd.DataFrame(columns, index=pd.RangeIndex(len(frame)))
    if non_numeric:
        raise DatasetError(
            f"{name}: column(s) {non_numeric} hold non-numeric values but are not declared "
            f"categorical; list them as categorical"
        )
    y_raw = frame[target]
    if y_raw.isna().any():
        raise DatasetError(
            f"{name}: target {target!r} has {int(y_raw.isna().sum())} missing value(s)"
        )
    y = pd.Series(y_raw.astype("string").astype(object).to_numpy(), name=target, dtype=object)
    present = set(y)
    if class_order is not None:
        classes = [c for c in class_order if c in present]
        absent = [c for c in class_order if c not in present]
    else:
        classes, absent = sort_labels(present), []
    prov = dict(provenance or {})
    if absent:
        prov["declared_but_absent_classes"] = absent
    return Dataset(
        name=name,
        X=X,
        y=y,
        target=target,
        feature_types=types,
        categories={c: categories[c] for c in X.columns if types[c] == CATEGORICAL},
        classes=classes,
        provenance=prov,
    )


def write(ds: Dataset, parquet_path: str | Path, meta_path: str | Path,
          manifest: Manifest | None = None) -> dict:
    """Write the canonical parquet and JSON metadata (atomically, recorded in ``manifest``);
    returns the metadata."""
    manifest = manifest if manifest is not None else Manifest(None, rule="prepare")
    table = ds.X.copy()
    table.insert(0, "sample", np.arange(len(ds.X), dtype=np.int64))
    table[ds.target] = ds.y.astype(object).to_numpy()
    manifest.write_parquet(table, parquet_path)
    meta = ds.metadata()
    meta["parquet_sha256"] = sha256_file(parquet_path)
    manifest.write_text(json.dumps(meta, indent=2) + "\n", meta_path)
    return meta


def read(parquet_path: str | Path, meta_path: str | Path) -> Dataset:
    """Read a canonical dataset written by :func:`write`, checking its checksum."""
    meta = read_json(meta_path)
    check_prepared_file(parquet_path, meta)
    table = pd.read_parquet(parquet_path)
    if not np.array_equal(table["sample"].to_numpy(), np.arange(len(table))):
        raise DatasetError(f"{parquet_path}: column 'sample' is not 0..n-1")
    target = meta["target"]
    types = {f["name"]: f["type"] for f in meta["features"]}
    cats = {f["name"]: f["levels"] for f in meta["features"] if f["type"] == CATEGORICAL}
    X = table.drop(columns=["sample", target])
    for c, levels in cats.items():
        X[c] = pd.Categorical(X[c].astype(object), categories=levels)
    y = pd.Series(table[target].astype(object).to_numpy(), name=target, dtype=object)
    return Dataset(
        name=meta["name"],
        X=X,
        y=y,
        target=target,
        feature_types=types,
        categories=cats,
        classes=meta["classes"],
        provenance=meta["provenance"],
    )
