"""A user's own predictions for ``modelvar metrics``: read, check, and make comparable.

The input is one long table (CSV or parquet, optionally gzip-compressed: ``.csv.gz``): columns
``run``, ``sample``, ``y_true``, ``y_pred``, optional ``repeat`` and optional probability
columns ``proba:<class>``. Everything that would make a metric silently wrong is an error that
names the problem:

* paths: a missing input, a folder given as input or output, an unsupported file type, an
  output that is the input (or would overwrite it);
* ``run`` and ``repeat`` must be whole numbers (not text, not NaN, not 1.5), ``sample`` ids must
  be present;
* labels follow :mod:`modelvar.labels`: no missing, blank or padded labels, and labels of
  different types only when they are the same numbers (then compared by value; probability
  columns ``proba:2.0`` then name class 2).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from modelvar.labels import LabelError, harmonise
from modelvar.metrics.errors import MetricInputError
from modelvar.pipeline.predictions import PROBA_PREFIX, proba_columns
from modelvar.table_files import file_kind

REQUIRED = ("run", "sample", "y_true", "y_pred")
READABLE = {".csv": "csv", ".csv.gz": "csv", ".parquet": "parquet", ".pq": "parquet"}
WRITABLE = (".csv", ".parquet")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return next((s for s in sorted(READABLE, key=len, reverse=True) if name.endswith(s)),
                path.suffix.lower())


def check_paths(source: str | Path, outputs: list[Path]) -> None:
    """Refuse a missing or folder input, unsupported types, and outputs that are folders or the
    input itself — before anything is read or written."""
    source = Path(source)
    if not source.exists():
        raise MetricInputError(f"{source}: no such file")
    if source.is_dir():
        raise MetricInputError(f"{source} is a folder; give the predictions file itself")
    if not source.is_file():
        raise MetricInputError(f"{source} is {file_kind(source)}, not a file; give the "
                               "predictions file itself")
    if _suffix(source) not in READABLE:
        raise MetricInputError(
            f"{source}: unsupported file type; use one of {sorted(READABLE)}")
    for out in outputs:
        if out.suffix.lower() not in WRITABLE:
            raise MetricInputError(f"--out {out}: write .parquet or .csv")
        if out.is_dir():
            raise MetricInputError(f"--out {out} is a folder; name the file to write")
        if out.resolve() == source.resolve():
            raise MetricInputError(f"--out {out} is the input file: it would be overwritten")


def _whole_numbers(values: pd.Series, name: str) -> pd.Series:
    if values.isna().any():
        rows = list(values.index[values.isna()][:5])
        raise MetricInputError(f"column {name!r} has missing ids (rows {rows}); every row needs "
                               f"a whole-number {name} id")
    numeric = pd.to_numeric(values, errors="coerce")
    bad = numeric.isna() | (numeric != np.round(numeric))
    if bad.any():
        raise MetricInputError(
            f"column {name!r} must hold whole-number {name} ids (0, 1, 2, …); found "
            f"{values[bad].iloc[0]!r} (row {values.index[bad][0]})")
    return numeric.astype(np.int64)


#: delimiters a .csv is written with by mistake, as the error names them
OTHER_DELIMITERS = {"\t": "tabs", ";": "semicolons", "|": "vertical bars", " ": "spaces"}


def _other_delimiter(columns) -> str | None:
    """Which other delimiter splits a header that a comma did not split into the required
    columns (``run\tsample\t…`` read as one column), if one does."""
    header = ",".join(map(str, columns))
    for delimiter, name in OTHER_DELIMITERS.items():
        fields = [f.strip() for f in header.split(delimiter)]
        if all(c in fields for c in REQUIRED):
            return name
    return None


def read_user_predictions(path: str | Path) -> pd.DataFrame:
    """Read and check a user's long-format predictions (see module docstring)."""
    path = Path(path)
    kind = READABLE[_suffix(path)]
    try:
        if kind == "csv":
            # every value as text; only truly empty cells are missing (an "NA" class stays "NA")
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        else:
            frame = pd.read_parquet(path)
    except pd.errors.EmptyDataError:
        raise MetricInputError(f"{path}: the file is empty (no header, no rows)") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise MetricInputError(f"{path}: cannot be read as {kind}: {exc}") from exc
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        seen = _other_delimiter(frame.columns) if kind == "csv" else None
        if seen:
            raise MetricInputError(
                f"{path}: its header is separated by {seen}, not commas: write it "
                "comma-separated (modelvar metrics reads .csv files with commas)")
        raise MetricInputError(f"{path}: missing required column(s) {missing}")
    if frame.empty:
        raise MetricInputError(f"{path}: no rows (the file holds only its header)")
    for col in ("run", "repeat"):
        if col in frame.columns:
            frame[col] = _whole_numbers(frame[col], col)
    if frame["sample"].isna().any():
        raise MetricInputError(f"column 'sample' has missing ids (rows "
                               f"{list(frame.index[frame['sample'].isna()][:5])})")
    try:
        frame["y_true"], frame["y_pred"] = harmonise(frame["y_true"], frame["y_pred"])
    except LabelError as exc:
        raise MetricInputError(f"{path}: {exc}") from exc
    if pd.api.types.is_numeric_dtype(pd.Series(list(frame["y_true"][:1]))):
        renamed = {}
        for col in proba_columns(frame):
            name = col[len(PROBA_PREFIX):]
            try:
                value = float(name)
            except ValueError:
                continue
            renamed[col] = f"{PROBA_PREFIX}{int(value) if value.is_integer() else value}"
        frame = frame.rename(columns=renamed)
    for col in proba_columns(frame):
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame
