"""Where a study's tables live, and reading them back.

Every job writes its tables straight into two hive-partitioned parquet datasets (no job
gathers them afterwards, so no table is written twice):

* ``RESULTS/predictions/dataset=D/classifier=K/JOB.parquet``: one file per fit job
  (:mod:`modelvar.pipeline.predictions`);
* ``RESULTS/aggregated/TABLE/dataset=D/classifier=K/JOB.parquet``: the ``runs`` table of each
  fit job, and the metric tables (``pairwise``, ``summary``, ``per_run``, ``agreement``,
  ``per_sample``; ``grouped`` and ``disparities`` for grouped datasets) of each metrics job
  (:mod:`modelvar.pipeline.metric_tables`), every row with its cell's perturbation levels as
  columns (``data``, ``categorical``, ``hparam``, ``downsample``, ``model_seed``);
* ``RESULTS/aggregated/study/TABLE.parquet``: the study-level findings tables
  (:mod:`modelvar.findings`).

``dataset`` and ``classifier`` are in the path, not in the files (their partition keys):
``pandas.read_parquet("RESULTS/aggregated/summary")`` (or pyarrow, polars, duckdb) gives them back
as columns. JOB names the job (:mod:`modelvar.planning.plan`). When a changed config (e.g.
``jobs.target_minutes``) regroups the fits of a dataset × classifier into other jobs, the run
removes the files of jobs that are no longer in the plan from that partition once every
replacement exists (:func:`stale_files`), so a finished folder never mixes two plans' tables
and an interrupted one keeps the old tables; files put there by hand (no job's manifest records
them) are never deleted nor read by :func:`read_table`, and a run moves them out of the
partitions, where ``pandas.read_parquet`` of the folder would read them, to
``RESULTS/.modelvar/strays/`` (:func:`move_strays`); partitions of datasets or classifiers the
config no longer names are left alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from modelvar.table_files import read_parquet

if TYPE_CHECKING:
    import pandas as pd

METRIC_TABLES = ("pairwise", "summary", "per_run", "agreement", "per_sample")
GROUPED_TABLES = ("grouped", "disparities")
FIT_TABLES = ("runs",)
PARTITIONED_TABLES = (*FIT_TABLES, *METRIC_TABLES, *GROUPED_TABLES)
PARTITION_KEYS = ("dataset", "classifier")


def partition(dataset: str, classifier: str) -> str:
    return f"dataset={dataset}/classifier={classifier}"


def table_path(results: str | Path, table: str, dataset: str, classifier: str,
               job: str) -> str:
    """Where a job writes one table (a string with ``/``: also a Snakemake pattern)."""
    return f"{results}/aggregated/{table}/{partition(dataset, classifier)}/{job}.parquet"


def predictions_path(results: str | Path, dataset: str, classifier: str, job: str) -> str:
    return f"{results}/predictions/{partition(dataset, classifier)}/{job}.parquet"


def study_table_path(results: str | Path, table: str) -> str:
    return f"{results}/aggregated/study/{table}.parquet"


def partition_values(path: str | Path) -> dict[str, str]:
    """The hive partition values in a path: ``{"dataset": …, "classifier": …}``."""
    out = {}
    for part in Path(path).parts:
        key, sep, value = part.partition("=")
        if sep and key in PARTITION_KEYS:
            out[key] = value
    return out


def read_tables(paths: Sequence[str | Path], columns: list[str] | None = None, *,
                file_index: bool = False) -> pd.DataFrame:
    """Exactly these table files as one DataFrame, with ``dataset`` and ``classifier`` from their
    paths (first columns; with ``file_index``, a last column ``_file``: the file's index in
    ``paths``); a file that cannot be read is named with its regenerate command."""
    import pandas as pd

    if not paths:
        raise ValueError("no tables to read")
    frames = []
    for path in paths:
        frame = read_parquet(path, columns=columns)
        keys = partition_values(path)
        for i, key in enumerate(k for k in PARTITION_KEYS if k in keys):
            frame.insert(i, key, keys[key])
        if file_index:
            frame["_file"] = len(frames)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


#: the columns that place a row in the study, outermost first (a table has those it has)
STUDY_ORDER = ("dataset", "classifier", "cell", "repeat", "run")


def in_study_order(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``frame`` by :data:`STUDY_ORDER` (a stable sort: rows of one run, or of one
    repeat of a per-repeat table, keep the order their job wrote), so that what is drawn from a
    table does not depend on how the plan grouped runs into jobs (batches of repeats, run
    blocks: other files, their rows concatenated in another order)."""
    keys = [k for k in STUDY_ORDER if k in frame.columns]
    return frame.sort_values(keys, kind="mergesort", ignore_index=True) if keys else frame


def read_table(results: str | Path, table: str, dataset: str | None = None) -> pd.DataFrame:
    """Every file of one table (of one dataset, or all) that the study's jobs wrote, for your
    own analysis. Files in the folder that no job's manifest records (put there by hand) are
    not read; a warning names them."""
    import logging

    from modelvar.table_files import TableReadError, recorded_paths

    root = Path(results) / "aggregated" / table
    if dataset is not None:
        root = root / f"dataset={dataset}"
    found = sorted(p for p in root.glob("**/*.parquet") if not p.name.startswith((".", "_")))
    recorded = recorded_paths(results)
    paths = [p for p in found if p.resolve() in recorded]
    foreign = [p for p in found if p.resolve() not in recorded]
    if foreign:
        logging.getLogger(__name__).warning(
            "%d file(s) in %s were not written by the study's jobs and are not read, e.g. %s",
            len(foreign), root, foreign[0])
    if not paths:
        raise TableReadError(f"{root}: no tables written by the study's jobs (is {results} a "
                             "results folder, and has the study run?)")
    return read_tables(paths)


def stale_files(results: str | Path, planned: Iterable[str | Path],
                partitions: Iterable[tuple[str, str]], *,
                recorded: dict[Path, Path] | None = None) -> tuple[list[Path], list[Path]]:
    """(stale, foreign) files of the planned (dataset, classifier) partitions.

    Stale: tables and prediction files that a job wrote (its manifest records them) but no job
    of the plan writes (a changed config: fewer repeats, a level removed, the fits regrouped
    into other jobs), in partitions whose planned files all exist: a stale file stays until its
    replacements do, so that an interrupted regrouping run loses nothing. Foreign: files no
    job's manifest records (put there by hand); they are never touched. ``recorded``: the
    results' recorded paths (:func:`modelvar.table_files.recorded_paths`), when the caller has
    them."""
    from modelvar.table_files import recorded_paths

    results = Path(results)
    keep = {Path(p).resolve() for p in planned}
    planned_in: dict[Path, list[Path]] = {}
    for path in keep:
        planned_in.setdefault(path.parent, []).append(path)
    recorded = recorded_paths(results) if recorded is None else recorded
    roots = [results / "predictions"] + [results / "aggregated" / t for t in PARTITIONED_TABLES]
    stale: list[Path] = []
    foreign: list[Path] = []
    for dataset, classifier in partitions:
        folders = [root / partition(dataset, classifier) for root in roots]
        complete = all(p.is_file() for folder in folders
                       for p in planned_in.get(folder.resolve(), ()))
        for folder in folders:
            if not folder.is_dir():
                continue
            for p in sorted(folder.glob("*.parquet")):
                if p.name.startswith((".", "_")) or p.resolve() in keep:
                    continue
                if p.resolve() not in recorded:
                    foreign.append(p)
                elif complete:
                    stale.append(p)
    return stale, foreign


#: where :func:`move_strays` puts what it finds, under the results folder (their paths kept)
STRAYS_DIR = ".modelvar/strays"


def stray_files(results: str | Path, recorded: Iterable[Path] | None = None) -> list[Path]:
    """Files in the results' partitions (``predictions/``, ``aggregated/TABLE/`` of every
    partitioned table) that no job's manifest records: a copied table, notes, a ``.tmp`` —
    ``pandas.read_parquet`` of the folder would read them (double rows) or fail on them. Names
    that start with ``.`` or ``_`` are skipped, as readers skip them (an interrupted write's
    hidden temporary is removed by a run's start)."""
    from modelvar.table_files import recorded_paths

    results = Path(results)
    keep = set(recorded_paths(results) if recorded is None else recorded)
    roots = [results / "predictions"] + [results / "aggregated" / t for t in PARTITIONED_TABLES]
    return [p for root in roots if root.is_dir() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith((".", "_")) and p.resolve() not in keep]


def move_strays(results: str | Path, strays: Iterable[Path]) -> list[tuple[Path, Path]]:
    """Move each stray file to ``RESULTS/.modelvar/strays/`` under its own path in the results
    (a number added where that name is taken): out of the partitions, never deleted. Returns
    (from, to) per file."""
    results = Path(results)
    moved = []
    for path in strays:
        rel = path.relative_to(results)
        dest = results / STRAYS_DIR / rel
        n = 1
        while dest.exists():
            dest = results / STRAYS_DIR / rel.with_name(f"{rel.name}.{n}")
            n += 1
        dest.parent.mkdir(parents=True, exist_ok=True)
        path.replace(dest)
        moved.append((path, dest))
    return moved


#: where :func:`set_aside_stale` keeps the files of jobs a changed config no longer plans, under
#: the results folder (their paths kept), until a config plans them again
SET_ASIDE_DIR = ".modelvar/set-aside"


@dataclass(frozen=True)
class SetAside:
    """What :func:`set_aside_stale` moved: per job its manifest and files, where they went."""

    jobs: list[Path]
    files: list[Path]
    foreign: list[Path]


def _move(path: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    path.replace(dest)  # a rename keeps the file's times: a restored table is as it was


def set_aside_stale(results: str | Path, planned: Iterable[str | Path],
                    partitions: Iterable[tuple[str, str]]) -> SetAside:
    """Set aside the jobs of the stale files of :func:`stale_files` (tables of jobs the plan no
    longer has: fewer repeats, a level removed, fits regrouped): each job's manifest and every
    file it records move to :data:`SET_ASIDE_DIR` under their own paths. Nothing is deleted;
    :func:`restore_set_aside` moves a job back when a config plans it again. Files no manifest
    records (a user's) are never moved here (``foreign``)."""
    from modelvar.table_files import recorded_path, recorded_paths

    results = Path(results)
    root = results.resolve()
    recorded = recorded_paths(results)
    stale, foreign = stale_files(results, planned, partitions, recorded=recorded)
    jobs, moved = [], []
    for manifest in sorted({recorded[p.resolve()] for p in stale}):
        try:
            body = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        records = [r for r in body.get("files", []) if not Path(r["path"]).is_absolute()]
        for record in records:
            path = recorded_path(root, record)
            if path.is_file():
                _move(path, root / SET_ASIDE_DIR / record["path"])
                moved.append(path)
        _move(manifest, root / SET_ASIDE_DIR / manifest.resolve().relative_to(root))
        jobs.append(manifest)
    return SetAside(jobs, moved, foreign)


def restore_set_aside(results: str | Path, planned_manifests: Iterable[str | Path]
                      ) -> list[Path]:
    """Move back every set-aside job (:func:`set_aside_stale`) that the plan has again and
    whose files are all there, files first and its manifest last, where nothing of the job is
    in place; return the manifests restored."""
    results = Path(results)
    root = results.resolve()
    aside = root / SET_ASIDE_DIR
    if not aside.is_dir():
        return []
    restored = []
    for planned in planned_manifests:
        manifest = Path(planned).resolve()
        kept = aside / manifest.relative_to(root)
        if manifest.exists() or not kept.is_file():
            continue
        try:
            records = json.loads(kept.read_text())["files"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        pairs = [(aside / r["path"], root / r["path"]) for r in records
                 if not Path(r["path"]).is_absolute()]
        if not all(src.is_file() and not dest.exists() for src, dest in pairs):
            continue
        for src, dest in pairs:
            _move(src, dest)
        _move(kept, manifest)
        restored.append(manifest)
    return restored


def planned_set_aside(results: str | Path, planned_manifests: Iterable[str | Path]) -> int:
    """How many planned jobs have their files set aside (what a run would restore)."""
    root = Path(results).resolve()
    aside = root / SET_ASIDE_DIR
    if not aside.is_dir():
        return 0
    return sum(1 for m in planned_manifests if not Path(m).resolve().exists()
               and (aside / Path(m).resolve().relative_to(root)).is_file())


def _prepared_warnings(results_dir: str | Path, datasets) -> list[str]:
    """Warnings the prepare jobs recorded in the datasets' metadata (kept rare classes), which
    would otherwise stay in their logs."""
    import json

    from modelvar.data.splits import kept_rare_classes_warning

    out = []
    for name in datasets:
        try:
            meta = json.loads(Path(results_dir, "datasets", f"{name}.json").read_text())
        except (OSError, ValueError):
            continue
        kept = meta.get("provenance", {}).get("rare_classes")
        if kept:
            counts = meta["class_counts"]
            out.append(kept_rare_classes_warning(
                name, {c: counts.get(c, 0) for c in kept["kept"]}, counts,
                kept["min_class_size"]))
    return out


#: a fit job whose measured fitting time is off the plan's estimate by more than this factor
#: (either way) is named in the run's summary
PLAN_OFF_FACTOR = 2.0


def fit_cost(runs: pd.DataFrame) -> tuple[pd.Series, str]:
    """What each run's fit cost, as the plan counts it: its CPU seconds (``fit_cpu_seconds``,
    :mod:`modelvar.timing`) on a CPU, its wall seconds where it ran on a GPU (``device``
    ``cuda…``: the plan divides those fits by the GPU's speed-up), and a word saying which. Runs
    tables written before ``fit_cpu_seconds`` give wall seconds, which a busy machine inflates:
    the word says so."""
    if "fit_cpu_seconds" not in runs.columns:
        return runs["fit_seconds"], "wall time (runs tables without fit_cpu_seconds)"
    seconds = runs["fit_cpu_seconds"]
    if "device" in runs.columns:
        on_gpu = runs["device"].astype(str).str.startswith("cuda")
        if on_gpu.any():
            return seconds.where(~on_gpu, runs["fit_seconds"]), "CPU time (GPU fits: wall time)"
    return seconds, "CPU time"


def plan_off(runs: pd.DataFrame, estimates: Mapping[str | Path, tuple[str, float]],
             paths: Sequence[str | Path]) -> list[str]:
    """The fit jobs whose measured fitting time (Σ of their runs' :func:`fit_cost`) is more
    than :data:`PLAN_OFF_FACTOR` × off the plan's estimate; ``estimates``: runs table path →
    (job name, estimated seconds), ``paths`` the tables of ``runs`` in the order read (their
    ``_file`` column indexes them). Jobs both planned and measured under a second are left out
    (start-up noise); one the plan priced at seconds or more that took less is named (its
    measured time read as at least 0.01 s)."""
    measured = fit_cost(runs)[0].groupby(runs["_file"]).sum()
    off = []
    for index, seconds in measured.items():
        name, estimate = estimates.get(str(paths[index]), (None, None))
        if name is None or max(seconds, estimate) < 1.0 or estimate <= 0:
            continue
        ratio = estimate / max(seconds, 0.01)
        if not 1 / PLAN_OFF_FACTOR <= ratio <= PLAN_OFF_FACTOR:
            off.append((abs(math.log(ratio)), f"{name}: estimated {estimate:.1f} s, measured "
                        f"{seconds:.1f} s ({ratio:.2f}x)"))
    return [text for _, text in sorted(off, reverse=True)]


def study_summary(runs_tables: Sequence[str | Path], results_dir: str | Path,
                  estimates: Mapping[str | Path, tuple[str, float]] | None = None) -> str:
    """A short text summary of a finished run from its runs tables (printed on success; a run
    of chosen targets may not have made them all). Fitting time is CPU time
    (:func:`fit_cost`; wall time beside it). With the plan's ``estimates`` (runs table path →
    (job name, estimated fitting seconds)), it names the jobs whose fitting time the plan
    missed by more than :data:`PLAN_OFF_FACTOR` × and suggests recalibrating."""
    present = [p for p in runs_tables if Path(p).is_file()]
    lines = ["modelvar run summary" + (f" ({len(present)} of the study's {len(runs_tables)} "
                                       "fit jobs are done)" if len(present) < len(runs_tables)
                                       else "")]
    if not present:
        return "\n".join(lines)
    import pyarrow.parquet as pq

    columns = ["cell", "repeat", "accuracy", "fit_seconds"]
    recorded = set.intersection(*(set(pq.read_schema(p).names) for p in present))
    columns += [c for c in ("fit_cpu_seconds", "device") if c in recorded]
    runs = read_tables(present, columns=columns, file_index=True)
    cost, clock = fit_cost(runs)
    runs = runs.assign(_cost=cost)
    for dataset, part in runs.groupby("dataset", sort=False):
        by_clf = part.groupby("classifier")["accuracy"].mean()
        repeats = part.groupby("classifier")["repeat"].nunique()
        # a sequential study's classifiers may have different repeats: then each one's
        shape = (f"{repeats.iloc[0]} repeats" if repeats.nunique() == 1 else
                 "repeats " + ", ".join(f"{c} {n}" for c, n in repeats.items()))
        lines.append(
            f"  {dataset}: {len(part)} fits ({part['cell'].nunique()} cells × "
            f"{shape}), fitting {part['_cost'].sum():.1f} s "
            f"({part['fit_seconds'].sum():.1f} s wall); mean accuracy "
            + ", ".join(f"{c} {a:.3f}" for c, a in by_clf.items()))
    lines.append(f"  total: {len(runs)} fits, {runs['_cost'].sum():.1f} s of fitting in "
                 f"{clock} ({runs['fit_seconds'].sum():.1f} s wall)")
    lines += [f"  warning: {w}" for w in _prepared_warnings(results_dir, runs["dataset"].unique())]
    off = plan_off(runs, {str(k): v for k, v in (estimates or {}).items()},
                   [str(p) for p in present])
    if off:
        shown = "; ".join(off[:3]) + (f"; and {len(off) - 3} more" if len(off) > 3 else "")
        lines.append(
            f"  note: the plan's fitting time ({clock}) was off by more than "
            f"{PLAN_OFF_FACTOR:g}x for {len(off)} of {len(present)} fit jobs ({shown}). Fit the "
            f"cost model to this run for the next plan: modelvar plan --calibrate {results_dir} "
            "--out cost-model.json, then jobs.cost_model: cost-model.json in the config")
    lines.append(f"  report: {results_dir}/report.html (scripts/run.sh makes it); tables: "
                 f"{results_dir}/aggregated/")
    return "\n".join(lines)
