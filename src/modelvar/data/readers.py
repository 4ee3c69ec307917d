"""Readers for the file formats datasets come in: ARFF (liac-arff), CSV and parquet (pandas)."""

from __future__ import annotations

from pathlib import Path

import arff
import pandas as pd

from modelvar.data.canonical import Dataset, DatasetError, build
from modelvar.table_files import sha256_file

_ARFF_NUMERIC = {"NUMERIC", "REAL", "INTEGER"}


def read_arff(path: str | Path, name: str, target: str, provenance: dict | None = None) -> Dataset:
    """Read an ARFF file; nominal attributes are categorical with their declared levels."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            parsed = arff.load(fh)
    except (OSError, UnicodeDecodeError, arff.ArffException) as exc:
        raise DatasetError(f"{name}: cannot read ARFF file {path}: {exc}") from exc
    columns, categorical, levels = [], [], {}
    for attr_name, attr_type in parsed["attributes"]:
        columns.append(attr_name)
        if isinstance(attr_type, list):
            levels[attr_name] = [str(v) for v in attr_type]
            categorical.append(attr_name)
        elif str(attr_type).upper() not in _ARFF_NUMERIC:
            raise DatasetError(
                f"{name}: ARFF attribute {attr_name!r} has unsupported type {attr_type!r}"
            )
    if not parsed["data"]:
        raise DatasetError(f"{name}: ARFF file {path} has no data rows")
    frame = pd.DataFrame(parsed["data"], columns=columns)
    class_order = levels.pop(target, None)
    if target in categorical:
        categorical.remove(target)
    prov = {"file": path.name, "file_sha256": sha256_file(path), "format": "arff"}
    prov.update(provenance or {})
    return build(
        name,
        frame,
        target,
        categorical,
        categories=levels,
        class_order=class_order,
        provenance=prov,
    )


def read_table(
    path: str | Path,
    name: str,
    target: str,
    categorical: list[str],
    provenance: dict | None = None,
) -> Dataset:
    """Read a CSV or parquet file; ``categorical`` names the categorical feature columns."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            frame = pd.read_csv(path, na_values=["?"], keep_default_na=True)
        elif suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        else:
            raise DatasetError(f"{name}: unsupported file type {suffix!r} for {path}")
    except DatasetError:
        raise
    except Exception as exc:  # pandas/pyarrow raise many types for unreadable files
        raise DatasetError(f"{name}: cannot read {path}: {exc}") from exc
    if frame.empty:
        raise DatasetError(f"{name}: {path} has no data rows")
    prov = {"file": path.name, "file_sha256": sha256_file(path), "format": suffix.lstrip(".")}
    prov.update(provenance or {})
    return build(name, frame, target, list(categorical), provenance=prov)


def read_file(
    path: str | Path,
    name: str,
    target: str,
    categorical: list[str] | None = None,
    provenance: dict | None = None,
) -> Dataset:
    """Read any supported file; for ARFF, ``categorical`` must be None (the file declares it)."""
    if Path(path).suffix.lower() == ".arff":
        if categorical:
            raise DatasetError(f"{name}: ARFF files declare their categorical columns themselves")
        return read_arff(path, name, target, provenance)
    return read_table(path, name, target, categorical or [], provenance)
