"""Prediction tables: what every run predicted for every test sample, compactly.

Each fit job writes **one** parquet file, ``RESULTS/predictions/dataset=D/classifier=K/JOB.parquet``
(a hive-partitioned dataset: ``pandas.read_parquet("RESULTS/predictions")`` reads them all), with
one row group per (cell, repeat, block of runs), rows sorted by run then sample. Deterministic:
byte-identical on rerun.

==================  =============  ===========================================================
column              type           meaning
==================  =============  ===========================================================
(dataset,           partition      the dataset and classifier: in the path (hive partitions),
classifier)                        and in the file's metadata
cell                dictionary     perturbation cell id (:mod:`modelvar.study.cells`)
                    string
repeat, run         int16          repeat index (one test set each), run index within the repeat
sample              int32 / int64  row id in the canonical dataset
y_true, y_pred      uint8 / 16     the class, as an index into the dataset's classes (the file's
                    / 32           metadata ``modelvar.classes``, and the dataset's JSON); the
                                   smallest unsigned type that holds C classes
p_other:<i>         float32        *dense form*, while C ≤ ``predictions.max_dense_classes``:
                                   the probability of every class except the predicted one, in
                                   class order (column i is class i below ``y_pred``, class
                                   i + 1 from it on); the predicted class's probability is 1
                                   minus their sum
p_true, sum_sq,     float32        *compact form*, for more classes: per sample, the probability
entropy,                           of the true class, Σ_c p_c², the normalised entropy and the
confusion_index                    confusion index — everything every probabilistic metric needs
                                   (:func:`modelvar.metrics.probabilistic.probability_stats`)
==================  =============  ===========================================================

Leaving out the *predicted* class's probability (not a fixed one) keeps every probability
exact to float32's relative precision: a tiny probability is stored as it is, and the one
restored as 1 minus the others is the largest (≥ 1/C), so its rounding error stays relative too.
(Leaving out the last class instead gave log losses off by 4e-6 when that class had p ≈ 1e-10.)

``predictions.probabilities: dense`` keeps dense probabilities for any C, ``compact`` always
stores the statistics. The file's metadata ``modelvar.row_groups`` lists each row group's
(cell, repeat, first run, last run + 1), so a reader finds a repeat without scanning the data.
:func:`read_predictions` gives a file back as a DataFrame with labels and every probability column.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from modelvar.metrics.errors import MetricInputError
from modelvar.metrics.probabilistic import STAT_COLUMNS, probability_stats
from modelvar.table_files import PendingParquet

if TYPE_CHECKING:
    import pandas as pd

KEY_COLUMNS = ("dataset", "classifier", "cell", "repeat")
PROBA_PREFIX = "proba:"
OTHER_PREFIX = "p_other:"
META_KEY = "modelvar"
FORMS = ("dense", "compact", "none")


def proba_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith(PROBA_PREFIX)]


def label_type(n_classes: int):
    import pyarrow as pa

    return pa.uint8() if n_classes <= 2**8 else pa.uint16() if n_classes <= 2**16 \
        else pa.uint32()


@dataclass
class RunsMatrix:
    """One repeat's predictions as arrays: ``preds[run_index, sample_index]`` class indices,
    with the dense probabilities ``proba`` (k, n, C) and/or their per-sample ``stats``
    (name → (k, n)), when the runs had probabilities."""

    y_true: np.ndarray
    preds: np.ndarray
    runs: np.ndarray
    samples: np.ndarray
    classes: list
    proba: np.ndarray | None = None
    stats: dict[str, np.ndarray] | None = None
    keys: dict = field(default_factory=dict)

    def probability_stats(self) -> dict[str, np.ndarray] | None:
        if self.stats is None and self.proba is not None:
            self.stats = probability_stats(self.y_true, self.proba)
        return self.stats


# ----------------------------------------------------------------------------- writing
class PredictionsWriter:
    """One fit job's predictions file: call :meth:`write` per (cell, repeat) in order, then
    :meth:`close`, which renames the finished file into place (nothing on failure)."""

    def __init__(self, path: str | Path, *, dataset: str, classifier: str, classes: Sequence,
                 form: str, n_rows: int, fit: dict | None = None):
        import pyarrow as pa

        if form not in FORMS:
            raise ValueError(f"probability form must be one of {FORMS}, got {form!r}")
        self.path, self.form = Path(path), form
        self.classes = [str(c) for c in classes]
        self.dataset, self.classifier = dataset, classifier
        labels = label_type(len(self.classes))
        fields = [("cell", pa.dictionary(pa.int32(), pa.string())),
                  ("repeat", pa.int16()), ("run", pa.int16()),
                  ("sample", pa.int32() if n_rows < 2**31 else pa.int64()),
                  ("y_true", labels), ("y_pred", labels)]
        if form == "dense":
            fields += [(f"{OTHER_PREFIX}{i}", pa.float32()) for i in range(len(classes) - 1)]
        elif form == "compact":
            fields += [(s, pa.float32()) for s in STAT_COLUMNS]
        head = {"dataset": dataset, "classifier": classifier, "classes": self.classes,
                "probabilities": form, "layout": 2}
        if fit is not None:  # what refits a run (modelvar.pipeline.refit)
            head["fit"] = fit
        self.schema = pa.schema(fields, metadata={META_KEY: json.dumps(head, sort_keys=True)})
        self.groups: list[list] = []
        self.rows = 0
        self._file: PendingParquet | None = None

    def _open(self) -> None:
        self._file = PendingParquet(
            self.path, self.schema, compression="zstd",
            use_dictionary=["cell", "y_true", "y_pred", "run", "repeat"],
            column_encoding={"sample": "DELTA_BINARY_PACKED"})

    def write(self, cell: str, repeat: int, runs: np.ndarray, samples: np.ndarray,
              y_true: np.ndarray, preds: np.ndarray, proba: np.ndarray | None,
              stats: dict | None = None) -> None:
        """One repeat's (block of) runs: ``preds`` (k, n) and ``proba`` (k, n, C) class-indexed,
        ``samples``/``y_true`` (n,) sorted by sample. The compact form takes the statistics
        (:func:`~modelvar.metrics.probabilistic.probability_stats`, each (k, n)) as ``stats``
        instead of ``proba`` when the caller has reduced them already."""
        import pyarrow as pa

        if self._file is None:
            self._open()
        k, n = preds.shape
        rows = k * n
        columns = {
            "cell": pa.DictionaryArray.from_arrays(np.zeros(rows, np.int32), [cell]),
            "repeat": np.full(rows, repeat, np.int16),
            **self.encode(runs, samples, y_true, preds, proba, stats),
        }
        arrays = [pa.array(columns[f.name], type=f.type) if not isinstance(
            columns[f.name], pa.Array) else columns[f.name] for f in self.schema]
        self._file.writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema),
                                      row_group_size=rows)
        self.groups.append([cell, int(repeat), int(runs[0]), int(runs[-1]) + 1])
        self.rows += rows

    def encode(self, runs: np.ndarray, samples: np.ndarray, y_true: np.ndarray,
               preds: np.ndarray, proba: np.ndarray | None, stats: dict | None = None
               ) -> dict[str, np.ndarray]:
        """The columns after ``cell`` and ``repeat`` of the rows :meth:`write` stores for these
        runs, as arrays (also what a refit compares with the stored rows)."""
        k, n = preds.shape
        rows = k * n
        columns = {
            "run": np.repeat(np.asarray(runs, np.int16), n),
            "sample": np.tile(samples, k),
            "y_true": np.tile(y_true, k),
            "y_pred": preds.ravel(),
        }
        if self.form == "dense":
            others = _without_predicted(proba.reshape(rows, -1), preds.ravel())
            for i in range(others.shape[1]):
                columns[f"{OTHER_PREFIX}{i}"] = others[:, i]
        elif self.form == "compact":
            if stats is None:
                stats = probability_stats(y_true, proba)
            columns.update({s: np.asarray(stats[s]).ravel().astype(np.float32)
                            for s in STAT_COLUMNS})
        return columns

    def close(self) -> Path:
        if self._file is None:
            self._open()
        return self._file.commit({f"{META_KEY}.row_groups": json.dumps(self.groups)})

    def abort(self) -> None:
        if self._file is not None:
            self._file.abort()


def _without_predicted(proba: np.ndarray, preds: np.ndarray) -> np.ndarray:
    """(rows, C) probabilities → (rows, C − 1) float32, each row without its predicted class."""
    keep = np.ones(proba.shape, dtype=bool)
    keep[np.arange(len(proba)), preds] = False
    return proba[keep].reshape(len(proba), -1).astype(np.float32)


def _with_predicted(others: np.ndarray, preds: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_without_predicted` in float64: the predicted class's probability is
    1 minus the others (clipped at 0)."""
    rows, width = others.shape
    full = np.empty((rows, width + 1))
    keep = np.ones(full.shape, dtype=bool)
    keep[np.arange(rows), preds] = False
    full[keep] = others.ravel()
    full[np.arange(rows), preds] = np.clip(1.0 - others.sum(axis=1), 0.0, 1.0)
    return full


# ----------------------------------------------------------------------------- reading
def file_metadata(path: str | Path) -> tuple[dict, list[list]]:
    """(the file's modelvar metadata, its row groups' [cell, repeat, run start, run stop])."""
    import pyarrow.parquet as pq

    from modelvar.table_files import TableReadError, regenerate_hint

    if not Path(path).is_file():
        raise TableReadError(f"{path}: no such table; {regenerate_hint(path)}")
    try:
        meta = pq.ParquetFile(path).metadata.metadata or {}
    except Exception as exc:  # pyarrow raises many types for damaged files
        raise TableReadError(f"{path}: cannot be read, it is truncated or corrupt "
                             f"({type(exc).__name__}: {exc}); {regenerate_hint(path)}") from exc
    try:
        head = json.loads(meta[META_KEY.encode()])
        groups = json.loads(meta[f"{META_KEY}.row_groups".encode()])
    except (KeyError, ValueError) as exc:
        raise TableReadError(
            f"{path}: not a predictions file of a modelvar fit job (its parquet metadata lacks "
            f"{META_KEY!r} and {META_KEY + '.row_groups'!r}); for a table of your own, use "
            "`modelvar metrics`") from exc
    return head, groups


def iter_repeats(paths: Sequence[str | Path],
                 classes: Sequence | None = None) -> Iterator[RunsMatrix]:
    """The repeats of one or more prediction files, one (cell, repeat) at a time (bounded
    memory), its run blocks from several files put together in run order."""
    import pyarrow.parquet as pq

    from modelvar.table_files import TableReadError, regenerate_hint

    index: dict[tuple, list] = {}
    heads = {}
    for path in paths:
        head, groups = file_metadata(path)
        heads[str(path)] = head
        for rg, (cell, repeat, start, _stop) in enumerate(groups):
            index.setdefault((cell, repeat), []).append((start, str(path), rg))
    for (cell, repeat), parts in index.items():
        blocks = []
        for _start, path, rg in sorted(parts):
            try:
                blocks.append(pq.ParquetFile(path).read_row_group(rg))
            except Exception as exc:
                raise TableReadError(
                    f"{path}: cannot be read, it is truncated or corrupt "
                    f"({type(exc).__name__}: {exc}); {regenerate_hint(path)}") from exc
        head = heads[parts[0][1]]
        try:
            matrix = _runs_matrix(blocks, head, cell, repeat, classes)
        except RowOrderError as exc:
            files = sorted({path for _s, path, _rg in parts})
            raise TableReadError(f"{', '.join(files)}: {exc}; {regenerate_hint(files[0])}") \
                from exc
        yield matrix


class RowOrderError(ValueError):
    """A prediction file's rows are not laid out as the fit job writes them."""


def _runs_matrix(blocks, head: dict, cell: str, repeat: int, classes) -> RunsMatrix:
    runs = np.concatenate([b.column("run").to_numpy() for b in blocks]).astype(np.int64)
    samples_all = np.concatenate([b.column("sample").to_numpy() for b in blocks])
    run_ids = np.unique(runs)
    k = len(run_ids)
    n = len(samples_all) // k
    samples = samples_all[:n].astype(np.int64)
    y_all = np.concatenate([b.column("y_true").to_numpy() for b in blocks])
    y_true = y_all[:n].astype(np.int64)
    # what the fit job writes: run-major blocks, each the same samples in increasing order with
    # the same true labels; rows moved by hand would silently pair the wrong predictions
    if (k * n != len(runs) or not np.array_equal(runs, np.repeat(run_ids, n))
            or not np.array_equal(samples_all, np.tile(samples_all[:n], k))
            or np.any(np.diff(samples) <= 0) or not np.array_equal(y_all, np.tile(y_all[:n], k))):
        raise RowOrderError(f"cell {cell} repeat {repeat}: the rows are not in the order the "
                            "fit job writes (runs in blocks, samples increasing, the same "
                            "samples and true labels in every run)")
    preds = np.concatenate([b.column("y_pred").to_numpy() for b in blocks]).astype(
        np.int64).reshape(k, n)
    file_classes = head["classes"]
    if classes is not None and [str(c) for c in classes] != file_classes:
        raise MetricInputError(f"the predictions' classes {file_classes} are not the dataset's "
                               f"{[str(c) for c in classes]}")
    matrix = RunsMatrix(y_true=y_true, preds=preds, runs=run_ids, samples=samples,
                        classes=list(file_classes),
                        keys={"dataset": head["dataset"], "classifier": head["classifier"],
                              "cell": cell, "repeat": int(repeat)})
    form = head["probabilities"]
    if form == "dense":
        cols = [f"{OTHER_PREFIX}{i}" for i in range(len(file_classes) - 1)]
        others = np.column_stack([np.concatenate([b.column(c).to_numpy() for b in blocks])
                                  for c in cols]).astype(np.float64)
        matrix.proba = _with_predicted(others, preds.ravel()).reshape(k, n, len(file_classes))
    elif form == "compact":
        matrix.stats = {s: np.concatenate([b.column(s).to_numpy() for b in blocks]).astype(
            np.float64).reshape(k, n) for s in STAT_COLUMNS}
    return matrix


def read_predictions(path: str | Path) -> pd.DataFrame:
    """A predictions file as a DataFrame: labels instead of class indices and, in the dense
    form, every class's probability (``proba:<class>``)."""
    import pandas as pd

    frames = []
    for m in iter_repeats([path]):
        k, n = m.preds.shape
        labels = np.asarray(m.classes, dtype=object)
        frame = pd.DataFrame({**{key: value for key, value in m.keys.items()},
                              "run": np.repeat(m.runs, n), "sample": np.tile(m.samples, k),
                              "y_true": labels[np.tile(m.y_true, k)],
                              "y_pred": labels[m.preds.ravel()]})
        if m.proba is not None:
            for c, name in enumerate(m.classes):
                frame[f"{PROBA_PREFIX}{name}"] = m.proba[:, :, c].ravel()
        if m.stats is not None:
            for s in STAT_COLUMNS:
                frame[s] = m.stats[s].ravel()
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------- user frames
def to_runs_matrix(frame: pd.DataFrame, classes: list | None = None) -> RunsMatrix:
    """Pivot one repeat's long table (a user's own predictions) into arrays, checking that
    every run covers every sample."""
    from modelvar.labels import sort_labels

    for col in ("run", "sample", "y_true", "y_pred"):
        if col not in frame.columns:
            raise MetricInputError(f"predictions lack the required column {col!r}")
    if frame[["y_true", "y_pred"]].isna().any().any():
        raise MetricInputError("predictions hold missing (NaN) labels in y_true or y_pred")
    if frame.duplicated(["run", "sample"]).any():
        dup = frame.loc[frame.duplicated(["run", "sample"]), ["run", "sample"]].iloc[0]
        raise MetricInputError(
            f"run {dup['run']} has sample {dup['sample']} more than once"
        )
    runs = np.sort(frame["run"].unique())
    samples = np.sort(frame["sample"].unique())
    if len(runs) < 2:
        raise MetricInputError(f"need at least 2 runs, found {len(runs)}")
    counts = frame.groupby("run")["sample"].size()
    short = counts[counts != len(samples)]
    if len(short):
        raise MetricInputError(
            f"run(s) {list(short.index[:5])} lack predictions for some samples "
            f"({int(short.iloc[0])} of {len(samples)})"
        )
    truth = frame.groupby("sample")["y_true"].nunique()
    if (truth > 1).any():
        raise MetricInputError(
            f"sample(s) {list(truth[truth > 1].index[:5])} have different y_true across runs"
        )
    ordered = frame.sort_values(["run", "sample"])
    if classes is None:
        classes = sort_labels([*ordered["y_true"].unique(), *ordered["y_pred"].unique()])
    lookup = {c: i for i, c in enumerate(classes)}
    unknown = (set(ordered["y_true"]) | set(ordered["y_pred"])) - set(lookup)
    if unknown:
        raise MetricInputError(f"labels {sorted(map(str, unknown))[:5]} are not among the classes")
    k, n = len(runs), len(samples)
    preds = ordered["y_pred"].map(lookup).to_numpy(np.int64).reshape(k, n)
    y_true = ordered["y_true"].map(lookup).to_numpy(np.int64).reshape(k, n)[0]
    pcols = proba_columns(frame)
    proba = None
    if pcols:
        named = {c[len(PROBA_PREFIX):]: c for c in pcols}
        if set(named) != {str(c) for c in classes}:
            raise MetricInputError(
                f"probability columns {sorted(named)} do not match the classes "
                f"{sorted(map(str, classes))}"
            )
        ordered_cols = [named[str(c)] for c in classes]
        proba = ordered[ordered_cols].to_numpy(np.float64).reshape(k, n, len(classes))
    return RunsMatrix(y_true=y_true, preds=preds, runs=runs, samples=samples,
                      classes=list(classes), proba=proba)
