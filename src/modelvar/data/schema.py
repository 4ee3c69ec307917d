"""A dataset's columns and types, found cheaply before any job runs (the workflow's start-up
checks, dry runs included).

:func:`peek` reads as little as it can: the embedded registry and ARFF headers, the first
:data:`SAMPLE_ROWS` rows of a delimited-text file, a parquet file's schema and first row group, a
scikit-learn dataset itself (small), and for OpenML the cached download if there is one (else
nothing is known until the prepare job downloads it). It raises :class:`DatasetError` for what
the prepare job would refuse: a missing or unreadable file, an unsupported type, an absent target
or categorical column, a non-numeric column not declared categorical, an unknown embedded name.
A non-numeric value beyond the sampled rows is found by the prepare job.

It also counts the *few-valued* numeric features (:func:`count_few_valued`: at most
:data:`FEW_VALUES` distinct values, as counts, flags and rating scales have), for the plan's cost
estimates (:mod:`modelvar.planning.cost_model`); in a delimited-text file's sample and a parquet
file's first row group, and not at all for an ARFF file (``None``: treated as none).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from modelvar.data.canonical import CATEGORICAL, NUMERIC, DatasetError
from modelvar.data.errors import did_you_mean, near_matches, not_found_message

SAMPLE_ROWS = 10_000
#: A numeric feature with at most this many distinct values is few-valued: xgboost's histograms
#: of it have as many bins, and a fit costs a fraction of one on continuous values (the cost
#: model's few-valued factor)
FEW_VALUES = 16


def count_few_valued(numeric: pd.DataFrame) -> int:
    """How many of ``numeric``'s columns (numeric features, before encoding) hold at most
    :data:`FEW_VALUES` distinct values, missing cells not counted."""
    count = 0
    for _, column in numeric.items():
        if not pd.api.types.is_numeric_dtype(column):  # a delimited file's sample: text
            column = pd.to_numeric(column, errors="coerce")
        values = column.to_numpy(dtype=float, na_value=np.nan)
        count += np.unique(values[~np.isnan(values)]).size <= FEW_VALUES
    return int(count)


@dataclass
class DatasetSchema:
    """What is known about a dataset before it is prepared (``None``: not known yet)."""

    name: str
    target: str | None = None
    feature_types: dict[str, str] | None = None   # feature → numeric | categorical
    n_rows: int | None = None
    class_counts: dict[str, int] | None = None
    levels: dict[str, int] | None = None           # categorical feature → number of levels
    n_classes: int | None = None
    #: numeric features with at most FEW_VALUES distinct values (None: not counted)
    few_valued: int | None = None
    notes: list[str] = field(default_factory=list)
    #: what the config check warns about (an index-like first column)
    warnings: list[str] = field(default_factory=list)

    @property
    def known(self) -> bool:
        return self.feature_types is not None

    def columns_of(self, kind: str) -> list[str]:
        return [c for c, t in (self.feature_types or {}).items() if t == kind]

    @property
    def encoded_width(self) -> int | None:
        """Columns of the design matrix: numeric features + one-hot levels (+ <missing>)."""
        if self.feature_types is None:
            return None
        levels = self.levels or {}
        return sum(1 if t == NUMERIC else levels.get(c, 2) + 1
                   for c, t in self.feature_types.items())


def _types_from_arff(attributes, target: str, name: str, where: str) -> dict[str, str]:
    names = [a for a, _ in attributes]
    if target not in names:
        raise DatasetError(f"{name}: " + not_found_message(f"in {where}, the target attribute",
                                                           target, names))
    types = {}
    for attr, kind in attributes:
        if attr == target:
            continue
        if isinstance(kind, list):
            types[attr] = CATEGORICAL
        elif str(kind).upper() in ("NUMERIC", "REAL", "INTEGER"):
            types[attr] = NUMERIC
        else:
            raise DatasetError(f"{name}: ARFF attribute {attr!r} of {where} has unsupported "
                               f"type {kind!r}")
    return types


def _types_from_frame(frame: pd.DataFrame, target: str, categorical: list[str], name: str,
                      where: str, header: bool = True) -> dict[str, str]:
    if target not in frame.columns:
        columns = list(frame.columns)
        no_header = header and len(columns) and not near_matches(target, columns)
        raise DatasetError(
            f"{name}: " + not_found_message(f"in {where}, the target column", target, columns)
            + ("; does the file lack a header row? set header: false and columns: [...]"
               if no_header else ""))
    absent = [c for c in categorical if c not in frame.columns]
    if absent:
        raise DatasetError(f"{name}: " + "; ".join(
            not_found_message(f"in {where}, the categorical column", c, list(frame.columns))
            for c in absent))
    if target in categorical:
        raise DatasetError(f"{name}: the target {target!r} cannot also be a categorical feature")
    types, non_numeric = {}, []
    for col in frame.columns:
        if col == target:
            continue
        if col in categorical:
            types[col] = CATEGORICAL
            continue
        numbers = pd.to_numeric(frame[col], errors="coerce")
        if (numbers.isna() & frame[col].notna()).any():
            non_numeric.append(col)
        types[col] = NUMERIC
    if non_numeric:
        raise DatasetError(
            f"{name}: column(s) {non_numeric} of {where} hold non-numeric values but are not "
            "declared categorical; list them under `categorical`")
    return types


def _peek_file(name: str, spec: dict) -> DatasetSchema:
    from modelvar.data.readers import arff_attributes, dropped, file_format, read_delimited
    from modelvar.table_files import file_kind

    path = Path(spec["path"])
    if not path.exists():
        raise DatasetError(f"{name}: file {path} does not exist")
    if not path.is_file():
        raise DatasetError(f"{name}: {path} is {file_kind(path)}, not a data file")
    fmt = file_format(path, name, spec)
    target, categorical = spec["target"], list(spec.get("categorical", []))
    drop = list(spec.get("drop", []))
    if fmt.kind == "arff":
        if categorical:
            raise DatasetError(f"{name}: ARFF files declare their categorical columns themselves")
        try:
            attributes = arff_attributes(path, fmt.gzip, fmt.encoding, name)
        except DatasetError:
            raise
        except Exception as exc:  # liac-arff's parse errors
            raise DatasetError(f"{name}: cannot read the ARFF header of {path}: {exc}") from exc
        names = [a for a, _ in attributes]
        if [c for c in drop if c not in names] or target in drop:
            dropped(pd.DataFrame(columns=names), drop, name, target)  # the same message
        attributes = [(a, kind) for a, kind in attributes if a not in drop]
        schema = DatasetSchema(name, target, _types_from_arff(attributes, target, name,
                                                              str(path)))
        kinds = dict(attributes)
        schema.levels = {c: len(kinds[c]) for c in schema.columns_of(CATEGORICAL)}
        schema.n_classes = len(kinds[target]) if isinstance(kinds[target], list) else None
        schema.n_rows = _arff_rows(path, fmt.gzip, fmt.encoding)
        return schema
    if fmt.kind == "parquet":
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
            frame = pf.read_row_group(0).to_pandas() if pf.num_row_groups else pd.DataFrame(
                columns=pf.schema_arrow.names)
        except Exception as exc:
            raise DatasetError(f"{name}: cannot read {path}: {exc}") from exc
        frame = _sampled_rows(dropped(frame, drop, name, target), name, path, target)
        schema = DatasetSchema(name, target, _types_from_frame(frame, target, categorical, name,
                                                               str(path)))
        schema.n_rows = pf.metadata.num_rows
        if len(frame) == schema.n_rows:  # one row group: its classes are known
            schema.class_counts = {str(k): int(v) for k, v in
                                   frame[target].value_counts(sort=False).items()}
        schema.levels = {c: int(frame[c].nunique()) for c in categorical}
        schema.n_classes = int(frame[target].nunique())
        schema.few_valued = count_few_valued(frame[schema.columns_of(NUMERIC)])
        return schema
    frame = read_delimited(path, fmt, name, text_columns=[target, *categorical],
                           nrows=SAMPLE_ROWS)
    index = _index_like_first_column(frame, target, drop)
    frame = _sampled_rows(dropped(frame, drop, name, target), name, path, target)
    schema = DatasetSchema(name, target, _types_from_frame(frame, target, categorical, name,
                                                           str(path), header=fmt.header))
    if index is not None:
        schema.warnings.append(
            f"{name}: its first column {index!r} counts 1, 2, 3, … like a row index (R's "
            "write.csv writes one): it is read as a numeric feature. If it is an index, drop "
            f"it: datasets.{name}.drop: [{index!r}]")
    schema.levels = {c: int(frame[c].nunique()) for c in categorical}
    schema.n_classes = int(frame[target].nunique())
    schema.few_valued = count_few_valued(frame[schema.columns_of(NUMERIC)])
    schema.n_rows = len(frame) if len(frame) < SAMPLE_ROWS else _estimate_rows(
        path, fmt, len(frame))
    if len(frame) < SAMPLE_ROWS:  # the sample is the whole file: its classes are known
        schema.class_counts = {str(k): int(v) for k, v in
                               frame[target].value_counts(sort=False).items()}
    return schema


def _sampled_rows(frame: pd.DataFrame, name: str, path: Path, target: str) -> pd.DataFrame:
    """The peeked rows of a file, refused where there are none or where the target has a
    missing value among them (said before any job or probe fit, in one line)."""
    if frame.empty:
        raise DatasetError(f"{name}: {path} has no data rows (a header alone)")
    if target in frame.columns:
        missing = int(frame[target].isna().sum())
        if missing:
            raise DatasetError(
                f"{name}: target {target!r} has {missing} missing value(s) in the first "
                f"{len(frame):,} rows of {path}: a run needs every row's class (drop or fill "
                "those rows)")
    return frame


def _index_like_first_column(frame: pd.DataFrame, target: str, drop) -> str | None:
    """The first column's name where it looks like a row index a writer added (a blank or
    ``Unnamed: 0`` header, or any header, over 1, 2, 3, … or 0, 1, 2, …) and is neither the
    target nor dropped; else None."""
    if frame.empty or len(frame.columns) < 2:
        return None
    first = frame.columns[0]
    if first == target or first in (drop or []):
        return None
    values = pd.to_numeric(frame[first], errors="coerce").to_numpy()
    if len(values) < 3 or not np.isfinite(values).all():
        return None
    steps = np.diff(values)
    return str(first) if values[0] in (0, 1) and (steps == 1).all() else None


def _from_dataset(ds) -> DatasetSchema:
    counts = ds.y.value_counts()
    return DatasetSchema(ds.name, ds.target, dict(ds.feature_types), len(ds.y),
                         {c: int(counts.get(c, 0)) for c in ds.classes},
                         levels={c: len(v) for c, v in ds.categories.items()},
                         n_classes=len(ds.classes),
                         few_valued=count_few_valued(ds.X[ds.numeric_columns]))


def _arff_rows(path: Path, gz: bool, encoding: str = "utf-8") -> int:
    """Data rows of an ARFF file (lines after @data that are not blank or comments)."""
    import gzip

    opener = gzip.open if gz else open
    rows, data = 0, False
    with opener(path, "rt", encoding=encoding, errors="replace") as fh:
        for line in fh:
            text = line.strip()
            if data:
                rows += bool(text) and not text.startswith("%")
            elif text.lower().startswith("@data"):
                data = True
    return rows


def _estimate_rows(path: Path, fmt, sample_rows: int) -> int:
    """Rows of a delimited-text file beyond its sample: counted when small (its lines that are
    not blank, less the header row: what pandas reads, whether or not the last line ends in a
    newline), else from the sample's mean line size (a stable estimate, since a plan must not
    change between the loads of one run)."""
    size = path.stat().st_size
    if size <= 64 << 20 and not fmt.gzip:
        with open(path, encoding=fmt.encoding, errors="replace", newline="") as fh:
            lines = sum(1 for line in fh if line.strip())
        return max(lines - bool(fmt.header), 0)
    with open(path, "rb") as fh:
        head = fh.read(1 << 20)
    lines = max(head.count(b"\n"), 1)
    return int(size / (len(head) / lines)) if not fmt.gzip else sample_rows


def peek(name: str, spec: dict, *, openml_cache: str | Path = "resources/openml"
         ) -> DatasetSchema:
    """What can be known cheaply about config entry ``spec`` (see module docstring)."""
    source = spec.get("source")
    if source == "embedded":
        from modelvar.data.sources import embedded_registry, load_embedded

        key = spec.get("name", name)
        if key not in embedded_registry():
            raise DatasetError(f"{name}: no embedded dataset named {key!r}; "
                               f"{did_you_mean(key, list(embedded_registry()))}available: "
                               f"{sorted(embedded_registry())}")
        schema = _from_dataset(load_embedded(key))
    elif source == "sklearn":
        from modelvar.data.sources import load_sklearn

        schema = _from_dataset(load_sklearn(spec.get("name", name)))
    elif source == "file":
        schema = _peek_file(name, spec)
    elif source == "openml":
        schema = DatasetSchema(name)
        entry = Path(openml_cache) / f"openml-{spec['data_id']}"
        if (entry / "description.json").is_file() and (entry / "dataset.arff").is_file():
            from modelvar.data.readers import arff_attributes

            desc = json.loads((entry / "description.json").read_text())
            schema.target = spec.get("target") or desc.get("default_target_attribute")
            schema.feature_types = _types_from_arff(arff_attributes(entry / "dataset.arff"),
                                                    schema.target, name, f"OpenML {entry}")
        else:
            schema.notes.append("not downloaded yet: checked when its prepare job runs")
    else:
        raise DatasetError(f"{name}: unknown dataset source {source!r}")
    schema.name = name
    return schema


#: a profile's row count may differ from the data by this share (OpenML sizes as recalled)
PROFILE_ROW_TOLERANCE = 0.1


def profile_problems(name: str, profile: dict, *, n_rows: int, n_numeric: int,
                     n_categorical: int, n_classes: int, n_few_valued: int | None = None
                     ) -> tuple[list[str], list[str]]:
    """(problems, warnings) of a config ``profile`` against the prepared data.

    A problem is what would change the plan's cells or probability form (which families can act,
    the number of classes), so the workflow would have built the wrong jobs; other differences
    (row counts beyond :data:`PROFILE_ROW_TOLERANCE`, feature counts, a declared ``few_valued``
    count) only change estimates and are warnings."""
    problems, warnings = [], []
    fix = f"correct datasets.{name}.profile and run again"
    for what, said, actual in (("numeric", profile["numeric"], n_numeric),
                               ("categorical", profile["categorical"], n_categorical)):
        if (said > 0) != (actual > 0):
            problems.append(f"{name}: the profile says {said} {what} features, the data has "
                            f"{actual}: the plan's perturbation cells are wrong; {fix}")
        elif said != actual:
            warnings.append(f"{name}: the profile says {said} {what} features, the data has "
                            f"{actual} (cost estimates only)")
    if profile["classes"] != n_classes:
        problems.append(f"{name}: the profile says {profile['classes']} classes, the data has "
                        f"{n_classes}: the plan chose the probability storage for the wrong "
                        f"number; {fix}")
    if abs(profile["rows"] - n_rows) > PROFILE_ROW_TOLERANCE * n_rows:
        warnings.append(f"{name}: the profile says {profile['rows']} rows, the data has "
                        f"{n_rows} (cost estimates only)")
    said = profile.get("few_valued")
    if said is not None and n_few_valued is not None and said != n_few_valued:
        warnings.append(f"{name}: the profile says {said} few-valued numeric features (at most "
                        f"{FEW_VALUES} distinct values), the data has {n_few_valued} (cost "
                        "estimates only)")
    return problems, warnings
